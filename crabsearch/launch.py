"""The ``crabsearch`` console script: ``search`` and ``show`` through the resident server, the
rest (and any failure of the server) in this process by :func:`crabsearch.cli.main`.

A whole ``crabsearch search --json`` process spent ~120 ms of its ~200 importing Whoosh, the
engine and the query code, and ~30 ms opening the index, before a 10-30 ms search (issue 13). The
resident server (:mod:`crabsearch.resident`) keeps both warm: this module connects to it over a
Unix socket, sends the command line, the working directory and the environment, and writes back
what the command printed and its exit code, byte for byte what the command prints when run here.
It imports only ``os``, ``sys`` and the C socket module (``socket`` itself costs ~12 ms,
``json`` ~7 ms through ``re``), so the client's own start is Python's (~15 ms).

When no server answers (none yet, or it is stale, or ``AF_UNIX`` is missing) the command runs
here as it always did, and a server is started in the background for the next call. The server
stops after :data:`IDLE_SECONDS` without a request, when crabsearch's installed files change, or
when its memory passes a cap. ``CRABSEARCH_NO_SERVER=1`` turns all of this off.

Wire format (version ``CRAB1``): the request is NUL-separated fields (no field of a command line
or an environment can hold a NUL): ``CRAB1``, the package directory, the Python executable, the
working directory, stdout's encoding, the argument count, the arguments, then ``KEY=VALUE`` for
every environment variable; the client then shuts its side down. The server answers ``+`` at
once (it is alive and working), then ``CODE OUTLEN ERRLEN\\n`` and the two byte strings; or
``-REASON\\n`` when it will not run the command (then this process runs it).
"""

from __future__ import annotations

import os
import sys

MAGIC = "CRAB1"
COMMANDS = ("search", "show")
"""The commands sent to the server: the read-only ones scripts and agents call in loops."""
IDLE_SECONDS = 600
"""The server exits after this long without a request (``CRABSEARCH_SERVER_IDLE`` overrides)."""
ACK_SECONDS = 3.0
"""How long a client waits for the server's ``+`` (it answers one request at a time) before
running the command itself."""
PACKAGE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    """Entry point of the console script (``crabsearch = crabsearch.launch:main``); returns the
    exit code."""
    argv = sys.argv[1:]
    start = False
    if wanted(argv, os.environ):
        path = socket_path(os.environ)
        if path is not None:
            try:
                code, start = call(path, argv)
            except KeyboardInterrupt:  # Ctrl-C while waiting: as the command itself exits
                return 130
            if code is not None:
                return code
    from .cli import main as cli_main

    code = cli_main(argv)
    if start:
        spawn(path)
    return code


def wanted(argv: list[str], env) -> bool:
    """Whether ``argv`` goes to the server: its command is one of :data:`COMMANDS`, it asks for
    no help (argparse sizes help to the terminal), and ``CRABSEARCH_NO_SERVER`` is unset (or
    ``0``)."""
    if env.get("CRABSEARCH_NO_SERVER", "0") not in ("", "0"):
        return False
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in ("-h", "--help", "--"):
            return False
        elif a == "--index-dir":
            skip = True
        elif not a.startswith("-"):
            return a in COMMANDS and not any(b in ("-h", "--help") for b in argv)
    return False


def socket_path(env) -> str | None:
    """The server's socket for this installation (its package directory and Python), in a
    directory only this user can enter: ``$XDG_RUNTIME_DIR/crabsearch``, else
    ``$TMPDIR/crabsearch-UID`` (``/tmp`` without ``TMPDIR``). None when that directory cannot
    be made private (someone else owns it, or it is writable by others): the command then runs
    in this process, as a socket in a shared directory could be someone else's."""
    import zlib

    base = env.get("XDG_RUNTIME_DIR")
    uid = os.getuid()
    folder = os.path.join(base, "crabsearch") if base else os.path.join(env.get("TMPDIR") or "/tmp", f"crabsearch-{uid}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    if st.st_uid != uid or st.st_mode & 0o077 or (st.st_mode & 0o170000) != 0o040000:
        return None
    key = zlib.crc32(f"{PACKAGE}\0{sys.executable}".encode("utf-8", "surrogateescape"))
    path = os.path.join(folder, f"server-{key:08x}.sock")
    return path if len(path.encode()) < 104 else None  # sun_path: 104 bytes on macOS, 108 on Linux


def request(argv: list[str], env, cwd: str, encoding: str) -> bytes:
    """The request bytes (see the module docstring)."""
    fields = [MAGIC, PACKAGE, sys.executable, cwd, encoding, str(len(argv)), *argv,
              *(f"{k}={v}" for k, v in env.items())]
    return b"\0".join(f.encode("utf-8", "surrogateescape") for f in fields)


def call(path: str, argv: list[str]) -> tuple[int | None, bool]:
    """Run ``argv`` through the server at ``path``: ``(exit code, False)`` when it answered and
    its output was written here; ``(None, start)`` when this process must run the command, with
    ``start`` True when no server is there (or it stopped as stale) and one should be started."""
    try:
        import _socket
    except ImportError:
        return None, False
    if not hasattr(_socket, "AF_UNIX"):
        return None, False
    try:
        cwd = os.getcwd()
    except OSError:
        return None, False
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(ACK_SECONDS)
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None, True
        sock.sendall(request(argv, os.environ, cwd, getattr(sys.stdout, "encoding", None) or "utf-8"))
        sock.shutdown(_socket.SHUT_WR)
        first = sock.recv(1)
        if first != b"+":  # declined ("-stale" etc.) or gone
            reason = first + _read_all(sock)
            return None, reason.startswith(b"-stale")
        sock.settimeout(None)  # working: a refresh after many new transcripts can take minutes
        reply = _read_all(sock)
    except OSError:  # a timeout, a reset: run it here
        return None, False
    finally:
        sock.close()
    head, sep, body = reply.partition(b"\n")
    try:
        code, n_out, n_err = (int(x) for x in head.split())
    except ValueError:
        return None, False
    if not sep or len(body) != n_out + n_err:
        return None, False
    try:
        _write(1, body[:n_out])
        _write(2, body[n_out:])
    except BrokenPipeError:  # `crabsearch search x | head`: as the command does itself
        return 0, False
    return code, False


def _read_all(sock) -> bytes:
    chunks = []
    while True:
        b = sock.recv(1 << 16)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def spawn(path: str) -> None:
    """Start the server for ``path`` in the background: a new session (no terminal, no signals
    from this one), standard streams on ``/dev/null``, working directory ``/`` (so it imports
    the installed crabsearch, not a ``crabsearch/`` folder where the user stands). Errors are
    ignored: the next call simply runs the command itself again."""
    import subprocess

    idle = os.environ.get("CRABSEARCH_SERVER_IDLE") or str(IDLE_SECONDS)
    code = "import sys; from crabsearch.resident import main; sys.exit(main(sys.argv[1:]))"
    try:
        subprocess.Popen([sys.executable, "-c", code, path, idle], cwd="/", stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True)
    except OSError:
        pass

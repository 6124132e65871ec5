"""The ``crabsearch`` console script: ``search`` and ``show`` through the resident server, the
rest (and any failure of the server) in this process by :func:`crabsearch.cli.main`.

A whole ``crabsearch search --json`` process spends most of its time importing Whoosh, the engine
and the query code and opening the index, not searching (``bench/cli.py``, ``docs/benchmarks.md``).
The resident server (:mod:`crabsearch.resident`) keeps both warm: this module connects to it over a
Unix socket, sends the command line, the working directory and the environment, and writes back
what the command printed and its exit code, byte for byte what the command prints when run here.
It imports only ``os``, ``sys`` and the C socket module (not ``socket`` itself, nor ``json``,
which imports ``re``), so the client's own start is Python's.

When no server answers (none yet, or it is stale, or ``AF_UNIX`` is missing) the command runs
here as it always did, and a server is started in the background for the next call. The server
stops after :data:`IDLE_SECONDS` without a request, when crabsearch's installed files change, or
when its memory passes a cap. ``CRABSEARCH_NO_SERVER=1`` turns all of this off.

Wire format (version ``CRAB2``): the request is NUL-separated byte strings (no field of a
command line or an environment can hold a NUL), each as the operating system gave it
(``os.fsencode``): ``CRAB2``, the package directory, the Python executable, the file system
encoding, the working directory, stdout's encoding and error handler, stderr's, the umask (in
octal), the argument count, the arguments, then ``KEY=VALUE`` for every environment variable;
the client then shuts its side down. The server answers ``+`` at once (it is alive and
working), a ``.`` every :data:`HEARTBEAT_SECONDS` while the command runs, then what the command
wrote, in the order it wrote it, as frames ``1 LEN\\n`` (stdout) or ``2 LEN\\n`` (stderr) and
LEN bytes, and last ``x CODE\\n``; or instead of all that ``-REASON\\n`` when it will not run
the command (then this process runs it).
"""

from __future__ import annotations

import os
import sys

MAGIC = b"CRAB2"
COMMANDS = ("search", "show")
"""The commands sent to the server: the read-only ones scripts and agents call in loops."""
IDLE_SECONDS = 600
"""The server exits after this long without a request (``CRABSEARCH_SERVER_IDLE`` overrides)."""
ACK_SECONDS = 3.0
"""How long a client waits for the server's ``+`` (it answers one request at a time) before
running the command itself."""
HEARTBEAT_SECONDS = 1.0
"""How often a working server says so (``.``)."""
STALL_SECONDS = 10.0
"""A client that hears nothing for this long from a server that took its command (a stopped or
hung server) runs the command itself."""
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
        spawn(path, argv)
    return code


def wanted(argv: list[str], env) -> bool:
    """Whether ``argv`` goes to the server: its command is one of :data:`COMMANDS`, it asks for
    no help (argparse sizes help to the terminal; it takes ``--he`` for ``--help`` and ``-hh``
    or ``-hx`` for ``-h``), both standard streams are open, and ``CRABSEARCH_NO_SERVER`` is unset
    (or ``0``). The server checks the command again with the real parser (``--index-d`` is
    ``--index-dir`` to argparse)."""
    if not enabled(env) or sys.stdout is None or sys.stderr is None:
        return False
    if any(a == "--" or a.startswith("-h") or (a.startswith("--h") and "--help".startswith(a.partition("=")[0]))
           for a in argv):
        return False
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif len(a) >= 9 and "--index-dir".startswith(a):  # --index-d, --index-di, --index-dir
            skip = True
        elif not a.startswith("-"):
            return a in COMMANDS
    return False


def enabled(env) -> bool:
    """False when ``CRABSEARCH_NO_SERVER`` is set to anything but ``0``."""
    return env.get("CRABSEARCH_NO_SERVER", "0") in ("", "0")


def peer_credentials(sock) -> tuple[int, int, int] | None:
    """``(pid, uid, gid)`` of the process at the other end of the Unix socket ``sock``
    (``SO_PEERCRED``, Linux); None where the platform has no such option."""
    import socket
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return None
    return struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))


def socket_path(env) -> str | None:
    """The server's socket for this installation (its package directory and Python), in a
    directory only this user can enter: ``$XDG_RUNTIME_DIR/crabsearch``, else
    ``$TMPDIR/crabsearch-UID`` (``/tmp`` without ``TMPDIR``). None when that directory cannot
    be made private (someone else owns it, or it is writable by others): the command then runs
    in this process, as a socket in a shared directory could be someone else's."""
    import zlib

    base = env.get("XDG_RUNTIME_DIR")
    uid = os.getuid()
    if base:
        folder = os.path.join(base, "crabsearch")
    else:
        folder = os.path.join(env.get("TMPDIR") or "/tmp", f"crabsearch-{uid}")
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
    # One server per installation and file system encoding (the bytes of paths and arguments
    # mean the same text only under the same one).
    key = zlib.crc32(os.fsencode(f"{PACKAGE}\0{sys.executable}\0{sys.getfilesystemencoding()}"))
    path = os.path.join(folder, f"server-{key:08x}.sock")
    return path if len(path.encode()) < 104 else None  # sun_path: 104 bytes on macOS, 108 on Linux


def request(argv: list[str], env: dict[bytes, bytes], cwd: bytes, streams: list[str], umask: int = 0o022) -> bytes:
    """The request bytes (see the module docstring): ``env`` and ``cwd`` as bytes
    (``os.environb``, ``os.getcwdb()``), ``streams`` stdout's and stderr's encoding and error
    handler, ``umask`` this process's."""
    fields = [MAGIC, os.fsencode(PACKAGE), os.fsencode(sys.executable), sys.getfilesystemencoding().encode(), cwd,
              *(x.encode() for x in streams), b"%o" % umask, str(len(argv)).encode(), *map(os.fsencode, argv),
              *(k + b"=" + v for k, v in env.items())]
    return b"\0".join(fields)


def current_umask() -> int:
    """This process's umask (read by setting it, then set back)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def streams() -> list[str]:
    """``[stdout encoding, its errors, stderr encoding, its errors]`` of this process."""
    return [str(getattr(f, a, None) or d) for f in (sys.stdout, sys.stderr)
            for a, d in (("encoding", "utf-8"), ("errors", "strict"))]


def call(path: str, argv: list[str]) -> tuple[int | None, bool]:
    """Run ``argv`` through the server at ``path``: ``(exit code, False)`` when it answered and
    what the command wrote was written here; ``(None, start)`` when this process must run the
    command, with ``start`` True when no server is there (or it stopped as stale) and one should
    be started."""
    try:
        import _socket
    except ImportError:
        return None, False
    environb = getattr(os, "environb", None)
    if not hasattr(_socket, "AF_UNIX") or environb is None:
        return None, False
    try:
        cwd = os.getcwdb()
    except OSError:
        return None, False
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(ACK_SECONDS)
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None, True
        sock.sendall(request(argv, environb, cwd, streams(), current_umask()))
        sock.shutdown(_socket.SHUT_WR)
        first = sock.recv(1)
        if first != b"+":  # declined ("-stale" etc.) or gone
            reason = first + _read_all(sock)
            return None, reason.startswith(b"-stale")
        sock.settimeout(STALL_SECONDS)  # working (heartbeats): a big refresh can take minutes
        reply = _read_all(sock)
    except OSError:  # a timeout, a reset: run it here
        return None, False
    finally:
        sock.close()
    frames = parse(reply.lstrip(b"."))
    if frames is None:
        return None, False
    *chunks, code = frames
    try:
        for fd, data in chunks:
            _write(fd, data)
    except BrokenPipeError:  # `crabsearch search x | head`: as the command does itself
        return 0, False
    except OSError as exc:  # a failing stream (a full disk): one line, as the command itself says
        try:
            _write(2, os.fsencode(f"crabsearch: error: {exc}\n"))
        except OSError:
            pass
        return 1, False
    return code, False


def parse(reply: bytes) -> list | None:
    """``[(fd, bytes), ..., exit code]`` from the frames of a reply, or None when it is not
    complete (a server that died while answering)."""
    out: list = []
    i = 0
    while True:
        j = reply.find(b"\n", i)
        if j < 0:
            return None
        kind, _, value = reply[i:j].partition(b" ")
        try:
            n = int(value)
        except ValueError:
            return None
        if kind == b"x":
            return out + [n] if j + 1 == len(reply) else None
        if kind not in (b"1", b"2") or j + 1 + n > len(reply):
            return None
        out.append((int(kind), reply[j + 1:j + 1 + n]))
        i = j + 1 + n


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


def spawn(path: str, argv: list[str] = ()) -> None:
    """Start the server for ``path`` in the background: a new session (no terminal, no signals
    from this one), standard streams on ``/dev/null``, working directory ``/`` and ``-P`` (no
    working directory on its import path: it imports the installed crabsearch and standard
    library, never a ``shlex.py`` where a user stands). ``argv``, the command that started it,
    warms it up (a ``search`` runs once with ``--no-refresh``, its output dropped: the index is
    then open for the next call); it goes in the environment (``CRABSEARCH_SERVER_WARM``, JSON
    with the working directory), which only this user can read, not on the command line, which
    ``ps`` shows everyone. Errors are ignored: the next call runs the command itself."""
    import json
    import subprocess

    idle = idle_seconds(os.environ.get("CRABSEARCH_SERVER_IDLE"))
    code = "import sys; from crabsearch.resident import main; sys.exit(main(sys.argv[1:]))"
    try:
        warm = json.dumps({"argv": list(argv), "cwd": os.getcwd()})
    except OSError:  # the working directory is gone
        warm = "null"
    try:
        subprocess.Popen([sys.executable, "-P", "-c", code, path, str(idle)], cwd="/", stdin=subprocess.DEVNULL,
                         env={**os.environ, "CRABSEARCH_SERVER_WARM": warm},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True)
    except OSError:
        pass


def server(env) -> dict:
    """What ``crabsearch status`` says of the resident server for this installation:
    ``{"enabled": bool, "socket": path or None, "running": bool, "pid": int or None}`` (the pid
    from the socket's peer credentials, on Linux)."""
    on = enabled(env)
    path = socket_path(env) if on else None
    out = {"enabled": on, "socket": path, "running": False, "pid": None}
    if path is None:
        return out
    import socket

    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(1.0)
            s.connect(path)
            out["running"] = True
            out["pid"] = (peer_credentials(s) or (None,))[0]
    except OSError:
        pass
    return out


def idle_seconds(value: str | None) -> float:
    """``CRABSEARCH_SERVER_IDLE`` as seconds: a finite number above 0, else :data:`IDLE_SECONDS`."""
    try:
        idle = float(value or "")
    except ValueError:
        return IDLE_SECONDS
    return idle if 0 < idle < 10**7 else IDLE_SECONDS

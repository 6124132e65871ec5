"""The resident server behind ``crabsearch search`` and ``show`` (``docs/cli.md``, The resident server).

Started in the background by :mod:`crabsearch.launch` when a call finds none, it listens on a
Unix socket in a directory only its user can enter, and runs each request's command line through
:func:`crabsearch.cli.main` with the request's environment (``TZ`` included), working directory
and stream encodings, keeping what it writes to stdout and stderr in order: the same command,
with its imports done and its index kept open (``cli.KEPT``) between requests. One request at a
time; the wire format is in :mod:`crabsearch.launch`.

It stops by itself: after ``idle`` seconds without a request; when a ``.py`` file of the
installed package changed since it started (it answers ``-stale``, and the client runs the
command itself and starts a fresh server); when its socket was removed or replaced; on SIGTERM;
and when its peak memory passes :data:`MAX_RSS_MB`. A second server for the same socket exits at
once (``flock`` on ``SOCKET.lock``). It never writes to the client's terminal; its own failures
go to ``SOCKET.log``.
"""

from __future__ import annotations

import fcntl
import io
import os
import resource
import select
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback

from . import cli
from .launch import COMMANDS, HEARTBEAT_SECONDS, MAGIC, PACKAGE, current_umask, idle_seconds, peer_credentials

MAX_RSS_MB = 1024
"""Past this peak resident size (MiB) the server exits after the request it is serving."""
REQUEST_SECONDS = 10.0
"""How long the server waits for a connected client to send its whole request, and for a
client to take each part of the answer."""
CHECK_SECONDS = 5.0
"""How often an idle server checks that its socket is still the one clients find."""


class Stop(BaseException):
    """SIGTERM: leave the loop, close the index, remove the socket (not an ``Exception``, so a
    command being served does not catch it; its writer cleans up as for any interruption)."""


def main(argv: list[str]) -> int:
    """``python -P -c '...main(sys.argv[1:])' SOCKET IDLE_SECONDS``: serve until idle, warmed
    up by the call that started it (``CRABSEARCH_SERVER_WARM``: ``{"argv": [...], "cwd": ...}``,
    see ``launch.spawn``); returns 0."""
    import json

    sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # never import from a client's directory
    try:
        warm = json.loads(os.environ.pop("CRABSEARCH_SERVER_WARM", "null")) or {}
    except ValueError:
        warm = {}
    serve(argv[0], idle_seconds(argv[1] if len(argv) > 1 else None), warm=warm.get("argv") or [],
          warm_cwd=warm.get("cwd") or "/")
    return 0


USAGE = "(usage error)"


def served_command(argv: list[str]) -> str | None:
    """The command ``argv`` runs as the CLI's parser reads it: its name, None for the app (no
    command), or :data:`USAGE` when it does not parse (its one-line usage error is then the
    answer). Only :data:`~crabsearch.launch.COMMANDS` and :data:`USAGE` are served."""
    try:
        args, _ = cli.build_parser().parse_known_args(argv)
    except (cli.UsageError, SystemExit):
        return USAGE
    return args.command


def serve(path: str, idle: float, warm: list[str] = (), warm_cwd: str = "/") -> None:
    """Listen on ``path`` and answer requests until ``idle`` seconds pass without one, the
    package's files change, the socket is removed, SIGTERM, or memory passes
    :data:`MAX_RSS_MB`. Returns at once when another server holds ``path``'s lock. ``warm``: a
    ``search`` command line run once first with ``--no-refresh`` (output dropped), in the
    environment the server was started with and ``warm_cwd``, so the first served call finds
    its index open."""
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mine = None
    try:
        signal.signal(signal.SIGTERM, _stop)
        try:
            os.unlink(path)  # a socket left by a server that was killed
        except FileNotFoundError:
            pass
        old = os.umask(0o177)
        try:
            listener.bind(path)
        finally:
            os.umask(old)
        listener.listen(64)
        mine = os.stat(path).st_ino
        cli.KEPT, cli.GATES = {}, {}
        stamp = package_stamp()
        if warm and served_command(list(warm)) == "search":
            try:
                run([*warm, "--no-refresh"], dict(os.environb), os.fsencode(warm_cwd), ("utf-8", "replace"),
                    ("utf-8", "replace"), current_umask())
            except Exception:  # noqa: BLE001 - a warm-up only
                log(path, traceback.format_exc())
        listener.settimeout(min(CHECK_SECONDS, idle))
        last = time.monotonic()
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last >= idle or _inode(path) != mine:
                    break
                continue
            with conn:
                stale = package_stamp() != stamp
                try:
                    handle(conn, stale)
                except OSError:  # the client went away
                    pass
                except Exception:  # noqa: BLE001 - one bad request must not stop the server
                    log(path, traceback.format_exc())
            last = time.monotonic()
            if stale or _peak_mb() > MAX_RSS_MB:
                break
    except Stop:
        pass
    finally:
        listener.close()
        if mine is not None and _inode(path) == mine:  # not a newer server's socket
            try:
                os.unlink(path)
            except OSError:
                pass
        for engine in (cli.KEPT or {}).values():
            engine.close()
        cli.KEPT = None
        for gate in (cli.GATES or {}).values():
            if gate is not None:
                gate.close()
        cli.GATES = None
        os.close(lock)


def _stop(signum, frame):
    raise Stop


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _peak_mb() -> float:
    """This process's peak resident size in MiB (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def package_stamp(package: str = PACKAGE) -> tuple[int, int]:
    """``(newest mtime in ns, file count)`` of the ``.py`` files under ``package`` (default:
    crabsearch's own): a reinstall or an edit changes it, and the server's code is then stale."""
    newest = count = 0
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "demo")]
        for name in files:
            if name.endswith(".py"):
                try:
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
                except OSError:
                    pass
                count += 1
    return newest, count


def handle(conn: socket.socket, stale: bool) -> None:
    """Read one request from ``conn``, run it, send the answer (see :mod:`crabsearch.launch`).
    Raises ``OSError`` when the client goes away."""
    peer = peer_credentials(conn)  # the directory is private already; this costs nothing
    if peer is not None and peer[1] != os.getuid():
        return
    conn.settimeout(REQUEST_SECONDS)
    fields = b"".join(iter(lambda: conn.recv(1 << 16), b"")).split(b"\0")
    if len(fields) < 11 or fields[0] != MAGIC:
        conn.sendall(b"-protocol\n")
        return
    package, python, fs_encoding, cwd = fields[1:5]
    out_enc, out_err, err_enc, err_err = (f.decode() for f in fields[5:9])
    if stale:
        conn.sendall(b"-stale\n")
        return
    if (fs_encoding.decode() != sys.getfilesystemencoding() or package != os.fsencode(PACKAGE)
            or python != os.fsencode(sys.executable)):
        conn.sendall(b"-other installation\n")
        return
    umask, argc = int(fields[9], 8), int(fields[10])
    argv = [os.fsdecode(a) for a in fields[11:11 + argc]]
    env = dict(f.partition(b"=")[::2] for f in fields[11 + argc:] if f)
    if served_command(argv) not in (*COMMANDS, USAGE):  # `--index-d show`: the app, not `show`
        conn.sendall(b"-not served\n")
        return
    if _hung_up(conn):  # the client gave up waiting (it runs the command itself)
        return
    conn.sendall(b"+")
    done = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(conn, done), daemon=True)
    beat.start()
    try:
        frames, code = run(argv, env, cwd, (out_enc, out_err), (err_enc, err_err), umask)
    finally:
        done.set()
        beat.join()
    conn.sendall(b"".join(b"%d %d\n%s" % (fd, len(data), data) for fd, data in frames) + b"x %d\n" % code)


def _hung_up(conn: socket.socket) -> bool:
    """True when the client closed its socket (it shut down only its sending side to end the
    request; a hang-up means both)."""
    poller = select.poll()
    poller.register(conn, select.POLLHUP)
    return any(ev & (select.POLLHUP | select.POLLERR) for _, ev in poller.poll(0))


def _heartbeat(conn: socket.socket, done: threading.Event) -> None:
    """Send ``.`` every :data:`~crabsearch.launch.HEARTBEAT_SECONDS` until ``done``."""
    while not done.wait(HEARTBEAT_SECONDS):
        try:
            conn.sendall(b".")
        except OSError:
            return


class _Frames(io.RawIOBase):
    """A binary sink that records each write as ``(fd, bytes)`` in a list shared by stdout and
    stderr, so the client replays them in the order the command wrote them."""

    def __init__(self, fd: int, frames: list) -> None:
        self.fd, self.frames = fd, frames

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.frames.append((self.fd, bytes(b)))
        return len(b)


def _stream(fd: int, frames: list, encoding: tuple[str, str]) -> io.TextIOWrapper:
    """A text stream like the client's (its encoding and error handler) writing to ``frames``;
    an unknown encoding falls back to UTF-8."""
    try:
        return io.TextIOWrapper(_Frames(fd, frames), encoding=encoding[0], errors=encoding[1], write_through=True)
    except LookupError:
        return io.TextIOWrapper(_Frames(fd, frames), encoding="utf-8", errors="strict", write_through=True)


def run(argv: list[str], env: dict[bytes, bytes], cwd: bytes, out: tuple[str, str],
        err: tuple[str, str], umask: int) -> tuple[list[tuple[int, bytes]], int]:
    """``([(fd, bytes)], exit code)`` of ``crabsearch ARGV`` run here with the client's
    environment, working directory, umask and stream encodings (``(encoding, errors)``):
    everything the command reads of them is read per call (the index directory, the config, the
    sources' directories, the local time zone, the temporary directory)."""
    os.environb.clear()
    os.environb.update(env)
    if hasattr(time, "tzset"):
        time.tzset()  # TZ: local dates in filters and in Aider's headers
    tempfile.tempdir = None  # TMPDIR: found again (opencode's and OpenClaw's databases are copied there)
    os.umask(umask)
    frames: list[tuple[int, bytes]] = []
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _stream(1, frames, out), _stream(2, frames, err)
    try:
        os.chdir(cwd)
        for key, engine in list((cli.KEPT or {}).items()):
            if not engine.index_dir.exists():  # deleted: let its files go
                cli.KEPT.pop(key).close()
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except OSError as exc:  # the client's directory is gone
        print(f"crabsearch: error: {exc}", file=sys.stderr)
        code = cli.EXIT_ERROR
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = real
        try:
            os.chdir("/")
        except OSError:
            pass
    return frames, code


def log(path: str, text: str) -> None:
    """Append ``text`` with the time to ``path + '.log'`` (kept under 1 MB)."""
    name = path + ".log"
    try:
        if os.path.getsize(name) > 1 << 20:
            os.unlink(name)
    except OSError:
        pass
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")
    except OSError:
        pass

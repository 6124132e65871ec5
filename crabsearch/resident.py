"""The resident server behind ``crabsearch search`` and ``show`` (issue 13: a 100 ms command line).

Started in the background by :mod:`crabsearch.launch` when a call finds none, it listens on a
Unix socket in a directory only its user can enter, and runs each request's command line through
:func:`crabsearch.cli.main` with the request's environment and working directory, capturing what
it prints: the same command, with its imports done and its index kept open (``cli.KEPT``) between
requests. One request at a time; the wire format is in :mod:`crabsearch.launch`.

It stops by itself: after ``idle`` seconds without a request, when a ``.py`` file of the
installed package changed since it started (it answers ``-stale`` and the client runs the command
itself and starts a fresh one), and when its peak memory passes :data:`MAX_RSS_MB`. A second
server for the same socket exits at once (``flock`` on ``SOCKET.lock``). It never writes to the
client's terminal; its own failures go to ``SOCKET.log``.
"""

from __future__ import annotations

import fcntl
import io
import os
import resource
import socket
import struct
import sys
import time
import traceback

from . import cli
from .launch import MAGIC, PACKAGE

MAX_RSS_MB = 1024
"""Past this peak resident size (MiB) the server exits after the request it is serving."""
REQUEST_SECONDS = 10.0
"""How long the server waits for a connected client to send its whole request."""


def main(argv: list[str]) -> int:
    """``python -c '...main(sys.argv[1:])' SOCKET IDLE_SECONDS``: serve until idle; returns 0."""
    path, idle = argv[0], float(argv[1])
    serve(path, idle)
    return 0


def serve(path: str, idle: float) -> None:
    """Listen on ``path`` and answer requests until ``idle`` seconds pass without one, the
    package's files change, or memory passes :data:`MAX_RSS_MB`. Returns at once when another
    server holds ``path``'s lock."""
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            os.unlink(path)  # a socket left by a server that was killed
        except FileNotFoundError:
            pass
        old = os.umask(0o177)
        try:
            listener.bind(path)
        finally:
            os.umask(old)
        listener.listen(16)
        mine = os.stat(path).st_ino
        cli.KEPT = {}
        stamp = package_stamp()
        listener.settimeout(idle)
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                break
            with conn:
                stale = package_stamp() != stamp
                try:
                    handle(conn, stale)
                except Exception:  # noqa: BLE001 - one bad request must not stop the server
                    log(path, traceback.format_exc())
            if stale or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > MAX_RSS_MB * 1024:
                break
    finally:
        listener.close()
        try:
            if os.stat(path).st_ino == mine:  # not a newer server's socket
                os.unlink(path)
        except (OSError, NameError):
            pass
        for engine in (cli.KEPT or {}).values():
            engine.close()
        cli.KEPT = None
        os.close(lock)


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
    """Read one request from ``conn``, run it, send the answer (see :mod:`crabsearch.launch`)."""
    if hasattr(socket, "SO_PEERCRED"):  # the directory is private already; this costs nothing
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                             struct.calcsize("3i")))
        if uid != os.getuid():
            return
    conn.settimeout(REQUEST_SECONDS)
    data = b"".join(iter(lambda: conn.recv(1 << 16), b""))
    fields = [f.decode("utf-8", "surrogateescape") for f in data.split(b"\0")]
    if len(fields) < 6 or fields[0] != MAGIC:
        conn.sendall(b"-protocol\n")
        return
    package, python, cwd, encoding = fields[1:5]
    if stale:
        conn.sendall(b"-stale\n")
        return
    if package != PACKAGE or python != sys.executable:
        conn.sendall(b"-other installation\n")
        return
    argc = int(fields[5])
    argv = fields[6:6 + argc]
    env = dict(f.partition("=")[::2] for f in fields[6 + argc:])
    conn.sendall(b"+")
    code, out, err = run(argv, env, cwd)
    try:
        body_out, body_err = out.encode(encoding, "replace"), err.encode(encoding, "replace")
    except LookupError:
        body_out, body_err = out.encode("utf-8", "replace"), err.encode("utf-8", "replace")
    conn.settimeout(None)
    try:
        conn.sendall(f"{code} {len(body_out)} {len(body_err)}\n".encode() + body_out + body_err)
    except OSError:  # the client went away (Ctrl-C): nothing to tell
        pass


def run(argv: list[str], env: dict[str, str], cwd: str) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``crabsearch ARGV`` run here with the client's
    environment and working directory (everything the command reads of them is read per call:
    the index directory, the config, the sources' directories)."""
    os.environ.clear()
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        os.chdir(cwd)
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except OSError as exc:  # the client's directory is gone
        print(f"crabsearch: error: {exc}", file=err)
        code = cli.EXIT_ERROR
    finally:
        sys.stdout, sys.stderr = real
        try:
            os.chdir("/")
        except OSError:
            pass
    return code, out.getvalue(), err.getvalue()


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

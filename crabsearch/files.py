"""Opening files named by an agent's directory: regular files only, never blocking.

A path under an agent's directory is hostile input like the bytes in it: a FIFO named
``agent-x.meta.json`` or ``workspace.yaml`` blocks a plain ``open()`` until some writer appears
(forever), a symlink to ``/dev/zero`` or ``/dev/urandom`` reads without end, and a transcript can be
replaced by either after it was indexed. Every file crabsearch reads outside its own index goes
through :func:`open_fd` (or a helper built on it); the rules:

* The path is ``stat``-ed first (following symlinks) and refused unless it is a regular file, so a
  device is never even opened (opening some has effects of its own: a tape rewinds, a watchdog
  arms).
* It is then opened with ``O_NONBLOCK`` (a FIFO swapped in after the ``stat`` does not block the
  open) and ``O_NOCTTY`` (a terminal never becomes the controlling one), and ``fstat``-ed: what was
  opened is checked, not what the name pointed at a moment before. ``O_NONBLOCK`` is then cleared
  (it means nothing for regular files, but the descriptor behaves as any other).
* Anything else is refused with :class:`NotRegularFile`, an ``OSError`` (``EINVAL``) naming the
  kind of file and the path, so every caller that already copes with an unreadable file (skipped
  and counted by the indexer, "unavailable" in a window) copes with this one the same way.
* Files are opened read-only; nothing here writes.

SQLite stores are opened by SQLite itself, not by these helpers: :mod:`crabsearch.agentdb` checks
them with :func:`check_regular` first and copies them through :func:`open_file`.
"""

from __future__ import annotations

import errno
import io
import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)

CHUNK = 1 << 20
"""Bytes read at a time by :func:`read_file` and :func:`copy_file`."""


class NotRegularFile(OSError):
    """A path that is not a regular file (FIFO, socket, device, directory) where one was expected.

    ``errno`` is ``EINVAL``, ``filename`` the path, ``kind`` what it is (``"FIFO"``)."""

    def __init__(self, path: str | os.PathLike, kind: str):
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        self.kind = kind


def kind_of(mode: int) -> str:
    """A short name for the file type in ``st_mode``: ``regular file``, ``FIFO``, ``socket``,
    ``character device``, ``block device``, ``directory``, ``symlink`` or ``special file``."""
    for test, name in ((stat.S_ISREG, "regular file"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "symlink")):
        if test(mode):
            return name
    return "special file"


def open_fd(path: str | os.PathLike) -> int:
    """A read-only file descriptor of the regular file at ``path`` (symlinks followed), opened
    without ever blocking (module docstring). The caller closes it.

    Raises :class:`NotRegularFile` when ``path`` (or what was opened) is not a regular file, and
    ``OSError`` (``FileNotFoundError``, ``PermissionError``, ...) when it cannot be opened."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path, kind_of(st.st_mode))
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the stat and the open
            raise NotRegularFile(path, kind_of(st.st_mode))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | os.PathLike) -> io.BufferedReader:
    """The regular file at ``path`` opened for reading bytes (``with open_file(p) as fh``), through
    :func:`open_fd`. Raises :class:`NotRegularFile` or ``OSError`` as :func:`open_fd` does."""
    return os.fdopen(open_fd(path), "rb")


def check_regular(path: str | os.PathLike) -> os.stat_result:
    """The ``fstat`` of the regular file at ``path``, opened (never blocking) and closed again: for
    a path that a library will open itself (SQLite). Raises :class:`NotRegularFile` or ``OSError``
    as :func:`open_fd` does."""
    fd = open_fd(path)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def read_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit`` of them when given). Raises
    :class:`NotRegularFile` or ``OSError`` as :func:`open_fd` does."""
    with open_file(path) as fh:
        return fh.read() if limit is None else fh.read(max(0, limit))


def read_text(path: str | os.PathLike, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The text of the regular file at ``path``. Raises :class:`NotRegularFile` or ``OSError``
    as :func:`open_fd` does, ``UnicodeDecodeError`` when ``errors="strict"`` and it is not
    ``encoding``."""
    return read_file(path).decode(encoding, errors)


def read_at(path: str | os.PathLike, offset: int, length: int) -> bytes:
    """``length`` bytes of the regular file at ``path`` from byte ``offset`` (fewer at its end),
    with one ``pread``. Raises :class:`NotRegularFile` or ``OSError`` as :func:`open_fd` does (and
    ``OSError`` for a negative offset)."""
    fd = open_fd(path)
    try:
        return os.pread(fd, length, offset)
    finally:
        os.close(fd)


def copy_file(path: str | os.PathLike, dest: str | os.PathLike, mode: int = 0o600) -> int:
    """Copy the regular file at ``path`` to a new file ``dest`` (created with ``mode``; an existing
    ``dest`` or a symlink there is an error), returning the bytes copied. Raises
    :class:`NotRegularFile` or ``OSError`` as :func:`open_fd` does, ``FileExistsError`` for
    ``dest``; a partly written ``dest`` is removed."""
    src = open_fd(path)
    try:
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                      | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0), mode)
        try:
            total = 0
            while chunk := os.read(src, CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
                total += len(chunk)
        except BaseException:
            os.close(out)
            out = -1
            os.unlink(dest)
            raise
        finally:
            if out >= 0:
                os.close(out)
    finally:
        os.close(src)
    return total

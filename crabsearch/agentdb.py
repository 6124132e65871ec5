"""Opening an agent's SQLite store without ever writing in its directory.

opencode's ``opencode.db`` and OpenClaw's ``openclaw-agent.sqlite`` are WAL-mode databases that
their agent may be writing while crabsearch reads. Every connection to such a store goes through
:func:`connect`; nothing is ever created, written or deleted beside the store.

Why not ``mode=ro``: a read-only connection to a WAL-mode database still creates ``-wal`` and
``-shm`` when they are missing, and writes the ``-shm`` (the WAL index: read marks, recovery)
when they exist. SQLite documents it (wal.html, "Read-Only Databases": a read-only WAL database
opens when "the -shm and -wal files already exist or those files can be created or the database
is immutable").

Why not always ``immutable=1``: an immutable connection skips all locking and change detection
and never looks at the WAL (uri.html: the file "cannot be modified"; if it changes anyway,
"incorrect query results and/or SQLITE_CORRUPT errors"). Commits an agent has not yet
checkpointed live only in ``-wal``: immutable alone would miss them (a session opencode is writing
right now would be missing, or a table created since the last checkpoint).

The rule, per call of :func:`connect`:

* **No committed data outside the database file** (no ``-wal`` and no ``-journal``, or only empty
  ones): open the store itself with ``mode=ro&immutable=1``. SQLite opens it ``O_RDONLY`` and
  touches nothing else. What it sees is everything committed (a WAL-mode agent's commits reach
  the database file only through a checkpoint of a non-empty WAL; a rollback-mode agent's
  transaction in progress leaves a non-empty ``-journal``).
* **A non-empty ``-wal`` or ``-journal``** (the agent is running, or was killed): copy-on-read.
  The database file and its ``-wal``/``-journal`` are copied into a private directory (0700,
  files 0600, under the system temporary directory: ``$TMPDIR``), and the copy is opened
  normally: SQLite replays the WAL (or rolls back the unfinished transaction) *in the copy*, as
  after a crash, which it is designed to survive. The agent's own ``-shm`` is never read (the copy
  rebuilds its WAL index). A copy is consistent when the database file did not change while it
  was taken (a checkpoint writes it; appends to the WAL do not matter: WAL frames are
  checksummed, so a frame torn by a concurrent append ends the replay and an earlier commit is
  seen). The database's stat (size, mtime, ctime, inode) is compared before and after; a copy
  taken across a change is discarded and taken again, up to :data:`COPY_TRIES` times.
* A copy is kept per store and reused while the stats of the database, ``-wal`` and
  ``-journal`` stay the same (windows and the session view read one row at a time); the previous
  one stays until the next change (a thread may still be opening it), older ones are removed, and
  every copy of this process is removed at exit. Copies left by a killed crabsearch are removed
  the next time one is made (their directory names carry the pid).

Cost: while an agent has uncommitted-to-file data, each change of its store costs one copy of the
database file (a no-change refresh copies nothing: stores are only read when their stats change).

Every path is checked with :func:`crabsearch.files.check_regular` first (a FIFO named
``opencode.db`` must not block SQLite's own ``open``; SQLite opens the path again itself, so a
FIFO swapped in within those microseconds is the one case left), and copied with
:func:`crabsearch.files.copy_file` (regular files only, never blocking).

Considered and left out: SQLite's backup API and ``VACUUM INTO`` (both need a connection to the
original, which is what writes ``-shm``), ``nolock=1`` (SQLite then cannot open a WAL-mode store
at all), and replaying the WAL in Python (re-implementing SQLite's recovery).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sqlite3
import stat
import tempfile
import threading
import time
from pathlib import Path

from .files import NotRegularFile, check_regular, copy_file

SIDE_FILES = ("-wal", "-journal")
"""Files beside a database that can hold committed data (or undo an unfinished transaction)."""
COPY_TRIES = 4
"""Attempts at a consistent copy before :func:`connect` gives up on this call."""
PREFIX = "crabsearch-sqlite-"
"""Name prefix of the private copy directories (``crabsearch-sqlite-<pid>-<random>``)."""

_lock = threading.RLock()
_copies: dict[str, list[tuple[tuple, str]]] = {}
"""Real path of a store -> its copies ``(key, directory)``, newest last (at most two kept)."""
_swept = False


def connect(path: str | os.PathLike, timeout: float = 1.0) -> sqlite3.Connection:
    """A read-only connection to the agent's SQLite database at ``path`` that never creates or
    writes anything beside it (module docstring): the database itself opened immutable, or a
    private copy of it with its ``-wal``/``-journal``. ``PRAGMA query_only`` is on. The caller
    closes it.

    Raises :class:`~crabsearch.files.NotRegularFile` (an ``OSError``) when ``path`` is not a
    regular file, ``OSError`` when it cannot be opened or copied, ``sqlite3.Error`` when SQLite
    cannot open it (not a database) or it kept changing while it was copied."""
    db = os.path.realpath(os.fspath(path))
    check_regular(db)
    side = _side_stats(db)
    if not any(st.st_size > 0 for st in side.values() if st is not None):
        con = sqlite3.connect(Path(db).as_uri() + "?mode=ro&immutable=1", uri=True, timeout=timeout,
                              check_same_thread=False)
    else:
        con = sqlite3.connect(_copy(db), timeout=timeout, check_same_thread=False)
    try:
        con.execute("PRAGMA query_only = 1")
    except BaseException:
        con.close()
        raise
    return con


def copies() -> list[str]:
    """The private copy directories this process holds now (newest last per store)."""
    with _lock:
        return [d for entries in _copies.values() for _, d in entries]


def clear() -> None:
    """Remove every private copy this process made (also run at exit). Never raises."""
    with _lock:
        for entries in _copies.values():
            for _, d in entries:
                shutil.rmtree(d, ignore_errors=True)
        _copies.clear()


atexit.register(clear)


def _stat_key(st: os.stat_result | None) -> tuple | None:
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _side_stats(db: str) -> dict[str, os.stat_result | None]:
    """``{suffix: stat or None}`` of the side files; one that is not a regular file is ignored
    (SQLite never opens it when the database is immutable, and it is never copied)."""
    out: dict[str, os.stat_result | None] = {}
    for suffix in SIDE_FILES:
        try:
            st = os.stat(db + suffix)
            out[suffix] = st if stat.S_ISREG(st.st_mode) else None
        except OSError:
            out[suffix] = None
    return out


def _key(db: str) -> tuple:
    """What a copy of ``db`` is valid for: the stats of the database and its side files."""
    return (_stat_key(os.stat(db)),) + tuple(_stat_key(st) for st in _side_stats(db).values())


def _copy(db: str) -> str:
    """The path of a consistent private copy of ``db`` and its side files, made or reused."""
    with _lock:
        key = _key(db)
        entries = _copies.setdefault(db, [])
        for k, d in entries:
            if k == key and os.path.exists(os.path.join(d, "db")):  # a long-lived process: gone with its TMPDIR?
                return os.path.join(d, "db")
        _sweep()
        for _attempt in range(COPY_TRIES):
            before = _key(db)
            d = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
            try:
                copy_file(db, os.path.join(d, "db"))
                for suffix in SIDE_FILES:
                    try:
                        copy_file(db + suffix, os.path.join(d, "db" + suffix))
                    except FileNotFoundError:
                        pass  # committed (journal) or checkpointed and removed (WAL) meanwhile
                    except NotRegularFile:
                        pass  # never read, as with the immutable open
            except BaseException:
                shutil.rmtree(d, ignore_errors=True)
                raise
            after = _key(db)
            if before[0] == after[0]:  # the database file itself did not change: a consistent copy
                entries.append((after, d))
                while len(entries) > 2:
                    shutil.rmtree(entries.pop(0)[1], ignore_errors=True)
                return os.path.join(d, "db")
            shutil.rmtree(d, ignore_errors=True)
            time.sleep(0.02 * (_attempt + 1))
        raise sqlite3.OperationalError(f"{db} kept changing while it was copied; read again later")


_OWN = re.compile(re.escape(PREFIX) + r"(\d+)-")


def _sweep() -> None:
    """Remove copy directories left by crabsearch processes that no longer run (once per process)."""
    global _swept
    if _swept:
        return
    _swept = True
    tmp = tempfile.gettempdir()
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return
    for entry in entries:
        m = _OWN.match(entry.name)
        if not m or int(m.group(1)) == os.getpid():
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or _alive(int(m.group(1))):
                continue
        except (OSError, AttributeError):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


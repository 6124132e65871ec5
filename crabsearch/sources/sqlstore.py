"""Agents whose sessions are rows of a SQLite store (Goose ``sessions.db``, Crush ``crush.db``,
Warp ``warp.sqlite``, Zed ``threads.db``): one unit per session, read through
:func:`crabsearch.agentdb.connect` (immutable, or a private copy while a WAL holds commits:
nothing is ever written beside the store), one short connection per call.

A reader subclasses :class:`StoreSource` and says where its stores are (:meth:`~StoreSource.stores`),
how a store lists its sessions (:meth:`~StoreSource.listing`), what a session's metadata row is
(:meth:`~StoreSource.meta`), which records a session holds (:meth:`~StoreSource.rows`) and how one
is fetched back (:meth:`~StoreSource.row`). The rest is shared:

* **Units**: ``member_path(db, session id)`` (ids holding ``/`` are left out: no member name can
  hold one). A store that cannot be listed is yielded itself, so that its failure is counted when
  it is read (``unreadable database``).
* **Incremental** stores (``incremental = True``, one row per message): "size" is the largest
  rowid of the session's rows in :attr:`~StoreSource.rows_table`, "offset" the rowid read up to,
  and a read takes the rows after it in rowid order. A record that may still change
  (:meth:`~StoreSource.settled` False: an answer still streaming) is yielded but not committed:
  the offset stays before it, so it comes again with the same message indexes. The fingerprint
  holds how many of the session's rows have a rowid up to the stored size and the smallest of
  them (plus :meth:`~StoreSource.identity`): a deleted or rewritten row makes the session read
  again from its start.
* **Whole** stores (``incremental = False``: one document per session): every change reads the
  session again from its start (its offset stays 0; the index replaces it).
* "mtime" is the session's newest change as the store records it (epoch ms from
  :meth:`~StoreSource.listing`); where the listing gives 0 (unknown, or a session still being
  written), the store's or its WAL's mtime.
* A message's ``(offset, length)`` is what :meth:`~StoreSource.rows` gave it (a rowid, or a
  position in the session's document), so that :meth:`~StoreSource.row` fetches one record back.
"""

from __future__ import annotations

import copy
import hashlib
import os
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from .. import agentdb
from ..jsonl import LineStats, Record, loads
from ..model import Session
from .base import MEMBER_SEP, FileRead, Source, member_path, note_unknown, parse_ts


class StoreSource(Source):
    """Sessions kept in an agent's SQLite stores (module docstring)."""

    incremental: bool = True
    """True: one row per message, read by rowid; False: one document per session, read whole."""
    rows_table: str = ""
    """The table of message rows (incremental stores)."""
    session_column: str = "session_id"
    """The column of :attr:`rows_table` naming a row's session."""
    store_names: tuple[str, ...] = ()
    """File names of the agent's stores (a store yielded itself, because it could not be listed,
    is recognised by its name)."""

    # -- what a reader says about its store ---------------------------------------------------

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The store files to read (existing regular files; each real file once)."""
        raise NotImplementedError

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """``{session id: (size, newest change in epoch ms or 0)}`` of the store ``db`` (``con`` is
        connected to it, or to its private copy). Raises ``sqlite3.Error``."""
        raise NotImplementedError

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        """The session's own metadata (its row as a dict; ``{}`` when it has none). Raises
        ``sqlite3.Error``."""
        return {}

    def rows(self, con: sqlite3.Connection, sid: str, after: int) -> Iterable[tuple[int, int, object]]:
        """``(offset, length, record)`` of the session's records after offset ``after``, in order;
        ``record`` None for one that cannot be decoded (counted as ``broken JSON``). Default: the
        rows of :attr:`rows_table` with a rowid above ``after``, each turned into a record by
        :meth:`record`. Raises ``sqlite3.Error``."""
        cur = con.execute(f"SELECT rowid AS _rowid, * FROM {self.rows_table} WHERE {self.session_column} = ? "
                          "AND rowid > ? ORDER BY rowid", (sid, after))
        cols = [d[0] for d in cur.description]
        for values in cur:
            row = dict(zip(cols, values))
            yield row["_rowid"], 0, self.record(row)

    def row(self, con: sqlite3.Connection, sid: str, offset: int, length: int) -> object | None:
        """The record stored at ``(offset, length)``, or None when it is gone. Default: the row of
        :attr:`rows_table` with rowid ``offset``. Raises ``sqlite3.Error``."""
        cur = con.execute(f"SELECT rowid AS _rowid, * FROM {self.rows_table} WHERE rowid = ? "
                          f"AND {self.session_column} = ?", (offset, sid))
        values = cur.fetchone()
        return self.record(dict(zip([d[0] for d in cur.description], values))) if values else None

    def record(self, row: dict) -> object | None:
        """A message row (column -> value) as the record the reader processes; None when it
        cannot be decoded."""
        return row

    def place(self, offset: int) -> str:
        """Where a record lies, as ``status`` names a skipped one (``row 12``)."""
        return f"row {offset}"

    def settled(self, obj) -> bool:
        """False for a record that may still change (read again until it is settled)."""
        return True

    def identity(self, con: sqlite3.Connection, sid: str) -> str:
        """More of what a session's fingerprint holds (a change of it reads the session again
        whole); ``""`` by default. Raises ``sqlite3.Error``."""
        return ""

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        """Take what :meth:`meta` gave into ``state`` (read at every read of the session)."""

    # -- units ------------------------------------------------------------------------------------

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """The units of every store (:meth:`store_units`)."""
        return self.store_units(env, home)

    def store_units(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """One member path per session of every store, in session id order; a store that
        cannot be listed is yielded itself."""
        for db in self.stores(env, home):
            try:
                listed = self.listed(str(db))
            except (sqlite3.Error, OSError):
                yield Path(db)
                continue
            for sid in sorted(listed):
                if isinstance(sid, str) and sid and "/" not in sid:
                    yield Path(member_path(db, sid))

    def listed(self, db: str) -> dict[str, tuple[int, int]]:
        """:meth:`listing` of store ``db``, cached while the store and its WAL keep their stats.
        Raises ``OSError`` or ``sqlite3.Error``."""
        key = _store_key(db)
        hit = _LISTINGS.get((self.agent, db))
        if hit and hit[0] == key:
            return hit[1]
        with connect_store(db) as con:
            listed = {sid: v for sid, v in self.listing(con, db).items() if isinstance(sid, str)}
        _LISTINGS[(self.agent, db)] = (key, listed)
        return listed

    def member(self, path: str) -> tuple[str, str] | None:
        """``(store, session id)`` of a member unit; None for a file on disk."""
        path = str(path)
        if os.path.lexists(path):
            return None
        db, sep, sid = path.rpartition(MEMBER_SEP)
        return (db, sid) if sep and db and sid and "/" not in sid else None

    def is_store(self, path: str) -> bool:
        """True for a store file yielded itself (its name is one of :attr:`store_names`)."""
        return Path(path).name in self.store_names

    def stat(self, path: str) -> tuple[int, int, int]:
        """A member: ``(size, newest change in ns, ctime of the store)`` (module docstring); a
        file: ``os.stat``. Raises ``OSError`` (``FileNotFoundError`` for a session gone)."""
        m = self.member(path)
        if m is None:
            return super().stat(path)
        db, sid = m
        st = os.stat(db)
        try:
            listed = self.listed(db)
        except sqlite3.Error as exc:
            raise OSError(f"cannot read {db}: {exc}") from exc
        if sid not in listed:
            raise FileNotFoundError(path)
        size, ms = listed[sid]
        size = size if isinstance(size, int) and size > 0 else 0
        ms = int(ms) if isinstance(ms, (int, float)) and ms > 0 else 0
        return size, ms * 1_000_000 if ms else max(st.st_mtime_ns, _wal_mtime(db)), st.st_ctime_ns

    def fingerprint(self, path: str, size: int) -> str:
        """A member: SHA-1 of its session id, how many of its rows have a rowid up to ``size``,
        the smallest of them and :meth:`identity` (``?`` when the store cannot be read); a file:
        its head. Raises ``OSError``."""
        m = self.member(path)
        if m is None:
            return super().fingerprint(path, size)
        db, sid = m
        os.stat(db)
        try:
            with connect_store(db) as con:
                extra = self.identity(con, sid)
                if self.incremental:
                    n, first = con.execute(f"SELECT count(*), min(rowid) FROM {self.rows_table} WHERE "
                                           f"{self.session_column} = ? AND rowid <= ?", (sid, size)).fetchone()
                    extra += f"\0{n}\0{first}"
        except (sqlite3.Error, OSError):
            extra = "?"
        return hashlib.sha1(f"{sid}\0{extra}".encode("utf-8", "replace")).hexdigest()

    def in_bytes(self, path: str) -> bool:
        """Members are rows, not bytes of a file."""
        return self.member(path) is None and super().in_bytes(path)

    def load(self, path: str, offset: int, length: int) -> object | None:
        """A member: :meth:`row` (None when it is gone or the store cannot be read); a file: one
        JSONL line."""
        m = self.member(path)
        if m is None:
            return super().load(path, offset, length)
        try:
            with connect_store(m[0]) as con:
                return self.row(con, m[1], offset, length)
        except (sqlite3.Error, OSError):
            return None

    # -- reading -----------------------------------------------------------------------------------

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """A member: its records after ``start`` (module docstring); a store yielded itself:
        nothing, counted as ``unreadable database``; any other file: the shared JSONL loop.
        Raises ``OSError`` when the store is gone; database errors (locked, corrupt, a missing
        table) are counted, and so is each record that cannot be decoded or handled
        (:meth:`Source.take`)."""
        m = self.member(str(path))
        if m is None and not self.is_store(str(path)):
            return super().read(path, start, state)
        if not self.incremental or m is None:
            start = 0
        if state is None or start == 0:
            sid = m[1] if m else Path(path).stem
            state = {"session": Session(agent=self.agent, session_id=sid, path=str(path)).to_state(),
                     "next_index": 0}
        session = Session.from_state(state["session"])
        stats = LineStats(end_offset=start)
        messages: list = []
        if m is None:
            os.stat(path)
            stats.skip("unreadable database", str(path))
            self._seal(state, session, stats)
            return FileRead(session, messages, 0, state, stats)
        db, sid = m
        os.stat(db)  # a store gone is an OSError, not a counted error
        meta: dict = {}
        records: list = []
        try:
            with connect_store(db) as con:
                meta = self.meta(con, sid) or {}
                records = list(self.rows(con, sid, start))
        except sqlite3.Error as exc:
            stats.skip("database error", f"session {sid}", f"database error ({' '.join(str(exc).split())[:200]})")
        self.take(Record(meta, 0, 0), state, session, messages, stats, "session",
                  lambda rec, st, se, out: self.apply_meta(rec.obj, st, se))
        committed = None
        end = start
        for offset, length, obj in records:
            where = self.place(offset)
            if obj is None:
                stats.skip("broken JSON", where)
            else:
                if committed is None and not self.settled(obj):
                    committed = (copy.deepcopy(state), end)
                    self._seal(committed[0], copy.deepcopy(session))
                self.take(Record(obj, offset, length), state, session, messages, stats, where)
            if committed is None:
                end = offset
        self._seal(state, session, stats)
        if not self.incremental:
            end, committed = 0, None
        if committed:
            stats.end_offset = committed[1]
            return FileRead(session, messages, committed[1], committed[0], stats)
        stats.end_offset = end
        return FileRead(session, messages, end, state, stats)


def json_of(raw) -> object | None:
    """A JSON column's value (text or bytes) parsed, or None when it is not JSON."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    if not isinstance(raw, (bytes, bytearray)):
        return None
    try:
        return loads(bytes(raw))
    except ValueError:
        return None


def epoch_ms(value) -> int:
    """A store's timestamp (ISO text, ``YYYY-MM-DD HH:MM:SS``, epoch s or ms) in epoch ms; 0 when
    it is none of them."""
    ts = parse_ts(value)
    return int(ts.timestamp() * 1000) if ts else 0


def known(kind, kinds: frozenset[str]) -> bool:
    """True when ``kind`` is a string among ``kinds`` (a record may hold a list or an object there)."""
    return isinstance(kind, str) and kind in kinds


def note_unknown_types(state: dict, items: list, kinds: frozenset[str]) -> None:
    """Count (:func:`~crabsearch.sources.base.note_unknown`) the ``type`` of each of ``items`` (a
    message's parts or content blocks) that is not among ``kinds``; an item that is not an object
    counts as one with no type."""
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if not known(kind, kinds):
            note_unknown(state, kind)


def table_columns(con: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (empty when there is no such table)."""
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def unique_files(paths: Iterable[Path]) -> list[Path]:
    """The ``paths`` that are regular files, each real file once, in order."""
    out, seen = [], set()
    for p in paths:
        try:
            real = os.path.realpath(p)
            if real in seen or not os.path.isfile(p):
                continue
        except OSError:
            continue
        seen.add(real)
        out.append(Path(p))
    return out


class DocCache:
    """Documents decoded from a store (a thread's JSON blob, a chat panel's value), kept for the
    next call: windows and the session view read one message at a time. Keyed by the path and
    stat of the file the connection reads (the store, or its private copy) and the caller's key."""

    def __init__(self, size: int = 4):
        self.size = size
        self._docs: OrderedDict[tuple, object] = OrderedDict()

    def get(self, con: sqlite3.Connection, key: tuple, make: Callable[[], object]) -> object:
        """The document for ``key``, made by ``make()`` when it is not kept. Raises what ``make``
        raises."""
        full = (_file_key(con), *key)
        if full in self._docs:
            self._docs.move_to_end(full)
            return self._docs[full]
        doc = make()
        self._docs[full] = doc
        while len(self._docs) > self.size:
            self._docs.popitem(last=False)
        return doc


def _file_key(con: sqlite3.Connection) -> tuple:
    """The path and stat of the file ``con`` reads."""
    path = next((r[2] for r in con.execute("PRAGMA database_list") if r[1] == "main"), "") or ""
    try:
        st = os.stat(path)
    except OSError:
        return (path,)
    return path, st.st_ino, st.st_size, st.st_mtime_ns


_LISTINGS: dict[tuple[str, str], tuple[tuple, dict]] = {}


def _wal_mtime(db: str) -> int:
    try:
        return os.stat(db + "-wal").st_mtime_ns
    except OSError:
        return 0


def _store_key(db: str) -> tuple:
    """What a listing is cached by: the stat of the store and of its WAL."""
    st = os.stat(db)
    return st.st_ino, st.st_mtime_ns, st.st_size, _wal_mtime(db)


class connect_store:
    """``with connect_store(db) as con``: an :func:`agentdb.connect` connection, closed at the end.
    Raises ``OSError`` (cannot open, not a regular file) or ``sqlite3.Error``."""

    def __init__(self, db: str):
        self.con = agentdb.connect(db, timeout=1.0)

    def __enter__(self) -> sqlite3.Connection:
        return self.con

    def __exit__(self, *exc) -> None:
        self.con.close()

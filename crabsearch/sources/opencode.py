"""opencode (sst/opencode) sessions: ``$XDG_DATA_HOME/opencode`` (else ``~/.local/share/opencode``,
opencode's own ``xdg-basedir`` rule on every platform), in two layouts.

Rules come from ``shared/reference/formats.md`` section 6 and opencode's ``session.sql.ts`` /
``message-v2.ts``. Decisions and limitations of this module:

* **SQLite** ``opencode.db`` (newer builds): tables ``session``, ``message(session_id, data)`` and
  ``part(message_id, data)``, ``data`` being the JSON of the message / part without its ids. One
  unit per session, ``member_path(db, session_id)``. Opened through :func:`crabsearch.agentdb.connect`
  (immutable, or a private copy while the WAL holds commits: nothing is written beside the
  database), one short connection per call. "size" is the session's largest part ``rowid``, "offset" the rowid read up
  to: new rows are read incrementally, in rowid (insertion) order. Parts of an assistant message
  that is still running (no ``time.completed``) are yielded but not committed, so they come again
  (same message indexes) when they change, like an unterminated JSONL line. The fingerprint counts
  the session's parts up to a size: a revert that deletes parts forces a full re-read.
* **Legacy JSON storage** ``storage/session/<projectID>/<sessionID>.json`` with
  ``storage/message/<sessionID>/*.json`` and ``storage/part/<messageID>/*.json``: the unit is the
  session file; "size" is the bytes of all its files, mtime the newest of them. It is always
  re-read whole (offset stays 0, so the index replaces the session). A message's
  ``(offset, length)`` is (position of its message file, 1 + position of its part file, or 0 for
  the message file itself) in sorted listings, so :meth:`load` reads one part file. A user message
  without parts (older builds) yields ``summary.body`` / ``summary.title`` as its text. Part
  directories of messages whose message file is missing are not found (that would mean listing
  every part directory).
* A session in both layouts is read once, from the database.
* Parts: ``text`` (user -> user prompt, ``synthetic``/``ignored`` text -> system; assistant ->
  assistant, or summary when the message has ``summary: true``, opencode's compaction summary),
  ``reasoning`` -> thinking, ``tool`` -> a ``tool-call:<tool>`` with ``state.input`` and, once
  completed or failed, a ``tool:<tool>`` result (``state.output`` / ``state.error``); a
  ``compaction`` part that carries text is a summary. ``file``, ``patch``, ``step-*``,
  ``snapshot``, ``agent``, ``subtask`` and unknown parts yield nothing.
* opencode title: ``session.title``, except opencode's placeholder ``New session - <ISO date>`` /
  ``Child session - <ISO date>``, which falls back to the first user prompt. Summary: the last
  compaction summary. Project: ``session.directory`` (else the first ``path.cwd``). Child sessions:
  ``parentID`` / ``parent_id``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import re
import sqlite3
from pathlib import Path
from typing import Iterator, Mapping

from .. import agentdb
from ..files import read_file
from ..jsonl import LineStats, Record, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message,
                     Role, Session, tool_call_label, tool_result_label)
from .base import (capped, FileRead, Source, cd_and, dump_text, head_fingerprint,
                   member_path, parse_ts, split_member, string, walk_files)
from .pieces import Piece, emit, piece_text

PLACEHOLDER_TITLE = re.compile(r"^(New|Child) session - \d{4}-\d{2}-\d{2}T")
"""opencode's default titles (``session/index.ts`` createDefaultTitle), replaced by a first prompt."""
SUMMARY_CAP = 8192


class OpencodeSource(Source):
    """opencode: ``opencode.db`` sessions (member paths) and legacy ``storage/`` session files."""

    agent = "opencode"
    order = 60
    env_var = "XDG_DATA_HOME"
    display = "opencode"
    badge = "opencode"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``."""
        base = env.get("XDG_DATA_HOME")
        return [(Path(os.path.expanduser(base)) if base else home / ".local" / "share") / "opencode"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """One member path per session of ``opencode.db`` (the database itself when it cannot be
        listed, so the failure is counted when it is read), then every legacy session file whose
        id the database does not hold."""
        for root in self.roots(env, home):
            db, in_db = root / "opencode.db", set()
            if db.is_file():
                try:
                    with _connect(str(db)) as con:
                        in_db = {r[0] for r in con.execute("SELECT id FROM session")
                                 if isinstance(r[0], str) and r[0] and "/" not in r[0]}
                    yield from (Path(member_path(db, sid)) for sid in sorted(in_db))
                except (sqlite3.Error, OSError):
                    yield db
            for path in walk_files(root / "storage" / "session", "*/*.json"):
                if path.stem not in in_db:
                    yield path

    # -- units ---------------------------------------------------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        """Database member: (largest part rowid, newest session/message ``time_updated`` in ns,
        else the database's or its WAL's mtime, ctime of the database). Legacy: (bytes of the session's files, newest mtime, ctime
        of the session file). Raises ``OSError`` (``FileNotFoundError`` for a deleted session)."""
        member = _member(path)
        if member is None:
            if str(path).endswith(".db"):
                return super().stat(path)
            return _legacy_stat(Path(path))
        db, sid = member
        st = os.stat(db)
        try:
            stats = _db_stats(db, *_db_key(db))
        except sqlite3.Error as exc:
            raise OSError(f"cannot read {db}: {exc}") from exc
        if sid not in stats:
            raise FileNotFoundError(path)
        size, ms = stats[sid]
        return size, (ms * 1_000_000 if ms else max(st.st_mtime_ns, _wal_mtime(db))), st.st_ctime_ns

    def fingerprint(self, path: str, size: int) -> str:
        """Database member: SHA-1 of the session id and how many of its parts have ``rowid <= size``
        (``?`` when the tables cannot be read). Legacy: the session file's head. Raises ``OSError``."""
        member = _member(path)
        if member is None:
            return head_fingerprint(path, min(size, os.stat(path).st_size))
        db, sid = member
        os.stat(db)
        try:
            with _connect(db) as con:
                n = con.execute("SELECT count(*) FROM part p JOIN message m ON m.id = p.message_id "
                                "WHERE m.session_id = ? AND p.rowid <= ?", (sid, size)).fetchone()[0]
        except sqlite3.Error:
            n = "?"
        return hashlib.sha1(f"{sid}\0{n}".encode()).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """``{"info": message, "part": part or None}``: one part row (database; ``offset`` = its
        rowid) or one message file and part file (legacy). None when it is gone."""
        member = _member(path)
        if member is None:
            return _legacy_record(Path(path), offset, length)
        try:
            with _connect(member[0]) as con:
                row = con.execute("SELECT p.data, m.data FROM part p JOIN message m ON m.id = p.message_id "
                                  "WHERE p.rowid = ?", (offset,)).fetchone()
        except (sqlite3.Error, OSError):
            return None
        return {"info": _json(row[1]), "part": _json(row[0])} if row else None

    # -- reading -------------------------------------------------------------------------------

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """Read a session (see the module docstring for offsets). Raises ``OSError`` when the
        database or session file cannot be opened; broken rows and files, database errors
        (locked, corrupt, missing table) and records the reader cannot handle
        (:meth:`Source.take`) are skipped and counted in ``FileRead.stats``."""
        member = _member(str(path))
        if state is None or start == 0:
            start, sid = 0, member[1] if member else path.stem
            state = {"session": Session(agent=self.agent, session_id=sid, path=str(path)).to_state(),
                     "next_index": 0}
        stats = LineStats(end_offset=start)
        if member is None and str(path).endswith(".db"):
            os.stat(path)
            stats.skip("unreadable database")
            records, meta = [], {}
        elif member is None:
            records, meta = _legacy_records(path, stats)
        else:
            records, meta = _db_records(*member, start, stats)
        session = Session.from_state(state["session"])
        messages: list[Message] = []
        self.take(Record(meta, 0, 0), state, session, messages, stats, "session",
                  lambda rec, state, session, out: _meta(rec.obj, state, session))
        committed = None
        for rec, settled, where in records:
            if not settled and committed is None:
                committed = (copy.deepcopy(state), stats.end_offset)
                self._seal(committed[0], copy.deepcopy(session))
            self.take(rec, state, session, messages, stats, where, self._take)
            if member is not None and committed is None:
                stats.end_offset = rec.offset
        self._seal(state, session, stats)
        if committed:
            return FileRead(session, messages, committed[1], committed[0], stats)
        return FileRead(session, messages, stats.end_offset if member else 0, state, stats)

    def _take(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        info, part = rec.obj["info"], rec.obj["part"]
        pieces = pieces_of(rec.obj)
        if info.get("role") == "assistant" and info.get("summary") is True or (part or {}).get("type") == "compaction":
            text = "\n".join(p.text for p in pieces if p.role is Role.SUMMARY)
            state["summary"] = capped(text, SUMMARY_CAP) if text else state.get("summary")
        cwd = string((info.get("path") or {}).get("cwd")) if isinstance(info.get("path"), dict) else ""
        if cwd and not state.get("cwd"):
            state["cwd"] = cwd
        ts = _part_time(part) or parse_ts((info.get("time") or {}).get("created")
                                          if isinstance(info.get("time"), dict) else None)
        session.touch(ts)
        emit(pieces, rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        """opencode title: ``session.title`` unless it is a placeholder, else the first user prompt;
        summary: the last compaction summary; project: ``directory`` else the first ``path.cwd``."""
        session.session_id = state.get("sid") or session.session_id
        title = state.get("title") or ""
        session.title = (title if title and not PLACEHOLDER_TITLE.match(title) else None) \
            or state.get("first_prompt") or None
        session.summary = state.get("summary") or None
        session.project = state.get("directory") or state.get("cwd") or None
        session.parent_session_id = state.get("parent")
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <dir> && opencode <dir> --session <id>`` (formats.md 6)."""
        argv = ["opencode"] + ([session.project] if session.project else []) + ["--session", session.session_id]
        return cd_and(session.project, argv)


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one record ``{"info": message, "part": part or None}``."""
    info, part = obj.get("info"), obj.get("part")
    if not isinstance(info, dict):
        return []
    role = info.get("role")
    if part is None:  # a legacy user message without parts: older builds keep the text in summary
        summary = info.get("summary") if isinstance(info.get("summary"), dict) else {}
        text = string(summary.get("body")) or string(summary.get("title"))
        return [Piece(Role.USER, LABEL_USER, text, prompt=True)] if role == "user" and text.strip() else []
    if not isinstance(part, dict):
        return []
    kind, text = part.get("type"), string(part.get("text"))
    if kind == "text" and text.strip():
        if role == "user":
            if part.get("synthetic") or part.get("ignored"):
                return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)]
            return [Piece(Role.USER, LABEL_USER, text, prompt=True)]
        if info.get("summary") is True:
            return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)]
        return [Piece(Role.ASSISTANT, LABEL_ASSISTANT, text)]
    if kind == "reasoning" and text.strip():
        return [Piece(Role.ASSISTANT, LABEL_THINKING, text)]
    if kind == "compaction":
        text = text or string(part.get("summary"))
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text.strip() else []
    if kind == "tool":
        name = string(part.get("tool")) or "unknown"
        st = part.get("state") if isinstance(part.get("state"), dict) else {}
        out = [Piece(Role.ASSISTANT, tool_call_label(name), dump_text(st.get("input")), name)]
        if st.get("status") == "completed":
            out.append(Piece(Role.TOOL, tool_result_label(name), dump_text(st.get("output")), name))
        elif st.get("status") == "error":
            out.append(Piece(Role.TOOL, tool_result_label(name), dump_text(st.get("error")), name))
        return out
    return []


def _part_time(part) -> object:
    if not isinstance(part, dict):
        return None
    t = part.get("time")
    if not isinstance(t, dict) and isinstance(part.get("state"), dict):
        t = part["state"].get("time")
    return parse_ts(t.get("start")) if isinstance(t, dict) else None


def _settled(info: dict, part) -> bool:
    """False for parts that may still change: those of a running assistant message, pending tools."""
    if isinstance(part, dict) and isinstance(part.get("state"), dict) \
            and part["state"].get("status") in ("pending", "running"):
        return False
    if info.get("role") != "assistant" or info.get("error"):
        return True
    t = info.get("time")
    return isinstance(t, dict) and t.get("completed") is not None


def _meta(meta: dict, state: dict, session: Session) -> None:
    """Apply a session record (legacy JSON, or a database row as a dict) to the state."""
    if not meta:
        return
    state["sid"] = string(meta.get("id")) or state.get("sid")
    state["title"] = string(meta.get("title")).strip() or None
    state["directory"] = string(meta.get("directory")) or None
    state["parent"] = string(meta.get("parentID") or meta.get("parent_id")) or None
    t = meta.get("time") if isinstance(meta.get("time"), dict) else {}
    session.touch(parse_ts(t.get("created", meta.get("time_created"))))
    session.touch(parse_ts(t.get("updated", meta.get("time_updated"))))


def _json(raw) -> dict | None:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    try:
        obj = loads(raw) if isinstance(raw, bytes) else None
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


# -- SQLite ------------------------------------------------------------------------------------


def _member(path: str) -> tuple[str, str] | None:
    """``(db, session_id)`` of a database member path; None for a plain file."""
    try:
        db, sid = split_member(str(path))
    except ValueError:
        return None
    return (db, sid) if db.endswith(".db") and "/" not in sid else None


def _connect(db: str) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside the database (:func:`agentdb.connect`).
    Raises ``sqlite3.Error``, or ``OSError`` when the file cannot be opened or is not a regular
    file."""
    return _Closing(agentdb.connect(db, timeout=1.0))


class _Closing:
    """``with`` closes the connection (sqlite3's own context manager only commits)."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con

    def __enter__(self) -> sqlite3.Connection:
        return self.con

    def __exit__(self, *exc) -> None:
        self.con.close()


def _wal_mtime(db: str) -> int:
    try:
        return os.stat(db + "-wal").st_mtime_ns
    except OSError:
        return 0


def _db_key(db: str) -> tuple:
    st = os.stat(db)
    return st.st_mtime_ns, st.st_size, _wal_mtime(db)


@functools.lru_cache(maxsize=4)
def _db_stats(db: str, *_key) -> dict[str, tuple[int, int]]:
    """session id -> (largest part rowid, newest ``time_updated`` of the session row and its
    messages in ms, or 0), in a few grouped queries per database version (``_key``: the database's
    and its WAL's mtime and size). Parts' own ``time_updated`` is not used: a part changing in
    place belongs to a running message, re-read when that message's row changes."""
    with _connect(db) as con:
        out = {sid: (0, 0) for (sid,) in con.execute("SELECT id FROM session")}
        sizes = ("SELECT session_id, max(rowid) FROM part GROUP BY session_id" if "session_id" in _cols(con, "part")
                 else "SELECT m.session_id, max(p.rowid) FROM part p JOIN message m ON m.id = p.message_id "
                      "GROUP BY m.session_id")  # an index scan with opencode's part_session_idx
        try:  # a missing part or message table: the sessions are still read, and the error counted
            for sid, size in con.execute(sizes):
                if sid in out:
                    out[sid] = (size or 0, 0)
            for table, query in (("message", "SELECT session_id, max(time_updated) FROM message GROUP BY session_id"),
                                 ("session", "SELECT id, time_updated FROM session")):
                if "time_updated" in _cols(con, table):
                    for sid, ms in con.execute(query):
                        if sid in out and isinstance(ms, (int, float)):
                            out[sid] = (out[sid][0], max(out[sid][1], int(ms)))
        except sqlite3.Error:
            pass
    return out


def _cols(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def _db_records(db: str, sid: str, start: int, stats: LineStats):
    """(records with their settled flag and place, session row as a dict) of parts after rowid
    ``start``."""
    os.stat(db)  # a missing database is an OSError, not a counted error
    meta, records = {}, []
    try:
        with _connect(db) as con:
            con.row_factory = sqlite3.Row
            row = con.execute("SELECT * FROM session WHERE id = ?", (sid,)).fetchone()
            meta = dict(row) if row else {}
            rows = con.execute("SELECT p.rowid, p.data, m.data FROM part p JOIN message m ON m.id = p.message_id "
                               "WHERE m.session_id = ? AND p.rowid > ? ORDER BY p.rowid", (sid, start)).fetchall()
    except sqlite3.Error as exc:
        stats.skip(f"database error: {exc}")
        return [], meta
    for rowid, pdata, mdata in rows:
        info, part = _json(mdata), _json(pdata)
        if info is None or part is None:
            stats.skip("broken JSON", f"part row {rowid}")
            records.append((Record({"info": {}, "part": None}, rowid, 0), True, f"part row {rowid}"))
            continue
        records.append((Record({"info": info, "part": part}, rowid, 0), _settled(info, part), f"part row {rowid}"))
    return records, meta


# -- legacy JSON storage -----------------------------------------------------------------------


def _legacy_dirs(session_file: Path) -> tuple[Path, Path]:
    """(``storage/message``, ``storage/part``) of ``storage/session/<project>/<id>.json``."""
    storage = session_file.parent.parent.parent
    return storage / "message", storage / "part"


def _json_files(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError:
        return []


def _read_json(path: Path) -> dict | None:
    try:
        return _json(read_file(path))
    except OSError:
        return None


def _legacy_stat(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    size, mtime = st.st_size, st.st_mtime_ns
    msg_dir, part_dir = _legacy_dirs(path)
    meta = _read_json(path) or {}
    for mf in _json_files(msg_dir / (string(meta.get("id")) or path.stem)):
        for f in [mf] + _json_files(part_dir / mf.stem):
            try:
                fst = os.stat(f)
            except OSError:
                continue
            size, mtime = size + fst.st_size, max(mtime, fst.st_mtime_ns)
    return size, mtime, st.st_ctime_ns


def _legacy_records(path: Path, stats: LineStats):
    """(records with their settled flag and place, session JSON) of a whole legacy session.
    Raises ``OSError`` for the session file."""
    meta = _json(read_file(path))
    if meta is None:
        stats.skip("broken JSON", str(path))
        return [], {}
    msg_dir, part_dir = _legacy_dirs(path)
    records = []
    for i, mf in enumerate(_json_files(msg_dir / (string(meta.get("id")) or path.stem))):
        info = _read_json(mf)
        if info is None:
            stats.skip("broken JSON", str(mf))
            continue
        parts = _json_files(part_dir / (string(info.get("id")) or mf.stem))
        if not parts:
            records.append((Record({"info": info, "part": None}, i, 0), True, str(mf)))
        for j, pf in enumerate(parts):
            part = _read_json(pf)
            if part is None:
                stats.skip("broken JSON", str(pf))
                continue
            records.append((Record({"info": info, "part": part}, i, j + 1), True, str(pf)))
    return records, meta


def _legacy_record(path: Path, offset: int, length: int) -> dict | None:
    meta = _read_json(path)
    if meta is None:
        return None
    msg_dir, part_dir = _legacy_dirs(path)
    files = _json_files(msg_dir / (string(meta.get("id")) or path.stem))
    info = _read_json(files[offset]) if 0 <= offset < len(files) else None
    if info is None:
        return None
    if length == 0:
        return {"info": info, "part": None}
    parts = _json_files(part_dir / (string(info.get("id")) or files[offset].stem))
    part = _read_json(parts[length - 1]) if 0 < length <= len(parts) else None
    return {"info": info, "part": part} if part is not None else None


SOURCE = OpencodeSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

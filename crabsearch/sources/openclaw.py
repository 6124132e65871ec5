"""OpenClaw sessions: legacy JSONL transcripts and the per-agent SQLite store (formats.md section 4).

Layout (4.1): ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw`` (and ``~/.clawdbot`` when it exists),
then per agent ``agents/<agentId>/``:

* ``sessions/<sessionId>.jsonl`` (also ``<sessionId>-topic-<threadId>.jsonl``) and reset archives
  ``<sessionId>.jsonl.reset.<time>``; never ``*.checkpoint.*`` (compaction checkpoints, duplicate
  content), ``*.deleted*`` or ``*.bak*``. Entries are pi v3 (``pi.py`` does the parsing, the tree
  and the summaries).
* ``agent/openclaw-agent.sqlite`` (>= 2026.8): table ``transcript_events(session_id, seq,
  event_json, created_at[, event_zstd])`` holds the same entries, one row each. Each session is a
  unit ``<db>#<sessionId>``; its size is its row count, its offset the rows read so far (state
  keeps the last rowid, so a read takes only newer rows), its mtime the newest of its last row's
  ``created_at``, ``session_windows.updated_at`` and ``session_nodes.updated_at`` (ms, with the
  last rowid in the sub-millisecond digits so that any new row changes it), and a message's
  offset is the rowid of its row. ``event_zstd`` rows are read when the ``zstandard`` module is installed,
  else skipped and counted. The database is opened through :func:`crabsearch.agentdb.connect`
  (immutable, or a private copy while its WAL holds commits: nothing is ever written beside it),
  queried in slices of :data:`ROWS` rows, and closed after each call.
* **Each session once:** a JSONL file (live or reset archive) whose session id (the file name up
  to ``.jsonl``) the agent's SQLite store also holds is not discovered: ``openclaw doctor
  --session-sqlite import`` copies the JSONL into the store and OpenClaw writes only there
  afterwards, so the store is never older than the leftover file.

* **Event blobs** (rule 16): a large entry is stored zstd-compressed in
  ``transcript_events.event_zstd`` with ``event_json`` NULL (OpenClaw's agent schema; a row whose
  frame is cut short is undecodable, counted). ``zstandard`` is a dependency, so a default install
  reads them.
* **Transcript archives** (rule 16): a deleted or reset session's transcript is kept in
  ``session_transcript_archives(session_id, generation, session_key, reason, encoding,
  archive_blob, archive_sha256, archive_name, created_at, published_at)`` (``encoding``
  ``identity`` or ``zstd``; the blob is the session's JSONL: OpenClaw's
  ``openclaw-agent-schema.sql`` and ``session-accessor.sqlite-archive-store-kernel.ts``). Each
  archived session id that has no live rows is a unit ``<db>#archive:<archive_name>`` (its latest
  generation), read like a JSONL file from the decoded blob, ``archived``, and not resumable; a
  leftover ``.jsonl`` / ``.reset.`` file of such a session is not read twice. Reset archives in
  ``sessions/`` (``<id>.jsonl.reset.<time>``) are ``archived`` too.

* **Rewrites in place** (rule 8; ``openclaw`` 2026.9.6 on npm,
  ``dist/session-accessor.sqlite-transcript-write-*.mjs`` ``replaceSqliteTranscriptSuffixInTransaction``,
  ``rewriteTranscriptEventRowsExact``, ``replaceTranscriptEventsSync`` and
  ``dist/session-accessor.sqlite-transcript-store-*.mjs``): a branch deletes a session's rows from
  ``startSeq`` on and inserts the new suffix; an exact rewrite updates rows where they are; a full
  replace deletes every row and inserts new ones. Each rotates
  ``transcript_rewrite_watermarks.generation`` (and its ``updated_at``) and moves
  ``session_windows.transcript_updated_at``; pure appends keep the generation. Both times count in
  a member's mtime, and its fingerprint holds the generation and the row at the stored size (the
  last row read, unless rows before it were deleted or replaced): either changing reads the
  session again from its first row, so no turn is indexed twice, no text stays stale and no
  message points at a deleted row.
* **Cold storage** (rule 9, :mod:`~crabsearch.sources.openclaw_cold`): a session moved to
  ``session_transcript_cold_archives`` (a blob in the store, or ``<agent>/sessions/cold/*.jsonl.zst``)
  is a unit ``<db>#cold:<session id>``, read from its archive's ``event`` records, ``archived``
  and still resumable (OpenClaw restores it when it is opened); its leftover ``.jsonl`` is not read.

Title (4.3): the session entry's ``label`` > ``displayName`` > ``subject`` (``sessions.json``
beside the JSONL; in the store ``session_nodes.entry_json``, then ``session_windows.display_name``,
then the ``sessions.json`` left beside it), else pi's rules (``session_info`` name, first user
prompt on the active branch, its channel envelope stripped). Summary: the latest compaction /
branch summary on the active branch. Resume (4.3): ``openclaw tui --session <key>`` where
``<key>`` is the session key whose *current* session is this one; older windows of a key and
reset archives cannot be resumed (None).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Iterator, Mapping

from .. import agentdb
from ..files import read_file
from ..jsonl import MAX_LINE, LineStats, Record, loads
from ..model import Session
from .base import (MEMBER_SEP, FileRead, Source, cd_and, env_dir, member_path, records_of_bytes,
                    split_member, string, walk_files, unzstd)
from .openclaw_cold import COLD, COLD_COLUMNS, archive_file, cold_rows, events, unwrap
from .pi import V3Source


@functools.cache
def _zstd():
    """The ``zstandard`` module, imported at the first compressed event (OpenClaw >= 2026.9.6
    stores large events zstd-compressed), not with this reader, which every refresh imports;
    None when it is not installed."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return zstandard


DB_NAME = "openclaw-agent.sqlite"
ROWS = 500
"""Rows fetched per query while reading a session from the store."""
_SKIP = (".checkpoint.", ".deleted", ".bak")
ARCHIVE = "archive:"
"""Member prefix of a transcript archive unit (``<db>#archive:<archive_name>``)."""
ARCHIVE_MAX = 256 << 20
"""Decoded bytes read of one archive blob (a larger one is an error for that unit only)."""


class OpenClawSource(V3Source):
    """OpenClaw (formats.md section 4): JSONL files and SQLite store members, one session each."""

    agent = "openclaw"
    order = 40
    env_var = "OPENCLAW_STATE_DIR"
    locations = ("`~/.openclaw/agents/*/sessions/*.jsonl` (+ `.reset.` archives), "
                 "`agents/*/agent/openclaw-agent.sqlite` (each session once)")
    reads = ("zstd-compressed events; deleted and reset sessions from `session_transcript_archives`, and "
             "cold-stored ones, marked archived; rewritten and branched sessions read again")
    override = "`OPENCLAW_STATE_DIR=DIR`"
    upstream = ("`openclaw` 2026.9.6 (npm, `dist/session-*.mjs`); pi's `session-manager.ts`; formats.md section 4")
    resume_doc = "`cd DIR && openclaw tui --session KEY` (the session's key)"
    checked = "2026-12-06: 2026.9.6"
    display = "OpenClaw"
    badge = "OpenClaw"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$OPENCLAW_STATE_DIR``, else ``~/.openclaw`` plus a legacy ``~/.clawdbot`` that exists."""
        if env.get("OPENCLAW_STATE_DIR"):
            return [env_dir(env, "OPENCLAW_STATE_DIR", home / ".openclaw")]
        return [home / ".openclaw"] + [p for p in [home / ".clawdbot"] if p.is_dir()]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path | str]:
        """Store members ``agents/*/agent/openclaw-agent.sqlite#<id>``, then the JSONL files of
        ``agents/*/sessions/`` whose session the store does not hold (module docstring)."""
        for root in self.roots(env, home):
            try:
                agents = sorted(p for p in (root / "agents").iterdir() if p.is_dir())
            except OSError:
                continue
            for agent_dir in agents:
                db = agent_dir / "agent" / DB_NAME
                held = set(_summary(str(db))) if db.is_file() else set()
                for sid in sorted(held):
                    yield member_path(db, sid)
                cold = _colds(str(db)) if db.is_file() else {}
                for sid in sorted(set(cold) - held):
                    yield member_path(db, COLD + sid)
                held |= set(cold)
                archived = _archives(str(db)) if db.is_file() else {}
                for name, row in sorted(archived.items()):
                    if row["session_id"] not in held:
                        yield member_path(db, ARCHIVE + name)
                held |= {row["session_id"] for row in archived.values()}
                for path in walk_files(agent_dir / "sessions", "*"):
                    name = path.name
                    if ".jsonl" not in name or any(s in name for s in _SKIP):
                        continue
                    if name.endswith(".jsonl") or ".jsonl.reset." in name:
                        if name.partition(".jsonl")[0] not in held:
                            yield path

    # -- units ------------------------------------------------------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        """A store member: ``(row count, newest change in ns, same)``; files: ``os.stat``.
        Raises ``FileNotFoundError`` when the member or database is gone."""
        if not _is_member(path):
            return super().stat(path)
        db, sid = split_member(path)
        os.stat(db)
        if sid.startswith(ARCHIVE):
            arc = _archives(db).get(sid[len(ARCHIVE):])
            if arc is None:
                raise FileNotFoundError(path)
            mtime = (arc["created_at"] or 0) * 1_000_000
            return arc["size"], mtime, mtime
        if sid.startswith(COLD):
            cold = _colds(db).get(sid[len(COLD):])
            if cold is None:
                raise FileNotFoundError(path)
            mtime = (cold["archived_at"] if isinstance(cold["archived_at"], int) else 0) * 1_000_000
            return (cold["event_count"] if isinstance(cold["event_count"], int) else 0), mtime, mtime
        row = _summary(db).get(sid)
        if row is None:
            raise FileNotFoundError(path)
        mtime = row[2] * 1_000_000 + row[1] % 1_000_000  # the last rowid in the sub-ms digits
        return row[0], mtime, mtime

    def fingerprint(self, path: str, size: int) -> str:
        """A store member: SHA-1 of its first row's rowid and text, its ``size``-th row's rowid,
        ``seq`` and text and its rewrite generation (rule 8: a rewritten session changes one of
        them; SQLite gives a row inserted after the deleted last ones their rowids again); an
        archive: its hash and generation; files: the head bytes. Raises ``OSError``."""
        if not _is_member(path):
            return super().fingerprint(path, size)
        db, sid = split_member(path)
        if sid.startswith(ARCHIVE) or sid.startswith(COLD):
            arc = (_archives(db).get(sid[len(ARCHIVE):]) if sid.startswith(ARCHIVE)
                   else _colds(db).get(sid[len(COLD):]))
            if arc is None:
                raise FileNotFoundError(path)
            sha = arc.get("sha256") or arc.get("archive_sha256")
            return hashlib.sha1(f"{sha}:{arc['generation']}".encode()).hexdigest()
        rows = _query(db, "SELECT rowid, * FROM transcript_events WHERE session_id=? ORDER BY rowid LIMIT 1", (sid,))
        first = f"{rows[0]['rowid']}:{_event_text(rows[0])}" if rows else ""
        nth = _query(db, "SELECT rowid, * FROM transcript_events WHERE session_id=? ORDER BY rowid LIMIT 1 OFFSET ?",
                     (sid, max(size - 1, 0)))
        last = f"{nth[0]['rowid']}:{nth[0]['seq']}:{_event_text(nth[0])}" if nth else ""
        first += f"\0{last}\0{_generation(db, sid)}"
        return hashlib.sha1(first.encode("utf-8", "replace")).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """A store member: the entry of row ``offset`` (a rowid); files: one JSONL line."""
        if not _is_member(path):
            return super().load(path, offset, length)
        db, sid = split_member(path)
        if sid.startswith(ARCHIVE):
            raw = _archive_bytes(db, sid[len(ARCHIVE):])[offset:offset + length]
            obj = _parse(raw.decode("utf-8", "replace")) if len(raw) == length else None
            return obj
        if sid.startswith(COLD):
            raw = _cold_bytes(db, sid[len(COLD):])[offset:offset + length]
            return unwrap(_parse(raw.decode("utf-8", "replace")) or {}) if len(raw) == length else None
        rows = _query(db, "SELECT * FROM transcript_events WHERE rowid=? AND session_id=?", (offset, sid))
        obj = _parse(_event_text(rows[0])) if rows else None
        return obj

    def read(self, path, start: int = 0, state: dict | None = None) -> FileRead:
        """JSONL files: the shared read loop. A store member: its rows after the stored rowid;
        broken rows (bad JSON, undecodable ``event_zstd``) and database errors are skipped and
        counted, and so are rows the reader cannot handle (:meth:`Source.take`). Raises
        ``OSError`` when the database cannot be opened."""
        if not _is_member(str(path)):
            return super().read(path, start, state)
        db, sid = split_member(str(path))
        if sid.startswith(ARCHIVE) or sid.startswith(COLD):  # the shared loop over the decoded blob
            return Source.read(self, Path(path), start, state if start else None)
        if state is None or start == 0:
            start, state = 0, self.new_state(Path(db))
            state["session"] = Session(agent=self.agent, session_id=sid, path=str(path)).to_state()
            state["next_index"], state["rowid"] = 0, 0
        session = Session.from_state(state["session"])
        stats, messages, done = LineStats(), [], start
        try:
            while True:
                rows = _query(db, "SELECT rowid, * FROM transcript_events WHERE session_id=? AND rowid>? "
                              "ORDER BY rowid LIMIT ?", (sid, state["rowid"], ROWS))
                for row in rows:
                    state["rowid"], done = row["rowid"], done + 1
                    text = _event_text(row)
                    obj = _parse(text) if text is not None else None
                    if obj is None:
                        stats.skip("undecodable event_zstd" if text is None else "broken JSON", f"row {row['rowid']}")
                        continue
                    self.take(Record(obj, row["rowid"], len(text)), state, session, messages, stats,
                              f"row {row['rowid']}")
                if len(rows) < ROWS:
                    break
            state["meta"] = _store_meta(db, sid)
        except sqlite3.DatabaseError:  # corrupt, locked, missing table: keep what was read
            stats.skip("database error")
        stats.end_offset = done
        self._seal(state, session, stats)
        return FileRead(session, messages, done, state, stats)

    def records(self, path: Path, start: int, stats: LineStats):
        """A transcript archive unit: the lines of its decoded blob; a file: its lines."""
        db, sep, member = str(path).rpartition(MEMBER_SEP)
        if sep and member.startswith(ARCHIVE) and db.endswith(DB_NAME):
            return records_of_bytes(_archive_bytes(db, member[len(ARCHIVE):]), start, stats)
        if sep and member.startswith(COLD) and db.endswith(DB_NAME):
            return events(_cold_bytes(db, member[len(COLD):]), start, stats)
        return super().records(path, start, stats)

    def in_bytes(self, path: str) -> bool:
        """Store members (rows, archive blobs) are not bytes of a file."""
        return not _is_member(path) and super().in_bytes(path)

    def new_state(self, path: Path) -> dict:
        """The v3 state; an archive unit is archived and has no session entry (not resumable)."""
        state = super().new_state(path)
        member = str(path).rpartition(MEMBER_SEP)[2] if _is_member(str(path)) else ""
        if member.startswith(ARCHIVE):
            arc = _archives(str(path).rpartition(MEMBER_SEP)[0]).get(member[len(ARCHIVE):]) or {}
            state["archived"] = True
            state["meta"] = {}
            state["sid"] = arc.get("session_id") or None
        elif member.startswith(COLD):
            state["archived"] = True
            state["meta"] = _store_meta(str(path).rpartition(MEMBER_SEP)[0], member[len(COLD):])
            state["sid"] = member[len(COLD):]
        elif ".jsonl.reset." in Path(path).name:
            state["archived"] = True
        return state

    def finish(self, state: dict, session: Session) -> None:
        """pi's session fields (:class:`V3Source`), plus ``archived`` (rule 16)."""
        super().finish(state, session)
        session.archived = bool(state.get("archived"))

    # -- session fields ------------------------------------------------------------------------

    def stored_title(self, state: dict, session: Session) -> str | None:
        """``label`` > ``displayName`` > ``subject`` of the session's entry; also notes the
        resumable session key in ``extra["session_key"]``."""
        meta = state.get("meta")
        if meta is None:  # a JSONL file: sessions.json beside it
            path = Path(session.path)
            meta = _json_store_meta(path.parent / "sessions.json", session.session_id)
            if ".jsonl.reset." in path.name:
                meta.pop("key", None)
        if meta.get("key"):
            session.extra["session_key"] = meta["key"]
        else:
            session.extra.pop("session_key", None)
        return meta.get("title")

    def id_from_path(self, path: Path) -> str:
        """``<id>.jsonl`` / ``<id>.jsonl.reset.<time>`` -> ``<id>``; a member path -> its member."""
        if _is_member(str(path)):
            return split_member(str(path))[1]
        return path.name.partition(".jsonl")[0]

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && openclaw tui --session <key>`` (formats.md 4.3); None without a key."""
        key = session.extra.get("session_key")
        return cd_and(session.project, ["openclaw", "tui", "--session", key]) if key else None


# -- the SQLite store ----------------------------------------------------------------------------

_SUMMARY: dict[str, tuple[tuple, dict[str, tuple[int, int, int]]]] = {}


def _is_member(path: str) -> bool:
    container, sep, member = path.rpartition(MEMBER_SEP)
    return bool(sep) and container.endswith(DB_NAME) and "/" not in member


def _connect(db: str) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside the store (:func:`agentdb.connect`);
    raises ``FileNotFoundError``/``OSError`` when it cannot be opened (``files.NotRegularFile``
    when it is not a regular file)."""
    if not os.path.lexists(db):
        raise FileNotFoundError(db)
    try:
        con = agentdb.connect(db, timeout=2.0)
    except sqlite3.Error as exc:
        raise OSError(f"cannot open {db}: {exc}") from exc
    con.row_factory = sqlite3.Row
    return con


def _query(db: str, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
    """Rows of one query on a fresh read-only connection, closed before returning. Raises
    ``OSError`` (cannot open) or ``sqlite3.DatabaseError``."""
    con = _connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def _store_key(db: str) -> tuple:
    """What the store's caches are keyed by: the mtime and size of the database and its WAL."""
    return tuple((st.st_mtime_ns, st.st_size) for st in map(_stat_or_none, (db, db + "-wal")) if st)


def _summary(db: str) -> dict[str, tuple[int, int, int]]:
    """``{session id: (rows, max rowid, newest change in ms)}`` of a store, cached by the stat of
    the database and its WAL file; ``{}`` when it cannot be read (never raises)."""
    try:
        key = _store_key(db)
        hit = _SUMMARY.get(db)
        if hit and hit[0] == key:
            return hit[1]
        out = {r[0]: (r[1], r[2], r[3] if isinstance(r[3], int) else 0) for r in _query(
            db, "SELECT t.session_id, t.n, t.last, e.created_at FROM (SELECT session_id, COUNT(*) AS n, "
                "MAX(rowid) AS last FROM transcript_events GROUP BY session_id) AS t "
                "JOIN transcript_events AS e ON e.rowid = t.last")}
        for table, col, when in (("session_windows", "session_id", "updated_at"),
                                 ("session_windows", "session_id", "transcript_updated_at"),
                                 ("session_nodes", "current_session_id", "updated_at"),
                                 ("transcript_rewrite_watermarks", "session_id", "updated_at")):
            try:
                for sid, updated in _query(db, f"SELECT {col}, MAX({when}) FROM {table} GROUP BY {col}"):
                    if sid in out and isinstance(updated, int):
                        out[sid] = out[sid][:2] + (max(out[sid][2], updated),)
            except sqlite3.DatabaseError:
                pass  # older stores lack the table or column
    except (OSError, sqlite3.Error):
        return {}
    _SUMMARY[db] = (key, out)
    return out


_ARCHIVES: dict[str, tuple[tuple, dict[str, dict]]] = {}


def _archives(db: str) -> dict[str, dict]:
    """``{archive_name: {"session_id", "generation", "reason", "encoding", "size", "sha256",
    "created_at"}}`` of the latest archive of each session id in ``session_transcript_archives``
    (names holding ``/`` or ``#`` are left out: they cannot be member names); cached by the stat
    of the database and its WAL; ``{}`` when the table is absent or the store unreadable."""
    key = _store_key(db)
    hit = _ARCHIVES.get(db)
    if hit and hit[0] == key:
        return hit[1]
    try:
        rows = _query(db, "SELECT session_id, generation, reason, encoding, archive_name, archive_sha256, "
                          "created_at, length(archive_blob) AS size FROM session_transcript_archives "
                          "ORDER BY created_at, rowid")
    except (OSError, sqlite3.Error):  # most stores have no archives table: remembered, not asked again
        _ARCHIVES[db] = (key, {})
        return {}
    latest: dict[str, dict] = {}
    for r in rows:
        name = r["archive_name"]
        if not isinstance(name, str) or not name or "/" in name or MEMBER_SEP in name:
            continue
        latest[str(r["session_id"])] = {"name": name, "session_id": str(r["session_id"]),
                                       "generation": str(r["generation"]), "reason": r["reason"],
                                       "encoding": r["encoding"], "sha256": r["archive_sha256"],
                                       "created_at": r["created_at"] if isinstance(r["created_at"], int) else 0,
                                       "size": r["size"] if isinstance(r["size"], int) else 0}
    out = {a["name"]: a for a in latest.values()}
    _ARCHIVES[db] = (key, out)
    return out


_COLDS: dict[str, tuple[tuple, dict[str, dict]]] = {}


def _colds(db: str) -> dict[str, dict]:
    """``{session id: its session_transcript_cold_archives row}`` (rule 9), cached by the stat of
    the database and its WAL; ``{}`` when the table is absent or the store unreadable."""
    key = _store_key(db)
    hit = _COLDS.get(db)
    if hit and hit[0] == key:
        return hit[1]
    try:
        out = cold_rows(_query(db, f"SELECT {COLD_COLUMNS} FROM session_transcript_cold_archives"))
    except (OSError, sqlite3.Error):
        out = {}
    _COLDS[db] = (key, out)
    return out


def _cold_bytes(db: str, sid: str) -> bytes:
    """The decoded JSONL of session ``sid``'s cold archive (its blob, or its ``cold/`` file), at
    most :data:`ARCHIVE_MAX` bytes; the last one is kept for reading messages back. Raises
    ``FileNotFoundError`` when it is gone and ``OSError`` when it cannot be read or decoded."""
    cold = _colds(db).get(sid)
    if cold is None:
        raise FileNotFoundError(f"{db}{MEMBER_SEP}{COLD}{sid}")
    key = (db, COLD + sid, cold["archive_sha256"], cold["generation"])
    hit = _BLOB.get("last")
    if hit and hit[0] == key:
        return hit[1]
    if cold["storage"] == "sqlite":
        try:
            rows = _query(db, "SELECT archive_blob FROM session_transcript_cold_archives WHERE session_id=?", (sid,))
        except sqlite3.Error as exc:
            raise OSError(f"cannot read the cold archive of {sid}: {exc}") from exc
        blob = bytes(rows[0]["archive_blob"] or b"") if rows else b""
    else:
        where = archive_file(db, cold["archive_name"])
        if where is None:
            raise OSError(f"cold archive of {sid}: bad name {cold['archive_name']!r}")
        blob = read_file(where)
    data = unzstd(blob, ARCHIVE_MAX, f"the cold archive of {sid}")
    _BLOB["last"] = (key, data)
    return data


def _generation(db: str, sid: str) -> str:
    """A session's ``transcript_rewrite_watermarks.generation`` (rule 8), ``""`` without one."""
    try:
        rows = _query(db, "SELECT generation FROM transcript_rewrite_watermarks WHERE session_id=?", (sid,))
    except sqlite3.DatabaseError:
        return ""
    return str(rows[0]["generation"]) if rows else ""


_BLOB: dict[str, tuple[tuple, bytes]] = {}


def _archive_bytes(db: str, name: str) -> bytes:
    """The JSONL of archive ``name``: its blob, decompressed when its ``encoding`` is ``zstd``
    (at most :data:`ARCHIVE_MAX` bytes); the last one is kept for reading messages back. Raises
    ``FileNotFoundError`` when it is gone and ``OSError`` when it cannot be decoded."""
    arc = _archives(db).get(name)
    if arc is None:
        raise FileNotFoundError(f"{db}{MEMBER_SEP}{ARCHIVE}{name}")
    key = (db, name, arc["sha256"], arc["generation"])
    hit = _BLOB.get("last")
    if hit and hit[0] == key:
        return hit[1]
    try:
        rows = _query(db, "SELECT archive_blob FROM session_transcript_archives WHERE archive_name=?", (name,))
    except sqlite3.Error as exc:
        raise OSError(f"cannot read archive {name}: {exc}") from exc
    if not rows:
        raise FileNotFoundError(name)
    blob = rows[0]["archive_blob"]
    blob = blob.encode("utf-8") if isinstance(blob, str) else bytes(blob or b"")
    if str(arc["encoding"]).lower() in ("zstd", "zst"):
        data = unzstd(blob, ARCHIVE_MAX, f"archive {name}")
    elif str(arc["encoding"]).lower() in ("identity", "", "none", "jsonl"):
        data = blob
    else:
        raise OSError(f"archive {name}: unknown encoding {arc['encoding']!r}")
    _BLOB["last"] = (key, data)
    return data


def _stat_or_none(path: str):
    try:
        return os.stat(path)
    except OSError:
        return None


def _event_text(row: sqlite3.Row) -> str | None:
    """A row's entry text: ``event_json``, else ``event_zstd`` decompressed (None when there is
    no decoder, or the blob is broken, cut short or would decompress to more than
    ``jsonl.MAX_LINE`` bytes, the cap on one line of a JSONL transcript)."""
    keys = row.keys()
    text = row["event_json"] if "event_json" in keys else None
    if isinstance(text, str):
        return text
    blob = row["event_zstd"] if "event_zstd" in keys else None
    zstd = _zstd() if blob is not None else None
    if zstd is None:
        return None
    blob = bytes(blob)
    try:
        # A frame that declares its size is decompressed whole (max_output_size does not apply
        # to it), so a declared size past MAX_LINE is refused first: a few kB must not expand
        # to gigabytes. A frame without a size stops at MAX_LINE; a frame cut short raises.
        if zstd.frame_content_size(blob) > MAX_LINE:
            return None
        raw = zstd.ZstdDecompressor().decompress(blob, max_output_size=MAX_LINE)
    except Exception:  # zstandard.ZstdError and friends: a broken, cut or oversized blob
        return None
    return raw.decode("utf-8", "replace")


def _parse(text: str) -> dict | None:
    try:
        obj = loads(text.encode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _store_meta(db: str, sid: str) -> dict:
    """``{"title", "key"}`` for a store session: ``session_nodes`` (the key whose current
    session this is, and its entry's titles), ``session_windows.display_name``, then the
    ``sessions.json`` beside the store. Missing tables are skipped."""
    meta: dict = {}
    nodes = True
    try:
        rows = _query(db, "SELECT session_key, entry_json FROM session_nodes WHERE current_session_id=?", (sid,))
        if rows:
            meta["key"] = rows[0]["session_key"]
            meta["title"] = _entry_title(_parse(string(rows[0]["entry_json"])) or {})
    except sqlite3.DatabaseError:
        nodes = False
    if not meta.get("title"):
        try:
            rows = _query(db, "SELECT * FROM session_windows WHERE session_id=?", (sid,))
            if rows and "display_name" in rows[0].keys() and string(rows[0]["display_name"]).strip():
                meta["title"] = rows[0]["display_name"].strip()
        except sqlite3.DatabaseError:
            pass
    legacy = _json_store_meta(Path(db).parent.parent / "sessions" / "sessions.json", sid)
    if not meta.get("title") and legacy.get("title"):
        meta["title"] = legacy["title"]
    if not nodes and legacy.get("key"):  # the store's session_nodes, when present, is the truth
        meta["key"] = legacy["key"]
    return meta


_JSON_STORES: dict[str, tuple[tuple[int, int], dict]] = {}


def _json_store_meta(path: Path, sid: str) -> dict:
    """``{"title"?, "key"?}`` from ``sessions.json`` (``sessionKey -> {sessionId, label,
    displayName, subject, ...}``) for the entry whose ``sessionId`` is ``sid``; cached by mtime
    and size; ``{}`` when missing or unreadable."""
    try:
        st = path.stat()
        hit = _JSON_STORES.get(str(path))
        if hit and hit[0] == (st.st_mtime_ns, st.st_size):
            store = hit[1]
        else:
            store = loads(read_file(path))
            store = store if isinstance(store, dict) else {}
            _JSON_STORES[str(path)] = ((st.st_mtime_ns, st.st_size), store)
    except (OSError, ValueError):
        return {}
    for key, entry in store.items():
        if isinstance(entry, dict) and entry.get("sessionId") == sid:
            title = _entry_title(entry)
            return {"key": key, **({"title": title} if title else {})}
    return {}


def _entry_title(entry: dict) -> str | None:
    for k in ("label", "displayName", "subject"):
        if string(entry.get(k)).strip():
            return entry[k].strip()
    return None


SOURCE = OpenClawSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

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
* **A command the person ran** (``!``; ``shell`` in ``packages/opencode/src/session/prompt.ts``,
  the same in opencode-ai 0.5.29, 1.0.61, 1.1.11 and 1.18.33 on npm, sst/opencode 00d0a710e3c9):
  opencode writes a ``user`` message whose one part is the synthetic text
  :data:`USER_SHELL_MARKER`, then an ``assistant`` message (``parentID`` that user message, from
  1.0; ``modelID`` and ``providerID`` ``""`` up to 1.0.x, the session's model from 1.1) with one
  ``bash`` tool part: ``state.input.command`` and ``state.output`` (also ``metadata.output``
  while it runs). That part is ``! command`` as the person's own text (not a prompt: never the
  title) and its output a ``bash-mode`` tool result, as for Claude Code, Codex and Gemini CLI.
  opencode appends stdout and stderr to one ``output`` (``proc.stdout`` and ``proc.stderr``
  up to 1.1.x, ``handle.all`` now), so no part of it can be told to be stderr: it is indexed only
  with tool output on. The marker is found by the parent's id among the last
  :data:`SHELL_PARENTS` marker messages read (state), and by :meth:`OpencodeSource.load` in the
  parent's parts; an empty ``modelID`` and ``providerID`` (0.x, no ``parentID``) suffice alone.
* opencode title: ``session.title``, except opencode's placeholder ``New session - <ISO date>`` /
  ``Child session - <ISO date>``, which falls back to the first user prompt. Summary: the last
  compaction summary. Project: ``session.directory`` (else the first ``path.cwd``). Child sessions:
  ``parentID`` / ``parent_id``.

Current formats, from opencode's own code (anomalyco/opencode, the former sst/opencode;
``packages/opencode/src/session/session.sql.ts`` and ``revert.ts``, ``packages/core/src/session/
sql.ts``, ``message.ts`` at 08e3e1f96710, ``history.ts``):

* **Undo** (rule 12): ``session.revert`` (``{"messageID", "partID"?, "snapshot"?, "diff"?}``, a JSON
  column of the ``session`` row, or the legacy session file's ``revert``) hides what follows the
  revert point until the next prompt deletes it (``SessionRevert.cleanup``): every message whose
  id sorts after ``messageID`` and, of message ``messageID`` itself, every part from ``partID`` on
  (the whole message without a ``partID``). Those messages are an abandoned branch
  (``extra["off_branch"]``), still searchable. The revert point is part of a database session's
  fingerprint, so setting or clearing it re-reads the session whole.
* **Archived** (rule 13): ``session.time_archived`` (legacy: ``time.archived``) set: the session
  is ``archived`` (marked in rows and JSON, still searchable).
* **V2 messages** (rule 14): newer builds also write the ``session_message`` table (``id,
  session_id, type, seq, time_created, time_updated, data``; ``data`` is the message without its
  ``id`` and ``type``, read in ``seq`` order: ``history.ts`` ``decodeMessageRow``). Types: ``user``
  (``text``) -> user prompt, ``assistant`` (``content`` of ``text`` / ``reasoning`` / ``tool``
  with ``state``) -> assistant, thinking, tool calls and results, ``synthetic`` / ``system`` ->
  system, ``shell`` -> ``! command`` and its output, ``compaction`` (``summary``) -> summary;
  ``agent-switched`` / ``model-switched`` yield nothing. A session with such rows is read whole
  at every change (its offset stays 0); a legacy ``message`` that a ``session_message`` row also
  holds (same id, or the same role and creation time: the two tables are projections of the same
  events, and a backfill gives new ids but keeps ``time.created``) is not read twice.
* **Channel stores** (rule 10; opencode-ai 1.18.33 on npm, the bundled ``storage/Database``
  path function): a build of channel ``latest``, ``beta`` or ``prod`` (or with
  ``OPENCODE_DISABLE_CHANNEL_DB``) keeps ``<data>/opencode.db``; any other channel
  ``<data>/opencode-<channel>.db`` (characters outside ``[a-zA-Z0-9._-]`` made ``-``);
  ``OPENCODE_DB`` overrides both (an absolute path, or one relative to ``<data>``; ``:memory:``
  keeps nothing). Every one of them is read; a session found in several (a store copied to
  another channel) is read once, from the store where it was updated last.
* **Queued prompts** (rule 10; ``packages/core/src/session/input.ts`` at 0550cd8e14a9): a prompt
  sent while the session is busy is a ``session_input`` row (``id, session_id, prompt`` JSON
  ``{text, files?, agents?, references?}``, ``delivery`` ``steer``/``queue``, ``admitted_seq``,
  ``promoted_seq``, ``time_created``); promotion sets ``promoted_seq`` and writes the
  ``session_message`` ``user`` row with the same id. A row not yet promoted, whose id no message
  holds, is the user's prompt at the end of the session (read whole while it has one).
* **Drift**: a part type or V2 message type this reader does not know is counted
  (:func:`~crabsearch.sources.base.note_unknown`) and listed by ``crabsearch status``.
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
                   matching, member_path, note_unknown, parse_ts, split_member, string, walk_files)
from .pieces import Piece, abandon, emit, piece_text

PLACEHOLDER_TITLE = re.compile(r"^(New|Child) session - \d{4}-\d{2}-\d{2}T")
"""opencode's default titles (``session/index.ts`` createDefaultTitle), replaced by a first prompt."""
SUMMARY_CAP = 8192
PART_TYPES = frozenset({"text", "reasoning", "tool", "file", "patch", "step-start", "step-finish", "snapshot",
                        "agent", "subtask", "compaction", "retry"})
"""Part types this reader knows (``message-v2.ts``); the ones without text yield nothing."""
V2_TYPES = frozenset({"user", "assistant", "synthetic", "system", "shell", "compaction", "agent-switched",
                      "model-switched"})
"""``session_message`` types this reader knows (``packages/core/src/session/message.ts``)."""
V2_LENGTH = 1
"""The ``length`` stored with a message read from a ``session_message`` row (a part row's is 0)."""
INPUT_LENGTH = 2
"""The ``length`` stored with a prompt read from a ``session_input`` row (rule 10)."""
USER_SHELL_MARKER = "The following tool was executed by the user"
"""The synthetic text of the user message opencode writes before a command the person ran (``!``)."""
SHELL_PARENTS = 4
"""How many ids of :data:`USER_SHELL_MARKER` messages the read state keeps (the command's
assistant message comes right after its marker message)."""
DEFAULT_CHANNELS = ("latest", "beta", "prod")
"""Channels whose builds keep ``opencode.db`` (others: ``opencode-<channel>.db``)."""


class OpencodeSource(Source):
    """opencode: ``opencode.db`` sessions (member paths) and legacy ``storage/`` session files."""

    agent = "opencode"
    order = 60
    env_var = "XDG_DATA_HOME"
    locations = ("`~/.local/share/opencode/opencode.db`, `opencode-<channel>.db` (each session once) and legacy "
                 "`storage/` JSON files")
    reads = ("the newer `session_message` table (each message once); an undo (`revert`) as an abandoned "
             "branch; archived sessions (`time_archived`) marked; child sessions linked; prompts still queued")
    override = "`XDG_DATA_HOME=DIR` (uses `DIR/opencode`), `OPENCODE_DB=FILE`"
    upstream = ("`opencode-ai` 1.18.33; opencode `session.sql.ts`, `message-v2.ts`, "
                "`packages/core/src/session/input.ts` @0550cd8e14a9")
    checked = "2026-12-06: 1.18.33"
    display = "opencode"
    badge = "opencode"
    known_kinds = {"part": PART_TYPES, "session_message": V2_TYPES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``."""
        base = env.get("XDG_DATA_HOME")
        return [(Path(os.path.expanduser(base)) if base else home / ".local" / "share") / "opencode"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """One member path per session of every store (rule 10: ``opencode.db``, each
        ``opencode-<channel>.db``, ``$OPENCODE_DB``; a session in several, once: from the store
        that updated it last; a store that cannot be listed is yielded itself, so the failure is
        counted when it is read), then every legacy session file whose id no store holds."""
        for root in self.roots(env, home):
            newest: dict[str, tuple[int, int, str]] = {}
            for n, db in enumerate(self.stores(root, env)):
                try:
                    listed = _db_stats(db, *_db_key(db))
                except (sqlite3.Error, OSError):
                    yield Path(db)
                    continue
                for sid, (_size, ms) in listed.items():
                    if isinstance(sid, str) and sid and "/" not in sid and (sid not in newest or ms > newest[sid][0]):
                        newest[sid] = (ms, -n, db)
            for sid, (_ms, _n, db) in sorted(newest.items(), key=lambda kv: (-kv[1][1], kv[0])):
                yield Path(member_path(db, sid))
            for path in walk_files(root / "storage" / "session", "*/*.json"):
                if path.stem not in newest:
                    yield path

    def stores(self, root: Path, env: Mapping[str, str]) -> list[str]:
        """The session stores of data directory ``root`` (:func:`stores`: rule 10); a fork that
        names its stores otherwise (Kilo) gives its own names."""
        return stores(root, env)

    # -- units ---------------------------------------------------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        """Database member: (largest part rowid, newest session/message ``time_updated`` in ns,
        else the database's or its WAL's mtime, ctime of the database). Legacy: (bytes of the session's files, newest mtime, ctime
        of the session file). Raises ``OSError`` (``FileNotFoundError`` for a deleted session)."""
        member = _member(path)
        if member is None:
            if _is_store(str(path)):
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
                extra = ""
                if "revert" in _cols(con, "session"):
                    row = con.execute("SELECT revert FROM session WHERE id = ?", (sid,)).fetchone()
                    extra += f"\0revert {row[0] if row else None}"
                if _cols(con, "session_message"):
                    v2 = con.execute("SELECT count(*), max(time_updated) FROM session_message WHERE session_id = ?",
                                     (sid,)).fetchone()
                    extra += f"\0v2 {v2[0]} {v2[1]}" if v2 and v2[0] else ""
                if _cols(con, "session_input"):
                    queued = con.execute("SELECT count(*), max(rowid) FROM session_input WHERE session_id = ? "
                                         "AND promoted_seq IS NULL", (sid,)).fetchone()
                    extra += f"\0queued {queued[0]} {queued[1]}" if queued and queued[0] else ""
        except sqlite3.Error:
            n, extra = "?", ""
        return hashlib.sha1(f"{sid}\0{n}{extra}".encode()).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """``{"info": message, "part": part or None}``: one part row (database; ``offset`` = its
        rowid) or one message file and part file (legacy), with ``"by_user": True`` when the
        part is a command the person ran (its parent message holds :data:`USER_SHELL_MARKER`).
        None when it is gone."""
        member = _member(path)
        if member is None:
            return _legacy_record(Path(path), offset, length)
        try:
            with _connect(member[0]) as con:
                if length == V2_LENGTH:
                    row = con.execute("SELECT id, type, data FROM session_message WHERE rowid = ?", (offset,)).fetchone()
                    return {"v2": _v2(*row)} if row else None
                if length == INPUT_LENGTH:
                    row = con.execute("SELECT id, prompt, time_created FROM session_input WHERE rowid = ?",
                                      (offset,)).fetchone()
                    return {"v2": _input(*row)} if row else None
                row = con.execute("SELECT p.data, m.data FROM part p JOIN message m ON m.id = p.message_id "
                                  "WHERE p.rowid = ?", (offset,)).fetchone()
                if not row:
                    return None
                obj = {"info": _json(row[1]), "part": _json(row[0])}
                parent = _shell_parent(obj)
                if parent:
                    parts = con.execute("SELECT data FROM part WHERE message_id = ?", (parent,)).fetchall()
                    obj["by_user"] = any(_is_marker(_json(d)) for (d,) in parts)
        except (sqlite3.Error, OSError):
            return None
        return obj

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
        if member is None and _is_store(str(path)):
            os.stat(path)
            stats.skip("unreadable database")
            records, meta = [], {}
        elif member is None:
            records, meta = _legacy_records(path, stats)
        else:
            records, meta, whole = _db_records(*member, start, stats)
            if whole and start:  # V2 rows: the session was read whole (rule 14), from a fresh state
                start = stats.end_offset = 0
                state = {"session": Session(agent=self.agent, session_id=member[1], path=str(path)).to_state(),
                         "next_index": 0}
            if whole:
                member = None  # as for a legacy session: its offset stays 0, every change reads it whole
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
        if "v2" in rec.obj:
            self._take_v2(rec, state, session, out)
            return
        info, part = rec.obj["info"], rec.obj["part"]
        if isinstance(part, dict) and (not isinstance(part.get("type"), str) or part["type"] not in PART_TYPES):
            note_unknown(state, part.get("type"))
        _note_user_shell(rec.obj, state)
        pieces = pieces_of(rec.obj)
        start = state["next_index"]
        if info.get("role") == "assistant" and info.get("summary") is True or (part or {}).get("type") == "compaction":
            text = "\n".join(p.text for p in pieces if p.role is Role.SUMMARY)
            state["summary"] = capped(text, SUMMARY_CAP) if text else state.get("summary")
        cwd = string((info.get("path") or {}).get("cwd")) if isinstance(info.get("path"), dict) else ""
        if cwd and not state.get("cwd"):
            state["cwd"] = cwd
        ts = _part_time(part) or parse_ts((info.get("time") or {}).get("created")
                                          if isinstance(info.get("time"), dict) else None)
        session.touch(ts)
        base = len(out)
        emit(pieces, rec, state, out, ts)
        if len(out) > base and _reverted(state.get("revert"), rec.obj.get("mid") or string(info.get("id")),
                                         rec.obj.get("pid") or string((part or {}).get("id"))):
            abandon(state, start, start + len(out) - base, keep=256)

    def _take_v2(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """A ``session_message`` row (rule 14)."""
        m = rec.obj["v2"]
        if not isinstance(m.get("type"), str) or m["type"] not in V2_TYPES:
            note_unknown(state, m.get("type"))
        pieces = pieces_of(rec.obj)
        for p in pieces:
            if p.role is Role.SUMMARY:
                state["summary"] = capped(p.text, SUMMARY_CAP)
        t = m.get("time") if isinstance(m.get("time"), dict) else {}
        ts = parse_ts(t.get("created"))
        session.touch(ts)
        start, base = state["next_index"], len(out)
        emit(pieces, rec, state, out, ts)
        revert = state.get("revert")
        if len(out) > base and revert:
            # the revert point found by id, then compared by seq (V2's order); else by id
            seq, rseq = rec.obj.get("seq"), state.get("revert_seq")
            if isinstance(seq, int) and isinstance(rseq, int):
                hidden = seq > rseq or (seq == rseq and not revert[1])
            else:
                hidden = _reverted(revert, string(m.get("id")), "")
            if hidden:
                abandon(state, start, start + len(out) - base, keep=256)

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
        session.archived = bool(state.get("archived"))
        if state.get("off"):
            session.extra["off_branch"] = [list(r) for r in state["off"]]

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <dir> && opencode <dir> --session <id>`` (formats.md 6)."""
        argv = ["opencode"] + ([session.project] if session.project else []) + ["--session", session.session_id]
        return cd_and(session.project, argv)


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one record ``{"info": message, "part": part or None, "by_user"?: bool}``
    (``by_user``: its message answers a :data:`USER_SHELL_MARKER` message), or of one
    ``session_message`` row ``{"v2": message}`` (rule 14)."""
    if isinstance(obj.get("v2"), dict):
        return _v2_pieces(obj["v2"])
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
    if kind == "tool" and role == "assistant" and user_ran(info, part, bool(obj.get("by_user"))):
        return user_shell_command(part)
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


def user_ran(info: dict, part: dict, parent_marked: bool) -> bool:
    """True when ``bash`` tool part ``part`` of assistant message ``info`` is a command the
    person ran (``!``): its parent message holds :data:`USER_SHELL_MARKER` (``parent_marked``),
    or the message has opencode's empty ``modelID`` and ``providerID`` (0.x to 1.0.x)."""
    if part.get("tool") != "bash":
        return False
    return parent_marked or (info.get("modelID") == "" and info.get("providerID") == "")


def user_shell_command(part: dict) -> list[Piece]:
    """``! command`` as the person's own text, then its output (stdout and stderr in one stream:
    ``state.output``, else ``metadata.output`` of a run cut short) a ``bash-mode`` tool result."""
    st = part.get("state") if isinstance(part.get("state"), dict) else {}
    inp = st.get("input") if isinstance(st.get("input"), dict) else {}
    meta = st.get("metadata") if isinstance(st.get("metadata"), dict) else {}
    command = string(inp.get("command")).strip()
    output = (string(st.get("output")) or string(meta.get("output"))).strip()
    return ([Piece(Role.USER, LABEL_USER, "! " + command)] if command else []) + (
        [Piece(Role.TOOL, tool_result_label("bash-mode"), output, "bash-mode")] if output else [])


def _is_marker(part) -> bool:
    """True for the synthetic text part :data:`USER_SHELL_MARKER`."""
    return isinstance(part, dict) and part.get("type") == "text" and part.get("text") == USER_SHELL_MARKER


def _shell_parent(obj: dict) -> str:
    """The ``parentID`` to look up for record ``obj`` when it is a ``bash`` tool part of an
    assistant message (is that parent a :data:`USER_SHELL_MARKER` message?), else ``""``."""
    info, part = obj.get("info"), obj.get("part")
    if not isinstance(info, dict) or not isinstance(part, dict) or info.get("role") != "assistant":
        return ""
    return string(info.get("parentID")) if part.get("type") == "tool" and part.get("tool") == "bash" else ""


def _note_user_shell(obj: dict, state: dict) -> None:
    """Keep the ids of the last :data:`SHELL_PARENTS` marker messages in ``state``; mark record
    ``obj`` ``by_user`` when it is a ``bash`` tool part answering one of them."""
    info = obj.get("info") if isinstance(obj.get("info"), dict) else {}
    if info.get("role") == "user" and _is_marker(obj.get("part")):
        mid = obj.get("mid") or string(info.get("id"))
        parents = [p for p in state.get("shell_parents", []) if p != mid] + [mid]
        state["shell_parents"] = parents[-SHELL_PARENTS:]
    parent = _shell_parent(obj)
    if parent and parent in state.get("shell_parents", ()):
        obj["by_user"] = True


def _v2_pieces(m: dict) -> list[Piece]:
    """The pieces of a V2 ``session_message`` (``packages/core/src/session/message.ts``)."""
    kind, text = m.get("type"), string(m.get("text"))
    if kind == "user":
        return [Piece(Role.USER, LABEL_USER, text, prompt=True)] if text.strip() else []
    if kind in ("synthetic", "system"):
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
    if kind == "shell":
        command = string(m.get("command"))
        out = [Piece(Role.USER, LABEL_USER, "! " + command)] if command.strip() else []
        if string(m.get("output")):
            out.append(Piece(Role.TOOL, tool_result_label("bash-mode"), m["output"], "bash-mode"))
        return out
    if kind == "compaction":
        summary = string(m.get("summary"))
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, summary)] if summary.strip() else []
    if kind != "assistant" or not isinstance(m.get("content"), list):
        return []
    out: list[Piece] = []
    for c in m["content"]:
        if not isinstance(c, dict):
            continue
        ctype, ctext = c.get("type"), string(c.get("text"))
        if ctype == "text" and ctext.strip():
            synthetic = c.get("synthetic") or c.get("ignored")
            out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, ctext) if synthetic else Piece(Role.ASSISTANT, LABEL_ASSISTANT, ctext))
        elif ctype == "reasoning" and ctext.strip():
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, ctext))
        elif ctype == "tool":
            name = string(c.get("name")) or "unknown"
            st = c.get("state") if isinstance(c.get("state"), dict) else {}
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(st.get("input")), name))
            if st.get("status") in ("completed", "error"):
                texts = [string(x.get("text")) for x in st.get("content") or [] if isinstance(x, dict)]
                err = st.get("error")
                if st.get("status") == "error" and isinstance(err, dict) and string(err.get("message")):
                    texts.append(err["message"])
                out.append(Piece(Role.TOOL, tool_result_label(name), "\n".join(t for t in texts if t), name))
    return out


def _input(mid, prompt, created) -> dict:
    """A ``session_input`` row as the V2 ``user`` message its promotion writes
    (``SessionInput.toMessage``: ``text`` of its prompt, ``time.created``)."""
    body = _json(prompt) or {}
    return {"id": mid, "type": "user", "text": string(body.get("text")), "time": {"created": created}}


def _v2(mid, kind, data) -> dict:
    """A ``session_message`` row as the message it decodes to: ``data`` with ``id`` and ``type``."""
    body = _json(data) or {}
    return {**body, "id": mid, "type": kind}


def _reverted(revert, mid: str, pid: str) -> bool:
    """True when message ``mid`` (part ``pid``) lies past the revert point ``[messageID, partID]``
    (``SessionRevert.cleanup``: ids sort in creation order)."""
    if not revert or not mid:
        return False
    rmid, rpid = revert
    if mid != rmid:
        return mid > rmid
    return not rpid or (bool(pid) and pid >= rpid)


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
    archived = t.get("archived", meta.get("time_archived"))
    state["archived"] = archived is True or (isinstance(archived, (int, float)) and not isinstance(archived, bool)
                                             and archived > 0)
    revert = meta.get("revert")
    if isinstance(revert, str):
        revert = _json(revert)
    if isinstance(revert, dict) and string(revert.get("messageID")):
        state["revert"] = [revert["messageID"], string(revert.get("partID")) or None]
        if isinstance(meta.get("revert_seq"), int):
            state["revert_seq"] = meta["revert_seq"]
    else:
        state.pop("revert", None)
        state.pop("revert_seq", None)


def _json(raw) -> dict | None:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    try:
        obj = loads(raw) if isinstance(raw, bytes) else None
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


# -- SQLite ------------------------------------------------------------------------------------


def stores(root: Path, env: Mapping[str, str], db_env: str = "OPENCODE_DB",
           names: tuple[str, ...] = ("opencode.db", "opencode-*.db")) -> list[str]:
    """The session stores of data directory ``root`` (rule 10): ``$OPENCODE_DB`` (``db_env``:
    absolute, or relative to ``root``; not ``:memory:``), ``opencode.db`` (``names[0]``), then
    ``opencode-<channel>.db`` (``names[1:]``, patterns) by name; each real file once."""
    found: list[str] = []
    named = env.get(db_env) or ""
    if named and named != ":memory:":
        found.append(str(Path(os.path.expanduser(named)) if os.path.isabs(os.path.expanduser(named)) else root / named))
    found.append(str(root / names[0]))
    top = list(walk_files(root, "*", prune=lambda _name: True))  # the stores lie in root itself
    for pattern in names[1:]:
        found += [str(p) for p in matching(top, root, pattern)]
    out, seen = [], set()
    for db in found:
        real = os.path.realpath(db)
        if real not in seen and os.path.isfile(db):
            seen.add(real)
            out.append(db)
    return out


def _is_store(path: str) -> bool:
    """True for a session store (an ``opencode*.db``, or an ``$OPENCODE_DB`` of any name: a file
    that is no legacy ``.json``)."""
    return path.endswith(".db") or (not path.endswith(".json") and os.path.isfile(path))


def _member(path: str) -> tuple[str, str] | None:
    """``(db, session_id)`` of a database member path; None for a plain file."""
    try:
        db, sid = split_member(str(path))
    except ValueError:
        return None
    return (db, sid) if "/" not in sid and not db.endswith(".json") and _is_store(db) else None


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
    """session id -> (largest part rowid, plus the largest ``session_message`` rowid when it has
    such rows; newest ``time_updated`` of the session row, its messages and its
    ``session_message`` rows in ms, or 0), in a few grouped queries per database version (``_key``:
    the database's and its WAL's mtime and size). Parts' own ``time_updated`` is not used: a part
    changing in place belongs to a running message, re-read when that message's row changes."""
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
                                 ("session", "SELECT id, time_updated FROM session"),
                                 ("session_message", "SELECT session_id, max(time_updated) FROM session_message "
                                                     "GROUP BY session_id")):
                if "time_updated" in _cols(con, table):
                    for sid, ms in con.execute(query):
                        if sid in out and isinstance(ms, (int, float)):
                            out[sid] = (out[sid][0], max(out[sid][1], int(ms)))
            for table in ("session_message", "session_input"):  # V2 rows and queued prompts grow the
                if not _cols(con, table):                       # "size" too (rules 14 and 10)
                    continue
                when = "time_updated" if table == "session_message" else "time_created"
                for sid, size, ms in con.execute(f"SELECT session_id, max(rowid), max({when}) FROM {table} "
                                                 "GROUP BY session_id"):
                    if sid in out and isinstance(size, int):
                        ms = int(ms) if isinstance(ms, (int, float)) else 0
                        out[sid] = (out[sid][0] + size, max(out[sid][1], ms))
        except sqlite3.Error:
            pass
    return out


def _cols(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def _db_records(db: str, sid: str, start: int, stats: LineStats):
    """(records with their settled flag and place, session row as a dict, whole?) of parts after
    rowid ``start``; with ``session_message`` rows (rule 14), every part of a message those rows
    do not hold and then those rows, and ``whole`` True (the session is read whole)."""
    os.stat(db)  # a missing database is an OSError, not a counted error
    meta, records, v2 = {}, [], []
    try:
        with _connect(db) as con:
            con.row_factory = sqlite3.Row
            row = con.execute("SELECT * FROM session WHERE id = ?", (sid,)).fetchone()
            meta = dict(row) if row else {}
            if _cols(con, "session_message"):
                v2 = con.execute("SELECT rowid, id, type, seq, data FROM session_message WHERE session_id = ? "
                                 "ORDER BY seq, rowid", (sid,)).fetchall()
            queued = []
            if _cols(con, "session_input"):
                queued = con.execute("SELECT rowid, id, prompt, time_created FROM session_input WHERE session_id = ? "
                                     "AND promoted_seq IS NULL ORDER BY admitted_seq, rowid", (sid,)).fetchall()
            if v2 or queued:
                start = 0
            rows = con.execute("SELECT p.rowid, p.data, m.data, m.id, p.id FROM part p JOIN message m "
                               "ON m.id = p.message_id WHERE m.session_id = ? AND p.rowid > ? ORDER BY p.rowid",
                               (sid, start)).fetchall()
    except sqlite3.Error as exc:
        stats.skip(f"database error: {exc}")
        return [], meta, False
    held_ids, held_times, v2_records, marked = set(), set(), [], set()
    revert = _json(meta.get("revert")) if isinstance(meta.get("revert"), str) else None
    for rowid, mid, kind, seq, data in v2:
        m = _v2(mid, kind, data)
        if not _json(data):
            stats.skip("broken JSON", f"session_message row {rowid}")
        held_ids.add(mid)
        created = (m.get("time") or {}).get("created") if isinstance(m.get("time"), dict) else None
        if kind in ("user", "assistant") and isinstance(created, (int, float)):
            held_times.add((kind, int(created)))
        if isinstance(revert, dict) and mid == revert.get("messageID") and isinstance(seq, int):
            meta["revert_seq"] = seq
        v2_records.append((Record({"v2": m, "seq": seq}, rowid, V2_LENGTH), True, f"session_message row {rowid}"))
    for rowid, pdata, mdata, mid, pid in rows:
        info, part = _json(mdata), _json(pdata)
        if info is None or part is None:
            stats.skip("broken JSON", f"part row {rowid}")
            records.append((Record({"info": {}, "part": None}, rowid, 0), True, f"part row {rowid}"))
            continue
        created = (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
        if v2 and (mid in held_ids or isinstance(created, (int, float))
                   and (info.get("role"), int(created)) in held_times):
            if info.get("role") == "user" and _is_marker(part):
                marked.add(mid)  # its command's message may still be read here (load finds it too)
            continue  # the same message, projected into session_message too
        settled = _settled(info, part) or bool(v2)
        obj = {"info": info, "part": part, "mid": mid, "pid": pid}
        if _shell_parent(obj) in marked:
            obj["by_user"] = True
        records.append((Record(obj, rowid, 0), settled, f"part row {rowid}"))
    known = held_ids | {r[3] for r in rows}
    inputs = [(Record({"v2": _input(mid, prompt, created)}, rowid, INPUT_LENGTH), True, f"session_input row {rowid}")
              for rowid, mid, prompt, created in queued if mid not in known]
    return records + v2_records + inputs, meta, bool(v2 or inputs)


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
    if part is None:
        return None
    obj = {"info": info, "part": part}
    parent = _shell_parent(obj)
    if parent and "/" not in parent and parent not in (".", ".."):
        obj["by_user"] = any(_is_marker(_read_json(f)) for f in _json_files(part_dir / parent))
    return obj


SOURCE = OpencodeSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

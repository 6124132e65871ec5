"""Goose (block/goose) sessions: the SQLite store ``<data>/sessions/sessions.db`` and the legacy
``<data>/sessions/<id>.jsonl`` files (Goose < 1.10).

Rules come from Goose's own code (block/goose at 865e4a030a67): ``crates/goose/src/session/
storage.rs`` (schema, ``add_message``, ``replace_conversation``), ``session/migrations.rs``
(schema version 13), ``session/legacy.rs``, ``conversation/message/{mod,content_types,
tool_types}.rs``, ``conversation/tool_result_serde.rs``, ``context_mgmt/mod.rs`` (compaction)
and ``config/paths.rs`` (0780e228ca96); resume from the CLI guide (``goose-cli-commands.md``).

* **Where**: ``Paths::data_dir()``: ``$GOOSE_PATH_ROOT/data`` (an absolute path), else etcetera's
  ``choose_app_strategy``: ``$XDG_DATA_HOME/goose`` or ``~/.local/share/goose`` on Linux and macOS,
  ``%APPDATA%\\Block\\goose\\data`` on Windows.
* **Store**: ``sessions(id, name, description, working_dir, created_at, updated_at, session_type,
  archived_at, ...)`` and ``messages(id INTEGER PRIMARY KEY, message_id, session_id, role,
  content_json, created_timestamp (s), metadata_json)``, read through
  :class:`~crabsearch.sources.sqlstore.StoreSource`: one unit per session with messages
  (``hidden`` sessions are Goose's own and are not read), new message rows read by rowid.
  ``replace_conversation`` (a compaction, an edit) deletes every row and inserts new ones: the
  session is read again whole (its first rowid is in the fingerprint).
* **Messages**: ``content_json`` is a list of blocks tagged by ``type``: ``text`` (user -> prompt,
  assistant -> assistant), ``thinking`` (and the legacy ``reasoning``) -> thinking,
  ``toolRequest`` / ``frontendToolRequest`` (``toolCall: {status: success, value: {name,
  arguments}}`` or ``{status: error, error}``) -> ``tool-call:<name>``, ``toolResponse``
  (``toolResult.value.content[]`` text items, the legacy ``value`` list, or ``error``) -> the
  tool result paired by ``id``, ``systemNotification`` (``msg``) and ``actionRequired``
  elicitations (``data.message``) and the legacy ``conversationCompacted`` (``msg``) -> system;
  ``image``, ``redactedThinking`` and ``toolConfirmationRequest`` yield nothing.
* **Visibility** (``metadata_json`` ``{userVisible, agentVisible}``): a message visible to
  neither is a copy Goose keeps after compacting (not read); one for the agent only is what a
  compaction wrote: a user-role text is the compaction summary (``summary``, the session's
  summary and a compaction point), an assistant-role text the continuation notice (system).
* **Session**: title ``name`` (legacy: ``description``), else the first prompt; project
  ``working_dir``; ``archived_at`` -> archived. Legacy files: line 1 is the metadata
  (``description``, ``working_dir``), every other line a message as above (``created`` in s); a
  legacy file whose id the store holds was imported by Goose and is not read again.
* **Resume**: ``cd <working_dir> && goose session --resume --session-id <id>``; a legacy file,
  ``goose session --resume --name <id>`` (the CLI of that Goose).
* **Drift**: a block type or role this reader does not know is counted and listed by ``status``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message,
                     Role, Session, tool_call_label)
from .base import bad_field, capped, cd_and, dump_text, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, note_summaries, piece_text
from .sqlstore import StoreSource, epoch_ms, json_of, known, note_unknown_types, table_columns, unique_files

BLOCK_TYPES = frozenset({"text", "image", "toolRequest", "toolResponse", "toolConfirmationRequest",
                         "actionRequired", "frontendToolRequest", "thinking", "redactedThinking",
                         "systemNotification", "reasoning", "conversationCompacted"})
"""Content block types this reader knows (``MessageContent``, plus the legacy ``reasoning`` and
``conversationCompacted`` that Goose still migrates on load)."""
ROLES = frozenset({"user", "assistant"})
SUMMARY_CAP = 8192
DB_NAME = "sessions.db"


class GooseSource(StoreSource):
    """Goose: ``sessions.db`` sessions (member paths) and legacy ``*.jsonl`` session files."""

    agent = "goose"
    order = 250
    display = "Goose"
    badge = "Goose"
    env_var = "GOOSE_PATH_ROOT"
    style = "bold black on gold3"
    locations = ("`~/.local/share/goose/sessions/sessions.db` (`%APPDATA%\\Block\\goose\\data` on Windows) and "
                 "legacy `sessions/*.jsonl`")
    reads = ("compaction summaries (labelled, the session summary); thinking; tool calls and results paired; "
             "archived sessions marked; legacy JSONL sessions Goose has not imported")
    override = "`GOOSE_PATH_ROOT=DIR` (uses `DIR/data`), `XDG_DATA_HOME`"
    upstream = ("block/goose `crates/goose/src/session/storage.rs`, `migrations.rs` (schema 13), `legacy.rs`, "
                "`conversation/message/*.rs` @865e4a030a67")
    checked = "2026-12-06: block/goose 865e4a030a67 (schema 13)"
    known_kinds = {"block": BLOCK_TYPES, "role": ROLES}
    rows_table = "messages"
    store_names = (DB_NAME,)

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Goose's data directory (module docstring), plus the Windows one when ``APPDATA`` is set."""
        root = env.get("GOOSE_PATH_ROOT") or ""
        if root and os.path.isabs(os.path.expanduser(root)):
            return [Path(os.path.expanduser(root)) / "data"]
        base = env.get("XDG_DATA_HOME")
        out = [(Path(os.path.expanduser(base)) if base else home / ".local" / "share") / "goose"]
        if env.get("APPDATA"):
            out.append(Path(env["APPDATA"]) / "Block" / "goose" / "data")
        return out

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return unique_files(r / "sessions" / DB_NAME for r in self.roots(env, home))

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Every store session, then the legacy ``sessions/*.jsonl`` files whose id no store holds."""
        held = set()
        for unit in self.store_units(env, home):
            held.add(str(unit).rpartition("#")[2])
            yield unit
        for root in self.roots(env, home):
            for path in walk_files(root / "sessions", "*.jsonl"):
                if path.stem not in held:
                    yield path

    # -- the store -------------------------------------------------------------------------------

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """Sessions with messages (not ``hidden``): their largest message rowid and ``updated_at``."""
        cols = table_columns(con, "sessions")
        hidden = "WHERE session_type != 'hidden'" if "session_type" in cols else ""
        updated = {sid: epoch_ms(when) for sid, when in con.execute(f"SELECT id, updated_at FROM sessions {hidden}")}
        out = {}
        for sid, size in con.execute("SELECT session_id, max(rowid) FROM messages GROUP BY session_id"):
            if sid in updated and isinstance(size, int):
                out[sid] = (size, updated[sid])
        return out

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        con.row_factory = sqlite3.Row
        row = con.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
        con.row_factory = None
        return dict(row) if row else {}

    def record(self, row: dict) -> dict | None:
        """A ``messages`` row as Goose's serialized ``Message`` (``content`` list, ``created``)."""
        content = json_of(row.get("content_json"))
        if not isinstance(content, list):
            return None
        meta = json_of(row.get("metadata_json"))
        return {"id": row.get("message_id"), "role": row.get("role"), "created": row.get("created_timestamp"),
                "content": content, "metadata": meta if isinstance(meta, dict) else {}}

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        """A ``sessions`` row, or a legacy file's first line."""
        if not meta:
            return
        title = string(meta.get("name")).strip() or string(meta.get("description")).strip()
        state["title"] = capped(title, 200) if title else None
        state["cwd"] = string(meta.get("working_dir")) or None
        state["archived"] = bool(meta.get("archived_at"))
        session.touch(parse_ts(meta.get("created_at")))
        session.touch(parse_ts(meta.get("updated_at")))

    # -- records -----------------------------------------------------------------------------------

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One message (a store row or a legacy line), or a legacy file's metadata line."""
        obj = rec.obj
        if "role" not in obj and rec.offset == 0:  # a legacy file's metadata line
            self.apply_meta(obj, state, session)
            return
        if not known(obj.get("role"), ROLES):
            note_unknown(state, obj.get("role"))
            return
        if not isinstance(obj.get("content"), list):
            raise bad_field(obj, "content", "a list")
        note_unknown_types(state, obj["content"], BLOCK_TYPES)
        ts = parse_ts(obj.get("created"))
        session.touch(ts)
        pieces = pieces_of(obj)
        note_summaries(pieces, state, session, SUMMARY_CAP)
        emit(pieces, rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        """Title ``name`` > first prompt; project ``working_dir``; summary the last compaction's."""
        session.title = state.get("title") or state.get("first_prompt") or None
        session.project = state.get("cwd") or None
        session.summary = state.get("summary") or None
        session.anchor_index = state.get("anchor", 0)
        session.archived = bool(state.get("archived"))

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <dir> && goose session --resume --session-id <id>``; legacy files ``--name <id>``."""
        if session.path.endswith(".jsonl"):
            return cd_and(session.project, ["goose", "session", "--resume", "--name", session.session_id])
        return cd_and(session.project, ["goose", "session", "--resume", "--session-id", session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one Goose message (module docstring)."""
    role, content = obj.get("role"), obj.get("content")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    user_visible, agent_visible = meta.get("userVisible") is not False, meta.get("agentVisible") is not False
    if not known(role, ROLES) or not isinstance(content, list) or not (user_visible or agent_visible):
        return []
    out: list[Piece] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = string(block.get("text"))
            if not text.strip():
                continue
            if not user_visible:  # written by a compaction, for the agent only
                out.append(Piece(Role.SUMMARY, LABEL_SUMMARY, text) if role == "user"
                           else Piece(Role.SYSTEM, LABEL_SYSTEM, text))
            elif role == "user":
                out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
            else:
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
        elif kind in ("thinking", "reasoning"):
            text = string(block.get("thinking")) or string(block.get("text"))
            if text.strip():
                out.append(Piece(Role.ASSISTANT, LABEL_THINKING, text))
        elif kind in ("toolRequest", "frontendToolRequest"):
            call = block.get("toolCall") if isinstance(block.get("toolCall"), dict) else {}
            value = call.get("value") if isinstance(call.get("value"), dict) else {}
            name = string(value.get("name")) or "unknown"
            text = dump_text(value.get("arguments")) if call.get("status") != "error" else dump_text(call.get("error"))
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), text, name, call_id=string(block.get("id")) or None))
        elif kind == "toolResponse":
            out.append(Piece(Role.TOOL, None, _result_text(block.get("toolResult")),
                             call_id=string(block.get("id")) or None))
        elif kind in ("systemNotification", "conversationCompacted"):
            text = string(block.get("msg"))
            if text.strip():
                out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, text))
        elif kind == "actionRequired":
            data = block.get("data") if isinstance(block.get("data"), dict) else {}
            text = string(data.get("message"))
            if data.get("actionType") == "elicitation" and text.strip():
                out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, text))
    return out


def _result_text(result) -> str:
    """A ``toolResult`` (``tool_result_serde``): its text content items, or its error."""
    if not isinstance(result, dict):
        return dump_text(result)
    if result.get("status") == "error":
        return dump_text(result.get("error"))
    value = result.get("value")
    items = value.get("content") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return dump_text(items)
    texts = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif isinstance(item.get("resource"), dict) and isinstance(item["resource"].get("text"), str):
            texts.append(item["resource"]["text"])
    return "\n".join(texts)


SOURCE = GooseSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

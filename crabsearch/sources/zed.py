"""Zed's agent threads: ``<data>/threads/threads.db``.

Rules come from Zed's own code (zed-industries/zed): ``crates/agent/src/db.rs`` at 0642ec7e49e2
(the ``threads`` table, ``DbThread`` 0.3.0, zstd), ``crates/agent/src/thread.rs`` (``Message``,
``UserMessageContent``, ``AgentMessageContent``), ``crates/agent/src/legacy_thread.rs`` at
4410b97021c7 (the first agent's ``SerializedThread`` 0.1.0 / 0.2.0 and unversioned threads),
``crates/language_model`` (``LanguageModelToolResultContent``'s accepted shapes) and
``crates/paths/src/paths.rs`` (the data directory); agentsview's ``internal/parser/zed.go`` reads
the same table.

* **Where**: Zed's data directory: ``$FLATPAK_XDG_DATA_HOME/zed``, else ``$XDG_DATA_HOME/zed`` or
  ``~/.local/share/zed`` on Linux, ``~/Library/Application Support/Zed`` on macOS,
  ``%LOCALAPPDATA%\\Zed`` on Windows; Zed has no variable of its own for it
  (``--user-data-dir`` is a flag): ``CRABSEARCH_ZED_DIR`` names such a directory.
* **Store**: ``threads(id, summary, updated_at, data_type, data, parent_id, folder_paths,
  folder_paths_order, created_at)``; ``data`` is the thread's JSON, ``data_type`` ``zstd``
  (compressed, what Zed writes) or ``json``. Each thread is a unit, read whole at every change
  (:class:`~crabsearch.sources.sqlstore.StoreSource` with ``incremental = False``: Zed rewrites
  the whole document); its size is ``length(data)``, its mtime ``updated_at``. A message's offset
  is its position in ``messages``.
* **Messages** (0.3.0): ``{"User": {"id", "content": [{"Text": s} | {"Mention": {"uri",
  "content"}} | {"Image": ...}]}}`` -> the user prompt (its ``Text`` items; a mention's expanded
  file content is context, not read); ``{"Agent": {"content": [{"Text": s} | {"Thinking":
  {"text"}} | {"RedactedThinking": s} | {"ToolUse": {"id", "name", "input", "raw_input"}}],
  "tool_results": {id: {"tool_use_id", "tool_name", "is_error", "content", "output"}}}}`` ->
  assistant, thinking, ``tool-call:<name>`` and the results (``content`` as a string, ``{"Text":
  s}``, ``{"type": "text", "text": s}`` or a list of them; else ``output``); ``"Resume"`` (a
  resumed turn) yields nothing.
* **Older threads** (before 0.3.0, which Zed upgrades on load): ``{"id", "role", "segments":
  [{"type": "text" | "thinking", "text"} | {"type": "RedactedThinking"}], "tool_uses": [{"id",
  "name", "input"}], "tool_results": [...], "is_hidden"}`` (unversioned: ``"text"`` instead of
  ``segments``); a hidden or ``system`` message is read as system.
* **Thread**: title ``summary`` (the ``data`` ``title``), else the first prompt; summary
  ``detailed_summary`` (older: ``detailed_summary_state.Generated.text``); project the first of
  ``folder_paths`` (newline-separated); a sub-agent thread has ``parent_id`` (its
  ``subagent_context.parent_thread_id``): linked to its parent.
* **Resume**: none from a shell; a thread is reopened from the agent panel's history in Zed.
* **Drift**: a message or content kind this reader does not know is counted and listed by
  ``status``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Iterable, Mapping

from ..jsonl import Record, loads
from ..model import (LABEL_ASSISTANT, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label)
from .base import capped, dump_text, note_unknown, parse_ts, string, unzstd
from .pieces import Piece, emit, piece_text
from .sqlstore import DocCache, StoreSource, epoch_ms, known, note_unknown_types, table_columns, unique_files

MESSAGE_KINDS = frozenset({"User", "Agent", "Resume"})
USER_KINDS = frozenset({"Text", "Mention", "Image"})
AGENT_KINDS = frozenset({"Text", "Thinking", "RedactedThinking", "ToolUse"})
SEGMENT_KINDS = frozenset({"text", "thinking", "RedactedThinking"})
LEGACY_ROLES = frozenset({"user", "assistant", "system"})
DB_NAME = "threads.db"
THREAD_LIMIT = 512 << 20
"""Bytes a thread's document may decompress to (a larger one is skipped and counted)."""
SUMMARY_CAP = 8192


class ZedSource(StoreSource):
    """Zed: the agent panel's threads in ``threads.db`` (member paths)."""

    agent = "zed"
    order = 270
    display = "Zed"
    badge = "Zed"
    env_var = "CRABSEARCH_ZED_DIR"
    style = "bold white on dark_cyan"
    locations = ("`~/.local/share/zed/threads/threads.db` (`~/Library/Application Support/Zed/...` on macOS, "
                 "`%LOCALAPPDATA%\\Zed\\...` on Windows)")
    reads = ("zstd-compressed threads, the current and the older formats; thinking; tool calls and results "
             "paired; the thread's detailed summary; sub-agent threads linked to their parent")
    override = "`CRABSEARCH_ZED_DIR=DIR` (Zed's data directory), `XDG_DATA_HOME`, `FLATPAK_XDG_DATA_HOME`"
    upstream = ("zed-industries/zed `crates/agent/src/db.rs` @0642ec7e49e2, `thread.rs`, `legacy_thread.rs` "
                "@4410b97021c7; agentsview `internal/parser/zed.go` @538600744d1b")
    checked = "2026-12-06: zed db.rs 0642ec7e49e2 (DbThread 0.3.0)"
    resume_doc = "in Zed (agent panel history)"
    known_kinds = {"message": MESSAGE_KINDS, "content": USER_KINDS | AGENT_KINDS, "segment": SEGMENT_KINDS}
    incremental = False
    store_names = (DB_NAME,)

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_ZED_DIR`` alone when set; else Zed's data directory on Linux, macOS and
        Windows (module docstring)."""
        if env.get("CRABSEARCH_ZED_DIR"):
            return [Path(os.path.expanduser(env["CRABSEARCH_ZED_DIR"]))]
        base = env.get("FLATPAK_XDG_DATA_HOME") or env.get("XDG_DATA_HOME")
        out = [(Path(os.path.expanduser(base)) if base else home / ".local" / "share") / "zed",
               home / "Library" / "Application Support" / "Zed"]
        if env.get("LOCALAPPDATA"):
            out.append(Path(env["LOCALAPPDATA"]) / "Zed")
        return out

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return unique_files(r / "threads" / DB_NAME for r in self.roots(env, home))

    # -- the store -------------------------------------------------------------------------------

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """Every thread: ``length(data)`` and ``updated_at``."""
        return {tid: (size if isinstance(size, int) else 0, epoch_ms(when))
                for tid, when, size in con.execute("SELECT id, updated_at, length(data) FROM threads")}

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        """The thread's row (without ``data``) and what its document says of it."""
        cols = [c for c in ("summary", "updated_at", "created_at", "parent_id", "folder_paths")
                if c in table_columns(con, "threads")]
        row = con.execute(f"SELECT {', '.join(cols)} FROM threads WHERE id = ?", (sid,)).fetchone()
        meta = dict(zip(cols, row)) if row else {}
        doc = self.document(con, sid)
        if isinstance(doc, dict):
            summary = doc.get("detailed_summary")
            state = doc.get("detailed_summary_state")
            if summary is None and isinstance(state, dict) and isinstance(state.get("Generated"), dict):
                summary = state["Generated"].get("text")
            context = doc.get("subagent_context") if isinstance(doc.get("subagent_context"), dict) else {}
            meta.update(title=doc.get("title", doc.get("summary")), detailed=summary,
                        parent_thread=context.get("parent_thread_id"))
        return meta

    def rows(self, con: sqlite3.Connection, sid: str, after: int) -> Iterable[tuple[int, int, object]]:
        """The thread's messages, each at its position; the whole thread as one broken record
        (place ``thread``) when its document cannot be decoded."""
        doc = self.document(con, sid)
        if not isinstance(doc, dict):
            yield -1, 0, None
            return
        messages = doc.get("messages")
        for i, item in enumerate(messages if isinstance(messages, list) else []):
            yield i, 0, item if isinstance(item, dict) else {"marker": item}

    def row(self, con: sqlite3.Connection, sid: str, offset: int, length: int) -> object | None:
        doc = self.document(con, sid)
        messages = doc.get("messages") if isinstance(doc, dict) else None
        if not isinstance(messages, list) or not 0 <= offset < len(messages):
            return None
        item = messages[offset]
        return item if isinstance(item, dict) else {"marker": item}

    def place(self, offset: int) -> str:
        return "thread" if offset < 0 else f"message {offset}"

    def document(self, con: sqlite3.Connection, sid: str) -> object | None:
        """The thread's decoded document (None when it cannot be decoded), cached by the store
        file's stat, the thread's ``updated_at`` and size: windows read one message at a time.
        Raises ``sqlite3.Error``."""
        head = con.execute("SELECT updated_at, length(data), data_type FROM threads WHERE id = ?", (sid,)).fetchone()
        if head is None:
            return None
        return _DOCS.get(con, (sid, *head), lambda: decode(
            head[2], con.execute("SELECT data FROM threads WHERE id = ?", (sid,)).fetchone()[0]))

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        title = string(meta.get("summary")).strip() or string(meta.get("title")).strip()
        state["title"] = capped(title, 200) if title else None
        summary = string(meta.get("detailed"))
        state["summary"] = capped(summary, SUMMARY_CAP) if summary.strip() else None
        state["parent"] = string(meta.get("parent_id")) or string(meta.get("parent_thread")) or None
        folders = [p.strip() for p in string(meta.get("folder_paths")).replace("\0", "\n").split("\n") if p.strip()]
        state["cwd"] = folders[0] if folders else None
        session.touch(parse_ts(meta.get("created_at")))
        session.touch(parse_ts(meta.get("updated_at")))

    # -- records ---------------------------------------------------------------------------------

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        if "marker" in obj:
            if not known(obj["marker"], MESSAGE_KINDS):
                note_unknown(state, obj["marker"])
        elif "role" in obj:
            if not known(obj.get("role"), LEGACY_ROLES):
                note_unknown(state, obj.get("role"))
            note_unknown_types(state, obj.get("segments") if isinstance(obj.get("segments"), list) else [],
                               SEGMENT_KINDS)
        else:
            kinds = [k for k in obj if k in MESSAGE_KINDS]
            if not kinds:
                note_unknown(state, next(iter(obj), None))
            for k in kinds:
                body = obj[k] if isinstance(obj[k], dict) else {}
                for item in body.get("content") if isinstance(body.get("content"), list) else []:
                    kind = _tag(item)
                    if not known(kind, USER_KINDS if k == "User" else AGENT_KINDS):
                        note_unknown(state, kind)
        emit(pieces_of(obj), rec, state, out, None)

    def finish(self, state: dict, session: Session) -> None:
        session.title = state.get("title") or state.get("first_prompt") or None
        session.summary = state.get("summary") or None
        session.project = state.get("cwd") or None
        session.parent_session_id = state.get("parent")
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: a Zed thread reopens in Zed's agent panel, not from a shell."""
        return None


def decode(data_type, data) -> object | None:
    """A thread's ``data`` as JSON: zstd-decompressed when ``data_type`` says ``zstd``; None when
    it cannot be decoded."""
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    if not isinstance(data, (bytes, bytearray)):
        return None
    try:
        raw = unzstd(bytes(data), THREAD_LIMIT, "Zed thread") if string(data_type).lower() == "zstd" else bytes(data)
        return loads(raw)
    except (OSError, ValueError):
        return None


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one thread message (module docstring)."""
    if "role" in obj:
        return _legacy_pieces(obj)
    out: list[Piece] = []
    user = obj.get("User") if isinstance(obj.get("User"), dict) else None
    agent = obj.get("Agent") if isinstance(obj.get("Agent"), dict) else None
    if user is not None:
        items = user.get("content") if isinstance(user.get("content"), list) else []
        text = "\n".join(string(i.get("Text")) for i in items if isinstance(i, dict) and _tag(i) == "Text")
        if text.strip():
            out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
    if agent is not None:
        for item in agent.get("content") if isinstance(agent.get("content"), list) else []:
            if not isinstance(item, dict):
                continue
            kind = _tag(item)
            if kind == "Text" and string(item.get("Text")).strip():
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, item["Text"]))
            elif kind == "Thinking" and isinstance(item.get("Thinking"), dict):
                text = string(item["Thinking"].get("text"))
                if text.strip():
                    out.append(Piece(Role.ASSISTANT, LABEL_THINKING, text))
            elif kind == "ToolUse" and isinstance(item.get("ToolUse"), dict):
                use = item["ToolUse"]
                name = string(use.get("name")) or "unknown"
                args = use.get("input") if use.get("input") is not None else use.get("raw_input")
                out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(args), name,
                                 call_id=string(use.get("id")) or None))
        results = agent.get("tool_results")
        for rid, res in results.items() if isinstance(results, dict) else ():
            if isinstance(res, dict):
                out.append(_result_piece(res, string(rid)))
    return out


def _legacy_pieces(obj: dict) -> list[Piece]:
    """A message of a thread older than 0.3.0 (``legacy_thread.rs``)."""
    role = obj.get("role")
    if not known(role, LEGACY_ROLES):
        return []
    segments = obj.get("segments")
    if not isinstance(segments, list):
        segments = [{"type": "text", "text": obj.get("text")}]
    hidden = obj.get("is_hidden") is True or role == "system"
    out: list[Piece] = []
    for seg in segments:
        if not isinstance(seg, dict):
            continue
        text = string(seg.get("text"))
        if not text.strip():
            continue
        if seg.get("type") == "thinking":
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, text))
        elif seg.get("type") == "text":
            if hidden:
                out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, text))
            elif role == "user":
                out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
            else:
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
    for use in obj.get("tool_uses") if isinstance(obj.get("tool_uses"), list) else []:
        if isinstance(use, dict):
            name = string(use.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(use.get("input")), name,
                             call_id=string(use.get("id")) or None))
    for res in obj.get("tool_results") if isinstance(obj.get("tool_results"), list) else []:
        if isinstance(res, dict):
            out.append(_result_piece(res, string(res.get("tool_use_id"))))
    return out


def _result_piece(res: dict, call_id: str) -> Piece:
    """A tool result; named by its own ``tool_name``, else by pairing with its call."""
    text = _result_text(res.get("content"))
    if not text and res.get("output") is not None:
        text = dump_text(res.get("output"))
    return Piece(Role.TOOL, None, text, string(res.get("tool_name")) or None, call_id=call_id or None)


def _result_text(content, nested: bool = False) -> str:
    """``LanguageModelToolResultContent`` in each shape Zed accepts (a string, ``{"Text": s}``,
    ``{"type": "text", "text": s}``, ``{"text": s}``, or a list of them); images give nothing."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and not nested:
        return "\n".join(t for t in (_result_text(c, True) for c in content) if t)
    if isinstance(content, dict):
        for k, v in content.items():
            if isinstance(k, str) and k.lower() == "text" and isinstance(v, str):
                return v
    return ""


def _tag(item) -> str | None:
    """The variant name of an externally tagged enum value (``{"Text": ...}`` -> ``Text``)."""
    if isinstance(item, dict) and len(item) == 1:
        return next(iter(item))
    return None


_DOCS = DocCache()


SOURCE = ZedSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

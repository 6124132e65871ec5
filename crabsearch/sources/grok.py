"""Grok Build (xAI's ``grok`` CLI) sessions: ``$GROK_HOME/sessions/<encoded cwd>/<session id>/
chat_history.jsonl`` (else ``~/.grok``), with ``summary.json`` beside it.

Rules come from Grok Build's own code and documentation (xai-org/grok-build @19d42e35c07a:
``crates/codegen/xai-grok-sampling-types/src/conversation.rs`` -- ``ConversationItem``,
``UserItem.synthetic_reason``, ``ToolCall``, ``BackendToolCallItem``;
``crates/codegen/xai-chat-state/src/persistence.rs`` -- one item appended per line;
``crates/codegen/xai-grok-pager/docs/user-guide/17-sessions.md`` -- the layout, ``GROK_HOME``,
``summary.json`` and ``grok --resume``), and agentsview ``internal/parser/grok.go`` @b85eae5a7971
with its goldens of both history formats. Decisions:

* The session directory's ``chat_history.jsonl``, append-only: the shared JSONL read loop.
  ``summary.json`` is read with it (a summary change alone does not re-read the session).
* Current lines (``chat_format_version`` 1) carry a ``type``: ``user`` (``content`` parts of
  ``text``/``image``) -> user prompt, or, with a ``synthetic_reason`` other than
  ``interjection`` (the user's own mid-turn words), a ``context:<reason>`` system message (project
  instructions, reminders, compaction metadata, messages of other agents: never the title);
  ``assistant`` -> text and one ``tool-call:<name>`` per ``tool_calls`` entry (``arguments``);
  ``tool_result`` -> the result, paired by ``tool_call_id``; ``reasoning`` -> thinking (its
  ``content`` texts, else ``summary`` texts); ``backend_tool_call`` -> a
  ``tool-call:<tool_type>`` with its ``action`` (a search the server ran); ``system`` -> nothing.
* Legacy lines (format 0) are OpenAI chat messages with a ``role`` (``reasoning_content`` as
  thinking, ``tool_calls[].function``, ``tool`` results).
* The lines carry no times: the session's times are ``summary.json``'s ``created_at``,
  ``updated_at`` and ``last_active_at``, else the file's mtime.
* Session id: ``summary.json`` ``info.id``, else the directory name. Project: ``info.cwd``, else
  the ``.cwd`` file of the group directory, else its URL-decoded name. Branch: ``head_branch``.
  Title: ``generated_title`` (a ``/rename`` writes it too), else the first prompt, else
  ``session_summary``; summary: ``session_summary``. Resume: ``cd <cwd> && grok --resume <id>``.
* The community ``grok-cli`` (superagent-ai/grok-cli, npm ``grok-dev``) keeps its sessions in a
  SQLite ``~/.grok/grok.db`` (``src/storage/``): not read here.
* **Drift**: a line ``type`` (or legacy ``role``) this reader does not know is counted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, Mapping
from urllib.parse import unquote

from ..files import read_text
from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label)
from .base import FileRead, Source, capped, cd_and, dump_text, env_dir, note_unknown, parse_ts, string, walk_files
from .crabtalk import pieces_of as chat_pieces
from .pieces import Piece, emit, piece_text

TYPES = frozenset({"system", "user", "assistant", "tool_result", "reasoning", "backend_tool_call"})
"""``ConversationItem`` tags (``#[serde(tag = "type", rename_all = "snake_case")]``)."""
ROLES = frozenset({"system", "user", "assistant", "tool"})
"""Legacy (format 0) message roles."""
TYPED_BY_USER = "interjection"
"""The one ``synthetic_reason`` the user typed: words sent while the model was running."""
SUMMARY_BYTES = 1 << 20
TITLE_CAP = 200
SUMMARY_CAP = 8192


class GrokSource(Source):
    """Grok Build: one ``chat_history.jsonl`` per session directory."""

    agent = "grok"
    order = 360
    env_var = "GROK_HOME"
    locations = "`~/.grok/sessions/<cwd>/<id>/chat_history.jsonl` (+ `summary.json`)"
    reads = ("both history formats; injected context (project instructions, reminders, other agents) not as "
             "prompts; server-side searches as tool calls; the generated title; not the community `grok-cli`'s "
             "`grok.db`")
    override = "`GROK_HOME=DIR`"
    upstream = ("xai-org/grok-build `xai-grok-sampling-types/src/conversation.rs`, `17-sessions.md` "
                "@19d42e35c07a; agentsview `internal/parser/grok.go` @b85eae5a7971")
    checked = "2026-12-06: grok-build 19d42e35c07a"
    display = "Grok Build"
    badge = "Grok"
    style = "bold white on grey23"
    known_kinds = {"type": TYPES, "role": ROLES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$GROK_HOME``, else ``~/.grok``."""
        return [env_dir(env, "GROK_HOME", home / ".grok")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/*/*/chat_history.jsonl``."""
        for root in self.roots(env, home):
            yield from walk_files(root / "sessions", "*/*/chat_history.jsonl")

    def new_state(self, path: Path) -> dict:
        return {"meta": _summary(path)}

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The shared JSONL loop, with ``summary.json`` read again on every call."""
        if state is not None and start:
            state = dict(state, meta=_summary(path))
        return super().read(path, start, state)

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        if "type" in obj or "role" not in obj:
            kind, known = obj.get("type"), TYPES
        else:
            kind, known = obj.get("role"), ROLES
        if not isinstance(kind, str) or kind not in known:
            note_unknown(state, kind)
        emit(pieces_of(obj), rec, state, out, None)

    def finish(self, state: dict, session: Session) -> None:
        """Session fields from ``summary.json`` and the messages read (module docstring)."""
        meta = state.get("meta") or {}
        session.session_id = meta.get("id") or Path(session.path).parent.name
        session.project = meta.get("cwd") or None
        session.git_branch = meta.get("branch") or None
        session.summary = meta.get("summary") or None
        session.title = meta.get("title") or state.get("first_prompt") or meta.get("summary") or None
        for key in ("created", "updated", "active"):
            session.touch(parse_ts(meta.get(key)))
        if session.updated is None:
            session.touch(parse_ts(meta.get("mtime")))
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && grok --resume <id>`` (``17-sessions.md``)."""
        return cd_and(session.project, ["grok", "--resume", session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one ``chat_history.jsonl`` line (see the module docstring)."""
    kind = obj.get("type")
    if kind is None and "role" in obj:
        return chat_pieces(obj) if obj.get("role") in ("user", "assistant", "tool") else []
    if kind == "user":
        text = _parts_text(obj.get("content"))
        reason = string(obj.get("synthetic_reason"))
        if not text.strip():
            return []
        if reason and reason != TYPED_BY_USER:
            return [Piece(Role.SYSTEM, "context:" + "".join(c if c.isalnum() or c in "_-" else "?"
                                                            for c in reason[:60]), text)]
        return [Piece(Role.USER, LABEL_USER, text, prompt=True)]
    if kind == "assistant":
        out = [Piece(Role.ASSISTANT, LABEL_ASSISTANT, obj["content"])] if string(obj.get("content")).strip() else []
        calls = obj.get("tool_calls")
        for c in calls if isinstance(calls, list) else ():
            if isinstance(c, dict):
                name = string(c.get("name")) or "unknown"
                out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(c.get("arguments")), name,
                                 call_id=string(c.get("id")) or None))
        return out
    if kind == "tool_result":
        return [Piece(Role.TOOL, None, dump_text(obj.get("content")), call_id=string(obj.get("tool_call_id")) or None)]
    if kind == "reasoning":
        text = _parts_text(obj.get("content")) or _parts_text(obj.get("summary"))
        return [Piece(Role.ASSISTANT, LABEL_THINKING, text)] if text.strip() else []
    if kind == "backend_tool_call":
        call = obj.get("kind") if isinstance(obj.get("kind"), dict) else {}
        name = string(call.get("tool_type")) or "backend"
        what = call.get("action", call.get("input", call.get("code")))
        return [Piece(Role.ASSISTANT, tool_call_label(name), dump_text(what), name)]
    return []  # "system": the system prompt, not indexed


def _parts_text(parts) -> str:
    """The text of content parts (``text``, ``summary_text``, ``reasoning_text``; an image as
    ``[image]``), or the string itself."""
    if isinstance(parts, str):
        return parts
    out = []
    for p in parts if isinstance(parts, list) else ():
        if isinstance(p, dict):
            if isinstance(p.get("text"), str):
                out.append(p["text"])
            elif p.get("type") == "image":
                out.append("[image]")
    return "\n".join(t for t in out if t)


def _summary(history: Path) -> dict:
    """What the reader takes from the session's ``summary.json`` and directories: ``id``, ``cwd``,
    ``branch``, ``title``, ``summary``, ``created``, ``updated``, ``active`` (strings) and
    ``mtime`` (the history's, epoch seconds); missing or broken files give what is left."""
    out: dict = {}
    try:
        out["mtime"] = os.stat(history).st_mtime
    except OSError:
        pass
    group = history.parent.parent
    try:
        out["cwd"] = read_text(group / ".cwd", "utf-8").strip()
    except (OSError, UnicodeDecodeError):
        out["cwd"] = unquote(group.name) if group.name.startswith("%2F") or group.name.startswith("/") else ""
    try:
        data = json.loads(read_text(history.parent / "summary.json", "utf-8")[:SUMMARY_BYTES])
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return out
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    for key, value in (("id", info.get("id")), ("cwd", info.get("cwd")), ("branch", data.get("head_branch")),
                       ("created", data.get("created_at")), ("updated", data.get("updated_at")),
                       ("active", data.get("last_active_at"))):
        if string(value).strip():
            out[key] = value.strip()
    if string(data.get("generated_title")).strip():
        out["title"] = capped(data["generated_title"].strip(), TITLE_CAP)
    if string(data.get("session_summary")).strip():
        out["summary"] = capped(data["session_summary"].strip(), SUMMARY_CAP)
    return out


SOURCE = GrokSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""Factory Droid sessions: ``~/.factory/sessions/<project slug>/<session id>.jsonl``.

Droid is closed source; its CLI ships as bundled JavaScript, and the rules come from that bundle
(``@factory/cli-linux-x64`` 0.225.2, ``bin/droid``: the session writer) checked against the peer
parsers (Agent Sessions ``AgentSessions/Services/DroidSessionParser.swift`` at 651e854f; cass's
franken_agent_detection ``src/connectors/factory.rs`` at 6ae73d5f):

* **Where**: ``<home>/.factory/sessions/`` where ``<home>`` is ``$FACTORY_HOME_OVERRIDE`` (the
  variable Droid itself reads), else the user's home; a session is
  ``<slug>/<id>.jsonl`` (the slug is the working directory, ``/`` written ``-``: ``-home-dev-app``)
  or ``<id>.jsonl``, ``btw/<id>.jsonl`` for a side session. ``<id>.settings.json`` beside it holds
  the model, autonomy and token use: no conversation text, not read.
* **Lines**: line 1 ``{"type": "session_start", id, title, sessionTitle?, owner, version, cwd,
  parent?, callingSessionId?, callingToolUseId?}`` (a rename rewrites it, so the file is read
  again); ``{"type": "message", id, timestamp, parentId, message: {role, content: [blocks],
  visibility?, ...}}`` with Anthropic blocks ``text``, ``thinking``, ``redacted_thinking``,
  ``tool_use``, ``tool_result`` (``tool_use_id``, ``content``: a string or text blocks), ``image``,
  ``document``; ``{"type": "compaction_state", summaryText, removedCount, ...}`` (a compaction);
  ``{"type": "todo_state", todos}`` (the to-do list, not read). Other kinds are counted.
* **Messages**: user text (``<system-reminder>`` blocks Droid adds to it, and user messages with
  ``visibility: "llm_only"``, are context, not prompts), tool results paired with their calls,
  assistant thinking, text and tool calls (input as JSON), a compaction's summary.
* **Session fields**: id ``session_start.id`` (else the file name); title ``sessionTitle`` /
  ``title``, else the first prompt; project ``cwd``, else the slug turned back into a path;
  ``callingSessionId`` (a sub-agent's session started by a Task call) is the parent session,
  ``parent`` the session it was forked from (``extra["forked_from"]``). Summary: the latest
  compaction. Resume: ``cd <cwd> && droid --resume <id>`` (Factory-AI/factory
  ``docs/reference/cli-reference.mdx``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label)
from .base import Source, capped, cd_and, dump_text, env_dir, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, note_compaction, piece_text

LINE_TYPES = frozenset({"session_start", "message", "compaction_state", "todo_state"})
BLOCK_TYPES = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document"})
TITLE_CAP = 200
SUMMARY_CAP = 8192
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)


class DroidSource(Source):
    """Factory Droid sessions (JSONL, one session per file)."""

    agent = "droid"
    order = 320
    env_var = "FACTORY_HOME_OVERRIDE"
    display = "Factory Droid"
    badge = "Droid"
    style = "bold white on grey23"
    locations = "`~/.factory/sessions/<project slug>/<id>.jsonl`"
    reads = ("sub-agent sessions linked to the session that called them, forks noted; compactions as summaries; "
             "`<system-reminder>` text as context; not `.settings.json` (model, token use)")
    override = "`FACTORY_HOME_OVERRIDE=DIR` (Droid's own: `DIR/.factory`)"
    upstream = ("Droid's bundled CLI `@factory/cli-linux-x64` 0.225.2 (`bin/droid`, closed source); "
                "Agent Sessions `DroidSessionParser.swift` @ 651e854f; cass `connectors/factory.rs` @ 6ae73d5f")
    checked = "2026-12-06: droid 0.225.2"
    known_kinds = {"line": LINE_TYPES, "block": BLOCK_TYPES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$FACTORY_HOME_OVERRIDE/.factory``, else ``~/.factory``."""
        return [env_dir(env, self.env_var, home) / ".factory"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/**/*.jsonl``."""
        for root in self.roots(env, home):
            yield from walk_files(root / "sessions", "**/*.jsonl")

    def new_state(self, path: Path) -> dict:
        """The slug of the project folder the file sits in (``-home-dev-app``), if any."""
        slug = path.parent.name
        return {"slug": slug} if slug.startswith("-") else {}

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in LINE_TYPES:
            note_unknown(state, kind)
            return
        ts = parse_ts(obj.get("timestamp"))
        session.touch(ts)
        if kind == "session_start":
            _start(obj, state)
        elif kind == "message":
            message = obj.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for b in content if isinstance(content, list) else ():
                if isinstance(b, dict) and (not isinstance(b.get("type"), str) or b["type"] not in BLOCK_TYPES):
                    note_unknown(state, b.get("type"))
            emit(pieces_of(obj), rec, state, out, ts)
        elif kind == "compaction_state":
            pieces = pieces_of(obj)
            if pieces:
                state["summary"] = capped(pieces[0].text, SUMMARY_CAP)
            note_compaction(session, state["next_index"])
            emit(pieces, rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        """Title ``sessionTitle`` / ``title`` > first prompt; project ``cwd`` > the slug."""
        session.session_id = state.get("sid") or session.session_id
        session.title = state.get("title") or state.get("first_prompt") or None
        session.summary = state.get("summary") or None
        slug = state.get("slug")
        session.project = state.get("cwd") or ("/" + slug[1:].replace("-", "/") if slug else None)
        session.parent_session_id = state.get("caller") or None
        if state.get("forked_from"):
            session.extra["forked_from"] = state["forked_from"]
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && droid --resume <id>``."""
        return cd_and(session.project, ["droid", "--resume", session.session_id])


def _start(obj: dict, state: dict) -> None:
    """The ``session_start`` line: id, title, cwd, the calling session, the forked-from session."""
    if string(obj.get("id")):
        state["sid"] = obj["id"]
    title = (string(obj.get("sessionTitle")) or string(obj.get("title"))).strip()
    if title:
        state["title"] = capped(title, TITLE_CAP)
    if string(obj.get("cwd")):
        state["cwd"] = obj["cwd"]
    if string(obj.get("callingSessionId")):
        state["caller"] = obj["callingSessionId"]
    if string(obj.get("parent")):
        state["forked_from"] = obj["parent"]


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one line (stateless; tool results are paired by call id)."""
    if obj.get("type") == "compaction_state":
        text = string(obj.get("summaryText")).strip()
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text else []
    message = obj.get("message")
    if obj.get("type") != "message" or not isinstance(message, dict):
        return []
    role = message.get("role")
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    injected = message.get("visibility") == "llm_only"
    out: list[Piece] = []
    for b in blocks if isinstance(blocks, list) else ():
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text" and role == "user":
            text = string(b.get("text"))
            for reminder in _REMINDER.findall(text):
                out.append(Piece(Role.SYSTEM, "context:system-reminder", reminder))
            typed = _REMINDER.sub("", text).strip()
            if typed:
                out.append(Piece(Role.SYSTEM, "context:llm_only", typed) if injected else
                           Piece(Role.USER, LABEL_USER, typed, prompt=True))
        elif kind == "text" and role == "assistant" and string(b.get("text")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, b["text"]))
        elif kind == "thinking" and string(b.get("thinking")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, b["thinking"]))
        elif kind == "tool_use":
            name = string(b.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(b.get("input")), name,
                             call_id=string(b.get("id")) or None))
        elif kind == "tool_result":
            result = b.get("content")
            text = ("\n".join(string(c.get("text")) for c in result if isinstance(c, dict) and string(c.get("text")))
                    if isinstance(result, list) else dump_text(result))
            if text:
                out.append(Piece(Role.TOOL, None, text, call_id=string(b.get("tool_use_id")) or None))
    return out


SOURCE = DroidSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""Claude.ai data exports (Settings > Privacy > Export data): the conversations of
``conversations.json`` in the export's zip or folder, read where ``crabsearch import``,
``$CRABSEARCH_CLAUDE_AI_EXPORT`` or ``[sources] claude-ai`` point
(:mod:`crabsearch.sources.exports`); never looked for.

The format is undocumented by Anthropic; the rules follow the public parser agentsview
``internal/parser/claude_ai.go`` @b85eae5a7971 (``chat_messages``, ``sender``, the content block
types, attachments) and the exports themselves. Decisions:

* A conversation ``{uuid, name, created_at, updated_at, chat_messages: [...]}`` is a session (ISO
  times). Its records are its ``chat_messages``, in order.
* A message ``{uuid, sender: human | assistant, text, content: [blocks], attachments, created_at,
  parent_message_uuid?}``: ``text`` blocks -> the user's prompt or the assistant's text (the
  top-level ``text`` when no block has any), ``thinking`` -> thinking, ``tool_use`` -> a
  ``tool-call:<name>`` (``input``), ``tool_result`` -> a ``tool:<name>`` result; an attachment's
  ``extracted_content`` -> a ``context:attachment`` system message (searchable, never the title);
  ``voice_note`` and ``token_budget`` blocks yield nothing.
* Newer exports link each message to its parent (``parent_message_uuid``): the messages off the
  path from the last message up to the root (an edited prompt, a retried answer) are an abandoned
  branch (``extra["off_branch"]``), still searchable.
* Title: ``name``, else the first prompt. No project, no resume command (a web chat): the
  conversation is ``https://claude.ai/chat/<uuid>``.
* **Drift**: a content block ``type`` this reader does not know is counted and listed by
  ``crabsearch status``.
"""

from __future__ import annotations

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session, tool_call_label,
                     tool_result_label)
from .base import dump_text, note_unknown, parse_ts, string
from .exports import KIND_CLAUDE_AI, ExportSource, branch_path, web_url
from .pieces import Piece, piece_text

BLOCK_TYPES = frozenset({"text", "thinking", "tool_use", "tool_result", "voice_note", "token_budget", "image",
                         "document"})


class ClaudeAISource(ExportSource):
    """Claude.ai data exports: one session per conversation."""

    agent = "claude-ai"
    order = 390
    env_var = "CRABSEARCH_CLAUDE_AI_EXPORT"
    locations = ("an export you name: `crabsearch import claude-export.zip` (its `conversations.json`; "
                 "zip, folder or file)")
    reads = "thinking, tool calls, attachments' text; edited prompts and retried answers as abandoned branches"
    override = "`CRABSEARCH_CLAUDE_AI_EXPORT=PATH`, or `[sources] claude-ai = [\"~/claude-export.zip\"]`"
    upstream = "undocumented format; agentsview `internal/parser/claude_ai.go` @b85eae5a7971"
    checked = "2026-12-06: agentsview b85eae5a7971"
    resume_doc = "none (a web chat): `show` and `search` give its address `https://claude.ai/chat/ID` (`url`)"
    display = "Claude.ai export"
    badge = "Claude.ai"
    style = "bold white on dark_goldenrod"
    known_kinds = {"block": BLOCK_TYPES}
    kind = KIND_CLAUDE_AI

    def records(self, conv: dict) -> list:
        """``chat_messages`` (the objects among them), in order."""
        msgs = conv.get("chat_messages")
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    def begin(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """Note the messages on the path from the last one to the root, when they are linked."""
        msgs = self.records(rec.obj)
        by_id = {m["uuid"]: m for m in msgs if isinstance(m.get("uuid"), str)}
        if not msgs or not all(isinstance(m.get("parent_message_uuid"), str) for m in msgs):
            state["active"] = None
            return
        state["active"] = branch_path(msgs[-1].get("uuid"), by_id, "parent_message_uuid")

    def take_record(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        content = rec.obj.get("content")
        for b in content if isinstance(content, list) else ():
            if isinstance(b, dict) and (not isinstance(b.get("type"), str) or b["type"] not in BLOCK_TYPES):
                note_unknown(state, b.get("type"))
        ts = parse_ts(rec.obj.get("created_at"))
        session.touch(ts)
        self.emit_on_branch(pieces_of(rec.obj), rec, state, out, ts, rec.obj.get("uuid"))

    def fields(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        conv = rec.obj
        self.conversation_fields(state, session, conv.get("name"), conv.get("created_at"), conv.get("updated_at"))

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: a Claude.ai conversation is reopened in the app (:meth:`open_url`)."""
        return None

    def open_url(self, session: Session) -> str | None:
        """``https://claude.ai/chat/<uuid>``, the address the app opens a conversation at."""
        return web_url("https://claude.ai/chat/", session)


def pieces_of(m: dict) -> list[Piece]:
    """The pieces of one chat message (see the module docstring)."""
    sender = m.get("sender")
    if sender not in ("human", "assistant"):
        return []
    said = (Role.USER, LABEL_USER) if sender == "human" else (Role.ASSISTANT, LABEL_ASSISTANT)
    out: list[Piece] = []
    texts: list[str] = []
    content = m.get("content")
    for b in content if isinstance(content, list) else ():
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text" and string(b.get("text")).strip():
            texts.append(b["text"])
        elif kind == "thinking" and string(b.get("thinking")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, b["thinking"]))
        elif kind == "tool_use":
            name = string(b.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(b.get("input")), name))
        elif kind == "tool_result":
            name = string(b.get("name")) or "unknown"
            out.append(Piece(Role.TOOL, tool_result_label(name), _result_text(b.get("content")), name))
    if not texts and string(m.get("text")).strip():
        texts.append(m["text"])
    if texts:
        out.insert(0 if sender == "human" else len([p for p in out if p.label == LABEL_THINKING]),
                   Piece(*said, "\n\n".join(texts), prompt=sender == "human"))
    attachments = m.get("attachments")
    for a in attachments if isinstance(attachments, list) else ():
        if isinstance(a, dict) and string(a.get("extracted_content")).strip():
            name = string(a.get("file_name"))
            out.append(Piece(Role.SYSTEM, "context:attachment",
                             (f"[{name}]\n" if name else "") + a["extracted_content"]))
    return out


def _result_text(content) -> str:
    """A ``tool_result`` block's content: a string, or its text blocks."""
    if isinstance(content, list):
        return "\n".join(string(b.get("text")) for b in content if isinstance(b, dict) and string(b.get("text")))
    return dump_text(content)


SOURCE = ClaudeAISource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""ChatGPT data exports (Settings > Data controls > Export): the conversations of
``conversations.json`` (or its shards ``conversations-NNN.json``) in the export's zip or folder,
read where ``crabsearch import``, ``$CRABSEARCH_CHATGPT_EXPORT`` or ``[sources] chatgpt`` point
(:mod:`crabsearch.sources.exports`); never looked for.

The format is undocumented by OpenAI; the rules follow the public parsers agentsview
``internal/parser/chatgpt.go`` @b85eae5a7971 (the ``mapping`` tree, ``current_node``, the content
types) and the exports themselves. Decisions:

* A conversation ``{conversation_id | id, title, create_time, update_time, current_node, mapping:
  {node id: {id, parent, children, message}}}`` is a session (times in epoch seconds). Its records
  are the nodes that hold a ``message``, in tree order (from the root, each node's ``children`` in
  turn), so every branch is read. The messages of nodes off the path from ``current_node`` up to
  the root (a regenerated answer, an edited prompt: the branches the app no longer shows) are an
  abandoned branch (``extra["off_branch"]``), still searchable.
* A message ``{author: {role, name}, content: {content_type, parts | text | thoughts}, recipient,
  create_time, metadata}``: ``user`` -> user prompt (``user_editable_context``, the custom
  instructions, and a message ``metadata.is_visually_hidden_from_conversation`` -> a ``context:``
  system message); ``assistant`` -> assistant text, ``thoughts`` -> thinking, and text or ``code``
  addressed to a tool (``recipient`` other than ``all``) -> a ``tool-call:<recipient>``;
  ``tool`` (``author.name``) -> a ``tool:<name>`` result; a visible ``system`` message -> system.
  ``reasoning_recap`` ("Thought for 5s") and empty messages yield nothing; image parts are
  ``[image]``.
* Title: ``title``, else the first prompt. No project, no resume command (a web chat): the
  conversation is ``https://chatgpt.com/c/<id>``.
* **Drift**: a ``content_type`` this reader does not know is counted and listed by
  ``crabsearch status``.
"""

from __future__ import annotations

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label, tool_result_label)
from .base import parse_ts, note_unknown, string
from .exports import KIND_CHATGPT, ExportSource, branch_path, web_url
from .pieces import Piece, piece_text

CONTENT_TYPES = frozenset({"text", "multimodal_text", "code", "execution_output", "thoughts", "reasoning_recap",
                           "tether_quote", "tether_browsing_display", "system_error", "user_editable_context",
                           "model_editable_context", "sonic_webpage", "computer_output"})


class ChatGPTSource(ExportSource):
    """ChatGPT data exports: one session per conversation."""

    agent = "chatgpt"
    order = 380
    env_var = "CRABSEARCH_CHATGPT_EXPORT"
    locations = ("an export you name: `crabsearch import chatgpt-export.zip` (its `conversations.json`; "
                 "zip, folder or file)")
    reads = "every branch of each conversation (those ChatGPT no longer shows as abandoned); thinking; tool calls"
    override = "`CRABSEARCH_CHATGPT_EXPORT=PATH`, or `[sources] chatgpt = [\"~/chatgpt-export.zip\"]`"
    upstream = "undocumented format; agentsview `internal/parser/chatgpt.go` @b85eae5a7971"
    checked = "2026-12-06: agentsview b85eae5a7971"
    resume_doc = "none (a web chat): `show` and `search` give its address `https://chatgpt.com/c/ID` (`url`)"
    display = "ChatGPT export"
    badge = "ChatGPT"
    style = "bold white on dark_cyan"
    known_kinds = {"content_type": CONTENT_TYPES}
    kind = KIND_CHATGPT

    def records(self, conv: dict) -> list:
        """The nodes holding a message, in tree order (see the module docstring)."""
        mapping = conv.get("mapping") if isinstance(conv.get("mapping"), dict) else {}
        nodes = {k: v for k, v in mapping.items() if isinstance(v, dict)}
        order: list[str] = []
        seen: set[str] = set()
        roots = [k for k, v in nodes.items() if not isinstance(v.get("parent"), str) or v["parent"] not in nodes]
        for start in roots + list(nodes):
            stack = [start]
            while stack:
                key = stack.pop()
                if key in seen or key not in nodes:
                    continue
                seen.add(key)
                order.append(key)
                children = nodes[key].get("children")
                stack += [c for c in reversed(children) if isinstance(c, str)] if isinstance(children, list) else []
        return [nodes[k] for k in order if isinstance(nodes[k].get("message"), dict)]

    def begin(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """Note the nodes on the path from ``current_node`` to the root (all, without one)."""
        conv = rec.obj
        mapping = conv.get("mapping") if isinstance(conv.get("mapping"), dict) else {}
        state["active"] = branch_path(conv.get("current_node"), mapping, "parent")

    def take_record(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        msg = rec.obj.get("message")
        content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
        kind = content.get("content_type")
        if not isinstance(kind, str) or kind not in CONTENT_TYPES:
            note_unknown(state, kind)
        ts = parse_ts(msg.get("create_time"))
        session.touch(ts)
        self.emit_on_branch(pieces_of(rec.obj), rec, state, out, ts, rec.obj.get("id"))

    def fields(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        conv = rec.obj
        self.conversation_fields(state, session, conv.get("title"), conv.get("create_time"), conv.get("update_time"))

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: a ChatGPT conversation is reopened in the app (:meth:`open_url`)."""
        return None

    def open_url(self, session: Session) -> str | None:
        """``https://chatgpt.com/c/<conversation id>``, the address the app opens a conversation at."""
        return web_url("https://chatgpt.com/c/", session)


def pieces_of(node: dict) -> list[Piece]:
    """The pieces of one tree node's message (see the module docstring)."""
    msg = node.get("message") if isinstance(node, dict) else None
    if not isinstance(msg, dict):
        return []
    author = msg.get("author") if isinstance(msg.get("author"), dict) else {}
    content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    role, kind = string(author.get("role")), string(content.get("content_type"))
    text = content_text(content)
    if not text.strip() or kind == "reasoning_recap":
        return []
    hidden = meta.get("is_visually_hidden_from_conversation") is True
    if role == "user":
        if kind == "user_editable_context":
            return [Piece(Role.SYSTEM, "context:custom-instructions", text)]
        return [Piece(Role.SYSTEM, "context:hidden", text)] if hidden else [Piece(Role.USER, LABEL_USER, text, prompt=True)]
    if role == "assistant":
        if kind == "thoughts":
            return [Piece(Role.ASSISTANT, LABEL_THINKING, text)]
        recipient = string(msg.get("recipient")) or "all"
        if recipient != "all" or kind == "code":
            name = recipient if recipient != "all" else "code"
            return [Piece(Role.ASSISTANT, tool_call_label(name), text, name)]
        return [Piece(Role.ASSISTANT, LABEL_ASSISTANT, text)]
    if role == "tool":
        name = string(author.get("name")) or "tool"
        return [Piece(Role.TOOL, tool_result_label(name), text, name)]
    if role == "system" and not hidden:
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)]
    return []


def content_text(content: dict) -> str:
    """The text of a message's ``content``: its ``parts`` (strings; an image as ``[image]``; a part
    object's ``text``), its ``thoughts`` (each ``content``), or its ``text`` / ``result``, with a
    quote's ``title`` and ``url``."""
    if string(content.get("content_type")) == "thoughts":
        thoughts = content.get("thoughts")
        return "\n\n".join(string(t.get("content")) or string(t.get("summary")) for t in thoughts
                           if isinstance(t, dict)).strip() if isinstance(thoughts, list) else ""
    parts = content.get("parts")
    if isinstance(parts, list):
        out = []
        for p in parts:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, dict):
                out.append(string(p.get("text")) or ("[image]" if "image" in string(p.get("content_type")) else ""))
        return "\n".join(t for t in out if t)
    text = string(content.get("text")) or string(content.get("result"))
    extra = [string(content.get(k)) for k in ("title", "url") if string(content.get(k))]
    return "\n".join([text] + extra) if text else ""


SOURCE = ChatGPTSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

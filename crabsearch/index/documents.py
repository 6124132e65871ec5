"""What a transcript becomes in the index: one Whoosh document per message and one per
session (the fields are ``index.schema``'s).

A message document holds its keys (``mkey`` ``fkey:N``, ``fkey``, ``skey`` ``agent:session_id``),
where its record is in the transcript (``off``, ``len``, ``part``: no text is stored), its
times in ms, its filter fields (:func:`_place`) and the text fields of
:func:`index_text_fields`; a session document (``mkey`` ``fkey:s``) its title and summary, the
``Session`` as ``meta`` and ``continued_in``. Every indexed text is masked (``redact.redact``)
and cut to ``sources.base.TEXT_CAP`` (tool output to ``TOOL_TEXT_CAP``) first.
"""

from __future__ import annotations

from ..filters import FILTERS
from ..model import Message, Role, Session, to_ms
from ..redact import redact
from ..sources.base import TEXT_CAP, TOOL_TEXT_CAP
from .filtering import hour_key, project_name

SESSION_FIELD_FILTERS = tuple(f for f in FILTERS.values() if f.narrow.of_session is not None)
"""The filters whose field the writer fills from each session (``Narrow.of_session``)."""


def index_text_fields(m: Message, *, acting: bool = False, tool_output: bool = False) -> dict[str, str]:
    """The text fields a message contributes to the index.

    Secret-shaped strings are masked before anything is indexed (a key pasted into a prompt is not
    findable, and not stored in the index's term list).

    Rules: user text -> ``user``; assistant text -> ``assistant``, or ``acting`` when the turn
    went on to call tools (``acting``); tool calls and results -> only the tool name in ``tool``,
    plus, for results when ``tool_output`` is on, the first 3,072 characters with secrets masked
    in ``tool_output``; compaction summaries -> ``compaction``; thinking and system -> nothing.
    """
    if m.role is Role.USER:
        return {"user": redact(m.text)[:TEXT_CAP]}
    if m.role is Role.SUMMARY:
        return {"compaction": redact(m.text)[:TEXT_CAP]}
    if m.is_tool_payload:
        out = {"tool": m.tool_name} if m.tool_name else {}
        if tool_output and m.role is Role.TOOL and m.text:
            out["tool_output"] = redact(m.text)[:TOOL_TEXT_CAP]
        return out
    if m.role is Role.ASSISTANT and not m.is_thinking:
        return {"acting" if acting else "assistant": redact(m.text)[:TEXT_CAP]}
    return {}


def message_doc(fkey: str, skey: str, session: Session, m: Message, *, acting: bool = False,
                tool_output: bool = False) -> dict:
    """The Whoosh document for one message (see ``schema.py`` for the fields)."""
    # A message without a time of its own (Cline, Crabtalk, Aider) is dated by its session, so
    # since:/until: do not drop it and newest-first does not put it last.
    when = m.timestamp or session.updated or session.started
    doc = {
        "mkey": f"{fkey}:{m.message_index}", "fkey": fkey, "skey": skey, "agent": session.agent,
        "kind": "m", "role": m.role.value, "label": m.label, "idx": m.message_index,
        "off": m.offset, "len": m.length, "part": m.part, "ts": to_ms(m.timestamp),
        "updated": to_ms(when) or 0,
    }
    if m.uid:
        doc["uid"] = m.uid
    if m.sidechain:
        doc["side"] = True
    _place(doc, session, when)
    for name, text in index_text_fields(m, acting=acting, tool_output=tool_output).items():
        if text:
            doc[name] = text
    return doc


def _place(doc: dict, session: Session, ts) -> None:
    """The filter fields: project (path and last segment), the UTC hour, and each field a filter
    indexes from its session (``crabsearch.filters``: ``Narrow.of_session``)."""
    if session.project:
        doc["project"] = session.project.rstrip("/")
        name = project_name(session.project)
        if name:
            doc["projname"] = name
    hour = hour_key(ts)
    if hour:
        doc["hour"] = hour
    for f in SESSION_FIELD_FILTERS:
        value = f.narrow.of_session(session)
        if value:
            doc[f.narrow.field] = value


def acting_flags(messages: list[Message]) -> list[bool]:
    """For each message: True for assistant text directly followed (after any thinking) by a
    tool call of the same turn: the weight of an assistant turn that went on to call tools
    (``docs/guide.md``, How results are ranked)."""
    flags = [False] * len(messages)
    for i, m in enumerate(messages):
        if m.role is Role.ASSISTANT and not m.is_thinking and not m.is_tool_payload:
            for nxt in messages[i + 1:]:
                if nxt.is_thinking:
                    continue
                flags[i] = nxt.label.startswith("tool-call:")
                break
    return flags


def session_doc(fkey: str, session: Session) -> dict:
    """The Whoosh document for a session: title and summary text, the Session as ``meta``, and
    the id of the session it was handed to (``continued_in``), by which that one finds it."""
    doc = {
        "mkey": f"{fkey}:s", "fkey": fkey, "skey": f"{session.agent}:{session.session_id}",
        "agent": session.agent, "kind": "s", "session_id": session.session_id,
        "title": redact(session.title or ""), "summary": redact(session.summary or ""),
        "idx": session.anchor_index, "meta": session.to_state(),
        "updated": to_ms(session.updated) or 0,
    }
    if isinstance(session.extra.get("continued_in"), str) and session.extra["continued_in"]:
        doc["continued_in"] = session.extra["continued_in"]
    _place(doc, session, session.updated)
    return doc

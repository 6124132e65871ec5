"""Stateless extraction results ("pieces") and the stateful step that turns them into messages.

A source splits one record into an ordered list of :class:`Piece` with a pure function of the
record, so that :meth:`Source.message_text` can re-extract piece ``part`` from the record alone.
:func:`emit` then adds what needs state: tool-result names paired by call id, the index of the
first real user prompt, and skipping of pieces already seen (``skip``). ``Message.part`` is the
piece's position in the full list, so it always lines up with a later re-extraction (after a
skip the parts of one record are no longer contiguous).
"""

from __future__ import annotations

from datetime import datetime
from typing import Collection, NamedTuple

from ..jsonl import Record
from ..model import Message, Role, tool_result_label
from .base import capped, first_line, names_something

PENDING_CAP = 64
"""Unpaired tool call ids kept in state (interrupted calls never get a result; oldest go first)."""


class Piece(NamedTuple):
    """One message-to-be of a record.

    ``label`` is None only for a tool result whose tool name comes from pairing (``call_id`` is
    then the id of the call it answers). For a tool call ``call_id`` is the call's own id.
    ``prompt`` marks real human text (title and anchor candidate); ``fallback`` marks human input
    that is a title and anchor candidate only when the session has no real prompt (a slash command
    with arguments); ``last_resort`` one that is a candidate only when it has neither (a slash
    command alone, ``/init``); ``key`` is an optional de-duplication key the source may use.
    """

    role: Role
    label: str | None
    text: str
    tool_name: str | None = None
    call_id: str | None = None
    prompt: bool = False
    key: str | None = None
    fallback: bool = False
    last_resort: bool = False


def remember_call(state: dict, call_id: str | None, name: str | None) -> None:
    """Note an unpaired tool call ``call_id -> name`` (bounded to :data:`PENDING_CAP`)."""
    if not call_id or not name:
        return
    pending = state.setdefault("pending", {})
    pending.pop(call_id, None)
    pending[call_id] = name
    while len(pending) > PENDING_CAP:
        del pending[next(iter(pending))]


def emit(pieces: list[Piece], rec: Record, state: dict, out: list[Message], ts: datetime | None,
         skip: Collection[int] = (), ns: str = "") -> None:
    """Append a :class:`Message` to ``out`` for each piece whose position is not in ``skip``.

    Tool results take their name from the pending call map (popped when paired; ``unknown`` when
    no call was seen). The first piece with ``prompt`` whose first line names something (not
    punctuation only: ``base.names_something``) sets ``state["anchor"]`` (its message index:
    the read loop numbers messages from ``state["next_index"]`` in append order) and
    ``state["first_prompt"]`` (that line, 80 characters); the first such piece with ``fallback``
    likewise sets ``state["fallback_anchor"]`` and ``state["fallback_title"]``, and with
    ``last_resort`` ``state["last_anchor"]`` and ``state["last_title"]``. ``ns`` prefixes these
    keys, so a source can keep candidates of another kind apart (Claude Code sidechain lines
    inline in a parent file use ``side_``).
    """
    base = len(out)
    pending = state.setdefault("pending", {})
    for part, p in enumerate(pieces):
        if part in skip:
            continue
        label, name = p.label, p.tool_name
        if p.role is Role.TOOL:
            paired = pending.pop(p.call_id, None) if p.call_id else None
            if label is None:
                name = paired or name or "unknown"
                label = tool_result_label(name)
        elif p.call_id:
            remember_call(state, p.call_id, name)
        index = state["next_index"] + len(out) - base
        if p.prompt and ns + "anchor" not in state and names_something(title := first_line(p.text, 80)):
            state[ns + "anchor"] = index
            state[ns + "first_prompt"] = title
        elif p.fallback and ns + "fallback_anchor" not in state and names_something(title := first_line(p.text, 80)):
            state[ns + "fallback_anchor"] = index
            state[ns + "fallback_title"] = title
        elif p.last_resort and ns + "last_anchor" not in state and names_something(title := first_line(p.text, 80)):
            state[ns + "last_anchor"] = index
            state[ns + "last_title"] = title
        out.append(Message(index, p.role, label, p.text, rec.offset, rec.length, part, name, ts))


def abandon(state: dict, start: int, end: int, keep: int | None = None) -> None:
    """Add messages ``[start, end)`` to the abandoned ranges of a read (``state["off"]``: a rewind
    or a rollback replaced them), merged with the last range when they touch; ``keep``: at most
    that many ranges kept (the latest)."""
    off = state.setdefault("off", [])
    if off and start <= off[-1][1]:
        off[-1] = [min(off[-1][0], start), max(off[-1][1], end)]
    else:
        off.append([start, end])
    if keep is not None:
        del off[:-keep]


COMPACTIONS_KEPT = 64
"""Latest compaction points kept in ``Session.extra["compactions"]``."""


def note_compaction(session, index: int) -> None:
    """Record that ``session`` was compacted at message ``index`` (the first message the
    compaction record yields, or the next message when it yields none) in
    ``session.extra["compactions"]`` (ascending, the latest :data:`COMPACTIONS_KEPT`); a hit
    before the last one is labelled "before compaction". A point already recorded at
    ``index`` or ``index - 1`` (Claude Code's boundary line, then its summary line) is not
    repeated."""
    marks = session.extra.setdefault("compactions", [])
    if marks and marks[-1] >= index - 1:
        return
    marks.append(index)
    del marks[:-COMPACTIONS_KEPT]


def note_summaries(pieces: list[Piece], state: dict, session, cap: int) -> None:
    """Note each :attr:`Role.SUMMARY <crabsearch.model.Role.SUMMARY>` piece of one record whose
    pieces are all emitted (no ``skip``): a compaction at its message index (:func:`note_compaction`,
    ``state["next_index"]`` plus its position) and ``state["summary"]``, its text cut to ``cap``
    characters (the last summary read wins). Call it before :func:`emit` for that record."""
    for i, p in enumerate(pieces):
        if p.role is Role.SUMMARY:
            note_compaction(session, state["next_index"] + i)
            state["summary"] = capped(p.text, cap)


def piece_text(pieces: list[Piece], part: int, label: str) -> str:
    """The text of piece ``part``, checking it is still the piece that was indexed with ``label``.

    Raises ``LookupError`` when the record no longer has that piece (the file was rewritten).
    """
    if not 0 <= part < len(pieces):
        raise LookupError(f"record has no part {part}")
    p = pieces[part]
    same = label.startswith("tool:") if p.label is None else label == p.label
    if not same:
        raise LookupError(f"part {part} is {p.label or 'a tool result'!r}, not {label!r}")
    return p.text

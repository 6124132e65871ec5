"""Markdown transcripts read as blocks of lines: what Aider and SpecStory share.

A parser turns a byte range of a Markdown file into :class:`Block` (one message each: an absolute
byte range and its text) and *resume points* (file offsets where parsing may restart).
:func:`read_blocks` numbers the blocks as messages and commits only up to the last resume
point, so the last (possibly still growing) turn is read again, with the same message indexes,
when the file grows.
"""

from __future__ import annotations

import copy
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from ..files import read_at
from ..jsonl import LineStats
from ..model import Message, Role, Session
from .base import READ_MARGIN, TEXT_CAP, TOOL_TEXT_CAP, FileRead, Source, failure, first_line, names_something


class Block(NamedTuple):
    """One message-to-be: an absolute byte range ``[start, end)`` of the file and its text."""

    role: Role
    label: str
    start: int
    end: int
    text: str
    tool: str | None = None
    ts: datetime | None = None
    prompt: bool = False


def lines_of(data: bytes, base: int) -> Iterator[tuple[int, int, str]]:
    """``(start, end, text)`` of each line of ``data`` (``base`` = file offset of ``data[0]``);
    ``end`` excludes the newline, ``text`` excludes ``\\r\\n``; bad UTF-8 becomes U+FFFD."""
    pos = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        stop = len(data) if nl < 0 else nl
        yield base + pos, base + stop, data[pos:stop].decode("utf-8", "replace").rstrip("\r")
        pos = stop + 1


def read_bytes(path: str, start: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``start`` (fewer at the end). Raises ``OSError``
    (``files.NotRegularFile`` when it is not a regular file)."""
    return read_at(path, start, max(0, length))


def fresh_state(source: Source, path: Path, state: dict | None, start: int) -> tuple[dict, int]:
    """A copy of ``state`` to go on from ``start``, or a new state and 0 for a first read."""
    if state and start:
        return copy.deepcopy(state), start
    session = Session(agent=source.agent, session_id=path.name, path=str(path))
    return {"session": session.to_state(), "next_index": 0, "ctx": {}}, 0


def read_blocks(source: Source, path: Path, base: int, start: int, state: dict,
                parse: Callable[[bytes, int, dict], Iterator[Block | int]], data: bytes,
                stats: LineStats) -> FileRead:
    """Turn what ``parse(data, base + start, ctx)`` yields into a :class:`FileRead`.

    ``parse`` yields blocks and resume points (file offsets where parsing may restart with a
    fresh ``ctx``). Everything after the last resume point is yielded but not committed: the
    returned offset (relative to ``base``) and state point at that resume point, so a growing
    last message comes again with the same ``message_index`` when the file grows.
    ``state`` comes from :func:`fresh_state`; ``source.finish(state, session)`` derives the
    session fields; ``state["ctx"]`` is what ``parse`` keeps between reads.

    A parser that fails (raises anything) ends the read there, never fatally: the failure is
    counted in ``stats`` (at the byte after the last block read), the blocks read so far are
    kept and the read commits up to the last resume point, as for a growing last message.
    """
    session = Session.from_state(state["session"])
    messages: list[Message] = []
    committed = (copy.deepcopy(state), session.to_state(), start)
    items = parse(data, base + start, state["ctx"])
    at = base + start
    while True:
        try:
            item = next(items, None)
        except Exception as exc:  # noqa: BLE001 - the rule: a record a reader cannot handle is skipped
            stats.skip(*failure(exc, f"byte {at}"))
            break
        if item is None:
            break
        if isinstance(item, int):
            committed = (copy.deepcopy(state), session.to_state(), item - base)
            at = item
            continue
        at = item.end
        cap = (TOOL_TEXT_CAP if item.role is Role.TOOL or item.label.startswith("tool-call:") else TEXT_CAP) + READ_MARGIN
        i = state["next_index"]
        messages.append(Message(i, item.role, item.label, item.text[:cap], item.start,
                                item.end - item.start, 0, item.tool, item.ts))
        if item.prompt and "anchor" not in state and names_something(title := first_line(item.text, 80)):
            state["anchor"], state["first_prompt"] = i, title
        session.touch(item.ts)
        state["next_index"] = i + 1
    source._seal(state, session, stats)
    snap, snap_session, offset = committed
    if offset == start and not messages and data.endswith(b"\n") and not stats.skipped:
        snap, offset = state, start + len(data)  # only blank lines (or a header): all committed
    elif snap is not state:
        snap_session = Session.from_state(snap_session)
        source._seal(snap, snap_session)
    stats.end_offset = offset
    return FileRead(session, messages, offset, snap, stats)

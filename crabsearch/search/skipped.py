"""Where a session's transcript has lines its reader skipped, for the session view, ``show``,
``export`` and MCP ``list_messages`` to show a placeholder there ("line 12 skipped: 40 MB, over
the 16 MB cap") instead of nothing.

The indexer keeps the first :data:`~crabsearch.jsonl.PLACES_KEPT` skipped lines of each file
in its manifest entry as ``[byte offset, reason]`` (``crabsearch status`` lists them); nothing
else is stored. Here the entry of one transcript is read (one SQLite row), each offset placed
before the first message whose record starts after it (a binary search over the stored record
offsets of its messages), and the file read once up to the end of the last of those lines to
number them and measure them (:func:`~crabsearch.jsonl.lines_at`: a streaming count, never the
file held). Only units that are text files (``Source.locate``) and places that are byte offsets
count: a database row or a member of an archive has no line to point to.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hits import SessionRef
from ..jsonl import MAX_LINE, lines_at
from ..sources import SOURCES
from .windows import message_doc


@dataclass(frozen=True)
class SkippedLine:
    """A line of a session's transcript its reader skipped: ``before`` is the index of the message
    it comes before (the session's message count when it comes after the last one); ``line`` its
    1-based number and ``size`` its length in bytes (None when the file no longer reaches it);
    ``reason`` as ``crabsearch status`` says it (``oversized line``, ``broken JSON``, ...)."""

    before: int
    line: int | None
    size: int | None
    reason: str

    def text(self) -> str:
        """``line 12 skipped: 40 MB, over the 16 MB cap`` (an oversized line), ``line 12 skipped:
        broken JSON`` (any other reason)."""
        where = f"line {self.line:,}" if self.line else "a line"
        if self.reason == "oversized line":
            size = f"{round(self.size / (1 << 20))} MB, " if self.size else ""  # MB as the cap's
            return f"{where} skipped: {size}over the {MAX_LINE >> 20} MB cap"
        return f"{where} skipped: {self.reason}"

    def to_json(self) -> dict:
        """``{"before", "line", "size", "reason", "text"}``: ``before`` the ``message_index`` of the
        message it comes before (the session's message count: after the last one), ``text``
        as :meth:`text` says it."""
        return {"before": self.before, "line": self.line, "size": self.size, "reason": self.reason,
                "text": self.text()}


MARK = "⊘"
"""What a placeholder starts with where a skipped line was (``⊘ line 3 skipped: ...``)."""


def shown_with(lines: list[SkippedLine], start: int, stop: int, total: int) -> list[SkippedLine]:
    """The ``lines`` a page of messages ``start .. stop`` (exclusive) of a session of ``total``
    messages shows: those right before one of its messages, and, when it reaches the last
    message, those after it."""
    return [s for s in lines if start <= s.before < stop or (stop >= total and s.before >= total)]


def before(lines: list[SkippedLine], index: int) -> list[SkippedLine]:
    """The ``lines`` shown right before message ``index``."""
    return [s for s in lines if s.before == index]


def after_last(lines: list[SkippedLine], total: int) -> list[SkippedLine]:
    """The ``lines`` after the last of ``total`` messages."""
    return [s for s in lines if s.before >= total]


def places(index_dir, ref: SessionRef) -> list[tuple[int, str]]:
    """``(byte offset, reason)`` of the skipped lines the manifest of ``index_dir`` keeps for
    ``ref``'s transcript, when it is a text file; ``[]`` otherwise."""
    from ..index.manifest import Manifest  # sqlite3: not imported by a search that never asks

    src = SOURCES.get(ref.session.agent)
    if src is None or src.locate(ref.session.path, 0) is None:
        return []
    entry = Manifest.entry(index_dir, ref.session.path) or {}
    out = []
    for place in entry.get("places") or []:
        if isinstance(place, (list, tuple)) and len(place) == 2 and type(place[0]) is int:
            out.append((place[0], str(place[1])))
    return out


def message_after(searcher, ref: SessionRef, offset: int) -> int:
    """The index of the first message of ``ref``'s session whose record starts after byte
    ``offset`` (its message count when none does); the records of a transcript's messages are
    in file order, as its reader appends them."""
    lo, hi = 0, ref.session.message_count
    while lo < hi:
        mid = (lo + hi) // 2
        fields, _ = message_doc(searcher, ref.fkey, mid, None)
        if fields is not None and fields.get("off", 0) > offset:
            hi = mid
        else:
            lo = mid + 1
    return lo


def measured(path: str, placed: list[tuple[int, int, str]]) -> list[SkippedLine]:
    """The ``(offset, before, reason)`` places of ``path`` as :class:`SkippedLine` objects, in
    file order, numbered and measured in the file as it is now."""
    try:
        lines = lines_at(path, [off for off, _, _ in placed])
    except OSError:
        lines = {}
    return [SkippedLine(before, *lines.get(off, (None, None)), reason) for off, before, reason in sorted(placed)]

"""Context windows and session pages, read from the transcripts by stored offsets.

No message text is stored in the index: a message document stores where its record is (``off``,
``len``, ``part``), and the text is read back from the transcript through its source's ``load``
and ``message_text`` (a ``pread`` per record), kept in a small cache. The window rules (how many
neighbours, which branch, how a text is cut) live in ``crabsearch.hits``.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from ..hits import (Item, SessionRef, abandoned_ranges, cut_around, cut_bytes, densest, in_ranges,
                    why_unavailable)
from ..model import Session, from_ms
from ..redact import redact_kept as redact_secrets
from ..sources import SOURCES
from ..sources.base import full_tool_output
from .caps import MATCH_SCAN, RECORDS_KEPT


class Windows:
    """Reads messages back from transcripts for windows and pages; keeps the last
    :data:`~crabsearch.search.caps.RECORDS_KEPT` records read."""

    def __init__(self) -> None:
        self._records: OrderedDict[tuple, object | None] = OrderedDict()
        self.full_tool_output = False
        """Whether the index holds tool output (set by the engine): texts are read back as they
        were indexed (``sources.base.full_tool_output``)."""

    def forget(self) -> None:
        """Drop the records read so far (the transcripts may have changed)."""
        self._records.clear()

    def record(self, src, path: str, off: int, length: int) -> object | None:
        """The record at ``off``/``length`` of ``path`` through ``src.load`` (None when it is gone
        or no longer what was indexed)."""
        key = (path, off, length)
        if key in self._records:
            self._records.move_to_end(key)
            return self._records[key]
        try:
            obj = src.load(path, off, length)
        except ValueError:  # no longer what was indexed: kept until the index changes (forget)
            obj = None
        except OSError:  # gone or unreadable now: not kept, read again when asked again
            return None
        self._records[key] = obj
        if len(self._records) > RECORDS_KEPT:
            self._records.popitem(last=False)
        return obj

    def items(self, searcher, ref: SessionRef, indexes, hit_index: int | None, max_bytes: int | None,
              mask: bool, terms: list[str] | None = None, anchor: tuple[int, int] | None = None) -> list[Item]:
        """The messages ``indexes`` of a session, read from its transcript, each cut to
        ``max_bytes`` (None: whole) and masked when ``mask``; the hit message (``hit_index``)
        around its first match of ``terms``. ``anchor`` is ``(message index, document
        number)`` of one message when known (the hit)."""
        off = abandoned_ranges(ref.session)
        items = []
        guess = anchor
        why = None  # checked once, at the first message that cannot be read
        for i in indexes:
            f, guess = message_doc(searcher, ref.fkey, i, guess)
            if not f:
                continue
            text = self.doc_text(ref.session, f)
            if text is None:
                why = why_unavailable(ref.session.path) if why is None else why
                text = why
            if mask:
                text = redact_secrets(text)
            truncated = False
            if max_bytes is not None and i == hit_index and terms and len(text) > max_bytes // 4:
                long = len(text.encode("utf-8", "replace")) > max_bytes
                at = first_match(text, terms, reach=max(1, max_bytes // 2)) if long else None
                text, truncated = cut_around(text, max_bytes, at)
            elif max_bytes is not None:
                text, truncated = cut_bytes(text, max_bytes)
            items.append(Item(i, f["role"], f["label"], from_ms(f.get("ts")), text, truncated, i == hit_index,
                              abandoned=in_ranges(i, off), sidechain=bool(f.get("side"))))
        return items

    def doc_text(self, session: Session, f: dict) -> str | None:
        """The full text of the message document ``f`` of ``session``, read from the transcript
        (None when it cannot be read)."""
        src = SOURCES.get(session.agent)
        obj = self.record(src, session.path, f["off"], f["len"]) if src else None
        if obj is None:
            return None
        try:
            with full_tool_output(self.full_tool_output):
                return src.message_text_at(session.path, obj, f.get("part", 0), f["label"])
        except Exception:  # a record that no longer matches what was indexed
            return None


def message_doc(searcher, fkey: str, index: int, guess: tuple[int, int] | None
                ) -> tuple[dict | None, tuple[int, int] | None]:
    """The stored fields of message ``index`` of transcript ``fkey``, and ``(index, docnum)``
    to guess the next one from. A transcript's messages are indexed one after another, so
    message i+k is usually document d+k: that guess is checked (same transcript, same
    index, not deleted) before falling back to a term lookup, which asks every segment."""
    if guess is not None:
        d = guess[1] + (index - guess[0])
        if 0 <= d < searcher.doc_count_all() and not searcher.reader().is_deleted(d):
            f = searcher.stored_fields(d)
            if f.get("fkey") == fkey and f.get("idx") == index and f.get("role"):
                return f, (index, d)
    d = searcher.document_number(mkey=f"{fkey}:{index}")
    if d is None:
        return None, guess
    return searcher.stored_fields(d), (index, d)


def first_match(text: str, terms: list[str], reach: int | None = None) -> int | None:
    """Character offset of the first query term in ``text`` (its first :data:`MATCH_SCAN`
    characters), or None: a case-folded substring search, where a word counts only when it is
    not part of a longer word (``the`` in ``other``); a ``prefix*`` only needs its start to be a
    word start; CJK terms (bigrams inside runs of CJK text) count anywhere. Offsets are those of
    the case-folded text, which can differ by a few characters for rare scripts (it only places
    a cut).

    With ``reach`` (characters) and several terms: the first match of the first stretch of
    ``reach`` characters that holds the most different terms, so that a cut around it keeps
    the place where the query's words meet, not only the first of them (the window of
    ``webhook flarnish`` holds both words when a stretch holds both).

    An identifier's parts as one run entry (``get user by id``, ``querying.Compiler.terms``)
    match where they stand in a row, joined by anything but letters and digits or by nothing
    (``get_user_by_id``, ``getUserById``); its parts alone are no match, as the highlighter has
    it (``highlight.term_spans``): for ``refreshAccessToken``, a stretch holding ``token-store``
    and ``refresh_buffer`` is no match."""
    low = text[:MATCH_SCAN].lower()
    parts = {p for term in terms if " " in term for p in term.split()}
    terms = [t for t in terms if t not in parts]
    first_only = reach is None or len(terms) == 1  # each term's first match is all that is asked for
    marks: list[tuple[int, int]] = []
    for n, term in enumerate(terms):
        if " " in term:  # a run: its parts in a row
            run = re.compile(r"(?<![^\W_])" + r"[\W_]*".join(map(re.escape, term.split())) + r"(?![^\W_])")
            for m in run.finditer(low):
                marks.append((m.start(), n))
                if first_only:
                    break
            continue
        prefix = term.endswith("*")
        needle = term.rstrip("*")
        if not needle:
            continue
        anywhere = not needle.isascii() and any(_is_cjk(c) for c in needle)
        pos = low.find(needle)
        while pos != -1:
            before = low[pos - 1] if pos else " "
            after = low[pos + len(needle)] if pos + len(needle) < len(low) else " "
            if anywhere or (not before.isalnum() and (prefix or not after.isalnum())):
                marks.append((pos, n))
                if first_only:
                    break
            pos = low.find(needle, pos + 1)
    if not marks:
        return None
    marks.sort()
    return marks[0][0] if first_only else densest(marks, reach)


def _is_cjk(c: str) -> bool:
    """True for a Han, kana or Hangul character (the analyzer indexes their runs as bigrams)."""
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF

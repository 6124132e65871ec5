"""Finding in the session view: the query's hits (``]`` / ``[``: the next message matching the
query) and the find text (``/``, then ``n`` / ``N``: every occurrence, any case, marked)."""

from __future__ import annotations

import re
from typing import Callable

from rich.style import Style
from textual.strip import Strip

from ..search import Engine, Item
from ..text import printable
from .messageview import drawn_text
from .sessionlines import Block, restyle

FIND_PAGE = 200  # messages read per step while `/` find scans the session
FIND_STYLE = Style.parse("bold black on dark_orange")
FIND_CURRENT_STYLE = Style.parse("bold black on bright_green")


class FindInSession:
    """Hit jumps and find for a ``TranscriptView`` (a mix-in: it moves the view's cursor and
    scroll, and reads its pages through the view's loader)."""

    # -- the query's hits (`]`, `[`) ----------------------------------------------------------

    def _jump(self, step: int) -> None:
        """Go to the next (``step`` 1) or previous (-1) shown message whose text shows a query
        highlight: the index's matching messages, and between the cursor and the next of those,
        any message the index does not hold words of (thinking, tool calls and output) whose
        drawn text (:meth:`_shows_terms`) holds a query word. Read in a worker; one jump at a
        time."""
        if self._hits_of is None or self._jumping or not self.terms:
            return
        self._jumping = True
        cursor = self.cursor

        def scan() -> None:
            target = None
            try:
                if self._hits is None:
                    self._hits = self._hits_of()
                after = [i for i in self._hits if (i > cursor if step > 0 else i < cursor)]
                bound = (after[0] if step > 0 else after[-1]) if after else (self.total if step > 0 else -1)
                target = self._scan_range(cursor + step, bound, step, self._shows_terms)
                if target is None and after:
                    target = bound
            finally:
                self.app.call_from_thread(self._jumped, target, step)

        self.run_worker(scan, thread=True, group="jump", exclusive=True)

    def _shows_terms(self, item: Item) -> bool:
        """``item`` is shown and what it draws (:func:`~crabsearch.tui.messageview.drawn_text`,
        what find matches) holds a query word: a word glued to an escape code or to a JSON
        ``\\n`` escape in the transcript's text counts as drawn."""
        return self.visible(item) and bool(Engine.spans(drawn_text(item), self.terms))

    def _jumped(self, target: int | None, step: int) -> None:
        self._jumping = False
        if target is None:
            self.notify("No more matches " + ("below" if step > 0 else "above"))
        else:
            self._set_match(target)
            self.go_to(target)
            self._show_match(target)

    def _show_match(self, index: int) -> None:
        """Message ``index`` (loaded, at the top of the view) holds the query's words: when the
        first line showing one is below the view, scroll to it (a third of the way down); when
        they are only in the folded part of a long message, unfold it first (not its top shown,
        the hit thousands of characters further down)."""
        block = self._loaded(index)
        if block is None or not self.terms or not self.visible(block.item):
            return
        if block.strips is None:
            self._render_block(block)
        line = self._term_line(block)
        if line is None and index not in self._unfolded and not self.full \
                and Engine.spans(drawn_text(block.item), self.terms):
            self._unfolded.add(index)
            self._render_block(block)
            self._relayout()
            line = self._term_line(block)
        if line is None:
            return
        if self._line_of(index) + line >= self.scroll_y + (self.scrollable_content_region.height or 1) - 1:
            self._show_line(index, line)

    def _term_line(self, block: Block) -> int | None:
        """The first line of a rendered ``block`` (its first line is 0) below its header where a
        query word shows."""
        return next((y for y, strip in enumerate(block.strips or ())
                     if y > block.lead and Engine.spans(strip.text, self.terms)), None)

    def _scan_range(self, start: int, stop: int, step: int, want: Callable[[Item], bool]) -> int | None:
        """The first message from ``start`` towards ``stop`` (exclusive; ``step`` 1 or -1)
        for which ``want(item)`` holds, read a page of FIND_PAGE at a time (worker thread)."""
        i = start
        while (i < stop) if step > 0 else (i > stop):
            off = i if step > 0 else max(stop + 1, i - FIND_PAGE + 1)
            n = min(FIND_PAGE, stop - i) if step > 0 else i - off + 1
            items = self.read(off, n)
            if not items and not self.gone:
                return None
            for it in items if step > 0 else reversed(items):
                if (it.message_index >= i if step > 0 else it.message_index <= i) and want(it):
                    return it.message_index
            i = off + n if step > 0 else off - 1
        return None

    def action_next_hit(self) -> None:
        """Jump to the next message that matches the query."""
        self._jump(+1)

    def action_previous_hit(self) -> None:
        """Jump to the previous message that matches the query."""
        self._jump(-1)

    # -- find in session (`/`, n, N) ----------------------------------------------------------
    #
    # Every occurrence of the find text (any case) is highlighted, the current one differently;
    # n / N move match by match (within a message, then to the next message holding the text,
    # wrapping), and a worker counts the matches of the whole session for the "3/12" in the
    # position line. A match in the folded part of a message unfolds that message. What is
    # matched is what a message shows in full (``messageview.drawn_text``): a tool call's one
    # line and its arguments as drawn, not its JSON; Markdown's text, not its marks.

    def find(self, text: str) -> None:
        """Highlight every occurrence of ``text`` (any case) and go to the first match at or
        after the cursor; an empty ``text`` clears the find."""
        self.find_text = text
        self._current = None
        self._recount()
        self.rerender(keep_bodies=True)
        if text:
            self._find(+1, include_top=True)

    @property
    def find_position(self) -> tuple[int | None, int | None]:
        """``(n, total)`` of the current match (1-based) among all the matches of the session;
        either is None while it is not known yet (counting, or no current match)."""
        if self._matches is None:
            return None, None
        total = sum(c for _, c in self._matches)
        if self._current is None:
            return None, total
        m, k = self._current
        before = sum(c for i, c in self._matches if i < m)
        return before + k + 1, total

    def _count_matches(self, needle: str, generation: int) -> None:
        pattern = re.compile(re.escape(needle), re.IGNORECASE)

        def count() -> None:
            found: list[tuple[int, int]] = []
            for off in range(0, self.total, FIND_PAGE):
                if generation != self._find_generation:
                    return
                for it in self.read(off, FIND_PAGE):
                    n = self.visible(it) and len(pattern.findall(drawn_text(it)))
                    if n:
                        found.append((it.message_index, n))
            self.app.call_from_thread(self._counted, generation, found)

        self.run_worker(count, thread=True, group="find-count", exclusive=True)

    def _counted(self, generation: int, found: list[tuple[int, int]]) -> None:
        if generation == self._find_generation:
            self._matches = found
            self.post_message(self.Position(*self._top_index, self.total) if self._top_index else
                              self.Position(self.cursor, self.cursor, self.total))

    def action_find_next(self) -> None:
        """Go to the next match of the find text (wraps to the start)."""
        self._find(+1)

    def action_find_previous(self) -> None:
        """Go to the previous match of the find text (wraps to the end)."""
        self._find(-1)

    def _in_message(self, index: int) -> int:
        """Matches of the find text in message ``index`` as counted (in what it shows in full:
        :func:`~crabsearch.tui.messageview.drawn_text`)."""
        if self._matches is not None:
            return dict(self._matches).get(index, 0)
        block = self._loaded(index)
        if block is None:
            return 0
        return len(re.findall(re.escape(self.find_text), drawn_text(block.item), re.IGNORECASE))

    def _find(self, step: int, include_top: bool = False) -> None:
        if not self.find_text:
            self.notify("Press / to find text in this session")
            return
        if self._finding:
            return
        if self._current is not None and not include_top:  # the next match in the same message
            m, k = self._current
            if 0 <= k + step < self._in_message(m):
                self._go_to_match(m, k + step)
                return
        if self._matches:  # counted: straight to the next message that has matches
            later = [(i, c) for i, c in self._matches if (i > self.cursor if step > 0 else i < self.cursor)]
            if include_top:
                later = [(i, c) for i, c in self._matches if i >= self.cursor]
            wrapped = not later
            pool = later or self._matches
            m, c = pool[0] if step > 0 else pool[-1]
            if wrapped:
                self.notify("Reached the end; continued from the start" if step > 0
                            else "Reached the start; continued from the end")
            self._go_to_match(m, 0 if step > 0 else c - 1)
            return
        self._finding = True
        start = self.cursor + (0 if include_top else step)
        needle = self.find_text
        self.run_worker(lambda: self._scan(needle, start, step), thread=True, group="find", exclusive=True)

    def _scan(self, needle: str, start: int, step: int) -> None:
        """Worker: read the session in pages from ``start`` in direction ``step`` (wrapping once)
        until a shown message holds ``needle`` (any case); one page in memory at a time."""
        found, wrapped = None, False
        self._cut_seen = False
        try:
            found, wrapped = self._scan_pages(needle.casefold(), start, step)
        finally:
            self.app.call_from_thread(self._found, needle, found, wrapped, step)

    def _scan_pages(self, want: str, start: int, step: int) -> tuple[int | None, bool]:
        total = self.total

        def holds(it: Item) -> bool:
            self._cut_seen |= it.truncated
            return self.visible(it) and want in drawn_text(it).casefold()

        if step > 0:
            passes = [(start, total, False), (0, min(start, total), True)]
        else:
            passes = [(start, -1, False), (total - 1, start, True)]
        for lo, hi, wrapped in passes:
            found = self._scan_range(lo, hi, step, holds)
            if found is not None:
                return found, wrapped
        return None, False

    def _found(self, needle: str, index: int | None, wrapped: bool, step: int) -> None:
        self._finding = False
        if index is None:
            cut = f" (as shown: a message over {self.message_kib} KB is cut)" if self._cut_seen else ""
            self.notify(f"“{printable(needle)}” is not in this session{cut}", severity="warning")
            return
        if wrapped:
            self.notify("Reached the end; continued from the start" if step > 0
                        else "Reached the start; continued from the end")
        if needle == self.find_text:
            self._go_to_match(index, 0 if step > 0 else max(0, self._in_message_loaded(index) - 1))

    def _in_message_loaded(self, index: int) -> int:
        self.go_to(index)  # loads its page
        return self._in_message(index)

    def _go_to_match(self, index: int, k: int) -> None:
        """Make match ``k`` of message ``index`` the current one: the message becomes the
        cursor, at the top of the view when the match then shows, else scrolled to the match
        (a match in the folded part unfolds the message)."""
        self._current = (index, k)
        self.go_to(index)
        block_no = next((n for n, b in enumerate(self._blocks) if b.item.message_index == index), None)
        if block_no is None:
            return
        block = self._blocks[block_no]
        self._current_line = None
        self._render_block(block)
        if self._current_line is None and index not in self._unfolded:  # in the folded part
            self._unfolded.add(index)
            self._render_block(block)
        self._relayout()
        self._show_line(index, block.lead + 1 + (self._current_line or 0))  # the header, then the body's lines

    def _show_line(self, index: int, line: int) -> None:
        """Scroll so that line ``line`` of message ``index``'s block (its first line is 0)
        shows: the message at the top of the view when it then does, else the line a third of
        the way down; the position line follows."""
        top = self._line_of(index)
        height = self.scrollable_content_region.height or 1
        self._set_y(top if line < height - 1 else max(top, top + line - height // 3))
        self._prepare()
        self._after_scroll()
        self._top_index = None
        self.post_message(self.Position(self.top_message(), self.bottom_message(), self.total))

    def _mark_find(self, strips: list[Strip], item: Item) -> list[Strip]:
        """Highlight the find text in the rendered body lines of ``item``, the current match in
        :data:`FIND_CURRENT_STYLE`; remembers that match's line."""
        pattern = re.compile(re.escape(self.find_text), re.IGNORECASE)
        current = self._current[1] if self._current and self._current[0] == item.message_index else None
        if current is not None:
            self._current_line = None
        k = 0
        out = []
        for y, strip in enumerate(strips):
            text = strip.text
            marks = []
            for m in pattern.finditer(text):
                if k == current:
                    self._current_line = y
                marks.append((m.start(), m.end(), FIND_CURRENT_STYLE if k == current else FIND_STYLE))
                k += 1
            out.append(restyle(strip, text, marks) if marks else strip)
        return out

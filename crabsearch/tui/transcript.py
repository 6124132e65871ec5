"""The session view's transcript: a Line-API widget that pages messages in as you scroll and
renders only what is on screen.

Technique from ``toolong`` (engineering.md 1.1): only a window of messages ``[lo, hi)`` is ever
loaded (a page is ``PAGE`` messages, read from the transcript by stored offsets through a loader
callable), and ``render_line`` only indexes into rendered lines. Messages are laid out by height:
a message not rendered yet counts as the lines it is estimated to take
(``messageview.estimate_lines``); before the view paints, the messages on screen are rendered
(Markdown, code, diffs: ``messageview``) and the layout corrected, the message at the top kept in
place. Rendered bodies are cached per message, width and look, so scrolling back, moving the
cursor or finding text does not render them again. A 200 MB transcript opens as fast as a small
one: nothing outside the window is read, nothing off screen is rendered.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable

from rich.cells import cell_len
from rich.console import Group
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..hits import GONE
from ..search import Engine, Item, SkippedLine
from ..text import printable
from . import messageview
from .messageview import Look, drawn_text, is_tool
from .render import HIGHLIGHT, ROLE_STYLES

PAGE = 40
MARGIN = 20  # lines from an edge at which the next page is loaded
FIND_PAGE = 200  # messages read per step while `/` find scans the session
TOOL_MODES = ("lines", "full", "hidden")
"""How tool calls and tool output show: one line / first lines, in full, or not at all (``t``)."""
FIND_STYLE = Style.parse("bold black on dark_orange")
FIND_CURRENT_STYLE = Style.parse("bold black on bright_green")
TERM_STYLE = Style.parse(HIGHLIGHT)
BODIES_KEPT = 600
"""Rendered message bodies kept (per view): a few screens in each direction at a few widths."""


@dataclass
class _Block:
    """A loaded message: its lines once rendered (the placeholders of lines skipped before it,
    header, body, a blank line), else None; its height: the number of those lines, or the
    estimate until it is rendered; ``lead``: the placeholder lines before its header."""

    item: Item
    strips: list[Strip] | None = None
    height: int = 0
    lead: int = 0


HITS = Binding.Group("Hits", compact=True)


class TranscriptView(ScrollView, can_focus=True):
    """Pages of one session's messages. ``load(offset, limit) -> list[Item]`` reads them (the
    screen passes the engine's ``page``); ``total`` is the session's message count; the view opens
    with message ``start`` at the top, highlights the query ``terms`` and marks the current match
    (``match``: ``hit_index``, then the message ``]`` / ``[`` went to)."""

    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("pageup,b", "page_up", "Page up", show=False),
        Binding("pagedown,space", "page_down", "Page down", show=False),
        Binding("home,g", "first", "Start", show=False, id="first"),
        Binding("end,G", "last", "End", show=False, id="last"),
        Binding("enter", "toggle_message", "Expand", show=False, id="expand-message"),
        Binding("e", "toggle_full", "Full text", show=False, id="full-text"),
        Binding("left_square_bracket", "previous_hit", "Prev hit", id="previous-hit", group=HITS),
        Binding("right_square_bracket", "next_hit", "Next hit", id="next-hit", group=HITS),
        Binding("J", "next_message", "Next msg", show=False, id="next-message"),
        Binding("K", "previous_message", "Prev msg", show=False, id="previous-message"),
        Binding("n", "find_next", "Find next", show=False, id="find-next"),
        Binding("N", "find_previous", "Find prev", show=False, id="find-previous"),
        Binding("t", "cycle_tools", "Tools", id="tools"),
        Binding("T", "toggle_thinking", "Thinking", show=False, id="thinking"),
        Binding("a", "toggle_abandoned", "Branches", show=False, id="abandoned"),
        Binding("s", "toggle_sidechains", "Subagent turns", show=False, id="subagents"),
    ]

    class Position(Message):
        """Posted when the messages in view change: ``index`` (top) to ``last`` of ``total``
        (0-based indexes)."""

        def __init__(self, index: int, last: int, total: int) -> None:
            super().__init__()
            self.index = index
            self.last = last
            self.total = total

    class Gone(Message, bubble=False):
        """Posted (from any thread) when a message read back says its transcript is gone."""

    def __init__(self, load: Callable[[int, int], list[Item]], total: int, start: int,
                 hit_index: int | None, terms: list[str], hits: Callable[[], list[int]] | None = None,
                 message_bytes: int = 256 * 1024, skipped: Callable[[], list[SkippedLine]] | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self._load = load
        self.total = total
        self.start = start
        self.hit_index = hit_index
        self.match = hit_index
        """The current match, marked ``▶`` on a tinted background: the hit, then the message the
        last ``]`` / ``[`` went to (only one message is marked)."""
        self.terms = terms
        self._blocks: list[_Block] = []
        self._tops: list[int] = [0]  # first line of each block, then the total height
        self._width = 0
        self._top_index: tuple[int, int] | None = None
        self._opened = False
        self._preparing = False
        self._bodies: LRUCache = LRUCache(BODIES_KEPT)
        self.full = False
        self._hits_of = hits
        self._hits: list[int] | None = None
        self.tool_mode = "lines"
        self.show_thinking = True
        self.show_abandoned = False
        """Messages off the active branch (a rewind replaced them) are hidden unless this is on
        (``a``); the screen turns it on when the hit itself is on such a branch."""
        self.show_sidechains = True
        """Subagent turns written inline into the transcript (``s`` hides them)."""
        self.find_text = ""
        self._finding = False
        self._jumping = False
        self._current: tuple[int, int] | None = None
        """The current find match: (message index, n-th match in it)."""
        self._matches: list[tuple[int, int]] | None = None
        """(message index, matches in it) for the whole session, once counted (None meanwhile)."""
        self._find_generation = 0
        self._current_line: int | None = None
        """The line (in its message's body) of the current find match, once rendered."""
        self._unfolded: set[int] = set()
        """Messages shown in full although long (Enter on one, or a find match in its folded
        part); a tool call shows all its arguments."""
        self.cursor = start
        """The current message (marked; ``J``/``K`` move it; copy and editor act on it)."""
        self.message_kib = message_bytes // 1024
        """How much of one message ``load`` reads (``message_bytes``, the screen's
        ``MESSAGE_BYTES``), for the note on a message cut there."""
        self._cut_seen = False
        """A find's scan met a message cut at that size (its answer says so)."""
        self.new_messages = 0
        """Messages a refresh added below the view that have not come into view yet (:meth:`grow`)."""
        self._skipped_of = skipped
        self._skipped: dict[int, list[SkippedLine]] = {}
        """The transcript's skipped lines by the message they come before (:meth:`_read_skipped`)."""
        self.gone = False
        """The transcript is no longer on disk: the messages read stay, no more are (:meth:`went_away`)."""

    async def on_key(self, event: events.Key) -> None:
        """Each key acts where the focus is when its turn comes, as the search box's keys do
        (``SafeInput``): a key runs its bindings here (the view's, the screen's, the app's:
        Textual's chain), not once it has bubbled up to the app, and a key that waited here while
        a key before it moved the focus (``/`` to the find box, ``c`` to the copy menu: keys
        typed in one burst) goes where the focus went. Textual checks a key's bindings with the
        focus as it is when the key reaches the app: the keys typed right after ``/`` reached it
        with the focus in the find box, which does not bind them, and were lost."""
        focused = self.app.focused
        target = focused if focused is not None else self.app.screen  # a menu just pushed: its screen
        if target is not self and target is not self.screen:
            event.stop()
            event.prevent_default()
            target.post_message(events.Key(event.key, event.character))
        elif await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()

    @property
    def lo(self) -> int:
        """First loaded message index."""
        return self._blocks[0].item.message_index if self._blocks else self.start

    @property
    def hi(self) -> int:
        """One past the last loaded message index."""
        return self._blocks[-1].item.message_index + 1 if self._blocks else self.start

    @property
    def loaded(self) -> list[int]:
        """Indexes of the messages currently loaded (for tests and the header)."""
        return [b.item.message_index for b in self._blocks]

    @property
    def held(self) -> list[Item]:
        """The messages loaded, in order, each as far as it was read (``message_bytes``): what
        the view holds of a transcript that is gone (copied and exported in its place)."""
        return [b.item for b in self._blocks]

    @property
    def rendered(self) -> list[int]:
        """Indexes of the loaded messages rendered so far (for tests and the benchmark)."""
        return [b.item.message_index for b in self._blocks if b.strips is not None]

    @property
    def _lines(self) -> list[tuple[int, Strip]]:
        """``(block number, line)`` of every rendered line (for tests and the benchmark)."""
        return [(n, s) for n, b in enumerate(self._blocks) if b.strips for s in b.strips]

    def on_resize(self) -> None:
        region = self.scrollable_content_region
        if not self._opened:
            if region.height:  # open once the real size is known
                self._opened = True
                self._open_at(self.start)
                self._read_skipped()
                if self.start == self.hit_index:
                    self._show_match(self.start)
            return
        width = max(20, region.width)
        if width != self._width and self._blocks:
            self._width = width
            self.rerender(keep_bodies=True)  # the bodies are cached per width: a resize back reuses them
        else:
            self._prepare()

    # -- loading ------------------------------------------------------------------------------

    def _open_at(self, index: int) -> None:
        self._width = max(20, self.scrollable_content_region.width)
        lo = max(0, min(index - 10, self.total - PAGE))
        items = [] if self.gone else self.read(lo, PAGE)
        if not items and self._blocks:  # nothing to read now (gone, or no longer indexed): keep what was read
            index = max(self.lo, min(index, self.hi - 1))
            if not self.lo <= self.cursor < self.hi:
                self._set_cursor(index)
            self._relayout()
            self._scroll_to_message(index)
            return
        self._blocks = [self._block(it) for it in items]
        self._relayout()
        self._scroll_to_message(index)

    def _block(self, item: Item) -> _Block:
        return _Block(item, None, self._estimate(item))

    def _loaded(self, index: int) -> _Block | None:
        """The block of message ``index`` when it is among the loaded ones."""
        return next((b for b in self._blocks if b.item.message_index == index), None)

    def _relayout(self) -> None:
        tops = [0]
        for b in self._blocks:
            tops.append(tops[-1] + b.height)
        self._tops = tops
        self.virtual_size = Size(self._width, tops[-1])
        self.refresh()
        self.call_after_refresh(self._after_scroll)  # heights changed: the position line follows

    def _block_at(self, y: int) -> int:
        """The number of the block holding line ``y`` (clamped to the loaded blocks)."""
        if not self._blocks:
            return 0
        return max(0, min(len(self._blocks) - 1, bisect_right(self._tops, y) - 1))

    def _line_of(self, message_index: int) -> int:
        for n, b in enumerate(self._blocks):
            if b.item.message_index >= message_index:
                return self._tops[n]
        return max(0, self._tops[-1] - 1)

    def _scroll_to_message(self, message_index: int) -> None:
        """Put ``message_index`` at the top of the view, or as high as it goes (the last
        messages: the view ends at the session's end). Rendering what comes into view changes
        heights (Markdown takes more lines than estimated): placed again until it stays."""
        for _ in range(4):
            self._set_y(self._line_of(message_index))
            tops = self._tops
            self._prepare()
            if self._tops == tops or int(self.scroll_y) == self._line_of(message_index):
                break
        self._after_scroll()

    def _set_y(self, y: int) -> None:
        # Set directly: scroll_to() inside a resize or right after virtual_size changed can be
        # clamped against the old size and silently land at 0.
        self._preparing = True  # no _prepare from the watcher: the caller does it
        try:
            self.scroll_target_y = self.scroll_y = min(y, max(0, self._tops[-1] - 1))
        finally:
            self._preparing = False

    def _prepare(self) -> None:
        """Render the messages on screen (and a few lines below) that are not rendered yet, and
        lay them out with their real heights, the line at the top of the view kept in place."""
        if not self._blocks or self._preparing:
            return
        height = max(1, self.scrollable_content_region.height)
        for _ in range(4):  # a message rendered shorter than estimated lets the next ones in
            y = int(self.scroll_y)
            top = self._block_at(y)
            offset = y - self._tops[top]
            changed = False
            pos = self._tops[top]
            n = top
            while n < len(self._blocks) and pos <= y + height + 2:
                b = self._blocks[n]
                if b.strips is None:
                    old = b.height
                    self._render_block(b)
                    changed |= b.height != old
                pos += b.height
                n += 1
            if not changed:
                return
            self._relayout()
            self._set_y(self._tops[top] + min(offset, max(0, self._blocks[top].height - 1)))

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if not self._preparing:
            self._prepare()  # before the paint: what comes into view is rendered first
        self.call_after_refresh(self._after_scroll)

    def top_message(self) -> int:
        """Index of the message at the top of the view."""
        return self._message_at(int(self.scroll_offset.y))

    def bottom_message(self) -> int:
        """Index of the last message (even partly) in view."""
        return self._message_at(int(self.scroll_offset.y) + self.scrollable_content_region.height - 1)

    def _message_at(self, y: int) -> int:
        if not self._blocks:
            return self.start
        return self._blocks[self._block_at(max(0, min(y, self._tops[-1] - 1)))].item.message_index

    def _after_scroll(self) -> None:
        if not self._blocks or not self.scrollable_content_region.height:
            return
        height = self.scrollable_content_region.height
        for _ in range(8):  # hidden messages add no lines: keep loading until the view is full
            y = int(self.scroll_offset.y)
            if y < MARGIN and self.lo > 0:
                offset = max(0, self.lo - PAGE)
                new = [self._block(it) for it in self.read(offset, self.lo - offset) if it.message_index < self.lo]
                if not new:
                    break
                added = sum(b.height for b in new)
                self._blocks[:0] = new
                self._relayout()
                self._set_y(y + added)
                self._prepare()
            elif y + height > self._tops[-1] - MARGIN and self.hi < self.total and not self.gone:
                items = self.read(self.hi, PAGE)
                self._blocks.extend(self._block(it) for it in items if it.message_index >= self.hi)
                if not items:  # the index claims more messages than it holds: stop asking
                    self.total = self.hi
                self._relayout()
                self._prepare()
            else:
                break
        seen = (self.top_message(), self.bottom_message())
        if not seen[0] <= self.cursor <= seen[1]:  # scrolled away: the cursor follows the view
            self._set_cursor(seen[0])
        self.new_messages = max(0, min(self.new_messages, self.total - 1 - seen[1]))  # those come into view
        if seen != self._top_index:
            self._top_index = seen
            self.post_message(self.Position(seen[0], seen[1], self.total))

    # -- rendering ----------------------------------------------------------------------------

    def visible(self, item: Item) -> bool:
        """False when ``item`` is hidden by the tool (``t``), thinking (``T``) or abandoned-branch
        (``a``) toggles (the hit itself is always shown)."""
        if item.abandoned and not self.show_abandoned and item.message_index != self.hit_index:
            return False
        if item.sidechain and not self.show_sidechains and item.message_index != self.hit_index:
            return False
        if item.label == "thinking":
            return self.show_thinking
        if self.tool_mode == "hidden" and is_tool(item):
            return False
        return True

    def _look(self, item: Item) -> Look:
        return Look(max(20, self._width - 5), self.app.current_theme.dark,
                    full=self.full or item.message_index in self._unfolded, tools_full=self.tool_mode == "full")

    def _estimate(self, item: Item) -> int:
        """Lines ``item`` takes before it is rendered (0 when hidden)."""
        if not self.visible(item):
            return 0
        lead, trail = self._placeholders(item)
        return (2 + messageview.estimate_lines(item, self._look(item)) + len(item.subagents)
                + (len(lead) + 1 if lead else 0) + (len(trail) + 1 if trail else 0))

    def _placeholders(self, item: Item) -> tuple[list[SkippedLine], list[SkippedLine]]:
        """The skipped lines shown above ``item``'s header (those right before its record) and
        below its blank line (those after the last message, on the last message)."""
        after = [s for before, lines in self._skipped.items() if before >= self.total for s in lines] \
            if item.message_index == self.total - 1 else []
        return self._skipped.get(item.message_index, []), after

    def _placeholder_strips(self, lines: list[SkippedLine]) -> list[Strip]:
        """``⊘ line 12 skipped: 40 MB, over the 16 MB cap`` per skipped line, then a blank line."""
        if not lines:
            return []
        console = self.app.console
        options = console.options.update_width(self._width).update(highlight=False)
        out = []
        for line in lines:
            text = Text(f"  ⊘ {line.text()}", style="italic yellow", no_wrap=True, overflow="ellipsis")
            out.append(Strip(console.render_lines(text, options, style=self.rich_style, pad=True)[0]))
        return out + [Strip.blank(self._width, self.rich_style)]

    def _render_block(self, block: _Block) -> None:
        """Render ``block``'s message (header, body from the cache when it is there, a blank
        line), query terms and find matches highlighted."""
        item = block.item
        if not self.visible(item):
            block.strips, block.height = [], 0
            return
        body = self._body(item)
        if self.terms:
            body = [_mark(strip, Engine.spans(strip.text, self.terms), TERM_STYLE) for strip in body]
        if self.find_text:
            body = self._mark_find(body, item)
        lead, trail = (self._placeholder_strips(lines) for lines in self._placeholders(item))
        block.strips = lead + [self._header(item)] + body + [Strip.blank(self._width, self.rich_style)] + trail
        block.height, block.lead = len(block.strips), len(lead)

    def _base_style(self, item: Item) -> Style:
        if item.message_index == self.match:
            return self.rich_style + Style(bgcolor="grey23" if self.app.current_theme.dark else "grey85")
        return self.rich_style

    def _header(self, item: Item) -> Strip:
        """The message's first line: ``▶`` on the current match, ``#N`` (reversed at the cursor),
        label, time, branch and subagent marks."""
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append("▶ " if item.message_index == self.match else "  ", style="bold cyan")
        header.append(f"#{item.message_index + 1}", style="bold reverse" if item.message_index == self.cursor
                      else "dim")
        header.append(" ")
        header.append(printable(item.label), style=ROLE_STYLES.get(item.role, ""))
        if item.timestamp:
            header.append("  " + item.timestamp.strftime("%Y-%m-%d %H:%M:%S UTC"), style="dim")
        if item.abandoned:  # off the active branch: still shown, marked
            header.append("  abandoned branch", style="dim italic")
        if item.sidechain:
            header.append("  subagent turn", style="dim italic")
        console = self.app.console
        options = console.options.update_width(self._width).update(highlight=False)
        line = console.render_lines(header, options, style=self._base_style(item), pad=True)[0]
        return Strip(line)

    def _body(self, item: Item) -> list[Strip]:
        """The rendered body of ``item`` (cached by message, text, width and look; the theme's
        styles are in it, so a theme change empties the cache: ``rerender()``)."""
        look = self._look(item)
        key = (item.message_index, hash(item.text), self._width, look,
               tuple(tuple(sorted(s.items())) for s in item.subagents), item.message_index == self.match)
        cached = self._bodies.get(key)
        if cached is not None:
            return cached
        renderable, more = messageview.body(item, look)
        parts = [Padding(renderable, (0, 1, 0, 4))]
        if more:
            what = "t: tools in full" if is_tool(item) and not self.full else "e: every message in full"
            parts.append(Padding(Text(f"… {more} (Enter: this message in full · {what})",
                                      style="italic dim"), (0, 1, 0, 4)))
        if item.truncated:  # read up to the screen's MESSAGE_BYTES: say so, and where it all is
            parts.append(Padding(Text(f"… cut here: the view reads a message's first {self.message_kib} KB "
                                      "(`crabsearch show` prints all of it)", style="italic dim"),
                                 (0, 1, 0, 4)))
        parts += [Padding(line, (0, 1, 0, 4)) for line in subagent_lines(item)]
        console = self.app.console
        options = console.options.update_width(self._width).update(highlight=False)
        strips = [Strip(line) for line in console.render_lines(Group(*parts), options,
                                                                style=self._base_style(item), pad=True)]
        self._bodies[key] = strips
        return strips

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
            out.append(_restyle(strip, text, marks) if marks else strip)
        return out

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        n = y + scroll_y
        width = self.scrollable_content_region.width
        if n >= self._tops[-1] or not self._blocks:
            return Strip.blank(width, self.rich_style)
        i = self._block_at(n)
        block = self._blocks[i]
        if block.strips is None:  # not prepared (a paint before the scroll watcher ran)
            old = block.height
            self._render_block(block)
            if block.height != old:
                self.call_after_refresh(self._fix_layout)
        line = n - self._tops[i]
        if line >= len(block.strips):
            return Strip.blank(width, self.rich_style)
        return block.strips[line].crop_extend(scroll_x, scroll_x + width, self.rich_style)

    def _fix_layout(self) -> None:
        top = self.top_message()
        self._relayout()
        self._scroll_to_message(top)

    # -- actions ------------------------------------------------------------------------------

    def action_first(self) -> None:
        """Go to the first message (loading its page when it is not loaded)."""
        self._set_cursor(self.lo if self.gone else 0)
        if self.lo > 0 and not self.gone:
            self._open_at(0)
        self.scroll_home(animate=False, immediate=True)

    def action_last(self) -> None:
        """Go to the last message (loading the last page when it is not loaded)."""
        self._set_cursor(self.hi - 1 if self.gone else max(0, self.total - 1))
        if self.hi < self.total and not self.gone:
            self._open_at(self.total - 1)
        self.scroll_end(animate=False, immediate=True)

    def _set_cursor(self, message_index: int) -> None:
        if message_index == self.cursor:
            return
        old, self.cursor = self.cursor, message_index
        for b in self._blocks:  # only the two headers change
            if b.strips and b.item.message_index in (old, message_index):
                b.strips[b.lead] = self._header(b.item)
        self.refresh()

    def _set_match(self, message_index: int) -> None:
        """Mark message ``message_index`` as the current match (the mark leaves the last one):
        the two messages are rendered again where they are, their heights unchanged."""
        if message_index == self.match:
            return
        old, self.match = self.match, message_index
        for b in self._blocks:
            if b.strips and b.item.message_index in (old, message_index):
                self._render_block(b)
        self.refresh()

    def go_to(self, message_index: int) -> None:
        """Make message ``message_index`` the cursor and put it at the top (loading its page when
        it is not loaded)."""
        if self.gone and self._blocks:  # only the messages read are there to go to
            message_index = max(self.lo, min(message_index, self.hi - 1))
        self._set_cursor(message_index)
        self._top_index = None  # the position line says where the view went, always
        if not (self.lo <= message_index < self.hi):
            self._open_at(message_index)
        else:
            self._scroll_to_message(message_index)

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
        they are only in the folded part of a long message, unfold it first. (Opening a long
        message at its hit showed its top, the hit thousands of characters further down.)"""
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

    def _term_line(self, block: _Block) -> int | None:
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

    def reload(self) -> None:
        """Read the loaded messages again (e.g. after secrets were revealed), keeping the place."""
        top = self.top_message()
        self._open_at(top)

    # -- following the transcript (a refresh read more of it, or found it gone) ------------------

    def read(self, offset: int, limit: int) -> list[Item]:
        """Messages ``offset .. offset+limit`` through ``load`` (any thread); once the transcript
        is gone, the loaded ones only. Messages read back as gone (the transcript was deleted
        since it was indexed) are left out, and the view learns it is gone (:class:`Gone`)."""
        if self.gone:
            return [b.item for b in list(self._blocks) if offset <= b.item.message_index < offset + limit]
        items = self._load(offset, limit)
        if any(it.text == GONE for it in items):
            self.post_message(self.Gone())
            return [it for it in items if it.text != GONE]
        return items

    def _read_skipped(self) -> None:
        """Ask (in a worker: the transcript is read up to them) where its reader skipped lines;
        placeholders are drawn there once known (``search.skipped``)."""
        if self._skipped_of is None or self.gone:
            return

        def read() -> None:
            lines = self._skipped_of()
            self.app.call_from_thread(self._got_skipped, lines)

        self.run_worker(read, thread=True, group="skipped", exclusive=True)

    def _got_skipped(self, lines: list[SkippedLine]) -> None:
        found: dict[int, list[SkippedLine]] = {}
        for line in lines:
            found.setdefault(line.before, []).append(line)
        if found != self._skipped:
            self._skipped = found
            self.rerender(keep_bodies=True)

    def on_transcript_view_gone(self) -> None:
        self.went_away()

    def went_away(self) -> None:
        """The session's transcript is no longer on disk: the messages read stay shown and every
        key works on them; no more are read. Said once, and in the position line."""
        if self.gone:
            return
        self.gone = True
        self.new_messages = 0
        self.notify("This transcript is no longer on disk (deleted or moved): the messages read "
                    "before stay shown.", severity="warning", timeout=10)
        self._top_index = None
        self._after_scroll()

    def grow(self, total: int) -> None:
        """The session now holds ``total`` messages (a refresh read more of its transcript). When
        the view shows the last message, it reads the new ones and follows them to the end (as
        ``tail -f``); else they are counted in :attr:`new_messages` (End goes there). Fewer than
        before (the transcript was rewritten): the loaded messages are read again."""
        if total == self.total or self.gone:
            return
        old, self.total = self.total, total
        self._read_skipped()  # lines skipped in what was read since
        if total < old:
            self.new_messages = 0
            self.reload()
            return
        if not (self._blocks and self.hi == old and self.bottom_message() == old - 1
                and self.scroll_y >= self.max_scroll_y):
            self.new_messages += total - old
            self._top_index = None
            self._after_scroll()
            return
        if total - self.hi > PAGE:
            self._open_at(total - 1)
        else:
            new = self.read(self.hi, total - self.hi)
            self._blocks.extend(self._block(it) for it in new if it.message_index >= self.hi)
            self._relayout()
        if self.cursor == old - 1:  # on the last message: it stays on the last one
            self._set_cursor(self.hi - 1)
        self._top_index = None
        self.scroll_end(animate=False, immediate=True)

    def rerender(self, keep_bodies: bool = False) -> None:
        """Render the loaded messages again (after a toggle, a resize or a theme change), keeping
        the top message in place; only what is on screen is rendered now. The cached bodies are
        dropped unless ``keep_bodies`` (what changed is only highlighted on top of them)."""
        top = self.top_message()
        if not keep_bodies:
            self._bodies.clear()
        for b in self._blocks:
            b.strips, b.height = None, self._estimate(b.item)
        self._relayout()
        self._top_index = None  # post Position again: the screen's status line names the toggles
        self._scroll_to_message(top)

    def action_toggle_message(self) -> None:
        """Enter: the message at the cursor in full (a tool call with all its arguments), or
        folded again."""
        index = self.cursor
        self._unfolded.symmetric_difference_update({index})
        for b in self._blocks:
            if b.item.message_index == index:
                b.strips, b.height = None, self._estimate(b.item)
        self._relayout()
        self._prepare()

    def action_toggle_full(self) -> None:
        """Show long messages in full, or folded again (the message at the top stays put)."""
        self.full = not self.full
        self.rerender(keep_bodies=True)
        self.notify("Long messages in full" if self.full else "Long messages folded again")

    def _shown_changed(self) -> None:
        """After a toggle that shows or hides messages: lay them out again and, during a find,
        count the matches again over the messages now shown, so that ``n`` never lands on a
        hidden one (after ``t`` hid the tools, ``n`` never goes to a tool's output)."""
        self.rerender(keep_bodies=True)
        if not self.find_text:
            return
        if self._current is not None:
            block = self._loaded(self._current[0])
            if block is None or not self.visible(block.item):
                self._current = None
        self._recount()

    def _recount(self) -> None:
        """Forget the match counts (and any count still running) and, during a find, count again."""
        self._matches = None
        self._find_generation += 1
        if self.find_text:
            self._count_matches(self.find_text, self._find_generation)

    def action_cycle_tools(self) -> None:
        """Tool calls and output: first lines -> in full -> hidden -> first lines."""
        self.tool_mode = TOOL_MODES[(TOOL_MODES.index(self.tool_mode) + 1) % len(TOOL_MODES)]
        self._shown_changed()
        self.notify({"lines": "Tool calls and output: first lines", "full": "Tool calls and output: in full",
                     "hidden": "Tool calls and output: hidden"}[self.tool_mode])

    def action_toggle_thinking(self) -> None:
        """Show or hide the model's thinking."""
        self.show_thinking = not self.show_thinking
        self._shown_changed()
        self.notify("Thinking shown" if self.show_thinking else "Thinking hidden")

    def action_toggle_sidechains(self) -> None:
        """Show or hide subagent turns written inline into this transcript."""
        self.show_sidechains = not self.show_sidechains
        self._shown_changed()
        self.notify("Subagent turns shown" if self.show_sidechains else "Subagent turns hidden")

    def action_toggle_abandoned(self) -> None:
        """Show or hide messages of abandoned branches (the active branch is always shown)."""
        self.show_abandoned = not self.show_abandoned
        self._shown_changed()
        self.notify("Abandoned branches shown (marked)" if self.show_abandoned
                    else "Showing the active branch only")

    def _step(self, step: int) -> int | None:
        """The next (``step`` 1) or previous (-1) shown message from the cursor; None at either
        end."""
        top = self.cursor
        blocks = self._blocks if step > 0 else reversed(self._blocks)
        for b in blocks:
            if b.height and (b.item.message_index > top if step > 0 else b.item.message_index < top):
                return b.item.message_index
        if step > 0 and self.hi < self.total and not self.gone:
            return self.hi
        if step < 0 and self.lo > 0 and not self.gone:
            return self.lo - 1
        return None

    def action_next_message(self) -> None:
        """Move the cursor to the next shown message and put it at the top (``J``)."""
        target = self._step(+1)
        if target is None:
            self.notify("Last message")
        else:
            self.go_to(target)

    def action_previous_message(self) -> None:
        """Move the cursor to the previous shown message and put it at the top (``K``)."""
        target = self._step(-1)
        if target is None:
            self.notify("First message")
        else:
            self.go_to(target)

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

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_scroll_up(self) -> None:
        self.scroll_up(animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_down(animate=False)


def subagent_lines(item: Item) -> list[Text]:
    """The links from a spawning tool call to its subagent sessions:
    ``→ subagent session agent-XXXX: <title>`` per subagent (``crabsearch show agent-XXXX``, or
    the subagent id as a search query, opens it)."""
    out = []
    for sub in item.subagents:
        line = Text("→ subagent session ", style="italic")
        line.append(printable(sub.get("session_id") or "?"), style="bold")
        title = sub.get("title")
        line.append(f": {printable(title)}" if title else " (not indexed)", style="italic" if title else "dim italic")
        out.append(line)
    return out


def _restyle(strip: Strip, text: str, marks: list[tuple[int, int, Style]]) -> Strip:
    """``strip`` with the characters ``text[a:b]`` of each ``(a, b, style)`` in ``marks`` given
    ``style`` over their own (cells counted for wide characters)."""
    cuts, styles = [], []
    for a, b, style in marks:
        cuts += [cell_len(text[:a]), cell_len(text[:b])]
        styles.append(style)
    pieces = strip.divide(cuts + [strip.cell_length])
    out = []
    for n, piece in enumerate(pieces):
        if n % 2 == 1 and n // 2 < len(styles):
            piece = Strip(Segment.apply_style(piece, post_style=styles[n // 2]), piece.cell_length)
        out.append(piece)
    return Strip.join(out)


def _mark(strip: Strip, spans: list[tuple[int, int]], style: Style) -> Strip:
    """``strip`` with the character ``spans`` of its text in ``style``."""
    return _restyle(strip, strip.text, [(a, b, style) for a, b in spans]) if spans else strip

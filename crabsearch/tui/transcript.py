"""The session view's transcript: a Line-API widget that pages messages in as you scroll.

Technique from ``toolong`` (engineering.md 1.1): only a window of messages ``[lo, hi)`` is ever
loaded (a page is ``PAGE`` messages, read from the transcript by stored offsets through a loader
callable); each loaded message is rendered once to ``Strip``s for the current width; ``render_line``
only indexes into them. Scrolling near either edge loads the next page that way, and scrolling up
keeps the view still by shifting ``scroll_y`` by the lines it prepended. A 200 MB transcript opens
as fast as a small one, because nothing outside the window is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rich.console import Group
from rich.padding import Padding
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..search import Item
from ..text import printable
from .render import ROLE_STYLES, highlighted

PAGE = 40
MARGIN = 20  # lines from an edge at which the next page is loaded
BODY_LINES = {"user": 80, "assistant": 80, "summary": 80}
"""Lines of a message shown before it is folded (``e`` shows every message in full)."""
OTHER_BODY_LINES = 8  # tool calls, tool output, thinking, system notices
FULL_BODY_LINES = 5000


@dataclass
class _Block:
    item: Item
    strips: list[Strip]


class TranscriptView(ScrollView, can_focus=True):
    """Pages of one session's messages. ``load(offset, limit) -> list[Item]`` reads them (the
    screen passes the engine's ``page``); ``total`` is the session's message count; the view opens
    with message ``start`` at the top, and marks ``hit_index`` and the query ``terms``."""

    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("pageup,b", "page_up", "Page up", show=False),
        Binding("pagedown,space", "page_down", "Page down", show=False),
        Binding("home,g", "first", "Start"),
        Binding("end,G", "last", "End"),
        Binding("e", "toggle_full", "Full text"),
        Binding("right_square_bracket", "next_hit", "Next hit"),
        Binding("left_square_bracket", "previous_hit", "Prev hit", show=False),
    ]

    class Position(Message):
        """Posted when the messages in view change: ``index`` (top) to ``last`` of ``total``
        (0-based indexes)."""

        def __init__(self, index: int, last: int, total: int) -> None:
            super().__init__()
            self.index = index
            self.last = last
            self.total = total

    def __init__(self, load: Callable[[int, int], list[Item]], total: int, start: int,
                 hit_index: int | None, terms: list[str], hits: Callable[[], list[int]] | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self._load = load
        self.total = total
        self.start = start
        self.hit_index = hit_index
        self.terms = terms
        self._blocks: list[_Block] = []
        self._lines: list[tuple[int, Strip]] = []  # (block number, strip)
        self._width = 0
        self._top_index: tuple[int, int] | None = None
        self._opened = False
        self.full = False
        self._hits_of = hits
        self._hits: list[int] | None = None

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

    def on_resize(self) -> None:
        region = self.scrollable_content_region
        if not self._opened:
            if region.height:  # open once the real size is known: one page, rendered once
                self._opened = True
                self._open_at(self.start)
            return
        width = max(20, region.width)
        if width != self._width and self._blocks:
            top = self.top_message()
            self._width = width
            for b in self._blocks:
                b.strips = self._render_item(b.item)
            self._relayout()
            self._scroll_to_message(top)

    # -- loading ------------------------------------------------------------------------------

    def _open_at(self, index: int) -> None:
        self._width = max(20, self.scrollable_content_region.width)
        lo = max(0, min(index - 10, self.total - PAGE))
        items = self._load(lo, PAGE)
        self._blocks = [_Block(it, self._render_item(it)) for it in items]
        self._relayout()
        self._scroll_to_message(index)

    def _relayout(self) -> None:
        self._lines = [(n, s) for n, b in enumerate(self._blocks) for s in b.strips]
        self.virtual_size = Size(self._width, len(self._lines))
        self.refresh()

    def _line_of(self, message_index: int) -> int:
        y = 0
        for b in self._blocks:
            if b.item.message_index >= message_index:
                return y
            y += len(b.strips)
        return max(0, y - 1)

    def _scroll_to_message(self, message_index: int) -> None:
        self._set_y(self._line_of(message_index))
        self._after_scroll()

    def _set_y(self, y: int) -> None:
        # Set directly: scroll_to() inside a resize or right after virtual_size changed can be
        # clamped against the old size and silently land at 0.
        self.scroll_target_y = self.scroll_y = min(y, max(0, len(self._lines) - 1))

    def top_message(self) -> int:
        """Index of the message at the top of the view."""
        return self._message_at(int(self.scroll_offset.y))

    def bottom_message(self) -> int:
        """Index of the last message (even partly) in view."""
        return self._message_at(int(self.scroll_offset.y) + self.scrollable_content_region.height - 1)

    def _message_at(self, y: int) -> int:
        if not self._lines:
            return self.start
        n = self._lines[max(0, min(y, len(self._lines) - 1))][0]
        return self._blocks[n].item.message_index

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.call_after_refresh(self._after_scroll)

    def _after_scroll(self) -> None:
        if not self._blocks or not self.scrollable_content_region.height:
            return
        y = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        if y < MARGIN and self.lo > 0:
            offset = max(0, self.lo - PAGE)
            items = self._load(offset, self.lo - offset)
            new = [_Block(it, self._render_item(it)) for it in items if it.message_index < self.lo]
            added = sum(len(b.strips) for b in new)
            self._blocks[:0] = new
            self._relayout()
            self._set_y(y + added)
        elif y + height > len(self._lines) - MARGIN and self.hi < self.total:
            items = self._load(self.hi, PAGE)
            self._blocks.extend(_Block(it, self._render_item(it)) for it in items if it.message_index >= self.hi)
            if not items:  # the index claims more messages than it holds: stop asking
                self.total = self.hi
            self._relayout()
        seen = (self.top_message(), self.bottom_message())
        if seen != self._top_index:
            self._top_index = seen
            self.post_message(self.Position(seen[0], seen[1], self.total))

    # -- rendering ----------------------------------------------------------------------------

    def _render_item(self, item: Item) -> list[Strip]:
        is_hit = item.message_index == self.hit_index
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append("▶ " if is_hit else "  ", style="bold cyan")
        header.append(f"#{item.message_index + 1} ", style="dim")
        header.append(item.label, style=ROLE_STYLES.get(item.role, ""))
        if item.timestamp:
            header.append("  " + item.timestamp.strftime("%Y-%m-%d %H:%M:%S UTC"), style="dim")
        lines = printable(item.text).splitlines() or [""]
        cap = FULL_BODY_LINES if self.full else BODY_LINES.get(item.label, OTHER_BODY_LINES)
        more = len(lines) - cap
        body_text = "\n".join(lines[:cap])
        if not self.full and len(body_text) > cap * self._width:  # one huge line (minified, base64)
            more = max(more, 1)
            body_text = body_text[: cap * self._width]
        body = highlighted(body_text, self.terms, style="" if item.role in ("user", "assistant") else "dim")
        if more > 0:
            body.append(f"\n… {more} more lines (e: show full text)", style="italic dim")
        console = self.app.console
        options = console.options.update_width(self._width).update(highlight=False)
        base = self.rich_style + Style(bgcolor="grey23") if is_hit else self.rich_style
        rendered = console.render_lines(Group(header, Padding(body, (0, 1, 0, 4))), options,
                                        style=base, pad=True)
        return [Strip(line) for line in rendered] + [Strip.blank(self._width, self.rich_style)]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        n = y + scroll_y
        width = self.scrollable_content_region.width
        if n >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        strip = self._lines[n][1]
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    # -- actions ------------------------------------------------------------------------------

    def action_first(self) -> None:
        """Go to the first message (loading its page when it is not loaded)."""
        if self.lo > 0:
            self._open_at(0)
        self.scroll_home(animate=False, immediate=True)

    def action_last(self) -> None:
        """Go to the last message (loading the last page when it is not loaded)."""
        if self.hi < self.total:
            self._open_at(self.total - 1)
        self.scroll_end(animate=False, immediate=True)

    def go_to(self, message_index: int) -> None:
        """Put message ``message_index`` at the top (loading its page when it is not loaded)."""
        if not (self.lo <= message_index < self.hi):
            self._open_at(message_index)
        else:
            self._scroll_to_message(message_index)

    def _jump(self, step: int) -> None:
        if self._hits_of is None:
            return
        if self._hits is None:
            self._hits = self._hits_of()
        top = self.top_message()
        later = [i for i in self._hits if (i > top if step > 0 else i < top)]
        if not later:
            self.notify("No more matches " + ("below" if step > 0 else "above"))
            return
        self.go_to(later[0] if step > 0 else later[-1])

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

    def action_toggle_full(self) -> None:
        """Show long messages in full, or folded again (the message at the top stays put)."""
        self.full = not self.full
        top = self.top_message()
        for b in self._blocks:
            b.strips = self._render_item(b.item)
        self._relayout()
        self._scroll_to_message(top)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_scroll_up(self) -> None:
        self.scroll_up(animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_down(animate=False)


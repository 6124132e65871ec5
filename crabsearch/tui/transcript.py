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
FIND_PAGE = 200  # messages read per step while `/` find scans the session
TOOL_MODES = ("lines", "full", "hidden")
"""How tool calls and tool output show: first lines (folded), in full, or not at all (``t``)."""
FIND_STYLE = "bold black on dark_orange"
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
        Binding("home,g", "first", "Start", show=False, id="first"),
        Binding("end,G", "last", "End", show=False, id="last"),
        Binding("e", "toggle_full", "Full text", show=False, id="full-text"),
        Binding("right_square_bracket", "next_hit", "Next hit", id="next-hit"),
        Binding("left_square_bracket", "previous_hit", "Prev hit", show=False, id="previous-hit"),
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
        self.tool_mode = "lines"
        self.show_thinking = True
        self.show_abandoned = False
        self.show_sidechains = True
        """Subagent turns written inline into the transcript (``s`` hides them)."""
        """Messages off the active branch (a rewind replaced them) are hidden unless this is on
        (``a``); the screen turns it on when the hit itself is on such a branch."""
        self.find_text = ""
        self._finding = False
        self.cursor = start
        """The current message (marked; ``J``/``K`` move it; copy and editor act on it)."""

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
        height = self.scrollable_content_region.height
        for _ in range(8):  # hidden messages add no lines: keep loading until the view is full
            y = int(self.scroll_offset.y)
            if y < MARGIN and self.lo > 0:
                offset = max(0, self.lo - PAGE)
                items = self._load(offset, self.lo - offset)
                new = [_Block(it, self._render_item(it)) for it in items if it.message_index < self.lo]
                if not new:
                    break
                added = sum(len(b.strips) for b in new)
                self._blocks[:0] = new
                self._relayout()
                self._set_y(y + added)
            elif y + height > len(self._lines) - MARGIN and self.hi < self.total:
                items = self._load(self.hi, PAGE)
                self._blocks.extend(_Block(it, self._render_item(it)) for it in items
                                    if it.message_index >= self.hi)
                if not items:  # the index claims more messages than it holds: stop asking
                    self.total = self.hi
                self._relayout()
            else:
                break
        seen = (self.top_message(), self.bottom_message())
        if not seen[0] <= self.cursor <= seen[1]:  # scrolled away: the cursor follows the view
            self._set_cursor(seen[0])
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
        if self.tool_mode == "hidden" and _is_tool(item):
            return False
        return True

    def _render_item(self, item: Item) -> list[Strip]:
        if not self.visible(item):
            return []
        is_hit = item.message_index == self.hit_index
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append("▶ " if is_hit else "  ", style="bold cyan")
        at_cursor = item.message_index == self.cursor
        header.append(f"#{item.message_index + 1}", style="bold reverse" if at_cursor else "dim")
        header.append(" ")
        header.append(printable(item.label), style=ROLE_STYLES.get(item.role, ""))
        if item.timestamp:
            header.append("  " + item.timestamp.strftime("%Y-%m-%d %H:%M:%S UTC"), style="dim")
        if item.abandoned:  # off the active branch (issue 5): still shown, marked
            header.append("  abandoned branch", style="dim italic")
        if item.sidechain:
            header.append("  subagent turn", style="dim italic")
        lines = printable(item.text).splitlines() or [""]
        full = self.full or (self.tool_mode == "full" and _is_tool(item))
        cap = FULL_BODY_LINES if full else BODY_LINES.get(item.label, OTHER_BODY_LINES)
        more = len(lines) - cap
        body_text = "\n".join(lines[:cap])
        if not full and len(body_text) > cap * self._width:  # one huge line (minified, base64)
            more = max(more, 1)
            body_text = body_text[: cap * self._width]
        prose = item.role in ("user", "assistant") and item.label != "thinking" and not _is_tool(item)
        body = highlighted(body_text, self.terms, style="" if prose else "dim")
        if prose:
            _style_code(body, self.app.current_theme.dark)
        if self.find_text:
            body.highlight_words([self.find_text], FIND_STYLE, case_sensitive=False)
        if more > 0:
            hint = "t: tools in full" if _is_tool(item) and not self.full else "e: show full text"
            body.append(f"\n… {more} more lines ({hint})", style="italic dim")
        console = self.app.console
        options = console.options.update_width(self._width).update(highlight=False)
        hit_bg = "grey23" if self.app.current_theme.dark else "grey85"
        base = self.rich_style + Style(bgcolor=hit_bg) if is_hit else self.rich_style
        parts = [header, Padding(body, (0, 1, 0, 4))]
        parts += [Padding(line, (0, 1, 0, 4)) for line in subagent_lines(item)]
        rendered = console.render_lines(Group(*parts), options, style=base, pad=True)
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
        self._set_cursor(0)
        if self.lo > 0:
            self._open_at(0)
        self.scroll_home(animate=False, immediate=True)

    def action_last(self) -> None:
        """Go to the last message (loading the last page when it is not loaded)."""
        self._set_cursor(max(0, self.total - 1))
        if self.hi < self.total:
            self._open_at(self.total - 1)
        self.scroll_end(animate=False, immediate=True)

    def _set_cursor(self, message_index: int) -> None:
        if message_index == self.cursor:
            return
        old, self.cursor = self.cursor, message_index
        changed = False
        for b in self._blocks:
            if b.item.message_index in (old, message_index):
                b.strips = self._render_item(b.item)
                changed = True
        if changed:
            self._relayout()

    def go_to(self, message_index: int) -> None:
        """Make message ``message_index`` the cursor and put it at the top (loading its page when
        it is not loaded)."""
        self._set_cursor(message_index)
        if not (self.lo <= message_index < self.hi):
            self._open_at(message_index)
        else:
            self._scroll_to_message(message_index)

    def _jump(self, step: int) -> None:
        if self._hits_of is None:
            return
        if self._hits is None:
            self._hits = self._hits_of()
        top = self.cursor
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

    def rerender(self) -> None:
        """Render the loaded messages again (after a toggle), keeping the top message in place."""
        top = self.top_message()
        for b in self._blocks:
            b.strips = self._render_item(b.item)
        self._relayout()
        self._top_index = None  # post Position again: the screen's status line names the toggles
        self._scroll_to_message(top)

    def action_toggle_full(self) -> None:
        """Show long messages in full, or folded again (the message at the top stays put)."""
        self.full = not self.full
        self.rerender()
        self.notify("Long messages in full" if self.full else "Long messages folded again")

    def action_cycle_tools(self) -> None:
        """Tool calls and output: first lines -> in full -> hidden -> first lines."""
        self.tool_mode = TOOL_MODES[(TOOL_MODES.index(self.tool_mode) + 1) % len(TOOL_MODES)]
        self.rerender()
        self.notify({"lines": "Tool calls and output: first lines", "full": "Tool calls and output: in full",
                     "hidden": "Tool calls and output: hidden"}[self.tool_mode])

    def action_toggle_thinking(self) -> None:
        """Show or hide the model's thinking."""
        self.show_thinking = not self.show_thinking
        self.rerender()
        self.notify("Thinking shown" if self.show_thinking else "Thinking hidden")

    def action_toggle_sidechains(self) -> None:
        """Show or hide subagent turns written inline into this transcript."""
        self.show_sidechains = not self.show_sidechains
        self.rerender()
        self.notify("Subagent turns shown" if self.show_sidechains else "Subagent turns hidden")

    def action_toggle_abandoned(self) -> None:
        """Show or hide messages of abandoned branches (the active branch is always shown)."""
        self.show_abandoned = not self.show_abandoned
        self.rerender()
        self.notify("Abandoned branches shown (marked)" if self.show_abandoned
                    else "Showing the active branch only")

    def _step(self, step: int) -> int | None:
        """The next (``step`` 1) or previous (-1) shown message from the cursor; None at either
        end."""
        top = self.cursor
        blocks = self._blocks if step > 0 else reversed(self._blocks)
        for b in blocks:
            if b.strips and (b.item.message_index > top if step > 0 else b.item.message_index < top):
                return b.item.message_index
        if step > 0 and self.hi < self.total:
            return self.hi
        if step < 0 and self.lo > 0:
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

    def find(self, text: str) -> None:
        """Highlight every occurrence of ``text`` (any case) and jump to the next message
        holding it; an empty ``text`` clears the find."""
        self.find_text = text
        self.rerender()
        if text:
            self._find(+1, include_top=True)

    def action_find_next(self) -> None:
        """Jump to the next message holding the find text (wraps to the start)."""
        self._find(+1)

    def action_find_previous(self) -> None:
        """Jump to the previous message holding the find text (wraps to the end)."""
        self._find(-1)

    def _find(self, step: int, include_top: bool = False) -> None:
        if not self.find_text:
            self.notify("Press / to find text in this session")
            return
        if self._finding:
            return
        self._finding = True
        start = self.cursor + (0 if include_top else step)
        self.run_worker(lambda: self._scan(self.find_text, start, step), thread=True, group="find",
                        exclusive=True)

    def _scan(self, needle: str, start: int, step: int) -> None:
        """Worker: read the session in pages from ``start`` in direction ``step`` (wrapping once)
        until a shown message holds ``needle`` (any case); one page in memory at a time."""
        found, wrapped = None, False
        try:
            found, wrapped = self._scan_pages(needle.casefold(), start, step)
        finally:
            self.app.call_from_thread(self._found, needle, found, wrapped, step)

    def _scan_pages(self, want: str, start: int, step: int) -> tuple[int | None, bool]:
        total = self.total
        if step > 0:
            passes = [(start, total, False), (0, min(start, total), True)]
        else:
            passes = [(start, -1, False), (total - 1, start, True)]
        for lo, hi, wrapped in passes:
            i = lo
            while i < hi if step > 0 else i > hi:
                off = i if step > 0 else max(hi + 1, i - FIND_PAGE + 1)
                n = min(FIND_PAGE, hi - i) if step > 0 else i - off + 1
                items = self._load(off, n)
                if not items:
                    break
                for it in items if step > 0 else reversed(items):
                    if want in it.text.casefold() and self.visible(it):
                        return it.message_index, wrapped
                i = off + n if step > 0 else off - 1
        return None, False

    def _found(self, needle: str, index: int | None, wrapped: bool, step: int) -> None:
        self._finding = False
        if index is None:
            self.notify(f"“{printable(needle)}” is not in this session", severity="warning")
            return
        if wrapped:
            self.notify("Reached the end; continued from the start" if step > 0
                        else "Reached the start; continued from the end")
        self.go_to(index)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_scroll_up(self) -> None:
        self.scroll_up(animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_down(animate=False)



def subagent_lines(item: Item) -> list[Text]:
    """The links from a spawning tool call to its subagent sessions (issue 5):
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


def _is_tool(item: Item) -> bool:
    """A tool call or tool output (what ``t`` folds, expands or hides)."""
    return item.role == "tool" or item.label.startswith("tool-call:")


def _style_code(body: Text, dark: bool) -> None:
    """Give fenced code blocks (```` ``` ```` lines and what is between them) a background, so
    code stands apart from prose. Only styles are added: the text is shown exactly as written."""
    style = "on grey15" if dark else "on grey93"
    inside, start, pos = False, 0, 0
    for line in body.plain.split("\n"):
        end = pos + len(line)
        if line.lstrip().startswith("```"):
            if inside:
                body.stylize(style, start, end)
            else:
                start = pos
            inside = not inside
        pos = end + 1
    if inside:
        body.stylize(style, start, len(body.plain))

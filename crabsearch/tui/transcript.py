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

from bisect import bisect_right
from typing import Callable

from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..hits import GONE
from ..search import Item, SkippedLine
from .messageview import is_tool
from .sessionfind import FindInSession
from .sessionlines import Block, MessageLines

PAGE = 40
MARGIN = 20  # lines from an edge at which the next page is loaded
TOOL_MODES = ("lines", "full", "hidden")
"""How tool calls and tool output show: one line / first lines, in full, or not at all (``t``)."""
BODIES_KEPT = 600
"""Rendered message bodies kept (per view): a few screens in each direction at a few widths."""


HITS = Binding.Group("Hits", compact=True)


class TranscriptView(FindInSession, MessageLines, ScrollView, can_focus=True):
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
        self._blocks: list[Block] = []
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

    def _block(self, item: Item) -> Block:
        return Block(item, None, self._estimate(item))

    def _loaded(self, index: int) -> Block | None:
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

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_scroll_up(self) -> None:
        self.scroll_up(animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_down(animate=False)

"""How the session view draws one message: its block of lines (the placeholders of lines skipped
before it, a header, the body rendered by ``messageview``, a blank line), the query's terms and
the find text marked, bodies cached by message, width and look."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Group
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ..search import Engine, Item, SkippedLine
from ..text import printable
from . import messageview
from .messageview import Look, is_tool
from .render import HIGHLIGHT, ROLE_STYLES

TERM_STYLE = Style.parse(HIGHLIGHT)


@dataclass
class Block:
    """A loaded message: its lines once rendered (the placeholders of lines skipped before it,
    header, body, a blank line), else None; its height: the number of those lines, or the
    estimate until it is rendered; ``lead``: the placeholder lines before its header."""

    item: Item
    strips: list[Strip] | None = None
    height: int = 0
    lead: int = 0


class MessageLines:
    """The drawing of a ``TranscriptView``'s message blocks (a mix-in: it reads the view's
    width, toggles, cursor, match, find state and caches, and renders with the app's console)."""

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

    def _render_block(self, block: Block) -> None:
        """Render ``block``'s message (header, body from the cache when it is there, a blank
        line), query terms and find matches highlighted."""
        item = block.item
        if not self.visible(item):
            block.strips, block.height = [], 0
            return
        body = self._body(item)
        if self.terms:
            body = [mark(strip, Engine.spans(strip.text, self.terms), TERM_STYLE) for strip in body]
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


def restyle(strip: Strip, text: str, marks: list[tuple[int, int, Style]]) -> Strip:
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


def mark(strip: Strip, spans: list[tuple[int, int]], style: Style) -> Strip:
    """``strip`` with the character ``spans`` of its text in ``style``."""
    return restyle(strip, strip.text, [(a, b, style) for a, b in spans]) if spans else strip

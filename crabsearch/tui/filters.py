"""The filter bar: filters live in the query text (``agent:codex project:api since:7d``), so the
box, the chips and the pickers always agree. Pure text helpers first, then the widgets.

* :class:`QueryInput`: the search box; Tab completes ``agent:`` / ``project:`` values (and the
  filter names themselves) from what the index holds, cycling through the candidates.
* :class:`FilterChips`: one chip per filter in the query (struck out when the search ignores
  it); clicking a chip removes it.
* :class:`PickerScreen`: pick a value (F3 agent, F4 project, F5 date) from a list you can narrow
  by typing; "any" removes the filter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from rich.cells import cell_len, get_character_cell_size
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.expand_tabs import expand_tabs_inline
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ..filters import DATE_CHOICES, FILTER_KEYS, FILTERS, Facts  # noqa: F401 - DATE_CHOICES: the F5 picker's
from ..query import parse
from ..text import printable

_TOKEN = re.compile(r'-?"[^"]*"?|\w+:"[^"]*"?|\S+')


@dataclass
class Token:
    """A whitespace-separated token of the query text: ``text[start:end]``; ``key``/``value``
    set when it is a filter (``agent:codex``)."""

    start: int
    end: int
    text: str
    key: str | None = None
    value: str = ""


def tokens(text: str, only_filters: bool = False) -> list[Token]:
    """The tokens of ``text`` in order (quoted phrases are one token); ``only_filters``: only
    those that are filters (``key:value``: the others are not made, so a long text's every key
    costs a scan in C, not a ``Token`` per word)."""
    out = []
    for m in _TOKEN.finditer(text):
        if only_filters and ":" not in m.group():
            continue
        tok = Token(m.start(), m.end(), m.group())
        key, sep, value = tok.text.partition(":")
        if sep and key.lower() in FILTER_KEYS and not tok.text.startswith(('"', "-")):
            tok.key, tok.value = key.lower(), value.strip('"')
        out.append(tok)
    return out


def filters(text: str) -> list[Token]:
    """The filter tokens of ``text`` that have a value (what the chips show)."""
    return [t for t in tokens(text, only_filters=True) if t.key and t.value]


def set_filter(text: str, key: str, value: str | None) -> str:
    """``text`` with its ``key:`` filter(s) replaced by ``key:value`` (added at the end when
    there was none); ``value`` None or ``""`` removes them. Other text is kept as typed."""
    parts = [t.text for t in tokens(text) if t.key != key]
    if value:
        parts.append(f"{key}:{quote(value)}")
    return " ".join(parts) + (" " if parts else "")


def quote(value: str) -> str:
    """A filter value as the query language takes it: quoted when it holds a space."""
    return f'"{value}"' if any(c.isspace() for c in value) else value


def remove_token(text: str, start: int) -> str:
    """``text`` without the token that starts at ``start``, and without the filters that are the
    same one again (key and value): the chips show a repeated filter once, so removing its chip
    removes every copy (else the chip would stay, standing for the next one)."""
    toks = tokens(text)
    gone = next((t for t in toks if t.start == start), None)
    same = (gone.key, gone.value) if gone is not None and gone.key and gone.value else None
    return " ".join(t.text for t in toks if t.start != start and (same is None or (t.key, t.value) != same))


def means_nothing(tok: Token, agents: tuple[str, ...]) -> bool:
    """True when the filter ``tok`` means nothing, so the search leaves it out (see
    :func:`check_filters`): no value, or one ``parse`` ignores (an unknown agent, a date that is
    no date, a role or place that does not exist)."""
    return not tok.value.strip() or bool(parse(tok.text, agents=agents).notes)


RECENT_NOTE = "Showing the recent sessions."
"""The problems' last line when the filters that mean nothing were all the query had."""


def check_filters(text: str, agents: tuple[str, ...]) -> tuple[str, list[str]]:
    """``(text without the filters that mean nothing, one line per such filter)``: each line
    (:func:`filter_problem`) says what is wrong in full and what is valid. An unknown agent, a
    date that is no date, a role or place that does not exist, or a filter name with no value
    (``agent:``) is dropped, so the rest of the query still gets an answer (recent sessions when
    nothing else is left: :data:`RECENT_NOTE` ends the lines then)."""
    kept, problems = [], []
    for tok in tokens(text):
        if tok.key is None or not means_nothing(tok, agents):
            kept.append(tok.text)
        else:
            problems.append(filter_problem(tok, agents))
    cleaned = " ".join(kept)
    if problems and not cleaned.strip():
        problems.append(RECENT_NOTE)
    return cleaned, problems


_NOW = datetime(2000, 1, 1).astimezone()
"""A clock for :func:`filter_problem`: whether a value is a date does not depend on the day."""


def filter_problem(tok: Token, agents: tuple[str, ...]) -> str:
    """What is wrong with the filter ``tok`` that means nothing (:func:`means_nothing`), and
    what is valid, in one line: its registry entry's problem line (``crabsearch.filters``: the
    command line and MCP say the same, but for the list of agents, which its picker shows), then
    the key of its picker."""
    f = FILTERS[tok.key]
    line = f.problem(printable(tok.text), tok.value.strip(), Facts(agents, _NOW), show=printable, names=False)
    return (line or f"{printable(tok.text)}: ignored") + (f" ({f.picker} picks one)." if f.picker else ".")


def typed_filter(text: str, agents: tuple[str, ...]) -> Token | None:
    """The filter at the end of ``text`` when nothing follows it, not even a space, and what it
    holds so far can still become a valid filter (:func:`could_become_valid`): one still being
    typed or chosen (``agent:`` that Tab put there, its value next; ``since:20``); else None."""
    if not text or text[-1].isspace():
        return None
    last = tokens(text)[-1:]
    if not last or not last[0].key or last[0].end != len(text):
        return None
    return last[0] if could_become_valid(last[0], agents) else None


def could_become_valid(tok: Token, agents: tuple[str, ...]) -> bool:
    """True when more typing can make the filter ``tok`` a valid one: no value yet, or a value
    that starts a valid one (``agent:cl``, ``role:as``, ``in:to``, ``since:2026-0``, ``since:yes``:
    its entry's ``could_be``); ``agent:vim`` cannot."""
    value = tok.value.strip().lower()
    return not value or FILTERS[tok.key].could_be(value, Facts(agents, _NOW))


def completions(text: str, cursor: int, facets: dict[str, list[tuple[str, int]]]) -> tuple[int, int, list[str]]:
    """What Tab can put at ``cursor``: ``(start, end, candidates)``, the span of the token being
    completed and its replacements (most sessions first). A partial filter name completes to
    ``name:``; ``agent:co`` to the agents and ``project:we`` to the projects (last folder)
    starting with what is typed. No candidates when the cursor is not in such a token."""
    tok = next((t for t in tokens(text) if t.start <= cursor <= t.end), None)
    if tok is None or tok.text.startswith(('"', "-")):
        return cursor, cursor, []
    key, sep, value = tok.text.partition(":")
    key = key.lower()
    if not sep:
        names = [f"{k}:" for k in FILTER_KEYS if k.startswith(key.lower())] if len(key) >= 2 else []
        return tok.start, tok.end, names
    if key not in FILTERS:
        return cursor, cursor, []
    source = FILTERS[key].complete  # a facet of the index, or the values themselves
    pool = [name for name, _ in facets.get(source, [])] if isinstance(source, str) else list(source)
    low = value.strip('"').lower()
    found = [f"{key}:{quote(name)}" for name in pool if name.lower().startswith(low) and name.lower() != low]
    if not found and low:  # no prefix match: anything containing it
        found = [f"{key}:{quote(name)}" for name in pool if low in name.lower() and name.lower() != low]
    return tok.start, tok.end, found


class SafeInput(Input):
    """An Input that draws its value through :func:`printable`: a value put there by a picker
    or Tab completion (a project name from a transcript) or pasted may hold ESC sequences and
    bidi controls, which Textual's Input would send to the terminal as they are. The value itself
    is kept (a filter still matches the project); only what is drawn changes, one character for
    one (``printable(..., tabs=True)``: ESC -> ␛, one cell each), so the cursor stays right."""

    virtual_size = Reactive(Size(0, 0), layout=False)
    """Input's watcher sets it at every key (the text's width); as Widget's reactive it asked for
    a layout of the whole screen each time. The box's own size never depends on it, and
    scrolling reads it as it is: a repaint is enough."""

    async def _on_key(self, event: events.Key) -> None:
        """Each key acts where the focus is when its turn comes, in the order the keys came
        (automation, a fast typist, a paste without bracketed paste).
        Textual ran a key's bindings only once the key had bubbled up to the app, through each
        ancestor's queue, while the keys behind it were handled in the box meanwhile: Backspace
        deleted a character typed after it (``snapx``, Backspace, ``shot`` gave ``snapxsho``).
        So a key that is not text runs its bindings here (the box's own first, then the
        screen's and the app's: Textual's binding chain), and a key that waited here while an
        earlier one moved the focus (Down, into the results) goes where the focus went (Enter
        right after Down expands the first row)."""
        focused = self.app.focused
        if focused is not None and focused is not self:
            event.stop()
            event.prevent_default()  # Input's own handler (text) is not called
            focused.post_message(events.Key(event.key, event.character))
            return
        if not event.is_printable and await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()

    @property
    def _shown(self) -> str:
        return printable(self.value, tabs=True)

    @property
    def _value(self) -> Text:
        if self.password:
            return super()._value
        text = Text(self._shown, no_wrap=True, overflow="ignore", end="")
        return self.highlighter(text) if self.highlighter is not None else text

    def _position_to_cell(self, position: int) -> int:
        return cell_len(expand_tabs_inline(self._shown[:position], 4))

    def _cell_offset_to_index(self, offset: int) -> int:
        shown = self._shown
        cells = 0
        offset += self.scroll_offset[0]
        for index, char in enumerate(shown):
            width = get_character_cell_size(char)
            if cells <= offset < cells + width:
                return index
            cells += width
        return max(0, min(offset, len(shown)))


class QueryInput(SafeInput):
    """The search box. Tab completes filter names and values (see :func:`completions`); pressing
    it again cycles through the candidates; with nothing to complete, Tab moves to the results.
    ``facets()`` returns what the index holds (``Engine.facets``)."""

    BINDINGS = [Binding("tab", "complete", "Complete", show=False)]

    class NothingToComplete(Message):
        """Tab with nothing to complete (the screen moves into the results)."""

    def __init__(self, facets: Callable[[], dict], **kwargs) -> None:
        super().__init__(**kwargs)
        self._facets = facets
        self._cycle: tuple[str, int, int, list[str], int] | None = None  # text, start, cursor, candidates, n

    def _on_paste(self, event) -> None:
        """A pasted text of several lines is one query, its lines joined by spaces (Input kept
        the first line and dropped the others silently). Textual calls Input's own handler
        after this one (each class's in turn), with the joined text."""
        if event.text and ("\n" in event.text or "\r" in event.text):
            event.text = " ".join(line.strip() for line in event.text.splitlines() if line.strip())

    def action_complete(self) -> None:
        """Complete the token at the cursor, or cycle to the next candidate."""
        cycle = self._cycle
        if cycle and cycle[0] == self.value and cycle[2] == self.cursor_position:
            _, start, _, found, n = cycle
            n = (n + 1) % len(found)
            prev_end = self.cursor_position
        else:
            start, prev_end, found = completions(self.value, self.cursor_position, self._facets())
            n = 0
            if not found:
                self._cycle = None
                self.post_message(self.NothingToComplete())
                return
        choice = found[n]
        tail = self.value[prev_end:]
        spacer = "" if choice.endswith(":") or tail.startswith(" ") else " "
        self.value = self.value[:start] + choice + spacer + tail
        self.cursor_position = start + len(choice) + len(spacer)
        # A lone filter name (`agent:`) is done: the next Tab completes its values.
        single_name = len(found) == 1 and choice.endswith(":")
        self._cycle = None if single_name else (self.value, start, self.cursor_position, found, n)
        if len(found) > 1:
            self.app.notify(f"{n + 1} of {len(found)}: Tab for the next", timeout=2)


class FilterChips(Widget):
    """One chip per filter in the query (``agent:codex ✕``); clicking one posts :class:`Remove`.
    Laid out at the width there is, whole chips only: chips that do not fit wrap onto another
    row (under the first chip), the hint after them shortens or goes, and a chip wider than a
    whole row shows its value shortened in the middle with ``…``, never cut off at the edge.
    A filter the search ignores (:func:`means_nothing`; ``agents``: the valid agents, as
    :func:`check_filters` takes them) is struck out, and the hint says so: it is still in the
    query, so it stays a chip that removes it, and the note under the status says why."""

    COMPONENT_CLASSES = {"filter-chips--chip", "filter-chips--hover", "filter-chips--ignored"}
    LABEL = "filters:"
    HINTS = ("click: remove · F3 F4 F5: pick", "click: remove")
    IGNORED_HINT = "struck out: ignored"

    class Remove(Message):
        """Remove the filter token that starts at ``start`` in the query text."""

        def __init__(self, start: int) -> None:
            super().__init__()
            self.start = start

    _shown: tuple = ()
    _hover: int | None = None

    def __init__(self, *, agents: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.agents = agents

    def show(self, text: str) -> None:
        """Show the chips of the filters in ``text`` (the bar hides when there are none). Called
        on every keystroke: laid out again only when the filters changed. A filter written more
        than once (same key and value) is one chip, its first copy's: ten ``agent:codex`` are
        one filter, and :func:`remove_token` removes them all."""
        found, seen = [], set()
        for t in filters(text):
            if (t.key, t.value) not in seen:
                seen.add((t.key, t.value))
                found.append(t)
        key = tuple((t.start, printable(t.text), means_nothing(t, self.agents)) for t in found)
        if key == self._shown:
            return
        self._shown, self._hover = key, None
        self.display = bool(found)
        self.refresh(layout=True)

    def rows(self, width: int) -> list[list[tuple[int, str, str, int | None]]]:
        """The layout at ``width`` cells: rows of ``(column, text, kind, start)`` pieces, kind
        ``label``, ``chip`` (``start``: its token's place in the query) or ``hint``."""
        label = (0, self.LABEL, "label", None)
        indent = cell_len(self.LABEL) + 1
        rows, x = [[label]], indent
        for start, text, _ in self._shown:
            room = max(1, width - indent)
            chip = _shorten(f" {text} ✕ ", room)
            w = cell_len(chip)
            if x + w > width and x > indent:  # the next row, under the first chip
                rows.append([])
                x = indent
            rows[-1].append((x, chip, "chip", start))
            x += w + 1
        hints = self.HINTS
        if any(bad for _, _, bad in self._shown):
            hints = tuple(f"{self.IGNORED_HINT} · {h}" for h in hints) + hints
        hint = next((h for h in hints if x + cell_len(h) <= width), None)
        if hint:
            rows[-1].append((x, hint, "hint", None))
        return rows

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self.rows(width)) if self._shown else 0

    def render(self) -> Text:
        chip_style = self.get_component_rich_style("filter-chips--chip")
        hover_style = self.get_component_rich_style("filter-chips--hover")
        ignored_style = self.get_component_rich_style("filter-chips--ignored")
        ignored = {start for start, _, bad in self._shown if bad}
        lines = []
        for row in self.rows(self.content_region.width or self.size.width):
            t = Text(no_wrap=True, overflow="crop", end="")
            for x, text, kind, start in row:
                t.append(" " * (x - t.cell_len))
                if kind == "chip":
                    bad = start in ignored
                    back = hover_style if start == self._hover else ignored_style if bad else chip_style
                    value, cross, after = text.rpartition("✕") if "✕" in text else (text, "", "")
                    t.append(value, back + Style(bold=True, strike=bad))
                    t.append(cross + after, back + Style(dim=True))
                else:
                    t.append(text, "dim")
            lines.append(t)
        return Text("\n", no_wrap=True, end="").join(lines)

    def chip_at(self, x: int, y: int) -> int | None:
        """The query place (``start``) of the chip at content cell ``(x, y)``, or None."""
        rows = self.rows(self.content_region.width or self.size.width)
        if 0 <= y < len(rows):
            for col, text, kind, start in rows[y]:
                if kind == "chip" and col <= x < col + cell_len(text):
                    return start
        return None

    def chip_offset(self, n: int) -> tuple[int, int]:
        """Where the ``n``-th chip is, relative to the widget (for a click)."""
        rows = self.rows(self.content_region.width or self.size.width)
        chips = [(col, y) for y, row in enumerate(rows) for col, _, kind, _ in row if kind == "chip"]
        col, y = chips[n]
        return col + 1 + self.styles.padding.left, y + self.styles.padding.top

    def on_click(self, event) -> None:
        at = event.get_content_offset(self)
        start = self.chip_at(at.x, at.y) if at is not None else None
        if start is not None:
            self.post_message(self.Remove(start))

    def on_mouse_move(self, event) -> None:
        at = event.get_content_offset(self)
        hover = self.chip_at(at.x, at.y) if at is not None else None
        if hover != self._hover:
            self._hover = hover
            self.refresh()

    def on_leave(self) -> None:
        if self._hover is not None:
            self._hover = None
            self.refresh()


def _shorten(chip: str, room: int) -> str:
    """``chip`` (`` key:value ✕ ``) in at most ``room`` cells: the value's middle gives way to
    ``…``, its start and its end (a path's last folder, the ✕) kept."""
    if cell_len(chip) <= room:
        return chip
    head = chip[:max(1, (room - 1) // 2)]
    tail = chip[len(head):]
    while tail and cell_len(head) + 1 + cell_len(tail) > room:
        tail = tail[1:]
    return head + "…" + tail


class NarrowInput(SafeInput):
    """A picker's narrowing box: Home and End move in the list, as Up, Down, PageUp and PageDown
    do (Input's own moved the text cursor, so End then Enter picked the option still highlighted,
    not the last); Ctrl+A and Ctrl+E still move the text cursor."""

    BINDINGS = [Binding("home", "screen.list('first')", show=False),
                Binding("end", "screen.list('last')", show=False)]


class PickerScreen(ModalScreen[str | None]):
    """Pick one of ``choices`` (``[(value, label)]``); typing narrows the list; Up, Down, Home,
    End, PageUp and PageDown move in it; Enter picks, Esc cancels (None). The first entry is
    "any" (value ``""``: remove the filter)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("down", "down", show=False),
                Binding("up", "up", show=False), Binding("pageup", "list('page_up')", show=False),
                Binding("pagedown", "list('page_down')", show=False)]

    _narrowed: str | None = None  # the box's text the list was last narrowed to

    LIST_ROWS = 16
    """Rows of the list at most; fewer on a screen with no room for them (:meth:`on_resize`)."""

    def __init__(self, title: str, choices: list[tuple[str, str]], current: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.choices = [("", "any (remove this filter)")] + choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel picker"):
            yield Static(Text(self.title_text, style="bold"), classes="panel-title")
            yield NarrowInput(placeholder="type to narrow…", id="narrow")
            yield OptionList(id="choices")
            yield Static(Text("Enter: pick · Esc: cancel", style="dim"))

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#narrow", Input).focus()

    def on_resize(self) -> None:
        """Fit the dialog to the screen: the list gets the rows the panel's height leaves it
        (:attr:`LIST_ROWS` at most), so the hint under it stays on screen and the list scrolls to
        its highlighted option (End never highlights an option below the screen's edge, for
        Enter to pick unseen). Measured after the screen's layout: the title may wrap on a
        narrow screen."""
        panel = self.query_one(".picker")
        options = self.query_one("#choices", OptionList)
        chrome = panel.styles.gutter.height + sum(w.outer_size.height for w in panel.children if w is not options)
        most = panel.styles.max_height.resolve(self.size, self.size) if panel.styles.max_height else self.size.height
        options.styles.max_height = max(1, min(self.LIST_ROWS, int(most) - chrome))
        options.call_after_refresh(options.scroll_to_highlight)  # OptionList does not on a resize

    def _fill(self, narrow: str) -> None:
        self._narrowed = narrow
        options = self.query_one("#choices", OptionList)
        low = narrow.lower()
        shown = [(v, label) for v, label in self.choices if not low or low in label.lower() or low in v.lower()]
        options.set_options([Option(Text(printable(label)), id=f"v:{v}") for v, label in shown])
        if shown:
            at = next((i for i, (v, _) in enumerate(shown) if self.current and v == self.current), 0)
            options.highlighted = at if not low else 0

    @on(Input.Changed, "#narrow")
    def _narrow(self) -> None:
        """Narrow the list to the box's text as it is now, not the message's: in a burst of
        keys (``big`` then End) the move runs as its key comes, before the messages of the
        letters typed ahead of it, and narrows first; those messages then change nothing."""
        value = self.query_one("#narrow", Input).value
        if value != self._narrowed:
            self._fill(value)

    @on(Input.Submitted, "#narrow")
    def _submit(self) -> None:
        options = self.query_one("#choices", OptionList)
        if options.highlighted is not None:
            self.dismiss(options.get_option_at_index(options.highlighted).id[2:])

    @on(OptionList.OptionSelected, "#choices")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id[2:])

    def action_down(self) -> None:
        self.action_list("cursor_down")

    def action_up(self) -> None:
        self.action_list("cursor_up")

    def action_list(self, move: str) -> None:
        """Move in the list (narrowed to the box's text first): ``cursor_down``, ``cursor_up``,
        ``first``, ``last``, ``page_up`` or ``page_down`` (OptionList's actions of those names)."""
        self._narrow()
        getattr(self.query_one("#choices", OptionList), f"action_{move}")()

    def action_cancel(self) -> None:
        self.dismiss(None)

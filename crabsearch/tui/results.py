"""The result list: one row per session, expandable in place into its context window."""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.visual import RichVisual
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..search import Hit, Item
from ..text import printable
from .actions import BINDINGS as HIT_BINDINGS
from .render import result_prompt, row_height, row_lines, rung_note

FIRST_ROWS = 20
"""At least this many rows of a new result list are rendered before its first paint (more when
the list is taller than 40 lines); the others right after it."""


class ResultList(OptionList):
    """Rows of :class:`~crabsearch.search.Hit`. Enter/Right expands or collapses the highlighted
    row into its context window (fetched through ``fetch_window(hit, before, after)``), ``+``/``-``
    widen or narrow it, ``o`` asks to open the session, Esc goes back to the search box and typed
    characters go to ``type_into_search(char)`` (``"\b"`` for backspace)."""

    BINDINGS = [
        Binding("right", "toggle", "Expand", show=False, id="expand"),
        Binding("left", "collapse", "Collapse", show=False),
        Binding("plus,equals_sign", "widen", "Wider", id="widen"),
        Binding("minus", "narrow", "Narrower", id="narrow"),
        Binding("o", "open", "Open", id="open"),
        Binding("x", "explain", "Explain", id="explain"),
        *HIT_BINDINGS,
        Binding("escape", "leave", "Back"),
    ]

    class Open(Message):
        """The user asked to open ``hit``'s session at the hit."""

        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    class Explain(Message):
        """The user asked why ``hit`` matched."""

        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    class Resume(Message):
        """The user asked to resume ``hit``'s session in its agent (``fork``: to fork it)."""

        def __init__(self, hit: Hit, fork: bool = False) -> None:
            super().__init__()
            self.hit = hit
            self.fork = fork

    class Copy(Message):
        """The user asked to copy a piece of ``hit``'s session; ``window()`` returns the row's
        context window (a list of ``Item``)."""

        def __init__(self, hit: Hit, window: Callable[[], list[Item]]) -> None:
            super().__init__()
            self.hit = hit
            self.window = window

    class Export(Message):
        """The user asked to export ``hit``'s session, or the row's context window
        (``window()``), to Markdown."""

        def __init__(self, hit: Hit, window: Callable[[], list[Item]]) -> None:
            super().__init__()
            self.hit = hit
            self.window = window

    class Edit(Message):
        """The user asked to open ``hit``'s transcript in an editor at the hit."""

        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    class Leave(Message):
        """The user left the list (Esc)."""

    class NeedMore(Message):
        """The cursor is within a few rows of the end: the screen may load more rows."""

    class ShowPending(Message):
        """The user asked for the refreshed results held back while they browsed (Home), or
        left the list: the screen shows them now."""

    def reorders(self, hits: list[Hit]) -> tuple[bool, int]:
        """``(would the rows move, new sessions)`` if ``hits`` replaced the rows: True unless
        the rows shown keep their order at the top of ``hits`` (the same, or more below). New
        sessions are counted only when every listed one is still there: a session that left
        (its transcript deleted) lets one from below the page in, which is not new (0: the
        status line then says "updated results")."""
        old = [session_key(h) for h in self.hits]
        new = [session_key(h) for h in hits]
        fresh = len(set(new) - set(old)) if set(old) <= set(new) else 0
        return new[:len(old)] != old, fresh

    def __init__(self, fetch_window, type_into_search, now: Callable[[], datetime], home: str | None,
                 newer_coming: Callable[[], bool] = lambda: False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.fetch_window = fetch_window
        self.newer_coming = newer_coming
        """True while a newer list is on its way (a key typed since these rows were asked for):
        the rows below the first screenful wait for it, not rendered for a list it replaces."""
        self.type_into_search = type_into_search
        self.now = now
        self.home = home
        self.hits: list[Hit] = []
        self.terms: list[str] = []
        self.expanded: dict[int, tuple[int, int, list[Item]]] = {}
        self._widened: dict[int, list[tuple[int, int]]] = {}
        """Per row, the window sizes before each ``+``: ``-`` goes back through them exactly."""
        self._generation = 0
        """Counts :meth:`show` calls: rows left for after the first paint are added only if no
        later call replaced them."""
        self._rest_waiting = False
        """Rows below the first screenful were left out while a newer list was on its way."""
        self._typing = False
        """A key was sent to the search box and the list has not had the focus since: the keys
        still queued here are text."""

    def show(self, hits: list[Hit], terms: list[str], *, keep: bool = True) -> None:
        """Replace the rows. A refresh of the same results (``keep``) keeps the cursor on the
        same session, and expanded rows expanded, when they are still listed; a new result list
        (another query) starts at its first row, cursor on it, scrolled to the top."""
        current = self.current_hit if keep else None
        keep_key = session_key(current) if current else None
        # Rows that were expanded stay expanded (same window size) when the results refresh.
        opened = {session_key(self.hits[i]): (b, a)
                  for i, (b, a, _) in self.expanded.items() if i < len(self.hits)} if keep else {}
        old = self.hits
        grown = (keep and terms == self.terms and len(hits) > len(old) > 0 and all(
            _key(a) == _key(b) for a, b in zip(old, hits)))
        self.hits, self.terms = hits, terms
        self._generation += 1
        self._rest_waiting = False
        if grown:  # more rows of the same results: render only the new ones
            self._add_rest(self._generation)
            return
        self.expanded = {}
        self._widened = {}
        for i, h in enumerate(hits):
            sizes = opened.get(session_key(h))
            if sizes is not None:
                self.expanded[i] = (*sizes, self.fetch_window(h, *sizes))
        scroll = self.scroll_y
        # A new list starts at its top: render a screenful, paint, then the rest (each row is
        # rendered to measure its height, which delays the first paint). A refresh
        # renders them all, so the scroll position and cursor stay where they were.
        first = len(hits) if keep and old else self.screenful()
        self.set_options([Option(self._prompt(i), id=str(i)) for i in range(min(first, len(hits)))])
        if first < len(hits):
            self.call_after_refresh(self._add_rest, self._generation)
        if keep:  # a refresh: the rows stay where they were on screen
            self.scroll_to(y=scroll, animate=False, immediate=True)
        if hits:
            target = 0
            for i, h in enumerate(hits):
                if session_key(h) == keep_key:
                    target = i
                    break
            self.highlighted = target
        if not keep or not hits:
            self.scroll_to(y=0, animate=False, immediate=True)

    def screenful(self) -> int:
        """Rows that fill the list at least (a row takes two lines or more): :data:`FIRST_ROWS`,
        or more when the list is taller than 40 lines."""
        return max(FIRST_ROWS, self.size.height // 2 + 1)

    def _add_rest(self, generation: int, *, wait: bool = True) -> None:
        """Render the rows not rendered yet (left for after the first paint, or new rows of the
        same results), unless another :meth:`show` has replaced the rows since ``generation``.
        While a newer list is on its way (``newer_coming``: the user typed on), they wait: while
        typing, the next key's list replaced them before anyone saw them, and rendering them cost
        the next search a layout and a frame of the app's thread. The
        screen calls :meth:`add_waiting_rows` when the newer list does not replace them."""
        if generation != self._generation or self.option_count >= len(self.hits):
            return
        if wait and self.newer_coming():
            self._rest_waiting = True
            return
        self.add_options([Option(self._prompt(i), id=str(i))
                          for i in range(self.option_count, len(self.hits))])

    def add_waiting_rows(self) -> None:
        """Render the rows :meth:`_add_rest` left waiting for a newer list that did not replace
        this one (the screen held it back, or it never came)."""
        if self._rest_waiting:
            self._rest_waiting = False
            self._add_rest(self._generation, wait=False)

    @property
    def current_hit(self) -> Hit | None:
        """The highlighted row's hit, if any."""
        if self.highlighted is None or self.highlighted >= len(self.hits):
            return None
        return self.hits[self.highlighted]

    def _prompt(self, i: int) -> "RowVisual":
        window = self.expanded.get(i)
        note = rung_note(self.hits[i - 1] if i else None, self.hits[i])  # a rule where the rung changes
        return RowVisual(self, result_prompt(self.hits[i], self.terms, self.now(), self.home,
                                             window[2] if window else None, note,
                                             self._keys() if window else ("+", "-", "o")))

    def _keys(self) -> tuple[str, str, str]:
        """The widen, narrow and open keys as bound (the config's ``[keys]`` rebinds them)."""
        from .panels import key_label

        rebound = getattr(getattr(self.app, "config", None), "keys", None) or {}
        return tuple(key_label(rebound[i].split(",")[0]) if rebound.get(i) else default
                     for i, default in (("widen", "+"), ("narrow", "-"), ("open", "o")))

    def _set_window(self, i: int, before: int, after: int) -> None:
        hit = self.hits[i]
        window = self.fetch_window(hit, before, after)
        if window:  # remember the sizes the window really has (sides clamp at the session's ends,
            # and skip other branches' messages)
            before = sum(1 for it in window if it.message_index < hit.message_index)
            after = sum(1 for it in window if it.message_index > hit.message_index)
        self.expanded[i] = (before, after, window)
        self.replace_option_prompt_at_index(i, self._prompt(i))

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if highlighted is not None and highlighted >= len(self.hits) - 5:
            self.post_message(self.NeedMore())

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.hits and new > old and new >= self.max_scroll_y - 3:  # the mouse wheel reached the end
            self.post_message(self.NeedMore())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_toggle()

    def action_toggle(self) -> None:
        """Expand the highlighted row into its context window, or collapse it."""
        i = self.highlighted
        if i is None or i >= len(self.hits):
            return
        if i in self.expanded:
            self.action_collapse()
        else:
            self._widened.pop(i, None)
            self._set_window(i, self.app.context, self.app.context)
            self.scroll_to_highlight()

    def action_collapse(self) -> None:
        """Collapse the highlighted row back to one line."""
        i = self.highlighted
        self._widened.pop(i, None)
        if i is not None and self.expanded.pop(i, None) is not None:
            self.replace_option_prompt_at_index(i, self._prompt(i))

    def action_widen(self) -> None:
        """Show two more messages on each side of the hit (expanding the row if needed)."""
        self._resize(+2)

    def action_narrow(self) -> None:
        """Show two fewer messages on each side of the hit (never fewer than the hit itself)."""
        self._resize(-2)

    def _resize(self, delta: int) -> None:
        i = self.highlighted
        if i is None or i >= len(self.hits):
            return
        if i not in self.expanded:
            self._set_window(i, self.app.context, self.app.context)
            return
        before, after, _ = self.expanded[i]
        hit = self.hits[i]
        room_before = hit.message_index
        room_after = hit.session.message_count - 1 - hit.message_index
        widened = self._widened.setdefault(i, [])
        if delta > 0:  # grow where there is room, so every press shows more
            b = min(room_before, before + delta)
            a = min(room_after, after + delta + (before + delta - b))
            b = min(room_before, b + (after + delta - a))
            widened.append((before, after))  # also when all is shown: each `-` undoes one `+`
        elif widened:  # undo the last `+` exactly (it may have grown one side only)
            b, a = widened.pop()
        else:
            b, a = max(0, before + delta), max(0, after + delta)
        self._set_window(i, b, a)
        self.scroll_to_highlight()

    def action_open(self) -> None:
        """Open the highlighted session at its hit."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Open(hit))

    def action_resume(self) -> None:
        """Ask to resume the highlighted session in its agent."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Resume(hit))

    def action_fork(self) -> None:
        """Ask to fork the highlighted session (where its agent can)."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Resume(hit, fork=True))

    def _window(self):
        """The highlighted row's context window: as expanded, else the default size."""
        shown = self.expanded.get(self.highlighted)
        return shown[2] if shown else self.fetch_window(self.current_hit, self.app.context, self.app.context)

    def action_copy(self) -> None:
        """Ask to copy the highlighted session's id, resume command, path, hit message or window."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Copy(hit, self._window))

    def action_export(self) -> None:
        """Ask to export the highlighted session, or its context window, to Markdown."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Export(hit, self._window))

    def action_edit(self) -> None:
        """Ask to open the highlighted session's transcript in $EDITOR at the hit."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Edit(hit))

    def action_explain(self) -> None:
        """Explain the highlighted row's match (route, fields, score parts)."""
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.Explain(hit))

    def action_leave(self) -> None:
        """Back to the search box."""
        self.post_message(self.Leave())

    def action_cursor_up(self) -> None:
        """Up: the previous row; on the first row, back to the search box."""
        if not self.highlighted:
            self.post_message(self.Leave())
        else:
            super().action_cursor_up()

    def action_cursor_down(self) -> None:
        """Down: the next row; on the last row, stay there (the next rows may be loading:
        Textual's option list wrapped round to the first row)."""
        if self.highlighted is None or self.highlighted < self.option_count - 1:
            super().action_cursor_down()

    def action_first(self) -> None:
        """Home: the first row, after showing refreshed results held back (if any)."""
        self.post_message(self.ShowPending())
        super().action_first()

    def on_key(self, event) -> None:
        # Typing while the list has focus goes to the search box, and the focus follows. Keys
        # typed in the same burst (a fast typist, a terminal's paste without bracketing) are
        # already queued here, and the focus moves only after them: from the first key sent to
        # the box until the list has the focus again, every printable key (o, r, x, + and -
        # too) is text for the box, not a command ("timeout" typed fast lost its o, and an r
        # could have asked to resume a session).
        typing = self._typing or self.app.focused is not self
        if event.is_printable and event.character and (
                typing or event.key not in self.screen.active_bindings):  # bound keys (config too) are commands
            event.stop()
            event.prevent_default()
            self._typing = True
            self.type_into_search(event.character)
        elif event.key == "backspace" or (typing and event.key == "space"):
            event.stop()
            event.prevent_default()
            self._typing = True
            self.type_into_search("\b" if event.key == "backspace" else " ")

    def on_focus(self) -> None:
        """The list has the focus again: printable keys bound to commands are commands."""
        self._typing = False

    def on_paste(self, event) -> None:
        """Pasting while the list has focus pastes into the search box."""
        event.stop()
        for char in event.text.replace("\n", " "):
            self.type_into_search(char)


class RowVisual(RichVisual):
    """A row's prompt (a :func:`~crabsearch.tui.render.result_prompt`) as Textual's visual of a
    Rich renderable, whose height is counted (:func:`~crabsearch.tui.render.row_height`), not
    rendered: the option list measures every new row before its first paint, and rendering
    rows to count their lines took about half of the app's own time from a new result list to
    its frame (a profile at 1 GB)."""

    def get_height(self, rules, width: int) -> int:
        """The row's lines at ``width`` cells."""
        return row_height(self._renderable, width, self._widget.app.console)

    def render_strips(self, width: int, height: int | None, style, options) -> list[Strip]:
        """The row's strips, as ``RichVisual.render_strips`` makes them (the widget's base style
        under every segment, its link style over clickable ones), from the row's lines
        (:func:`~crabsearch.tui.render.row_lines`) rendered one ``Text`` at a time: Rich's
        renderer (a ``Group`` through ``Console.render``, then split into lines) took about twice as
        long a row (``bench/typing_latency.py``), most of this one being the header line laid out
        on first paint."""
        app = self._widget.app
        console = app.console
        lines = row_lines(self._renderable, width, console, app.console_options)
        if lines is None:
            return super().render_strips(width, height, style, options)
        base = style.rich_style
        apply = base.__add__ if base else None
        link = self._widget.link_style if self._widget.auto_links else None
        strips = []
        for line in lines if height is None else lines[:height]:
            if not line.plain:
                segments = []
            elif line.spans:  # the line's own style under its spans
                segments = list(line.render(console))
            else:  # Text.render gives a line without spans no style: Rich joins lines, making it a span
                segments = [Segment(line.plain, console.get_style(line.style, default=Style.null())
                                    if line.style else None)]
            if apply is not None:
                segments = [Segment(text, apply(s), None) for text, s, _ in segments]
            if link:
                segments = [Segment(text, s if s._meta is None else (s + link if "@click" in s.meta else s), c)
                            for text, s, c in segments if s is not None]
            strips.append(Strip(segments))
        return strips

    @property
    def row(self):
        """The row's ``rich.console.Group``: header, notes, snippet or window."""
        return self._renderable

    def __rich__(self):
        """The row as Rich renders it (``console.print(option.prompt)``)."""
        return self._renderable


def session_key(hit: Hit) -> tuple[str, str]:
    """A row's session: ``(agent, session id)``."""
    return hit.session.agent, hit.session.session_id


def _key(hit: Hit) -> tuple[str, str, int]:
    """A row's identity: same session and same hit message."""
    return *session_key(hit), hit.message_index


RUNG_COUNTS = {
    "id": ("by session id", "by id"),
    "phrase": ("with the exact phrase", "exact phrase"),
    "all": ("with every word in one message", "all words in a message"),
    "session": ("with every word, spread over the session", "all words, spread"),
    "any": ("with some of the words", "some words"),
    "similar": ("similar in meaning", "similar"),
}
"""What the rows of a rung of the ladder (``Hit.route``) matched, said after their count in the
status line (:func:`count_line`): long, and short for a narrow screen."""
REPAIR_COUNTS = ("for “{used}” instead of “{typed}”", "for “{used}”", "for “{used}”", "spelling repaired")
"""What the rows of the ``repair`` rung matched, from the widest form of the count line to the
narrowest: the query's words as searched (``used``), then as typed (``typed``), as the CLI's
``showing results for widget instead of widgt`` says."""
COUNT_FORMS = 4
"""Forms of the count line tried, widest first: every rung's long words (the repair's
``instead of``), then the repair without it, then the short words, then the repair's shortest."""


def count_line(hits: list[Hit], width: int, *, more: bool = False, repair: tuple[str, str] | None = None,
               one_word: bool = False) -> str:
    """The status line's count of ``hits`` by the rung that found them, in ladder order, in the
    longest form that fits ``width`` cells (:data:`COUNT_FORMS`): ``1 session with every word
    in one message · 18 with some of the words``, then ``1 all words in a message · 18 some
    words``, then ``19 sessions``. ``more``: the next rows load as the cursor gets there (the
    last count gets a ``+``); ``repair``: the query's words ``(as typed, as searched)`` when a
    spelling repair found rows (``7 sessions for “weekly widget” instead of “weekly widgt”``);
    ``one_word``: the query is one word, which a message holds or not (``3 sessions``, not
    ``with every word``)."""
    counts: dict[str | None, int] = {}
    for h in hits:
        route = h.route if h.route in RUNG_COUNTS or h.route == "repair" else None
        counts[route] = counts.get(route, 0) + 1
    plus = "+" if more else ""
    total = f"{len(hits)}{plus} session{'s' if len(hits) != 1 else ''}"
    if None in counts or not counts or (one_word and set(counts) == {"all"}):  # the count says it all
        return total
    typed, used = repair or ("", "")
    parts = list(counts.items())
    forms = []
    for style in range(COUNT_FORMS):
        said = []
        for n, (route, count) in enumerate(parts):
            if route == "repair":
                label = REPAIR_COUNTS[style if used else -1].format(typed=printable(typed), used=printable(used))
            else:
                label = RUNG_COUNTS[route][style // 2]
            mark = plus if n == len(parts) - 1 else ""
            noun = f" session{'s' if count != 1 else ''}" if n == 0 and style < 2 else ""
            said.append(f"{count}{mark}{noun} {label}")
        forms.append(" · ".join(said))
    return next((f for f in forms if cell_len(f) <= width), total)

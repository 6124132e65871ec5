"""Modal panels over the search screen: help, explain, status."""

from __future__ import annotations

import os
import re
import textwrap

from rich.cells import cell_len
from rich.measure import Measurement
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..filters import help_rows
from ..search import Hit, SearchResult
from ..text import printable

KEYS = [
    ("Search box", [("type", "search as you type (empty: recent)"), ("Down / Enter", "move into the results"),
                    ("Tab", "complete agent:, project:, since: (again: next)"),
                    ("F3 / F4 / F5", "filter by agent / project / date (chips: click ✕)",
                     ("pick-agent", "pick-project", "pick-date")),
                    ("Esc", "clear the search box")]),
    ("Results", [("Up / Down", "move between sessions (at the top, Up: the box)"),
                 ("Enter / Right", "expand / collapse the context window", ("expand",)),
                 ("Left", "collapse the row"), ("+ / -", "widen / narrow the context window", ("widen", "narrow")),
                 ("o", "open the session at the hit", ("open",)), ("x", "explain why the row matched", ("explain",)),
                 ("r / f", "resume / fork in its agent (asks first)", ("resume", "fork")),
                 ("c", "copy: id, resume command, path, message, window", ("copy",)),
                 ("E", "export the session or window to Markdown", ("export",)),
                 ("v", "open a read-only copy in $EDITOR at the hit", ("editor",)),
                 ("Esc", "back to the search box"),
                 ("typing", "goes to the search box")]),
    ("Session view", [("Up / Down, j / k", "scroll a line"), ("PgUp / PgDn, space", "scroll a page"),
                      ("J / K", "next / previous message (the cursor)", ("next-message", "previous-message")),
                      ("g / G, Home / End", "first / last message", ("first", "last")),
                      ("[ / ]", "previous / next message matching the query", ("previous-hit", "next-hit")),
                      ("/  then n / N", "find text in the session, next / previous match",
                       ("find", "find-next", "find-previous")),
                      ("t", "tool calls and output: one line / full / hidden", ("tools",)),
                      ("T", "thinking shown / hidden", ("thinking",)),
                      ("a", "messages of abandoned branches (rewinds) shown / hidden", ("abandoned",)),
                      ("s", "subagent turns written into the transcript shown / hidden", ("subagents",)),
                      ("Enter", "the message at the cursor in full / folded", ("expand-message",)),
                      ("e", "every long message in full / folded", ("full-text",)),
                      ("r / f", "resume / fork the session (asks first)", ("resume", "fork")),
                      ("c / E / v", "copy / export / open a read-only copy in $EDITOR at the cursor", ("copy", "export", "editor")),
                      ("Esc, q", "back to the results", ("back",))]),
    ("Everywhere", [("F2", "sources and index status", ("status",)),
                    ("Ctrl+S", "sort: relevance / newest first", ("sort",)),
                    ("Ctrl+R", "reveal masked secrets", ("reveal",)), ("Ctrl+T", "light / dark theme", ("theme",)),
                    ("Ctrl+P", "command palette: every action by name"),
                    ("F1, ?", "this help (? outside the search box)", ("help",)), ("Ctrl+Q", "quit (Ctrl+C too, on the search screen)")]),
    ("Query language", [('"a phrase"', "words adjacent, in order"), ("-word", "exclude (typed; in a pasted line, a word)"), ("word*", "prefix"),
                        *help_rows()]),  # the filters' rows: crabsearch.filters
]


KEY_COLUMN = 22
"""Where the help's descriptions start: two spaces, the keys (18 cells at most), two spaces."""
WHAT_ROOM = 26
"""The fewest cells the help leaves a description beside its keys: a narrower panel (a 50-column
terminal) narrows the key column, and keys too wide for it take a line of their own."""


def key_entry(keys: str, what: str, room: int) -> Text:
    """One help entry in ``room`` cells: ``keys`` in a column, ``what`` after them, wrapped at
    spaces under its own start (never under the keys). The
    column is :data:`KEY_COLUMN`, narrowed to leave :data:`WHAT_ROOM` cells; keys too wide for
    it are on a line of their own, ``what`` under the column on the next."""
    column = max(8, min(KEY_COLUMN, room - WHAT_ROOM))
    head = f"  {keys}"
    t = Text()
    if cell_len(head) + 2 > column:
        t.append(head + "\n", style="bold cyan")
        head = ""
    t.append(head + " " * (column - cell_len(head)), style="bold cyan")
    lines = textwrap.wrap(what, max(10, room - column), break_on_hyphens=False) or [""]  # not inside a date
    t.append(("\n" + " " * column).join(lines) + "\n")
    return t


KEY_NAMES = {"escape": "Esc", "right_square_bracket": "]", "left_square_bracket": "[", "slash": "/",
             "question_mark": "?", "plus": "+", "minus": "-", "equals_sign": "=", "space": "space",
             "pageup": "PgUp", "pagedown": "PgDn", "home": "Home", "end": "End", "enter": "Enter",
             "up": "Up", "down": "Down", "left": "Left", "right": "Right", "tab": "Tab"}


def key_label(keys: str) -> str:
    """Textual key names as the help writes them: ``ctrl+o`` -> ``Ctrl+O``, ``f6`` -> ``F6``,
    ``right_square_bracket`` -> ``]``; several (``escape,q``) joined with ``, ``."""
    out = []
    for key in (k.strip() for k in keys.split(",") if k.strip()):
        *mods, name = key.split("+")
        name = KEY_NAMES.get(name, name.upper() if len(name) > 1 and name[0] == "f" and name[1:].isdigit()
                             else name)
        out.append("+".join([m.capitalize() for m in mods] + [name.upper() if mods and len(name) == 1 else name]))
    return ", ".join(out)


def rebound_keys(group: tuple[str, ...], keys: str, rebound: dict[str, str], defaults: dict[str, str]) -> str:
    """The keys of a help entry: as written (``keys``) unless one of its binding ids (``group``)
    is rebound in the config's ``[keys]``; then every id's current keys, joined with `` / ``."""
    if not any(i in rebound for i in group):
        return keys
    return " / ".join(key_label(rebound.get(i) or defaults.get(i, "?")) for i in group)


def default_keys() -> dict[str, str]:
    """Binding id -> its default keys, from the app's screens and widgets."""
    from .app import CrabsearchApp
    from .results import ResultList
    from .screens import SearchScreen
    from .session import SessionScreen
    from .transcript import TranscriptView

    out: dict[str, str] = {}
    for cls in (CrabsearchApp, SearchScreen, ResultList, SessionScreen, TranscriptView):
        for b in cls.BINDINGS:
            if getattr(b, "id", None):
                out.setdefault(b.id, b.key)
    return out


class Panel(ModalScreen):
    """A centred, scrollable panel of text with a title; Esc closes it. Subclasses give
    ``TITLE`` and :meth:`body`."""

    TITLE = ""
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Close")]

    def body(self) -> Text:
        """The panel's text."""
        raise NotImplementedError

    def _room(self) -> int:
        """The panel's text width: 90 columns or the screen's, but its border, padding and a
        scrollbar."""
        return min(90, self.app.size.width) - 2 - 4 - 2

    def on_resize(self) -> None:
        self.query_one(".panel-body", Static).update(self.body())

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="panel"):
            yield Static(Text(self.TITLE, style="bold"), classes="panel-title")
            yield Static(self.body(), classes="panel-body")
            yield Static(Text("Esc to close", style="dim"))


class HelpScreen(Panel):
    """Every key, by screen, and the query language."""

    TITLE = "crabsearch keys"
    BINDINGS = [Binding("escape,q,question_mark,f1", "app.pop_screen", "Close")]

    def body(self) -> Text:
        t = Text()
        rebound = getattr(getattr(self.app, "config", None), "keys", None)
        if rebound:
            t.append("Rebound in your config: ", style="bold yellow")
            t.append(", ".join(f"{action} → {keys}" for action, keys in sorted(rebound.items())) + "\n\n")
        defaults = default_keys() if rebound else {}
        room = self._room()
        for n, (group, keys) in enumerate(KEYS):
            if n:
                t.append("\n")
            t.append(f"{group}\n", style="bold underline")
            for key, what, *ids in keys:
                key = rebound_keys(ids[0], key, rebound, defaults) if ids and rebound else key
                t.append_text(key_entry(key, what, room))
        return t


class ExplainScreen(Panel):
    """How a result row matched: the route, the fields and terms, the score parts."""

    TITLE = "Why this session matched"
    BINDINGS = [Binding("escape,q,x", "app.pop_screen", "Close")]

    def __init__(self, hit: Hit, result: SearchResult | None) -> None:
        super().__init__()
        self.hit = hit
        self.result = result

    def body(self) -> Text:
        t = Text()
        t.append(printable(self.hit.session.title or "(untitled)") + "\n\n", style="bold")
        ex = self.hit.explain
        if not ex:
            t.append("Recent session: no query to explain.\n")
        else:
            route = {"phrase": "the exact phrase", "all": "every word in one message",
                     "session": "every word, spread over the session's messages",
                     "repair": "every word after spelling repair", "any": "any of the words",
                     "similar": "similar in meaning (similarity search)"}.get(ex["route"], ex["route"])
            t.append("Matched by  ", style="dim")
            t.append(f"{route}\n")
            t.append("Anchored on ", style="dim")
            t.append(f"{ex['anchored_on']} (message #{self.hit.message_index + 1})\n")
            t.append("Score       ", style="dim")
            # the parts as shown, and their sum, so they add up as printed (not `8.478 = 8.479 + 0.000`)
            shown = round(ex["message_score"], 3), round(ex["session_score"], 3)
            t.append(f"{shown[0] + shown[1]:.3f} = best message {shown[0]:.3f} + title/summary {shown[1]:.3f}\n")
            if fused := ex.get("fused"):  # a page ranked by words and meaning together
                w = fused["words_weight"]
                t.append("Ranked by   ", style="dim")
                t.append(f"{fused['score']:.3f} = {w:g} × words {fused['words']:.3f} + "
                         f"{1 - w:g} × meaning {fused['meaning']:.3f}\n")
            t.append("Fields      ", style="dim")
            weights = ", ".join(f"{f} ×{w:g}" for f, w in ex["weights"].items()) or "-"
            t.append(weights + "\n")
            t.append("Terms       ", style="dim")
            t.append(printable(", ".join(ex["matched"]) or "-") + "\n")
        if self.result and self.result.corrections:
            t.append("Repaired    ", style="dim")
            t.append(", ".join(f"{k} → {v}" for k, v in self.result.corrections.items()) + "\n")
        return t


class StatusScreen(Panel):
    """Sources found per agent, what the index holds, skipped lines and files, warnings."""

    TITLE = "Sources and index"
    BINDINGS = [Binding("escape,q,f2", "app.pop_screen", "Close")]

    _text: str | None = None

    def body(self) -> Text:
        if self._text is None:
            self._text = printable(self.app.status_text())
        return Text("\n".join(wrap_paths(self._text, self._room())))

    def refreshed(self) -> None:
        """The index was refreshed (the live watcher, the periodic refresh): read the report
        again, so its counts and ``last refresh`` follow every refresh while the panel is open."""
        self._collect()

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def _collect(self) -> None:
        text = printable(self.app.status_text())  # discovery walks the agents' directories: not here
        self.app.call_from_thread(self._show, text)

    def _show(self, text: str) -> None:
        self._text = text
        if self.is_attached:
            self.query_one(".panel-body", Static).update(self.body())


def wrap_paths(text: str, width: int) -> list[str]:
    """``text``'s lines wrapped to ``width`` cells at spaces, where a word too long for a line
    (a path) is broken only before a ``/``, never inside a folder name; the continuation lines
    are indented under the line's start."""
    width = max(10, width)
    out = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip(" ")))
        indent = lead + "  "
        current = lead
        for word in line.split():
            for n, part in enumerate(_path_parts(word, width - len(indent))):
                glue = "" if n or not current.strip() else " "  # a path's parts join without a space
                if cell_len(current + glue + part) <= width:
                    current += glue + part
                else:
                    out.append(current.rstrip())
                    current = indent + part
        out.append(current.rstrip())
    return out


class PathColumns:
    """Rows of ``(name, places, style)`` in two columns, rendered at the width there is: the
    names padded to one column, the places after them; a line of places too long for the width
    wraps at spaces (a path too long for a line breaks only before a ``/``, as
    :func:`wrap_paths`), and its continuation lines start at the places' column. ``str()`` is the
    text unwrapped, one row a line."""

    def __init__(self, rows: list[tuple[str, str, str]], indent: int = 2, gap: int = 2) -> None:
        self.rows = rows
        self.column = indent + max((cell_len(name) for name, _, _ in rows), default=0) + gap
        self.indent = indent

    def __str__(self) -> str:
        return "\n".join(self._head(name) + places for name, places, _ in self.rows)

    def _head(self, name: str) -> str:
        return " " * self.indent + name + " " * (self.column - self.indent - cell_len(name))

    def __rich_measure__(self, console, options) -> Measurement:
        widest = max((self.column + cell_len(places) for _, places, _ in self.rows), default=0)
        return Measurement(min(self.column + 10, widest), widest).clamp(max_width=options.max_width)

    def __rich_console__(self, console, options):
        room = max(10, options.max_width - self.column)
        for name, places, style in self.rows:
            lines, current = [], ""
            for word in places.split():
                if current and cell_len(f"{current} {word}") > room and cell_len(word) <= room:
                    lines.append(current)  # a whole word on the next line rather than broken
                    current = ""
                for n, part in enumerate(_path_parts(word, room)):
                    glue = "" if n or not current else " "  # a path's parts join without a space
                    if cell_len(current + glue + part) <= room:
                        current += glue + part
                    else:
                        lines.append(current)
                        current = part
            lines.append(current)
            for n, line in enumerate(lines):
                t = Text(self._head(name) if n == 0 else " " * self.column, style="cyan", no_wrap=True)
                t.append(line, style=style)
                yield t


def _path_parts(word: str, room: int) -> list[str]:
    """``word`` in pieces of at most ``room`` cells, cut before a ``/`` (a folder name longer
    than ``room`` is cut after its last ``.``, ``-`` or ``_`` that fits, else where it must);
    ``~`` stays with the folder after it."""
    if cell_len(word) <= room:
        return [word]
    out = []
    parts = re.split(r"(?=/)", word)
    if len(parts) > 1 and parts[0] == "~":
        parts[:2] = ["~" + parts[1]]
    for part in parts:
        while cell_len(part) > room:
            cut = room
            while cell_len(part[:cut]) > room:
                cut -= 1
            cut = max((part.rfind(c, 1, cut) + 1 for c in ".-_"), default=0) or cut
            out.append(part[:max(1, cut)])
            part = part[max(1, cut):]
        if part:
            out.append(part)
    return out


class ChoiceScreen(ModalScreen[str | None]):
    """A small menu: ``choices`` is ``[(key, what)]``; pressing a key dismisses with it, Esc with
    None. The choices are a list too: Up / Down move between them and Enter picks the one
    highlighted. Used for copy (``c``) and
    export (``E``)."""

    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, title: str, choices: list[tuple[str, str]], note: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.note = note

    def compose(self) -> ComposeResult:
        options = []
        for key, what in self.choices:
            t = Text()
            t.append(f"  {key}  ", style="bold cyan")
            t.append(printable(what))
            options.append(Option(t, id=key))
        t = Text()
        if self.note:
            t.append("\n" + printable(self.note) + "\n", style="dim")
        t.append("\nUp / Down and Enter, or a key: pick · Esc: cancel", style="dim")
        with VerticalScroll(classes="panel"):
            yield Static(Text(self.title_text, style="bold"), classes="panel-title")
            yield OptionList(*options, compact=True, id="choices")
            yield Static(t)

    def on_mount(self) -> None:
        options = self.query_one("#choices", OptionList)
        options.highlighted = 0
        options.focus()

    def on_key(self, event) -> None:
        if event.character and any(event.character == key for key, _ in self.choices):
            event.stop()
            self.dismiss(event.character)

    @on(OptionList.OptionSelected, "#choices")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        """Enter on the highlighted choice (or a click on one): as its key."""
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ResumeScreen(ModalScreen[bool]):
    """Asks before resuming a session: shows the command that will run after the app exits.
    Dismisses with True (Enter or ``y``) or False (Esc or ``n``)."""

    BINDINGS = [Binding("enter,y", "confirm", "Resume"), Binding("escape,n,q", "cancel", "Cancel")]

    def __init__(self, hit: Hit, command: str | None = None, fork: bool = False) -> None:
        super().__init__()
        self.hit = hit
        self.command = command or hit.ref.resume_command or ""
        self.fork = fork

    def compose(self) -> ComposeResult:
        verb = "fork" if self.fork else "resume"
        t = Text()
        t.append(printable(self.hit.session.title or "(untitled)") + "\n\n", style="bold")
        project = self.hit.session.project
        if project and os.path.isabs(project) and not os.path.isdir(project):
            t.append(f"The project directory {printable(project)} does not exist on this machine: the "
                     "command's `cd` will fail.\n\n", style="bold yellow")
        if self.fork:
            t.append("A new session starts from a copy of this one; the original stays as it is.\n",
                     style="dim")
        t.append("crabsearch will quit and run:\n\n", style="dim")
        t.append("  " + printable(self.command) + "\n\n", style="bold cyan")
        t.append(f"Enter or y: {verb} · Esc or n: cancel", style="dim")
        with VerticalScroll(classes="panel"):
            title = "Fork this session?" if self.fork else "Resume this session?"
            yield Static(Text(title, style="bold"), classes="panel-title")
            yield Static(t)

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

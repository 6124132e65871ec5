"""Turning engine results into Rich text for the screens (pure functions, no widgets).

Transcript text always goes through :func:`crabsearch.text.printable` and into ``rich.text.Text``
objects built with ``Text(...)``/``append`` (never ``Text.from_markup``), so ``[bold]`` or an
unterminated ``[`` in a transcript is shown exactly as typed.
"""

from __future__ import annotations

from datetime import datetime, timezone

from rich.cells import cell_len
from rich.console import Group
from rich.measure import Measurement
from rich.text import Span, Text

from ..hits import GONE, densest, structure_notes, transcript_gone
from ..search import Engine, Hit, Item
from ..sources import CARDS
from ..text import counted, printable
from .messageview import preview

ROLE_STYLES = {
    "user": "bold cyan",
    "assistant": "green",
    "tool": "dim",
    "system": "dim",
    "summary": "yellow",
}
AGENT_STYLES = {agent: card.style for agent, card in CARDS.items() if card.style}
"""The agents' own badge styles (``Source.style``, read from their cards)."""
OTHER_AGENT_STYLES = ("bold white on medium_purple3", "bold white on dark_cyan", "bold white on orange4",
                      "bold white on deep_pink4", "bold white on green4")
MUTED = "dim"
HIGHLIGHT = "bold black on yellow"


def agent_name(agent: str) -> str:
    """The short name shown for an agent: its ``badge`` (``Claude``, ``Codex``), from its card
    (``sources.CARDS``: no reader imported)."""
    card = CARDS.get(agent)
    return (card.badge or card.display or agent) if card else agent


def agent_style(agent: str) -> str:
    """The badge style of an agent (its own, :data:`AGENT_STYLES`, else one of a few by name)."""
    return AGENT_STYLES.get(agent) or OTHER_AGENT_STYLES[sum(map(ord, agent)) % len(OTHER_AGENT_STYLES)]


def relative_date(ts: datetime | None, now: datetime) -> str:
    """Short age of ``ts`` relative to ``now``: ``just now``, ``5m ago``, ``3h ago``, ``yesterday``,
    ``4d ago``, then the date (``2026-03-14``)."""
    if ts is None:
        return "date unknown"
    secs = (now - ts).total_seconds()
    if secs < 60:
        return "just now"
    if secs < 3600:
        return f"{int(secs // 60)}m ago"
    if secs < 86400:
        return f"{int(secs // 3600)}h ago"
    days = int(secs // 86400)
    if days == 1:
        return "yesterday"
    if days < 7:
        return f"{days}d ago"
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%d")


def short_path(path: str | None, home: str | None) -> str:
    """``path`` with the home directory shown as ``~``."""
    if not path:
        return ""
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")):]
    return path


HEADER_RESUME_FROM = 40
"""Screens at least this tall show the resume command under the session header's two lines."""
HEADER_ONE_LINE_BELOW = 20
"""Screens shorter than this show the session header on one line (title, agent, messages)."""


def session_header(session, resume: str | None, now: datetime, home: str | None, width: int,
                   height: int, total: int | None = None, notes: list[str] = ()) -> Text:
    """The session view's header for a screen ``width`` x ``height`` (0: not known yet), each
    line cut to ``width`` with ``…``, never wrapped: the title; agent, project, branch, message
    count (``total``, else the session's), start and update; then, on a screen of
    :data:`HEADER_RESUME_FROM` lines or more, the ``notes`` (``continued in <title>``, one line
    each, italic) and ``resume: COMMAND``. Below :data:`HEADER_ONE_LINE_BELOW` lines, one
    line: the title cut to leave room for ``· agent · N messages``. (At 80x24 the header took five
    lines, the title and the resume command wrapped: a quarter of the screen.)"""
    count = session.message_count if total is None else total
    title = Text.assemble((drawn_title(session.title or "") or "(untitled)", "bold"))
    if height and height < HEADER_ONE_LINE_BELOW:
        more = f" · {agent_name(session.agent)} · {counted(count, 'message')}"
        title.truncate(max(8, width - cell_len(more)), overflow="ellipsis")
        title.append(more, style="dim")
        return _cut(title, width)
    meta = Text.assemble((agent_name(session.agent), "bold"),
                         f" · {printable(short_path(session.project, home)) or 'no project'}")
    if session.git_branch:
        meta.append(f" · branch {printable(session.git_branch)}")
    dates = f" · {counted(count, 'message')} · started {relative_date(session.started, now)}"
    updated = f" · updated {relative_date(session.updated, now)}"
    if width and meta.cell_len + len(dates) + len(updated) > width:  # the update before the start
        dates = f" · {counted(count, 'message')}"
    meta.append(dates + updated, style="dim")
    lines = [_cut(title, width), _cut(meta, width)]
    roomy = not height or height >= HEADER_RESUME_FROM
    lines += [_cut(Text(printable(note), style="italic"), width) for note in notes if roomy]
    if resume and roomy:
        lines.append(_cut(Text.assemble(("resume: ", "dim"), (printable(resume), "cyan")), width))
    return Text("\n").join(lines)


def drawn_title(title: str) -> str:
    """A session's title as the session view draws its first prompt, on one line: Markdown's
    text without its marks (``# Deploy plan`` -> ``Deploy plan``, ``fix **ibis**`` -> ``fix
    ibis``; :func:`crabsearch.tui.markdown.plain`), a heading's ``#`` left out too; a masked
    secret's ``***`` kept. The title as it is when Markdown leaves no text of it (``---``)."""
    from .markdown import parse, plain  # markdown-it: imported when a session view first opens

    text = printable(title)
    drawn = plain(text)
    tokens = parse(text)
    if tokens and tokens[0].type == "heading_open":  # plain() keeps its marks, as the view draws them
        drawn = drawn[int(tokens[0].tag[1:]) + 1:]
    return " ".join(drawn.split()) or text


def _cut(line: Text, width: int) -> Text:
    """``line`` cut to ``width`` cells with ``…`` (0: as it is)."""
    if width and line.cell_len > width:
        line = line.copy()
        line.truncate(max(1, width), overflow="ellipsis")
    return line


def highlighted(text: str | Text, terms: list[str], style: str = "") -> Text:
    """``Text`` of ``text`` (made printable; a ``Text``, printable already, keeps its styles)
    with every query-term match in :data:`HIGHLIGHT`."""
    out = text.copy() if isinstance(text, Text) else Text(printable(text), style=style)
    for start, end in Engine.spans(out.plain, terms):
        out.stylize(HIGHLIGHT, start, end)
    return out


BRACKETS = " \t{}[],"
"""What a line of a JSON answer holds when it only opens or closes an object or a list."""


WORD_SNAP = 12
"""At most this many characters of a cut word are skipped so that a snippet starts at a word."""

JOIN = " … "
"""Between the two stretches of a snippet whose query words are too far apart for one."""

PART_MIN = 30
"""The narrowest stretch of a two-stretch snippet (characters): a narrower row shows one."""


def snippet(text: str, terms: list[str], width: int = 160) -> Text:
    """One line of ``text`` (whitespace collapsed), ``width`` characters, from its start when the
    matched words of the stretch that holds the most different query terms (``hits.densest``)
    fit in it, else from a little before that stretch (``…`` first), at the start of a word
    when one starts within :data:`WORD_SNAP` characters, and early enough to fill the line when
    the stretch is near the message's end: a message holding two query words apart shows both
    when they fit in the line (``hook error`` shows both, not ``error`` alone).
    When the line cannot hold every query word the message holds, it shows two stretches of
    half the width, in the message's order joined
    by :data:`JOIN`: the densest, and the densest of the words it leaves out (as a web search's
    snippet does). The text is analyzed once; the line's highlights are the matches found in it,
    cut where the line cuts them."""
    flat = " ".join(printable(text).split())
    marks = Engine.term_spans(flat, terms)
    start, lead = _place(flat, marks, width)
    half = (width - len(JOIN)) // 2
    if marks and half >= PART_MIN and _left_out(marks, start, start + width + 1 - len(lead)):
        a_start, a_lead = _place(flat, marks, half)
        a_stop = a_start + half - len(a_lead)
        rest = _left_out(marks, a_start, a_stop)
        if rest:
            b_start, b_lead = _place(flat, rest, half + 1)
            b_stop = b_start + half + 1 - len(b_lead)
            if b_start >= a_stop or b_stop <= a_start:  # apart: each shows its own words
                (s1, l1, e1), (s2, l2, e2) = sorted([(a_start, a_lead, a_stop), (b_start, b_lead, b_stop)])
                out = _stretch(flat, marks, s1, l1, e1 - s1 + len(l1))
                out.rstrip()
                out.append(JOIN)
                out.append_text(_stretch(flat, marks, s2, "", e2 - s2 + len(l2)))  # JOIN says what it left out
                return out
    return _stretch(flat, marks, start, lead, width + 1)


def _place(flat: str, marks: list[tuple[int, int, str]], width: int) -> tuple[int, str]:
    """``(start, lead)`` of a ``width``-character stretch of ``flat`` showing the densest of
    ``marks`` (:func:`snippet`'s rule); ``lead`` is ``…`` when it does not start the text."""
    if not marks:
        return 0, ""
    reach = max(1, width - width // 4 - 2)
    first = densest([(s, t) for s, _, t in marks], reach)
    end = max(e for s, e, _ in marks if first <= s < first + reach)
    if end < width:  # the words fit from the text's start
        return 0, ""
    # The words do not fit in the line from its start (its last cell is the row's `…`): start a
    # little before them
    start = max(0, min(first - width // 4, len(flat) - width + 1))
    space = flat.find(" ", start, min(first, start + WORD_SNAP))
    if start and space >= 0:  # from the next word, not from inside one
        start = space + 1
    return start, ("…" if start else "")


def _left_out(marks: list[tuple[int, int, str]], start: int, stop: int) -> list[tuple[int, int, str]]:
    """The ``marks`` of the terms that no mark shows whole within ``[start, stop)``."""
    shown = {t for s, e, t in marks if start <= s and e <= stop}
    return [m for m in marks if m[2] not in shown]


def _stretch(flat: str, marks: list[tuple[int, int, str]], start: int, lead: str, n: int) -> Text:
    """``n`` characters: ``lead`` then ``flat`` from ``start``, with the ``marks`` in it
    highlighted (cut where it cuts them)."""
    stop = start + n - len(lead)
    out = Text(lead + flat[start:stop])
    for s, e, _ in marks:
        s, e = max(s, start), min(e, stop)
        if s < e:
            out.stylize(HIGHLIGHT, s - start + len(lead), e - start + len(lead))
    return out


def row_header(hit: Hit, now: datetime, home: str | None, terms: list[str] = ()) -> "RowHeader":
    """First line of a result row (see :class:`RowHeader`), the query's ``terms`` highlighted in
    the title."""
    return RowHeader(hit, now, home, terms)


AGENT_WIDTH = max(len(c.badge or c.display or c.agent) for c in CARDS.values()) + 2
"""Cells of the agent column: the longest agent badge or name plus 2, from the agents' cards
(``sources.CARDS``: no reader imported). As wide as the widest badge, so every row's badge
starts at the same place."""
DATE_WIDTH = 10  # ``2026-03-14``, ``yesterday``, ``12m ago``
PROJECT_WIDTH = 28  # at most; the end of the path is kept (``…/dev/webapp``)
COUNT_FROM = 100  # rows at least this wide show the message count


class RowHeader:
    """First line of a result row, laid out for the width it gets (Rich calls
    ``__rich_console__`` with it): the title keeps at least half of the row; then fixed columns,
    aligned from row to row: the agent badge, the project (the end of its path, as much as
    fits), the date, and the message count from :data:`COUNT_FROM` columns. Narrower rows drop the
    count, then the project, then the date, never the title. Markers (subagent, archived, ...)
    follow the title; the query's ``terms`` are highlighted in it, as in the snippet."""

    def __init__(self, hit: Hit, now: datetime, home: str | None, terms: list[str] = ()) -> None:
        self.hit, self.now, self.home, self.terms = hit, now, home, list(terms)
        self._laid: dict[int, Text] = {}  # the line per width (a row is rendered more than once)

    def __rich_console__(self, console, options):
        yield self.line_at(options.max_width)

    def line_at(self, width: int) -> Text:
        """:meth:`line` for ``width``, worked out once per width."""
        line = self._laid.get(width)
        if line is None:
            line = self._laid[width] = self.line(width)
        return line

    def __rich_measure__(self, console, options):
        return Measurement(20, options.max_width)

    def line_count(self, width: int) -> int:
        """Lines it takes at ``width`` (:func:`row_height`): one."""
        return 1

    def line(self, width: int) -> Text:
        """The header as one line of ``width`` cells."""
        s = self.hit.session
        date = relative_date(s.updated, self.now)
        count = counted(s.message_count, "msg")
        project = printable(short_path(s.project, self.home)) or "no project"
        fixed = AGENT_WIDTH + 1
        show_date = width >= 56
        fixed += DATE_WIDTH + 2 if show_date else 0
        show_count = width >= COUNT_FROM
        fixed += max(9, len(count)) + 2 if show_count else 0
        room = width - fixed - max(24, width // 2) - 2  # what the title (half the row) spares for the project
        project_width = min(PROJECT_WIDTH, room)  # the same in every row: the columns align
        if project_width < 10:
            project_width = 0
        title_width = max(1, width - fixed - (project_width + 2 if project_width else 0))

        out = Text(no_wrap=True, overflow="ellipsis")
        title = highlighted(s.title or "(untitled)", self.terms, style="bold")
        marks = row_markers(s)
        if self.hit.route == "similar":  # found by meaning alone (search.similar), as the CLI says
            marks.insert(0, "similar in meaning")
        if marks:
            title.append("  " + " · ".join(marks), style=f"italic {MUTED}")
        title = cut_to(title, title_width)  # a highlight cut at the edge stops before the `…`
        title.pad_right(title_width - title.cell_len)
        out.append_text(title)
        out.append(" ")
        badge = agent_name(s.agent)
        out.append(f" {badge} ", style=agent_style(s.agent))
        out.append(" " * (AGENT_WIDTH - len(badge) - 2))
        if project_width:
            out.append("  ")
            tail = _tail(project, project_width)
            out.append(tail + " " * (project_width - cell_len(tail)), style=MUTED)  # cells: 翻訳 is 4
        if show_date:
            out.append("  ")
            out.append(date.rjust(DATE_WIDTH), style=MUTED)
        if show_count:
            out.append("  ")
            out.append(count.rjust(9), style=MUTED)
        out.truncate(width, overflow="ellipsis")
        return out


def row_markers(s) -> list[str]:
    """Words after a row's title about what kind of session it is (subagent, archived, the app
    that created it)."""
    marks = []
    if s.parent_session_id:
        marks.append("subagent")
    if s.archived:
        marks.append("archived")
    app = s.extra.get("app")  # which app created it: Cline CLI or an editor, Cursor IDE or CLI
    if isinstance(app, str) and app and app != agent_name(s.agent):
        marks.append(printable(app))
    return marks


def structure_line(hit: Hit) -> Text | None:
    """The row line under the header that shows ``hits.structure_notes`` (None when empty)."""
    notes = [printable(n) for n in structure_notes(hit)]
    if not notes:
        return None
    line = Text("  ↳ ", style=MUTED, no_wrap=True, overflow="ellipsis")
    line.append(" · ".join(notes), style=f"italic {MUTED}")
    return line


def _tail(path: str, limit: int) -> str:
    """The end of ``path`` when it takes more than ``limit`` cells (``…/dev/webapp``; a CJK
    character takes two), from a ``/`` when one is in it (whole folder names), else cut inside
    the last one."""
    if cell_len(path) <= limit:
        return path
    start, cells = len(path), 0
    while start > 0 and cells + cell_len(path[start - 1]) <= limit - 1:
        start -= 1
        cells += cell_len(path[start])
    cut = path[start:]
    at = cut.find("/", 1)
    return "…" + (cut[at:] if at > 0 else cut)


ITEM_LEAD = 13
"""Cells before a window item's text: the hit mark (2), the label (10) and a space."""


def item_lines(item: Item, terms: list[str], *, width: int = 160, lines: int = 1) -> list[Text]:
    """A window item as up to ``lines`` rows: ``label`` then its text as the list previews it
    (:func:`~crabsearch.tui.messageview.preview`: a tool call's one line, tool output as the
    session view draws it), the first row a snippet around the first match when ``lines == 1``;
    lines of a JSON answer that are only brackets are left out; the hit is marked with ``▶``."""
    first = Text(no_wrap=True, overflow="ellipsis")
    first.append("▶ " if item.hit else "  ", style="bold cyan")
    first.append(f"{printable(item.label):<10}", style=ROLE_STYLES.get(item.role, ""))
    first.append(" ")
    drawn = preview(item)
    if lines == 1:
        first.append_text(snippet(drawn.plain, terms, width))
        return [first]
    body = [ln for ln in drawn.split("\n") if ln.plain.strip(BRACKETS)] or [Text("")]
    start = 0
    if item.hit:  # start at the first line with a match, so the matched words are visible
        start = next((i for i, ln in enumerate(body) if Engine.spans(ln.plain, terms)), 0)
    more = len(body) > start + lines or item.truncated
    shown = body[start:start + lines]
    text = snippet(shown[0].plain, terms, width) if item.hit else highlighted(shown[0][: width + 1], terms)
    first.append_text(text)
    if start and not text.plain.startswith("…"):  # one mark of text left out, not two
        first = Text.assemble(first[:ITEM_LEAD], Text("… ", style=MUTED), first[ITEM_LEAD:], no_wrap=True,
                              overflow="ellipsis")
    out = [first]
    for ln in shown[1:]:
        row = Text(" " * ITEM_LEAD, no_wrap=True, overflow="ellipsis")
        row.append_text(highlighted(ln[: width + 1], terms))
        out.append(row)
    if more:
        out[-1].append(" …", style=MUTED)
    return out


RUNG_NOTES = {
    "all": "every word, not as a phrase, below",
    "session": "the words spread over a session below",
    "repair": "spelling repaired below",
    "any": "fewer words matched below",
    "similar": "fewer words matched or similar in meaning below",
    "unindexed": "not indexed yet below",
}
"""What the rows below a change of rung (``Hit.route``) matched, by the lower rung."""
MIXED_ROUTES = frozenset({"any", "similar"})
"""Routes whose rows similarity search interleaves (``search.similar``): no rule between them."""


def rung_note(above: Hit | None, hit: Hit) -> str | None:
    """The note that marks where the rows switch from one rung of the ladder to the next: None
    for the first row, for a row found by the same rung as the row above it, and between rows
    of :data:`MIXED_ROUTES`."""
    if above is None or not above.route or not hit.route or above.route == hit.route:
        return None
    if {above.route, hit.route} <= MIXED_ROUTES:
        return None
    return RUNG_NOTES.get(hit.route, "looser matches below")


class RungRule:
    """A thin rule across the row with ``note`` in it, as wide as the row:
    ``── fewer words matched below ─────────``."""

    def __init__(self, note: str) -> None:
        self.note = note

    def __rich_console__(self, console, options):
        yield self.text(options.max_width)

    def text(self, width: int) -> Text:
        """The rule ``width`` cells wide."""
        label = f" {self.note} "
        rule = Text("──", style=MUTED)
        rule.append(label, style=f"italic {MUTED}")
        rule.append("─" * max(0, width - 2 - cell_len(label)), style=MUTED)
        rule.truncate(width)
        return rule

    def __rich_measure__(self, console, options):
        return Measurement(1, options.max_width)

    def line_count(self, width: int) -> int:
        """Lines it takes at ``width`` (:func:`row_height`): one."""
        return 1


def rung_rule(note: str) -> RungRule:
    """The rule for :func:`rung_note`'s ``note``."""
    return RungRule(note)


class ItemLines:
    """:func:`item_lines` laid out for the width the row gets (Rich calls ``__rich_console__``
    with it): a snippet starts where the query's words fit in the visible line, not in a fixed
    160 characters that a narrower row cuts off (``database timeout`` shows both words, not
    ``database`` and the line's end before ``timeout``)."""

    def __init__(self, item: Item, terms: list[str], lines: int = 1) -> None:
        self.item, self.terms, self.lines = item, terms, lines
        self._laid: dict[int, list[Text]] = {}
        """The lines per width: a row is rendered more than once (to measure its height, then
        to paint it, highlighted or not); the snippet is worked out once per width."""

    def __rich_console__(self, console, options):
        yield from self.laid(options.max_width)

    def __rich_measure__(self, console, options):
        return Measurement(1, options.max_width)

    def laid(self, width: int) -> list[Text]:
        """The lines (each ``no_wrap``, one line, cut to the row by :func:`cut_to`) for a row
        ``width`` cells wide."""
        lines = self._laid.get(width)
        if lines is None:
            laid = item_lines(self.item, self.terms, width=max(20, width - ITEM_LEAD), lines=self.lines)
            lines = self._laid[width] = [cut_to(line, width) for line in laid]
        return lines

    def line_count(self, width: int) -> int:
        """Lines it takes at ``width`` (:func:`row_height`)."""
        return len(self.laid(width))


def row_height(row: Group, width: int, console) -> int:
    """Lines ``row`` (a :func:`result_prompt`) takes ``width`` cells wide, counted without
    rendering it: its parts' own ``line_count``, a ``Text``'s lines as Rich wraps it (as Textual
    measures a ``Text``), any other part rendered. A list measures each new row's height before
    its first paint; rendering every row for it cost as much as painting the screen."""
    total = 0
    for part in row.renderables:
        count = getattr(part, "line_count", None)
        if count is not None:
            total += count(width)
        elif isinstance(part, Text):
            total += part.plain.count("\n") + 1 if part.no_wrap else len(
                Text(part.plain).wrap(console, width, tab_size=part.tab_size or 8))
        else:
            total += len(console.render_lines(part, console.options.update_width(width), pad=False))
    return total


def row_lines(row: Group, width: int, console, options) -> list[Text] | None:
    """The lines of ``row`` (a :func:`result_prompt`) ``width`` cells wide, each a one-line
    ``Text`` as Rich lays it out with the console ``options`` (``Text.__rich_console__``:
    wrapped or cut to the width by the part's ``no_wrap`` and ``overflow``, else the options');
    None when a part is not one of this module's (then only Rich knows its lines). Lets a row
    be painted without Rich's renderer (:class:`~crabsearch.tui.results.RowVisual`)."""
    out: list[Text] = []
    for part in row.renderables:
        if isinstance(part, ItemLines):
            texts = part.laid(width)
        elif isinstance(part, RowHeader):
            texts = [part.line_at(width)]
        elif isinstance(part, RungRule):
            texts = [part.text(width)]
        elif isinstance(part, Text):
            texts = [part]
        else:
            return None
        for text in texts:
            if text.end != "\n":
                return None
            out.extend(text.wrap(console, width, justify=text.justify or options.justify or "default",
                                 overflow=text.overflow or options.overflow or "fold",
                                 tab_size=(console.tab_size if text.tab_size is None else text.tab_size) or 8,
                                 no_wrap=text.no_wrap if text.no_wrap is not None else bool(options.no_wrap)))
    return out


def cut_to(line: Text, width: int) -> Text:
    """``line`` (one ``no_wrap`` line) cut to ``width`` cells with ``…`` as Rich cuts it
    (``overflow="ellipsis"``), but with no style of the cut text on the ``…``: a highlighted
    word cut at the row's edge showed as ``[th…]``, or as a lone highlighted ``…``."""
    if line.cell_len <= width:
        return line
    line = line.copy()
    line.truncate(width, overflow="ellipsis")
    end = len(line.plain) - 1
    if end >= 0 and line.plain[end] == "…":
        line.spans[:] = [Span(s.start, min(s.end, end), s.style) for s in line.spans if s.start < end]
    return line


def result_prompt(hit: Hit, terms: list[str], now: datetime, home: str | None,
                  window: list[Item] | None = None, note: str | None = None,
                  keys: tuple[str, str, str] = ("+", "-", "o")) -> Group:
    """The OptionList prompt of a result row: header, the structure line when the hit has notes
    (:func:`structure_line`), then the hit's snippet, or, when expanded, the context window
    ``window`` (hit included) with a few lines per message. ``note`` (:func:`rung_note`) puts a
    thin rule with it above the row: the rows from here on were found by a lower rung. ``keys``:
    the widen, narrow and open keys the window's last line names (as bound in ``[keys]``)."""
    parts: list = [rung_rule(note)] if note else []
    parts.append(row_header(hit, now, home, terms))
    notes = structure_line(hit)
    if notes is not None:
        parts.append(notes)
    if window is None:
        item = hit.item
        if item is not None:
            parts.append(ItemLines(item, terms))
    else:
        for it in window:
            parts.append(ItemLines(it, terms, lines=4 if it.hit else 2))
        parts.append(Text(f"  messages {window[0].message_index + 1}–{window[-1].message_index + 1} of "
                          f"{hit.session.message_count} · {keys[0]}/{keys[1]} widen/narrow · {keys[2]} open",
                          style=f"italic {MUTED}")
                     if window else Text("  " + _no_window(hit), style=MUTED))
    return Group(*parts)


def _no_window(hit: Hit) -> str:
    """What an expanded row says when its window came back empty: the session holds no messages
    (compaction deleted them all: a Crabtalk store keeps its title and summary), or the index no
    longer holds it (a refresh dropped it after the list was shown), because its transcript is
    gone or no longer what was indexed."""
    if not hit.session.message_count:
        return empty_session_note(hit.session)
    if transcript_gone(hit.session.path):
        return GONE
    return "(no messages: the transcript changed since the list was shown; Home shows the list again)"


def empty_session_note(session) -> str:
    """``(no messages in this session; its summary: …)`` for a session that holds none (not
    "its transcript changed", and not a blank view); the summary flattened to one line, at most
    300 characters."""
    summary = " ".join(printable(session.summary or "").split())
    if len(summary) > 300:
        summary = summary[:299] + "…"
    return "(no messages in this session" + (f"; its summary: {summary})" if summary else ")")


def window_text(items: list[Item], hit_index: int | None = None) -> str:
    """Plain text of a context window for the clipboard: ``#N label time`` then the text, per
    message; the hit marked with ``▶``."""
    out = []
    for it in items:
        when = it.timestamp.strftime(" %Y-%m-%d %H:%M:%S UTC") if it.timestamp else ""
        mark = "▶ " if it.message_index == hit_index else ""
        out.append(f"{mark}#{it.message_index + 1} {it.label}{when}\n{it.text}")
    return "\n\n".join(out) + "\n"

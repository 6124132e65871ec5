"""Turning engine results into Rich text for the screens (pure functions, no widgets).

Transcript text always goes through :func:`crabsearch.text.printable` and into ``rich.text.Text``
objects built with ``Text(...)``/``append`` (never ``Text.from_markup``), so ``[bold]`` or an
unterminated ``[`` in a transcript is shown exactly as typed.
"""

from __future__ import annotations

from datetime import datetime, timezone

from rich.console import Group
from rich.text import Text

from ..search import Engine, Hit, Item
from ..text import printable

ROLE_STYLES = {
    "user": "bold cyan",
    "assistant": "green",
    "tool": "dim",
    "system": "dim",
    "summary": "yellow",
}
AGENT_STYLES = {"claude": "bold white on dark_orange3", "codex": "bold white on dodger_blue3"}
MUTED = "dim"
HIGHLIGHT = "bold black on yellow"
AGENT_NAMES = {"claude": "Claude", "codex": "Codex"}


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


def highlighted(text: str, terms: list[str], style: str = "") -> Text:
    """``Text`` of ``text`` (made printable) with every query-term match in :data:`HIGHLIGHT`."""
    text = printable(text)
    out = Text(text, style=style)
    for start, end in Engine.spans(text, terms):
        out.stylize(HIGHLIGHT, start, end)
    return out


def snippet(text: str, terms: list[str], width: int = 160) -> Text:
    """One line of ``text`` (whitespace collapsed) starting a little before the first match."""
    flat = " ".join(printable(text).split())
    spans = Engine.spans(flat, terms)
    start = 0
    if spans and spans[0][0] > width // 3:
        start = spans[0][0] - width // 4
        flat = "…" + flat[start:]
    return highlighted(flat[: width + 1], terms)


def row_header(hit: Hit, now: datetime, home: str | None) -> Text:
    """First line of a result row: title, agent, project, date, message count."""
    s = hit.session
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(printable(s.title or "(untitled)"), style="bold")
    line.append("  ")
    line.append(f" {AGENT_NAMES.get(s.agent, s.agent)} ", style=AGENT_STYLES.get(s.agent, "reverse"))
    if s.parent_session_id:
        line.append(" subagent", style=f"italic {MUTED}")
    line.append("  ")
    line.append(printable(short_path(s.project, home)) or "no project", style=MUTED)
    line.append(f"  {relative_date(s.updated, now)}", style=MUTED)
    line.append(f"  {s.message_count} msgs", style=MUTED)
    return line


def item_lines(item: Item, terms: list[str], *, width: int = 160, lines: int = 1) -> list[Text]:
    """A window item as up to ``lines`` rows: ``label`` then its text (the first row a snippet
    around the first match when ``lines == 1``); the hit is marked with ``▶``."""
    first = Text(no_wrap=True, overflow="ellipsis")
    first.append("▶ " if item.hit else "  ", style="bold cyan")
    first.append(f"{item.label:<10}", style=ROLE_STYLES.get(item.role, ""))
    first.append(" ")
    if lines == 1:
        first.append_text(snippet(item.text, terms, width))
        return [first]
    body = [ln for ln in printable(item.text).splitlines() if ln.strip()] or [""]
    more = len(body) > lines or item.truncated
    body = body[:lines]
    first.append_text(highlighted(body[0][: width + 1], terms))
    out = [first]
    for ln in body[1:]:
        row = Text(" " * 13, no_wrap=True, overflow="ellipsis")
        row.append_text(highlighted(ln[: width + 1], terms))
        out.append(row)
    if more:
        out[-1].append(" …", style=MUTED)
    return out


def result_prompt(hit: Hit, terms: list[str], now: datetime, home: str | None,
                  window: list[Item] | None = None) -> Group:
    """The OptionList prompt of a result row: header plus the hit's snippet, or, when expanded,
    the context window ``window`` (hit included) with a few lines per message."""
    parts: list[Text] = [row_header(hit, now, home)]
    if window is None:
        item = hit.item
        if item is not None:
            parts.extend(item_lines(item, terms))
    else:
        for it in window:
            parts.extend(item_lines(it, terms, lines=4 if it.hit else 2))
        parts.append(Text(f"  messages {window[0].message_index}–{window[-1].message_index} of "
                          f"{hit.session.message_count} · +/- widen/narrow · o open", style=f"italic {MUTED}")
                     if window else Text("  (no messages)", style=MUTED))
    return Group(*parts)

"""The filters of the query language (``agent:codex``, ``since:7d``): one :class:`Filter` entry
each in :data:`FILTERS`, and everything about a filter is read from its entry:

* the query parser (``crabsearch.query``): its name, its value's parser, what it needs when
  typed with no value, and the problem line when its value means nothing (:meth:`Filter.problem`,
  the one wording of each rule, for the app, the command line and MCP alike);
* the index (``crabsearch.index.filtering``, ``writer``, ``schema``): how it narrows the search
  (:class:`Narrow`), and for a filter on a session field of its own, the value the writer indexes;
* the app (``crabsearch.tui.filters``): chips, Tab completion (:attr:`Filter.complete`), the
  picker key its problem line names, what a value being typed can still become;
* the help (F1, ``tui.panels``) and the README's query-language table (:func:`readme_rows`;
  ``python -m crabsearch.filters`` rewrites it);
* MCP (``crabsearch.mcp_server``): the tool argument, when it has one (:class:`McpArg`).

Adding a filter is one entry here and its test; ``tests/test_filter_registry.py`` fails when an
entry lacks a piece. This module imports no Whoosh and no agent reader.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from .dates import RELATIVE, day_end, parse_day

ROLES = ("user", "assistant")
DATE_CHOICES = [("today", "today"), ("yesterday", "since yesterday"), ("7d", "the last 7 days"),
                ("30d", "the last 30 days"), ("90d", "the last 90 days"), ("365d", "the last year")]
"""The dates the app offers (``since:`` picker, Tab): ``(value, label)``."""


class Bad(ValueError):
    """A value a filter does not take; ``str()`` says what is wrong with it in a few words, the
    value as ``{value}`` (``no agent is called “{value}”``): :meth:`Filter.problem` fills it in
    and adds what is valid."""


@dataclass(frozen=True)
class Facts:
    """What a filter's value is read against: the valid agent names (empty: any name) and the
    clock of relative dates (aware, local)."""

    agents: tuple[str, ...]
    now: datetime


@dataclass(frozen=True)
class Narrow:
    """How a filter narrows the search, read by ``crabsearch.index`` (no query object here).

    ``kind``: ``term`` (documents whose ``field`` holds the value, messages and sessions alike),
    ``messages`` (messages whose ``field`` holds it; no session document passes), ``project`` (a
    working directory's last folder, or a path prefix), ``time`` (``since:``/``until:`` on each
    document's time) or ``fields`` (searches other text fields: ``in:tools``).
    ``of_session``, for a ``term`` on a field of its own: the value the index writer stores on
    every document of a session (None: not indexed), read as the filter's parser reads a value;
    the schema gets the field, and the index is rebuilt when such fields change."""

    kind: str
    field: str = ""
    of_session: Callable[[object], str | None] | None = None


@dataclass(frozen=True)
class McpArg:
    """A filter's MCP tool argument: ``description`` (``{agents}``: the agent names), the
    ``tools`` that take it, and ``enum``: the schema lists the agent names as its values."""

    description: str
    tools: tuple[str, ...]
    enum: bool = False


@dataclass(frozen=True)
class Filter:
    """One filter of the query language (see the module docstring).

    ``parse(value, facts)`` returns the typed value (what ``ParsedQuery.values`` holds) or raises
    :class:`Bad`. ``needs``: what the name typed with no value lacks (``a name``); ``valid``: what
    it takes (``the agents are {agents}``). ``complete``: Tab's and the picker's values, a facet
    name of ``Engine.facets`` (what the index holds) or a tuple of fixed values. ``could_be(value,
    facts)``: a value being typed can still become a valid one (``agent:cl``). ``help``: the F1
    row ``(what you type, what it does)``; ``readme``: the README row (None: another filter's row
    names this one, ``until:`` in ``since:``'s); ``{agents}`` in either is the agent names.
    ``picker``: the app key of its picker. ``scope``: what an argument that overrides the query's
    own value searches (``codex only``)."""

    name: str
    parse: Callable[[str, Facts], object]
    needs: str
    valid: str
    complete: str | tuple[str, ...]
    narrow: Narrow
    help: tuple[str, str]
    readme: tuple[str, str] | None
    picker: str | None = None
    mcp: McpArg | None = None
    could_be: Callable[[str, Facts], bool] = lambda value, facts: False
    scope: str = "{value} only"

    def problem(self, shown: str | None, value: str, facts: Facts, show: Callable[[str], str] = str,
                names: bool = True) -> str | None:
        """The one line that says a filter means nothing and what is valid, or None when
        ``value`` is valid: ``agent: needs a name: the agents are claude, codex`` for no value,
        ``agent:vim: no agent is called “vim”; the agents are …`` for one it does not take
        (``shown``: the filter as written; None for a value given apart from the query text, a
        command-line or MCP argument: the name, and the value unless the line quotes it already;
        ``show``: how the value is written into the line, the app's ``printable``). The parser's
        notes add ``; filter ignored``, the app its picker and a full stop, MCP a full stop.
        ``names=False`` leaves the list of agents out (the app, whose picker lists them)."""
        known = "{agents}" not in self.valid or (facts.agents and names)  # else no list of names to give
        valid = self.valid.format(agents=", ".join(facts.agents)) if known else ""
        if not value.strip():
            return f"{self.name}: needs {self.needs}" + (f": {valid}" if valid else "")
        try:
            self.parse(value, facts)
        except Bad as bad:
            if shown is None:
                shown = self.name if "{value}" in str(bad) else f"{self.name}:{show(value)}"
            return f"{shown}: {str(bad).format(value=show(value))}" + (f"; {valid}" if valid else "")
        return None

    def read(self, value: str, facts: Facts, shown: str | None = None) -> object:
        """The typed value of ``value``; raises :class:`Bad` with :meth:`problem`'s line (``shown``
        as there; default: ``name:value``)."""
        line = self.problem(f"{self.name}:{value}" if shown is None else shown, value, facts)
        if line is not None:
            raise Bad(line)
        return self.parse(value, facts)


def _agent(value: str, facts: Facts) -> str:
    name = value.lower()
    if facts.agents and name not in facts.agents:
        import difflib  # only for an unknown name: not at every command's start

        close = difflib.get_close_matches(name, facts.agents, n=2, cutoff=0.6)
        raise Bad("no agent is called “{value}”" + (f" (did you mean {' or '.join(close)}?)" if close else ""))
    return name


def _named(thing: str, names: tuple[str, ...]):
    def parse(value: str, facts: Facts) -> str:
        if value.lower() not in names:
            raise Bad(f"no {thing} is called “{{value}}”")
        return value.lower()
    return parse


def _since(value: str, facts: Facts) -> datetime:
    day = parse_day(value, facts.now)
    if day is None:
        raise Bad("that is not a date")
    return day


def _until(value: str, facts: Facts) -> datetime:
    _since(value, facts)
    return day_end(value, facts.now)


def _in(value: str, facts: Facts) -> bool:
    if value.lower() != "tools":
        raise Bad("no place is called “{value}”")
    return True


def _starts(values: Callable[[Facts], tuple[str, ...]]):
    return lambda value, facts: any(v.startswith(value.lower()) for v in values(facts))


def _date_could_be(value: str, facts: Facts) -> bool:
    v = value.lower()
    return any(w.startswith(v) for w in ("today", "yesterday")) or re.fullmatch(r"\d[\d-]*", v) is not None


_DATES = "write 2026-01-31, today, yesterday, or a time ago such as 12h, 7d, 2w or 3m"

FILTERS: dict[str, Filter] = {f.name: f for f in (
    Filter("agent", _agent, needs="a name", valid="the agents are {agents}", complete="agent",
           narrow=Narrow("term", "agent"),
           help=("agent:codex", "claude, codex, gemini, …"),
           readme=("`agent:codex`", "one agent's sessions only: {agents}"), picker="F3",
           mcp=McpArg("only this agent's sessions: {agents}", ("search_sessions", "recent_sessions"), enum=True),
           could_be=_starts(lambda facts: facts.agents)),
    Filter("project", lambda value, facts: value, needs="a name",
           valid="the last folder of the working directory, or a path", complete="project",
           narrow=Narrow("project"),
           help=("project:NAME", "last folder, or project:/path"),
           readme=("`project:webapp`, `project:/home/me/work`",
                   "sessions whose working directory ends in `webapp`, or lies under a path"), picker="F4",
           mcp=McpArg("only sessions whose working directory ends in this folder name or lies under this path",
                      ("search_sessions", "recent_sessions"))),
    Filter("role", _named("role", ROLES), needs="a role",
           valid="the roles are user (what you said) and assistant (what the agent said)", complete=ROLES,
           narrow=Narrow("messages", "role"),
           help=("role:user", "user or assistant"),
           readme=("`role:user`, `role:assistant`", "only what you said, or what the assistant said"),
           could_be=_starts(lambda facts: ROLES)),
    Filter("since", _since, needs="a date", valid=_DATES, complete=tuple(v for v, _ in DATE_CHOICES),
           narrow=Narrow("time"),
           help=("since:7d until:", "2026-01-31, 7d, today, yesterday"),
           readme=("`since:7d`, `since:2026-01-31`, `until:yesterday`, `since:today`",
                   "by message date, in local time (`h`, `d`, `w`, `m` units)"), picker="F5",
           mcp=McpArg("only messages from this day on: 2026-01-31, 7d, 2w, 3m, 12h, today, yesterday",
                      ("search_sessions",)),
           could_be=_date_could_be, scope="from {value} on"),
    Filter("until", _until, needs="a date", valid=_DATES, complete=tuple(v for v, _ in DATE_CHOICES),
           narrow=Narrow("time"), help=("since:7d until:", "2026-01-31, 7d, today, yesterday"), readme=None,
           picker="F5", could_be=_date_could_be, scope="until {value}"),
    Filter("in", _in, needs="a place", valid="the only place is in:tools (tool output, when it is indexed)",
           complete=("tools",), narrow=Narrow("fields"),
           help=("in:tools", "tool output (when indexed)"),
           readme=("`in:tools`", "tool output, when tool-output indexing is on (below)"),
           could_be=_starts(lambda facts: ("tools",))),
    Filter("branch", lambda value, facts: value.lower(), needs="a name",
           valid="the git branch the session ran on (Tab completes it)", complete="branch",
           narrow=Narrow("term", "branch", of_session=lambda session: (session.git_branch or "").lower() or None),
           help=("branch:main", "the git branch it ran on"),
           readme=("`branch:main`, `branch:feature/login`",
                   "sessions run on that git branch, any case (Claude Code, Codex and Copilot CLI record it)")),
)}
"""Every filter, in the order the help, the README and the index's clauses list them."""

FILTER_KEYS = tuple(FILTERS)


def indexed_fields() -> tuple[str, ...]:
    """The fields the index writer fills from the filters' :attr:`Narrow.of_session`, in order:
    part of the index's schema and of its version stamp."""
    return tuple(f.narrow.field for f in FILTERS.values() if f.narrow.of_session is not None)


def help_rows() -> list[tuple[str, str]]:
    """The F1 help's filter rows, each once, in :data:`FILTERS` order."""
    rows: list[tuple[str, str]] = []
    for f in FILTERS.values():
        if f.help not in rows:
            rows.append(f.help)
    return rows


def readme_rows(agents: tuple[str, ...]) -> list[str]:
    """The README's table of filters, a Markdown table: its header, then a row per filter with a
    ``readme`` row (``agents``: the agent names its ``{agents}`` lists)."""
    names = ", ".join(f"`{a}`" for a in agents)
    return ["| filter | it finds |", "|---|---|"] + [
        f"| {f.readme[0]} | {f.readme[1].format(agents=names)} |" for f in FILTERS.values() if f.readme]


README_START = "<!-- filters: generated from crabsearch/filters.py by `python -m crabsearch.filters` -->"
README_END = "<!-- end of filters -->"


def with_readme_rows(readme: str, agents: tuple[str, ...]) -> str:
    """``readme`` with the lines between :data:`README_START` and :data:`README_END` replaced by
    :func:`readme_rows`. Raises ``ValueError`` when the markers are missing."""
    head, start, rest = readme.partition(README_START + "\n")
    _, end, tail = rest.partition(README_END)
    if not start or not end:
        raise ValueError("the README has no generated filter rows (its markers are missing)")
    return head + start + "".join(row + "\n" for row in readme_rows(agents)) + end + tail


if __name__ == "__main__":  # pragma: no cover - rewrites the README's filter rows in place
    from .sources import AGENTS

    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "README.md")
    path.write_text(with_readme_rows(path.read_text(encoding="utf-8"), AGENTS), encoding="utf-8")

"""One search as the three doors ask it (the app, the command line, MCP): the door's filter
arguments checked, the index refreshed, a damaged index rebuilt and the search made once more,
and the notes that go with the answer. The doors differ only in how they show it.

* :func:`given_filters`: filter values from outside the query text (``--agent``, MCP's
  ``agent``, ``project``, ``since``), checked by their ``crabsearch.filters`` entry: a value it
  does not take raises :class:`BadArgument` with the entry's problem line.
* :func:`run`: refresh (the door's way), rebuild a damaged index (the door's way) and search,
  as an :class:`Answer`; :func:`retrying` does the damaged-index retry for any other read.
* :attr:`Answer.notes`: the result's notes, the spelling repair (:func:`spelling_note`), a cut
  query and a search stopped early, in that order, each worded once here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Mapping, TypeVar

from ..filters import FILTERS, Facts
from ..hits import SearchResult
from ..index.store import IndexDamaged
from ..query import MAX_QUERY_CHARS
from ..sources import SOURCES
from .caps import DEFAULT_AFTER, DEFAULT_BEFORE, DEFAULT_LIMIT

SHOWN_CHARS = 200
"""Characters of an argument a problem line quotes at most (then ``…``)."""

T = TypeVar("T")


class BadArgument(ValueError):
    """A door's filter argument that names a value its filter does not take; ``str()`` is the
    filter's problem line (``agent:vim: no agent is called “vim”; the agents are …``)."""


def given_filters(args: Mapping[str, str | None]) -> dict[str, str]:
    """The filter arguments ``args`` (filter name -> value; None or blank: not given), stripped.
    Raises :class:`BadArgument` for a value its filter does not take, or one holding a double
    quote (the query language cannot write it; the answer's notes write filters in it), and
    ``KeyError`` for a name that is no filter."""
    facts = Facts(tuple(SOURCES), datetime.now().astimezone())
    out = {}
    for key, value in args.items():
        f = FILTERS[key]
        if value is None or not value.strip():
            continue
        value = value.strip()
        if '"' in value:
            raise BadArgument(f"{key}:{_clip(value)}: a filter value cannot hold a double quote; "
                              + f.valid.format(agents=", ".join(facts.agents)))
        line = f.problem(None, value, facts, show=_clip)
        if line is not None:
            raise BadArgument(line)
        out[key] = value
    return out


def _clip(value: str) -> str:
    return value[:SHOWN_CHARS] + ("…" if len(value) > SHOWN_CHARS else "")


@dataclass
class Ask:
    """A search as a door asks it: ``query`` (the query language), ``given`` (checked filter
    arguments, :func:`given_filters`: each overrides the query's own) and the options of
    :meth:`Engine.search <crabsearch.search.Engine.search>` of the same names."""

    query: str
    given: dict[str, str] = field(default_factory=dict)
    limit: int = DEFAULT_LIMIT
    before: int = DEFAULT_BEFORE
    after: int = DEFAULT_AFTER
    sort: str = "relevance"
    explain: bool = False
    redact: bool | None = None
    typing: bool = False
    time_limit: float | None = None
    stop: object = None
    repair: bool = True


@dataclass
class Answer:
    """What :func:`run` found: ``result`` (empty when the index was damaged and the door does not
    rebuild); ``indexing``: a refresh was still running (words were not spelling-repaired: a
    half-built index lacks them); ``missing``: there is no index to search; ``damaged``: why the
    index was damaged, when it was (then rebuilt, or left to the door)."""

    result: SearchResult
    indexing: bool = False
    missing: bool = False
    damaged: str | None = None

    @property
    def notes(self) -> list[str]:
        """The answer's notes in order: the result's own, the spelling repair, a cut query, a
        search stopped early."""
        r = self.result
        notes = list(r.notes)
        repaired = spelling_note(r.corrections)
        if repaired:
            notes.append(repaired)
        if r.cut:
            notes.append(f"the query was cut to its first {MAX_QUERY_CHARS} characters")
        if r.partial:
            notes.append("stopped early; results are partial")
        return notes


def spelling_note(corrections: Mapping[str, str]) -> str | None:
    """``showing results for coalesce instead of coalesec, …`` for the words a search repaired
    (``SearchResult.corrections``: typed -> used), or None."""
    if not corrections:
        return None
    return "showing results for " + ", ".join(f"{v} instead of {k}" for k, v in corrections.items())


def retrying(call: Callable[[], T], rebuild: Callable[[str], None]) -> T:
    """``call()``; when the index turns out damaged (``IndexDamaged``), ``rebuild(line)`` (the
    door says ``line``, rebuilds the index from the transcripts and reopens its engine) and
    ``call()`` once more."""
    try:
        return call()
    except IndexDamaged as exc:
        rebuild(rebuilding_line(str(exc)))
        return call()


def rebuilding_line(why: str) -> str:
    """What a door says before it rebuilds a damaged index: ``{why}; rebuilding it now``."""
    return f"{why}; rebuilding it now"


def run(engine, ask: Ask, *, refresh: Callable[[], bool] | None = None,
        rebuild: Callable[[str], None] | None = None) -> Answer:
    """The search ``ask`` on ``engine``, as an :class:`Answer`.

    ``refresh()``, when given, runs first and returns False while the refresh it started still
    runs (MCP answers from what is committed): the answer is then ``indexing`` and no word is
    spelling-repaired. ``rebuild(line)`` rebuilds a damaged index (see :func:`retrying`), and
    without a refresh (which rebuilds it itself) also one known damaged before the search;
    without it a damaged index gives an empty result and ``damaged`` (the app rebuilds in the
    background). Other errors pass through."""
    done = refresh() if refresh is not None else True
    damaged = None
    if refresh is None and rebuild is not None and not engine.exists and engine.damage:  # a refresh rebuilds it
        damaged = f"the index is damaged ({engine.damage})"
        rebuild(rebuilding_line(damaged))

    def search() -> SearchResult:
        return engine.search(ask.query, limit=ask.limit, before=ask.before, after=ask.after, sort=ask.sort,
                             time_limit=ask.time_limit, explain=ask.explain, redact=ask.redact, typing=ask.typing,
                             stop=ask.stop, repair=ask.repair and done, given=ask.given)

    try:
        result = search()
    except IndexDamaged as exc:
        damaged = str(exc)
        if rebuild is None:
            return Answer(SearchResult(query=ask.query, hits=[]), indexing=not done, damaged=damaged)
        rebuild(rebuilding_line(damaged))
        result = search()
    return Answer(result, indexing=not done, missing=not result.hits and not engine.exists, damaged=damaged)

"""The query language: what a typed query means, before any index is involved.

Syntax:

* plain words: ``retry backoff`` (searched down the ladder: phrase, all, repair, any);
* ``"quoted phrase"``: the words adjacent and in order (an unbalanced quote runs to the end);
* ``-word`` / ``-"a phrase"``: leave out the sessions that contain it. A ``-word`` is an
  exclusion only in a query that reads as typed (:func:`reads_as_typed`: at most
  :data:`TYPED_MAX_PARTS` parts, none of ``< > | ; = ( ) { } $ ` ``), or among the tokens that end
  a longer one without those characters, and only with two characters or more after the dash:
  inside a pasted command or line of code, and as ``-p``, it is a word;
* ``word*``: prefix (two letters at least);
* filters ``name:value``, combined with words and applied inside the search (before the result
  limit): the entries of :data:`crabsearch.filters.FILTERS` (``agent:claude``, ``project:NAME``
  or ``project:/path/prefix``, ``role:user``, ``since:7d``, ``until:2026-01-31``, ``in:tools``);
  a value with spaces is quoted: ``project:"claude app"``.

Parsing never raises: anything it does not understand is kept as plain words, and a filter whose
value means nothing is reported in ``notes`` (its registry entry's problem line) and ignored.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Mapping

from .dates import EARLIEST, LATEST, parse_day  # noqa: F401 - the query language's dates, named here too
from .filters import FILTER_KEYS, FILTERS, ROLES, Bad, Facts  # noqa: F401

MAX_QUERY_CHARS = 512
TYPED_MAX_PARTS = 8
"""A query of more whitespace-separated parts than this reads as pasted (:func:`reads_as_typed`)."""
_CODE_MARKS = frozenset("<>|;=(){}$`")
_DEEP_PATH = re.compile(r"[^\s/\\]+[/\\]+[^\s/\\]+[/\\]+[^\s/\\]")
_TOKEN = re.compile(r'(-?)"([^"]*)("?)|(\w+):"([^"]*)"?|(\S+)')


@dataclass
class ParsedQuery:
    """A parsed query. ``words`` are the plain words in order; ``phrases`` the quoted phrases;
    ``excluded`` words or phrases to exclude; ``prefixes`` the ``word*`` stems; ``values`` the
    filters' typed values by name (``crabsearch.filters``: ``since``/``until`` aware UTC
    datetimes, ``until`` exclusive; ``in`` True), also read as ``agent``, ``project``, ``role``,
    ``since``, ``until`` and ``in_tools``; ``notes`` explain ignored or cut parts."""

    text: str
    words: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    unclosed: str | None = None
    """The phrase of a quote with no closing quote (it runs to the end), else None."""
    excluded: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    values: dict[str, object] = field(default_factory=dict)
    cut: bool = False
    notes: list[str] = field(default_factory=list)
    sequence: list[tuple[str, str]] = field(default_factory=list)
    """The plain words and quoted phrases in the order typed: ``("word", w)`` or ``("phrase", p)``
    (what :meth:`loosened` puts back in place)."""

    agent = property(lambda self: self.values.get("agent"), lambda self, v: self._set("agent", v))
    project = property(lambda self: self.values.get("project"), lambda self, v: self._set("project", v))
    role = property(lambda self: self.values.get("role"), lambda self, v: self._set("role", v))
    since = property(lambda self: self.values.get("since"), lambda self, v: self._set("since", v))
    until = property(lambda self: self.values.get("until"), lambda self, v: self._set("until", v))
    in_tools = property(lambda self: bool(self.values.get("in")), lambda self, v: self._set("in", v or None))

    def _set(self, name: str, value) -> None:
        if value is None:
            self.values.pop(name, None)
        else:
            self.values[name] = value

    def without(self, name: str) -> "ParsedQuery":
        """A copy with the filter ``name`` unset (its other filters and words as they are)."""
        return dataclasses.replace(self, values={k: v for k, v in self.values.items() if k != name})

    def loosened(self, phrases: list[str]) -> "ParsedQuery":
        """A copy where the quoted ``phrases`` (of :attr:`phrases`) are plain words where they
        stood, split at whitespace, each word as written (a ``-p`` or ``key:value`` inside the
        quotes is a word, never an exclusion or a filter); the other phrases stay phrases."""
        gone = set(phrases)
        sequence = []
        for kind, text in self.sequence:
            sequence += [("word", w) for w in text.split()] if kind == "phrase" and text in gone else [(kind, text)]
        return dataclasses.replace(
            self, words=[t for k, t in sequence if k == "word"], phrases=[p for p in self.phrases if p not in gone],
            unclosed=None if self.unclosed in gone else self.unclosed, sequence=sequence,
            notes=list(self.notes), values=dict(self.values))

    @property
    def unclosed_note(self) -> str | None:
        """What the search says of a quote with no closing quote (:attr:`unclosed`), else None:
        ``no closing quote: "…" searched as one phrase`` (the CLI's and MCP's notes; the app's once
        the typing stopped)."""
        return f'no closing quote: "{self.unclosed}" searched as one phrase' if self.unclosed else None

    @property
    def has_filters(self) -> bool:
        """True when any filter is set."""
        return any(v is not None and v is not False for v in self.values.values())

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to match (filters alone list recent sessions)."""
        return not (self.words or self.phrases or self.prefixes)


def parse(text: str, *, agents: tuple[str, ...] = (), now: datetime | None = None,
          given: Mapping[str, str] | None = None) -> ParsedQuery:
    """Parse ``text`` (cut to 512 characters) into a :class:`ParsedQuery`. ``agents`` are the
    valid ``agent:`` values (unknown ones are reported in ``notes``); ``now`` fixes the clock for
    relative dates (local time). ``given``: filter values from outside the text (``--agent``, an
    MCP argument), by filter name, read after it: each replaces the text's own value of that
    filter, with a note when they differ (a blank one is no filter). Never raises."""
    q = ParsedQuery(text=used_part(text), cut=len(text) > MAX_QUERY_CHARS)
    facts = Facts(agents, now or datetime.now().astimezone())
    shown: dict[str, str] = {}
    typed = reads_as_typed(q.text)
    tail = _exclusions_at_end(q.text)
    for m in _TOKEN.finditer(q.text):
        neg, quoted, bare = m.group(1), m.group(2), m.group(6)
        if m.group(4) is not None:  # key:"a value with spaces"
            if m.group(4).lower() not in FILTER_KEYS:  # not a filter: the words of the phrase
                plain = m.group(0).replace('"', " ").split()
                q.words.extend(plain)
                q.sequence += [("word", w) for w in plain]
                continue
            bare = f"{m.group(4)}:{m.group(5).strip()}"
        if quoted is not None:
            if quoted.strip():
                (q.excluded if neg else q.phrases).append(quoted.strip())
                if not neg:
                    q.sequence.append(("phrase", quoted.strip()))
                if not m.group(3):
                    q.unclosed = quoted.strip()
            continue
        before = len(q.words)
        _bare(q, bare, facts, shown, typed or m.start() >= tail)
        q.sequence += [("word", w) for w in q.words[before:]]
    for key, value in (given or {}).items():
        if value is None or not value.strip():
            continue
        try:
            typed = FILTERS[key].read(value.strip(), facts)
        except Bad as bad:
            q.notes.append(f"{bad}; filter ignored")
            continue
        old = shown.get(key)
        if old is not None and old[1] != typed:
            q.notes.append(f"{key}:{old[0]} in the query is overridden: searching "
                           + FILTERS[key].scope.format(value=value.strip()))
        q.values[key] = typed
    return q


def no_exact_match_note(phrase: str) -> str:
    """What a search says when the quoted ``phrase`` matched no session and its words were
    searched as plain words instead (``ParsedQuery.loosened``)."""
    return f'no exact match for "{phrase}": showing sessions with its words'


def used_part(text: str) -> str:
    """The part of a query ``text`` that is searched: ``text`` cut to MAX_QUERY_CHARS, at the
    last space before the limit when there is one (a word cut in half would be searched as
    another word). Always a prefix of ``text``."""
    if len(text) <= MAX_QUERY_CHARS:
        return text
    head = text[:MAX_QUERY_CHARS]
    if not text[MAX_QUERY_CHARS].isspace() and " " in head.strip():
        head = head[:head.rstrip().rfind(" ")]
    return head


def reads_as_typed(text: str) -> bool:
    """True when ``text`` reads as a typed query, where ``-word`` excludes: at most
    :data:`TYPED_MAX_PARTS` whitespace-separated parts and none of the characters of code or a
    shell command (``< > | ; = ( ) { } $`` and the backtick). A pasted command, error or line of
    code (``adb exec-out screencap -p > weekly.png``) holds flags and dashes that are its words."""
    return len(text.split()) <= TYPED_MAX_PARTS and not _CODE_MARKS.intersection(text)


def _exclusions_at_end(text: str) -> int:
    """Where the ``-word`` tokens that end ``text`` begin (filters may be among them), in a query
    without the characters of code (:data:`_CODE_MARKS`): they are exclusions however long the
    query (``… nightly cron job that runs twice -cron``), as a pasted error or command holds its
    dashes inside (``unknown option -force for command``); ``len(text)`` when there are none."""
    if _CODE_MARKS.intersection(text):
        return len(text)
    start = len(text)
    for m in reversed(list(_TOKEN.finditer(text))):
        quoted_exclusion = m.group(1) and m.group(2) is not None
        tok = m.group(6) or ""
        if not (quoted_exclusion or _excludes(tok) or _is_filter(m.group(4) or tok)):
            break
        start = m.start()
    return start


def _excludes(tok: str) -> bool:
    """True when the bare token ``tok`` has an exclusion's shape: ``-`` and two characters or
    more, the first a letter, digit or ``_`` (``-p``, ``--force`` and ``-->`` are words)."""
    return tok.startswith("-") and len(tok) > 2 and (tok[1].isalnum() or tok[1] == "_")


def _is_filter(tok: str) -> bool:
    """True when ``tok`` is ``name:value`` (the value may be empty) for a filter's name."""
    key, sep, _ = tok.partition(":")
    return bool(sep) and key.lower() in FILTER_KEYS


def reads_as_pasted(text: str) -> bool:
    """True when ``text`` reads as a pasted line (an error, a stack frame, a command), whose
    volatile parts are weak evidence (``crabsearch.volatile``): it does not read as typed
    (:func:`reads_as_typed`), or it holds a path of three parts or more (``a/b/c``, ``a\\b\\c``),
    which nobody types from memory: ``error: Cannot find package 'x' from '/Users/…/src/cli.ts'``."""
    return not reads_as_typed(text) or _DEEP_PATH.search(text) is not None


def _bare(q: ParsedQuery, tok: str, facts: Facts, shown: dict, typed: bool = True) -> None:
    if _is_filter(tok):
        key, _, value = tok.partition(":")
        # A filter still being typed (`agent:`) is no word to repair: its note says what it needs.
        _filter(q, key.lower(), value, facts, shown)
        return
    stem = tok.rstrip("*").lstrip("-")
    if tok.endswith("*") and len(stem) < 2:  # `t*` is not the word t, unsaid
        q.notes.append(f"{tok}: a prefix needs two letters or more" + (f"; {stem} searched as a word" if stem else ""))
    if typed and _excludes(tok):
        q.excluded.append(tok[1:])
        return
    if tok.endswith("*") and len(tok.rstrip("*")) >= 2:
        q.prefixes.append(tok.rstrip("*"))
        return
    q.words.append(tok)


def _filter(q: ParsedQuery, key: str, value: str, facts: Facts, shown: dict) -> bool:
    """Set the filter ``key`` to ``value`` (``crabsearch.filters``); True when it was set. A
    value it does not take is noted and ignored. One value at a time: a filter given again with
    another value uses the last one, and says so (``shown``: each filter's value as typed and
    as read so far)."""
    try:
        typed = FILTERS[key].read(value, facts)
    except Bad as bad:
        q.notes.append(f"{bad}; filter ignored")
        return False
    old = q.values.get(key)
    if old is not None and old != typed:
        q.notes.append(f"{key}: given twice; the last one, {key}:{value}, is used")
    q.values[key] = typed
    shown[key] = (value, typed)
    return True

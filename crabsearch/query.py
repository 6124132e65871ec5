"""The query language: what a typed query means, before any index is involved.

Syntax (crabsearch issue 3, "Query language"):

* plain words: ``retry backoff`` (searched down the ladder: phrase, all, repair, any);
* ``"quoted phrase"``: the words adjacent and in order (an unbalanced quote runs to the end);
* ``-word`` / ``-"a phrase"``: leave out the sessions that contain it;
* ``word*``: prefix;
* filters, combined with words and applied inside the search (before the result limit):
  ``agent:claude``, ``project:NAME`` (last segment of the working directory) or
  ``project:/path/prefix``, ``role:user|assistant``, ``since:`` / ``until:`` (``2026-01-31``,
  ``7d``, ``2w``, ``today``, ``yesterday``; local time), ``in:tools`` (tool output, when indexed);
  a value with spaces is quoted: ``project:"claude app"``.

Parsing never raises: anything it does not understand is kept as plain words, and problems with a
filter value are reported in ``notes`` (the filter is then ignored).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone

MAX_QUERY_CHARS = 512
FILTER_KEYS = ("agent", "project", "role", "since", "until", "in")
ROLES = ("user", "assistant")
_TOKEN = re.compile(r'(-?)"([^"]*)("?)|(\w+):"([^"]*)"?|(\S+)')
_RELATIVE = re.compile(r"^(\d+)([dwmh])$")


@dataclass
class ParsedQuery:
    """A parsed query. ``words`` are the plain words in order; ``phrases`` the quoted phrases;
    ``excluded`` words or phrases to exclude; ``prefixes`` the ``word*`` stems; ``since``/``until``
    are aware UTC datetimes (``until`` exclusive); ``notes`` explain ignored or cut parts."""

    text: str
    words: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    unclosed: str | None = None
    """The phrase of a quote with no closing quote (it runs to the end), else None."""
    excluded: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    agent: str | None = None
    project: str | None = None
    role: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    in_tools: bool = False
    cut: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def unclosed_note(self) -> str | None:
        """What the search says of a quote with no closing quote (:attr:`unclosed`), else None:
        ``no closing quote: "…" searched as one phrase`` (the CLI's and MCP's notes; the app's once
        the typing stopped)."""
        return f'no closing quote: "{self.unclosed}" searched as one phrase' if self.unclosed else None

    @property
    def has_filters(self) -> bool:
        """True when any filter is set."""
        return bool(self.agent or self.project or self.role or self.since or self.until or self.in_tools)

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to match (filters alone list recent sessions)."""
        return not (self.words or self.phrases or self.prefixes)


def parse(text: str, *, agents: tuple[str, ...] = (), now: datetime | None = None) -> ParsedQuery:
    """Parse ``text`` (cut to 512 characters) into a :class:`ParsedQuery`. ``agents`` are the
    valid ``agent:`` values (unknown ones are reported in ``notes``); ``now`` fixes the clock for
    relative dates (local time). Never raises."""
    q = ParsedQuery(text=used_part(text), cut=len(text) > MAX_QUERY_CHARS)
    now = now or datetime.now().astimezone()
    for m in _TOKEN.finditer(q.text):
        neg, quoted, bare = m.group(1), m.group(2), m.group(6)
        if m.group(4) is not None:  # key:"a value with spaces"
            bare = f"{m.group(4)}:{m.group(5).strip()}" if m.group(4).lower() in FILTER_KEYS else m.group(0)
            if m.group(4).lower() not in FILTER_KEYS:  # not a filter: the words of the phrase
                q.words.extend(m.group(0).replace('"', " ").split())
                continue
        if quoted is not None:
            if quoted.strip():
                (q.excluded if neg else q.phrases).append(quoted.strip())
                if not m.group(3):
                    q.unclosed = quoted.strip()
            continue
        _bare(q, bare, agents, now)
    return q


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


NEEDS = {
    "agent": "a name",
    "project": "a name (the last folder of the working directory, or a path)",
    "role": "user or assistant",
    "since": "a date (2026-01-31, 7d, today, yesterday)",
    "until": "a date (2026-01-31, 7d, today, yesterday)",
    "in": "a place (in:tools searches tool output)",
}
"""What a filter name typed with no value (``agent:``) is missing: its note says so."""


def _bare(q: ParsedQuery, tok: str, agents: tuple[str, ...], now: datetime) -> None:
    key, sep, value = tok.partition(":")
    if sep and key.lower() in FILTER_KEYS:
        if value:
            _filter(q, key.lower(), value, agents, now)
        else:  # a filter still being typed (`agent:`): nothing yet, not a word to repair
            key = key.lower()
            need = NEEDS.get(key, "a value")
            if key == "agent" and agents:
                need += f" (known: {', '.join(agents)})"
            q.notes.append(f"{key}: needs {need}; filter ignored")
        return
    stem = tok.rstrip("*").lstrip("-")
    if tok.endswith("*") and len(stem) < 2:  # `t*` was the word t, silently (a fresh-user trial)
        q.notes.append(f"{tok}: a prefix needs two letters or more" + (f"; {stem} searched as a word" if stem else ""))
    if tok.startswith("-") and len(tok) > 1 and (tok[1].isalnum() or tok[1] == "_"):
        q.excluded.append(tok[1:])
        return
    if tok.endswith("*") and len(tok.rstrip("*")) >= 2:
        q.prefixes.append(tok.rstrip("*"))
        return
    q.words.append(tok)


def _again(q: ParsedQuery, key: str, old, new, shown: str) -> None:
    """Note a filter given twice with different values (``agent:codex agent:claude``): one value
    at a time, the last one is used (a fresh-user trial: the first was dropped without a word)."""
    if old is not None and old != new:
        q.notes.append(f"{key}: given twice; the last one, {key}:{shown}, is used")


def _filter(q: ParsedQuery, key: str, value: str, agents: tuple[str, ...], now: datetime) -> None:
    if key == "agent":
        if agents and value.lower() not in agents:
            q.notes.append(f"unknown agent {value!r} (known: {', '.join(agents)}); filter ignored")
        else:
            _again(q, key, q.agent, value.lower(), value)
            q.agent = value.lower()
    elif key == "project":
        _again(q, key, q.project, value, value)
        q.project = value
    elif key == "role":
        if value.lower() in ROLES:
            _again(q, key, q.role, value.lower(), value)
            q.role = value.lower()
        else:
            q.notes.append(f"role:{value} is not one of {', '.join(ROLES)}; filter ignored")
    elif key in ("since", "until"):
        day = parse_day(value, now)
        if day is None:
            q.notes.append(f"{key}:{value} is not a date (2026-01-31, 7d, today, yesterday); filter ignored")
        elif key == "since":
            _again(q, key, q.since, day, value)
            q.since = day
        else:  # until a day includes that whole day
            until = day if _RELATIVE.match(value) else (
                LATEST if day > LATEST - timedelta(days=1) else day + timedelta(days=1))
            _again(q, key, q.until, until, value)
            q.until = until
    elif key == "in":
        if value.lower() == "tools":
            q.in_tools = True
        else:
            q.notes.append(f"in:{value} is not known (in:tools searches tool output); filter ignored")


def parse_day(value: str, now: datetime) -> datetime | None:
    """The start (aware UTC) of a day given as ``YYYY-MM-DD``, ``today``, ``yesterday``, or a
    moment ``N`` units before ``now`` (``7d``, ``2w``, ``3m`` = 30-day months, ``12h``).
    Days are local days of ``now``'s timezone. None when ``value`` is none of these."""
    v = value.strip().lower()
    tz = now.tzinfo or timezone.utc
    if v in ("today", "yesterday"):
        d = now.date() - timedelta(days=1 if v == "yesterday" else 0)
        return _local_midnight(d, tz)
    m = _RELATIVE.match(v)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        try:
            delta = {"h": timedelta(hours=n), "d": timedelta(days=n), "w": timedelta(weeks=n),
                     "m": timedelta(days=30 * n)}[unit]
            return (now - delta).astimezone(timezone.utc)
        except OverflowError:  # further back than year 1 (``since:99999999d``, a fresh-user trial)
            return EARLIEST
    try:
        d = date.fromisoformat(v)
    except ValueError:
        return None
    try:
        return _local_midnight(d, tz)
    except OverflowError:  # 0001-01-01 east of UTC, 9999-12-31 west of it
        return EARLIEST if d.year == 1 else LATEST


EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
"""A ``since:``/``until:`` further back than Python's dates go: the earliest moment there is."""
LATEST = datetime.max.replace(tzinfo=timezone.utc)
"""The end of a day past Python's last one (``until:9999-12-31``): the latest moment there is."""


def _local_midnight(d: date, tz) -> datetime:
    return datetime.combine(d, time(0, 0), tzinfo=tz).astimezone(timezone.utc)

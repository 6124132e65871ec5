"""What a search returns: plain dataclasses for hits, context windows and session pages, with
their JSON shapes (the CLI contract), and the window rules.

Window rules (issue "end to end"; seed-designs.md): ``before``/``after`` neighbours (default 4/4),
each side clamped on its own so the hit is always included, at most 16 messages, each text at
most 1024 bytes (cut on a character boundary and flagged ``truncated``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from .model import Session, iso
from .sources import SOURCES
from .sources.base import container_of

DEFAULT_BEFORE = 4
DEFAULT_AFTER = 4
MAX_WINDOW = 16
MAX_ITEM_BYTES = 1024
DEFAULT_LIMIT = 20
UNAVAILABLE = "[message unavailable: the transcript changed since it was indexed; run `crabsearch index`]"
GONE = "[message unavailable: the transcript is gone (deleted or moved since it was indexed); run `crabsearch index`]"
"""A message's text, in windows, pages and exports, when its transcript file no longer exists
(:data:`UNAVAILABLE` when the file is there but no longer holds what was indexed,
:func:`cannot_read` when it is there but cannot be opened)."""
CANNOT_READ = "[message unavailable: the transcript cannot be read"


def cannot_read(reason: str) -> str:
    """A message's text when its transcript is there but cannot be opened now:
    ``[message unavailable: the transcript cannot be read (Permission denied)]`` (``reason``: the
    ``OSError``'s words). Nothing is remembered: the message is read again when asked again."""
    return f"{CANNOT_READ} ({reason})]"


def unreadable_count(text: str) -> int:
    """How many messages in ``text`` (an export's Markdown) read as :data:`UNAVAILABLE`,
    :data:`GONE` or :func:`cannot_read`: what an export warns about."""
    return text.count(UNAVAILABLE) + text.count(GONE) + text.count(CANNOT_READ)


def why_unavailable(path: str | None) -> str:
    """The text of a message that could not be read back from the transcript of a session
    ``path``: :data:`GONE` when the file no longer exists, :func:`cannot_read` when it cannot be
    opened (its permissions, not a regular file any more), else :data:`UNAVAILABLE` (it no
    longer holds what was indexed). The file is opened without blocking and closed
    (``files.check_regular``)."""
    from .files import check_regular

    if transcript_gone(path):
        return GONE
    try:
        check_regular(container_of(path or ""))
    except OSError as exc:
        return cannot_read(exc.strerror or str(exc))
    return UNAVAILABLE


def transcript_gone(path: str | None) -> bool:
    """True when the transcript file of a session ``path`` no longer exists (deleted or moved
    since it was indexed). For a member path (``<file>#<member>``: a database row, an archive or
    Aider member) the container file is what must exist (``sources.base.container_of``)."""
    return bool(path) and not os.path.lexists(container_of(path))


@dataclass
class Item:
    """One message as shown in a window or a session page. ``timestamp`` is aware UTC or None;
    ``truncated`` is True when ``text`` was cut; ``hit`` marks the window's anchor. ``abandoned``
    is True for a message off the session's active branch (see :func:`abandoned_ranges`);
    ``sidechain`` for a subagent's turn written inline into the parent's transcript.
    ``subagents`` (session pages only) lists the subagent sessions this message spawned, as
    ``{"session_id", "title"}`` (title None when the subagent is not indexed)."""

    message_index: int
    role: str
    label: str
    timestamp: datetime | None
    text: str
    truncated: bool = False
    hit: bool = False
    abandoned: bool = False
    subagents: list[dict] = field(default_factory=list)
    sidechain: bool = False

    def to_json(self, *, window: bool = True) -> dict:
        """JSON object (ITEM in the CLI contract); without ``truncated``/``hit`` for pages. The
        optional keys are present only when they say something: ``abandoned: true`` off the
        active branch, ``subagents`` (pages) on a message that spawned subagents."""
        d = {"message_index": self.message_index, "role": self.role, "label": self.label,
             "timestamp": iso(self.timestamp), "text": self.text}
        if window:
            d["truncated"] = self.truncated
            d["hit"] = self.hit
        if self.abandoned:
            d["abandoned"] = True
        if self.sidechain:
            d["sidechain"] = True
        if self.subagents and not window:
            d["subagents"] = [dict(s) for s in self.subagents]
        return d


@dataclass
class SessionRef:
    """A session as the index knows it, plus the key of its transcript file (``fkey``)."""

    session: Session
    fkey: str
    flags: str = ""
    """Config ``[resume]`` arguments for this session's agent, added to its resume and fork
    commands (set by the engine that made the ref)."""
    links: dict = field(default_factory=dict)
    """Sessions this one is handed to or from (``Sessions.link_continuations``, for rows and
    pages): ``{"continued_in": {"session_id", "title"}, "continued_from": {...}}``, each key only
    when it applies (a Claude Code session carried on by a background session)."""

    @property
    def resume_command(self) -> str | None:
        """The agent's resume command, quoted, run in the session's working directory, with the
        configured arguments."""
        src = SOURCES.get(self.session.agent)
        return self._with_flags(src.resume_command(self.session) if src else None)

    @property
    def open_url(self) -> str | None:
        """The web address that opens the session (a ChatGPT or Claude.ai conversation), or None:
        such sessions have no resume command."""
        src = SOURCES.get(self.session.agent)
        return src.open_url(self.session) if src else None

    @property
    def fork_command(self) -> str | None:
        """The agent's fork command (a new session from a copy of this one), or None."""
        src = SOURCES.get(self.session.agent)
        return self._with_flags(src.fork_command(self.session) if src else None)

    def _with_flags(self, command: str | None) -> str | None:
        return f"{command} {self.flags}" if command and self.flags else command

    def to_json(self) -> dict:
        """The session fields of the CLI contract."""
        s = self.session
        return {"agent": s.agent, "session_id": s.session_id, "title": s.title, "summary": s.summary,
                "project": s.project, "git_branch": s.git_branch, "path": s.path,
                "started": iso(s.started), "updated": iso(s.updated), "message_count": s.message_count,
                "parent_session_id": s.parent_session_id,
                "continued_in": self.links.get("continued_in"), "continued_from": self.links.get("continued_from")}


@dataclass
class Hit:
    """A result row: a session, its best-matching message and the context window around it.

    Structure within sessions: ``parent_title`` is the title of the parent session of a
    subagent session (``session.parent_session_id``), looked up for the rows returned only;
    ``also_in_sessions`` are the ids of the other sessions that hold the same hit message (same
    message id and time: a resumed or forked session's copy of earlier history; this row is the
    newest of them); ``branch`` is ``"abandoned"`` when the hit lies off the session's active
    branch, else ``"active"``; ``before_compaction`` is True when the hit comes before the
    session's last compaction."""

    ref: SessionRef
    score: float
    message_index: int
    role: str
    window: list[Item] = field(default_factory=list)
    explain: dict | None = None
    parent_title: str | None = None
    also_in_sessions: list[str] = field(default_factory=list)
    branch: str = "active"
    before_compaction: bool = False
    terms: list[str] = field(default_factory=list)
    """The query's terms (``SearchResult.terms``): a new window (``Engine.window``) cuts a long
    hit message around its first match with them, as the search did."""
    route: str | None = None
    """The rung of the ladder that found this row (``phrase``, ``all``, ``session``, ``repair``,
    ``any``; ``id``, ``recent``): a rung that finds fewer sessions than the limit is followed by
    the next rungs' sessions, so the rows of one result can come from several rungs, higher rungs
    first (``unindexed`` for a row of :mod:`crabsearch.search.pending`)."""
    indexed: bool = True
    """False for a row found in a transcript the index does not hold yet (``search.pending``,
    while a build runs): its score is 0 and its window the hit message alone; the build
    replaces it."""

    @property
    def also_in(self) -> int:
        """How many other sessions hold the hit message (see ``also_in_sessions``)."""
        return len(self.also_in_sessions)

    @property
    def session(self) -> Session:
        """The hit's session."""
        return self.ref.session

    @property
    def item(self) -> Item | None:
        """The window item that is the hit itself."""
        return next((i for i in self.window if i.hit), None)

    def to_json(self) -> dict:
        """HIT in the CLI contract. A session without messages (a title only) has ``role`` null
        and an empty ``window`` (its ``message_index`` is 0, the ``show --offset`` that opens it)."""
        d = self.ref.to_json()
        role = self.role if self.session.message_count else None
        d.update(score=round(self.score, 4), message_index=self.message_index, role=role,
                 window=[i.to_json() for i in self.window], resume_command=self.ref.resume_command,
                 url=self.ref.open_url,
                 parent_title=self.parent_title, also_in=self.also_in, also_in_sessions=list(self.also_in_sessions),
                 branch=self.branch, before_compaction=self.before_compaction, route=self.route,
                 indexed=self.indexed)
        if self.explain is not None:
            d["explain"] = self.explain
        return d


@dataclass
class SearchResult:
    """Hits for ``query`` (best hit per session, best first). ``terms`` are the analyzed query
    terms (for highlighting); ``route`` says how they were combined (``all`` words, or ``any``
    word when no session had all); ``cut`` is True when the query was longer than 512 chars."""

    query: str
    hits: list[Hit]
    terms: list[str] = field(default_factory=list)
    route: str | None = None
    cut: bool = False
    partial: bool = False
    corrections: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sort: str = "relevance"

    def to_json(self) -> dict:
        """``{"query", "hits": [HIT...]}`` plus ``route`` and ``terms``; ``query`` is the part
        searched (``query.used_part``: 512 characters at most, as MCP echoes it)."""
        from .query import used_part

        return {"query": used_part(self.query), "route": self.route, "terms": self.terms, "partial": self.partial,
                "cut": self.cut, "corrections": self.corrections, "notes": self.notes, "sort": self.sort,
                "hits": [h.to_json() for h in self.hits]}


@dataclass
class Page:
    """A page of a session: ``messages[offset:offset+limit]``; ``next_offset`` is None on the last
    page. ``skipped``: the lines its reader skipped that the page shows
    (``search.skipped.SkippedLine``, set by the caller that asks for them: ``show``)."""

    ref: SessionRef
    offset: int
    limit: int
    total: int
    messages: list[Item]
    skipped: list = field(default_factory=list)

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or None when this page reaches the end."""
        end = self.offset + len(self.messages)
        return end if end < self.total and self.messages else None

    def to_json(self) -> dict:
        """The ``show`` JSON object of the CLI contract."""
        d = {"session": self.ref.to_json(), "offset": self.offset, "limit": self.limit,
             "total_messages": self.total, "next_offset": self.next_offset,
             "messages": [m.to_json(window=False) for m in self.messages],
             "skipped_lines": [s.to_json() for s in self.skipped]}
        d["session"]["resume_command"] = self.ref.resume_command
        d["session"]["url"] = self.ref.open_url
        return d


class AmbiguousSession(LookupError):
    """A session id prefix that matches several sessions (``matches`` lists their ids)."""

    def __init__(self, prefix: str, matches: list[str]):
        super().__init__(f"{prefix!r} matches {len(matches)} sessions: {', '.join(matches[:5])}"
                         + (", ..." if len(matches) > 5 else ""))
        self.matches = matches


def abandoned_ranges(session: Session) -> list[tuple[int, int]]:
    """``[start, end)`` message-index ranges of ``session`` that are off its active branch: pi and
    OpenClaw ``extra["off_branch"]`` (entries off the ``parentId`` path to the last entry),
    Gemini ``extra["rewound"]`` (messages a ``$rewindTo`` removed), Claude Code
    ``extra["off_branch"]`` when its source computes it. Malformed entries are ignored."""
    out = []
    for key in ("off_branch", "rewound"):
        for r in session.extra.get(key) or ():
            if isinstance(r, (list, tuple)) and len(r) == 2 and all(isinstance(x, int) for x in r):
                out.append((r[0], r[1]))
    return out


def in_ranges(index: int, ranges: list[tuple[int, int]]) -> bool:
    """True when ``index`` lies in one of the ``[start, end)`` ``ranges``."""
    return any(lo <= index < hi for lo, hi in ranges)


def last_compaction(session: Session) -> int | None:
    """Message index of the session's last compaction (``extra["compactions"]``, recorded by the
    Claude Code, Codex, pi and OpenClaw sources), or None when it was never compacted."""
    marks = [i for i in session.extra.get("compactions") or () if isinstance(i, int)]
    return max(marks) if marks else None


NOT_INDEXED = "not fully indexed yet"
"""The note of a row found in a transcript the index does not hold yet (``search.pending``)."""


def structure_notes(hit: Hit) -> list[str]:
    """Notes about where a hit sits, in this order: ``subagent of <parent title>``
    (the parent's id when its title is unknown), ``continued in <title>`` and ``continued from
    <title>`` (:func:`continuation_notes`), ``also in N other sessions``, ``on an abandoned
    branch``, ``before compaction``, and first :data:`NOT_INDEXED` for a row found outside the
    index (``Hit.indexed`` False); empty when none applies. Shared by the result rows and the
    CLI's text output (callers make the text printable)."""
    notes = [] if hit.indexed else [NOT_INDEXED]
    s = hit.session
    if s.parent_session_id:
        notes.append(f"subagent of {hit.parent_title or s.parent_session_id}")
    notes += continuation_notes(hit.ref)
    if hit.also_in:
        notes.append(f"also in {hit.also_in} other session{'' if hit.also_in == 1 else 's'}")
    if hit.branch == "abandoned":
        notes.append("on an abandoned branch")
    if hit.before_compaction:
        notes.append("before compaction")
    return notes


def continuation_notes(ref: SessionRef) -> list[str]:
    """``continued in <title>`` and ``continued from <title>`` (the session's id when its title
    is unknown) for a session handed to or from another (``SessionRef.links``); shared by rows,
    the CLI's pages and the session view (callers make the text printable)."""
    return [f"{word} {link.get('title') or link.get('session_id')}"
            for key, word in (("continued_in", "continued in"), ("continued_from", "continued from"))
            if (link := ref.links.get(key))]


def cut_bytes(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes on a character boundary; ``(text, cut?)``."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= limit:
        return text, False
    return raw[:limit].decode("utf-8", "ignore"), True


MATCH_LEAD = 160
"""Characters kept before the first match when a long hit message is cut around it."""


def densest(marks: list[tuple[int, object]], reach: int) -> int:
    """The start of the first of ``marks`` (``(start, term)`` matches, sorted by start, not empty)
    from which the next ``reach`` characters hold the most different terms, and of those, the
    one where they all come soonest: where a cut or a one-line snippet begins so that it shows as
    many of the query's words as fit (two words far apart in a message both shown, not only the
    first), the words together where they are (a phrase late in a message, not
    its two words apart near the top). One pass, two pointers; the span of a candidate window is
    read forward until each of its terms is seen."""
    counts: dict = {}
    best, at, j = (0, 0), marks[0][0], 0
    for i, (start, term) in enumerate(marks):
        while j < len(marks) and marks[j][0] < start + reach:
            counts[marks[j][1]] = counts.get(marks[j][1], 0) + 1
            j += 1
        if len(counts) >= best[0]:
            need, k = set(counts), i
            while need:  # every term of the window is in marks[i:j]
                need.discard(marks[k][1])
                k += 1
            key = (len(counts), start - marks[k - 1][0])  # more terms, then a shorter span
            if key > best:
                best, at = key, start
        counts[term] -= 1
        if not counts[term]:
            del counts[term]
    return at


def cut_around(text: str, limit: int, first_match: int | None, lead: int = MATCH_LEAD) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes so that it shows the character offset
    ``first_match`` (the hit's first matched term): from the start when the match is in the
    first half of the limit, else from about ``lead`` characters before it (at a word
    boundary, after a ``…``). ``(text, cut?)``; with no match, the same as :func:`cut_bytes`."""
    if first_match is None or len(text.encode("utf-8", "replace")) <= limit:
        return cut_bytes(text, limit)
    if len(text[:first_match].encode("utf-8", "replace")) <= limit // 2:
        return cut_bytes(text, limit)
    start = max(0, first_match - lead)
    space = text.find(" ", start, first_match)
    if space != -1:
        start = space + 1
    cut, _ = cut_bytes("… " + text[start:], limit)
    return cut, True


def branch_window(index: int, total: int, before: int, after: int,
                  ranges: list[tuple[int, int]]) -> list[int]:
    """Like :func:`clamp_window`, but along the hit's own branch: ``ranges``
    are the session's ``[start, end)`` abandoned ranges (:func:`abandoned_ranges`). A hit on the
    active branch skips every abandoned range; a hit inside one keeps the history before it and
    its own range, and never crosses its end (what follows belongs to the branch that replaced
    it). Returns ascending message indexes, ``index`` included, at most MAX_WINDOW."""
    if not ranges:
        return list(clamp_window(index, total, before, after))
    own = next(((a, b) for a, b in ranges if a <= index < b), None)
    others = [(a, b) for a, b in ranges if (a, b) != own]
    end = own[1] if own else max(total, index + 1)

    def walk(start: int, step: int, want: int) -> list[int]:
        out, i = [], start
        while len(out) < want and 0 <= i < end:
            hole = next(((a, b) for a, b in others if a <= i < b), None)
            if hole:
                i = hole[0] - 1 if step < 0 else hole[1]
                continue
            out.append(i)
            i += step
        return out

    earlier = walk(index - 1, -1, max(0, before))
    later = walk(index + 1, 1, max(0, after))
    while len(earlier) + len(later) + 1 > MAX_WINDOW:
        (earlier if len(earlier) >= len(later) else later).pop()
    return sorted(earlier) + [index] + later


def clamp_window(index: int, total: int, before: int, after: int) -> range:
    """Message indexes of a window around ``index`` in a session of ``total`` messages: each side
    clamped on its own to what exists, then to :data:`MAX_WINDOW` messages in all by shrinking
    the larger side, so ``index`` is always inside (rule from seed-designs.md: both Crabtalk
    versions could drop the anchor)."""
    total = max(total, index + 1)
    b = min(max(0, before), index)
    a = min(max(0, after), total - 1 - index)
    while b + a + 1 > MAX_WINDOW:
        if b >= a:
            b -= 1
        else:
            a -= 1
    return range(index - b, index + a + 1)

"""The ranking policy: the ladder of rungs, how a page is filled from them, and how each rung ranks.

The rungs (issue 3, "Query language"; issue 11), highest first:

1. ``phrase``: the words adjacent and in order in one message (or in a title/summary);
2. ``all``: every word in one message (or in a title/summary);
3. ``session``: every word somewhere in the session, ranked by proximity (:func:`best_window`);
4. ``repair``: ``all`` again with unknown words replaced by their spelling repair;
5. ``any``: sessions holding any of the words, the most of them first.

**Fill** (issue 11, problem 1): a rung that finds fewer sessions than the page needs is followed by
the next rungs; a session is listed once, by the highest rung that found it, and rows keep the
rungs' order (each ``Row`` carries its ``route``). **Ranking within a rung**: a session's score
is its best message's (BM25F with the role weights of ``index.schema.WEIGHTS``), plus the score
of its title and summary for every query word they hold (problem 3), recency breaking ties; the
``session`` rung scores a window of messages (problem 2), the ``any`` rung ranks by words covered
first. ``sort="newest"`` orders each rung by its best document's time instead.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from whoosh.query import And

from ..hits import SearchResult
from ..index.collect import OutOfTime, SegmentKeys, best_per_session, each_match
from ..index.querying import MESSAGE_FIELDS, SESSION_FIELDS, Compiler, covered
from ..index.schema import PROXIMITY_SPAN, WEIGHTS
from ..index.union import FlatOr
from .caps import DEDUP_DEPTH, GATHER_CAP


@dataclass
class Context:
    """One search in progress: the ``searcher``, the query's ``comp``\\ iler, the per-segment
    column cache ``keys``, the filter clauses for message and session documents (``s_filters``
    None: session documents excluded), the ``deadline`` (``time.monotonic()``), the sessions
    ``excluded`` by ``-word``, the ``since:``/``until:`` ``window``, the ``sort``, the rows to
    ``fetch`` and the ``result`` being filled (its ``route`` and ``partial``)."""

    searcher: object
    comp: Compiler
    keys: SegmentKeys
    m_filters: list
    s_filters: list | None
    deadline: float | None
    excluded: frozenset[str]
    window: tuple | None
    sort: str
    fetch: int
    result: SearchResult


@dataclass(slots=True)
class Row:
    """A ranked session: ``score`` (``m_score`` of its best message or window plus ``s_score`` of
    its title and summary), ``newest`` (ms), words ``covered`` (``any`` rung), the best message
    document ``m_doc`` and session document ``s_doc``, the ``matched`` (field, term) pairs, the
    ``route`` that found it and its ``skey``."""

    score: float
    newest: int
    covered: int
    m_doc: int | None
    s_doc: int | None
    m_score: float
    s_score: float
    matched: list
    route: str
    skey: str


def climb(ctx: Context) -> list[Row]:
    """The rows of every rung used, in ladder order (see the module docs); sets
    ``ctx.result.route`` to the first rung that found something and ``partial`` when out of
    time. Stops once ``ctx.fetch`` sessions are listed."""
    comp, result = ctx.comp, ctx.result
    rows: list[Row] = []
    listed: set[str] = set()
    titles: dict[tuple, dict] = {}
    multi = len(comp.groups) > 1

    def title_scores(groups) -> dict[str, tuple]:
        """Each session's title and summary score for any of the word groups: every word they
        hold counts, on every rung (problem 3). One scan of the session documents."""
        if ctx.s_filters is None or ctx.sort == "newest":
            return {}
        key = tuple(map(tuple, groups))
        if key not in titles:
            titles[key] = best_per(ctx, comp.any_query(SESSION_FIELDS, groups), ctx.s_filters,
                                   ctx.searcher.doc_count_all(), depth=1)
        return titles[key]

    def take(route: str, found: dict, sessions: dict | None = None, by_coverage: bool = False,
             groups=None) -> None:
        """Add a rung's sessions not listed by a higher rung, ranked within the rung: its message
        entries ``found``, its title/summary entries ``sessions`` (a title or summary holding the
        rung's words), and every session's title and summary score for the words they hold."""
        found = {k: v for k, v in found.items() if k not in listed}
        sessions = {k: v for k, v in (sessions or {}).items() if k not in listed}
        partial = title_scores(comp.groups if groups is None else groups)
        sessions.update((k, partial[k]) for k in set(found) | set(sessions) if k in partial)
        if not found and not sessions:
            return
        ranked = rank(ctx, found, sessions, route, by_coverage)
        rows.extend(ranked)
        listed.update(r.skey for r in ranked)
        if result.route is None:
            result.route = route

    def done() -> bool:
        """Out of time (what was found is the answer), or enough sessions for the page."""
        return result.partial or len(listed) >= ctx.fetch

    s_rungs = dict(comp.rungs(SESSION_FIELDS))
    gathered = None
    session_done = False
    for route, mq in comp.rungs(MESSAGE_FIELDS):
        if done():
            break
        if route == "repair" and multi and comp.all_known():
            # Before repairing spelling: every word somewhere in the session.
            gathered = gather(ctx, comp.groups)
            take("session", session_entries(gathered, len(comp.groups)))
            session_done = True
            if done():
                break
        found = best_per(ctx, mq, ctx.m_filters, ctx.fetch)
        sq = s_rungs.get(route)
        sessions = {} if sq is None or ctx.s_filters is None else best_per(ctx, sq, ctx.s_filters, ctx.fetch)
        take(route, found, sessions, groups=comp.repaired_groups() if route == "repair" else None)
    if multi and not done():
        repaired = comp.repaired_groups()
        known = [g for g in repaired if comp.has_postings(g)]
        if len(known) == 1:
            # Only one word is in the index at all ("error zqxjvbnwk"): "any" is that word alone,
            # found by the best-hit collector instead of gathering every match.
            take("any", any_one(ctx, known[0]), by_coverage=True, groups=[known[0]])
        else:
            if gathered is None or repaired != comp.groups:  # "any" uses the repaired words too
                gathered = gather(ctx, repaired)
            if not session_done:
                take("session", session_entries(gathered, len(comp.groups)), groups=repaired)
            if not done():
                take("any", any_entries(gathered), by_coverage=True, groups=repaired)
    return rows


def rank(ctx: Context, found: dict, sessions: dict, route: str, by_coverage: bool = False) -> list[Row]:
    """One rung's rows, best first, from per-session message entries (``found``) and
    title/summary entries (``sessions``), ``{skey: (score, document number, matched pairs[,
    groups covered])}``: a session's score is the sum of both; ``by_coverage`` ranks by groups
    covered first; recency breaks ties (then the session key); ``sort="newest"`` ranks by the
    best document's time."""
    rows = []
    for skey in set(found) | set(sessions):
        m_score, m_doc, m_terms, *m_cov = found.get(skey, (0.0, None, []))
        s_score, s_doc, s_terms = sessions.get(skey, (0.0, None, []))
        # Recency (ties, and --sort newest): the best document's time (a message's own time,
        # else its session's; a session document's: the session's), from the column cache.
        newest = ctx.keys.updated_of(ctx.searcher, m_doc if m_doc is not None else s_doc)
        rows.append(Row(m_score + s_score, newest, m_cov[0] if m_cov else 0, m_doc, s_doc, m_score, s_score,
                        list(m_terms) + list(s_terms), route, skey))
    if ctx.sort == "newest":
        rows.sort(key=lambda r: (-r.newest, -r.score, r.skey))
    else:  # the session key last: the same order from any index of the same transcripts
        rows.sort(key=lambda r: (-r.covered if by_coverage else 0, -round(r.score, 6), -r.newest, r.skey))
    return rows


def best_per(ctx: Context, q, clauses, limit: int, depth: int = DEDUP_DEPTH) -> dict[str, tuple]:
    """Run one query, collapsed to the best document per session; returns the ``limit * depth``
    best sessions as ``{skey: (score, document number, matched (field, term) pairs)}``. Every
    session's best is found anyway; more of them than the rows shown are kept so that copies of
    one message (folded into one row later) cannot leave the page short."""
    if clauses is None:
        return {}
    top, partial = best_per_session(ctx.searcher, And([q, *clauses]), limit * depth, ctx.keys,
                                    newest=ctx.sort == "newest", deadline=ctx.deadline,
                                    excluded=ctx.excluded, window=ctx.window)
    ctx.result.partial = ctx.result.partial or partial
    newest = ctx.sort == "newest"  # the score is the time then: rows are ordered by ``newest``
    return {skey: (0.0 if newest else float(best.score), best.docnum, best.terms) for skey, best in top}


def any_one(ctx: Context, group) -> dict[str, tuple]:
    """The ``any`` rung when a single word group has postings: each session's best message for
    it (a session found by its title or summary alone is anchored on its first prompt; the
    title and summary score is added by the rung), from two best-hit scans."""
    comp = ctx.comp
    found = best_per(ctx, comp.any_query(MESSAGE_FIELDS, [group]), ctx.m_filters, ctx.fetch)
    sessions = {} if ctx.s_filters is None else best_per(
        ctx, comp.any_query(SESSION_FIELDS, [group]), ctx.s_filters, ctx.fetch)
    out = {}
    for key in set(found) | set(sessions):
        m = found.get(key)
        out[key] = (m[0], m[1], m[2], 1) if m else (0.0, sessions[key][1], [], 1)
    return out


@dataclass(slots=True)
class Gathered:
    """What :func:`gather` found of one session: ``by_group``, the best score of a message
    holding each word group; ``best``, ``(document number, is the session document)`` of the
    best match; ``matched`` ``(field, term)`` pairs and ``words``; ``messages``, the matching
    messages as ``(message index, bit mask of the groups they hold, score, document number)``;
    ``s_mask``, the groups the title and summary hold; ``covered``, the number of groups the
    session holds somewhere."""

    by_group: list[float]
    best: tuple[int, bool] | None = None
    matched: set = field(default_factory=set)
    words: set = field(default_factory=set)
    kinds: set = field(default_factory=set)
    messages: list = field(default_factory=list)
    s_mask: int = 0
    covered: int = 0


def gather(ctx: Context, groups) -> dict[str, Gathered]:
    """Sessions matching any word group, with every matching document taken into account
    (:func:`any_entries` and :func:`session_entries` rank them). Scans at most
    :data:`~crabsearch.search.caps.GATHER_CAP` matching documents (then ``partial``)."""
    comp = ctx.comp
    parts = [And([comp.any_query(MESSAGE_FIELDS, groups), *ctx.m_filters])]
    if ctx.s_filters is not None:
        parts.append(And([comp.any_query(SESSION_FIELDS, groups), *ctx.s_filters]))
    matches = []
    try:
        for match in each_match(ctx.searcher, FlatOr(parts) if len(parts) > 1 else parts[0], ctx.keys,
                                deadline=ctx.deadline, excluded=ctx.excluded, window=ctx.window):
            if len(matches) >= GATHER_CAP:
                ctx.result.partial = True
                break
            matches.append(match)
    except OutOfTime:
        ctx.result.partial = True
    matches.sort(key=lambda m: -m[1])  # best first (stable: document order breaks ties)
    per: dict[str, Gathered] = {}
    kinds: dict[tuple, tuple] = {}  # matched terms -> what they mean (a few dozen kinds)
    for key, score, docnum, terms, idx in matches:
        kind = kinds.get(terms)
        if kind is None:
            matched = frozenset((f, t) for f, t in terms if f in WEIGHTS)
            words = frozenset(t for _, t in matched)
            cover = [gi for gi, g in enumerate(groups) if covered(g, words)]
            kind = kinds[terms] = (matched, words, cover, sum(1 << gi for gi in cover),
                                   all(f in SESSION_FIELDS for f, _ in matched))
        matched, words, cover, mask, session_doc = kind
        g = per.get(key)
        if g is None:
            g = per[key] = Gathered([0.0] * len(groups))
        if session_doc:  # the title and summary score is added per word by the rung
            g.s_mask |= mask
        else:
            for gi in cover:
                if score > g.by_group[gi]:
                    g.by_group[gi] = score
            if mask:
                g.messages.append((idx, mask, score, docnum))
        # The best message (message fields never occur on a session document); the session
        # document (title, summary) only when no message of the session matched.
        if g.best is None or (g.best[1] and not session_doc):
            g.best = (docnum, session_doc)
        if terms not in g.kinds:
            g.kinds.add(terms)
            g.matched |= matched
            g.words |= words
    for g in per.values():
        g.covered = sum(covered(grp, g.words) for grp in groups)
    return per


def any_entries(gathered: dict[str, Gathered]) -> dict[str, tuple]:
    """The ``any`` rung's entries ``{skey: (score, document, matched pairs, groups covered)}``: a
    session's score is the sum over word groups of the best score of a message holding the group
    (its title and summary score is added by the rung); the rung ranks by groups covered first."""
    return {k: (sum(g.by_group), g.best[0], sorted(g.matched), g.covered) for k, g in gathered.items()}


def session_entries(gathered: dict[str, Gathered], n_groups: int) -> dict[str, tuple]:
    """The ``session`` rung's entries: the sessions holding every word group, spread over their
    messages (and title or summary), scored by proximity (issue 11, problem 2): the best window
    of consecutive messages that holds the groups the title and summary do not
    (:func:`best_window`), its words' scores decayed by the window's span (the title and summary
    score is added by the rung). Only the window counts, so a long session's many mentions do
    not add up; its hit is the window's best message."""
    out = {}
    full = (1 << n_groups) - 1
    for k, g in gathered.items():
        if g.covered != n_groups:
            continue
        need = full & ~g.s_mask
        found = best_window(sorted(g.messages), need) if need else None
        if found is None:
            out[k] = (0.0, g.best[0], sorted(g.matched), n_groups)
        else:
            value, _span, doc = found
            out[k] = (value, doc, sorted(g.matched), n_groups)
    return out


def proximity(span: int) -> float:
    """The share of a window's score kept for a window of ``span`` messages:
    ``1 / (1 + (span - 1) / PROXIMITY_SPAN)`` (1 for one message, 1/2 at ``PROXIMITY_SPAN + 1``)."""
    return 1.0 / (1.0 + (span - 1) / PROXIMITY_SPAN)


def best_window(messages: list[tuple[int, int, float, int]], need: int) -> tuple[float, int, int] | None:
    """The best window of a session's matching ``messages`` (``(message index, group bit mask,
    score, document number)``, sorted by message index) that holds every group of the bit mask
    ``need``: ``(value, span, document number of its best message)``, None when no window holds
    them all.

    A window's value is the sum, over the needed groups, of the best score of a window message
    holding the group, times :func:`proximity` of its ``span`` (the messages from its first to
    its last). Windows are the shortest ones ending at each message (two pointers, one pass);
    each group's best score in the window is kept in a monotonic queue."""
    bits = [b for b in range(need.bit_length()) if need >> b & 1]
    count = dict.fromkeys(bits, 0)
    queues = {b: deque() for b in bits}  # window positions holding b, scores decreasing
    missing, left, out = len(bits), 0, None
    for right, (_idx, mask, score, _doc) in enumerate(messages):
        for b in bits:
            if mask >> b & 1:
                missing -= count[b] == 0
                count[b] += 1
                q = queues[b]
                while q and messages[q[-1]][2] <= score:
                    q.pop()
                q.append(right)
        if missing:
            continue
        while True:  # drop messages from the left while the window still holds every group
            lmask = messages[left][1]
            if any(lmask >> b & 1 and count[b] == 1 for b in bits):
                break
            for b in bits:
                if lmask >> b & 1:
                    count[b] -= 1
                    if queues[b][0] == left:
                        queues[b].popleft()
            left += 1
        span = messages[right][0] - messages[left][0] + 1
        value = sum(messages[queues[b][0]][2] for b in bits) * proximity(span)
        if out is None or value > out[0]:
            top = max((queues[b][0] for b in bits), key=lambda p: messages[p][2])
            out = (value, span, messages[top][3])
    return out


def excluded_sessions(searcher, comp: Compiler, keys: SegmentKeys) -> frozenset[str]:
    """The keys (``skey``) of the sessions holding an excluded word (``-word``)."""
    q = comp.excluded_query()
    if q is None:
        return frozenset()
    return frozenset(keys.key_of(searcher, d) for d in q.docs(searcher))

"""The ladder: the rungs a search goes down, how a page is filled from them, and how a rung's
first rows are made exact whatever the page size.

The rungs, highest first (the README's query language):

1. ``phrase``: the words adjacent and in order in one message (or in a title/summary), as
   running text: words typed apart found only inside one path or identifier (a file name that
   spells them) do not count here (``index.phrases``), and fall to ``all``;
2. ``all``: every word in one message (or in a title/summary);
3. ``session``: every word somewhere in the session, ranked by proximity (``scoring.best_window``);
4. ``repair``: ``all`` again with unknown words replaced by their spelling repair;
5. ``any``: sessions holding any of the words, the most (and rarest) of them close together first.

**Fill**: a rung that finds fewer sessions than the page needs is followed by the next rungs; a
session is listed once, by the highest rung that found it, and rows keep the rungs' order (each
``Row`` carries its ``route``). **Ranking within a rung**: a session's row has a message part
(its best message's BM25F score; on the ``session`` and ``any`` rungs its best window of
messages, ``gathering``) and a title part (its title's and summary's score for every query word
they hold); ``crabsearch.ranking.Policy`` makes its score from them, recency breaking ties.
``sort="newest"`` orders each rung by its best document's time instead.

**A page's rows do not depend on its size**: a per-document rung ranks the sessions of two lists
cut at ``k`` (by message score, by title and summary score); a session in neither scores at
most the policy's bound of the two cut-offs. The rung's first rows are checked against that
bound (Fagin's threshold rule, :meth:`Climb.rung`) and ``k`` grows until no left-out session
can reach the page. So the first ``n`` rows of a page of 100 are the page of ``n``, and the
app's next rows (End) never reorder the ones shown.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..hits import SearchResult
from ..index.collect import SegmentKeys, best_per_session
from ..index.lookups import within
from ..index.querying import MESSAGE_FIELDS, SESSION_FIELDS, Compiler
from ..ranking import DEDUP_DEPTH, LADDER_DEPTH_CAP, POLICY, RUNG_DEPTH_MIN, Policy
from .gathering import Gathered, any_entries, gather, session_entries
from .scans import ScansKept

__all__ = ["Climb", "Context", "Gathered", "Row", "ScansKept", "best_per", "climb", "excluded_sessions", "rank", "unmatched_phrases"]


@dataclass
class Context:
    """One search in progress: the ``searcher``, the query's ``comp``\\ iler, the per-segment
    column cache ``keys``, the filter clauses for message and session documents (``s_filters``
    None: session documents excluded), the ``deadline`` (``time.monotonic()``) and ``stop`` (a
    ``threading.Event``, or None: set, the search ends as at its deadline), the sessions
    ``excluded`` by ``-word``, the ``since:``/``until:`` ``window``, the ``sort``, the rows to
    ``fetch`` and the ``result`` being filled (its ``route`` and ``partial``); ``scans``, what
    one rung's scan leaves for another's (``collect.best_per_session``); ``kept``, the best
    documents per session the previous search found (:class:`ScansKept`); ``policy``, how a
    row's score is composed and bounded (``crabsearch.ranking.Policy``), and ``now``, the
    search's clock (ms since the epoch) it measures ages to."""

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
    stop: object = None
    scans: dict = field(default_factory=dict)
    kept: ScansKept | None = None
    policy: Policy = POLICY
    now: int = 0


@dataclass(slots=True)
class Row:
    """A ranked session: ``score`` (``m_score`` of its best message or window plus ``s_score`` of
    its title and summary), ``newest`` (ms; 0 where it does not decide the order), the best
    message document ``m_doc`` and session document ``s_doc``, the ``matched`` (field, term)
    pairs, the ``route`` that found it and its ``skey``; ``fused``, on a page similarity search
    fused (``search.similar.fuse``), ``(words, meaning, combined)``: its normalized parts and the
    score it was ranked by, else None."""

    score: float
    newest: int
    m_doc: int | None
    s_doc: int | None
    m_score: float
    s_score: float
    matched: list
    route: str
    skey: str
    fused: tuple[float, float, float] | None = None


def climb(ctx: Context) -> list[Row]:
    """The rows of every rung used, in ladder order (see the module docs); sets
    ``ctx.result.route`` to the first rung that found something and ``partial`` when out of
    time. Stops once ``ctx.fetch`` sessions are listed."""
    return Climb(ctx).run()


@dataclass
class Lists:
    """A per-document rung's two lists at depth ``k``: ``found``, the ``k`` best sessions by
    message score, and ``sessions``, by the rung's title and summary score (``{skey: (score,
    document number, matched pairs)}``, best first, as scanned). A full list (``k`` sessions)
    has a cut-off, its last score: a session it leaves out scores at most that; a list that is
    not full holds every session with such a score (the cut-off is 0)."""

    k: int
    found: dict
    sessions: dict

    def __post_init__(self) -> None:
        self.m_full, self.s_full = len(self.found) >= self.k, len(self.sessions) >= self.k
        self.m_cut = next(reversed(self.found.values()))[0] if self.m_full else 0.0
        self.s_cut = next(reversed(self.sessions.values()))[0] if self.s_full else 0.0


class Climb:
    """One search's walk down the ladder (:func:`climb`): ``rows`` so far (ladder order), the
    sessions they list (``listed``), and the title and summary scans kept for the rungs after
    (``titles``: per word groups, the entries found and the sessions asked for; ``tops``: per
    word groups and depth, the best sessions by title and summary score)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.comp = ctx.comp
        self.rows: list[Row] = []
        self.listed: set[str] = set()
        self.titles: dict[tuple, tuple[dict, set]] = {}
        self.tops: dict[tuple, dict] = {}

    def run(self) -> list[Row]:
        """Every rung in turn until the page is full (:meth:`done`); the rows."""
        comp = self.comp
        multi = len(comp.groups) > 1
        s_rungs = dict(comp.rungs(SESSION_FIELDS))
        gathered = None
        session_done = False
        for route, mq in comp.rungs(MESSAGE_FIELDS):
            if self.done():
                break
            if route == "repair" and multi and comp.all_known():
                # Before repairing spelling: every word somewhere in the session.
                gathered = gather(self.ctx, comp.groups)
                self.take("session", session_entries(gathered, len(comp.groups)))
                session_done = True
                if self.done():
                    break
            self.rung(route, mq, s_rungs.get(route), groups=comp.repaired_groups() if route == "repair" else None)
        if multi and not self.done():
            repaired = comp.repaired_groups()
            known = [g for g in repaired if comp.has_postings(g)]
            if len(known) == 1:
                # Only one word is in the index at all ("error zqxjvbnwk"): "any" is that word
                # alone, found by the best-hit collector instead of gathering every match.
                group = [known[0]]
                self.rung("any", comp.any_query(MESSAGE_FIELDS, group), comp.any_query(SESSION_FIELDS, group),
                          groups=group)
            else:
                if gathered is None or repaired != comp.groups:  # "any" uses the repaired words too
                    gathered = gather(self.ctx, repaired)
                if not session_done:
                    self.take("session", session_entries(gathered, len(comp.groups)), groups=repaired)
                if not self.done():
                    self.take("any", any_entries(self.ctx, gathered, len(repaired)), groups=repaired)
        return self.rows

    def done(self) -> bool:
        """Out of time (what was found is the answer), or enough sessions for the page."""
        return self.ctx.result.partial or len(self.listed) >= self.ctx.fetch

    def take(self, route: str, found: dict, sessions: dict | None = None, groups=None) -> None:
        """Add a rung's sessions not listed by a higher rung, ranked within the rung."""
        groups = self.comp.groups if groups is None else groups
        ranked = rank(self.ctx, *self.merged(found, sessions or {}, groups), route)
        self.rows.extend(ranked)
        self.listed.update(r.skey for r in ranked)
        if ranked and self.ctx.result.route is None:
            self.ctx.result.route = route

    def merged(self, found: dict, sessions: dict, groups) -> tuple[dict, dict]:
        """A rung's entries for the sessions no higher rung listed: its message entries
        ``found``, and its title/summary entries ``sessions`` (a title or summary holding the
        rung's words) with every session's title and summary score for the words they hold."""
        found = {k: v for k, v in found.items() if k not in self.listed}
        sessions = {k: v for k, v in sessions.items() if k not in self.listed}
        if found or sessions:
            wanted = set(found) | set(sessions)
            partial = self.title_scores(groups, wanted)
            sessions.update((k, partial[k]) for k in wanted if k in partial)
        return found, sessions

    def title_scores(self, groups, sessions: set[str]) -> dict[str, tuple]:
        """The title and summary score of each of ``sessions`` for any of the word groups: every
        word they hold counts, on every rung. Each session once per groups: from a scan of every
        session's titles for the groups (:meth:`title_top`) when it lists the session, or holds
        every session with a match (fewer than its ``k``); else only those sessions' documents
        are scored."""
        ctx = self.ctx
        if ctx.s_filters is None or ctx.sort == "newest":
            return {}
        key = groups_key(groups)
        got, asked = self.titles.setdefault(key, ({}, set()))
        missing = frozenset(sessions - asked)
        for (g, k), top in self.tops.items():
            if g == key and missing:
                got.update((s, top[s]) for s in missing if s in top)
                asked |= missing if len(top) < k else missing & top.keys()
                missing = frozenset(sessions - asked)
        if missing:
            got.update(best_per(ctx, self.comp.any_query(SESSION_FIELDS, groups), ctx.s_filters, len(missing),
                                depth=1, titles_of=missing))
            asked |= missing
        return got

    def title_top(self, groups, k: int) -> dict:
        """The ``k`` best sessions by title and summary score for any of the word groups
        (``{skey: entry}``, best first); each ``(groups, k)`` scanned once."""
        ctx = self.ctx
        if ctx.s_filters is None:
            return {}
        key = (groups_key(groups), k)
        top = self.tops.get(key)
        if top is None:
            top = self.tops[key] = best_per(ctx, self.comp.any_query(SESSION_FIELDS, groups), ctx.s_filters, k,
                                            depth=1)
        return top

    def rung(self, route: str, mq, sq, groups=None) -> None:
        """A per-document rung (``phrase``, ``all``, ``repair``; ``any`` for one known word),
        message query ``mq`` and title query ``sq`` (None: none), whose first rows are exact
        whatever the page size: Fagin's threshold rule over two lists (:class:`Lists`), the
        ``k`` best sessions by message score (``M``) and by title and summary score for any of
        the words (``T``), a session's score being the policy's of the two.

        A session outside both lists scores at most the policy's bound of their two cut-offs;
        one in ``T`` alone, at most the bound of ``M``'s cut-off and its title score: those are
        looked up when that could bring them onto the page (:meth:`look_up`). When the page's
        last row of this rung then scores more than the first bound, no session left out
        belongs on the page; else ``k`` grows 4x, from ``fetch x DEDUP_DEPTH`` (at least
        ``RUNG_DEPTH_MIN``; to ``LADDER_DEPTH_CAP`` at most: ``crabsearch.ranking``)."""
        ctx, policy = self.ctx, self.ctx.policy
        groups = self.comp.groups if groups is None else groups
        need = ctx.fetch - len(self.listed)
        k = max(ctx.fetch * DEDUP_DEPTH, RUNG_DEPTH_MIN)
        while True:
            lists = Lists(k, best_per(ctx, mq, ctx.m_filters, k, depth=1),
                          {} if sq is None or ctx.s_filters is None else best_per(ctx, sq, ctx.s_filters, k, depth=1))
            if ctx.result.partial or ctx.sort == "newest" or not (lists.m_full or lists.s_full):
                break  # out of time, by time, or every session of the rung is in the lists
            # T: the rung's own title list when its query is "any of the words" (one word, or
            # no words: a prefix or a quoted phrase alone)
            if sq is not None and (not groups or (route != "phrase" and len(groups) == 1)):
                top = self.tops[(groups_key(groups), k)] = lists.sessions
            else:
                top = self.title_top(groups, k)
            a_cut = next(reversed(top.values()))[0] if len(top) >= k else 0.0
            last = self.look_up(lists, top, mq, sq, groups, need)
            left_out = policy.bound(lists.m_cut, max(a_cut, lists.s_cut), ctx.now)
            if policy.key(last) > policy.key(left_out) or k >= LADDER_DEPTH_CAP:
                break
            k *= 4
        self.take(route, lists.found, lists.sessions, groups)

    def look_up(self, lists: Lists, top: dict, mq, sq, groups, need: int) -> float:
        """Complete ``lists`` with the sessions that could still move onto the page, by their
        known title score: those in the title list ``top`` that neither list has, and (``M``
        full) those found by their title alone. Their best messages are looked up (and, when the
        rung's title list is full too, whether their title holds the rung's words) highest
        bound first, a page's worth at a time: the page's last row can only rise as they are,
        and a session whose bound falls below it is left out. Returns that last row's score."""
        ctx, policy = self.ctx, self.ctx.policy
        found, sessions = lists.found, lists.sessions
        known = {key: entry[0] for key, entry in top.items() if key not in self.listed and key not in found}
        if lists.m_full:
            _, t = self.merged({}, {key: v for key, v in sessions.items() if key not in found}, groups)
            known.update((key, entry[0]) for key, entry in t.items())
        last = self.last_score(found, sessions, groups, need)
        todo = sorted(known, key=lambda key: (-known[key], key))
        while todo := [key for key in todo
                       if policy.key(policy.bound(lists.m_cut, known[key], ctx.now)) >= policy.key(last)]:
            batch, todo = frozenset(todo[:max(need, 1)]), todo[max(need, 1):]
            if lists.m_full:
                found.update(best_per(ctx, mq, ctx.m_filters, len(batch), depth=1, messages_of=batch))
            unsure = frozenset(batch - set(found) - set(sessions))
            if unsure and lists.s_full:  # in T: does its title hold the rung's words?
                sessions.update(best_per(ctx, sq, ctx.s_filters, len(unsure), depth=1, titles_of=unsure))
            last = self.last_score(found, sessions, groups, need)
        return last

    def last_score(self, found: dict, sessions: dict, groups, need: int) -> float:
        """The score of the page's last row of this rung (the ``need``-th best of the lists'
        sessions not listed yet), 0 when the lists hold fewer."""
        f, t = self.merged(found, sessions, groups)
        sums = [row_score(self.ctx, f[key], t.get(key)) for key in f]
        sums += [row_score(self.ctx, None, t[key]) for key in t if key not in f]
        return heapq.nlargest(need, sums)[-1] if len(sums) >= need else 0.0


def groups_key(groups) -> tuple[tuple[str, ...], ...]:
    """Word groups (lists of words) as a dict key: what a search's title scans are kept by."""
    return tuple(map(tuple, groups))


def rank(ctx: Context, found: dict, sessions: dict, route: str) -> list[Row]:
    """One rung's rows, best first, from per-session message entries (``found``) and
    title/summary entries (``sessions``), ``{skey: (score, document number, matched pairs)}``:
    a session's score is the policy's of the two (:func:`row_score`), compared as
    ``Policy.key`` gives it; recency breaks ties (then the session key); ``sort="newest"`` ranks
    by the best document's time. A row's ``newest`` is looked up where it decides the order (ties,
    and ``sort="newest"``) or the score (a policy that uses time), else 0."""
    policy = ctx.policy
    rows = []
    for skey in found.keys() | sessions.keys():
        m_score, m_doc, m_terms = found.get(skey, (0.0, None, []))
        s_score, s_doc, s_terms = sessions.get(skey, (0.0, None, []))
        rows.append(Row(0.0, 0, m_doc, s_doc, m_score, s_score, list(m_terms) + list(s_terms), route, skey))
    if policy.uses_time:
        _set_newest(ctx, rows)
    for r in rows:
        r.score = policy.score(r.m_score, r.s_score, r.newest if policy.uses_time else None, ctx.now)
    if ctx.sort == "newest":
        if not policy.uses_time:
            _set_newest(ctx, rows)
        rows.sort(key=lambda r: (-r.newest, -r.score, r.skey))
        return rows
    # the session key last: the same order from any index of the same transcripts
    key = policy.key
    rows.sort(key=lambda r: (-key(r.score), r.skey))
    i = 0
    while i < len(rows):
        j, tie = i + 1, key(rows[i].score)
        while j < len(rows) and key(rows[j].score) == tie:
            j += 1
        if j - i > 1:
            if not policy.uses_time:
                _set_newest(ctx, rows[i:j])
            rows[i:j] = sorted(rows[i:j], key=lambda r: (-r.newest, r.skey))
        i = j
    return rows


def row_score(ctx: Context, m_entry: tuple | None, s_entry: tuple | None) -> float:
    """The score of a session's row from its message entry and its title/summary entry
    (``(score, document number, matched pairs)``, or None for none): ``ctx.policy.score``, with
    the time of its best document (the message's, else the session document's) when the policy
    uses time."""
    message = m_entry[0] if m_entry is not None else 0.0
    title = s_entry[0] if s_entry is not None else 0.0
    when = None
    if ctx.policy.uses_time:
        doc = m_entry[1] if m_entry is not None and m_entry[1] is not None else s_entry[1]
        when = ctx.keys.updated_of(ctx.searcher, doc)
    return ctx.policy.score(message, title, when, ctx.now)


def _set_newest(ctx: Context, rows: list[Row]) -> None:
    """Each row's ``newest``: its best document's time (a message's own time, else its
    session's; a session document's: the session's), from the column cache."""
    for r in rows:
        r.newest = ctx.keys.updated_of(ctx.searcher, r.m_doc if r.m_doc is not None else r.s_doc)


def best_per(ctx: Context, q, clauses, limit: int, depth: int = DEDUP_DEPTH,
             titles_of: frozenset[str] | None = None, messages_of: frozenset[str] | None = None
             ) -> dict[str, tuple]:
    """Run one query, collapsed to the best document per session; returns the ``limit * depth``
    best sessions as ``{skey: (score, document number, matched (field, term) pairs)}``. Every
    session's best is found anyway; more of them than the rows shown are kept so that copies of
    one message (folded into one row later) cannot leave the page short. ``titles_of``: only
    these sessions' title and summary documents (``collect.best_per_session``)."""
    if clauses is None:
        return {}
    newest = ctx.sort == "newest"  # the score is the time then: rows are ordered by ``newest``
    key = None
    if ctx.kept is not None:
        key = (q, tuple(clauses), limit * depth, newest, ctx.excluded, ctx.window, titles_of, messages_of)
        got = ctx.kept.get(key)
        if got is not None:
            return got
    top, partial = best_per_session(ctx.searcher, within(q, clauses), limit * depth, ctx.keys,
                                    newest=ctx.sort == "newest", deadline=ctx.deadline, stop=ctx.stop,
                                    excluded=ctx.excluded, window=ctx.window, titles_of=titles_of,
                                    messages_of=messages_of, scans=ctx.scans)
    ctx.result.partial = ctx.result.partial or partial
    out = {skey: (0.0 if newest else float(best.score), best.docnum, best.terms) for skey, best in top}
    if key is not None and not partial:
        ctx.kept.put(key, out)
    return out


def unmatched_phrases(ctx: Context) -> list[str]:
    """The quoted phrases of the query (as typed) that no message or title/summary the search
    may list holds (its filters, ``-word`` exclusions and time window applied): each one alone
    empties every rung."""
    comp = ctx.comp
    out = []
    for typed, terms in zip(comp.typed_phrases, comp.phrases):
        found = best_per(ctx, comp.phrase_query(terms, MESSAGE_FIELDS), ctx.m_filters, 1, depth=1)
        if not found and ctx.s_filters is not None:
            found = best_per(ctx, comp.phrase_query(terms, SESSION_FIELDS), ctx.s_filters, 1, depth=1)
        if not found and not ctx.result.partial:
            out.append(typed)
    return out


def excluded_sessions(searcher, comp: Compiler, keys: SegmentKeys) -> frozenset[str]:
    """The keys (``skey``) of the sessions holding an excluded word (``-word``)."""
    q = comp.excluded_query()
    if q is None:
        return frozenset()
    return frozenset(keys.key_of(searcher, d) for d in q.docs(searcher))

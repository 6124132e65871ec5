"""The ranking policy: the ladder of rungs, how a page is filled from them, and how each rung ranks.

The rungs (issue 3, "Query language"; issue 11), highest first:

1. ``phrase``: the words adjacent and in order in one message (or in a title/summary), as
   running text: words typed apart found only inside one path or identifier (a file name that
   spells them) do not count here (``index.phrases``), and fall to ``all``;
2. ``all``: every word in one message (or in a title/summary);
3. ``session``: every word somewhere in the session, ranked by proximity (``scoring.best_window``);
4. ``repair``: ``all`` again with unknown words replaced by their spelling repair;
5. ``any``: sessions holding any of the words, the most (and rarest) of them close together first.

**Fill** (issue 11, problem 1): a rung that finds fewer sessions than the page needs is followed by
the next rungs; a session is listed once, by the highest rung that found it, and rows keep the
rungs' order (each ``Row`` carries its ``route``). **Ranking within a rung**: a session's score
is its best message's (BM25F with the role weights of ``index.schema.WEIGHTS``), plus the score
of its title and summary for every query word they hold (problem 3), recency breaking ties; the
``session`` and ``any`` rungs score a window of consecutive messages instead, its words' best
scores decayed by its span (problem 2: ``scoring.best_window``, ``scoring.best_span``), so that
a long session mentioning the words far apart does not win by its length; the ``any`` rung adds
the session's topic score (``scoring.topic_scores``: how often its messages come back to the
words, BM25 at the session level). ``sort="newest"`` orders each rung by its best document's
time instead.

**A page's rows do not depend on its size**: a per-document rung ranks the sessions of two lists
cut at ``k`` (by message score, by title and summary score), and a session in neither could
score more than a listed one; the rung's first rows are checked against the two cut-offs
(Fagin's threshold rule) and ``k`` grows until no left-out session can reach the page. So the
first ``n`` rows of a page of 100 are the page of ``n``, and the app's next rows (End) never
reorder the ones shown (``tests/test_ranking_pages.py``).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..hits import SearchResult
from ..index.collect import OutOfTime, SegmentKeys, best_per_session, each_match
from ..index.lookups import within
from ..index.querying import MESSAGE_FIELDS, SESSION_FIELDS, Compiler
from ..index.schema import WEIGHTS
from ..ranking import DEDUP_DEPTH, GATHER_CAP, LADDER_DEPTH_CAP, POLICY, RUNG_DEPTH_MIN, Policy
from .scoring import best_span, best_window, session_lengths, topic_scores


@dataclass
class Context:
    """One search in progress: the ``searcher``, the query's ``comp``\\ iler, the per-segment
    column cache ``keys``, the filter clauses for message and session documents (``s_filters``
    None: session documents excluded), the ``deadline`` (``time.monotonic()``) and ``stop`` (a
    ``threading.Event``, or None: set, the search ends as at its deadline), the sessions
    ``excluded`` by ``-word``, the ``since:``/``until:`` ``window``, the ``sort``, the rows to
    ``fetch`` and the ``result`` being filled (its ``route`` and ``partial``); ``scans``, what
    one rung's scan leaves for another's (``collect.best_per_session``); ``kept``, the best
    documents per session the previous search found (:class:`ScansKept`)."""

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


class ScansKept:
    """The best documents per session that a search's scans found (:func:`best_per`), kept for
    the next search of the same searcher: a query typed one key at a time asks again for much of
    what the key before asked for (``token refres`` reads ``refres`` as ``refresh`` and ranks
    ``token`` and ``refresh`` in one message, as ``token refresh`` then does; every key of
    ``error zqxjvbnwk`` past ``error z`` looks for ``error`` alone). Only the scans of the one
    search before are kept (those it found or took over from its own predecessor), so what is
    kept is one search's worth and a query typed again from its first key searches anew.

    A scan is known by everything its answer depends on: the query and filter clauses (Whoosh
    queries compare by their fields, words and boosts), the sessions asked for, the limit, the
    order, the ``-word`` exclusions and the time window. A scan stopped early (out of time, or
    the search no longer wanted) is not kept. Not thread-safe: the engine's lock holds."""

    def __init__(self) -> None:
        self.searcher = None
        self.before: dict = {}
        self.now: dict = {}

    def begin(self, searcher) -> None:
        """A new search of ``searcher``: the scans of the last one (when it was of the same
        searcher) can be taken; those of earlier ones are dropped."""
        self.before = self.now if searcher is self.searcher else {}
        self.now, self.searcher = {}, searcher

    def get(self, key) -> dict | None:
        """A copy of the answer kept for ``key`` (kept again for the next search), or None."""
        got = self.now.get(key)
        if got is None:
            got = self.before.pop(key, None)
            if got is None:
                return None
            self.now[key] = got
        return dict(got)

    def put(self, key, answer: dict) -> None:
        """Keep a complete scan's ``answer`` (a copy) for ``key``."""
        self.now[key] = dict(answer)


@dataclass(slots=True)
class Row:
    """A ranked session: ``score`` (``m_score`` of its best message or window plus ``s_score`` of
    its title and summary), ``newest`` (ms; 0 where it does not decide the order), the best
    message document ``m_doc`` and session document ``s_doc``, the ``matched`` (field, term)
    pairs, the ``route`` that found it and its ``skey``."""

    score: float
    newest: int
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
    comp, result, policy = ctx.comp, ctx.result, ctx.policy
    rows: list[Row] = []
    listed: set[str] = set()
    titles: dict[tuple, tuple[dict, set]] = {}  # groups -> (title entries, sessions asked)
    tops: dict[tuple, dict] = {}  # (groups, k) -> the k best title and summary entries
    multi = len(comp.groups) > 1

    def title_scores(groups, sessions: set[str]) -> dict[str, tuple]:
        """The title and summary score of each of ``sessions`` for any of the word groups: every
        word they hold counts, on every rung (problem 3). Each session once per groups: from a
        scan of every session's titles for the groups (:func:`title_top`) when it lists the
        session, or holds every session with a match (fewer than its ``k``); else only those
        sessions' documents are scored."""
        if ctx.s_filters is None or ctx.sort == "newest":
            return {}
        key = groups_key(groups)
        got, asked = titles.setdefault(key, ({}, set()))
        missing = frozenset(sessions - asked)
        for (g, k), top in tops.items():
            if g == key and missing:
                got.update((s, top[s]) for s in missing if s in top)
                asked |= missing if len(top) < k else missing & top.keys()
                missing = frozenset(sessions - asked)
        if missing:
            got.update(best_per(ctx, comp.any_query(SESSION_FIELDS, groups), ctx.s_filters, len(missing),
                                depth=1, titles_of=missing))
            asked |= missing
        return got

    def title_top(groups, k: int) -> dict:
        """The ``k`` best sessions by title and summary score for any of the word groups
        (``{skey: entry}``, best first); each ``(groups, k)`` scanned once."""
        if ctx.s_filters is None:
            return {}
        key = (groups_key(groups), k)
        top = tops.get(key)
        if top is None:
            top = tops[key] = best_per(ctx, comp.any_query(SESSION_FIELDS, groups), ctx.s_filters, k, depth=1)
        return top

    def merged(found: dict, sessions: dict, groups) -> tuple[dict, dict]:
        """A rung's entries for the sessions no higher rung listed: its message entries
        ``found``, and its title/summary entries ``sessions`` (a title or summary holding the
        rung's words) with every session's title and summary score for the words they hold."""
        found = {k: v for k, v in found.items() if k not in listed}
        sessions = {k: v for k, v in sessions.items() if k not in listed}
        if found or sessions:
            wanted = set(found) | set(sessions)
            partial = title_scores(groups, wanted)
            sessions.update((k, partial[k]) for k in wanted if k in partial)
        return found, sessions

    def take(route: str, found: dict, sessions: dict | None = None, groups=None) -> None:
        """Add a rung's sessions not listed by a higher rung, ranked within the rung."""
        ranked = rank(ctx, *merged(found, sessions or {}, comp.groups if groups is None else groups), route)
        rows.extend(ranked)
        listed.update(r.skey for r in ranked)
        if ranked and result.route is None:
            result.route = route

    def rung(route: str, mq, sq, groups=None) -> None:
        """A per-document rung (``phrase``, ``all``, ``repair``; ``any`` for one known word)
        whose first rows are exact whatever the page size: Fagin's threshold rule over two
        lists, the ``k`` best sessions by message score (``M``) and by title and summary score
        for any of the words (``T``; a session's score is the sum).

        A session outside both lists scores at most their two cut-offs together; one in ``T``
        alone, at most its title score and ``M``'s cut-off: its best message is looked up
        (and, when the rung's title list is full too, whether its title holds the rung's words)
        when that could bring it onto the page, a page's worth at a time, highest bound first.
        When the page's last row of this rung then scores more than the two cut-offs, no session
        left out belongs on the page; else ``k`` grows 4x, from ``fetch x DEDUP_DEPTH`` (at least
        :data:`RUNG_DEPTH_MIN`; to
        :data:`LADDER_DEPTH_CAP` at most)."""
        groups = comp.groups if groups is None else groups
        need = ctx.fetch - len(listed)

        def last_score(found: dict, sessions: dict) -> float:  # the page's last row of this rung
            f, t = merged(found, sessions, groups)
            sums = [row_score(ctx, f[key], t.get(key)) for key in f]
            sums += [row_score(ctx, None, t[key]) for key in t if key not in f]
            return heapq.nlargest(need, sums)[-1] if len(sums) >= need else 0.0

        k = max(ctx.fetch * DEDUP_DEPTH, RUNG_DEPTH_MIN)
        while True:
            found = best_per(ctx, mq, ctx.m_filters, k, depth=1)
            sessions = {} if sq is None or ctx.s_filters is None else best_per(ctx, sq, ctx.s_filters, k, depth=1)
            m_full, s_full = len(found) >= k, len(sessions) >= k
            if result.partial or ctx.sort == "newest" or not (m_full or s_full):
                break  # out of time, by time, or every session of the rung is in the lists
            m_cut = next(reversed(found.values()))[0] if m_full else 0.0
            s_cut = next(reversed(sessions.values()))[0] if s_full else 0.0
            # T: the rung's own title list when its query is "any of the words" (one word, or
            # no words: a prefix or a quoted phrase alone)
            if sq is not None and (not groups or (route != "phrase" and len(groups) == 1)):
                top = tops[(groups_key(groups), k)] = sessions
            else:
                top = title_top(groups, k)
            a_cut = next(reversed(top.values()))[0] if len(top) >= k else 0.0
            # Sessions that could still move onto the page, by their known title score: those
            # in T that neither list has, and (M full) those found by their title alone.
            known = {key: entry[0] for key, entry in top.items() if key not in listed and key not in found}
            if m_full:
                _, t = merged({}, {key: v for key, v in sessions.items() if key not in found}, groups)
                known.update((key, entry[0]) for key, entry in t.items())
            # Looked up highest bound first, a page's worth at a time: the page's last row can
            # only rise as they are, and a session whose bound falls below it is left out.
            last = last_score(found, sessions)
            todo = sorted(known, key=lambda key: (-known[key], key))
            while todo := [key for key in todo if policy.key(policy.bound(m_cut, known[key], ctx.now))
                           >= policy.key(last)]:
                batch, todo = frozenset(todo[:max(need, 1)]), todo[max(need, 1):]
                if m_full:
                    found.update(best_per(ctx, mq, ctx.m_filters, len(batch), depth=1, messages_of=batch))
                unsure = frozenset(batch - set(found) - set(sessions))
                if unsure and s_full:  # in T: does its title hold the rung's words?
                    sessions.update(best_per(ctx, sq, ctx.s_filters, len(unsure), depth=1, titles_of=unsure))
                last = last_score(found, sessions)
            if policy.key(last) > policy.key(policy.bound(m_cut, max(a_cut, s_cut), ctx.now)) or k >= LADDER_DEPTH_CAP:
                break
            k *= 4
        take(route, found, sessions, groups)

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
        rung(route, mq, s_rungs.get(route), groups=comp.repaired_groups() if route == "repair" else None)
    if multi and not done():
        repaired = comp.repaired_groups()
        known = [g for g in repaired if comp.has_postings(g)]
        if len(known) == 1:
            # Only one word is in the index at all ("error zqxjvbnwk"): "any" is that word alone,
            # found by the best-hit collector instead of gathering every match.
            group = [known[0]]
            rung("any", comp.any_query(MESSAGE_FIELDS, group), comp.any_query(SESSION_FIELDS, group), groups=group)
        else:
            if gathered is None or repaired != comp.groups:  # "any" uses the repaired words too
                gathered = gather(ctx, repaired)
            if not session_done:
                take("session", session_entries(gathered, len(comp.groups)), groups=repaired)
            if not done():
                take("any", any_entries(ctx, gathered, len(repaired)), groups=repaired)
    return rows



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


@dataclass(slots=True)
class Gathered:
    """What :func:`gather` found of one session: ``messages``, its matching messages as
    ``docnum -> [message index, bit mask of the word groups it holds, score per group]``;
    ``s_mask``, the groups its title and summary hold; ``title_doc``, its session document when
    that matched; ``matched``, the ``(field, term)`` pairs."""

    messages: dict = field(default_factory=dict)
    s_mask: int = 0
    title_doc: int | None = None
    matched: set = field(default_factory=set)

    def covered(self) -> int:
        """The number of word groups the session holds somewhere (messages, title, summary)."""
        mask = self.s_mask
        for m in self.messages.values():
            mask |= m[1]
        return bin(mask).count("1")

    def ordered(self) -> list[tuple[int, int, list[float], int]]:
        """The matching messages as ``(message index, group mask, scores, document number)``,
        in message order."""
        return sorted((m[0], m[1], m[2], d) for d, m in self.messages.items())


def gather(ctx: Context, groups) -> dict[str, Gathered]:
    """Every session matching any word group, with every matching document and its score for
    each group (one scan per group: a message's score for a word is that word's BM25F score in
    it), for :func:`any_entries` and :func:`session_entries`. Scans at most
    :data:`~crabsearch.search.caps.GATHER_CAP` matches in all (then ``partial``)."""
    comp = ctx.comp
    per: dict[str, Gathered] = {}
    seen = 0
    kinds: dict[tuple, tuple] = {}  # matched pairs -> (those in text fields, title or summary only)
    try:
        for gi, group in enumerate(groups):
            q = comp.group_scan(group, ctx.m_filters, ctx.s_filters)
            for key, score, docnum, terms, idx in each_match(ctx.searcher, q, ctx.keys, deadline=ctx.deadline,
                                                            excluded=ctx.excluded, window=ctx.window,
                                                            stop=ctx.stop):
                seen += 1
                if seen > GATHER_CAP:
                    ctx.result.partial = True
                    return per
                g = per.get(key)
                if g is None:
                    g = per[key] = Gathered()
                kind = kinds.get(terms)
                if kind is None:
                    kind = kinds[terms] = (tuple((f, t) for f, t in terms if f in WEIGHTS),
                                           all(f in SESSION_FIELDS for f, _ in terms))
                g.matched.update(kind[0])
                if kind[1]:  # the title and summary: added per word by the rung
                    g.s_mask |= 1 << gi
                    g.title_doc = docnum
                    continue
                m = g.messages.get(docnum)
                if m is None:
                    m = g.messages[docnum] = [idx, 0, [0.0] * len(groups)]
                m[1] |= 1 << gi
                m[2][gi] = score
    except OutOfTime:
        ctx.result.partial = True
    return per


def any_entries(ctx: Context, gathered: dict[str, Gathered], n_groups: int) -> dict[str, tuple]:
    """The ``any`` rung's entries ``{skey: (score, document, matched pairs)}``: each session
    scored by its best window of messages (``scoring.best_span``: the query words it holds close
    together, each counted once at its best score there, decayed by the window's span), so a
    long session that mentions many of the words far apart does not outrank a short one about
    them (issue 11, problem 2), plus its topic score (``scoring.topic_scores``: how often its
    messages come back to each word, BM25 at the session level, length-normalized); its hit is
    the window's best message. The title and summary score is added by the rung."""
    lengths = session_lengths(ctx.searcher, ctx.keys) if ctx.sort != "newest" else {}
    topic = topic_scores(gathered, n_groups, lengths, len(lengths),
                         sum(lengths.values()) / len(lengths)) if lengths else {}
    out = {}
    for k, g in gathered.items():
        if g.messages:
            value, doc = best_span(g.ordered())
        else:  # the title or summary alone: anchored on the first prompt
            value, doc = 0.0, g.title_doc
        out[k] = (value + topic.get(k, 0.0), doc, sorted(g.matched))
    return out


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
        if g.covered() != n_groups:
            continue
        need = full & ~g.s_mask
        found = best_window(g.ordered(), need) if need else None
        if found is None:
            out[k] = (0.0, g.title_doc if not g.messages else max(g.messages, key=lambda d: sum(g.messages[d][2])),
                      sorted(g.matched))
        else:
            value, _span, doc = found
            out[k] = (value, doc, sorted(g.matched))
    return out


def excluded_sessions(searcher, comp: Compiler, keys: SegmentKeys) -> frozenset[str]:
    """The keys (``skey``) of the sessions holding an excluded word (``-word``)."""
    q = comp.excluded_query()
    if q is None:
        return frozenset()
    return frozenset(keys.key_of(searcher, d) for d in q.docs(searcher))

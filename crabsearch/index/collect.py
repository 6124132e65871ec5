"""Best hit per session in one pass over a query's matches (crabsearch's own collector).

It does what Whoosh's ``CollapseCollector`` over a ``TopCollector`` does, with each match scored
once (not once for the collapse order and once for the top list) and without generator layers
per match, and with the session key of every document read once per segment
(:class:`SegmentKeys`, kept across searches) instead of a ``skey`` column reader built again at
every search (the measurements: ``bench/results/history.md``, section "Speed").

Scores are Whoosh's (BM25F with the query's field boosts); which document is a session's best,
and which sessions make the cut, follow the collapse collector's rules: the higher score wins,
the first document seen wins a tie.
"""

from __future__ import annotations

import heapq
import time
from array import array
from dataclasses import dataclass
from itertools import groupby

from . import colfile, conjunction, mixed, phrases
from .filtering import in_window, is_filter_term, leaf_of, passing, split_filters, term_filter_ids
from .union import FlatOr, FlatUnionMatcher, scores, term_text

ANY_AGENT = "*"
"""In :meth:`SegmentKeys.not_of`'s agents: no ``agent:`` filter (no agent name is ``*``)."""

DEADLINE_EVERY = 256
"""Matches between two looks at the clock when a deadline is set."""


class OutOfTime(Exception):
    """Raised inside a scan when its deadline has passed (the caller keeps what was found)."""


@dataclass(slots=True)
class Best:
    """A session's best document: ``score`` (BM25F, or the document's ``updated`` time in ms for
    the newest-first order), ``docnum`` (the searcher's global document number) and ``terms``, the
    ``(field, text)`` pairs of the query that matched it."""

    score: float
    docnum: int
    terms: tuple[tuple[str, str], ...] = ()


class SegmentKeys:
    """Each document's session key (``skey``) and ``updated`` time, per segment.

    Read once per segment and kept by segment id until :meth:`keep_only` drops segments that are
    gone (a segment's columns never change; deletions do not touch them). Memory: one list entry
    per document (the key strings themselves are shared per session), plus 8 bytes per document
    once ``updated`` has been asked for. A segment's three columns are read together from its
    column file (``colfile.py``: one read instead of Whoosh's per-document decoding) when it has
    a usable one, else from Whoosh.
    """

    def __init__(self) -> None:
        self._keys: dict[str, list[str]] = {}
        self._updated: dict[str, array] = {}
        self._indexes: dict[str, array] = {}
        self._sessions: dict[str, dict[str, list[int]]] = {}
        self._runs: dict[str, dict[str, list[tuple[int, int]]]] = {}
        self._tried: set[str] = set()  # segments whose column file was looked for
        self._distincts: dict[str, frozenset[str]] = {}
        self._not_of: dict[str, dict[frozenset[str], frozenset[str]]] = {}

    @staticmethod
    def _segment_id(sub) -> str | None:
        segment = sub.reader().segment()  # None for an empty index's reader (no documents)
        return None if segment is None else segment.segment_id()

    def _from_file(self, sub, sid: str | None) -> None:
        """Fill the three caches of segment ``sid`` from its column file, when it has a usable
        one (else they are read from Whoosh's columns, one by one, as asked for)."""
        if sid is None or sid in self._keys or sid in self._tried:
            return
        self._tried.add(sid)
        reader = sub.reader()
        storage = getattr(reader, "_storage", None)
        folder = getattr(getattr(storage, "b", storage), "folder", None)  # a compound segment: b
        if folder is None:
            return
        got = colfile.load(folder, sid, reader.doc_count_all())
        if got is not None:
            self._keys[sid], self._updated[sid], self._indexes[sid] = got

    def keys(self, sub) -> list[str]:
        """``skey`` per document number of the leaf searcher ``sub`` (``""`` when unset)."""
        sid = self._segment_id(sub)
        self._from_file(sub, sid)
        out = self._keys.get(sid)
        if out is None:
            shared: dict[bytes, str] = {}
            out = []
            for raw in sub.reader().column_reader("skey"):
                key = shared.get(raw)
                if key is None:
                    key = shared[raw] = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
                out.append(key)
            self._keys[sid] = out
        return out

    def updated(self, sub) -> array:
        """``updated`` (ms) per document number of the leaf searcher ``sub`` (0 when unset)."""
        sid = self._segment_id(sub)
        self._from_file(sub, sid)
        out = self._updated.get(sid)
        if out is None:
            out = self._updated[sid] = array("q", sub.reader().column_reader("updated"))
        return out

    def indexes(self, sub) -> array:
        """The message index (``idx``) per document number of the leaf searcher ``sub`` (a
        session document's: its anchor message; -1 when unset). A segment written without the
        ``idx`` column gives each document's number instead (a transcript's messages are
        written one after another, so their distances are the same)."""
        sid = self._segment_id(sub)
        self._from_file(sub, sid)
        out = self._indexes.get(sid)
        if out is None:
            reader = sub.reader()
            if reader.has_column("idx"):
                out = array("i", reader.column_reader("idx"))
            else:
                out = array("i", range(reader.doc_count_all()))
            self._indexes[sid] = out
        return out

    def session_docs(self, sub) -> dict[str, list[int]]:
        """The session documents (``kind`` ``s``: a session's title and summary) of the leaf
        searcher ``sub`` by session key: ``{skey: [document number]}`` (one per session, but for
        the deleted ones of a rewritten transcript). Read once per segment."""
        sid = self._segment_id(sub)
        out = self._sessions.get(sid)
        if out is None:
            out = {}
            reader = sub.reader()
            if ("kind", b"s") in reader:
                skeys = self.keys(sub)
                for d in reader.postings("kind", b"s").all_ids():
                    out.setdefault(skeys[d], []).append(d)
            self._sessions[sid] = out
        return out

    def runs(self, sub) -> dict[str, list[tuple[int, int]]]:
        """Where each session's documents are in the leaf searcher ``sub``: ``{skey: [(start,
        stop)]}``, runs of consecutive document numbers (the writer adds a transcript's documents
        together, and a merge keeps each segment's order: usually one run a session). Read once
        per segment."""
        sid = self._segment_id(sub)
        out = self._runs.get(sid)
        if out is None:
            out = {}
            pos = 0
            for key, group in groupby(self.keys(sub)):
                n = sum(1 for _ in group)
                out.setdefault(key, []).append((pos, pos + n))
                pos += n
            self._runs[sid] = out
        return out

    def docs_of(self, sub, sessions, *, titles: bool = False) -> set[int]:
        """The document numbers of ``sessions`` (session keys) in the leaf searcher ``sub``;
        ``titles``: their session documents only (:meth:`session_docs`)."""
        if titles:
            docs = self.session_docs(sub)
            return {d for k in sessions for d in docs.get(k, ())}
        runs = self.runs(sub)
        return {d for k in sessions for start, stop in runs.get(k, ()) for d in range(start, stop)}

    def session_count(self, sub) -> int:
        """The number of sessions with documents in the leaf searcher ``sub``."""
        return len(self._distinct(sub))

    def not_of(self, sub, agents: frozenset[str]) -> frozenset[str]:
        """The session keys of the leaf searcher ``sub`` whose agent is not in ``agents`` (a key
        is ``agent:session-id``, ``index.writer``); none for :data:`ANY_AGENT`."""
        if ANY_AGENT in agents:
            return frozenset()
        sid = self._segment_id(sub)
        memo = self._not_of.setdefault(sid, {})
        out = memo.get(agents)
        if out is None:
            out = memo[agents] = frozenset(k for k in self._distinct(sub) if k.partition(":")[0] not in agents)
        return out

    def _distinct(self, sub) -> frozenset[str]:
        sid = self._segment_id(sub)
        out = self._distincts.get(sid)
        if out is None:
            out = self._distincts[sid] = frozenset(self.keys(sub))
        return out

    def key_of(self, searcher, docnum: int) -> str:
        """The session key of global document ``docnum`` of ``searcher``."""
        sub, d = leaf_of(searcher, docnum)
        return self.keys(sub)[d]

    def updated_of(self, searcher, docnum: int) -> int:
        """The ``updated`` time (ms, 0 when unset) of global document ``docnum`` of ``searcher``."""
        sub, d = leaf_of(searcher, docnum)
        return self.updated(sub)[d]

    def keep_only(self, searcher) -> None:
        """Forget the segments that ``searcher`` no longer has (after a merge or a rebuild)."""
        live = {self._segment_id(sub) for sub, _ in searcher.leaf_searchers()}
        for cache in (self._keys, self._updated, self._indexes, self._sessions, self._runs, self._distincts,
                      self._not_of):
            for sid in [s for s in cache if s not in live]:
                del cache[sid]
        self._tried &= live


def best_per_session(searcher, query, limit: int, keys: SegmentKeys, *, newest: bool = False,
                     deadline: float | None = None, excluded: frozenset[str] = frozenset(),
                     window: tuple[int | None, int | None] | None = None, stop=None,
                     titles_of: frozenset[str] | None = None, messages_of: frozenset[str] | None = None,
                     scans: dict | None = None) -> tuple[list[tuple[str, Best]], bool]:
    """The ``limit`` sessions whose best document for ``query`` scores highest, best first:
    ``([(skey, Best)], partial)``.

    ``newest`` orders by the document's ``updated`` time instead of its score (a session's
    newest matching message; nothing is scored). Documents of the sessions whose key is in
    ``excluded`` are passed over, and so are documents whose ``updated`` time is outside
    ``window`` (``filtering.time_window``). ``deadline`` (``time.monotonic()`` seconds) stops the scan
    once passed, and so does ``stop`` (a ``threading.Event``) once set; ``partial`` is then True
    and the result holds what was found so far. ``titles_of``, for a query on the title and
    summary fields: only the session documents of these sessions are scored (a word's posting
    blocks without one of them are not read); ``messages_of``, the same for any documents of
    these sessions (:meth:`SegmentKeys.runs`). ``scans``, when given: a dict kept for one search
    (of one searcher), where an exact phrase's scan leaves postings that a later scan of every
    word in one message takes instead of reading them again (``phrases.scores``' ``pairs``).
    """
    only = titles_of if titles_of is not None else messages_of
    best: dict[str, Best] = {}
    partial = False
    clock = _Clock(deadline, stop)
    # Exact phrases, and every word of several in one message, are scored term at a time
    # (phrases.scores, conjunction.scores); other queries walk Whoosh's matcher.
    phrased = None if newest else phrases.parts(query, searcher.schema)
    conjoined = None if newest or phrased else conjunction.parts(query)
    # Words and phrases in one union (an identifier whole or as its parts): each scored as alone
    unioned = None if newest or phrased or conjoined else mixed.parts(query, searcher.schema)
    # A word (in several fields) with filter terms: scored term at a time, its documents kept
    # when they pass the filters (the matcher walked the word's and filters' intersection).
    word, filter_terms = (None, []) if newest or phrased or conjoined or unioned else split_filters(query)
    agents, others = _by_session(filter_terms) if filter_terms and type(word) is FlatOr else (None, [])
    filtered = word if agents is not None else None
    context = searcher.context(needs_current=True)  # term matchers stay current: matched terms
    try:
        for sub, offset in searcher.leaf_searchers():
            skeys = keys.keys(sub)
            updated = keys.updated(sub) if newest or window else None
            scanned, clauses, theirs = None, [], None
            if only is not None:  # the documents of those sessions in this segment
                theirs = keys.docs_of(sub, only, titles=titles_of is not None)
                if not theirs:
                    continue
            floor = None
            pairs = None if scans is None else scans.setdefault(offset, {})
            if phrased is not None:
                if not phrased[1] and limit > 0:  # no filter clauses: the floor counts every document kept
                    floor = _Floor(skeys, updated, window, excluded, limit, _known(best, limit))
                scanned = phrases.scores(sub, context, phrased[0], clock.expired, theirs, floor, pairs)
                clauses = phrased[1]
            elif conjoined is not None:
                scanned = conjunction.scores(sub, context, conjoined[0], clock.expired, theirs, pairs)
                clauses = conjoined[1]
            elif unioned is not None:
                scanned, clauses = mixed.scores(sub, context, unioned[0], clock.expired, theirs), unioned[1]
            if scanned is not None:
                acc, masks, names, stopped = scanned
                if clauses and acc:
                    acc = {d: acc[d] for d in passing(sub, sorted(acc), clauses)}
                _keep_best(acc, masks, names, offset, skeys, updated, window, excluded, best, limit,
                           floor.score if floor is not None else None)
                if stopped:
                    raise OutOfTime  # after keeping what was scored: a partial result still has hits
                continue
            m, wanted, passed_over = None, None, excluded
            if filtered is not None:
                fm = filtered.matcher(sub, context)
                if not fm.is_active():
                    continue
                if type(fm) is FlatUnionMatcher and fm.plain_postings():
                    # agent: passes over the other agents' sessions; role and the rest: the
                    # documents in their posting lists (a dense list, an agent's, costs more)
                    others_keys = keys.not_of(sub, agents)
                    if len(others_keys) == keys.session_count(sub):
                        continue
                    passed_over = excluded | others_keys if excluded else others_keys
                    wanted = term_filter_ids(sub, others) if others else None
                    if wanted is not None and not wanted:
                        continue
                    m = fm  # the word's own postings; the filters are in wanted and passed_over
            if m is None:
                m = query.matcher(sub, context)
            if not m.is_active():
                continue
            plain = None if newest else isinstance(m, FlatUnionMatcher) and m.plain_postings()
            if plain:
                # The limit-th best session so far: a document below it can be no best of the
                # limit best sessions, whatever the segments after hold.
                known = _known(best, limit)
                if theirs is not None:
                    wanted = theirs if wanted is None else wanted & theirs
                    if not wanted:
                        continue
                _best_by_term(plain, offset, skeys, updated, window, passed_over, best, clock, limit, known, wanted)
                continue
            tms = list(m.term_matchers())
            while m.is_active():
                d = m.id()
                clock.tick()
                k = skeys[d]
                if (only is None or k in only) and _kept(k, d, updated, excluded, window):
                    sc = updated[d] if newest else m.score()
                    b = best.get(k)
                    # Newest first: of messages with the same time, the later one (documents
                    # come in message order). By score: the first document keeps a tie.
                    if b is None or sc > b.score or (newest and sc == b.score):
                        best[k] = Best(sc, offset + d, _terms(tms, d))
                m.next()
    except OutOfTime:
        partial = True
    top = heapq.nlargest(limit, best.items(), key=lambda kv: kv[1].score)
    return top, partial


def _by_session(clauses) -> tuple[frozenset[str] | None, list]:
    """``(agents, other clauses)`` of filter ``clauses`` when each is a filter term
    (``filtering.term_filter_ids``): ``agents``, the agent names a session's key may start
    with (``agent:NAME`` is the key's prefix, ``NAME:session-id``; every agent when there is no
    ``agent:``, none for two different ones). ``(None, [])`` when a clause is something else."""
    if not all(map(is_filter_term, clauses)):
        return None, []
    named = {q.text for q in clauses if q.fieldname == "agent"}
    agents = frozenset(named) if len(named) <= 1 else frozenset()
    return (agents if named else frozenset({ANY_AGENT})), [q for q in clauses if q.fieldname != "agent"]


def _best_by_term(plain, offset: int, skeys: list[str], updated, window, excluded, best: dict[str, Best],
                  clock, limit: int, known: float = 0.0, wanted: set[int] | None = None) -> None:
    """:func:`best_per_session` for one segment whose query is a word in several fields (plain
    posting lists): scored term at a time (``union.scores``), then the best document of each of
    the segment's ``limit`` best sessions (:func:`_segment_best`) kept with the same rule as the
    matcher's path (a higher score wins; in a tie, the lower document number).

    The scan passes over the posting blocks that cannot reach the ``limit``-th best session so
    far: ``known``, that score over the segments before, or the segment's own once it has that
    many sessions. ``wanted``: only these documents are scored (``union.scores``). Raises
    :class:`OutOfTime` after keeping the documents scored so far when the clock runs out."""
    names = [term_text(m.term()) for m, _, _ in plain]
    floor = _Floor(skeys, updated, window, excluded, limit, known)
    acc, masks, stopped = scores(plain, clock.expired, floor, wanted)
    _keep_best(acc, masks, names, offset, skeys, updated, window, excluded, best, limit, floor.score)
    if stopped:
        raise OutOfTime  # after keeping what was scored: a partial result still has hits


def _known(best: dict[str, Best], limit: int) -> float:
    """The ``limit``-th best session score in ``best`` (the segments before), else 0: a document
    below it can be no best of the ``limit`` best sessions, whatever the segments after hold."""
    if len(best) >= limit > 0:
        return sorted([b.score for b in best.values()], reverse=True)[limit - 1]
    return 0.0


class _Floor:
    """A term-at-a-time scan's floor (``union.scores``, ``phrases.scores``): called with the
    segment's scores so far (``{docnum: score}``), the score of the ``limit``-th best session
    (of the segment so far, or ``known``, the segments' before, when higher), below which no
    document matters. Worked out again (:func:`_segment_best`) only once the scores doubled;
    ``score`` is the last one."""

    def __init__(self, skeys, updated, window, excluded, limit: int, known: float) -> None:
        self.args = (skeys, updated, window, excluded, limit)
        self.limit, self.known, self.score, self.counted = limit, known, known, 0

    def __call__(self, acc: dict[int, float]) -> float:
        if len(acc) >= max(self.limit, 2 * self.counted):
            top = _segment_best(acc, *self.args, self.score)
            if len(top) >= self.limit:
                self.score = max(self.known, acc[top[-1]])
            self.counted = len(acc)
        return self.score


def _keep_best(acc: dict[int, float], masks: dict[int, int], names, offset: int, skeys: list[str], updated,
               window, excluded, best: dict[str, Best], limit: int, at_least: float | None = None) -> None:
    """Keep in ``best`` the best document of each of a segment's ``limit`` best sessions, from
    its scores ``acc`` (``{docnum: score}``) and matched-term ``masks`` over ``names``, with the
    matcher path's rule: a higher score wins; in a tie, the lower document number. ``at_least``
    as in :func:`_segment_best`."""
    for d in _segment_best(acc, skeys, updated, window, excluded, limit, at_least):
        k, sc = skeys[d], acc[d]
        b = best.get(k)
        if b is None or sc > b.score or (sc == b.score and offset + d < b.docnum):
            best[k] = Best(sc, offset + d, _named(names, masks[d]))


def _segment_best(acc: dict[int, float], skeys: list[str], updated, window, excluded, limit: int,
                  at_least: float | None = None) -> list[int]:
    """The best document of each of the ``limit`` sessions of a segment whose best scores in
    ``acc`` (``{docnum: score}``) are highest, passing :func:`_kept`: the first document of each
    new session met in the order (score descending, document number ascending), best first.

    A session outside a segment's ``limit`` best cannot be in the best ``limit`` overall (each
    session ahead of it in the segment is ahead of it overall), so the other documents need no
    look. The order is two sorts in C (by document number, then, stable, by score), and the walk
    stops at the ``limit``-th session: a segment's documents are walked in Python only as far as
    its best sessions go, never all of them (as ``heapq.nlargest`` would).

    ``at_least``: a score that ``limit`` sessions are known to reach (in this segment or the
    ones before: the scan's floor, ``_best_by_term``); the documents below it are not sorted
    (a session whose best is below it cannot be among the ``limit`` best overall): for a common
    word, most of its documents."""
    if limit <= 0 or not acc:
        return []
    docs = acc if at_least is None else [d for d, sc in acc.items() if sc >= at_least]
    seen: dict[str, int] = {}
    for d in sorted(sorted(docs), key=acc.__getitem__, reverse=True):
        k = skeys[d]
        if k not in seen and _kept(k, d, updated, excluded, window):
            seen[k] = d
            if len(seen) == limit:
                break
    return list(seen.values())


def each_match(searcher, query, keys: SegmentKeys, *, deadline: float | None = None,
               excluded: frozenset[str] = frozenset(), window: tuple[int | None, int | None] | None = None,
               stop=None):
    """Every document matching ``query``, in document order, as ``(skey, score, docnum, terms,
    idx)`` (BM25F score, global document number, a tuple of the matched ``(field, text)`` pairs,
    the document's message index from :meth:`SegmentKeys.indexes`), except those of the sessions
    whose key is in ``excluded`` and those outside the time ``window``.

    Raises :class:`OutOfTime` once ``deadline`` (``time.monotonic()`` seconds) has passed, or
    ``stop`` (a ``threading.Event``) is set.
    """
    clock = _Clock(deadline, stop)
    for sub, offset, m in _segments(searcher, query):
        skeys = keys.keys(sub)
        idxs = keys.indexes(sub)
        updated = keys.updated(sub) if window else None
        plain = isinstance(m, FlatUnionMatcher) and m.plain_postings()
        if plain:  # words in several fields: term at a time (union.scores), yielded in order
            names = [term_text(leaf.term()) for leaf, _, _ in plain]
            acc, masks, stopped = scores(plain, clock.expired)
            named: dict[int, tuple] = {}  # mask -> its pairs: a few masks for thousands of documents
            for d in sorted(acc):
                k = skeys[d]
                if _kept(k, d, updated, excluded, window):
                    mask = masks[d]
                    terms = named.get(mask)
                    if terms is None:
                        terms = named[mask] = _named(names, mask)
                    yield k, acc[d], offset + d, terms, idxs[d]
            if stopped:
                raise OutOfTime
            continue
        tms = list(m.term_matchers())
        while m.is_active():
            d = m.id()
            clock.tick()
            k = skeys[d]
            if _kept(k, d, updated, excluded, window):
                yield k, m.score(), offset + d, _terms(tms, d), idxs[d]
            m.next()


def _kept(key: str, d: int, updated, excluded: frozenset[str], window) -> bool:
    """True when document ``d`` of session ``key`` passes ``-word`` exclusion and the time
    ``window`` (``updated``: the segment's times, needed only with a window)."""
    return not (excluded and key in excluded) and not (window and not in_window(updated[d], window))


def _named(names: list[tuple[str, str]], mask: int) -> tuple[tuple[str, str], ...]:
    """The ``(field, text)`` pairs of ``names`` whose bit is set in ``mask`` (``union.scores``)."""
    return tuple(name for i, name in enumerate(names) if mask >> i & 1)


class _Clock:
    """Watches ``deadline`` (``time.monotonic()`` seconds, or None) and ``stop`` (a
    ``threading.Event`` set when the caller no longer wants the answer, or None): they are looked
    at once every :data:`DEADLINE_EVERY` matches counted."""

    __slots__ = ("deadline", "stop", "n", "due")

    def __init__(self, deadline: float | None, stop=None) -> None:
        self.deadline, self.stop, self.n, self.due = deadline, stop, 0, DEADLINE_EVERY

    def expired(self, n: int = 1) -> bool:
        """Count ``n`` more matches; True once the deadline has passed or the stop is set."""
        if self.deadline is None and self.stop is None:
            return False
        self.n += n
        if self.n < self.due:
            return False
        self.due = self.n + DEADLINE_EVERY
        return ((self.stop is not None and self.stop.is_set())
                or (self.deadline is not None and time.monotonic() > self.deadline))

    def tick(self) -> None:
        """Count one match; raises :class:`OutOfTime` once the deadline has passed or the stop is set."""
        if (self.deadline is not None or self.stop is not None) and self.expired():
            raise OutOfTime


def _segments(searcher, query):
    """``(leaf searcher, offset, matcher)`` for each segment with a match of ``query``."""
    context = searcher.context(needs_current=True)  # term matchers stay current: matched terms
    for sub, offset in searcher.leaf_searchers():
        m = query.matcher(sub, context)
        if m.is_active():
            yield sub, offset, m


def _terms(tms, d: int) -> tuple[tuple[str, str], ...]:
    """The ``(field, text)`` pairs of the term matchers ``tms`` (a matcher tree's leaves, listed
    once per segment as Whoosh's ``TermsCollector`` does) that are on document ``d``."""
    out = []
    for tm in tms:
        if tm.is_active() and tm.id() == d:
            out.append(term_text(tm.term()))
    return tuple(out)

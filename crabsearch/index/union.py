"""A flat union matcher for a word searched in several fields (``index.querying``).

Whoosh matches ``Or([a, b, c, d, e])`` with a binary tree of ``UnionMatcher`` objects, each leaf
wrapped in a ``WrappingMatcher`` for its boost, and absent terms kept as ``NullMatcher`` leaves:
every ``id()``, ``next()`` and ``score()`` walks the tree, for each matching document of a word
looked up in the five message fields. :class:`FlatOr` matches the same documents with
the same scores from one flat list of (leaf, boost) pairs, about twice as fast
(``bench/results``). It keeps every leaf current, so matched terms can still be read from the
leaves (``term_matchers``), and it skips lazily (``skip_to``) inside an ``And``.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from operator import itemgetter

from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.matching import ListMatcher, mcore
from whoosh.matching.mcore import NoQualityAvailable
from whoosh.matching.wrappers import FilterMatcher, WrappingMatcher
from whoosh.query import Or

from .blocks import block_rest, table_of
from .schema import SHARED_FIELDS
from .whoosh_fixes import leaf_scorer

DONE = sys.maxsize
"""The document number of an exhausted sub-matcher (larger than any real one)."""


class FlatUnionMatcher(mcore.Matcher):
    """Documents matched by any of ``subs`` (Whoosh matchers), in order; a document's score is
    the sum of the scores of the subs on it (each times its boost), times ``boost``.

    The subs' current document numbers are kept in a list (:data:`DONE` once a sub is
    exhausted), so finding the next document is one ``min`` over it. A sub that is itself a
    flat union is merged in (its subs added, boosts multiplied)."""

    def __init__(self, subs, boost: float = 1.0):
        ms, boosts = [], []
        for m in subs:
            b = 1.0
            while type(m) is WrappingMatcher:  # a plain boost wrapper (Term(..., boost=b))
                b *= m.boost
                m = m.child
            if type(m) is FlatUnionMatcher:  # a union of unions is one union (any word of several)
                ms.extend(m._ms)
                boosts.extend(x * b * boost for x in m._boosts)
            elif m.is_active():
                ms.append(m)
                boosts.append(b * boost)
        self._ms, self._boosts = ms, boosts
        self._ids = self._id = None  # read when first asked (a term-at-a-time scan never asks)

    def _current(self) -> int:
        """The current document, reading each sub's first document number when first asked:
        that reads a stored posting list's first block, which a scan of the lists' blocks
        (``plain_postings``) may pass over."""
        if self._ids is None:
            self._ids = [m.id() for m in self._ms]
            self._id = min(self._ids, default=DONE)
        return self._id

    def __repr__(self) -> str:
        return f"FlatUnionMatcher({self._ms!r}, boosts={self._boosts})"

    def is_active(self) -> bool:
        if self._ids is None:  # every sub was active when it was added
            return bool(self._ms)
        return self._id != DONE

    def id(self) -> int:
        return self._current()

    def next(self) -> bool:
        d = self._current()
        if d == DONE:
            raise mcore.ReadTooFar
        ids, ms = self._ids, self._ms
        moved = False
        for i, x in enumerate(ids):
            if x == d:
                m = ms[i]
                if m.next():
                    moved = True
                ids[i] = m.id() if m.is_active() else DONE
        self._id = min(ids)
        return moved

    def skip_to(self, target: int) -> bool:
        if self._current() == DONE:
            raise mcore.ReadTooFar
        ids, ms = self._ids, self._ms
        moved = False
        for i, x in enumerate(ids):
            if x < target:
                m = ms[i]
                if m.skip_to(target):
                    moved = True
                ids[i] = m.id() if m.is_active() else DONE
        self._id = min(ids)
        return moved

    def score(self) -> float:
        d = self._current()
        total = 0.0
        for i, x in enumerate(self._ids):
            if x == d:
                total += self._ms[i].score() * self._boosts[i]
        return total

    def plain_postings(self) -> list[tuple] | None:
        """``[(leaf, boost, deleted document set)]`` when every sub is a plain term's posting
        list on a segment, not yet moved (what :meth:`scores` needs), else None."""
        out = []
        for m, b in zip(self._ms, self._boosts):
            m, deleted = without_deleted(m)
            if type(m) is not W3LeafMatcher and type(m) is not ListMatcher:
                return None
            if getattr(leaf_scorer(m), "_crab_table", None) is None:
                return None
            out.append((m, b, deleted))
        return out

    def _on(self):
        d = self._current()
        return [m for m, x in zip(self._ms, self._ids) if x == d]

    def weight(self) -> float:
        return sum(m.weight() for m in self._on())

    def spans(self):
        return sorted({s for m in self._on() for s in m.spans()})

    def supports(self, astype) -> bool:
        return all(m.supports(astype) for m in self._ms)

    def supports_block_quality(self) -> bool:
        return False  # crabsearch's collector never skips by block quality (filters score 0)

    def children(self):
        return list(self._ms)

    def replace(self, minquality=0):
        return self

    def copy(self):
        out = FlatUnionMatcher([], 1.0)
        out._ms, out._boosts = [m.copy() for m in self._ms], list(self._boosts)
        out._ids, out._id = (None if self._ids is None else list(self._ids)), self._id
        return out

    def depth(self) -> int:
        return 1 + max((m.depth() for m in self._ms), default=0)


def scores(plain: list[tuple], expired=None, floor=None, wanted: set[int] | None = None
           ) -> tuple[dict[int, float], dict[int, int], bool]:
    """Term at a time: ``({docnum: score}, {docnum: bitmask of the subs on it}, stopped)`` for
    every document of the plain posting lists ``plain`` (:meth:`FlatUnionMatcher.plain_postings`),
    read block by block. The same scores as the matcher's ``score()``, added in the same order;
    about 3x cheaper per document than moving the matcher, for a word found in many messages.
    Two dicts of numbers, not a dict of ``[score, mask]`` lists: numbers are not tracked by the
    garbage collector, whose passes over tens of thousands of new lists were the slow runs.
    ``expired(n)`` is asked before each block of ``n`` postings; when it says True the scan
    stops with the scores so far and ``stopped`` True. The leaves are used up.

    ``floor(acc)``, when given, is asked before each posting list read in blocks:
    a score below which no document matters to the caller, given the scores so far (never more
    than the final one would give; ``collect`` passes the score of the segment's ``limit``-th best
    session). A block whose bound is below it is passed over unread, its documents left out
    (block-max pruning: for a common word, most of its postings). A block's bound is Whoosh's
    block quality (the term's BM25F of the block's highest weight and shortest field length, a
    bound because BM25F grows with the weight and falls with the length) times the boost, plus
    the highest possible score of every other list that can be on the same document
    (:func:`_shared_bounds`): the document's whole score cannot exceed it.

    ``wanted``, when given, is the only documents to score (``conjunction``: those holding the
    other words); the blocks without one of them are not read."""
    acc: dict[int, float] = {}
    masks: dict[int, int] = {}
    get = acc.get
    shared = _shared_bounds(plain) if floor is not None else None
    order = None if wanted is None else sorted(wanted)
    for bit, (m, boost, deleted) in enumerate(plain):
        flag = 1 << bit
        scorer = leaf_scorer(m)
        table, memo = scorer._crab_table, scorer._crab_memo
        below = None
        if shared is not None and type(m) is W3LeafMatcher:
            below = (floor(acc) - shared[bit]) / boost / (1 + 1e-9)  # a block's own quality must reach it
        for ids, weights in posting_blocks(m, below, order):
            if expired is not None and expired(len(ids)):
                return acc, masks, True
            if wanted is not None:
                common = wanted.intersection(ids)
                if not common:
                    continue
                by_id = dict(zip(ids, weights))
                ids = sorted(common)
                weights = [by_id[d] for d in ids]
            if not deleted and len(ids) > 1 and acc.keys().isdisjoint(ids):
                # Documents new to the scan (a role field's own, or the first list): the
                # block's scores by map and zip in C, with the same memo and arithmetic.
                acc.update(zip(ids, [sc * boost for sc in memo_scores(scorer, ids, weights)]))
                masks.update(dict.fromkeys(ids, flag))
                continue
            for d, w in zip(ids, weights):
                if deleted and d in deleted:
                    continue
                sc = memo.get((w, table[d]))
                if sc is None:
                    sc = memo[(w, table[d])] = scorer._score(w, scorer.dfl(d))
                old = get(d)
                if old is None:
                    acc[d] = sc * boost
                    masks[d] = flag
                else:
                    acc[d] = old + sc * boost
                    masks[d] |= flag
    return acc, masks, False


def memo_scores(scorer, ids, weights) -> list[float]:
    """The BM25F score (before any boost) of each document of ``ids`` at its weight of
    ``weights`` (parallel sequences), from the scorer's memo by (weight, field-length byte)
    (``whoosh_fixes`` 4): the keys made and looked up in C, a score worked out (and kept) only
    for a key not seen before."""
    if not ids:
        return []
    table, memo = scorer._crab_table, scorer._crab_memo
    keys = list(zip(weights, itemgetter(*ids)(table) if len(ids) > 1 else (table[ids[0]],)))
    scs = list(map(memo.get, keys))
    if None in scs:
        for i, sc in enumerate(scs):
            if sc is None:
                sc = memo.get(keys[i])
                if sc is None:
                    sc = memo[keys[i]] = scorer._score(keys[i][0], scorer.dfl(ids[i]))
                scs[i] = sc
    return scs


def _shared_bounds(plain: list[tuple]) -> list[float] | None:
    """For each leaf of ``plain``, the sum of the highest possible scores (term-level quality
    times boost) of the other leaves that can be on the same document: another word in the same
    field (a prefix's expansions), or a field of ``schema.SHARED_FIELDS``. None when a leaf's
    scorer gives no quality (then nothing is skipped)."""
    fields, tops = [], []
    for m, boost, _ in plain:
        try:
            tops.append(leaf_scorer(m).max_quality() * boost)
        except (AttributeError, NotImplementedError, NoQualityAvailable):
            return None
        fields.append(m.term()[0])
    out = []
    for i, f in enumerate(fields):
        near = SHARED_FIELDS.get(f, frozenset())
        out.append(sum(t for j, (g, t) in enumerate(zip(fields, tops)) if j != i and (g == f or g in near)))
    return out


def posting_blocks(m, below: float | None = None, wanted: list[int] | None = None, values: bool = False):
    """``(ids, weights)`` (``values``: ``(ids, values)``) of each block of a leaf from its
    current posting: a ``W3LeafMatcher``'s blocks as stored, a ``ListMatcher`` (a short list
    kept in its term info, ``index.codec``) as one block. A stored block is passed over without
    being read when its quality (``block_quality()``, before the boost) is below ``below``, or
    when its id range holds none of ``wanted`` (sorted document numbers); a long list's blocks
    are then picked from its block table (``index.blocks``). The leaf is used up."""
    if type(m) is ListMatcher:
        i, ids = m._i, m._ids
        m._i = len(ids)
        if values:
            yield ids[i:], m._values[i:]
        else:
            yield ids[i:], (m._weights[i:] if m._weights is not None else (1.0,) * (len(ids) - i))
        return
    if below is not None or wanted is not None:  # blocks may be passed over: pick them from a table
        table = table_of(m)
        if table is not None:
            yield from table.blocks(m, below, wanted, values)
            return
    low = -1  # the previous block's highest id: a block holds ids above it up to its own highest
    while m.is_active():
        high = m._maxid
        skip = below is not None and m.block_quality() < below
        if not skip and wanted is not None:
            j = bisect_right(wanted, low)
            skip = j == len(wanted) or wanted[j] > high
        if skip:
            low = high
            m._next_block()
            continue
        yield block_rest(m, values)
        low = high
        m._next_block()


def without_deleted(m) -> tuple:
    """``(matcher, deleted document set)`` of a term's matcher: a segment's deleted documents
    are a ``FilterMatcher`` around its posting list (an empty set when it has none)."""
    if type(m) is FilterMatcher and m._exclude:
        return m.child, m._ids
    return m, frozenset()


def term_text(term: tuple) -> tuple[str, str]:
    """A matcher's ``(field, text)`` with the text as ``str``."""
    f, t = term
    return f, t.decode("utf-8", "replace") if isinstance(t, bytes) else t


class FlatOr(Or):
    """``Or`` matched by a :class:`FlatUnionMatcher` (same documents, same scores)."""

    def _matcher(self, subs, searcher, context):
        ms = [q.matcher(searcher, context) for q in subs]
        return FlatUnionMatcher(ms, self.boost)

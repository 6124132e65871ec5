"""A flat union matcher for a word searched in several fields (``index.querying``).

Whoosh matches ``Or([a, b, c, d, e])`` with a binary tree of ``UnionMatcher`` objects, each leaf
wrapped in a ``WrappingMatcher`` for its boost, and absent terms kept as ``NullMatcher`` leaves:
every ``id()``, ``next()`` and ``score()`` walks the tree (about 5 us per matching document for
a word looked up in the five message fields). :class:`FlatOr` matches the same documents with
the same scores from one flat list of (leaf, boost) pairs, about twice as fast
(``bench/results``). It keeps every leaf current, so matched terms can still be read from the
leaves (``term_matchers``), and it skips lazily (``skip_to``) inside an ``And``.
"""

from __future__ import annotations

from whoosh.matching import mcore
from whoosh.matching.wrappers import WrappingMatcher
from whoosh.query import Or


class FlatUnionMatcher(mcore.Matcher):
    """Documents matched by any of ``subs`` (Whoosh matchers), in order; a document's score is
    the sum of the scores of the subs on it (each times its boost), times ``boost``."""

    def __init__(self, subs, boost: float = 1.0):
        pairs = []
        for m in subs:
            b = 1.0
            while type(m) is WrappingMatcher:  # a plain boost wrapper (Term(..., boost=b))
                b *= m.boost
                m = m.child
            if m.is_active():
                pairs.append((m, b))
        self._all = [m for m, _ in pairs]
        self._live = pairs
        self._boost = boost
        self._id = min(m.id() for m, _ in pairs) if pairs else None

    def __repr__(self) -> str:
        return f"FlatUnionMatcher({self._live!r}, boost={self._boost})"

    def _settle(self) -> None:
        live = self._live
        if not all(m.is_active() for m, _ in live):
            live = self._live = [p for p in live if p[0].is_active()]
        self._id = min(m.id() for m, _ in live) if live else None

    def is_active(self) -> bool:
        return self._id is not None

    def id(self) -> int:
        return self._id

    def next(self) -> bool:
        d = self._id
        if d is None:
            raise mcore.ReadTooFar
        moved = False
        for m, _ in self._live:
            if m.id() == d and m.next():
                moved = True
        self._settle()
        return moved

    def skip_to(self, target: int) -> bool:
        if self._id is None:
            raise mcore.ReadTooFar
        if target <= self._id:
            return False
        moved = False
        for m, _ in self._live:
            if m.id() < target and m.skip_to(target):
                moved = True
        self._settle()
        return moved

    def score(self) -> float:
        d = self._id
        total = 0.0
        for m, b in self._live:
            if m.id() == d:
                total += m.score() * b
        return total * self._boost

    def weight(self) -> float:
        d = self._id
        return sum(m.weight() for m, _ in self._live if m.id() == d)

    def spans(self):
        d = self._id
        return sorted({s for m, _ in self._live if m.id() == d for s in m.spans()})

    def supports(self, astype) -> bool:
        return all(m.supports(astype) for m in self._all)

    def supports_block_quality(self) -> bool:
        return False  # crabsearch's collector never skips by block quality (filters score 0)

    def children(self):
        return list(self._all)

    def replace(self, minquality=0):
        return self

    def copy(self):
        return FlatUnionMatcher([m.copy() for m in self._all], self._boost)

    def depth(self) -> int:
        return 1 + max((m.depth() for m in self._all), default=0)


class FlatOr(Or):
    """``Or`` matched by a :class:`FlatUnionMatcher` (same documents, same scores)."""

    def _matcher(self, subs, searcher, context):
        ms = [q.matcher(searcher, context) for q in subs]
        return FlatUnionMatcher(ms, self.boost)

"""Every word of a query in one message (the ladder's ``all`` rung), scored term at a time.

Whoosh matches ``And([word1 in any field, word2 in any field])`` with an intersection matcher
over two flat unions (``index.union``): each document holding the rarer word skips the other
word's five posting lists to it, then scores both unions, about 15 us a candidate in Python
(``hook error`` at 6 GB: 11,000 candidates, 180 ms). :func:`scores` finds the same documents
with the same scores from the posting blocks: the rarest word's postings scored as
``union.scores`` does, then each other word's, in the blocks that hold a candidate only (most
blocks of a common word hold one, but each is read and scored in one pass, with no matcher).

Scores are the intersection matcher's to the bit: each word's score is its flat union's
(``union.scores``, same order of addition), and the words' scores are added in the shape of
Whoosh's matcher tree (``And`` builds a Huffman-like tree by each word's estimated size,
``whoosh.util.make_weighted_tree``; :func:`_tree` builds the same tree from the same sizes).
"""

from __future__ import annotations

from whoosh.matching import IntersectionMatcher
from whoosh.query import And, Term
from whoosh.util import make_weighted_tree

from .filtering import split_filters
from .union import FlatOr, FlatUnionMatcher, term_text
from .union import scores as union_scores


def parts(query) -> tuple[list, list] | None:
    """``(words, filters)`` when ``query`` is an ``And`` of two or more words, each a
    :class:`~crabsearch.index.union.FlatOr` of plain terms (a word, or a ``prefix*``'s words, in
    several fields), alone or ANDed with filter clauses (``filtering.filters``: they score 0).
    None for any other query."""
    query, clauses = split_filters(query)
    if type(query) is not And or len(query.subqueries) < 2 or query.boost != 1.0:
        return None
    words = list(query.subqueries)
    for q in words:
        if type(q) is not FlatOr or len(q.subqueries) < 2 or not all(type(t) is Term for t in q.subqueries):
            return None
    return words, clauses


def scores(searcher, context, words, expired=None, within: set[int] | None = None):
    """Term at a time: ``({docnum: score}, {docnum: bitmask}, names, stopped)`` for every
    document of the leaf searcher ``searcher`` that holds each of ``words`` (:func:`parts`):
    ``names`` are the matched ``(field, text)`` pairs the mask's bits stand for, in the order
    Whoosh's matcher lists its terms. None when a word's matcher is not plain posting lists
    (the caller then walks the matcher). ``expired(n)`` (``collect._Clock``) is asked as
    postings are read; when it says True the scan stops, with no documents, ``stopped`` True
    (a document's score needs every word). ``within``, when given: only these documents are
    scored (the posting blocks without one of them are not read)."""
    reader = searcher.reader()
    plains = []
    for q in words:
        m = q.matcher(searcher, context)
        if not m.is_active():
            return {}, {}, [], False
        plain = m.plain_postings() if type(m) is FlatUnionMatcher else None
        if not plain:
            return None
        plains.append(plain)
    sizes = [q.estimate_size(reader) for q in words]
    tree = _tree(sizes)
    order = _leaves(tree)  # the words in the matcher tree's order (its terms' order)
    starts, names = {}, []
    for i in order:
        starts[i] = len(names)
        names.extend(term_text(m.term()) for m, _, _ in plains[i])
    got: dict[int, tuple[dict, dict]] = {}
    cands = within  # the documents holding every word read so far; the rarest word first
    for i in sorted(range(len(words)), key=sizes.__getitem__):
        acc, masks, stopped = union_scores(plains[i], expired, wanted=cands)
        if stopped:
            return {}, {}, names, True
        got[i] = acc, masks
        cands = set(acc) if cands is None else cands.intersection(acc)
        if not cands:
            return {}, {}, names, False
    total: dict[int, float] = {}
    bits: dict[int, int] = {}
    for d in cands:
        total[d] = _add(tree, got, d)
        mask = 0
        for i in order:
            mask |= got[i][1][d] << starts[i]
        bits[d] = mask
    return total, bits, names, False


class _Word(FlatUnionMatcher):
    """A stand-in for a word's matcher in :func:`_tree` (compares as Whoosh's matchers do: equal
    to any other of its class)."""

    def __init__(self, index: int) -> None:  # noqa: D107 (no matcher state)
        self.index = index


class _Pair(IntersectionMatcher):
    """A stand-in for an intersection node in :func:`_tree`."""

    def __init__(self, a, b) -> None:  # noqa: D107 (no matcher state)
        self.a, self.b = a, b


def _tree(sizes: list[int]):
    """The shape of Whoosh's ``And`` matcher over words of these estimated sizes (``And._matcher``:
    ``make_weighted_tree`` of ``(-size, matcher)``, ties left as Whoosh's matchers compare):
    nested ``_Pair``\\ s over ``_Word``\\ s numbered as the words."""
    return make_weighted_tree(_Pair, [(0 - size, _Word(i)) for i, size in enumerate(sizes)])


def _leaves(node) -> list[int]:
    """The word numbers of a :func:`_tree`, left to right."""
    if type(node) is _Word:
        return [node.index]
    return _leaves(node.a) + _leaves(node.b)


def _add(node, got, d: int) -> float:
    """Document ``d``'s score over the :func:`_tree` ``node``: an intersection node's score is
    its left side's plus its right side's (``AdditiveBiMatcher.score``)."""
    if type(node) is _Word:
        return got[node.index][0][d]
    return _add(node.a, got, d) + _add(node.b, got, d)


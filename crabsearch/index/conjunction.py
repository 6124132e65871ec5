"""Every word of a query in one message (the ladder's ``all`` rung), scored term at a time.

Whoosh matches ``And([word1 in any field, word2 in any field])`` with an intersection matcher
over two flat unions (``index.union``): each document holding the rarer word skips the other
word's five posting lists to it, then scores both unions, all in Python, per
candidate (``hook error`` at 6 GB: 11,000 candidates). :func:`scores` finds the same documents
with the same scores from the posting blocks: the rarest word's postings scored as
``union.scores`` does, then each other word's, in the blocks that hold a candidate only (most
blocks of a common word hold one, but each is read and scored in one pass, with no matcher).

Scores are the intersection matcher's to the bit: each word's score is its flat union's
(``union.scores``, same order of addition), and the words' scores are added in the shape of
Whoosh's matcher tree (``And`` builds a Huffman-like tree by each word's estimated size,
``whoosh.util.make_weighted_tree``; :func:`_tree` builds the same tree from the same sizes).
"""

from __future__ import annotations

import re
from operator import itemgetter

from whoosh.matching import IntersectionMatcher
from whoosh.query import And, Term
from whoosh.util import make_weighted_tree

from .filtering import split_filters
from .schema import POSITION_TAGS, SHARED_FIELDS
from .union import FlatOr, FlatUnionMatcher, memo_scores, term_text
from .union import scores as union_scores
from .whoosh_fixes import leaf_scorer

OTHER_TAG = re.compile(b"[^" + re.escape(POSITION_TAGS["B"]) + b"]")
"""A first byte other than the one of positions stored as one-byte gaps
(``schema.NamePositions``: a posting value starting with it holds ``len(value) - 1``
positions)."""
ONE_LESS = (-1).__add__
"""``n - 1``, mapped in C over the values' lengths: the positions a one-byte-gap value holds."""


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


def scores(searcher, context, words, expired=None, within: set[int] | None = None, pairs: dict | None = None):
    """Term at a time: ``({docnum: score}, {docnum: bitmask}, names, stopped)`` for every
    document of the leaf searcher ``searcher`` that holds each of ``words`` (:func:`parts`):
    ``names`` are the matched ``(field, text)`` pairs the mask's bits stand for, in the order
    Whoosh's matcher lists its terms. None when a word's matcher is not plain posting lists
    (the caller then walks the matcher). ``expired(n)`` (``collect._Clock``) is asked as
    postings are read; when it says True the scan stops, with no documents, ``stopped`` True
    (a document's score needs every word). ``within``, when given: only these documents are
    scored (the posting blocks without one of them are not read).

    A field that no other field of the query shares a document with (``schema.SHARED_FIELDS``:
    a message's text is in one field) holds a document of the answer only when every word is in
    it: a field where a word is absent is not read at all, and for two words, a field whose
    postings of both the phrase rung has read (``pairs``, ``phrases.scores``) is scored from
    them (for ``token refresh`` at 6 GB, 28,000 messages read once instead of twice)."""
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
    got: dict[int, tuple[dict, dict]] = {i: ({}, {}) for i in range(len(words))}
    read, done = _split(words, plains, pairs)
    cands: set[int] = set()
    for fieldname, by_word in done.items():
        cands |= _from_pairs(searcher, plains, fieldname, by_word, got, within)
    if all(read):
        found = within  # the documents holding every word read so far; the rarest word first
        for i in sorted(range(len(words)), key=sizes.__getitem__):
            acc, masks, stopped = union_scores([plains[i][j] for j in read[i]], expired, wanted=found)
            if stopped:
                return {}, {}, names, True
            got[i][0].update(acc)
            if read[i] == list(range(len(plains[i]))):  # every leaf read: the masks' bits as they are
                got[i][1].update(masks)
            else:
                bits = {mask: _bits(mask, read[i]) for mask in set(masks.values())}
                got[i][1].update(zip(masks.keys(), map(bits.__getitem__, masks.values())))
            found = set(acc) if found is None else found.intersection(acc)
            if not found:
                break
        cands |= found or set()
    if len(words) == 2:  # one intersection node: the two words' scores added (in either order, the same)
        (a, a_bits), (b, b_bits) = got[0], got[1]
        sa, sb = starts[0], starts[1]
        total = {d: a[d] + b[d] for d in cands}
        out = {d: a_bits[d] << sa | b_bits[d] << sb for d in cands}
        return total, out, names, False
    total: dict[int, float] = {}
    out: dict[int, int] = {}
    for d in cands:
        total[d] = _add(tree, got, d)
        mask = 0
        for i in order:
            mask |= got[i][1][d] << starts[i]
        out[d] = mask
    return total, out, names, False


def _split(words, plains, pairs) -> tuple[list[list[int]], dict[str, dict]]:
    """``(read, done)``: per word, the indexes of its leaves in ``plains`` to read from their
    posting lists, and ``{field: {word: {docnum: positions}}}`` for the fields taken from the
    phrase rung's ``pairs`` (:func:`scores`). A field no other field of the query can share a
    document with is left out where a word has no leaf in it."""
    fields = [[m.term()[0] for m, _, _ in plain] for plain in plains]
    everywhere = set.intersection(*map(set, fields))
    anywhere = set().union(*fields)
    texts = [{t.text for t in q.subqueries} for q in words]
    pair = frozenset(next(iter(t)) for t in texts) if all(len(t) == 1 for t in texts) else frozenset()

    def shared(f: str) -> bool:  # another field of the query can hold words of f's documents
        return bool(SHARED_FIELDS.get(f, frozenset()) & anywhere)

    done = {}
    if pairs and len(words) == 2 and len(pair) == 2:
        done = {f: pairs[(f, pair)] for f in everywhere if (f, pair) in pairs and not shared(f)}
    read = [[j for j, f in enumerate(fs) if f not in done and (f in everywhere or shared(f))] for fs in fields]
    return read, done


def _from_pairs(searcher, plains, fieldname: str, by_word: dict, got: dict, within: set[int] | None) -> set[int]:
    """The documents with both words in ``fieldname``, from the phrase rung's postings
    ``by_word`` (:func:`_split`), each word's score and mask bit added to ``got`` (``{word
    index: (scores, masks)}``) as ``union.scores`` gives them: the word's BM25F at its weight
    (its number of positions, as the format stores it) times the leaf's boost."""
    leaves = [next((j, m, boost) for j, (m, boost, _) in enumerate(plain) if m.term()[0] == fieldname)
              for plain in plains]
    texts = [term_text(m.term())[1] for _, m, _ in leaves]
    frequency = searcher.schema[fieldname].format.decode_frequency
    a, b = by_word[texts[0]], by_word[texts[1]]
    # both words' documents (of ``within``: only its documents looked up)
    common = a.keys() & b.keys() if within is None else set(filter(b.__contains__, filter(a.__contains__, within)))
    docs = list(common)
    for i, (j, m, boost) in enumerate(leaves):
        vals = list(map(by_word[texts[i]].__getitem__, docs))
        # weights in C: one-byte gaps hold len - 1 positions; the other encodings (a gap over
        # 255) are decoded
        weights = list(map(ONE_LESS, map(len, vals)))
        for n in _other_tags(vals):
            weights[n] = frequency(vals[n])
        acc, masks = got[i]
        acc.update(zip(docs, [sc * boost for sc in memo_scores(leaf_scorer(m), docs, weights)]))
        masks.update(dict.fromkeys(docs, 1 << j))
    return common


def _other_tags(vals: list[bytes]) -> list[int]:
    """The indexes of the posting values in ``vals`` not stored as one-byte gaps."""
    tags = bytes(map(itemgetter(0), vals))
    return [m.start() for m in OTHER_TAG.finditer(tags)]


def _bits(mask: int, index: list[int]) -> int:
    """``mask`` over a word's leaves ``index`` (positions in its full list) as bits of the full list."""
    out = 0
    for k, j in enumerate(index):
        if mask >> k & 1:
            out |= 1 << j
    return out


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


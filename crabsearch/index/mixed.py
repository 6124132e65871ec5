"""A union of words and exact phrases (an identifier or path as one word, or as its parts in a
row), scored term at a time.

An identifier typed whole is looked up as its own token and as the phrase of its parts
(``getUserById`` is ``getuserbyid`` or ``"get user by id"``; ``querying.Compiler``): the
``all`` rung's message query and every rung's title list are a :class:`~crabsearch.index.union.FlatOr`
of terms and phrases. Whoosh's matcher walks the phrase's span matcher over every message
holding all its parts (``get``, ``user``, ``by`` and ``id`` are common words). :func:`scores`
reads each word the way a word alone is read (``union.scores``) and each phrase the way a phrase
alone is (``phrases.scores``), then adds them per document in the matcher's order, so the scores
are the matcher's to the bit (``FlatUnionMatcher.score``: each leaf's score times its boost,
added in the union's order).
A document's matched terms are those of the leaves that match it: the union's matcher also
listed a phrase's word whose own matcher had stopped on the document after the phrase ran out
(``tests/test_scans.py`` checks both against each leaf's matcher walked alone).
"""

from __future__ import annotations

from whoosh.query import Phrase, Term

from . import phrases
from .filtering import split_filters
from .phrases import TextPhrase
from .union import FlatOr, FlatUnionMatcher, term_text
from .union import scores as union_scores


def parts(query, schema) -> tuple[list[tuple], list] | None:
    """``(leaves, filters)`` when ``query`` is a :class:`FlatOr` (alone or ANDed with filter
    clauses, ``filtering.filters``) whose leaves, once nested unions are flattened as
    ``FlatUnionMatcher`` flattens them, are words and exact phrases (slop 1) on fields with
    positions, at least one of each: ``("t", field, text, boost)`` and ``("p", field, words,
    boost, text)`` (``text``: a :class:`~crabsearch.index.phrases.TextPhrase`), in the union's
    order, each with the boost the matcher gives it. None for any other query."""
    query, clauses = split_filters(query)
    if type(query) is not FlatOr:
        return None
    leaves = []
    for q, boost in _flat(query):
        if type(q) is Term:
            leaves.append(("t", q.fieldname, q.text, boost))
        elif type(q) in (Phrase, TextPhrase) and q.slop == 1 and len(q.words) >= 2:
            field = schema[q.fieldname] if q.fieldname in schema else None
            if field is None or not field.format or not field.format.supports("positions"):
                return None
            leaves.append(("p", q.fieldname, list(q.words), boost, type(q) is TextPhrase))
        else:
            return None
    kinds = {leaf[0] for leaf in leaves}
    return (leaves, clauses) if kinds == {"t", "p"} else None


def _flat(query: FlatOr) -> list[tuple]:
    """``[(leaf query, boost)]`` of a :class:`FlatOr` in ``FlatUnionMatcher``'s order, each
    boost multiplied as it multiplies them (a leaf's own boost, its wrapper's, times the
    union's; a nested union's boosts times 1.0 times the outer union's). Whoosh matches a union
    of one query as that query, its own boost unused."""
    if len(query.subqueries) == 1:
        q = query.subqueries[0]
        return _flat(q) if type(q) is FlatOr else [(q, 1.0 * q.boost)]
    out = []
    for q in query.subqueries:
        if type(q) is FlatOr:
            out.extend((leaf, x * 1.0 * query.boost) for leaf, x in _flat(q))
        else:
            out.append((q, (1.0 * q.boost) * query.boost))
    return out


def scores(searcher, context, leaves, expired=None, within: set[int] | None = None):
    """Term at a time: ``({docnum: score}, {docnum: bitmask}, names, stopped)`` for every
    document of the leaf searcher ``searcher`` that one of ``leaves`` (:func:`parts`) matches;
    ``names`` are the ``(field, text)`` pairs the mask's bits stand for (a phrase's words in
    order), as the matcher lists its terms. A document's score is each matching leaf's added
    in the leaves' order. None when a word's postings are not plain (the caller then walks the
    matcher). ``expired`` and ``within`` as in ``phrases.scores``."""
    acc: dict[int, float] = {}
    masks: dict[int, int] = {}
    names: list[tuple[str, str]] = []
    for leaf in leaves:
        shift = len(names)
        if leaf[0] == "t":
            _, field, text, boost = leaf
            m = Term(field, text).matcher(searcher, context)
            if not m.is_active():
                names.append((field, text))
                continue
            plain = FlatUnionMatcher([m]).plain_postings()  # the word's posting list, as union.scores reads it
            if not plain:
                return None
            [(m, _, deleted)] = plain
            names.append(term_text(m.term()))
            part, bits, stopped = union_scores([(m, boost, deleted)], expired, wanted=within)
        else:
            _, field, words, boost, text = leaf
            part, bits, more, stopped = phrases.scores(searcher, context, [(field, words, boost, text)], expired,
                                                       within)
            names.extend(more)
        if stopped:
            return acc, masks, names, True
        for d, v in part.items():
            old = acc.get(d)
            if old is None:
                acc[d], masks[d] = v, bits[d] << shift
            else:
                acc[d], masks[d] = old + v, masks[d] | bits[d] << shift
    return acc, masks, names, False

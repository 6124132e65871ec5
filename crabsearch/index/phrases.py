"""Phrases of words typed apart: the words as running text, not glued inside one name.

A phrase of several typed words (``Minsky CLI with Bun``) also occurs inside paths and
identifiers, whose parts are indexed as adjacent words so that ``resolve dirs`` finds
``resolve_dirs`` (``index.tokenizer``). A file name that spells the phrase
(``.specstory/history/2025-04-26_20-30-setting-up-minsky-cli-with-bun.md``) is one token of its
message: a reference to something of that name, not a message about it. Counted as the phrase,
every message that quoted the file (SpecStory histories link each other's files, a changelog
lists them) outranked the session whose title the words are (``bench/relevance_real``'s
``title`` queries), and an identifier named after a few words outranks the discussion of them.

:class:`TextPhrase` (the ``phrase`` rung of words typed apart, ``querying.Compiler.rungs``)
counts only the spans with a word of running text: the index marks each name's first and last
leaf with ``tokenizer.NAME_MARK`` (a plain hyphenated word, ``real-time``, is running text and
has no mark). A span whose every word is a name's part does not count, in one name or across
names side by side (``set_token refreshAccessToken`` holds ``token refresh`` in names' parts
only: not the exact phrase); ``access_token refresh`` does. A message holding the words only
inside a name still holds every word, and is found by the ``all`` rung below. Quoted phrases and
an identifier's own parts (``get user by id`` for ``getUserById``) stay Whoosh's ``Phrase``, which
matches inside names.

:func:`scores` finds a rung's phrases term at a time (``collect.best_per_session`` uses it for a
query that is only exact phrases, one per field): the words' posting blocks are read rarest word
first, a later word's only where a message is still in the running; positions are decoded for
those messages alone (a name's marks only for the few with a span). Same documents and scores as the matchers
above (Whoosh's span matcher moved document by document through an intersection of the words'
matchers: for ``token refresh`` at 6 GB, 28,000 messages with both words for 90 phrases).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from whoosh import matching
from whoosh.query import Phrase, Term
from whoosh.query.spans import SpanNear2

from .token_pattern import in_no_name
from .tokenizer import NAME_MARK
from .filtering import split_filters
from .schema import POSITION_TAGS, SHARED_FIELDS
from .union import FlatOr, posting_blocks, without_deleted
from .whoosh_fixes import leaf_scorer

BYTE_GAPS = POSITION_TAGS["B"]
"""The tag of a posting's positions stored as one-byte gaps (``schema.NamePositions``), the
common case: decoded here without a call."""
BYTE_GAPS_TAG = BYTE_GAPS[0]
""":data:`BYTE_GAPS` as the first byte's number: ``value[0]``."""


def inside_name(marks: list[int], start: int, end: int) -> bool:
    """True when each of the positions ``start`` to ``end`` lies within a name (one name, or
    names side by side): ``marks`` are the sorted positions of a document's
    :data:`~crabsearch.index.tokenizer.NAME_MARK`, each name's first and last leaf in turn (names
    never overlap, and a name has two leaves or more, so they pair up: ``[first0, last0,
    first1, last1, ...]``)."""
    n = len(marks)
    for p in range(start, end + 1):
        i = bisect_right(marks, p) - 1  # the last mark at or before p
        if i < 0 or (p > marks[i + 1] if i % 2 == 0 and i + 1 < n else i % 2 == 0 or p != marks[i]):
            return False
    return True


class TextSpansMatcher(SpanNear2.SpanNear2Matcher):
    """An exact phrase's matcher (``SpanNear2``, slop 1) that drops the spans lying within names
    (:func:`inside_name`), read from ``names`` (the mark's postings in the same field and segment, or None when
    the segment has none); a document left without spans does not match. Scores as a phrase
    does (``whoosh_fixes`` 9) over the spans kept."""

    def __init__(self, ms, names, slop=1, ordered=True, mindist=1):
        self.names = names
        super().__init__(ms, slop=slop, ordered=ordered, mindist=mindist)

    def copy(self):
        """An independent copy (its own word and mark matchers)."""
        return self.__class__([m.copy() for m in self.ms], self.names.copy() if self.names is not None else None,
                              slop=self.slop, ordered=self.ordered, mindist=self.mindist)

    def _get_spans(self):
        spans = super()._get_spans()
        names = self.names
        if not spans or names is None or not names.is_active():
            return spans
        d = self.child.id()
        if names.id() < d:
            names.skip_to(d)
            if not names.is_active():
                return spans
        if names.id() != d:
            return spans
        marks = names.value_as("positions")
        return [s for s in spans if not inside_name(marks, s.start, s.end)]


class TextPhrase(Phrase):
    """``Phrase`` (exact, slop 1) over the words as running text: a span whose every word is a
    name's part does not count (see the module docs)."""

    def matcher(self, searcher, context=None):
        """Whoosh's ``Phrase.matcher`` with a :class:`TextSpansMatcher`."""
        fieldname = self.fieldname
        if fieldname not in searcher.schema:
            return matching.NullMatcher()
        field = searcher.schema[fieldname]
        reader = searcher.reader()
        ms = []
        for word in self.words:
            try:
                word = field.to_bytes(word)
            except ValueError:
                return matching.NullMatcher()
            if (fieldname, word) not in reader:
                return matching.NullMatcher()
            ms.append(Term(fieldname, word).matcher(searcher, context))
        mark = field.to_bytes(NAME_MARK)
        names = reader.postings(fieldname, mark) if (fieldname, mark) in reader else None
        m = TextSpansMatcher(ms, names)
        if self.boost != 1.0:
            m = matching.WrappingMatcher(m, boost=self.boost)
        return m


def parts(query, schema) -> tuple[list[tuple[str, list[str], float, bool]], list] | None:
    """``(phrases, filters)`` when ``query`` is exact phrases (slop 1) in several fields, alone or
    ANDed with filter clauses (``filtering.filters``: they score 0): the phrases as ``(field,
    words, boost, text)`` (``text``: a :class:`TextPhrase`), in the query's order. None for any
    other query, or a phrase on a field without positions (Whoosh's own error is kept)."""
    query, clauses = split_filters(query)
    outer = query.boost if type(query) is FlatOr else 1.0
    subs = query.subqueries if type(query) is FlatOr else [query]
    out = []
    for q in subs:
        if type(q) not in (Phrase, TextPhrase) or q.slop != 1 or len(q.words) < 2:
            return None
        field = schema[q.fieldname] if q.fieldname in schema else None
        if field is None or not field.format or not field.format.supports("positions"):
            return None
        out.append((q.fieldname, list(q.words), q.boost * outer, type(q) is TextPhrase))
    return (out, clauses) if out else None


def scores(searcher, context, phrases, expired=None, within: set[int] | None = None, floor=None,
           pairs: dict | None = None) -> tuple[dict[int, float], dict[int, int], list, bool]:
    """Term at a time: ``({docnum: score}, {docnum: bitmask}, names, stopped)`` for every
    document of the leaf searcher ``searcher`` where one of ``phrases`` (:func:`parts`) occurs;
    ``names`` are the ``(field, word)`` of all the phrases' words in order (as the matchers list
    their terms), and a document's mask has the bits of its phrase's words. Scores are the matchers' to the bit: per phrase, each
    word's BM25F with the phrase's frequency (``whoosh_fixes`` 9) times the phrase's boost,
    added over the phrases in order. ``expired(n)`` (``collect._Clock``) is asked as postings
    and documents are read; when it says True the scan stops with what it has, ``stopped``
    True. ``within``, when given: only these documents are scored (the posting blocks without
    one of them are not read).

    ``floor(acc)``, when given (as in ``union.scores``): a score below which no document
    matters, asked before each phrase. The rarest word's posting blocks whose bound is below it
    are not read, nor the other words' blocks for their documents. A block's bound: a phrase
    occurs in a document at most as often as its rarest word, so each word's BM25F at the
    block's highest weight and shortest length, added and boosted (BM25F is the word's idf times
    one function of weight and length in a field, so that is the block's quality times the
    words' idf over the rarest word's). Only for a phrase no other phrase's field can share a
    document with (``schema.SHARED_FIELDS``: a message's text is in one field).

    ``pairs``, when given (a dict kept for one search and one segment): each phrase read whole
    (no ``within``, no floor) leaves there the postings of its two rarest words,
    ``{(field, frozenset({a, b})): {a: {docnum: positions}, b: {...}}}``, read as far as every
    document with both words in the field (the two dicts' common keys). The ``all`` rung's scan
    of the same two words (``conjunction.scores``) takes them from there instead of reading the
    lists again."""
    acc: dict[int, float] = {}
    masks: dict[int, int] = {}
    names = [(field, word) for field, words, _, _ in phrases for word in words]
    bit = 0
    for field, words, boost, text in phrases:
        flag = ((1 << len(words)) - 1) << bit
        bit += len(words)
        near = SHARED_FIELDS.get(field, frozenset()) | {field}
        alone = sum(f in near for f, _, _, _ in phrases) == 1
        at_least = floor(acc) if floor is not None and alone else None
        if _field_scores(searcher, context, field, words, boost, text, acc, masks, flag, expired, within, at_least,
                         pairs):
            return acc, masks, names, True
    return acc, masks, names, False


def _field_scores(searcher, context, field: str, words: list[str], boost: float, text: bool,
                  acc: dict, masks: dict, flag: int, expired, within: set[int] | None = None,
                  at_least: float | None = None, pairs: dict | None = None) -> bool:
    """:func:`scores` for one phrase; True when ``expired`` said stop. ``at_least``: the floor
    (:func:`scores`) for this phrase's documents; ``pairs``: as in :func:`scores`."""
    reader = searcher.reader()
    fobj = searcher.schema[field]
    leaves: dict[str, tuple] = {}
    freqs: dict[str, int] = {}
    for word in dict.fromkeys(words):
        try:
            raw = fobj.to_bytes(word)
        except ValueError:
            return False
        if (field, raw) not in reader:
            return False
        leaves[word] = without_deleted(Term(field, raw).matcher(searcher, context))
        freqs[word] = reader.doc_frequency(field, raw)
    decode = fobj.format.decode_positions

    def starts_of(value, shifts: list[int], within: set[int] | None = None) -> set[int]:
        """The phrase starts a word's positions allow (of ``within``, when given): ``p - i`` for
        each of its places ``i`` in the phrase (a repeated word must be at every one). One-byte
        gaps decoded inline; a word in one place is read once, into no set of its own."""
        found = accumulate(value[1:]) if value[:1] == BYTE_GAPS else decode(value)
        if len(shifts) > 1:
            found = list(found)
        out = within
        for i in shifts:
            got = map((-i).__add__, found) if i else found
            out = set(got) if out is None else out.intersection(got)
        return out

    # Words rarest first. The rarest's postings are only listed; from the second on, only the
    # blocks holding a document still in the running are read, and a document stays only while
    # some start has every word read so far in its place (for `the database timeout`, the
    # blocks of `the` are read for the few messages where `database timeout` is).
    order = sorted(leaves, key=freqs.__getitem__)
    places = {w: [i for i, x in enumerate(words) if x == w] for w in order}
    first, deleted = leaves[order[0]]
    scorers = [leaf_scorer(leaves[w][0]) for w in words]
    table = scorers[0]._crab_table
    below = None
    if at_least:  # the rarest word's blocks that cannot reach the floor are passed over
        unit = leaf_scorer(first)._score(1.0, 1.0)
        if unit > 0:
            ratio = sum(s._score(1.0, 1.0) for s in scorers) / unit
            below = at_least / boost / ratio / (1 + 1e-9)
    memo: dict = {}

    def score_at(n: int, d: int) -> float:
        """The phrase's score (before its boost) in document ``d`` where it occurs ``n`` times."""
        key = (n, table[d]) if table is not None and d < len(table) else None
        sc = memo.get(key) if key is not None else None
        if sc is None:
            sc = 0
            for s in scorers:  # a word's score at frequency n: its memo's (whoosh_fixes 4), kept across segments
                one = s._crab_memo.get(key) if key is not None else None
                if one is None:
                    one = s._score(n, s.dfl(d))
                    if key is not None:
                        s._crab_memo[key] = one
                sc += one
            if key is not None:
                memo[key] = sc
        return sc

    # A document below the floor even if the phrase were there as often as its rarer word of the
    # first two is not looked into (their positions are not decoded).
    cut = at_least / boost / (1 + 1e-9) if below is not None else None
    frequency = fobj.format.decode_frequency
    pending: dict = {}
    for ids, vals in posting_blocks(first, below, values=True, wanted=None if within is None else sorted(within)):
        if expired is not None and expired(len(ids)):
            return True
        if within is None:
            pending.update(zip(ids, vals))
        else:
            pending.update((d, v) for d, v in zip(ids, vals) if d in within)
    if deleted:
        pending = {d: v for d, v in pending.items() if d not in deleted}
    if len(order) == 1:
        starts = {d: s for d, v in pending.items() if (s := starts_of(v, places[order[0]]))}
    else:
        starts = None
    for word in order[1:]:
        wanted = pending if starts is None else starts
        sorted_wanted = sorted(wanted)
        got: dict = {}
        for ids, vals in posting_blocks(leaves[word][0], wanted=sorted_wanted, values=True):
            if expired is not None and expired(len(ids)):
                return True
            if not wanted.keys().isdisjoint(ids):
                got.update(zip(ids, vals))
        if pairs is not None and starts is None and cut is None and within is None:
            pairs[(field, frozenset((order[0], word)))] = {order[0]: pending, word: got}
        narrowed = {}
        # The first two words read, each in one place in the phrase: a document's starts are
        # the first word's positions with the second's at the shift after (one subtraction when
        # each is there once, as in most messages with both; sets in C otherwise).
        shift = back = lead = None
        if starts is None and len(places[order[0]]) == 1 and len(places[word]) == 1:
            lead = places[order[0]][0]
            shift = places[word][0] - lead
            back = (-shift).__add__
        for n, d in enumerate(sorted(wanted.keys() & got.keys())):  # the documents with this word too
            if expired is not None and not n & 255 and expired(256):
                return True
            v = got[d]
            if cut is not None and starts is None:
                f = pending[d]
                k = min(len(f) - 1 if f[0] == BYTE_GAPS_TAG else frequency(f),
                        len(v) - 1 if v[0] == BYTE_GAPS_TAG else frequency(v))
                if score_at(k, d) < cut:
                    continue
            if shift is not None:
                f = pending[d]
                if f[0] == BYTE_GAPS_TAG and v[0] == BYTE_GAPS_TAG:
                    if len(f) == 2 and len(v) == 2:
                        if v[1] - f[1] == shift:
                            narrowed[d] = {f[1] - lead}
                        continue
                    s = set(accumulate(f[1:])).intersection(map(back, accumulate(v[1:])))
                else:
                    s = set(decode(f)).intersection(map(back, decode(v)))
                if s:
                    narrowed[d] = {p - lead for p in s} if lead else s
                continue
            s = starts_of(pending[d], places[order[0]]) if starts is None else starts[d]
            s = starts_of(v, places[word], s)
            if s:
                narrowed[d] = s
        starts = narrowed
        if not starts:
            return False
    last = len(words) - 1
    spans = [(d, sorted(s)) for d, s in sorted(starts.items())]
    if text and spans and not any(map(in_no_name, words)):  # a CJK word: within no name
        spans = _outside_names(reader, field, spans, last, decode)
    for d, starts in spans:
        sc = score_at(len(starts), d)
        old = acc.get(d)
        if old is None:
            acc[d], masks[d] = sc * boost, flag
        else:
            acc[d], masks[d] = old + sc * boost, masks[d] | flag
    return False


def _outside_names(reader, field: str, spans, last: int, decode):
    """``spans`` (``[(docnum, sorted starts)]``) without the starts whose span lies within
    names (:func:`inside_name`; the field's :data:`NAME_MARK` postings, read only in the blocks
    of these documents); documents left with none are dropped."""
    mark = field, reader.schema[field].to_bytes(NAME_MARK)
    if mark not in reader:
        return spans
    marks: dict = {}
    for ids, vals in posting_blocks(without_deleted(reader.postings(*mark))[0], wanted=[d for d, _ in spans], values=True):
        marks.update(zip(ids, vals))
    out = []
    for d, starts in spans:
        if d in marks:
            where = decode(marks[d])
            starts = [p for p in starts if not inside_name(where, p, p + last)]
        if starts:
            out.append((d, starts))
    return out


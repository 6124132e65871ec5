"""Fourteen fixes to the pinned whoosh-reloaded 2.7.5 (no longer maintained), measured on the
bench corpora; :func:`install` puts them in place (``crabsearch.index.store`` calls it), after
checking that each target still exists with the signature it was written for and that the
private attributes the fixes read are still the class's (:func:`check`): another Whoosh stops
crabsearch with :class:`WhooshMismatch` naming the version, instead of fixes bound to the wrong code.

1. **Zero-copy segments.** Whoosh reads segments through mmap but wraps each mapped sub-file in
   a ``BytesIO``, which copies it: opening a reader copied every segment's postings and term
   index into memory (470 MB for a 1 GB corpus's index, and twice the time to open). The
   wrapper is replaced by one that reads the map in place; searches keep mmap's speed (plain
   file reads were 1.5x slower).
2. **Field lengths from one read.** ``doc_field_length`` (BM25 needs it for every scored
   document, and the writer for every posting it writes) read one byte from the column file
   per call; the whole length column of a segment (one byte per document) is now read once.
3. **Missing length columns remembered.** For a field with no length column in a segment,
   Whoosh stat'ed the column file on every call (165k stats while indexing 100 MB).
4. **BM25F scores memoized.** A document's BM25F score for a term depends only on the term's
   weight in it and its field length, which Whoosh stores as one byte: the scorer now remembers
   the score per (weight, length byte) and looks the byte up in the cached length column, where
   each score went through five calls and the formula (a quarter of a common word's search).
   Same numbers, bit for bit.
5. **Exact phrases by position sets.** A phrase (``Phrase``, slop 1) is a ``SpanNear2`` over
   the intersection of its words; for every document holding all the words Whoosh built span
   objects and walked them with bisection. The same answer (does word i sit at p + i for some
   p?) now comes from Python set intersections over the decoded positions, with the same
   spans returned (2-3x cheaper per candidate document).
6. **Skipping inside a posting block by bisection.** ``W3LeafMatcher.skip_to`` stepped through
   a block one posting at a time (up to 128 ``next()`` calls) to reach a document; an ``And``
   of a common and a rarer word (``the database``, a phrase's words) skips that way all along.
7. **Average field length over the documents that have the field.** BM25F normalizes a
   field's length by the field's average length, which Whoosh took over *every* document of
   the index. crabsearch's fields are sparse (a message has one role field; only the session
   documents, one per session, have a title or a summary), so a title of six words looked fifty
   times longer than average and scored almost nothing (a title holding the query's words
   added next to nothing), and every message field looked several times longer than it
   is. The average is now the field's total length over the documents with a non-zero length
   for it (counted once per searcher from the cached length columns), as BM25F defines it.
8. **One idf per word, not per field.** Whoosh computed a word's idf per field: ``log(N / (df +
   1)) + 1`` with ``N`` every document of the index and ``df`` the documents holding the word *in
   that field*. In a sparse field every word looks rare: a word in the one compaction summary of
   an index had the idf of a word found once, so a summary-only session outscored every message
   about the word (and a title word scored far above the same word in a message). BM25F takes the
   idf of the word over the document, whichever field holds it: ``df`` is now the documents
   holding the word in any scored (text) field (the sum of the fields' frequencies; crabsearch's
   documents have one role field each), the same for every field; field boosts alone weight
   the fields.
9. **A phrase scores by how often the phrase occurs.** Whoosh scored an exact phrase as the sum
   of its words' BM25F scores with each word's own frequency in the document, so a message that
   repeats the phrase's common words (and holds the phrase once, in a file name) outscored a
   title that is the phrase. Each word now counts with the phrase's frequency (its
   spans in the document), as Lucene scores a phrase (a title query such as ``Session Start Error
   for Task 008`` found its session second without it).
10. **A block's document numbers decoded in C.** A posting block stores its document numbers as
   gaps; Whoosh added them up with a Python generator (``numlists.delta_decode``), one resumed
   frame per posting: a third of reading a common word's blocks. ``itertools.accumulate`` gives
   the same numbers.
11. **A term's scorer made once per segment.** Every term matcher got a new BM25F scorer (its
   idf, average length, highest weight and shortest length looked up), though a search
   asks for the same word in the same field and segment at each rung and scan (a typed query at
   1 GB: 613 term matchers, 405 of them distinct). A segment's searcher now keeps its scorers
   (:data:`MEMO_SCORERS` at most; a scorer holds no matcher state: it is given the matcher).
12. **A field looked up by name in one step.** ``Schema.__contains__`` went through
   ``__getitem__`` and a ``try``, and every term lookup, matcher and stored-fields read asks the
   schema two to four times (a typed query at 1 GB: ~10,000 lookups). A declared field is now
   answered from the schema's dict; any other name goes the original way (dynamic fields).
13. **A term's matcher in a few steps.** ``Term.matcher`` on a segment went through the schema
   (three times), the reader's ``__contains__`` and ``postings``, each converting the text to
   bytes again, then read and unpickled the list's first block header, and a typed two-word
   query at 1 GB makes hundreds of them (each word in five fields and 16
   segments, again at each rung and scan). On a segment of the compact codec
   (``index.codec``) it now looks the word up once, takes the segment's scorer (fix 11) and
   copies a matcher kept untouched per word (``CompactTermsReader.fresh_matcher``); the same
   matcher (class, state, scorer) as before. Any other case goes the original way.
14. **The table of contents read again when a commit replaced it.** Whoosh finds an index's
   latest table of contents by listing its files, then opens it; a commit in another process
   between the two writes the next one and deletes it (``FileNotFoundError: _MAIN_1.toc``: a
   CLI search failed that way while indexers ran, ``tests/test_concurrency.py``). Whoosh's
   ``reader()`` retries that, but every other caller (the schema, the segment list, a
   document count) did not: ``FileIndex._read_toc`` now lists and reads again, as ``reader()``
   does (10 times, 50 ms apart), before it raises.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate
from math import log
import time as _time

import whoosh.filedb.compound as _compound
from whoosh import fields as _fields
from whoosh import scoring as _scoring
from whoosh import index as _index
from whoosh import matching as _matching
from whoosh import reading as _reading
from whoosh import searching as _searching
from whoosh.query import terms as _terms
from whoosh.query.spans import Span, SpanNear2
from whoosh.codec import whoosh3 as _w3
from whoosh.matching.mcore import ReadTooFar
from whoosh.matching.wrappers import FilterMatcher
from whoosh.filedb.structfile import BufferFile

from . import blocks as _blocks


class ViewFile:
    """``read``/``readline``/``seek``/``tell`` over a memoryview, without copying it."""

    __slots__ = ("_buf", "_pos", "_len")

    def __init__(self, buf) -> None:
        self._buf, self._pos, self._len = buf, 0, len(buf)

    def read(self, n: int | None = -1) -> bytes:
        """Up to ``n`` bytes (all that is left when ``n`` is None or negative)."""
        start = self._pos
        end = self._len if n is None or n < 0 else min(self._len, start + n)
        self._pos = end
        return bytes(self._buf[start:end])

    def readline(self, limit: int | None = -1) -> bytes:
        """Bytes up to and including the next newline (pickle needs it; rarely called)."""
        start = self._pos
        end = self._len if limit is None or limit < 0 else min(self._len, start + limit)
        found = bytes(self._buf[start:end]).find(b"\n")
        self._pos = end if found < 0 else start + found + 1
        return bytes(self._buf[start:self._pos])

    def seek(self, pos: int, whence: int = 0) -> int:
        """Move to ``pos`` (from the start, the current position or the end)."""
        base = 0 if whence == 0 else self._pos if whence == 1 else self._len
        self._pos = base + pos
        return self._pos

    def tell(self) -> int:
        """The current position."""
        return self._pos

    def close(self) -> None:
        """Nothing to release: the map belongs to the segment's storage."""

    def flush(self) -> None:
        """Read-only: nothing to flush."""


class ViewBufferFile(BufferFile):
    """Whoosh's ``BufferFile`` (``get``/``get_array`` slice the buffer) with a :class:`ViewFile`
    for sequential reads instead of a ``BytesIO`` copy."""

    def __init__(self, buf, name=None, onclose=None) -> None:
        super().__init__(b"", name=name, onclose=onclose)
        self._buf = buf
        self.file = ViewFile(buf)


def length_table(perdoc, fieldname: str) -> bytes | None:
    """The encoded length byte of ``fieldname`` per document of a segment (``W3PerDocReader``),
    read once and kept on the reader; None when the segment has no length column for it."""
    tables = perdoc.__dict__.setdefault("_crab_lengths", {})
    table = tables.get(fieldname, False)
    if table is False:
        reader = perdoc._cached_reader(_w3._lenfield(fieldname), _w3.LENGTHS_COLUMN)
        table = None if reader is None else bytes(reader._dbfile.get(reader._basepos, reader._count))
        tables[fieldname] = table
    return table


def doc_field_length(self, docnum: int, fieldname: str, default=0):
    """``W3PerDocReader.doc_field_length`` from a cached copy of the segment's length column
    (same results: the encoded length, or None for a zero byte, or ``default`` without one)."""
    if docnum > self._doccount:
        raise IndexError("Asked for docnum %r of %d" % (docnum, self._doccount))
    table = length_table(self, fieldname)
    if table is None:
        return default
    if docnum < len(table) and table[docnum]:
        return _w3.byte_to_length(table[docnum])
    return None


_original_cached_reader = _w3.W3PerDocReader._cached_reader


def cached_reader(self, fieldname: str, column):
    """``W3PerDocReader._cached_reader`` that also remembers that a column does not exist."""
    if fieldname in self._readers:
        return self._readers[fieldname]
    reader = _original_cached_reader(self, fieldname, column)
    if reader is None:
        self._readers[fieldname] = None
    return reader


_original_setup = _scoring.WeightLengthScorer.setup


MEMO_TERMS = 256
"""Score memos kept per top-level searcher (one per field and term; cleared when full)."""


def scorer_setup(self, searcher, fieldname, text):
    """``WeightLengthScorer.setup``, plus the segment's length table and the score memo of the
    term, shared by every segment and every query of the top-level searcher (its statistics,
    idf and average field length, are the same for all of them). The table stays None above a
    multi-segment reader: such scorers score the slow way."""
    out = _original_setup(self, searcher, fieldname, text)
    perdoc = getattr(searcher.reader(), "_perdoc", None)
    self._crab_table = length_table(perdoc, fieldname) if isinstance(perdoc, _w3.W3PerDocReader) else None
    memos = searcher.get_parent().__dict__.setdefault("_crab_memos", {})
    key = (type(self), fieldname, text, getattr(self, "B", None), getattr(self, "K1", None), getattr(self, "qf", 1))
    memo = memos.get(key)
    if memo is None:
        if len(memos) >= MEMO_TERMS:
            memos.clear()
        memo = memos[key] = {}
    self._crab_memo = memo
    return out


def bm25f_score(self, matcher) -> float:
    """``BM25FScorer.score`` memoized per (term weight, encoded field length)."""
    d = matcher.id()
    w = matcher.weight()
    table = self._crab_table
    if table is None or d >= len(table):
        return self._score(w, self.dfl(d))
    key = (w, table[d])
    score = self._crab_memo.get(key)
    if score is None:
        score = self._crab_memo[key] = self._score(w, self.dfl(d))
    return score


_original_get_spans = SpanNear2.SpanNear2Matcher._get_spans


def phrase_spans(self):
    """``SpanNear2Matcher._get_spans`` for an exact phrase (slop 1, ordered, mindist 1): the
    spans ``p .. p+n-1`` where word i of the phrase is at position ``p + i``; other span
    queries go the original way. The words are looked at rarest in the document first (by
    their frequency in it, which needs no decoding), so a document where two rare words are not
    adjacent is dropped before a common word's many positions are decoded."""
    if self.slop != 1 or not self.ordered or self.mindist != 1:
        return _original_get_spans(self)
    ms = self.ms
    try:
        order = sorted(range(len(ms)), key=lambda i: ms[i].weight())
        starts = None
        for i in order:
            shifted = [p - i for p in ms[i].value_as("positions")]
            if starts is None:
                starts = set(shifted)
            else:
                starts.intersection_update(shifted)
            if not starts:
                return []
    except (AttributeError, KeyError, NotImplementedError):  # a sub-matcher without positions
        return _original_get_spans(self)
    last = len(ms) - 1
    return [Span(p, p + last) for p in sorted(starts)]


_original_postings = _searching.Searcher.postings


MEMO_SCORERS = 4096
"""Scorers a segment's searcher keeps (cleared when full)."""


def searcher_postings(self, fieldname, text, weighting=None, qf=1):
    """``Searcher.postings`` with the scorer of a segment's term made once (fix 11): kept by
    the segment's searcher per (weighting model, field, term, query frequency); a searcher over
    several segments goes the original way."""
    if not self.is_atomic():
        return _original_postings(self, fieldname, text, weighting, qf)
    return self.ixreader.postings(fieldname, text, scorer=_scorer(self, weighting or self.weighting, fieldname,
                                                                  text, qf))


def _scorer(searcher, weighting, fieldname: str, text, qf=1):
    """The scorer of a term in a segment's ``searcher``, made once (fix 11)."""
    scorers = searcher.__dict__.get("_crab_scorers")
    if scorers is None:
        scorers = searcher._crab_scorers = {}
    key = (weighting, fieldname, text, qf)  # the model itself: a live object's key is never reused
    scorer = scorers.get(key)
    if scorer is None:
        if len(scorers) >= MEMO_SCORERS:
            scorers.clear()
        scorer = scorers[key] = weighting.scorer(searcher, fieldname, text, qf=qf)
    return scorer


_original_term_matcher = _terms.Term.matcher


def term_matcher(self, searcher, context=None):
    """``Term.matcher`` (fix 13): on a segment of the compact codec, for a declared field, the
    word looked up once and its matcher copied (``CompactTermsReader.fresh_matcher``), with the
    segment's scorer; deleted documents left out and the boost applied as Whoosh does. Any other
    case (a subclass, a multi-segment or closed reader, another codec, a dynamic field, a
    minimum quality) goes the original way, which raises what it raises."""
    reader = searcher.ixreader
    terms = getattr(reader, "_terms", None)
    fresh = getattr(terms, "fresh_matcher", None)
    field = searcher.schema._fields.get(self.fieldname)
    if (type(self) is not _terms.Term or fresh is None or field is None or self.minquality
            or type(reader) is not _reading.SegmentReader or reader.is_closed):
        return _original_term_matcher(self, searcher, context)
    fieldname = self.fieldname
    try:
        text = field.to_bytes(self.text)
    except ValueError:
        return _matching.NullMatcher()
    if (fieldname, text) not in terms:
        return _matching.NullMatcher()
    weighting = (searcher.weighting if context is None else context.weighting) or searcher.weighting
    m = fresh(fieldname, text, field.format, _scorer(searcher, weighting, fieldname, text))
    deleted = reader.deleted_docs_set
    if deleted:
        m = FilterMatcher(m, deleted, exclude=True)
    if self.boost != 1.0:
        m = _matching.WrappingMatcher(m, boost=self.boost)
    return m


def leaf_scorer(m):
    """The scorer of a term's matcher: a ``W3LeafMatcher``'s ``scorer``, or the ``_scorer`` of a
    ``ListMatcher`` (a short posting list kept in its term info, ``index.codec``), also through
    the ``FilterMatcher`` that leaves out a segment's deleted documents; raises
    ``AttributeError`` for a matcher without one."""
    while type(m) is FilterMatcher:
        m = m.child
    scorer = getattr(m, "scorer", None)
    return scorer if scorer is not None else m._scorer


def phrase_score(self) -> float:
    """``SpanNear2Matcher.score`` for an exact phrase (fix 9): each word's BM25F score with the
    phrase's own frequency in the document (its spans) as the word's frequency, as Lucene
    scores a phrase; other span queries, and words without a BM25F scorer, score as before (the
    sum of the words' own scores, which is never lower: a valid block-max bound still)."""
    spans = self._spans
    if not spans or self.slop != 1 or not self.ordered or self.mindist != 1:
        return self.child.score()
    try:
        d = self.child.id()
        return sum(sc._score(len(spans), sc.dfl(d)) for sc in map(leaf_scorer, self.ms))
    except AttributeError:
        return self.child.score()


def avg_field_length(self, fieldname: str, default=None):
    """``Searcher.avg_field_length`` over the documents that have the field (a non-zero length
    byte), counted once per top-level searcher; Whoosh's (over every document) when a segment's
    length column cannot be read this way."""
    if self.has_parent():
        return self.get_parent().avg_field_length(fieldname, default)
    if not self.schema[fieldname].scorable:
        return default
    cache = self.__dict__.setdefault("_crab_avgfl", {})
    if fieldname not in cache:
        with_field = 0
        for leaf, _ in self.reader().leaf_readers():
            perdoc = getattr(leaf, "_perdoc", None)
            table = length_table(perdoc, fieldname) if isinstance(perdoc, _w3.W3PerDocReader) else None
            if table is None:
                if leaf.doc_count_all() and leaf.field_length(fieldname):
                    with_field = None  # a segment we cannot count: Whoosh's own average
                    break
                continue
            with_field += len(table) - table.count(0)
        total = self.field_length(fieldname)
        cache[fieldname] = total / (with_field or 1) if with_field is not None else total / (self._doccount or 1)
    return cache[fieldname]


def idf(self, fieldname: str, text) -> float:
    """``Searcher.idf`` from the word's document frequency over every scored field (fix 8), with
    Whoosh's formula ``log(N / (df + 1)) + 1``; cached per top-level searcher."""
    if self.has_parent():
        return self.get_parent().idf(fieldname, text)
    fields = self.__dict__.get("_crab_scored")
    if fields is None:
        fields = self._crab_scored = frozenset(n for n, f in self.schema.items() if f.scorable)
    key = (None if fieldname in fields else fieldname, text)  # a scored field's word: one idf
    cache = self.__dict__.setdefault("_crab_idf", {})
    value = cache.get(key)
    if value is None:
        df = sum(self.doc_frequency(f, text) for f in fields) if key[0] is None else self.doc_frequency(fieldname, text)
        value = cache[key] = log(self.doc_count_all() / (df + 1)) + 1
    return value


def leaf_skip_to(self, targetid: int) -> None:
    """``W3LeafMatcher.skip_to``: whole blocks skipped by their highest id as before (a long
    list's by bisection over its block table, ``index.blocks``), then a bisection in the
    block's ids instead of one ``next()`` per posting. Raises ``ReadTooFar``
    on an exhausted matcher, like the original."""
    if not self.is_active():
        raise ReadTooFar
    if targetid <= self.id():
        return
    if targetid > self._maxid:
        table = _blocks.table_of(self)
        if table is not None:  # a long list: the block by bisection over its headers, read once
            table.skip_to(self, targetid)
        else:
            while self.is_active() and targetid > self._maxid:
                self._next_block()
        if not self.is_active():
            return
    if self._ids is None:
        self._read_ids()
    self._i = bisect_left(self._ids, targetid, self._i)  # < block length: targetid <= the block's max


def read_ids(self) -> None:
    """``W3LeafMatcher._read_ids``: the block's document numbers, its stored gaps added up by
    ``itertools.accumulate`` (Whoosh's ``delta_decode`` did it in Python), as a tuple."""
    if self._data is None:
        self._read_data()
    ids = self._data[0]
    self._ids = ids if self._byteids else tuple(accumulate(ids))


_original_schema_getitem = _fields.Schema.__getitem__
_original_schema_contains = _fields.Schema.__contains__


def schema_getitem(self, name):
    """``Schema.__getitem__``: a declared field from the dict at once (fix 12)."""
    field = self._fields.get(name)
    return field if field is not None else _original_schema_getitem(self, name)


def schema_contains(self, name) -> bool:
    """``Schema.__contains__``: a declared field without ``__getitem__`` and a ``try`` (fix 12)."""
    return name in self._fields or _original_schema_contains(self, name)


_original_read_toc = _index.FileIndex._read_toc


def read_toc(self, tries: int = 10, pause: float = 0.05):
    """``FileIndex._read_toc`` (fix 14): the latest table of contents, listed and read again
    when the one listed was deleted before it was opened (a commit replaced it); raises the
    last ``FileNotFoundError`` after ``tries`` attempts ``pause`` seconds apart."""
    for attempt in range(tries):
        try:
            return _original_read_toc(self)
        except FileNotFoundError:
            if attempt == tries - 1:
                raise
            _time.sleep(pause)


WHOOSH_VERSION = "2.7.5"
"""The whoosh-reloaded release these fixes were written against (``pyproject.toml`` pins it)."""


class WhooshMismatch(RuntimeError):
    """A fix's target is missing or no longer has the signature the fix was written for: the
    installed Whoosh is not :data:`WHOOSH_VERSION`. Raised by :func:`install`, never bound."""


_PATCHES = (
    # (owner, attribute, replacement, the original's parameters)
    (_w3.W3PerDocReader, "doc_field_length", doc_field_length, "self, docnum, fieldname, default=0"),
    (_w3.W3PerDocReader, "_cached_reader", cached_reader, "self, fieldname, column"),
    (_scoring.WeightLengthScorer, "setup", scorer_setup, "self, searcher, fieldname, text"),
    (_scoring.BM25FScorer, "score", bm25f_score, "self, matcher"),
    (SpanNear2.SpanNear2Matcher, "_get_spans", phrase_spans, "self"),
    (SpanNear2.SpanNear2Matcher, "score", phrase_score, "self"),
    (_w3.W3LeafMatcher, "skip_to", leaf_skip_to, "self, targetid"),
    (_w3.W3LeafMatcher, "_read_ids", read_ids, "self"),
    (_searching.Searcher, "avg_field_length", avg_field_length, "self, fieldname, default=None"),
    (_searching.Searcher, "idf", idf, "self, fieldname, text"),
    (_searching.Searcher, "postings", searcher_postings, "self, fieldname, text, weighting=None, qf=1"),
    (_fields.Schema, "__getitem__", schema_getitem, "self, name"),
    (_fields.Schema, "__contains__", schema_contains, "self, fieldname"),
    (_terms.Term, "matcher", term_matcher, "self, searcher, context=None"),
    (_index.FileIndex, "_read_toc", read_toc, "self"),
    (_compound, "BufferFile", ViewBufferFile, "buf, name=None, onclose=None"),
)
"""Every fix, with the signature of what it replaces in whoosh-reloaded 2.7.5 (``inspect``'s
text of its parameters; for ``BufferFile``, the class's constructor)."""

_PRIVATE_STATE = (
    # (class, attributes its methods must still set or read, the fixes that use them)
    (_w3.W3LeafMatcher, ("_data", "_i", "_byteids", "_ids"), "fixes 6 and 10"),
    (SpanNear2.SpanNear2Matcher, ("ms",), "fix 5"),
)
"""Private attributes of Whoosh objects that the fixes read: each must still be named by the
code of the class's methods (or its bases'), since an instance is needed to see them otherwise."""


def check(patches=None) -> list[str]:
    """What no longer fits in the installed Whoosh: one line per fix whose target is missing or
    whose signature changed, and per private attribute a fix reads that its class no longer
    names (empty: every fix fits). A target already replaced by its fix is checked against the
    original the fix wraps."""
    problems = []
    for owner, name, fix, expected in _PATCHES if patches is None else patches:
        target = getattr(owner, name, None)  # a method may be inherited (BM25FScorer.score)
        if target is None:
            problems.append(f"{_where(owner)}.{name} is missing")
            continue
        if target is fix:
            continue
        got = _params(target)
        if got != expected:
            problems.append(f"{_where(owner)}.{name}({got}) is not ({expected})")
    for cls, names, used_by in _PRIVATE_STATE:
        named = {n for k in cls.__mro__ for v in vars(k).values()
                 for n in getattr(getattr(v, "__code__", None), "co_names", ())}
        for attr in names:
            if attr not in named:
                problems.append(f"{_where(cls)} no longer names .{attr} ({used_by})")
    return problems


def _params(target) -> str:
    """``target``'s parameters as ``inspect.signature`` writes them (``self, fieldname,
    default=None``), read from its code object (``inspect`` takes milliseconds the start of every
    command would pay); a class gives its ``__init__``'s, less ``self``; ``?`` for anything else."""
    func = target.__init__ if isinstance(target, type) else target
    code = getattr(func, "__code__", None)
    if code is None or code.co_kwonlyargcount or code.co_flags & 0x0C:  # *args, **kwargs: not written here
        return "?"
    names = list(code.co_varnames[:code.co_argcount])
    defaults = func.__defaults__ or ()
    for i, value in enumerate(defaults, len(names) - len(defaults)):
        names[i] = f"{names[i]}={value!r}"
    return ", ".join(names[1:] if isinstance(target, type) else names)


def _where(owner) -> str:
    return f"{owner.__module__}.{owner.__qualname__}" if isinstance(owner, type) else owner.__name__


def install() -> None:
    """Put every fix in place (idempotent). Raises :class:`WhooshMismatch` naming the installed
    Whoosh version and each target that changed, before replacing anything, when the installed
    Whoosh is not the one the fixes were written for."""
    problems = check()
    if problems:
        import whoosh
        raise WhooshMismatch(
            f"crabsearch needs whoosh-reloaded {WHOOSH_VERSION}; the installed {whoosh.versionstring()} "
            f"differs where crabsearch patches it: {'; '.join(problems)}. "
            f"Install it with: pip install 'whoosh-reloaded=={WHOOSH_VERSION}'")
    for owner, name, fix, _ in _PATCHES:
        setattr(owner, name, fix)

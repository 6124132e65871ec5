"""Phrases of words typed apart: the words as running text, not glued inside one name.

A phrase of several typed words (``Minsky CLI with Bun``) also occurs inside paths and
identifiers, whose parts are indexed as adjacent words so that ``resolve dirs`` finds
``resolve_dirs`` (``index.analysis``). A file name that spells the phrase
(``.specstory/history/2025-04-26_20-30-setting-up-minsky-cli-with-bun.md``) is one token of its
message: a reference to something of that name, not a message about it. Counted as the phrase,
every message that quoted the file (SpecStory histories link each other's files, a changelog
lists them) outranked the session whose title the words are (issue 11: the real set's
``title`` queries), and an identifier named after a few words outranks the discussion of them.

:class:`TextPhrase` (the ``phrase`` rung of words typed apart, ``querying.Compiler.rungs``)
counts only the spans that do not lie within one name: the index marks each name's first and
last leaf with ``analysis.NAME_MARK`` (a plain hyphenated word, ``real-time``, is running text
and has no mark). A message holding the words only inside a name still holds every word, and
is found by the ``all`` rung below. Quoted phrases and an identifier's own parts (``get user by
id`` for ``getUserById``) stay Whoosh's ``Phrase``, which matches inside names.
"""

from __future__ import annotations

from bisect import bisect_right

from whoosh import matching
from whoosh.query import Phrase, Term
from whoosh.query.spans import SpanNear2

from .analysis import NAME_MARK


def inside_name(marks: list[int], start: int, end: int) -> bool:
    """True when positions ``start`` to ``end`` lie within one name: ``marks`` are the sorted
    positions of a document's :data:`~crabsearch.index.analysis.NAME_MARK`, each name's first
    and last leaf in turn (names never overlap, and a name has two leaves or more, so they
    pair up: ``[first0, last0, first1, last1, ...]``)."""
    i = bisect_right(marks, start) - 1
    return i >= 0 and i % 2 == 0 and i + 1 < len(marks) and end <= marks[i + 1]


class TextSpansMatcher(SpanNear2.SpanNear2Matcher):
    """An exact phrase's matcher (``SpanNear2``, slop 1) that drops the spans lying within one
    name, read from ``names`` (the mark's postings in the same field and segment, or None when
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
    """``Phrase`` (exact, slop 1) over the words as running text: a span lying within one name
    does not count (see the module docs)."""

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

"""The Whoosh schema: one document per message, plus one per session.

Design (measurements in ``shared/reference/engineering.md`` sections 0, 4, 5):

* Text is indexed **per role** in its own field (``user``, ``assistant``, ``tool`` for tool
  *names*, ``summary``), plus ``title`` and ``summary`` on the session document. Role weights are
  query-time field boosts (``crabsearch.ranking.WEIGHTS``), which keep BM25F's block-max
  skipping valid.
* No message text is stored (windows are read from the transcript by offset, which indexes
  faster); no NUMERIC trie fields (they slow indexing): positions and times are ``STORED``, the
  session's update time is a column used only for sorting.
* Keys: ``fkey`` identifies the transcript file, ``skey`` (``agent:session_id``) the session (the
  collapse key for best hit per session), ``mkey`` one document (``fkey:N`` for message N,
  ``fkey:s`` for the session document). ``uid`` is a message's own id in its format (Claude
  Code ``uuid``, pi entry ``id``, ...), the same in every session that copies it: search shows
  such a shared message once.
"""

from __future__ import annotations

import sys
from array import array
from itertools import accumulate

from whoosh import columns, formats
from whoosh.fields import COLUMN, ID, STORED, TEXT, Schema

from ..filters import indexed_fields
from ..ranking import WEIGHTS
from .tokenizer import NAME_MARK, text_analyzer

SCHEMA_VERSION = 14
"""Bump when the schema or the analyzer changes: an index with another stamp is rebuilt.
10: the message index ``idx`` is also a column (proximity of a session's matches).
11: ``ß`` folds to ``ss`` (and ``æ``, ``œ``, ligatures to their letters); a word with an
apostrophe inside is one term (``isn't`` -> ``isnt``, ``user's`` -> ``user``).
12: text fields hold ``tokenizer.NAME_MARK`` at the first and last leaf of each path or identifier
(a phrase found only inside one counts as the name, not as running text: ``querying.TextPhrase``).
13: a smaller index: segments written by ``codec.CompactCodec``, positions
in :class:`NamePositions`' encoding, the session key column a :class:`SessionKeyColumn`.
14: ``continued_in`` on session documents (a session handed to another: "continued from")."""

TEXT_FIELDS = tuple(WEIGHTS)
"""The text fields, one per role (:data:`crabsearch.ranking.WEIGHTS` gives each its boost)."""

SHARED_FIELDS: dict[str, frozenset[str]] = {
    "title": frozenset({"summary"}), "summary": frozenset({"title"}),
    "tool": frozenset({"tool_output"}), "tool_output": frozenset({"tool"}),
}
"""The other text fields one document can hold words in besides a field (``documents.
index_text_fields``: a message puts its text in one field, a tool result its name and output;
the session document its title and summary). A bound on one field's score of a document is then
a bound on its whole score, plus these fields' (``union.scores``' block skipping)."""


class StoredIndex(STORED):
    """A stored whole number that is also a per-document numeric column (not indexed): the
    message index ``idx``, read from the column for every match of a query (where the search
    measures how close together a session's matches are) without loading stored fields."""

    column_type = columns.NumericColumn("i", default=-1)

    def to_column_value(self, value):
        """The column holds the number itself (-1 when it is not a whole number)."""
        return value if isinstance(value, int) else -1

    def from_column_value(self, value):
        """The number as stored (no translation)."""
        return value


class SessionKeyColumn(columns.RefBytesColumn):
    """The session key per document, each distinct key stored once per segment and a 1-, 2- or
    4-byte reference per document (Whoosh's ``RefBytesColumn``, whose writer drops values past
    65,535 distinct ones: here the reference widens instead). A segment's messages share a few
    sessions' keys, which ``VarBytesColumn`` stored in full for every document."""

    class Writer(columns.RefBytesColumn.Writer):
        """Buffers the references, then writes them as narrow as the number of keys allows."""

        def __init__(self, dbfile, fixedlen, default):
            super().__init__(dbfile, fixedlen, default)
            self._refs = array("I")

        def fill(self, docnum):
            if docnum > self._count:
                self._refs.extend([0] * (docnum - self._count))

        def add(self, docnum, v):
            self.fill(docnum)
            self._refs.append(self._uniques.setdefault(v, len(self._uniques)))
            self._count = docnum + 1

        def finish(self, doccount):
            self.fill(doccount)
            n = len(self._uniques)
            code = "B" if n <= 0x100 else "H" if n <= 0x10000 else "I"
            self._dbfile.write_array(array(code, self._refs))
            self._write_uniques(code)
            self._dbfile.write_byte(ord(code))

    class Reader(columns.RefBytesColumn.Reader):
        """Whoosh's reader; iterating reads the references in one go."""

        def __iter__(self):
            refs = self._dbfile.get_array(self._basepos, self._typecode, self._doccount)
            uniques = self._uniques
            return (uniques[r] for r in refs)


class NamePositions(formats.Positions):
    """Whoosh's ``Positions`` format, with two changes:

    * :data:`~crabsearch.index.tokenizer.NAME_MARK` (where a path or identifier starts and ends)
      is kept out of the field's length: it is bookkeeping, not a word, and BM25F's length
      normalization counts the words alone.
    * A posting's positions are stored as their gaps in one byte each (two or four when a gap
      needs them, :data:`POSITION_TAGS`), not as Whoosh's 4-byte count plus a protocol-2 pickle
      of the gaps: 2 bytes instead of 14 for a word seen once in a message, and decoded in C
      (``itertools.accumulate``). Values in Whoosh's own encoding still decode.
    """

    def word_values(self, value, analyzer, **kwargs):
        """``(term, frequency, weight, encoded positions)`` per term; the mark's frequency 0 (the
        writer sums the frequencies into the field's length)."""
        for word, freq, weight, encoded in super().word_values(value, analyzer, **kwargs):
            yield (word, 0 if word == NAME_MARK else freq, weight, encoded)

    def encode(self, poslist) -> bytes:
        """The gaps between ``poslist``'s positions (the first from 0), after a tag byte that
        says their width."""
        gaps = [b - a for a, b in zip([0, *poslist], poslist)]
        top = max(gaps, default=0)
        if top < 0x100:
            return POSITION_TAGS["B"] + bytes(gaps)
        code = "H" if top < 0x10000 else "I"
        packed = array(code, gaps)
        if _BIG_ENDIAN:  # stored little-endian: an index reads the same on any machine
            packed.byteswap()
        return POSITION_TAGS[code] + packed.tobytes()

    def decode_positions(self, valuestring) -> list[int]:
        """The positions of one posting, from either encoding."""
        code = _TAG_CODES.get(valuestring[:1])
        if code == "B":
            return list(accumulate(valuestring[1:]))
        if code:
            packed = array(code, valuestring[1:])
            if _BIG_ENDIAN:
                packed.byteswap()
            return list(accumulate(packed))
        return super().decode_positions(valuestring)

    def decode_frequency(self, valuestring) -> int:
        """How many positions one posting holds, from either encoding."""
        code = _TAG_CODES.get(valuestring[:1])
        if code:
            return (len(valuestring) - 1) // array(code).itemsize
        return super().decode_frequency(valuestring)


POSITION_TAGS = {"B": b"\xc0", "H": b"\xc1", "I": b"\xc2"}
"""The first byte of a posting's positions in :class:`NamePositions`' encoding, per width of
the gaps (an ``array`` type code). Whoosh's own encoding starts with a 4-byte big-endian count,
whose first byte is 0 for any count under 16 million: the two never mix up."""
_TAG_CODES = {tag: code for code, tag in POSITION_TAGS.items()}
_BIG_ENDIAN = sys.byteorder == "big"


class PhraseText(TEXT):
    """A text field with positions (phrases), in the :class:`NamePositions` format."""

    def __init__(self, analyzer):
        super().__init__(analyzer=analyzer, phrase=True)
        self.format = NamePositions(field_boost=1.0)


def make_schema() -> Schema:
    """Build the schema (see the module docstring for the reasoning), with an ``ID`` field for
    each filter indexed from its session (``crabsearch.filters.indexed_fields``)."""
    ana = text_analyzer()
    schema = Schema(
        mkey=ID(unique=True),
        fkey=ID(stored=True),
        skey=ID(stored=True, sortable=SessionKeyColumn()),
        agent=ID(stored=True),
        kind=ID(),  # "m" message, "s" session
        session_id=ID(),  # session documents only, for `show SESSION_ID`
        continued_in=ID(),  # session documents: Session.extra["continued_in"], to find "continued from"
        role=ID(stored=True),
        label=STORED(),
        idx=StoredIndex(),  # message index (session documents: the anchor message); also a column
        off=STORED(),
        len=STORED(),
        part=STORED(),
        ts=STORED(),
        meta=STORED(),  # session documents: the Session as a dict
        side=STORED(),  # messages: True for a subagent turn written inline (Message.sidechain)
        uid=ID(stored=True),  # messages: the format's stable message id (Message.uid), when it has one
        updated=COLUMN(columns.NumericColumn("q", default=0)),  # ms; messages: their own time
        project=ID(),  # working directory (``project:/path`` prefix filter)
        projname=ID(),  # its last segment, lowercased (``project:NAME``)
        hour=ID(),  # YYYYMMDDHH UTC (``since:``/``until:`` as a term range, no trie terms)
        user=PhraseText(ana),
        assistant=PhraseText(ana),
        acting=PhraseText(ana),
        tool=TEXT(analyzer=ana, phrase=False),
        tool_output=PhraseText(ana),
        summary=PhraseText(ana),
        compaction=PhraseText(ana),
        title=PhraseText(ana),
    )
    for name in indexed_fields():
        schema.add(name, ID())
    return schema

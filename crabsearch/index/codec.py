"""crabsearch's segment format: Whoosh's with a compact term dictionary and stored fields
(index size: ``bench/index_size.py``, ``docs/benchmarks.md``).

Whoosh's ``W3Codec`` costs about 180 bytes for every distinct (field, word) of a segment, however
rare the word: its term file is a hash table (8 bytes of lengths, two 16-byte hash slots and a
4-byte order entry per key, then a 35-byte fixed-width term info), and every posting list, even
one of a single document, is a block of its own in the postings file (a 4-byte magic, a length,
a pickled block header, and a zlib stream of a protocol-2 pickle, where each position list
pickles as a ``_codecs.encode`` call): 82 bytes for one posting. Real conversations have a long
tail of words seen once (names, paths, hashes, typos), and one document per message has its own
key word (``mkey``), so on the shared corpus's real transcripts the index was 0.6x to 2.8x the
size of the transcripts it indexes.

:class:`CompactCodec` keeps Whoosh's postings format and readers (``W3LeafMatcher``, which
``index.union`` and ``index.whoosh_fixes`` read directly) and changes four things (the file
formats themselves are in ``index.termtable``):

* **The term file** (``.ctm``) is a sorted table of front-coded keys in blocks, with each
  block's first key, offset and CRC-32 in an index at the end (bisection, then a scan of one
  block). The term info is varint-coded (:func:`encode_info`): 6-12 bytes for most words
  instead of 35. A lookup is a scan, about twice Whoosh's hash lookup, so each segment's terms
  reader remembers the term infos it was asked for (:data:`INFOS_KEPT`).
* **Short posting lists live in the term info** (at most :data:`INLINE_MAX` documents: ids as
  varint deltas, weights as varints when whole, each position list with its length), read back
  as Whoosh's ``ListMatcher`` as ``W3Codec`` does for inlined postings (whose writer crashes in
  whoosh-reloaded 2.7.5: ``set_inline`` does not exist).
* **Stored fields are compressed in blocks of documents** (``.sfb``): Whoosh compressed each
  document's pickled dict on its own, so the field names, session key and agent repeated in
  every message cost their full size (about 180 bytes a message).
* **Pickles use protocol 5** (posting blocks and stored fields): bytes are pickled as bytes, not
  as ``_codecs.encode`` calls; whole weights as ints. (Positions themselves are encoded by the
  schema's format, ``schema.NamePositions``.)

Segments written by ``W3Codec`` (indexes built before this codec) still read: a segment names
its codec in the index's table of contents. Scores are unchanged, bit for bit: the postings
(ids, weights, positions) and the statistics Whoosh reads from a term info are the same numbers
(``tests/test_codec.py`` compares every term, posting and score with ``W3Codec``'s)."""

from __future__ import annotations

import pickle
import struct
import zlib

from whoosh.codec import base
from whoosh.codec import whoosh3 as w3
from whoosh.reading import TermNotFound
from whoosh.util.numeric import byte_to_length, length_to_byte

from .termtable import STORED_EXT, StoredBlocks, StoredBlocksWriter, TermTable, TermTableWriter, read_varint, varint

INFOS_KEPT = 4096
"""Term infos a segment's terms reader remembers (found or not); the memo is emptied when full."""

INLINE_MAX = 4
"""Posting lists of at most this many documents are kept in the term info instead of a block of
the postings file (most of a real vocabulary: words seen in one to four messages)."""

_F32 = struct.Struct("<f")
_INLINED, _SINGLE, _WHOLE, _NOVALUES, _DERIVED = 1, 2, 4, 8, 16


def _whole(x) -> bool:
    return 0 <= x < 1 << 32 and x == int(x)


def _put_number(x, whole: bool, out: bytearray) -> None:
    if whole:
        varint(int(x), out)
    else:
        out += _F32.pack(x)


def _get_number(buf, pos: int, whole: bool) -> tuple[float, int]:
    if whole:
        n, pos = read_varint(buf, pos)
        return float(n), pos
    return _F32.unpack_from(buf, pos)[0], pos + 4


def encode_info(ti: w3.W3TermInfo) -> bytes:
    """A ``W3TermInfo`` as bytes: a flags byte, the total weight, the document frequency, the
    min/max field-length bytes, the highest weight, the first and last document, then either the
    inlined postings or the posting list's (offset, length) in the postings file. Weights that are
    whole numbers (term frequencies; crabsearch boosts fields at query time) are varints, others
    float32 as Whoosh stores them. Inlined postings with whole weights carry only the flags, the
    length bytes and the postings: the rest is their count, sum, maximum, first and last id
    (what Whoosh's ``add_block`` computed from them; 11 bytes for most words seen once instead
    of 17). Raises ``ValueError`` for a term info without postings."""
    inlined = ti._inlined
    ids = inlined[0] if inlined is not None else ()
    weights = inlined[1] if inlined is not None else ()
    if ti._minid is None:
        raise ValueError("a term info without postings")
    single = ti._df == 1 and ti._maxweight == ti._weight and ti._minid == ti._maxid
    whole = _whole(ti._weight) and _whole(ti._maxweight) and all(_whole(w) for w in weights)
    values = inlined[2] if inlined is not None else None
    if values and len(values) != len(ids):
        raise ValueError("inlined postings with values for only some documents")
    if inlined is not None and whole:  # the statistics follow from the postings themselves
        out = bytearray((_INLINED | _WHOLE | _DERIVED | (0 if values else _NOVALUES),))
        out.append(0 if ti._minlength is None else length_to_byte(ti._minlength))
        out.append(length_to_byte(ti._maxlength))
        _put_postings(ids, weights, values, True, out)
        return bytes(out)
    flags = ((_INLINED if inlined is not None else 0) | (_SINGLE if single else 0)
             | (_WHOLE if whole else 0) | (_NOVALUES if not values else 0))
    out = bytearray((flags,))
    _put_number(ti._weight, whole, out)
    if not single:
        varint(ti._df, out)
        _put_number(ti._maxweight, whole, out)
    out.append(0 if ti._minlength is None else length_to_byte(ti._minlength))
    out.append(length_to_byte(ti._maxlength))
    varint(ti._minid, out)
    if not single:
        varint(ti._maxid - ti._minid, out)
    if inlined is None:
        varint(ti._offset, out)
        varint(ti._length, out)
        return bytes(out)
    _put_postings(ids, weights, values, whole, out)
    return bytes(out)


def _put_postings(ids, weights, values, whole: bool, out: bytearray) -> None:
    varint(len(ids), out)
    last = 0
    for d in ids:
        varint(d - last, out)
        last = d
    for w in weights:
        _put_number(w, whole, out)
    for v in values or ():
        varint(len(v), out)
        out += v


def decode_info(buf, pos: int = 0) -> w3.W3TermInfo:
    """The ``W3TermInfo`` that :func:`encode_info` wrote at ``buf[pos:]`` (the same numbers:
    Whoosh reads ``weight``, ``doc_frequency``, ``min_length``/``max_length``, ``max_weight``,
    ``min_id``/``max_id`` and the postings from it)."""
    flags = buf[pos]
    whole = flags & _WHOLE
    ti = w3.W3TermInfo()
    if flags & _DERIVED:
        ti._minlength, ti._maxlength = byte_to_length(buf[pos + 1]), byte_to_length(buf[pos + 2])
        ids, weights, values = ti._inlined = _get_postings(buf, pos + 3, flags)
        ti._df, ti._minid, ti._maxid = len(ids), ids[0], ids[-1]
        ti._weight, ti._maxweight = float(sum(weights)), float(max(weights))
        return ti
    ti._weight, pos = _get_number(buf, pos + 1, whole)
    if flags & _SINGLE:
        ti._df, ti._maxweight = 1, ti._weight
    else:
        ti._df, pos = read_varint(buf, pos)
        ti._maxweight, pos = _get_number(buf, pos, whole)
    ti._minlength, ti._maxlength = byte_to_length(buf[pos]), byte_to_length(buf[pos + 1])
    ti._minid, pos = read_varint(buf, pos + 2)
    if flags & _SINGLE:
        ti._maxid = ti._minid
    else:
        span, pos = read_varint(buf, pos)
        ti._maxid = ti._minid + span
    if not flags & _INLINED:
        ti._offset, pos = read_varint(buf, pos)
        ti._length, pos = read_varint(buf, pos)
        return ti
    ti._inlined = _get_postings(buf, pos, flags)
    return ti


def _get_postings(buf, pos: int, flags: int) -> tuple:
    """``(ids, weights, values)`` that :func:`_put_postings` wrote at ``buf[pos:]``."""
    whole = flags & _WHOLE
    n, pos = read_varint(buf, pos)
    ids, last = [], 0
    for _ in range(n):
        delta, pos = read_varint(buf, pos)
        last += delta
        ids.append(last)
    weights = []
    for _ in range(n):
        w, pos = _get_number(buf, pos, whole)
        weights.append(w)
    values = (None,) * n  # as W3LeafMatcher reads a posting without a value (a merge needs one per id)
    if not flags & _NOVALUES:
        values = []
        for _ in range(n):
            size, pos = read_varint(buf, pos)
            values.append(bytes(buf[pos:pos + size]))
            pos += size
        values = tuple(values)
    return tuple(ids), tuple(weights), values


class CompactFieldWriter(w3.W3FieldWriter):
    """``W3FieldWriter`` writing a :class:`TermTableWriter` (``.ctm``) instead of Whoosh's hash
    table, with each term info as :func:`encode_info` bytes."""

    def __init__(self, codec, storage, segment) -> None:
        self._codec = codec
        self._storage = storage
        self._segment = segment
        self._fieldname = self._fieldid = self._btext = self._fieldobj = self._format = None
        self._tindex = TermTableWriter(self._create_file(CompactCodec.TERMS_EXT))
        self._fieldmap = self._tindex.fieldmap
        self._postfile = self._create_file(w3.W3Codec.POSTS_EXT)
        self._postwriter = None
        self._infield = False
        self.is_closed = False

    def finish_term(self) -> None:
        terminfo = self._postwriter.finish_postings()
        self._tindex.add(w3.pack_ushort(self._fieldid) + self._btext, encode_info(terminfo))


class CompactPostingsWriter(w3.W3PostingsWriter):
    """``W3PostingsWriter`` that inlines lists of at most :data:`INLINE_MAX` postings and pickles
    blocks with protocol 5: Whoosh's ``W3LeafMatcher`` reads them unchanged (``pickle.loads``
    reads any protocol)."""

    def finish_postings(self):
        terminfo = self._terminfo
        if not self.written() and len(self._ids) <= INLINE_MAX:
            terminfo.add_block(self)
            terminfo.set_inlined(self._ids, self._weights, self._values)
        else:
            if self._ids:
                self._write_block(last=True)
            terminfo.set_extent(self._startoffset, self._postfile.tell() - self._startoffset)
        self._terminfo = None
        return terminfo

    def _mini_weights(self):
        """Whoosh's (None when all are 1.0, one number when all are equal), but whole weights (a
        word's frequency in the document) as ints: 2 bytes each in the pickle instead of 9. The
        reader's scores are the same (BM25F computes with the number, not its type)."""
        weights = super()._mini_weights()
        if isinstance(weights, tuple) and all(_whole(w) for w in weights):
            return tuple(int(w) for w in weights)
        return weights

    def _write_block(self, last: bool = False) -> None:
        if not self._blockcount:
            self._postfile.write(w3.WHOOSH3_HEADER_MAGIC)
        self._terminfo.add_block(self)
        data = pickle.dumps((self._mini_ids(), self._mini_weights(), self._mini_values()), 5)
        comp = self._compression  # always, as Whoosh's: zlib's checksum makes damage a failed read
        if comp:
            data = zlib.compress(data, comp)
        ids = self._ids
        info = pickle.dumps((len(ids), ids[-1], self._maxweight, comp,
                             length_to_byte(self._minlength), length_to_byte(self._maxlength)), 5)
        size = len(info) + len(data)
        self._postfile.write_int(-size if last else size)
        self._postfile.write(info)
        self._postfile.write(data)
        self._blockcount += 1
        self._new_block()


class CompactPerDocWriter(w3.W3PerDocWriter):
    """``W3PerDocWriter`` that writes each document's stored fields (a protocol-5 pickle) to
    :class:`StoredBlocksWriter` (``.sfb``) instead of Whoosh's stored-field column."""

    def __init__(self, codec, storage, segment) -> None:
        super().__init__(codec, storage, segment)
        self._blocks = StoredBlocksWriter(self._create_file(STORED_EXT))

    def finish_doc(self) -> None:
        if self._indoc:  # Whoosh's close() calls finish_doc again after the last document
            sf = self._storedfields
            self._blocks.add(pickle.dumps(sf, 5) if sf else b"")
            sf.clear()
        self._indoc = False

    def close(self) -> None:
        super().close()
        self._blocks.close()


class CompactPerDocReader(w3.W3PerDocReader):
    """``W3PerDocReader`` reading stored fields from the segment's :class:`StoredBlocks`."""

    def __init__(self, storage, segment) -> None:
        super().__init__(storage, segment)
        name = segment.make_filename(STORED_EXT)
        self._blocks = StoredBlocks(storage.open_file(name), storage.file_length(name))

    def stored_fields(self, docnum: int) -> dict:
        raw = self._blocks.get(docnum)
        return pickle.loads(raw) if raw else {}

    def close(self) -> None:
        super().close()
        self._blocks.dbfile.close()


class CompactCursor(base.FieldCursor):
    """A field's words in order over a :class:`TermTable` (Whoosh's ``FieldCursor``: ``first``,
    ``find``, ``next``, ``text``, ``term_info``, ``is_valid``), as Whoosh's fuzzy matching
    walks them."""

    def __init__(self, reader: "CompactTermsReader", fieldname: str, fieldobj) -> None:
        self._reader, self._fieldname, self._fieldobj = reader, fieldname, fieldobj
        self._prefix = reader._keycoder(fieldname, b"")
        self._it = None
        self._text = self._info = None
        self.first()

    def _go(self, key: bytes):
        self._it = self._reader._table.items_from(key)
        return self.next()

    def first(self):
        return self._go(self._prefix)

    def find(self, term):
        if not isinstance(term, bytes):
            term = self._fieldobj.to_bytes(term)
        return self._go(self._prefix + term)

    def next(self):
        for key, buf, start in self._it:
            if key.startswith(self._prefix):
                self._text = self._fieldobj.from_bytes(key[len(self._prefix):])
                self._info = (buf, start)
                return self._text
            break
        self._text = self._info = None
        return None

    def text(self):
        return self._text

    def term_info(self):
        return None if self._info is None else decode_info(*self._info)

    def is_valid(self) -> bool:
        return self._text is not None


_new_leaf = object.__new__


class CompactTermsReader(base.TermsReader):
    """Whoosh's ``TermsReader`` over a :class:`TermTable`: the same answers as
    ``W3TermsReader`` (``term_info`` raises ``TermNotFound``, ``frequency`` and
    ``doc_frequency`` ``KeyError`` for a missing word, as Whoosh's reader expects)."""

    def __init__(self, codec, dbfile, length: int, postfile) -> None:
        self._codec = codec
        self._table = TermTable(dbfile, length)
        self._fieldmap = self._table.fieldmap
        self._fieldunmap = {num: name for name, num in self._fieldmap.items()}
        self._postfile = postfile
        self._infos: dict[tuple[str, bytes], w3.W3TermInfo | None] = {}
        self._fresh: dict[tuple[str, bytes], w3.W3LeafMatcher] = {}

    def _keycoder(self, fieldname: str, tbytes: bytes) -> bytes:
        return w3.pack_ushort(self._fieldmap.get(fieldname, 65535)) + tbytes

    def _keydecoder(self, key: bytes) -> tuple[str, bytes]:
        return self._fieldunmap[w3.unpack_ushort(key[:2])[0]], key[2:]

    def _info(self, fieldname: str, tbytes: bytes) -> w3.W3TermInfo:
        """The word's term info, remembered (:data:`INFOS_KEPT`): one search looks the same words
        up again and again (each rung, each field's statistics, every segment), and a lookup
        here is a block scan, about twice Whoosh's hash lookup. Raises ``KeyError``."""
        key = (fieldname, tbytes)
        info = self._infos.get(key, self)
        if info is self:
            found = self._table.value(self._keycoder(fieldname, tbytes))
            info = None if found is None else decode_info(*found)
            if len(self._infos) >= INFOS_KEPT:
                self._infos.clear()
            self._infos[key] = info
        if info is None:
            raise KeyError(key)
        return info

    def __contains__(self, term) -> bool:
        try:
            self._info(*term)  # remembered: Whoosh asks before every matcher it makes
        except KeyError:
            return False
        return True

    def indexed_field_names(self):
        return self._fieldmap.keys()

    def cursor(self, fieldname, fieldobj):
        return CompactCursor(self, fieldname, fieldobj)

    def terms(self):
        return (self._keydecoder(k) for k, _, _ in self._table.items_from(b""))

    def terms_from(self, fieldname, prefix):
        return (self._keydecoder(k) for k, _, _ in self._table.items_from(self._keycoder(fieldname, prefix)))

    def items(self):
        return ((self._keydecoder(k), decode_info(buf, s)) for k, buf, s in self._table.items_from(b""))

    def items_from(self, fieldname, prefix):
        return ((self._keydecoder(k), decode_info(buf, s))
                for k, buf, s in self._table.items_from(self._keycoder(fieldname, prefix)))

    def term_info(self, fieldname, tbytes):
        try:
            return self._info(fieldname, tbytes)
        except KeyError:
            raise TermNotFound(f"No term {fieldname}:{tbytes!r}") from None

    def frequency(self, fieldname, tbytes):
        return self._info(fieldname, tbytes).weight()

    def doc_frequency(self, fieldname, tbytes):
        return self._info(fieldname, tbytes).doc_frequency()

    def matcher(self, fieldname, tbytes, format_, scorer=None):
        return self._codec.postings_reader(self._postfile, self.term_info(fieldname, tbytes), format_,
                                           term=(fieldname, tbytes), scorer=scorer)

    def fresh_matcher(self, fieldname: str, tbytes: bytes, format_, scorer):
        """:meth:`matcher`, with a posting list's matcher copied from one kept untouched per word
        (:data:`INFOS_KEPT` words at most), on its first block: its header is not read and
        unpickled again (``whoosh_fixes`` 13). A matcher's state is its attributes (offsets, the
        block's header, lazily its decoded block), and the postings file is shared by every
        matcher of the segment anyway (each seeks before it reads). Raises ``KeyError`` for a
        word not in the segment (the caller asks first: ``in``)."""
        key = (fieldname, tbytes)
        kept = self._fresh.get(key)
        if kept is None:
            m = self._codec.postings_reader(self._postfile, self._info(fieldname, tbytes), format_, term=key,
                                            scorer=scorer)
            if type(m) is w3.W3LeafMatcher:
                if len(self._fresh) >= INFOS_KEPT:
                    self._fresh.clear()
                kept = self._fresh[key] = _new_leaf(w3.W3LeafMatcher)
                kept.__dict__.update(m.__dict__)
            return m
        m = _new_leaf(w3.W3LeafMatcher)
        m.__dict__.update(kept.__dict__)
        m.scorer = scorer
        return m

    def close(self) -> None:
        self._table.dbfile.close()
        self._postfile.close()


class CompactCodec(w3.W3Codec):
    """``W3Codec`` with the compact term table, inlined short posting lists and protocol-5
    pickles (module docstring). Pass it as ``ix.writer(codec=CompactCodec())``; readers find it
    in the segment (Whoosh pickles each segment's codec in the table of contents)."""

    TERMS_EXT = ".ctm"

    def per_document_writer(self, storage, segment):
        return CompactPerDocWriter(self, storage, segment)

    def field_writer(self, storage, segment):
        return CompactFieldWriter(self, storage, segment)

    def per_document_reader(self, storage, segment):
        return CompactPerDocReader(storage, segment)

    def postings_writer(self, dbfile, byteids=False):
        return CompactPostingsWriter(dbfile, blocklimit=self._blocklimit, byteids=byteids,
                                     compression=self._compression, inlinelimit=INLINE_MAX)

    def terms_reader(self, storage, segment):
        name = segment.make_filename(self.TERMS_EXT)
        return CompactTermsReader(self, storage.open_file(name), storage.file_length(name),
                                  segment.open_file(storage, self.POSTS_EXT))


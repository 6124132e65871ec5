"""The file formats under ``index.codec``: a sorted term table in front-coded blocks, and stored
fields compressed in blocks of documents; plus the varints both use. Plain byte formats over a
Whoosh ``StructFile`` (``write``/``tell``/``close`` to write, ``get(offset, length)`` to read, which
slices a segment's map without copying all of it); what goes in them is ``codec``'s business."""

from __future__ import annotations

import pickle
import struct
import zlib
from array import array
from bisect import bisect_right

BLOCK = 16
"""Keys per block of the term table: a lookup decodes at most this many (front coding gains
little past 16; a larger block is a longer scan)."""

MAGIC = b"CTM1"
STORED_MAGIC = b"CSF1"
STORED_EXT = ".sfb"
DOCS_PER_BLOCK = 32
"""Documents per compressed block of stored fields: 32 messages' fields (~6 kB) compress to about
a fifth; reading one decompresses its block."""
_FOOT = struct.Struct("<Q4s")


def varint(n: int, out: bytearray) -> None:
    """Append ``n`` (>= 0) to ``out`` as a little-endian base-128 varint."""
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def read_varint(buf, pos: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varint at ``buf[pos]``; raises ``IndexError`` when
    ``buf`` ends inside it."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    n, shift = b & 0x7F, 7
    while True:
        pos += 1
        b = buf[pos]
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos + 1
        shift += 7


def _write_tail(f, index, magic: bytes) -> None:
    """End a file at its current position: ``index`` (a protocol-5 pickle), where it starts, and
    ``magic``; close ``f``."""
    end = f.tell()
    f.write(pickle.dumps(index, 5))
    f.write(_FOOT.pack(end, magic))
    f.close()


def _read_tail(dbfile, length: int, magic: bytes, what: str):
    """The index :func:`_write_tail` left at the end of ``dbfile`` (``length`` bytes). Raises
    ``ValueError`` when the file does not end with ``magic`` (``what`` names the format)."""
    end, found = _FOOT.unpack(bytes(dbfile.get(length - _FOOT.size, _FOOT.size)))
    if found != magic:
        raise ValueError(f"not {what} (footer {found!r})")
    return pickle.loads(bytes(dbfile.get(end, length - _FOOT.size - end)))


def _entries(buf: bytes):
    """``(key, value start, value end)`` of each entry of a term table block, in order. (The
    one-byte varints, nearly all of them, are read in line: a lookup scans half a block.)"""
    pos, end, key = 0, len(buf), b""
    while pos < end:
        shared = buf[pos]
        if shared < 0x80:
            pos += 1
        else:
            shared, pos = read_varint(buf, pos)
        size = buf[pos]
        if size < 0x80:
            pos += 1
        else:
            size, pos = read_varint(buf, pos)
        key = key[:shared] + buf[pos:pos + size]
        pos += size
        size = buf[pos]
        if size < 0x80:
            pos += 1
        else:
            size, pos = read_varint(buf, pos)
        yield key, pos, pos + size
        pos += size


class DamagedBlock(ValueError):
    """A block of a crabsearch file whose bytes no longer match their checksum."""


class TermTableWriter:
    """Writes ``(key, value)`` pairs, keys in increasing byte order, to ``dbfile`` (a Whoosh
    ``StructFile``): blocks of :data:`BLOCK` front-coded entries (varint shared-prefix length,
    varint suffix length, suffix, varint value length, value), then the index (a protocol-5
    pickle of ``(fieldmap, the blocks' first keys joined, where each starts + end, block offsets +
    end, block CRC-32s)``, the numbers as ``array`` objects: it loads in one go, where a list of
    a large segment's first keys took milliseconds to unpickle), then the index's offset and
    :data:`MAGIC`. Raises ``ValueError`` on a key out of order."""

    def __init__(self, dbfile) -> None:
        self._f = dbfile
        self._block = bytearray()
        self._count = 0
        self._firsts: list[bytes] = []
        self._offsets: list[int] = []
        self._crcs: list[int] = []
        self._last: bytes | None = None
        self.fieldmap: dict[str, int] = {}

    def add(self, key: bytes, value: bytes) -> None:
        """Append one entry (``key`` greater than the last one added)."""
        last = self._last
        if last is not None and key <= last:
            raise ValueError(f"term table keys out of order: {key!r} after {last!r}")
        if self._count % BLOCK == 0:
            self._flush()
            self._firsts.append(key)
            self._offsets.append(self._f.tell())
            shared = 0
        else:
            shared, top = 0, min(len(key), len(last))
            while shared < top and key[shared] == last[shared]:
                shared += 1
        block = self._block
        varint(shared, block)
        varint(len(key) - shared, block)
        block += key[shared:]
        varint(len(value), block)
        block += value
        self._last = key
        self._count += 1

    def _flush(self) -> None:
        if self._block:
            data = bytes(self._block)
            self._f.write(data)
            self._crcs.append(zlib.crc32(data))
            self._block = bytearray()

    def close(self) -> None:
        """Write the last block, the index and the footer, and close the file."""
        self._flush()
        end = self._f.tell()
        code = "I" if end < 1 << 32 else "Q"  # both counts are below the file's size
        starts = array(code, [0])
        for key in self._firsts:
            starts.append(starts[-1] + len(key))
        _write_tail(self._f, (self.fieldmap, b"".join(self._firsts), starts, array(code, self._offsets + [end]),
                              array("I", self._crcs)), MAGIC)


class TermTable:
    """Reads what :class:`TermTableWriter` wrote: ``dbfile`` a Whoosh ``StructFile`` (its ``get``
    reads the segment's map without copying it all), ``length`` its size in bytes. Raises
    ``ValueError`` when the footer is not this format's, and :class:`DamagedBlock` when a block
    read does not match its CRC-32 (varints of damaged bytes would decode to wrong words without
    an error: the check makes damage a failed read, which the index then rebuilds from)."""

    def __init__(self, dbfile, length: int) -> None:
        self.dbfile = dbfile
        self.fieldmap, self._keys, self._starts, self._offsets, self._crcs = _read_tail(
            dbfile, length, MAGIC, "a crabsearch term table")
        self._blocks = range(len(self._starts) - 1)
        self._cache: dict[int, tuple[list[tuple[bytes, int, int]], bytes]] = {}

    def _first(self, b: int) -> bytes:
        """The first key of block ``b``."""
        return self._keys[self._starts[b]:self._starts[b + 1]]

    def _block_of(self, key: bytes) -> int:
        """The block that would hold ``key`` (-1 when it sorts before the first key)."""
        return bisect_right(self._blocks, key, key=self._first) - 1

    def _read(self, b: int) -> bytes:
        start = self._offsets[b]
        buf = bytes(self.dbfile.get(start, self._offsets[b + 1] - start))
        if zlib.crc32(buf) != self._crcs[b]:
            raise DamagedBlock(f"term table block {b} at {start} does not match its checksum")
        return buf

    def block(self, b: int) -> tuple[list[tuple[bytes, int, int]], bytes]:
        """Block ``b``: its entries (:func:`_entries`) and its bytes; the last blocks read are
        kept (a prefix's words are read block after block)."""
        hit = self._cache.get(b)
        if hit is not None:
            return hit
        buf = self._read(b)
        if len(self._cache) > 256:
            self._cache.clear()
        hit = self._cache[b] = (list(_entries(buf)), buf)
        return hit

    def value(self, key: bytes) -> tuple[bytes, int] | None:
        """``(block bytes, start of the value)`` for ``key``, or None when it is absent. Scans
        the key's block from its start and stops at the key or past it (a lookup is usually of
        a block not read before: decoding it whole cost 5x more)."""
        b = self._block_of(key)
        if b < 0:
            return None
        buf = self._read(b)
        for cur, start, _ in _entries(buf):
            if cur >= key:
                return (buf, start) if cur == key else None
        return None

    def items_from(self, key: bytes):
        """``(key, block bytes, value start)`` for every key >= ``key``, in order."""
        for i in range(max(0, self._block_of(key)), len(self._blocks)):
            entries, buf = self.block(i)
            for k, start, _ in entries:
                if k >= key:
                    yield k, buf, start

    @property
    def block_count(self) -> int:
        """How many blocks of keys the table holds."""
        return len(self._blocks)


class StoredBlocksWriter:
    """Writes each document's stored fields (bytes, in document order) to ``dbfile`` in
    zlib-compressed blocks of :data:`DOCS_PER_BLOCK` documents (each document's bytes after its
    varint length), then the blocks' offsets (a protocol-5 pickle of an ``array``), its offset and
    :data:`STORED_MAGIC`. A block compresses what documents repeat (field names, session key,
    agent, role), which Whoosh's one-stream-per-document column could not."""

    def __init__(self, dbfile) -> None:
        self._f = dbfile
        self._buf = bytearray()
        self._n = 0
        self._offsets: list[int] = []

    def add(self, raw: bytes) -> None:
        """The next document's stored bytes (empty for none)."""
        varint(len(raw), self._buf)
        self._buf += raw
        self._n += 1
        if self._n % DOCS_PER_BLOCK == 0:
            self._flush()

    def _flush(self) -> None:
        if self._n > len(self._offsets) * DOCS_PER_BLOCK:
            self._offsets.append(self._f.tell())
            self._f.write(zlib.compress(bytes(self._buf), 6))
            self._buf = bytearray()

    def close(self) -> None:
        """Write the last block, the offsets and the footer, and close the file."""
        self._flush()
        end = self._f.tell()
        _write_tail(self._f, array("I" if end < 1 << 32 else "Q", self._offsets + [end]), STORED_MAGIC)


class StoredBlocks:
    """Reads what :class:`StoredBlocksWriter` wrote (``dbfile`` a Whoosh ``StructFile``,
    ``length`` its size); keeps the last few decompressed blocks (a search reads the stored
    fields of a hit and of its neighbours). Raises ``ValueError`` on another format's footer."""

    def __init__(self, dbfile, length: int) -> None:
        self.dbfile = dbfile
        self._offsets = _read_tail(dbfile, length, STORED_MAGIC, "crabsearch stored-field blocks")
        self._cache: dict[int, list[bytes]] = {}

    def get(self, docnum: int) -> bytes:
        """Document ``docnum``'s stored bytes (empty when it stored nothing). Raises
        ``IndexError`` past the last document."""
        b, i = divmod(docnum, DOCS_PER_BLOCK)
        docs = self._cache.get(b)
        if docs is None:
            start, stop = self._offsets[b], self._offsets[b + 1]
            buf = zlib.decompress(bytes(self.dbfile.get(start, stop - start)))
            docs, pos = [], 0
            while pos < len(buf):
                size, pos = read_varint(buf, pos)
                docs.append(buf[pos:pos + size])
                pos += size
            if len(self._cache) >= 16:
                self._cache.pop(next(iter(self._cache)))
            self._cache[b] = docs
        return docs[i]

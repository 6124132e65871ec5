"""Block tables: the block headers of a long posting list, read once per segment.

Whoosh stores a term's postings as blocks of up to 128 documents, each after a small header
(its length, highest document number, highest weight, shortest field length, ...). The header
is the only way to the next block, so passing over a block (block-max pruning in
``union.scores``, ``skip_to`` inside an ``And``) still reads and unpickles its header,
and a common word at a million messages has thousands of blocks per field (``the`` read
thousands of headers per search at 6 GB, a large share of its time). A segment never changes once
written, so the headers of a list are read once into a :class:`BlockTable`, kept with the
segment's postings file, and the next search picks the blocks it needs from plain lists: the
kept blocks by their bound (a list comprehension over the qualities), the next block holding a
document by bisection over the highest ids.

Only lists of at least :data:`TABLE_MIN_BYTES` get a table (a short list is read whole anyway);
at most :data:`TABLES_KEPT` per segment are kept (the oldest is dropped first).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from whoosh.codec.whoosh3 import W3LeafMatcher, byte_to_length
from whoosh.system import _INT_SIZE

TABLE_MIN_BYTES = 16 * 1024
"""A posting list of at least this many bytes (about 30 blocks) gets a block table."""

TABLES_KEPT = 512
"""Block tables kept per segment (about 100 bytes per block: a few MB at most)."""


class BlockTable:
    """The headers of one posting list's blocks, in order: ``heads[j]`` is ``(next offset, data
    offset, number of postings, highest id, highest weight, compression, shortest field length,
    longest field length, last)`` as ``W3LeafMatcher._goto`` reads them; ``maxids[j]`` the block's
    highest document number (increasing). Qualities (``scorer._score(highest weight, shortest
    length)``, Whoosh's ``block_quality``) are computed once per scorer."""

    __slots__ = ("heads", "maxids", "_scorer", "_quals")

    def __init__(self, heads: list[tuple]) -> None:
        self.heads = heads
        self.maxids = [h[3] for h in heads]
        self._scorer = None
        self._quals: list[float] = []

    def qualities(self, scorer) -> list[float]:
        """Each block's quality under ``scorer`` (a BM25F scorer of one searcher), before any
        boost: what ``W3LeafMatcher.block_quality()`` returns on that block."""
        if scorer is not self._scorer:
            score = scorer._score
            self._quals = [score(h[4], h[6]) for h in self.heads]
            self._scorer = scorer
        return self._quals

    def enter(self, m: W3LeafMatcher, j: int) -> None:
        """Put ``m`` on block ``j``'s first posting, as ``m._goto`` would, without reading the
        header again."""
        (m._nextoffset, m._dataoffset, m._blocklength, m._maxid, m._maxweight, m._compression,
         m._minlength, m._maxlength, m._lastblock) = self.heads[j]
        m._data = m._ids = m._weights = m._values = None
        m._i = 0
        m._atend = False

    def skip_to(self, m: W3LeafMatcher, target: int) -> None:
        """Move ``m`` (on a block whose highest id is below ``target``) to the first block
        whose highest id reaches ``target``, or to its end."""
        j = bisect_left(self.maxids, target)
        if j == len(self.maxids):
            m._atend = True
        else:
            self.enter(m, j)

    def blocks(self, m: W3LeafMatcher, below: float | None, wanted: list[int] | None, values: bool):
        """``union.posting_blocks`` for ``m`` from its current posting: ``(ids, weights or
        values)`` of each block whose quality reaches ``below`` (None: every block) and whose id
        range holds one of ``wanted`` (sorted document numbers; None: any). ``m`` is used up."""
        if not m.is_active():
            return
        maxids = self.maxids
        here = bisect_left(maxids, m._maxid)
        if below is None:
            order = range(here, len(maxids))
        else:
            quals = self.qualities(m.scorer)
            order = [j for j in range(here, len(maxids)) if quals[j] >= below]
        for j in order:
            if wanted is not None:
                k = bisect_right(wanted, maxids[j - 1] if j else -1)
                if k == len(wanted):
                    break
                if wanted[k] > maxids[j]:
                    continue
            if j != here:
                self.enter(m, j)
            yield block_rest(m, values)
        m._atend = True


def block_rest(m: W3LeafMatcher, values: bool) -> tuple:
    """``(ids, weights)`` (``values``: ``(ids, values)``) of ``m``'s current block from its
    current posting on, read from the block's data when not read yet."""
    if m._ids is None:
        m._read_ids()
    if values:
        if m._values is None:
            m._read_values()
        second = m._values
    else:
        if m._weights is None:
            m._read_weights()
        second = m._weights
    i = m._i
    return (m._ids[i:] if i else m._ids), (second[i:] if i else second)


def table_of(m: W3LeafMatcher) -> BlockTable | None:
    """The block table of ``m``'s posting list (read now if it is not kept yet), or None for a
    list shorter than :data:`TABLE_MIN_BYTES` or a postings file that cannot keep one."""
    length = m._length  # Whoosh's own term table gives a 1-tuple (``unpack_int``): a merged segment
    if (length[0] if type(length) is tuple else length) < TABLE_MIN_BYTES:
        return None
    kept = getattr(m._postfile, "__dict__", None)
    if kept is None:
        return None
    tables = kept.get("_crab_blocks")
    if tables is None:
        tables = kept["_crab_blocks"] = {}
    table = tables.get(m._startoffset)
    if table is None:
        if len(tables) >= TABLES_KEPT:
            del tables[next(iter(tables))]
        table = tables[m._startoffset] = BlockTable(_read_heads(m._postfile, m._baseoffset))
    return table


def _read_heads(postfile, position: int) -> list[tuple]:
    """Every block header of the posting list whose first block is at ``position``."""
    heads = []
    while True:
        postfile.seek(position)
        length = postfile.read_int()
        last = length < 0
        nextoffset = position + _INT_SIZE + abs(length)
        blocklength, maxid, maxweight, compression, mnlen, mxlen = postfile.read_pickle()
        heads.append((nextoffset, postfile.tell(), blocklength, maxid, maxweight, compression,
                      byte_to_length(mnlen), byte_to_length(mxlen), last))
        if last:
            return heads
        position = nextoffset

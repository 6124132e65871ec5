"""The index writer's posting pool: a batch's postings held in arrays until its commit.

Whoosh's ``SegmentWriter`` keeps every posting of a batch as a tuple ``(field, term bytes,
docnum, weight, value bytes)`` in a list (``writing.PostingPool``), about 200 bytes a posting
(5.9 million postings at 1 GB of transcripts), sorts the whole list at the commit, and past
``limitmb`` (128 MB by its own estimate) pickles sorted runs to temporary files and merges them
back, a pickle per posting (``bench/results/history.md``, 2026-12-03). So the build committed
small batches, and each batch is a segment: 16 segments at 1 GB, and every search pays a share
of its time per segment.

:class:`CompactPool` holds the same postings in flat arrays (document number, weight, the end
of its value bytes, and a link to the previous posting of the same term: 20 bytes and the value
bytes), so a batch of several times as many messages fits in less memory than Whoosh's pool
took, and never goes to disk. Postings come out in Whoosh's order, exactly: terms sorted by
``(field, term bytes)``, and a term's postings in document order (the order they are added in;
a term whose postings did not come in increasing document number has its postings sorted as
Whoosh's tuples would be). A merge of other segments into the batch (the merge policy) goes
through Whoosh's pool again (:func:`spill_for_merge`): it can hold the whole index, and Whoosh's
writes to disk past its limit. ``tests/test_pool.py`` checks both pools give the same postings
and the same segments' scores.
"""

from __future__ import annotations

from array import array
from typing import Iterator

MERGE_LIMIT_MB = 128
"""Whoosh's ``limitmb`` for the pool a merge's postings go through (:func:`spill_for_merge`)."""


class CompactPool:
    """Whoosh's posting pool interface (``add``, ``iter_postings``, ``cleanup``) over arrays.

    ``add((fieldname, tbytes, docnum, weight, vbytes))`` takes a posting as Whoosh's
    ``SegmentWriter`` makes it (``vbytes`` may be None); :meth:`iter_postings` gives them back
    as such tuples, sorted as ``sorted()`` would sort the tuples. Install it on a new writer
    with :func:`use_compact_pool`. Memory: per posting 20 bytes plus its value bytes, per
    distinct ``(field, term)`` its term bytes and a dict entry; nothing is written to disk."""

    def __init__(self) -> None:
        self._last: dict[str, dict[bytes, int]] = {}
        """Per field, term bytes -> index of its last posting added (a dict per field: no key
        tuple per term)."""
        self._prev = array("i")
        """Per posting, the index of the previous posting of its term, -1 for the first."""
        self._docs = array("i")
        self._weights = array("d")
        self._ends = array("I")
        """Per posting, the end of its value bytes in ``_values`` (it starts at the one before's)."""
        self._values = bytearray()
        self._none: set[int] = set()
        """Postings whose value bytes are None (a field format without values)."""
        self._unordered: set[tuple[str, bytes]] = set()
        """Terms whose postings did not come in increasing document number."""

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, item: tuple) -> None:
        """Add one posting ``(fieldname, tbytes, docnum, weight, vbytes)``."""
        fieldname, tbytes, docnum, weight, vbytes = item
        terms = self._last.get(fieldname)
        if terms is None:
            terms = self._last[fieldname] = {}
        i = len(self._docs)
        last = terms.get(tbytes, -1)
        if last >= 0 and docnum <= self._docs[last]:
            self._unordered.add((fieldname, tbytes))
        terms[tbytes] = i
        self._prev.append(last)
        self._docs.append(docnum)
        self._weights.append(weight)
        if vbytes is None:
            self._none.add(i)
        else:
            self._values += vbytes
        self._ends.append(len(self._values))

    def iter_postings(self) -> Iterator[tuple]:
        """Every posting as ``(fieldname, tbytes, docnum, weight, vbytes)``, in the order of
        ``sorted()`` over those tuples (Whoosh's ``PostingPool.iter_postings``)."""
        values = bytes(self._values)
        self._values = bytearray()
        prev, docs, weights, ends, none = self._prev, self._docs, self._weights, self._ends, self._none
        for fieldname in sorted(self._last):
            terms = self._last[fieldname]
            for tbytes in sorted(terms):
                chain = []
                i = terms[tbytes]
                while i >= 0:
                    chain.append(i)
                    i = prev[i]
                chain.reverse()
                items = ((fieldname, tbytes, docs[i], weights[i],
                          None if i in none else values[ends[i - 1] if i else 0:ends[i]]) for i in chain)
                if (fieldname, tbytes) in self._unordered:
                    items = sorted(items)
                yield from items

    def cleanup(self) -> None:
        """Free the postings (Whoosh calls it when the segment is closed or the writer cancelled)."""
        self.__init__()


def use_compact_pool(writer) -> None:
    """Give a new Whoosh ``SegmentWriter`` (nothing added yet) a :class:`CompactPool` in place of
    its ``PostingPool`` (which has written nothing to disk yet). Raises ``ValueError`` when the
    writer already holds postings."""
    old = writer.pool
    if getattr(old, "current", None) or getattr(old, "runs", None):
        raise ValueError("use_compact_pool: the writer already holds postings")
    old.cleanup()
    writer.pool = CompactPool()


def spill_for_merge(writer) -> None:
    """Before a merge adds other segments' postings to ``writer`` (``add_reader``): move the
    batch's postings from its :class:`CompactPool` into Whoosh's ``PostingPool``, which writes
    sorted runs to disk past :data:`MERGE_LIMIT_MB`. A merge can take every segment of the
    index (Whoosh's ``MERGE_SMALL`` merged 26 segments of 40,000 messages, a million messages,
    at 6 GB): held in memory, its postings took 1.7 GB. Nothing to do when the writer's pool is
    Whoosh's already."""
    from whoosh.writing import PostingPool

    pool = writer.pool
    if not isinstance(pool, CompactPool):
        return
    spilling = PostingPool(writer._tempstorage, writer.newsegment, limitmb=MERGE_LIMIT_MB)
    for item in pool.iter_postings():
        spilling.add(item)
    pool.cleanup()
    writer.pool = spilling

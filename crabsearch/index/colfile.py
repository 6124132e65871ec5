"""Per-document columns of a segment in one compact file, read in one go.

A search needs each document's session key (``skey``), ``updated`` time and message index
(``idx``) for every segment it touches (``collect.SegmentKeys``). Whoosh stores ``skey`` as a
variable-bytes column decoded one document at a time in Python, slow for a large segment at
every process start (a ``crabsearch search`` is a new process each time). So after each commit
the writer also writes, per segment, ``crabsearch-cols-<segment id>``:

* ``b"CSC1"``, then little-endian ``uint32`` document count ``n`` and distinct key count ``k``;
* ``k`` keys, each ``uint32`` byte length + UTF-8 bytes;
* ``n`` ``uint32`` key numbers (the document's key, by position in the key list);
* ``n`` ``int64`` ``updated`` (ms, 0 when unset) and ``n`` ``int32`` ``idx`` (-1 when unset).

Reading it is one ``read`` and three ``array.frombytes``. A segment's columns never change
(Whoosh writes a segment once; deletions do not touch columns), so the file is written once per
segment and removed with it. A missing, short or mismatched file (its count is not the
segment's) is ignored and the columns are read from Whoosh as before: the file is a cache,
never the truth.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from pathlib import Path

from ..paths import PRIVATE_FILE, write_atomically

PREFIX = "crabsearch-cols-"
MAGIC = b"CSC1"
_HEAD = struct.Struct("<4sII")


def path_for(directory: Path | str, segment_id: str) -> Path:
    """Where the column file of segment ``segment_id`` in index directory ``directory`` lives."""
    return Path(directory) / f"{PREFIX}{segment_id}"


def _native(a: array) -> array:
    if sys.byteorder != "little":  # pragma: no cover - the file is little-endian
        a.byteswap()
    return a


def encode(keys: list[str], updated: list[int], indexes: list[int]) -> bytes:
    """The file's bytes for per-document ``keys``, ``updated`` and ``indexes`` (equal lengths)."""
    number: dict[str, int] = {}
    nums = array("I", (number.setdefault(k, len(number)) for k in keys))
    parts = [_HEAD.pack(MAGIC, len(keys), len(number))]
    for k in number:
        raw = k.encode("utf-8", "surrogatepass")
        parts += [struct.pack("<I", len(raw)), raw]
    for a in (nums, array("q", updated), array("i", indexes)):
        parts.append(_native(a).tobytes())
    return b"".join(parts)


def decode(data: bytes, docs: int) -> tuple[list[str], array, array] | None:
    """``(keys per document, updated, indexes)`` from a file's bytes, or None when they are not
    a column file of ``docs`` documents (wrong magic, count or length)."""
    try:
        magic, n, k = _HEAD.unpack_from(data, 0)
        if magic != MAGIC or n != docs:
            return None
        pos = _HEAD.size
        names = []
        for _ in range(k):
            (size,) = struct.unpack_from("<I", data, pos)
            pos += 4
            names.append(data[pos:pos + size].decode("utf-8", "surrogatepass"))
            pos += size
        if len(data) != pos + n * (4 + 8 + 4):
            return None
        nums, updated, indexes = array("I"), array("q"), array("i")
        for a, width in ((nums, 4), (updated, 8), (indexes, 4)):
            a.frombytes(data[pos:pos + n * width])
            _native(a)
            pos += n * width
        keys = list(map(names.__getitem__, nums))
    except (struct.error, UnicodeDecodeError, IndexError, ValueError):
        return None
    return keys, updated, indexes


def load(directory: Path | str, segment_id: str, docs: int) -> tuple[list[str], array, array] | None:
    """The columns of segment ``segment_id`` (``docs`` documents, deleted ones included) from its
    file in ``directory``; None when there is no usable file."""
    try:
        with open(path_for(directory, segment_id), "rb") as f:
            data = f.read()
    except OSError:
        return None
    return decode(data, docs)


def write_all(directory: Path, ix) -> None:
    """After a commit: write the column file of every segment of ``ix`` (in ``directory``) that
    has none, and remove those of segments that are gone. Errors are ignored (searches then read
    Whoosh's columns)."""
    try:
        segments = ix._read_toc().segments
        live = {PREFIX + seg.segment_id() for seg in segments}
        for name in os.listdir(directory):
            if name.startswith(PREFIX) and name not in live and not name.endswith(".tmp"):
                try:
                    os.unlink(Path(directory) / name)
                except OSError:
                    pass
        missing = [seg for seg in segments if not path_for(directory, seg.segment_id()).exists()]
        if not missing:
            return
        storage = ix.storage
        for seg in missing:
            from whoosh.reading import SegmentReader

            reader = SegmentReader(storage, ix.schema, seg)
            try:
                n = reader.doc_count_all()
                keys = [(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)
                        for raw in reader.column_reader("skey")]
                updated = list(reader.column_reader("updated"))
                indexes = (list(reader.column_reader("idx")) if reader.has_column("idx")
                           else list(range(n)))
            finally:
                reader.close()
            if len(keys) == len(updated) == len(indexes) == n:
                # Not synced: the file can always be made again from the segment. The temporary
                # file's name starts like the column file's (layout.owned knows it; the cleanup
                # above leaves .tmp files alone).
                write_atomically(path_for(directory, seg.segment_id()), [encode(keys, updated, indexes)],
                                 mode=PRIVATE_FILE, sync=False, hidden=False)
    except Exception:  # noqa: BLE001 - a cache: a failure only costs the next search the slow read
        return

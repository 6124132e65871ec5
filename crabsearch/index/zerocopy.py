"""Whoosh reads segments through mmap, but wraps each mapped sub-file in a ``BytesIO``, which
copies it: opening a reader copied every segment's postings and term index into memory (470 MB
for a 1 GB corpus's index, twice the time to open it). This module replaces the wrapper, for the
pinned whoosh-reloaded 2.7.5, with one that reads the map in place: memory stays at the pages the
OS keeps cached, and searches keep mmap's speed (plain file reads were 1.5x slower).

Importing the module installs it (``crabsearch.index.store`` does); nothing else changes.
"""

from __future__ import annotations

import whoosh.filedb.compound as _compound
from whoosh.filedb.structfile import BufferFile


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


_compound.BufferFile = ViewBufferFile

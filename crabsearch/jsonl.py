"""Reading JSONL transcripts as bytes: records with their byte offsets, and single records by offset.

Rules (from ``shared/reference/formats.md`` section 0):

* Lines are split on ``\\n`` only (a ``\\r`` or U+2028 inside a line is data).
* A broken line, or one that is not a JSON object, is skipped and counted (with its byte offset,
  :class:`LineStats`), never fatal; so is a record a reader cannot handle (``sources/base.py``).
* A last line without ``\\n`` that does not parse is *pending*: not yielded, and ``end_offset`` stays
  before it (the agent may still be writing it). One that parses is yielded with
  ``complete=False``; ``end_offset`` still stays before it, so it is read again when the file grows.
* Lines longer than ``max_line`` bytes are skipped without ever being held in memory.
* Bad UTF-8 and lone surrogates become U+FFFD.
* A UTF-8 byte order mark at the start of a line (an editor or ``Out-File`` on Windows wrote the
  file) is ignored; offsets and lengths still cover the whole line, BOM included.
* Files are opened read-only, and only regular files (``crabsearch.files``: a FIFO or a device
  put in a transcript's place is refused with an ``OSError``, never read or waited on); nothing
  here writes.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterator

from .files import open_file, read_at, read_file

try:  # orjson is 3-4x faster than json on transcript lines (engineering.md 6.2)
    import orjson

    def _loads(raw: bytes):
        return orjson.loads(raw)

    _DecodeErrors: tuple[type[Exception], ...] = (orjson.JSONDecodeError, UnicodeDecodeError, ValueError)
except ImportError:  # pragma: no cover - platforms without an orjson wheel
    import json

    def _loads(raw: bytes):
        return json.loads(raw)

    _DecodeErrors = (ValueError, UnicodeDecodeError, RecursionError)

import json as _json

MAX_LINE = 16 * 1024 * 1024
"""Lines longer than this many bytes are skipped (a 10 MB base64 screenshot still fits)."""

CHUNK = 1024 * 1024

BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark, stripped from the start of a line before parsing."""


def loads(raw: bytes):
    """Parse one JSON document from bytes, replacing bad UTF-8 and lone surrogates with U+FFFD.

    A leading UTF-8 byte order mark is ignored. Raises ``ValueError`` when the bytes are not JSON
    (also for nesting too deep to parse: deeper than :data:`MAX_DEPTH`, or than Python's own
    parser reaches); never ``RecursionError``.
    """
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    try:
        return _loads(raw)
    except _DecodeErrors:
        pass
    # Slow path: invalid UTF-8 or escaped lone surrogates, which orjson rejects.
    text = raw.decode("utf-8", errors="replace")
    try:
        obj = _json.loads(text)  # raises ValueError (JSONDecodeError) when it is not JSON at all
    except RecursionError as exc:  # absurdly deep nesting: a broken line, not a crash
        raise ValueError("JSON nested too deeply") from exc
    return scrub(obj)


_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_DEPTH = 1024
"""JSON values nested deeper than this are broken lines (orjson's own limit, so a line reads the
same with or without a lone surrogate in it)."""


def scrub(obj):
    """Replace lone surrogates in every string of a parsed JSON value with U+FFFD.

    Walks the value with an explicit stack (never a ``RecursionError``). Raises ``ValueError``
    when it is nested deeper than :data:`MAX_DEPTH`: the caller skips the line as broken JSON.
    """
    if not isinstance(obj, (list, dict)):
        return _scrub_str(obj) if isinstance(obj, str) else obj
    root: list = [obj]
    # (container to fill, its source items, depth); a filled list or dict replaces its source
    stack: list = [(root, 0, obj, 1)]
    while stack:
        parent, slot, src, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError("JSON nested too deeply")
        if isinstance(src, list):
            out: list | dict = list(src)
            items = enumerate(src)
        else:
            out = {}
            items = ((_scrub_str(k) if isinstance(k, str) else k, v) for k, v in src.items())
        for k, v in items:
            if isinstance(v, str):
                out[k] = _scrub_str(v)
            elif isinstance(v, (list, dict)):
                out[k] = None  # keeps the key's place; filled when its value is scrubbed
                stack.append((out, k, v, depth + 1))
            else:
                out[k] = v
        parent[slot] = out
    return root[0]


def _scrub_str(s: str) -> str:
    return _SURROGATE.sub("\ufffd", s) if _has_surrogate(s) else s


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


@dataclass(slots=True)
class Record:
    """One parsed JSONL line: ``obj`` (a dict), its byte span, and whether it ended with ``\\n``."""

    obj: dict
    offset: int
    length: int
    complete: bool = True


PLACES_KEPT = 5
"""Skipped records whose place and reason a scan keeps (the first ones), for ``crabsearch status``."""


@dataclass
class LineStats:
    """What a scan saw. ``end_offset`` is the byte offset after the last complete line read;
    ``skipped`` counts broken, non-object and oversized lines, and records a reader could not
    handle; ``reasons`` counts them by reason; ``places`` keeps the first :data:`PLACES_KEPT` as
    ``(where, reason)``: ``where`` is the byte offset of the line in the file, a string naming the
    place in a unit that is not lines (``row 12``), or None; ``pending`` is True when the file
    ends in an unterminated line that does not parse yet."""

    end_offset: int = 0
    skipped: int = 0
    oversized: int = 0
    pending: bool = False
    reasons: dict[str, int] = field(default_factory=dict)
    places: list[tuple[int | str | None, str]] = field(default_factory=list)

    def skip(self, reason: str, where: int | str | None = None, detail: str | None = None) -> None:
        """Count one skipped line or record under ``reason``; its place is ``where`` (a byte
        offset of a line, or a description) and ``detail`` (default ``reason``) says why there."""
        self.skipped += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if len(self.places) < PLACES_KEPT:
            self.places.append((where, detail or reason))


def iter_records(path: str, start: int = 0, stats: LineStats | None = None,
                 max_line: int = MAX_LINE) -> Iterator[Record]:
    """Yield the JSON-object lines of ``path`` from byte ``start``, streaming in 1 MiB chunks.

    ``stats`` (updated in place) receives ``end_offset``, skip counts (with the byte offsets of the
    first lines skipped) and the pending flag; a bad line is skipped, never fatal.
    Memory stays bounded by ``max_line`` + one chunk whatever the file size.
    Raises ``OSError`` when the file cannot be opened (``files.NotRegularFile`` when it is not a
    regular file).
    """
    if stats is None:
        stats = LineStats()
    stats.end_offset = start
    with open_file(path) as fh:
        fh.seek(start)
        pos = start  # file offset of buf[0]
        buf = b""
        dropping = False  # inside an oversized line: discard until the next newline
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            if dropping:
                nl = chunk.find(b"\n")
                if nl < 0:
                    pos += len(chunk)
                    continue
                pos += nl + 1
                chunk = chunk[nl + 1:]
                dropping = False
                stats.end_offset = pos
            buf += chunk
            lo = 0
            while True:
                nl = buf.find(b"\n", lo)
                if nl < 0:
                    break
                line_len = nl - lo
                if line_len > max_line:
                    stats.oversized += 1
                    stats.skip("oversized line", pos + lo)
                else:
                    rec = _parse(buf, lo, nl, pos + lo, stats, True)
                    if rec is not None:
                        yield rec
                lo = nl + 1
                stats.end_offset = pos + lo
            buf = buf[lo:]
            pos += lo
            if len(buf) > max_line:
                stats.oversized += 1
                stats.skip("oversized line", pos)
                pos += len(buf)
                buf = b""
                dropping = True
        if dropping:
            # An oversized last line without newline: it may still be being written.
            stats.pending = True
            return
        if buf.removeprefix(BOM).strip():
            rec = _parse(buf, 0, len(buf), pos, stats, False)
            if rec is not None:
                yield rec
            else:
                stats.pending = True


def _parse(buf: bytes, lo: int, hi: int, offset: int, stats: LineStats, complete: bool) -> Record | None:
    raw = buf[lo:hi]
    if not raw.removeprefix(BOM).strip():
        return None
    try:
        obj = loads(raw)
    except ValueError:
        if complete:
            stats.skip("broken JSON", offset)
        return None
    if not isinstance(obj, dict):
        if complete:  # an unterminated `42` may be the start of a longer line: pending, not counted
            stats.skip("not a JSON object", offset)
        return None
    return Record(obj, offset, hi - lo, complete)


def read_record(path: str, offset: int, length: int) -> dict | None:
    """Read and parse the single record at ``offset`` (``length`` bytes) with one ``pread``.

    Returns None when the bytes there are no longer a JSON object (the file was rewritten since it
    was indexed). Raises ``OSError`` when the file cannot be read (``files.NotRegularFile`` when
    it is not a regular file).
    """
    raw = read_at(path, offset, length)
    try:
        obj = loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def lines_at(path: str, offsets: list[int]) -> dict[int, tuple[int, int]]:
    """``{offset: (1-based line number, length in bytes)}`` of the lines of ``path`` that start at
    byte ``offsets`` (a skipped line's place): the newlines before it counted, then the line read
    to its ``\n`` (the length leaves it out) or to the end of the file, :data:`CHUNK` at a time,
    never held whole. An offset past the end, or inside a line measured before it, gets nothing.
    Reads up to the end of the last line asked for; raises ``OSError`` when the file cannot be
    read (``files.NotRegularFile`` when it is not a regular file)."""
    out: dict[int, tuple[int, int]] = {}
    pos = newlines = 0  # the next byte to read; the newlines before it
    with open_file(path) as fh:
        for off in sorted({o for o in offsets if o >= 0}):
            if off < pos:
                continue
            fh.seek(pos)
            while pos < off:
                chunk = fh.read(min(CHUNK, off - pos))
                if not chunk:
                    return out
                newlines += chunk.count(b"\n")
                pos += len(chunk)
            length, ended = 0, False
            while not ended:
                chunk = fh.read(CHUNK)
                nl = chunk.find(b"\n")
                ended = nl >= 0 or not chunk
                length += nl if nl >= 0 else len(chunk)
            out[off] = (newlines + 1, length)
            pos = off + length + (1 if nl >= 0 else 0)
            newlines += 1 if nl >= 0 else 0
    return out


WHOLE_FILES_CACHED = 4
"""Parsed whole-file JSON transcripts kept by :func:`read_whole` (windows and pages read one
message at a time; a whole-file format would otherwise be parsed once per message)."""
_WHOLE: "OrderedDict[tuple[str, int, int], object]" = OrderedDict()


def read_whole(path: str) -> tuple[object, int]:
    """``(parsed JSON value, or None when the file is not JSON; its size in bytes)`` of a whole
    JSON file (Gemini's legacy chats, Cline tasks), from a small LRU keyed by
    ``(path, mtime_ns, size)`` so a rewritten file is parsed again. Raises ``OSError``
    (``files.NotRegularFile`` when it is not a regular file)."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key in _WHOLE:
        _WHOLE.move_to_end(key)
        return _WHOLE[key], st.st_size
    raw = read_file(path)
    try:
        data = loads(raw)
    except ValueError:
        data = None
    _WHOLE[key] = data
    while len(_WHOLE) > WHOLE_FILES_CACHED:
        _WHOLE.popitem(last=False)
    return data, len(raw)

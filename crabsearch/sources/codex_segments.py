"""Codex rollout segments: the history a rotation moved out of a thread's live rollout.

openai/codex ``codex-rs/thread-store/src/local/segment_writer.rs`` (at 848575dc0d9f, on main,
not yet in a release) rotates a live rollout: the whole file is copied to an immutable segment
``$CODEX_HOME/<rotated segments dir>/<thread id>/<segment id or "initial">/<rollout file name>``
and the canonical file is replaced by a new one holding the thread's ``session_meta``, then a
``rollout_reference`` line (``RolloutReferenceItem {rollout_path, thread_id, rollout_timestamp,
segment_id, max_depth, nth_user_message, compacted_replacement_history_filter_texts}``), then what
is appended afterwards; the new file is written whole beside it and renamed over it
(``create_staged_rollout_path``, ``persist``), so a rollout's head is never seen without its
reference, and a rotation rewrites the file's head (the index reads it again from the start). A
segment is itself such a file, so segments chain (each one's reference names the one before it).
``segment_writer_tests.rs`` checks that the segment holds what was said before the rotation and
the canonical file what came after, and that another thread can reference a segment (a fork:
``deletion_collects_segments_after_the_last_reference``).

Rules here:

* A ``rollout_reference`` among the first :data:`HEAD_LINES` lines of a rollout whose
  ``thread_id`` is the rollout's own thread (or absent) names the segment that precedes it; one
  naming another thread is a fork's copy of that thread's history, indexed with that thread,
  not followed.
* The segment is found where the reference says (``rollout_path``, or its ``.zst``), else, when the
  Codex home moved, at ``<codex home>/<any folder>/<thread id>/<segment key>/<file name>`` (Codex's
  own ``resolve_rollout_reference_path`` looks in its rotated-segments folder and
  ``archived_sessions`` with that layout); a candidate whose first ``session_meta`` names another
  thread is not it. Chains are followed oldest-first, at most :data:`MAX_SEGMENTS` deep, each file
  once.
* Segments are never discovered as sessions of their own (:func:`is_segment`): they are read as
  the start of their thread's session.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterator

from ..jsonl import LineStats, Record
from .base import string

HEAD_LINES = 16
"""Lines of a rollout's head searched for its ``rollout_reference`` (Codex writes it second)."""
MAX_SEGMENTS = 64
"""Segments followed back from one rollout (a longer chain is cut, counted as missing)."""
SEGMENT_BASE = 1 << 50
"""A message read from the k-th segment (oldest first, from 1) of a rollout is stored at offset
``k * SEGMENT_BASE + its offset in the segment``: offsets below it are the rollout's own."""
REFERENCE = "rollout_reference"

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def thread_of_name(path: Path) -> str | None:
    """The thread uuid at the end of a rollout's file name, or None."""
    found = _UUID.findall(path.name)
    return found[-1] if found else None


def is_segment(path: Path) -> bool:
    """True for a rollout at ``.../<thread id>/<segment key>/rollout-...-<thread id>.jsonl[.zst]``:
    a segment (module docstring), read through the rollout that references it."""
    tid = thread_of_name(path)
    return bool(tid) and path.parent.parent.name.lower() == tid.lower()


class Chain:
    """The segments before a rollout, oldest first (``paths``), and what could not be found
    (``missing``: descriptions, for the skip counts)."""

    def __init__(self, paths: list[Path], missing: list[str]):
        self.paths = paths
        self.missing = missing


def segment_chain(path: Path, root: Path | None, head: Callable[[Path], Iterator[Record]]) -> Chain:
    """The :class:`Chain` of rollout ``path`` (module docstring). ``root`` is its Codex home;
    ``head(p)`` yields the first records of rollout ``p`` (plain or compressed). Never raises:
    an unreadable segment is missing."""
    thread, ref = _head_facts(path, head)
    paths: list[Path] = []
    missing: list[str] = []
    seen = {str(path)}
    while thread and ref is not None:
        if len(paths) >= MAX_SEGMENTS:
            missing.append(f"segments past {MAX_SEGMENTS}")
            break
        found = _resolve(ref, root, thread, head)
        if found is None or str(found) in seen:
            missing.append(f"segment {string(ref.get('rollout_path')) or '?'}")
            break
        seen.add(str(found))
        paths.append(found)
        ref = _head_facts(found, head)[1]
    return Chain(paths[::-1], missing)


def segment_records(chain: Chain, records: Callable[[Path, LineStats], Iterator[Record]],
                    stats: LineStats) -> Iterator[Record]:
    """Every record of the chain's segments, oldest first, at their stored offsets
    (:data:`SEGMENT_BASE`), each complete (a segment never grows). Lines skipped in a segment
    and segments that cannot be found or read are counted in ``stats`` (not its ``end_offset``)."""
    for reason in chain.missing:
        stats.skip("rotated segment missing", None, f"rotated segment missing ({reason})")
    for k, seg in enumerate(chain.paths, 1):
        seg_stats = LineStats()
        try:
            for rec in records(seg, seg_stats):
                yield Record(rec.obj, k * SEGMENT_BASE + rec.offset, rec.length, True)
        except OSError as exc:
            stats.skip("rotated segment unreadable", None, f"rotated segment unreadable ({exc})"[:200])
        for reason, n in seg_stats.reasons.items():
            for _ in range(n):
                stats.skip(reason, f"segment {k}")


def split_offset(offset: int) -> tuple[int, int]:
    """``(k, offset in the file)``: k 0 for the rollout itself, else its k-th segment."""
    return divmod(offset, SEGMENT_BASE) if offset >= SEGMENT_BASE else (0, offset)


_CACHE: "OrderedDict[tuple, Chain]" = OrderedDict()
_LOCK = threading.Lock()
CHAINS_CACHED = 8


def cached_chain(path: Path, root: Path | None, head: Callable[[Path], Iterator[Record]]) -> Chain:
    """:func:`segment_chain`, kept for the last :data:`CHAINS_CACHED` rollouts by their size and
    mtime (windows read messages back one at a time). Raises ``OSError`` when ``path`` is gone."""
    st = os.stat(path)
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    chain = segment_chain(path, root, head)
    with _LOCK:
        _CACHE[key] = chain
        while len(_CACHE) > CHAINS_CACHED:
            _CACHE.popitem(last=False)
    return chain


def _head_facts(path: Path, head: Callable[[Path], Iterator[Record]]) -> tuple[str | None, dict | None]:
    """``(thread id, own reference payload)`` from a rollout's head: the first ``session_meta``
    id (else the file name's uuid) and the first ``rollout_reference`` naming that thread."""
    thread, ref = None, None
    try:
        for n, rec in enumerate(head(path)):
            if n >= HEAD_LINES:
                break
            kind, payload = rec.obj.get("type"), rec.obj.get("payload")
            if not isinstance(payload, dict):
                continue
            if kind == "session_meta" and thread is None:
                thread = string(payload.get("id")) or None
            elif kind == REFERENCE and ref is None:
                ref = payload
    except OSError:
        return thread_of_name(path), None
    thread = thread or thread_of_name(path)
    if ref is not None and string(ref.get("thread_id")) not in ("", thread):
        ref = None  # another thread's history: a fork's copy (module docstring)
    return thread, ref


def _resolve(ref: dict, root: Path | None, thread: str, head) -> Path | None:
    """The segment file a reference names, checked to belong to ``thread``; None when not found."""
    recorded = string(ref.get("rollout_path"))
    if not recorded:
        return None
    rec_path = Path(recorded)
    candidates = [rec_path, Path(recorded + ".zst")]
    if root is not None:
        key = string(ref.get("segment_id")) or "initial"
        name = rec_path.name.removesuffix(".zst")
        try:
            folders = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            folders = []
        for folder in folders:
            base = folder / thread / key
            candidates += [base / name, base / (name + ".zst")]
    for cand in candidates:
        if cand.is_file() and _head_facts(cand, head)[0] == thread:
            return cand
    return None

"""Telling a damaged index from a bug: seals, checksums and the damage marker.

Whoosh keeps no checksums, and a file it has committed never changes. So after each commit the
writer *seals* the committed segment and table-of-contents files of the generation (size, mtime
and CRC-32, :data:`SEAL`); a sealed file whose size or mtime changed is damage, found by a stat
when the index is opened. Damage that keeps size and mtime shows when a read fails: the
checksums are then compared (:func:`is_damage`); a read failure they do not explain is a bug and
is raised as it is. A reader that found damage leaves :data:`DAMAGED` so the next writer
rebuilds. Every function takes an index root (its current generation is used) or a generation.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

from whoosh.filedb.filestore import FileStorage

from ..paths import write_private
from .layout import INDEX_NAME, misplaced_current, misplaced_note, where

SEAL = "crabsearch-seal"
"""Size, mtime and CRC-32 of every committed segment and table-of-contents file."""
DAMAGED = "crabsearch-damaged"
"""Written by a reader that hit a read error in a segment: the next writer rebuilds."""
SEALED_SUFFIXES = (".seg", ".toc")


class IndexDamaged(RuntimeError):
    """A read of the index failed in a way only damage explains (a segment that does not decode,
    or that changed on disk). The index has been marked for a rebuild (:data:`DAMAGED`); the
    message says what failed."""


DAMAGE_ERRORS: tuple[type[BaseException], ...] = (UnicodeDecodeError, EOFError, zlib.error, struct.error)
"""Exception types that only undecodable bytes raise, for an index sealed before checksums were
kept (Whoosh raises a bare ``Exception("Block tag error ...")`` for a broken posting block too)."""


def is_damage(directory: Path, exc: BaseException) -> bool:
    """Whether ``exc``, raised while searching the index in ``directory``, is explained by
    damage: a sealed file whose size, mtime or CRC-32 no longer match (:func:`seal_problem`, then
    :func:`checksum_problem`, which reads the whole index: only on this failure path). An index
    sealed without checksums falls back to the error type (:data:`DAMAGE_ERRORS`). A failure that
    damage does not explain is a bug, and is raised as it is."""
    directory = where(directory)
    if seal_problem(directory) or checksum_problem(directory):
        return True
    sealed = _sealed(directory)
    if sealed and all(isinstance(v, list) and len(v) == 3 for v in sealed.values()):
        return False
    return isinstance(exc, DAMAGE_ERRORS) or (type(exc) is Exception and "Block tag error" in str(exc))


def mark_damaged(directory: Path, reason: str) -> None:
    """Leave :data:`DAMAGED` (with ``reason``) in ``directory`` so that the next writer rebuilds
    the index; a marker already there keeps its first reason (a later reader's reason quoted the
    marker's and nested it: ``damaged (a search could not read it (damaged (...``). Never raises
    (a reader may not be able to write there)."""
    marker = where(directory) / DAMAGED
    try:
        if not marker.exists():
            write_private(marker, reason)
    except OSError:
        pass


def seal(directory: Path) -> None:
    """After a commit: record size, mtime and CRC-32 of every committed segment and
    table-of-contents file (:data:`SEAL`, written atomically; a file sealed before with the same
    size and mtime keeps its checksum, so only new segments are read). Errors are ignored (a
    later commit seals again). File modes are the writer's business (it makes the generation
    private after each manifest save)."""
    directory = Path(directory)
    try:
        from whoosh.index import TOC

        old = _sealed(directory)
        toc = TOC.read(FileStorage(str(directory)), INDEX_NAME)
        names = [TOC._filename(INDEX_NAME, toc.generation)] + [
            f"{seg.segment_id()}{ext}" for seg in toc.segments for ext in SEALED_SUFFIXES]
        files = {}
        for name in names:
            try:  # only committed files: another process may be writing a new segment right now
                st = os.stat(directory / name)
                kept = old.get(name)
                if kept and len(kept) == 3 and kept[:2] == [st.st_size, st.st_mtime_ns]:
                    files[name] = kept
                else:
                    files[name] = [st.st_size, st.st_mtime_ns, _crc(directory / name)]
            except FileNotFoundError:
                continue
        tmp = directory / f"{SEAL}.{os.getpid()}.tmp"
        write_private(tmp, json.dumps(files))
        os.replace(tmp, directory / SEAL)
    except Exception:  # noqa: BLE001 - a seal is a check, never a reason to fail a commit
        pass


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def _sealed(directory: Path) -> dict:
    """The seal: file name -> ``[size, mtime_ns, crc32]`` (``[size, mtime_ns]`` from before
    checksums were kept); empty when there is none or it does not parse."""
    try:
        files = json.loads((Path(directory) / SEAL).read_text())
    except (OSError, ValueError):
        return {}
    return files if isinstance(files, dict) else {}


def checksum_problem(directory: Path) -> str | None:
    """The first sealed file whose CRC-32 no longer matches (damage that kept size and mtime), or
    None. Reads every sealed file: about a second per GB, so only when a search has failed."""
    directory = where(directory)
    for name, sealed in _sealed(directory).items():
        if not isinstance(sealed, list) or len(sealed) != 3:
            continue
        try:
            if _crc(Path(directory) / name) != sealed[2]:
                return f"{name} does not match its checksum"
        except OSError:
            continue
    return None


def seal_problem(directory: Path) -> str | None:
    """Why the index in ``directory`` is damaged, or None: a sealed file whose size or mtime
    changed (a new file that is not sealed yet, or a sealed one that a merge removed, is fine), or
    the :data:`DAMAGED` marker a reader left, or a directory where the ``current`` link should be
    (:func:`~crabsearch.index.layout.misplaced_current`). Costs one small read and a stat per segment.
    ``directory`` is a root (its current generation is checked) or a generation."""
    what = misplaced_current(directory)
    if what:
        return misplaced_note(what)
    directory = where(directory)
    try:
        return "a search could not read it (" + (directory / DAMAGED).read_text()[:200] + ")"
    except OSError:
        pass
    for name, sealed in _sealed(directory).items():
        try:
            st = os.stat(directory / name)
        except OSError:
            continue  # merged away since
        if not isinstance(sealed, list) or [st.st_size, st.st_mtime_ns] != sealed[:2]:
            return f"{name} changed on disk"
    return None

"""Opening the Whoosh index: create it, check its version stamp, rebuild it when stale or damaged.

The index can always be rebuilt from the transcripts, so a mismatch or damage is handled by
clearing crabsearch's own index directory (never anything else) and starting again.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
import zlib
from pathlib import Path

from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage

from ..paths import make_private, write_private
from . import whoosh_fixes

from ..redact import RULES_VERSION
from .schema import SCHEMA_VERSION, make_schema

INDEX_VERSION = f"{SCHEMA_VERSION}.r{RULES_VERSION}"
"""The stamp's version: the schema's and the masking rules' (an index built under older rules
holds, and finds, secrets they did not mask): a change of either rebuilds."""

whoosh_fixes.install()  # zero-copy segment reads, field lengths read once (see whoosh_fixes)

STAMP = "crabsearch-version"
LOCK_WAIT = 10.0  # seconds to wait for another process's write lock
INDEX_NAME = "MAIN"
SEAL = "crabsearch-seal"
"""Size and mtime of every segment and table-of-contents file after the last commit: Whoosh
keeps no checksums, and a file it wrote never changes, so one that did is damage."""
DAMAGED = "crabsearch-damaged"
"""Written by a reader that hit a read error in a segment: the next writer rebuilds."""
SEALED_SUFFIXES = (".seg", ".toc")


def owned(name: str) -> bool:
    """True for the names crabsearch writes in an index directory (Whoosh's files, its lock, the
    stamp, seal and damage marker, the manifest and its journal, the last-refresh time)."""
    return (name.startswith(("MAIN", "_MAIN", "crabsearch-", "manifest", "last-refresh"))
            or name.endswith((".seg", ".toc", ".pst", ".trm")))


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
    if seal_problem(directory) or checksum_problem(directory):
        return True
    if _sealed(directory) and all(len(v) == 3 for v in _sealed(directory).values()):
        return False
    return isinstance(exc, DAMAGE_ERRORS) or (type(exc) is Exception and "Block tag error" in str(exc))


def mark_damaged(directory: Path, reason: str) -> None:
    """Leave :data:`DAMAGED` (with ``reason``) in ``directory`` so that the next writer rebuilds
    the index. Never raises (a reader may not be able to write there)."""
    try:
        write_private(Path(directory) / DAMAGED, reason)
    except OSError:
        pass


def seal(directory: Path) -> None:
    """After a commit: record size, mtime and CRC-32 of every committed segment and
    table-of-contents file (:data:`SEAL`, written atomically; a file sealed before with the same
    size and mtime keeps its checksum, so only new segments are read), and make every file
    crabsearch wrote private (0600, the directory 0700). Errors are ignored (a later commit seals
    again)."""
    directory = Path(directory)
    try:
        from whoosh.index import TOC

        old = _sealed(directory)
        toc = TOC.read(_storage(directory), INDEX_NAME)
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
    make_private(directory, owned)


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
    the :data:`DAMAGED` marker a reader left. Costs one small read and a stat per segment."""
    directory = Path(directory)
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


def open_index(directory: Path, *, create: bool = True, variant: str | None = None):
    """Open the index in ``directory`` (creating it when ``create``); returns ``(ix, rebuilt)``
    where ``rebuilt`` is a message when the index had to be reset, else None.

    ``variant`` names what the index holds beyond the default (``"tools"`` with tool output); it
    is part of the stamp, so switching it rebuilds. None accepts any variant (readers).
    Returns ``(None, None)`` when the index does not exist and ``create`` is False.

    Creating or rebuilding happens under Whoosh's own write lock (an OS file lock, freed when a
    process dies, so it never goes stale): two crabsearch processes starting on an empty
    directory create it once. Raises :class:`IndexError_` when the directory cannot be written
    or another process holds the lock for more than ``LOCK_WAIT`` seconds.
    """
    directory = Path(directory)
    ix, problem = _try_open(directory, variant)
    if ix is not None and create:
        make_private(directory, owned)  # a directory made by someone else, or an older version
    if ix is not None or not create:
        return ix, problem
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # transcripts' words: private
        make_private(directory, owned)
        lock = FileStorage(str(directory)).lock(f"{INDEX_NAME}_WRITELOCK")
        deadline = time.monotonic() + LOCK_WAIT
        while not lock.acquire(blocking=False):
            if time.monotonic() > deadline:
                raise IndexError_(f"another crabsearch is writing the index in {directory}; try again")
            time.sleep(0.1)
    except OSError as exc:
        raise IndexError_(f"cannot create the index in {directory}: {exc.strerror or exc}") from exc
    try:
        ix, again = _try_open(directory, variant)  # another process may have made it meanwhile
        if ix is not None:
            return ix, None
        _clear(directory)
        ix = _storage(directory).create_index(make_schema(), indexname=INDEX_NAME)
        write_private(directory / STAMP, f"{INDEX_VERSION}+{variant}" if variant else INDEX_VERSION)
        seal(directory)
        return ix, problem or again
    except OSError as exc:
        raise IndexError_(f"cannot create the index in {directory}: {exc.strerror or exc}") from exc
    finally:
        lock.release()


def _try_open(directory: Path, variant: str | None):
    """``(ix, None)`` when a current index opens; ``(None, why)`` when one exists but must be
    rebuilt (stale stamp, other variant, damaged); ``(None, None)`` when there is none."""
    try:
        if not windex.exists_in(str(directory), indexname=INDEX_NAME):
            return None, None
    except Exception as exc:  # a table of contents that does not even parse
        return None, f"index was damaged ({type(exc).__name__}); rebuilding"
    damage = seal_problem(directory)
    if damage:
        return None, f"index was damaged ({damage}); rebuilding"
    stamp = directory / STAMP
    found = stamp.read_text().strip() if stamp.exists() else ""
    version, _, found_variant = found.partition("+")
    if version != INDEX_VERSION:
        return None, f"index format changed ({version or 'unknown'} -> {INDEX_VERSION}); rebuilding"
    if variant is not None and found_variant != variant:
        return None, "tool output indexing " + ("switched on" if variant else "switched off") + "; rebuilding"
    try:
        ix = _storage(directory).open_index(INDEX_NAME)
        ix.reader().close()  # opens every segment: damage shows here, not in the middle of a search
        return ix, None
    except Exception as exc:  # damaged: any failure opening it means rebuild
        return None, f"index was damaged ({type(exc).__name__}); rebuilding"


def _storage(directory: Path) -> FileStorage:
    """The index's storage: mmap'd segments, read in place (see ``whoosh_fixes``)."""
    return FileStorage(str(directory))


def doc_total(ix) -> int:
    """Documents in the index (deleted ones included), from its table of contents alone, without
    opening a reader (which opens every segment: ~30 ms at 80k messages)."""
    return sum(seg.doc_count_all() for seg in ix._read_toc().segments)


def _clear(directory: Path) -> None:
    """Remove crabsearch's own files from the index directory (Whoosh files, stamp, manifest)."""
    for p in directory.iterdir():
        if p.name.endswith("WRITELOCK"):
            continue  # held by this process right now: deleting it would let another lock a new one
        if owned(p.name) and p.name != "last-refresh":
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)

"""Opening the Whoosh index: create it, check its version stamp, rebuild it when stale or damaged.

The index can always be rebuilt from the transcripts, so a mismatch or damage is handled by
clearing crabsearch's own index directory (never anything else) and starting again.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage

from . import whoosh_fixes

from .schema import SCHEMA_VERSION, make_schema

whoosh_fixes.install()  # zero-copy segment reads, field lengths read once (see whoosh_fixes)

STAMP = "crabsearch-version"
LOCK_WAIT = 10.0  # seconds to wait for another process's write lock
INDEX_NAME = "MAIN"


class IndexError_(RuntimeError):
    """The index directory cannot be created or opened (message says why)."""


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
    if ix is not None or not create:
        return ix, problem
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # transcripts' words: private
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
        (directory / STAMP).write_text(f"{SCHEMA_VERSION}+{variant}" if variant else str(SCHEMA_VERSION))
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
    stamp = directory / STAMP
    found = stamp.read_text().strip() if stamp.exists() else ""
    version, _, found_variant = found.partition("+")
    if version != str(SCHEMA_VERSION):
        return None, f"index format changed ({version or 'unknown'} -> {SCHEMA_VERSION}); rebuilding"
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
        if p.name.startswith(("MAIN", "_MAIN", STAMP, "manifest")) or p.suffix in (".seg", ".toc", ".pst", ".trm"):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)

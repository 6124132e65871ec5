"""Opening the Whoosh index: create it, check its version stamp, rebuild it when stale or damaged,
and the one lock every writer holds.

The index can always be rebuilt from the transcripts, so a mismatch or damage is handled by
building a new generation (``layout.py``) and switching to it: crabsearch only ever removes its
own files. Rules:

* **One writer at a time, for the whole refresh.** :func:`write_lock` is an OS file lock
  (``flock``, freed when a process dies) held from planning to the last manifest save, so the
  manifest and the segments it describes move together: Whoosh's own lock is released inside
  ``commit``, before the manifest is saved, and a second indexer that planned in that gap read
  the same lines again (duplicates).
* **Rebuilds swap.** A stale format or a damaged index cannot be searched, so its replacement
  becomes current at once and fills up commit by commit. A switch of ``--index-tool-output`` is
  built to the end while searches keep using the old generation, then swapped in.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage

from ..paths import PRIVATE_DIR, make_private, write_private
from ..redact import RULES_VERSION
from . import whoosh_fixes
from .integrity import (  # noqa: F401 - re-exported: the engine's names for damage live here too
    DAMAGED, SEAL, IndexDamaged, checksum_problem, is_damage, mark_damaged, seal, seal_problem)
from .layout import (CURRENT, GEN_PREFIX, INDEX_NAME, LAST_REFRESH, STAMP, WORKER_PREFIX,  # noqa: F401
                     current_dir, has_index, is_legacy, misplaced_current, misplaced_note, owned, where)
from ..sources.base import READERS_VERSION
from ..filters import indexed_fields
from .schema import SCHEMA_VERSION, make_schema

INDEX_VERSION = f"{SCHEMA_VERSION}.r{RULES_VERSION}.s{READERS_VERSION}" + "".join(f".f{n}" for n in indexed_fields())
"""The stamp's version: the schema's, the masking rules' (an index built under older rules holds,
and finds, secrets they did not mask), the readers' (an index read by older readers misses
what they dropped) and the fields filters index from their sessions (``.fbranch``: an index
without one cannot narrow by it): a change of any of them rebuilds."""

whoosh_fixes.install()  # zero-copy segment reads, field lengths read once (see whoosh_fixes)

LOCK_WAIT = 10.0  # seconds to wait for another process's write lock
READ_LOCK_WAIT = 1.0
"""Seconds the refresh before a read (``search``, ``show``, ``export``) waits for another
process's write lock (:data:`LOCK_WAIT` for ``crabsearch index``). Searches never need the lock:
they read what is committed, and a writer commits in batches. Waiting only lets the read see the
other writer's last commit: a refresh of what an agent just appended (another search's, the
resident server's) holds the lock for a fraction of a second, while a build holds it for minutes,
and a search during ``crabsearch index`` waited the whole 10 s for nothing."""
WRITE_LOCK = "crabsearch-write.lock"
RETIRED = "crabsearch-retired"
"""Left in a generation when a swap replaced it; it is removed :data:`GRACE` seconds later, so a
search that had just opened it still finds its files."""
GRACE = 60.0


class IndexError_(RuntimeError):
    """The index directory cannot be created or opened (message says why)."""


def why_unwritable(exc: BaseException) -> str:
    """Why a refresh failed with ``exc``, in a few words: the ``OSError``'s own (``Operation not
    permitted``, also through an :class:`IndexError_` made from one), else ``exc``'s message."""
    cause = exc if isinstance(exc, OSError) else exc.__cause__
    return (cause.strerror if isinstance(cause, OSError) else None) or str(exc) or type(exc).__name__


def cannot_update(root: Path, exc: BaseException, doing: str) -> str:
    """The line for a refresh of the index in ``root`` that failed with ``exc`` (a read-only or
    immutable directory, a sandbox): the command goes on ``doing`` (``searching``) what is
    already indexed, or, when there is no index at all (it could not be created), says that
    there is nothing to search and how to name a folder it can write."""
    why = why_unwritable(exc)
    if has_index(Path(root)):
        return f"cannot update the index in {root} ({why}); {doing} what is already indexed"
    return (f"cannot create the index in {root} ({why}), so there is nothing to search: give --index-dir DIR "
            "(or CRABSEARCH_INDEX_DIR) naming a folder crabsearch can write")


@contextmanager
def write_lock(root: Path, wait: float = LOCK_WAIT) -> Iterator[bool]:
    """Hold the writers' lock of the index in ``root`` (created 0700 when missing): yields True,
    or False when another process held it for ``wait`` seconds. An ``flock`` on
    :data:`WRITE_LOCK`: released when the block ends or the process dies, never stale; two
    threads of one process exclude each other too. Raises :class:`IndexError_` when ``root``
    cannot be created."""
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)  # transcripts' words: private
        fd = os.open(root / WRITE_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise IndexError_(f"cannot create the index in {root}: {exc.strerror or exc}") from exc
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.05)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@dataclass
class Opened:
    """An index opened for writing: ``ix``; ``directory``, its generation; ``rebuilt``, why a
    new generation was started (None when the current one is used); ``swap_pending``, True when
    the new generation must be swapped in (:func:`swap`) once it is complete."""

    ix: object
    directory: Path
    rebuilt: str | None = None
    swap_pending: bool = False


def open_for_writing(root: Path, variant: str) -> Opened:
    """Open the current generation of the index in ``root`` for a writer, or start a new one
    when there is none or it must be rebuilt (stale stamp, other ``variant``, damaged, legacy
    layout). The caller holds :func:`write_lock`. Makes the root and its files private (0700 /
    0600) and removes generations no longer needed. Raises :class:`IndexError_` when the
    directory cannot be written."""
    root = Path(root)
    make_private(root, owned)  # a directory made by someone else, or by an older version
    misplaced = _clear_current(root)
    gen = current_dir(root)
    ix, problem, kind = _try_open(gen, variant) if gen is not None else (None, None, None)
    if ix is not None:
        make_private(gen, owned)
        _drop_generations(root, keep={gen.name})
        return Opened(ix, gen)
    if misplaced:
        problem, kind = f"{misplaced_note(misplaced)}: deleted; rebuilding the index from the transcripts", "damaged"
    elif gen is None and is_legacy(root):
        problem, kind = "index format changed (an index from before generations); rebuilding", "format"
    try:
        new = root / f"{GEN_PREFIX}{time.time_ns():x}"
        new.mkdir(mode=PRIVATE_DIR)
        ix = FileStorage(str(new)).create_index(make_schema(), indexname=INDEX_NAME)
        write_private(new / STAMP, f"{INDEX_VERSION}+{variant}" if variant else INDEX_VERSION)
        seal(new)
        make_private(new, owned)
    except OSError as exc:
        raise IndexError_(f"cannot create the index in {root}: {exc.strerror or exc}") from exc
    # Only a variant switch leaves a searchable old index to keep showing meanwhile.
    if kind == "variant":
        _drop_generations(root, keep={gen.name, new.name})
        return Opened(ix, new, problem, swap_pending=True)
    swap(root, new)
    return Opened(ix, new, problem)


def _clear_current(root: Path) -> str | None:
    """Make way for the ``current`` link: a directory or file in its place
    (:func:`~crabsearch.index.layout.misplaced_current`) is moved aside as a generation, which
    :func:`_drop_generations` removes (a search that has its files open keeps reading them), and
    the ``.current.PID`` links of swaps that failed are removed. The caller holds the write lock.
    Returns what stood there, or None. Raises ``OSError``."""
    what = misplaced_current(root)
    if what == "a directory":
        os.rename(root / CURRENT, root / f"{GEN_PREFIX}{time.time_ns():x}-not-a-link")
    elif what:
        (root / CURRENT).unlink()
    for p in root.iterdir():
        if p.name.startswith(f".{CURRENT}.") and p.is_symlink():
            p.unlink(missing_ok=True)
    return what


def swap(root: Path, gen: Path) -> None:
    """Make ``gen`` the current generation of ``root`` in one ``rename`` of a new symlink over
    ``current``, then remove the other generations and any legacy files (a searcher that still
    has the old files open keeps reading them: POSIX unlink). The caller holds the write lock.
    Raises ``OSError``."""
    root = Path(root)
    old = current_dir(root)
    tmp = root / f".{CURRENT}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(Path(gen).name, tmp)
    try:
        os.replace(tmp, root / CURRENT)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    if old is not None and old.name != Path(gen).name:
        try:
            write_private(old / RETIRED, str(time.time()))
        except OSError:
            pass
    _drop_generations(root, keep={Path(gen).name})
    _clear_legacy(root)


class Damage(str):
    """Why an index cannot be opened, when the reason is damage (a table of contents or segment
    that does not decode, or files changed on disk): a reader reports it as
    :class:`IndexDamaged` rather than finding nothing."""


def open_index(root: Path, *, create: bool = True, variant: str | None = None):
    """Open the index in ``root`` (see ``layout.py``); returns ``(ix, rebuilt)`` where
    ``rebuilt`` says why the index was reset or must be, else None.

    The index returned holds its generation (:func:`_hold`) until :func:`release` or until it is
    freed: a generation a swap replaced is not removed while a reader holds it.

    Readers pass ``create=False``: ``(None, None)`` when there is no index, ``(None, why)``
    when one exists but cannot be searched (stale; damaged, when ``why`` is a :class:`Damage`).
    ``variant`` names what the index holds beyond the default (``"tools"`` with tool output);
    None accepts any. With ``create`` (tests and tools; the indexer uses
    :func:`open_for_writing` under its own lock) a missing or stale index is replaced by a new,
    empty, current generation. Raises :class:`IndexError_` when the directory cannot be written
    or the lock stays taken for ``LOCK_WAIT`` seconds.
    """
    root = Path(root)
    for _ in range(3):  # a swap between reading the link and opening: read the link again
        gen = current_dir(root)
        if gen is None:
            misplaced = misplaced_current(root)
            ix, problem = None, (Damage(f"{misplaced_note(misplaced)}; rebuilding") if misplaced
                                 else "index format changed (an index from before generations); rebuilding"
                                 if is_legacy(root) else None)
            break
        hold = _hold(gen)
        ix, problem, kind = _try_open(gen, variant)
        if ix is not None and hold is not None:
            ix.crabsearch_hold = hold
        elif hold is not None:
            hold.close()
        if kind == "damaged":
            problem = Damage(problem)
        if ix is not None or current_dir(root) == gen:
            break
    if ix is not None or not create:
        return ix, problem
    with write_lock(root) as held:
        if not held:
            raise IndexError_(f"another crabsearch is writing the index in {root}; try again")
        opened = open_for_writing(root, variant or "")
        if opened.swap_pending:
            swap(root, opened.directory)
        return opened.ix, opened.rebuilt


def _hold(gen: Path):
    """A shared ``flock`` on ``gen``'s stamp file, as an open file (closing it, or its being
    freed, lets go); None when the stamp cannot be opened or a writer is removing ``gen``."""
    try:
        f = open(gen / STAMP, "rb")
    except OSError:
        return None
    try:
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    return f


def release(ix) -> None:
    """Let go of the generation ``ix`` (from :func:`open_index`) holds. Never raises."""
    hold = getattr(ix, "crabsearch_hold", None)
    if hold is not None:
        hold.close()


def _held(gen: Path) -> bool:
    """True while a reader holds ``gen`` (:func:`_hold`)."""
    try:
        fd = os.open(gen / STAMP, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _try_open(directory: Path, variant: str | None):
    """``(ix, None, None)`` when the generation in ``directory`` opens and is current;
    ``(None, why, kind)`` when it must be rebuilt, ``kind`` one of ``"damaged"``, ``"format"``,
    ``"variant"`` (a stamped generation whose table of contents is gone is damaged);
    ``(None, None, None)`` when there is none."""
    try:
        if not windex.exists_in(str(directory), indexname=INDEX_NAME):
            if (directory / STAMP).exists():  # stamped when made, with its first table of contents
                return None, "index was damaged (its table of contents is missing); rebuilding", "damaged"
            return None, None, None
    except Exception as exc:  # a table of contents that does not even parse
        return None, f"index was damaged ({type(exc).__name__}); rebuilding", "damaged"
    damage = seal_problem(directory)
    if damage:
        return None, f"index was damaged ({damage}); rebuilding", "damaged"
    stamp = directory / STAMP
    try:
        found = stamp.read_text().strip()
    except OSError:
        found = ""
    version, _, found_variant = found.partition("+")
    if version != INDEX_VERSION:
        return None, f"index format changed ({version or 'unknown'} -> {INDEX_VERSION}); rebuilding", "format"
    if variant is not None and found_variant != variant:
        why = "tool output indexing " + ("switched on" if variant else "switched off") + "; rebuilding"
        return None, why, "variant"
    try:
        ix = FileStorage(str(directory)).open_index(INDEX_NAME)
        ix.reader().close()  # opens every segment: damage shows here, not in the middle of a search
        return ix, None, None
    except Exception as exc:  # damaged: any failure opening it means rebuild
        return None, f"index was damaged ({type(exc).__name__}); rebuilding", "damaged"


def variant_of(root: Path) -> str:
    """The variant of the current index in ``root`` (``"tools"`` or ``""``), from its stamp."""
    try:
        return (where(root) / STAMP).read_text().strip().partition("+")[2]
    except OSError:
        return ""


def doc_total(ix) -> int:
    """Documents in the index (deleted ones included), from its table of contents alone, without
    opening a reader (which opens every segment)."""
    return sum(seg.doc_count_all() for seg in ix._read_toc().segments)


def _drop_generations(root: Path, keep: set[str]) -> None:
    """Remove the generations of ``root`` not named in ``keep``: one a writer was killed while
    building (never current), at once; one a swap replaced, :data:`GRACE` seconds after the swap
    (a search may have read the link just before) and once no reader holds it (:func:`_hold`:
    an engine that has not searched since the swap still has its files open). The caller holds
    the write lock."""
    now = time.time()
    for p in Path(root).iterdir():
        if not p.name.startswith(GEN_PREFIX) or p.name in keep or p.is_symlink() or not p.is_dir():
            continue
        try:
            retired = float((p / RETIRED).read_text())
        except (OSError, ValueError):
            retired = None
        if retired is None or (now - retired > GRACE and not _held(p)):
            shutil.rmtree(p, ignore_errors=True)


def drop_replaced(root: Path) -> None:
    """Remove the generations of ``root`` that are not current, as :func:`_drop_generations` does
    (one a swap replaced once :data:`GRACE` has passed, one a killed writer left at once), when
    there are any and the writers' lock is free this moment: called by every refresh, also one
    that finds nothing to do (replaced generations stayed until a refresh found a change: 143
    copies, 50 MB, after repeated tool-output switches). Costs a ``listdir`` when there is none.
    Never raises."""
    root = Path(root)
    try:
        gens = [n for n in os.listdir(root) if n.startswith(GEN_PREFIX)]
        current = current_dir(root)
        if current is None or all(n == current.name for n in gens):
            return
        with write_lock(root, wait=0.0) as held:
            if held and current_dir(root) == current:
                _drop_generations(root, keep={current.name})
    except (OSError, IndexError_):  # a read-only index directory: nothing to tidy
        pass


def _clear_legacy(root: Path) -> None:
    """Remove an index from before generations (Whoosh files, stamp, seal, manifest in the root)."""
    for p in Path(root).iterdir():
        if p.name in (WRITE_LOCK, LAST_REFRESH, CURRENT) or p.name.startswith((GEN_PREFIX, f".{CURRENT}.")):
            continue
        if owned(p.name) and p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)


PURGE_SHARE = 0.02
"""Share of deleted documents in the index past which a commit rewrites the segments holding
them. Whoosh's BM25F counts a deleted document in document frequencies and average field
lengths until its segment is merged, so replaced documents change scores (after a crash, the
re-read documents made top-20 lists differ from a clean build's)."""


def merge_policy(writer, segments):
    """Whoosh merge policy for every commit: Whoosh's ``MERGE_SMALL`` (small segments merged,
    Fibonacci rule), and, once deleted documents pass :data:`PURGE_SHARE` of the index, every
    segment that holds any is rewritten without them (segments without deletions stay as they
    are). Returns the segments kept, as Whoosh's policies do. A merge's postings go through
    Whoosh's own pool, which spills to disk (``pool.spill_for_merge``): a merge can take the
    whole index."""
    from whoosh.reading import SegmentReader
    from whoosh.writing import MERGE_SMALL

    merging = _Merging(writer)
    total = sum(s.doc_count_all() for s in segments)
    deleted = sum(s.deleted_count() for s in segments)
    if not total or deleted / total <= PURGE_SHARE:
        return MERGE_SMALL(merging, segments)
    keep = []
    for seg in segments:
        if seg.deleted_count():
            reader = SegmentReader(writer.storage, writer.schema, seg)
            merging.add_reader(reader)
            reader.close()
        else:
            keep.append(seg)
    return keep


class _Merging:
    """The writer as a merge policy sees it (``storage``, ``schema``, ``add_reader``): before the
    first segment is added, the batch's postings move to Whoosh's spilling pool."""

    def __init__(self, writer) -> None:
        self.writer, self.storage, self.schema = writer, writer.storage, writer.schema

    def add_reader(self, reader) -> None:
        from .pool import spill_for_merge

        spill_for_merge(self.writer)
        self.writer.add_reader(reader)


def remove_unfinished(ix) -> None:
    """Remove what a writer killed or stopped by a full disk left behind: segment and
    table-of-contents files the current table of contents does not name (tens of MB after a
    full disk), Whoosh's posting pool directory ``MAIN.tmp`` (``SegmentWriter`` makes it and
    removes it only when it finishes), the folders of a parallel refresh's workers
    (``layout.WORKER_PREFIX``: a worker's unfinished segment) and Whoosh's lock file ``MAIN_WRITELOCK`` (an ``flock``:
    freed when its process died, the file stays). The caller holds the write lock and has no
    Whoosh writer open, so no other writer is making any of them. Never raises."""
    from whoosh.index import clean_files

    try:
        toc = ix._read_toc()
        clean_files(ix.storage, INDEX_NAME, toc.generation, toc.segments)
    except Exception:  # noqa: BLE001 - a clean-up, never a reason to fail
        pass
    folder = getattr(ix.storage, "folder", None)
    if not folder:
        return
    shutil.rmtree(Path(folder) / f"{INDEX_NAME}.tmp", ignore_errors=True)
    try:
        workers = [n for n in os.listdir(folder) if n.startswith(WORKER_PREFIX)]
    except OSError:
        workers = []
    for name in workers:
        shutil.rmtree(Path(folder) / name, ignore_errors=True)
    lock = Path(folder) / f"{INDEX_NAME}_WRITELOCK"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return
    try:  # removed only while free (taken here first): a Whoosh writer of another program keeps it
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.unlink()
    except OSError:
        pass
    finally:
        os.close(fd)

"""Incremental indexing: discover transcripts, read what changed, commit in batches.

Per file, against the manifest (``manifest.py``):

* same size and mtime: skipped (a refresh with nothing changed opens no writer at all);
* grown, with the same first bytes: read from the stored offset with the stored source state;
* shrunk, rewritten, or new: its documents are deleted and it is read from the start;
* not found by this discovery: its documents are deleted only when the unit is known gone
  (:meth:`Indexer.gone`: its ``stat`` says it does not exist, or it was found under another
  name); otherwise they are kept.

One index serves every run on the machine, and runs see different sets of folders: a run with
``CODEX_HOME`` pointed at a backup, one whose config file could not be read (no ``[sources]``
folders), one that cannot list a directory right now. What one run did not find is not deleted:
a transcript's documents go when its file does.

What is indexed is ``index.documents``: a document per message (with indexed text only for
user and assistant text, compaction summaries and tool **names**) and one per session (title
and summary).
"""

from __future__ import annotations

import os
import stat
import time
from datetime import datetime, timezone
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from whoosh.index import LockError
from whoosh.writing import CLEAR

from ..paths import make_private, write_private
from ..sources import SOURCES, Source
from ..redact import redact_value
from ..jsonl import PLACES_KEPT
from ..sources.base import REASON_CAP, container_of, full_tool_output, noting_unreadable_dirs
from . import colfile, parallel
from .codec import CompactCodec
from .documents import acting_flags, message_doc, session_doc
from .manifest import Manifest, dumps, file_key
from .layout import LAST_REFRESH, owned, where
from .pool import use_compact_pool
from .store import (LOCK_WAIT, doc_total, drop_replaced, merge_policy, open_for_writing, open_index,
                    remove_unfinished, seal, swap, write_lock)

BATCH_DOCS = 40_000
BATCH_BYTES = 512 * 1024 * 1024
"""A build commits a batch (a new segment) every this many messages or bytes of transcript read.
Each search pays a share of its time per segment, so the batches are as large as memory allows:
the posting pool (``index.pool``) holds 40,000 messages' postings in about the memory Whoosh's
held 10,000 in (``bench/results/2026-12-03-batches-1gb.*``: peak RSS of a 1 GB build).
The merge policy (``store.merge_policy``, Whoosh's Fibonacci rule) merges them only once there
are many (26 of this size: a 6 GB build), through Whoosh's pool, which spills to disk."""
BATCH_POSTINGS = 2_000_000
"""...or once the batch holds this many postings (~45 MB in the pool at 1 GB's ~2 bytes of
positions a posting): transcripts of long prose and little tool output hold far more postings
per byte and per message than the generated ones. A file is read whole into one batch (the
pool has no limit within it: a 300 MB session of 94% tool output adds ~3 million postings)."""
FIRST_BATCH_DOCS = 2_000
FIRST_BATCH_BYTES = 4 * 1024 * 1024
"""Every refresh commits its first batch early, and each next one at :data:`BATCH_GROWTH` times
the size of the one before, up to ``BATCH_DOCS``/``BATCH_BYTES`` (:func:`batch_limits`): a first
build shows recent sessions (read first) within seconds, and a refresh stopped at any moment (a
client that kills its MCP server, a kill -9) has committed most of what it read, so the next one
continues from there. With full-size batches from the second on, a resumed build of fewer than
``BATCH_DOCS`` messages committed nothing until its end: each killed start read the same
transcripts again."""
BATCH_GROWTH = 4
"""4, not 2: a 300 MB build (49k messages) makes 4 segments, where doubling made 7 (Whoosh's
merge policy leaves them, and a search pays for each); a stop loses at most the batch being
read, up to 3/4 of what that refresh read."""

_LAST_TOUCH: dict = {}
"""``LAST_REFRESH`` path -> (the second this process wrote, the file's mtime then)."""


def batch_limits(n: int) -> tuple[int, int]:
    """``(bytes, messages)`` after which batch ``n`` (from 0) of a refresh is committed."""
    grow = BATCH_GROWTH ** min(n, 16)
    return min(FIRST_BATCH_BYTES * grow, BATCH_BYTES), min(FIRST_BATCH_DOCS * grow, BATCH_DOCS)


@dataclass
class Progress:
    """Progress of a refresh: files and bytes done out of the planned totals. ``phase`` is
    ``reading`` (transcripts read and analysed) or ``writing`` (a batch being committed: Whoosh
    writes its postings, which can take seconds); ``commits`` counts the batches committed so
    far (each one is searchable as soon as it is counted)."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    messages: int
    phase: str = "reading"
    commits: int = 0


@dataclass
class RefreshReport:
    """What a refresh did. ``errors`` are one-line messages about files that could not be read,
    ``unreadable_dirs`` about directories that could not be listed;
    ``busy`` is True when another process held the writer lock and nothing was written;
    ``rebuilt`` says why the index was reset, when it was."""

    files_seen: int = 0
    files_read: int = 0
    files_removed: int = 0
    files_kept: int = 0
    """Indexed units this discovery did not find that are still there (found through other
    folders before, or in a directory that cannot be listed now): their documents are kept."""
    sessions_changed: int = 0
    messages_added: int = 0
    skipped_lines: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    busy: bool = False
    rebuilt: str | None = None
    errors: list[str] = field(default_factory=list)
    unreadable_dirs: list[str] = field(default_factory=list)
    """``"PATH: reason"`` for each directory under an agent's root that could not be listed
    (its transcripts are not indexed)."""
    by_agent: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the index may now hold other documents (files read or removed, or a
        rebuild): an open engine must reopen it and forget the transcript records it read."""
        return bool(self.files_read or self.files_removed or self.rebuilt)


@dataclass
class _Job:
    source: Source
    path: str
    size: int
    mtime_ns: int
    start: int
    state: dict | None
    fresh: bool  # True: no documents of this file are in the index
    previous: dict | None = None  # its manifest entry, when it had one
    in_bytes: bool = True  # size and offsets are bytes of a file (not rows or steps): asked once

    @property
    def todo_bytes(self) -> int:
        """Bytes this job reads (0 for units not measured in bytes: database rows, steps)."""
        return self.size - self.start if self.in_bytes else 0


class _Batches:
    """The commits of one refresh and its progress: ``jobs`` (in reading order), the bytes done
    so far, the messages read and not yet committed (``reading``: a parallel refresh's), the
    commits made. :meth:`commit` commits a batch and then saves the manifest entries it holds."""

    def __init__(self, indexer: "Indexer", ix, manifest: Manifest, report: RefreshReport, jobs: list[_Job],
                 progress: Callable[[Progress], None] | None, clear_old: bool) -> None:
        self.indexer, self.ix, self.gen, self.manifest, self.report = indexer, ix, indexer._gen, manifest, report
        self.jobs, self.progress, self.clear_old = jobs, progress, clear_old
        self.total = sum(j.todo_bytes for j in jobs)
        self.done_bytes = self.reading = self.commits = 0

    def tick(self, n: int, extra_bytes: int = 0, phase: str = "reading") -> None:
        """Report progress: ``n`` transcripts done, ``extra_bytes`` of the ones being read."""
        if self.progress:
            self.progress(Progress(n, len(self.jobs), self.done_bytes + extra_bytes, self.total,
                                   self.report.messages_added + self.reading, phase, self.commits))

    def commit(self, writer, n: int, *, segments: list = (), entries: dict[str, dict]) -> None:
        """Commit ``writer`` (with ``segments`` written by workers: ``parallel.commit_with``),
        seal the generation, write its column files, then save the manifest ``entries``
        describing what the commit holds. The first commit of a refresh that found the manifest
        lost drops every older segment (Whoosh's ``CLEAR``)."""
        self.tick(n, phase="writing")
        mergetype = CLEAR if self.clear_old else merge_policy
        if segments:
            parallel.commit_with(writer, segments, mergetype)
        else:
            writer.commit(mergetype=mergetype)
        self.indexer._open_writer = None
        self.clear_old = False
        seal(self.gen)  # segment sizes, mtimes, checksums (damage check)
        colfile.write_all(self.gen, self.ix)  # per-document columns, read in one go by searches
        self.commits += 1
        self.tick(n)
        self.indexer._save(self.manifest, entries)


class Indexer:
    """Keeps the index in ``index_dir`` in step with the transcripts the sources discover.

    ``env`` and ``home`` feed each source's discovery (agent env overrides such as
    ``CLAUDE_CONFIG_DIR`` and ``CODEX_HOME``); ``sources`` defaults to every registered source.
    ``index_tool_output`` adds the redacted head of tool output to the index (searchable with
    ``in:tools``); switching it rebuilds the index. ``jobs`` (at least 1; default
    ``parallel.default_jobs()``, the usable cores) is how many worker processes a large refresh
    reads transcripts in (:mod:`.parallel`); a small one reads in this process.
    """

    def __init__(self, index_dir: Path, *, env: Mapping[str, str] | None = None,
                 home: Path | None = None, sources: Iterable[Source] | None = None,
                 index_tool_output: bool = False, extra_dirs: Mapping[str, list[str]] | None = None,
                 jobs: int | None = None):
        self.index_dir = Path(index_dir)
        self.jobs = jobs if jobs is not None else parallel.default_jobs()
        """Processes a large refresh may read transcripts in (``parallel.workers_for``)."""
        self._gen = self.index_dir  # the generation being planned or written (set by refresh)
        self.extra_dirs = dict(extra_dirs or {})
        """Config ``[sources]``: agent -> more directories laid out like its ``env_var`` target."""
        self.index_tool_output = index_tool_output
        self.env = dict(os.environ if env is None else env)
        self.home = Path(home) if home else Path(self.env.get("HOME") or Path.home())
        self.sources = list(SOURCES.values() if sources is None else sources)
        self.unreadable_dirs: dict[str, str] = {}
        self.found: dict[str, list[str]] = {}
        """What the last :meth:`discover` found: agent -> transcript paths."""
        self._unchanged: frozenset[str] = frozenset()
        self._seen: set = set()
        """What the last :meth:`discover` found: ``(device, inode)`` of each file, the path of
        each member unit (:meth:`gone` tells a file found under another name by it)."""

    def roots(self) -> list[tuple[str, Path]]:
        """``(agent display name, directory)`` for every place the sources look."""
        return [(src.display or src.agent, root) for src in self.sources for root in self.roots_of(src)]

    def roots_of(self, src: Source) -> list[Path]:
        """Every directory ``src`` looks in: through the environment, then the config's extra
        directories (``[sources]``), each once."""
        out: list[Path] = []
        for env in self._envs(src):
            out += [root for root in src.roots(env, self.home) if root not in out]
        return out

    def _envs(self, src: Source) -> list[Mapping[str, str]]:
        """The environment, then one per extra directory of ``src`` (with its override set)."""
        extra = self.extra_dirs.get(src.agent, []) if src.env_var else []
        return [self.env] + [{**self.env, src.env_var: os.path.expanduser(d)} for d in extra]

    def discover(self, skip: frozenset[str] = frozenset()) -> list[tuple[Source, str]]:
        """Every transcript file of every source but the agents in ``skip``, as ``(source,
        path)``, each real file once (by device and inode: one stat, where ``realpath`` took one
        per path segment; member units, which are not files, by their path). The directories
        that could not be listed are left in ``self.unreadable_dirs`` (``{path: reason}``), the
        paths found in ``self.found`` (agent -> paths)."""
        seen: set = set()
        out = []
        self._seen = seen
        self.found = {}
        with noting_unreadable_dirs() as unreadable:
            for src in self.sources:
                if src.agent in skip:
                    continue
                mine = self.found[src.agent] = []
                for p in (p for env in self._envs(src) for p in src.discover(env, self.home)):
                    mine.append(str(p))
                    try:
                        st = os.stat(p)
                        key: object = (st.st_dev, st.st_ino)
                    except OSError:
                        key = os.path.abspath(p)
                    if key not in seen:
                        seen.add(key)
                        out.append((src, str(p)))
        self.unreadable_dirs = unreadable
        return out

    def manifest_stamp(self) -> tuple | None:
        """What changes whenever a refresh commits (in any process), a reader marks the index
        damaged or the index is replaced: the current generation, its folder's mtime (a file made
        or removed in it) and its manifest file's ``(mtime_ns, size, inode)``; None when there is
        no manifest."""
        gen = where(self.index_dir)
        try:
            st, folder = os.stat(gen / Manifest.NAME), os.stat(gen)
        except OSError:
            return None
        return str(gen), folder.st_mtime_ns, st.st_mtime_ns, st.st_size, st.st_ino

    def refresh(self, progress: Callable[[Progress], None] | None = None,
                cancelled: Callable[[], bool] | None = None, *, lock_wait: float = LOCK_WAIT,
                unchanged: frozenset[str] = frozenset()) -> RefreshReport:
        """Bring the index up to date; returns a :class:`RefreshReport`.

        Never raises for a bad transcript: a record a reader cannot handle is skipped and counted,
        and a file that fails in any other way is named in ``errors`` while the other files are
        still indexed. Raises ``store.IndexError_`` or ``OSError`` when the index directory
        cannot be created or written.

        A refresh with nothing to do finds so without any lock (a stat per transcript). Anything
        else happens under the writers' lock (``store.write_lock``), planning included, so the
        segments and the manifest that describes them move together; when another process holds
        it for more than ``lock_wait`` seconds (``store.READ_LOCK_WAIT`` for a refresh before a
        read), returns with ``busy=True`` having written nothing.

        ``unchanged``: agents whose transcripts are known untouched since a refresh of this index
        completed, and the index as that refresh left it (``quiet.Gate``: no file event in
        their folders, the same :meth:`manifest_stamp`): they are neither discovered nor
        stat-ed, and their indexed transcripts are kept as the manifest has them. When every
        indexed transcript is theirs and the other agents have none, the index is not even
        opened. Every agent is walked when the index must be made anew (missing, damaged,
        another version).
        """
        t0 = time.perf_counter()
        report = RefreshReport()
        variant = "tools" if self.index_tool_output else ""
        self._unchanged = frozenset(unchanged)
        files = self.discover(skip=self._unchanged)
        report.unreadable_dirs = [f"{d}: {why}" for d, why in sorted(self.unreadable_dirs.items())]
        if self._unchanged and not files and self._all_unchanged(report):
            self._touch_last_refresh()
            report.seconds = time.perf_counter() - t0
            return report
        ix, problem = open_index(self.index_dir, create=False, variant=variant)
        if ix is None or problem is not None:
            self._walk_all(files)
        if ix is not None and problem is None:
            self._gen = where(self.index_dir)
            jobs, removed, _ = self._plan(ix, report, files)
            if not jobs and not removed:
                colfile.write_all(self._gen, ix)  # an index committed before column files: once
                drop_replaced(self.index_dir)
                self._touch_last_refresh()
                report.seconds = time.perf_counter() - t0
                return report
        with write_lock(self.index_dir, lock_wait) as held:
            if not held:
                report.busy = True
                report.seconds = time.perf_counter() - t0
                return report
            self._refresh_locked(report, files, variant, progress, cancelled)
        self._touch_last_refresh()
        report.seconds = time.perf_counter() - t0
        return report

    def _refresh_locked(self, report: RefreshReport, files: list[tuple[Source, str]], variant: str,
                        progress: Callable[[Progress], None] | None,
                        cancelled: Callable[[], bool] | None) -> None:
        """The writing part of :meth:`refresh`, under the writers' lock: plan against the
        manifest as it is now, read what changed, commit in batches, each commit followed by the
        manifest save that describes it; swap a rebuilt generation in when it is complete."""
        opened = open_for_writing(self.index_dir, variant)
        ix, self._gen, report.rebuilt = opened.ix, opened.directory, opened.rebuilt
        if report.rebuilt:
            self._walk_all(files)
        remove_unfinished(ix)  # what a writer killed earlier left half-written
        self._open_writer = None
        try:
            self._write(ix, opened, report, files, progress, cancelled)
        except BaseException:  # a full disk, a kill: nothing half-written stays behind
            if self._open_writer is not None:
                try:
                    self._open_writer.cancel()
                except Exception:  # noqa: BLE001 - the original error is what matters
                    pass
            remove_unfinished(ix)
            raise
        remove_unfinished(ix)  # Whoosh's lock file: nothing of a writer stays between refreshes

    def _write(self, ix, opened, report: RefreshReport, files: list[tuple[Source, str]],
               progress: Callable[[Progress], None] | None, cancelled: Callable[[], bool] | None) -> None:
        writer = self._writer(ix, report)
        if writer is None:
            return
        jobs, removed, manifest = self._plan(ix, report, files)
        for path in removed:
            writer.delete_by_term("fkey", manifest.files[path]["fkey"])
            manifest.remove(path)
            report.files_removed += 1
        # A manifest lost or damaged while the index has documents: every file is read again, and
        # the first commit drops all the old segments (Whoosh's CLEAR merge policy) so that the
        # replaced documents do not stay on disk as deleted ones (the index grew with each loss).
        clear_old = not manifest.files and self._index_has_docs
        if not self._index_has_docs or clear_old:  # a build: the newest sessions are the first searchable
            jobs.sort(key=lambda j: -j.mtime_ns)
        batches = _Batches(self, ix, manifest, report, jobs, progress, clear_old)
        workers = parallel.workers_for(self.jobs, jobs)
        if workers > 1:
            complete = parallel.write(self, batches, writer, workers, cancelled)
        else:
            complete = self._write_here(batches, writer, cancelled)
        if complete and opened.swap_pending and not (cancelled and cancelled()):
            swap(self.index_dir, self._gen)  # complete: searches switch to it in one rename

    def _write_here(self, batches: "_Batches", writer, cancelled: Callable[[], bool] | None) -> bool:
        """Read ``batches.jobs`` in this process, committing in batches (:func:`batch_limits`);
        False when the writer could not be opened again after a commit."""
        report, jobs = batches.report, batches.jobs
        pending_bytes = docs_at_commit = 0
        pending_entries: dict[str, dict] = {}
        for n, job in enumerate(jobs):
            if cancelled and cancelled():
                break
            entry = self._index_file(writer, job, report, lambda frac, n=n, job=job: batches.tick(
                n, int(frac * job.todo_bytes)))
            if entry is not None:
                pending_entries[job.path] = entry
            batches.done_bytes += job.todo_bytes
            pending_bytes += job.todo_bytes
            batches.tick(n + 1)
            batch_bytes, batch_docs = batch_limits(batches.commits)
            if (pending_bytes >= batch_bytes or report.messages_added - docs_at_commit >= batch_docs
                    or len(writer.pool) >= BATCH_POSTINGS):
                # Commit in batches so results appear while a long build runs; the manifest
                # moves forward only after the commit it describes.
                batches.commit(writer, n + 1, entries=pending_entries)
                pending_entries, pending_bytes = {}, 0
                docs_at_commit = report.messages_added
                writer = self._writer(batches.ix, report)
                if writer is None:
                    return False
        batches.commit(writer, len(jobs), entries=pending_entries)
        return True

    def _walk_all(self, files: list[tuple[Source, str]]) -> None:
        """Add to ``files`` (in place: the list every later step of the refresh plans from) the
        transcripts of the agents :meth:`refresh` was told to skip: the index must be made anew,
        from every transcript."""
        if not self._unchanged:
            return
        found, seen, known = self.found, self._seen, {p for _, p in files}
        more = self.discover(skip=frozenset(s.agent for s in self.sources if s.agent not in self._unchanged))
        self.found, self._seen, self._unchanged = {**found, **self.found}, seen | self._seen, frozenset()
        files.extend((src, p) for src, p in more if p not in known)

    def _all_unchanged(self, report: RefreshReport) -> bool:
        """True (and ``report``'s counts filled) when every transcript of the manifest belongs
        to an agent of ``refresh(unchanged=...)``."""
        self._gen = where(self.index_dir)
        manifest = self._load_manifest()
        agents = [e.get("agent") for e in manifest.files.values()]
        if not agents or not self._unchanged.issuperset(agents):
            return False
        report.files_seen = len(agents)
        for a in agents:
            report.by_agent[a] = report.by_agent.get(a, 0) + 1
        return True

    def _touch_last_refresh(self) -> None:
        """The time of the last refresh, for ``crabsearch status`` (a tiny file, to the second:
        written once per second at most)."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        path = self.index_dir / LAST_REFRESH
        try:
            if _LAST_TOUCH.get(str(path)) == (now, os.stat(path).st_mtime_ns):
                return  # written this second by this process, and not since by another
        except OSError:
            pass
        try:
            write_private(path, now)
            _LAST_TOUCH[str(path)] = (now, os.stat(path).st_mtime_ns)
        except OSError:
            pass

    # -- internals ----------------------------------------------------------------------------

    def _writer(self, ix, report: RefreshReport):
        """A Whoosh writer (its own lock is free under the writers' lock, unless an older
        crabsearch holds it: then waiting up to ``LOCK_WAIT``); None and ``report.busy`` when it
        stays taken."""
        try:
            self._open_writer = ix.writer(timeout=LOCK_WAIT, delay=0.25, codec=CompactCodec())
            use_compact_pool(self._open_writer)
        except LockError:
            report.busy = True
            self._open_writer = None
        return self._open_writer

    def _load_manifest(self) -> Manifest:
        """The manifest, read once per change of its file: a refresh plans twice (before and
        under the writer lock)."""
        try:
            st = os.stat(self._gen / Manifest.NAME)
            key = (str(self._gen), st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        cached = getattr(self, "_manifest_cache", None)
        if key is None or not cached or cached[0] != key:
            cached = (key, Manifest.load(self._gen))
            self._manifest_cache = cached if key is not None else None
        return cached[1].copy()  # refresh adds and deletes entries

    def _plan(self, ix, report: RefreshReport,
              files: list[tuple[Source, str]]) -> tuple[list[_Job], list[str], Manifest]:
        manifest = self._load_manifest() if not report.rebuilt else Manifest(self._gen, replace=True)
        # A file the manifest does not know may still have documents in the index (a manifest
        # lost or damaged, or a crash between an index commit and the manifest save): its
        # documents are then replaced, not added twice.
        self._index_has_docs = doc_total(ix) > 0
        if manifest.files and not self._index_has_docs:
            # index lost: the manifest must not claim anything
            if any(e.get("session") for e in manifest.files.values()):  # not only empty files
                report.rebuilt = report.rebuilt or "the index held none of the sessions its manifest lists; rebuilding"
            manifest = Manifest(self._gen, replace=True)
        elif not manifest.files and self._index_has_docs and not report.rebuilt:
            report.rebuilt = "the index's manifest was missing or unreadable; reading every transcript again"
        report.files_seen, report.by_agent = 0, {}
        self._manifest_errors = dict(manifest.errors)
        jobs: list[_Job] = []
        found: set[str] = set()
        if report.rebuilt or not manifest.files:
            self._walk_all(files)
        for path, entry in manifest.files.items():  # agents known unchanged: kept as indexed
            if entry.get("agent") in self._unchanged:
                found.add(path)
                report.files_seen += 1
                report.by_agent[entry["agent"]] = report.by_agent.get(entry["agent"], 0) + 1
        for src, path in files:
            if path in found:
                continue
            try:
                size, mtime_ns, ctime_ns = src.stat(path)
            except Exception:  # noqa: BLE001 - vanished between discovery and stat (or unreadable)
                continue
            found.add(path)
            report.files_seen += 1
            report.by_agent[src.agent] = report.by_agent.get(src.agent, 0) + 1
            old = manifest.files.get(path)
            if old and old["size"] == size and old["mtime_ns"] == mtime_ns:
                continue
            err = self._manifest_errors.get(path)
            if err and (err.get("size"), err.get("mtime_ns"), err.get("ctime_ns")) == (
                    size, mtime_ns, ctime_ns):
                continue  # still unreadable as last time (a chmod changes ctime: then retried)
            job = _Job(src, path, size, mtime_ns, 0, None, fresh=old is None, previous=old,
                       in_bytes=src.in_bytes(path))
            if old and size >= old["size"] and old["offset"] <= size:
                try:
                    same_head = src.fingerprint(path, old["size"]) == old["head"]
                except Exception:  # noqa: BLE001 - unreadable head: read it again from the start
                    same_head = False
                if same_head and old.get("agent") == src.agent:
                    job.start, job.state = old["offset"], manifest.state(path)
            jobs.append(job)
        removed = [p for p in manifest.files if p not in found and self.gone(p, manifest.files[p])]
        report.files_kept = len(manifest.files) - len(found.intersection(manifest.files)) - len(removed)
        for p in [p for p in self._manifest_errors if p not in found]:
            del self._manifest_errors[p]
        return jobs, removed, manifest

    def gone(self, path: str, entry: Mapping) -> bool:
        """True when indexed unit ``path`` (its manifest ``entry``), which the last
        :meth:`discover` did not find, is gone, so its documents must be deleted: its reader's
        ``stat`` raises ``FileNotFoundError`` or ``NotADirectoryError`` (the file, or the member
        of a database, does not exist), the file is the one discovery found under another name
        (the same device and inode: a folder reached through a symlink one run and directly the
        next), a transcript file read before is no regular file any more (a FIFO or a directory
        in its place: never read), or no reader reads its agent. A unit that cannot be looked at
        now (``EACCES``: a directory or a database made unreadable) or that exists outside the
        folders this run looked in (another ``CODEX_HOME``, config ``[sources]`` folders lost to
        a broken config file) is not known gone: False."""
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) in self._seen:
                return True
            if entry.get("bytes") and not stat.S_ISREG(st.st_mode):
                return True
        except OSError:
            pass
        src = SOURCES.get(entry.get("agent"))
        if src is None:
            return True
        container = container_of(path)
        if container != path and os.path.exists(container) and not os.access(container, os.R_OK):
            return False  # a member's reader finds no member in a file it cannot open
        try:
            src.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return True
        except Exception:  # noqa: BLE001 - cannot be looked at now: not known gone
            return False
        return False

    def _index_file(self, writer, job: _Job, report: RefreshReport,
                    progress: Callable[[float], None]) -> dict | None:
        """Read one unit and add its documents (:func:`add_file`, the writer seeing the older
        documents it replaces); its manifest entry, or None when it was not read. A failure is
        named once in ``report.errors`` and remembered in the manifest's errors
        (:meth:`_file_error`)."""
        added = add_file(writer, job, self.index_tool_output, progress,
                         replace=self._replaces(job), older=True)
        self._count(added, report, job)
        return added.entry

    def _replaces(self, job: _Job) -> bool:
        """True when the index may hold documents of ``job``'s unit from an earlier read that
        reading it from the start replaces (deleted by ``fkey``)."""
        return job.start == 0 and (not job.fresh or self._index_has_docs)

    def _count(self, added: "Added", report: RefreshReport, job: _Job) -> None:
        """Record what :func:`add_file` did with ``job`` in ``report`` and the manifest's errors."""
        if added.error is not None:
            self._file_error(job, report, added.error)
            return
        if added.entry is None:
            return
        self._manifest_errors.pop(job.path, None)
        report.files_read += 1
        report.sessions_changed += 1
        report.messages_added += added.messages
        report.skipped_lines += added.skipped
        report.bytes_read += added.bytes_read

    def _file_error(self, job: _Job, report: RefreshReport, message: str) -> None:
        """Name a unit that could not be read or indexed (``message``, :func:`error_line`) in
        ``report.errors`` (once: not again while it stays unchanged and fails the same way) and
        remember it in the manifest's errors, so it is read again only when it changes."""
        known = self._manifest_errors.get(job.path)
        if not known or known.get("error") != message or known.get("mtime_ns") != job.mtime_ns:
            report.errors.append(f"{job.path}: {message}")  # named once, not at every refresh
        try:
            ctime = job.source.stat(job.path)[2]
        except Exception:  # noqa: BLE001 - gone or unreadable: retried when it is seen again
            ctime = None
        self._manifest_errors[job.path] = {"error": message, "size": job.size, "mtime_ns": job.mtime_ns,
                                           "ctime_ns": ctime}

    def _save(self, manifest: Manifest, entries: dict[str, dict]) -> None:
        manifest.errors = {p: e for p, e in self._manifest_errors.items()
                           if p not in manifest.files and p not in entries}
        manifest.save(entries)
        make_private(self._gen, owned)  # manifest.db, when this save created it


def error_line(exc: BaseException) -> str:
    """The one-line reason a unit failed with ``exc``: an ``OSError``'s own words
    (``Permission denied``), else ``Type: message`` (whitespace folded, cut at ``REASON_CAP``)."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    text = " ".join(str(exc).split())[:REASON_CAP]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def entry_of(job: _Job, read, fkey: str, head: str) -> dict:
    """The manifest entry of a unit just read: skip counts by reason and the first skipped
    places (``[where, reason]``, :data:`PLACES_KEPT`) added to the earlier ones when it was
    read from an offset."""
    old = job.previous or {}
    reasons = dict(old.get("reasons") or {}) if job.start else {}
    for why, n in read.stats.reasons.items():
        reasons[why] = reasons.get(why, 0) + n
    places = [list(p) for p in (old.get("places") or [])] if job.start else []
    places += [[where, why] for where, why in read.stats.places]
    return {"agent": job.source.agent, "fkey": fkey, "size": job.size, "mtime_ns": job.mtime_ns,
            "bytes": job.size if job.in_bytes else 0,
            "offset": read.end_offset, "head": head, "state": redact_value(read.state),
            "session_id": read.session.session_id, "messages": read.session.message_count,
            "session": bool(read.session.message_count or read.session.title),
            "skipped": sum(reasons.values()), "reasons": reasons, "places": places[:PLACES_KEPT]}


@dataclass
class Added:
    """What :func:`add_file` did with one unit: ``entry``, its manifest entry (None when it was
    not read: gone since discovery, or failed); ``error``, the one-line reason it failed
    (:func:`error_line`), else None; the messages added, lines skipped and bytes read; and
    ``replaced``, the ``(field, value)`` terms of the older documents its documents replace (for
    a writer that does not see them: :mod:`.parallel`)."""

    entry: dict | None = None
    error: str | None = None
    messages: int = 0
    skipped: int = 0
    bytes_read: int = 0
    replaced: list[tuple[str, str]] = field(default_factory=list)


def add_file(writer, job: _Job, tool_output: bool, progress: Callable[[float], None], *,
             replace: bool, older: bool) -> Added:
    """Read one unit and add its documents to ``writer``.

    ``replace``: its unit is read from the start and the index may hold documents of an earlier
    read (deleted by ``fkey``). ``older``: ``writer`` sees the index's documents (the deletions
    are its own); False for a worker's writer of a segment of its own, whose parent deletes
    :attr:`Added.replaced` before committing the segment. ``progress`` gets the share of the
    unit done (0 to 1); an exception it raises is raised again once the unit is done.

    Nothing one file holds stops the others: any exception while reading it or making its
    documents (not only ``OSError``) is that file's :attr:`Added.error`. Every document is made
    before the first is added, so a failure while reading or making them adds nothing half-done
    and leaves the file's earlier documents in place.
    """
    path = Path(job.path)
    fkey = file_key(job.path)
    tick_failed: list[Exception] = []

    def tick(frac: float) -> None:  # a failing progress display is not this file's error
        try:
            progress(frac)
        except Exception as exc:  # noqa: BLE001 - raised again once the file is done
            tick_failed.append(exc)

    try:
        with full_tool_output(tool_output):
            read = job.source.read(path, job.start, job.state)
        head = job.source.fingerprint(job.path, job.size)
        skey = f"{read.session.agent}:{read.session.session_id}"
        count = len(read.messages)
        acting = acting_flags(read.messages)
        docs = []
        for i, m in enumerate(read.messages):
            docs.append(message_doc(fkey, skey, read.session, m, acting=acting[i], tool_output=tool_output))
            if i % 2000 == 1999:
                tick(i / count / 2)
        empty = read.session.message_count == 0 and not read.session.title
        session = None if empty else session_doc(fkey, read.session)
        entry = entry_of(job, read, fkey, head)
        dumps(entry["state"])  # the state must be storable (it goes into the manifest)
    except FileNotFoundError:
        return Added()  # deleted between discovery and reading: the next refresh removes it
    except Exception as exc:  # noqa: BLE001 - the rule: one file's failure is that file's error
        return Added(error=error_line(exc))
    if job.start == 0:
        replaced = [("fkey", fkey)] if replace else []
    else:
        replaced = [("mkey", doc["mkey"]) for doc in docs] + [("mkey", f"{fkey}:s")]
    try:
        if older and job.start == 0 and replace:
            writer.delete_by_term("fkey", fkey)
        add = writer.add_document if job.start == 0 or not older else writer.update_document
        for i, doc in enumerate(docs):
            add(**doc)
            if i % 2000 == 1999:
                tick(0.5 + i / count / 2)
        if session is None:
            # Nothing to show (an empty file, or one holding only other sessions' summary lines).
            if job.start and older:
                writer.delete_by_term("mkey", f"{fkey}:s")
        else:
            add(**session)
    except Exception as exc:  # noqa: BLE001 - a document the index rejects: this file's error
        return Added(error=error_line(exc))
    if tick_failed:
        raise tick_failed[0]
    return Added(entry, None, len(read.messages), read.stats.skipped,
                 max(0, read.end_offset - job.start) if job.todo_bytes else 0, replaced)

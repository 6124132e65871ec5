"""A large refresh on several cores: worker processes that each read transcripts, make their
documents and write a Whoosh segment of their own, which the refresh's process commits.

A build spends nearly all its time in work that one transcript does not share with another:
reading it, analysing its documents, and writing their postings into a segment (reading and
adding about two thirds, a segment's postings the other third; committing a segment's table of
contents, its seal, column files and the manifest save about 1 %). So each worker holds a
``SegmentWriter`` of its own, as ``whoosh/multiproc.py``'s ``MpWriter(multisegment=True)`` does
with its ``SubWriterTask`` (whoosh-reloaded 2.7.5): ``_lk=False``, a segment finished with
``_finalize_segment`` and added to the parent's table of contents. Unlike ``MpWriter``:

* a worker writes into a folder of its own in the generation (:data:`WORKER_PREFIX`, with
  Whoosh's posting and column scratch files), and its finished segment (one compound ``.seg``
  file) is moved into the generation only by the commit that names it, so Whoosh's
  ``clean_files`` at a commit never meets a segment being written, and what a killed worker
  left is its folder (``store.remove_unfinished`` removes it);
* workers take transcripts one by one, newest first, as the in-process build reads them, and
  each finishes a segment at the sizes the in-process build commits its batches at, the
  batches numbered across the workers (``writer.batch_limits``: worker ``k`` of ``n`` writes
  batches ``k``, ``k + n``, ...): the first segments are small, so recent sessions are
  searchable within seconds, and a build makes about as many segments as in one process;
* the parent commits each segment as it comes (every one that came meanwhile in one table of
  contents), with the deletions of the older documents its transcripts replace
  (``writer.Added.replaced``), followed by the manifest save that describes it; a worker keeps
  reading meanwhile (:data:`AHEAD_BYTES` of transcripts handed out ahead).

A worker that dies (killed, out of memory) is noticed at the end of its socket: the
transcripts it held in an uncommitted segment are not in the manifest, so the next refresh
reads them again; the other workers go on. A worker is a new Python process (``python -c``), not a fork: a fork of
a process running threads, as the app and the resident server do, can inherit a held lock.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
from collections import deque
from multiprocessing.connection import Connection, wait
from pathlib import Path

from .layout import INDEX_NAME, WORKER_PREFIX

MIN_BYTES = 32 * 1024 * 1024
"""A refresh reads in worker processes only when it has at least this many bytes of transcripts
to read (and two transcripts): a worker costs a Python start and the imports of the readers
(about a third of a second of a core) before it reads anything, which an everyday refresh of
what agents appended (a few files, well under a megabyte) would pay many times over. At this
size one process reads for about two seconds, and two workers save about a second of it."""
MAX_DEFAULT_JOBS = 4
"""The default number of workers is the cores this process may run on, at most this many: each
worker holds a batch's postings (up to ``writer.BATCH_POSTINGS``, about 140 MiB of peak RSS at
the largest batch), so a default on a many-core machine must not take gigabytes."""
AHEAD_BYTES = 8 * 1024 * 1024
"""Transcript bytes handed out to a worker beyond the one it is reading (at least one more
transcript): it goes on reading while the parent commits another worker's segment."""
AHEAD_FILES = 16


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_jobs() -> int:
    """The workers of a refresh when neither ``--jobs`` nor ``index_jobs`` says:
    :func:`usable_cores`, at most :data:`MAX_DEFAULT_JOBS`."""
    return min(usable_cores(), MAX_DEFAULT_JOBS)


def workers_for(jobs: int, todo: list) -> int:
    """How many worker processes read ``todo`` (the planned ``writer._Job`` list) for a refresh
    allowed ``jobs``: 1 (read in this process) below :data:`MIN_BYTES` or two transcripts."""
    if jobs <= 1 or len(todo) < 2 or sum(j.todo_bytes for j in todo) < MIN_BYTES:
        return 1
    return min(jobs, len(todo))


# -- the worker process -----------------------------------------------------------------------------


class _Folder:
    """The index as a worker's writer sees it: the index's schema, no segments, and the
    worker's own folder as its storage (Whoosh's ``SegmentWriter`` asks ``storage``,
    ``indexname`` and ``_read_toc()``)."""

    def __init__(self, folder: str, schema) -> None:
        from whoosh.filedb.filestore import FileStorage
        from whoosh.index import TOC

        self.storage, self.indexname = FileStorage(folder), INDEX_NAME
        self._toc = TOC(schema, [], 0)

    def _read_toc(self):
        return self._toc


def _die_with_parent() -> None:
    """Linux: this process is killed when its parent dies (``prctl(PR_SET_PDEATHSIG)``), so a
    worker does not go on writing after a ``kill -9`` of the refresh; elsewhere it notices at
    its next message (end of file on its socket)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


_BOOT = ("import sys; from multiprocessing.connection import Connection; c = Connection(int(sys.argv[1])); "
         "sys.path[:] = c.recv(); from crabsearch.index.parallel import _work; _work(c, *c.recv())")
"""A worker's start: the standard library only until the parent's ``sys.path`` has come."""


def _work(conn, gen: str, folder: str, limits: list, postings: int, tool_output: bool, parent: int) -> None:
    """A worker's life: take ``("job", n, job, replace)`` messages, answer each with ``("done",
    n, Added)``, and after each batch's worth (its ``i``-th batch's ``(bytes, messages)`` are
    ``limits[i]``, the last repeated; or ``postings`` in the pool) a ``("segment", segment)`` of the documents of the transcripts done since the last one; on
    ``("flush",)`` the last ``("segment", segment or None)`` and ``("last",)``. A failure
    outside a transcript is sent as ``("failed", exception)``."""
    _die_with_parent()
    if os.getppid() != parent:
        return
    try:
        _serve(conn, gen, folder, limits, postings, tool_output)
    except (EOFError, BrokenPipeError):
        return  # the parent is gone
    except BaseException as exc:  # noqa: BLE001 - the parent raises it
        try:
            conn.send(("failed", exc))
        except Exception:  # noqa: BLE001 - not picklable, or the parent is gone
            try:
                conn.send(("failed", RuntimeError(f"{type(exc).__name__}: {exc}")))
            except Exception:  # noqa: BLE001
                pass


def _serve(conn, gen: str, folder: str, limits: list, postings: int, tool_output: bool) -> None:
    from whoosh.filedb.filestore import FileStorage

    from .codec import CompactCodec
    from .pool import use_compact_pool
    from .writer import add_file
    from whoosh.writing import SegmentWriter

    ix = _Folder(folder, FileStorage(gen).open_index(INDEX_NAME).schema)
    writer, batch, done_bytes, done_docs = None, 0, 0, 0
    most_bytes, most_docs = limits[0]
    while True:
        msg = conn.recv()
        if msg[0] == "flush":
            conn.send(("segment", _finish(writer)))
            conn.send(("last",))
            return
        _, n, job, replace = msg
        job = _Sent.restore(job)
        if writer is None:
            writer = SegmentWriter(ix, _lk=False, codec=CompactCodec())
            use_compact_pool(writer)
            most_bytes, most_docs = limits[min(batch, len(limits) - 1)]
            batch += 1
        added = add_file(writer, job, tool_output, lambda frac: conn.send(("tick", n, frac)),
                         replace=replace, older=False)
        conn.send(("done", n, added))
        done_bytes += job.todo_bytes
        done_docs += added.messages
        if done_bytes >= most_bytes or done_docs >= most_docs or len(writer.pool) >= postings:
            conn.send(("segment", _finish(writer)))
            writer, done_bytes, done_docs = None, 0, 0


def _finish(writer):
    """Write ``writer``'s segment (postings, per-document files, assembled into one compound
    file in the worker's folder) and return it; None when it holds no document."""
    if writer is None:
        return None
    if not writer._added:
        writer.cancel()
        return None
    segment = writer._finalize_segment()
    writer._finish()  # removes the writer's scratch folder
    return segment


@dataclasses.dataclass
class _Sent:
    """A ``writer._Job`` as sent to a worker: its source by agent name when it is the
    registered reader of that agent (a reader made elsewhere, as tests do, travels whole)."""

    job: object
    agent: str | None

    @classmethod
    def of(cls, job) -> "_Sent":
        from ..sources import SOURCES

        if SOURCES.get(job.source.agent) is job.source:
            return cls(dataclasses.replace(job, source=None), job.source.agent)
        return cls(job, None)

    @staticmethod
    def restore(sent: "_Sent"):
        from ..sources import SOURCES

        return dataclasses.replace(sent.job, source=SOURCES[sent.agent]) if sent.agent else sent.job


# -- the parent -------------------------------------------------------------------------------------


class _Worker:
    """The parent's side of one worker: its process, pipe and folder, the transcripts handed
    out and not yet done (``out``, job numbers), and the ones done since its last segment
    (``done``, ``(n, Added)``). The process is ``python -c`` :data:`_BOOT` over a socket pair
    (not ``multiprocessing``'s ``spawn``, which runs the parent's main script again in the
    child: a script without a ``__main__`` guard would refresh in every worker). Its output goes
    nowhere (the app's screen is the terminal): what fails is sent, or its exit status named."""

    def __init__(self, gen: Path, k: int, workers: int, tool_output: bool) -> None:
        self.folder = gen / f"{WORKER_PREFIX}{k}-{os.getpid()}"
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(mode=0o700)
        mine, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", _BOOT, str(theirs.fileno())],
                                         pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.conn = Connection(mine.detach())
        self.conn.send(list(sys.path))
        from .writer import BATCH_POSTINGS, batch_limits

        # batch i of worker k is the refresh's batch k + i * workers (batch_limits stops growing at 16)
        limits = [batch_limits(k + i * workers) for i in range(16 // workers + 2)]
        self.conn.send((str(gen), str(self.folder), limits, BATCH_POSTINGS, tool_output, os.getpid()))
        self.out: deque[int] = deque()
        self.out_bytes = 0
        self.done: list = []
        self.flushing = self.finished = False

    def close(self) -> None:
        """Stop the process (when it still runs) and remove the folder."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.conn.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def write(indexer, batches, writer, workers: int, cancelled) -> bool:
    """Read ``batches.jobs`` in ``workers`` processes and commit their segments through
    ``batches`` (``writer._Batches``), ``writer`` being the refresh's open Whoosh writer (the
    deletions of removed transcripts already in it). Returns True when every transcript was
    handed out and every worker finished (a rebuilt generation may be swapped in), False when
    the refresh was cancelled, a worker died or the writer could not be opened again. Raises
    what a worker raised outside a transcript (a full disk)."""
    jobs, report = batches.jobs, batches.report
    todo = deque(range(len(jobs)))
    crew: list[_Worker] = []
    try:
        for k in range(workers):
            crew.append(_Worker(batches.gen, k, workers, indexer.index_tool_output))
    except BaseException:
        for w in crew:
            w.close()
        raise
    by_conn = {w.conn: w for w in crew}
    files_done, partial = 0, {}
    complete = True
    try:
        while not all(w.finished for w in crew):
            if cancelled and cancelled() and todo:
                todo.clear()
                complete = False
            for w in crew:
                _hand_out(w, todo, jobs, indexer)
            ready = []  # (segment or None, worker, [(n, Added)] in it) to commit
            for conn in wait([w.conn for w in crew if not w.finished], timeout=0.25):
                w = by_conn[conn]
                ended = False
                for msg in _drain(w):
                    if msg is None:
                        ended = True
                        break
                    kind = msg[0]
                    if kind == "tick":
                        partial[msg[1]] = int(msg[2] * jobs[msg[1]].todo_bytes)
                    elif kind == "done":
                        n, added = msg[1], msg[2]
                        w.out.remove(n)
                        w.out_bytes -= jobs[n].todo_bytes
                        partial.pop(n, None)
                        files_done += 1
                        batches.done_bytes += jobs[n].todo_bytes
                        if added.error is not None:
                            indexer._count(added, report, jobs[n])
                        else:
                            w.done.append((n, added))
                            batches.reading += added.messages
                    elif kind == "segment":  # holds the transcripts done before it, not after
                        ready.append((msg[1], w, w.done))
                        w.done = []
                    elif kind == "last":
                        w.finished = True
                    elif kind == "failed":
                        raise msg[1]
                if ended and not w.finished:
                    w.finished, complete = True, False
                    _died(w, report)
            batches.tick(files_done, sum(partial.values()))
            if ready:
                writer = _commit(indexer, batches, writer, ready, files_done)
                if writer is None:
                    return False
        batches.commit(writer, files_done, entries={})
        return complete and not todo
    finally:
        for w in crew:
            w.close()


def _hand_out(w: _Worker, todo: deque, jobs: list, indexer) -> None:
    """Keep ``w`` supplied (the next transcripts, newest first, up to :data:`AHEAD_BYTES` and
    :data:`AHEAD_FILES` beyond the one it reads); once there are none left, ask it for its last
    segment."""
    if w.finished or w.flushing:
        return
    try:
        while todo and len(w.out) < AHEAD_FILES and (len(w.out) < 2 or w.out_bytes < AHEAD_BYTES):
            n = todo.popleft()
            w.out.append(n)
            w.out_bytes += jobs[n].todo_bytes
            w.conn.send(("job", n, _Sent.of(jobs[n]), indexer._replaces(jobs[n])))
        if not todo and not w.out:
            w.flushing = True
            w.conn.send(("flush",))
    except OSError:  # the worker died: its socket's end of file says so at the next wait
        w.flushing = True


def _drain(w: _Worker):
    """The messages waiting on ``w``'s pipe, then None when it is closed (the process ended)."""
    try:
        while w.conn.poll():
            yield w.conn.recv()
    except (EOFError, OSError):
        yield None


def _died(w: _Worker, report) -> None:
    """Name a worker that ended without finishing in ``report.errors``: the transcripts it held
    are not in the manifest, so the next refresh reads them again."""
    try:
        code = w.proc.wait(5)
    except subprocess.TimeoutExpired:
        w.proc.kill()
        code = w.proc.wait()
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
    held = len(w.out) + len(w.done)
    report.errors.append(f"an index worker stopped ({how}); the {held} transcripts it was reading "
                         "are read again at the next refresh")
    w.out.clear()
    w.done.clear()


def _commit(indexer, batches, writer, ready: list, files_done: int):
    """Commit the segments in ``ready`` (``(segment or None, worker, [(n, Added)])``: a
    worker's segment and the transcripts it holds) in one table of contents, with the deletions
    of the older documents they replace; the manifest entries saved after. Returns the next
    writer (None when it cannot be opened: ``report.busy``)."""
    segments, entries = [], {}
    for segment, w, held in ready:
        for n, added in held:
            for fieldname, value in added.replaced:
                writer.delete_by_term(fieldname, value)
            job = batches.jobs[n]
            indexer._count(added, batches.report, job)
            batches.reading -= added.messages
            if added.entry is not None:
                entries[job.path] = added.entry
        if segment is not None:
            prefix = segment.segment_id() + "."
            for name in os.listdir(w.folder):
                if name.startswith(prefix):
                    os.replace(w.folder / name, batches.gen / name)
            segments.append(segment)
    batches.commit(writer, files_done, segments=segments, entries=entries)
    return indexer._writer(batches.ix, batches.report)


def commit_with(writer, segments: list, mergetype) -> None:
    """``writer.commit(mergetype=...)`` that also adds ``segments`` (finished elsewhere, their
    files in the writer's storage) to the table of contents it writes: Whoosh's
    ``SegmentWriter.commit``, with ``MpWriter``'s ``multisegment`` step (the merge policy sees
    the index's segments, not the added ones)."""
    writer._check_state()
    final = writer._merge_segments(mergetype, None, None)
    if writer._added:
        final.append(writer._finalize_segment())
    else:
        writer._close_segment()
    writer._commit_toc(final + list(segments))
    writer._finish()

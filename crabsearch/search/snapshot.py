"""The recent sessions as last listed, kept beside the index for the app's first frame.

The app opens on the recent sessions. Reading them takes the index opened (its segments, the
session documents) and their first prompts read from the transcripts, before the first frame
(measured in ``bench/results/2026-12-02-app-start-snapshot-ab.txt``). :meth:`Engine.recent <crabsearch.search.engine.Engine.recent>`
keeps its answer here (``crabsearch-recent.pickle`` in the index root), with the state of the
index it was read from (:func:`state`: the current generation and its newest Whoosh table of
contents, by name, time and size; every commit writes a new one). The app's next start shows
it when the index is still in that state (:func:`load`), then opens the index and refreshes it
as before. It is a cache: any other state, format or resume arguments, a transcript of a row
gone since, or a file that is not a small regular file of its own is a miss, and the rows are
read from the index. Only masked rows are kept (``SECURITY.md``): an unmasked listing
(``--no-redact``, the app's Ctrl+R) is never written.

Pickle, as the index itself stores its fields and posting blocks (Whoosh): the file is the
user's own, in a directory only they can write (``paths.PRIVATE_DIR``).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import stat
from pathlib import Path

from ..hits import Hit, Item, SessionRef
from ..index.layout import INDEX_NAME, current_dir
from ..model import Session
from ..paths import write_atomically

FILE = "crabsearch-recent.pickle"
"""The snapshot's name in the index root (``crabsearch-``: a name the index owns, ``layout.owned``)."""
FORMAT = 2
"""Bumped when the snapshot's layout changes (the rows' classes are checked field by field too)."""
KEEP = 4
"""At most this many listings (limit and resume arguments) kept for one state of the index."""
MAX_BYTES = 4 << 20
"""A larger file is a miss (50 rows take ~50 KB): a crafted one never holds up the start."""


def _shape() -> tuple:
    """The field names of the classes a row is made of: a row pickled by another version of
    them is a miss, never a half-filled object."""
    return FORMAT, tuple(tuple(f.name for f in dataclasses.fields(c)) for c in (Hit, Item, SessionRef, Session))


def state(root: Path) -> tuple | None:
    """The state of the index in ``root``: ``(generation, table of contents, its mtime in ns,
    its size)`` for the newest ``_MAIN_<n>.toc`` of the current generation; None when there is
    no index (or it cannot be read). One ``readlink`` and one directory listing: no Whoosh."""
    gen = current_dir(Path(root))
    if gen is None:
        return None
    prefix = f"_{INDEX_NAME}_"
    try:
        best, best_n = None, -1
        with os.scandir(gen) as it:
            for entry in it:
                name = entry.name
                if name.startswith(prefix) and name.endswith(".toc"):
                    n = name[len(prefix):-4]
                    if n.isdigit() and int(n) > best_n:
                        best, best_n = entry, int(n)
        if best is None:
            return None
        st = best.stat()
    except OSError:
        return None
    return gen.name, best.name, st.st_mtime_ns, st.st_size


def _read(path: Path):
    """The unpickled contents of ``path`` when it is a regular file (not a link, a FIFO, a
    device) of at most :data:`MAX_BYTES`; raises otherwise (``OSError``, ``ValueError``, or
    what unpickling raises). Opened without blocking and without following a link."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            raise ValueError("not a snapshot file")
        return pickle.loads(fh.read(MAX_BYTES + 1))


def _listing(limit: int, flags: dict[str, str] | None) -> tuple:
    """The key of a listing: its ``limit`` and the resume arguments (config ``[resume]``) its
    rows carry in their commands."""
    return limit, tuple(sorted((flags or {}).items()))


def load(root: Path, limit: int, flags: dict[str, str] | None = None) -> list[Hit] | None:
    """The masked rows kept for ``limit`` and the resume arguments ``flags`` when the index in
    ``root`` is still in the state they were read from and each row's transcript is still
    there; None for a miss (no file, another state, shape or listing, a transcript gone, a file
    that is not a small regular one). Never raises."""
    now = state(root)
    if now is None:
        return None
    try:
        kept = _read(Path(root) / FILE)
        if kept.get("shape") != _shape() or kept.get("state") != now:
            return None
        rows = kept["rows"].get(_listing(limit, flags))
    except Exception:  # noqa: BLE001 - a cache: anything wrong with it is a miss
        return None
    if not isinstance(rows, list) or not all(type(h) is Hit for h in rows):
        return None
    # A transcript deleted since: its row says so when read from the index (not its old text).
    if any(h.session.path and not os.path.exists(h.session.path) for h in rows):
        return None
    return rows


def save(root: Path, read_in: tuple, limit: int, flags: dict[str, str] | None, rows: list[Hit]) -> None:
    """Keep ``rows`` (the masked recent sessions for ``limit``, with the resume arguments
    ``flags``) as read in the index state ``read_in`` (:func:`state`, taken before the read),
    with the other listings kept for that state; nothing when the index has moved on since.
    Written as a new 0600 file renamed over the old one (never through a link). Errors are
    ignored (a read-only index directory keeps no snapshot)."""
    if state(root) != read_in:
        return
    path = Path(root) / FILE
    try:
        kept = _read(path)
        listings = kept["rows"] if kept.get("shape") == _shape() and kept.get("state") == read_in else {}
    except Exception:  # noqa: BLE001 - none yet, or not readable: start afresh
        listings = {}
    key = _listing(limit, flags)
    if listings.get(key) == rows:
        return
    listings.pop(key, None)
    while len(listings) >= KEEP:
        listings.pop(next(iter(listings)))
    listings[key] = rows
    try:
        write_atomically(path, [pickle.dumps({"shape": _shape(), "state": read_in, "rows": listings},
                                             protocol=pickle.HIGHEST_PROTOCOL)], mode=0o600, sync=False)
    except (OSError, pickle.PicklingError):
        pass

"""The recent sessions as last listed, kept beside the index for the app's first frame (issue 13).

The app opens on the recent sessions. Reading them takes the index opened (its segments, the
session documents) and their first prompts read from the transcripts: 60-80 ms of a warm
start, before the first frame. :meth:`Engine.recent <crabsearch.search.engine.Engine.recent>`
keeps its answer here (``crabsearch-recent.pickle`` in the index root), with the state of the
index it was read from (:func:`state`: the current generation and its newest Whoosh table of
contents, by name, time and size; every commit writes a new one). The app's next start shows
it when the index is still in that state (:func:`load`), then opens the index and refreshes it
as before. It is a cache: any other state, format, or an unreadable file is a miss, and the
rows are read from the index. Masked rows only are kept when the caller masked (the app does).

Pickle, as the index itself stores its fields and posting blocks (Whoosh): the file is the
user's own, in a directory only they can write (``paths.PRIVATE_DIR``).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from pathlib import Path

from ..hits import Hit, Item, SessionRef
from ..index.layout import INDEX_NAME, current_dir
from ..model import Session
from ..paths import write_atomically

FILE = "crabsearch-recent.pickle"
"""The snapshot's name in the index root (``crabsearch-``: a name the index owns, ``layout.owned``)."""
FORMAT = 1
"""Bumped when the snapshot's layout changes (the rows' classes are checked field by field too)."""
KEEP = 4
"""At most this many listings (limit and masking) kept for one state of the index."""


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


def load(root: Path, limit: int, redact: bool) -> list[Hit] | None:
    """The rows kept for ``limit`` and ``redact`` when the index in ``root`` is still in the
    state they were read from; None for a miss (no file, another state or shape, an unreadable
    or foreign file). Never raises."""
    now = state(root)
    if now is None:
        return None
    try:
        with open(Path(root) / FILE, "rb") as fh:
            kept = pickle.load(fh)
        if kept.get("shape") != _shape() or kept.get("state") != now:
            return None
        rows = kept["rows"].get((limit, bool(redact)))
    except Exception:  # noqa: BLE001 - a cache: anything wrong with it is a miss
        return None
    if not isinstance(rows, list) or not all(type(h) is Hit for h in rows):
        return None
    return rows


def save(root: Path, read_in: tuple, limit: int, redact: bool, rows: list[Hit]) -> None:
    """Keep ``rows`` (the recent sessions for ``limit`` and ``redact``) as read in the index
    state ``read_in`` (:func:`state`, taken before the read), with the other listings kept for
    that state; nothing when the index has moved on since. Errors are ignored (a read-only index
    directory keeps no snapshot)."""
    if state(root) != read_in:
        return
    path = Path(root) / FILE
    try:
        with open(path, "rb") as fh:
            kept = pickle.load(fh)
        listings = kept["rows"] if kept.get("shape") == _shape() and kept.get("state") == read_in else {}
    except Exception:  # noqa: BLE001 - none yet, or not readable: start afresh
        listings = {}
    key = (limit, bool(redact))
    if listings.get(key) == rows:
        return
    listings.pop(key, None)
    while len(listings) >= KEEP:
        listings.pop(next(iter(listings)))
    listings[key] = rows
    try:
        write_atomically(path, [pickle.dumps({"shape": _shape(), "state": read_in, "rows": listings},
                                             protocol=pickle.HIGHEST_PROTOCOL)], sync=False)
    except (OSError, pickle.PicklingError):
        pass

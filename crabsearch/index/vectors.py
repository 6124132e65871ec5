"""Message vectors for similarity search (the ``semantic`` extra): where they are kept and how
they are made.

**The store** is ``crabsearch-vectors.db`` in the index root (an SQLite file, the standard
library's ``sqlite3``), beside the generations rather than inside one: a rebuild of the index
(a new schema, a damaged segment) keeps hours of embedding work, since a message's key does not
change with the index. Tables:

* ``meta``: ``layout`` (:data:`LAYOUT`) and ``model``, the embedder's ``name`` the vectors were
  made with (another name: every vector is dropped and made again);
* ``units``: per transcript unit (its path, as in the manifest): ``fkey``, ``head`` and ``size``
  (the manifest's fingerprint of its first bytes and its size when embedded: the unit was
  appended to, not rewritten, while its first ``size`` bytes still give ``head``, the indexer's
  own rule), ``upto`` (the messages before this index are embedded) and ``title`` (the title
  text embedded, or NULL);
* ``vecs``: ``(fkey, idx, v)``: the unit vector of message ``idx`` (``idx`` -1: the title) as
  float16 bytes.

**The job** (:func:`embed`) follows the current generation's manifest: units gone from it, or
whose first bytes changed (rewritten), lose their vectors; a unit that grew has its new messages
embedded; newest units first. It embeds what the index holds in the ``user``, ``assistant`` and
``acting`` fields (``documents.index_text_fields``: masked, no tool calls, tool output or
thinking), and each session's title, each cut by :func:`crabsearch.embedder.passage_text`. It
commits after every batch, so a stopped job keeps what it made. Transcripts are read, never
written.
"""

from __future__ import annotations

import os
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..embedder import passage_text
from ..sources import SOURCES

if TYPE_CHECKING:
    import sqlite3

# sqlite3, the manifest and the documents are imported where they are used: a search asks only
# whether the store exists (``store_path``) and reads it with ``load``.

NAME = "crabsearch-vectors.db"
LOCK = "crabsearch-vectors.lock"
"""Held (``flock``) by the one :func:`embed` run at a time of an index root."""
"""The store's file in the index root (``crabsearch-``: a name ``layout.owned`` knows)."""
TEXT_FIELDS = ("user", "assistant", "acting")
"""The indexed text fields whose messages get a vector."""
LAYOUT = 1
"""The store's tables (``meta`` ``layout``): a store of another layout is emptied and made again."""
BATCH = 16
"""Messages embedded (and committed) together."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS units (path BLOB PRIMARY KEY, fkey TEXT NOT NULL, head TEXT, size INTEGER NOT NULL,
                                  upto INTEGER NOT NULL, title TEXT);
CREATE TABLE IF NOT EXISTS vecs (fkey TEXT NOT NULL, idx INTEGER NOT NULL, v BLOB NOT NULL, PRIMARY KEY (fkey, idx));
"""


def store_path(root: Path) -> Path:
    """The store's file for the index root ``root``."""
    return Path(root) / NAME


def connect(root: Path) -> sqlite3.Connection:
    """The store of ``root``, created when missing, emptied when it was written in another layout
    (:data:`LAYOUT`) or made again when it is not a database (its vectors can always be made again).
    Raises ``sqlite3.Error`` (``OperationalError``) when it cannot be written."""
    import sqlite3  # noqa: PLC0415

    path = store_path(root)
    con = sqlite3.connect(path, timeout=30)
    os.chmod(path, 0o600)  # as the index's own files: vectors of the user's messages
    try:
        con.executescript(_SCHEMA)
    except sqlite3.DatabaseError:  # not a database (damaged): made again, as the index would be
        con.close()
        path.unlink()
        con = sqlite3.connect(path, timeout=30)
        os.chmod(path, 0o600)
        con.executescript(_SCHEMA)
    row = con.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
    if row is None or row[0] != str(LAYOUT):
        with con:
            con.executescript("DROP TABLE meta; DROP TABLE units; DROP TABLE vecs;" + _SCHEMA)
            con.execute("INSERT INTO meta VALUES ('layout', ?)", (str(LAYOUT),))
    return con


def remove(root: Path) -> bool:
    """Delete the store of ``root`` (similarity search is off again); True when there was one."""
    try:
        store_path(root).unlink()
    except FileNotFoundError:
        return False
    return True


CHUNK = 16384
"""Vectors turned to float32 at once by :meth:`Loaded.scores`."""


@dataclass
class Loaded:
    """Every vector of a store: ``keys[i]`` is ``(fkey, idx)`` of row ``i`` of ``matrix`` (a float16
    ``numpy`` array ``(n, dim)``, as stored: 768 bytes a vector); ``model`` the embedder's name."""

    keys: list[tuple[str, int]]
    matrix: object
    model: str | None

    def scores(self, query):
        """The cosine of every vector with the unit vector ``query`` (float32, shape ``(n,)``),
        computed in float32 :data:`CHUNK` rows at a time."""
        import numpy as np  # noqa: PLC0415

        q = np.asarray(query, dtype=np.float32)
        return np.concatenate([self.matrix[i:i + CHUNK].astype(np.float32) @ q
                               for i in range(0, len(self.keys), CHUNK)] or [np.zeros(0, np.float32)])


def load(root: Path) -> Loaded | None:
    """The vectors of ``root``'s store, or None when there is no store or it cannot be read."""
    import sqlite3  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    path = store_path(root)
    if not path.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as con:
            row = con.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
            rows = con.execute("SELECT fkey, idx, v FROM vecs").fetchall()
    except sqlite3.Error:
        return None
    if not rows:
        return Loaded([], np.zeros((0, 0), dtype=np.float16), row[0] if row else None)
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float16).reshape(len(rows), -1)
    return Loaded([(r[0], r[1]) for r in rows], matrix, row[0] if row else None)


@dataclass
class Embedded:
    """What one :func:`embed` run did: ``units`` read, ``messages`` embedded (titles included),
    their ``chars``, ``dropped`` units whose vectors were removed, ``left`` messages still to embed
    when it stopped early (0: the store follows the index), ``errors`` units that could not be
    read (``[(path, reason)]``), and the CPU ``seconds`` it took."""

    units: int = 0
    messages: int = 0
    chars: int = 0
    dropped: int = 0
    left: int = 0
    errors: list = field(default_factory=list)
    seconds: float = 0.0
    busy: bool = False
    """Another process was embedding into this store: nothing was done."""


def count(root: Path) -> int:
    """Vectors in the store of ``root`` (0 when there is none or it cannot be read)."""
    import sqlite3  # noqa: PLC0415

    path = store_path(root)
    if not path.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as con:
            return con.execute("SELECT count(*) FROM vecs").fetchone()[0]
    except sqlite3.Error:
        return 0


def pending(root: Path) -> int:
    """Messages of the index not looked at for vectors yet, from the manifest's counts: an upper
    bound (tool calls and results count, and get no vector); 0 when there is no store
    (similarity search is off)."""
    import sqlite3  # noqa: PLC0415

    from .manifest import Manifest, _path  # noqa: PLC0415

    if not store_path(root).exists():
        return 0
    manifest = Manifest.load(root)
    try:
        with closing(connect(root)) as con:
            done = {_path(p): (h, u, z) for p, h, u, z in con.execute("SELECT path, head, upto, size FROM units")}
    except sqlite3.Error:
        return 0
    left = 0
    for path, entry in manifest.files.items():
        head, upto, size = done.get(path, (None, 0, 0))
        kept = path in done and _same_head(entry, path, head, size)
        left += max(0, entry.get("messages", 0) - (upto if kept else 0))
    return left


def embed(root: Path, embedder, *, budget: float | None = None, progress=None, cancelled=None) -> Embedded:
    """Bring the store of ``root`` up to the index (see the module docs) with ``embedder``
    (``crabsearch.embedder``). ``budget``: stop after this many CPU seconds, once a unit is
    done (the rest is left for the next run, counted in ``Embedded.left``). ``progress(done, total)`` is called after each
    transcript (messages); ``cancelled()`` returning True ends the run before the next batch.
    A unit that cannot be read is named in ``Embedded.errors`` and tried again next run. One
    run at a time per index root (:data:`LOCK`): while another holds it, returns at once with
    ``Embedded.busy``. Raises ``OSError`` or ``sqlite3.Error`` when the store cannot be written."""
    import fcntl  # noqa: PLC0415

    fd = os.open(Path(root) / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return Embedded(busy=True)
        return _embed(root, embedder, budget, progress, cancelled)
    finally:
        os.close(fd)  # releases the lock


def _embed(root: Path, embedder, budget, progress, cancelled) -> Embedded:
    """:func:`embed`'s work, under its lock."""
    from .manifest import Manifest, _key, _path  # noqa: PLC0415 - paths stored as the manifest stores them

    started = time.process_time()
    out = Embedded()
    manifest = Manifest.load(root)
    with closing(connect(root)) as con:
        model = con.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if model is None or model[0] != embedder.name:
            with con:
                con.execute("DELETE FROM vecs")
                con.execute("DELETE FROM units")
                con.execute("INSERT OR REPLACE INTO meta VALUES ('model', ?)", (embedder.name,))
        done = {_path(p): (f, h, u, t, z) for p, f, h, u, t, z in
                con.execute("SELECT path, fkey, head, upto, title, size FROM units")}
        for path, (fkey, head, _, _, size) in list(done.items()):
            entry = manifest.files.get(path)
            if entry is None or entry.get("fkey") != fkey or not _same_head(entry, path, head, size):
                with con:
                    con.execute("DELETE FROM vecs WHERE fkey = ?", (fkey,))
                    con.execute("DELETE FROM units WHERE path = ?", (_key(path),))
                del done[path]
                out.dropped += 1
        todo = [(path, entry) for path, entry in manifest.files.items()
                if entry.get("agent") in SOURCES and (path not in done or entry.get("messages", 0) > done[path][2])]
        todo.sort(key=lambda pe: -pe[1].get("mtime_ns", 0))
        total = sum(e.get("messages", 0) - (done[p][2] if p in done else 0) for p, e in todo)
        count = 0
        for path, entry in todo:
            spent = time.process_time() - started
            if (cancelled is not None and cancelled()) or (budget is not None and out.units and spent > budget):
                out.left = max(0, total - count)
                break
            upto, old_title = done[path][2:4] if path in done else (0, None)
            try:
                items, title, read_count = _texts(entry["agent"], path, upto)
            except Exception as exc:  # noqa: BLE001 - one unit's failure is that unit's
                out.errors.append((path, f"{type(exc).__name__}: {exc}"[:200]))
                continue
            if title and title != old_title:
                items.insert(0, (-1, title))
            out.units += 1
            for at in range(0, max(len(items), 1), BATCH):
                if at and cancelled is not None and cancelled():
                    break  # the batches done are committed; the next run goes on from them
                batch = items[at:at + BATCH]
                vectors = embedder.passages([t for _, t in batch]) if batch else []
                reached = max(read_count, entry.get("messages", 0)) if at + BATCH >= len(items) else batch[-1][0] + 1
                with con:
                    con.executemany("INSERT OR REPLACE INTO vecs VALUES (?, ?, ?)",
                                    [(entry["fkey"], i, v.astype("float16").tobytes()) for (i, _), v in zip(batch, vectors)])
                    con.execute("INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?, ?, ?)",
                                (_key(path), entry["fkey"], entry.get("head"), entry.get("size", 0),
                                 max(upto, reached), title or old_title))
                out.messages += len(batch)
                out.chars += sum(len(t) for _, t in batch)
            count += entry.get("messages", 0) - upto
            if progress is not None:
                progress(count, total)
    out.seconds = time.process_time() - started
    return out


def _same_head(entry: dict, path: str, head: str | None, size: int) -> bool:
    """True when the unit the manifest ``entry`` describes is the one embedded with ``head`` at
    ``size`` bytes, grown or not (``writer.Indexer``'s append rule: its first ``size`` bytes
    still hash to ``head``)."""
    if entry.get("head") == head and entry.get("size", 0) == size:
        return True
    src = SOURCES.get(entry.get("agent", ""))
    try:
        return src is not None and entry.get("size", 0) >= size and src.fingerprint(path, size) == head
    except OSError:
        return False


def _texts(agent: str, path: str, upto: int) -> tuple[list[tuple[int, str]], str | None, int]:
    """``[(message index, text)]`` of the messages from ``upto`` on that the index holds in
    :data:`TEXT_FIELDS`, the session's title (each :func:`passage_text`; None when it is only
    the beginning of one of the first messages), and how many messages the unit holds now."""
    from .documents import acting_flags, index_text_fields  # noqa: PLC0415

    read = SOURCES[agent].read(Path(path))
    acting = acting_flags(read.messages)
    items, opening = [], []
    for m, act in zip(read.messages, acting):
        if m.message_index < upto and len(opening) >= 3:
            continue
        fields = index_text_fields(m, acting=act)
        text = passage_text(next((fields[f] for f in TEXT_FIELDS if fields.get(f)), ""))
        if not text:
            continue
        if len(opening) < 3:
            opening.append(text)
        if m.message_index >= upto:
            items.append((m.message_index, text))
    title = passage_text(read.session.title or "")
    if title and any(t.startswith(title.rstrip("… ")) for t in opening):
        title = ""  # the title is the first prompt's beginning (no title of its own): embedded already
    return items, title or None, max((m.message_index + 1 for m in read.messages), default=0)


"""The per-file manifest that makes indexing incremental.

For each transcript path (a *unit*: see ``sources/base.py``) it keeps
``{"agent", "fkey", "size", "mtime_ns", "offset", "head", ...}``: its size and mtime when last
read, the offset after the last complete record, a fingerprint of its first bytes (to tell an
append from a rewrite), plus ``messages``, ``skipped``, ``reasons`` (skipped lines by reason) and
``places`` (the first few skipped lines or records as ``[where, reason]``, ``where`` a byte
offset or a description such as ``row 12``) for ``crabsearch status``; and, stored apart, the
source's resume ``state``. Files that could not be read are kept under ``errors`` (named once,
listed by ``crabsearch status``).

Storage: ``manifest.db``, an SQLite database (the standard library's ``sqlite3``). A refresh
reads every entry but only the states of the files that grew, and writes only the entries that
changed, in one transaction after the index commit it describes (so the manifest never runs
ahead of the index). It replaced one JSON file, which at 7,500 transcripts was 19 MB, parsed and
rewritten whole on every refresh. Each index generation (``layout.py``) has
its own manifest, written under the writers' lock right after the commit it describes; an index
of an older layout is rebuilt, manifest included. A missing or unreadable manifest is empty: the
index is then rebuilt from the transcripts, which is always possible.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from ..jsonl import loads
from .layout import where

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None


def file_key(path: str) -> str:
    """Stable short key for a transcript path (16 hex chars)."""
    return hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def dumps(value) -> bytes:
    """The bytes an entry or state is stored as (JSON). Raises ``TypeError``, ``ValueError`` or
    ``RecursionError`` for a value that is not JSON or is nested too deeply to store."""
    try:
        if _orjson is not None:
            return _orjson.dumps(value)
    except TypeError:  # text that is not valid UTF-8 (lone surrogates): json escapes it
        pass
    return json.dumps(value).encode("ascii")


def _loads(blob: bytes):
    """Exact inverse of :func:`dumps`: lone surrogates (from file names that are not UTF-8)
    survive, where ``jsonl.loads`` replaces them as it must for transcript text."""
    blob = bytes(blob)
    if b"\\ud" in blob:
        return json.loads(blob)
    return loads(blob)


def _key(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _path(key: bytes) -> str:
    return bytes(key).decode("utf-8", "surrogateescape")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path BLOB PRIMARY KEY, entry BLOB NOT NULL, state BLOB);
CREATE TABLE IF NOT EXISTS errors (path BLOB PRIMARY KEY, entry BLOB NOT NULL);
"""


class Manifest:
    """``files``: path -> entry dict (see the module docstring; without ``state``, which
    :meth:`state` reads on demand); ``errors``: path -> ``{"error", "size", "mtime_ns",
    "ctime_ns"}``. Load with :meth:`load`; record changes with :meth:`save`."""

    NAME = "manifest.db"

    def __init__(self, directory: Path, files: dict[str, dict] | None = None,
                 errors: dict[str, dict] | None = None, states: dict[str, object] | None = None,
                 *, replace: bool = False):
        """``replace``: the first :meth:`save` replaces whatever manifest is on disk (a new
        manifest for an index that was lost or rebuilt) instead of updating it."""
        self.directory = where(directory)  # an index root means its current generation
        self.files: dict[str, dict] = files or {}
        self.errors: dict[str, dict] = errors or {}
        self._states: dict[str, object] = states or {}  # states not in the database yet (migration)
        self._removed: set[str] = set()
        self._replace = replace
        self._discard = False  # the file on disk is not a readable database: delete it first

    def copy(self) -> "Manifest":
        """A copy whose tables can be changed without touching this one."""
        out = Manifest(self.directory, dict(self.files), dict(self.errors), dict(self._states),
                       replace=self._replace)
        out._removed = set(self._removed)
        out._discard = self._discard
        return out

    @property
    def path(self) -> Path:
        """The database file."""
        return self.directory / self.NAME

    @classmethod
    def load(cls, directory: Path) -> "Manifest":
        """Read every entry (not the states) from ``directory``; empty when there is no manifest
        or it cannot be read."""
        directory = where(directory)
        db = directory / cls.NAME
        if not db.exists():
            return cls(directory)
        try:
            with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
                files = {_path(k): _loads(e) for k, e in con.execute("SELECT path, entry FROM files")}
                errors = {_path(k): _loads(e) for k, e in con.execute("SELECT path, entry FROM errors")}
        except (sqlite3.Error, ValueError):
            out = cls(directory, replace=True)  # damaged: replaced by the next save
            out._discard = True
            return out
        return cls(directory, files, errors)

    @classmethod
    def entry(cls, directory: Path, path: str) -> dict | None:
        """The entry of ``path`` in the manifest of ``directory`` (one row read, not the whole
        manifest), or None when it has none or the manifest cannot be read."""
        db = where(directory) / cls.NAME
        if not db.exists():
            return None
        try:
            with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
                row = con.execute("SELECT entry FROM files WHERE path = ?", (_key(path),)).fetchone()
            entry = _loads(row[0]) if row else None
        except (sqlite3.Error, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    def state(self, path: str):
        """The stored source state of ``path`` (None when there is none or it cannot be read)."""
        if path in self._states:
            return self._states[path]
        try:
            with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)) as con:
                row = con.execute("SELECT state FROM files WHERE path = ?", (_key(path),)).fetchone()
        except sqlite3.Error:
            return None
        return _loads(row[0]) if row and row[0] is not None else None

    def unknown_kinds(self) -> list[tuple[str, str | None, dict[str, int]]]:
        """``(path, agent, {kind: count})`` of every unit whose stored state counts record kinds
        its reader does not know (``state["unknown_kinds"]``, written by
        :func:`crabsearch.sources.base.note_unknown`). Only the
        states that hold the key are parsed; ``[]`` when there is no manifest or it cannot be read."""
        if not self.path.exists():
            return []
        try:
            with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)) as con:
                rows = con.execute("SELECT path, entry, state FROM files WHERE instr(state, ?) > 0",
                                   (b'"unknown_kinds"',)).fetchall()
        except sqlite3.Error:
            return []
        out = []
        for key, entry, state in rows:
            try:
                entry, state = _loads(entry), _loads(state)
            except ValueError:
                continue
            kinds = state.get("unknown_kinds") if isinstance(state, dict) else None
            if isinstance(kinds, dict) and kinds:
                agent = entry.get("agent") if isinstance(entry, dict) else None
                out.append((_path(key), agent if isinstance(agent, str) else None,
                            {str(k): n for k, n in kinds.items() if isinstance(n, int) and n > 0}))
        return out

    def remove(self, path: str) -> None:
        """Forget ``path`` (its transcript is gone); written by the next :meth:`save`."""
        self.files.pop(path, None)
        self._states.pop(path, None)
        self._removed.add(path)

    def save(self, changed: dict[str, dict]) -> None:
        """Record ``changed`` (path -> entry *with* its ``state``), the paths removed since the
        last save, and the current ``errors``, in one transaction. Raises ``OSError`` when the
        database cannot be written."""
        for path, entry in changed.items():
            entry = dict(entry)
            self._states[path] = entry.pop("state", None)
            self.files[path] = entry
            self._removed.discard(path)
        if self._discard:
            try:
                os.remove(self.path)
            except OSError:
                pass
            self._discard = False
        # Replaced or new: every entry; otherwise only what changed.
        whole = not self.path.exists() or self._replace
        paths = list(self.files) if whole else list(changed)
        rows = [(_key(p), dumps(self.files[p]), dumps(self._states.get(p))) for p in paths]
        try:
            with closing(sqlite3.connect(self.path, timeout=10)) as con, con:
                con.executescript(_SCHEMA)
                if self._replace:
                    con.execute("DELETE FROM files")
                con.executemany("INSERT OR REPLACE INTO files (path, entry, state) VALUES (?, ?, ?)", rows)
                con.executemany("DELETE FROM files WHERE path = ?", [(_key(p),) for p in self._removed])
                con.execute("DELETE FROM errors")
                con.executemany("INSERT INTO errors (path, entry) VALUES (?, ?)",
                                [(_key(p), dumps(e)) for p, e in self.errors.items()])
        except sqlite3.Error as exc:
            raise OSError(f"cannot write the manifest {self.path}: {exc}") from exc
        self._removed.clear()
        self._states.clear()  # in the database now
        self._replace = False

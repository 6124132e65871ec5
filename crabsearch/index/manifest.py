"""The per-file manifest that makes indexing incremental.

One JSON file (``manifest.json`` in the index directory) mapping each transcript path to
``{"agent", "fkey", "size", "mtime_ns", "offset", "head", "state"}``: its size and mtime when last
read, the byte offset after the last complete line, a fingerprint of its first bytes (to tell an
append from a rewrite) and the source's resume state. It is written atomically (temp file +
``os.replace``) and only after the index commit it describes, so it never runs ahead of the index.
Files that could not be read are kept under ``errors`` (named once, listed by ``crabsearch status``).
Each entry also keeps ``messages``, ``skipped`` and ``reasons`` (skipped lines by reason) for status.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..jsonl import loads

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None
from pathlib import Path

def file_key(path: str) -> str:
    """Stable short key for a transcript path (16 hex chars)."""
    return hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


class Manifest:
    """``files``: path -> entry dict (see module docstring). Load with :meth:`load`."""

    NAME = "manifest.json"

    def __init__(self, directory: Path, files: dict[str, dict] | None = None, errors: dict[str, dict] | None = None):
        self.directory = directory
        self.files: dict[str, dict] = files or {}
        self.errors: dict[str, dict] = errors or {}
        """Files that could not be read: path -> ``{"error", "size", "mtime_ns"}``."""

    @classmethod
    def load(cls, directory: Path) -> "Manifest":
        """Read the manifest in ``directory``; a missing or unreadable one is empty (the index is
        then rebuilt from the transcripts, which is always possible)."""
        try:
            data = loads((directory / cls.NAME).read_bytes())  # orjson when present: 13 MB at 7.5k files
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        return cls(directory, data.get("files") or {}, data.get("errors") or {})

    def save(self) -> None:
        """Write atomically. Raises ``OSError`` when the directory is not writable."""
        tmp = self.directory / (self.NAME + ".tmp")
        data = {"files": self.files, "errors": self.errors}
        try:
            raw = _orjson.dumps(data) if _orjson else None
        except TypeError:  # a path that is not valid UTF-8 (lone surrogates): json escapes it
            raw = None
        tmp.write_bytes(raw if raw is not None else json.dumps(data).encode("ascii"))
        os.replace(tmp, self.directory / self.NAME)

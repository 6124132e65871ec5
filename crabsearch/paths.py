"""Where crabsearch keeps its own files (never inside an agent's directory).

Index: ``platformdirs.user_cache_dir("crabsearch")/index``, overridden by ``--index-dir`` or
``$CRABSEARCH_INDEX_DIR``. The demo (``crabsearch --demo``) keeps a separate index beside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "crabsearch"


def cache_dir() -> Path:
    """The per-user cache directory (``~/.cache/crabsearch`` on Linux)."""
    return Path(platformdirs.user_cache_dir(APP))


def index_dir(override: str | os.PathLike | None = None, *, demo: bool = False) -> Path:
    """The index directory: ``override``, else ``$CRABSEARCH_INDEX_DIR``, else the cache dir
    (``index`` or, for the demo, ``demo-index``)."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("CRABSEARCH_INDEX_DIR")
    if env and not demo:
        return Path(env).expanduser()
    return cache_dir() / ("demo-index" if demo else "index")


def demo_home() -> Path:
    """The bundled example home directory (Claude Code and Codex layouts) used by ``--demo``."""
    return Path(__file__).resolve().parent / "demo" / "home"

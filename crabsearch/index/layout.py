"""Where the index lives inside the index directory: generations and the ``current`` link.

The index directory (``--index-dir``, the *root*) holds one or more *generations*, each a
complete Whoosh index with its own manifest, stamp and seal (``gen-<hex time>/``), and a symlink
``current`` naming the one to search. A rebuild fills a new generation and then replaces the
link in one ``rename`` (Crabtalk's rule: a concurrent searcher sees the old index or the new,
never a half one); older generations are removed once no writer needs them. The root also holds
the writers' lock and the time of the last refresh. An index directory from before generations
(Whoosh files directly in the root) is a *legacy* layout: rebuilt into a generation.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CURRENT = "current"
GEN_PREFIX = "gen-"
STAMP = "crabsearch-version"
LAST_REFRESH = "last-refresh"
INDEX_NAME = "MAIN"
WORKER_PREFIX = f"{INDEX_NAME}.worker-"
"""A parallel refresh's worker writes its segment in a folder of the generation named so
(``parallel.py``); the commit moves the finished segment out of it."""


def owned(name: str) -> bool:
    """True for the names crabsearch writes in an index directory or a generation (Whoosh's
    files and lock, the stamp, seal, damage marker and write lock, the manifest and its journal,
    the last-refresh time, the ``current`` link and the generations)."""
    return (name.startswith(("MAIN", "_MAIN", "crabsearch-", "manifest", LAST_REFRESH, CURRENT, GEN_PREFIX,
                             f".{CURRENT}."))
            or name.endswith((".seg", ".toc", ".pst", ".trm")))


def current_dir(root: Path) -> Path | None:
    """The generation directory ``root/current`` points at, or None when there is none yet (a
    new root, or a legacy one). Costs one ``readlink``."""
    try:
        target = os.readlink(Path(root) / CURRENT)
    except OSError:
        return None
    return Path(root) / target


def where(directory: Path) -> Path:
    """The directory an index's files are in: the current generation of a root, or ``directory``
    itself when it has no ``current`` link (a generation, or a legacy root)."""
    return current_dir(directory) or Path(directory)


def has_index(root: Path) -> bool:
    """True when ``root`` holds an index (a current generation, or a legacy one), whether or not
    it can be searched or written now."""
    return current_dir(root) is not None or is_legacy(root)


def is_legacy(root: Path) -> bool:
    """True when Whoosh files lie directly in ``root`` (an index made before generations)."""
    try:
        return any(n.startswith(f"_{INDEX_NAME}_") and n.endswith(".toc") for n in os.listdir(root))
    except OSError:
        return False


def misplaced_current(root: Path) -> str | None:
    """What stands at ``root/current`` when it is not a symlink (a directory: a backup or sync
    that follows links, ``cp -L``, Python's ``copytree``, copied the generation in its place), as
    ``"a directory"`` or ``"a file"``; None when it is a link or absent. One ``lstat``."""
    try:
        mode = os.lstat(Path(root) / CURRENT).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return None
    return "a directory" if stat.S_ISDIR(mode) else "a file"


def misplaced_note(what: str) -> str:
    """The sentence for a ``current`` that is ``what`` (:func:`misplaced_current`)."""
    return (f"the index's `current` is {what}, not crabsearch's link to the index: a backup or sync "
            "that follows links copies it so")

"""Live refresh: watch the agents' directories and say when a transcript may have changed.

``watchfiles`` gets native file events (inotify on Linux, FSEvents on macOS, a polling fallback
elsewhere); a burst of writes is one change, reported :data:`SETTLE_MS` after it stops (at most
:data:`MAX_WAIT_MS` after it starts). What changed is not examined: a refresh with nothing to
read costs a stat per transcript, and it finds the appended lines itself.

Watched: every existing directory a source looks in, recursively, except those that are the
home directory or hold it, and the sources that look inside project trees (Aider, SpecStory:
a code folder can hold node_modules by the million); those, and roots created later, are
picked up by the periodic refresh. No Textual here: the app and the MCP server can both use it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Iterable

from .sources import CARDS

SETTLE_MS = 50
"""Quiet time after the last event of a burst before the change is reported."""
MAX_WAIT_MS = 300
"""A steady stream of writes (an agent streaming) is reported at least this often."""
PROJECT_TREE_SOURCES = tuple(agent for agent, card in CARDS.items() if card.project_tree)
"""Sources whose roots are the user's project folders (``Source.project_tree``): polled, never watched."""


def watch_roots(indexer) -> list[Path]:
    """The directories to watch for ``indexer``'s sources (see the module docstring), each
    existing one once, no root inside another."""
    home = Path(indexer.home).resolve()
    found: list[Path] = []
    for src in indexer.sources:
        if src.agent in PROJECT_TREE_SOURCES:
            continue
        for root in indexer.roots_of(src):
            try:
                if not root.is_dir():
                    continue
                real = root.resolve()
            except OSError:
                continue
            if real == home or real in home.parents:
                continue
            found.append(real)
    roots = []
    for r in sorted(set(found), key=lambda p: len(p.parts)):
        if not any(r == o or o in r.parents for o in roots):
            roots.append(r)
    return roots


def watch(roots: Iterable[Path], changed: Callable[[int], None], stop: threading.Event) -> None:
    """Call ``changed(number of file events)`` after each burst of changes under ``roots``
    until ``stop`` is set. Blocks: run it in a thread. Returns at once when there is nothing to
    watch, and when a root disappears (the caller starts again later with the roots there are
    then)."""
    import watchfiles

    roots = [str(r) for r in roots]
    if not roots:
        return
    try:
        for events in watchfiles.watch(*roots, debounce=MAX_WAIT_MS, step=SETTLE_MS, stop_event=stop,
                                       rust_timeout=1000, yield_on_timeout=True, raise_interrupt=False):
            if stop.is_set():
                return
            if events:
                changed(len(events))
    except (FileNotFoundError, OSError, RuntimeError):
        return  # a root removed or unreadable: the periodic refresh carries on

"""Python's full garbage collections, run while the user is not waiting (the app only).

A full collection (generation 2) walks every object the app holds (Textual's widgets and
bindings, the modules, the index readers' term caches), during which no other thread runs.
CPython starts one by itself once enough objects have outlived two young collections, and typing
makes many (each key's rows, strips and segments), so a typed query whose search or paint one
lands in comes late (``bench/typing_latency.py``; ``bench/results/history.md``, 2026-12-03).

:class:`IdleCollector` keeps CPython's young collections (generations 0 and 1, short) as they
are. It raises the threshold of the full one (``gc.set_threshold``'s third value) so that
CPython does not start it while the user types, and runs it itself when no key or mouse event
has come for :data:`IDLE` seconds and nothing the user waits for is running (the moment a person
reads the rows). Textual does the same for smooth scrolling (``App.PAUSE_GC_ON_SCROLL`` pauses
the collector during an animation). Under input with no pause at all, CPython's own full
collection still comes, after :data:`THRESHOLD` young generation-1 collections (~1 minute of
steady typing), so the garbage in reference cycles stays bounded.

It also freezes (``gc.freeze``) the objects there are when the app mounts (modules, classes,
Textual's bindings and styles), which nearly all live as long as the app: a full collection no
longer walks them, and takes about half as long. Very few of them become garbage (measured by
unfreezing and collecting after a few queries): left to the process's end, not leaked per
query.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

IDLE = 0.3
"""Seconds without a key or mouse event before a full collection may run (a typing burst's keys
come 50-200 ms apart)."""

TICK = 0.25
"""Seconds between the app's looks at whether a full collection is due and the user idle."""

DUE = 10
"""Generation-1 collections since the last full one that make a full one due: CPython's default
third threshold, so an idle app collects no more often than CPython would by itself."""

THRESHOLD = 200
"""The third threshold while the collector runs: CPython's own full collection waits for this
many generation-1 collections (~3 a second while typing at 1 GB) instead of 10."""


class IdleCollector:
    """Runs Python's full collections when the user is idle (see the module's docstring).

    ``clock`` gives seconds (``time.monotonic``; tests pass their own). :meth:`start` raises
    CPython's third threshold and :meth:`stop` puts the one found back; :meth:`input` is called
    for each key or mouse event; :meth:`tick` collects when due, idle and not ``busy``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_input = clock()
        self.collections = 0
        """Full collections run by :meth:`tick` (tests read it)."""
        self._saved: tuple[int, ...] | None = None

    def start(self) -> None:
        """Hold CPython's own full collections back (third threshold :data:`THRESHOLD`) and
        freeze the objects there are now."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            gc.set_threshold(self._saved[0], self._saved[1], max(THRESHOLD, self._saved[2]))
            gc.freeze()
        self.last_input = self.clock()

    def stop(self) -> None:
        """Put back the thresholds :meth:`start` found and unfreeze (the app has quit; tests
        run many apps in one process)."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            gc.unfreeze()
            self._saved = None

    def input(self) -> None:
        """A key or mouse event came now: the user may be waiting for what it does."""
        self.last_input = self.clock()

    def tick(self, busy: bool) -> bool:
        """Run a full collection if one is due (:data:`DUE` generation-1 collections since the
        last), no input came for :data:`IDLE` seconds and not ``busy`` (a search or another
        worker the user waits for is running). True when it ran one."""
        if busy or self._saved is None or gc.get_count()[2] < DUE:
            return False
        if self.clock() - self.last_input < IDLE:
            return False
        gc.collect()
        self.collections += 1
        return True

"""The app's file watcher: a :class:`~crabsearch.tui.messages.FilesChanged` message for each
burst of file events in the agents' directories (``crabsearch.watch``)."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.message_pump import MessagePump

from ..watch import watch, watch_roots
from .messages import FilesChanged


class Watcher:
    """Watches the agents' directories of an ``Indexer`` in a plain daemon thread (not a
    worker: it runs as long as its owner, and tests wait for workers) and posts
    :class:`FilesChanged` to ``target``. :meth:`start` again when :meth:`moved` says an agent
    directory appeared or went; :meth:`stop` when ``target`` goes."""

    def __init__(self, target: MessagePump) -> None:
        self.target = target
        self.roots: list[Path] = []
        """The directories watched (``watch.watch_roots``), once the thread has found them."""
        self._stop: threading.Event | None = None

    def start(self, indexer) -> None:
        """(Re)start watching ``indexer``'s roots (``indexer()`` returns it). The roots are found
        in the thread too: the first time, that makes the app's Indexer, which imports every
        agent's reader, work the app's own thread need not wait for."""
        self.stop()
        self._stop = stop = threading.Event()

        def run() -> None:
            self.roots = roots = watch_roots(indexer())
            if roots and not stop.is_set():
                watch(roots, lambda n: self.target.post_message(FilesChanged(n)), stop)

        threading.Thread(target=run, name="crabsearch-watch", daemon=True).start()

    def moved(self, indexer) -> bool:
        """True when ``indexer``'s roots are no longer those watched."""
        return watch_roots(indexer) != self.roots

    def stop(self) -> None:
        """Stop watching (the thread ends at its next look at the stop event)."""
        if self._stop is not None:
            self._stop.set()

"""Knowing that no transcript changed without a stat per transcript: inotify on the agents' folders.

A refresh finds what changed by a ``stat`` of every transcript (``Indexer.refresh``); with
thousands of them that walk is most of a search's time through the resident server, and all of
the app's periodic refresh. Both refresh through a :class:`Gate`, which keeps inotify(7)
watches on every folder under the agents' roots and tells the refresh which agents it may skip: those whose folders had no event since the last refresh it
saw complete. inotify queues an event inside the writer's ``write``, ``rename``, ``unlink`` or
``utime`` call, before it returns, so a write finished before a search starts is always seen by
that search (a watcher that reports after a quiet interval, as ``crabsearch.watch`` does for
the app, would let a search run before its report).

An agent is covered (skipped while nothing moved) only when every transcript the last full walk
found for it lies under its watched roots and the walk met no symbolic link there (a link's
target changes without an event in the folder); never the project-tree sources
(``Source.project_tree``), nor a root that is the home folder or holds it
(``watch.watch_roots``). Anything else is walked every time, as without a gate: a root that
appears or disappears, an event queue overflow, a folder that cannot be watched (the
``max_user_watches`` limit), an index changed by another process (its manifest moved), a refresh
that did not complete. Linux only (``inotify_init1`` through ctypes); elsewhere :meth:`Gate.make`
returns None and every refresh walks.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
from pathlib import Path

_IN_MODIFY, _IN_ATTRIB, _IN_MOVED_FROM, _IN_MOVED_TO = 0x2, 0x4, 0x40, 0x80
_IN_CREATE, _IN_DELETE, _IN_DELETE_SELF, _IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
_IN_Q_OVERFLOW, _IN_ISDIR, _IN_ONLYDIR, _IN_DONT_FOLLOW = 0x4000, 0x40000000, 0x01000000, 0x02000000
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF
         | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW)
"""Data written, times or mode changed (``touch``, ``chmod``), names added, removed or moved, the
folder itself removed or moved (``inotify(7)``)."""
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event), then the name
VOLATILE = frozenset({"PWD", "OLDPWD", "_", "SHLVL", "COLUMNS", "LINES"})
"""Environment variables a shell changes from one command to the next that no agent's roots
are made of: a client's environment without them names its gate."""
MAX_FOLDERS = 50_000
"""A tree with more folders than this is not watched (each folder is one watch, kernel memory)."""


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - both present
    except (OSError, AttributeError):
        return None
    return libc


class Folders:
    """inotify watches on every folder under some roots, read without blocking. ``complete`` is
    False when a folder could not be watched or a symbolic link was met: nothing can be
    concluded from the absence of events then. ``stale`` turns True when a folder was made or
    moved in (it is not watched yet) or the kernel's event queue overflowed: the watches must be
    made again. Raises ``OSError`` when inotify is unavailable."""

    def __init__(self, roots: list[Path]):
        self._libc = _libc()
        if self._libc is None:
            raise OSError("no inotify here")
        self.fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.complete, self.stale = True, False
        count = 0
        stack = [str(r) for r in roots]
        while stack and self.complete:
            folder = stack.pop()
            count += 1
            if count > MAX_FOLDERS or self._libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK) < 0:
                self.complete = False
                break
            try:
                with os.scandir(folder) as entries:
                    for e in entries:
                        if e.is_symlink():
                            self.complete = False
                        elif e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
            except OSError:
                self.complete = False

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def moved(self) -> bool:
        """True when any event came since the last call (all of them are read)."""
        any_event = False
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return any_event
            except OSError:
                self.stale = True
                return True
            any_event = True
            pos = 0
            while pos + _EVENT.size <= len(data):
                _, mask, _, length = _EVENT.unpack_from(data, pos)
                pos += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW or (mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO)):
                    self.stale = True


class Gate:
    """Which agents a refresh of ``indexer``'s index may skip (see the module docstring).

    Use: ``gate.refresh(indexer, ...)`` where ``indexer.refresh(...)`` would be called (it is
    :meth:`before`, ``indexer.refresh(unchanged=skip)``, then :meth:`after`)."""

    def __init__(self, roots: dict[str, list[Path]]):
        self.roots = roots
        """agent -> its roots (the folders its discovery looks in), as the indexer gives them."""
        self._folders: Folders | None = None
        self._watched: list[Path] = []
        self._covered: frozenset[str] = frozenset()
        self._clean = False
        self._stamp = None
        self._exists: tuple = ()

    @classmethod
    def make(cls, indexer) -> "Gate | None":
        """A gate for ``indexer``'s sources, or None where inotify is unavailable."""
        if _libc() is None:
            return None
        return cls(agent_roots(indexer))

    def close(self) -> None:
        if self._folders is not None:
            self._folders.close()
            self._folders = None

    def before(self, indexer) -> frozenset[str]:
        """The agents whose transcripts nobody touched since the last refresh :meth:`after` saw
        complete (empty while that is not known); watches are (re)made here when needed."""
        self._clean, clean = False, self._clean  # clean again only when after() says so
        exists = self._existing()
        if self._folders is None or exists != self._exists or self._folders.stale:
            self._watch(indexer, exists)
            return frozenset()
        moved = self._folders.moved()
        if moved or not clean or indexer.manifest_stamp() != self._stamp:
            return frozenset()
        return self._covered

    def refresh(self, indexer, **options):
        """``indexer.refresh(unchanged=..., **options)`` between :meth:`before` and :meth:`after`;
        its :class:`~crabsearch.index.writer.RefreshReport`. A refresh stopped by its
        ``cancelled`` option, or one that raised, leaves the gate unclean (the next one walks)."""
        skip = self.before(indexer)
        report = indexer.refresh(unchanged=skip, **options)
        cancelled = options.get("cancelled")
        if not (cancelled and cancelled()):
            self.after(indexer, report, skip)
        return report

    def after(self, indexer, report, skipped: frozenset[str]) -> None:
        """After ``indexer.refresh(unchanged=skipped)`` returned ``report``: the gate is clean when
        the refresh completed and no event came while it ran; a full walk also decides which
        agents are covered (``Indexer.found``: every transcript found under the agent's roots)."""
        if self._folders is None:
            return
        moved = self._folders.moved()
        if not skipped:
            self._covered = covered(self.roots, indexer.found, self._watched) if self._folders.complete else frozenset()
        self._clean = not report.busy and not moved and not self._folders.stale
        self._stamp = indexer.manifest_stamp() if self._clean else None

    def _existing(self) -> tuple:
        return tuple(os.path.isdir(r) for rs in self.roots.values() for r in rs)

    def _watch(self, indexer, exists: tuple) -> None:
        from .watch import watch_roots

        self.close()
        self._exists, self._clean, self._covered = exists, False, frozenset()
        self._watched = watch_roots(indexer)
        try:
            self._folders = Folders(self._watched)
        except OSError:
            self._folders = None


def agent_roots(indexer) -> dict[str, list[Path]]:
    """agent -> the roots its discovery looks in (``Indexer.roots_of``)."""
    return {src.agent: indexer.roots_of(src) for src in indexer.sources}


def covered(roots: dict[str, list[Path]], found: dict[str, list[str]], watched: list[Path]) -> frozenset[str]:
    """The agents whose every root that exists is inside a ``watched`` folder and every found
    transcript (``found``: agent -> paths, member units by their container file) is under one
    of its roots; never a project-tree source."""
    from .sources import CARDS
    from .sources.base import container_of

    out = set()
    real = [str(w) for w in watched]
    for agent, rs in roots.items():
        card = CARDS.get(agent)
        if card is None or card.project_tree:
            continue
        mine = []
        for r in rs:
            if not os.path.isdir(r):
                continue
            rr = os.path.realpath(r)
            if not any(rr == w or rr.startswith(w + os.sep) for w in real):
                break
            mine.append(str(r))
        else:
            prefixes = tuple(m.rstrip(os.sep) + os.sep for m in mine)
            if all(container_of(p).startswith(prefixes) for p in found.get(agent, ())):
                out.add(agent)
    return frozenset(out)

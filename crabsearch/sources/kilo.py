"""Kilo CLI (Kilo-Org/kilocode, the ``kilo`` command): an opencode fork that keeps opencode's
session store under its own name, read by the opencode reader (:mod:`crabsearch.sources.opencode`).

Where its rules come from: Kilo-Org/kilocode ``packages/opencode/src/global/index.ts`` @30e1f2872c6c
(``app = "kilo"``: the data folder is ``$XDG_DATA_HOME/kilo``, else ``~/.local/share/kilo``, on every
platform, by ``xdg-basedir``), ``packages/core/src/database/database.ts`` @2855ebbe48d1 and the
``Database`` path function of ``@kilocode/cli-linux-x64`` 7.7.9 (the npm build of ``kilo``, its
bundled JS): ``$KILO_DB`` (absolute, or relative to the data folder; ``:memory:`` keeps nothing),
else ``kilo.db`` for the channels ``latest``, ``beta`` and ``prod`` or with
``KILO_DISABLE_CHANNEL_DB``, else ``kilo-<channel>.db``, or ``opencode-<channel>.db`` where only that
one exists (a store from before the rename). Every one of them is read; a session in several is
read once, from the store that updated it last (the opencode reader's rule).

The schema is opencode's (tables ``session``, ``message``, ``part``, ``session_message``,
``session_input``; the same twelve part types and eight ``session_message`` types in 7.7.9's
bundled schemas), and so are the legacy ``storage/`` JSON files Kilo migrates from; every opencode
rule applies (titles, undo, archived and child sessions, queued prompts, drift). Resume: ``kilo
[project] --session <id>`` (7.7.9's ``$0 [project]`` command, option ``--session``/``-s``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from ..model import Session
from .base import cd_and
from .opencode import OpencodeSource, stores

KILO_STORES = ("kilo.db", "kilo-*.db", "opencode-*.db")
"""The store names in a Kilo data folder: the stable channels' store, then the other channels'."""


class KiloSource(OpencodeSource):
    """Kilo CLI: opencode's SQLite store as ``~/.local/share/kilo/kilo.db`` (module docstring)."""

    agent = "kilo"
    order = 210
    display = "Kilo CLI"
    badge = "Kilo"
    env_var = "XDG_DATA_HOME"
    style = "bold black on yellow3"
    locations = "`~/.local/share/kilo/kilo.db`, `kilo-<channel>.db` (each session once) and legacy `storage/` JSON files"
    reads = "all the opencode reader reads: undo as an abandoned branch, archived and child sessions, queued prompts"
    override = "`XDG_DATA_HOME=DIR` (uses `DIR/kilo`), `KILO_DB=FILE`"
    upstream = ("Kilo-Org/kilocode `packages/opencode/src/global/index.ts` @30e1f2872c6c, "
                "`packages/core/src/database/database.ts` @2855ebbe48d1, `@kilocode/cli-linux-x64` 7.7.9; "
                "the opencode reader for the store")
    checked = "2026-12-06: 7.7.9"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$XDG_DATA_HOME/kilo``, else ``~/.local/share/kilo``."""
        base = env.get("XDG_DATA_HOME")
        return [(Path(os.path.expanduser(base)) if base else home / ".local" / "share") / "kilo"]

    def stores(self, root: Path, env: Mapping[str, str]) -> list[str]:
        """``$KILO_DB``, ``kilo.db``, then ``kilo-<channel>.db`` and ``opencode-<channel>.db``."""
        return stores(root, env, "KILO_DB", KILO_STORES)

    def resume_command(self, session: Session) -> str | None:
        """``cd <dir> && kilo <dir> --session <id>``."""
        argv = ["kilo"] + ([session.project] if session.project else []) + ["--session", session.session_id]
        return cd_and(session.project, argv)


SOURCE = KiloSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

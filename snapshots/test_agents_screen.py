"""SVG snapshots of the recent list holding one session of every agent (their
badges visible), at 80x24 and 120x40, with the same fixed clock as ``test_screens.py``. Update
with ``--snapshot-update`` only after looking at the new SVGs."""

from __future__ import annotations

import pytest

from all_agents import all_agents_index
from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """``(home, index_dir, env, expects)`` of every agent's session."""
    return all_agents_index(tmp_path_factory)


async def _recent(pilot) -> None:
    await settle(pilot)
    pilot.app.clear_notifications()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_recent_all_agents(snap_compare, indexed, size):
    _, index_dir, env, _ = indexed
    app = CrabsearchApp(index_dir, env=env, now=NOW, index_on_start=False, cursor_blink=False)
    assert snap_compare(app, terminal_size=size, run_before=_recent)

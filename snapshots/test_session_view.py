"""SVG snapshots of the session view's rendering (Markdown, code, tool calls, diffs, folding) at
80x24 and 120x40, on ``tests/session_samples.py``'s session."""

from __future__ import annotations

import pytest

from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    from session_samples import indexed_rich_session

    return indexed_rich_session(tmp_path_factory.mktemp("rich"))


def opened(*keys):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press(*"ocelot")
        await settle(pilot)
        await pilot.press("down", "o")
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await settle(pilot)
        pilot.app.clear_notifications()

    return run_before


STATES = {
    "rendered": opened("g"),
    "tool-lines": opened("g", "J", "J"),
    "edit-expanded": opened("g", "J", "J", "J", "J", "enter"),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", list(STATES))
def test_session_view(snap_compare, rich, state, size):
    home, index_dir = rich
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)
    assert snap_compare(app, terminal_size=size, run_before=STATES[state])

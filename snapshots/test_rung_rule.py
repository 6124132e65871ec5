"""SVG snapshots of the rule that marks where the result rows switch from one rung of the ladder
to the next (issue 11: "fewer words matched below"), at 80x24 and 120x40. Update with
``pytest snapshots/test_rung_rule.py --snapshot-update`` only after looking at the new SVGs."""

from __future__ import annotations

import pytest

from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp

SIZES = [(80, 24), (120, 40)]


def make_app(sample):
    home, index_dir = sample
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)


async def two_rungs(pilot):
    """``cron deploy``: one session holds both words in one message (``all``), two only ``cron``
    (``any``); the cursor on the first ``any`` row."""
    await settle(pilot)
    await pilot.press(*"cron deploy")
    await settle(pilot)
    await pilot.press("down", "down")
    await settle(pilot)
    pilot.app.clear_notifications()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_rung_rule(snap_compare, sample, size):
    assert snap_compare(make_app(sample), terminal_size=size, run_before=two_rungs)

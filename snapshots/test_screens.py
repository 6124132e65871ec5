"""SVG snapshots of every screen and state, at 80x24 and 120x40.

Deterministic: a fixed clock (``NOW``), the fixed sample sessions, no background indexing,
cursor blink off, workers finished before each snapshot. Update with
``pytest snapshots --snapshot-update`` only after looking at the new SVGs.
"""

from __future__ import annotations

import sys

import pytest

from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp

SIZES = [(80, 24), (120, 40)]


def make_app(sample):
    home, index_dir = sample
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)




def steps(*keys, toasts: bool = False):
    """Press ``keys`` (``_settle``: wait for the search); the toasts they raise are cleared, or
    kept with ``toasts``."""
    async def run_before(pilot):
        await settle(pilot)
        for key in keys:
            if key == "_settle":
                await settle(pilot)
            else:
                await pilot.press(key)
        await settle(pilot)
        if not toasts:
            pilot.app.clear_notifications()
        await pilot.pause()

    return run_before


async def indexing(pilot):
    """A first run, a third of the way through reading (no worker: the progress is posted)."""
    from crabsearch.index.writer import Progress
    from crabsearch.tui.indexing import IndexingProgress
    from crabsearch.tui.messages import IndexProgress

    await settle(pilot)
    screen = pilot.app.screen
    screen._index = lambda: None
    screen.query_one(IndexingProgress)._time_left = lambda p, now: 42.0
    screen.start_indexing("first")
    for _ in range(2):
        screen.post_message(IndexProgress(Progress(160, 478, 15_200_000, 45_000_000, 9000)))
        await pilot.pause()
    await settle(pilot, timeout=0.5)  # the app stays indexing: settle would wait its whole 10 s


STATES = {
    "recent": steps(),
    "results": steps(*"cron", "_settle"),
    "expanded": steps(*"cron", "_settle", "down", "enter"),
    "session": steps(*"parser", "_settle", "down", "o"),
    "help": steps("f1"),
    "filtered": steps(*"cron agent:claude", "_settle"),
    "agent-picker": steps("f3"),
    "explain": steps(*"cron", "_settle", "down", "x"),
    "copy-menu": steps(*"cron", "_settle", "down", "c"),
    "resume": steps(*"cron", "_settle", "down", "r"),
    "session-find": steps(*"parser", "_settle", "down", "o", "slash", *"module 281", "enter"),
    "session-tools-hidden": steps(*"idempotent", "_settle", "down", "o", "t", "t", "T"),
    "bad-filter": steps(*"cron agent:vim", "_settle"),
    "toasts": steps(*"idempotent", "_settle", "down", "o", "t", "T", "s", toasts=True),  # one toast: the last
    "indexing": indexing,
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", list(STATES))
def test_screen(snap_compare, sample, state, size):
    assert snap_compare(make_app(sample), terminal_size=size, run_before=STATES[state])


def test_session_on_a_short_screen(snap_compare, sample):
    """A session opened on a 50x15 terminal: the header is one line (``COMPACT_BELOW``)."""
    assert snap_compare(make_app(sample), terminal_size=(50, 15), run_before=STATES["session"])


@pytest.mark.parametrize("size", [(50, 20), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_empty_state(snap_compare, tmp_path, monkeypatch, size):
    """No transcripts found: what to do first (the demo, the variables, F2), the folders looked
    in after it."""
    monkeypatch.setattr(sys, "argv", ["crabsearch"])
    app = CrabsearchApp(tmp_path / "index", env={"HOME": "/home/u"}, now=NOW, index_on_start=False,
                        cursor_blink=False)
    assert snap_compare(app, terminal_size=size, run_before=steps())

"""Python's full garbage collections run while the user is idle, not in a typed query's way
(``tui.idle_gc``; issue 13's typing target: 65 of them, 25-100 ms each, came during the typing
bench at 1 GB before)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.idle_gc import DUE, IDLE, THRESHOLD, IdleCollector


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def collector():
    clock = Clock()
    c = IdleCollector(clock)
    before = gc.get_threshold()
    c.start()
    yield c, clock
    c.stop()
    assert gc.get_threshold() == before


def make_due() -> None:
    """Enough generation-1 collections since the last full one for a full one to be due."""
    for _ in range(DUE):
        gc.collect(1)


def test_start_holds_cpythons_full_collection_back_and_stop_puts_it_back():
    before = gc.get_threshold()
    c = IdleCollector()
    c.start()
    try:
        assert gc.get_threshold() == (before[0], before[1], max(THRESHOLD, before[2]))
        assert gc.get_freeze_count() > 0  # the heap the app started with: not walked again
    finally:
        c.stop()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_full_collection_runs_only_when_due_idle_and_not_busy(collector):
    c, clock = collector
    seen = []

    def cb(phase, info):
        if phase == "stop":
            seen.append(info["generation"])

    gc.callbacks.append(cb)
    try:
        gc.collect()  # nothing due from here
        seen.clear()
        clock.now += IDLE * 2
        assert not c.tick(busy=False)  # idle, but not due
        make_due()
        c.input()
        clock.now += IDLE / 2
        assert not c.tick(busy=False)  # due, but a key came just now
        clock.now += IDLE
        assert not c.tick(busy=True)  # due and idle, but a search runs
        assert 2 not in seen
        assert c.tick(busy=False)
        assert seen[-1] == 2 and c.collections == 1
        assert gc.get_count()[2] == 0
        assert not c.tick(busy=False)  # and not again until due again
    finally:
        gc.callbacks.remove(cb)


def test_stopped_collector_collects_nothing():
    c = IdleCollector()
    make_due()
    assert not c.tick(busy=False)  # never started: CPython's own thresholds are in force


async def test_the_app_collects_when_idle_and_puts_the_thresholds_back(tmp_path: Path):
    before = gc.get_threshold()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path)}, index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert gc.get_threshold()[2] == max(THRESHOLD, before[2])
        typed = app.collector.last_input
        await pilot.press("x")
        assert app.collector.last_input > typed  # a key is input: no collection just after it
        await app.workers.wait_for_complete()
        make_due()
        ran = app.collector.collections
        await pilot.pause(IDLE + 0.6)
        assert app.collector.collections > ran
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0

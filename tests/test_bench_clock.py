"""The ranking benches' ``--now`` (``bench/clock.py``): both relevance benches take the search
clock and hand it to ``Engine.search(now=)``, and give no ``now`` without it (so that an older
checkout measured with ``--src`` still runs)."""

from __future__ import annotations

import importlib.util
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("bench", ["relevance/run.py", "relevance_real/run.py"])
def test_a_ranking_bench_takes_the_search_clock(bench):
    run = bench_module(BENCH / bench)
    args = run.parse_args(["--now", "2026-06-01"])
    assert args.now == datetime(2026, 6, 1, tzinfo=timezone.utc)
    assert run.clock_kwargs(args.now) == {"now": args.now}
    assert run.parse_args(["--now", "2026-06-01T12:00+02:00"]).now == datetime(2026, 6, 1, 10, tzinfo=timezone.utc)
    assert run.parse_args([]).now is None and run.clock_kwargs(None) == {}
    with pytest.raises(SystemExit):
        run.parse_args(["--now", "last tuesday"])
    assert 'engine.search(q["query"], limit=10, **clock_kwargs(args.now))' in (BENCH / bench).read_text()


def test_the_clock_is_a_moment():
    parse_now = bench_module(BENCH / "clock.py").parse_now
    assert parse_now("2026-06-01T00:30+01:00") == datetime(2026, 5, 31, 23, 30, tzinfo=timezone.utc)
    assert parse_now("2026-06-01").utcoffset() == timedelta(0)

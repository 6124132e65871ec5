"""The benchmark runs end to end (a tiny smoke; real numbers come from ``bench/run.py``)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_smoke(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--out",
                           str(tmp_path / "smoke.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (tmp_path / "smoke.json").stat().st_size > 0


def test_bench_asks_what_the_app_asks():
    """The bench's TUI-shaped query asks for the rows the search screen asks for."""
    import importlib.util

    from crabsearch.tui.results import FIRST_ROWS

    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec.loader.exec_module(run)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert run.TUI_LIMIT == FIRST_ROWS


def test_typing_bench_smoke(tmp_path):
    """``typing_latency.py`` types every query shape into the app and reports latency and CPU."""
    import json

    out = tmp_path / "typing.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "typing_latency.py"), "--mb", "2", "--workdir",
                           str(tmp_path / "work"), "--runs", "1", "--gap", "0.01", "--shapes", "3", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert [r["shape"] for r in report["shapes"]] == ["common word", "rare word", "two-word prose"]
    assert all(r["times"] and r["screen_times"] and r["cpu_times"] for r in report["shapes"])
    assert report["cpu_sum_of_medians"] > 0 and "cpu p50 ms" in out.with_suffix(".txt").read_text()

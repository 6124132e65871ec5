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

    from crabsearch.tui.screens import RESULT_LIMIT

    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec.loader.exec_module(run)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert run.TUI_LIMIT == RESULT_LIMIT

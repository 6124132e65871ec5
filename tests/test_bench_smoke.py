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

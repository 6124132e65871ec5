#!/usr/bin/env python3
"""The app's start, two versions interleaved (issue 13, target 2): which of two source trees paints
the recent sessions sooner, on the same home and index.

    python bench/app_start_ab.py TREE_A TREE_B --home DIR --index DIR [--runs 15]

Each tree's ``crabsearch/`` is installed as ``bench/cli.py`` installs one (a copy in a virtual
environment under ``--workdir``, dependencies from this Python), then the two start in turn
(A B, B A, A B, ...) ``--runs`` times each after two warm-up starts each, timed as
``bench/cli.py``'s *app start* (spawn to the first rows painted, headless), with the app's own
CPU time at that moment (all its threads; a shared machine disturbs it less). Both trees must read
the index's format. Prints the medians and every run; a shared machine moves medians by tens of
milliseconds from one run to the next, so compare A and B within one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cli as bench_cli  # noqa: E402  (bench/cli.py)

CHILD = bench_cli._APP_CHILD.replace('os.write(1, b"shown\\n")',
                                     'os.write(1, b"shown %f\\n" % __import__("time").process_time())')
"""``bench/cli.py``'s app child, which also reports its CPU time (all threads) at the first paint."""
assert CHILD != bench_cli._APP_CHILD


def start(python: Path, env: dict[str, str], index: Path) -> tuple[float, float] | None:
    """``(wall seconds, CPU seconds)`` from spawning the app to its first rows painted."""
    t = time.perf_counter()
    proc = subprocess.Popen([str(python), "-c", CHILD, "--index-dir", str(index)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=index.parent)
    line = proc.stdout.readline()
    wall = time.perf_counter() - t
    proc.wait(timeout=60)
    parts = line.split()
    return (wall, float(parts[1])) if len(parts) == 2 and parts[0] == b"shown" else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree_a", type=Path)
    ap.add_argument("tree_b", type=Path)
    ap.add_argument("--home", type=Path, required=True, help="HOME for the app (its transcripts)")
    ap.add_argument("--index", type=Path, required=True, help="the index directory both read")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/crabsearch-app-ab"))
    args = ap.parse_args()
    drop = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_INDEX_DIR", "PYTHONDONTWRITEBYTECODE",
            "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(HOME=str(args.home), XDG_CONFIG_HOME=str(args.home / ".config"),
               XDG_CACHE_HOME=str(args.workdir / "cache"), PYTHONPYCACHEPREFIX=str(args.workdir / "pycache"))
    pythons = {"A": bench_cli.install(args.workdir, args.tree_a, "a"), "B": bench_cli.install(args.workdir, args.tree_b, "b")}
    for name in "ABAB":  # warm-up: bytecode caches, the page cache
        start(pythons[name], env, args.index)
    times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    for i in range(args.runs):
        for name in ("AB" if i % 2 == 0 else "BA"):
            took = start(pythons[name], env, args.index)
            if took is not None:
                times[name].append(took)
    for name, tree in (("A", args.tree_a), ("B", args.tree_b)):
        wall = sorted(round(w * 1e3) for w, _ in times[name])
        cpu = sorted(round(c * 1e3) for _, c in times[name])
        print(f"{name} {tree}: median {statistics.median(wall):.0f} ms wall, {statistics.median(cpu):.0f} ms CPU "
              f"(n={len(wall)}); wall {wall}; CPU {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

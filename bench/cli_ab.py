#!/usr/bin/env python3
"""Two versions of the command without the resident server, in one sitting.

    python bench/cli_ab.py TREE_A TREE_B --workdir DIR [--runs 7] [--shapes N]

Installs each tree's ``crabsearch/`` as ``cli.py`` does (``cli.install``: a copy in a virtual
environment of the work directory, bytecode cached) and times ``crabsearch search Q --json``
with ``CRABSEARCH_NO_SERVER=1`` (the command in its own process: what a call after the server
idled out costs), with its refresh and with ``--no-refresh``, over ``run.py``'s query shapes;
A and B alternate run by run (A B, B A, ...), so a burst of load on the shared machine hits both
alike. The home and index are ``cli.py``'s (``--workdir`` of a ``cli.py`` run: ``home/`` and
``index/``; made here when absent); both trees must read the index's format.

Prints, per mode, the median over the shapes of each tree's per-shape medians (wall time from
spawning to exit, and the child's CPU time), and B/A; ``--out`` writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (str(HERE.parent), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from cli import child_env, install, make_home, timed  # noqa: E402  (bench/cli.py)
from run import EXTRA_QUERIES, QUERY_SHAPES, pick_spread_pair  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree_a")
    ap.add_argument("tree_b")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mb", type=float, default=100, help="generated home when absent (default 100)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--shapes", type=int, default=len(QUERY_SHAPES), help="the first N shapes only")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    h = make_home(work, args.mb, 1)
    env = dict(child_env(h["home"], work), CRABSEARCH_NO_SERVER="1")
    index_dir = work / "index"
    pythons = {"A": install(work, Path(args.tree_a), "tree-a"), "B": install(work, Path(args.tree_b), "tree-b")}
    if not index_dir.exists():
        subprocess.run([str(pythons["A"].with_name("crabsearch")), "index", "--index-dir", str(index_dir)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    queries = dict(h["meta"]["queries"], **EXTRA_QUERIES)
    queries["spread"] = pick_spread_pair(index_dir, 1)["query"]
    shapes = [(name, queries[key], agent) for name, key, agent in QUERY_SHAPES][:args.shapes]

    def cmd(tree, q, agent, refresh):
        c = [str(pythons[tree].with_name("crabsearch")), "search", *q.split(), "--json", "--index-dir", str(index_dir)]
        return c + (["--agent", agent] if agent else []) + ([] if refresh else ["--no-refresh"])

    for tree in "AB":  # warm-up: bytecode caches, the page cache
        for _ in range(2):
            timed(cmd(tree, "the", None, True), env)
    modes = ("refresh", "no_refresh")
    wall = {(t, m, s): [] for t in "AB" for m in modes for s, _, _ in shapes}
    cpu = {k: [] for k in wall}
    problems = []
    for run in range(args.runs):
        order = "AB" if run % 2 == 0 else "BA"
        for m in modes:
            for name, q, agent in shapes:
                for tree in order:
                    w, c, rc, _ = timed(cmd(tree, q, agent, m == "refresh"), env)
                    if rc:
                        problems.append(f"{tree} {name} {m}: exit {rc}")
                    wall[tree, m, name].append(w)
                    cpu[tree, m, name].append(c)
    report = {"tree_a": args.tree_a, "tree_b": args.tree_b, "runs": args.runs, "files": h["meta"].get("files"),
              "mb": h["meta"].get("bytes", 0) / 1e6, "modes": {}, "problems": problems}
    print(f"no server (CRABSEARCH_NO_SERVER=1), {len(shapes)} shapes x {args.runs} runs, A={args.tree_a} B={args.tree_b}")
    for m in modes:
        per = {t: [statistics.median(wall[t, m, s]) for s, _, _ in shapes] for t in "AB"}
        per_cpu = {t: [statistics.median(cpu[t, m, s]) for s, _, _ in shapes] for t in "AB"}
        a, b = statistics.median(per["A"]), statistics.median(per["B"])
        ca, cb = statistics.median(per_cpu["A"]), statistics.median(per_cpu["B"])
        report["modes"][m] = {"A": a, "B": b, "ratio": b / a, "A_cpu": ca, "B_cpu": cb,
                              "shapes": {s: {"A": pa, "B": pb} for (s, _, _), pa, pb in zip(shapes, per["A"], per["B"])}}
        print(f"  search --json{' --no-refresh' if m == 'no_refresh' else '':13}  A {a * 1000:6.0f} ms (cpu {ca * 1000:4.0f})"
              f"  B {b * 1000:6.0f} ms (cpu {cb * 1000:4.0f})  B/A {b / a:.2f}")
        for (s, _, _), pa, pb in zip(shapes, per["A"], per["B"]):
            print(f"      {s:22} {pa * 1000:6.0f} {pb * 1000:6.0f}")
    for p in problems[:10]:
        print("problem:", p)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Two versions of the search engine on one index, interleaved (issue 13): which answers sooner.

    python bench/engine_ab.py TREE_OLD TREE_NEW --index DIR [--rounds 5] [--limit 20] [--window 4] QUERY...

``TREE_OLD`` and ``TREE_NEW`` are source trees (``git worktree add /tmp/old <commit>``); both must
read the index's format. Each round runs one process per tree, old then new; a process opens the
index with that tree's ``Engine``, searches each query twice to warm up, then 9 times, and reports
the median (``Engine.search`` in the process: no start, no refresh; ``--cpu``: its CPU time;
the scans a search keeps for the next, ``ladder.ScansKept``, are not taken: each repeat scans anew). Prints, per query, the median
of the rounds' medians for each tree, their ratio (new / old) and that of the fastest rounds, and every round's median. A shared
machine moves absolute times by tens of percent within minutes; compare within one run only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, statistics, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from crabsearch.search import Engine
try:  # a search's own cost: the same query again must not take the last search's scans
    from crabsearch.search import ladder
    ladder.ScansKept.get = lambda self, key: None
except (ImportError, AttributeError):
    pass
index, limit, window, queries = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5])
clock = time.process_time if sys.argv[6] == "cpu" else time.perf_counter
engine = Engine(Path(index))
out = {}
for q in queries:
    for _ in range(2):
        engine.search(q, limit=limit, before=window, after=window)
    times = []
    for _ in range(9):
        t = clock()
        engine.search(q, limit=limit, before=window, after=window)
        times.append((clock() - t) * 1000)
    out[q] = statistics.median(times)
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("queries", nargs="+")
    ap.add_argument("--index", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--cpu", action="store_true",
                    help="the process's CPU time per search instead of wall time (less moved by other "
                         "processes on a shared machine; a search is one thread)")
    args = ap.parse_args()
    runs: dict[str, dict[str, list[float]]] = {q: {"old": [], "new": []} for q in args.queries}
    for _ in range(args.rounds):
        for name, tree in (("old", args.old), ("new", args.new)):
            got = subprocess.run([sys.executable, "-c", CHILD, tree, args.index, str(args.limit), str(args.window),
                                  json.dumps(args.queries), "cpu" if args.cpu else "wall"], capture_output=True, text=True, check=True)
            for q, ms in json.loads(got.stdout).items():
                runs[q][name].append(ms)
    width = max(len(q) for q in args.queries)
    for q, by in runs.items():
        old, new = statistics.median(by["old"]), statistics.median(by["new"])
        low = min(by["new"]) / min(by["old"])
        print(f"{q:{width}}  old {old:6.0f} ms  new {new:6.0f} ms  ratio {new / old:.2f} (fastest {low:.2f})   "
              f"old {sorted(round(x) for x in by['old'])}  new {sorted(round(x) for x in by['new'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The engine's side of typing: each query shape typed key by key, with and without the scans kept
from the key before (``ladder.ScansKept``), interleaved in one process (issue 13, target 2).

    python bench/typing_engine.py --home DIR --index DIR [--runs 4] [SHAPE ...]

For each query shape of ``run.py`` (or only the named ones, e.g. ``"common word"``), ``--runs``
times in each mode (alternating which goes first): the recent sessions are listed (the app's
empty box), then every prefix of the query is searched as the app searches it (``limit`` 20, no
window, ``explain``, masked, ``typing`` while the last word has no space after it). Timed in CPU
time of the process (a single thread; steadier than wall time on a shared machine): the last
key's search, and all of the query's keys. Kept scans off means ``ScansKept.get`` finds nothing:
every search scans as a fresh engine would (its answers are the same: ``tests/test_scans_kept.py``).
Prints one line per shape and the sums of the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (str(HERE.parent), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from run import EXTRA_QUERIES, QUERY_SHAPES  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True, help="the generated home the index was built from")
    ap.add_argument("--index", required=True, help="an index built from --home")
    ap.add_argument("--runs", type=int, default=4, help="typings per shape and mode (default 4)")
    ap.add_argument("shapes", nargs="*", help="only these shapes (run.py's names)")
    args = ap.parse_args(argv)

    from crabsearch.search import Engine, ladder

    queries = dict(json.loads((Path(args.home) / "bench-corpus.json").read_text())["queries"], **EXTRA_QUERIES)
    engine = Engine(Path(args.index))
    kept_get = ladder.ScansKept.get

    def search(text: str) -> None:
        engine.search(text, limit=20, before=0, after=0, time_limit=0.5, explain=True, redact=True,
                      typing=not text[-1:].isspace())

    search("warm up")
    sums = {"on": [0.0, 0.0], "off": [0.0, 0.0]}
    print(f"{'query':38} {'last key, ms CPU':>24} {'every key, ms CPU':>26}")
    print(f"{'':38} {'kept':>8} {'not kept':>9} {'ratio':>6} {'kept':>8} {'not kept':>9} {'ratio':>6}")
    for name, key, agent in QUERY_SHAPES:
        if key not in queries or (args.shapes and name not in args.shapes):
            continue
        query = queries[key] + (f" agent:{agent}" if agent else "")
        last = {"on": [], "off": []}
        every = {"on": [], "off": []}
        for run in range(args.runs):
            for mode in (("on", "off") if run % 2 == 0 else ("off", "on")):
                ladder.ScansKept.get = kept_get if mode == "on" else (lambda self, key: None)
                engine.recent(limit=50)
                start = time.process_time()
                for i in range(1, len(query)):
                    search(query[:i])
                t = time.process_time()
                search(query)
                end = time.process_time()
                last[mode].append((end - t) * 1000)
                every[mode].append((end - start) * 1000)
        ladder.ScansKept.get = kept_get
        row = {m: (statistics.median(last[m]), statistics.median(every[m])) for m in ("on", "off")}
        for m in row:
            sums[m][0] += row[m][0]
            sums[m][1] += row[m][1]
        print(f"{query:38} {row['on'][0]:8.1f} {row['off'][0]:9.1f} {row['on'][0] / row['off'][0]:6.2f} "
              f"{row['on'][1]:8.0f} {row['off'][1]:9.0f} {row['on'][1] / row['off'][1]:6.2f}", flush=True)
    print(f"{'sum of the medians':38} {sums['on'][0]:8.0f} {sums['off'][0]:9.0f} {sums['on'][0] / sums['off'][0]:6.2f} "
          f"{sums['on'][1]:8.0f} {sums['off'][1]:9.0f} {sums['on'][1] / sums['off'][1]:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Live refresh latency: from a line appended to a transcript to that message being searchable,
and to it being on screen, through the app's own refresh path.

    python bench/live.py                      # 40 MB corpus, 20 appends, median of 20
    python bench/live.py --mb 600 --runs 20   # a bigger home (more files to stat per refresh)
    python bench/live.py --workdir /tmp/live  # keep the home and index for another run

The app (``CrabsearchApp``, headless under Textual's ``run_test``, as a user runs it: background
refresh on, file watching on, the 30 s periodic refresh left at 30 s) is opened on a generated
home (``gen.py``) whose index is built first. The search box holds a marker word that is in no
transcript yet. Each run appends one complete Claude Code line holding a new marker to a
mid-sized transcript (``gen.append_lines``), types that marker into the box and times:

* *searchable*: until the app's index refresh that read the appended line returned (the watcher
  saw the write, the app refreshed the index and committed it: any search finds it from then
  on; checked with a separate ``Engine`` after each run);
* *on screen*: until the app's result list shows that session: the app then also reloaded its
  engine and ran the query again.

Prints the median, p90, min and max of each, and writes a JSON report (``bench/out/live.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import gen  # noqa: E402  (bench/gen.py)


def pick_transcript(home: Path) -> Path:
    """A mid-sized Claude Code transcript of the generated home (the one an agent would append
    to; the refresh reads only the appended bytes)."""
    files = sorted((p for p in (home / ".claude" / "projects").rglob("*.jsonl") if "subagents" not in p.parts),
                   key=lambda p: p.stat().st_size)
    return files[len(files) // 2]


def summary(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median_s": statistics.median(xs), "p90_s": xs[min(len(xs) - 1, int(len(xs) * 0.9))],
            "min_s": xs[0], "max_s": xs[-1], "runs": len(xs)}


async def measure(index_dir: Path, home: Path, target: Path, runs: int) -> dict:
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    from crabsearch.search import Engine
    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.results import ResultList

    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    app = CrabsearchApp(index_dir, env=env, index_on_start=True, cursor_blink=False)
    searchable, shown, refreshes = [], [], []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        for _ in range(600):  # the start-up refresh (nothing to read) and the first query
            await pilot.pause(0.05)
            if not app.indexing and screen.settled and screen.result is not None:
                break
        watched = [str(r) for r in screen._watched]
        results = screen.query_one(ResultList)
        probe = Engine(index_dir)
        done_at: list[float] = []
        refresh = app.indexer.refresh

        def timed_refresh(*args, **kwargs):  # the app's own refresh, timed where it commits
            report = refresh(*args, **kwargs)
            if report.files_read:
                done_at.append(time.perf_counter())
            return report

        app.indexer.refresh = timed_refresh
        rng = random.Random(time.time_ns())
        for n in range(runs):
            # a new word each run, far from every other (a near one would be a spelling repair)
            word = "zq" + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(10))
            box = screen.query_one("#query")
            box.value = word
            for _ in range(200):
                await pilot.pause(0.02)
                if screen.settled and screen.result is not None and screen.result.query == word:
                    break
            assert not results.hits, f"{word} found before it was written"
            done_at.clear()
            t0 = time.perf_counter()
            gen.append_lines(target, 1, seed=7000 + n, word=word)
            while time.perf_counter() - t0 < 30:
                await asyncio.sleep(0.005)
                if (results.hits and results.hits[0].session.path == str(target)
                        and screen.result.route not in ("repair", "any")):
                    shown.append(time.perf_counter() - t0)
                    break
            else:
                raise SystemExit(f"run {n}: {word} not on screen after 30 s")
            if not done_at or not probe.search(word, limit=1, before=0, after=0).hits:
                raise SystemExit(f"run {n}: {word} not searchable")
            searchable.append(done_at[0] - t0)
            await pilot.pause(0.3)  # let the refresh settle before the next append
        probe.close()
    return {"searchable": summary(searchable), "on_screen": summary(shown), "watched": watched,
            "searchable_runs_s": searchable, "on_screen_runs_s": shown}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=40, help="corpus size in MB (default 40)")
    ap.add_argument("--runs", type=int, default=20, help="appends measured (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="keep the home and index here (reused when present)")
    ap.add_argument("--out", default=str(HERE / "out" / "live.json"))
    args = ap.parse_args(argv)

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="crabsearch-live-"))
    home, index_dir = work / "home", work / "index"
    try:
        if not home.exists():
            meta = gen.write_corpus(home, args.mb, args.seed)
            print(f"corpus: {meta.get('files', '?')} files, {args.mb:g} MB in {home}")
        env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME",
                                                                  "CRABSEARCH_INDEX_DIR")}
        env["HOME"] = str(home)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "crabsearch", "index", "--index-dir", str(index_dir), "--json"],
                       env=env, cwd=ROOT, check=True, capture_output=True)
        print(f"index: built in {time.perf_counter() - t:.1f} s")
        target = pick_transcript(home)
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = str(home)  # the app's own files (copy file, error log) stay in the work dir
        os.environ["XDG_CACHE_HOME"] = str(work / "cache")
        try:
            report = asyncio.run(measure(index_dir, home, target, args.runs))
        finally:
            if old_home is not None:
                os.environ["HOME"] = old_home
        report.update(mb=args.mb, target=str(target), target_bytes=target.stat().st_size,
                      transcripts=sum(1 for _ in home.rglob("*.jsonl")), cpus=os.cpu_count())
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2))
        for what in ("searchable", "on_screen"):
            r = report[what]
            print(f"{what:>11}: median {r['median_s'] * 1000:.0f} ms, p90 {r['p90_s'] * 1000:.0f} ms, "
                  f"min {r['min_s'] * 1000:.0f} ms, max {r['max_s'] * 1000:.0f} ms ({r['runs']} appends, "
                  f"{report['transcripts']} transcripts)")
        print(f"report: {args.out}")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

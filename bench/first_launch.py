#!/usr/bin/env python3
"""First launch: how long until a word said only in the oldest session is shown.

    python bench/first_launch.py TREE [TREE ...] --home DIR [--runs 1] [--timeout 600] [--out FILE]
    python bench/first_launch.py TREE --mb 450 --home DIR     # generate the home first (gen.py)

The home (``gen.py --mb N``, seed 1, when ``--home`` has no ``bench-corpus.json``) gets a marker
word (:data:`WORD`) in a user line appended to its oldest Claude Code transcript (by mtime; its
mtime is set back, so it stays the oldest and a build reads it last). For each source tree
(a checkout's folder holding ``crabsearch/``), in turn, a child process imports that tree's
crabsearch and opens the app (``CrabsearchApp``, Textual's headless pilot, 120x40) on an empty
index directory with the first build on, as a new user's first ``crabsearch`` does; as soon as
the search box is there the word is put in it at once (as a paste: under the pilot, each key
typed one by one waits for the app to handle it, seconds apiece while the build runs on a loaded
machine). Timed from opening the app to:

* *found*: the results list first shows the oldest session (``indexed`` says whether that row
  came from the index or from the look at the transcripts not indexed yet, ``search.pending``);
* *built*: the build's end (``IndexDone``).

Each tree gets a fresh index directory per run; ``--runs`` alternate the trees (A B, B A, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402  (bench/gen.py)

WORD = "zyzzyvaoldestmarker"

_CHILD = r"""
import asyncio, json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
home, index_dir, word, sid, timeout = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6])
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.results import ResultList
from crabsearch.tui import messages

out = {"found": None, "indexed": None, "built": None}
_init = messages.IndexDone.__init__
def done(self, *a, **k):
    _init(self, *a, **k)
    if out["built"] is None:
        out["built"] = time.perf_counter() - t0
messages.IndexDone.__init__ = done

async def main():
    app = CrabsearchApp(index_dir, env={"HOME": home}, index_on_start=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
        from crabsearch.tui.filters import QueryInput
        app.screen.query_one(QueryInput).value = word  # pasted: keys typed one by one wait on the build
        while time.perf_counter() - t0 < timeout:
            await pilot.pause(0.05)
            hits = app.screen.query_one(ResultList).hits if hasattr(app.screen, "query_one") else []
            row = next((h for h in hits or [] if h.session.session_id == sid), None)
            if row is not None and out["found"] is None:
                out["found"], out["indexed"] = time.perf_counter() - t0, getattr(row, "indexed", True)
            if out["found"] is not None and out["built"] is not None:
                break
        app.exit()
asyncio.run(main())
print(json.dumps(out))
"""


def plant(home: Path) -> str:
    """Put :data:`WORD` in the oldest Claude Code transcript of ``home`` (mtime kept); its
    session id."""
    files = sorted((home / ".claude" / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    oldest = files[0]
    st = oldest.stat()
    if WORD.encode() not in oldest.read_bytes():
        gen.append_lines(oldest, 2, seed=7, word=WORD)
        os.utime(oldest, ns=(st.st_atime_ns, st.st_mtime_ns))
    return oldest.stem


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--home", required=True)
    ap.add_argument("--mb", type=float, default=450)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    home = Path(args.home)
    if not (home / "bench-corpus.json").exists():
        gen.write_corpus(home, args.mb, 1)
    sid = plant(home)
    meta = json.loads((home / "bench-corpus.json").read_text())
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_INDEX_DIR", "PYTHONPATH")}
    env["TEXTUAL_ANIMATIONS"] = "none"
    report = {"home": str(home), "files": meta.get("files"), "mb": meta.get("bytes", 0) / 1e6, "runs": []}
    print(f"first launch: {meta.get('files')} transcripts, {meta.get('bytes', 0) / 1e6:.0f} MB; the word is in "
          f"the oldest session ({sid})")
    for run in range(args.runs):
        for tree in (args.trees if run % 2 == 0 else list(reversed(args.trees))):
            with tempfile.TemporaryDirectory(prefix="crabsearch-first-") as tmp:
                t = time.perf_counter()
                r = subprocess.run([sys.executable, "-c", _CHILD, tree, str(home), str(Path(tmp) / "index"), WORD,
                                    sid, str(args.timeout)], env=env, capture_output=True, text=True,
                                   cwd=tmp, timeout=args.timeout + 60)
                try:
                    res = json.loads(r.stdout.strip().splitlines()[-1])
                except (ValueError, IndexError):
                    res = {"error": r.stderr[-500:]}
                res.update(tree=tree, wall=time.perf_counter() - t)
                report["runs"].append(res)
                found = f"{res['found']:.1f} s" if res.get("found") is not None else "not found"
                built = f"{res['built']:.1f} s" if res.get("built") is not None else "?"
                print(f"  {tree}: found after {found} (indexed row: {res.get('indexed')}), build done after {built}",
                      flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""crabsearch benchmark: index build, refresh, query latency, and opening a huge session.

    python bench/run.py [--mb 50] [--big-mb 200] [--repeat 5] [--out bench/out/report.json]
    python bench/run.py --smoke        # tiny version (2 MB corpus, 5 MB big file), < 30 s, for CI

Everything happens in a fresh temporary directory (removed afterwards unless ``--keep``); the
generated homes are passed as ``HOME`` (``CLAUDE_CONFIG_DIR``/``CODEX_HOME`` are dropped), so the
real transcripts and the real index are never touched. See ``bench/README.md`` for what each number
means. Exit code 0 when every sanity check passed, 1 otherwise (the report is written either way).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
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
import mcp_roundtrip  # noqa: E402  (bench/mcp_roundtrip.py)

MB = gen.MB
TUI_LIMIT = 20
"""The rows the app's search screen asks for a typed query: a screenful at 40 lines
(``crabsearch.tui.results.FIRST_ROWS``; not imported: the query rounds import no Textual).
``tests/test_bench_smoke.py`` checks they agree."""

# A tiny parent for the measured child: its RUSAGE_CHILDREN max RSS is exactly the child's peak
# (the benchmark's own process has other children, e.g. none now but maybe later).
_RSS_WRAPPER = r"""
import json, resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
if sys.platform == "darwin":
    rss //= 1024  # bytes there, KiB on Linux
with open(out, "w") as f:
    json.dump({"wall": wall, "maxrss_kib": rss, "rc": r.returncode,
               "stdout": r.stdout.decode("utf-8", "replace"), "stderr": r.stderr.decode("utf-8", "replace")}, f)
"""


# ---------------------------------------------------------------------------------------------
# helpers


def pct(values: list[float], p: float) -> float:
    """Percentile ``p`` (0-100) with linear interpolation."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "p95": pct(values, 95), "min": min(values),
            "max": max(values), "n": len(values)}


def child_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_INDEX_DIR")}
    env["HOME"] = str(home)
    env.setdefault("PYTHONPATH", "")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env["PYTHONPATH"]) if p)
    return env


def source_env(home: Path) -> dict[str, str]:
    """The ``env`` given to in-process Indexer/App: only HOME, so discovery reads the generated home."""
    return {"HOME": str(home)}


def git_info() -> dict:
    """The commit measured, and whether crabsearch/ had uncommitted changes."""
    def git(*a):
        try:
            return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": git("rev-parse", "--short", "HEAD"), "subject": git("log", "-1", "--format=%s"),
            "crabsearch_dirty": bool(git("status", "--porcelain", "--", "crabsearch"))}


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def drop_file_cache(path: str) -> bool:
    """Ask the kernel to drop a file's cached pages (clean pages only; no root needed)."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


def index_subprocess(home: Path, index_dir: Path, work: Path) -> dict:
    """``python -m crabsearch index --index-dir DIR --json`` with HOME=home; wall time and peak RSS."""
    out = work / f"rss-{index_dir.name}.json"
    cmd = [sys.executable, "-c", _RSS_WRAPPER, str(out),
           sys.executable, "-m", "crabsearch", "index", "--index-dir", str(index_dir), "--json"]
    subprocess.run(cmd, env=child_env(home), check=True)
    res = json.loads(out.read_text())
    report = {}
    if res["rc"] == 0:
        try:
            report = json.loads(res["stdout"])
        except ValueError:
            pass
    return {"wall_s": res["wall"], "peak_rss_mib": res["maxrss_kib"] / 1024, "rc": res["rc"],
            "stderr": res["stderr"].strip()[-2000:], "report": report}


class Checks:
    """Sanity checks: a failed check makes the run exit 1; a warning is only reported (for facts
    that depend on parsing details a legitimate change may alter, like exact message counts)."""

    def __init__(self):
        self.failed: list[str] = []
        self.warnings: list[str] = []

    def warn(self, ok: bool, what: str) -> bool:
        if not ok:
            self.warnings.append(what)
            print(f"  warning: {what}", file=sys.stderr)
        return ok

    def __call__(self, ok: bool, what: str) -> bool:
        if not ok:
            self.failed.append(what)
            print(f"  CHECK FAILED: {what}", file=sys.stderr)
        return ok


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# measurements


def bench_refresh(index_dir: Path, home: Path, repeat: int, append_to: Path | None, check: Checks,
                  label: str) -> dict:
    from crabsearch.index import Indexer

    out: dict = {}
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        rep = Indexer(index_dir, env=source_env(home)).refresh()
        times.append(time.perf_counter() - t)
        check(rep.files_read == 0 and not rep.errors, f"{label}: no-change refresh read {rep.files_read} files")
    out["nochange_s"] = summary(times)
    if append_to is not None:
        times = []
        for i in range(repeat):
            gen.append_lines(append_to, 3, seed=1000 + i)
            t = time.perf_counter()
            rep = Indexer(index_dir, env=source_env(home)).refresh()
            times.append(time.perf_counter() - t)
            check(rep.files_read == 1 and rep.messages_added == 3 and rep.bytes_read < 10_000,
                  f"{label}: append refresh read {rep.files_read} files, {rep.messages_added} messages, "
                  f"{rep.bytes_read} bytes (expected 1, 3, <10 kB)")
        out["append3_s"] = summary(times)
        out["append_file"] = str(append_to)
        out["append_file_mb"] = append_to.stat().st_size / MB
    return out


QUERY_SHAPES = [  # (name, meta key, agent)
    ("common word", "common", None),
    ("rare word", "rare", None),
    ("two-word prose", "prose2", None),
    ("identifier", "identifier", None),
    ("path identifier", "path", None),
    ("typo'd word", "typo", None),
    ("agent=codex filter", "codex_filtered", "codex"),
    ("CJK phrase", "cjk", None),
    ("CJK sub-word", "cjk_subword", None),
    # ladder shapes (query language: phrase -> all -> session -> repair -> any)
    ("quoted phrase", "quoted", None),
    ("prefix", "prefix", None),
    ("exclusion", "exclusion", None),
    ("filters, since:30d", "filtered", None),
    ("filters, in range", "filtered_range", None),
    ("words in diff. msgs", "spread", None),
    ("stopword + 2 words", "stop3", None),
    ("typo in 2 words", "typo2", None),
    ("nonsense word", "nonsense", None),
    ("common + nonsense", "common_nonsense", None),
]

# Query shapes that are not in the generator's ``queries`` (``spread`` is picked from the index).
EXTRA_QUERIES = {
    "quoted": '"token refresh"',
    "prefix": "auth*",
    "exclusion": "database -postgres",
    "filtered": "agent:codex since:30d retry",  # the corpus ends in 2026-03 (T_BASE + 280 days)
    "filtered_range": "agent:codex since:2026-01-01 retry",
    "stop3": "the database timeout",
    "typo2": "databse timeout",
    "nonsense": "zqxjvbnwk",
    "common_nonsense": "error zqxjvbnwk",
}


def pick_spread_pair(index_dir: Path, seed: int, ranks=range(150, 2000, 3)) -> dict:
    """Two words of the generator's vocabulary (Zipf ranks 150-2000) that are in no document
    together but together in at least 3 sessions, the most frequent such pair (largest smaller
    document frequency): the ``phrase``/``all`` rungs find nothing, the session-wide rung does."""
    import itertools

    from crabsearch.index.schema import TEXT_FIELDS
    from crabsearch.index.store import open_index

    words = gen.Gen(seed).v.words
    ix, _ = open_index(index_dir, create=False)
    with ix.searcher() as s:
        r = s.reader()
        skeys = r.column_reader("skey")
        cands = []
        for rank in ranks:
            w = words[rank]
            docs: set[int] = set()
            for f in TEXT_FIELDS:
                if (f, w) in r:
                    docs.update(r.postings(f, w).all_ids())
            if docs:
                cands.append((w, docs, {skeys[d] for d in docs}))
        best = None
        for (a, da, sa), (b, db, sb) in itertools.combinations(cands, 2):
            if not da.isdisjoint(db):
                continue
            shared = len(sa & sb)
            key = (shared >= 3, min(len(da), len(db)), shared)
            if best is None or key > best[0]:
                best = (key, a, b, len(da), len(db), shared)
    if best is None:
        return {"query": f"{words[ranks[0]]} {words[ranks[1]]}"}
    _, a, b, na, nb, shared = best
    return {"query": f"{a} {b}", "docs": [na, nb], "shared_sessions": shared}


def bench_queries(index_dir: Path, queries: dict, runs: int, check: Checks) -> list[dict]:
    from crabsearch.search import Engine

    engine = Engine(index_dir, keep_scans=False)  # each run a search, not the last one's scans again
    rows = []
    for name, key, agent in QUERY_SHAPES:
        q = queries[key]
        row = {"shape": name, "query": q, "agent": agent}
        # API/CLI shape (limit 20, window 4+4) and the app's (a typed query's screenful of
        # rows, no window, with the explanations its status line and Explain panel use; no
        # deadline, so the figure is the whole search)
        for tag, kw in (("api", dict(limit=20, before=4, after=4)),
                        ("tui", dict(limit=TUI_LIMIT, before=0, after=0, explain=True))):
            for _ in range(2):  # warm
                res = engine.search(q, agent=agent, **kw)
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                res = engine.search(q, agent=agent, **kw)
                times.append(time.perf_counter() - t)
            row[tag] = summary(times)
            row[f"{tag}_hits"] = len(res.hits)
            row[f"{tag}_route"] = res.route
            row[f"{tag}_partial"] = res.partial
            row["route"] = res.route
            want = agent or ("codex" if "agent:codex" in q else None)
            if want:
                check(all(h.session.agent == want for h in res.hits), f"query {q!r}: agent filter leaked")
        rows.append(row)
    engine.close()
    return rows


def bench_engine_open(index_dir: Path, session_id: str, hit: int, repeat: int, path: str) -> dict:
    """``find_session`` + ``page(ref, hit-5, 40)`` with a new Engine each repeat; warm file and,
    where possible, with the transcript's cached pages dropped first."""
    from crabsearch.search import Engine

    out = {}
    for mode in ("warm", "cold"):
        if mode == "cold" and not hasattr(os, "posix_fadvise"):
            continue
        times, find_t, page_t = [], [], []
        n_items = n_bytes = 0
        for _ in range(repeat):
            if mode == "cold":
                drop_file_cache(path)
            e = Engine(index_dir)
            t0 = time.perf_counter()
            ref = e.find_session(session_id)
            t1 = time.perf_counter()
            page = e.page(ref, max(0, hit - 5), 40)
            t2 = time.perf_counter()
            e.close()
            times.append(t2 - t0)
            find_t.append(t1 - t0)
            page_t.append(t2 - t1)
            n_items = len(page.messages)
            n_bytes = sum(len(m.text.encode("utf-8", "replace")) for m in page.messages)
        out[mode] = {"total_s": summary(times), "find_session_s": summary(find_t), "page_s": summary(page_t),
                     "messages": n_items, "text_mb": n_bytes / MB}
    return out


async def _tui_run(index_dir: Path, home: Path, targets: list[tuple[str, str]], check: Checks) -> dict:
    """One app run: for each (label, marker): type the marker, Down, ``o``; time until the
    TranscriptView has loaded blocks. Then ``g`` (jump to the first message) in that session."""
    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.transcript import TranscriptView

    app = CrabsearchApp(index_dir, env=source_env(home), index_on_start=False)
    page_calls: list[tuple[float, int, int]] = []
    orig_page = app.engine.page

    def timed_page(ref, offset=0, limit=50, max_bytes=None, **kw):
        t = time.perf_counter()
        r = orig_page(ref, offset, limit, max_bytes=max_bytes, **kw)
        page_calls.append((time.perf_counter() - t, len(r.messages), sum(len(m.text) for m in r.messages)))
        return r

    app.engine.page = timed_page  # the SessionScreen's loader calls app.engine.page at call time
    opened_at: list[float] = []
    orig_open_at = TranscriptView._open_at

    def timed_open_at(self, index):  # when the first page is loaded and rendered
        orig_open_at(self, index)
        opened_at.append(time.perf_counter())

    TranscriptView._open_at = timed_open_at
    out: dict = {}

    async def settle(pilot):
        await pilot.pause(0.25)
        await app.workers.wait_for_complete()
        await pilot.pause()

    async def wait_until(cond, limit=120.0):
        t = time.perf_counter()
        while not cond():
            if time.perf_counter() - t > limit:
                raise TimeoutError("TUI did not reach the expected state")
            await asyncio.sleep(0.002)

    try:
        await _tui_session(app, out, targets, page_calls, opened_at, settle, wait_until, check)
    finally:
        TranscriptView._open_at = orig_open_at
    return out


async def _tui_session(app, out, targets, page_calls, opened_at, settle, wait_until, check) -> None:
    from crabsearch.tui.results import ResultList
    from crabsearch.tui.screens import SearchScreen
    from crabsearch.tui.session import SessionScreen
    from crabsearch.tui.transcript import TranscriptView

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for label, marker in targets:
            if not isinstance(app.screen, SearchScreen):
                await pilot.press("escape")
                await settle(pilot)
            box = app.screen.query_one("#query")
            box.focus()
            box.value = ""
            await settle(pilot)
            await pilot.press(*marker)
            await settle(pilot)
            results = app.screen.query_one(ResultList)
            if not check(results.option_count >= 1, f"TUI: no result for {marker!r}"):
                continue
            hit = results.hits[0]
            await pilot.press("down")
            await pilot.pause()
            page_calls.clear()
            opened_at.clear()

            def view():
                scr = app.screen
                if not isinstance(scr, SessionScreen):
                    return None
                views = scr.query(TranscriptView)
                return views.first() if views else None

            t0 = time.perf_counter()
            await pilot.press("o")
            await wait_until(lambda: (v := view()) is not None and bool(v.loaded))
            t_loaded = time.perf_counter() - t0
            v = view()
            first = (opened_at[0] - t0) if opened_at else t_loaded
            check(hit.message_index in v.loaded, f"TUI {label}: hit {hit.message_index} not among loaded messages")
            opened = {"open_s": t_loaded, "first_page_s": first, "page_s": float(sum(c[0] for c in page_calls)), "page_calls": len(page_calls),
                      "page_chars": sum(c[2] for c in page_calls), "loaded": len(v.loaded),
                      "lines": len(v._lines), "hit_index": hit.message_index,
                      "message_count": hit.session.message_count}
            # baseline: a key nothing is bound to (the Pilot's own cost per key press)
            t0 = time.perf_counter()
            await pilot.press("x")
            opened["noop_key_s"] = time.perf_counter() - t0
            # jump to the first message (loads and renders page 0)
            page_calls.clear()
            t0 = time.perf_counter()
            await pilot.press("g")
            await wait_until(lambda: v.lo == 0)
            opened["jump_start_s"] = time.perf_counter() - t0
            opened["jump_start_page_s"] = float(sum(c[0] for c in page_calls))
            out[label] = opened
            await pilot.press("escape")
            await settle(pilot)


def bench_tui(index_dir: Path, home: Path, targets: list[tuple[str, str]], runs: int, check: Checks) -> dict:
    per_run = [asyncio.run(_tui_run(index_dir, home, targets, check)) for _ in range(runs)]
    out = {}
    for label, _ in targets:
        rows = [r[label] for r in per_run if label in r]
        if not rows:
            continue
        out[label] = {k: (summary([r[k] for r in rows]) if isinstance(rows[0][k], float) else rows[-1][k])
                      for k in rows[0]}
    return out


# ---------------------------------------------------------------------------------------------
# the run


def run(args) -> tuple[dict, Checks]:
    check = Checks()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="crabsearch-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    home, idx = work / "home", work / "index"
    bighome, bigidx = work / "bighome", work / "bigindex"
    if args.queries_only:
        if not (home / "bench-corpus.json").exists() or not idx.exists():
            raise SystemExit(f"--queries-only needs {home} and {idx} from an earlier run with --workdir {work}")
    else:
        for p in (home, idx, bighome, bigidx):
            if p.exists():
                shutil.rmtree(p)
    import crabsearch
    import textual
    import whoosh

    report: dict = {
        "params": {"mb": args.mb, "big_mb": args.big_mb, "repeat": args.repeat, "query_runs": args.query_runs,
                   "tui_runs": args.tui_runs, "seed": args.seed, "smoke": args.smoke},
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "crabsearch": getattr(crabsearch, "__version__", "?"),
                    "whoosh": getattr(whoosh, "versionstring", lambda: "?")(),
                    "textual": getattr(textual, "__version__", "?")},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git": git_info(),
    }
    t_all = time.perf_counter()
    try:
        if args.queries_only:
            return run_queries_only(args, report, home, idx, check), check
        # 1. corpus
        log(f"[1/7] generating a {args.mb:g} MB corpus in {home}")
        t = time.perf_counter()
        meta = gen.write_corpus(home, args.mb, args.seed)
        report["corpus"] = {k: meta[k] for k in ("files", "lines", "messages", "bytes", "tool_output_fraction",
                                                "images", "compactions", "by_agent")}
        report["corpus"]["gen_s"] = time.perf_counter() - t

        # 2. full build in a subprocess
        log("[2/7] full index build (subprocess `python -m crabsearch index`)")
        b = index_subprocess(home, idx, work)
        check(b["rc"] == 0, f"index build exited {b['rc']}: {b['stderr']}")
        rep = b["report"]
        msgs = rep.get("messages_added", 0)
        check(msgs > 0, "index build added no messages")
        check.warn(msgs == meta["messages"], f"index build added {msgs} messages, generator wrote {meta['messages']}")
        check(rep.get("skipped_lines", 0) == 0 and not rep.get("errors"), f"index build skipped lines/errors: {rep}")
        b.update(mb_per_s=meta["bytes"] / MB / b["wall_s"], messages_per_s=msgs / b["wall_s"],
                 indexer_s=rep.get("seconds"), messages=msgs, sessions=rep.get("sessions"))
        b["index_bytes"] = dir_bytes(idx)
        b["index_to_transcript"] = b["index_bytes"] / meta["bytes"]
        b.pop("report")
        report["build"] = b

        # 3. refreshes, 4. queries
        refreshes_and_queries(args, report, meta, home, idx, check)

        # 5. the big session
        log(f"[5/7] generating one {args.big_mb:g} MB session (+ a small probe session) in {bighome}")
        t = time.perf_counter()
        bmeta = gen.write_single(bighome, args.big_mb, args.seed)
        probe = gen.write_small_probe(bighome)
        longp = gen.write_longline_probe(bighome)
        big = bmeta["sessions"][0]
        report["big"] = {"gen_s": time.perf_counter() - t, "bytes": big["bytes"], "messages": big["messages"],
                         "tool_output_fraction": bmeta["tool_output_fraction"], "probe_messages": probe["messages"],
                         "probe_bytes": probe["bytes"], "longline_probe_messages": longp["messages"],
                         "longline_probe_line_bytes": longp["line_bytes"]}
        log("[6/7] indexing it (subprocess), opening it at the hit near its end (engine)")
        bb = index_subprocess(bighome, bigidx, work)
        check(bb["rc"] == 0, f"big index build exited {bb['rc']}: {bb['stderr']}")
        bmsgs = bb["report"].get("messages_added", 0)
        gen_msgs = big["messages"] + probe["messages"] + longp["messages"]
        check.warn(bmsgs == gen_msgs, f"big index added {bmsgs} messages, generator wrote {gen_msgs}")
        report["big"]["build"] = {"wall_s": bb["wall_s"], "peak_rss_mib": bb["peak_rss_mib"],
                                  "mb_per_s": (big["bytes"] + probe["bytes"] + longp["bytes"]) / MB / bb["wall_s"],
                                  "messages_per_s": bmsgs / bb["wall_s"], "indexer_s": bb["report"].get("seconds"),
                                  "index_bytes": dir_bytes(bigidx)}
        from crabsearch.search import Engine

        e = Engine(bigidx)
        t = time.perf_counter()
        res = e.search(gen.END_MARKER)
        report["big"]["marker_search_s"] = time.perf_counter() - t
        pres = e.search(gen.SMALL_MARKER)
        e.close()
        ok = check(bool(res.hits) and res.hits[0].session.session_id == big["session_id"],
                   "big: the marker search did not find the big session")
        if ok:
            h = res.hits[0]
            report["big"]["hit_index"] = h.message_index
            report["big"]["message_count"] = h.session.message_count
            check(h.session.message_count - h.message_index <= 60,
                  f"big: hit {h.message_index} is not near the end ({h.session.message_count})")
            report["big"]["engine_open"] = bench_engine_open(bigidx, big["session_id"], h.message_index,
                                                             args.repeat, big["path"])
        if check(bool(pres.hits), "probe: small marker not found"):
            ph = pres.hits[0]
            report["big"]["probe_engine_open"] = bench_engine_open(bigidx, probe["session_id"], ph.message_index,
                                                                   args.repeat, probe["path"])

        # 6. TUI
        log(f"[7/7] TUI: open the session at the hit (x{args.tui_runs} app runs)")
        report["tui"] = bench_tui(bigidx, bighome, [("big", gen.END_MARKER), ("small", gen.SMALL_MARKER),
                                                    ("longline", gen.LONGLINE_MARKER)], args.tui_runs, check)
        # appending to the big file (after the TUI runs, which expect the marker near the end)
        report["big"]["refresh"] = bench_refresh(bigidx, bighome, args.repeat, Path(big["path"]), check, "big")
    finally:
        report["total_s"] = time.perf_counter() - t_all
        report["checks_failed"] = check.failed
        report["warnings"] = check.warnings
        if not args.keep and not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
        else:
            report["workdir"] = str(work)
    return report, check


def run_queries_only(args, report: dict, home: Path, idx: Path, check: Checks) -> dict:
    """Steps 3 and 4 (refreshes, query latency) on the corpus and index an earlier run left in
    ``--workdir``: to measure a code change at 1M messages without a 10-minute rebuild."""
    meta = json.loads((home / "bench-corpus.json").read_text("utf-8"))
    report["corpus"] = {k: meta[k] for k in ("files", "lines", "messages", "bytes", "tool_output_fraction",
                                            "images", "compactions", "by_agent")}
    report["corpus"]["gen_s"] = 0.0
    report["params"]["queries_only"] = True
    refreshes_and_queries(args, report, meta, home, idx, check)
    return report


def refreshes_and_queries(args, report: dict, meta: dict, home: Path, idx: Path, check: Checks) -> None:
    """Steps 3 and 4: no-change and append refreshes (on a mid-sized Claude Code file of the
    corpus), then query latency for every shape, in the engine and through ``crabsearch mcp``;
    into ``report``."""
    log(f"[3/7] refresh: no change, and 3 lines appended to one file (x{args.repeat})")
    claude = sorted((s for s in meta["sessions"] if s["agent"] == "claude"), key=lambda s: s["bytes"])
    target = Path(claude[len(claude) // 2]["path"]) if claude else None
    report["refresh"] = bench_refresh(idx, home, args.repeat, target, check, "corpus")
    log(f"[4/7] query latency ({args.query_runs} warm runs per shape)")
    spread = pick_spread_pair(idx, args.seed)
    report["spread_pair"] = spread
    queries = {**meta["queries"], **EXTRA_QUERIES, "spread": spread["query"]}
    report["queries"] = bench_queries(idx, queries, args.query_runs, check)
    starts, pauses, runs = (1, 1, 3) if args.smoke else (3, 10, args.query_runs)
    log(f"[4/7] MCP: `crabsearch mcp` over stdio ({starts} starts, {runs} round trips per shape)")
    t = time.perf_counter()
    report["mcp"] = mcp_roundtrip.bench_mcp(idx, child_env(home), idx.parent, QUERY_SHAPES, queries, runs,
                                            starts, pauses, summary, check)
    report["mcp"]["total_s"] = time.perf_counter() - t


# ---------------------------------------------------------------------------------------------
# output


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms" if x < 10 else f"{x:.1f} s"


def sec(x: float) -> str:
    return f"{x:.2f} s"


def print_table(r: dict) -> None:
    def row(name, value):
        print(f"  {name:<46} {value}")

    g = r.get("machine", {})
    gi = r.get("git", {})
    print(f"\ncrabsearch {gi.get('commit', '?')}{' (crabsearch/ modified)' if gi.get('crabsearch_dirty') else ''}"
          f" · Python {g.get('python')} · {g.get('cpus')} CPUs · whoosh {g.get('whoosh')} · textual {g.get('textual')}")
    c = r.get("corpus", {})
    if c:
        print(f"\ncorpus: {c['files']} files, {c['messages']} messages, {c['bytes'] / MB:.1f} MB "
              f"({c['tool_output_fraction']:.0%} tool output), generated in {c['gen_s']:.1f} s")
    b = r.get("build")
    if b:
        print("\nindex build (full, subprocess)")
        row("wall time", sec(b["wall_s"]) + f"  (indexer's own: {b['indexer_s']:.2f} s)")
        row("throughput", f"{b['mb_per_s']:.1f} MB/s of transcript, {b['messages_per_s']:.0f} messages/s")
        row("peak RSS", f"{b['peak_rss_mib']:.0f} MiB")
        row("index size", f"{b['index_bytes'] / MB:.1f} MB = {b['index_to_transcript']:.1%} of transcript bytes")
    f = r.get("refresh")
    if f:
        print(f"\nrefresh (in-process Indexer.refresh, median of {f['nochange_s']['n']})")
        row("nothing changed", ms(f["nochange_s"]["median"]))
        if "append3_s" in f:
            row(f"3 lines appended to one {f['append_file_mb']:.1f} MB file", ms(f["append3_s"]["median"]))
    q = r.get("queries")
    if q:
        n = q[0]["api"]["n"]
        print(f"\nquery latency (Engine.search, warm, {n} runs each)")
        print(f"  {'shape':<20} {'query':<36} {'route':<8} {'hits':>5} {'p50':>9} {'p95':>9}   "
              f"{'TUI-shaped p50':>14} {'p95':>9}")
        for x in q:
            print(f"  {x['shape']:<20} {x['query']:<36} {x.get('api_route') or '-':<8} {x['api_hits']:>5} "
                  f"{ms(x['api']['median']):>9} {ms(x['api']['p95']):>9}   {ms(x['tui']['median']):>14} "
                  f"{ms(x['tui']['p95']):>9}")
        print(f"  (API shape: limit 20, window 4+4; TUI shape: limit {TUI_LIMIT}, no window, explained)")
    if r.get("mcp"):
        mcp_roundtrip.print_mcp(r["mcp"], ms)
    bg = r.get("big")
    if bg:
        print(f"\nbig session: {bg['bytes'] / MB:.0f} MB, {bg['messages']} messages "
              f"({bg['tool_output_fraction']:.0%} tool output), generated in {bg['gen_s']:.1f} s")
        bb = bg.get("build")
        if bb:
            row("index build wall / peak RSS", f"{sec(bb['wall_s'])} ({bb['mb_per_s']:.0f} MB/s, "
                f"{bb['messages_per_s']:.0f} msg/s) / {bb['peak_rss_mib']:.0f} MiB")
        if "marker_search_s" in bg:
            row("search for the marker (cold Engine)", ms(bg["marker_search_s"]))
        for key, name in (("engine_open", f"{bg['bytes'] / MB:.0f} MB session"),
                          ("probe_engine_open", f"small session ({bg['probe_messages']} msgs)")):
            eo = bg.get(key)
            if not eo:
                continue
            for mode, d in eo.items():
                row(f"open {name}: find_session+page(hit-5,40) {mode}",
                    f"{ms(d['total_s']['median'])}  (find {ms(d['find_session_s']['median'])}, "
                    f"page {ms(d['page_s']['median'])}, {d['messages']} msgs, {d['text_mb']:.2f} MB text)")
        rf = bg.get("refresh")
        if rf and "append3_s" in rf:
            row("refresh, 3 lines appended to the big file", ms(rf["append3_s"]["median"]))
    t = r.get("tui")
    if t:
        print("\nTUI (run_test 120x40): press `o` on the hit -> TranscriptView loaded (median)")
        for label, d in t.items():
            size = {"big": f"{bg['bytes'] / MB:.0f} MB session", "small": "small session",
                    "longline": "session with 700 kB one-line outputs"}.get(label, label)
            row(f"open {size}: first page rendered", f"{ms(d['first_page_s']['median'])}")
            row("  until idle (press returned)", f"{ms(d['open_s']['median'])}  (engine.page "
                f"{ms(d['page_s']['median'])} in {d['page_calls']} calls, {d['loaded']} msgs, "
                f"{d['lines']} lines rendered)")
            row("  then `g` (first message)", f"{ms(d['jump_start_s']['median'])}  "
                f"(engine.page {ms(d['jump_start_page_s']['median'])})")
            row("  baseline: a key bound to nothing", ms(d["noop_key_s"]["median"]))
    print(f"\ntotal {r['total_s']:.0f} s" + (f"; FAILED CHECKS: {r['checks_failed']}" if r["checks_failed"] else
                                             "; all checks passed"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="crabsearch benchmark (see bench/README.md)")
    ap.add_argument("--mb", type=float, default=50, help="corpus size in MB (default 50)")
    ap.add_argument("--big-mb", type=float, default=200, help="size of the single big session in MB (default 200)")
    ap.add_argument("--repeat", type=int, default=5, help="repeats for refresh and session-open timings (default 5)")
    ap.add_argument("--query-runs", type=int, default=30, help="warm runs per query shape (default 30)")
    ap.add_argument("--tui-runs", type=int, default=3, help="app runs for the TUI open timing (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, help="JSON report (default bench/out/report.json; smoke: bench/out/smoke.json)")
    ap.add_argument("--smoke", action="store_true", help="tiny run for CI: 2 MB, 5 MB big file, 3 repeats")
    ap.add_argument("--workdir", help="work here instead of a temporary directory (kept)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--queries-only", action="store_true",
                    help="with --workdir of an earlier run: only the refreshes and query latency, on its index")
    args = ap.parse_args(argv)
    if args.smoke:
        args.mb, args.big_mb, args.repeat, args.query_runs, args.tui_runs = 2, 5, 3, 10, 1
    out = args.out or (HERE / "out" / ("smoke.json" if args.smoke else "report.json"))
    report, check = run(args)
    print_table(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str), "utf-8")
    print(f"report: {out}")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())

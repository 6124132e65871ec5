#!/usr/bin/env python3
"""Search-quality measurement: build the relevance corpus, index it, run the labelled queries.

    python bench/relevance/run.py [--json OUT] [--all] [--check] [--src CHECKOUT] [--keep] [--now DATE]

Prints MRR@10, top-1 and top-3 overall and per query type (next to the plain BM25 baseline of
``bench/relevance_real``), a table of every query whose expected session was not ranked first,
and whether the targets are met. Always exits 0 (a measurement, not
a test). ``--src`` imports crabsearch from another checkout (to compare two versions);
``--check`` also lists, per query, the other sessions that contain all its words in one message
(to review labels). See README.md next to this file.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.append(str(HERE.parent))  # bench/clock.py
from clock import HELP as NOW_HELP, clock_kwargs, parse_now  # noqa: E402
TARGETS = {"top3": 0.90, "mrr10": 0.80, "type_top3": 0.70}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="OUT", help="write the numbers (and every query's rank) to OUT")
    p.add_argument("--all", action="store_true", help="print every query, not only the misses")
    p.add_argument("--check", action="store_true", help="also print label competitors (review aid)")
    p.add_argument("--src", metavar="CHECKOUT", help="import crabsearch from this checkout (default: this repo)")
    p.add_argument("--now", metavar="DATE", type=parse_now, help=NOW_HELP)
    p.add_argument("--keep", action="store_true", help="keep the temporary HOME and index, print where")
    return p.parse_args(argv)


# -- label checks (independent of crabsearch's analyzer) ----------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W{_CJK}]+)")


def words(text: str) -> set[str]:
    """Lowercased word runs; CJK runs as character bigrams (what "a word occurs" means for labels)."""
    out: set[str] = set()
    for m in _TOKEN.finditer(text.lower()):
        run = m.group(1)
        out.update([run[i:i + 2] for i in range(len(run) - 1)] or [run] if run else [m.group(0)])
    return out


def texts(spec) -> dict:
    msgs = [(k, t) for k, t, *_ in spec.items if k in ("user", "assistant")]
    summary = "\n".join(i[1] for i in spec.items if i[0] == "compact")
    return {"messages": msgs, "title": spec.title or "", "summary": summary}


def check_labels(specs, queries) -> list[str]:
    """Problems with the labels (the rules in targets.py); an empty list when they are sound."""
    by_id = {s.session_id: s for s in specs}
    problems = []
    for q in queries:
        qw = words(q["query"])
        for e, key in zip(q["expect"], q["expect_keys"]):
            s = by_id.get(e)
            if s is None:
                problems.append(f"{q['id']}: expected session {key} does not exist")
                continue
            t = texts(s)
            in_msgs = set().union(*(words(x) for _, x in t["messages"])) if t["messages"] else set()
            if q["type"] == "title" and (not qw <= words(t["title"]) or qw & in_msgs):
                problems.append(f"{q['id']}: title words must be in the title of {key} and in none of its messages")
            if q["type"] == "summary" and (not qw <= words(t["summary"]) or qw & (in_msgs | words(t["title"]))):
                problems.append(f"{q['id']}: summary words must be in the summary of {key} only")
            if q["type"] == "error" and not any(qw <= words(x) for k, x in t["messages"] if k == "user"):
                problems.append(f"{q['id']}: the error line is not in a user message of {key}")
            everything = in_msgs | words(t["title"]) | words(t["summary"])
            if q["type"] == "typo" and qw <= everything:
                problems.append(f"{q['id']}: no misspelled word (every word occurs in {key})")
    return problems


def competitors(specs, q) -> list[str]:
    """Sessions other than the expected ones with a message (or title, or summary) holding every
    query word."""
    qw = words(q["query"])
    out = []
    for s in specs:
        if s.session_id in q["expect"]:
            continue
        t = texts(s)
        fields = [x for _, x in t["messages"]] + [t["title"], t["summary"]]
        if any(qw <= words(x) for x in fields if x):
            out.append(s.key)
    return out


# -- measurement ---------------------------------------------------------------------------------


def plain_bm25(specs):
    """The plain BM25 baseline of ``bench/relevance_real/baseline.py`` (one document per session,
    its user and assistant text) over the corpus's sessions, loaded under its own module name
    (both benchmarks have a ``corpus`` module)."""
    import importlib.util  # noqa: PLC0415
    from types import SimpleNamespace  # noqa: PLC0415
    path = HERE.parent / "relevance_real" / "baseline.py"
    spec = importlib.util.spec_from_file_location("relevance_real_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    docs = [SimpleNamespace(session_id=s.session_id, updated=0.0, messages=[t for _, t in texts(s)["messages"]])
            for s in specs]
    return mod.BM25(docs)



def rank_of(ids: list[str], expect: list[str]) -> int | None:
    return next((i + 1 for i, x in enumerate(ids) if x in expect), None)


def score(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"n": 0, "top1": 0.0, "top3": 0.0, "mrr10": 0.0}
    return {"n": n,
            "top1": sum(r["rank"] == 1 for r in rows) / n,
            "top3": sum(r["rank"] is not None and r["rank"] <= 3 for r in rows) / n,
            "mrr10": sum(1 / r["rank"] for r in rows if r["rank"] and r["rank"] <= 10) / n}


def main(argv=None) -> int:
    args = parse_args(argv)
    src = Path(args.src).resolve() if args.src else ROOT
    for p in (str(HERE), str(src)):
        if p in sys.path:
            sys.path.remove(p)
        sys.path.insert(0, p)
    import corpus  # noqa: PLC0415
    import queries as qmod  # noqa: PLC0415
    import crabsearch  # noqa: PLC0415
    from crabsearch.index import Indexer  # noqa: PLC0415
    from crabsearch.search import Engine  # noqa: PLC0415

    work = Path(tempfile.mkdtemp(prefix="crabsearch-relevance-"))
    home, index_dir = work / "home", work / "index"
    t0 = time.perf_counter()
    specs = corpus.build(home)
    t_corpus = time.perf_counter() - t0
    key_of = {s.session_id: s.key for s in specs}
    queries = qmod.QUERIES

    problems = check_labels(specs, queries)
    t0 = time.perf_counter()
    report = Indexer(index_dir, env={"HOME": str(home)}).refresh()
    t_index = time.perf_counter() - t0
    engine = Engine(index_dir)
    rows = []
    t0 = time.perf_counter()
    for q in queries:
        try:
            res = engine.search(q["query"], limit=10, **clock_kwargs(args.now))
            ids = [h.session.session_id for h in res.hits]
            error = None
        except Exception as exc:  # a crash is a miss, and worth seeing
            ids, error = [], f"{type(exc).__name__}: {exc}"
        rows.append({**{k: q[k] for k in ("id", "type", "query", "expect", "expect_keys")}, "rank": rank_of(ids, q["expect"]),
                     "first": key_of.get(ids[0], ids[0]) if ids else None, "hits": len(ids), "error": error,
                     "top3": [key_of.get(i, i) for i in ids[:3]]})
    t_search = time.perf_counter() - t0
    engine.close()
    bm25 = plain_bm25(specs)  # the real set's baseline, on the same sessions (user and assistant text)
    for r in rows:
        r["base_rank"] = rank_of(bm25.search(r["query"], limit=10), r["expect"])

    overall = score(rows)
    by_type = {t: score([r for r in rows if r["type"] == t]) for t in qmod.TYPES}
    base = {t: score([{"rank": r["base_rank"]} for r in rows if r["type"] == t]) for t in qmod.TYPES}
    base["overall"] = score([{"rank": r["base_rank"]} for r in rows])
    met = (overall["top3"] >= TARGETS["top3"] and overall["mrr10"] >= TARGETS["mrr10"]
           and all(s["top3"] >= TARGETS["type_top3"] for s in by_type.values()))

    messages = sum(len(s.items) + sum(i[0] == "tool" for i in s.items) for s in specs)
    print(f"crabsearch from {Path(crabsearch.__file__).parent}")
    print(f"corpus: {len(specs)} sessions ({sum(s.target for s in specs)} hand-written; "
          f"{sum(s.agent == 'claude' for s in specs)} Claude Code, {sum(s.agent == 'codex' for s in specs)} Codex), "
          f"~{messages} messages; written in {t_corpus:.1f}s, indexed in {t_index:.1f}s "
          f"({report.messages_added} messages, {report.skipped_lines} skipped lines), "
          f"{len(queries)} queries in {t_search:.1f}s")
    for p in problems:
        print("LABEL PROBLEM:", p)
    print()
    print(f"{'':<20}{'crabsearch':^24}  {'BM25 baseline':^24}")
    print(f"{'type':<16}{'n':>4}{'top-1':>8}{'top-3':>8}{'MRR@10':>8}  {'top-1':>8}{'top-3':>8}{'MRR@10':>8}")
    for name, s in [*by_type.items(), ("overall", overall)]:
        if name == "overall":
            print("-" * 70)
        b = base[name]
        print(f"{name:<16}{s['n']:>4}{s['top1']:>8.2f}{s['top3']:>8.2f}{s['mrr10']:>8.2f}  "
              f"{b['top1']:>8.2f}{b['top3']:>8.2f}{b['mrr10']:>8.2f}")
    print()
    shown = rows if args.all else [r for r in rows if r["rank"] != 1]
    print(("all queries" if args.all else "misses (expected session not ranked first)") + f": {len(shown)}")
    print(f"{'id':<14}{'rank':>5}  {'query':<46} {'expected':<24} first")
    for r in shown:
        rank = "-" if r["rank"] is None else str(r["rank"])
        first = r["error"] or r["first"] or "(no results)"
        print(f"{r['id']:<14}{rank:>5}  {r['query'][:46]:<46} {'/'.join(r['expect_keys'])[:24]:<24} {first}")
        if args.check:
            comp = competitors(specs, r)
            print(f"{'':<21}{len(comp)} other sessions hold every word in one field: {', '.join(comp[:6])}"
                  + (" ..." if len(comp) > 6 else ""))
    print()
    print(f"targets: top-3 >= {TARGETS['top3']:.2f}, MRR@10 >= {TARGETS['mrr10']:.2f}, "
          f"every type >= {TARGETS['type_top3']:.2f} top-3: {'MET' if met else 'NOT MET'}")

    if args.json:
        out = {"now": args.now.isoformat() if args.now else None, "crabsearch": str(Path(crabsearch.__file__).parent), "targets": TARGETS, "met": met,
               "overall": overall, "by_type": by_type, "baseline": base, "label_problems": problems,
               "corpus": {"sessions": len(specs), "messages": messages, "indexed_messages": report.messages_added},
               "seconds": {"corpus": round(t_corpus, 2), "index": round(t_index, 2), "search": round(t_search, 2)},
               "queries": rows}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", "utf-8")
    if args.keep:
        print(f"kept: HOME={home} index={index_dir}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

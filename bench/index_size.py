#!/usr/bin/env python3
"""Index size against transcript bytes on real transcripts (issue 13, target 4: <= 35%).

    python bench/index_size.py [--corpus ../shared/corpus] [--out FILE.json]

Indexes the shared corpus's real transcripts (``real/{claude,codex,aider,specstory}``, laid out as
each agent's own directory; ``bench/relevance_real/corpus.py`` points crabsearch at them) once per
agent and once all together, in a temporary directory, with the segment codec crabsearch writes
(``index.codec.CompactCodec``) and with Whoosh's own (``W3Codec``, what it wrote before), and
prints the bytes of each index (every file of the index directory, as ``crabsearch status``
counts them: segments, per-document column files, manifest) over the bytes of the transcript
files under the directories it was pointed at, and the ratio of the two codecs. Deterministic (no timing).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE / "relevance_real")]

import corpus as cmod  # noqa: E402  (bench/relevance_real/corpus.py)
from run import git_info  # noqa: E402  (bench/run.py)
from whoosh.codec.whoosh3 import W3Codec  # noqa: E402
from whoosh.columns import VarBytesColumn  # noqa: E402
from whoosh.formats import Positions  # noqa: E402

from crabsearch.index import Indexer, writer as writer_mod  # noqa: E402
from crabsearch.index.codec import CompactCodec  # noqa: E402
from crabsearch.index import schema as schema_mod  # noqa: E402
from crabsearch.index.schema import NamePositions  # noqa: E402
from crabsearch.index.status import collect  # noqa: E402

TARGET = 0.35
AGENTS = ("claude", "codex", "aider", "specstory")


def measure(corpus: Path, work: Path, agents: tuple[str, ...], codec) -> tuple[int, int]:
    """``(index bytes, transcript bytes)`` of one index of ``agents``' real transcripts, its
    segments written by ``codec()``; with ``W3Codec``, positions are also encoded Whoosh's way
    (``formats.Positions.encode``) and the session key column is Whoosh's ``VarBytesColumn``:
    the formats crabsearch wrote before issue 13's target 4 (schema version 12)."""
    dirs = {a: d for a, d in cmod.extra_dirs(corpus, work / "links").items() if a in agents}
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    original, encode, keys = writer_mod.CompactCodec, NamePositions.encode, schema_mod.SessionKeyColumn
    writer_mod.CompactCodec = codec
    if codec is W3Codec:
        NamePositions.encode, schema_mod.SessionKeyColumn = Positions.encode, VarBytesColumn
    try:
        indexer = Indexer(work / "index", env={"HOME": str(home)}, extra_dirs=dirs)
        indexer.refresh()
    finally:
        writer_mod.CompactCodec, NamePositions.encode, schema_mod.SessionKeyColumn = original, encode, keys
    transcripts = sum(p.stat().st_size for d in dirs.values() for root in d
                      for p in Path(root).rglob("*") if p.is_file())
    return collect(indexer).index_bytes, transcripts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="the shared corpus (default: ../shared/corpus)")
    ap.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = ap.parse_args()
    corpus = cmod.locate(args.corpus)
    if corpus is None:
        print("no shared corpus with real/SOURCES.md found", file=sys.stderr)
        return 2
    rows = []
    git = git_info()
    print(f"crabsearch index size on real transcripts: {datetime.now(timezone.utc):%Y-%m-%d}, git {git['commit']}"
          f"{' (crabsearch/ modified)' if git['crabsearch_dirty'] else ''}, corpus {corpus}\n")
    print("| transcripts | transcript MB | index now | index before (Whoosh's formats) | now / before |")
    print("|---|---|---|---|---|")
    for agents in [(a,) for a in AGENTS] + [AGENTS]:
        with tempfile.TemporaryDirectory() as tmp:
            now, size = measure(corpus, Path(tmp) / "now", agents, CompactCodec)
            before, _ = measure(corpus, Path(tmp) / "before", agents, W3Codec)
        name = "all real" if len(agents) > 1 else agents[0]
        rows.append({"agents": list(agents), "transcript_bytes": size, "index_bytes": now,
                     "index_bytes_w3": before})
        print(f"| {name} | {size / 1e6:.2f} | {now / size:.1%} | {before / size:.1%} | {now / before:.2f} |")
    total = rows[-1]
    share = total["index_bytes"] / total["transcript_bytes"]
    print(f"\nall real transcripts: index {share:.1%} of transcript bytes, target <= {TARGET:.0%}: "
          f"{'met' if share <= TARGET else 'NOT met'}")
    if args.out:
        args.out.write_text(json.dumps({"git": git, "rows": rows, "target": TARGET, "share": share}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

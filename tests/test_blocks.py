"""Block tables (``index.blocks``): a long posting list's block headers read once per segment.
Blocks picked from a table are the blocks walking the headers picks, skips land on the same
posting, and a search gives the same sessions, scores and documents with tables as without."""

from __future__ import annotations

import random

import pytest
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.query import Term

import crabsearch.index.blocks as blocks
from crabsearch.index import Indexer
from crabsearch.index.collect import SegmentKeys, best_per_session
from crabsearch.index.schema import WEIGHTS
from crabsearch.index.store import open_index
from crabsearch.index.union import FlatOr, posting_blocks

from builders import ClaudeSession

FIELDS = ("user", "assistant", "acting", "compaction")


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    """``walrus`` in ~1,500 messages of 30 sessions over two segments, with lengths (and so
    block qualities) that vary from block to block: many posting blocks per segment."""
    tmp = tmp_path_factory.mktemp("blocks")
    home = tmp / "home"
    rnd = random.Random(7)
    for n in range(30):
        s = ClaudeSession(home, f"{n:04d}cccc-0000-4000-8000-000000000000")
        for i in range(50):
            s.user("walrus " * rnd.randint(1, 3) + "pad " * rnd.choice([0, 1, 5, 40, 200]) + f"n{i}")
            s.assistant("the walrus said " + "x " * rnd.randint(0, 60))
        s.write()
        if n == 14:
            Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    ix, _ = open_index(tmp / "index", create=False)
    with ix.searcher() as s:
        assert len(s.leaf_searchers()) >= 2
        yield s


def fresh(sub, word="walrus", field="user"):
    m = sub.postings(field, word)
    assert type(m) is W3LeafMatcher
    return m


def walked_heads(m):
    """Each block's header fields as ``W3LeafMatcher._goto`` sets them, and its quality."""
    out = []
    while m.is_active():
        out.append(((m._nextoffset, m._dataoffset, m._blocklength, m._maxid, m._maxweight, m._compression,
                     m._minlength, m._maxlength, m._lastblock), m.block_quality()))
        m._next_block()
    return out


def test_a_table_holds_every_header_as_goto_reads_it(searcher, monkeypatch):
    monkeypatch.setattr(blocks, "TABLE_MIN_BYTES", 0)
    for sub, _ in searcher.leaf_searchers():
        m = fresh(sub)
        table = blocks.table_of(m)
        walked = walked_heads(fresh(sub))
        assert len(walked) >= 5  # several blocks of 128
        assert table.heads == [h for h, _ in walked]
        assert table.qualities(m.scorer) == [q for _, q in walked]
        assert blocks.table_of(fresh(sub)) is table  # read once per segment


def test_blocks_from_a_table_are_the_blocks_walking_picks(searcher, monkeypatch):
    """Every ``below`` (none, each quantile of the blocks' qualities, above all) and ``wanted``
    (none, sparse, dense, past the end), from the list's start and from inside it."""
    rnd = random.Random(3)
    for sub, _ in searcher.leaf_searchers():
        quals = sorted(q for _, q in walked_heads(fresh(sub)))
        ids = list(fresh(sub).all_ids())
        belows = [None, quals[0], quals[len(quals) // 3], quals[len(quals) // 2], quals[-1], quals[-1] * 2]
        wanteds = [None, sorted(rnd.sample(ids, 5)), sorted(rnd.sample(ids, len(ids) // 2)), [ids[-1] + 1]]
        for below in belows:
            for wanted in wanteds:
                for start in (None, ids[len(ids) // 3]):
                    got = []
                    for min_bytes in (1 << 62, 0):  # walking, then from the table
                        monkeypatch.setattr(blocks, "TABLE_MIN_BYTES", min_bytes)
                        m = fresh(sub)
                        if start is not None:
                            m.skip_to(start)
                        got.append([(tuple(i), tuple(w)) for i, w in posting_blocks(m, below, wanted)])
                    assert got[0] == got[1], (below, wanted, start)


def test_skip_to_through_a_table_lands_where_stepping_did(searcher, monkeypatch):
    monkeypatch.setattr(blocks, "TABLE_MIN_BYTES", 0)
    for sub, _ in searcher.leaf_searchers():
        ids = list(fresh(sub).all_ids())
        edges = {h[3] + x for h in blocks.table_of(fresh(sub)).heads for x in (0, 1)}  # a block's last id, the next
        moving = fresh(sub)  # one matcher moving forward, as inside an And
        for target in sorted(set(range(0, ids[-1] + 3, 37)) | edges):
            want = next((d for d in ids if d >= target), None)
            jumping = fresh(sub)  # and one jumping from the list's start
            for m in (moving, jumping):
                if m.is_active():
                    m.skip_to(target)
                assert (m.id() if m.is_active() else None) == want, target


def test_a_segment_keeps_at_most_its_cap_of_tables(searcher, monkeypatch):
    monkeypatch.setattr(blocks, "TABLE_MIN_BYTES", 0)
    monkeypatch.setattr(blocks, "TABLES_KEPT", 2)
    sub = searcher.leaf_searchers()[0][0]
    first = blocks.table_of(fresh(sub, "walrus", "user"))
    blocks.table_of(fresh(sub, "walrus", "assistant"))
    blocks.table_of(fresh(sub, "said", "assistant"))
    assert len(fresh(sub)._postfile.__dict__["_crab_blocks"]) == 2
    assert blocks.table_of(fresh(sub, "walrus", "user")) is not first  # dropped, read again


def test_a_short_list_gets_no_table(searcher):
    sub = searcher.leaf_searchers()[0][0]
    m = fresh(sub)
    assert m._length < blocks.TABLE_MIN_BYTES and blocks.table_of(m) is None


@pytest.mark.parametrize("words", [["walrus"], ["walrus", "said"], ["the", "walrus"]])
def test_a_search_is_the_same_with_tables(searcher, words, monkeypatch):
    """Sessions, scores and documents of the term-at-a-time scan (block-max pruning picks blocks
    from the tables) as without tables, for a short and a long page."""
    query = FlatOr([Term(f, w, boost=WEIGHTS[f]) for f in FIELDS for w in words])
    for limit in (1, 4, 30):
        got = []
        for min_bytes in (1 << 62, 0, 0):  # without, building the tables, reusing them
            monkeypatch.setattr(blocks, "TABLE_MIN_BYTES", min_bytes)
            top, _ = best_per_session(searcher, query, limit, SegmentKeys())
            got.append([(k, b.score, b.docnum, b.terms) for k, b in top])
        assert got[0] == got[1] == got[2] and len(got[0]) == min(limit, 30)

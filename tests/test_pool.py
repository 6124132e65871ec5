"""The index writer's posting pool (``index.pool``, issue 13) and the larger batches it allows:
the postings come out in Whoosh's order, exactly; an index written through it holds the same
terms, postings and stored fields as one written through Whoosh's own pool; and an index cut into
many segments or few gives the same hits and scores."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from whoosh.writing import NO_MERGE, PostingPool

from crabsearch.index import writer as writer_mod
from crabsearch.index import pool as pool_mod
from crabsearch.index.pool import CompactPool, use_compact_pool

from test_codec import _contents, _results, _write_batch


def _postings(rnd: random.Random, n: int) -> list[tuple]:
    """``n`` postings as Whoosh's ``SegmentWriter`` adds them: documents in order, each with its
    terms in a few fields; a spelling-like field repeats document 0 (out of order, duplicates)."""
    items = []
    doc = 0
    while len(items) < n:
        for field in ("assistant", "user", "title"):
            for term in {rnd.choice([b"the", b"cache", b"walrus", "z\u00fcrich".encode(), b"a" * rnd.randint(1, 40)])
                         for _ in range(rnd.randint(0, 6))}:
                items.append((field, term, doc, float(rnd.randint(1, 4)) * rnd.choice([1.0, 0.5, 1.5]),
                              bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 5)))))
        if doc % 5 == 0:
            items.append(("spell", rnd.choice([b"cache", b"the"]), 0, 1.0, b""))
        items.append(("mkey", f"k{doc}".encode(), doc, 1.0, None))
        doc += 1
    return items


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compact_pool_gives_the_postings_in_whooshs_order(seed):
    """What the pool gives back is ``sorted()`` of what it was given (Whoosh's pool sorts the
    tuples): terms by (field, bytes), a term's documents in order, out-of-order and repeated
    documents sorted, value bytes and None kept; and it is empty after ``cleanup``."""
    items = _postings(random.Random(seed), 3000)
    pool = CompactPool()
    for it in items:
        pool.add(it)
    assert len(pool) == len(items)
    assert list(pool.iter_postings()) == sorted(items)
    pool.cleanup()
    assert len(pool) == 0 and list(pool.iter_postings()) == []


def test_use_compact_pool_refuses_a_writer_holding_postings(tmp_path):
    """The pool is swapped only on a new writer: postings already in Whoosh's would be lost."""
    class Writer:
        pool = PostingPool(None, None)

    Writer.pool.current.append(("f", b"t", 0, 1.0, b""))
    with pytest.raises(ValueError):
        use_compact_pool(Writer)


class _CountedPool(PostingPool):
    def __len__(self) -> int:
        return len(self.current)


def _build(index_dir: Path, home: Path, monkeypatch, *, whoosh_pool: bool = False,
           batch_docs: int | None = None) -> None:
    """Index ``home`` with Whoosh's pool or crabsearch's, committing every ``batch_docs``
    messages (a segment per commit)."""
    with monkeypatch.context() as m:
        if whoosh_pool:  # Whoosh's own, counted as the writer counts a batch's postings
            m.setattr(writer_mod, "use_compact_pool", lambda w: setattr(w.pool, "__class__", _CountedPool))
        if batch_docs is not None:  # and no merges: a segment per commit
            m.setattr(writer_mod, "BATCH_DOCS", batch_docs)
            m.setattr(writer_mod, "FIRST_BATCH_DOCS", batch_docs)
            m.setattr(writer_mod, "merge_policy", NO_MERGE)
        writer_mod.Indexer(index_dir, env={"HOME": str(home)}).refresh()


@pytest.fixture(scope="module")
def homes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pool")
    for batch in range(4):
        _write_batch(tmp / "home", batch)
    return tmp


def test_an_index_written_through_the_compact_pool_is_whooshs(homes, monkeypatch):
    """The same terms with the same statistics, postings (documents, weights, positions) and
    stored fields, and the same hits and scores, as with Whoosh's own posting pool."""
    _build(homes / "whoosh", homes / "home", monkeypatch, whoosh_pool=True)
    _build(homes / "compact", homes / "home", monkeypatch)
    whoosh, compact = _contents(homes / "whoosh"), _contents(homes / "compact")
    assert compact[:2] == whoosh[:2] and len(whoosh[1]) > 100
    assert _results(homes / "compact") == _results(homes / "whoosh")


def test_few_large_segments_or_many_small_give_the_same_hits_and_scores(homes, monkeypatch):
    """The build commits larger batches (fewer segments: each search pays a share per segment);
    Whoosh's BM25F reads its statistics over the whole index, so the hits and scores do not
    depend on how the documents are cut into segments."""
    _build(homes / "many", homes / "home", monkeypatch, batch_docs=20)
    _build(homes / "one", homes / "home", monkeypatch, batch_docs=10**9)
    many, one = _contents(homes / "many"), _contents(homes / "one")
    assert many[2] >= 10 and one[2] == 1
    assert many[:2] == one[:2]
    results = _results(homes / "one")
    assert sum(map(len, results.values())) > 20
    assert _results(homes / "many") == results


def test_a_batch_is_committed_once_it_holds_enough_postings(homes, monkeypatch):
    """Long prose holds many postings per message: the pool's postings cut a batch too, not only
    its messages and bytes."""
    with monkeypatch.context() as m:
        m.setattr(writer_mod, "BATCH_DOCS", 10**9)
        m.setattr(writer_mod, "FIRST_BATCH_DOCS", 10**9)
        m.setattr(writer_mod, "merge_policy", NO_MERGE)
        m.setattr(writer_mod, "BATCH_POSTINGS", 2000)
        writer_mod.Indexer(homes / "postings", env={"HOME": str(homes / "home")}).refresh()
    assert _contents(homes / "postings")[2] >= 3


def test_a_merge_goes_through_whooshs_spilling_pool(homes, monkeypatch):
    """A merge can take the whole index (at 6 GB Whoosh's MERGE_SMALL merged 26 segments, a
    million messages: held in the compact pool they took 1.7 GB): its postings go through
    Whoosh's pool, which writes sorted runs to disk past its limit. The index is the same as
    with no runs written, and holds the same postings as a build without merges (its scores
    differ in the last digits: Whoosh recounts a merged segment's field lengths from the
    one-byte lengths it stores per document, as it always did)."""
    runs = []
    save = PostingPool.save

    def counted(self):
        runs.append(len(self.current))
        save(self)

    def build(name: str, limit_mb: float) -> None:
        with monkeypatch.context() as m:
            m.setattr(writer_mod, "BATCH_DOCS", 20)
            m.setattr(writer_mod, "FIRST_BATCH_DOCS", 20)
            m.setattr(pool_mod, "MERGE_LIMIT_MB", limit_mb)
            m.setattr(PostingPool, "save", counted)
            writer_mod.Indexer(homes / name, env={"HOME": str(homes / "home")}).refresh()

    build("in-memory", 128)
    assert runs == []
    build("spilled", 0.01)  # a run to disk every ~10 kB of postings
    _build(homes / "whole", homes / "home", monkeypatch, batch_docs=10**9)
    spilled = _contents(homes / "spilled")
    assert len(runs) > 3 and spilled[2] < 5  # commits every ~20 messages, merged into a few segments
    assert spilled == _contents(homes / "in-memory")
    assert spilled[:2] == _contents(homes / "whole")[:2]
    assert _results(homes / "spilled") == _results(homes / "in-memory")

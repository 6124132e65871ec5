"""crabsearch's own matching pieces against Whoosh's: the flat union matcher gives the same
documents, scores and matched terms as ``Or``; the best-hit-per-session collector the same
sessions and scores as Whoosh's ``CollapseCollector``; the per-segment key cache follows merges."""

from __future__ import annotations


import pytest
from whoosh.collectors import CollapseCollector
from whoosh.query import And, Or, Phrase, Term
from whoosh.query.spans import SpanNear2

from crabsearch.index import Indexer, whoosh_fixes
from crabsearch.index.collect import SegmentKeys, best_per_session, each_match
from crabsearch.index.schema import WEIGHTS
from crabsearch.index.store import open_index
from crabsearch.index.union import FlatOr, FlatUnionMatcher

from builders import ClaudeSession, CodexSession

FIELDS = ("user", "assistant", "acting", "tool", "compaction")
WORDS = ["walrus", "the", "cache", "retry"]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("collect")
    home = tmp / "home"
    for n in range(6):  # two refreshes: at least two segments
        s = ClaudeSession(home, f"{n:04d}aaaa-0000-4000-8000-000000000000")
        s.user(f"the walrus cache number {n}").assistant("retry the cache" if n % 2 else "walrus walrus")
        if n % 3 == 0:
            s.tool("Bash", {"command": "ls"}, "ok").assistant("the retry worked, walrus")
        s.write()
        if n == 2:
            Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    CodexSession(home).user("codex walrus retry").assistant("the cache").write()
    Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    ix, _ = open_index(tmp / "index", create=False)
    with ix.searcher() as s:
        assert len(s.leaf_searchers()) >= 2
        yield s


def field_or(cls, word):
    return cls([Term(f, word, boost=WEIGHTS[f]) for f in FIELDS])


def walk(m, keep_terms=True):
    out = []
    while m.is_active():
        terms = sorted(tm.term() for tm in m.term_matchers() if tm.is_active() and tm.id() == m.id())
        out.append((m.id(), round(m.score(), 9), terms if keep_terms else None))
        m.next()
    return out


@pytest.mark.parametrize("word", WORDS + ["absentword"])
def test_flat_or_matches_whooshs_or(searcher, word):
    ctx = searcher.context(needs_current=True)
    for sub, _ in searcher.leaf_searchers():
        ours = field_or(FlatOr, word).matcher(sub, ctx)
        assert walk(ours) == walk(field_or(Or, word).matcher(sub, ctx))


def test_flat_or_inside_and_skips_like_whooshs(searcher):
    ctx = searcher.context(needs_current=True)
    for sub, _ in searcher.leaf_searchers():
        ours = And([field_or(FlatOr, "walrus"), field_or(FlatOr, "retry")]).matcher(sub, ctx)
        theirs = And([field_or(Or, "walrus"), field_or(Or, "retry")]).matcher(sub, ctx)
        assert walk(ours) == walk(theirs)
        m = field_or(FlatOr, "the").matcher(sub, ctx)
        ids = [d for d, _, _ in walk(field_or(Or, "the").matcher(sub, ctx))]
        if len(ids) > 2:
            m.skip_to(ids[2])
            assert m.id() == ids[2]


def test_flat_union_of_nothing_is_inactive():
    assert not FlatUnionMatcher([]).is_active()


@pytest.mark.parametrize("word", WORDS)
def test_best_per_session_agrees_with_collapse_collector(searcher, word):
    q = field_or(Or, word)
    collector = CollapseCollector(searcher.collector(limit=3), "skey", limit=1)
    searcher.search_with_collector(q, collector)
    theirs = [(r["skey"], round(r.score, 9)) for r in collector.results()]
    top, partial = best_per_session(searcher, field_or(FlatOr, word), 3, SegmentKeys())
    assert not partial
    assert [(k, round(b.score, 9)) for k, b in top] == theirs
    for k, b in top:
        assert searcher.stored_fields(b.docnum)["skey"] == k
        assert b.terms and all(t == word for _, t in b.terms)


def test_each_match_sees_every_document_once_and_skips_excluded(searcher):
    keys = SegmentKeys()
    q = field_or(FlatOr, "walrus")
    all_docs = sorted(q.docs(searcher))
    got = [(d, k) for k, _, d, _, _ in each_match(searcher, q, keys)]
    assert [d for d, _ in got] == all_docs
    assert all(searcher.stored_fields(d)["skey"] == k for d, k in got)
    gone = got[0][1]
    rest = [d for _, _, d, _, _ in each_match(searcher, q, keys, excluded=frozenset([gone]))]
    assert rest == [d for d, k in got if k != gone] and len(rest) < len(got)
    top, _ = best_per_session(searcher, q, 10, keys, excluded=frozenset([gone]))
    assert gone not in {k for k, _ in top} and top


def test_deadline_in_the_past_gives_a_partial_result(searcher, monkeypatch):
    import crabsearch.index.collect as collect
    monkeypatch.setattr(collect, "DEADLINE_EVERY", 1)
    top, partial = best_per_session(searcher, field_or(FlatOr, "the"), 10, SegmentKeys(), deadline=0.0)
    assert partial and top == []


def test_segment_keys_forget_merged_segments(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("first walrus").write()
    idx = Indexer(tmp_path / "index", env={"HOME": str(home)})
    idx.refresh()
    ClaudeSession(home).user("second walrus").write()
    idx.refresh()
    ix, _ = open_index(tmp_path / "index", create=False)
    keys = SegmentKeys()
    with ix.searcher() as s:
        best_per_session(s, field_or(FlatOr, "walrus"), 5, keys)
        assert len(keys._keys) == len(s.leaf_searchers()) == 2
    ix.optimize()  # one segment now
    with ix.searcher() as s:
        keys.keep_only(s)
        assert len(keys._keys) == 0
        top, _ = best_per_session(s, field_or(FlatOr, "walrus"), 5, keys)
        assert len(top) == 2 and len(keys._keys) == 1


def test_memoized_bm25f_scores_are_whooshs_formula(searcher):
    """whoosh_fixes memoizes BM25F per (weight, length byte) on the top-level searcher: the
    numbers are the formula's, and a second query reuses the memo."""
    ctx = searcher.context(needs_current=True)
    for word in WORDS:
        for f in FIELDS:
            for sub, _ in searcher.leaf_searchers():
                m = Term(f, word).matcher(sub, ctx)
                while m.is_active():
                    sc = whoosh_fixes.leaf_scorer(m)  # short lists are ListMatchers (index.codec)
                    assert sc._crab_table is not None
                    assert m.score() == sc._score(m.weight(), sc.dfl(m.id()))
                    m.next()
    memos = searcher.__dict__["_crab_memos"]
    assert memos and any(memos.values())


def test_term_at_a_time_path_skips_deleted_documents(tmp_path):
    """A segment with deleted documents (a transcript rewritten): its posting lists come wrapped
    in Whoosh's deletion filter, which the term-at-a-time scan honours."""
    home = tmp_path / "home"
    keep = ClaudeSession(home).user("walrus kept").assistant("walrus again")
    gone = ClaudeSession(home).user("walrus one").user("walrus two")
    keep.write()
    gone.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ix, _ = open_index(tmp_path / "index", create=False)
    w = ix.writer()  # delete without merging (the indexer's own commits purge deletions)
    w.delete_by_term("skey", f"claude:{gone.session_id}")
    w.commit(merge=False)
    ix, _ = open_index(tmp_path / "index", create=False)
    with ix.searcher() as s:
        assert any(sub.reader().has_deletions() for sub, _ in s.leaf_searchers())
        plain = [field_or(FlatOr, "walrus").matcher(sub, s.context()) for sub, _ in s.leaf_searchers()]
        assert any(isinstance(m, FlatUnionMatcher) and m.plain_postings() for m in plain)
        top, _ = best_per_session(s, field_or(FlatOr, "walrus"), 5, SegmentKeys())
        collector = CollapseCollector(s.collector(limit=5), "skey", limit=1)
        s.search_with_collector(field_or(Or, "walrus"), collector)
        assert [(k, round(b.score, 9)) for k, b in top] == [(r["skey"], round(r.score, 9)) for r in collector.results()]
        assert [k for k, _ in top] == [f"claude:{keep.session_id}"]


@pytest.mark.parametrize("words", [["the", "cache"], ["walrus", "walrus"], ["retry", "the", "cache"],
                                   ["cache", "the"], ["the", "walrus", "cache"]])
def test_exact_phrase_spans_match_whooshs_span_walk(searcher, words):
    """whoosh_fixes answers exact phrases from position sets: same documents, same spans as
    Whoosh's own ``SpanNear2`` walk (repeated words included)."""
    ctx = searcher.context(needs_current=True)
    for sub, _ in searcher.leaf_searchers():
        for f in ("user", "assistant", "acting"):
            ours = walk_spans(Phrase(f, words).matcher(sub, ctx))
            cls = SpanNear2.SpanNear2Matcher
            cls._get_spans = whoosh_fixes._original_get_spans
            try:
                theirs = walk_spans(Phrase(f, words).matcher(sub, ctx))
            finally:
                cls._get_spans = whoosh_fixes.phrase_spans
            assert ours == theirs


def walk_spans(m):
    out = []
    while m.is_active():
        out.append((m.id(), round(m.score(), 9), [(s.start, s.end) for s in m.spans()]))
        m.next()
    return out


def test_fixture_has_phrases(searcher):
    assert list(Phrase("user", ["the", "walrus"]).docs(searcher))
    assert list(Phrase("assistant", ["walrus", "walrus"]).docs(searcher))


def test_leaf_skip_to_lands_where_whooshs_stepping_did(searcher):
    """whoosh_fixes bisects inside a posting block: every target lands on the first document at
    or after it, across blocks and at the end, as Whoosh's one-posting-at-a-time loop did."""
    for sub, _ in searcher.leaf_searchers():
        for f in FIELDS:
            for word in WORDS:
                if (f, word) not in sub.reader():
                    continue
                ids = list(sub.postings(f, word).all_ids())
                for target in range(0, ids[-1] + 2):
                    m = sub.postings(f, word)
                    m.skip_to(target)
                    want = next((d for d in ids if d >= target), None)
                    assert (m.id() if m.is_active() else None) == want


def test_leaf_skip_to_across_posting_blocks(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home)
    for n in range(700):
        s.user(f"walrus number {n}" if n % 3 else f"plain number {n}")
    s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ix, _ = open_index(tmp_path / "index", create=False)
    with ix.searcher() as srch:
        for sub, _ in srch.leaf_searchers():
            ids = list(sub.postings("user", "walrus").all_ids())
            assert len(ids) > 300  # several blocks of 128
            for target in range(0, ids[-1] + 2, 7):
                m = sub.postings("user", "walrus")
                m.skip_to(target)
                assert (m.id() if m.is_active() else None) == next((d for d in ids if d >= target), None)

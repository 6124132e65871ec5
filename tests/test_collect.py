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

from builders import ClaudeSession, CodexSession, delete_without_merging

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


def test_a_set_stop_ends_the_scan_like_a_deadline(searcher, monkeypatch):
    import threading

    import crabsearch.index.collect as collect
    monkeypatch.setattr(collect, "DEADLINE_EVERY", 1)
    stop = threading.Event()
    top, partial = best_per_session(searcher, field_or(FlatOr, "the"), 10, SegmentKeys(), stop=stop)
    assert top and not partial
    stop.set()
    top, partial = best_per_session(searcher, field_or(FlatOr, "the"), 10, SegmentKeys(), stop=stop)
    assert partial and top == []
    with pytest.raises(collect.OutOfTime):
        list(each_match(searcher, field_or(FlatOr, "the"), SegmentKeys(), stop=stop))


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



def test_a_segments_scorer_is_made_once_and_scores_as_a_new_one(searcher):
    """whoosh_fixes 11: a segment's searcher keeps each term's scorer; a second matcher of the
    term gets the same one, and its scores, block bounds and documents are those of a matcher
    with a scorer of its own (Whoosh's ``Searcher.postings``)."""
    ctx = searcher.context(needs_current=True)
    for word in WORDS:
        for f in FIELDS:
            for sub, _ in searcher.leaf_searchers():
                if (f, word) not in sub.reader():
                    continue
                a, b = Term(f, word).matcher(sub, ctx), Term(f, word).matcher(sub, ctx)
                assert whoosh_fixes.leaf_scorer(a) is whoosh_fixes.leaf_scorer(b)
                fresh = whoosh_fixes._original_postings(sub, f, sub.reader().schema[f].to_bytes(word),
                                                        weighting=ctx.weighting)
                assert whoosh_fixes.leaf_scorer(fresh) is not whoosh_fixes.leaf_scorer(a)
                assert whoosh_fixes.leaf_scorer(fresh).max_quality() == whoosh_fixes.leaf_scorer(a).max_quality()
                assert walk(a, keep_terms=False) == walk(fresh, keep_terms=False)

def test_term_at_a_time_path_skips_deleted_documents(tmp_path):
    """A segment with deleted documents (a transcript rewritten): its posting lists come wrapped
    in Whoosh's deletion filter, which the term-at-a-time scan honours."""
    home = tmp_path / "home"
    keep = ClaudeSession(home).user("walrus kept").assistant("walrus again")
    gone = ClaudeSession(home).user("walrus one").user("walrus two")
    keep.write()
    gone.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ix = delete_without_merging(tmp_path / "index", f"claude:{gone.session_id}")
    with ix.searcher() as s:
        assert any(sub.reader().has_deletions() for sub, _ in s.leaf_searchers())
        plain = [field_or(FlatOr, "walrus").matcher(sub, s.context()) for sub, _ in s.leaf_searchers()]
        assert any(isinstance(m, FlatUnionMatcher) and m.plain_postings() for m in plain)
        top, _ = best_per_session(s, field_or(FlatOr, "walrus"), 5, SegmentKeys())
        collector = CollapseCollector(s.collector(limit=5), "skey", limit=1)
        s.search_with_collector(field_or(Or, "walrus"), collector)
        assert [(k, round(b.score, 9)) for k, b in top] == [(r["skey"], round(r.score, 9)) for r in collector.results()]
        assert [k for k, _ in top] == [f"claude:{keep.session_id}"]


def test_term_docs_are_whooshs_term_docs(tmp_path):
    """``filtering.term_docs`` (posting lists read with nothing scored) gives the documents
    ``Term(...).docs`` gives, in order, over several segments, one of them with deletions."""
    from crabsearch.index.filtering import term_docs

    home = tmp_path / "home"
    first = ClaudeSession(home).user("walrus kept").assistant("walrus again")
    gone = ClaudeSession(home).user("walrus one").user("walrus two")
    first.write()
    gone.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    CodexSession(home).user("walrus in codex").assistant("and a reply").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ix = delete_without_merging(tmp_path / "index", f"claude:{gone.session_id}")
    with ix.searcher() as s:
        assert len(s.leaf_searchers()) > 1 and any(sub.reader().has_deletions() for sub, _ in s.leaf_searchers())
        checked = 0
        for field in ("uid", "agent", "skey", "kind", "role"):
            for raw in set(s.reader().lexicon(field)):
                text = raw.decode("utf-8")
                assert term_docs(s, field, text) == list(Term(field, text).docs(s)), (field, text)
                checked += len(term_docs(s, field, text)) > 1
        assert checked >= 3  # terms in several documents and segments, not only single ones
        assert term_docs(s, "uid", "no-such-id") == [] and term_docs(s, "no_such_field", "x") == []


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


def test_block_ids_are_whooshs_delta_decoding(tmp_path):
    """whoosh_fixes adds a block's stored gaps up in C: the same document numbers, in the same
    type, block by block, as Whoosh's ``delta_decode``."""
    from whoosh.codec.whoosh3 import W3LeafMatcher
    from whoosh.util.numlists import delta_decode

    home = tmp_path / "home"
    s = ClaudeSession(home)
    for n in range(700):
        s.user(f"walrus number {n}" if n % 3 else f"plain number {n} " + "filler " * (n % 300))
    s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ix, _ = open_index(tmp_path / "index", create=False)
    with ix.searcher() as srch:
        sub = srch.leaf_searchers()[0][0]
        m = sub.postings("user", "walrus")
        assert type(m) is W3LeafMatcher and W3LeafMatcher._read_ids is whoosh_fixes.read_ids
        blocks = 0
        while m.is_active():
            m._read_ids()
            stored = m._data[0]
            assert not m._byteids and len(stored) > 1
            assert m._ids == tuple(delta_decode(stored))
            blocks += 1
            m._next_block()
        assert blocks >= 3


def _reference_best(acc, skeys, keep, limit):
    """Each session's best document (higher score, then lower number), the ``limit`` best."""
    firsts = {}
    for d in sorted(acc):
        k = skeys[d]
        if keep(k, d) and (k not in firsts or acc[d] > acc[firsts[k]]):
            firsts[k] = d
    return sorted(firsts.values(), key=lambda d: (-acc[d], d))[:limit]


@pytest.mark.parametrize("seed", range(8))
def test_segment_best_takes_each_sessions_best_from_the_top_scores(seed):
    """``collect._segment_best`` walks the documents in score order only as far as its
    ``limit`` sessions go: the same documents, in the same order, as walking every document,
    with many ties (a common word's scores take a few values) and with sessions and times
    filtered out; and so when the documents below a floor that ``limit`` sessions reach are
    left unsorted."""
    import random

    from crabsearch.index.collect import _segment_best
    from crabsearch.index.filtering import in_window

    rnd = random.Random(seed)
    n = rnd.choice([300, 2_000, 20_000])
    skeys, k = [], 0
    while len(skeys) < n:  # a session's documents are consecutive, as a transcript's messages
        skeys += [f"s{k}"] * rnd.randint(1, 60)
        k += 1
    skeys = skeys[:n]
    levels = [rnd.choice([0.5, 1.0, 2.0, 2.5, 3.0]) for _ in range(rnd.choice([3, 50]))]
    acc = {d: rnd.choice(levels) for d in rnd.sample(range(n), n // 2)}
    updated = [rnd.randint(0, 100) for _ in range(n)]
    excluded = frozenset(rnd.sample(sorted(set(skeys)), 3))
    for limit, window in ((1, None), (7, None), (80, None), (80, (50, None)), (10_000, None)):
        def keep(key, d):
            return key not in excluded and (window is None or in_window(updated[d], window))
        want = _reference_best(acc, skeys, keep, limit)
        assert _segment_best(acc, skeys, updated, window, excluded, limit) == want
        if len(want) == limit:  # a floor that `limit` sessions reach: the documents below are not sorted
            for at_least in (acc[want[-1]], acc[want[-1]] / 2):
                assert _segment_best(acc, skeys, updated, window, excluded, limit, at_least) == want


def _walked_best(searcher, query, limit):
    """Every document of Whoosh's own matcher, each session's best kept (higher score, then lower
    number): ``[(skey, score)]``, the ``limit`` best (Whoosh's collapse collector cannot be the
    reference here: its top collector skips blocks by Whoosh's block quality, which crabsearch's
    BM25F fixes make too low)."""
    best = {}
    ctx = searcher.context(needs_current=True)
    for sub, offset in searcher.leaf_searchers():
        m = query.matcher(sub, ctx)
        while m.is_active():
            d, sc = offset + m.id(), m.score()
            k = searcher.stored_fields(d)["skey"]
            if k not in best or sc > best[k][0]:
                best[k] = (sc, d)
            m.next()
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:limit]
    return [(k, round(sc, 9), d) for k, (sc, d) in ranked]


@pytest.fixture(scope="module")
def many_blocks(tmp_path_factory):
    """A word in hundreds of messages of 40 sessions: short user messages that score high, longer
    assistant ones that score low (several posting blocks per field), one session's documents
    deleted without a merge."""
    tmp = tmp_path_factory.mktemp("blocks")
    home = tmp / "home"
    sessions = []
    for n in range(40):
        s = ClaudeSession(home, f"{n:04d}bbbb-0000-4000-8000-000000000000")
        for i in range(12):
            s.user(f"walrus {'walrus ' * (i % 3)}number {i}").assistant("the walrus said " + "x " * (n % 7 + 9))
        s.write()
        sessions.append(s)
    Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    ix = delete_without_merging(tmp / "index", f"claude:{sessions[5].session_id}")
    with ix.searcher() as s:
        assert s.doc_frequency("user", "walrus") > 3 * 128  # several posting blocks (128 postings each)
        yield s, f"claude:{sessions[5].session_id}"


def words_or(cls, words):
    return cls([Term(f, w, boost=WEIGHTS[f]) for f in FIELDS for w in words])


@pytest.mark.parametrize("words", [["walrus"], ["walrus", "number"], ["said", "walrus"]])
def test_best_per_session_over_many_posting_blocks(many_blocks, words, monkeypatch):
    """The term-at-a-time scan, its block skipping and the top-score selection give the sessions,
    scores and documents of walking Whoosh's own matcher, for a short and a long list, with one
    word or several (several words in one field can be on one document: their bounds add up).
    For a short list, blocks are skipped: the low-scoring assistant messages' are not read."""
    import crabsearch.index.union as union

    searcher, deleted = many_blocks
    read = []
    real = union.posting_blocks

    def counted(m, below=None, wanted=None, values=False):
        for block in real(m, below, wanted, values):
            read.append(m.term())
            yield block

    monkeypatch.setattr(union, "posting_blocks", counted)
    for limit in (3, 25, 100):
        read.clear()
        top, _ = best_per_session(searcher, words_or(FlatOr, words), limit, SegmentKeys())
        want = _walked_best(searcher, words_or(Or, words), limit)
        assert [(k, round(b.score, 9), b.docnum) for k, b in top] == want
        assert deleted not in {k for k, _ in top}
        if limit == 3 and words == ["walrus"]:
            assert ("user", b"walrus") in read and ("assistant", b"walrus") not in read


def test_only_paired_fields_share_a_document():
    """``schema.SHARED_FIELDS`` holds the rule block skipping relies on: a message's text goes
    into one field, a tool result's into its name and output fields."""
    from crabsearch.index.schema import SHARED_FIELDS
    from crabsearch.index.documents import index_text_fields
    from crabsearch.model import Message, Role

    from crabsearch.model import LABEL_THINKING

    for role in Role:
        for label, tool in ((role.value, None), ("tool-call:Bash", "Bash"), (LABEL_THINKING, None)):
            m = Message(message_index=0, role=role, label=label, text="some words", offset=0, length=10,
                        tool_name=tool)
            for acting in (False, True):
                fields = set(index_text_fields(m, acting=acting, tool_output=True))
                for f in fields:
                    assert fields - {f} <= SHARED_FIELDS.get(f, frozenset()), (role, label, fields)


@pytest.mark.parametrize("words", [["walrus"], ["walrus", "number"], ["said", "walrus"]])
def test_block_skipping_keeps_every_document_at_or_above_the_floor(many_blocks, words):
    """``union.scores`` with a floor leaves out only documents scoring below it: at floors from
    the lowest score to the highest, each document at or above the floor keeps its exact score
    and matched lists, and some blocks are passed over once the floor is high."""
    from crabsearch.index.union import scores

    searcher, _ = many_blocks
    ctx = searcher.context(needs_current=True)
    for sub, _ in searcher.leaf_searchers():
        full, full_masks, _ = scores(words_or(FlatOr, words).matcher(sub, ctx).plain_postings())
        values = sorted(set(full.values()))
        for at in (0.0, 0.25, 0.5, 0.75, 0.9, 1.0):
            floor = values[int(at * (len(values) - 1))]
            acc, masks, _ = scores(words_or(FlatOr, words).matcher(sub, ctx).plain_postings(),
                                   floor=lambda acc: floor)
            assert {d: sc for d, sc in full.items() if sc >= floor} == {d: sc for d, sc in acc.items() if sc >= floor}
            assert all(masks[d] == full_masks[d] for d, sc in acc.items() if sc >= floor)
            if at == 1.0 and len(full) > 256:
                assert len(acc) < len(full)


@pytest.mark.parametrize("word", ["walrus", "cache"])
def test_title_scores_of_some_sessions_are_those_of_all(searcher, word):
    """``titles_of`` scores only the listed sessions' title and summary documents: the same
    scores and documents as the full scan, for those sessions, and no other."""
    q = FlatOr([Term(f, word, boost=WEIGHTS[f]) for f in ("title", "summary")])
    full, _ = best_per_session(searcher, q, 1000, SegmentKeys())
    assert len(full) >= 3
    some = frozenset(k for k, _ in full[::2]) | {"claude:not-a-session"}
    part, _ = best_per_session(searcher, q, 1000, SegmentKeys(), titles_of=some)
    assert [(k, b.score, b.docnum) for k, b in part] == [(k, b.score, b.docnum) for k, b in full if k in some]


def test_schema_lookups_answer_as_whooshs():
    """whoosh_fixes 12: a declared field from the schema's dict at once; a dynamic field and a
    missing name as Whoosh answers them."""
    from whoosh.fields import ID, TEXT, Schema

    whoosh_fixes.install()
    schema = Schema(body=TEXT, key=ID(stored=True))
    schema.add("*_tag", ID, glob=True)
    assert "body" in schema and schema["body"] is schema._fields["body"]
    assert "x_tag" in schema and isinstance(schema["x_tag"], ID)  # dynamic: the original way
    assert "nothing" not in schema
    with pytest.raises(KeyError):
        schema["nothing"]


def unwrapped(m):
    """The leaf matcher inside the filter and boost wrappers of a term's matcher."""
    while hasattr(m, "child"):
        m = m.child
    return m


def test_term_matchers_from_kept_copies_are_whooshs(tmp_path):
    """whoosh_fixes 13: a term's matcher on a segment (copied from one kept per word) is the
    matcher Whoosh's own path makes: the same class, documents, scores, values and blocks, with
    deleted documents left out and the boost applied; one used up leaves the next one whole."""
    from whoosh.codec.whoosh3 import W3LeafMatcher
    from whoosh.matching import ListMatcher, NullMatcher

    home = tmp_path / "home"
    sessions = []
    for n in range(3):
        s = ClaudeSession(home, f"{n:04d}bbbb-0000-4000-8000-000000000000")
        for i in range(150 if n < 2 else 3):  # long lists of several blocks, and short ones
            s.user(f"the walrus cache {i} {'rare' if i == 7 else 'common'}").assistant("retry the cache")
        s.write()
        sessions.append(s)
        Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ix = delete_without_merging(tmp_path / "index", f"claude:{sessions[1].session_id}")
    kinds = set()
    with ix.searcher() as s:
        assert len(s.leaf_searchers()) >= 2
        for sub, _ in s.leaf_searchers():
            ctx = sub.context(needs_current=True)
            for field, word, boost in [("user", "walrus", 1.5), ("user", "rare", 1.5), ("assistant", "retry", 1.0),
                                       ("user", "absentword", 1.0), ("nosuchfield", "walrus", 1.0)]:
                q = Term(field, word, boost=boost)
                for _ in range(3):  # then from the kept copy, each after the one before is used up
                    ours, theirs = q.matcher(sub, ctx), whoosh_fixes._original_term_matcher(q, sub, ctx)
                    assert type(ours) is type(theirs)
                    leaf, their_leaf = unwrapped(ours), unwrapped(theirs)
                    kinds.add(type(leaf))
                    assert walk(ours) == walk(theirs)
                    if type(leaf) is W3LeafMatcher:
                        assert leaf.scorer is their_leaf.scorer  # the segment's scorer (fix 11)
                        assert leaf.__dict__.keys() == their_leaf.__dict__.keys()
    assert {W3LeafMatcher, ListMatcher} <= kinds and type(NullMatcher) in kinds


def test_a_table_of_contents_replaced_while_it_is_read_is_read_again(tmp_path, monkeypatch):
    """whoosh_fixes 14: the latest table of contents deleted between listing and opening it
    (another process committed) is listed and read again, as Whoosh's ``reader()`` does, not
    raised (a CLI search failed with ``FileNotFoundError: _MAIN_1.toc`` while indexers ran)."""
    from whoosh.index import TOC

    ClaudeSession(tmp_path / "home").user("the walrus").write()
    Indexer(tmp_path / "index", env={"HOME": str(tmp_path / "home")}).refresh()
    ix, _ = open_index(tmp_path / "index", create=False)
    read, calls = TOC.read.__func__, []

    def flaky(cls, storage, indexname, gen=None, schema=None):
        calls.append(gen)
        if len(calls) < 3:
            raise FileNotFoundError(2, "No such file or directory", f"_{indexname}_1.toc")
        return read(cls, storage, indexname, gen, schema)

    monkeypatch.setattr(TOC, "read", classmethod(flaky))
    assert len(ix._read_toc().segments) >= 1 and len(calls) == 3
    calls.clear()
    monkeypatch.setattr(whoosh_fixes, "_time", type("T", (), {"sleep": staticmethod(lambda s: None)}))
    monkeypatch.setattr(TOC, "read", classmethod(lambda cls, *a, **k: (_ for _ in ()).throw(FileNotFoundError("gone"))))
    with pytest.raises(FileNotFoundError):
        ix._read_toc()

"""The phrase and ``all`` rungs found term at a time (``phrases.scores``, ``conjunction.scores``,
through ``collect.best_per_session``) give the documents, scores and matched terms of Whoosh's
matchers (``Phrase`` and ``TextPhrase`` span matchers; ``And`` of flat unions), bit for bit:
over many posting blocks, several segments, deleted documents, repeated words, phrases inside
names, and with filters."""

from __future__ import annotations

import pytest
from whoosh.query import And, Or, Phrase, Prefix, Term

from crabsearch.index import Indexer, collect, conjunction, mixed, phrases
from crabsearch.index.collect import SegmentKeys, _terms, best_per_session
from crabsearch.index.filtering import ZeroScore, term_filter_ids
from crabsearch.index.phrases import TextPhrase
from crabsearch.index.querying import MESSAGE_FIELDS, PHRASE_FIELDS, SESSION_FIELDS
from crabsearch.index.schema import WEIGHTS
from crabsearch.index.store import open_index
from crabsearch.index.union import FlatOr

from builders import ClaudeSession, CodexSession, delete_without_merging

TEXTS = [
    "the token refresh failed again, token refresh is flaky",
    "refresh the token before the token refresh window",
    "see src/token_refresh.py for the token and the refresh",
    "token token refresh refresh token refresh",
    "to be or not to be, that is the token refresh question",
    "nothing here about it at all",
    "the refresh token rotates; token then refresh",
    "连接池超时 again, see docs/连接池超时.md and src/连接池_timeout.py",
    "the token expired, so refresh it",
]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    """Sessions whose messages hold the phrase, its words apart, or the words inside a path;
    enough messages that the words have several posting blocks (128 postings each); a few far
    apart, in a tool's name and in a compaction summary; three segments; one session deleted
    without a merge."""
    tmp = tmp_path_factory.mktemp("phrases")
    home = tmp / "home"
    gone = None
    for n in range(30):
        s = ClaudeSession(home, f"{n:04d}cccc-0000-4000-8000-000000000000")
        for i in range(8):
            s.user(TEXTS[(n + i) % len(TEXTS)] + f" number {i}")
            s.assistant(TEXTS[(n * 3 + i) % len(TEXTS)] + " x" * (n % 5))
        if n % 10 == 3:  # a gap of 300 words (positions stored two bytes a gap), a tool's name, a compaction
            s.user("token " + "filler " * 300 + "refresh the token")
            s.tool("refresh_token", {"scope": "all"}, "done")
            s.compact("the token refresh, summed up")  # the session's summary too
            s.title("refresh rotation")  # one word in the title, both in the summary
        s.write()
        gone = gone or s
        if n in (9, 19):
            Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    CodexSession(home).user("codex says token refresh").assistant("the token refresh works").write()
    Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    ix = delete_without_merging(tmp / "index", f"claude:{gone.session_id}")
    with ix.searcher() as s:
        assert len(s.leaf_searchers()) >= 2
        assert any(sub.reader().has_deletions() for sub, _ in s.leaf_searchers())
        assert s.doc_frequency("user", "token") > 128
        yield s, f"claude:{gone.session_id}"


def phrase_query(cls, words, fields=MESSAGE_FIELDS):
    return FlatOr([cls(f, words, boost=WEIGHTS[f]) for f in fields if f in PHRASE_FIELDS])


def walked(searcher, query):
    """Every document of Whoosh's matcher for ``query``: ``{docnum: (score, matched terms)}``."""
    out = {}
    ctx = searcher.context(needs_current=True)
    for sub, offset in searcher.leaf_searchers():
        m = query.matcher(sub, ctx)
        tms = list(m.term_matchers())
        while m.is_active():
            out[offset + m.id()] = (m.score(), _terms(tms, m.id()))
            m.next()
    return out


def per_segment(searcher, scan) -> dict:
    """``{docnum: (score, matched terms)}`` from a term-at-a-time ``scan(leaf searcher,
    context)`` (``phrases.scores`` and its kin), segment by segment, as :func:`walked` gives."""
    out = {}
    ctx = searcher.context(needs_current=True)
    for sub, offset in searcher.leaf_searchers():
        got = scan(sub, ctx)
        assert got is not None
        acc, masks, names, stopped = got
        assert not stopped
        for d, sc in acc.items():
            out[offset + d] = (sc, tuple(n for i, n in enumerate(names) if masks[d] >> i & 1))
    return out


def scanned(searcher, query):
    """The same from ``phrases.scores``, segment by segment."""
    parts, clauses = phrases.parts(query, searcher.schema)
    assert not clauses
    return per_segment(searcher, lambda sub, ctx: phrases.scores(sub, ctx, parts))


CASES = [["token", "refresh"], ["refresh", "token"], ["the", "token", "refresh"], ["token", "token"],
         ["to", "be", "or", "not", "to", "be"], ["refresh", "token", "refresh"], ["absentword", "token"],
         ["连接", "接池", "池超", "超时"], ["超时", "md"], ["docs", "连接"]]


@pytest.mark.parametrize("cls", [Phrase, TextPhrase])
@pytest.mark.parametrize("words", CASES)
def test_scan_gives_the_span_matchers_documents_scores_and_terms(searcher, cls, words):
    """Bit for bit: the same score (not rounded) and the same matched (field, word) pairs, in
    the same order, repeated words included."""
    s, _ = searcher
    q = phrase_query(cls, words)
    want = walked(s, q)
    assert scanned(s, q) == want
    if words in (["token", "refresh"], ["to", "be", "or", "not", "to", "be"], ["连接", "接池", "池超", "超时"]):
        assert want


def test_running_text_leaves_out_a_phrase_inside_a_path(searcher):
    s, _ = searcher
    anywhere = scanned(s, phrase_query(Phrase, ["token", "refresh"]))
    text = scanned(s, phrase_query(TextPhrase, ["token", "refresh"]))
    assert set(text) < set(anywhere)


@pytest.mark.parametrize("words", [["token", "refresh"], ["the", "token"]])
def test_best_per_session_by_phrase_is_the_matchers(searcher, words):
    """The collector's phrase path keeps each session's best document as walking the matcher
    does (higher score, then lower document number), never a deleted session's."""
    assert_best_per_session_walks(*searcher, phrase_query(TextPhrase, words))


@pytest.mark.parametrize("words", [["the", "token"], ["token", "refresh"], ["to", "be", "or", "not", "to", "be"]])
def test_a_floor_leaves_out_only_documents_below_it(searcher, words):
    """With a floor (``phrases.scores``' ``floor``: the collector's limit-th best session), every
    document scoring at or above it is still found, with the same score and terms; documents
    below it are left out (their blocks and positions unread), not scored lower."""
    s, _ = searcher
    q = phrase_query(TextPhrase, words)
    parts, _ = phrases.parts(q, s.schema)
    full = scanned(s, q)
    scores = sorted(sc for sc, _ in full.values())
    for at in (scores[len(scores) // 4], scores[len(scores) // 2], scores[-1]):
        floored = per_segment(s, lambda sub, ctx: phrases.scores(sub, ctx, parts, floor=lambda acc: at))
        assert {d: v for d, v in full.items() if v[0] >= at}.items() <= floored.items() <= full.items()
        if at > scores[0] and len(words) == 2:  # (the long phrase's bounds are all alike here)
            assert len(floored) < len(full)


def assert_best_per_session_walks(s, deleted, q, unnamed=(), terms_of=None):
    """``best_per_session`` at several limits keeps each session's best document as walking
    Whoosh's matcher does (higher score, then lower document number), never a deleted one's.
    The matcher's terms in the fields ``unnamed`` (filters) are not among a best's terms;
    ``terms_of``: a document's terms are these instead (``{docnum: terms}``)."""
    for limit in (1, 5, 100):
        top, partial = best_per_session(s, q, limit, SegmentKeys())
        assert not partial
        best = {}
        for d, (sc, terms) in sorted(walked(s, q).items()):
            terms = tuple(t for t in (terms if terms_of is None else terms_of[d]) if t[0] not in unnamed)
            k = s.stored_fields(d)["skey"]
            if k not in best or sc > best[k][0]:
                best[k] = (sc, d, terms)
        want = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:limit]
        assert [(k, b.score, b.docnum, b.terms) for k, b in top] == [(k, *v) for k, v in want]
        assert deleted not in {k for k, _ in top}


def test_filters_keep_their_documents_only(searcher):
    s, _ = searcher
    q = phrase_query(TextPhrase, ["token", "refresh"])
    agent = Term("agent", "codex", boost=0.0)
    assert phrases.parts(And([q, agent]), s.schema)[1] == [agent]
    top, _ = best_per_session(s, And([q, agent]), 10, SegmentKeys())
    assert [k.split(":")[0] for k, _ in top] == ["codex"]
    walked_codex = {d: v for d, v in walked(s, And([q, agent])).items()}
    assert {b.docnum for _, b in top} <= set(walked_codex)
    assert top[0][1].score == max(sc for sc, _ in walked_codex.values())


def test_other_queries_take_the_matcher_path(searcher):
    s, _ = searcher
    assert phrases.parts(Or([Term("user", "token")]), s.schema) is None
    assert phrases.parts(And([phrase_query(Phrase, ["a", "b"]), Term("user", "token")]), s.schema) is None
    assert phrases.parts(FlatOr([Phrase("user", ["a", "b"], slop=2)]), s.schema) is None
    assert phrases.parts(FlatOr([Phrase("tool", ["a", "b"])]), s.schema) is None  # no positions


def test_a_stop_ends_the_phrase_scan(searcher, monkeypatch):
    import threading

    import crabsearch.index.collect as collect
    monkeypatch.setattr(collect, "DEADLINE_EVERY", 1)
    s, _ = searcher
    stop = threading.Event()
    stop.set()
    top, partial = best_per_session(s, phrase_query(TextPhrase, ["token", "refresh"]), 10, SegmentKeys(), stop=stop)
    assert partial and top == []


def test_a_phrase_scores_the_same_in_a_segment_with_deletions(tmp_path):
    """A segment's deleted documents wrap its posting lists in a filter; the phrase's score
    (each word counted with the phrase's frequency, ``whoosh_fixes`` 9) must not change when
    another session of the segment is deleted. It fell back to the words' own frequencies."""
    home = tmp_path / "home"
    keep = ClaudeSession(home).user("token refresh, and the token again")
    other = ClaudeSession(home).user("something else entirely")
    keep.write()
    other.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    q = phrase_query(TextPhrase, ["token", "refresh"])

    def score():
        ix, _ = open_index(tmp_path / "index", create=False)
        with ix.searcher() as s:
            (sc, _), = walked(s, q).values()
            top, _ = best_per_session(s, q, 5, SegmentKeys())
            assert [b.score for _, b in top] == [sc]
            return sc, any(sub.reader().has_deletions() for sub, _ in s.leaf_searchers())

    before, deleted = score()
    assert not deleted
    delete_without_merging(tmp_path / "index", f"claude:{other.session_id}")
    after, deleted = score()
    assert deleted and after == before


def word_query(words, fields=MESSAGE_FIELDS):
    """``all``: each word (a list of words: a prefix's expansions) in any of ``fields``."""
    groups = [[w] if isinstance(w, str) else w for w in words]
    return And([FlatOr([Term(f, w, boost=WEIGHTS[f]) for f in fields for w in g]) for g in groups])


def conjoined(searcher, query):
    words, clauses = conjunction.parts(query)
    assert not clauses
    return per_segment(searcher, lambda sub, ctx: conjunction.scores(sub, ctx, words))


WORD_CASES = [["token", "refresh"], ["refresh", "number"], ["the", "token", "refresh"],
              ["number", "the", "token", "refresh"], ["x", "the", "refresh", "token", "be"], [["token", "tokens", "the"], "refresh"],
              ["nothing", "token"], ["absentword", "token"], ["question", "codex", "token"]]


@pytest.mark.parametrize("words", WORD_CASES)
def test_conjunction_gives_the_and_matchers_documents_scores_and_terms(searcher, words):
    """Bit for bit, three and four words included (their scores are added in the shape of
    Whoosh's weighted matcher tree), a prefix's several words in one field too."""
    s, _ = searcher
    q = word_query(words)
    want = walked(s, q)
    assert conjoined(s, q) == want
    if words[0] not in ("absentword", "nothing", "question"):
        assert want


@pytest.mark.parametrize("words", [["token", "refresh"], ["the", "token", "refresh"]])
def test_best_per_session_by_every_word_is_the_matchers(searcher, words):
    assert_best_per_session_walks(*searcher, word_query(words))


@pytest.mark.parametrize("words", [["token", "refresh"], ["refresh", "token"], ["the", "token"], ["refresh", "number"],
                                   ["token", "absentword"], ["filler", "token"]])
@pytest.mark.parametrize("fields", [MESSAGE_FIELDS, SESSION_FIELDS])
def test_every_word_from_the_phrase_scans_postings_is_the_matchers(searcher, words, fields):
    """The ``all`` rung's scan of two words takes, field by field, the postings the phrase
    rung's scan of them read (``pairs``): the same documents, scores and terms as the ``And``
    matcher, whole and within a set of documents. A tool's name (no positions) is read as
    before, and so are fields that share a document (a title and a summary)."""
    s, _ = searcher
    q = word_query(words, fields)
    parts, _ = conjunction.parts(q)
    phrased, _ = phrases.parts(phrase_query(TextPhrase, words, fields), s.schema)
    kept = []

    def scan(sub, ctx, within=None):
        pairs = {}
        phrases.scores(sub, ctx, phrased, pairs=pairs)
        kept.extend(field for field, _ in pairs)
        return conjunction.scores(sub, ctx, parts, within=within, pairs=pairs)

    assert per_segment(s, scan) == walked(s, q)
    if "absentword" not in words and fields == MESSAGE_FIELDS:
        assert "user" in kept
    for sub, _ in s.leaf_searchers():
        ctx = s.context(needs_current=True)
        within = set(range(0, sub.reader().doc_count_all(), 3))
        assert scan(sub, ctx, within) == conjunction.scores(sub, ctx, parts, within=within)


def test_the_phrase_scan_keeps_no_postings_it_did_not_read_whole(searcher):
    """With a floor or within a set of documents, the phrase scan reads part of the postings:
    it leaves none for the ``all`` rung."""
    s, _ = searcher
    phrased, _ = phrases.parts(phrase_query(TextPhrase, ["token", "refresh"]), s.schema)
    for sub, _ in s.leaf_searchers():
        ctx = s.context(needs_current=True)
        floored, within = {}, {}
        phrases.scores(sub, ctx, phrased, floor=lambda acc: 1.0, pairs=floored)
        phrases.scores(sub, ctx, phrased, within={0, 1, 2}, pairs=within)
        assert floored == {} and within == {}


def test_conjunction_with_filters(searcher):
    s, _ = searcher
    q = word_query(["token", "refresh"])
    agent = Term("agent", "codex", boost=0.0)
    assert conjunction.parts(And([q, agent])) == (list(q.subqueries), [agent])
    top, _ = best_per_session(s, And([q, agent]), 10, SegmentKeys())
    assert [k.split(":")[0] for k, _ in top] == ["codex"]
    assert top[0][1].score == max(sc for sc, _ in walked(s, And([q, agent])).values())


@pytest.mark.parametrize("filters", [[("agent", "codex")], [("role", "user")], [("agent", "claude"), ("role", "assistant")],
                                     [("agent", "absent")], [("role", "user"), ("kind", "m")]])
@pytest.mark.parametrize("word", ["token", "refresh", "number", "question"])
def test_a_word_with_filter_terms_is_the_matchers(searcher, word, filters, monkeypatch):
    """A word with filter terms (``agent:codex database``) is scored term at a time over the
    documents that pass the filters, with the matcher's documents, scores and best per session
    (over posting blocks passed over below the limit-th session's score): the matcher is not
    walked."""
    s, deleted = searcher
    q = And([word_query([word]).subqueries[0], *(Term(f, v, boost=0.0) for f, v in filters)])
    want = walked(s, q)
    if filters[0] != ("agent", "absent") and word in ("token", "refresh"):
        assert want and len(want) < len(walked(s, word_query([word]).subqueries[0]))

    def walking(*args):
        raise AssertionError("the matcher was walked")
    monkeypatch.setattr(collect, "_terms", walking)
    assert_best_per_session_walks(s, deleted, q, unnamed={f for f, _ in filters})


def test_a_word_with_other_filters_walks_the_matcher(searcher):
    """A filter that is not a term (a project path's prefix) leaves the word to the matcher,
    with the same result."""
    s, deleted = searcher
    path = ZeroScore(Or([Term("project", "/nowhere"), Prefix("project", "/")]))
    q = And([word_query(["token"]).subqueries[0], Term("agent", "claude", boost=0.0), path])
    assert term_filter_ids(s.leaf_searchers()[0][0], [Term("agent", "claude", boost=0.0), path]) is None
    assert walked(s, q)
    assert_best_per_session_walks(s, deleted, q)


def test_other_queries_are_not_conjunctions(searcher):
    assert conjunction.parts(word_query(["token"])) is None  # one word: union.scores
    assert conjunction.parts(And([word_query(["a", "b"]), Term("user", "c")])) is None
    assert conjunction.parts(And([phrase_query(Phrase, ["a", "b"]), word_query(["c"]).subqueries[0]])) is None


def terms_query(word, fields=MESSAGE_FIELDS, boost=1.0):
    return FlatOr([Term(f, word, boost=WEIGHTS[f]) for f in fields], boost=boost)


MIXED_CASES = {
    "an identifier, whole or as its parts": lambda: FlatOr([terms_query("question"), phrase_query(TextPhrase, ["token", "refresh"])]),
    "a word and a phrase on the same messages": lambda: FlatOr([terms_query("token"), phrase_query(Phrase, ["refresh", "token"])]),
    "phrase first, boosts nested": lambda: FlatOr([phrase_query(Phrase, ["the", "token"]), terms_query("refresh", boost=1.5)], boost=0.7),
    "a union of one union": lambda: FlatOr([FlatOr([terms_query("number"), phrase_query(TextPhrase, ["token", "refresh"])], boost=1.5)], boost=3.0),
    "an absent phrase": lambda: FlatOr([terms_query("token"), phrase_query(Phrase, ["absentword", "token"])]),
    "CJK": lambda: FlatOr([terms_query("again"), phrase_query(TextPhrase, ["连接", "接池", "池超", "超时"])]),
}


def mixed_scanned(searcher, query):
    """``mixed.scores`` segment by segment, as :func:`scanned`."""
    leaves, clauses = mixed.parts(query, searcher.schema)
    assert not clauses
    return per_segment(searcher, lambda sub, ctx: mixed.scores(sub, ctx, leaves))


def leaf_matches(searcher, query) -> dict[int, tuple]:
    """The matched terms of each document of the union ``query``, leaf by leaf: each leaf's own
    matcher walked alone (a word, or a phrase's words), in the union's order."""
    ctx = searcher.context(needs_current=True)
    out: dict[int, tuple] = {}
    for leaf, _ in mixed._flat(query):
        for sub, offset in searcher.leaf_searchers():
            m = leaf.matcher(sub, ctx)
            tms = list(m.term_matchers())
            while m.is_active():
                out[offset + m.id()] = out.get(offset + m.id(), ()) + _terms(tms, m.id())
                m.next()
    return out


@pytest.mark.parametrize("case", MIXED_CASES)
def test_words_and_phrases_in_one_union_are_the_matchers(searcher, case, monkeypatch):
    """An identifier's query (``getuserbyid`` or ``"get user by id"``): the flat union of words
    and phrases scanned term at a time gives the matcher's documents and scores (bit for bit:
    each leaf's score times its boost, added in the union's order, nested boosts and a union
    of one union included), and the terms of the leaves that match (the union's matcher also
    lists a phrase's word whose own matcher stayed on a document after the phrase ran out);
    ``best_per_session`` takes that path (the matcher is not walked) and keeps each session's
    best as walking the matcher does."""
    s, deleted = searcher
    q = MIXED_CASES[case]()
    want = walked(s, q)
    assert want
    got = mixed_scanned(s, q)
    assert {d: sc for d, (sc, _) in got.items()} == {d: sc for d, (sc, _) in want.items()}
    leaves = leaf_matches(s, q)
    assert {d: terms for d, (_, terms) in got.items()} == {d: leaves[d] for d in want}

    def walking(*args):
        raise AssertionError("the matcher was walked")
    monkeypatch.setattr(collect, "_terms", walking)
    assert_best_per_session_walks(s, deleted, q, terms_of=leaves)


def test_words_and_phrases_with_filters(searcher):
    s, _ = searcher
    q = MIXED_CASES["an identifier, whole or as its parts"]()
    agent = Term("agent", "codex", boost=0.0)
    assert mixed.parts(And([q, agent]), s.schema)[1] == [agent]
    top, _ = best_per_session(s, And([q, agent]), 10, SegmentKeys())
    assert [k.split(":")[0] for k, _ in top] == ["codex"]
    assert top[0][1].score == max(sc for sc, _ in walked(s, And([q, agent])).values())


def test_other_unions_are_not_mixed(searcher):
    s, _ = searcher
    assert mixed.parts(terms_query("token"), s.schema) is None  # words only: union.scores
    assert mixed.parts(phrase_query(Phrase, ["a", "b"]), s.schema) is None  # phrases only: phrases.scores
    assert mixed.parts(FlatOr([terms_query("a"), Phrase("user", ["a", "b"], slop=2)]), s.schema) is None
    assert mixed.parts(FlatOr([terms_query("a"), Or([Phrase("user", ["a", "b"])])]), s.schema) is None

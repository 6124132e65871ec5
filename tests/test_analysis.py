"""The shared analyzer: compounds whole and in parts, CJK runs as overlapping character bigrams."""

from __future__ import annotations

import pickle
import random
import unicodedata

import pytest
from whoosh.fields import ID, TEXT, Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.query import Phrase, Term

from crabsearch.index import Indexer, highlight
from crabsearch.index.analysis import CJKBigramTokenizer, folded_contexts, group_leaves, groups, phrase_terms, terms
from crabsearch.index.highlight import spans, term_spans
from crabsearch.index.tokenizer import CompoundTokenizer, text_analyzer
from crabsearch.search import Engine

from builders import ClaudeSession


def toks(text, **kw):
    return [(t.text, t.pos, t.startchar, t.endchar)
            for t in text_analyzer()(text, positions=True, chars=True, **kw)]


def test_mixed_text_terms():
    assert terms("Fix 日付のフォーマット in getUserById café") == [
        "fix", "日付", "付の", "のフ", "フォ", "ォー", "ーマ", "マッ", "ット", "in",
        "getuserbyid", "get", "user", "by", "id", "cafe"]


def test_compounds_of_plain_text():
    assert terms("naïve_snake CASE42 a-b foo.bar") == [
        "naive_snake", "naive", "snake", "case42", "a-b", "a", "b", "foo.bar", "foo", "bar"]


def test_positions_consecutive_and_chars():
    text = "ab 感冒了 cd"
    assert toks(text) == [("ab", 0, 0, 2), ("感冒", 1, 3, 5), ("冒了", 2, 4, 6), ("cd", 3, 7, 9)]
    for tok, _, s, e in toks(text):
        assert text[s:e].lower() == tok


def test_start_pos_and_start_char():
    got = toks("x 日付", start_pos=10, start_char=100)
    assert got == [("x", 10, 100, 101), ("日付", 11, 102, 104)]


def test_spans_highlight_bigram():
    text = "今天有点感冒了"
    assert spans(text, {"感冒"}) == [(4, 6)]
    assert text[4:6] == "感冒"
    assert spans(text, set()) == []


def test_hangul_and_katakana_prolonged_mark():
    assert terms("한국어 텍스트") == ["한국", "국어", "텍스", "스트"]
    assert terms("サーバー") == ["サー", "ーバ", "バー"]


def test_isolated_cjk_char_is_a_unigram():
    assert terms("a 日 b") == ["a", "日", "b"]
    assert terms("日") == ["日"]


def test_cjk_run_split_from_adjacent_latin():
    assert terms("関数getuser") == ["関数", "getuser"]
    assert terms("関数getUser") == ["関数", "getuser", "get", "user"]
    assert terms("src/日本/foo") == ["src", "日本", "foo"]


def test_emoji_and_punctuation_ignored():
    assert terms("🚀 感冒！、。「」・ — ok?! 🎉") == ["感冒", "ok"]
    # punctuation breaks a CJK run: two isolated characters
    assert terms("日、本") == ["日", "本"]


@pytest.mark.parametrize("text", ["", "   ", "!!!", "🚀"])
def test_empty(text):
    assert terms(text) == []
    assert toks(text) == []


def test_tokenize_false_and_keeporiginal():
    [t] = [(t.text, t.pos) for t in text_analyzer()("今天 X", tokenize=False, positions=True)]
    assert t == ("今天 x", 0)
    origs = [t.original for t in CompoundTokenizer()("Ab感冒 fooBar", keeporiginal=True)]
    assert origs == ["Ab", "感冒", "fooBar", "foo", "Bar"]


def test_picklable():
    ana = pickle.loads(pickle.dumps(text_analyzer()))
    assert [t.text for t in ana("今天 Café")] == ["今天", "cafe"]
    assert CompoundTokenizer() == CompoundTokenizer()
    assert CJKBigramTokenizer is CompoundTokenizer  # the former name still resolves


def test_an_analyzer_pickled_when_the_tokenizer_lived_in_analysis_still_loads():
    """An index's table of contents pickles its schema, whose analyzer names the tokenizer's class
    by module: an index built before ``index.tokenizer`` existed names ``index.analysis``."""
    former = pickle.dumps(text_analyzer(), 2).replace(b"crabsearch.index.tokenizer\n", b"crabsearch.index.analysis\n")
    assert b"crabsearch.index.analysis\nCompoundTokenizer" in former
    ana = pickle.loads(former)
    assert ana == text_analyzer()
    assert [t.text for t in ana("getUserById")] == ["getuserbyid", "get", "user", "by", "id"]


def test_end_to_end_search_and_highlight(tmp_path):
    home = tmp_path / "home"
    (ClaudeSession(home, session_id="aaaaaaaa-0000-4000-8000-00000000000a")
     .user("今天有点感冒了，头很疼").assistant("多喝水，好好休息。").write())
    (ClaudeSession(home, session_id="bbbbbbbb-0000-4000-8000-00000000000b")
     .user("日付のフォーマットがロケールによって崩れます").assistant("toLocaleDateString を確認します").write())
    ClaudeSession(home, session_id="cccccccc-0000-4000-8000-00000000000c").user(
        "nothing to see here").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    try:
        res = engine.search("感冒")
        assert res.route == "all"
        [hit] = res.hits
        assert hit.session.session_id == "aaaaaaaa-0000-4000-8000-00000000000a"
        text = hit.item.text
        assert text == "今天有点感冒了，头很疼"
        [(s, e)] = Engine.spans(text, res.terms)
        assert text[s:e] == "感冒"

        res = engine.search("日付")
        [hit] = res.hits
        assert hit.session.session_id == "bbbbbbbb-0000-4000-8000-00000000000b"
        [(s, e)] = Engine.spans(hit.item.text, res.terms)
        assert hit.item.text[s:e] == "日付"

        res = engine.search("フォーマット")
        assert res.route in ("phrase", "all")  # the bigrams adjacent, or at least all present
        assert [h.session.session_id for h in res.hits] == ["bbbbbbbb-0000-4000-8000-00000000000b"]
    finally:
        engine.close()


# -- compounds: whole and in parts ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("resolve_dirs", ["resolve_dirs", "resolve", "dirs"]),
    ("resolveDirs", ["resolvedirs", "resolve", "dirs"]),
    ("getUserById", ["getuserbyid", "get", "user", "by", "id"]),
    ("HTTPServerError", ["httpservererror", "http", "server", "error"]),
    ("XMLHttpRequest", ["xmlhttprequest", "xml", "http", "request"]),
    ("bd-q3fy", ["bd-q3fy", "bd", "q3fy"]),
    ("src/main/foo-bar.ts",
     ["src/main/foo-bar.ts", "src", "main", "foo-bar.ts", "foo-bar", "foo", "bar", "ts"]),
    ("C++", ["c++", "c"]),
    ("c++17", ["c++17", "c", "17"]),
    ("C#", ["c#", "c"]),
    ("#123", ["#123", "123"]),
    ("v1.2.3", ["v1.2.3", "v1", "2", "3"]),
    ("user@example.com", ["user@example.com", "user", "example.com", "example", "com"]),
    ("std::fs::read_to_string",
     ["std::fs::read_to_string", "std", "fs", "read_to_string", "read", "to", "string"]),
    ("https://github.com/o/r", ["https://github.com/o/r", "https", "github.com", "github", "com", "o", "r"]),
    ("__init__", ["__init__", "init"]),
    ("--no-verify", ["no-verify", "no", "verify"]),
    ("base64Encode", ["base64encode", "base64", "encode"]),
    ("HTTP2Server", ["http2server", "http2", "server"]),
    ("a/../b", ["a/../b", "a", "b"]),  # a piece without letters or digits is not a term
])
def test_compound_terms(text, expected):
    assert terms(text) == expected


@pytest.mark.parametrize("word", ["resolve", "q3fy", "utf8", "v2", "CASE42", "Q3FY", "2FA", "HTTP",
                                  "Fixed", "café", "x", "42"])
def test_plain_word_yields_just_itself(word):
    assert len(terms(word)) == 1
    assert groups(word) == [terms(word)]


@pytest.mark.parametrize("text, expected", [
    ("fixed it.", ["fixed", "it"]),
    ("end of sentence/", ["end", "of", "sentence"]),
    ("see foo.bar.", ["see", "foo.bar", "foo", "bar"]),
    ("(see src/x.py), ok: done", ["see", "src/x.py", "src", "x.py", "x", "py", "ok", "done"]),
    ("a - b", ["a", "b"]),
    ("ab+ cd@ ef#", ["ab", "cd", "ef#", "ef"]),
    ("it's don't", ["it", "dont"]),  # an apostrophe inside keeps the word whole (issue 11)
])
def test_trailing_punctuation_not_glued(text, expected):
    assert terms(text) == expected


def test_query_and_index_forms_agree():
    # the same analyzer both ways: every query term of an identifier is a term of the text
    for ident in ["getUserById", "resolve_dirs", "src/main/foo-bar.ts", "C++", "#123", "v1.2.3"]:
        assert set(terms(ident)) <= set(terms(f"we call {ident} here."))


def test_groups():
    assert groups("getUserById other") == [["getuserbyid", "get", "user", "by", "id"], ["other"]]
    # intermediate pieces are left out of a group: whole OR all leaves
    assert groups("src/main/foo-bar.ts") == [["src/main/foo-bar.ts", "src", "main", "foo", "bar", "ts"]]
    assert groups("C++ #123 x") == [["c++", "c"], ["#123", "123"], ["x"]]
    # identical groups once; a repeated leaf once per group; CJK bigrams are groups of one
    assert groups("foo foo foo.foo") == [["foo"], ["foo.foo", "foo"]]
    assert groups("日付の") == [["日付"], ["付の"]]
    assert groups("") == []
    assert [g[0] for g in groups("Fix getUserById, resolve_dirs.")] == [
        "fix", "getuserbyid", "resolve_dirs"]


def test_phrase_terms():
    assert phrase_terms("call resolve_dirs now") == ["call", "resolve", "dirs", "now"]
    assert phrase_terms("the getUserById the") == ["the", "get", "user", "by", "id", "the"]
    assert phrase_terms("src/main/foo-bar.ts") == ["src", "main", "foo", "bar", "ts"]
    assert phrase_terms("日付の x") == ["日付", "付の", "x"]


# -- positions and phrases --------------------------------------------------------------------

def test_positions_follow_the_leaves():
    assert toks("call resolve_dirs now") == [
        ("call", 0, 0, 4), ("resolve_dirs", 1, 5, 17), ("resolve", 1, 5, 12), ("dirs", 2, 13, 17),
        ("now", 3, 18, 21)]
    assert toks("a src/main/foo-bar.ts b") == [
        ("a", 0, 0, 1), ("src/main/foo-bar.ts", 1, 2, 21), ("src", 1, 2, 5), ("main", 2, 6, 10),
        ("foo-bar.ts", 3, 11, 21), ("foo-bar", 3, 11, 18), ("foo", 3, 11, 14), ("bar", 4, 15, 18),
        ("ts", 5, 19, 21), ("b", 6, 22, 23)]
    assert toks("#12 getUserById") == [
        ("#12", 0, 0, 3), ("12", 0, 1, 3), ("getuserbyid", 1, 4, 15), ("get", 1, 4, 7),
        ("user", 2, 7, 11), ("by", 3, 11, 13), ("id", 4, 13, 15)]
    assert toks("C++ 日付の", start_pos=5, start_char=10) == [
        ("c++", 5, 10, 13), ("c", 5, 10, 11), ("日付", 6, 14, 16), ("付の", 7, 15, 17)]


def _fold(s):
    return "".join(t.text for t in text_analyzer()(s, tokenize=False))


def test_chars_point_at_each_token():
    text = "Fix getUserById in src/main/foo-bar.ts (bd-q3fy, #123, C++) — HTTPServerError 日付の café."
    got = toks(text)
    assert len(got) > 25
    for tok, _, s, e in got:
        assert _fold(text[s:e]) == tok


@pytest.fixture(scope="module")
def phrase_index():
    schema = Schema(id=ID(stored=True), body=TEXT(analyzer=text_analyzer(), phrase=True))
    ix = RamStorage().create_index(schema)
    w = ix.writer()
    for i, body in enumerate([
        "please call resolve_dirs now",         # 0
        "getUserById returns the user",          # 1
        "we resolve the dirs later",             # 2
        "call resolve dirs now, in prose",       # 3
        "edit src/main/foo-bar.ts then build",   # 4
        "日付のフォーマット in HTTPServerError",     # 5
    ]):
        w.add_document(id=str(i), body=body)
    w.commit()
    with ix.searcher() as s:
        yield lambda q: sorted(int(h["id"]) for h in s.search(q, limit=None))


def test_phrase_of_parts_matches_the_identifier(phrase_index):
    assert phrase_index(Phrase("body", phrase_terms("resolve dirs"))) == [0, 3]
    assert phrase_index(Phrase("body", phrase_terms("get user"))) == [1]
    assert phrase_index(Phrase("body", phrase_terms("user by id returns"))) == [1]
    assert phrase_index(Phrase("body", phrase_terms("main foo bar"))) == [4]
    assert phrase_index(Phrase("body", phrase_terms("server error"))) == [5]


def test_phrase_through_the_identifier(phrase_index):
    assert phrase_index(Phrase("body", phrase_terms("call resolve_dirs now"))) == [0, 3]
    assert phrase_index(Phrase("body", phrase_terms("edit src/main/foo-bar.ts then"))) == [4]
    assert phrase_index(Phrase("body", phrase_terms("foo-bar.ts then build"))) == [4]
    assert phrase_index(Phrase("body", phrase_terms("日付のフォーマット in"))) == [5]
    # the whole compound sits at its first leaf: it can follow a word, but nothing follows it
    assert phrase_index(Phrase("body", ["call", "resolve_dirs"])) == [0]
    assert phrase_index(Phrase("body", ["resolve_dirs", "now"])) == []


def test_whole_compound_is_a_term(phrase_index):
    assert phrase_index(Term("body", "resolve_dirs")) == [0]
    assert phrase_index(Term("body", "dirs")) == [0, 2, 3]
    assert phrase_index(Term("body", "foo-bar.ts")) == [4]
    assert phrase_index(Term("body", "getuserbyid")) == [1]
    assert phrase_index(Phrase("body", phrase_terms("resolve the dirs"))) == [2]


# -- spans ------------------------------------------------------------------------------------

def test_spans_of_parts_and_wholes():
    text = "call getUserById now"
    assert spans(text, {"user"}) == [(8, 12)]
    assert spans(text, {"get", "id"}) == [(5, 8), (14, 16)]
    # a piece inside a span already returned is not returned again
    assert spans(text, set(terms("getUserById"))) == [(5, 16)]
    assert spans("a/b.py and b", {"b"}) == [(2, 3), (11, 12)]
    assert spans("see #123.", {"#123", "123"}) == [(4, 8)]



def test_an_identifiers_parts_are_highlighted_only_in_a_row():
    """A fresh-user trial: ``getUserById`` highlighted ``user`` in ``parse_event_user`` and
    ``get``, ``by`` in ``getOrderByNode``. With the run entry (``Compiler.terms``), its parts
    are highlighted where they stand in a row, in order, as one span; alone they are not."""
    text = "call getUserById, get user by id, parse_event_user and getOrderByNode, user by"
    wanted = {"getuserbyid", "get", "user", "by", "id", "get user by id"}
    got = [(text[s:e], entry) for s, e, entry in term_spans(text, wanted)]
    assert got == [("getUserById", "getuserbyid"), ("get user by id", "get user by id")]
    assert spans("get_user_by_id()", wanted) == [(0, 14)]
    assert spans("by user get id", wanted) == []


def test_the_engine_gives_an_identifier_query_its_run(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("where is getUserById defined").assistant("the user service has it").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    res = Engine(tmp_path / "index").search("getUserById")
    assert "get user by id" in res.terms and "user" in res.terms  # the words stay listed (--json)
    assert Engine.spans("the user service, getUserById", res.terms) == [(18, 29)]
    both = Engine(tmp_path / "index").search("user getUserById")  # a part also typed alone
    assert "get user by id" not in both.terms

# -- accents and Unicode normalization --------------------------------------------------------

def test_accents_fold():
    assert terms("café Ñandú naïve_snake") == ["cafe", "nandu", "naive_snake", "naive", "snake"]


def test_nfd_folds_like_nfc():
    nfc = "café résumé étude Ångström_x"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc
    assert terms(nfd) == terms(nfc) == [
        "cafe", "resume", "etude", "angstrom_x", "angstrom", "x"]
    assert phrase_terms(nfd) == phrase_terms(nfc)


def test_nfd_offsets_index_the_original_text():
    text = "e\u0301tude cafe\u0301 ok"
    assert spans(text, {"etude"}) == [(0, 6)]
    assert spans(text, {"cafe"}) == [(7, 12)]
    assert spans(text, {"ok"}) == [(13, 15)]
    for tok, _, s, e in toks(text, start_char=3):
        assert _fold(text[s - 3:e - 3]) == tok
    # decomposed Hangul (as in macOS file names) bigrams like the composed syllables
    ko = unicodedata.normalize("NFD", "x 한국어 y")
    assert len(ko) == 12
    assert terms(ko) == ["x", "한국", "국어", "y"]
    assert spans(ko, {"한국"}) == [(2, 8)]
    assert unicodedata.normalize("NFC", ko[2:8]) == "한국"
    # tokenize=False keeps the whole original length
    [(text_, s, e)] = [(t.text, t.startchar, t.endchar)
                       for t in text_analyzer()("cafe\u0301", tokenize=False, chars=True)]
    assert (text_, s, e) == ("cafe", 0, 5)


def test_never_fails_and_stays_consistent():
    rng = random.Random(7)
    alphabet = list("aZ9_-./:@+#  \n,;'\"()Éé\u0301\u0308日本ー한\u1100\u1161ß🚀İ") + ["\ufa10"]
    ana = text_analyzer()
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        last = {}
        for t in ana(text, positions=True, chars=True):
            assert 0 <= t.startchar < t.endchar <= len(text), text
            assert t.pos >= last.get(t.text, -1), text  # per term, positions never go back
            last[t.text] = t.pos
        assert [g[0] for g in groups(text)] or not terms(text)


def test_end_to_end_identifiers(tmp_path):
    home = tmp_path / "home"
    (ClaudeSession(home, session_id="dddddddd-0000-4000-8000-00000000000d")
     .user("why does resolve_dirs fail?").assistant("getUserById returns None for bd-q3fy").write())
    ClaudeSession(home, session_id="eeeeeeee-0000-4000-8000-00000000000e").user(
        "nothing to see here").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    try:
        for query, word in [("dirs", "dirs"), ("resolve_dirs", "resolve_dirs"), ("user", "User"),
                            ("getUserById", "getUserById"), ("q3fy", "q3fy"), ("bd-q3fy", "bd-q3fy")]:
            res = engine.search(query)
            [hit] = res.hits
            assert hit.session.session_id == "dddddddd-0000-4000-8000-00000000000d", query
            assert word in hit.item.text, query
            text = hit.item.text
            assert word in [text[s:e] for s, e in Engine.spans(text, res.terms)], query
    finally:
        engine.close()


def test_long_compound_is_data():
    rng = random.Random(3)
    blob = "".join(rng.choice("abcXYZ0189+/_") for _ in range(2000))
    text = f"img {blob} done"
    got = [(t.text, t.kind, t.startchar, t.endchar) for t in text_analyzer()(text, chars=True)]
    assert got[0][0] == "img" and got[-1][0] == "done"
    assert all(kind == "word" for _, kind, _, _ in got)  # no whole form, no pieces
    assert all(len(tok) <= 255 and tok.isalnum() for tok, _, _, _ in got)
    for tok, _, s, e in got:
        assert text[s:e].lower() == tok
    # a long path still gives its runs, in order, at consecutive positions
    path = "/".join(["segment"] * 40) + "/getUserById.ts"
    assert phrase_terms(path)[-2:] == ["getuserbyid", "ts"]
    assert [t.pos for t in text_analyzer()(path, positions=True)] == list(range(42))


def test_sharp_s_and_ligatures_fold_to_their_letters():
    assert terms("Straße STRASSE Æsir œuvre ﬁle") == ["strasse", "aesir", "oeuvre", "file"]


@pytest.mark.parametrize("text, expected", [
    ("isn't", ["isnt"]), ("isn’t", ["isnt"]), ("O'Reilly", ["oreilly"]), ("the user's file", ["the", "user", "file"]),
    ("users' files", ["users", "files"]), ("'quoted'", ["quoted"]), ("d['key']", ["d", "key"]),
])
def test_an_apostrophe_inside_a_word_keeps_it_whole(text, expected):
    assert terms(text) == expected


def test_an_apostrophe_word_is_highlighted_whole():
    text = "no, this isn't it"
    assert [text[a:b] for a, b in spans(text, {"isnt"})] == ["isn't"]


def test_folded_contexts_name_the_folded_letters_with_their_neighbours():
    assert folded_contexts("über Straße münchn plain") == {"uber": ["ub"], "strasse": ["asse"], "munchn": ["mun"]}


def test_group_leaves_keep_the_parts_in_order():
    assert group_leaves("foo.foo getUserById x") == [
        (["foo.foo", "foo"], ["foo", "foo"]), (["getuserbyid", "get", "user", "by", "id"], ["get", "user", "by", "id"]),
        (["x"], ["x"])]


NEAR_WORDS = [
    "token", "refresh", "Token", "REFRESH", "tokenRefresh", "refresh_token", "isn't", "user's", "O'Reilly",
    "a'b'c", "'", "the", "src/auth/token-store.ts", "getUserById", "C++", "#123", "--no-verify", "@types/node",
    "x" * 300, "tok", "fresh", "re-fresh", "token.", "(token)", "refresh,", "tokens", "refreshed", "v1.2.3",
    "user@example.com", "http://x.y/token?refresh=1", "isnt", "token\nrefresh", "a\tb",
]
NEAR_WANTED = ["token", "refresh", "the", "isnt", "user", "oreilly", "tok*", "ref*", "get", "getuserbyid", "c",
               "123", "ts", "x" * 300, "abc"]


def test_ascii_spans_found_near_matches_are_those_of_the_whole_text(monkeypatch):
    """``term_spans`` analyzes ASCII text only around the places a wanted word can be
    (``_near_matches``, issue 13: the app highlights a screenful of long messages per typed
    query); it must give exactly the spans of analyzing the whole text, also for words that
    are not a substring of the text (``isn't`` is ``isnt``), prefixes and long stretches."""
    rng = random.Random(13)
    cases = []
    for _ in range(3000):
        words = rng.choices(NEAR_WORDS, k=rng.randint(1, 50))
        seps = rng.choices([" ", " ", "  ", "", "\n", ".", ", "], k=len(words))
        text = "".join(w + s for w, s in zip(words, seps))
        cases.append((text, set(rng.sample(NEAR_WANTED, rng.randint(1, 4)))))
    cases.append(("prose " * 200 + "isn't it " + "prose " * 200 + "the token", {"isnt", "token"}))
    fast = [highlight.term_spans(text, wanted) for text, wanted in cases]
    monkeypatch.setattr(highlight, "_near_matches",
                        lambda text, wanted, prefixes: text_analyzer()(text, chars=True))
    whole = [highlight.term_spans(text, wanted) for text, wanted in cases]
    assert fast == whole
    assert sum(map(bool, whole)) > 2000  # most cases highlight something

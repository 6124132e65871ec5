"""The shared analyzer: word runs as before, CJK runs as overlapping character bigrams."""

from __future__ import annotations

import pickle

import pytest

from crabsearch.index import Indexer
from crabsearch.index.analysis import CJKBigramTokenizer, spans, terms, text_analyzer
from crabsearch.search import Engine

from builders import ClaudeSession


def toks(text, **kw):
    return [(t.text, t.pos, t.startchar, t.endchar)
            for t in text_analyzer()(text, positions=True, chars=True, **kw)]


def test_mixed_text_terms():
    assert terms("Fix 日付のフォーマット in getUserById café") == [
        "fix", "日付", "付の", "のフ", "フォ", "ォー", "ーマ", "マッ", "ット", "in", "getuserbyid", "cafe"]


def test_non_cjk_text_unchanged():
    assert terms("naïve_snake CASE42 a-b foo.bar") == ["naive_snake", "case42", "a", "b", "foo", "bar"]


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
    assert terms("関数getUser") == ["関数", "getuser"]


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
    origs = [t.original for t in CJKBigramTokenizer()("Ab感冒", keeporiginal=True)]
    assert origs == ["Ab", "感冒"]


def test_picklable():
    ana = pickle.loads(pickle.dumps(text_analyzer()))
    assert [t.text for t in ana("今天 Café")] == ["今天", "cafe"]
    assert CJKBigramTokenizer() == CJKBigramTokenizer()


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
        assert res.route == "all"
        assert [h.session.session_id for h in res.hits] == ["bbbbbbbb-0000-4000-8000-00000000000b"]
    finally:
        engine.close()

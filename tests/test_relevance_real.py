"""The real-transcript relevance benchmark (bench/relevance_real): its BM25 baseline, the hard
set's labelling rules, and both sets' labels against the shared corpus when that is present (CI
has it)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "relevance_real"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import hard_queries  # noqa: E402
import hard_rules  # noqa: E402
import queries  # noqa: E402
from baseline import BM25  # noqa: E402

needs_corpus = pytest.mark.skipif(corpus.locate() is None, reason="the shared corpus is not here")


@pytest.fixture(scope="module")
def real_sessions(tmp_path_factory):
    return corpus.read_sessions(corpus.locate(), tmp_path_factory.mktemp("real"))


def test_tokens_fold_split_and_bigram():
    assert corpus.tokens("Café resolve_dirs getUserById") == ["cafe", "resolve", "dirs", "getuserbyid"]
    assert corpus.tokens("日付の") == ["日付", "付の"]


def test_bm25_prefers_the_rarer_word_and_the_shorter_document():
    docs = [corpus.SessionText("a", "x", "", user=["the cache is stale the cache"]),
            corpus.SessionText("b", "x", "", user=["stale " + "filler " * 40]),
            corpus.SessionText("c", "x", "", user=["stale data"]),
            corpus.SessionText("d", "x", "", user=["nothing here"])]
    bm = BM25(docs)
    assert bm.search("stale") == ["c", "a", "b"]
    assert bm.search("cache stale")[0] == "a"
    assert bm.search("absent") == []


def test_queries_are_labelled_with_known_sessions_and_types():
    assert len(queries.QUERIES) >= 100
    assert len(queries.TYPES) >= 8
    ids = set(queries.SESSIONS.values())
    for q in queries.QUERIES:
        assert q["type"] in queries.TYPES and q["expect"] and set(q["expect"]) <= ids


@needs_corpus
def test_labels_follow_their_rules_on_the_corpus(real_sessions):
    from run import check_labels
    assert check_labels(real_sessions, queries.QUERIES) == []


def test_hard_queries_have_every_type_ten_times_and_known_sessions():
    counts = Counter(q["type"] for q in hard_queries.QUERIES)
    assert len(hard_queries.QUERIES) >= 80
    assert list(counts) == hard_queries.TYPES == list(hard_rules.TYPES)
    assert min(counts.values()) >= 10
    ids = set(hard_queries.SESSIONS.values())
    assert len({q["id"] for q in hard_queries.QUERIES}) == len(hard_queries.QUERIES)
    for q in hard_queries.QUERIES:
        assert q["expect"] and set(q["expect"]) <= ids
        assert (q.get("lang") in hard_rules.LANGS) == (q["type"] == "cross_language")
        assert bool(q.get("decoys")) == (q["type"] == "lookalike")
        assert set(q.get("decoys", [])) <= ids


def _session(*messages, title="", tools=()):
    return corpus.SessionText("s", "x", title, user=list(messages), tools=list(tools))


def _problems(kind, query, session, **extra):
    q = {"id": "q", "type": kind, "query": query, "expect": ["s"], "expect_keys": ["s"], **extra}
    return hard_rules.problems(q, session, "q", {"s": session}, {})


def test_a_pasted_error_must_keep_its_message_and_change_a_volatile_word():
    s = _session("$ run\nfatal: cannot change to '/tmp/work-3CevA7': No such file or directory\n")
    assert _problems("pasted_error", "fatal: cannot change to '/tmp/work-Xk29pQ': No such file or directory", s) == []
    unchanged = _problems("pasted_error", "fatal: cannot change to '/tmp/work-3CevA7': No such file or directory", s)
    assert unchanged == ["q: no volatile word (number, path) was changed: all occur in the session"]
    reworded = _problems("pasted_error", "fatal: cannot move to '/tmp/work-Xk29pQ': No such directory", s)
    assert reworded == ["q: the message words are not in one run of five lines of a message"]


def test_a_pasted_error_matches_a_line_a_terminal_wrapped():
    s = _session("error: Test timed out after 5123ms (killed 1 dangling proce\nss)")
    assert _problems("pasted_error", "error: Test timed out after 5087ms (killed 1 dangling process)", s) == []


def test_pasted_code_is_verbatim_and_code_shaped():
    s = _session("Run `cd $(minsky session cd foo)` in your shell, then go on")
    assert _problems("pasted_code", "cd $(minsky session cd foo)", s) == []
    assert _problems("pasted_code", "cd $(minsky session dir foo)", s) == ["q: the code is not in a message as written"]
    assert _problems("pasted_code", "in your shell", s) == [
        "q: no quote, bracket, operator, path or flag: that is a phrase, not code"]


def test_a_cross_language_query_keeps_names_and_translates_the_rest():
    s = _session("Week widget: remove the ellipses from truncated events")
    assert hard_rules.foreign_words("виджет календаря Claude Code: многоточие", "ru") == [
        ["виджет", "календаря"], ["многоточие"]]
    assert _problems("cross_language", "виджет: убрать многоточие у обрезанных событий", s, lang="ru") == []
    assert _problems("cross_language", "remove the ellipses please", s, lang="ru") == [
        "q: the query is not in the script of its language 'ru'", "q: fewer than two words outside names"]
    copied = _problems("cross_language", "quitar las ellipses from truncated events", s, lang="es")
    assert copied == ["q: more than half of the words outside names occur in the session",
                      "q: two words in a row are copied from a message"]


def test_recall_outcome_and_long_queries_do_not_copy_runs_of_words():
    s = _session("the widget hides start times when a day is clipped")
    assert _problems("recall", "times vanished once a column overflowed", s) == []
    assert _problems("recall", "it hides start times on busy days", s) == [
        "q: a recall query must not copy three words in a row"]
    assert _problems("outcome", "what did we do about busy columns", s) == []
    assert _problems("outcome", "busy columns", s) == ["q: an outcome query is a question"]
    assert _problems("long", "widget start times", s) == ["q: a long query has at least 15 words",
                                                          "q: a long query needs a word the session never uses"]


def test_a_tool_action_needs_a_session_that_called_a_tool():
    acting = _session("I restarted the launcher", tools=["shell"])
    assert _problems("tool_action", "when the agent restarted the home launcher", acting) == []
    assert _problems("tool_action", "when the agent restarted the home launcher", _session("I restarted it")) == [
        "q: the session called no tool"]


def test_a_lookalike_needs_a_deciding_detail_absent_from_its_decoys():
    target = _session("past events one line, fixed with ellipsize")
    decoy = _session("past events one line, fixed with a helper")
    sessions = {"t": target, "d": decoy}
    q = {"id": "q", "type": "lookalike", "expect": ["t"], "expect_keys": ["t"], "decoys": ["d"], "decoy_keys": ["d"]}
    groups = {"g": ["t", "d"]}
    assert hard_rules.problems({**q, "query": "past events one line ellipsize"}, target, "q", sessions, groups) == []
    assert hard_rules.problems({**q, "query": "past events one line"}, target, "q", sessions, groups) == [
        "q: no query word is in the target and in no decoy (no deciding detail)"]


@needs_corpus
def test_hard_labels_follow_their_rules_on_the_corpus(real_sessions):
    from run import check_labels
    assert check_labels(real_sessions, hard_queries.QUERIES, hard_queries.GROUPS) == []

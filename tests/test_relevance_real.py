"""The real-transcript relevance benchmark (bench/relevance_real): its BM25 baseline, and its
labels against the shared corpus when that is present (CI has it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "relevance_real"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import queries  # noqa: E402
from baseline import BM25  # noqa: E402


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


@pytest.mark.skipif(corpus.locate() is None, reason="the shared corpus is not here")
def test_labels_follow_their_rules_on_the_corpus(tmp_path):
    from run import check_labels
    sessions = corpus.read_sessions(corpus.locate(), tmp_path)
    assert check_labels(sessions, queries.QUERIES) == []

"""The engine keeps the last search's best-per-session scans for the next one
(``ladder.ScansKept``): a query typed one key at a time reuses what the key before found, and
answers exactly what a fresh engine answers; only one search's scans are kept, a new index
state drops them, and a scan stopped early is never kept."""

from __future__ import annotations

import threading

import pytest

from crabsearch.index import Indexer, collect
from crabsearch.search import Engine, ladder

from builders import ClaudeSession, CodexSession

WORDS = ["token", "refresh", "error", "database", "timeout", "retry", "the", "cache", "deploy"]


def _write(home, n: int, extra: str = "") -> None:
    s = ClaudeSession(home, f"{n:04d}aaaa-0000-4000-8000-000000000000")
    for i in range(6):
        a, b, c = WORDS[(n + i) % len(WORDS)], WORDS[(n * 2 + i) % len(WORDS)], WORDS[(n * 5 + i) % len(WORDS)]
        s.user(f"the {a} {b} problem again {extra}")
        s.assistant(f"I looked at the {c} and the {a}; {b} {c} is fixed")
    if n % 4 == 0:
        s.title(f"{WORDS[n % len(WORDS)]} {WORDS[(n + 3) % len(WORDS)]} work")
    s.write()


@pytest.fixture()
def index(tmp_path):
    """Sessions holding the words in many combinations (every rung of the ladder has rows), in
    two segments, and a Codex session."""
    home = tmp_path / "home"
    for n in range(40):
        _write(home, n)
        if n == 19:
            Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    CodexSession(home).user("codex: token refresh error").assistant("the database timeout, again").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return home, tmp_path / "index"


def answer(result):
    return ([(h.session.agent, h.session.session_id, h.message_index, round(h.score, 6), h.route, h.explain)
             for h in result.hits], result.notes, result.corrections, result.terms, result.route, result.partial)


def typed(engine, text):
    """The app's search for the text in the box (``SearchScreen._answer``)."""
    return engine.search(text, limit=8, before=0, after=0, time_limit=5, explain=True,
                         typing=not text[-1:].isspace())


def scans(monkeypatch) -> list:
    """Counts the scans that are run (not taken from the last search)."""
    calls = []
    run = collect.best_per_session

    def counted(*args, **kwargs):
        calls.append(args[1])
        return run(*args, **kwargs)

    monkeypatch.setattr(ladder, "best_per_session", counted)
    return calls


@pytest.mark.parametrize("query", ["token refresh", "error zqxjvbnwk", "the database timeout",
                                   "databse timeout", "database -retry", "token agent:claude", "cache*",
                                   "retry since:2020-01-01"])
def test_typing_key_by_key_answers_what_a_fresh_engine_answers(index, query):
    home, index_dir = index
    engine = Engine(index_dir)
    for i in range(1, len(query) + 1):
        text = query[:i]
        assert answer(typed(engine, text)) == answer(typed(Engine(index_dir), text)), text


def test_the_same_search_again_runs_no_scan_and_a_typed_key_fewer(index, monkeypatch):
    home, index_dir = index
    engine = Engine(index_dir)
    calls = scans(monkeypatch)
    typed(engine, "error zqxjvbn")
    first = len(calls)
    assert first > 0
    typed(engine, "error zqxjvbn")
    assert len(calls) == first  # everything kept
    typed(engine, "error zqxjvbnw")  # the unknown word finds nothing: "error" alone, as before
    fresh = scans(monkeypatch)
    typed(Engine(index_dir), "error zqxjvbnw")
    assert 0 < len(calls) - first < len(fresh)


def test_an_engine_that_keeps_no_scans_scans_every_time(index, monkeypatch):
    """``Engine(keep_scans=False)``: what a benchmark repeating one query times."""
    home, index_dir = index
    engine = Engine(index_dir, keep_scans=False)
    calls = scans(monkeypatch)
    typed(engine, "token refresh")
    once = len(calls)
    assert answer(typed(engine, "token refresh")) == answer(typed(Engine(index_dir), "token refresh"))
    assert len(calls) == 2 * once + once  # both searches of this engine scanned, and the fresh one


def test_only_the_last_search_is_kept(index, monkeypatch):
    home, index_dir = index
    engine = Engine(index_dir)
    calls = scans(monkeypatch)
    typed(engine, "token refresh")
    once = len(calls)
    typed(engine, "deploy cache")
    before = len(calls)
    typed(engine, "token refresh")  # another search came between: scanned anew
    assert len(calls) - before == once


def test_a_new_index_state_drops_the_kept_scans(index):
    home, index_dir = index
    engine = Engine(index_dir)
    old = typed(engine, "token")
    assert old.hits
    new = ClaudeSession(home, "ffff0000-0000-4000-8000-000000000000")
    new.user("token token token token").assistant("token").write()
    Indexer(index_dir, env={"HOME": str(home)}).refresh()
    got = typed(engine, "token")
    assert answer(got) == answer(typed(Engine(index_dir), "token"))
    assert got.hits[0].session.session_id == new.session_id


def test_a_stopped_search_keeps_nothing(index, monkeypatch):
    home, index_dir = index
    engine = Engine(index_dir)
    monkeypatch.setattr(collect, "DEADLINE_EVERY", 1)
    stop = threading.Event()
    stop.set()
    stopped = engine.search("token refresh", limit=8, before=0, after=0, stop=stop)
    assert stopped.partial and not stopped.hits
    assert answer(typed(engine, "token refresh")) == answer(typed(Engine(index_dir), "token refresh"))
    assert typed(engine, "token refresh").hits

"""Rows from transcripts the index does not hold yet, while a build runs (``search.pending``)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from builders import ClaudeSession, CodexSession
from source_checks import run_cli

OLD = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
NEW = "019a0000-1111-7222-8333-444455556666"


@pytest.fixture
def half_built(tmp_path):
    """A home whose newest session (Codex) is indexed and whose oldest (Claude Code, a
    ``zyzzyva`` word in a prompt, ``TOKEN`` in upper case in a reply) is not yet; ``(home,
    index_dir, indexer)``."""
    from crabsearch.index.writer import Indexer
    from crabsearch.sources import SOURCES

    home = tmp_path / "home"
    old = ClaudeSession(home, session_id=OLD, cwd="/home/dev/app").user(
        "the zyzzyva parser drops the last field").assistant("The splitter stops at TOKEN ends.").write()
    os.utime(old, (1_700_000_000, 1_700_000_000))
    CodexSession(home, session_id=NEW).user("parser rejects step values").assistant("Use */5").write()
    index_dir = tmp_path / "index"
    Indexer(index_dir, env={"HOME": str(home)}, sources=[SOURCES["codex"]]).refresh()
    return home, index_dir, Indexer(index_dir, env={"HOME": str(home)})


def test_a_word_of_an_unindexed_transcript_gives_a_marked_row(half_built):
    from crabsearch.hits import NOT_INDEXED, structure_notes
    from crabsearch.search.pending import Unindexed

    _, _, indexer = half_built
    rows = Unindexed(indexer).scan("zyzzyva parser", limit=5)
    assert [(h.session.session_id, h.indexed, h.route, h.message_index) for h in rows] == [
        (OLD, False, "unindexed", 0)]
    assert rows[0].window[0].hit and "zyzzyva" in rows[0].window[0].text
    assert structure_notes(rows[0])[0] == NOT_INDEXED
    assert rows[0].to_json()["indexed"] is False
    # any case in the file, the query's words in any order; an indexed session is not scanned
    assert [h.message_index for h in Unindexed(indexer).scan("token splitter", limit=5)] == [1]
    assert Unindexed(indexer).scan("step values", limit=5) == []
    assert Unindexed(indexer).scan("zyzzyva", limit=5, skip={f"claude:{OLD}"}) == []


def test_words_only_in_tool_output_or_split_over_messages_give_no_row(half_built, tmp_path):
    from crabsearch.search.pending import Unindexed

    _, _, indexer = half_built
    assert Unindexed(indexer).scan("zyzzyva reply", limit=5) == []  # "reply" nowhere
    assert Unindexed(indexer).scan("zyzzyva splitter", limit=5) == []  # two messages
    assert Unindexed(indexer).scan("agent:codex zyzzyva", limit=5) == []
    assert Unindexed(indexer).scan("zyzzyva -parser", limit=5) == []  # exclusions: not scanned


def test_a_scan_stops_when_told(half_built):
    from crabsearch.search.pending import Unindexed

    stop = threading.Event()
    stop.set()
    assert Unindexed(half_built[2]).scan("zyzzyva", limit=5, stop=stop) == []


def test_cli_search_during_another_build_adds_the_unindexed_rows(half_built, capsys, monkeypatch):
    from crabsearch.index.store import write_lock

    home, index_dir, _ = half_built
    for name, value in (("HOME", home), ("CRABSEARCH_INDEX_DIR", index_dir)):
        monkeypatch.setenv(name, str(value))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("crabsearch.index.store.READ_LOCK_WAIT", 0.05)
    held, release = threading.Event(), threading.Event()

    def build():  # another process's build, holding the writers' lock
        with write_lock(index_dir):
            held.set()
            release.wait(30)

    t = threading.Thread(target=build)
    t.start()
    held.wait(10)
    try:
        code, out, err = run_cli(capsys, "search", "zyzzyva", "--json")
        code2, text, _ = run_cli(capsys, "search", "zyzzyva")
    finally:
        release.set()
        t.join()
    assert code == 0 and "another crabsearch is updating the index" in err, err
    hits = json.loads(out)["hits"]
    assert [(h["session_id"], h["indexed"], h["route"]) for h in hits] == [(OLD, False, "unindexed")]
    assert code2 == 0 and "not fully indexed yet" in text
    # once built, the same row comes from the index
    code, out, _ = run_cli(capsys, "search", "zyzzyva", "--json")
    assert [(h["session_id"], h["indexed"]) for h in json.loads(out)["hits"]] == [(OLD, True)]


async def test_the_app_adds_the_unindexed_rows_marked_while_indexing(half_built):
    """While the index is being updated, a search's indexed rows come first, then the rows of
    the transcripts not read yet, each noted "not fully indexed yet"."""
    from rich.console import Console

    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.results import ResultList

    home, index_dir, _ = half_built
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, index_on_start=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        app.indexing = True  # a build is running: the Claude Code transcript is not read yet
        await pilot.press(*"parser")
        results = app.screen.query_one(ResultList)
        for _ in range(200):
            await app.workers.wait_for_complete()
            await pilot.pause(0.05)
            if len(results.hits) == 2:
                break
        assert [(h.session.session_id, h.indexed) for h in results.hits] == [(NEW, True), (OLD, False)]
        console = Console(width=100, record=True, color_system=None)
        console.print(results.get_option_at_index(1).prompt)
        row = console.export_text()
        assert "not indexed yet below" in row and "not fully indexed yet" in row
        app.indexing = False


def test_a_search_again_goes_on_where_the_last_one_stopped(half_built, monkeypatch):
    """Each commit of a build searches again: what a transcript gave is kept (until it changes),
    so a scan stopped by the next search is not started over."""
    from crabsearch.search import pending

    home, _, indexer = half_built
    u = pending.Unindexed(indexer)
    assert len(u.scan("zyzzyva", limit=5)) == 1
    read = []
    real = pending._holds
    monkeypatch.setattr(pending, "_holds", lambda path, finding: read.append(path) or real(path, finding))
    assert len(u.scan("zyzzyva", limit=5)) == 1 and read == []
    monkeypatch.setattr(pending, "LIST_SECONDS", 0.0)
    (old,) = (home / ".claude" / "projects").rglob(f"{OLD}.jsonl")
    os.utime(old, (1_700_000_100, 1_700_000_100))  # changed: looked at again
    assert len(u.scan("zyzzyva", limit=5)) == 1 and len(read) == 1

"""The recent sessions kept beside the index for the app's first frame (``search.snapshot``):
shown only while the index is in the state they were read from, for the same listing; anything
else (a commit since, another limit or masking, a broken or foreign file) is a miss, and the
rows come from the index as before."""

from __future__ import annotations

import os
import pickle
import stat

from crabsearch.index import Indexer
from crabsearch.search import Engine, snapshot
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.results import ResultList
from crabsearch.tui.screens import RESULT_LIMIT, SearchScreen

from builders import NOW, ClaudeSession, CodexSession
from builders import settle


def built(tmp_path, *prompts):
    home = tmp_path / "home"
    for p in prompts:
        ClaudeSession(home).user(p).assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return home, tmp_path / "index"


def test_recent_rows_are_kept_for_their_listing_and_index_state(tmp_path):
    home, index = built(tmp_path, "a capybara session", "a wombat session")
    assert snapshot.load(index, 50, True) is None  # nothing listed yet
    rows = Engine(index).recent(limit=50, redact=True)
    assert len(rows) == 2
    assert snapshot.load(index, 50, True) == rows
    assert snapshot.load(index, 20, True) is None and snapshot.load(index, 50, False) is None
    path = index / snapshot.FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    unmasked = Engine(index, redact=False).recent(limit=20)
    assert snapshot.load(index, 20, False) == unmasked and snapshot.load(index, 50, True) == rows

    ClaudeSession(home).user("a third session, about a quokka").write()
    Indexer(index, env={"HOME": str(home)}).refresh()  # a commit: the index moved on
    assert snapshot.load(index, 50, True) is None
    again = Engine(index).recent(limit=50, redact=True)
    assert len(again) == 3 and snapshot.load(index, 50, True) == again


def test_an_agents_listing_is_not_kept(tmp_path):
    home, index = built(tmp_path, "a capybara session")
    CodexSession(home).user("a codex session").write()
    Indexer(index, env={"HOME": str(home)}).refresh()
    Engine(index).recent(limit=50, agent="codex", redact=True)
    assert not (index / snapshot.FILE).exists()


def test_a_broken_or_foreign_snapshot_is_a_miss_and_is_replaced(tmp_path):
    _, index = built(tmp_path, "a capybara session")
    path = index / snapshot.FILE
    state = snapshot.state(index)
    assert state is not None
    for junk in (b"", b"\x80\x05garbage", pickle.dumps(["not", "a", "snapshot"]),
                 pickle.dumps({"shape": (0,), "state": state, "rows": {(50, True): []}}),
                 pickle.dumps({"shape": snapshot._shape(), "state": state, "rows": {(50, True): ["a row?"]}})):
        path.write_bytes(junk)
        assert snapshot.load(index, 50, True) is None
    rows = Engine(index).recent(limit=50, redact=True)
    assert rows and snapshot.load(index, 50, True) == rows


def test_no_index_no_snapshot(tmp_path):
    assert snapshot.state(tmp_path / "none") is None
    assert snapshot.load(tmp_path / "none", 50, True) is None
    assert Engine(tmp_path / "none").recent(limit=50) == []
    assert not (tmp_path / "none").exists()


async def test_the_app_paints_the_kept_rows_before_opening_the_index(tmp_path, monkeypatch):
    """A start on an index unchanged since the last listing: the first frame has the kept rows
    and the index is not opened for it (no searcher yet); after that paint the app opens the
    index, refreshes it and lists a session written since."""
    from textual.app import App

    home, index = built(tmp_path, "a capybara session", "a wombat session")
    Engine(index).recent(limit=RESULT_LIMIT, redact=True)
    frames = []
    display = App._display

    def frame(self, screen, renderable):
        if renderable is not None and isinstance(screen, SearchScreen):
            frames.append((screen.query_one(ResultList).option_count, self.engine._searcher is None))
        return display(self, screen, renderable)

    monkeypatch.setattr(App, "_display", frame)
    ClaudeSession(home).user("a quokka session written since").assistant("ok").write()
    app = CrabsearchApp(index, env={"HOME": str(home)}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        results = app.screen.query_one(ResultList)
        for _ in range(100):
            await settle(pilot)
            if results.option_count == 3:
                break
        assert app.first_list_kept
        assert frames[0] == (2, True)
        assert results.option_count == 3
    assert snapshot.load(index, RESULT_LIMIT, True) is not None  # the new listing is kept


async def test_a_stale_snapshot_is_not_shown(tmp_path):
    """The index changed since the rows were kept (another process refreshed it): the first
    list is read from the index."""
    home, index = built(tmp_path, "a capybara session")
    Engine(index).recent(limit=RESULT_LIMIT, redact=True)
    ClaudeSession(home).user("a wombat session").assistant("ok").write()
    Indexer(index, env={"HOME": str(home)}).refresh()
    app = CrabsearchApp(index, env={"HOME": str(home)}, now=NOW, index_on_start=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert not app.first_list_kept
        assert app.screen.query_one(ResultList).option_count == 2

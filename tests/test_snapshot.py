"""The recent sessions kept beside the index for the app's first frame (``search.snapshot``):
shown only while the index is in the state they were read from, for the same listing; anything
else (a commit since, another limit or masking, a broken or foreign file) is a miss, and the
rows come from the index as before."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

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
    assert snapshot.load(index, 50) is None  # nothing listed yet
    rows = Engine(index).recent(limit=50, redact=True)
    assert len(rows) == 2
    assert snapshot.load(index, 50) == rows
    assert snapshot.load(index, 20) is None
    path = index / snapshot.FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    flagged = Engine(index, resume_flags={"claude": "--model opus"}).recent(limit=50)
    assert snapshot.load(index, 50, {"claude": "--model opus"}) == flagged != rows
    assert "--model opus" in flagged[0].ref.resume_command
    assert snapshot.load(index, 50, {"claude": "--model sonnet"}) is None  # the config changed since
    assert snapshot.load(index, 50) == rows

    ClaudeSession(home).user("a third session, about a quokka").write()
    Indexer(index, env={"HOME": str(home)}).refresh()  # a commit: the index moved on
    assert snapshot.load(index, 50) is None
    again = Engine(index).recent(limit=50, redact=True)
    assert len(again) == 3 and snapshot.load(index, 50) == again


def test_unmasked_rows_are_never_written(tmp_path):
    """``--no-redact`` and the app's Ctrl+R list unmasked rows: they stay in memory."""
    home = tmp_path / "home"
    ClaudeSession(home).user("my key is sk-ant-api03-" + "a1B2c3D4" * 6).assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    index = tmp_path / "index"
    rows = Engine(index, redact=False).recent(limit=50)
    assert "a1B2c3D4a1B2" in rows[0].window[0].text
    assert not (index / snapshot.FILE).exists()
    masked = Engine(index).recent(limit=50)
    assert "a1B2c3D4a1B2" not in masked[0].window[0].text
    assert b"a1B2c3D4a1B2" not in (index / snapshot.FILE).read_bytes()


def test_a_row_whose_transcript_is_gone_is_read_from_the_index(tmp_path):
    home, index = built(tmp_path, "a capybara session", "a wombat session")
    rows = Engine(index).recent(limit=50)
    Path(rows[0].session.path).unlink()
    assert snapshot.load(index, 50) is None


def test_an_agents_listing_is_not_kept(tmp_path):
    home, index = built(tmp_path, "a capybara session")
    CodexSession(home).user("a codex session").write()
    Indexer(index, env={"HOME": str(home)}).refresh()
    Engine(index).recent(limit=50, agent="codex", redact=True)
    assert not (index / snapshot.FILE).exists()


def test_a_broken_or_foreign_snapshot_is_a_miss_and_is_replaced(tmp_path):
    """Garbage, another shape, a file too large, a directory, a FIFO (opened without waiting
    for a writer), a link (never followed, never written through): a miss, then a new 0600
    file of the rows in its place."""
    _, index = built(tmp_path, "a capybara session")
    path = index / snapshot.FILE
    state = snapshot.state(index)
    assert state is not None
    key = snapshot._listing(50, None)
    outside = tmp_path / "outside"
    outside.write_bytes(pickle.dumps({"shape": snapshot._shape(), "state": state, "rows": {key: []}}))
    outside.chmod(0o644)
    for junk in (b"", b"\x80\x05garbage", pickle.dumps(["not", "a", "snapshot"]),
                 pickle.dumps({"shape": (0,), "state": state, "rows": {key: []}}),
                 pickle.dumps({"shape": snapshot._shape(), "state": state, "rows": {key: ["a row?"]}}),
                 b"\x80\x05" + b" " * (snapshot.MAX_BYTES + 1), "dir", "fifo", "link"):
        if path.is_dir():
            path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
        if junk == "dir":
            path.mkdir()
        elif junk == "fifo":
            os.mkfifo(path)
        elif junk == "link":
            path.symlink_to(outside)
        else:
            path.write_bytes(junk)
        assert snapshot.load(index, 50) is None
    rows = Engine(index).recent(limit=50, redact=True)
    assert rows and snapshot.load(index, 50) == rows
    assert not path.is_symlink() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert pickle.loads(outside.read_bytes())["rows"] == {key: []}  # not written through the link


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
    assert snapshot.load(index, RESULT_LIMIT) is not None  # the new listing is kept


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

"""The status panel (F2): the directories looked in, long paths, Aider sessions, following the live
refresh."""

from __future__ import annotations

import pytest

from builders import NOW, ClaudeSession, settle
from crabsearch.tui.app import CrabsearchApp
from tui_helpers import screen_rows, until


async def test_status_names_the_directories_from_the_config_file(sample, tmp_path):
    from crabsearch import config
    from crabsearch.tui.panels import StatusScreen

    home, index_dir = sample
    code = tmp_path / "my code"
    code.mkdir()
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(sources={"aider": [str(code)], "claude": [str(tmp_path / "old")]}))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen)
        text = app.status_text()
        assert f"looked in {code}\n" in text and f"looked in {tmp_path / 'old'}" in text
        assert text.count(f"looked in {home}\n") == 1  # Aider's home once, not once per directory


@pytest.mark.parametrize("width", [80, 120])
async def test_the_status_panel_breaks_a_long_path_only_between_folders(sample, tmp_path, width):
    from crabsearch import config

    home, index_dir = sample
    deep = tmp_path.joinpath(*[f"folder{n:02d}-abcdefgh" for n in range(9)], "opencode")
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(sources={"opencode": [str(deep)]}))
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        rows = [row.strip("│ ") for row in screen_rows(app)]
        shown = "\n".join(rows)
        # no folder name cut; "(not found)" may wrap, wherever the temporary folder puts the path's end
        assert shown.count("-abcdefgh") == 9 and "opencode (not found)" in " ".join(rows), shown
        at = next(i for i, row in enumerate(rows) if "folder00" in row)
        joined = "".join(rows[at - 1:at + 5])  # the path's pieces, joined again: the path whole
        assert str(deep) in joined and all(f"/folder{n:02d}-abcdefgh/" in joined for n in range(9)), shown


def _aider_log(path, chats: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"# aider chat started at 2026-03-{n + 1:02d} 10:00:00\n\n#### question {n}\n\n"
                            f"answer {n}\n\n" for n in range(chats)))


async def test_the_status_panel_counts_aider_sessions_in_their_files(tmp_path):
    """Aider keeps many sessions in one history file: the panel said "22 transcripts found"
    for 2 files."""
    from crabsearch.index import Indexer
    from crabsearch.tui.panels import StatusScreen

    home = tmp_path / "home"
    _aider_log(home / "code" / "a" / ".aider.chat.history.md", 12)
    _aider_log(home / "code" / "b" / ".aider.chat.history.md", 10)
    ClaudeSession(home).user("one claude session").write()
    env = {"HOME": str(home), "CRABSEARCH_AIDER_DIRS": str(home / "code")}
    Indexer(tmp_path / "index", env=env).refresh()
    app = CrabsearchApp(tmp_path / "index", env=env, now=NOW, index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen)
        text = str(app.screen.query_one(".panel-body").render())
        aider = next(line for line in text.splitlines() if line.startswith("Aider:"))
        assert aider.startswith("Aider: 22 sessions found in 2 files, 22 sessions and 44 messages indexed")
        claude = next(line for line in text.splitlines() if line.startswith("Claude Code:"))
        assert claude.startswith("Claude Code: 1 transcript found, 1 session and 1 message indexed")


async def test_the_status_panel_follows_every_refresh_of_the_live_watcher(tmp_path, monkeypatch):
    from crabsearch.index.layout import LAST_REFRESH
    from crabsearch.tui import screens
    from crabsearch.tui.panels import StatusScreen

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)  # only file events refresh
    home = tmp_path / "home"
    ClaudeSession(home, session_id="66666666-0000-4000-8000-000000000001").user("first session").write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        (tmp_path / "index" / LAST_REFRESH).write_text("2000-01-01T00:00:00+00:00")
        await pilot.press("f2")
        await pilot.pause()
        body = app.screen.query_one(".panel-body")
        assert isinstance(app.screen, StatusScreen) and "last refresh: 2000-01-01" in str(body.render())
        ClaudeSession(home, session_id="66666666-0000-4000-8000-000000000002").user("a second one").write()
        await until(pilot, lambda: "Claude Code: 2 transcripts found, 2 sessions" in str(body.render()))
        assert "2000-01-01" not in str(body.render())

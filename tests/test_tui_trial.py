"""Pilot tests of issue 15: what a new user's trial of the app found (each failed before its fix)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from builders import NOW, ClaudeSession, settle
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.results import ResultList


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """60 sessions that all mention "capybara"; every third also says "bath" (the refined
    query keeps some sessions of the first, in other places)."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("many")
    home = root / "home"
    for n in range(60):
        words = "capybara wants " + ("a bath " if n % 3 == 0 else "a nap ") + "and more words " * n
        ClaudeSession(home, session_id=f"00000000-0000-4000-8000-{n:012d}", cwd=f"/w/p{n}",
                      start=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(hours=n)).user(
            words).title(f"session {n}").write()
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"


def app_of(home_index, **kw) -> CrabsearchApp:
    home, index_dir = home_index
    kw.setdefault("index_on_start", False)
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, cursor_blink=False, **kw)


# -- defect 1: a new result list starts at its first row ---------------------------------------


async def test_a_refined_query_starts_at_the_first_row(many):
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        await pilot.press("down", *["down"] * 30)
        assert results.highlighted >= 20 and results.scroll_y > 0
        await pilot.press(*" bath")  # typing in the list goes to the box
        await settle(pilot)
        assert "bath" in results.hits[0].item.text
        assert results.highlighted == 0 and results.scroll_y == 0
        await pilot.press("down", "enter", "o")  # opens the new top session, not the old one
        await settle(pilot)
        assert app.screen.hit.session.session_id == results.hits[0].session.session_id


async def test_clearing_the_box_lists_recent_sessions_from_the_top(many):
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        await pilot.press("down", *["down"] * 25, "escape", "escape")  # to the box, then clear it
        await settle(pilot)
        assert app.screen.query_text == ""
        assert results.highlighted == 0 and results.scroll_y == 0


async def test_a_refresh_of_the_same_query_keeps_the_cursor(many):
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        await pilot.press("down", *["down"] * 12)
        sid = results.current_hit.session.session_id
        app.screen.run_query(app.screen.query_text)  # what an index refresh does
        await settle(pilot)
        assert results.current_hit.session.session_id == sid


# -- defect 4: the copy file is private, whoever made its directory --------------------------


async def test_copy_file_is_private_even_in_an_open_directory_after_reveal(sample, tmp_path):
    import os
    import stat

    cache = tmp_path / "cache" / "crabsearch"
    cache.mkdir(parents=True, mode=0o755)
    os.chmod(cache, 0o755)  # made by an older version, or by hand
    copy_file = cache / "last-copy.txt"
    copy_file.write_text("old")
    os.chmod(copy_file, 0o644)
    app = app_of(sample)
    app.copy_file = copy_file
    app.copy_to_clipboard = lambda text: None
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("ctrl+r")  # revealed: the copy may hold a secret in clear
        await settle(pilot)
        await pilot.press("down", "c", "m")
        assert "idempotent" in copy_file.read_text()
    assert stat.S_IMODE(copy_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700

"""Errors in the app: a failed search or engine call is one line (the details logged), never a
crash."""

from __future__ import annotations

from builders import settle
from crabsearch.tui.results import ResultList
from tui_helpers import app_of, screen_words


async def test_an_unexpected_search_error_shows_one_line_and_logs_the_details(sample, tmp_path):
    app = app_of(sample)
    app.error_log = tmp_path / "errors.log"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)

        def broken(*args, **kwargs):
            raise ValueError("Reader already closed: secret words")

        app.engine.search = broken
        await pilot.press(*"cron")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert status.startswith("The search failed unexpectedly; the details are in")
        assert "Reader already closed" not in screen_words(app)
        assert "ValueError: Reader already closed" in app.error_log.read_text()
        assert oct(app.error_log.stat().st_mode)[-3:] == "600"


async def test_an_error_reading_the_filters_is_shown_not_the_rows_before(sample, tmp_path, monkeypatch):
    """The filters are read inside the search's error handling: an exception there (a
    fresh-user trial: a date past Python's range) said nothing and left the last query's rows
    on screen as if they were the answer."""
    from crabsearch.tui import screens

    app = app_of(sample)
    app.error_log = tmp_path / "errors.log"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)

        def broken(*args, **kwargs):
            raise OverflowError("date value out of range")

        monkeypatch.setattr(screens, "check_filters", broken)
        await pilot.press(*" since:9d")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert status.startswith("The search failed unexpectedly") and app.screen.result.hits == []


async def test_engine_errors_on_the_app_s_own_thread_are_one_line_not_a_crash(sample, tmp_path):
    """Expanding a row, opening a session and copying a message call the engine on the app's
    thread: an exception there (an index swapped under a reader, a bug) is shown, not fatal."""
    app = app_of(sample)
    app.error_log = tmp_path / "errors.log"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)

        def broken(*args, **kwargs):
            raise ValueError("Reader already closed")

        said = []  # each error's toast takes the place of the last (one toast per kind): kept here
        unnotify = app._unnotify

        def replaced(notification, refresh=True):
            said.append(notification.message)
            unnotify(notification, refresh)

        app._unnotify = replaced
        app.engine.window = app.engine.page = app.engine.matching_messages = broken
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.is_running and app.screen.query_one(ResultList).expanded[0][2] == []
        await pilot.press("o")
        await settle(pilot)
        await pilot.press("]", "c", "m")
        await settle(pilot)
        assert app.is_running
        said = " ".join(said + [n.message for n in app._notifications])
        assert "Reading the context window failed unexpectedly" in said
        assert "Reading the session failed unexpectedly" in said
        assert "Reader already closed" not in said

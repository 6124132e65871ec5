"""Pilot tests: a session whose transcript was deleted while its view was open is exported and
copied from the messages the view holds, never as a file that claims messages it does not hold.
Each failed before its fix."""

from __future__ import annotations

import pytest

from builders import NOW, ClaudeSession, settle
from crabsearch.tui.app import CrabsearchApp
from test_tui_session import opened, said, until
from crabsearch.tui.results import ResultList
from crabsearch.tui.session import SessionScreen
from tui_helpers import app_of


def live_app(tmp_path, monkeypatch, messages: int):
    """A session of ``messages`` about "gannet", and an app that refreshes on file events only,
    exports into ``tmp_path/out`` and copies into ``tmp_path/last-copy.txt``."""
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)
    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="dddddddd-0000-4000-8000-000000000001", cwd="/home/dev/birds")
    for n in range(messages):
        (s.user if n % 2 == 0 else s.assistant)(f"gannet note {n}")
    path = s.write()
    (tmp_path / "out").mkdir()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home), "PWD": str(tmp_path / "out")}, now=NOW,
                        cursor_blink=False)
    app.copy_file = tmp_path / "last-copy.txt"
    return path, app


async def deleted(app, pilot, path):
    """Open the session, delete its transcript and wait until the refresh dropped it from the
    index (the view then says the transcript is gone)."""
    view = await opened(app, pilot, "gannet")
    ref = app.screen.hit.ref
    path.unlink()
    await until(pilot, lambda: not app.engine.page(ref, 0, 1).messages)
    await settle(pilot)
    await until(pilot, lambda: view.gone)
    return view


async def exported(app, pilot, *keys) -> str:
    await pilot.press(*keys)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return said(app)


async def test_a_deleted_sessions_export_holds_the_messages_the_view_holds(tmp_path, monkeypatch):
    """``E`` ``s`` wrote the header, ``Messages: 4``, and no message: the export read the index,
    which no longer held the session. It writes the four messages the view shows."""
    path, app = live_app(tmp_path, monkeypatch, 4)
    async with app.run_test(size=(100, 30)) as pilot:
        await deleted(app, pilot, path)
        assert "Exported to" in await exported(app, pilot, "E", "s")
        text = (tmp_path / "out" / "claude-dddddddd-0000-4000-8000-000000000001.md").read_text()
        assert "- **Messages:** 4\n" in text
        assert [f"gannet note {n}" in text for n in range(4)] == [True] * 4
        assert text.count("\n### #") == 4


async def test_a_deleted_sessions_export_says_which_messages_it_holds(tmp_path, monkeypatch):
    """A view that read only part of a long session exports that part, and its header says which
    part and why."""
    path, app = live_app(tmp_path, monkeypatch, 120)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await deleted(app, pilot, path)
        read = view.loaded
        assert 0 < len(read) < 120
        await exported(app, pilot, "E", "s")
        text = (tmp_path / "out" / "claude-dddddddd-0000-4000-8000-000000000001.md").read_text()
        assert (f"- **Messages:** 120 (exported: #{read[0] + 1}-#{read[-1] + 1}, the messages read before "
                "its transcript was deleted or moved)\n") in text
        assert text.count("\n### #") == len(read)


async def test_the_results_export_of_a_dropped_session_writes_no_file(tmp_path, monkeypatch):
    """From the results, a session the index no longer holds (its transcript deleted since the
    list was shown) has nothing to export or copy: no file, nothing copied, and the toast says
    why."""
    path, app = live_app(tmp_path, monkeypatch, 4)
    async with app.run_test(size=(100, 30)) as pilot:
        await deleted(app, pilot, path)
        await pilot.press("escape")  # back to the results, which still list it
        await settle(pilot)
        message = await exported(app, pilot, "E", "s")
        assert "Nothing exported" in message and "transcript is gone" in message
        assert not list((tmp_path / "out").iterdir())
        await pilot.press("c", "m")  # nor a message to copy: said, not a silent nothing
        await pilot.pause()
        assert "Message #1 cannot be read: the transcript is gone" in said(app)


async def test_copy_message_copies_the_message_the_view_shows(tmp_path, monkeypatch):
    """``c`` ``m`` read the message from the index: after the refresh dropped the deleted
    session it copied nothing, silently. It copies the message at the cursor as the view holds
    it."""
    path, app = live_app(tmp_path, monkeypatch, 4)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(100, 30)) as pilot:
        view = await deleted(app, pilot, path)
        view.go_to(2)
        await pilot.pause()
        await pilot.press("c", "m")
        await pilot.pause()
        assert copied == ["gannet note 2"]


@pytest.mark.parametrize("reveal", [False, True])
async def test_copy_message_copies_what_the_view_shows_of_a_secret(tmp_path, reveal):
    """``c`` ``m`` in the session view copies the message masked or, after Ctrl+R, unmasked, as
    the view shows it (it read the index with the engine's setting, masked after Ctrl+R too)."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="eeeeeeee-0000-4000-8000-000000000001")
    s.user("the gannet key is AKIAIOSFODNN7EXAMPLE").assistant("noted").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False,
                        cursor_blink=False)
    app.copy_file = tmp_path / "last-copy.txt"
    copied: list[str] = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot, "gannet")
        if reveal:
            await pilot.press("ctrl+r")
            await pilot.pause()
        await pilot.press("c", "m")
        await pilot.pause()
        assert copied == ["the gannet key is " + ("AKIAIOSFODNN7EXAMPLE" if reveal else "AKIAIO***MPLE")]


def _one_session(tmp_path, n: int, word: str):
    """A home with one Claude Code session about ``word``, indexed: ``(its transcript, an app
    on the index, not refreshing on its own)``."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    path = (ClaudeSession(home, session_id=f"44444444-0000-4000-8000-00000000000{n}")
            .user(f"the {word} migration").assistant(f"done with the {word}").write())
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return path, CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False,
                               cursor_blink=False)


async def test_a_deleted_transcript_says_it_is_gone(tmp_path):
    path, app = _one_session(tmp_path, 1, "heron")
    path.unlink()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"heron")
        await settle(pilot)
        await pilot.press("down", "enter")
        window = app.screen.query_one(ResultList).expanded[0][2]
        assert window and all("the transcript is gone (deleted or moved" in it.text for it in window)
        await pilot.press("o")  # nothing to page through: the list stays, and says why
        await settle(pilot)
        assert not isinstance(app.screen, SessionScreen)
        said = " ".join(n.message for n in app._notifications)
        assert "transcript is gone (deleted or moved since it was indexed)" in said


async def test_a_session_the_index_no_longer_holds_says_so_instead_of_an_empty_view(sample):
    """A row listed before a refresh dropped its session (the transcript was rewritten): the
    session view has no page to show, and says so."""
    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        app.engine.page = lambda *a, **k: type("P", (), {"messages": []})()
        await pilot.press("down", "o")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        said = " ".join(n.message for n in app._notifications)
        assert "Nothing to show: this session's transcript is no longer what was indexed" in said


async def test_a_row_expanded_after_a_refresh_dropped_its_deleted_session_says_it_is_gone(tmp_path):
    """The list was shown, the transcript deleted, a refresh removed its messages from the index;
    then Enter on the row: its window is empty, and the row says the transcript is gone."""
    path, app = _one_session(tmp_path, 2, "osprey")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"osprey")
        await settle(pilot)
        path.unlink()
        app.indexer.refresh()
        await pilot.press("down", "enter")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert results.expanded[0][2] == []
        assert "the transcript is gone (deleted or moved" in str(results.get_option_at_index(0).prompt.row.renderables[-1])

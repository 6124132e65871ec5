"""Pilot tests of issue 15: what a new user's trial of the app found (each failed before its fix)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from builders import NOW, ClaudeSession, settle
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.indexing import IndexingProgress
from crabsearch.tui.results import ResultList
from crabsearch.tui.session import SessionScreen


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


async def test_a_new_list_paints_a_screenful_first_then_the_rest(many, monkeypatch):
    """A new result list renders a screenful of rows before its first paint and the others right
    after; rows added late never land on a list that other results replaced meanwhile."""
    from crabsearch.tui.results import FIRST_ROWS

    first_counts = []
    original = ResultList.show

    def spy(self, hits, terms, **kw):
        original(self, hits, terms, **kw)
        if hits:
            first_counts.append((len(hits), self.option_count))

    monkeypatch.setattr(ResultList, "show", spy)
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert first_counts[0] == (50, FIRST_ROWS)  # the recent sessions, first paint
        assert results.option_count == 50 and app.screen.query_one(ResultList).highlighted == 0
        hits = list(results.hits)
        results.show(hits[:40], [], keep=False)  # a new list: 20 rows, the rest queued...
        queued = results._generation
        assert results.option_count == FIRST_ROWS
        results.show(hits[40:43], [], keep=False)  # ...and replaced before the next paint
        results._add_rest(queued)  # what the queued call then does
        assert results.option_count == 3 and results.hits == hits[40:43]


async def test_rows_below_the_first_screenful_wait_while_a_newer_list_is_coming(many):
    """While the user types on, a list's rows below the first screenful are not rendered: the
    next key's list replaces them. They are rendered once no newer list is on its way, when the
    screen holds the newer one back, and the last list of a typed query has them all (a typed
    query lists a screenful)."""
    from crabsearch.tui.results import FIRST_ROWS

    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        hits = list(results.hits)
        coming, screens_own = [True], results.newer_coming
        results.newer_coming = lambda: coming[0]
        results.show(hits[:40], [], keep=False)
        await pilot.pause()
        assert results.option_count == FIRST_ROWS  # waiting: not rendered for a list replaced soon
        results.show(hits[:30], [], keep=False)  # the newer list: nothing left waiting from before
        coming[0] = False
        results.add_waiting_rows()
        assert results.option_count == FIRST_ROWS
        await pilot.pause()
        assert results.option_count == 30  # no newer list on its way: all rows
        coming[0] = True
        results.show(hits[:40], [], keep=False)
        await pilot.pause()
        assert results.option_count == FIRST_ROWS
        results.add_waiting_rows()  # the screen held the newer list back: these rows stay
        assert results.option_count == 40
        results.newer_coming = screens_own  # the screen's: a search asked for since the rows
        await pilot.press(*"capybara")
        await settle(pilot)
        assert app.screen.settled and results.option_count == len(results.hits) == results.screenful()


async def test_a_key_in_the_search_box_repaints_it_without_a_layout(many):
    """Input's text width is its virtual size; as Widget's reactive, every key asked for a
    layout of the whole screen (~10 ms at 1 GB). The box repaints, and a text longer than the
    box still scrolls to keep the cursor in view."""
    from crabsearch.tui.filters import QueryInput

    app = app_of(many)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        box = app.screen.query_one(QueryInput)
        layouts, original = [], box.refresh

        def spy(*a, **k):
            layouts.append(bool(k.get("layout")))
            return original(*a, **k)

        box.refresh = spy
        await pilot.press(*"capy")
        assert len(layouts) >= 4 and not any(layouts)
        assert box.virtual_size.width == len("capy") + 1
        await pilot.press(*" bara" * 15)
        await pilot.pause()
        assert box.scroll_offset.x > 0 and box.cursor_screen_offset.x < box.region.right
        await settle(pilot)
        assert app.screen.result.query == box.value


async def test_keys_typed_in_one_burst_on_the_list_all_reach_the_search_box(many):
    """Keys typed fast (or pasted by a terminal without bracketing) while the list has the focus
    arrive before the focus has moved to the search box: every printable one is text, a key
    bound to a command (o open, r resume, x explain, v editor) too; none is lost or run. Once
    the list has the focus again, those keys are commands."""
    from textual import events

    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        results.focus()
        await pilot.pause()
        burst = "timeout rvx error"
        for ch in burst:
            app.post_message(events.Key("space" if ch == " " else ch, ch))
        await settle(pilot)
        assert app.screen.query_one("#query").value == burst
        assert type(app.screen).__name__ == "SearchScreen" and app.focused is app.screen.query_one("#query")
        app.screen.query_one("#query").value = "capybara"
        await settle(pilot)
        await pilot.press("down")  # the list again: o opens the highlighted session
        assert app.focused is results
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)


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


async def test_a_refresh_while_the_focus_is_in_the_box_starts_at_the_first_row(many):
    """A query typed during the first indexing: its final answer lists the single early hit
    far down; the user never moved into the results, so the cursor is on the new top row."""
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert results.highlighted == 0
        search = app.engine.search

        def reordered(*args, **kwargs):  # the index grew: the old top row is now far down
            result = search(*args, **kwargs)
            result.hits = result.hits[::-1]
            return result

        app.engine.search = reordered
        top = results.current_hit.session.session_id
        app.screen.run_query(app.screen.query_text)  # what an index refresh does
        await settle(pilot)
        assert results.hits[-1].session.session_id == top
        assert results.highlighted == 0 and results.scroll_y == 0
        assert "(Home: show)" not in str(app.screen.query_one("#status").render())


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


# -- defect 2: deleting the index while the app runs --------------------------------------------


def _screen_words(app) -> str:
    return app.export_screenshot().replace("&#160;", " ")


def _screen_rows(app) -> list[str]:
    """The screen's text, one string per row (the SVG's text pieces of a row joined)."""
    import html
    import re
    from collections import defaultdict

    rows = defaultdict(list)
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', app.export_screenshot()):
        rows[float(m.group(2))].append((float(m.group(1)), html.unescape(m.group(3)).replace("\xa0", " ")))
    return ["".join(t for _, t in sorted(rows[y])) for y in sorted(rows)]


async def test_deleting_the_index_while_running_rebuilds_it_and_keeps_answering(sample, tmp_path):
    import shutil

    home, index_dir = sample
    mine = tmp_path / "index"
    shutil.copytree(index_dir, mine, symlinks=True)
    app = CrabsearchApp(mine, env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    lines = []
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert len(screen.result.hits) == 4
        shutil.rmtree(mine)  # rm -rf ~/.cache/crabsearch/index
        progress = screen.query_one(IndexingProgress)
        original = progress._show

        def spy(text):
            original(text)
            lines.append(str(text))

        progress._show = spy
        await pilot.press(*"cron")
        await settle(pilot)
        assert app.screen is screen and len(screen.result.hits) == 3  # answered, after a rebuild
        assert screen.search_error is None
        assert any("The index was deleted: rebuilding it" in line for line in lines)
        assert any("rebuilt from your transcripts" in n.message for n in app._notifications)
        words = _screen_words(app)
        assert "Error" not in words and "failed" not in words and "No agent transcripts" not in words
        await pilot.press("escape", "escape")  # back to the box, cleared: the recent sessions
        await settle(pilot)
        assert len(screen.result.hits) == 4 and not screen.query_one("#empty").display
        shutil.rmtree(mine)  # again, and this time nobody types: the app still notices
        screen.run_query("")  # what the watcher's periodic check does
        await settle(pilot)
        assert len(screen.result.hits) == 4 and (mine / "current").exists()


async def test_an_index_damaged_before_the_start_says_so_and_is_rebuilt(sample, tmp_path, monkeypatch):
    """A segment that no longer opens (its directory overwritten, size and time kept): the app
    says the index was damaged, not that it indexes for the first time, and shows the sessions
    once it is rebuilt."""
    import os
    import shutil

    from crabsearch.index.layout import where
    from crabsearch.tui.screens import SearchScreen

    home, index_dir = sample
    mine = tmp_path / "index"
    shutil.copytree(index_dir, mine, symlinks=True)
    for seg in where(mine).glob("*.seg"):
        st = os.stat(seg)
        data = bytearray(seg.read_bytes())
        data[-64:] = b"\xff" * 64  # the compound file's directory
        seg.write_bytes(bytes(data))
        os.utime(seg, ns=(st.st_atime_ns, st.st_mtime_ns))
    reasons = []
    original = SearchScreen.start_indexing

    def spy(self, rebuilding=None):
        reasons.append(rebuilding)
        return original(self, rebuilding)

    monkeypatch.setattr(SearchScreen, "start_indexing", spy)
    app = CrabsearchApp(mine, env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert reasons and reasons[0] == "damaged"
        assert len(screen.result.hits) == 4 and screen.search_error is None


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
        assert "Reader already closed" not in _screen_words(app)
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


# -- defect 3: the first run --------------------------------------------------------------------


async def test_first_run_shows_recent_sessions_after_the_first_batch_and_names_the_phase(tmp_path, monkeypatch):
    import threading

    from crabsearch.index import writer

    home = tmp_path / "home"
    for n in range(8):
        (ClaudeSession(home, session_id=f"00000000-0000-4000-8000-{n:012d}", cwd=f"/w/p{n}",
                       start=datetime(2026, 3, 1, tzinfo=timezone.utc) + timedelta(hours=n))
         .user(f"pelican number {n} asks about the wombat").assistant("a reply").assistant("more").write())
    monkeypatch.setattr(writer, "FIRST_BATCH_DOCS", 5)  # two sessions make the first batch
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    gate = threading.Event()
    read = app.indexer._index_file
    done = []

    def slow(writer_, job, report, progress):  # the third transcript waits for the test
        if len(done) == 2:
            gate.wait(20)
        done.append(job.path)
        return read(writer_, job, report, progress)

    app.indexer._index_file = slow
    lines = []
    original = IndexingProgress._show

    def spy(self, text):
        original(self, text)
        lines.append(str(text))

    monkeypatch.setattr(IndexingProgress, "_show", spy)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        results = screen.query_one(ResultList)
        for _ in range(600):  # the first batch is committed: its sessions are listed at once
            await pilot.pause(0.05)
            if results.option_count:
                break
        assert app.indexing and results.option_count == 2
        assert any(line.startswith("Indexing your transcripts · reading 2/8 files") for line in lines)
        assert any("writing the index" in line for line in lines)
        status = screen.query_one("#status").region
        bar = screen.query_one("#progress").region
        assert not status.overlaps(bar) and not screen.query_one("#index-status").region.overlaps(bar)
        await pilot.press(*"wombat")
        await pilot.pause(0.3)
        gate.set()
        await settle(pilot, timeout=30)
        assert not app.indexing and len(screen.result.hits) == 8  # the query typed meanwhile: answered
        assert "yet" not in str(screen.query_one("#status").render())


# -- defect 5: the demo reads only its bundled home ------------------------------------------


async def test_demo_reads_only_its_bundled_home_and_gives_no_advice_about_it(tmp_path, monkeypatch):
    import json

    from crabsearch.cli import source_env
    from crabsearch.paths import demo_home
    from crabsearch.tui.panels import StatusScreen

    real = tmp_path / "real"  # the user's own transcripts, reachable through XDG_* and others
    copilot = real / "xdg-config" / ".copilot" / "session-state" / "abc"
    copilot.mkdir(parents=True)
    (copilot / "events.jsonl").write_text(json.dumps(
        {"type": "session.start", "data": {"sessionId": "abc", "context": {"cwd": "/x"}},
         "timestamp": "2026-03-01T10:00:00Z"}) + "\n" + json.dumps(
        {"type": "user.message", "data": {"content": "my private zanzibarquux"},
         "timestamp": "2026-03-01T10:00:01Z"}) + "\n")
    aider = real / "code" / "proj"
    aider.mkdir(parents=True)
    (aider / ".aider.chat.history.md").write_text("# aider chat started at 2026-03-01 10:00:00\n\n"
                                                 "#### my private zanzibarquux\n\nsure\n")
    for name, value in {"XDG_CONFIG_HOME": real / "xdg-config", "XDG_DATA_HOME": real / "xdg-data",
                        "CRABSEARCH_AIDER_DIRS": real / "code", "CRABSEARCH_SPECSTORY_DIRS": real / "code",
                        "CLINE_DIR": real / "cline", "APPDATA": real / "appdata",
                        "CRABSEARCH_CONFIG": real / "config.toml"}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("EDITOR", "nano")
    env = source_env(demo=True)
    assert env["HOME"] == str(demo_home()) and env["EDITOR"] == "nano"
    app = CrabsearchApp(tmp_path / "demo-index", env=env, demo=True, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        agents = {h.session.agent for h in app.screen.result.hits}
        assert agents <= {"claude", "codex"} and agents
        assert all(str(demo_home()) in h.session.path for h in app.screen.result.hits)
        await pilot.press(*"zanzibarquux")
        await settle(pilot)
        assert app.screen.result.hits == []
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen)
        text = app.status_text()
        assert "settings.json" not in text and "cleanupPeriodDays" not in text
        assert text.startswith("Demo: only the bundled example sessions")


# -- defect 6: filters that mean nothing say so, in full --------------------------------------


@pytest.mark.parametrize("query,says", [
    ("agent:vim", "agent:vim: no agent is called “vim”; the agents are claude, codex,"),
    ("since:banana", "since:banana: that is not a date; write 2026-01-31, today, yesterday, or a time ago"),
    ("role:tool", "role:tool: no role is called “tool”; the roles are user (what you said) and assistant"),
    ("agent:", "agent: needs a name: the agents are claude, codex,"),
])
async def test_a_filter_that_means_nothing_says_why_and_lists_recent_sessions(sample, query, says):
    app = app_of(sample)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*query)
        if query.endswith(":"):  # a filter name alone may still be being completed: said once typed out
            await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert len(screen.result.hits) == 4  # the recent sessions: the rest of the query is empty
        assert str(screen.query_one("#status").render()).startswith("Recent sessions (4)")
        notes = screen.query_one("#notes")
        text = str(notes.render())
        assert notes.display and says in text and text.endswith("Showing the recent sessions.")
        from rich.text import Text

        needed = len(Text(text).wrap(app.console, notes.content_region.width))
        assert notes.content_region.height == needed  # all of it on screen at 80 columns
        assert "Showing the recent sessions." in _screen_words(app)


@pytest.mark.parametrize("query", ["project:nonexistent", "agent:gemini", "since:2030-01-01",
                                   "project:nonexistent cron", "project:nonexistent "])
async def test_a_filter_that_matches_no_session_says_so(sample, query):
    """The query quoted as typed, without the space typed after its last word."""
    app = app_of(sample)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*query)
        await settle(pilot)
        screen = app.screen
        assert screen.result.hits == []
        status = screen.query_one("#status")
        assert status.display and str(status.render()) == f"No session matches “{query.strip()}”"
        assert f"No session matches “{query.strip()}”" in _screen_words(app)


async def test_at_50x20_every_filter_note_shows_in_full(sample):
    from rich.text import Text

    app = app_of(sample)
    async with app.run_test(size=(50, 20)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron agent:vim since:banana")
        await settle(pilot)
        notes = app.screen.query_one("#notes")
        text = str(notes.render())
        assert "agent:vim: no agent" in text and "since:banana: that is not a date" in text
        needed = len(Text(text).wrap(app.console, notes.content_region.width))
        assert needed > 6 and notes.content_region.height == needed
        rows = "\n".join(_screen_rows(app))
        assert "(F5 picks one)." in rows  # the second note's last words


async def test_at_50x20_the_empty_state_can_be_read_to_its_end(tmp_path, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", [".venv/bin/crabsearch"])
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(50, 20)) as pilot:
        await settle(pilot)
        empty = app.screen.query_one("#empty")
        assert empty.display and "--demo" in str(empty.content)
        assert "--demo" not in "\n".join(_screen_rows(app))  # more than the screen holds
        await pilot.press("down")  # into the text, then down to its end
        for _ in range(30):
            await pilot.press("down")
        await pilot.pause()
        assert "--demo" in "\n".join(_screen_rows(app))
        await pilot.press(*"x")  # typing still searches
        assert app.screen.query_text == "x"


async def test_a_bad_filter_beside_words_searches_the_words(sample):
    app = app_of(sample)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron agent:vim")
        await settle(pilot)
        assert len(app.screen.result.hits) == 3
        assert str(app.screen.query_one("#status").render()).startswith("3 sessions")
        assert str(app.screen.query_one("#notes").render()).startswith("agent:vim: no agent is called “vim”")


# -- defect 7: narrow terminals -------------------------------------------------------------


@pytest.fixture(scope="module")
def long_paths(tmp_path_factory):
    """Sessions with long titles and deep project paths, of two agents."""
    from builders import CodexSession
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("narrow")
    home = root / "home"
    deep = "/home/dev/clients/acme-corporation/monorepo/services/dashboard_mictlan"
    (ClaudeSession(home, session_id="11111111-0000-4000-8000-000000000001", cwd=deep)
     .user("give the user a way to export the dashboard as a PDF report with charts").write())
    (CodexSession(home, session_id="019a0000-2222-7000-8000-000000000002", cwd="/srv/x")
     .user("short one about the dashboard").write())
    (ClaudeSession(home, session_id="11111111-0000-4000-8000-000000000003", cwd=deep + "/web/frontend")
     .user("the dashboard charts flicker when the window is resized in Safari").write())
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"


@pytest.mark.parametrize("width", [50, 80, 120])
async def test_narrow_rows_keep_the_title_and_align_the_agent_column(long_paths, width):
    app = app_of(long_paths)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"dashboard")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        row_width = results.scrollable_content_region.width - 2  # the option's padding
        lines = []
        for i in range(len(results.hits)):
            header = app.console.render_lines(results._prompt(i), app.console.options.update_width(row_width))[0]
            lines.append("".join(seg.text for seg in header))
        badges = [max(line.find(" Claude "), line.find(" Codex ")) for line in lines]
        assert len(set(badges)) == 1  # the agent column is aligned
        assert badges[0] >= row_width // 2  # the title keeps most of the row
        line = next(line for line in lines if line.startswith("give the user a way to export"))
        if width >= 80:  # the path is shortened from the left: its last folders stay
            assert "…" in line and "mictlan" in line


@pytest.mark.parametrize("cwd", ["/home/maya/code/翻訳ツール", "/home/maya/code/clients/とても長い翻訳ツールのプロジェクト"])
async def test_wide_characters_in_a_path_keep_the_columns_aligned(tmp_path, cwd):
    from rich.cells import cell_len

    from crabsearch.index import Indexer

    home = tmp_path / "home"
    start = datetime(2026, 3, 18, tzinfo=timezone.utc)
    ClaudeSession(home, session_id="11111111-0000-4000-8000-00000000000a", cwd=cwd, start=start).user(
        "translate the dingo strings").assistant("done").write()
    ClaudeSession(home, session_id="11111111-0000-4000-8000-00000000000b", cwd="/home/maya/code/api",
                  start=start).user("the dingo endpoint").assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"dingo")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        row_width = results.scrollable_content_region.width - 2
        lines = []
        for i in range(len(results.hits)):
            header = app.console.render_lines(results._prompt(i), app.console.options.update_width(row_width))[0]
            lines.append("".join(seg.text for seg in header))
        assert all(cell_len(line) == row_width for line in lines)
        assert all(line.endswith("2 msgs") for line in lines)  # the count is not cut
        dates = [cell_len(line[:line.index("2d ago")]) for line in lines]
        assert len(set(dates)) == 1, lines  # the date column is aligned
        assert any("ツール" in line for line in lines)


# -- defect 8: the smaller ones -------------------------------------------------------------


async def test_ctrl_c_quits_from_the_search_screen_unless_text_is_selected(sample):
    """Ctrl+C quits from the search box and the rows, as in a terminal program (it said "Press
    Ctrl+Q to quit"); text selected in the box is copied instead, and the app stays."""
    from textual.widgets.input import Selection

    app = app_of(sample)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        box = app.screen.query_one("#query")
        box.selection = Selection(0, 4)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and app.clipboard == "cron"
        box.selection = Selection.cursor(4)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running and app.return_value is None
    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("down")  # the rows
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_in_the_session_view_says_how_to_quit_without_markup(sample):
    app = app_of(sample)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("down", "o")
        await pilot.pause()
        assert type(app.screen).__name__ == "SessionScreen"
        await pilot.press("ctrl+c")
        await pilot.pause()
        toast = app._notifications.last if hasattr(app._notifications, "last") else list(app._notifications)[-1]
        assert toast.message == "Press Ctrl+Q to quit crabsearch." and "[" not in toast.message
        assert app.is_running


async def test_one_toast_per_kind_over_the_footer_not_the_text(sample):
    """Three toggles in a row stacked three toasts over the tool output they described. A toast
    takes the place of the one of its kind (severity) still shown, and a one-line toast sits on
    the footer's line, over no line of the transcript; a warning stays beside a newer info."""
    from textual.widgets._toast import Toast, ToastHolder

    from crabsearch.tui.footer import KeyFooter
    from crabsearch.tui.transcript import TranscriptView

    app = app_of(sample)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "o")
        await pilot.pause()
        await pilot.press("t", "T", "s")
        await pilot.pause(0.2)
        screen = app.screen
        assert [n.message for n in app._notifications] == ["Subagent turns hidden"]
        [toast] = list(screen.query(Toast))
        assert len(screen.query(ToastHolder)) == 1  # the replaced ones' holders went too
        footer, view = screen.query_one(KeyFooter).region, screen.query_one(TranscriptView).region
        assert toast.region.y == footer.y and toast.region.height == 1
        assert not toast.region.overlaps(view)
        app.notify("The disk is full", severity="warning")
        app.notify("Thinking shown")
        await pilot.pause(0.2)
        assert sorted(n.message for n in app._notifications) == ["The disk is full", "Thinking shown"]


async def test_help_shows_the_keys_as_rebound_in_the_config(sample):
    from crabsearch import config

    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(keys={"open": "ctrl+o", "next-hit": "ctrl+n", "resume": "y"}))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        text = str(app.screen.query("Static")[1].render())
        lines = {line.split("  ")[-1].strip(): line for line in text.splitlines()}
        assert lines["open the session at the hit"].strip().startswith("Ctrl+O")
        assert lines["previous / next message matching the query"].strip().startswith("[ / Ctrl+N")
        assert lines["resume / fork in its agent (asks first)"].strip().startswith("y / f")
        assert lines["explain why the row matched"].strip().startswith("x")


async def test_the_expanded_row_names_the_keys_as_rebound(sample):
    from crabsearch import config

    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(keys={"widen": "w", "open": "ctrl+o"}))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()
        rows = "\n".join(_screen_rows(app))
        assert "w/- widen/narrow · Ctrl+O open" in rows and "+/-" not in rows


async def test_plus_then_minus_returns_to_the_same_window(sample):
    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"nightly")  # the hit is the session's first message: no room before it
        await settle(pilot)
        await pilot.press("down", "enter")
        results = app.screen.query_one(ResultList)
        first = results.expanded[0][:2]
        await pilot.press("plus")
        assert results.expanded[0][:2] != first
        await pilot.press("minus")
        assert results.expanded[0][:2] == first
        await pilot.press("plus", "plus", "minus", "minus")
        assert results.expanded[0][:2] == first


async def test_up_on_the_first_result_goes_back_to_the_search_box(sample):
    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        await pilot.press("down", "down")
        results = app.screen.query_one(ResultList)
        assert app.focused is results and results.highlighted == 1
        await pilot.press("up")
        assert app.focused is results and results.highlighted == 0
        await pilot.press("up")
        assert app.focused is app.screen.query_one("#query")


async def test_keys_that_arrive_together_act_where_the_first_one_moved_the_focus(sample):
    """Down then Enter in one burst (a fast typist, tmux send-keys, a paste): Enter expands the
    first row; it must not reach the search box because the focus moved a frame late."""
    from textual import events

    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        for key, char in (("down", None), ("enter", "\r")):
            event = events.Key(key, char)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(pilot)
        assert app.focused is results and results.highlighted == 0
        assert 0 in results.expanded


def first_build_reports():
    """``(seconds, Progress)`` of a first build of 500 MB read at 8 MB/s but for a slower
    stretch (4 MB/s from 60 to 160 MB: larger transcripts, a busy disk), 160 messages a MB,
    committed at 2,000 messages (0.3 s) and then every 40,000 (15 s each). A recorded 1 GB build
    (bench/gen.py) slowed so in its first minute, and its line said about 2 min left, then 3."""
    from crabsearch.index.writer import Progress

    mb = 1_000_000
    total, t, done, commits, next_commit = 500 * mb, 0.0, 0, 0, 2000
    out = []
    while done < total:
        rate = (4 if 60 * mb <= done < 160 * mb else 8) * mb
        step = min(total - done, rate // 2)
        t, done = t + step / rate, done + step
        p = Progress(done // mb, 1000, done, total, done * 160 // mb, "reading", commits)
        out.append((t, p))
        if p.messages >= next_commit or done == total:
            out.append((t, Progress(**{**p.__dict__, "phase": "writing"})))
            t += 0.3 if commits == 0 else 15.0
            commits, next_commit = commits + 1, 40_000 * (commits + 1)
            out.append((t, Progress(**{**p.__dict__, "commits": commits})))
    return out


async def test_the_time_left_falls_and_never_rises_during_a_first_build(sample, monkeypatch):
    """The indexing line's "about N s left" rose before it fell when the reading slowed for a
    while (the rate since the start fell): the rate is measured over the recent reading and
    what is shown holds rather than rising by a little."""
    import re
    from types import SimpleNamespace

    from crabsearch.tui import indexing
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(indexing, "time", SimpleNamespace(monotonic=lambda: clock.now))
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)  # the reports come from the test
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        shown = []
        for seconds, progress in first_build_reports():
            clock.now = 1000.0 + seconds
            screen._progress(IndexProgress(progress))
            said = re.search(r"about (\d+) (s|min) left", screen.query_one(IndexingProgress)._line[1])
            if said:
                shown.append(int(said[1]) * (60 if said[2] == "min" else 1))
        assert len(shown) > 100 and shown[0] >= 60
        rises = [(a, b) for a, b in zip(shown, shown[1:]) if b > a]
        assert not rises, rises


async def test_the_time_left_counts_down_while_a_commit_writes(sample, monkeypatch):
    """A commit writes for seconds with no report: the line's time left stood still; it is
    recounted every second (``IndexingProgress._tick``)."""
    import re
    from types import SimpleNamespace

    from crabsearch.tui import indexing
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(indexing, "time", SimpleNamespace(monotonic=lambda: clock.now))
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        reports = first_build_reports()
        at = next(i for i, (_, p) in enumerate(reports) if p.phase == "writing" and p.commits == 1)
        for seconds, progress in reports[:at + 1]:
            clock.now = 1000.0 + seconds
            screen._progress(IndexProgress(progress))
        before = int(re.search(r"about (\d+) s left", screen.query_one(IndexingProgress)._line[1])[1])
        clock.now += 5
        screen.query_one(IndexingProgress)._tick()
        assert int(re.search(r"about (\d+) s left", screen.query_one(IndexingProgress)._line[1])[1]) <= before - 4


@pytest.mark.parametrize("width", [120, 110, 80, 50])
async def test_the_indexing_line_fits_its_row_at_every_width(sample, width, monkeypatch):
    """The progress line never wraps mid-phrase ("about 12 s" / "left" on two rows at 110
    columns): it shortens its heading, then its phase, then drops the estimate."""
    from crabsearch.index.writer import Progress
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    monkeypatch.setattr(IndexingProgress, "_time_left", lambda self, p, now: 12.0)
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)  # progress comes from the test
    app = app_of(sample)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        for _ in range(2):  # the second one measures the row the first one showed
            screen.post_message(IndexProgress(Progress(120, 4780, 12_300_000, 45_000_000, 9000)))
            await pilot.pause()
        line = screen.query_one("#index-status")
        text = str(line.render())
        assert line.size.height == 1 and len(text) <= line.size.width, text
        assert "120/4,780 files" in text and (width < 80 or text.startswith("Indexing"))
        if width >= 110:
            assert text.endswith("about 12 s left"), text


@pytest.mark.parametrize("width", [50, 40, 30])
async def test_on_narrow_terminals_the_progress_bar_yields_its_row_to_the_text(sample, width, monkeypatch):
    from crabsearch.index.writer import Progress
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    monkeypatch.setattr(IndexingProgress, "_time_left", lambda self, p, now: 12.0)
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        screen.post_message(IndexProgress(Progress(120, 4780, 12_300_000, 45_000_000, 9000)))
        await pilot.pause()
        await pilot.resize_terminal(width, 30)  # made narrower while indexing
        await pilot.pause()
        screen.post_message(IndexProgress(Progress(121, 4780, 12_400_000, 45_000_000, 9000)))
        await pilot.pause()
        await pilot.pause()
        line, bar = screen.query_one("#index-status"), screen.query_one("#progress")
        text = str(line.render())
        assert line.size.height == 1 and len(text) <= line.size.width, text
        assert "121/4,780 files" in text
        assert any("121/4,780 files" in row for row in _screen_rows(app))
        if bar.display:
            assert line.region.right < bar.region.x  # a space between the text and the bar
        assert bar.display == (width >= 50)


async def test_empty_state_lists_every_agent_aligned_and_the_command_as_run(tmp_path, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", [".venv/bin/crabsearch"])
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = str(app.screen.query_one("#empty").content)
        assert re.search(r"^  Cline / Roo Code +~/\.cline", text, re.M)
        assert "SpecStory" in text and "CRABSEARCH_SPECSTORY_DIRS" in text
        assert ".venv/bin/crabsearch --demo" in text
        starts = {line.index("~/") for line in text.splitlines() if line.startswith("  ") and "~/" in line}
        assert len(starts) == 1  # one column for the places


def _thinking(session: ClaudeSession, text: str) -> ClaudeSession:
    d = session._base("assistant")
    d["message"] = {"id": f"msg_{session.n}", "type": "message", "role": "assistant", "model": "claude-x",
                    "content": [{"type": "thinking", "thinking": text, "signature": "sig"}]}
    session.lines.append(d)
    return session


@pytest.fixture(scope="module")
def fruity(tmp_path_factory):
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("fruity")
    home = root / "home"
    s = ClaudeSession(home, session_id="22222222-0000-4000-8000-000000000001").user("we need a zebra plan")
    s.assistant("first, the groundwork")
    _thinking(s, "maybe the zebra plan needs a kiwi")  # not indexed, but it shows the highlight
    s.assistant("kiwi and kiwi and KIWI, then some bread")
    s.user("fine")
    s.assistant("the zebra plan is done, one kiwi left")
    s.write()
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"


async def _open(app, pilot, query):
    from crabsearch.tui.transcript import TranscriptView

    await settle(pilot)
    await pilot.press(*query)
    await settle(pilot)
    await pilot.press("down", "o")
    await settle(pilot)
    return app.screen.query_one(TranscriptView)


LONG_MARKDOWN = "\n\n".join(
    f"## Step {n}\n\nSome prose about step {n}, with a list:\n\n- one thing\n- another thing\n\n"
    f"| a | b |\n|---|---|\n| {n} | {n * 2} |\n\n```python\nprint({n})\n```" for n in range(6))


@pytest.fixture(scope="module")
def ends_at_hit(tmp_path_factory):
    """A session of 26 messages whose last one alone says "quokka", after a long Markdown
    message (rendered much taller than its text's line count)."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("ends")
    home = root / "home"
    s = ClaudeSession(home, session_id="33333333-0000-4000-8000-000000000001")
    for n in range(12):
        s.user(f"question {n}").assistant(f"answer {n}")
    s.assistant(LONG_MARKDOWN).user("and the quokka?")
    s.write()
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (100, 30)])
async def test_a_hit_that_is_the_last_message_is_on_screen_when_the_session_opens(ends_at_hit, size):
    app = app_of(ends_at_hit)
    async with app.run_test(size=size) as pilot:
        view = await _open(app, pilot, "quokka")
        await pilot.pause()
        assert view.hit_index == 25 and view.cursor == 25
        assert view.top_message() <= 25 == view.bottom_message()
        position = str(app.screen.query_one("#position").render())
        assert "–26 of 26 · hit at #26" in position
        assert "#26" in _screen_words(app) and "quokka" in _screen_words(app)


async def test_the_position_line_follows_bracket_jumps_across_pages(tmp_path):
    import re

    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="44444444-0000-4000-8000-000000000001")
    for n in range(200):
        s.user(f"question {n}" + (" about the numbat" if n in (5, 108, 110, 165, 168) else ""))
        s.assistant(LONG_MARKDOWN if n % 7 == 3 else f"answer {n}")
    s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _open(app, pilot, "numbat")
        view.go_to(0)
        await settle(pilot)
        position = app.screen.query_one("#position")
        for key in ["right_square_bracket"] * 5 + ["left_square_bracket"] * 5:
            await pilot.press(key)
            await settle(pilot)
            top, bottom = view.top_message(), view.bottom_message()
            assert top <= view.cursor <= bottom
            assert f"messages {top + 1}–{bottom + 1} of 400" in str(position.render())
            shown = "\n".join(_screen_rows(app))
            assert re.search(rf"#{view.cursor + 1}(?!\d)", shown) and f"messages {top + 1}–" in shown


async def test_the_position_line_follows_a_message_unfolded_in_place(tmp_path):
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    output = "\n".join(f"log line {i}" for i in range(40))
    s = ClaudeSession(home).user("show me the bilby log").tool("Bash", {"command": "make"}, output)
    for n in range(10):
        s.user(f"question {n}").assistant(f"answer {n}")
    s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _open(app, pilot, "bilby")
        await pilot.press("J", "J", "enter")  # the tool output, unfolded: the messages below go
        await settle(pilot)
        top, bottom = view.top_message(), view.bottom_message()
        assert f"messages {top + 1}–{bottom + 1} of 23" in str(app.screen.query_one("#position").render())


async def test_one_folded_line_is_one_more_line(tmp_path):
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    output = "\n".join(f"log line {i}" for i in range(9))  # tool output folds at 8 lines
    ClaudeSession(home).user("show me the wallaby log").tool("Bash", {"command": "make"}, output).write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _open(app, pilot, "wallaby")
        words = _screen_words(app)
        assert "… 1 more line (Enter" in words and "1 more lines" not in words


def test_a_cut_inside_a_line_counts_the_rest_of_it_in_characters():
    """A fresh-user trial: a message of one 1 MB line said "… 1 more line" where it was cut."""
    from crabsearch.tui.messageview import fold

    assert fold("x" * 1_000_000, 80, 100) == ("x" * 8000, "992,000 more characters")
    assert fold("a" * 50 + "\nb\nc", 1, 20) == ("a" * 20, "30 more characters and 2 more lines")
    assert fold("a" * 50 + "\n" + "b" * 10 + "\nc", 3, 20)[1] == "1 more character and 1 more line"
    assert fold("\n".join(["a" * 30] * 9), 8, 20) == ("\n".join(["a" * 30] * 5) + "\n" + "a" * 5,
                                                     "25 more characters and 3 more lines")
    assert fold("one\ntwo\nthree", 2, 20) == ("one\ntwo", "1 more line")
    assert fold("one\ntwo", 2, 20) == ("one\ntwo", "")


async def test_a_message_of_one_huge_line_says_how_much_of_it_is_left(tmp_path):
    import re

    from crabsearch.index import Indexer

    home = tmp_path / "home"
    dump = "0123456789" * 100_000  # one line of 1 MB
    ClaudeSession(home).user("show me the numbat dump").tool("Bash", {"command": "cat dump"}, dump).write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _open(app, pilot, "numbat")
        await pilot.press("J", "J")  # the output at the top of the screen
        await settle(pilot)
        words = _screen_words(app)
        left = re.search(r"… ([\d,]+) more characters \(Enter", words)
        assert left and "more line" not in words
        item = next(b.item for b in view._blocks if b.item.role == "tool")
        shown = 8 * (view._width - 5)  # tool output folds at 8 screen lines
        assert int(left.group(1).replace(",", "")) == len(item.text) - shown > 200_000
        assert "… cut here: the view reads a message" in " ".join(_screen_rows(app))  # the rest of the 1 MB


async def test_brackets_stop_at_a_thinking_message_that_shows_the_highlight(fruity):
    app = app_of(fruity)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _open(app, pilot, "zebra")
        view.go_to(0)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert view.cursor == 2  # the thinking message, between the indexed hits #1 and #6
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert view.cursor == 5
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert view.cursor == 2


async def _find_kiwi(app, pilot):
    """The fruity session opened at its first message, ``kiwi`` found: the view."""
    view = await _open(app, pilot, "zebra")
    view.go_to(0)
    await pilot.press("slash", *"kiwi", "enter")
    await settle(pilot)
    return view


async def _moves(pilot, view, key: str, n: int, what) -> list:
    """``what(view)`` after each of ``n`` presses of ``key``."""
    seen = []
    for _ in range(n):
        await pilot.press(key)
        await settle(pilot)
        seen.append(what(view))
    return seen


async def test_find_counts_matches_and_n_moves_match_by_match(fruity):
    app = app_of(fruity)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _find_kiwi(app, pilot)
        position = lambda: str(app.screen.query_one("#position").render())  # noqa: E731
        assert view.cursor == 2 and "“kiwi” 1/5 n/N" in position()
        seen = await _moves(pilot, view, "n", 5, lambda v: (v.cursor, v.find_position[0]))
        assert seen == [(3, 2), (3, 3), (3, 4), (5, 5), (2, 1)]  # 3 in one message, then on, then wrap
        await pilot.press("N")
        await settle(pilot)
        assert (view.cursor, view.find_position[0]) == (5, 5)
        assert "“kiwi” 5/5 n/N" in position()


async def test_find_skips_what_a_toggle_hides(fruity):
    """``T`` hides the thinking message that holds one of the five ``kiwi``: the count drops to
    4 and ``n`` goes round the shown messages only (a user trial: after ``t`` hid the tools, ``n``
    landed on a hidden tool output, nothing highlighted)."""
    app = app_of(fruity)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _find_kiwi(app, pilot)
        assert view.cursor == 2 and view.find_position == (1, 5)  # in the thinking message
        await pilot.press("T")
        await settle(pilot)
        assert view.find_position[1] == 4
        seen = await _moves(pilot, view, "n", 5, lambda v: v.cursor)
        assert 2 not in seen and set(seen) == {3, 5}


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
        rows = [row.strip("│ ") for row in _screen_rows(app)]
        shown = "\n".join(rows)
        assert shown.count("-abcdefgh") == 9 and "opencode (not found)" in shown  # no folder name cut
        at = next(i for i, row in enumerate(rows) if "folder00" in row)
        joined = "".join(rows[at - 1:at + 5])  # the path's pieces, joined again: the path whole
        assert str(deep) in joined and all(f"/folder{n:02d}-abcdefgh/" in joined for n in range(9)), shown


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """Many sessions about the config, two about a cong (a word one letter from "conf")."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("configs")
    home = root / "home"
    for n in range(6):
        ClaudeSession(home, session_id=f"66666666-0000-4000-8000-00000000000{n}").user(
            f"the config file number {n} is wrong").assistant("fixed the config").write()
    for n in range(2):
        ClaudeSession(home, session_id=f"77777777-0000-4000-8000-00000000000{n}").user(
            f"play the cong drum {n}").assistant("cong cong").write()
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"


async def test_a_word_still_being_typed_is_read_as_a_prefix_not_repaired(configs):
    app = app_of(configs)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"con")  # three letters typed: completed too (it said "No session matches")
        await settle(pilot)
        assert "showing results for config" in str(app.screen.query_one("#status").render())
        await pilot.press("f")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "cong" not in status and "showing results for config" in status, status
        assert all("config" in h.item.text for h in app.screen.result.hits)
        await pilot.press("space")  # the word is done: a repair may apply now
        await settle(pilot)
        assert "showing results for cong" in str(app.screen.query_one("#status").render())
    from crabsearch.search import Engine

    result = Engine(configs[1]).search("conf")  # scripts and the CLI: the word as given
    assert result.corrections == {"conf": "cong"}
    assert Engine(configs[1]).search("con").corrections == {}  # three letters: never repaired


async def test_no_spelling_repair_while_the_index_is_built_from_scratch(configs):
    """A user trial: during the first index build, a word not indexed yet was "repaired" to a
    common one (``token`` -> ``then``, for seconds). While the index is built from scratch the app
    searches the words as typed; once it is built, a repair applies again."""
    from crabsearch.search import Engine

    assert Engine(configs[1]).search("conf ", repair=False).corrections == {}
    app = app_of(configs)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        app.indexing, screen.rebuilding = True, "first"  # as during the first build
        await pilot.press(*"conf ")
        for _ in range(200):  # settle() waits for the indexing to end too
            await app.workers.wait_for_complete()
            if screen.settled:
                break
            await pilot.pause(0.05)
        assert screen.result.corrections == {} and "cong" not in str(screen.query_one("#status").render())
        app.indexing, screen.rebuilding = False, None  # built: the query runs again
        screen.run_query(screen.query_text)
        await settle(pilot)
        assert screen.result.corrections == {"conf": "cong"}


async def test_export_title_is_the_whole_first_prompt_not_the_cut_title(tmp_path):
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    prompt = ("please rework the nightly export job so that it writes one file per customer, retries "
              "twice on a timeout and mails a summary to the on-call engineer")
    ClaudeSession(home, session_id="33333333-0000-4000-8000-000000000001").user(prompt).assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    out = tmp_path / "out"
    out.mkdir()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home), "PWD": str(out)}, now=NOW,
                        index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        hit = app.screen.result.hits[0]
        assert hit.session.title.endswith("…") and len(hit.session.title) == 80
        await pilot.press("down", "E", "s")
        await app.workers.wait_for_complete()
        await pilot.press("down", "E", "w")
        await app.workers.wait_for_complete()
    for f in out.iterdir():
        assert f.read_text().splitlines()[0] == "# " + prompt, f.name


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


def test_a_session_that_left_the_list_is_not_counted_as_new():
    """A refresh after a transcript was deleted: one listed session is gone and one from below
    the page comes in. That is "updated results", not "1 new session"."""
    from types import SimpleNamespace as NS

    def hits(*ids):
        return [NS(session=NS(agent="claude", session_id=i), message_index=0) for i in ids]

    rows = ResultList(None, None, lambda: NOW, None)
    rows.hits = hits("a", "b", "c")
    assert rows.reorders(hits("a", "c", "d")) == (True, 0)
    assert rows.reorders(hits("d", "a", "b", "c")) == (True, 1)
    assert rows.reorders(hits("a", "b", "c", "d")) == (False, 1)


async def test_an_aider_session_copied_later_keeps_its_chat_date(tmp_path):
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    proj = home / "proj"
    proj.mkdir(parents=True)
    (proj / ".aider.chat.history.md").write_text(
        "# aider chat started at 2026-03-14 10:00:00\n\n#### rename the pelican module\n\nRenamed it.\n")
    # the file's mtime is now (a copy, a restore): later than the app's clock (NOW, 2026-03-20)
    env = {"HOME": str(home), "CRABSEARCH_AIDER_DIRS": str(home)}
    Indexer(tmp_path / "index", env=env).refresh()
    app = CrabsearchApp(tmp_path / "index", env=env, now=NOW, index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        hit = app.screen.result.hits[0]
        assert hit.session.agent == "aider"
        assert hit.session.updated.date().isoformat() == "2026-03-14"
        line = app.screen.query_one(ResultList)._prompt(0).row.renderables[0].line(96).plain
        assert "6d ago" in line and "just now" not in line


# -- live: a session is searchable while the agent writes it ----------------------------------


async def _until(pilot, check, seconds: float = 10.0) -> float:
    import time

    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if check():
            return time.monotonic() - t0
        await pilot.pause(0.05)
    raise AssertionError("not within %.0f s" % seconds)


async def test_an_appended_line_is_found_within_seconds_without_the_periodic_refresh(tmp_path, monkeypatch):
    import json

    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)  # only file events can refresh
    home = tmp_path / "home"
    s = ClaudeSession(home).user("first words only")
    path = s.write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"zanzibarquux")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert results.option_count == 0
        s.assistant("now the agent writes about zanzibarquux")
        with open(path, "a") as fh:
            fh.write(json.dumps(s.lines[-1]) + "\n")
        took = await _until(pilot, lambda: results.option_count == 1)
        assert took < 5


async def test_a_refresh_does_not_move_the_rows_under_the_cursor_and_says_what_is_new(tmp_path, monkeypatch):
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)
    home = tmp_path / "home"
    for n in range(5):
        ClaudeSession(home, session_id=f"55555555-0000-4000-8000-00000000000{n}",
                      start=datetime(2026, 3, 10 + n, tzinfo=timezone.utc)).user(f"old session {n}").write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        await pilot.press("down", "down", "down")
        before = [h.session.session_id for h in results.hits]
        at = results.current_hit.session.session_id
        row = results.highlighted
        (ClaudeSession(home, session_id="55555555-0000-4000-8000-000000000009",
                       start=datetime(2026, 3, 19, tzinfo=timezone.utc)).user("a new session").write())
        status = app.screen.query_one("#status")
        await _until(pilot, lambda: "1 new session (Home: show)" in str(status.render()))
        assert [h.session.session_id for h in results.hits] == before  # nothing moved
        assert results.highlighted == row and results.current_hit.session.session_id == at
        await pilot.press("home")
        await settle(pilot)
        assert results.hits[0].session.session_id.endswith("9") and results.highlighted == 0
        assert "new session" not in str(status.render())


def test_watched_directories_are_the_agents_own_not_home_or_project_trees(tmp_path):
    from crabsearch.index import Indexer
    from crabsearch.watch import watch_roots

    home = tmp_path / "home"
    for d in (".claude/projects", ".codex/sessions", "code/proj"):
        (home / d).mkdir(parents=True)
    indexer = Indexer(tmp_path / "index", env={"HOME": str(home), "CRABSEARCH_AIDER_DIRS": str(home / "code")},
                      extra_dirs={"claude": [str(home / ".claude" / "projects")]})
    roots = watch_roots(indexer)
    assert sorted(roots) == [(home / ".claude").resolve(), (home / ".codex").resolve()]  # no home, no code


# -- a session view worth reading -------------------------------------------------------------


@pytest.fixture(scope="module")
def rich_session(tmp_path_factory):
    from session_samples import indexed_rich_session

    return indexed_rich_session(tmp_path_factory.mktemp("richview"))


def _styles_of(view, needle):
    for _, strip in view._lines:
        for seg in strip:
            if needle in seg.text:
                return seg.style
    return None


async def test_the_session_view_renders_markdown_code_tools_and_diffs(rich_session):
    from test_terminal_safety import FORBIDDEN

    app = app_of(rich_session)
    async with app.run_test(size=(120, 50)) as pilot:
        view = await _open(app, pilot, "ocelot")
        view.go_to(0)
        await pilot.pause()
        text = "\n".join(strip.text for _, strip in view._lines)
        assert "make the ocelot parser strict" in text and "**" not in text  # the user's Markdown rendered too
        assert "*strict*" not in text and "add a strict flag" in text  # the assistant's Markdown rendered
        assert "## Plan" in text and " 1 read parse()" in text.replace(".", "")  # heading on the left, list
        assert "<b>now</b>" in text  # HTML shown as written
        assert "the docs (https://example.com/ocelot)" in text and "[image: diagram] (https://example.com/d.png)" in text
        assert "def parse(text, strict=False):" in text
        assert any("strict" in line and "off" in line for line in text.splitlines())  # the table's row
        assert _styles_of(view, "def").color is not None  # the code is highlighted
        assert "Bash(pytest -q tests/test_parse.py ␛[2J" in text  # a one-liner, escapes inert
        assert "line 6" in text and "line 7" not in text and "23 more lines" in text  # output folded
        assert "Edit(ocelot.py)" in text and "+def parse(text, strict=False):" not in text.split("Edit(")[1][:200]
        assert _styles_of(view, "+def parse(text, strict=False):").color.name == "green"  # the output's diff
        assert not FORBIDDEN.search(app.export_screenshot().replace("\n", ""))
        edit = next(b.item.message_index for b in view._blocks if b.item.label == "tool-call:Edit")
        view.go_to(edit)
        block = lambda: next(b for b in view._blocks if b.item.message_index == edit)  # noqa: E731
        await pilot.press("enter")  # the edit in full: a diff of the old and the new text
        await pilot.pause()
        text = "\n".join(strip.text for strip in block().strips)
        assert "-def parse(text):" in text and "+def parse(text, strict=False):" in text
        assert _styles_of(view, "-def parse(text):").color.name == "red"
        await pilot.press("enter")
        await pilot.pause()
        assert "-def parse(text):" not in "\n".join(strip.text for strip in block().strips)


async def test_only_the_messages_on_screen_are_rendered_and_bodies_are_cached(sample):
    from crabsearch.tui import messageview

    app = app_of(sample)
    calls = []
    original = messageview.body

    def counting(item, look):
        calls.append(item.message_index)
        return original(item, look)

    messageview.body = counting
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            view = await _open(app, pilot, "parser")
            assert view.top_message() == 561
            assert len(view.loaded) >= 40 and set(view.rendered) <= set(range(561, 561 + 14))
            await pilot.press("J", "K", "J", "K")  # the cursor moves: headers change, bodies stay
            await pilot.pause()
            await pilot.press("pagedown", "pageup")  # back where it was
            await pilot.pause()
            assert view.top_message() == 561
            assert len(calls) == len(set(calls))  # each body rendered once, then from the cache
    finally:
        messageview.body = original


# -- issue 15: the status panel's counts and its refresh time ----------------------------------


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
        await _until(pilot, lambda: "Claude Code: 2 transcripts found, 2 sessions" in str(body.render()))
        assert "2000-01-01" not in str(body.render())


# -- issue 15: the empty state keeps its columns when a path wraps -----------------------------


@pytest.mark.parametrize("size", [(50, 20), (80, 24)])
async def test_the_empty_state_indents_a_wrapped_path_under_the_path_column(tmp_path, size):
    from textual.geometry import Region

    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        empty = app.screen.query_one("#empty")
        assert empty.display
        lines = ["".join(seg.text for seg in strip).rstrip() for strip in
                 empty.render_lines(Region(0, 0, *empty.outer_size))]
        at = next(n for n, line in enumerate(lines) if "Cline / Roo Code" in line)
        column = lines[at].index("~/.cline")
        aider = next(n for n, line in enumerate(lines) if "Aider" in line)
        assert aider > at + 1  # the second path wrapped: each continuation starts under the first
        assert all(line[:column].strip() == "" and line[column] != " " for line in lines[at + 1:aider])
        assert "~/.config/Code/User/globalStorage" in "".join(line.strip() for line in lines[at:aider])
        claude = next(line for line in lines if "Claude Code" in line)
        assert claude.index("~/.claude") == column
        specstory = next(n for n, line in enumerate(lines) if "SpecStory" in line)
        assert lines[specstory + 1][:column].strip() == ""  # its note wraps under its column too
        assert any("--demo" in line for line in lines)


# -- issue 15: the filter chips never cut a word; notes in full when there is room ------------

MANY_FILTERS = "since:banana until:zz role:tool agent:vim project:nonexistent"


@pytest.mark.parametrize("size,query", [((50, 20), "cron agent:vim"), ((50, 20), MANY_FILTERS),
                                        ((80, 24), MANY_FILTERS), ((120, 40), MANY_FILTERS),
                                        ((80, 24), "cron project:/a/very/long/path/" + "x" * 90 + "/webapp")])
async def test_the_filter_chips_are_whole_chips_and_the_hint_whole_or_gone(sample, size, query):
    from crabsearch.tui.filters import FilterChips, filters

    app = app_of(sample)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#query")
        box.value = query  # as pasted: the chips follow the text, not the keys (typing it took 6-11 s)
        box.cursor_position = len(query)
        await settle(pilot)
        chips = app.screen.query_one(FilterChips)
        rows = _screen_rows(app)
        at = next(n for n, row in enumerate(rows) if row.lstrip().startswith("filters:"))
        shown = [row.rstrip() for row in rows[at:at + chips.size.height]]
        text = " ".join(shown)
        assert all(len(row) <= size[0] - 2 for row in shown)  # inside the bar's padding
        for tok in filters(query):
            if len(tok.text) < size[0] - 16:
                assert f" {tok.text} ✕" in text  # every chip whole
            else:  # wider than a row: shortened in its middle, never cut at the edge
                assert f" {tok.text[:8]}" in text and f"{tok.text[-4:]} ✕" in text and "…" in text
        hint = "click: remove · F3 F4 F5: pick"
        assert text.endswith(("✕", hint, "click: remove"))  # the hint whole, shortened at a ·, or gone
        assert sum(len(row.strip()) for row in shown) >= len(text.replace(" ", "")) - len(shown)
        await pilot.click(chips, offset=chips.chip_offset(len(filters(query)) - 1))  # the last chip
        await settle(pilot)
        assert filters(app.screen.query_text) == filters(query)[:-1]


async def test_the_filter_notes_show_in_full_when_nothing_matched_and_there_is_room(sample):
    """No rows listed: the notes may take more than half the screen (at 50x25 they need 14 rows,
    the unknown agent's note naming every agent; cut at the half they lost their end)."""
    from rich.text import Text

    app = app_of(sample)
    async with app.run_test(size=(50, 25)) as pilot:
        await settle(pilot)
        await pilot.press(*MANY_FILTERS)
        await settle(pilot)
        notes = app.screen.query_one("#notes")
        text = str(notes.render())
        needed = len(Text(text).wrap(app.console, notes.content_region.width))
        assert needed > 10 and notes.content_region.height == needed  # past half the screen: in full
        shown = " ".join(row.strip() for row in _screen_rows(app))  # wrapped where the agents' names end
        assert "(F3 picks one)." in shown  # the last note's last words


async def test_a_users_pasted_log_keeps_its_lines_and_stars(tmp_path):
    """A user's prompt is shown as typed: a pasted terminal log keeps its line breaks (Markdown
    joined them into one paragraph), ``#`` lines and globs keep their characters."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home, cwd="/w/logs")
    s.user("the build breaks:\n$ make test\n# running src/**/*.py\nFAILED test_one\nFAILED test_two")
    s.assistant("Two *failing* tests.")
    s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _open(app, pilot, "breaks")
        view.go_to(0)
        await pilot.pause()
        lines = [strip.text.strip() for _, strip in view._lines]
        for line in ("the build breaks:", "$ make test", "# running src/**/*.py", "FAILED test_one",
                     "FAILED test_two"):
            assert line in lines
        assert "Two failing tests." in lines  # the assistant's Markdown still rendered


async def test_down_on_the_last_row_stays_there(many):
    """Textual's option list wrapped Down round to the first row; holding Down while the next
    rows load jumped back to the top (found by a fresh-user trial)."""
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"bath")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        await pilot.press("down", "end")
        await settle(pilot)
        last = results.option_count - 1
        assert results.highlighted == last == len(results.hits) - 1
        await pilot.press("down", "down")
        assert results.highlighted == last


async def test_more_rows_after_a_search_that_stopped_early_keep_the_rows_shown(many):
    """A search stopped at its time limit ranks what it found so far, so a deeper page can
    order the first rows otherwise: the rows shown stay, the answer's other sessions follow
    them, and nothing is held back as new (found by a fresh-user trial at 1 GB)."""
    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        engine_search = app.engine.search

        def stopped_early(query, **kw):  # the deeper page in another order, as out of time
            result = engine_search(query, **kw)
            if kw.get("limit", 20) > 20:
                result.hits.reverse()
            result.partial = True
            return result

        app.engine.search = stopped_early
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        shown = [h.session.session_id for h in results.hits]
        assert len(shown) == 20
        await pilot.press("down", "end")
        await settle(pilot)
        now = [h.session.session_id for h in results.hits]
        assert now[:20] == shown and len(now) == len(set(now)) == 60
        assert app.screen._pending is None
        assert "new sessions" not in str(app.screen.query_one("#status").render())


async def test_a_search_that_stopped_before_finding_anything_says_so(many):
    from crabsearch.search import SearchResult

    app = app_of(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.engine.search = lambda query, **kw: SearchResult(query=query, hits=[], partial=True)
        await pilot.press(*"to the")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "Nothing found for “to the” before the search stopped" in status
        assert "No session matches" not in status


async def test_a_pasted_text_of_several_lines_is_one_query(many):
    """Textual's Input kept a paste's first line and dropped the others silently."""
    from textual import events

    from crabsearch.tui.filters import QueryInput

    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        box = app.screen.query_one(QueryInput)
        box.post_message(events.Paste("capybara\r\n  wants\n\nbath\n"))
        await settle(pilot)
        assert box.value == "capybara wants bath"
        assert app.screen.result.query == "capybara wants bath"


async def test_down_before_the_rows_come_moves_into_them_when_they_do(many, monkeypatch):
    """A fresh-user trial at 1 GB: Down pressed while the list was empty and the search still
    running did nothing (the next key went into the box). Now the focus goes to the rows when
    they arrive; a key typed in between keeps it in the box."""
    import time

    from crabsearch.search.engine import Engine

    app = app_of(many)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"zzqqxx")  # nothing matches: no rows
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        box = app.screen.query_one("#query")
        assert results.option_count == 0
        real = Engine.search

        def slow(self, *a, **k):
            time.sleep(0.3)
            return real(self, *a, **k)
        monkeypatch.setattr(Engine, "search", slow)
        box.value = "capybara"  # the box's text replaced (no empty box: the recent sessions)
        await pilot.press("down")
        assert app.focused is box and results.option_count == 0  # still on its way
        await settle(pilot)
        assert app.focused is results and results.highlighted == 0 and results.option_count
        await pilot.press("up")  # back to the box
        box.value = "zzqqxx"
        await settle(pilot)
        box.value = "capybara"
        box.cursor_position = len(box.value)
        await pilot.press("down", *"s")  # typing on after Down: the box keeps the focus and keys
        await settle(pilot)
        assert app.focused is box and box.value == "capybaras"


# -- a fresh-user trial: the footer at 80 columns -------------------------------------------


def _footer_hints(app) -> dict:
    """The footer's hints shown on screen, by key (``[`` and ``]`` of a group too), each
    asserted whole and left of the palette key (docked right)."""
    from textual.widgets._footer import FooterKey, FooterLabel

    from crabsearch.tui.footer import KeyFooter

    footer = app.screen.query_one(KeyFooter)
    palette = footer.query_one(".-command-palette")
    assert palette.region.right == footer.region.right
    shown = {}
    for widget in footer.query("FooterKey, FooterLabel"):
        if widget is palette or not widget.display or not widget.parent.display:
            continue
        text = widget.key_display + widget.description if isinstance(widget, FooterKey) else str(widget.content)
        assert widget.region.width >= len(text) and widget.region.right <= palette.region.x, text
        shown[widget.key_display if isinstance(widget, FooterKey) else str(widget.content)] = widget
    return shown


@pytest.mark.parametrize("width", [80, 50])
async def test_every_footer_hint_shown_fits_and_the_session_view_names_both_brackets(sample, width):
    """At 80 columns the session view's footer showed ``f`` of ``f2 Status`` and a highlighted
    row's ended in ``f3 Agen``: the least needed hints are left out until the others fit whole;
    Esc, F1, Ctrl+Q and a row's ``o`` stay. The session view shows ``[ ] Hits`` (it showed
    ``] Next hit`` only)."""
    app = app_of(sample)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        assert {"f1", "^q"} <= set(_footer_hints(app))
        await pilot.press(*"cron")
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        hints = _footer_hints(app)
        assert {"o", "esc", "f1", "^q"} <= set(hints)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        hints = _footer_hints(app)
        assert {"[", "]", "Hits", "esc", "f1", "^q"} <= set(hints)
        assert hints["["].region.right < hints["]"].region.x < hints["Hits"].region.x  # `[ ] Hits`


# -- a fresh-user trial: the message `]` went to is marked ------------------------------------


async def test_the_marker_follows_the_match_the_brackets_go_to(fruity):
    """After ``]`` the message it went to had no ``▶`` (the hit kept it): where the jump landed
    did not show. The marker, and its tinted background, follow the current match."""
    import re

    app = app_of(fruity)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _open(app, pilot, "zebra")

        def marked() -> list[str]:
            return [re.match(r"▶ *(#\d+)", row).group(1) for row in _screen_rows(app) if row.startswith("▶")]

        assert marked() == [f"#{view.hit_index + 1}"]
        view.go_to(0)
        await settle(pilot)
        for key, landed in (("right_square_bracket", 2), ("right_square_bracket", 5), ("left_square_bracket", 2)):
            await pilot.press(key)
            await settle(pilot)
            assert view.cursor == landed
            assert marked() == [f"#{landed + 1}"]  # only there
            tinted = [b.item.message_index for b in view._blocks if b.strips
                      and next(iter(b.strips[0])).style.bgcolor != view.rich_style.bgcolor]
            assert tinted == [landed]


# -- a fresh-user trial: the help at 50 columns -----------------------------------------------


def _help_entries(lines: list[str], column: int) -> list[tuple[str, str]]:
    """``(keys, what)`` read back from the help's lines, with the descriptions at ``column``:
    a line is a heading, blank, keys at two spaces (with the start of their description at
    ``column``, or alone), or more of the description starting exactly at ``column``."""
    out = []
    for line in lines:
        if not line.strip() or not line.startswith(" "):
            continue  # blank, a heading
        if line[2] != " ":
            beside = line[column - 2:column] == "  " and line[column:column + 1].strip()
            out.append((line[2:column].strip() if beside else line.strip(), line[column:] if beside else ""))
        else:
            assert not line[:column].strip() and line[column] != " ", f"under the keys: {line!r}"
            out[-1] = (out[-1][0], (out[-1][1] + " " + line[column:]).strip())
    return out


@pytest.mark.parametrize("width", [50, 80])
async def test_the_help_wraps_each_description_under_itself(sample, width):
    """F1 at 50x20: the descriptions wrapped under the keys (``(empty: recent)`` at the panel's
    left edge, every entry on two broken lines). Each description now wraps under its own start;
    on a narrow panel the key column narrows and keys too wide for it take a line of their own."""
    from rich.cells import cell_len
    from textual.geometry import Region

    from crabsearch.tui.panels import KEYS

    app = app_of(sample)
    async with app.run_test(size=(width, 20)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        body = app.screen.query_one(".panel-body")
        lines = [s.text.rstrip() for s in body.render_lines(Region(0, 0, body.size.width, body.size.height))]
        column = next(line.index("search as you type") for line in lines if "search as you type" in line)
        assert column <= 16 if width == 50 else column == 22
        assert _help_entries(lines, column) == [(k, w) for _, keys in KEYS for k, w, *_ in keys]
        assert max(cell_len(line) for line in lines) <= body.size.width

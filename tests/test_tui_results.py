"""The result list in the app: the first paint, typing into it, the cursor across refreshes, more
rows, row layout."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from builders import NOW, ClaudeSession, settle
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.results import ResultList
from crabsearch.tui.session import SessionScreen
from tui_helpers import app_of, many  # noqa: F401 (many: a fixture)


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

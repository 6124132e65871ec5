"""The filter bar: query-text helpers, Tab completion, chips and the F3/F4/F5 pickers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from textual import events
from textual.widgets import Static

from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.filters import (FilterChips, PickerScreen, completions, filters, remove_token,
                                    set_filter)
from crabsearch.tui.results import ResultList

from builders import NOW, ClaudeSession, settle

FACETS = {"agent": [("claude", 3), ("codex", 1)], "project": [("webapp", 2), ("api", 1), ("web-old", 1)]}


def test_set_filter_replaces_adds_and_removes():
    assert set_filter("cron agent:codex", "agent", "claude") == "cron agent:claude "
    assert set_filter("cron", "since", "7d") == "cron since:7d "
    assert set_filter("cron agent:codex since:7d", "agent", "") == "cron since:7d "
    assert set_filter('"a phrase" agent:x', "agent", None) == '"a phrase" '
    assert set_filter("", "agent", None) == ""


def test_filters_and_remove_token_keep_the_rest_of_the_text():
    text = 'retry agent:codex "agent:not a filter" project:api'
    assert [(t.key, t.value) for t in filters(text)] == [("agent", "codex"), ("project", "api")]
    start = filters(text)[0].start
    assert remove_token(text, start) == 'retry "agent:not a filter" project:api'


def test_completions_for_names_and_values():
    assert completions("cron ag", 7, FACETS) == (5, 7, ["agent:"])
    assert completions("agent:c", 7, FACETS)[2] == ["agent:claude", "agent:codex"]
    assert completions("project:web x", 11, FACETS)[2] == ["project:webapp", "project:web-old"]
    assert completions("project:pi", 10, FACETS)[2] == ["project:api"]  # no prefix: contains
    assert completions("since:", 6, FACETS)[2][:2] == ["since:today", "since:yesterday"]
    assert completions("cron", 4, FACETS)[2] == []
    assert completions("agent:claude", 12, FACETS)[2] == []  # already complete


def make_app(sample, **kw):
    home, index_dir = sample
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False, **kw)


async def test_tab_completes_and_cycles_then_moves_to_results(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        box = app.screen.query_one("#query")
        await pilot.press(*"cron ag", "tab")
        assert box.value == "cron agent:"
        await pilot.press("c", "tab")
        assert box.value == "cron agent:claude "
        await pilot.press("tab")
        assert box.value == "cron agent:codex "
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert {h.session.agent for h in results.hits} == {"codex"}
        chips = app.screen.query_one(FilterChips)
        assert chips.display and "agent:codex ✕" in str(chips.render())
        await pilot.press("space", "tab")  # nothing to complete: into the results
        assert app.focused is results


async def test_clicking_a_chip_removes_its_filter(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron agent:codex")
        await settle(pilot)
        chips = app.screen.query_one(FilterChips)
        await pilot.click(chips, offset=chips.chip_offset(0))
        await settle(pilot)
        assert app.screen.query_one("#query").value == "cron"
        assert not chips.display
        assert len(app.screen.query_one(ResultList).hits) == 3


async def test_a_filter_written_many_times_is_one_chip_and_one_click_removes_it(sample):
    """A fresh-user trial: a ~1,000-character query repeating ``agent:codex`` showed ten
    identical chips (and a click removed one of them, the others staying)."""
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#query")
        box.value = " ".join(["cron agent:codex"] * 60) + " agent:claude agent:codex"
        assert len(box.value) > 1000
        await settle(pilot)
        chips = app.screen.query_one(FilterChips)
        shown = str(chips.render())
        assert shown.count("agent:codex ✕") == 1 and shown.count("agent:claude ✕") == 1
        assert chips.size.height == 1
        await pilot.click(chips, offset=chips.chip_offset(0))
        await settle(pilot)
        assert "agent:codex" not in box.value and box.value.endswith("cron agent:claude")
        assert [t.text for t in filters(box.value)] == ["agent:claude"]


async def test_f3_f4_f5_pick_agent_project_and_date(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        box = app.screen.query_one("#query")
        await pilot.press("f3")
        assert isinstance(app.screen, PickerScreen)
        labels = [str(app.screen.query_one("#choices").get_option_at_index(i).prompt)
                  for i in range(app.screen.query_one("#choices").option_count)]
        assert labels[0].startswith("any") and "Claude  (3 sessions)" in labels and "Codex  (1 session)" in labels
        await pilot.press(*"codex", "enter")
        assert box.value == "agent:codex "
        await settle(pilot)
        assert [h.session.agent for h in app.screen.query_one(ResultList).hits] == ["codex"]
        await pilot.press("f3", *"any", "enter")  # "any" removes it
        assert box.value == ""
        await pilot.press("f4", *"bigrepo", "enter")
        assert box.value == "project:bigrepo "
        await pilot.press("f5", "down", "down", "down", "enter")
        assert box.value == "project:bigrepo since:7d "
        await pilot.press("f4", "escape")  # cancel keeps the text
        assert box.value == "project:bigrepo since:7d "


def picker_labels(app) -> list[str]:
    options = app.screen.query_one("#choices")
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_the_pickers_count_the_sessions_the_other_filters_allow(sample):
    """F4 listed every project whatever the query's other filters (projects with no Codex
    session for ``agent:codex cron``): it lists the projects of the sessions they allow, with
    those sessions counted, most first; F3 the agents of the project's sessions; the words do
    not narrow them (the engine's ``facets``, the TUI counts nothing itself)."""
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        box = app.screen.query_one("#query")
        await pilot.press(*"agent:codex cron")
        await settle(pilot)
        await pilot.press("f4")
        assert isinstance(app.screen, PickerScreen)
        assert picker_labels(app) == ["any (remove this filter)", "api  (1 session)"]
        assert "(of agent:codex)" in str(app.screen.query_one(".panel-title").render())
        await pilot.press("escape")
        box.value = "project:webapp since:2026-03-01 agent:vim "
        await settle(pilot)
        await pilot.press("f3")
        assert picker_labels(app) == ["any (remove this filter)", "Claude  (1 session)"]
        await pilot.press("escape")
        box.value = "since:2026-03-15 "
        await settle(pilot)
        await pilot.press("f4")
        assert picker_labels(app) == ["any (remove this filter)", "api  (1 session)", "webapp  (1 session)"]


def app_with_130_sessions(tmp_path) -> CrabsearchApp:
    """130 sessions matching "capybara", each with a distinct score (longer text, lower score)."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    for n in range(130):
        ClaudeSession(home, session_id=f"00000000-0000-4000-8000-{n:012d}", cwd=f"/w/p{n}",
                      start=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(hours=n)).user(
            "capybara wants a bath " + "and more words " * n).title("bath time").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False,
                         cursor_blink=False)


async def test_more_rows_load_as_the_cursor_nears_the_end(tmp_path):
    """A typed query lists a screenful (20 rows here), and 50 more as the cursor nears the end;
    the rows shown stay where they are (a page's rows do not depend on its size), nothing is
    held back as new."""
    app = app_with_130_sessions(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert len(results.hits) == results.screenful() == 20
        assert "20+ sessions" in str(app.screen.query_one("#status").render())
        await pilot.press("down")
        shown = [h.session.session_id for h in results.hits]
        for cursor, rows in ((16, 70), (66, 120), (116, 130)):
            results.highlighted = cursor
            await settle(pilot)
            assert len(results.hits) == rows and results.highlighted == cursor
            assert [h.session.session_id for h in results.hits[:len(shown)]] == shown
            assert app.screen._pending is None
            shown = [h.session.session_id for h in results.hits]
        assert "130 sessions" in str(app.screen.query_one("#status").render())


async def test_scrolling_to_the_end_with_the_mouse_loads_more(tmp_path):
    app = app_with_130_sessions(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"capybara")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert len(results.hits) == 20
        for rows in (70, 120, 130):
            results.scroll_end(animate=False, immediate=True)  # what the wheel or the scrollbar does
            await pilot.pause()
            await settle(pilot)
            assert len(results.hits) == rows


def test_filter_values_with_spaces_are_quoted_and_parsed():
    from crabsearch.query import parse

    text = set_filter("worker", "project", "claude app")
    assert text == 'worker project:"claude app" '
    assert [(t.key, t.value) for t in filters(text)] == [("project", "claude app")]
    q = parse(text)
    assert q.project == "claude app" and q.words == ["worker"]
    assert completions("project:cl", 10, {"project": [("claude app", 1)]})[2] == ['project:"claude app"']
    assert remove_token(text, filters(text)[0].start) == "worker"


async def test_second_tab_after_a_filter_name_completes_its_values(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        box = app.screen.query_one("#query")
        await pilot.press(*"ag", "tab")
        assert box.value == "agent:"
        await pilot.press("tab")
        assert box.value == "agent:claude "


def notes_of(app) -> str:
    notes = app.screen.query_one("#notes")
    return str(notes.render()) if notes.display else ""


async def test_a_filter_being_completed_says_nothing_until_the_typing_stops(sample, monkeypatch):
    """Tab's ``agent:`` (its value comes at the next Tab) said "agent: needs a name ... filter
    ignored" at once, while the completion was being chosen. A filter at the end of the box that
    more typing can still make valid says what it lacks only once the typing stops: Enter, or a
    pause; one no typing can make valid (``agent:vim``) says so at once."""
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "QUOTE_PAUSE", 0.3)
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#query")
        await pilot.press(*"cron ag", "tab")
        await settle(pilot)
        assert box.value == "cron agent:" and notes_of(app) == ""
        await pilot.press("c")
        await settle(pilot)
        assert notes_of(app) == ""  # agent:c: claude, codex, cline... to come
        await pilot.press("tab")
        await settle(pilot)
        assert box.value == "cron agent:claude " and notes_of(app) == ""
        await pilot.press(*"agent:")
        await settle(pilot)
        assert notes_of(app) == ""
        await pilot.press("enter")  # the typing stopped: it says so
        await settle(pilot)
        assert "agent: needs a name" in notes_of(app)
        box.focus()
        await pilot.press("backspace", "backspace", *"t:")
        await settle(pilot)
        assert notes_of(app) == ""
        await pilot.pause(0.5)  # a pause: it says so too
        assert "agent: needs a name" in notes_of(app)
        await pilot.press(*"vim")
        await settle(pilot)
        assert "no agent is called “vim”" in notes_of(app)


async def test_notifications_show_brackets_as_written(sample):
    from crabsearch import config

    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(problem="x.toml: [keys] bogus is not an action"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        toast = next(n for n in app._notifications if "bogus" in n.message)
        assert not toast.markup and "[keys] bogus" in toast.message


def drawn_chips(chips: FilterChips) -> dict[str, bool]:
    """``{chip's filter text: drawn struck out (ignored)?}`` as the chips row draws it."""
    drawn = chips.render()
    out = {}
    for span in drawn.spans:  # a chip's text is bold (the label and the hint are dim)
        piece = drawn.plain[span.start:span.end].strip()
        if piece and not isinstance(span.style, str) and span.style.bold:
            out[piece] = out.get(piece, False) or bool(span.style.strike)
    return out


IGNORED = ["since:banana", "until:zz", "role:tool", "agent:vim", 'project:"  "', "in:nowhere"]
KEPT = ["since:7d", "until:2026-01-31", "role:user", "agent:codex", "project:webapp", "in:tools"]


async def test_a_filter_the_search_ignores_is_a_chip_marked_ignored(sample):
    """``since:banana token`` showed a chip like any filter's while the note under the status
    said the filter was ignored (not a date). A filter the search leaves out (check_filters: a
    date that is no date, an unknown agent or role, a blank project, an unknown place) is still
    a chip, so clicking it removes it, but struck out, with a hint saying struck out means
    ignored; the filters that filter are drawn as before."""
    app = make_app(sample)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#query")
        await pilot.press(*"since:banana token")
        await settle(pilot)
        chips = app.screen.query_one(FilterChips)
        assert chips.display and drawn_chips(chips) == {"since:banana": True}
        assert "struck out: ignored" in str(chips.render())
        assert "since:banana" in str(app.screen.query_one("#notes").render())
        for bad, good in zip(IGNORED, KEPT):
            box.value = f"token {bad} {good}"
            await settle(pilot)
            assert drawn_chips(chips) == {bad: True, good: False}, (bad, good)
        box.value = "token " + " ".join(KEPT)
        await settle(pilot)
        assert drawn_chips(chips) == dict.fromkeys(KEPT, False)
        assert "ignored" not in str(chips.render())
        box.value = "token since:banana agent:codex"
        await settle(pilot)
        await pilot.click(chips, offset=chips.chip_offset(0))  # an ignored chip still removes its filter
        await settle(pilot)
        assert box.value == "token agent:codex" and drawn_chips(chips) == {"agent:codex": False}


async def test_picker_keys_home_end_and_pages_move_the_choice_enter_picks(sample):
    """End then Enter in the F5 picker did nothing: End moved the narrowing box's text cursor,
    and Enter picked the option still highlighted ("any": no filter to remove). Home, End,
    PageUp and PageDown move in the list (F3, F4 and F5 alike); Enter picks what they reach."""
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        box = app.screen.query_one("#query")

        async def pick(key: str, *keys: str) -> tuple[str | None, list[str]]:
            await pilot.press(key, *keys)
            assert isinstance(app.screen, PickerScreen)
            choices = app.screen.query_one("#choices")
            ids = [choices.get_option_at_index(i).id[2:] for i in range(choices.option_count)]
            highlighted = choices.highlighted
            await pilot.press("enter")
            assert not isinstance(app.screen, PickerScreen)
            return ids[highlighted] if highlighted is not None else None, ids

        picked, ids = await pick("f5", "end")
        assert picked == ids[-1] == "365d" and box.value == "since:365d "
        picked, _ = await pick("f5", "home")  # the current value (365d) was highlighted: Home is "any"
        assert picked == "" and box.value == ""
        picked, _ = await pick("f5", "pagedown")
        assert picked == "365d" and box.value == "since:365d "
        picked, _ = await pick("f5", "pageup")
        assert picked == "" and box.value == ""
        picked, ids = await pick("f3", "end")
        assert picked == ids[-1] == "codex" and box.value == "agent:codex "
        picked, _ = await pick("f3", "home")
        assert picked == "" and box.value == ""
        picked, ids = await pick("f4", "end")
        assert picked == ids[-1] != "" and box.value == f"project:{ids[-1]} "
        picked, _ = await pick("f4", *"big", "end", "home")  # narrowed: Home is the first left
        assert picked == "bigrepo" and box.value == "project:bigrepo "
        await pilot.press("f5")
        for k in [*"days", "end", "enter"]:  # one burst: End comes before the letters' narrowing
            app.post_message(events.Key(k, k if len(k) == 1 else None))
        await settle(pilot)
        assert box.value == "project:bigrepo since:90d "  # the last of 7, 30 and 90 days


async def test_a_picker_fits_a_small_screen_and_shows_the_highlighted_option(tmp_path):
    """A fresh-user trial: at 60x15, F4 then End highlighted the last project below the screen's
    edge (the list kept all its rows, the dialog's bottom and its hint were cut off) and Enter
    picked it unseen. The list gets the rows the screen has room for and scrolls to the
    highlighted option; the hint stays on screen, at every size and after a resize."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    for i in range(12):  # 12 projects: the F4 list's 13 options (any, then each) need 13 rows
        ClaudeSession(home, session_id=f"00000000-0000-4000-8000-{i:012d}", cwd=f"/w/project{i:02d}",
                      start=NOW - timedelta(days=1, hours=i)).user(f"note {i}").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False,
                        cursor_blink=False)

    async def check(key: str) -> None:
        screen = app.screen
        assert isinstance(screen, PickerScreen), key
        options, hint = screen.query_one("#choices"), screen.query(Static).last()
        panel = screen.query_one(".picker").content_region
        assert options.highlighted == options.option_count - 1 > 0  # End: the last option
        line = options.highlighted - options.scroll_offset.y  # one line per option
        assert 0 <= line < options.scrollable_content_region.height, (key, app.size)
        assert screen.region.contains_region(panel)
        assert panel.contains_region(options.region) and panel.contains_region(hint.region), (key, app.size)
        at = options.region.offset + (2, line)
        assert screen.get_widget_at(*at)[0] is options and screen.get_widget_at(*hint.region.offset)[0] is hint

    async with app.run_test(size=(60, 15)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        for size in [(60, 15), (50, 12), (80, 24), (120, 40)]:
            await pilot.resize_terminal(*size)
            for key in ("f4", "f5"):
                await pilot.press(key, "end")
                await pilot.pause()
                await check(key)
                await pilot.press("escape")
        await pilot.press("f4", "end")
        await pilot.resize_terminal(50, 12)  # open, then the terminal shrinks
        await pilot.pause()
        await check("f4 resized")
        options = app.screen.query_one("#choices")
        last = options.get_option_at_index(options.highlighted).id[2:]
        await pilot.press("enter")
        assert last.startswith("project") and app.screen.query_one("#query").value == f"project:{last} "

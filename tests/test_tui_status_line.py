"""The status line and its notes: filters that mean or match nothing, chips, spelling repairs, a
search stopped early."""

from __future__ import annotations

import pytest

from builders import ClaudeSession, settle
from tui_helpers import app_of, many, screen_rows, screen_words  # noqa: F401 (many: a fixture)


@pytest.mark.parametrize("query,says", [
    ("agent:vim", "agent:vim: no agent is called “vim” (F3 picks one)."),
    ("since:banana", "since:banana: that is not a date; write 2026-01-31, today, yesterday, or a time ago"),
    ("role:tool", "role:tool: no role is called “tool”; the roles are user (what you said) and assistant"),
    ("agent:", "agent: needs a name (F3 picks one)."),
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
        assert "Showing the recent sessions." in screen_words(app)


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
        assert f"No session matches “{query.strip()}”" in screen_words(app)


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
        assert needed > 3 and notes.content_region.height == needed
        rows = "\n".join(screen_rows(app))
        assert "(F5 picks one)." in rows  # the second note's last words


async def test_a_bad_filter_beside_words_searches_the_words(sample):
    app = app_of(sample)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron agent:vim")
        await settle(pilot)
        assert len(app.screen.result.hits) == 3
        assert str(app.screen.query_one("#status").render()).startswith("3 sessions")
        assert str(app.screen.query_one("#notes").render()).startswith("agent:vim: no agent is called “vim”")


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
        assert "for “config” instead of “con”" in str(app.screen.query_one("#status").render())
        await pilot.press("f")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "cong" not in status and "for “config” instead of “conf”" in status, status
        assert all("config" in h.item.text for h in app.screen.result.hits)
        await pilot.press("space")  # the word is done: a repair may apply now
        await settle(pilot)
        assert "for “cong” instead of “conf”" in str(app.screen.query_one("#status").render())
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
        rows = screen_rows(app)
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
        shown = " ".join(row.strip() for row in screen_rows(app))  # wrapped where the agents' names end
        assert "(F3 picks one)." in shown  # the last note's last words


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


async def test_a_search_out_of_time_before_finding_anything_goes_on_to_its_end(many):
    """A long pasted text of common words: the time-limited search as you type found nothing in
    its time (a user trial: "Nothing found ... before the search stopped" where the command line
    found 20 sessions); the app then searches on without the limit and shows what it finds."""
    from crabsearch.search import SearchResult

    app = app_of(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        searched = []
        search = app.engine.search

        def out_of_time_at_first(query, **kw):  # as a large index does with such a query
            searched.append(kw.get("time_limit"))
            if kw.get("time_limit"):
                return SearchResult(query=query, hits=[], partial=True)
            return search(query, **kw)

        app.engine.search = out_of_time_at_first
        await pilot.press(*"wants more words and a nap ")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert searched[-2:] == [0.5, None]
        assert "before the search stopped" not in status and status.startswith("20+ sessions"), status


async def test_while_the_answer_to_new_text_is_on_its_way_the_count_is_not_said_of_it(sample):
    """After a search for one agent's sessions, the box cleared and ``ag`` Tab (``agent:``,
    its value still to choose) showed the old rows' count under the new text, as if it
    answered it (one session, where ``agent:`` lists the recent ones), until the answer came.
    While an answer to the box's text is on its way the status line says so instead."""
    import threading

    from crabsearch.tui.screens import SearchScreen

    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"agent:codex")
        await settle(pilot)
        status = lambda: str(app.screen.query_one("#status").render())  # noqa: E731
        assert status() == "Recent sessions (1)"  # the filter alone: its recent sessions
        gate = threading.Event()  # the answers wait for the test
        answer = SearchScreen._answer
        app.screen._answer = lambda *asked: (gate.wait(10), answer(app.screen, *asked))[1]
        await pilot.press("escape", *"ag", "tab")
        await pilot.pause(0.1)
        assert app.screen.query_text == "agent:" and not app.screen.settled
        assert "(1)" not in status() and "Recent sessions" not in status(), status()
        assert "agent:" in status(), status()
        gate.set()
        await settle(pilot)
        assert status().startswith("Recent sessions (4)")


async def test_a_long_query_is_quoted_short_so_what_the_line_says_shows(many):
    """A pasted page that matches nothing: the status line quotes its first 60 characters, so
    "No session matches" and why stay on screen (a user trial: a 5,000-character paste filled the
    line with the query)."""
    from crabsearch.tui.statusline import QUOTED_CHARS

    app = app_of(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        from textual import events

        from crabsearch.tui.filters import QueryInput

        pasted = " ".join(f"zzqx{n}" for n in range(80))
        box = app.screen.query_one(QueryInput)
        box.focus()
        box.post_message(events.Paste(pasted + " "))
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        quote = pasted[:QUOTED_CHARS - 1].rstrip() + "…"
        assert status.startswith(f"No session matches “{quote}”"), status

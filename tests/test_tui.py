"""Pilot tests of the terminal app: typing, results, expanding, widening, opening, going back."""

from __future__ import annotations

from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.results import ResultList
from crabsearch.tui.panels import HelpScreen
from crabsearch.tui.screens import SearchScreen
from crabsearch.tui.session import SessionScreen
from crabsearch.tui.transcript import PAGE, TranscriptView

from builders import NOW, ClaudeSession
from builders import settle as wait_settled


def make_app(sample, **kw):
    home, index_dir = sample
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, **kw)


async def settle(app, pilot):
    await wait_settled(pilot)


async def type_query(app, pilot, text):
    await pilot.press(*text)
    await settle(app, pilot)


async def test_opens_on_recent_sessions(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        results = app.screen.query_one(ResultList)
        assert results.option_count == 4
        assert results.hits[0].session.title == "Fix the double cron run"
        assert app.focused is app.screen.query_one("#query")


async def test_the_recent_sessions_are_in_the_first_paint(sample, monkeypatch):
    """The app reads the recent sessions as it loads: the screen's first frame already lists
    them (no search worker, no frame of an empty list first). Read too late for the first
    paint, they come from the worker as before, once. (Rows kept by the last listing,
    ``test_snapshot``, are not read at all.)"""
    import time

    from textual.app import App

    from crabsearch.search import Engine, snapshot
    from crabsearch.tui import screens

    frames, workers = [], []
    display, search = App._display, SearchScreen._search

    def frame(self, screen, renderable):
        if renderable is not None and isinstance(screen, SearchScreen):
            frames.append(len(screen.query_one(ResultList).hits))
        return display(self, screen, renderable)

    def counted(self, *a, **k):
        workers.append(self._asked[0])  # the text the worker is started for
        return search(self, *a, **k)

    monkeypatch.setattr(App, "_display", frame)
    monkeypatch.setattr(SearchScreen, "_search", counted)
    monkeypatch.setattr(snapshot, "load", lambda *a: None)  # no rows kept: read as the app loads
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert frames and frames[0] == 4 and workers == []
    frames.clear()
    recent = Engine.recent
    monkeypatch.setattr(Engine, "recent", lambda self, **k: time.sleep(0.3) or recent(self, **k))
    monkeypatch.setattr(screens, "FIRST_LIST_WAIT", 0.01)
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert frames[0] == 0 and frames[-1] == 4 and workers == [""]
        assert app.screen.query_one(ResultList).option_count == 4


async def test_typing_searches_one_row_per_session(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "cron")
        results = app.screen.query_one(ResultList)
        ids = [h.session.session_id for h in results.hits]
        assert len(ids) == len(set(ids)) == 3
        assert results.terms == ["cron"]


async def test_stale_results_are_dropped(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        from crabsearch.search import SearchResult
        from crabsearch.tui.messages import SearchDone

        await type_query(app, pilot, "backoff")
        screen.post_message(SearchDone(screen._generation - 1, SearchResult("stale", [])))
        await pilot.pause()
        assert screen.query_one(ResultList).option_count == 1


async def test_each_key_searches_at_once_and_stops_the_stale_search(sample, monkeypatch):
    """No typing pause is waited for: each key starts a search, and the search still running for
    the text before it is told to stop (its ``stop`` event set), so only the last text's search
    runs to the end and its results are the ones shown."""
    import threading

    from crabsearch.search import Engine

    stops: list[tuple[str, threading.Event]] = []
    real = Engine.search

    def search(self, query, **kw):
        stops.append((query, kw["stop"]))
        return real(self, query, **kw)

    monkeypatch.setattr(Engine, "search", search)
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"backo")
        await type_query(app, pilot, "ff")
        assert [q for q, _ in stops][-2:] == ["backof", "backoff"]
        assert all(stop.is_set() for _, stop in stops[:-1]) and not stops[-1][1].is_set()
        assert app.screen.result.query == "backoff"
        assert app.screen.query_one(ResultList).option_count == 1


async def test_a_burst_of_keys_searches_for_the_text_as_it_is_not_once_per_key(sample, monkeypatch):
    """400 characters arriving as single keys before the app handles the first (a terminal
    without bracketed paste): one search worker takes the newest text when it is free, and the
    box and the results end on the whole text. A worker per key (each cancelling all the ones
    before it) made 2,000 keys freeze the box for seconds."""
    from textual import events
    from textual.worker_manager import WorkerManager

    started: list[str] = []
    add = WorkerManager.add_worker

    def add_worker(self, worker, start=True, exclusive=True):
        started.append(worker.group)
        return add(self, worker, start, exclusive)

    monkeypatch.setattr(WorkerManager, "add_worker", add_worker)
    text = ("the nightly backoff job " * 20)[:400] + "backoff"
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        started.clear()
        for ch in text:
            app.post_message(events.Key("space" if ch == " " else ch, ch))
        await settle(app, pilot)
        assert app.screen.query_one("#query").value == text
        assert app.screen.result.query == text
        assert 1 <= started.count("search") <= 10


async def test_editing_keys_in_a_burst_apply_where_they_were_typed(sample):
    """Backspace and the arrows sent in one burst with printable keys (automation, a fast
    typist) edit the box in the order the keys came: Textual ran the box's bindings only once
    the key had bubbled up to the app, after the printable keys behind it were inserted
    (a fresh-user trial: ``snapx``, Backspace, ``shot`` gave ``snapxsho``; Backspace right
    after Down was lost)."""
    from textual import events

    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        for keys, want in (([*"snapx", "backspace", *"shot"], "snapshot"),
                           ([*"cron", "left", "left", *"XY", "end", *"!"], "crXYon!"),
                           ([*"cron", "down", "backspace"], "cro")):  # into the results and back
            app.screen.query_one("#query").value = ""
            await settle(app, pilot)
            for k in keys:
                app.post_message(events.Key(k, k if len(k) == 1 else None))
            await settle(app, pilot)
            assert app.screen.query_one("#query").value == want


async def test_down_enter_expands_and_plus_minus_resize(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "idempotent")
        await pilot.press("down")
        results = app.screen.query_one(ResultList)
        assert app.focused is results
        await pilot.press("enter")
        before, after, window = results.expanded[0]
        assert (before, after) == (4, 3)  # the session ends 3 messages after the hit
        assert [i.message_index for i in window] == list(range(1, 9))
        assert sum(i.hit for i in window) == 1
        await pilot.press("minus")
        assert [i.message_index for i in results.expanded[0][2]] == [3, 4, 5, 6]
        await pilot.press("minus", "minus", "minus")
        assert [i.message_index for i in results.expanded[0][2]] == [5]
        await pilot.press("plus")
        assert len(results.expanded[0][2]) == 5
        for _ in range(6):
            await pilot.press("plus")
        assert [i.message_index for i in results.expanded[0][2]] == list(range(9))  # the whole session
        await pilot.press("enter")
        assert results.expanded == {}
        await pilot.press("right")
        assert 0 in results.expanded
        await pilot.press("left")
        assert results.expanded == {}


async def test_open_session_at_hit_and_back(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "parser")
        await pilot.press("down", "o")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        view = app.screen.query_one(TranscriptView)
        hit = app.screen.hit.message_index
        assert hit == 561
        assert hit in view.loaded and len(view.loaded) <= 3 * PAGE < view.total  # only pages near the hit
        assert view.top_message() == hit
        await pilot.press("escape")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("escape")
        assert app.focused is app.screen.query_one("#query")


async def test_session_view_pages_both_ways(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "parser")
        await pilot.press("down", "o")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        first_lo = view.lo
        for _ in range(20):
            await pilot.press("pageup")
        assert view.lo < first_lo  # earlier pages were read as we scrolled up
        await pilot.press("G")
        await pilot.pause()
        assert view.hi == view.total == 600
        await pilot.press("g")
        await pilot.pause()
        assert view.lo == 0 and view.top_message() == 0


async def test_typing_in_results_goes_to_search_box(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "cro")
        await pilot.press("down", "n")
        await settle(app, pilot)
        box = app.screen.query_one("#query")
        assert app.focused is box and box.value == "cron"
        await pilot.press("down", *"zo")  # "o" right after a letter goes to the box, not "open"
        await settle(app, pilot)
        assert isinstance(app.screen, SearchScreen) and box.value == "cronzo"


async def test_help_screen(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("down", "question_mark")
        assert isinstance(app.screen, HelpScreen)


async def test_markup_and_escapes_shown_literally(sample):
    app = make_app(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "literal")
        results = app.screen.query_one(ResultList)
        rendered = "".join(seg.text for strip in results.render_lines(results.region.reset_offset) for seg in strip)
        assert "[bold]literal[/bold]" in rendered and "[/path]" in rendered
        await pilot.press("down", "o")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        text = "".join(seg.text for _, strip in view._lines for seg in strip)
        assert "[red]this[/red]" in text and "\x1b" not in text and "\u241b[31m" in text


async def test_background_indexing_then_refresh(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("a brand new capybara session").write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        assert not app.indexing
        results = app.screen.query_one(ResultList)
        assert results.option_count == 1
        await type_query(app, pilot, "capybara")
        assert results.option_count == 1


async def test_a_start_on_a_built_index_refreshes_it_without_a_key(tmp_path):
    """The recent sessions are in the first paint; after it the app refreshes the index and
    watches the agents' directories (a session written since the last run is listed, and one
    written while the app runs, with no key pressed). Showing the first list before the screen
    had asked for the refresh left the index as it was until the user typed (a user trial)."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    ClaudeSession(home).user("the first capybara session").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    ClaudeSession(home).user("a second session about a wombat").write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        results = app.screen.query_one(ResultList)
        for _ in range(100):
            await settle(app, pilot)
            if results.option_count == 2:
                break
        assert results.option_count == 2


async def test_quitting_while_indexing_stops_the_refresh(tmp_path, monkeypatch):
    """Ctrl+Q during the first build: the refresh is told to stop (its ``cancelled``) instead of
    the app waiting for the whole build to end with a blank terminal (a user trial: 9 s)."""
    import time

    from crabsearch.index.writer import Indexer, RefreshReport

    asked = []

    def refresh(self, progress=None, cancelled=None, **options):  # unchanged=: the refresh gate
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (cancelled and cancelled()):
            time.sleep(0.01)
        asked.append(time.monotonic())
        return RefreshReport()

    monkeypatch.setattr(Indexer, "refresh", refresh)
    home = tmp_path / "home"
    ClaudeSession(home).user("a capybara session").write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        assert app.indexing
        quit_at = time.monotonic()
        await pilot.press("ctrl+q")
    for _ in range(100):
        if asked:
            break
        time.sleep(0.05)
    assert asked and asked[0] - quit_at < 2


async def test_no_transcripts_says_where_it_looked(tmp_path):
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path / "empty")}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        empty = app.screen.query_one("#empty")
        assert empty.display
        text = str(empty.content)
        assert ".claude" in text and ".codex" in text and "crabsearch --demo" in text


async def test_long_tool_output_is_folded_and_e_shows_it_in_full(tmp_path):
    home = tmp_path / "home"
    output = "\n".join(f"log line {i}" for i in range(50))
    ClaudeSession(home).user("show me the build log").tool("Bash", {"command": "make"}, output).write()
    from crabsearch.index import Indexer

    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("down", "o")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)

        def text():
            return "\n".join("".join(seg.text for seg in strip) for _, strip in view._lines)

        assert "log line 7" in text() and "log line 8" not in text() and "42 more lines" in text()
        await pilot.press("e")
        assert "log line 49" in text() and "more lines" not in text()
        await pilot.press("e")
        assert "log line 49" not in text()


async def test_sort_toggle_explain_and_reveal(tmp_path):
    secret = "ghp_FAKEfakeFAKEfakeFAKEfake1234567890ab"
    home = tmp_path / "home"
    from datetime import timedelta

    from builders import T0

    (ClaudeSession(home, "aaaa1111-0000-4000-8000-000000000000", start=T0).user("quokka habitat notes")
     .assistant("quokka " * 5 + "are common on Rottnest").write())
    (ClaudeSession(home, "bbbb2222-0000-4000-8000-000000000000", start=T0 + timedelta(days=3))
     .user("one quokka, and my token " + secret).write())
    from crabsearch.index import Indexer

    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "quokka")
        results = app.screen.query_one(ResultList)
        relevance = [h.session.session_id[:4] for h in results.hits]
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert [h.session.session_id[:4] for h in results.hits] == ["bbbb", "aaaa"]
        assert "newest first" in str(app.screen.query_one("#status").render())
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert [h.session.session_id[:4] for h in results.hits] == relevance
        results.focus()
        results.highlighted = [h.session.session_id[:4] for h in results.hits].index("bbbb")
        await pilot.pause()
        await pilot.press("x")
        from crabsearch.tui.panels import ExplainScreen

        assert isinstance(app.screen, ExplainScreen)
        from textual.widgets import Static

        text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "Score" in text and "user:quokka" in text
        await pilot.press("escape")
        results.highlighted = [h.session.session_id[:4] for h in results.hits].index("bbbb")
        await pilot.press("enter")
        window = results.expanded[results.highlighted][2]
        assert secret not in window[0].text and "ghp_FA" in window[0].text
        bbbb = results.hits[results.highlighted]
        assert secret not in bbbb.session.title  # titles (made from a first prompt) are masked too
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        bbbb = next(h for h in results.hits if h.session.session_id.startswith("bbbb"))
        assert secret in bbbb.item.text  # read back from the transcript: revealed
        assert secret not in bbbb.session.title  # a title is stored, and stored masked (issue 16)


async def test_query_syntax_in_the_app(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "agent:codex retry")
        results = app.screen.query_one(ResultList)
        assert [h.session.agent for h in results.hits] == ["codex"]
        app.screen.query_one("#query").value = ""
        await type_query(app, pilot, "cron -parser -idempotent")
        assert [h.session.session_id[:4] for h in results.hits] == ["019a"]
        app.screen.query_one("#query").value = ""
        await type_query(app, pilot, "crontabb")
        assert "for “crontab” instead of “crontabb”" in str(app.screen.query_one("#status").render())


async def test_status_screen(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        from textual.widgets import Static

        from crabsearch.tui.panels import StatusScreen

        assert isinstance(app.screen, StatusScreen)
        text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "Claude Code: 3 transcripts found" in text and "Codex CLI: 1 transcript found" in text
        assert "0 transcripts found" not in text and "no transcripts found for Gemini CLI, OpenClaw" in text
        await pilot.press("escape")
        assert isinstance(app.screen, SearchScreen)


async def test_the_app_picks_up_new_messages_while_open(tmp_path, monkeypatch):
    import json

    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 0.3)
    home = tmp_path / "home"
    s = ClaudeSession(home).user("first words only")
    path = s.write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "zanzibarquux")
        results = app.screen.query_one(ResultList)
        assert results.option_count == 0
        s.user("a new line about zanzibarquux")
        path.write_text(path.read_text() + json.dumps(s.lines[-1]) + "\n")
        for _ in range(40):
            await pilot.pause(0.1)
            if results.option_count:
                break
        await settle(app, pilot)
        assert results.option_count == 1


async def test_expanded_rows_stay_expanded_when_results_refresh(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "idempotent")
        await pilot.press("down", "enter", "minus")
        results = app.screen.query_one(ResultList)
        sizes = results.expanded[0][:2]
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert results.expanded[0][:2] == sizes and results.expanded[0][2]


async def test_resume_asks_then_exits_with_the_command(sample):
    from crabsearch.tui.panels import ResumeScreen

    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "idempotent")
        await pilot.press("down", "r")
        assert isinstance(app.screen, ResumeScreen)
        await pilot.press("escape")  # cancel: nothing happens
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("o", "r")
        assert isinstance(app.screen, ResumeScreen)
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value == "cd /home/dev/webapp && claude --resume 5c0375b4-57a5-4f26-b12d-d022ee4e51b7"


async def test_brackets_jump_between_matching_messages(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "module 250")
        await pilot.press("down", "o")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        start = view.top_message()
        await pilot.press("right_square_bracket")
        await settle(app, pilot)  # the jump reads pages in a worker
        assert view.top_message() > start
        await pilot.press("g")
        await pilot.pause()
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert view.top_message() == 1  # the next match after message #1 ("module 0" is in both)
        await pilot.press("G")
        await pilot.pause()
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert view.top_message() < 599


async def test_footer_is_rebuilt_only_when_its_keys_change(sample, monkeypatch):
    """The start sends several binding changes that change nothing the footer shows: it is
    built once; moving to the results, whose keys differ, rebuilds it with their keys."""
    from textual.widgets._footer import FooterKey

    from crabsearch.tui.footer import KeyFooter

    built = []
    original = KeyFooter.recompose

    async def counting(self):
        built.append(self.screen)
        return await original(self)

    monkeypatch.setattr(KeyFooter, "recompose", counting)
    app = make_app(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        footer = app.screen.query_one(KeyFooter)
        in_box = [k.description for k in footer.query(FooterKey)]
        assert len(built) == 1 and in_box
        await pilot.press("down")
        await settle(app, pilot)
        assert app.focused is app.screen.query_one(ResultList)
        in_list = [k.description for k in footer.query(FooterKey)]
        assert in_list != in_box and len(built) == 2


def test_an_expanded_hit_marks_left_out_text_once():
    """A hit whose match is on a later line, far into it: the line is cut before the match (one
    ``…``), not also marked as a later line (``… …s/incorrect``, a user trial)."""
    from crabsearch.hits import Item
    from crabsearch.tui.render import item_lines

    text = "first line\nsecond line\n" + "x " * 120 + "the display was incorrect"
    item = Item(message_index=3, role="assistant", label="assistant", timestamp=None, text=text,
                truncated=False, hit=True)
    row = item_lines(item, ["incorrect"], width=80, lines=3)[0].plain
    assert row.count("…") == 1 and "incorrect" in row
    near = Item(message_index=3, role="assistant", label="assistant", timestamp=None,
                text="first line\nthe display was incorrect", truncated=False, hit=True)
    assert item_lines(near, ["incorrect"], width=80, lines=3)[0].plain.startswith("▶ assistant  … the display")


def test_a_snippet_shows_the_stretch_holding_most_query_words():
    """Two query words apart in a long message: the snippet starts before the stretch holding
    both (it started before the first match, and the other word fell off the line); one word,
    or words too far apart for one line, keep the first match."""
    from crabsearch.tui.render import snippet

    text = "error in the build. " + "filler words here " * 20 + "the pre-commit hook reported an error again"
    line = snippet(text, ["hook", "error"], width=80).plain
    assert "hook" in line and line.count("error") == 1 and line.startswith("…")
    assert snippet(text, ["error"], width=80).plain.startswith("error in the build")
    far = "error first. " + "filler words here " * 40 + "hook at last"
    assert snippet(far, ["hook", "error"], width=80).plain.startswith("error first")


def test_a_snippet_of_words_too_far_apart_for_one_line_shows_two_stretches():
    """Two query words a line apart in one message (a fresh-user trial: the row showed one of
    them): two stretches of half the line, in the message's order, joined by `` … ``, each word
    highlighted; a row too narrow for two stretches, or one word, keeps one."""
    from crabsearch.tui.render import HIGHLIGHT, JOIN, snippet

    far = "We looked at it. The first error came early. " + "filler words here " * 40 + \
        "then the hook at last and then some more words to end the message"
    for width in (80, 120):
        line = snippet(far, ["hook", "error"], width=width)
        first, second = line.plain.split(JOIN)
        assert "error" in first and "hook" in second and len(line.plain) <= width + 1
        assert [line.plain[s.start:s.end] for s in line.spans if s.style == HIGHLIGHT] == ["error", "hook"]
    assert JOIN not in snippet(far, ["hook", "error"], width=60).plain  # halves under PART_MIN
    assert JOIN not in snippet(far, ["hook"], width=80).plain
    late_first = "hook up front. " + "filler words here " * 40 + "an error near the end"
    first, second = snippet(late_first, ["error", "hook"], width=80).plain.split(JOIN)
    assert first.startswith("hook up front") and "error" in second


def test_a_snippet_shows_a_phrase_where_it_is_not_its_words_apart_before_it():
    """A phrase late in a long message: the snippet (and a long hit's cut, ``hits.densest``)
    starts before the phrase, not before the phrase's two words seen apart near the top (a user
    trial: ``"export async"`` showed ``Async`` inside ``MaybeAsyncIterable`` and ``export`` far
    from it)."""
    from crabsearch.hits import densest
    from crabsearch.tui.render import snippet

    text = "async helpers, and some words to export later. " + "filler words here " * 30 + \
        "so we export async function handlers now"
    line = snippet(text, ["export", "async"], width=80).plain
    assert "export async function" in line and line.startswith("…")
    marks = [(0, "async"), (40, "export"), (600, "export"), (607, "async")]
    assert densest(marks, 60) == 600 and densest(marks[:2], 60) == 0


def test_a_snippet_fits_the_row_it_is_shown_in():
    """The row's own width decides where a snippet starts (``render.ItemLines``): both words
    of ``database timeout`` show in a 100-column row, and a short message that fits is not cut
    at its start."""
    from rich.console import Console

    from crabsearch.hits import Item
    from crabsearch.tui.render import ITEM_LEAD, ItemLines

    def line(text, terms, width):
        item = Item(message_index=1, role="assistant", label="assistant", timestamp=None, text=text,
                    truncated=False, hit=True)
        console = Console(width=width, record=True, color_system=None)
        console.print(ItemLines(item, terms))
        return console.export_text().splitlines()[0]

    text = "x " * 36 + "And database connections dropped while the pool held with timeout=53 set"
    row = line(text, ["database", "timeout"], 100)
    assert "database" in row and "timeout" in row
    short = "refactored module 280 and finally fixed the cron parser"
    assert line(short, ["cron"], 80) == "▶ assistant  " + short
    # A word ending in the row's last cell, which the row's `…` takes, is not cut (a user trial:
    # `hoo…` at 120 columns, `hook` at 119 and 121).
    for width in (80, 100, 120):
        edge = "z" * (width - ITEM_LEAD - 5) + " hook and more text after it"
        assert "hook" in line(edge, ["hook"], width)


def test_a_snippet_highlights_what_the_one_analysis_found_also_where_the_line_cuts():
    """The snippet's highlights come from the analysis of the whole message, cut with the line:
    the same spans as analyzing the shown line for the words it shows whole, the shown part of
    a word the line cuts, and a long identifier near the start that runs past the line is shown
    from the message's start (the start was computed as a negative offset, which showed the
    message's last characters)."""
    from crabsearch.tui.render import HIGHLIGHT, highlighted, snippet

    def marked(t):
        return [t.plain[s.start:s.end] for s in t.spans if s.style == HIGHLIGHT]

    text = "The pool timeout came back; " + "filler words here " * 10 + "then the pool timeout again and again"
    line = snippet(text, ["pool", "timeout"], width=60)
    assert marked(line) == marked(highlighted(line.plain, ["pool", "timeout"])) == ["pool", "timeout"]
    cut = snippet("pool " + "y " * 17 + "pool", ["pool"], width=40)
    assert cut.plain.endswith(" po") and marked(cut) == ["pool", "po"]
    word = "abcdefghij" * 5
    line = snippet("see " + word + " end", [word], width=40)
    assert line.plain == "see " + word[:37] and marked(line) == [word[:37]]


def test_a_snippet_starts_at_a_word_and_fills_its_line():
    """A snippet that starts inside a message starts at a word (not ``…xplore``), and one whose
    match is near the message's end shows the line's worth of text before it (it showed the
    quarter of a line before the match and left the rest empty). Both from a user trial."""
    from crabsearch.tui.render import snippet

    words = " ".join(f"word{i:03d}" for i in range(60))
    line = snippet(words + " and then explore the codebase now", ["explore", "codebase"], width=80).plain
    assert line.startswith("…word") and line.endswith("explore the codebase now") and len(line) > 81 - 12
    mid = snippet(words + " explore the codebase " + words, ["explore", "codebase"], width=80).plain
    assert mid.startswith("…word") and "explore the codebase" in mid
    assert mid[1:].split(" ")[0] in words.split(" ")


def test_a_row_is_laid_out_once_per_width(monkeypatch):
    """A row is rendered more than once (its height measured, then painted, highlighted or not):
    its snippet is worked out once per width, and again for another width."""
    from rich.console import Console

    from crabsearch.hits import Item
    from crabsearch.search import Engine
    from crabsearch.tui import render

    calls = []
    real = Engine.term_spans
    monkeypatch.setattr(Engine, "term_spans", staticmethod(lambda text, terms: calls.append(text) or real(text, terms)))
    item = Item(message_index=1, role="user", label="you", timestamp=None, text="the cron job failed again",
                truncated=False, hit=True)
    lines = render.ItemLines(item, ["cron"])
    for width in (80, 80, 60, 80):
        Console(width=width, file=__import__("io").StringIO()).print(lines)
    assert len(calls) == 2


def test_a_rows_counted_height_is_its_rendered_height(sample):
    """The option list measures each new row by :func:`render.row_height` (counted, not
    rendered): the count equals the lines the row renders to, collapsed and expanded (windows
    of 0 to 3 messages a side, a rung rule, markers, the window's last line wrapping) from 20 to
    200 cells, and at the widths Rich measures with."""
    from datetime import datetime, timezone

    from rich.console import Console

    from crabsearch.search import Engine
    from crabsearch.tui.render import result_prompt, row_height

    home, index_dir = sample
    engine = Engine(index_dir)
    now = datetime(2026, 4, 1, tzinfo=timezone.utc)
    console = Console(width=120, color_system=None, file=__import__("io").StringIO())
    rows = 0
    for query in ("cron", "getUserById", "日付", "goleak", "deploy rollback", "the"):
        result = engine.search(query, limit=20)
        for i, hit in enumerate(result.hits):
            windows = [None] + [engine.window(hit, n, n) for n in range(4)]
            for window in windows:
                prompt = result_prompt(hit, result.terms, now, str(home), window, "fewer words matched below" if i else None)
                for width in (20, 21, 33, 47, 56, 80, 99, 100, 131, 200):
                    rendered = sum(t.count("\n") for t, _, _ in console.render(prompt, console.options.update_width(width)))
                    assert row_height(prompt, width, console) == rendered, (query, i, width, window is not None)
                    rows += 1
    assert rows > 300


async def test_the_footer_goes_compact_only_when_its_keys_would_not_fit(sample):
    """A highlighted row's keys at 140 columns lost ``f2 Status`` off the right edge: the footer
    takes Textual's compact style (one cell less per key) when they would not fit, and keeps
    the roomier style when they do."""
    from textual.widgets._footer import FooterKey

    from crabsearch.tui.footer import KeyFooter

    for width, compact in ((200, False), (140, True), (80, True)):
        app = make_app(sample)
        async with app.run_test(size=(width, 30)) as pilot:
            await settle(app, pilot)
            await type_query(app, pilot, "cron")
            await pilot.press("down")
            await settle(app, pilot)
            footer = app.screen.query_one(KeyFooter)
            assert footer.compact is compact
            palette = footer.query_one(".-command-palette")
            assert palette.region.right == width  # covers the last cell: no stray letter of the key list
            if width >= 140:
                status = next(k for k in footer.query(FooterKey) if k.description == "Status")
                assert status.region.right <= palette.region.x  # on screen, left of the palette key


async def test_leaving_the_session_view_right_after_a_resize_does_not_crash(sample):
    """A user trial: open a session, resize the terminal, press Esc: the closed screen's footer
    still had a rebuild queued, which asked for its screen and crashed the app (NoScreen)."""
    app = make_app(sample)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "cron")
        await pilot.press("down", "o")
        await settle(app, pilot)
        assert isinstance(app.screen, SessionScreen)
        await pilot.resize_terminal(100, 40)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, SearchScreen)
        await pilot.resize_terminal(140, 40)
        await settle(app, pilot)
        assert app.screen.query_one(ResultList).option_count == 3


def test_a_cut_rows_ellipsis_is_not_highlighted():
    """A row cut at its edge ends in ``…``; a highlighted word cut there stays highlighted up
    to the ``…`` only (a user trial saw ``[th…]``: the ``…`` in the highlight's colours, and a
    lone highlighted ``…`` when the cut fell on the word's first letter)."""
    from rich.console import Console, Group

    from crabsearch.hits import Item
    from crabsearch.tui.render import HIGHLIGHT, ItemLines, row_lines

    def last_line(n):
        item = Item(message_index=1, role="user", label="user", timestamp=None, hit=True, truncated=False,
                    text="alpha " + "q " * n + "thermostat reading drifted far away " + "w " * 40)
        console = Console(width=60, color_system=None)
        line = row_lines(Group(ItemLines(item, ["alpha", "thermostat"])), 60, console, console.options)[0]
        assert line.plain.endswith("…")
        return [line.plain[s.start:s.end] for s in line.spans if s.style == HIGHLIGHT]

    assert last_line(15) == ["alpha", "thermostat"]  # the whole word fits before the `…`
    assert last_line(17) == ["alpha", "thermo"]
    assert last_line(19) == ["alpha", "th"]
    assert last_line(20) == ["alpha"]


def test_query_words_are_highlighted_in_a_row_title(tmp_path):
    """A row's title shows the query's words highlighted, as its snippet does (the title is
    searched too); a highlighted word cut at the title's edge leaves the ``…`` unstyled."""
    from builders import indexed_engine
    from crabsearch.tui import render

    home = tmp_path / "home"
    title = "Fix the nightly job that runs twice, then look at the cron"
    engine = indexed_engine(tmp_path, ClaudeSession(home).user("the nightly cron job runs twice").title(title))
    result = engine.search("cron", before=0, after=0)
    hit = result.hits[0]

    def marked(line):
        return [line.plain[s.start:s.end] for s in line.spans if s.style == render.HIGHLIGHT]

    wide = render.row_header(hit, NOW, None, result.terms).line(160)
    assert wide.plain.startswith(title) and marked(wide) == ["cron"]
    assert marked(render.row_header(hit, NOW, None).line(160)) == []  # recent sessions: no query
    for width in range(60, 160):  # wherever the title is cut, the `…` is never highlighted
        line = render.row_header(hit, NOW, None, result.terms).line(width)
        assert all(not line.plain[s.start:s.end].endswith("…") for s in line.spans if s.style == render.HIGHLIGHT)


def test_a_tool_call_s_one_line_shows_its_main_argument():
    """``Name(main argument)``: Grep and Glob show the pattern, not the directory searched in
    (they showed ``Glob(/home/dev/ml-pipeline)``: a fresh-user trial); a shell command, the file."""
    import json

    from crabsearch.tui.messageview import one_line

    def line(name, args):
        return one_line(name, json.dumps(args)).plain

    assert line("Glob", {"path": "/home/dev/ml-pipeline", "pattern": "src/**/*.toml"}) == "Glob(src/**/*.toml)"
    assert line("Grep", {"pattern": "resolve_dirs", "path": "/home/dev/api"}) == "Grep(resolve_dirs)"
    assert line("Read", {"file_path": "/home/dev/api/main.py"}) == "Read(/home/dev/api/main.py)"
    assert line("LS", {"path": "/home/dev/api"}) == "LS(/home/dev/api)"
    assert line("shell", {"command": ["bash", "-lc", "ls -la"]}) == "shell(ls -la)"


async def test_a_short_screen_shows_the_session_header_on_one_line(sample):
    """At 50x15 the session header was four lines of fifteen (a fresh-user trial): on a screen
    shorter than ``COMPACT_BELOW`` it is one line (title, agent, messages), and it comes back in
    full when the screen grows."""
    app = make_app(sample)
    async with app.run_test(size=(50, 15)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "parser")
        await pilot.press("down", "o")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        meta = app.screen.query_one("#session-meta")
        assert meta.size.height == 1 and "messages" in str(meta.render())
        assert app.screen.query_one(TranscriptView).size.height >= 9
        await pilot.resize_terminal(30, 15)  # the title cut to fit: still one line
        await pilot.pause()
        assert meta.size.height == 1 and "…" in str(meta.render())
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert meta.size.height == 3 and "resume:" in str(meta.render())


def test_a_session_without_messages_says_so_and_shows_its_summary(tmp_path):
    """A fresh-user trial: a Crabtalk session whose messages compaction deleted (its title and
    summary kept) expanded into "the transcript changed since the list was shown", which was
    false. Its row says the session has no messages, with its summary; so does a transcript
    that is really gone, as before."""
    from types import SimpleNamespace

    from crabsearch.model import Session
    from crabsearch.tui.render import _no_window

    path = tmp_path / "store.crmem"
    path.write_bytes(b"x")
    empty = Session("crabtalk", "01K3", str(path), title="Staging deploy",
                    summary="User deployed\nstaging build 4821.", message_count=0)
    assert _no_window(SimpleNamespace(session=empty)) == (
        "(no messages in this session; its summary: User deployed staging build 4821.)")
    gone = Session("claude", "abc", str(tmp_path / "gone.jsonl"), message_count=3)
    assert "no messages in this session" not in _no_window(SimpleNamespace(session=gone))


async def test_a_pasted_quote_found_nowhere_lists_the_sessions_with_its_words(sample):
    """A pasted line whose quoted path is not in any session (it differs today) emptied the
    page; the rows of its words are listed, and the note under the status line says why."""
    app = make_app(sample, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#query").value = 'cron job runs twice "/etc/cron.d/nightly-run"'
        await settle(app, pilot)
        results, notes = app.screen.query_one(ResultList), app.screen.query_one("#notes")
        assert [h.session.session_id[:8] for h in results.hits][:1] == ["5c0375b4"]
        assert notes.display and str(notes.render()) == (
            'no exact match for "/etc/cron.d/nightly-run": showing sessions with its words')


async def test_an_unclosed_quote_is_noted_once_the_typing_stops(sample, monkeypatch):
    """A fresh-user trial: the app never said ``no closing quote: "…" searched as one phrase``
    (the CLI does): ``cron "unterminated`` said only that no session matches. Not while the
    quote is being typed (a phrase being typed is an unclosed quote at every key, and finds
    nothing at each half-typed word: ``"nightly cr``), a trailing space included; once the
    typing stops: Enter in the box or going into the results (with results or none), or a
    pause on a query that found nothing (``QUOTE_PAUSE``)."""
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "QUOTE_PAUSE", 60.0, raising=False)  # no pause in the first part
    app = make_app(sample, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        box, results = app.screen.query_one("#query"), app.screen.query_one(ResultList)

        def notes() -> str:
            widget = app.screen.query_one("#notes")
            return str(widget.render()) if widget.display else ""

        def status() -> str:
            return str(app.screen.query_one("#status").render())

        def note(phrase: str) -> str:
            return f'no closing quote: "{phrase}" searched as one phrase'

        await type_query(app, pilot, 'cron "nightly')
        assert len(results.hits) == 1 and notes() == ""
        await type_query(app, pilot, " ")  # the engine notes it (not typing a word): still typing
        assert len(results.hits) == 1 and notes() == ""
        await type_query(app, pilot, "cr")  # a word half typed: no such phrase, its words instead
        assert results.hits and notes() == ""  # still typing
        await pilot.press("enter")  # done: the rows are those of its words, and why
        await settle(app, pilot)
        assert app.focused is results and notes() == 'no exact match for "nightly cr": showing sessions with its words'
        box.focus()
        await type_query(app, pilot, "on")  # typing again: the phrase is being typed
        assert len(results.hits) == 1 and notes() == ""
        await pilot.press("enter")  # into the results: the rows are those of a phrase
        await settle(app, pilot)
        assert app.focused is results and notes() == note("nightly cron")
        await pilot.press('"')  # typed into the box: the quote closed, nothing to note
        await settle(app, pilot)
        assert box.value == 'cron "nightly cron"' and len(results.hits) == 1 and notes() == ""
        box.value = ""
        await type_query(app, pilot, "cron")
        await pilot.press("down")  # into the results, then a quote opened in the box: typing
        await type_query(app, pilot, ' "unterminated')  # no such phrase: its words, said once typed
        assert app.focused is box and results.hits and notes() == ""

        monkeypatch.setattr(screens, "QUOTE_PAUSE", 0.2)
        box.value = 'wombat "unterminated'  # its words find nothing either
        box.cursor_position = len(box.value)
        await settle(app, pilot)
        await type_query(app, pilot, "x")  # a pause on nothing found: the note
        await pilot.pause(0.5)
        assert status() == 'No session matches “wombat "unterminatedx”' and notes() == note("unterminatedx")
        box.value = 'cron "nightly'
        await settle(app, pilot)
        await pilot.pause(0.5)  # a pause on rows found: nothing to explain
        assert len(results.hits) == 1 and notes() == ""


async def test_the_rows_of_the_query_before_are_never_shown_as_the_answer(sample, monkeypatch):
    """``-word`` alone took seconds on a large home, and meanwhile the app showed the previous
    query's rows and count as if they answered it. A search still running after
    ``STALE_AFTER`` dims those rows and the status line says what is being searched, until its
    answer comes."""
    import threading

    from crabsearch.search import Engine

    gate = threading.Event()
    search = Engine.search

    def slow(self, query, **kw):
        if query == "-parser":
            gate.wait(10)
        return search(self, query, **kw)

    monkeypatch.setattr(Engine, "search", slow)
    app = make_app(sample, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await type_query(app, pilot, "cron")
        results, status = app.screen.query_one(ResultList), app.screen.query_one("#status")
        assert results.hits and not results.has_class("-stale")
        app.screen.query_one("#query").value = "-parser"
        await pilot.pause(0.4)
        assert results.has_class("-stale") and str(status.render()) == "Searching “-parser”…"
        gate.set()
        await settle(app, pilot)
        assert not results.has_class("-stale") and str(status.render()).startswith("Recent sessions")

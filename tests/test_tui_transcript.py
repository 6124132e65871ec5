"""The session view's transcript: opening at the hit, the position line, folding, hit jumps, find,
rendering."""

from __future__ import annotations


import pytest

from builders import ClaudeSession, settle
from tui_helpers import app_of, screen_rows, screen_words


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
        assert "#26" in screen_words(app) and "quokka" in screen_words(app)


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
            shown = "\n".join(screen_rows(app))
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
        words = screen_words(app)
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
        words = screen_words(app)
        left = re.search(r"… ([\d,]+) more characters \(Enter", words)
        assert left and "more line" not in words
        item = next(b.item for b in view._blocks if b.item.role == "tool")
        shown = 8 * (view._width - 5)  # tool output folds at 8 screen lines
        assert int(left.group(1).replace(",", "")) == len(item.text) - shown > 200_000
        assert "… cut here: the view reads a message" in " ".join(screen_rows(app))  # the rest of the 1 MB


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


async def test_the_marker_follows_the_match_the_brackets_go_to(fruity):
    """After ``]`` the message it went to had no ``▶`` (the hit kept it): where the jump landed
    did not show. The marker, and its tinted background, follow the current match."""
    import re

    app = app_of(fruity)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await _open(app, pilot, "zebra")

        def marked() -> list[str]:
            return [re.match(r"▶ *(#\d+)", row).group(1) for row in screen_rows(app) if row.startswith("▶")]

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


async def test_find_count_of_one_match_is_singular(fruity):
    """“he zebra plan” is in the thinking message and in the last one: with the thinking
    hidden, one match is left and none is current: the position line counts it as “1 match”."""
    app = app_of(fruity)
    async with app.run_test(size=(120, 30)) as pilot:
        view = await _open(app, pilot, "zebra")
        view.go_to(0)
        await pilot.press("slash", *"he zebra plan", "enter")
        await settle(pilot)
        assert view.cursor == 2  # the thinking message's match
        await pilot.press("T")
        await settle(pilot)
        position = str(app.screen.query_one("#position").render())
        assert view.find_position == (None, 1)
        assert "“he zebra plan” 1 match n/N" in position, position

"""Pilot tests: what the app draws of a message is what its keys and previews work on. Masked
secrets keep their ``***`` through Markdown; ``[``/``]`` and the session's title go by what is
drawn; the results' context window and snippets draw tool calls and output as the session view
does. Each failed before its fix."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from textual import events

from builders import ClaudeSession, settle
from tui_helpers import app_of, opened, shown
from crabsearch.tui.results import ResultList
from crabsearch.tui.session import SessionScreen

CREDENTIALS = ("here are my creds for the test env:\n"
               "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
               "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
               "and the API token is 3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b for the ibis service")
"""Secret-shaped strings (AWS's documented example key pair, a token assignment): the engine
masks each as ``first 6 + *** + last 4``."""
MASKED = ("AKIAIO***MPLE", "wJalrX***EKEY", "3f2a1b***4a5b")


def write_drawn_session(home) -> ClaudeSession:
    """A Claude Code session about "ibis": a Markdown title prompt, secrets in a user and an
    assistant message, a command's coloured output and an MCP tool's JSON answer."""
    s = ClaudeSession(home, session_id="12121212-0000-4000-8000-000000000001", cwd="/home/dev/ibis",
                      start=datetime(2026, 3, 19, 14, 0, tzinfo=timezone.utc))
    s.user("# Ibis deploy plan\n\nPlease help with the **ibis** service")
    s.user(CREDENTIALS)
    s.assistant("Rotate AKIAIOSFODNN7EXAMPLE now; the token `3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b` too.")
    s.tool("Bash", {"command": "npm test --color"},
           "\x1b[1mPASS\x1b[0m src/ibis.test.js\n\x1b[31mFAIL\x1b[0m src/heron.test.js")
    s.tool("mcp__tracker__get_issue", {"id": 7}, json.dumps({"title": "ibis flaps", "body": "under\nload"}))
    s.assistant("The ibis tests: one fails.")
    s.write()
    return s


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("drawn")
    write_drawn_session(root / "home")
    Indexer(root / "index", env={"HOME": str(root / "home")}).refresh()
    return root / "home", root / "index"


def position(app) -> str:
    return str(app.screen.query_one("#position").render())


# -- masks -------------------------------------------------------------------------------------


async def test_a_masked_secret_keeps_its_stars_in_rendered_markdown(drawn):
    """Markdown read ``AKIAIO***MPLE`` as emphasis: the view drew ``AKIAIOMPLE``, a value that
    looks real. In a user's and in an assistant's text the mask is drawn as it is."""
    app = app_of(drawn)
    async with app.run_test(size=(110, 40)) as pilot:
        view = await opened(app, pilot, "ibis")
        text = shown(view)
        for mask in MASKED:
            assert mask in text
        assert "Rotate AKIAIO***MPLE now" in text
        for unmasked in ("AKIAIOMPLE", "wJalrXEKEY", "3f2a1b4a5b", "AKIAIOSFODNN7EXAMPLE"):
            assert unmasked not in text


async def test_find_matches_a_mask_as_drawn(drawn):
    """``/AKIAIO***MPLE`` found 0 matches and ``/AKIAIOMPLE`` found one: find matches the mask."""
    app = app_of(drawn)
    async with app.run_test(size=(110, 40)) as pilot:
        view = await opened(app, pilot, "ibis")
        await pilot.press("slash", *"AKIAIO***MPLE", "enter")
        await settle(pilot)
        assert "“AKIAIO***MPLE” 1/2" in position(app)
        await pilot.press("slash", *"AKIAIOMPLE", "enter")
        await settle(pilot)
        assert view.find_position == (None, 0)


def test_stars_that_are_not_three_in_a_row_stay_markdown():
    """Only a run of exactly three ``*`` is the mask: ``**bold**`` and ``*italic*`` around it
    are still emphasis, and a line of ``***`` alone is still a rule."""
    from crabsearch.tui.markdown import parse, plain

    assert plain("**AKIAIO***MPLE** and *x*") == "AKIAIO***MPLE and x\n"
    kinds = [(t.type, t.content) for t in parse("**AKIAIO***MPLE**")[1].children if t.type != "text" or t.content]
    assert kinds == [("strong_open", ""), ("text", "AKIAIO***MPLE"), ("strong_close", "")]
    assert "hr" in [t.type for t in parse("above\n\n***\n\nbelow")]


# -- [ and ] -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jumps(tmp_path_factory):
    """A session about "plover" whose tool output says PASS only glued to colour codes
    (``␛[1mPASS``) and whose MCP answer says "flaky" only after a JSON-escaped line break."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("jumps")
    s = ClaudeSession(root / "home", session_id="13131313-0000-4000-8000-000000000001", cwd="/home/dev/plover")
    s.user("run the plover tests")
    s.tool("Bash", {"command": "npm test"}, "\x1b[1mPASS\x1b[0m plover.test.js")
    s.tool("mcp__tracker__get_issue", {"id": 3}, json.dumps({"body": "the plover suite\nflaky on CI"}))
    s.assistant("All plover tests pass.")
    s.write()
    Indexer(root / "index", env={"HOME": str(root / "home")}).refresh()
    return root / "home", root / "index"


async def test_next_hit_goes_to_a_word_drawn_in_tool_output(jumps):
    """``]`` tested the transcript's text, where the word is glued to an escape code or to a
    JSON ``\\n`` escape: it skipped the tool output that draws "PASS" and the MCP answer that
    draws "flaky". It now goes by what the view draws, as find does."""
    app = app_of(jumps)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(app, pilot, "plover")
        view.terms = ["pass", "flaky"]  # as a search for them would give
        view.rerender()
        view.go_to(0)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert view.cursor == 2  # the Bash output: PASS
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert view.cursor == 4  # the MCP answer: flaky
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert view.cursor == 2


# -- the title ---------------------------------------------------------------------------------


async def test_the_session_views_title_is_drawn_without_markdown_marks(drawn):
    """The title (the first prompt's first line) showed ``# Ibis deploy plan``: the prompt is
    drawn as Markdown, so is its title."""
    app = app_of(drawn)
    async with app.run_test(size=(110, 40)) as pilot:
        await opened(app, pilot, "ibis")
        title = str(app.screen.query_one("#session-meta").render()).splitlines()[0]
        assert title == "Ibis deploy plan"


def test_a_title_loses_only_the_marks_markdown_would_hide():
    from crabsearch.tui.render import drawn_title

    assert drawn_title("# Ibis deploy plan") == "Ibis deploy plan"
    assert drawn_title("fix the **ibis** `deploy` step") == "fix the ibis deploy step"
    assert drawn_title("rotate AKIAIO***MPLE") == "rotate AKIAIO***MPLE"
    assert drawn_title("2 * 3 = 6 [link](http://x)") == "2 * 3 = 6 link (http://x)"
    assert drawn_title("#123 is not a heading") == "#123 is not a heading"
    assert drawn_title("---") == "---"  # a rule: no text, the title as it is


# -- the results' window and snippets ------------------------------------------------------------


async def test_the_results_window_draws_tool_calls_and_output_as_the_session_view(drawn):
    """Enter on a row showed ``tool-call:Bash {"command": "npm test --color"}`` and
    ``␛[1mPASS␛[0m``; the session view draws ``Bash(npm test --color)`` and PASS in bold."""
    app = app_of(drawn)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"ibis tests")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        rows = app.screen.query_one(ResultList)
        lines = [line.plain for part in rows.get_option_at_index(0).prompt.row.renderables
                 if hasattr(part, "laid") for line in part.laid(110)]
        assert any(line.endswith("Bash(npm test --color)") for line in lines)
        assert any("PASS src/ibis.test.js" in line for line in lines)
        assert not any("␛" in line or '{"command"' in line for line in lines)
        assert any(line.endswith('"title": "ibis flaps",') for line in lines)  # the JSON as the view prints it
        assert "␛[1m" not in app.export_screenshot()


def test_a_snippet_of_tool_output_is_its_drawn_text():
    """A tool output's snippet (``in:tools``) showed its escape codes: it is the drawn text."""
    from crabsearch.search import Item
    from crabsearch.tui.render import item_lines

    out = Item(message_index=3, role="tool", label="tool:Bash", text="\x1b[1mPASS\x1b[0m src/ibis.test.js",
               timestamp=None, hit=True)
    call = Item(message_index=2, role="assistant", label="tool-call:Bash", text='{"command": "npm test --color"}',
                timestamp=None, hit=False)
    assert item_lines(out, ["pass"])[0].plain.endswith("PASS src/ibis.test.js")
    assert item_lines(call, ["npm"])[0].plain.endswith("Bash(npm test --color)")
    window = item_lines(out, ["pass"], lines=4)
    assert window[0].plain.endswith("PASS src/ibis.test.js")
    assert any(span.style and "bold" in str(span.style) for span in window[0].spans)  # the command's bold kept


# -- typing after / ----------------------------------------------------------------------------


async def test_keys_typed_with_slash_go_to_the_find_box(drawn):
    """``/appended`` typed in one burst (tmux, a fast typist) toggled ``a`` (branches) in the
    view: the box took the focus a frame later. It takes it at once."""
    app = app_of(drawn)
    async with app.run_test(size=(110, 40)) as pilot:
        view = await opened(app, pilot, "ibis")
        for ch in "/appended":  # one burst: every key queued before the first is handled
            app.post_message(events.Key("slash" if ch == "/" else ch, ch))
        await pilot.pause()
        box = app.screen.query_one("#find")
        assert box.value == "appended" and not view.show_abandoned


async def test_a_key_typed_with_c_picks_from_the_copy_menu(drawn, tmp_path):
    """``c`` ``m`` typed in one burst: ``m`` reached the view while the copy menu was being
    pushed, and was lost (the menu stayed open). It picks the message."""
    app = app_of(drawn)
    app.copy_file = tmp_path / "last-copy.txt"
    copied: list[str] = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(110, 40)) as pilot:
        await opened(app, pilot, "ibis")
        for ch in "cm":
            app.post_message(events.Key(ch, ch))
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen) and copied[-1].startswith("# Ibis deploy plan")

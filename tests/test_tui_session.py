"""Pilot tests of the session view (the screen ``o`` opens): what real use found at its edges.
Each failed before its fix."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from builders import NOW, ClaudeSession, settle
from tui_helpers import app_of, opened, shown
from crabsearch.tui.app import CrabsearchApp

BOLD_RED = "\x1b[1;31m"
RESET = "\x1b[0m"
ISSUE_JSON = json.dumps({"number": 12, "title": "login loops", "body": "Steps:\n  1. sign in\n  2. loop"})
"""What an MCP server answers in a text block: JSON text, line breaks as ``\\n`` in its strings
(a tracker's issue, say)."""


def write_edges_session(home) -> ClaudeSession:
    """A Claude Code session with what the session view must render as its agent's interface
    does: Markdown typed by the user, Markdown thinking, a command's coloured output and an MCP
    tool's JSON answer."""
    s = ClaudeSession(home, session_id="77777777-0000-4000-8000-000000000001", cwd="/home/dev/kestrel",
                      start=datetime(2026, 3, 19, 14, 0, tzinfo=timezone.utc))
    s.user("make the **kestrel** build pass:\n```\nmake all\n```\nthen `deploy`")
    d = s._base("assistant")
    d["message"] = {"id": "msg_think", "type": "message", "role": "assistant", "model": "claude-x",
                    "content": [{"type": "thinking", "thinking": "The *kestrel* build: check **make** first.",
                                 "signature": "x"}]}
    s.lines.append(d)
    s.tool("Bash", {"command": "make all"},
           f"{BOLD_RED}error{RESET}: kestrel.c:3 missing ';'\x1b[2J\x1b]0;retitled\x07 done")
    s.tool("mcp__tracker__get_issue", {"id": 12}, [{"type": "text", "text": ISSUE_JSON}])  # its content blocks
    s.assistant("The kestrel build fails at line 3.")
    s.write()
    return s


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("edges")
    write_edges_session(root / "home")
    Indexer(root / "index", env={"HOME": str(root / "home")}).refresh()
    return root / "home", root / "index"


def style_of(view, needle: str, line: str = ""):
    """The style of the first rendered segment holding ``needle`` on a line holding ``line``."""
    for _, strip in view._lines:
        if line in strip.text:
            for seg in strip:
                if needle in seg.text:
                    return seg.style
    return None


async def test_user_and_thinking_text_are_rendered_as_markdown(edges):
    """A user's prompt and the model's thinking are Markdown as the assistant's text is: no
    ``**`` or fence lines on screen, bold bold, the fenced command a block of its own."""
    app = app_of(edges)
    async with app.run_test(size=(100, 40)) as pilot:
        view = await opened(app, pilot, "kestrel")
        text = shown(view)
        assert "make the kestrel build pass:" in text and "**" not in text and "```" not in text
        assert style_of(view, "kestrel").bold
        assert any(line.strip() == "make all" for line in text.splitlines())  # the fence's line
        assert "then deploy" in text  # the line break after the fence kept, the backticks gone
        assert "The kestrel build: check make first." in text
        assert style_of(view, "The ").italic  # thinking: dim italic
        assert style_of(view, "make", line="check make first").bold


async def test_a_commands_colours_are_styles_and_other_escapes_stay_inert(edges):
    """SGR sequences in tool output become colours and bold, not ``␛[1;31m``; a screen clear
    and a window title set are shown as symbols, never sent to the terminal."""
    from test_terminal_safety import FORBIDDEN

    app = app_of(edges)
    async with app.run_test(size=(100, 40)) as pilot:
        view = await opened(app, pilot, "kestrel")
        text = shown(view)
        assert "error: kestrel.c:3 missing ';'" in text and "␛[1;31m" not in text and "␛[0m" not in text
        style = style_of(view, "error")
        assert style.bold and style.color.number == 1
        assert "␛[2J␛]0;retitled␇ done" in text
        assert not FORBIDDEN.search(app.export_screenshot().replace("\n", ""))


async def test_an_mcp_tools_json_answer_is_pretty_printed_with_its_text_unescaped(edges):
    """Claude Code keeps an MCP tool's content blocks in its tool result (formats.md 1.2): the
    server's JSON text showed as one line of ``\\n`` escapes."""
    app = app_of(edges)
    async with app.run_test(size=(100, 40)) as pilot:
        view = await opened(app, pilot, "kestrel")
        view.tool_mode = "full"
        view.rerender()
        await pilot.pause()
        lines = [line.rstrip() for line in shown(view).splitlines()]
        at = lines.index('      "body":')  # its key on a line of its own, the text under it
        assert lines[at - 2:at + 5] == ['      "number": 12,', '      "title": "login loops",', '      "body":',
                                        "        Steps:", "          1. sign in", "          2. loop", "    }"]
        assert "\\n" not in shown(view)


async def test_a_codex_mcp_result_is_pretty_printed_with_its_text_blocks_unescaped(tmp_path):
    """Codex writes an MCP result as the JSON of its content blocks (openai/codex
    codex-rs/protocol/src/models.rs, ``impl From<&CallToolResult> for FunctionCallOutputPayload``,
    commit 001cb8e2: ``serde_json::to_string(content)``), a text block holding the server's own
    JSON text: both are pretty-printed, the text's line breaks shown as lines."""
    from builders import CodexSession
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    blocks = json.dumps([{"type": "text", "text": ISSUE_JSON}])
    CodexSession(home).user("what does the godwit issue say").tool("mcp__tracker__get_issue", {"id": 12},
                                                                   blocks).write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(100, 40)) as pilot:
        view = await opened(app, pilot, "godwit")
        view.tool_mode = "full"
        view.rerender()
        await pilot.pause()
        lines = [line.rstrip() for line in shown(view).splitlines()]
        at = lines.index('        "text":')
        assert lines[at - 1:at + 8] == ['        "type": "text",', '        "text":', "          {",
                                        '            "number": 12,', '            "title": "login loops",',
                                        '            "body":', "              Steps:", "                1. sign in",
                                        "                2. loop"]


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_the_header_takes_three_lines_of_a_screen_of_24_or_30(tmp_path, size):
    """A long title and a long resume command wrapped the header to seven of 24 lines: now the
    title, one line of facts and the position line, each cut to the width; the resume command
    (also ``r`` and ``c``) from 40 lines up."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="88888888-0000-4000-8000-000000000001",
                      cwd="/home/dev/a-project-with-a-rather-long-directory-name/and/a/subfolder")
    s.user("please refactor the ptarmigan module so that every parser reads its input lazily, "
           "then run the whole test suite").assistant("Refactored the ptarmigan parsers.").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=size) as pilot:
        await opened(app, pilot, "ptarmigan")
        header = app.screen.query_one("#session-header")
        assert header.size.height == 3
        lines = str(app.screen.query_one("#session-meta").render()).splitlines()
        assert lines[0].startswith("please refactor the ptarmigan module") and lines[0].endswith("…")
        assert lines[1].startswith("Claude · /home/dev/a-project") and "resume" not in lines[1]
        assert "messages 1–2 of 2" in str(app.screen.query_one("#position").render())
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert header.size.height == 4 and "resume: cd " in str(app.screen.query_one("#session-meta").render())


@pytest.fixture(scope="module")
def edits(tmp_path_factory):
    """A session of three edits (Claude Code's ``Edit`` tool: ``file_path``, ``old_string``,
    ``new_string``), its prompt in Markdown."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("edits")
    s = ClaudeSession(root / "home", session_id="99999999-0000-4000-8000-000000000001")
    s.user("rename **frobnicate** to `grind` in the wombat code")
    for n in range(3):
        s.tool("Edit", {"file_path": f"wombat{n}.py", "old_string": f"def frobnicate{n}():",
                        "new_string": f"def grind{n}():"}, "ok")
    s.assistant("Renamed in three files.")
    s.write()
    Indexer(root / "index", env={"HOME": str(root / "home")}).refresh()
    return root / "home", root / "index"


async def find(app, pilot, view, text: str) -> str:
    """Find ``text`` from the first message; the position line then."""
    view.go_to(0)
    await pilot.press("slash", *text, "enter")
    await settle(pilot)
    return str(app.screen.query_one("#position").render())


def said(app) -> str:
    return " ".join(n.message for n in app._notifications)


async def test_find_matches_what_the_view_draws_not_the_transcripts_json(edits):
    """``/`` found ``old_string`` 25 times in tool calls that show none, and said ``Edit(`` (on
    screen) was not in the session: it now matches a tool call's one line and its arguments as
    drawn in full (an edit's diff), and Markdown's text without its marks."""
    app = app_of(edits)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(app, pilot, "wombat")
        assert "“Edit(” 1/3" in await find(app, pilot, view, "Edit(")
        assert view.cursor == 1 and "Edit(wombat0.py)" in shown(view)
        for hidden in ("old_string", "**"):
            await find(app, pilot, view, hidden)
            assert f"“{hidden}” is not in this session" in said(app)
            assert view.find_position == (None, 0)
        assert "“frobnicate1” 1/1" in await find(app, pilot, view, "frobnicate1")
        assert view.cursor == 3  # the second edit, unfolded to its diff, where the match is marked
        block = next(b for b in view._blocks if b.item.message_index == 3)
        assert any(s.text.strip() == "-def frobnicate1():" for s in block.strips)
        position = await find(app, pilot, view, "frobnicate")
        assert "“frobnicate” 1/4" in position and view.cursor == 0  # the prompt, then each edit


# -- following the transcript ------------------------------------------------------------------


async def until(pilot, check, seconds: float = 10.0) -> None:
    import time

    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"not within {seconds:.0f} s")


def append(session: ClaudeSession, path, *texts: str) -> None:
    """Append user messages to ``session``'s transcript as its agent does: lines at the end."""
    for text in texts:
        session.user(text)
        with open(path, "a") as fh:
            fh.write(json.dumps(session.lines[-1]) + "\n")


def live_app(tmp_path, monkeypatch, messages: int):
    """A session of ``messages`` about "shearwater" and an app that refreshes on file events
    only (the watcher the results use)."""
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)
    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="aaaaaaaa-0000-4000-8000-000000000001", cwd="/home/dev/birds")
    for n in range(messages):
        (s.user if n % 2 == 0 else s.assistant)(f"shearwater note {n}")
    path = s.write()
    return s, path, CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)


def position(app) -> str:
    return str(app.screen.query_one("#position").render())


def on_screen(view) -> str:
    """The text of the view's lines on screen."""
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


async def test_messages_appended_while_the_session_is_open_show_without_reopening(tmp_path, monkeypatch):
    """Three messages appended showed in the results within a second but never in the open
    session view ("6 messages" after three appends): at its end, the view now follows them."""
    s, path, app = live_app(tmp_path, monkeypatch, 6)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(app, pilot, "shearwater")
        append(s, path, "first petrel", "second petrel", "third petrel")
        await until(pilot, lambda: view.total == 9 and "third petrel" in shown(view))
        await pilot.pause()
        assert "second petrel" in on_screen(view)  # on screen, not only loaded
        assert "9 messages" in str(app.screen.query_one("#session-meta").render())
        assert "of 9" in position(app) and "new message" not in position(app)


async def test_messages_appended_below_the_view_are_counted_until_end_shows_them(tmp_path, monkeypatch):
    s, path, app = live_app(tmp_path, monkeypatch, 60)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(app, pilot, "shearwater")
        append(s, path, "first petrel", "second petrel", "third petrel")
        await until(pilot, lambda: "3 new messages: End" in position(app))
        assert view.top_message() == 0 and "of 63" in position(app)  # the place kept
        await pilot.press("end")
        await pilot.pause()
        assert view.cursor == 62 and "third petrel" in on_screen(view)
        assert "new message" not in position(app)


async def test_a_transcript_deleted_while_open_keeps_what_was_read_and_says_so(tmp_path, monkeypatch):
    """The refresh that dropped the deleted session left the view blank at the next page read
    (End), its keys doing nothing: the messages read stay, the keys work on them, and the view
    says the transcript is gone."""
    s, path, app = live_app(tmp_path, monkeypatch, 60)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(app, pilot, "shearwater")
        read = list(view.loaded)
        ref = app.screen.hit.ref
        path.unlink()
        await until(pilot, lambda: not app.engine.page(ref, 0, 1).messages)  # the refresh dropped it
        await settle(pilot)
        await pilot.press("end")  # to the last message read
        await pilot.pause()
        assert view.loaded == read and f"shearwater note {read[-1]}" in on_screen(view)
        assert view.cursor == read[-1]
        assert "this transcript is no longer on disk" in position(app)
        assert "This transcript is no longer on disk" in said(app)
        await pilot.press("home")
        await pilot.pause()
        assert "shearwater note 0" in on_screen(view)
        await pilot.press("slash", *"note 3", "enter")
        await settle(pilot)
        assert view.find_position[1] == len([i for i in read if str(i).startswith("3")])  # 3, 30, 31, ...
        await pilot.press("ctrl+r")  # secrets cannot be read again unmasked
        await pilot.pause()
        assert "what was read cannot be read again" in said(app) and view.loaded == read


async def test_a_transcript_deleted_before_any_refresh_is_noticed_by_the_next_page_read(tmp_path):
    """No refresh ran (the index still holds the session): the pages read after the deletion
    came back as "[message unavailable: the transcript is gone …]" blocks. They are not shown:
    the view keeps what it read and says the transcript is gone."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="bbbbbbbb-0000-4000-8000-000000000001")
    for n in range(200):
        (s.user if n % 2 == 0 else s.assistant)(f"albatross note {n}")
    path = s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    app = app_of((home, tmp_path / "index"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(app, pilot, "albatross")
        read = list(view.loaded)
        assert read[-1] < 199
        path.unlink()
        await pilot.press("end")
        await settle(pilot)
        assert view.loaded == read and view.cursor == read[-1]
        assert f"albatross note {read[-1]}" in on_screen(view) and "[message unavailable" not in shown(view)
        assert "this transcript is no longer on disk" in position(app)


# -- skipped lines -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def skipping(tmp_path_factory):
    """A Claude Code session whose reader skips three lines: a tool result of 17 MiB (over the
    16 MiB cap: a pasted screenshot's size), a broken line between two messages and one after
    the last message."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("skipping")
    s = ClaudeSession(root / "home", session_id="cccccccc-0000-4000-8000-000000000001")
    s.user("show me the grebe screenshot")
    s.tool("Read", {"file_path": "/tmp/grebe.png"}, "A" * (17 << 20))
    s.assistant("The grebe dashboard shows two charts.")
    s.user("and the last one?")
    lines = [json.dumps(d) for d in s.lines]
    lines.insert(4, '{"type": "user", "message": ')  # broken: before "and the last one?"
    lines.append('{"broken')
    s.path.parent.mkdir(parents=True)
    s.path.write_text("\n".join(lines) + "\n")
    Indexer(root / "index", env={"HOME": str(root / "home")}).refresh()
    return root / "home", root / "index", len(lines[2])


def test_the_engine_places_each_skipped_line_before_the_message_after_it(skipping):
    from crabsearch.search import Engine

    home, index_dir, big = skipping
    engine = Engine(index_dir)
    ref = engine.recent(limit=1)[0].ref
    assert ref.session.message_count == 4  # prompt, Read call, answer, prompt: the tool result is skipped
    found = [(s.before, s.line, s.size, s.reason, s.text()) for s in engine.skipped_lines(ref)]
    assert found == [(2, 3, big, "oversized line", "line 3 skipped: 17 MB, over the 16 MB cap"),
                     (3, 5, 28, "broken JSON", "line 5 skipped: broken JSON"),
                     (4, 7, 8, "broken JSON", "line 7 skipped: broken JSON")]


async def test_a_skipped_line_shows_a_placeholder_where_it_was(skipping):
    """A 40 MB line the reader skipped (over the 16 MB cap) vanished from the session view: a
    placeholder now stands where it was, with its line number and size."""
    app = app_of(skipping[:2])
    async with app.run_test(size=(100, 40)) as pilot:
        view = await opened(app, pilot, "grebe")
        await settle(pilot)
        lines = [line.strip() for line in on_screen(view).splitlines() if line.strip()]
        at = lines.index("⊘ line 3 skipped: 17 MB, over the 16 MB cap")
        assert lines[at - 1] == "Read(/tmp/grebe.png)" and lines[at + 1].startswith("#3 assistant")
        at = lines.index("⊘ line 5 skipped: broken JSON")
        assert lines[at + 1].startswith("#4 user")
        assert lines[-1] == "⊘ line 7 skipped: broken JSON"  # after the last message
        await pilot.press("J", "J")  # the cursor moves over messages, not placeholders
        await pilot.pause()
        block = view._loaded(2)
        assert view.cursor == 2 and block.strips[block.lead].text.strip().startswith("#3 assistant")


def test_the_header_names_a_hand_off_where_the_resume_line_fits():
    """``continued in <title>`` (a session handed to a background one) is a header line of its
    own on a screen tall enough for the resume line, and leaves the 3-line header of 80x24 as it is."""
    from datetime import datetime, timezone

    from crabsearch.model import Session
    from crabsearch.tui.render import session_header

    now = datetime(2026, 3, 20, tzinfo=timezone.utc)
    s = Session(agent="claude", session_id="x", path="/t/x.jsonl", title="profile the importer", message_count=4,
                started=now, updated=now, project="/home/dev/app")
    tall = session_header(s, "claude --resume y", now, "/home/dev", 118, 40, notes=["continued in the gecko run"])
    assert tall.plain.splitlines()[2:] == ["continued in the gecko run", "resume: claude --resume y"]
    short = session_header(s, "claude --resume y", now, "/home/dev", 78, 24, notes=["continued in the gecko run"])
    assert len(short.plain.splitlines()) == 2 and "continued" not in short.plain


@pytest.mark.parametrize("height", [40, 12])  # the header in full, and on one line
def test_the_session_header_counts_one_message_in_the_singular(height):
    from types import SimpleNamespace

    from crabsearch.tui.render import session_header

    session = SimpleNamespace(title="one question", agent="claude", project="/w/p", git_branch=None,
                              started=NOW, updated=NOW, message_count=1)
    header = str(session_header(session, None, NOW, None, 100, height))
    assert "· 1 message ·" in header or header.endswith("· 1 message"), header

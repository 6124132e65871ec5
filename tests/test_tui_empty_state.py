"""The empty results area: what it says when no transcript is found, the demo, small terminals."""

from __future__ import annotations

import re

import pytest

from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp
from tui_helpers import screen_rows


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


async def test_at_50x20_the_empty_state_says_what_to_do_before_where_it_looked(tmp_path, monkeypatch):
    """The advice (the demo, the variables that point elsewhere, F2) shows without scrolling;
    the folders looked in (every agent's, more than the screen holds) follow it and can be
    scrolled to."""
    import sys

    monkeypatch.setattr(sys, "argv", [".venv/bin/crabsearch"])
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(50, 20)) as pilot:
        await settle(pilot)
        empty = app.screen.query_one("#empty")
        assert empty.display
        shown = "\n".join(screen_rows(app))
        assert "--demo" in shown and "CLAUDE_CONFIG_DIR" in shown and "F2" in shown
        text = str(empty.content)
        assert text.index("--demo") < text.index("Looked in:") < text.index("Claude Code")
        last = empty.content.renderables[-1].rows[-1][0]  # the last agent's name
        assert last not in shown  # its folders: below, more than the screen holds
        await pilot.press("down")  # into the text, then down to its end
        for _ in range(120):
            await pilot.press("down")
        await pilot.pause()
        assert last in "\n".join(screen_rows(app))
        await pilot.press(*"x")  # typing still searches
        assert app.screen.query_text == "x"


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

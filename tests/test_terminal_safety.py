"""Issue 16, defect 1: nothing a transcript or a file name holds reaches the terminal as a control
sequence. Tool names, titles, project paths, agent-supplied ids and file names carry ESC sequences
(OSC 52 writes the clipboard, OSC 0 retitles the window, ``ESC [2J`` blanks the screen), C1
controls (U+009B is CSI) and bidi overrides; every door (plain CLI text, ``--json``, the app)
shows them inert."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from builders import NOW, ClaudeSession, CodexSession, settle
from source_checks import run_cli

from crabsearch.text import printable, terminal_json

OSC52 = "\x1b]52;c;aGFja2Vk\x07"
RETITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
C1_CSI = "\x9b31m"
BIDI = "\u202egnp.exe\u202c\u2066x\u2069"
HOSTILE = OSC52 + RETITLE + CLEAR + C1_CSI + BIDI

FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What must never reach a terminal (newline and tab are fine)."""
FORBIDDEN_IN_JSON = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _hostile_home(home):
    (ClaudeSession(home, session_id="0badc0de-0000-4000-8000-000000000001",
                   cwd="/home/dev/evil" + CLEAR + "\u202eproj", start=datetime(2026, 3, 19, 9, 0, tzinfo=timezone.utc))
     .user("please run the canary step")
     .assistant("Running the canary step now.")
     .tool("canary" + HOSTILE, {"command": "echo hi"}, "canary output" + OSC52)
     .assistant("The canary step passed.")
     .title("canary title " + HOSTILE)
     .write())
    cx = CodexSession(home, session_id="019a0000-0bad-7000-8000-00000000c0de" + RETITLE,
                      cwd="/srv/" + OSC52, start=datetime(2026, 3, 18, 9, 0, tzinfo=timezone.utc))
    cx.user("canary from codex").tool("shell" + HOSTILE, {"command": ["ls"]}, "ok").assistant("canary done")
    cx.write()
    return home


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("hostile")
    home = _hostile_home(root / "home")
    index_dir = root / "index"
    Indexer(index_dir, env={"HOME": str(home)}, home=home).refresh()
    return home, index_dir


def _cli(capsys, hostile, monkeypatch, *argv):
    home, index_dir = hostile
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    return run_cli(capsys, *argv, "--index-dir", str(index_dir))


def test_printable_makes_every_control_inert():
    shown = printable("a" + HOSTILE + "\tb\nc")
    assert not FORBIDDEN.search(shown)
    assert shown.endswith("    b\nc") and "\u241b]52;c;" in shown  # ESC shown as the ␛ symbol


def test_terminal_json_escapes_c1_and_bidi_and_round_trips():
    obj = {"label": "tool-call:" + HOSTILE, "text": "naïve café 日付"}
    out = terminal_json(obj)
    assert not FORBIDDEN_IN_JSON.search(out.replace("\n", ""))
    assert json.loads(out) == obj
    assert "naïve café 日付" in out  # only controls are escaped


@pytest.mark.parametrize("obj", [
    {"a": [1, 2.5, -0.0, True, None, {}, []], "b": {"c": "x\x1b]0;t\x07\x9b\u202e"}, "d": 0.1 + 0.2},
    {"big": 2 ** 70},  # past 64 bits: orjson refuses, json writes it
    {"lone": "\ud800"}, {1: "int key"}, [], "s",
])
def test_terminal_json_is_json_dumps_text(obj):
    """The CLI's JSON (orjson, indent 2) is the text ``json.dumps`` writes, made inert."""
    from crabsearch.text import inert_json_text

    assert terminal_json(obj) == inert_json_text(json.dumps(obj, ensure_ascii=False, indent=2))


@pytest.mark.parametrize("argv", [
    ("search", "canary"), ("search", "canary", "--no-redact"), ("search", "canary", "--explain"),
    ("show", "0badc0de"), ("show", "019a0000-0bad"), ("status",), ("index",),
    ("export", "0badc0de"), ("search", "agent:codex"),
])
def test_plain_output_has_no_control_sequences(capsys, hostile, monkeypatch, argv):
    code, out, err = _cli(capsys, hostile, monkeypatch, *argv)
    assert code == 0, err
    assert "canary" in out or argv[0] in ("status", "index")
    assert not FORBIDDEN.search(out), repr(FORBIDDEN.search(out))
    assert not FORBIDDEN.search(err), repr(FORBIDDEN.search(err))


def test_plain_show_still_names_the_tool(capsys, hostile, monkeypatch):
    code, out, _ = _cli(capsys, hostile, monkeypatch, "show", "0badc0de")
    assert code == 0
    assert "tool-call:canary\u241b]52;c;aGFja2Vk\u2407" in out


@pytest.mark.parametrize("argv", [("search", "canary", "--json", "--explain"), ("show", "0badc0de", "--json"),
                                  ("status", "--json"), ("index", "--json"), ("show", "019a0000-0bad", "--json")])
def test_json_output_escapes_controls_and_keeps_the_data(capsys, hostile, monkeypatch, argv):
    code, out, err = _cli(capsys, hostile, monkeypatch, *argv)
    assert code == 0, err
    assert not FORBIDDEN_IN_JSON.search(out.replace("\n", "")), repr(FORBIDDEN_IN_JSON.search(out))
    data = json.loads(out)
    if argv[0] == "show" and argv[1] == "0badc0de":
        labels = [m["label"] for m in data["messages"]]
        assert "tool-call:canary" + HOSTILE in labels  # the JSON is faithful, only escaped


def test_stderr_names_hostile_file_paths_inertly(capsys, tmp_path, monkeypatch):
    from crabsearch.sources import SOURCES

    home = tmp_path / "home"
    bad = home / ".claude" / "projects" / ("-x" + RETITLE) / "0badc0de-0000-4000-8000-00000000beef.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"type":"user"}\n')

    def unreadable(*args, **kwargs):
        raise OSError(5, "Input/output error" + OSC52)

    monkeypatch.setattr(SOURCES["claude"], "read", unreadable)
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run_cli(capsys, "index", "--index-dir", str(tmp_path / "ix"))
    assert code == 0
    assert "-x\u241b]0;owned\u2407" in err  # the path is named, inert
    assert not FORBIDDEN.search(out + err)


# -- the app ---------------------------------------------------------------------------------


def _screen_text(app) -> str:
    return app.export_screenshot()


async def test_app_shows_hostile_strings_inert_on_every_screen(hostile):
    from crabsearch.text import UNRUNNABLE
    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.panels import ResumeScreen
    from crabsearch.tui.session import SessionScreen

    home, index_dir = hostile
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False)
    seen: list[str] = []

    def check(where: str, shows: str | None = None) -> None:
        svg = _screen_text(app)
        found = FORBIDDEN.search(svg.replace("\n", ""))
        assert not found, f"{where}: {found.group()!r} on screen"
        if shows:  # the hostile string is on screen, made visible: ESC as ␛, BEL as ␇
            assert shows in svg.replace("&#160;", " "), where
        seen.append(svg)

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        check("recent sessions")
        await pilot.press(*"canary step")  # the Claude session first: its tool call is hostile
        await settle(pilot)
        check("results", " title \u241b]52")  # (canary: highlighted, a text of its own)
        await pilot.press("down", "enter")
        await settle(pilot)
        check("expanded row", "\u241b]52;c;aGFja2Vk\u2407")
        await pilot.press("x")
        await pilot.pause()
        check("explain")
        await pilot.press("escape")
        await pilot.press("c")
        await pilot.pause()
        check("copy menu")
        await pilot.press("escape")
        await pilot.press("r")  # its working directory holds ESC [2J: not run (a shell's `cd` error printed it)
        await pilot.pause()
        check("resume refused")
        assert not isinstance(app.screen, ResumeScreen)
        assert any(n.message == UNRUNNABLE for n in app._notifications)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        await pilot.press("t")  # tool calls in full
        await pilot.pause()
        check("session view", "tool-call:canary\u241b]52;c;aGFja2Vk\u2407")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("escape")
        await pilot.press("f4")
        await pilot.pause()
        check("project picker")
        await pilot.press("escape")
        await pilot.press("f2")
        await pilot.pause()
        check("status")
    assert any("canary" in s for s in seen)


# -- issue 15: a value put in the search box (picker, Tab) or a copy file ------------------------


async def _hostile_app(hostile):
    from crabsearch.tui.app import CrabsearchApp

    home, index_dir = hostile
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)


def _assert_inert(app, where: str) -> str:
    svg = _screen_text(app)
    found = FORBIDDEN.search(svg.replace("\n", ""))
    assert not found, f"{where}: {found.group()!r} on screen"
    return svg.replace("&#160;", " ")


@pytest.mark.parametrize("how", ["picker", "tab"])
async def test_a_hostile_project_put_in_the_search_box_shows_inert_and_still_filters(hostile, how):
    from builders import settle
    from crabsearch.tui.filters import QueryInput

    app = await _hostile_app(hostile)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        if how == "picker":
            await pilot.press("f4", *"evil", "enter")
        else:
            await pilot.press(*"project:evi", "tab")
        await settle(pilot)
        box = app.screen.query_one(QueryInput)
        assert CLEAR in box.value  # the value itself is the project's real name (the filter matches)
        assert [h.session.agent for h in app.screen.result.hits] == ["claude"]
        svg = _assert_inert(app, how)
        assert "evil\u241b[2J" in svg
        # The cursor sits after the value's last cell: one cell per character, ␛ included.
        shown = printable(box.value, tabs=True)
        assert box._cursor_offset == len(shown) + 1
        await pilot.press("left", "left")
        assert box._cursor_offset == len(shown) - 2


async def test_the_copy_file_holds_hostile_text_inert_and_the_clipboard_exact(hostile, tmp_path):
    from builders import settle

    app = await _hostile_app(hostile)
    app.copy_file = tmp_path / "cache" / "last-copy.txt"
    copied = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"canary step")
        await settle(pilot)
        await pilot.press("down", "c", "r")  # the resume command quotes the hostile cwd
        await pilot.pause()
        assert CLEAR in copied[-1]  # OSC 52 gets the text exactly
        saved = app.copy_file.read_text("utf-8")
        assert not FORBIDDEN.search(saved) and "\u241b[2J" in saved
        await pilot.press("c", "m")
        await pilot.pause()
        saved = app.copy_file.read_text("utf-8")
        assert not FORBIDDEN.search(saved) and "canary" in saved


def test_a_resume_command_with_control_characters_is_never_run(capsys, monkeypatch):
    """``run_resume`` (after the app quits) refuses a command holding a control character, as the
    app does, and never calls a shell for it; a plain one runs."""
    import subprocess

    from crabsearch.cli import EXIT_ERROR, run_resume
    from crabsearch.text import UNRUNNABLE

    calls = []
    monkeypatch.setattr(subprocess, "call", lambda argv: calls.append(argv) or 0)
    assert run_resume("cd '/srv/" + OSC52 + "' && codex resume 019a") == EXIT_ERROR
    out, err = capsys.readouterr()
    assert calls == [] and UNRUNNABLE in err and not FORBIDDEN.search(out + err)
    assert run_resume("cd /srv && codex resume 019a") == 0 and calls == [["/bin/sh", "-c", "cd /srv && codex resume 019a"]]


def test_keyboard_bytes_that_are_not_utf8_do_not_stop_the_app(tmp_path):
    """A byte that is not UTF-8 typed or pasted into the app (Latin-1 ``caf\\xe9``, an 8-bit
    CSI ``\\x9b``) killed Textual's input thread with ``UnicodeDecodeError`` and the app exited
    with a traceback (a fresh-user trial; Textualize/textual#6456). In a real terminal (a pty),
    the app keeps running and still quits on Ctrl+Q."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_RUNTIME_DIR=str(tmp_path), CRABSEARCH_NO_SERVER="1", TERM="xterm-256color",
               COLUMNS="100", LINES="30")
    main, side = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "crabsearch", "--demo"], stdin=side, stdout=side, stderr=side,
                            env=env, close_fds=True)
    os.close(side)
    seen = bytearray()

    def read_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([main], [], [], 0.05)[0]:
                try:
                    seen.extend(os.read(main, 65536))
                except OSError:
                    return

    try:
        read_for(4.0)  # the app starts and paints
        os.write(main, b"caf\xe9x")
        read_for(0.5)
        os.write(main, b"x\x9by")
        read_for(1.5)
        assert proc.poll() is None, seen.decode("utf-8", "replace")[-2000:]
        os.write(main, b"\x11")  # Ctrl+Q
        read_for(3.0)
        assert proc.wait(timeout=10) == 0
        assert b"UnicodeDecodeError" not in seen
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)


def test_painting_a_line_and_analyzing_a_name_leave_no_reference_cycle():
    """Garbage that only Python's cyclic collections free: ``Strip.divide`` kept ``[self]`` in the
    strip's own cache (every painted line a cycle), and a compound's recursive splitter referred
    to itself. Neither leaves a cycle now (``tui.textual_fixes``, ``compounds.split``)."""
    import gc

    from rich.segment import Segment
    from textual.strip import Strip

    from crabsearch.index.compounds import split
    from crabsearch.tui import textual_fixes

    textual_fixes.apply()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        strip = Strip([Segment("hello "), Segment("world")])
        assert strip.divide([strip.cell_length]) == [strip] and len(strip.divide([5, 11])) == 2
        del strip
        assert split("src/auth/getUserById_token-store.ts")[1] > 3
        gc.collect()
        left = [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []


def test_counted_words_a_count_with_its_noun():
    from crabsearch.text import counted

    assert [counted(n, "match", "matches") for n in (0, 1, 2)] == ["0 matches", "1 match", "2 matches"]
    assert counted(1, "session") == "1 session" and counted(1204, "line", grouped=True) == "1,204 lines"

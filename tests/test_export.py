"""Markdown export (``crabsearch export``, ``window_markdown``) and the editor helpers."""

from __future__ import annotations

import os
import re
import stat

import pytest

from crabsearch import editor
from crabsearch.cli import main
from crabsearch.export import balanced, clean, code_span, fence_for, session_markdown, window_markdown
from crabsearch.index import Indexer
from crabsearch.search import Engine

from builders import ClaudeSession, CodexSession
from source_checks import run_cli

SECRET = "sk-live-FAKEFAKEFAKE1234567890"
MASKED = "sk-liv***7890"
CLAUDE = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
CODEX = "019a0000-1111-7222-8333-444455556666"
LONG = "9f000000-3333-4444-8555-666677778888"
BREAKOUT = "before\n```\n# not a heading\n````\nafter"


def _thinking(s: ClaudeSession, text: str) -> ClaudeSession:
    d = s._base("assistant")
    d["message"] = {"id": f"msg_{s.n}", "type": "message", "role": "assistant", "model": "claude-x",
                    "content": [{"type": "thinking", "thinking": text, "signature": "x"}]}
    s.lines.append(d)
    return s


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    s = (ClaudeSession(home, session_id=CLAUDE, cwd="/home/dev/my app", branch="fix/cron")
         .user("the cron job runs twice at midnight")
         .assistant("Two crontab entries overlap. Here is a fence:\n```sh\ncrontab -l"))  # left open
    _thinking(s, "maybe the deploy script\nadds it twice")
    (s.tool("Bash", {"command": f"export OPENAI_API_KEY={SECRET}"}, BREAKOUT)
     .assistant("Removed one.").title("Fix double cron run").write())
    (CodexSession(home, session_id=CODEX, cwd="/home/dev/api")
     .user("cron parser rejects step values")
     .tool("shell", {"command": ["rg", "step"]}, f"token is {SECRET}")
     .assistant("Use */5").write())
    long = ClaudeSession(home, session_id=LONG, cwd="/home/dev/big")
    for i in range(60):
        long.user(f"question {i}").assistant(f"answer {i}")
    long.write()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    return home


run = run_cli  # (exit code, stdout, stderr)


def sections(md: str) -> list[str]:
    """The ``### #N ...`` headings outside code blocks, as CommonMark reads them."""
    heads, fence = [], None
    for line in md.split("\n"):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and not m.group(2).strip():
            fence = None
        elif fence is None and line.startswith("### #"):
            heads.append(line)
    assert fence is None, "a code block is left open"
    return heads


def test_claude_session(home, capsys):
    code, out, err = run(capsys, "export", CLAUDE)
    assert code == 0, err
    assert out.startswith("# Fix double cron run\n")
    for field in ("**Agent:** claude", "**Project:** `/home/dev/my app`", "**Branch:** `fix/cron`",
                  "**Started:** 2026-03-14 10:00:30 UTC", "**Updated:** 2026-03-14 10:03:00 UTC",
                  "**Messages:** 6\n", f"**Session:** `{CLAUDE}`",
                  f"**Resume:** `cd '/home/dev/my app' && claude --resume {CLAUDE}`"):
        assert field in out
    heads = sections(out)  # also: no code block left open, not even by the assistant's open fence
    assert [h.split(" · ")[0] for h in heads] == [
        "### #1 User", "### #2 Assistant", "### #3 Thinking", "### #4 Tool call", "### #5 Tool output",
        "### #6 Assistant"]
    assert heads[0] == "### #1 User · 2026-03-14 10:00:30 UTC" and "`Bash`" in heads[3]
    assert "> maybe the deploy script\n> adds it twice\n" in out
    assert MASKED in out and SECRET not in out
    # the tool output holds ``` and ````: its fence is longer, so the text stays inside
    assert "`````\n" + BREAKOUT + "\n`````\n" in out


def test_a_title_from_a_markdown_heading_is_exported_without_its_marks(home, capsys):
    """A first prompt opening with a heading exported as ``# # Deploy plan``; its title is the
    heading's text, and a long one (cut at 80 in the index) is exported whole."""
    heading = "Zephyrquokka deploy plan for " + "the health check and the express bump " * 3
    ClaudeSession(home, session_id="a11ce000-1111-4222-8333-000000000001").user(
        f"# {heading.strip()}\n\nPlease help").write()
    code, out, err = run(capsys, "export", "a11ce000")
    assert code == 0, err
    assert out.startswith(f"# {heading.strip()}\n")


def test_codex_session_and_no_redact(home, capsys):
    code, out, _ = run(capsys, "export", CODEX[:8])
    assert code == 0 and "**Agent:** codex" in out
    assert [h.split(" · ")[0] for h in sections(out)] == [
        "### #1 User", "### #2 Tool call", "### #3 Tool output", "### #4 Assistant"]
    assert '```json\n{"command": ["rg", "step"]}\n```' in out
    assert f"token is {MASKED}" in out and SECRET not in out
    code, out, _ = run(capsys, "export", CODEX, "--no-redact")
    assert code == 0 and f"token is {SECRET}" in out


def test_output_file(home, tmp_path, capsys):
    target = tmp_path / "out" / "s.md"
    target.parent.mkdir()
    target.write_text("old")
    code, out, err = run(capsys, "export", CLAUDE, "-o", str(target))
    assert code == 0 and out == "" and err == ""
    text = target.read_text("utf-8")
    assert text.startswith("# Fix double cron run") and "### #6 Assistant" in text
    assert [p.name for p in target.parent.iterdir()] == ["s.md"]  # no temporary file left
    code, _, err = run(capsys, "export", CLAUDE, "-o", str(tmp_path / "missing" / "s.md"))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "cannot write" in err


def test_output_that_is_not_a_file_name_is_said_plainly_and_nothing_is_written(home, tmp_path, capsys, monkeypatch):
    """A fresh-user trial: ``export ID -o .`` said "cannot write .: Device or resource busy" (the
    rename over the directory), and ``-o new/`` wrote a file named ``new``. A directory, a name
    ending in /, a missing directory or a file on the way is named in one line, exit 1, and
    nothing is written anywhere."""
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    (work / "notes.txt").write_text("mine")
    monkeypatch.chdir(work)
    before = sorted(str(p) for p in work.rglob("*"))
    for output, problem in ((".", "it is a directory"), ("out", "it is a directory"),
                            ("out/", "it is a directory"), (str(work / "out"), "it is a directory"),
                            ("new/", "it ends in /, as a directory does; give a file name"),
                            ("missing/s.md", "directory missing does not exist"),
                            ("out/deeper/s.md", "directory out/deeper does not exist"),
                            ("notes.txt/s.md", "notes.txt is not a directory"),
                            ("", "no file name given")):
        code, out, err = run(capsys, "export", CLAUDE, "-o", output)
        assert (code, out, err) == (1, "", f"crabsearch: cannot write {output}: {problem}\n"), output
    assert sorted(str(p) for p in work.rglob("*")) == before
    assert (work / "notes.txt").read_text() == "mine"


def test_output_file_is_private_as_the_apps_exports_are(home, tmp_path, capsys):
    """``export -o FILE`` made FILE with the umask's mode (0644 with umask 022) while the app's
    exports were 0600: one rule now, a new export is 0600 whatever the umask (it holds
    conversation text), and an existing FILE keeps the mode its owner gave it."""
    out = tmp_path / "out"
    out.mkdir()
    old = os.umask(0o022)
    try:
        assert run(capsys, "export", CLAUDE, "-o", str(out / "s.md"))[0] == 0
        assert stat.S_IMODE((out / "s.md").stat().st_mode) == 0o600
        os.chmod(out / "s.md", 0o640)
        assert run(capsys, "export", CLAUDE, "-o", str(out / "s.md"))[0] == 0
        assert stat.S_IMODE((out / "s.md").stat().st_mode) == 0o640
        assert run(capsys, "export", CLAUDE, "--no-redact", "-o", str(out / "unmasked.md"))[0] == 0
        assert stat.S_IMODE((out / "unmasked.md").stat().st_mode) == 0o600
    finally:
        os.umask(old)
    assert sorted(p.name for p in out.iterdir()) == ["s.md", "unmasked.md"]  # no temporary file left


def test_never_overwrites_the_transcript(home, capsys):
    path = next(home.glob(f".claude/projects/*/{CLAUDE}.jsonl"))
    before = path.read_bytes()
    code, _, err = run(capsys, "export", CLAUDE, "-o", str(path))
    assert code == 1 and "own transcript" in err and path.read_bytes() == before


def test_unknown_and_ambiguous_ids(home, capsys):
    ClaudeSession(home, session_id="5c0375b4-0000-4000-8000-000000000000").user("twin").write()
    code, out, err = run(capsys, "export", "no-such-session")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "no session" in err
    code, out, err = run(capsys, "export", "5c03")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "matches 2 sessions" in err


def test_ranges(home, capsys):
    code, out, _ = run(capsys, "export", CLAUDE, "--from", "2", "--to", "4")
    assert code == 0 and "**Messages:** 6 (exported: #2-#4)" in out
    assert [h.split(" · ")[0][4:] for h in sections(out)] == ["#2 Assistant", "#3 Thinking", "#4 Tool call"]
    code, out, _ = run(capsys, "export", CLAUDE, "--from", "6", "--to", "99")
    assert [h.split(" · ")[0][4:] for h in sections(out)] == ["#6 Assistant"]
    for argv, words in ((["--from", "7"], "past the last message"), (["--from", "3", "--to", "2"], "before"),
                        (["--from", "0"], "1 or more"), (["--to", "x"], "whole number")):
        code, out, err = run(capsys, "export", CLAUDE, *argv)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and words in err


def test_long_session_is_paged_completely(home, tmp_path, capsys, monkeypatch):
    calls = []
    page = Engine.page

    def spy(self, ref, offset=0, limit=50, *a, **k):
        calls.append((offset, limit))
        return page(self, ref, offset, limit, *a, **k)

    monkeypatch.setattr(Engine, "page", spy)
    code, out, _ = run(capsys, "export", LONG, "-o", str(tmp_path / "long.md"))
    assert code == 0
    heads = sections((tmp_path / "long.md").read_text("utf-8"))
    assert [int(h.split()[1][1:]) for h in heads] == list(range(1, 121))
    assert calls == [(0, 50), (50, 50), (100, 20)]


def test_engine_api_and_window(home, tmp_path):
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    try:
        ref = engine.find_session(CLAUDE)
        md = "".join(session_markdown(engine, ref, include_tools=False))
        assert [h.split(" · ")[0][4:] for h in sections(md)] == ["#1 User", "#2 Assistant", "#3 Thinking",
                                                                   "#6 Assistant"]
        [hit] = engine.search("overlap", before=1, after=1).hits
        md = window_markdown(hit)
        heads = sections(md)
        assert [h.split(" · ")[0][4:] for h in heads] == ["#1 User", "#2 Assistant", "#3 Thinking"]
        assert heads[1].endswith(" · (hit)") and not heads[0].endswith("(hit)")
        assert "**Messages:** 6 (window: #1-#3 around #2)" in md
    finally:
        engine.close()


def test_markdown_helpers():
    assert fence_for("no ticks") == "```" and fence_for("a ```` b") == "`````"
    assert code_span("a`b") == "``a`b``" and code_span("`x") == "`` `x ``"
    assert balanced("x\n```py\ny") == "x\n```py\ny\n```"
    assert balanced("x\n````\ny\n```\n") == "x\n````\ny\n```\n````"
    assert balanced("x\n```\ny\n```") == "x\n```\ny\n```"
    assert balanced("inline ``` not a fence") == "inline ``` not a fence"
    assert clean("a\r\nb\x1b[31m\tc\rd") == "a\nb\u241b[31m\tc\u240dd"


# -- editor -----------------------------------------------------------------------------------

def test_line_of_offset(tmp_path, monkeypatch):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"one\r\ntwo\r\nthree")  # CRLF, no trailing newline
    assert editor.line_of_offset(p, 0) == 1
    assert editor.line_of_offset(p, 4) == 1  # the LF of line 1
    assert editor.line_of_offset(p, 5) == 2
    assert editor.line_of_offset(p, 10) == 3
    assert editor.line_of_offset(p, p.stat().st_size) == 3  # at EOF, no trailing newline
    q = tmp_path / "u.jsonl"
    q.write_bytes(b"a\nb\n")
    assert editor.line_of_offset(q, q.stat().st_size) == 3  # after the last newline
    assert editor.line_of_offset(q, 999) == 3
    monkeypatch.setattr(editor, "CHUNK", 3)  # counting across chunk boundaries
    big = tmp_path / "big"
    big.write_bytes(b"x\n" * 100)
    assert editor.line_of_offset(big, 101) == 51 and editor.line_of_offset(big, 200) == 101
    with pytest.raises(OSError):
        editor.line_of_offset(tmp_path / "missing", 0)
    with pytest.raises(ValueError):
        editor.line_of_offset(p, -1)


@pytest.mark.parametrize("env, expected", [
    ({}, ["vi", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "nvim"}, ["nvim", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "nano", "VISUAL": "emacs -nw"}, ["emacs", "-nw", "+7", "/t/s.jsonl"]),
    ({"VISUAL": "  ", "EDITOR": "/usr/bin/vim"}, ["/usr/bin/vim", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "code --wait"}, ["code", "--wait", "-g", "/t/s.jsonl:7"]),
    ({"EDITOR": "/opt/Code.exe"}, ["/opt/Code.exe", "-g", "/t/s.jsonl:7"]),
    ({"EDITOR": "subl -w"}, ["subl", "-w", "/t/s.jsonl:7"]),
    ({"VISUAL": "hx"}, ["hx", "/t/s.jsonl:7"]),
    ({"EDITOR": "kak"}, ["kak", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "micro"}, ["micro", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "'/Applications/My Editor/ed'"}, ["/Applications/My Editor/ed", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "unknown-editor --flag"}, ["unknown-editor", "--flag", "+7", "/t/s.jsonl"]),
    ({"EDITOR": "vim 'unbalanced"}, ["vim 'unbalanced", "+7", "/t/s.jsonl"]),
])
def test_editor_command(env, expected):
    assert editor.editor_command("/t/s.jsonl", 7, env) == expected


@pytest.mark.parametrize("argv, waits", [
    (["vi", "+3", "f"], True), (["nano"], True), (["emacs"], True), (["hx"], True), (["unknown"], True),
    (["code", "-g", "f:3"], False), (["code", "--wait", "-g", "f:3"], True), (["/usr/bin/Code.exe", "-w"], True),
    (["subl", "f:3"], False), (["subl", "-w", "f:3"], True), (["zed", "f:3"], False),
    (["gvim", "+3", "f"], False), (["gvim", "-f", "+3", "f"], True),
    (["emacsclient", "+3", "f"], True), (["emacsclient", "-n", "+3", "f"], False),
])
def test_editor_waits(argv, waits):
    assert editor.editor_waits(argv) is waits


def test_editor_command_edges():
    assert editor.editor_command("-x.jsonl", 0, {"EDITOR": "vi"}) == ["vi", "+1", "./-x.jsonl"]


def test_export_of_a_deleted_transcript_warns(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    path = ClaudeSession(home, session_id="dddddddd-0000-4000-8000-000000000001").user("the aardwolf").write()
    index = str(tmp_path / "index")
    monkeypatch.setenv("HOME", str(home))
    assert main(["--index-dir", index, "index"]) == 0
    path.unlink()
    capsys.readouterr()
    assert main(["--index-dir", index, "export", "dddddddd"]) == 0
    assert "1 message could not be read" in capsys.readouterr().err


def test_an_exports_file_name_has_the_whole_session_id_or_its_short_id():
    from crabsearch.export import file_stem
    from crabsearch.model import Session

    assert file_stem(Session(agent="claude", session_id="ec04042c-869f-43aa-9e1b-0c1d2e3f4a5b", path="x")) == (
        "claude-ec04042c-869f-43aa-9e1b-0c1d2e3f4a5b")
    assert file_stem(Session(agent="specstory", session_id="2025-04-28_18-51-notes.md", path="x")) == (
        "specstory-2025-04-28_18-51-notes-md")
    assert file_stem(Session(agent="gemini", session_id="a1b2c3d4" + "x" * 200, path="x")) == "gemini-a1b2c3d4"

"""Pilot tests of the triage keys: find in session, message jumps, toggles, copy, fork, editor."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from crabsearch import editor
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.panels import ChoiceScreen, ResumeScreen
from crabsearch.tui.screens import SearchScreen
from crabsearch.tui.session import SessionScreen
from crabsearch.tui.transcript import TranscriptView

from builders import NOW
from builders import settle
from builders import ClaudeSession
from tui_helpers import app_of


def make_app(sample, tmp_path, **kw):
    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home), "EDITOR": "vim"}, now=NOW, index_on_start=False,
                        cursor_blink=False, **kw)
    app.copy_file = tmp_path / "last-copy.txt"
    app.editor_dir = tmp_path / "editor-copies"
    return app


async def open_hit(app, pilot, query):
    await settle(pilot)
    await pilot.press(*query)
    await settle(pilot)
    await pilot.press("down", "o")
    await pilot.pause()
    assert isinstance(app.screen, SessionScreen)
    return app.screen.query_one(TranscriptView)


def indexed_app(tmp_path, home):
    """The app on an index of ``home``'s transcripts, built at ``tmp_path / "index"``."""
    from crabsearch.index import Indexer

    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False,
                         cursor_blink=False)


def view_text(view) -> str:
    return "\n".join("".join(seg.text for seg in strip) for _, strip in view._lines)


async def wait_find(app, pilot, view):
    for _ in range(100):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not view._finding:
            return
    raise AssertionError("find did not finish")


async def test_slash_finds_then_n_and_shift_n_move_and_wrap(sample, tmp_path):
    app = make_app(sample, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "parser")
        assert view.top_message() == 561
        await pilot.press("slash")
        box = app.screen.query_one("#find")
        assert box.display and app.focused is box
        await pilot.press(*"MODULE 290", "enter")
        await wait_find(app, pilot, view)
        assert app.focused is view and not box.display
        assert view.top_message() == 580  # "step 290: ... module 290" (any case)
        assert "module 290" in view_text(view)
        await pilot.press("n")
        await wait_find(app, pilot, view)
        assert view.top_message() == 581  # "refactored module 290"
        await pilot.press("n")
        await wait_find(app, pilot, view)
        assert view.top_message() == 580  # wrapped past the end back to the first match
        await pilot.press("N")
        await wait_find(app, pilot, view)
        assert view.top_message() == 581  # backwards wraps too
        position = str(app.screen.query_one("#position").render())
        assert "MODULE 290" in position


async def test_find_text_that_is_nowhere_says_so(sample, tmp_path):
    app = make_app(sample, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "parser")
        await pilot.press("slash", *"zanzibar", "enter")
        await wait_find(app, pilot, view)
        assert view.top_message() == 561
        assert any("not in this session" in n.message for n in app._notifications)
        await pilot.press("slash", "escape")  # Esc closes the bar, the view stays
        assert isinstance(app.screen, SessionScreen) and app.focused is view


async def test_shift_j_and_k_move_message_by_message(sample, tmp_path):
    app = make_app(sample, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "parser")
        assert view.cursor == 561
        await pilot.press("J", "J")
        assert view.cursor == view.top_message() == 563
        await pilot.press("K")
        assert view.cursor == 562
        await pilot.press("g")
        await pilot.pause()
        assert view.cursor == 0
        await pilot.press("K")
        assert view.cursor == 0
        await pilot.press("G")
        await pilot.pause()
        assert view.cursor == 599


async def test_t_cycles_tools_and_shift_t_hides_thinking(sample, tmp_path):
    app = make_app(sample, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "idempotent")
        await pilot.press("g")
        await pilot.pause()
        assert "crontab -l" in view_text(view)
        await pilot.press("t")
        assert view.tool_mode == "full"
        await pilot.press("t")
        assert view.tool_mode == "hidden"
        text = view_text(view)
        assert "tool-call:Bash" not in text and "0 0 * * *" not in text
        assert "two identical cron entries" in text
        assert view.cursor == 0
        await pilot.press("J")  # J skips hidden messages
        assert view.cursor == 1
        await pilot.press("J")
        assert view.cursor == 4  # #3, #4 (Bash call and output) are hidden
        await pilot.press("t")
        assert view.tool_mode == "lines" and "crontab -l" in view_text(view)
        await pilot.press("T")
        assert view.show_thinking is False
        assert "thinking hidden" in str(app.screen.query_one("#position").render())


async def test_copy_menu_copies_id_command_message_and_window(sample, tmp_path):
    app = make_app(sample, tmp_path)
    copied = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "c")
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("i")
        assert copied[-1] == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
        assert app.copy_file.read_text() == copied[-1]  # the fallback when OSC 52 is ignored
        await pilot.press("c", "r")
        assert copied[-1] == "cd /home/dev/webapp && claude --resume 5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
        await pilot.press("c", "m")
        assert copied[-1] == "Remove the duplicate and make the deploy script idempotent."
        await pilot.press("c", "w")
        assert "▶ #6 user" in copied[-1] and copied[-1].startswith("#2 assistant")
        await pilot.press("c", "escape")
        assert isinstance(app.screen, SearchScreen) and len(copied) == 4
        await pilot.press("o", "J", "c", "m")  # in the session view: the message at the cursor
        assert copied[-1] == '{"file_path": "deploy.sh"}'  


async def test_copy_menu_moves_with_up_and_down_and_enter_picks(sample, tmp_path):
    """A fresh-user trial: the copy menu ignored the arrows and Enter (only its letters worked)."""
    app = make_app(sample, tmp_path)
    copied = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "c")
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("down", "down", "down", "up", "enter")  # the third choice: the path
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)
        assert copied == [app.screen.query_one("#results").current_hit.session.path]
        await pilot.press("c", "enter")  # the first choice, highlighted when the menu opens
        await pilot.pause()
        assert copied[-1] == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
        await pilot.press("o", "c", "up", "enter")  # in the session view; Up at the top: the last
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen) and "▶ #6 user" in copied[-1]  # the window
        await pilot.press("c", "end", "up", "enter")  # the one before the last: the message
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen) and copied[-1].startswith("Remove the duplicate")


async def test_fork_asks_and_exits_with_the_fork_command(sample, tmp_path):
    app = make_app(sample, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "f")
        assert isinstance(app.screen, ResumeScreen) and app.screen.fork
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value == ("cd /home/dev/webapp && claude --resume "
                                "5c0375b4-57a5-4f26-b12d-d022ee4e51b7 --fork-session")


async def test_fork_of_an_agent_without_fork_says_so(sample, tmp_path):
    app = make_app(sample, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"jitter")
        await settle(pilot)
        await pilot.press("down", "f")
        assert isinstance(app.screen, SearchScreen)
        assert any("cannot be forked" in n.message for n in app._notifications)


async def test_v_opens_the_editor_at_the_message_line(sample, tmp_path):
    app = make_app(sample, tmp_path)
    ran = []
    app.run_external = lambda argv: ran.append(argv) or 0
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "v")
        await pilot.pause()
        path = app.screen.query_one("#results").current_hit.session.path
        name = os.path.basename(path)
        assert ran[0][:2] == ["vim", "+6"] and os.path.basename(ran[0][2]) == name  # line 6 has message #6
        await pilot.press("o", "g", "v")
        await pilot.pause()
        assert ran[-1][:2] == ["vim", "+1"] and os.path.basename(ran[-1][2]) == name


def tree(root) -> dict:
    """``{path: (mode, mtime_ns, size or entries)}`` of everything under ``root``."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        st = os.lstat(dirpath)
        out[dirpath] = (st.st_mode, st.st_mtime_ns, tuple(sorted(dirnames + filenames)))
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            out[os.path.join(dirpath, name)] = (st.st_mode, st.st_mtime_ns, st.st_size)
    return out


async def test_v_gives_the_editor_a_private_read_only_copy_never_the_agents_file(sample, tmp_path):
    """A fresh-user trial: with no $EDITOR, ``v`` ran ``vi`` on ~/.claude/projects/.../X.jsonl;
    vi made a swap file in the agent's directory and one ``:w`` would have changed the
    transcript. The editor gets a byte-identical copy (same name, same line), 0400 in a 0700
    directory of crabsearch's own, removed when the editor exits; a copy an earlier crabsearch
    left is removed too."""
    home, _ = sample
    app = make_app(sample, tmp_path)
    app.env.pop("EDITOR")  # vi, as for the user
    stale = app.editor_dir / f"{editor.COPY_PREFIX}{2 ** 22 + 7}-x1y2z3"  # no such pid
    stale.mkdir(parents=True)
    (stale / "old.jsonl").write_text("{}\n")
    before = tree(home)
    seen = {}

    def vi(argv):  # what vi does: a swap file beside the file it opens, then a write (:w!)
        target = Path(argv[-1])
        seen.update(argv=argv, mode=stat.S_IMODE(target.stat().st_mode),
                    dir_mode=stat.S_IMODE(target.parent.stat().st_mode), data=target.read_bytes())
        (target.parent / f".{target.name}.swp").write_bytes(b"swap")
        target.write_text("edited\n")
        return 0

    app.run_external = vi
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "v")
        await pilot.pause()
        path = app.screen.query_one("#results").current_hit.session.path
        said = " ".join(n.message for n in app._notifications)
    copy = Path(seen["argv"][-1])
    assert seen["argv"][:2] == ["vi", "+6"] and copy != Path(path)
    assert not copy.is_relative_to(home) and copy.is_relative_to(app.editor_dir)
    assert copy.name == os.path.basename(path) and seen["data"] == Path(path).read_bytes()
    assert seen["mode"] == 0o400 and seen["dir_mode"] == 0o700
    assert stat.S_IMODE(app.editor_dir.stat().st_mode) == 0o700
    assert "read-only copy" in said
    assert tree(home) == before  # no swap file, no write, no mtime changed in the agent's directory
    assert list(app.editor_dir.iterdir()) == []  # the copy went when the editor exited; the stale one too


async def test_v_opens_nothing_when_no_copy_can_be_made(sample, tmp_path, monkeypatch):
    """A full disk: the copy fails, the app says so, and the agent's file is not opened instead."""
    app = make_app(sample, tmp_path)
    ran = []
    app.run_external = lambda argv: ran.append(argv) or 0

    def full(src, dest, mode=0o600):
        Path(dest).write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device", str(dest))

    monkeypatch.setattr(editor, "copy_file", full)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "v")
        await pilot.pause()
        said = " ".join(n.message for n in app._notifications)
    assert ran == []
    assert "Cannot make a read-only copy" in said and "No space left on device" in said
    assert "not opened" in said
    assert list(app.editor_dir.iterdir()) == []


async def test_v_keeps_the_copy_for_an_editor_that_returns_at_once(sample, tmp_path):
    """``code`` hands the file to its window and returns: the copy must outlive it."""
    app = make_app(sample, tmp_path)
    app.env["EDITOR"] = "code"
    ran = []
    app.run_external = lambda argv: ran.append(argv) or 0
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "v")
        await pilot.pause()
    assert ran[0][:2] == ["code", "-g"]
    copy = Path(ran[0][2].rsplit(":", 1)[0])
    assert copy.is_file() and copy.is_relative_to(app.editor_dir)
    editor.remove_copy(copy)
    assert not copy.parent.exists()


async def test_shift_e_exports_the_session_or_the_window_to_markdown(sample, tmp_path):
    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home), "PWD": str(tmp_path)}, now=NOW,
                        index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "E")
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # The whole id: claude-5c0375b4-57a5-4f.md cut it mid-way
        session = (tmp_path / "claude-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.md").read_text()
        assert session.startswith("# Fix the double cron run")
        assert "Remove the duplicate" in session and "crontab -l | grep -F run.sh" in session
        await pilot.press("E", "w")
        await app.workers.wait_for_complete()
        await pilot.pause()
        window = (tmp_path / "claude-5c0375b4-57a5-4f26-b12d-d022ee4e51b7-at-6.md").read_text()
        assert "(hit)" in window and "#2" in window and "#1 " not in window
        assert any("Exported to" in n.message for n in app._notifications)
        assert not list(tmp_path.glob(".*.tmp"))


async def test_session_view_follows_the_active_branch_and_b_shows_the_abandoned_one(tmp_path):
    from builders import ClaudeSession

    home = tmp_path / "home"
    s = ClaudeSession(home).user("set up the wombat parser").assistant("parser scaffolded")
    fork_point = s.parent
    s.user("now add yaml support").assistant("yaml added with pyyaml")
    s.rewind_to(fork_point).user("now add toml support instead").assistant("toml added with tomllib")
    s.write()
    app = indexed_app(tmp_path, home)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "tomllib")
        text = view_text(view)
        assert "toml added" in text and "yaml" not in text  # the active branch only
        await pilot.press("a")
        assert "yaml added with pyyaml" in view_text(view) and "abandoned branch" in view_text(view)
        await pilot.press("escape", "escape", "escape")  # back, into the box, clear it
        view = await open_hit(app, pilot, "pyyaml")
        assert view.show_abandoned and "yaml added" in view_text(view)


async def test_s_hides_subagent_turns_written_into_the_transcript(tmp_path):
    from builders import ClaudeSession

    home = tmp_path / "home"
    s = ClaudeSession(home).user("audit the lemur service").assistant("starting a subagent")
    s.user("subagent: list the lemur endpoints").assistant("found 12 lemur endpoints")
    for line in s.lines[-2:]:
        line["isSidechain"] = True  # Claude Code <= 1.0 wrote subagent turns inline
    s.assistant("the audit of the lemur service is done")
    s.write()
    app = indexed_app(tmp_path, home)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "audit")
        await pilot.press("g")
        await pilot.pause()
        assert "found 12 lemur endpoints" in view_text(view) and "subagent turn" in view_text(view)
        await pilot.press("s")
        assert "found 12 lemur endpoints" not in view_text(view)
        assert "audit of the lemur service is done" in view_text(view)
        assert "subagent turns hidden" in str(app.screen.query_one("#position").render())
        page = app.engine.page(app.screen.hit.ref, 0, 10)
        assert [m.sidechain for m in page.messages] == [False, False, True, True, False]
        assert page.messages[2].to_json(window=False)["sidechain"] is True


def on_screen(view) -> str:
    """The text of the lines in view."""
    return "\n".join(view.render_line(y).text for y in range(view.scrollable_content_region.height))


async def test_opening_a_long_message_at_its_hit_shows_the_hit(tmp_path):
    """A long message opens scrolled to the first line with the query's words: below the
    screen, or in the folded part (unfolded then); ``]`` does the same for the next hit. (A user
    trial: message #77, 11,561 characters, ``cron`` at character 7,900: the view showed its top.)"""
    from builders import ClaudeSession

    home = tmp_path / "home"
    lines = [f"line {i} of the long answer about the build" for i in range(200)]
    folded = "\n\n".join(lines[:120] + ["the quokka scheduler runs here"] + lines[120:])
    below = "\n\n".join(lines[:20] + ["and the quokka again"] + lines[20:30])
    s = ClaudeSession(home).user("explain the build").assistant(folded).user("more please").assistant(below)
    s.write()
    app = indexed_app(tmp_path, home)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "quokka scheduler runs")
        await settle(pilot)
        assert view.hit_index == 1 and 1 in view._unfolded
        assert "the quokka scheduler runs here" in on_screen(view)
        await pilot.press("right_square_bracket")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert view.cursor == 3 and "and the quokka again" in on_screen(view)
        assert 3 not in view._unfolded  # its match is in the shown part, below the screen


async def test_a_message_cut_for_the_view_says_so_and_find_says_where_it_looked(tmp_path, monkeypatch):
    """The session view reads a message's first MESSAGE_BYTES: a longer one ends with a note
    saying it was cut (and that ``crabsearch show`` prints it all), and a find that met it says
    it looked in the text as shown (a user trial: a 2 MB message ended mid-word, with no note,
    and find said its last word was not in the session)."""
    from crabsearch.tui import session

    from builders import ClaudeSession

    monkeypatch.setattr(session, "MESSAGE_BYTES", 4096)
    home = tmp_path / "home"
    s = ClaudeSession(home).user("the numbat question").assistant("longlinestart " + "lorem ipsum " * 2000 + "longlineend")
    s.write()
    app = indexed_app(tmp_path, home)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_hit(app, pilot, "numbat")
        await pilot.press("e")  # every message in full: the cut is the view's, not a fold
        await settle(pilot)
        assert "cut here: the view reads a message's first 4 KB" in view_text(view)
        await pilot.press("slash", *"longlineend", "enter")
        await wait_find(app, pilot, view)
        await settle(pilot)
        notes = [n.message for n in app._notifications]
        assert any("is not in this session (as shown: a message over 4 KB is cut)" in n for n in notes)


async def test_copy_file_is_private_even_in_an_open_directory_after_reveal(sample, tmp_path):
    import os
    import stat

    cache = tmp_path / "cache" / "crabsearch"
    cache.mkdir(parents=True, mode=0o755)
    os.chmod(cache, 0o755)  # made by an older version, or by hand
    copy_file = cache / "last-copy.txt"
    copy_file.write_text("old")
    os.chmod(copy_file, 0o644)
    app = app_of(sample)
    app.copy_file = copy_file
    app.copy_to_clipboard = lambda text: None
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("ctrl+r")  # revealed: the copy may hold a secret in clear
        await settle(pilot)
        await pilot.press("down", "c", "m")
        assert "idempotent" in copy_file.read_text()
    assert stat.S_IMODE(copy_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


async def test_export_title_is_the_whole_first_prompt_not_the_cut_title(tmp_path):
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    prompt = ("please rework the nightly export job so that it writes one file per customer, retries "
              "twice on a timeout and mails a summary to the on-call engineer")
    ClaudeSession(home, session_id="33333333-0000-4000-8000-000000000001").user(prompt).assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    out = tmp_path / "out"
    out.mkdir()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home), "PWD": str(out)}, now=NOW,
                        index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        hit = app.screen.result.hits[0]
        assert hit.session.title.endswith("…") and len(hit.session.title) == 80
        await pilot.press("down", "E", "s")
        await app.workers.wait_for_complete()
        await pilot.press("down", "E", "w")
        await app.workers.wait_for_complete()
    for f in out.iterdir():
        assert f.read_text().splitlines()[0] == "# " + prompt, f.name

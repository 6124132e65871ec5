"""SVG snapshots of the session view's rendering (Markdown, code, tool calls, diffs, folding) at
80x24 and 120x40, on ``tests/session_samples.py``'s session."""

from __future__ import annotations

import pytest

from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    from session_samples import indexed_rich_session

    return indexed_rich_session(tmp_path_factory.mktemp("rich"))


def opened(*keys):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press(*"ocelot")
        await settle(pilot)
        await pilot.press("down", "o")
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await settle(pilot)
        pilot.app.clear_notifications()

    return run_before


STATES = {
    "rendered": opened("g"),
    "tool-lines": opened("g", "J", "J"),
    "edit-expanded": opened("g", "J", "J", "J", "J", "enter"),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", list(STATES))
def test_session_view(snap_compare, rich, state, size):
    home, index_dir = rich
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)
    assert snap_compare(app, terminal_size=size, run_before=STATES[state])


# -- the edges real use found: Markdown prompts and thinking, a command's colours, an MCP tool's
# JSON answer, a skipped line's placeholder; messages appended while open; the transcript deleted


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    from crabsearch.index import Indexer
    from test_tui_session import write_edges_session

    root = tmp_path_factory.mktemp("edges")
    s = write_edges_session(root / "home")
    lines = s.path.read_text().splitlines()
    lines.insert(4, '{"type": "user", "message": ')  # a broken line after the coloured output
    s.path.write_text("\n".join(lines) + "\n")
    Indexer(root / "index", env={"HOME": str(root / "home")}).refresh()
    return root / "home", root / "index"


def opened_at(query, *keys):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press(*query)
        await settle(pilot)
        await pilot.press("down", "o")
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await settle(pilot)
        pilot.app.clear_notifications()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_session_view_edges(snap_compare, edges, size):
    """Tools in full: the prompt and thinking as Markdown, the placeholder of the broken line,
    the command's colours, the MCP answer pretty-printed."""
    home, index_dir = edges
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)
    assert snap_compare(app, terminal_size=size, run_before=opened_at("kestrel", "g", "t"))


def _follow_home(tmp_path):
    from builders import ClaudeSession
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="aaaaaaaa-0000-4000-8000-000000000002", cwd="/home/dev/birds")
    for n in range(30):
        (s.user if n % 2 == 0 else s.assistant)(f"shearwater note {n}")
    s.title("Shearwater notes").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return s, home, tmp_path / "index"


@pytest.mark.parametrize("change", ["appended", "deleted"])
def test_session_view_after_a_refresh(snap_compare, tmp_path, change):
    """The position line after a refresh read three messages appended below the view, or found
    the transcript deleted (the messages read stay)."""
    import json

    s, home, index_dir = _follow_home(tmp_path)
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False)
    open_it = opened_at("shearwater", "g")

    async def run_before(pilot):
        await open_it(pilot)
        if change == "appended":
            for text in ("first petrel", "second petrel", "third petrel"):
                s.user(text)
                with open(s.path, "a") as fh:
                    fh.write(json.dumps(s.lines[-1]) + "\n")
        else:
            s.path.unlink()
        from crabsearch.tui.screens import SearchScreen

        next(s for s in pilot.app.screen_stack if isinstance(s, SearchScreen)).start_indexing()
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)

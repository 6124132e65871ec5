"""Keys, footer, help and toasts: Ctrl+C, rebound keys, hints that fit, one toast per kind."""

from __future__ import annotations

import pytest

from builders import NOW, settle
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.session import SessionScreen
from tui_helpers import app_of, screen_rows


async def test_ctrl_c_quits_from_the_search_screen_unless_text_is_selected(sample):
    """Ctrl+C quits from the search box and the rows, as in a terminal program (it said "Press
    Ctrl+Q to quit"); text selected in the box is copied instead, and the app stays."""
    from textual.widgets.input import Selection

    app = app_of(sample)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        box = app.screen.query_one("#query")
        box.selection = Selection(0, 4)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and app.clipboard == "cron"
        box.selection = Selection.cursor(4)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running and app.return_value is None
    app = app_of(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("down")  # the rows
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_in_the_session_view_says_how_to_quit_without_markup(sample):
    app = app_of(sample)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("down", "o")
        await pilot.pause()
        assert type(app.screen).__name__ == "SessionScreen"
        await pilot.press("ctrl+c")
        await pilot.pause()
        toast = app._notifications.last if hasattr(app._notifications, "last") else list(app._notifications)[-1]
        assert toast.message == "Press Ctrl+Q to quit crabsearch." and "[" not in toast.message
        assert app.is_running


async def test_one_toast_per_kind_over_the_footer_not_the_text(sample):
    """Three toggles in a row stacked three toasts over the tool output they described. A toast
    takes the place of the one of its kind (severity) still shown, and a one-line toast sits on
    the footer's line, over no line of the transcript; a warning stays beside a newer info."""
    from textual.widgets._toast import Toast, ToastHolder

    from crabsearch.tui.footer import KeyFooter
    from crabsearch.tui.transcript import TranscriptView

    app = app_of(sample)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "o")
        await pilot.pause()
        await pilot.press("t", "T", "s")
        await pilot.pause(0.2)
        screen = app.screen
        assert [n.message for n in app._notifications] == ["Subagent turns hidden"]
        [toast] = list(screen.query(Toast))
        assert len(screen.query(ToastHolder)) == 1  # the replaced ones' holders went too
        footer, view = screen.query_one(KeyFooter).region, screen.query_one(TranscriptView).region
        assert toast.region.y == footer.y and toast.region.height == 1
        assert not toast.region.overlaps(view)
        app.notify("The disk is full", severity="warning")
        app.notify("Thinking shown")
        await pilot.pause(0.2)
        assert sorted(n.message for n in app._notifications) == ["The disk is full", "Thinking shown"]


async def test_help_shows_the_keys_as_rebound_in_the_config(sample):
    from crabsearch import config

    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(keys={"open": "ctrl+o", "next-hit": "ctrl+n", "resume": "y"}))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        text = str(app.screen.query("Static")[1].render())
        lines = {line.split("  ")[-1].strip(): line for line in text.splitlines()}
        assert lines["open the session at the hit"].strip().startswith("Ctrl+O")
        assert lines["previous / next message matching the query"].strip().startswith("[ / Ctrl+N")
        assert lines["resume / fork in its agent (asks first)"].strip().startswith("y / f")
        assert lines["explain why the row matched"].strip().startswith("x")


async def test_the_expanded_row_names_the_keys_as_rebound(sample):
    from crabsearch import config

    home, index_dir = sample
    app = CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                        config=config.Config(keys={"widen": "w", "open": "ctrl+o"}))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()
        rows = "\n".join(screen_rows(app))
        assert "w/- widen/narrow · Ctrl+O open" in rows and "+/-" not in rows


def _footer_hints(app) -> dict:
    """The footer's hints shown on screen, by key (``[`` and ``]`` of a group too), each
    asserted whole and left of the palette key (docked right)."""
    from textual.widgets._footer import FooterKey, FooterLabel

    from crabsearch.tui.footer import KeyFooter

    footer = app.screen.query_one(KeyFooter)
    palette = footer.query_one(".-command-palette")
    assert palette.region.right == footer.region.right
    shown = {}
    for widget in footer.query("FooterKey, FooterLabel"):
        if widget is palette or not widget.display or not widget.parent.display:
            continue
        text = widget.key_display + widget.description if isinstance(widget, FooterKey) else str(widget.content)
        assert widget.region.width >= len(text) and widget.region.right <= palette.region.x, text
        shown[widget.key_display if isinstance(widget, FooterKey) else str(widget.content)] = widget
    return shown


@pytest.mark.parametrize("width", [80, 50])
async def test_every_footer_hint_shown_fits_and_the_session_view_names_both_brackets(sample, width):
    """At 80 columns the session view's footer showed ``f`` of ``f2 Status`` and a highlighted
    row's ended in ``f3 Agen``: the least needed hints are left out until the others fit whole;
    Esc, F1, Ctrl+Q and a row's ``o`` stay. The session view shows ``[ ] Hits`` (it showed
    ``] Next hit`` only)."""
    app = app_of(sample)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        assert {"f1", "^q"} <= set(_footer_hints(app))
        await pilot.press(*"cron")
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        hints = _footer_hints(app)
        assert {"o", "esc", "f1", "^q"} <= set(hints)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        hints = _footer_hints(app)
        assert {"[", "]", "Hits", "esc", "f1", "^q"} <= set(hints)
        assert hints["["].region.right < hints["]"].region.x < hints["Hits"].region.x  # `[ ] Hits`


def _help_entries(lines: list[str], column: int) -> list[tuple[str, str]]:
    """``(keys, what)`` read back from the help's lines, with the descriptions at ``column``:
    a line is a heading, blank, keys at two spaces (with the start of their description at
    ``column``, or alone), or more of the description starting exactly at ``column``."""
    out = []
    for line in lines:
        if not line.strip() or not line.startswith(" "):
            continue  # blank, a heading
        if line[2] != " ":
            beside = line[column - 2:column] == "  " and line[column:column + 1].strip()
            out.append((line[2:column].strip() if beside else line.strip(), line[column:] if beside else ""))
        else:
            assert not line[:column].strip() and line[column] != " ", f"under the keys: {line!r}"
            out[-1] = (out[-1][0], (out[-1][1] + " " + line[column:]).strip())
    return out


@pytest.mark.parametrize("width", [50, 80])
async def test_the_help_wraps_each_description_under_itself(sample, width):
    """F1 at 50x20: the descriptions wrapped under the keys (``(empty: recent)`` at the panel's
    left edge, every entry on two broken lines). Each description now wraps under its own start;
    on a narrow panel the key column narrows and keys too wide for it take a line of their own."""
    from rich.cells import cell_len
    from textual.geometry import Region

    from crabsearch.tui.panels import KEYS

    app = app_of(sample)
    async with app.run_test(size=(width, 20)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        body = app.screen.query_one(".panel-body")
        lines = [s.text.rstrip() for s in body.render_lines(Region(0, 0, body.size.width, body.size.height))]
        column = next(line.index("search as you type") for line in lines if "search as you type" in line)
        assert column <= 16 if width == 50 else column == 22
        assert _help_entries(lines, column) == [(k, w) for _, keys in KEYS for k, w, *_ in keys]
        assert max(cell_len(line) for line in lines) <= body.size.width

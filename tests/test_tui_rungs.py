"""The result list marks where the rows switch from one rung of the ladder to the next (issue 11):
a thin rule with a note ("fewer words matched below") above the first row of a lower rung, from
the hits' ``route`` only (the TUI never touches Whoosh)."""

from __future__ import annotations

from rich.console import Console

from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.render import RUNG_NOTES, rung_note
from crabsearch.tui.results import ResultList

from builders import NOW, settle


def make_app(sample):
    home, index_dir = sample
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False)


def rendered(option, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(option.prompt)
    return console.export_text()


async def test_a_rule_marks_the_first_row_of_a_lower_rung(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron deploy")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert [h.route for h in results.hits] == ["all", "any", "any"]
        rows = [rendered(results.get_option_at_index(i)) for i in range(results.option_count)]
        assert "fewer words matched below" not in rows[0]
        assert rows[1].splitlines()[0].startswith("── fewer words matched below ───")
        assert "matched below" not in rows[2]  # same rung as the row above: no rule
        # The rule belongs to the row: the cursor still moves session by session.
        await pilot.press("down", "down")
        assert results.current_hit is results.hits[1]
        await pilot.press("enter")  # expanded, the row keeps its rule
        assert 1 in results.expanded
        assert rendered(results.get_option_at_index(1)).splitlines()[0].startswith("── fewer words")


async def test_one_rung_has_no_rule(sample):
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert len({h.route for h in results.hits}) == 1
        assert not any("below" in rendered(results.get_option_at_index(i)) for i in range(results.option_count))


def test_each_rung_change_has_its_note():
    from types import SimpleNamespace as H
    assert rung_note(None, H(route="any")) is None
    assert rung_note(H(route="all"), H(route="all")) is None
    assert rung_note(H(route="phrase"), H(route="all")) == RUNG_NOTES["all"]
    assert rung_note(H(route="all"), H(route="session")) == RUNG_NOTES["session"]
    assert rung_note(H(route="session"), H(route="repair")) == RUNG_NOTES["repair"]
    assert rung_note(H(route="repair"), H(route="any")) == "fewer words matched below"
    assert rung_note(H(route=None), H(route="any")) is None


async def test_rows_paint_as_richs_renderer_paints_them(sample):
    """A row is painted from its own lines (``RowVisual.render_strips``, not Rich's renderer):
    the same segments, styles included, as Textual's ``RichVisual`` makes of the same row, for
    collapsed and expanded rows, rung rules, every width and the highlighted row's style; a
    part that is not one of the row's own falls back to Rich's renderer."""
    from rich.console import Group
    from rich.panel import Panel
    from textual.style import Style
    from textual.visual import RichVisual

    from crabsearch.tui.results import RowVisual

    def same(results, visual, width, style) -> bool:
        ours = [list(s) for s in visual.render_strips(width, None, style, None)]
        return ours == [list(s) for s in RichVisual.render_strips(visual, width, None, style, None)] and ours

    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        styles = [Style.from_rich_style(results.rich_style), Style.from_rich_style(
            results.get_component_rich_style("option-list--option-highlighted"))]
        for query, expand in (("", False), ("cron deploy", False), ("cron deploy", True), ("literal bold escape", False)):
            box = app.screen.query_one("#query")
            box.value = query
            await settle(pilot)
            if expand:
                results.focus()
                await pilot.press("enter", "down", "enter", "plus")
                await settle(pilot)
                assert results.expanded
            assert results.hits
            for i in range(len(results.hits)):
                visual = results._prompt(i)
                for width in (20, 57, 96, 180):
                    for style in styles:
                        assert same(results, visual, width, style), (query, i, width)
            box.focus()
        foreign = RowVisual(results, Group(Panel("a panel"), *results._prompt(0).row.renderables))
        assert same(results, foreign, 60, styles[0])


def status_line(app) -> str:
    return str(app.screen.query_one("#status").render())


async def test_the_count_line_counts_the_rows_of_each_rung(sample):
    """The status line says how many rows each rung found, in ladder order, at any width: one
    row with every word and two with some said "3 sessions · every word in one message"."""
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"cron deploy")
        await settle(pilot)
        assert [h.route for h in app.screen.query_one(ResultList).hits] == ["all", "any", "any"]
        assert status_line(app) == "1 session with every word in one message · 2 with some of the words"
        await pilot.resize_terminal(50, 30)
        await settle(pilot)
        assert status_line(app) == "1 all words in a message · 2 some words"
        await pilot.resize_terminal(30, 30)
        await settle(pilot)
        assert status_line(app) == "3 sessions"


async def test_the_start_of_a_session_id_finds_it_in_the_search_box(sample):
    """``5c0375b4`` typed in the box lists that session (the engine's id route), as
    ``crabsearch show 5c0375b4`` takes it."""
    app = make_app(sample)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"5c0375b4")
        await settle(pilot)
        hits = app.screen.query_one(ResultList).hits
        assert [h.session.session_id[:8] for h in hits] == ["5c0375b4"]
        assert status_line(app) == "1 session by session id"


def test_the_count_line_marks_more_rows_and_names_the_repair():
    from types import SimpleNamespace as H

    from crabsearch.tui.results import count_line

    hits = [H(route="all"), H(route="repair"), H(route="repair")]
    assert count_line(hits, 100, more=True, repair=("confg", "config")) == (
        "1 session with every word in one message · 2+ for “config” instead of “confg”")
    assert count_line([H(route=None)], 100) == "1 session"
    assert count_line([H(route="all")] * 3, 100, one_word=True) == "3 sessions"  # nothing more to say
    assert count_line([H(route="repair")], 100, repair=("crno", "cron"), one_word=True) == (
        "1 session for “cron” instead of “crno”")


def test_the_count_line_says_the_repaired_query_at_every_width():
    """At 45 columns or less a repair said ``1 as zephyrquokka``, and from 80 to 120 columns
    ``7 sessions showing results for widget · 1 with some of the words``: the rows are for
    "weekly widget", not "widget", and the CLI says "instead of widgt". Every form names the
    whole query as searched, the widest the query as typed too."""
    from types import SimpleNamespace as H

    from crabsearch.tui.results import count_line

    hits = [H(route="repair")] * 7 + [H(route="any")]
    repair = ("weekly widgt", "weekly widget")
    assert count_line(hits, 116, repair=repair) == (
        "7 sessions for “weekly widget” instead of “weekly widgt” · 1 with some of the words")
    assert count_line(hits, 76, repair=repair) == "7 sessions for “weekly widget” · 1 with some of the words"
    assert count_line(hits, 56, repair=repair) == "7 for “weekly widget” · 1 some words"
    assert count_line(hits, 34, repair=repair) == "7 spelling repaired · 1 some words"
    one = ("zephyrquokkao", "zephyrquokka")
    assert count_line([H(route="repair")], 41, repair=one, one_word=True) == "1 session for “zephyrquokka”"
    assert count_line([H(route="repair")], 19, repair=one, one_word=True) == "1 spelling repaired"


async def test_the_status_line_names_the_query_as_repaired(sample):
    """The screen gives the count line the query's words as typed and as repaired, filters left
    out."""
    app = make_app(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"nightly crno agent:claude")
        await settle(pilot)
        assert status_line(app).startswith("1 session for “nightly cron” instead of “nightly crno” · ")
        await pilot.resize_terminal(45, 30)
        await settle(pilot)
        assert status_line(app).startswith("1 for “nightly cron” · ")

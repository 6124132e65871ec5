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

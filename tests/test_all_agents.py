"""End to end for every agent at once: each agent's default layout under
one test ``HOME`` (``all_agents.py``); ``status`` lists every agent, ``search`` finds each session
with the right title, project and resume command, ``agent:`` filters, ``show`` reads the messages
back, and the app lists them with agent badges, the ``agent:`` filter and the F3 picker."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from crabsearch.cli import main
from crabsearch.sources import SOURCES
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.filters import PickerScreen
from crabsearch.tui.render import agent_name
from crabsearch.tui.results import ResultList

from all_agents import AGENTS, CLEARED_ENV, all_agents_env, all_agents_index, build_all_agents_home
from builders import NOW, settle


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """``(index_dir, expects)`` with the process environment set to the test ``HOME`` (agent
    overrides cleared) and the index built by ``crabsearch --index-dir X index``."""
    root = tmp_path_factory.mktemp("cli")
    home = root / "home"
    expects = build_all_agents_home(home)
    index_dir = root / "index"
    with pytest.MonkeyPatch.context() as mp:
        for name in CLEARED_ENV + [s.env_var for s in SOURCES.values() if s.env_var]:
            mp.delenv(name, raising=False)
        for name, value in all_agents_env(home, expects).items():
            mp.setenv(name, value)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["--index-dir", str(index_dir), "index", "--json"])
        assert code == 0, out.getvalue()
        yield index_dir, expects


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The sessions indexed through the API, for the app (``(home, index_dir, env, expects)``)."""
    return all_agents_index(tmp_path_factory)


def cli(capsys, index_dir: Path, *argv: str) -> dict | str:
    """Run ``crabsearch --index-dir X argv...``; the parsed JSON when ``--json`` is given, else
    the text. Fails on a non-zero exit."""
    code = main(["--index-dir", str(index_dir), *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out) if "--json" in argv else out


def test_every_registered_agent_is_covered():
    assert sorted(SOURCES) == sorted(AGENTS)


def test_status_lists_every_agent_with_its_transcript(world, capsys):
    index_dir, expects = world
    data = cli(capsys, index_dir, "status", "--json")
    by_agent = {a["agent"]: a for a in data["agents"]}
    assert sorted(by_agent) == sorted(AGENTS)
    for agent in AGENTS:
        a = by_agent[agent]
        assert (a["files_found"], a["files_indexed"], a["sessions"]) == (1, 1, 1), a
        assert a["messages"] >= 2 and a["skipped_lines"] == 0, a
    assert data["skipped_files"] == [] and data["unreadable_files"] == []
    text = cli(capsys, index_dir, "status")
    for agent in AGENTS:
        assert f"{SOURCES[agent].display}: 1 transcript found, 1 session" in text, agent


@pytest.mark.parametrize("agent", AGENTS)
def test_search_finds_the_session_with_title_project_and_resume(world, capsys, agent):
    index_dir, expects = world
    exp = expects[agent]
    [hit] = cli(capsys, index_dir, "search", "--json", exp.word)["hits"]
    got = (hit["agent"], hit["session_id"], hit["title"], hit["project"], hit["resume_command"])
    assert got == (agent, exp.session_id, exp.title, exp.project, exp.resume)
    assert any(exp.word in item["text"].lower() for item in hit["window"] if item["hit"])
    [hit] = cli(capsys, index_dir, "search", "--json", f"agent:{agent} {exp.word}")["hits"]
    assert (hit["agent"], hit["session_id"]) == (agent, exp.session_id)
    other = next(a for a in AGENTS if a != agent)
    assert cli(capsys, index_dir, "search", "--json", f"agent:{other} {exp.word}")["hits"] == []
    assert [h["agent"] for h in cli(capsys, index_dir, "search", "--json", "--agent", agent, "worker")["hits"]] == [agent]


@pytest.mark.parametrize("agent", AGENTS)
def test_show_reads_the_messages_back(world, capsys, agent):
    index_dir, expects = world
    exp = expects[agent]
    page = cli(capsys, index_dir, "show", exp.session_id, "--json")
    assert page["session"]["agent"] == agent and page["session"]["resume_command"] == exp.resume
    texts = [m["text"] for m in page["messages"] if m["role"] in ("user", "assistant") and m["label"] in ("user", "assistant")]
    assert texts == exp.texts
    assert page["total_messages"] == len(page["messages"]) and page["next_offset"] is None


def make_app(indexed) -> CrabsearchApp:
    """The app on the all-agents index, with the fixed clock."""
    home, index_dir, env, _ = indexed
    return CrabsearchApp(index_dir, env=env, now=NOW, index_on_start=False, cursor_blink=False)


def plain(renderable, width: int = 160) -> str:
    """A result row's prompt as plain text."""
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.file.getvalue()


async def test_app_lists_every_agent_with_its_badge_and_filters(indexed):
    expects = indexed[3]
    app = make_app(indexed)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert sorted(h.session.agent for h in results.hits) == sorted(AGENTS)
        assert [h.session.agent for h in results.hits] == AGENTS[::-1]  # newest first
        for i, hit in enumerate(results.hits):
            agent = hit.session.agent
            assert agent_name(agent) == SOURCES[agent].badge
            first_line = plain(results.get_option_at_index(i).prompt).splitlines()[0]
            assert f" {SOURCES[agent].badge} " in first_line and expects[agent].title[:20] in first_line, first_line
        box = app.screen.query_one("#query")
        for agent in AGENTS:
            box.value = ""
            await settle(pilot)
            box.value = f"agent:{agent}"  # as pasted: the filter, not the typing, is what is checked here
            await settle(pilot)
            assert [h.session.session_id for h in results.hits] == [expects[agent].session_id], agent
        box.value = ""
        await settle(pilot)
        await pilot.press("f3")
        assert isinstance(app.screen, PickerScreen)
        choices = app.screen.query_one("#choices")
        labels = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        assert labels[0].startswith("any")
        assert sorted(labels[1:]) == sorted(f"{SOURCES[a].badge}  (1 session)" for a in AGENTS)
        await pilot.press(*"crabtalk", "enter")
        assert box.value == "agent:crabtalk "
        await settle(pilot)
        assert [h.session.agent for h in app.screen.query_one(ResultList).hits] == ["crabtalk"]

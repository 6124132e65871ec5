"""``branch:NAME``: the sessions run on a git branch, from one registry entry
(``crabsearch.filters``), through the index, the engine, the app's Tab completion, the command
line and MCP.

The branch is the one each reader records: Claude Code's ``gitBranch`` on every line (the
latest, ``sources/claude.py``; ``formats.md`` 1.2), Codex's ``session_meta.git.branch``
(``sources/codex.py``; ``formats.md`` 2.4), Copilot CLI's ``context.branch`` or workspace
``branch`` (``sources/copilot.py``). Matched whole, in any case."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from crabsearch.index import Indexer
from crabsearch.query import parse
from crabsearch.search import Engine
from crabsearch.sources import AGENTS
from crabsearch.tui.filters import completions

from builders import ClaudeSession, CodexSession
from source_checks import run_cli

LOGIN = "11111111-0000-4000-8000-000000000001"
MAIN = "22222222-0000-4000-8000-000000000002"
CODEX = "019a0000-1111-7222-8333-444455556666"
T = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home, session_id=LOGIN, branch="feature/Login", start=T).user(
        "the quokka cache misses on login").assistant("The key omits the tenant.").write()
    ClaudeSession(home, session_id=MAIN, branch="main", start=T.replace(day=2)).user(
        "the quokka cache is too small").assistant("Raise its size.").write()
    CodexSession(home, session_id=CODEX, branch="main", start=T.replace(day=3)).user(
        "quokka cache eviction order").assistant("It is LRU.").write()
    return home


@pytest.fixture
def engine(tmp_path, home):
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return Engine(tmp_path / "index")


def ids(result):
    return [h.session.session_id for h in result.hits]


def test_branch_narrows_a_search_in_any_case(engine):
    assert ids(engine.search("quokka branch:feature/login")) == [LOGIN]
    assert sorted(ids(engine.search("quokka branch:MAIN"))) == sorted([MAIN, CODEX])
    assert ids(engine.search("quokka branch:main agent:codex")) == [CODEX]
    assert ids(engine.search("quokka branch:nope")) == []
    assert ids(engine.search("branch:main")) == [CODEX, MAIN]  # a filter alone: the recent sessions it allows


def test_branch_is_parsed_and_noted_as_the_other_filters(engine):
    assert parse("cache branch:Main").values["branch"] == "main"
    assert parse("cache branch:").notes == [
        "branch: needs a name: the git branch the session ran on (Tab completes it); filter ignored"]
    result = engine.search("quokka branch:main branch:feature/login")
    assert ids(result) == [LOGIN] and result.notes == [
        "branch: given twice; the last one, branch:feature/login, is used"]


def test_tab_completes_the_branches_the_index_holds(engine):
    facets = engine.facets()
    assert facets["branch"] == [("main", 2), ("feature/login", 1)]
    assert engine.facets("agent:codex")["branch"] == [("main", 1)]
    assert completions("cache br", 8, facets)[2] == ["branch:"]
    assert completions("cache branch:fe", 15, facets)[2] == ["branch:feature/login"]


def test_the_command_line_and_mcp_take_it_in_the_query(tmp_path, home, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = run_cli(capsys, "search", "quokka branch:feature/login", "--json",
                             "--index-dir", str(tmp_path / "cli-index"))
    assert code == 0, err
    assert [h["session_id"] for h in json.loads(out)["hits"]] == [LOGIN]

    from crabsearch.mcp_tools import Door, Refresher

    indexer = Indexer(tmp_path / "mcp-index", env={"HOME": str(home)})
    door = Door(Engine(tmp_path / "mcp-index"), indexer, refresher=Refresher(indexer, every=0.0))
    answer = door.search_sessions("quokka branch:main", limit=5, agent="claude")
    assert [h["session_id"] for h in answer.data["hits"]] == [MAIN]


def test_the_help_and_the_readme_list_it():
    from crabsearch.filters import FILTERS, readme_rows
    from crabsearch.tui.panels import KEYS

    assert FILTERS["branch"].help in dict(KEYS)["Query language"]
    assert any(row.startswith("| `branch:main`") for row in readme_rows(AGENTS))

"""One agent's sessions through everything a user reaches them by: ``index``, ``search`` (title,
project, resume command, the ``agent:`` filter), ``show``, ``export`` and the MCP tools, with a
secret masked everywhere and tool input and output not indexed by default. Used by the fixture
tests of the agents whose store holds one session per unit (``tests/test_sources_<agent>.py``)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from mcp import Client

from crabsearch.index import Indexer
from crabsearch.mcp_server import build_server
from crabsearch.mcp_tools import Door, Refresher
from crabsearch.search import Engine
from crabsearch.sources import SOURCES

from all_agents import CLEARED_ENV
from source_checks import cli_ok


@dataclass
class Reach:
    """What must be reached of one indexed session: found by ``word`` with ``title``, ``project``
    and ``resume``; ``texts`` among the texts ``show`` pages back (in order); ``secret`` (a
    string the transcript holds) masked in search, show, export and MCP answers; ``hidden``
    words that only tool input or output hold, found by no search."""

    agent: str
    session_id: str
    word: str
    title: str
    project: str | None
    resume: str | None
    texts: list[str]
    secret: str
    hidden: list[str] = field(default_factory=list)


def clear_agent_env(monkeypatch, home: Path) -> None:
    """``HOME`` set to ``home`` and every variable that would move an agent's default location unset."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(home / "no-config.toml"))
    for var in CLEARED_ENV + [SOURCES[a].env_var for a in SOURCES if SOURCES[a].env_var]:
        monkeypatch.delenv(var, raising=False)


def check_reach(capsys, monkeypatch, home: Path, index_dir: Path, reach: Reach) -> None:
    """Index ``home`` through the CLI and check every way to ``reach`` the session (see :class:`Reach`)."""
    clear_agent_env(monkeypatch, home)
    index = str(index_dir)
    cli_ok(capsys, "--index-dir", index, "index")

    def search(query: str) -> list[dict]:
        return json.loads(cli_ok(capsys, "--index-dir", index, "search", "--json", query))["hits"]

    [hit] = search(reach.word)
    assert (hit["agent"], hit["session_id"], hit["title"], hit["project"], hit["resume_command"]) == (
        reach.agent, reach.session_id, reach.title, reach.project, reach.resume)
    assert [h["session_id"] for h in search(f"agent:{reach.agent} {reach.word}")] == [reach.session_id]
    assert reach.secret not in json.dumps(hit)
    for word in reach.hidden:
        assert search(word) == [], word
    page = json.loads(cli_ok(capsys, "--index-dir", index, "show", reach.session_id, "--json"))
    texts = [m["text"] for m in page["messages"]]
    assert [t for t in texts if t in reach.texts] == reach.texts
    assert reach.secret not in json.dumps(page)
    markdown = cli_ok(capsys, "--index-dir", index, "export", reach.session_id)
    assert all(t in markdown for t in reach.texts) and reach.secret not in markdown
    status = json.loads(cli_ok(capsys, "--index-dir", index, "status", "--json"))
    assert {a["agent"]: a["sessions"] for a in status["agents"]}[reach.agent] >= 1
    check_mcp(home, index_dir, reach)


def check_mcp(home: Path, index_dir: Path, reach: Reach) -> None:
    """``search_sessions`` finds the session by ``reach.word`` (filtered by agent) and
    ``list_messages`` pages its texts back, the secret masked in both."""
    indexer = Indexer(index_dir, env={"HOME": str(home), "CRABSEARCH_CONFIG": str(home / "no-config.toml")})
    door = Door(Engine(index_dir), indexer, tool_output=False, refresher=Refresher(indexer, every=0.0))

    async def calls():
        async with Client(build_server(door), mode="legacy") as client:
            found = await client.call_tool("search_sessions", {"query": reach.word, "agent": reach.agent})
            assert not found.is_error, found.content[0].text
            hits = found.structured_content["hits"]
            assert [h["session_id"] for h in hits] == [reach.session_id]
            listed = await client.call_tool("list_messages", {"session_id": reach.session_id, "limit": 100})
            assert not listed.is_error, listed.content[0].text
            return found, listed

    found, listed = asyncio.run(calls())
    texts = [m["text"] for m in listed.structured_content["messages"]]
    assert [t for t in texts if t in reach.texts] == reach.texts
    for answer in (found, listed):
        assert reach.secret not in json.dumps(answer.structured_content) + answer.content[0].text

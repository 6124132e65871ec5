"""One agent's session through every door crabsearch has: ``index``, ``search``, ``show``,
``export`` and ``status`` on the command line, and the MCP tools through the SDK's own client,
for the fixture tests of the agents (``tests/test_sources_<agent>.py``)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
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
class Seen:
    """What the doors gave: ``status`` (``status --json``), ``page`` (``show --json``), ``export``
    (the Markdown) and ``mcp_texts`` (the texts ``list_messages`` gave)."""

    status: dict
    page: dict
    export: str
    mcp_texts: list[str]

    def agent_status(self, agent: str) -> dict:
        return next(a for a in self.status["agents"] if a["agent"] == agent)

    def unknown_kinds(self, agent: str) -> dict[str, int]:
        return {u["kind"]: u["records"] for u in self.status["unknown_kinds"] if u["agent"] == agent}


def through_every_door(capsys, monkeypatch, tmp_path: Path, env: dict[str, str], *, agent: str, session_id: str,
                       word: str, title: str, texts: list[str], resume: str | None = None,
                       secrets: tuple[str, ...] = (), unindexed: tuple[str, ...] = ()) -> Seen:
    """Index the home of ``env`` (its ``HOME`` and agent variables; every other agent variable
    cleared) and check: ``search word`` finds exactly session ``session_id`` of ``agent`` with
    ``title`` and ``resume``, also under ``agent:``; ``show`` and ``export`` hold ``texts`` in
    order, and so does the MCP ``list_messages`` (its ``search_sessions`` finds the session too);
    each of ``secrets`` is found by no search and shown by no door, and each of ``unindexed`` (a
    tool's input or output: not indexed by default) is found by no search."""
    for name in CLEARED_ENV + [s.env_var for s in SOURCES.values() if s.env_var]:
        monkeypatch.delenv(name, raising=False)
    env = {"CRABSEARCH_CONFIG": str(tmp_path / "no-config.toml"), **env}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    index = str(tmp_path / "index")
    cli_ok(capsys, "--index-dir", index, "index", "--json")

    def search(query: str) -> list[dict]:
        return json.loads(cli_ok(capsys, "--index-dir", index, "search", "--json", query))["hits"]

    for query in (word, f"agent:{agent} {word}"):
        [hit] = search(query)
        assert (hit["agent"], hit["session_id"], hit["title"], hit["resume_command"]) == (
            agent, session_id, title, resume), query
    for text in secrets + unindexed:
        assert search(f'"{text}"') == [], text
    raw_page = cli_ok(capsys, "--index-dir", index, "show", session_id, "--json")
    page = json.loads(raw_page)
    shown = [m["text"] for m in page["messages"]]
    assert [t for t in shown if t in texts] == texts, shown
    export = cli_ok(capsys, "--index-dir", index, "export", session_id)
    assert all(t in export for t in texts), export
    status = json.loads(cli_ok(capsys, "--index-dir", index, "status", "--json"))

    async def mcp() -> list[str]:
        indexer = Indexer(Path(index), env=env)
        door = Door(Engine(Path(index)), indexer, refresher=Refresher(indexer, every=0.0))
        async with Client(build_server(door)) as client:
            found = await client.call_tool("search_sessions", {"query": word, "agent": agent})
            assert not found.is_error, found.content[0].text
            assert [h["session_id"] for h in found.structured_content["hits"]] == [session_id]
            listed = await client.call_tool("list_messages", {"session_id": session_id, "limit": 50})
            assert not listed.is_error, listed.content[0].text
            for text in secrets:
                assert text not in json.dumps(found.structured_content) + json.dumps(listed.structured_content)
                assert text not in found.content[0].text + listed.content[0].text
            return [m["text"] for m in listed.structured_content["messages"]]

    mcp_texts = asyncio.run(mcp())
    assert [t for t in mcp_texts if t in texts] == texts, mcp_texts
    for text in secrets:
        assert text not in raw_page and text not in export, text
    return Seen(status, page, export, mcp_texts)

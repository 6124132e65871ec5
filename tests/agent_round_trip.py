"""One agent's sessions through every door at once: ``crabsearch index``, ``search``, ``show``,
``export`` and ``status`` in process, and the MCP tools ``search_sessions`` (with ``agent``) and
``list_messages`` through the SDK's own client. Used by the fixture tests of agents whose
transcripts are laid out under a test ``HOME``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from crabsearch.index import Indexer
from crabsearch.mcp_tools import Door, Refresher
from crabsearch.search import Engine
from crabsearch.sources import SOURCES

from all_agents import CLEARED_ENV
from source_checks import cli_ok
from test_mcp import call, run


@dataclass
class Trip:
    """What each door said: the CLI's one search hit, ``show --json`` page, exported Markdown and
    ``status --json``; the MCP ``search_sessions`` hits and ``list_messages`` page."""

    hit: dict
    page: dict
    markdown: str
    status: dict
    mcp_hits: list[dict]
    mcp_page: dict


def round_trip(capsys, monkeypatch, index_dir: Path, env: dict[str, str], agent: str, word: str,
               session_id: str) -> Trip:
    """Index the transcripts ``env`` finds (every agent override of the machine cleared first),
    search ``word`` (exactly one session must hold it), show and export ``session_id``, and ask
    the MCP tools the same (``agent`` as the filter)."""
    for name in CLEARED_ENV + [s.env_var for s in SOURCES.values() if s.env_var]:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    index = str(index_dir)
    cli_ok(capsys, "--index-dir", index, "index")
    [hit] = json.loads(cli_ok(capsys, "--index-dir", index, "search", "--json", word))["hits"]
    page = json.loads(cli_ok(capsys, "--index-dir", index, "show", session_id, "--json", "--limit", "200"))
    markdown = cli_ok(capsys, "--index-dir", index, "export", session_id)
    status = json.loads(cli_ok(capsys, "--index-dir", index, "status", "--json"))
    indexer = Indexer(index_dir, env=env)
    door = Door(Engine(index_dir), indexer, refresher=Refresher(indexer))

    async def calls(client, schemas):
        found, _ = await call(client, schemas, "search_sessions", query=word, agent=agent)
        listed, _ = await call(client, schemas, "list_messages", session_id=session_id, limit=50)
        return found["hits"], listed

    mcp_hits, mcp_page = run(door, calls)
    return Trip(hit, page, markdown, status, mcp_hits, mcp_page)

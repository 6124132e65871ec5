"""End to end for one agent's session in its default layout under a test ``HOME``: the CLI's
``index``, ``search``, ``show``, ``export`` and ``status``, and the MCP tools through the SDK's
client (as ``test_mcp.py`` calls them). Shared by the fixture tests of the agents whose sessions
live in SQLite stores."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from crabsearch.index import Indexer
from crabsearch.mcp_tools import Door, Refresher
from crabsearch.redact import redact
from crabsearch.search import Engine
from crabsearch.sources import SOURCES

from all_agents import CLEARED_ENV
from source_checks import cli_ok
from test_mcp import call, run


@contextmanager
def committed(path: Path):
    """A connection to the SQLite file ``path`` (a test's own store), committed when the block ends
    without an error and closed either way."""
    con = sqlite3.connect(path)
    try:
        yield con
        con.commit()
    finally:
        con.close()


@dataclass
class Seen:
    """What one session must look like: ``word`` finds it (and only it); ``texts`` are its user and
    assistant texts in order; ``hidden`` are strings no search, page or export may show (secrets,
    tool output)."""

    agent: str
    session_id: str
    title: str
    project: str | None
    resume: str | None
    word: str
    texts: list[str]
    hidden: list[str] = field(default_factory=list)
    unindexed: list[str] = field(default_factory=list)
    """Words that are in the session but must not be found (tool input and output)."""


def end_to_end(capsys, monkeypatch, tmp_path: Path, home: Path, seen: Seen, env: dict | None = None) -> dict:
    """Index ``home`` and check ``seen`` through every channel; returns the agent's entry of
    ``status --json`` (with ``unknown_kinds`` of the agent added)."""
    for name in CLEARED_ENV + [s.env_var for s in SOURCES.values() if s.env_var]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(home / "no-config.toml"))
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    index = str(tmp_path / "index")

    def cli(*argv):
        out = cli_ok(capsys, "--index-dir", index, *argv)
        return json.loads(out) if "--json" in argv else out

    cli("index")
    [hit] = cli("search", "--json", seen.word)["hits"]
    assert (hit["agent"], hit["session_id"], hit["title"], hit["project"], hit["resume_command"]) == (
        seen.agent, seen.session_id, seen.title, seen.project, seen.resume)
    [hit] = cli("search", "--json", f"agent:{seen.agent} {seen.word}")["hits"]
    for word in seen.hidden + seen.unindexed:
        assert cli("search", "--json", word)["hits"] == [], word
    shown = [redact(t) for t in seen.texts]  # every channel masks secrets
    page = cli("show", seen.session_id, "--json")
    texts = [m["text"] for m in page["messages"] if m["label"] in ("user", "assistant")]
    assert texts == shown
    assert page["session"]["resume_command"] == seen.resume
    markdown = cli("export", seen.session_id)
    assert all(t.splitlines()[0] in markdown for t in shown if t.strip())
    for secret in seen.hidden:
        assert secret not in json.dumps(page) and secret not in markdown, secret

    env_all = {"HOME": str(home), "CRABSEARCH_CONFIG": str(home / "no-config.toml"), **(env or {})}
    indexer = Indexer(Path(index), env=env_all)
    door = Door(Engine(Path(index)), indexer, refresher=Refresher(indexer, every=0.0))

    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query=seen.word, agent=seen.agent)
        [hit] = data["hits"]
        assert (hit["session_id"], hit["agent"], hit["title"]) == (seen.session_id, seen.agent, seen.title)
        data, text = await call(client, schemas, "list_messages", session_id=seen.session_id, limit=50)
        listed = [m["text"] for m in data["messages"] if m["label"] in ("user", "assistant")]
        assert [t[:1000] for t in listed] == [t[:1000] for t in shown]
        for secret in seen.hidden:
            assert secret not in text and secret not in json.dumps(data), secret
        data, _ = await call(client, schemas, "recent_sessions", agent=seen.agent)
        assert seen.session_id in [s["session_id"] for s in data["sessions"]]

    run(door, calls)
    status = cli("status", "--json")
    entry = next(a for a in status["agents"] if a["agent"] == seen.agent)
    entry["unknown_kinds"] = {u["kind"]: u["records"] for u in status["unknown_kinds"] if u["agent"] == seen.agent}
    entry["skipped_files"] = status["skipped_files"]
    return entry

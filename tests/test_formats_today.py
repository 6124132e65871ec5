"""Every agent as it writes today (issue 14): one test per numbered rule, each on a small
transcript in that agent's real shape (built here or by ``builders.py``), each failing without
its rule, and ``search``, ``show`` and ``export`` agreeing through the CLI. The upstream source
each rule follows is cited at its test (and in the reader's docstring)."""

from __future__ import annotations

import json

import pytest

from crabsearch.sources import SOURCES

from builders import ClaudeSession
from source_checks import assert_incremental, assert_read_back, cli_ok


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake ``$HOME`` for the CLI, with every agent's override variable cleared."""
    home = tmp_path / "home"
    home.mkdir()
    for src in SOURCES.values():
        if src.env_var:
            monkeypatch.delenv(src.env_var, raising=False)
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "CRABSEARCH_AIDER_DIRS", "CRABSEARCH_SPECSTORY_DIRS",
                "CRABSEARCH_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    return home


def search(capsys, query: str, *flags: str) -> list[dict]:
    """``crabsearch search QUERY --json``: the hits."""
    return json.loads(cli_ok(capsys, "search", query, "--json", *flags))["hits"]


def show(capsys, session_id: str) -> dict:
    """``crabsearch show SESSION_ID --json --limit 500``."""
    return json.loads(cli_ok(capsys, "show", session_id, "--json", "--limit", "500"))


def export(capsys, session_id: str) -> str:
    """``crabsearch export SESSION_ID`` (Markdown on stdout)."""
    return cli_ok(capsys, "export", session_id)


def agree(capsys, query: str, session_id: str, text: str, role: str = "user") -> dict:
    """``search`` finds ``text`` in ``session_id`` as a ``role`` message, ``show`` lists it with
    that role, and ``export`` writes it; returns the hit."""
    hits = [h for h in search(capsys, query) if h["session_id"] == session_id]
    assert hits, f"{query!r} does not find {session_id}"
    hit = hits[0]
    assert hit["role"] == role and text in next(i["text"] for i in hit["window"] if i["hit"])
    page = show(capsys, session_id)
    assert [m["role"] for m in page["messages"] if text in m["text"]] == [role]
    assert text in export(capsys, session_id)
    return hit


# -- Claude Code ---------------------------------------------------------------------------------


SID = "3c1e5a70-0000-4000-8000-000000000001"


def test_claude_1_queued_prompt_is_a_user_message(home, capsys, tmp_path):
    """Rule 1. A prompt typed while the agent is busy is only an ``attachment`` line
    ``queued_command`` (agentsview issue 401 / PR 406, kenn-io/agentsview
    ``internal/parser/claude.go`` ``extractQueuedCommand``, 538600744d1b); its prompt may be a
    list of blocks. It is searchable, shown and exported as what the user said."""
    s = (ClaudeSession(home, session_id=SID).user("index the quarterly ledger files")
         .tool("Bash", {"command": "ls ledger"}, "q1.csv q2.csv")
         .queued("also skip the archived ocelot ledgers while you are at it")
         .assistant("Skipping the archived ledgers.")
         .queued([{"type": "text", "text": "and sort them by marmoset id"},
                  {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}])
         .assistant("Sorted."))
    path = s.write()
    read = SOURCES["claude"].read(path)
    users = [m.text for m in read.messages if m.role.value == "user"]
    assert users == ["index the quarterly ledger files", "also skip the archived ocelot ledgers while you are at it",
                     "and sort them by marmoset id\n[image]"]
    assert read.session.title == "index the quarterly ledger files"
    assert_read_back(SOURCES["claude"], path, read.messages)
    assert_incremental(SOURCES["claude"], path.read_bytes(), tmp_path / f"{SID}.jsonl")
    agree(capsys, "ocelot", SID, "archived ocelot ledgers")
    agree(capsys, "marmoset", SID, "sort them by marmoset id")


def test_claude_1_queued_prompt_alone_titles_and_is_not_doubled(home):
    """A session whose only prompt was queued takes its title from it; a ``user`` line that
    repeats a queued prompt (drained normally) is not a second message; a bash-mode queued
    command is ``! cmd``; a peer's message (``origin.kind: "peer"``, Claude Code docs,
    cross-session messaging) is not the user's prompt."""
    s = ClaudeSession(home, session_id=SID).queued("rename the wombat module").assistant("Renamed.")
    s.user("rename the wombat module").assistant("Already done.")
    s.queued("git status", mode="bash")
    s.queued("the build is green on my side", origin={"kind": "peer", "from": "ci-bot", "senderTaskId": "t1"})
    read = SOURCES["claude"].read(s.write())
    assert [(m.role.value, m.text) for m in read.messages] == [
        ("user", "rename the wombat module"), ("assistant", "Renamed."), ("assistant", "Already done."),
        ("user", "! git status"), ("system", "message from ci-bot: the build is green on my side")]
    assert read.session.title == "rename the wombat module"


def test_claude_2_rewind_to_the_first_prompt_is_an_abandoned_branch(home, capsys, tmp_path):
    """Rule 2. A rewind to the very first prompt writes the new prompt with ``parentUuid: null``;
    the replaced chain is an abandoned branch, as for a rewind to a later prompt. ``last-prompt``
    names the active leaf (the new branch)."""
    s = (ClaudeSession(home, session_id=SID).user("draft the pangolin migration plan")
         .assistant("Plan drafted with three pangolin phases").user("add a rollback step")
         .assistant("Rollback added").last_prompt("add a rollback step"))
    s.rewind_to(None).user("draft the narwhal migration plan instead").assistant("Narwhal plan drafted")
    s.last_prompt("draft the narwhal migration plan instead")
    path = s.write()
    read = SOURCES["claude"].read(path)
    assert read.session.extra["off_branch"] == [[0, 4]]
    assert_incremental(SOURCES["claude"], path.read_bytes(), tmp_path / f"{SID}.jsonl")
    old = agree(capsys, "pangolin", SID, "pangolin migration plan")
    assert old["branch"] == "abandoned"
    new = agree(capsys, "narwhal", SID, "narwhal migration plan")
    assert new["branch"] == "active"
    page = show(capsys, SID)
    assert [m.get("abandoned", False) for m in page["messages"]] == [True] * 4 + [False] * 2


def test_claude_2_roots_that_are_not_rewinds(home):
    """A compaction's new root keeps the history before it active; 1.0-era files (``parentUuid``
    null on every line, formats.md 1.7) are not rewound at each line."""
    s = ClaudeSession(home, session_id=SID).user("first").assistant("one").compact("summary of it")
    s.user("after compaction").assistant("two")
    assert "off_branch" not in SOURCES["claude"].read(s.write()).session.extra
    old = ClaudeSession(home, session_id=SID).user("first").assistant("one").user("second").assistant("two")
    for d in old.lines:
        d["version"] = "1.0.0"
        d["parentUuid"] = None
    old.lines[1]["parentUuid"] = old.lines[0]["uuid"]
    assert "off_branch" not in SOURCES["claude"].read(old.write()).session.extra

"""GeminiSource against the fixtures in tests/fixtures/home/.gemini (current ``.jsonl`` format), and
legacy whole-file ``.json`` chats, twins and ``$rewindTo`` built in the tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.gemini import GeminiSource
from source_checks import CORPUS, HOME, assert_incremental, assert_read_back, state_size

SRC = GeminiSource()
GEMINI = HOME / ".gemini"
HASH = "524ca5c82fd9c677159d9f24b1b4e8ef9452da4239d82b100f469c43882de3c7"  # sha256("/home/dev/gemproj")
SID = "4c1f9a2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b"
SUB = "7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a"
CHATS = GEMINI / "tmp" / HASH / "chats"
G1_FILE = CHATS / "session-2026-03-20T09-00-4c1f9a2e.jsonl"
SUB_FILE = CHATS / SID / f"{SUB}.jsonl"


def write_jsonl(path: Path, *objs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs), encoding="utf-8")
    return path


def test_registered_and_named():
    assert get_source("gemini").__class__ is GeminiSource
    assert (SRC.agent, SRC.display) == ("gemini", "Gemini CLI")


def test_discover_fixture_home():
    assert sorted(SRC.discover({}, HOME)) == sorted([G1_FILE, SUB_FILE])


def test_gemini_cli_home_env_and_json_twin_dropped(tmp_path):
    base = tmp_path / "alt"
    chats = base / ".gemini" / "tmp" / "abc" / "chats"
    f = write_jsonl(chats / "session-2026-03-01T00-00-abcdef12.jsonl", {"sessionId": "x"})
    write_jsonl(chats / "session-2026-03-01T00-00-abcdef12.json", {"sessionId": "x"})
    write_jsonl(chats / "checkpoint-tag.json", {})
    write_jsonl(base / ".gemini" / "tmp" / "abc" / "logs.json", {})
    assert SRC.roots({"GEMINI_CLI_HOME": str(base)}, HOME) == [base / ".gemini"]
    assert list(SRC.discover({"GEMINI_CLI_HOME": str(base)}, HOME)) == [f]
    assert list(SRC.discover({}, tmp_path)) == []


@pytest.fixture(scope="module")
def g1():
    return SRC.read(G1_FILE)


def test_messages_roles_labels_texts(g1):
    got = [(m.role, m.label, m.text, m.tool_name) for m in g1.messages]
    assert got == [
        (Role.USER, "user", "Why does the quokkaflux limiter reject bursts?", None),
        (Role.ASSISTANT, "thinking", "Locating the limiter\nI should grep for the quokkaflux constant first.", None),
        (Role.ASSISTANT, "tool-call:run_shell_command",
         '{"command": "grep -rn quokkaflux src", "description": "Search"}', "run_shell_command"),
        # g1 re-written with its result: thought and call are not repeated, the result is added
        (Role.TOOL, "tool:run_shell_command", "src/flux.py:12: QUOKKAFLUX_LIMIT = 3", "run_shell_command"),
        (Role.ASSISTANT, "assistant", "The limit is 3 per window; raise QUOKKAFLUX_LIMIT.", None),
        # u2 is rewound ($rewindTo): still yielded (searchable), marked in extra['rewound']
        (Role.USER, "user", "Also show me a picture", None),
        (Role.USER, "user", "Make it configurable 🦘 via env\n[image]", None),
    ]
    assert [m.message_index for m in g1.messages] == list(range(7))
    assert [m.part for m in g1.messages] == [0, 0, 1, 2, 0, 0, 0]
    assert g1.messages[3].timestamp.isoformat() == "2026-03-20T09:00:06+00:00"


def test_session_fields(g1):
    s = g1.session
    assert (s.agent, s.session_id, s.project) == ("gemini", SID, "/home/dev/gemproj")
    assert s.title == s.summary == "Tune quokkaflux burst limiter"
    assert s.parent_session_id is None
    assert s.message_count == 7 and s.anchor_index == 0
    assert s.started.isoformat() == "2026-03-20T09:00:00+00:00"
    assert s.updated.isoformat() == "2026-03-20T09:02:00+00:00"
    assert g1.stats.skipped == 1  # the broken line
    assert s.extra == {"rewound": [[5, 6]]}
    assert SRC.resume_command(s) == f"cd /home/dev/gemproj && gemini --resume {SID}"
    assert state_size(g1.state) < 4096


def test_subagent_title_parent_and_resume():
    r = SRC.read(SUB_FILE)
    s = r.session
    assert (s.session_id, s.parent_session_id, s.project) == (SUB, SID, None)
    assert s.title == "Find wombatgrid usages"
    assert [(m.role, m.text) for m in r.messages] == [(Role.USER, "Find wombatgrid usages"),
                                                       (Role.ASSISTANT, "None found.")]
    assert SRC.resume_command(s) == f"gemini --resume {SUB}"


def test_title_falls_back_to_first_prompt_and_set_snapshot(tmp_path):
    f = write_jsonl(tmp_path / "session-x.jsonl",
                    {"sessionId": "s", "kind": "main"},
                    {"id": "a", "timestamp": "2026-03-01T00:00:00Z", "type": "warning", "content": "w"},
                    {"$set": {"messages": [
                        {"id": "m1", "timestamp": "2026-03-01T00:00:01Z", "type": "user",
                         "content": [{"text": "first   prompt here\nsecond line"}]},
                        {"id": "m2", "timestamp": "2026-03-01T00:00:02Z", "type": "gemini",
                         "content": [{"text": "answer"}]}]}},
                    {"id": "m2", "timestamp": "2026-03-01T00:00:02Z", "type": "gemini",
                     "content": [{"text": "answer"}]})
    r = SRC.read(f)
    assert r.session.title == "first prompt here" and r.session.project is None
    assert [(m.label, m.text, m.part) for m in r.messages] == [
        ("user", "first   prompt here\nsecond line", 0), ("assistant", "answer", 1)]
    assert r.messages[1].timestamp.isoformat() == "2026-03-01T00:00:02+00:00"
    assert_read_back(SRC, f, r.messages)


def test_read_back(g1):
    assert_read_back(SRC, G1_FILE, g1.messages)
    assert_read_back(SRC, SUB_FILE, SRC.read(SUB_FILE).messages)


def test_incremental(tmp_path):
    assert_incremental(SRC, G1_FILE.read_bytes(), tmp_path / "session-inc.jsonl")


def test_corpus_files_read():
    files = sorted((CORPUS / "gemini").glob("*.jsonl")) if (CORPUS / "gemini").is_dir() else []
    if not files:
        pytest.skip("corpus absent")
    for f in files:
        r = SRC.read(f)
        assert r.messages, f
        assert_read_back(SRC, f, r.messages)


def test_end_to_end_index_and_search(tmp_path):
    from crabsearch.index import Indexer
    from crabsearch.search import Engine

    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    index = tmp_path / "index"
    Indexer(index, env={"HOME": str(home)}).refresh()
    hits = Engine(index).search("quokkaflux").hits
    assert [(h.session.agent, h.session.session_id) for h in hits] == [("gemini", SID)]
    assert hits[0].session.title == "Tune quokkaflux burst limiter"
    [sub] = Engine(index).search("wombatgrid agent:gemini").hits
    assert sub.session.session_id == SUB

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
import hashlib
from datetime import timedelta
from datetime import datetime
from all_agents import Expect, iso, prompt_of, reply_of, write_jsonl

SRC = GeminiSource()
GEMINI = HOME / ".gemini"
HASH = "524ca5c82fd9c677159d9f24b1b4e8ef9452da4239d82b100f469c43882de3c7"  # sha256("/home/dev/gemproj")
SID = "4c1f9a2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b"
SUB = "7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a"
CHATS = GEMINI / "tmp" / HASH / "chats"
G1_FILE = CHATS / "session-2026-03-20T09-00-4c1f9a2e.jsonl"
SUB_FILE = CHATS / SID / f"{SUB}.jsonl"


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
    # m2 re-appended after the snapshot: one message, read from its latest line (issue 14, rule 8)
    assert [(m.label, m.text, m.offset, m.part) for m in r.messages] == [
        ("user", "first   prompt here\nsecond line", r.messages[0].offset, 0), ("assistant", "answer", r.messages[1].offset, 0)]
    assert r.messages[1].offset > r.messages[0].offset
    assert r.messages[1].timestamp.isoformat() == "2026-03-01T00:00:02+00:00"
    assert_read_back(SRC, f, r.messages)


def test_read_back(g1):
    assert_read_back(SRC, G1_FILE, g1.messages)
    assert_read_back(SRC, SUB_FILE, SRC.read(SUB_FILE).messages)


def test_every_change_is_a_whole_read(tmp_path):
    """An append can replace or rewind any earlier message (issue 14, rules 7-9), so a grown
    ``.jsonl`` has a new fingerprint (never "appended") and a read from an offset reads it whole."""
    data = G1_FILE.read_bytes()
    path = tmp_path / "session-inc.jsonl"
    whole = SRC.read(G1_FILE)
    cut = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:cut])
    first = SRC.read(path)
    head = SRC.fingerprint(str(path), cut)
    with open(path, "ab") as fh:
        fh.write(data[cut:])
    assert SRC.fingerprint(str(path), cut) != head
    rest = SRC.read(path, first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(m.message_index, m.text) for m in whole.messages]
    assert rest.session.extra == whole.session.extra and rest.session.title == whole.session.title


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


# -- legacy whole-file .json, twins, $rewindTo (built here, in the real formats) -----------------

LEGACY_SID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def legacy_record(sid: str = LEGACY_SID, summary: str | None = None, **extra) -> dict:
    """A ConversationRecord (formats.md 3.2) with thoughts, a tool call, an info notice and a
    drift ``model`` message with ``parts`` and a numeric ``ts``."""
    rec = {"sessionId": sid, "projectHash": HASH, "startTime": "2026-02-01T08:00:00.000Z",
           "lastUpdated": "2026-02-01T08:05:00.000Z", "kind": "main", "directories": ["/home/dev/old proj"],
           "messages": [
               {"id": "m1", "timestamp": "2026-02-01T08:00:01.000Z", "type": "user",
                "content": "Why is the platypusqueue draining slowly?\nsecond line"},
               {"id": "m2", "timestamp": "2026-02-01T08:00:02.000Z", "type": "gemini", "content": "",
                "thoughts": [{"subject": "Plan", "description": "Check the consumer count."}],
                "toolCalls": [{"id": "c1", "name": "read_file", "args": {"path": "/etc/queue.conf"},
                               "status": "success", "resultDisplay": "consumers=1 (display copy)",
                               "result": [{"functionResponse": {"id": "c1", "name": "read_file",
                                                                "response": {"output": "consumers=1 koalaoutput"}}}]}]},
               {"id": "m3", "timestamp": "2026-02-01T08:00:03.000Z", "type": "info", "content": "Request cancelled."},
               {"id": "m4", "ts": 1769932805, "type": "model", "parts": [{"text": "Only one consumer; add more."}]},
           ]}
    if summary:
        rec["summary"] = summary
    rec.update(extra)
    return rec


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def load_back(path: Path, messages) -> list[str]:
    return [SRC.message_text(SRC.load(str(path), m.offset, m.length), m.part, m.label) for m in messages]


def test_legacy_json_session(tmp_path):
    f = write_json(tmp_path / "session-2026-02-01T08-00-9a8b7c6d.json", legacy_record())
    r = SRC.read(f)
    got = [(m.role, m.label, m.text, m.tool_name, m.offset, m.part) for m in r.messages]
    assert got == [
        (Role.USER, "user", "Why is the platypusqueue draining slowly?\nsecond line", None, 0, 0),
        (Role.ASSISTANT, "thinking", "Plan\nCheck the consumer count.", None, 1, 0),
        (Role.ASSISTANT, "tool-call:read_file", '{"path": "/etc/queue.conf"}', "read_file", 1, 1),
        (Role.TOOL, "tool:read_file", "consumers=1 koalaoutput", "read_file", 1, 2),  # result, not the display copy
        (Role.ASSISTANT, "assistant", "Only one consumer; add more.", None, 3, 0),
    ]
    assert [m.is_tool_payload for m in r.messages] == [False, False, True, True, False]
    assert r.messages[1].is_thinking and r.messages[4].timestamp.isoformat() == "2026-02-01T08:00:05+00:00"
    s = r.session
    assert (s.agent, s.session_id, s.project, s.parent_session_id) == ("gemini", LEGACY_SID, "/home/dev/old proj", None)
    assert s.title == "Why is the platypusqueue draining slowly?" and s.summary is None
    assert (s.message_count, s.anchor_index) == (5, 0)
    assert s.started.isoformat() == "2026-02-01T08:00:00+00:00" and s.updated.isoformat() == "2026-02-01T08:05:00+00:00"
    assert r.end_offset == f.stat().st_size and r.stats.skipped == 0 and state_size(r.state) < 4096
    assert SRC.resume_command(s) == f"cd '/home/dev/old proj' && gemini --resume {LEGACY_SID}"
    assert load_back(f, r.messages) == [m.text for m in r.messages]
    # the summary is the title when present
    write_json(f, legacy_record(summary="Speed up platypusqueue consumers"))
    s = SRC.read(f).session
    assert s.title == s.summary == "Speed up platypusqueue consumers"


def test_legacy_json_load_parses_once_and_follows_rewrites(tmp_path, monkeypatch):
    import crabsearch.jsonl as jsonl

    calls = []
    real = jsonl.loads
    monkeypatch.setattr(jsonl, "loads", lambda raw: calls.append(1) or real(raw))
    f = write_json(tmp_path / "session-a.json", legacy_record())
    r = SRC.read(f)
    assert load_back(f, r.messages) == [m.text for m in r.messages]
    assert len(calls) == 1  # read and every load share one parse
    head = SRC.fingerprint(str(f), f.stat().st_size)
    rec = legacy_record()
    rec["messages"][0]["content"] = "Rewritten prompt about the echidnacache"
    write_json(f, rec)
    assert SRC.fingerprint(str(f), 10) != head  # whole-file hash: a rewrite is never "appended"
    assert load_back(f, r.messages[:1]) == ["Rewritten prompt about the echidnacache"]
    assert len(calls) == 2
    again = SRC.read(f, start=123, state={"junk": 1})  # whole files always re-read from 0
    assert [m.message_index for m in again.messages] == list(range(5))
    assert SRC.load(str(f), 99, 1) is None


@pytest.mark.parametrize("body, reason", [
    (b'{"sessionId": "s", "messages": [{"id": "m1", "type": "us', "broken JSON"),
    (b"", "broken JSON"),
    (b"[1, 2]", "not a JSON object"),
])
def test_legacy_json_broken_file_is_skipped_and_counted(tmp_path, body, reason):
    f = tmp_path / "session-broken.json"
    f.write_bytes(body)
    r = SRC.read(f)
    assert r.messages == [] and r.session.message_count == 0 and r.stats.reasons == {reason: 1}


def test_legacy_json_bad_entries_and_missing_file(tmp_path):
    rec = legacy_record()
    rec["messages"][1:1] = [42, "text"]
    f = write_json(tmp_path / "session-b.json", rec)
    r = SRC.read(f)
    assert r.stats.reasons == {"not a JSON object": 2} and r.session.message_count == 5
    assert load_back(f, r.messages) == [m.text for m in r.messages]
    with pytest.raises(OSError):
        SRC.read(tmp_path / "session-gone.json")


def test_json_twins_are_one_session(tmp_path):
    chats = tmp_path / ".gemini" / "tmp" / HASH / "chats"
    # resumed legacy chat: same name, .jsonl holds the whole history -> only the .jsonl
    twin = write_jsonl(chats / "session-2026-02-01T08-00-9a8b7c6d.jsonl",
                       {"sessionId": LEGACY_SID, "kind": "main"},
                       {"id": "m1", "type": "user", "content": "Why is the platypusqueue draining slowly?"})
    old = write_json(chats / "session-2026-02-01T08-00-9a8b7c6d.json", legacy_record())
    # a .json with the same sessionId under another name: read as an empty (unindexed) session
    other = write_json(chats / "session-2026-02-01T09-00-9a8b7c6d.json", legacy_record())
    lone = write_json(chats / "session-2026-01-01T00-00-11112222.json", legacy_record(sid="1111-lone"))
    write_json(chats / "checkpoint-mytag.json", [{"role": "user", "parts": [{"text": "x"}]}])
    assert sorted(SRC.discover({}, tmp_path)) == sorted([twin, other, lone])
    assert old not in list(SRC.discover({}, tmp_path))
    r = SRC.read(other)
    assert r.messages == [] and r.session.message_count == 0 and r.session.title is None
    assert SRC.read(lone).session.message_count == 5


REWIND_LINES = [
    {"sessionId": "rw-1", "kind": "main", "directories": ["/home/dev/rw"], "startTime": "2026-03-01T00:00:00Z"},
    {"id": "u1", "timestamp": "2026-03-01T00:00:01Z", "type": "user", "content": "Draft the numbatparser grammar"},
    {"id": "g1", "timestamp": "2026-03-01T00:00:02Z", "type": "gemini", "content": "Here is a grammar."},
    {"id": "u2", "timestamp": "2026-03-01T00:00:03Z", "type": "user", "content": "Now add bilbyblocks"},
    {"id": "g2", "timestamp": "2026-03-01T00:00:04Z", "type": "gemini", "content": "Added bilbyblocks."},
    {"$rewindTo": "u2"},  # u2 and g2 leave the active history
    {"$rewindTo": "u1"},  # the whole history so far leaves the active branch
    {"id": "u3", "timestamp": "2026-03-01T00:01:00Z", "type": "user", "content": "Start over: a wallabylexer"},
    {"id": "g3", "timestamp": "2026-03-01T00:01:01Z", "type": "gemini", "content": "Lexer first."},
    {"id": "g3", "timestamp": "2026-03-01T00:01:01Z", "type": "gemini", "content": "Lexer first."},  # re-written
    {"$rewindTo": "g3"},
    {"id": "g3", "timestamp": "2026-03-01T00:01:05Z", "type": "gemini", "content": "Lexer first."},  # regenerated
]


def test_rewind_marks_ranges_and_moves_title(tmp_path):
    f = write_jsonl(tmp_path / "session-rw.jsonl", *REWIND_LINES)
    r = SRC.read(f)
    # g3 written three times is one message, its latest version (issue 14, rule 8); rewound and
    # regenerated, it is active again
    assert [(m.message_index, m.text) for m in r.messages] == [
        (0, "Draft the numbatparser grammar"), (1, "Here is a grammar."), (2, "Now add bilbyblocks"),
        (3, "Added bilbyblocks."), (4, "Start over: a wallabylexer"), (5, "Lexer first.")]
    s = r.session
    assert s.extra == {"rewound": [[0, 4]]}  # the abandoned messages stay searchable
    assert (s.title, s.anchor_index, s.message_count) == ("Start over: a wallabylexer", 4, 6)
    assert r.messages[5].timestamp.isoformat() == "2026-03-01T00:01:05+00:00"
    assert_read_back(SRC, f, r.messages)


def test_rewind_of_only_prompt_keeps_it_as_last_resort_title(tmp_path):
    f = write_jsonl(tmp_path / "session-rw2.jsonl", *REWIND_LINES[:3], {"$rewindTo": "u1"})
    s = SRC.read(f).session
    assert s.title == "Draft the numbatparser grammar" and s.extra == {"rewound": [[0, 2]]}


def _corpus_home(tmp_path: Path) -> Path:
    """The corpus' Gemini files laid out as chats of one project under a test HOME."""
    files = sorted((CORPUS / "gemini").glob("*.json*")) if (CORPUS / "gemini").is_dir() else []
    if not files:
        pytest.skip("corpus absent")
    home = tmp_path / "home"
    chats = home / ".gemini" / "tmp" / HASH / "chats"
    chats.mkdir(parents=True)
    for f in files:
        shutil.copy(f, chats / f"session-{f.name}")
    return home


def test_corpus_json_files_read(tmp_path):
    home = _corpus_home(tmp_path)
    for f in SRC.discover({}, home):
        r = SRC.read(f)
        assert r.messages and r.stats.skipped == 0, f
        assert load_back(f, r.messages) == [m.text for m in r.messages]


@pytest.mark.parametrize("phrase, sid", [
    ("Captured multiline output", "session-2025-12-16T23-47-b4f17607"),
    ("Describe this image", "session-agent-sessions_schema_drift"),
    ("Hi", "session-2026-01-16T18-34-3739ef95"),
    ("listed the files", "gemini_stage0_jsonl"),
    ("conformance answer", "reg-gem-set-001"),
])
def test_corpus_phrases_found(tmp_path, phrase, sid):
    from crabsearch.index import Indexer
    from crabsearch.search import Engine

    home = _corpus_home(tmp_path)
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    hits = Engine(tmp_path / "index").search(f'"{phrase}"').hits
    assert [(h.session.agent, h.session.session_id) for h in hits] == [("gemini", sid)]


def test_cli_end_to_end_legacy_json(tmp_path, monkeypatch, capsys):
    from crabsearch.cli import main

    home = tmp_path / "home"
    chats = home / ".gemini" / "tmp" / HASH / "chats"
    write_json(chats / "session-2026-02-01T08-00-9a8b7c6d.json", legacy_record(summary="Speed up platypusqueue"))
    write_jsonl(chats / "session-2026-03-01T00-00-rw.jsonl", *REWIND_LINES)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    index = str(tmp_path / "index")
    assert main(["--index-dir", index, "index"]) == 0
    capsys.readouterr()
    assert main(["--index-dir", index, "search", "--json", "platypusqueue"]) == 0
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert (hit["agent"], hit["session_id"], hit["title"], hit["project"]) == (
        "gemini", LEGACY_SID, "Speed up platypusqueue", "/home/dev/old proj")
    assert hit["resume_command"] == f"cd '/home/dev/old proj' && gemini --resume {LEGACY_SID}"
    assert main(["--index-dir", index, "search", "--json", "koalaoutput"]) == 0  # tool output: not indexed
    assert json.loads(capsys.readouterr().out)["hits"] == []
    assert main(["--index-dir", index, "search", "--json", "bilbyblocks"]) == 0  # rewound: still found
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert hit["session_id"] == "rw-1" and hit["title"] == "Start over: a wallabylexer"
    assert main(["--index-dir", index, "show", LEGACY_SID, "--json"]) == 0
    page = json.loads(capsys.readouterr().out)
    assert [m["text"] for m in page["messages"]][-1] == "Only one consumer; add more."
    assert page["messages"][3]["text"] == "consumers=1 koalaoutput"  # read back via load
    assert main(["--index-dir", index, "status", "--json"]) == 0
    agents = {a["agent"]: a for a in json.loads(capsys.readouterr().out)["agents"]}
    assert agents["gemini"]["sessions"] == 2 and agents["gemini"]["files_found"] == 2


def test_a_set_snapshot_is_split_once_not_once_per_message(tmp_path, monkeypatch):
    """A ``$set`` line of N messages is split into pieces once for all its N message ids (it was
    split once per id: quadratic, 18 s for 2,000 messages); every message keeps its piece."""
    import json

    from crabsearch.sources import gemini

    msgs = [{"id": f"m{i}", "timestamp": "2026-07-22T07:53:15Z", "type": "user" if i % 2 == 0 else "gemini",
             "content": [{"text": f"message {i}"}]} for i in range(50)]
    path = tmp_path / "chats" / "session-big.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"sessionId": "big", "projectHash": "abc", "startTime": "2026-07-22T07:53:15Z",
                                "lastUpdated": "2026-07-22T07:53:15Z", "kind": "main"}) + "\n"
                    + json.dumps({"$set": {"messages": msgs}}) + "\n")
    calls = []
    real = gemini._pieces_owned
    monkeypatch.setattr(gemini, "_pieces_owned", lambda obj: calls.append(1) or real(obj))
    read = gemini.GeminiSource().read(path)
    assert [m.text for m in read.messages] == [f"message {i}" for i in range(50)]
    assert [m.part for m in read.messages] == list(range(50)) and len(calls) == 1


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkagemini`` no other session holds."""
    sid = "4c1f9a2e-7b3d-4e5f-9a8b-1c2d3e4f0103"
    cwd = "/home/dev/gemproj"
    project_hash = hashlib.sha256(cwd.encode()).hexdigest()
    path = write_jsonl(home / ".gemini" / "tmp" / project_hash / "chats" / f"session-{t:%Y-%m-%dT%H-%M}-{sid[:8]}.jsonl",
                  {"sessionId": sid, "projectHash": project_hash, "startTime": iso(t),
                   "lastUpdated": iso(t + timedelta(minutes=1)), "kind": "main", "directories": [cwd],
                   "summary": "Gemini: worker stall"},
                  {"id": "u1", "timestamp": iso(t + timedelta(seconds=5)), "type": "user",
                   "content": [{"text": prompt_of("gemini")}]},
                  {"id": "g1", "timestamp": iso(t + timedelta(minutes=1)), "type": "gemini",
                   "content": reply_of("gemini"), "model": "gemini-2.5-pro"})
    return Expect("gemini", sid, "Gemini: worker stall", cwd, f"cd {cwd} && gemini --resume {sid}", "quokkagemini",
                  [prompt_of("gemini"), reply_of("gemini")], t, files=[path])


SHELL_TEXT = ("I ran the following shell command:\n```sh\nnpm run build -- --name \\`x\\`\n```\n\n"
              "This produced the following result:\n```\nCommand exited with code 2.\n"
              "src/app.ts(3,7): error TS2304: Cannot find name 'Foo'.\nOPENAI_API_KEY=sk-proj-aaaa\n```")


def test_a_shell_mode_command_is_the_persons_text_and_its_output_tool_output(tmp_path):
    """Shell mode (``!``) as Gemini CLI records it (``addShellCommandToGeminiHistory``,
    packages/cli/src/ui/hooks/useExecutionLifecycle.ts at 5411f113ca: one ``user`` message,
    backticks and backslashes escaped): the command is the person's text, never the title; its
    output, stdout and stderr in one stream, a bash-mode tool result (indexed only with tool
    output on). Before, the whole record was one user prompt, output included."""
    f = write_jsonl(tmp_path / "session-x.jsonl",
                    {"sessionId": "s", "kind": "main"},
                    {"id": "m1", "timestamp": "2026-03-01T00:00:01Z", "type": "user",
                     "content": [{"text": "fix the build"}]},
                    {"id": "m2", "timestamp": "2026-03-01T00:00:02Z", "type": "user",
                     "content": [{"text": SHELL_TEXT}]},
                    {"id": "m3", "timestamp": "2026-03-01T00:00:03Z", "type": "gemini",
                     "content": [{"text": "Foo is not imported"}]})
    r = SRC.read(f)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "fix the build"),
        (Role.USER, "user", "! npm run build -- --name `x`"),
        (Role.TOOL, "tool:bash-mode", "Command exited with code 2.\nsrc/app.ts(3,7): error TS2304: Cannot find "
         "name 'Foo'.\nOPENAI_API_KEY=sk-proj-aaaa"),
        (Role.ASSISTANT, "assistant", "Foo is not imported")]
    assert r.session.title == "fix the build"
    assert_read_back(SRC, f, r.messages)

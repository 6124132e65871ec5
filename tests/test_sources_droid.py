"""DroidSource: Factory Droid sessions (``~/.factory/sessions/<slug>/<id>.jsonl``), written here in
the shape Droid's session writer gives them (``@factory/cli-linux-x64`` 0.225.2 ``bin/droid``;
Agent Sessions ``DroidSessionParser.swift`` @ 651e854f)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import UNKNOWN_KEY
from crabsearch.sources.droid import DroidSource

from agent_end_to_end import Reach, check_reach
from all_agents import Expect, iso, prompt_of, reply_of, write_jsonl
from secret_samples import _NPM
from source_checks import assert_incremental, assert_read_back

SRC = DroidSource()
SID = "8e2f1a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
CWD = "/home/dev/bilby app"
SLUG = "-home-dev-bilby app"


def msg(n: int, role: str, content, secs: int, **extra) -> dict:
    return {"type": "message", "id": f"m{n}", "timestamp": f"2026-03-14T09:00:{secs:02d}.000Z",
            "message": {"role": role, "content": content, **extra}, "parentId": f"m{n - 1}" if n > 1 else None}


LINES = [
    {"type": "session_start", "id": SID, "title": "why does the bilbycache miss", "sessionTitle": "Bilbycache misses",
     "owner": "dev", "version": 2, "cwd": CWD},
    msg(1, "user", [{"type": "text", "text": "<system-reminder>\nThe user's OS is linux.\n</system-reminder>\n\n"
                                             "why does the bilbycache miss every time?"}], 1),
    msg(2, "assistant", [{"type": "thinking", "thinking": "Check the cache key.", "signature": "s"},
                         {"type": "text", "text": "Let me read the cache module."},
                         {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "cache.py",
                                                                                        "hint": "kiwiinput"}}], 2),
    msg(3, "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "KEY = time.time()  # kiwioutput"}], 3),
    "{broken line",
    msg(4, "assistant", [{"type": "text", "text": f"The key holds the time; your token {_NPM} is in .npmrc."},
                         {"type": "tool_use", "id": "toolu_2", "name": "Execute", "input": {"command": "pytest"}}], 4),
    msg(5, "user", [{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                     "content": [{"type": "text", "text": "1 failed"}]}], 5),
    {"type": "todo_state", "id": "t1", "timestamp": "2026-03-14T09:00:06.000Z",
     "todos": [{"id": "1", "content": "fix key", "status": "in_progress"}], "messageIndex": 5},
    {"type": "compaction_state", "id": "c1", "timestamp": "2026-03-14T09:00:07.000Z",
     "summaryText": "Found the bilbycache key bug.", "summaryTokens": 20, "summaryKind": "auto", "removedCount": 5},
    msg(6, "user", [{"type": "text", "text": "Continue with the plan."}], 8, visibility="llm_only"),
    {"type": "hologram_state", "id": "h1"},
    msg(7, "user", "use the file's hash instead", 9),
]


def write_session(root: Path, lines=LINES, sid=SID, slug=SLUG) -> Path:
    return write_jsonl(root / ".factory" / "sessions" / slug / f"{sid}.jsonl",
                       *[json.loads(json.dumps(x)) if not isinstance(x, str) else x for x in lines])


def text_of(lines) -> bytes:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()


def test_registered_and_named():
    assert get_source("droid").__class__ is DroidSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("droid", "Factory Droid", "Droid")


def test_messages_roles_labels(tmp_path):
    f = write_session(tmp_path)
    f.write_bytes(text_of(LINES))
    r = SRC.read(f)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.SYSTEM, "context:system-reminder", "<system-reminder>\nThe user's OS is linux.\n</system-reminder>", None),
        (Role.USER, "user", "why does the bilbycache miss every time?", None),
        (Role.ASSISTANT, "thinking", "Check the cache key.", None),
        (Role.ASSISTANT, "assistant", "Let me read the cache module.", None),
        (Role.ASSISTANT, "tool-call:Read", '{"file_path": "cache.py", "hint": "kiwiinput"}', "Read"),
        (Role.TOOL, "tool:Read", "KEY = time.time()  # kiwioutput", "Read"),
        (Role.ASSISTANT, "assistant", f"The key holds the time; your token {_NPM} is in .npmrc.", None),
        (Role.ASSISTANT, "tool-call:Execute", '{"command": "pytest"}', "Execute"),
        (Role.TOOL, "tool:Execute", "1 failed", "Execute"),
        (Role.SUMMARY, "summary", "Found the bilbycache key bug.", None),
        (Role.SYSTEM, "context:llm_only", "Continue with the plan.", None),
        (Role.USER, "user", "use the file's hash instead", None),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state[UNKNOWN_KEY] == {"hologram_state": 1}
    assert r.session.extra["compactions"] == [9] and r.session.summary == "Found the bilbycache key bug."
    assert_read_back(SRC, f, r.messages)


def test_session_fields(tmp_path):
    f = write_session(tmp_path)
    f.write_bytes(text_of(LINES))
    s = SRC.read(f).session
    assert (s.agent, s.session_id, s.title, s.project, s.parent_session_id) == (
        "droid", SID, "Bilbycache misses", CWD, None)
    assert s.started.isoformat() == "2026-03-14T09:00:01+00:00" and s.updated.isoformat() == "2026-03-14T09:00:09+00:00"
    assert (s.message_count, s.anchor_index) == (12, 1)
    assert SRC.resume_command(s) == f"cd '{CWD}' && droid --resume {SID}"


def test_sub_agent_fork_and_fallbacks(tmp_path):
    sub = write_session(tmp_path, [
        {"type": "session_start", "id": "sub-1", "title": "New Session", "version": 2,
         "callingSessionId": SID, "callingToolUseId": "toolu_9", "parent": "p-0"},
        msg(1, "user", [{"type": "text", "text": "# Task Tool Invocation\nfind the cache key"}], 1)], sid="sub-1")
    s = SRC.read(sub).session
    assert (s.parent_session_id, s.extra["forked_from"], s.project) == (SID, "p-0", "/home/dev/bilby app")
    bare = write_session(tmp_path, [msg(1, "user", "hello there", 1)], sid="bare", slug="")
    s = SRC.read(bare).session
    assert (s.session_id, s.title, s.project) == ("bare", "hello there", None)
    assert SRC.resume_command(s) == "droid --resume bare"


def test_incremental(tmp_path):
    path = tmp_path / ".factory" / "sessions" / SLUG / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    assert_incremental(SRC, text_of(LINES), path)


def test_discover_and_override(tmp_path):
    home = tmp_path / "home"
    f = write_session(home)
    flat = write_session(home, [msg(1, "user", "x", 1)], sid="flat", slug="")
    btw = write_session(home, [msg(1, "user", "x", 1)], sid="side", slug="btw")
    (home / ".factory" / "sessions" / SLUG / f"{SID}.settings.json").write_text('{"model": "m"}')
    assert sorted(SRC.discover({}, home)) == sorted([f, flat, btw])
    alt = tmp_path / "alt"
    g = write_session(alt, [msg(1, "user", "x", 1)], sid="alt")
    assert list(SRC.discover({"FACTORY_HOME_OVERRIDE": str(alt)}, home)) == [g]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_reached_through_index_search_show_export_and_mcp(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    write_session(home).write_bytes(text_of(LINES))
    reach = Reach("droid", SID, "bilbycache", "Bilbycache misses", CWD, f"cd '{CWD}' && droid --resume {SID}",
                  ["why does the bilbycache miss every time?", "use the file's hash instead"], _NPM,
                  hidden=["kiwiinput", "kiwioutput"])
    check_reach(capsys, monkeypatch, home, tmp_path / "index", reach)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkadroid`` no other session holds."""
    sid = "8e2f1a3b-4c5d-4e6f-8a9b-00000000a320"
    cwd = "/home/dev/droidsvc"

    def m(n: int, role: str, text: str, secs: int) -> dict:
        return {"type": "message", "id": f"m{n}", "timestamp": iso(t + timedelta(seconds=secs)),
                "message": {"role": role, "content": [{"type": "text", "text": text}]},
                "parentId": f"m{n - 1}" if n > 1 else sid}

    f = write_jsonl(home / ".factory" / "sessions" / "-home-dev-droidsvc" / f"{sid}.jsonl",
                    {"type": "session_start", "id": sid, "title": "Droid: worker stall",
                     "sessionTitle": "Droid: worker stall", "owner": "dev", "version": 2, "cwd": cwd},
                    m(1, "user", prompt_of("droid"), 5), m(2, "assistant", reply_of("droid"), 60))
    return Expect("droid", sid, "Droid: worker stall", cwd, f"cd {cwd} && droid --resume {sid}", "quokkadroid",
                  [prompt_of("droid"), reply_of("droid")], t, files=[f])

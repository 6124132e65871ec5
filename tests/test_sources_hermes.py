"""HermesSource: ``~/.hermes/sessions/<id>.jsonl``, written here in Hermes Agent's transcript
shape (a ``session_meta`` line, then OpenAI chat messages with naive local timestamps), as
NousResearch/hermes-agent ``gateway/run.py`` and ``hermes_state.py`` (00dd69bdbdae) write it and
agentsview ``internal/parser/hermes.go`` (b85eae5a7971) reads it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.hermes import HermesSource

from agent_round_trip import round_trip
from all_agents import Expect, prompt_of, reply_of, write_jsonl
from secret_samples import _GHP
from source_checks import assert_incremental, assert_read_back, cli_ok

SRC = HermesSource()
SID = "20260320_090000_5a3e2ff1"
T0 = datetime(2026, 3, 20, 9, 0, tzinfo=timezone.utc)


def local(t: datetime) -> str:
    """A Hermes timestamp: naive, in local time, microseconds (``datetime.now().isoformat()``)."""
    return t.astimezone().replace(tzinfo=None).isoformat(timespec="microseconds")


def at(secs: int) -> str:
    return local(T0 + timedelta(seconds=secs))


SKILL = ('[SYSTEM: The user has invoked the "deploy-check" skill, indicating they want you to follow its '
         'instructions.]\n\n---\nname: deploy-check\n---\nRun the checks.\n\nThe user has provided the following '
         'instruction alongside the skill invocation: check the snorkelgate deploy\n\n[Runtime note: cwd is /srv]')
LINES = [
    {"role": "session_meta", "tools": [{"type": "function", "function": {"name": "terminal", "parameters": {}}}],
     "model": "anthropic/claude-sonnet-4", "platform": "cli", "timestamp": at(0)},
    {"role": "user", "content": f"why is the snorkelgate build red? my token is {_GHP}", "timestamp": at(5)},
    {"role": "assistant", "content": "", "reasoning": "check the CI log first", "finish_reason": "tool_calls",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "terminal", "arguments": "{\"command\": \"cat ci.log\"}"}}],
     "timestamp": at(8)},
    {"role": "tool", "content": "lockfile mismatch in wobbleframe", "tool_call_id": "call_1", "timestamp": at(9)},
    "{broken line",
    {"role": "assistant", "content": "The lockfile drifted.", "finish_reason": "stop", "timestamp": at(20)},
    {"role": "user", "content": SKILL, "timestamp": at(30)},
    {"role": "user", "content": "[CONTEXT COMPACTION - REFERENCE ONLY] Earlier: fixed the snorkelgate lockfile.",
     "timestamp": at(40)},
    {"role": "telemetry", "content": "x", "timestamp": at(41)},
    {"role": "user", "content": [{"type": "text", "text": "thanks"}, {"type": "image_url", "image_url": {"url": "x"}}],
     "timestamp": at(50)},
]


def data(lines=LINES) -> bytes:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()


def write_session(root: Path, sid: str = SID, lines=LINES) -> Path:
    path = root / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data(lines))
    return path


def test_registered_and_named():
    assert get_source("hermes").__class__ is HermesSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("hermes", "Hermes Agent", "Hermes")


def test_messages_roles_labels(tmp_path):
    f = write_session(tmp_path / ".hermes")
    r = SRC.read(f)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", f"why is the snorkelgate build red? my token is {_GHP}", None),
        (Role.ASSISTANT, "thinking", "check the CI log first", None),
        (Role.ASSISTANT, "tool-call:terminal", '{"command": "cat ci.log"}', "terminal"),
        (Role.TOOL, "tool:terminal", "lockfile mismatch in wobbleframe", "terminal"),
        (Role.ASSISTANT, "assistant", "The lockfile drifted.", None),
        (Role.SYSTEM, "context:skill", SKILL.split("\n\nThe user has provided")[0], None),
        (Role.USER, "user", "check the snorkelgate deploy", None),
        (Role.SUMMARY, "summary", "[CONTEXT COMPACTION - REFERENCE ONLY] Earlier: fixed the snorkelgate lockfile.",
         None),
        (Role.USER, "user", "thanks", None),
    ]
    assert r.stats.skipped == 1 and r.stats.reasons == {"broken JSON": 1}
    assert r.state["unknown_kinds"] == {"telemetry": 1}
    assert r.session.extra["compactions"] == [7]
    assert_read_back(SRC, f, r.messages)


def test_session_fields_and_local_times(tmp_path):
    s = SRC.read(write_session(tmp_path / ".hermes")).session
    assert (s.agent, s.session_id, s.project) == ("hermes", SID, None)
    assert s.title.startswith("why is the snorkelgate build red?")
    assert (s.started, s.updated) == (T0, T0 + timedelta(seconds=50))  # naive local times read as local
    assert SRC.resume_command(s) == f"hermes --resume {SID}"


def test_incremental(tmp_path):
    path = tmp_path / "sessions" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    assert_incremental(SRC, data(), path)


def test_discover_default_profiles_and_env(tmp_path):
    home = tmp_path / "home"
    f = write_session(home / ".hermes")
    g = write_session(home / ".hermes" / "profiles" / "work", sid="20260321_100000_aaaabbbb")
    (home / ".hermes" / "sessions" / "notes.txt").write_text("x")
    assert SRC.roots({}, home) == [home / ".hermes"]
    assert list(SRC.discover({}, home)) == [f, g]
    alt = write_session(tmp_path / "alt", sid="x1")
    assert list(SRC.discover({"HERMES_HOME": str(tmp_path / "alt")}, home)) == [alt]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_index_search_show_export_and_mcp(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    write_session(home / ".hermes")
    trip = round_trip(capsys, monkeypatch, tmp_path / "index", {"HOME": str(home)}, "hermes", "snorkelgate", SID)
    assert (trip.hit["agent"], trip.hit["session_id"], trip.hit["resume_command"]) == (
        "hermes", SID, f"hermes --resume {SID}")
    assert _GHP not in json.dumps(trip.hit) and _GHP not in trip.markdown and _GHP not in json.dumps(trip.mcp_page)
    texts = [m["text"] for m in trip.page["messages"]]
    assert "The lockfile drifted." in texts and '{"command": "cat ci.log"}' in texts
    assert "The lockfile drifted." in trip.markdown
    assert {"agent": "hermes", "kind": "telemetry"}.items() <= trip.status["unknown_kinds"][0].items()
    assert [h["session_id"] for h in trip.mcp_hits] == [SID] and trip.mcp_page["total"] == 9
    cli = trip.status["agents"]
    assert next(a for a in cli if a["agent"] == "hermes")["skipped_lines"] == 1


def test_tool_output_is_not_indexed_by_default(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    write_session(home / ".hermes")
    trip = round_trip(capsys, monkeypatch, tmp_path / "index", {"HOME": str(home)}, "hermes", "lockfile", SID)
    assert trip.hit["session_id"] == SID
    assert json.loads(cli_ok(capsys, "--index-dir", str(tmp_path / "index"), "search", "--json",
                             "wobbleframe"))["hits"] == []


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkahermes`` no other session holds."""
    sid = "20260308_090000_0a0b0c35"
    path = write_jsonl(home / ".hermes" / "sessions" / f"{sid}.jsonl",
                       {"role": "session_meta", "tools": [], "model": "hermes-4", "platform": "cli",
                        "timestamp": local(t)},
                       {"role": "user", "content": prompt_of("hermes"), "timestamp": local(t + timedelta(seconds=5))},
                       {"role": "assistant", "content": reply_of("hermes"), "finish_reason": "stop",
                        "timestamp": local(t + timedelta(seconds=60))})
    return Expect("hermes", sid, prompt_of("hermes"), None, f"hermes --resume {sid}", "quokkahermes",
                  [prompt_of("hermes"), reply_of("hermes")], t, files=[path])

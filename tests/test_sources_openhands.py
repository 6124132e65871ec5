"""OpenHandsSource: OpenHands CLI conversations (``~/.openhands/conversations/<id>/`` with
``base_state.json`` and ``events/event-<n>-<id>.json``), written here as the SDK writes them
(``openhands-sdk`` 1.58.2 ``conversation/event_store.py``, ``conversation/state.py``, ``event/``;
the CLI ``openhands`` 1.16.0 ``openhands_cli/locations.py``)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import UNKNOWN_KEY
from crabsearch.sources.openhands import OpenHandsSource

from agent_end_to_end import Reach, check_reach
from all_agents import Expect, prompt_of, reply_of, write_file
from secret_samples import _XOXB
from source_checks import key

SRC = OpenHandsSource()
CID = "3c5f9e1a2b4d4c6e8f0a1b2c3d4e5f60"
CWD = "/home/dev/possum app"


def local(stamp: str) -> datetime:
    """A naive ISO time (as the SDK writes it) read as the machine's local time."""
    return datetime.fromisoformat(stamp).astimezone(timezone.utc)


def ev(n: int, kind: str, source: str, **fields) -> dict:
    return {"kind": kind, "id": f"0000{n:04d}-aaaa-4bbb-8ccc-dddddddddddd", "timestamp": f"2026-03-15T10:00:{n:02d}.123456",
            "source": source, "parent_id": None, **fields}


def message(n: int, source: str, text: str, **fields) -> dict:
    role = "user" if source == "user" else "assistant"
    return ev(n, "MessageEvent", source, llm_message={
        "role": role, "content": [{"type": "text", "text": text, "cache_prompt": False}], "cache_enabled": False,
        "vision_enabled": False, "function_calling_enabled": True, "tool_calls": None, "reasoning_content": None,
        "thinking_blocks": []}, **{"activated_skills": [], "extended_content": [], "sender": None, **fields})


def action(n: int, call_id: str, tool: str, arguments: dict, thought: str = "", **fields) -> dict:
    fields = {"reasoning_content": None, "thinking_blocks": [], **fields}
    return ev(n, "ActionEvent", "agent", thought=[{"type": "text", "text": thought}] if thought else [],
              action={"kind": "TerminalAction", **arguments}, tool_name=tool, tool_call_id=call_id,
              tool_call={"id": call_id, "name": tool, "arguments": json.dumps(arguments), "origin": "completion"},
              llm_response_id="resp-1", security_risk="LOW", summary=None, **fields)


EVENTS = [
    ev(0, "SystemPromptEvent", "agent", system_prompt={"type": "text", "text": "You are OpenHands agent."}, tools=[]),
    message(1, "user", "why does the possumcron job double fire?"),
    action(2, "toolu_1", "terminal", {"command": "crontab -l # platypusinput"}, "Let me look at the crontab.",
           thinking_blocks=[{"type": "thinking", "thinking": "Two entries maybe.", "signature": "s"}]),
    ev(3, "ObservationEvent", "environment", tool_name="terminal", tool_call_id="toolu_1", action_id="a2",
       observation={"kind": "TerminalObservation", "content": [{"type": "text", "text": "0 0 * * * run.sh platypusoutput"}],
                    "command": "crontab -l", "exit_code": 0, "is_error": False}),
    "{broken event",
    message(5, "agent", f"Two entries; the webhook token {_XOXB} is in the crontab too."),
    action(6, "toolu_2", "file_editor", {"command": "str_replace", "path": "/etc/cron.d/x"}),
    ev(7, "UserRejectObservation", "user", tool_name="file_editor", tool_call_id="toolu_2", action_id="a6",
       rejection_reason="do not touch /etc", rejection_source="user"),
    action(8, "toolu_3", "terminal", {"command": "rm x"}),
    ev(9, "AgentErrorEvent", "agent", tool_name="terminal", tool_call_id="toolu_3", error="Tool timed out"),
    ev(10, "Condensation", "environment", forgotten_event_ids=["a"], summary="Found two possumcron entries.",
       summary_offset=1, llm_response_id="resp-2"),
    ev(11, "ConversationStateUpdateEvent", "environment", key="execution_status", value="running"),
    ev(12, "TeleportEvent", "environment"),
    message(13, "user", "Planner says: check the systemd timer", sender="planner"),
    message(14, "user", "remove the duplicate entry"),
    ev(15, "ConversationErrorEvent", "environment", code="LLMError", detail="rate limited"),
]


def base_state(cwd: str = CWD) -> dict:
    return {"id": "3c5f9e1a-2b4d-4c6e-8f0a-1b2c3d4e5f60", "agent": {"kind": "Agent", "llm": {"model": "claude"}},
            "workspace": {"kind": "LocalWorkspace", "working_dir": cwd}, "persistence_dir": "/x",
            "max_iterations": 500, "stuck_detection": True, "execution_status": "finished", "stats": {}, "tags": {}}


def write_conversation(root: Path, events=EVENTS, cid: str = CID, state: dict | None = None) -> Path:
    d = root / ".openhands" / "conversations" / cid
    shutil.rmtree(d / "events", ignore_errors=True)
    write_file(d / "base_state.json", json.dumps(state or base_state(), indent=2))
    (d / "events").mkdir(parents=True, exist_ok=True)
    for n, e in enumerate(events):
        name = f"event-{n:05d}-{e['id'] if isinstance(e, dict) else 'deadbeef-0000'}.json"
        write_file(d / "events" / name, e if isinstance(e, str) else json.dumps(e, indent=2))
    return d


def test_registered_and_named():
    assert get_source("openhands").__class__ is OpenHandsSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("openhands", "OpenHands CLI", "OpenHands")


def test_messages_roles_labels(tmp_path):
    d = write_conversation(tmp_path)
    r = SRC.read(d)
    assert [(m.role, m.label, m.text, m.tool_name, m.offset) for m in r.messages] == [
        (Role.USER, "user", "why does the possumcron job double fire?", None, 1),
        (Role.ASSISTANT, "thinking", "Two entries maybe.", None, 2),
        (Role.ASSISTANT, "assistant", "Let me look at the crontab.", None, 2),
        (Role.ASSISTANT, "tool-call:terminal", '{"command": "crontab -l # platypusinput"}', "terminal", 2),
        (Role.TOOL, "tool:terminal", "0 0 * * * run.sh platypusoutput", "terminal", 3),
        (Role.ASSISTANT, "assistant", f"Two entries; the webhook token {_XOXB} is in the crontab too.", None, 5),
        (Role.ASSISTANT, "tool-call:file_editor", '{"command": "str_replace", "path": "/etc/cron.d/x"}', "file_editor", 6),
        (Role.TOOL, "tool:file_editor", "[rejected] do not touch /etc", "file_editor", 7),
        (Role.ASSISTANT, "tool-call:terminal", '{"command": "rm x"}', "terminal", 8),
        (Role.TOOL, "tool:terminal", "Tool timed out", "terminal", 9),
        (Role.SUMMARY, "summary", "Found two possumcron entries.", None, 10),
        (Role.SYSTEM, "context:planner", "Planner says: check the systemd timer", None, 13),
        (Role.USER, "user", "remove the duplicate entry", None, 14),
        (Role.SYSTEM, "system", "LLMError: rate limited", None, 15),
    ]
    assert r.stats.reasons == {"broken event": 1} and r.state[UNKNOWN_KEY] == {"TeleportEvent": 1}
    assert r.messages[0].timestamp == local("2026-03-15T10:00:01.123456")
    assert r.session.extra["compactions"] == [10] and r.end_offset == 16
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(d), m.offset, m.length), m.part, m.label) == m.text
    assert SRC.locate(str(d), 3) == (str(d / "events" / f"event-00003-{EVENTS[3]['id']}.json"), 0)


def test_session_fields(tmp_path):
    d = write_conversation(tmp_path)
    s = SRC.read(d).session
    assert (s.agent, s.session_id, s.title, s.project) == ("openhands", CID, "why does the possumcron job double fire?", CWD)
    assert (s.started, s.updated) == (local("2026-03-15T10:00:00.123456"), local("2026-03-15T10:00:15.123456"))
    assert SRC.resume_command(s) == f"cd '{CWD}' && openhands --resume {CID}"
    zoned = write_conversation(tmp_path, [dict(message(0, "user", "hi"), timestamp="2026-03-15T10:00:00+02:00")],
                               cid="zoned", state={"workspace": 7})
    s = SRC.read(zoned).session
    assert s.started == datetime(2026, 3, 15, 8, tzinfo=timezone.utc) and s.project is None
    assert SRC.resume_command(s) == "openhands --resume zoned"


def test_new_events_are_read_alone(tmp_path):
    whole = SRC.read(write_conversation(tmp_path, cid="whole"))
    for cut in range(len(EVENTS) + 1):
        d = write_conversation(tmp_path, EVENTS[:cut], cid="grown")
        first = SRC.read(d)
        size = SRC.stat(str(d))[0]
        state = json.loads(json.dumps(first.state))
        write_conversation(tmp_path, EVENTS, cid="grown")
        assert SRC.fingerprint(str(d), 0) == SRC.fingerprint(str(tmp_path / ".openhands" / "conversations" / "whole"), 0)
        rest = SRC.read(d, first.end_offset, state)
        got = [key(m) for m in first.messages] + [key(m) for m in rest.messages]
        assert got == [key(m) for m in whole.messages], cut
        assert rest.session.to_state() == dict(whole.session.to_state(), path=str(d), session_id="grown"), cut
        assert first.end_offset <= size


def test_a_torn_last_event_is_left_for_the_next_read(tmp_path):
    d = write_conversation(tmp_path, EVENTS[:3] + ['{"kind": "ObservationEvent", "id"'])
    r = SRC.read(d)
    assert r.stats.pending and r.stats.skipped == 0 and r.end_offset == 3 and len(r.messages) == 4
    assert SRC.stat(str(d))[0] == 4


def test_discover_and_overrides(tmp_path):
    home = tmp_path / "home"
    d = write_conversation(home)
    (home / ".openhands" / "conversations" / "empty").mkdir()
    write_file(home / ".openhands" / "agent_settings.json", "{}")
    assert list(SRC.discover({}, home)) == [d]
    alt = tmp_path / "alt"
    e = write_conversation(alt, cid="other")
    assert list(SRC.discover({"OPENHANDS_PERSISTENCE_DIR": str(alt / ".openhands")}, home)) == [e]
    assert list(SRC.discover({"OPENHANDS_CONVERSATIONS_DIR": str(alt / ".openhands" / "conversations"),
                              "OPENHANDS_PERSISTENCE_DIR": str(home)}, home)) == [e]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_reached_through_index_search_show_export_and_mcp(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    write_conversation(home)
    reach = Reach("openhands", CID, "possumcron", "why does the possumcron job double fire?", CWD,
                  f"cd '{CWD}' && openhands --resume {CID}",
                  ["why does the possumcron job double fire?", "remove the duplicate entry"], _XOXB,
                  hidden=["platypusinput", "platypusoutput"])
    check_reach(capsys, monkeypatch, home, tmp_path / "index", reach)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaopenhands`` no other session holds."""
    cid = "3c5f9e1a2b4d4c6e8f0a1b2c0000a340"
    cwd = "/home/dev/openhandssvc"

    def stamp(secs: int) -> str:
        return (t + timedelta(seconds=secs)).astimezone().replace(tzinfo=None).isoformat()

    d = home / ".openhands" / "conversations" / cid
    files = [write_file(d / "base_state.json", json.dumps(base_state(cwd)))]
    for n, (source, text, secs) in enumerate((("user", prompt_of("openhands"), 0), ("agent", reply_of("openhands"), 60))):
        event = dict(message(n, source, text), timestamp=stamp(secs))
        files.append(write_file(d / "events" / f"event-{n:05d}-{event['id']}.json", json.dumps(event)))
    return Expect("openhands", cid, prompt_of("openhands"), cwd, f"cd {cwd} && openhands --resume {cid}",
                  "quokkaopenhands", [prompt_of("openhands"), reply_of("openhands")], t, files=files + [d / "events", d])


def fuzz_units(home: Path) -> list:
    """The reader fuzz matrix's unit: a conversation whose records are its events."""
    from test_reader_fuzz import Unit, _touch

    def write(texts: list[str]) -> str:
        d = home / ".openhands" / "conversations" / "fuzz"
        shutil.rmtree(d, ignore_errors=True)
        write_file(d / "base_state.json", json.dumps(base_state()))
        for n, text in enumerate(texts):
            write_file(d / "events" / f"event-{n:05d}-0000{n:04d}-aaaa.json", text)
        _touch(d)
        return str(d)

    return [Unit("openhands conversation", SRC, [e for e in EVENTS if isinstance(e, dict)], write)]

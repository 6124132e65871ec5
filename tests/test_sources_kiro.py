"""KiroSource: Kiro CLI sessions (``~/.kiro/sessions/cli/<id>.jsonl`` + ``<id>.json``), written here
in the shape of the Kiro CLI 2.5 recordings the peer parsers keep (Irrlicht
``replaydata/agents/kiro-cli/`` and ``kirocli/parser.go`` @ 344d00e3; agentsview ``kiro.go``)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import UNKNOWN_KEY
from crabsearch.sources.kiro import KiroSource

from agent_end_to_end import Reach, check_reach
from all_agents import Expect, iso, prompt_of, reply_of, write_file, write_jsonl
from secret_samples import _STRIPE_LIVE
from source_checks import assert_incremental, assert_read_back

SRC = KiroSource()
SID = "e36d6e16-bf0a-4982-91e1-68e63be0fa60"
CWD = "/home/dev/echidna app"
T0 = 1773478800  # 2026-03-14T09:00:00Z, epoch seconds as Kiro writes them


def line(kind: str, mid: str, content: list, secs: int | None = None, **extra) -> dict:
    data = {"message_id": mid, "content": content, **extra}
    if secs is not None:
        data["meta"] = {"timestamp": T0 + secs}
    return {"version": "v1", "kind": kind, "data": data}


def text(value: str) -> dict:
    return {"kind": "text", "data": value}


LINES = [
    line("Prompt", "p1", [text("why does the echidnasync job hang?")], 1),
    line("AssistantMessage", "a1", [text(""), {"kind": "toolUse", "data": {
        "toolUseId": "tooluse_1", "name": "shell", "input": {"command": "ps aux | grep wallabyinput",
                                                             "__tool_use_purpose": "Look for the job"}}}]),
    line("ToolResults", "r1", [{"kind": "toolResult", "data": {
        "toolUseId": "tooluse_1", "content": [{"kind": "json", "data": {"exit_status": "exit status: 0",
                                                                        "stdout": "wallabyoutput 4242\n",
                                                                        "stderr": ""}}],
        "status": "success"}}], results={"tooluse_1": {"result": {"Success": {"items": []}}}}),
    "{broken line",
    line("AssistantMessage", "a2", [text(f"It waits on a lock; your key {_STRIPE_LIVE} is in the env.")]),
    line("Prompt", "p2", [text("free the lock")], 30),
    line("AssistantMessage", "a3", [{"kind": "toolUse", "data": {"toolUseId": "tooluse_2", "name": "write",
                                                                 "input": {"command": "strReplace"}}}]),
    line("ToolResults", "r2", [{"kind": "toolResult", "data": {"toolUseId": "tooluse_2", "content": [],
                                                               "status": "error"}},
                               {"kind": "hologram", "data": {}}]),
    {"version": "v1", "kind": "Clear"},
    {"version": "v1", "kind": "Teleport", "data": {}},
    line("AssistantMessage", "a4", [text("Freed.")]),
]


def sidecar(**extra) -> dict:
    return {"session_id": SID, "cwd": CWD, "created_at": "2026-03-14T09:00:00.394163Z",
            "updated_at": "2026-03-14T09:01:06.191869Z", "title": "why does the echidnasync job hang?",
            "session_created_reason": "new",
            "session_state": {"version": "v1", "rts_model_state": {"model_info": {"model_id": "auto"}}}, **extra}


def write_session(root: Path, lines=LINES, meta: dict | None = None, sid: str = SID) -> Path:
    d = root / ".kiro" / "sessions" / "cli"
    if meta is not None:
        write_file(d / f"{sid}.json", json.dumps(meta, indent=2))
    return write_file(d / f"{sid}.jsonl", text_of(lines))


def text_of(lines) -> bytes:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()


def test_registered_and_named():
    assert get_source("kiro").__class__ is KiroSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("kiro", "Kiro CLI", "Kiro")


def test_messages_roles_labels(tmp_path):
    f = write_session(tmp_path, meta=sidecar())
    r = SRC.read(f)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", "why does the echidnasync job hang?", None),
        (Role.ASSISTANT, "tool-call:shell", '{"command": "ps aux | grep wallabyinput", '
                                            '"__tool_use_purpose": "Look for the job"}', "shell"),
        (Role.TOOL, "tool:shell", '{"exit_status": "exit status: 0", "stdout": "wallabyoutput 4242\\n", "stderr": ""}',
         "shell"),
        (Role.ASSISTANT, "assistant", f"It waits on a lock; your key {_STRIPE_LIVE} is in the env.", None),
        (Role.USER, "user", "free the lock", None),
        (Role.ASSISTANT, "tool-call:write", '{"command": "strReplace"}', "write"),
        (Role.TOOL, "tool:write", "[error]", "write"),
        (Role.ASSISTANT, "assistant", "Freed.", None),
    ]
    assert r.stats.reasons == {"broken JSON": 1}
    assert r.state[UNKNOWN_KEY] == {"hologram": 1, "Teleport": 1}
    assert r.messages[4].timestamp.isoformat() == "2026-03-14T09:00:30+00:00"
    assert_read_back(SRC, f, r.messages)


def test_session_fields_from_the_sidecar(tmp_path):
    f = write_session(tmp_path, meta=sidecar(title="Echidnasync hang"))
    s = SRC.read(f).session
    assert (s.agent, s.session_id, s.title, s.project) == ("kiro", SID, "Echidnasync hang", CWD)
    assert s.started.isoformat() == "2026-03-14T09:00:00.394163+00:00"
    assert s.updated.isoformat() == "2026-03-14T09:01:06.191869+00:00"
    assert SRC.resume_command(s) == f"cd '{CWD}' && kiro-cli chat --resume-id {SID}"
    bare = write_session(tmp_path, meta=None, sid="no-sidecar")
    s = SRC.read(bare).session
    assert (s.session_id, s.title, s.project) == ("no-sidecar", "why does the echidnasync job hang?", None)
    assert SRC.resume_command(s) == "kiro-cli chat --resume-id no-sidecar"


def test_the_sidecar_is_read_again_when_the_session_grows(tmp_path):
    f = write_session(tmp_path, LINES[:2], meta=sidecar(title="First title"))
    first = SRC.read(f)
    write_session(tmp_path, LINES, meta=sidecar(title="Renamed"))
    rest = SRC.read(f, first.end_offset, json.loads(json.dumps(first.state)))
    assert rest.session.title == "Renamed" and rest.messages[0].message_index == 2


def test_a_checkpoint_rewind_lists_the_replaced_messages(tmp_path):
    one, ans1 = line("Prompt", "p1", [text("say one")], 1), line("AssistantMessage", "a1", [text("one")])
    two, ans2 = line("Prompt", "p2", [text("say two")], 2), line("AssistantMessage", "a2", [text("two")])
    three, ans3 = line("Prompt", "p3", [text("say three")], 9), line("AssistantMessage", "a3", [text("three")])
    f = write_session(tmp_path, [one, ans1, two, ans2, one, ans1, three, ans3], meta=sidecar())
    r = SRC.read(f)
    assert [m.text for m in r.messages] == ["say one", "one", "say two", "two", "say one", "one", "say three", "three"]
    assert r.session.extra["rewound"] == [[0, 4]]


def test_incremental(tmp_path):
    f = write_session(tmp_path, meta=sidecar())
    assert_incremental(SRC, text_of(LINES), f)


def test_discover_and_override(tmp_path):
    home = tmp_path / "home"
    f = write_session(home, meta=sidecar())
    write_file(home / ".kiro" / "sessions" / "cli" / "other.json", "{}")
    write_file(home / ".local" / "share" / "kiro-cli" / "data.sqlite3", b"SQLite format 3\x00")
    assert list(SRC.discover({}, home)) == [f]
    alt = tmp_path / "alt"
    g = write_file(alt / "sessions" / "cli" / "s1.jsonl", "")
    assert list(SRC.discover({"KIRO_HOME": str(alt)}, home)) == [g]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_reached_through_index_search_show_export_and_mcp(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    write_session(home, meta=sidecar(title="Echidnasync hang"))
    reach = Reach("kiro", SID, "echidnasync", "Echidnasync hang", CWD, f"cd '{CWD}' && kiro-cli chat --resume-id {SID}",
                  ["why does the echidnasync job hang?", "free the lock", "Freed."], _STRIPE_LIVE,
                  hidden=["wallabyinput", "wallabyoutput"])
    check_reach(capsys, monkeypatch, home, tmp_path / "index", reach)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkakiro`` no other session holds."""
    sid = "e36d6e16-bf0a-4982-91e1-00000000a330"
    cwd = "/home/dev/kirosvc"
    d = home / ".kiro" / "sessions" / "cli"
    log = write_jsonl(d / f"{sid}.jsonl",
                      {"version": "v1", "kind": "Prompt", "data": {
                          "message_id": "p1", "content": [{"kind": "text", "data": prompt_of("kiro")}],
                          "meta": {"timestamp": int(t.timestamp()) + 5}}},
                      {"version": "v1", "kind": "AssistantMessage", "data": {
                          "message_id": "a1", "content": [{"kind": "text", "data": reply_of("kiro")}]}})
    meta = write_file(d / f"{sid}.json", json.dumps({
        "session_id": sid, "cwd": cwd, "created_at": iso(t), "updated_at": iso(t + timedelta(seconds=60)),
        "title": "Kiro: worker stall", "session_state": {"version": "v1"}}))
    return Expect("kiro", sid, "Kiro: worker stall", cwd, f"cd {cwd} && kiro-cli chat --resume-id {sid}", "quokkakiro",
                  [prompt_of("kiro"), reply_of("kiro")], t, files=[log, meta])

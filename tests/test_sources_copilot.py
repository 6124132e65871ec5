"""CopilotSource: ``session-state/<uuid>/events.jsonl`` (+ ``workspace.yaml``) and legacy flat
``session-state/<id>.jsonl``, written here in Copilot CLI's event format under a temp HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.copilot import CopilotSource
from source_checks import CORPUS, assert_incremental, assert_read_back, cli_ok
from datetime import timedelta
from datetime import datetime
from all_agents import Expect, iso, prompt_of, reply_of, write_file, write_jsonl

SRC = CopilotSource()
SID = "0b7c2d4e-5f60-4a1b-9c8d-7e6f5a4b3c2d"
N = [0]


def ev(kind: str, data: dict, ts: str = "2026-03-20T09:00:00.000Z") -> dict:
    N[0] += 1
    return {"type": kind, "data": data, "id": f"e{N[0]}", "timestamp": ts, "parentId": None}


EVENTS = [
    ev("session.start", {"sessionId": SID, "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.11",
                         "startTime": "2026-03-20T09:00:00.000Z",
                         "context": {"cwd": "/home/dev/co pilot", "gitRoot": "/home/dev/co pilot", "branch": "feat/x",
                                     "repository": "dev/co"}}),
    ev("session.model_change", {"newModel": "claude-sonnet-4.5"}),
    ev("user.message", {"content": "why is the snorkelgate build red?", "transformedContent": "<ctx>why</ctx>",
                        "attachments": []}, "2026-03-20T09:00:05.000Z"),
    ev("assistant.turn_start", {"turnId": "0"}),
    ev("assistant.reasoning", {"reasoningId": "r1", "content": "check the CI log first"}),
    ev("assistant.message", {"messageId": "m1", "content": "Let me look at the CI log.",
                             "toolRequests": [{"toolCallId": "call_1", "name": "bash",
                                               "arguments": {"command": "cat ci.log"}, "type": "function"}]}),
    ev("tool.execution_start", {"toolCallId": "call_1", "toolName": "bash", "arguments": {"command": "cat ci.log"}}),
    ev("tool.execution_complete", {"toolCallId": "call_1", "success": True,
                                   "result": {"content": "GH_TOKEN=ghp_secretsecret failed", "detailedContent": "x"}}),
    "{broken line",
    ev("tool.execution_complete", {"toolCallId": "call_zz", "success": False, "error": {"message": "denied"}}),
    ev("assistant.message", {"messageId": "m2", "content": "The lockfile drifted.", "toolRequests": []}),
    ev("assistant.turn_end", {"turnId": "0"}),
    ev("session.compaction_complete", {"success": True, "summaryContent": "Fixed the snorkelgate lockfile drift."}),
    ev("session.error", {"errorType": "model_call", "message": "rate limited"}),
    ev("future.event", {"x": 1}),
    ev("user.message", {"content": "thanks"}, "2026-03-20T09:10:00.000Z"),
]


def write_session(root: Path, events=EVENTS, sid=SID, workspace: str | None = None) -> Path:
    d = root / "session-state" / sid
    d.mkdir(parents=True, exist_ok=True)
    f = d / "events.jsonl"
    f.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events), encoding="utf-8")
    if workspace is not None:
        (d / "workspace.yaml").write_text(workspace, encoding="utf-8")
    return f


def test_registered_and_named():
    assert get_source("copilot").__class__ is CopilotSource
    assert (SRC.agent, SRC.display) == ("copilot", "Copilot CLI")


def test_messages_roles_labels(tmp_path):
    f = write_session(tmp_path / ".copilot")
    r = SRC.read(f)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", "why is the snorkelgate build red?", None),
        (Role.ASSISTANT, "thinking", "check the CI log first", None),
        (Role.ASSISTANT, "assistant", "Let me look at the CI log.", None),
        (Role.ASSISTANT, "tool-call:bash", '{"command": "cat ci.log"}', "bash"),
        (Role.TOOL, "tool:bash", "GH_TOKEN=ghp_secretsecret failed", "bash"),
        (Role.TOOL, "tool:unknown", "denied", "unknown"),
        (Role.ASSISTANT, "assistant", "The lockfile drifted.", None),
        (Role.SUMMARY, "summary", "Fixed the snorkelgate lockfile drift.", None),
        (Role.SYSTEM, "system", "rate limited", None),
        (Role.USER, "user", "thanks", None),
    ]
    assert r.stats.skipped == 1 and r.stats.reasons == {"broken JSON": 1}
    assert_read_back(SRC, f, r.messages)


def test_session_fields_and_workspace_title(tmp_path):
    f = write_session(tmp_path / ".copilot")
    s = SRC.read(f).session
    assert (s.agent, s.session_id, s.project, s.git_branch) == ("copilot", SID, "/home/dev/co pilot", "feat/x")
    assert s.title == "why is the snorkelgate build red?"  # no workspace.yaml: first user message
    assert s.summary == "Fixed the snorkelgate lockfile drift."
    assert s.started.isoformat() == "2026-03-20T09:00:00+00:00"
    assert s.updated.isoformat() == "2026-03-20T09:10:00+00:00"
    assert (s.message_count, s.anchor_index) == (10, 0)
    assert SRC.resume_command(s) == f"cd '/home/dev/co pilot' && copilot --resume {SID}"
    write_session(tmp_path / ".copilot", workspace=(
        f"id: {SID}\ncwd: /elsewhere\nbranch: main\nsummary: \"Snorkelgate CI: \\\"lockfile\\\" drift\"\n"
        "summary_count: 1\ncreated_at: 2026-03-20T09:00:00.000Z\n"))
    s = SRC.read(f).session
    assert s.title == 'Snorkelgate CI: "lockfile" drift' and s.project == "/home/dev/co pilot"
    write_session(tmp_path / ".copilot", workspace="summary: |-\n  Block title\n  second line\nbranch: x\n")
    assert SRC.read(f).session.title == "Block title\nsecond line"


def test_workspace_only_metadata(tmp_path):
    f = write_session(tmp_path / ".copilot", events=[ev("user.message", {"content": "hi there"})],
                      sid="abc", workspace="cwd: '/w/it''s'\nbranch: dev\n")
    s = SRC.read(f).session
    assert (s.session_id, s.project, s.git_branch, s.title) == ("abc", "/w/it's", "dev", "hi there")


def test_incremental(tmp_path):
    data = "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in EVENTS).encode()
    d = tmp_path / "session-state" / SID
    d.mkdir(parents=True)
    assert_incremental(SRC, data, d / "events.jsonl")


def test_discover_env_and_legacy_flat(tmp_path):
    home = tmp_path / "home"
    f = write_session(home / ".copilot")
    flat = home / ".copilot" / "session-state" / "legacy-1.jsonl"
    flat.write_text(json.dumps(ev("user.message", {"content": "old flat session"})) + "\n")
    (home / ".copilot" / "session-state" / SID / "workspace.yaml").write_text("summary: x\n")
    assert SRC.roots({}, home) == [home / ".copilot"]
    assert sorted(SRC.discover({}, home)) == sorted([f, flat])
    r = SRC.read(flat)
    assert (r.session.session_id, r.session.title) == ("legacy-1", "old flat session")
    alt = tmp_path / "alt"
    g = write_session(alt, sid="other")
    assert SRC.roots({"COPILOT_HOME": str(alt)}, home) == [alt]
    assert list(SRC.discover({"COPILOT_HOME": str(alt)}, home)) == [g]
    xdg = tmp_path / "xdg"
    h = write_session(xdg / ".copilot", sid="x1")
    assert list(SRC.discover({"XDG_CONFIG_HOME": str(xdg)}, home)) == [h, f, flat]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_truncated_file(tmp_path):
    f = write_session(tmp_path / ".copilot")
    data = f.read_bytes()
    f.write_bytes(data[: len(data) - 20])  # cut inside the last line
    r = SRC.read(f)
    assert r.stats.pending and [m.text for m in r.messages][-1] == "rate limited"


def test_corpus_files_read():
    base = CORPUS / "others" / "copilot-cli"
    files = sorted(base.glob("session-state/**/*.jsonl")) if base.is_dir() else []
    if not files:
        pytest.skip("corpus absent")
    for f in files:
        r = SRC.read(f)
        assert r.messages and r.stats.skipped == 0, f
        assert_read_back(SRC, f, r.messages)
    r = SRC.read(base / "session-state" / "aaaabbbb-1111-2222-3333-ccccddddeeee" / "events.jsonl")
    assert (r.session.session_id, r.session.title, r.session.project, r.session.git_branch) == (
        "aaaabbbb-1111-2222-3333-ccccddddeeee", "List the files", "/tmp/project", "main")
    assert [m.label for m in r.messages] == ["user", "tool-call:bash", "tool:bash", "assistant"]


run = cli_ok  # stdout; the exit code must be 0


def test_end_to_end_cli(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    write_session(home / ".copilot", workspace="summary: Snorkelgate CI lockfile\n")
    monkeypatch.setenv("HOME", str(home))
    for var in ("COPILOT_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
                "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    index = str(tmp_path / "index")
    run(capsys, "--index-dir", index, "index")
    [hit] = json.loads(run(capsys, "--index-dir", index, "search", "--json", "snorkelgate"))["hits"]
    assert (hit["agent"], hit["session_id"], hit["title"], hit["project"]) == (
        "copilot", SID, "Snorkelgate CI lockfile", "/home/dev/co pilot")
    assert hit["resume_command"] == f"cd '/home/dev/co pilot' && copilot --resume {SID}"
    assert json.loads(run(capsys, "--index-dir", index, "search", "--json", "ghp_secretsecret"))["hits"] == []
    assert json.loads(run(capsys, "--index-dir", index, "search", "--json", "bash"))["hits"]  # tool names
    status = json.loads(run(capsys, "--index-dir", index, "status", "--json"))
    assert "copilot" in json.dumps(status)
    page = json.loads(run(capsys, "--index-dir", index, "show", SID[:8], "--json"))
    texts = [m["text"] for m in page["messages"]]
    assert "The lockfile drifted." in texts and "{\"command\": \"cat ci.log\"}" in texts  # via load()


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacopilot`` no other session holds."""
    sid = "0b7c2d4e-5f60-4a1b-9c8d-7e6f5a4b0107"
    cwd = "/home/dev/copilotsvc"
    d = home / ".copilot" / "session-state" / sid

    def ev(n: int, kind: str, data: dict, secs: int) -> dict:
        return {"type": kind, "data": data, "id": f"e{n}", "timestamp": iso(t + timedelta(seconds=secs)),
                "parentId": f"e{n - 1}" if n > 1 else None}

    path = write_jsonl(d / "events.jsonl",
                  ev(1, "session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                          "copilotVersion": "1.0.11", "startTime": iso(t),
                                          "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}}, 0),
                  ev(2, "user.message", {"content": prompt_of("copilot"), "attachments": []}, 5),
                  ev(3, "assistant.turn_start", {"turnId": "0"}, 6),
                  ev(4, "assistant.message", {"messageId": "m1", "content": reply_of("copilot"), "toolRequests": []}, 60),
                  ev(5, "assistant.turn_end", {"turnId": "0"}, 61))
    ws = write_file(d / "workspace.yaml", f"id: {sid}\ncwd: {cwd}\nsummary: 'Copilot: worker stall'\n")
    return Expect("copilot", sid, "Copilot: worker stall", cwd, f"cd {cwd} && copilot --resume {sid}",
                  "quokkacopilot", [prompt_of("copilot"), reply_of("copilot")], t, files=[path, ws])

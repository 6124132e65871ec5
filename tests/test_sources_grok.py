"""GrokSource: ``~/.grok/sessions/<encoded cwd>/<id>/chat_history.jsonl`` + ``summary.json``,
written here in Grok Build's shapes: the current ``ConversationItem`` lines (``type``) and the
legacy OpenAI-style lines (``role``), as xai-org/grok-build (19d42e35c07a,
``xai-grok-sampling-types/src/conversation.rs``, ``17-sessions.md``) serializes them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.grok import GrokSource

from agent_round_trip import round_trip
from all_agents import Expect, iso, prompt_of, reply_of, write_file, write_jsonl
from secret_samples import _GHP
from source_checks import assert_incremental, assert_read_back, cli_ok

SRC = GrokSource()
SID = "019f6000-0000-7000-8000-0000000000a1"
CWD = "/home/dev/grok app"
LINES = [
    {"type": "system", "content": "You are Grok"},
    {"type": "user", "content": [{"type": "text", "text": "Follow AGENTS.md"}], "synthetic_reason": "project_instructions"},
    {"type": "user", "content": [{"type": "text", "text": f"why is the snorkelgate build red? token {_GHP}"},
                                 {"type": "image", "url": "data:image/png;base64,AAAA"}], "prompt_index": 0},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "check the CI log first"}]},
    {"type": "backend_tool_call", "kind": {"tool_type": "web_search", "action": {"type": "search", "query": "ci red"},
                                           "id": "ws_1", "status": "completed"}},
    {"type": "assistant", "content": "Reading the log.", "model_id": "grok-4.5",
     "tool_calls": [{"id": "call_1", "name": "run_terminal_cmd", "arguments": "{\"command\":\"cat ci.log\"}"}]},
    {"type": "tool_result", "tool_call_id": "call_1", "content": "lockfile mismatch in wobbleframe"},
    "{broken line",
    {"type": "user", "content": [{"type": "text", "text": "also check the docs"}], "synthetic_reason": "interjection"},
    {"type": "telemetry_blob", "x": 1},
    {"type": "assistant", "content": "The lockfile drifted.", "model_id": "grok-4.5"},
]
LEGACY = [
    {"role": "system", "content": "You are Grok"},
    {"role": "user", "content": "old snorkelgate question"},
    {"role": "assistant", "content": "Reading.", "reasoning_content": "think first", "model_id": "grok-4",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"p\":1}"}}]},
    {"role": "tool", "content": "body", "tool_call_id": "c1"},
    {"role": "assistant", "content": "Done."},
]
SUMMARY = {"info": {"id": SID, "cwd": CWD}, "session_summary": "Snorkelgate CI investigation",
           "created_at": "2026-03-20T09:00:00Z", "updated_at": "2026-03-20T09:30:00Z",
           "last_active_at": "2026-03-20T09:29:00Z", "num_messages": 12, "chat_format_version": 1,
           "head_branch": "fix/ci", "generated_title": "Fix the red snorkelgate build", "agent_name": "grok-build"}


def data(lines) -> bytes:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()


def write_session(root: Path, sid: str = SID, lines=LINES, summary: dict | None = SUMMARY, cwd: str = CWD) -> Path:
    d = root / "sessions" / quote(cwd, safe="") / sid
    d.mkdir(parents=True, exist_ok=True)
    (d / "chat_history.jsonl").write_bytes(data(lines))
    if summary is not None:
        (d / "summary.json").write_text(json.dumps(summary, indent=2))
    return d / "chat_history.jsonl"


def test_registered_and_named():
    assert get_source("grok").__class__ is GrokSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("grok", "Grok Build", "Grok")


def test_current_format(tmp_path):
    f = write_session(tmp_path / ".grok")
    r = SRC.read(f)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.SYSTEM, "context:project_instructions", "Follow AGENTS.md", None),
        (Role.USER, "user", f"why is the snorkelgate build red? token {_GHP}\n[image]", None),
        (Role.ASSISTANT, "thinking", "check the CI log first", None),
        (Role.ASSISTANT, "tool-call:web_search", '{"type": "search", "query": "ci red"}', "web_search"),
        (Role.ASSISTANT, "assistant", "Reading the log.", None),
        (Role.ASSISTANT, "tool-call:run_terminal_cmd", '{"command":"cat ci.log"}', "run_terminal_cmd"),
        (Role.TOOL, "tool:run_terminal_cmd", "lockfile mismatch in wobbleframe", "run_terminal_cmd"),
        (Role.USER, "user", "also check the docs", None),
        (Role.ASSISTANT, "assistant", "The lockfile drifted.", None),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"telemetry_blob": 1}
    assert_read_back(SRC, f, r.messages)
    s = r.session
    assert (s.session_id, s.project, s.git_branch, s.title, s.summary) == (
        SID, CWD, "fix/ci", "Fix the red snorkelgate build", "Snorkelgate CI investigation")
    assert (s.started.isoformat(), s.updated.isoformat()) == ("2026-03-20T09:00:00+00:00", "2026-03-20T09:30:00+00:00")
    assert (s.anchor_index, s.message_count) == (1, 9)
    assert SRC.resume_command(s) == f"cd '{CWD}' && grok --resume {SID}"


def test_legacy_format_and_no_summary(tmp_path):
    f = write_session(tmp_path / ".grok", sid="019f6000-0000-7000-8000-0000000000a2", lines=LEGACY, summary=None)
    r = SRC.read(f)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "old snorkelgate question"),
        (Role.ASSISTANT, "thinking", "think first"),
        (Role.ASSISTANT, "assistant", "Reading."),
        (Role.ASSISTANT, "tool-call:read_file", '{"p":1}'),
        (Role.TOOL, "tool:read_file", "body"),
        (Role.ASSISTANT, "assistant", "Done."),
    ]
    s = r.session
    assert (s.session_id, s.project, s.title) == ("019f6000-0000-7000-8000-0000000000a2", CWD, "old snorkelgate question")
    assert s.updated is not None and not r.state.get("unknown_kinds")  # the file's mtime


def test_a_long_cwd_is_read_from_the_group_cwd_file(tmp_path):
    f = write_session(tmp_path / ".grok", summary=None)
    group = f.parent.parent.rename(f.parent.parent.with_name("very-long-slug-3f2a"))
    (group / ".cwd").write_text("/home/dev/a/very/long/path\n")
    assert SRC.read(group / SID / "chat_history.jsonl").session.project == "/home/dev/a/very/long/path"


def test_incremental(tmp_path):
    f = write_session(tmp_path / ".grok")
    assert_incremental(SRC, data(LINES), f)


def test_discover_and_env(tmp_path):
    home = tmp_path / "home"
    f = write_session(home / ".grok")
    (f.parent / "updates.jsonl").write_text("{}\n")
    assert SRC.roots({}, home) == [home / ".grok"]
    assert list(SRC.discover({}, home)) == [f]
    g = write_session(tmp_path / "alt", sid="x1")
    assert list(SRC.discover({"GROK_HOME": str(tmp_path / "alt")}, home)) == [g]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_index_search_show_export_and_mcp(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    write_session(home / ".grok")
    trip = round_trip(capsys, monkeypatch, tmp_path / "index", {"HOME": str(home)}, "grok", "snorkelgate", SID)
    assert (trip.hit["agent"], trip.hit["session_id"], trip.hit["title"], trip.hit["project"]) == (
        "grok", SID, "Fix the red snorkelgate build", CWD)
    assert trip.hit["resume_command"] == f"cd '{CWD}' && grok --resume {SID}"
    assert _GHP not in json.dumps(trip.hit) and _GHP not in trip.markdown and _GHP not in json.dumps(trip.mcp_page)
    texts = [m["text"] for m in trip.page["messages"]]
    assert "The lockfile drifted." in texts and '{"command":"cat ci.log"}' in texts
    assert "The lockfile drifted." in trip.markdown
    assert [h["session_id"] for h in trip.mcp_hits] == [SID] and trip.mcp_page["total"] == 9
    assert any(k["agent"] == "grok" and k["kind"] == "telemetry_blob" for k in trip.status["unknown_kinds"])
    assert json.loads(cli_ok(capsys, "--index-dir", str(tmp_path / "index"), "search", "--json",
                             "wobbleframe"))["hits"] == []  # tool output: not indexed by default


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkagrok`` no other session holds."""
    sid = "019f6000-0000-7000-8000-000000000036"
    cwd = "/home/dev/groksvc"
    d = home / ".grok" / "sessions" / quote(cwd, safe="") / sid
    path = write_jsonl(d / "chat_history.jsonl",
                       {"type": "system", "content": "You are Grok"},
                       {"type": "user", "content": [{"type": "text", "text": prompt_of("grok")}], "prompt_index": 0},
                       {"type": "assistant", "content": reply_of("grok"), "model_id": "grok-4.5"})
    summary = write_file(d / "summary.json", json.dumps({
        "info": {"id": sid, "cwd": cwd}, "session_summary": "Worker stall after deploy",
        "created_at": iso(t), "updated_at": iso(t + timedelta(seconds=60)), "chat_format_version": 1,
        "generated_title": "Grok: worker stall"}))
    return Expect("grok", sid, "Grok: worker stall", cwd, f"cd {cwd} && grok --resume {sid}", "quokkagrok",
                  [prompt_of("grok"), reply_of("grok")], t, files=[path, summary])

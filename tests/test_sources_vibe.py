"""VibeSource: ``~/.vibe/logs/session/session_<stamp>_<id8>/messages.jsonl`` + ``meta.json``,
written here as Mistral Vibe's ``SessionLogger`` writes them (``LLMMessage`` dumps without
``None`` fields; mistralai/mistral-vibe 2.18.4, ac8f1a09fdfb)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.vibe import VibeSource

from agent_round_trip import round_trip
from all_agents import Expect, prompt_of, reply_of, write_file, write_jsonl
from secret_samples import _GHP
from source_checks import assert_incremental, assert_read_back, cli_ok

SRC = VibeSource()
SID = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
FOLDER = "session_20260320_090000_3fa85f64"
CWD = "/home/dev/vibe app"
COMPACTED = ("You are continuing a trajectory after a context compaction.\n\nHere are some of the most recent "
             "previous user messages, preserved verbatim:\n<previous_user_messages>\nfix snorkelgate\n"
             "</previous_user_messages>\n\nSummary: the snorkelgate lockfile was fixed.")
LINES = [
    {"role": "user", "content": f"why is the snorkelgate build red? token {_GHP}", "injected": False,
     "message_id": "m1"},
    {"role": "assistant", "content": "Reading the CI log.", "injected": False, "reasoning_content": "check CI first",
     "reasoning_message_id": "r1", "message_id": "m2",
     "tool_calls": [{"id": "call_1", "index": 0, "function": {"name": "bash", "arguments": "{\"command\":\"cat ci.log\"}"},
                     "type": "function"}]},
    {"role": "tool", "content": "lockfile mismatch in wobbleframe", "injected": False, "name": "bash",
     "tool_call_id": "call_1"},
    "{broken line",
    {"role": "user", "content": "<hook>format on save ran</hook>", "injected": True, "message_id": "m3"},
    {"role": "assistant", "content": "The lockfile drifted.", "injected": False, "message_id": "m4"},
    {"role": "user", "content": COMPACTED, "injected": True, "message_id": "m5"},
    {"role": "critic", "content": "x"},
    {"role": "user", "content": "thanks", "injected": False, "message_id": "m6"},
]
META = {"session_id": SID, "parent_session_id": None, "start_time": "2026-03-20T09:00:00.000000+00:00",
        "end_time": "2026-03-20T09:30:00.000000+00:00", "git_commit": "abc123", "git_branch": "fix/ci",
        "environment": {"working_directory": CWD}, "username": "dev", "loops": [],
        "title": "Fix the red snorkelgate build", "title_source": "auto", "experiments": None,
        "stats": {"steps": 3}, "total_messages": 8, "tools_available": [], "config": {"active_model": "devstral"},
        "agent_profile": {"name": "default", "overrides": {}}, "system_prompt": {"role": "system", "content": "sys"}}


def data(lines=LINES) -> bytes:
    return "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines).encode()


def write_session(root: Path, folder: str = FOLDER, lines=LINES, meta: dict | None = META) -> Path:
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "messages.jsonl").write_bytes(data(lines))
    if meta is not None:
        (d / "meta.json").write_text(json.dumps(meta, indent=2))
    return d / "messages.jsonl"


def test_registered_and_named():
    assert get_source("vibe").__class__ is VibeSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("vibe", "Mistral Vibe", "Vibe")


def test_messages_roles_labels_and_fields(tmp_path):
    f = write_session(tmp_path / ".vibe" / "logs" / "session")
    r = SRC.read(f)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", f"why is the snorkelgate build red? token {_GHP}", None),
        (Role.ASSISTANT, "thinking", "check CI first", None),
        (Role.ASSISTANT, "assistant", "Reading the CI log.", None),
        (Role.ASSISTANT, "tool-call:bash", '{"command":"cat ci.log"}', "bash"),
        (Role.TOOL, "tool:bash", "lockfile mismatch in wobbleframe", "bash"),
        (Role.SYSTEM, "context:injected", "<hook>format on save ran</hook>", None),
        (Role.ASSISTANT, "assistant", "The lockfile drifted.", None),
        (Role.SUMMARY, "summary", COMPACTED, None),
        (Role.USER, "user", "thanks", None),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"critic": 1}
    assert_read_back(SRC, f, r.messages)
    s = r.session
    assert (s.session_id, s.project, s.git_branch, s.title) == (SID, CWD, "fix/ci", "Fix the red snorkelgate build")
    assert (s.started.isoformat(), s.updated.isoformat()) == ("2026-03-20T09:00:00+00:00", "2026-03-20T09:30:00+00:00")
    assert s.extra["compactions"] == [7] and s.anchor_index == 0
    assert SRC.resume_command(s) == f"cd '{CWD}' && vibe --resume {SID}"


def test_without_meta(tmp_path):
    f = write_session(tmp_path, meta=None)
    s = SRC.read(f).session
    assert (s.session_id, s.project) == (FOLDER, None)
    assert s.title.startswith("why is the snorkelgate build red? token ") and _GHP not in s.title  # masked
    assert s.updated is not None  # the file's mtime


def test_incremental(tmp_path):
    f = write_session(tmp_path)
    assert_incremental(SRC, data(), f)


def test_discover_env_and_save_dir(tmp_path):
    home = tmp_path / "home"
    f = write_session(home / ".vibe" / "logs" / "session")
    (f.parent / "meta.json.tmp").write_text("{}")
    assert SRC.roots({}, home) == [home / ".vibe" / "logs" / "session"]
    assert list(SRC.discover({}, home)) == [f]
    write_file(home / ".vibe" / "config.toml", '[session_logging]\nsave_dir = "~/vibe-logs"\nenabled = true\n')
    g = write_session(home / "vibe-logs", folder="session_20260321_100000_aaaabbbb")
    assert list(SRC.discover({}, home)) == [f, g]
    alt = write_session(tmp_path / "alt" / "logs" / "session", folder="session_x")
    assert list(SRC.discover({"VIBE_HOME": str(tmp_path / "alt")}, home)) == [alt]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_index_search_show_export_and_mcp(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    write_session(home / ".vibe" / "logs" / "session")
    trip = round_trip(capsys, monkeypatch, tmp_path / "index", {"HOME": str(home)}, "vibe", "snorkelgate", SID)
    assert (trip.hit["agent"], trip.hit["session_id"], trip.hit["title"], trip.hit["project"]) == (
        "vibe", SID, "Fix the red snorkelgate build", CWD)
    assert trip.hit["resume_command"] == f"cd '{CWD}' && vibe --resume {SID}"
    assert _GHP not in json.dumps(trip.hit) and _GHP not in trip.markdown and _GHP not in json.dumps(trip.mcp_page)
    texts = [m["text"] for m in trip.page["messages"]]
    assert "The lockfile drifted." in texts and '{"command":"cat ci.log"}' in texts
    assert "The lockfile drifted." in trip.markdown
    assert [h["session_id"] for h in trip.mcp_hits] == [SID] and trip.mcp_page["total"] == 9
    assert any(k["agent"] == "vibe" and k["kind"] == "critic" for k in trip.status["unknown_kinds"])
    assert json.loads(cli_ok(capsys, "--index-dir", str(tmp_path / "index"), "search", "--json",
                             "wobbleframe"))["hits"] == []  # tool output: not indexed by default


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkavibe`` no other session holds."""
    sid = "3fa85f64-5717-4562-b3fc-000000000037"
    cwd = "/home/dev/vibesvc"
    d = home / ".vibe" / "logs" / "session" / f"session_{t:%Y%m%d_%H%M%S}_{sid[:8]}"
    path = write_jsonl(d / "messages.jsonl",
                       {"role": "user", "content": prompt_of("vibe"), "injected": False, "message_id": "m1"},
                       {"role": "assistant", "content": reply_of("vibe"), "injected": False, "message_id": "m2"})
    meta = write_file(d / "meta.json", json.dumps({
        "session_id": sid, "parent_session_id": None, "start_time": t.isoformat(),
        "end_time": (t + timedelta(seconds=60)).isoformat(), "git_commit": None, "git_branch": "main",
        "environment": {"working_directory": cwd}, "username": "dev", "title": "Vibe: worker stall",
        "title_source": "auto", "total_messages": 2}, indent=2))
    return Expect("vibe", sid, "Vibe: worker stall", cwd, f"cd {cwd} && vibe --resume {sid}", "quokkavibe",
                  [prompt_of("vibe"), reply_of("vibe")], t, files=[path, meta])

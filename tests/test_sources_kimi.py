"""KimiSource: Kimi CLI wire logs written here as both generations write them under a temp HOME:
the Python CLI's ``~/.kimi/sessions/<md5 of the work dir>/<id>/wire.jsonl`` (MoonshotAI/kimi-cli
@4a550effdfcb ``wire/file.py``, ``wire/types.py``) and Kimi Code's
``~/.kimi-code/sessions/<key>/<id>/agents/<agent>/wire.jsonl`` (MoonshotAI/kimi-code @d723cc47ee43
``wire-manifest.d.ts``, protocol 1.5)."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.kimi import KimiSource

from agent_doors import through_every_door
from all_agents import Expect, prompt_of, reply_of, write_file
from secret_samples import _SK_PROJ
from source_checks import assert_incremental, assert_read_back
from test_reader_fuzz import Unit, jsonl_unit

SRC = KimiSource()
SID = "3b5c8f2a-9d1e-4c7b-8a6f-2e4d1c0b9a71"
CWD = "/home/dev/kimi shop"
T = datetime(2026, 3, 22, 9, 0, tzinfo=timezone.utc)


def session_dir(home: Path, sid: str = SID, cwd: str = CWD) -> Path:
    """``~/.kimi/sessions/<md5(cwd)>/<sid>``, the work dir listed in ``~/.kimi/kimi.json``."""
    share = home / ".kimi"
    index = share / "kimi.json"
    data = json.loads(index.read_text()) if index.exists() else {"work_dirs": []}
    if not any(wd["path"] == cwd for wd in data["work_dirs"]):
        data["work_dirs"].append({"path": cwd, "kaos": "local", "last_session_id": sid})
    write_file(index, json.dumps(data))
    return share / "sessions" / hashlib.md5(cwd.encode()).hexdigest() / sid


class Wire:
    """A Python CLI wire log: the metadata line, then ``{timestamp, message: {type, payload}}``."""

    def __init__(self, start: datetime = T):
        self.t = start.timestamp()
        self.lines: list = [{"type": "metadata", "protocol_version": "1.4"}]

    def add(self, kind: str, **payload) -> "Wire":
        self.t += 2.5
        self.lines.append({"timestamp": self.t, "message": {"type": kind, "payload": payload}})
        return self

    def write(self, path: Path) -> Path:
        return write_file(path, "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in self.lines))


def legacy_session(home: Path) -> tuple[Path, Path]:
    folder = session_dir(home)
    w = (Wire().add("TurnBegin", user_input=[{"type": "text", "text": "Why does the platypusbilling export time out?"}])
         .add("StepBegin", n=1)
         .add("ContentPart", type="think", think="the query has no index")
         .add("ContentPart", type="text", text="Let me check the query plan.")
         .add("ToolCall", type="function", id="tool_1",
              function={"name": "Shell", "arguments": json.dumps({"command": f"OPENAI_API_KEY={_SK_PROJ} psql"})})
         .add("ToolResult", tool_call_id="tool_1",
              return_value={"is_error": False, "output": "Seq Scan wombatoutput", "message": "", "display": []})
         .add("SubagentEvent", parent_tool_call_id="tool_2", agent_id="a-inline", subagent_type="explore",
              event={"type": "ContentPart", "payload": {"type": "text", "text": "inline subagent finding"}})
         .add("SubagentEvent", parent_tool_call_id="tool_3", agent_id="a-own", subagent_type="coder",
              event={"type": "ContentPart", "payload": {"type": "text", "text": "copied subagent finding"}})
         .add("SteerInput", user_input="also check the cron")
         .add("ContentPart", type="text", text="Add an index on created_at.")
         .add("CompactionBegin").add("CompactionEnd")
         .add("BtwBegin", id="b1", question="what is a seq scan?")
         .add("BtwEnd", id="b1", response="A full table read.")
         .add("StatusUpdate", context_usage=0.2)
         .add("KimiFutureEvent", x=1)
         .add("TurnEnd"))
    w.lines.append("{broken line")
    path = w.write(folder / "wire.jsonl")
    write_file(folder / "context.jsonl", json.dumps({"role": "user", "content": "ignored"}) + "\n")
    write_file(folder / "state.json", json.dumps({"version": 1, "custom_title": "Slow export", "archived": False}))
    sub = folder / "subagents" / "a-own"
    write_file(sub / "meta.json", json.dumps({"agent_id": "a-own", "subagent_type": "coder", "status": "completed",
                                              "description": "write the index", "created_at": T.timestamp()}))
    child = (Wire().add("TurnBegin", user_input="write the index migration")
             .add("ContentPart", type="text", text="copied subagent finding")).write(sub / "wire.jsonl")
    return path, child


def code_session(home: Path) -> Path:
    """A Kimi Code session: ``state.json`` and ``agents/main/wire.jsonl`` of protocol 1.5 records."""
    folder = home / ".kimi-code" / "sessions" / "wd_kimi-shop_0123456789ab" / "session_9f1c"
    write_file(folder / "state.json", json.dumps({"id": "session_9f1c", "version": 2, "title": "Index the orders",
                                                  "titleKind": "generated", "createdAt": 1, "updatedAt": 2,
                                                  "archived": True, "cwd": CWD, "agents": {"main": {"type": "main"}}}))
    ms = int(T.timestamp() * 1000)
    recs = [{"type": "metadata", "protocol_version": "1.5", "created_at": ms},
            {"type": "config.update", "agentId": "main", "modelAlias": "kimi-k2",
             "environmentDisclosure": {"cwd": "/elsewhere", "date": {"disclosed": False}}}]

    def add(kind: str, **fields):
        recs.append({"type": kind, **fields, "time": ms + 1000 * len(recs)})

    def loop(**event):
        add("context.append_loop_event", agentId="main", event=event)

    add("turn.prompt", agentId="main", input=[{"type": "text", "text": "index the narwhalorders table"}],
        origin={"kind": "user"})
    add("context.append_message", agentId="main", message={"role": "user", "content": [
        {"type": "text", "text": "index the narwhalorders table"}], "toolCalls": []})
    loop(type="step.begin", uuid="s1", turnId="1", step=1)
    loop(type="content.part", stepUuid="s1", part={"type": "think", "think": "which columns?"})
    loop(type="tool.call", stepUuid="s1", toolCallId="c1", name="ReadFile", args={"path": "schema.sql"})
    loop(type="tool.result", toolCallId="c1", parentUuid="u1", result={"output": "create table orders", "isError": False})
    loop(type="content.part", stepUuid="s1", part={"type": "text", "text": "Indexed created_at."})
    loop(type="step.end", uuid="s1", finishReason="stop", usage={"output": 5})
    add("turn.ended", agentId="main")
    add("turn.prompt", agentId="main", input=[{"type": "text", "text": "drop it again"}], origin={"kind": "user"})
    loop(type="content.part", stepUuid="s2", part={"type": "text", "text": "Dropped."})
    add("context.undo", agentId="main", count=1)
    add("turn.prompt", agentId="main", input=[{"type": "text", "text": "cron fired"}], origin={"kind": "cron_job"})
    add("context.apply_compaction", summary="orders indexed on created_at", compactedCount=4)
    loop(type="tool.progress", x=1)
    return write_file(folder / "agents" / "main" / "wire.jsonl", "".join(json.dumps(r) + "\n" for r in recs))


def test_registered_and_named():
    assert get_source("kimi").__class__ is KimiSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("kimi", "Kimi CLI", "Kimi")


def test_python_cli_log(tmp_path):
    path, child = legacy_session(tmp_path / "home")
    r = SRC.read(path)
    got = [(m.role, m.label, m.text, m.sidechain) for m in r.messages]
    assert got == [
        (Role.USER, "user", "Why does the platypusbilling export time out?", False),
        (Role.ASSISTANT, "thinking", "the query has no index", False),
        (Role.ASSISTANT, "assistant", "Let me check the query plan.", False),
        (Role.ASSISTANT, "tool-call:Shell", json.dumps({"command": f"OPENAI_API_KEY={_SK_PROJ} psql"}), False),
        (Role.TOOL, "tool:Shell", "Seq Scan wombatoutput", False),
        (Role.ASSISTANT, "assistant", "inline subagent finding", True),
        (Role.USER, "user", "also check the cron", False),
        (Role.ASSISTANT, "assistant", "Add an index on created_at.", False),
        (Role.USER, "user", "what is a seq scan?", False),
        (Role.ASSISTANT, "assistant", "A full table read.", False),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"KimiFutureEvent": 1}
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project, s.archived) == ("kimi", SID, "Slow export", CWD, False)
    assert s.extra["compactions"] == [8]
    assert SRC.resume_command(s) == f"cd '{CWD}' && kimi --session {SID}"
    assert_read_back(SRC, path, r.messages)
    c = SRC.read(child).session
    assert (c.session_id, c.parent_session_id, c.title, c.project, c.extra["agent_type"]) == (
        f"{SID}-a-own", SID, "write the index migration", CWD, "coder")
    assert SRC.resume_command(c) == f"cd '{CWD}' && kimi --session {SID}"


def test_title_without_a_custom_one_and_a_rename(tmp_path):
    path, _ = legacy_session(tmp_path / "home")
    state = path.parent / "state.json"
    state.write_text(json.dumps({"version": 1, "custom_title": None}))
    assert SRC.read(path).session.title == "Why does the platypusbilling export time out?"
    before = SRC.stat(str(path))
    state.write_text(json.dumps({"version": 1, "custom_title": "Renamed"}))
    later = before[1] + 10**9
    os.utime(state, ns=(later, later))
    assert SRC.stat(str(path))[1] == later and SRC.read(path).session.title == "Renamed"


def test_kimi_code_log(tmp_path):
    path = code_session(tmp_path / "home")
    r = SRC.read(path)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "index the narwhalorders table"),
        (Role.ASSISTANT, "thinking", "which columns?"),
        (Role.ASSISTANT, "tool-call:ReadFile", '{"path": "schema.sql"}'),
        (Role.TOOL, "tool:ReadFile", "create table orders"),
        (Role.ASSISTANT, "assistant", "Indexed created_at."),
        (Role.USER, "user", "drop it again"),
        (Role.ASSISTANT, "assistant", "Dropped."),
        (Role.SYSTEM, "cron_job", "cron fired"),
        (Role.SUMMARY, "summary", "orders indexed on created_at"),
    ]
    s = r.session
    assert (s.session_id, s.title, s.project, s.archived) == ("session_9f1c", "Index the orders", CWD, True)
    assert s.extra["off_branch"] == [[5, 7]] and s.extra["compactions"] == [8]
    assert s.summary == "orders indexed on created_at"
    assert r.state["unknown_kinds"] == {"tool.progress": 1}
    assert SRC.resume_command(s) == f"cd '{CWD}' && kimi --session session_9f1c"
    assert_read_back(SRC, path, r.messages)
    (path.parents[2] / "state.json").write_text(json.dumps({"id": "session_9f1c"}))
    assert SRC.read(path).session.project == "/elsewhere"  # config.update's disclosed cwd


def test_discovery_and_roots(tmp_path):
    home = tmp_path / "home"
    path, child = legacy_session(home)
    code = code_session(home)
    assert sorted(SRC.discover({}, home)) == sorted([path, child, code])
    assert SRC.roots({}, home) == [home / ".kimi", home / ".kimi-code"]
    env = {"KIMI_SHARE_DIR": str(tmp_path / "s"), "KIMI_CODE_HOME": str(tmp_path / "c")}
    assert SRC.roots(env, home) == [tmp_path / "s", tmp_path / "c"]
    assert list(SRC.discover(env, home)) == []


def test_incremental(tmp_path):
    path, _ = legacy_session(tmp_path / "home")
    assert_incremental(SRC, path.read_bytes(), path)
    code = code_session(tmp_path / "home")
    assert_incremental(SRC, code.read_bytes(), code)


def test_through_every_door(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    legacy_session(home)
    seen = through_every_door(
        capsys, monkeypatch, tmp_path, {"HOME": str(home)}, agent="kimi", session_id=SID, word="platypusbilling",
        title="Slow export", resume=f"cd '{CWD}' && kimi --session {SID}",
        texts=["Why does the platypusbilling export time out?", "Add an index on created_at."], secrets=(_SK_PROJ,),
        unindexed=("wombatoutput",))
    a = seen.agent_status("kimi")
    assert (a["files_found"], a["sessions"], a["skipped_lines"]) == (2, 2, 1)
    assert seen.unknown_kinds("kimi") == {"KimiFutureEvent": 1}


def fuzz_units(home: Path) -> list[Unit]:
    """The all-agents log (the Python CLI's) and a Kimi Code log, line by line."""
    exp = all_agents_session(home, T)
    return [jsonl_unit("all-agents kimi", SRC, exp.files[0]), jsonl_unit("kimi code", SRC, code_session(home))]


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkakimi`` no other session holds."""
    sid = "3b5c8f2a-9d1e-4c7b-8a6f-2e4d1c0b0240"
    folder = session_dir(home, sid)
    path = (Wire(t).add("TurnBegin", user_input=[{"type": "text", "text": prompt_of("kimi")}])
            .add("StepBegin", n=1).add("ContentPart", type="text", text=reply_of("kimi")).add("TurnEnd")
            .write(folder / "wire.jsonl"))
    state = write_file(folder / "state.json", json.dumps({"version": 1, "custom_title": "Kimi: worker stall"}))
    files = [path, state, home / ".kimi" / "kimi.json"]
    return Expect("kimi", sid, "Kimi: worker stall", CWD, f"cd '{CWD}' && kimi --session {sid}", "quokkakimi",
                  [prompt_of("kimi"), reply_of("kimi")], t, files=files)

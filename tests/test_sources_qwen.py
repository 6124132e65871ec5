"""QwenSource: Qwen Code chat recordings written here as ``chatRecordingService.ts`` (qwen-code
@015346f1d5d7, npm 0.24.4) writes them: ``~/.qwen/projects/<cwd>/chats/<session id>.jsonl`` records
chained by ``parentUuid``, and subagent transcripts, under a temp HOME."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.qwen import QwenSource

from agent_doors import through_every_door
from all_agents import Expect, iso, prompt_of, reply_of, write_file
from secret_samples import _GHP
from source_checks import assert_incremental, assert_read_back

SRC = QwenSource()
SID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
CWD = "/home/dev/qwen shop"
T = datetime(2026, 3, 20, 9, 0, tzinfo=timezone.utc)


def project_dir(home: Path, cwd: str = CWD) -> Path:
    """``~/.qwen/projects/<cwd with every character but [a-zA-Z0-9] as ->`` (``sanitizeCwd``)."""
    return home / ".qwen" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd)


class QwenChat:
    """Records as ``ChatRecordingService.createBaseRecord`` makes them, each child of the last."""

    def __init__(self, sid: str = SID, cwd: str = CWD, start: datetime = T, **extra):
        self.sid, self.cwd, self.t, self.n = sid, cwd, start, 0
        self.records: list = []
        self.last: str | None = None
        self.extra = extra

    def record(self, kind: str, tail: bool = True, **fields) -> str:
        self.n += 1
        self.t += timedelta(seconds=5)
        uuid = f"{self.sid[:8]}-0000-4000-8000-{self.n:012d}"
        provenance = {"user": "real_user", "assistant": "assistant_output", "tool_result": "tool_result"}
        self.records.append({"uuid": uuid, "parentUuid": self.last, "sessionId": self.sid, "timestamp": iso(self.t),
                             "type": kind, "provenance": provenance.get(kind, "system"), "cwd": self.cwd,
                             "version": "0.24.4", "gitBranch": "main", **self.extra, **fields})
        if tail:
            self.last = uuid
        return uuid

    def user(self, text: str, shown: str | None = None, **fields) -> str:
        payload = {"systemPayload": {"displayText": shown, "hookContext": ""}} if shown is not None else {}
        return self.record("user", message={"role": "user", "parts": [{"text": text}]}, **payload, **fields)

    def model(self, *parts: dict) -> str:
        return self.record("assistant", model="qwen3-coder-plus", message={"role": "model", "parts": list(parts)},
                           usageMetadata={"promptTokenCount": 10, "candidatesTokenCount": 5})

    def tool(self, call_id: str, name: str, output: str) -> str:
        return self.record("tool_result", message={"role": "user", "parts": [
            {"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]},
            toolCallResult={"callId": call_id, "status": "success", "resultDisplay": output})

    def system(self, subtype: str, tail: bool = True, **payload) -> str:
        return self.record("system", tail=tail, subtype=subtype, systemPayload=payload)

    def rewind_to(self, uuid: str | None) -> "QwenChat":
        """``rewindRecording``: the tail moves back to a turn's parent, then a ``rewind`` record."""
        self.last = uuid
        self.system("rewind", truncatedCount=2)
        return self

    def write(self, path: Path) -> Path:
        return write_file(path, "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n"
                                        for r in self.records))


def full_session(home: Path) -> tuple[QwenChat, Path]:
    c = QwenChat()
    c.system("session_model", modelId="qwen3-coder-plus", authType="qwen-oauth")
    c.system("ui_telemetry", uiEvent={"event.name": "qwen-code.api_response"})
    first = c.user("Why is the echidnaqueue consumer lagging?\n<file path=\"a.ts\">...</file>",
                   shown="Why is the echidnaqueue consumer lagging? @a.ts")
    c.model({"text": "Check the batch size first.", "thought": True},
            {"text": "Let me look at the consumer."},
            {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "cat .env"}}})
    c.tool("call_1", "run_shell_command", f"GITHUB_TOKEN={_GHP} bilbyoutput")
    c.model({"text": "The batch size is 1; raise it."})
    c.user("(abandoned) try a bigger prefetch")
    c.model({"text": "(abandoned) Prefetch raised."})
    c.rewind_to(c.records[5]["uuid"])  # back to the second prompt's parent
    c.system("slash_command", phase="invocation", rawCommand="/compress")
    c.system("chat_compression", info={"originalTokenCount": 900, "newTokenCount": 200, "compressionStatus": 1},
             compressedHistory=[{"role": "user", "parts": [{"text": "<state_snapshot>consumer batch size raised"
                                                                    "</state_snapshot>"}]},
                                {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]}])
    c.user("and the retries?", subtype="mid_turn_user_message", systemPayload={"displayText": "and the retries?"})
    c.user("Background agent finished", subtype="notification", provenance="system",
           systemPayload={"displayText": "Agent explore-7f3c finished"})
    c.model({"text": "Retries back off exponentially."})
    c.system("custom_title", customTitle="Consumer lag", titleSource="manual")
    c.system("qwen_future_subtype")
    c.records.append("{broken line")
    c.system("custom_title", tail=False, customTitle="Consumer lag", titleSource="manual")  # a re-anchor
    assert first
    return c, c.write(project_dir(home) / "chats" / f"{SID}.jsonl")


def subagent(home: Path) -> Path:
    agent_id = "explore-7f3c"
    folder = project_dir(home) / "subagents" / SID
    write_file(folder / f"agent-{agent_id}.meta.json", json.dumps({
        "agentId": agent_id, "agentType": "explore", "description": "find the consumer", "parentAgentId": None,
        "createdAt": iso(T), "parentSessionId": SID, "status": "completed"}))
    c = QwenChat(agentId=agent_id, agentName="Explore", isSidechain=True)
    c.user("find the queue consumer")
    c.model({"text": "It is in worker.ts."})
    return c.write(folder / f"agent-{agent_id}.jsonl")


def test_registered_and_named():
    assert get_source("qwen").__class__ is QwenSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("qwen", "Qwen Code", "Qwen")


def test_messages_title_and_branch(tmp_path):
    _, path = full_session(tmp_path / "home")
    r = SRC.read(path)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "Why is the echidnaqueue consumer lagging? @a.ts"),
        (Role.ASSISTANT, "thinking", "Check the batch size first."),
        (Role.ASSISTANT, "assistant", "Let me look at the consumer."),
        (Role.ASSISTANT, "tool-call:run_shell_command", '{"command": "cat .env"}'),
        (Role.TOOL, "tool:run_shell_command", f"GITHUB_TOKEN={_GHP} bilbyoutput"),
        (Role.ASSISTANT, "assistant", "The batch size is 1; raise it."),
        (Role.USER, "user", "(abandoned) try a bigger prefetch"),
        (Role.ASSISTANT, "assistant", "(abandoned) Prefetch raised."),
        (Role.USER, "user", "/compress"),
        (Role.SUMMARY, "summary", "<state_snapshot>consumer batch size raised</state_snapshot>"),
        (Role.USER, "user", "and the retries?"),
        (Role.SYSTEM, "notification", "Agent explore-7f3c finished"),
        (Role.ASSISTANT, "assistant", "Retries back off exponentially."),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"qwen_future_subtype": 1}
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project, s.git_branch) == ("qwen", SID, "Consumer lag", CWD, "main")
    assert s.extra["off_branch"] == [[6, 8]] and s.extra["compactions"] == [9]
    assert s.summary == "<state_snapshot>consumer batch size raised</state_snapshot>"
    assert SRC.resume_command(s) == f"cd '{CWD}' && qwen --resume {SID}"
    assert SRC.fork_command(s) == f"cd '{CWD}' && qwen --resume {SID} --fork-session"
    assert_read_back(SRC, path, r.messages)


def test_title_without_a_rename_is_the_first_prompt_as_typed(tmp_path):
    c = QwenChat()
    c.user("expanded <file>...</file>", shown="")  # an empty displayText: the parts' text
    c.user("second", shown="second as typed")
    path = c.write(tmp_path / f"{SID}.jsonl")
    assert SRC.read(path).session.title == "expanded <file>...</file>"


def test_subagents_and_sub_sessions(tmp_path):
    home = tmp_path / "home"
    _, path = full_session(home)
    child = subagent(home)
    write_file(project_dir(home) / "chats" / "notes.jsonl", "{}\n")  # not a session file name
    assert sorted(SRC.discover({}, home)) == sorted([path, child])
    s = SRC.read(child).session
    assert (s.session_id, s.parent_session_id, s.title, s.extra["agent_type"]) == (
        "agent-explore-7f3c", SID, "find the queue consumer", "explore")
    assert SRC.resume_command(s) == f"cd '{CWD}' && qwen --resume {SID}"
    sub = QwenChat("8d0f7780-8536-41ef-855c-f18ed2fa1bf8")
    sub.system("parent_session", parentSessionId=SID)
    sub.user("a sub-session's task")
    assert SRC.read(sub.write(tmp_path / "sub.jsonl")).session.parent_session_id == SID


def test_roots_and_env(tmp_path):
    home = tmp_path / "home"
    assert SRC.roots({}, home) == [home / ".qwen"]
    assert SRC.roots({"QWEN_HOME": str(tmp_path / "q")}, home) == [tmp_path / "q"]
    assert SRC.roots({"QWEN_RUNTIME_DIR": str(tmp_path / "r")}, home) == [tmp_path / "r", home / ".qwen"]
    c = QwenChat()
    c.user("in the runtime dir")
    p = c.write(tmp_path / "r" / "projects" / "-w" / "chats" / f"{SID}.jsonl")
    assert list(SRC.discover({"QWEN_RUNTIME_DIR": str(tmp_path / "r")}, home)) == [p]


def test_incremental(tmp_path):
    _, path = full_session(tmp_path / "home")
    assert_incremental(SRC, path.read_bytes(), path)


def test_through_every_door(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    full_session(home)
    subagent(home)
    seen = through_every_door(
        capsys, monkeypatch, tmp_path, {"HOME": str(home)}, agent="qwen", session_id=SID, word="echidnaqueue",
        title="Consumer lag", resume=f"cd '{CWD}' && qwen --resume {SID}",
        texts=["Why is the echidnaqueue consumer lagging? @a.ts", "Retries back off exponentially."],
        secrets=(_GHP,), unindexed=("bilbyoutput",))
    a = seen.agent_status("qwen")
    assert (a["files_found"], a["sessions"], a["skipped_lines"]) == (2, 2, 1)
    assert seen.unknown_kinds("qwen") == {"qwen_future_subtype": 1}


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaqwen`` no other session holds."""
    sid = "7c9e6679-7425-40de-944b-e07fc1f90230"
    c = QwenChat(sid, start=t)
    c.user(prompt_of("qwen"), shown=prompt_of("qwen"))
    c.model({"text": reply_of("qwen")})
    c.system("custom_title", customTitle="Qwen: worker stall", titleSource="auto")
    path = c.write(project_dir(home) / "chats" / f"{sid}.jsonl")
    return Expect("qwen", sid, "Qwen: worker stall", CWD, f"cd '{CWD}' && qwen --resume {sid}", "quokkaqwen",
                  [prompt_of("qwen"), reply_of("qwen")], t, files=[path])

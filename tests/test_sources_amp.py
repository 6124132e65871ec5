"""AmpSource: Amp threads kept on disk (``~/.local/share/amp/threads/T-<uuid>.json``), written here
in the shape the peer parsers read (agentsview ``internal/parser/amp.go`` @ 53860074 and its
tests, cass ``src/connectors/amp.rs`` @ 6ae73d5f): Amp publishes neither its source nor the format."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.amp import AmpSource
from crabsearch.sources.base import UNKNOWN_KEY

from agent_end_to_end import Reach, check_reach
from all_agents import Expect, iso, ms, prompt_of, reply_of, write_file
from secret_samples import _SK_PROJ

SRC = AmpSource()
TID = "T-019ca26f-4b1e-7a2c-9d3f-5e6a7b8c9d0e"
T0 = 1773392400000  # 2026-03-13T09:00:00Z
CWD = "/home/dev/numbat app"

MESSAGES = [
    {"role": "user", "messageId": 0, "content": [{"type": "text", "text": "why is the numbatqueue slow?"}],
     "meta": {"sentAt": T0 + 1000}},
    {"role": "assistant", "messageId": 1, "content": [
        {"type": "thinking", "thinking": "Profile the consumer first.", "signature": "sig"},
        {"type": "text", "text": "Let me look at the consumer."},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "grep -rn dingoinput src"},
         "complete": True},
        {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"path": "src/q.ts"}, "complete": True}],
     "state": {"type": "complete", "stopReason": "tool_use"},
     "usage": {"model": "claude-sonnet-4-5", "inputTokens": 10, "outputTokens": 5, "timestamp": "2026-03-13T09:00:05Z"}},
    {"role": "user", "messageId": 2, "content": [
        {"type": "tool_result", "toolUseID": "toolu_1", "run": {"status": "done", "result": {
            "output": "src/q.ts:3: dingooutput", "exitCode": 0}}},
        {"type": "tool_result", "toolUseID": "toolu_2", "run": {"status": "error", "error": {"message": "no such file"}}},
        {"type": "hologram", "data": "a block from a newer Amp"}]},
    7,
    {"role": "assistant", "messageId": 4, "content": [
        {"type": "text", "text": f"The consumer polls every second; your key {_SK_PROJ} is in the log."},
        {"type": "tool_use", "id": "toolu_3", "name": "edit_file", "input": {"path": "src/q.ts"}}]},
    {"role": "user", "messageId": 5, "content": [
        {"type": "tool_result", "toolUseID": "toolu_3", "run": {"status": "cancelled"}},
        {"type": "text", "text": "use a blocking pop instead"}], "meta": {"sentAt": T0 + 120_000}},
    {"role": "assistant", "messageId": 6, "content": [
        {"type": "tool_use", "id": "toolu_4", "name": "glob", "input": {"pattern": "*.ts"}}]},
    {"role": "user", "messageId": 7, "content": [
        {"type": "tool_result", "tool_use_id": "toolu_4", "content": [{"type": "text", "text": "q.ts\nw.ts"}]}]},
]


def thread(messages=MESSAGES, **extra) -> dict:
    return {"v": 12, "id": TID, "created": T0, "title": "Numbatqueue latency", "messages": messages,
            "env": {"initial": {"trees": [{"displayName": "numbat app", "uri": "file:///home/dev/numbat%20app",
                                           "repository": {"type": "git", "ref": "refs/heads/main"}}],
                                "platform": {"os": "linux"}}},
            "meta": {"traces": [{"name": "inference", "startTime": "2026-03-13T09:00:01Z",
                                 "endTime": "2026-03-13T09:00:04Z"}]}, **extra}


def write_thread(root: Path, data: dict | str = None, name: str = TID) -> Path:
    body = data if isinstance(data, str) else json.dumps(thread() if data is None else data, indent=2)
    return write_file(root / ".local" / "share" / "amp" / "threads" / f"{name}.json", body)


def test_registered_and_named():
    assert get_source("amp").__class__ is AmpSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("amp", "Amp", "Amp")


def test_messages_roles_labels(tmp_path):
    f = write_thread(tmp_path)
    r = SRC.read(f)
    got = [(m.role, m.label, m.text, m.tool_name, m.offset, m.part) for m in r.messages]
    assert got == [
        (Role.USER, "user", "why is the numbatqueue slow?", None, 0, 0),
        (Role.ASSISTANT, "thinking", "Profile the consumer first.", None, 1, 0),
        (Role.ASSISTANT, "assistant", "Let me look at the consumer.", None, 1, 1),
        (Role.ASSISTANT, "tool-call:Bash", '{"cmd": "grep -rn dingoinput src"}', "Bash", 1, 2),
        (Role.ASSISTANT, "tool-call:Read", '{"path": "src/q.ts"}', "Read", 1, 3),
        (Role.TOOL, "tool:Bash", "src/q.ts:3: dingooutput", "Bash", 2, 0),
        (Role.TOOL, "tool:Read", "no such file", "Read", 2, 1),
        (Role.ASSISTANT, "assistant", f"The consumer polls every second; your key {_SK_PROJ} is in the log.", None, 4, 0),
        (Role.ASSISTANT, "tool-call:edit_file", '{"path": "src/q.ts"}', "edit_file", 4, 1),
        (Role.TOOL, "tool:edit_file", "[cancelled]", "edit_file", 5, 0),
        (Role.USER, "user", "use a blocking pop instead", None, 5, 1),
        (Role.ASSISTANT, "tool-call:glob", '{"pattern": "*.ts"}', "glob", 6, 0),
        (Role.TOOL, "tool:glob", "q.ts\nw.ts", "glob", 7, 0),
    ]
    assert r.stats.reasons == {"not a JSON object": 1} and r.state[UNKNOWN_KEY] == {"hologram": 1}
    assert r.messages[1].timestamp.isoformat() == "2026-03-13T09:00:05+00:00"
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(f), m.offset, m.length), m.part, m.label) == m.text


def test_session_fields(tmp_path):
    s = SRC.read(write_thread(tmp_path)).session
    assert (s.agent, s.session_id, s.title, s.project) == ("amp", TID, "Numbatqueue latency", CWD)
    assert s.started.isoformat() == "2026-03-13T09:00:00+00:00" and s.updated.isoformat() == "2026-03-13T09:02:00+00:00"
    assert SRC.resume_command(s) == f"cd '{CWD}' && amp threads continue {TID}"
    bare = thread(title=None, env=None)
    s = SRC.read(write_thread(tmp_path, bare, "T-other")).session
    assert (s.title, s.project, s.session_id) == ("why is the numbatqueue slow?", None, "T-other")
    assert SRC.resume_command(s) == "amp threads continue T-other"


def test_result_shapes():
    from crabsearch.sources.amp import _result_text

    assert [_result_text(r) for r in ("text", {"content": "file body"}, {"diff": "+x"}, ["a", "b"], [1, 2],
                                      {"exitCode": 1}, 0, False)] == [
        "text", "file body", "+x", "a\nb", "[1, 2]", '{"exitCode": 1}', "0", "false"]


def test_broken_files(tmp_path):
    for body, reason in (("{not json", "broken JSON"), ("[1, 2]", "not a thread")):
        r = SRC.read(write_thread(tmp_path, body))
        assert r.messages == [] and r.stats.reasons == {reason: 1}


def test_discover_and_overrides(tmp_path):
    home = tmp_path / "home"
    f = write_thread(home)
    write_file(home / ".local" / "share" / "amp" / "threads" / "notes.json", "{}")
    write_file(home / ".local" / "share" / "amp" / "history.jsonl", "{}\n")
    ext = home / ".config" / "Code" / "User" / "globalStorage" / "sourcegraph.amp"
    g = write_file(ext / "threads3" / "T-aaaa.json", json.dumps(thread()))
    assert list(SRC.discover({}, home)) == [f, g]
    xdg = tmp_path / "xdg"
    h = write_file(xdg / "amp" / "threads" / "T-bbbb.json", "{}")
    assert list(SRC.discover({"XDG_DATA_HOME": str(xdg)}, home)) == [h, g]
    alt = tmp_path / "alt"
    i = write_file(alt / "threads" / "T-cccc.json", "{}")
    assert list(SRC.discover({"CRABSEARCH_AMP_DIR": str(alt)}, home)) == [i]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_a_rewritten_thread_is_read_again_whole(tmp_path):
    f = write_thread(tmp_path, thread(messages=MESSAGES[:1]))
    before = SRC.fingerprint(str(f), f.stat().st_size)
    write_thread(tmp_path)
    assert SRC.fingerprint(str(f), f.stat().st_size) != before
    assert len(SRC.read(f, 99, {"next_index": 5}).messages) == 13


def test_reached_through_index_search_show_export_and_mcp(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    write_thread(home)
    reach = Reach("amp", TID, "numbatqueue", "Numbatqueue latency", CWD, f"cd '{CWD}' && amp threads continue {TID}",
                  ["why is the numbatqueue slow?", "use a blocking pop instead"], _SK_PROJ,
                  hidden=["dingoinput", "dingooutput"])
    check_reach(capsys, monkeypatch, home, tmp_path / "index", reach)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaamp`` no other session holds."""
    tid = "T-019ca26f-0000-7000-8000-00000000a310"
    cwd = "/home/dev/ampsvc"
    f = write_file(home / ".local" / "share" / "amp" / "threads" / f"{tid}.json", json.dumps({
        "v": 3, "id": tid, "created": ms(t), "title": "Amp: worker stall",
        "env": {"initial": {"trees": [{"displayName": "ampsvc", "uri": f"file://{cwd}"}]}},
        "messages": [
            {"role": "user", "messageId": 0, "content": [{"type": "text", "text": prompt_of("amp")}],
             "meta": {"sentAt": ms(t + timedelta(seconds=5))}},
            {"role": "assistant", "messageId": 1, "content": [{"type": "text", "text": reply_of("amp")}],
             "state": {"type": "complete", "stopReason": "end_turn"},
             "usage": {"model": "claude-sonnet-4-5", "timestamp": iso(t + timedelta(seconds=60))}}]}))
    return Expect("amp", tid, "Amp: worker stall", cwd, f"cd {cwd} && amp threads continue {tid}", "quokkaamp",
                  [prompt_of("amp"), reply_of("amp")], t, files=[f])


def fuzz_units(home: Path) -> list:
    """The reader fuzz matrix's unit: a thread whose records are its messages."""
    from test_reader_fuzz import Unit, _touch

    path = home / ".local" / "share" / "amp" / "threads" / f"{TID}.json"

    def write(texts: list[str]) -> str:
        head = json.dumps(thread(messages=[]))
        write_file(path, head.replace('"messages": []', '"messages": [' + ",".join(texts) + "]"))
        _touch(path)
        return str(path)

    return [Unit("amp thread", SRC, [m for m in MESSAGES if isinstance(m, dict)], write)]

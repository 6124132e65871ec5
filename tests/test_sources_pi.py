"""PiSource (pi-coding-agent, session format v3) with transcripts built in the test."""

from __future__ import annotations

import json

import pytest

from crabsearch.cli import main
from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.pi import PiSource, active_branch, clean_prompt
from source_checks import CORPUS, assert_incremental, assert_read_back
from v3_builders import V3Session
from datetime import datetime
from pathlib import Path
from all_agents import Expect, prompt_of, reply_of

SRC = PiSource()
SID = "019e19b4-eb48-746a-aa6b-8dfcfa37954b"
CWD = "/home/dev/pi proj"


def pi_file(root, sid=SID, cwd=CWD):
    slug = "--" + cwd.strip("/").replace("/", "-") + "--"
    return root / slug / f"2026-05-12T09-00-00-000Z_{sid}.jsonl"


def sample() -> V3Session:
    s = V3Session(SID, cwd=CWD)
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.entry("thinking_level_change", thinkingLevel="high")
    u1 = s.user("Why does the zephyrine parser drop tabs?")
    s.assistant("It strips whitespace.", thinking="look at tokenizer", call=("call_1", "read", {"path": "/etc/secret"}))
    s.result("call_1", "read", "TOKEN=hunter2")
    s.compaction("Parser strips tabs; fix in tokenizer.", u1)
    s.user("Now fix it")
    s.assistant("Fixed.")
    return s


def test_registered():
    assert get_source("pi").__class__ is PiSource
    assert (SRC.agent, SRC.display) == ("pi", "pi")


def test_roots_and_discover(tmp_path):
    home = tmp_path / "home"
    f = sample().write(pi_file(home / ".pi" / "agent" / "sessions"))
    assert SRC.roots({}, home) == [home / ".pi" / "agent" / "sessions"]
    assert list(SRC.discover({}, home)) == [f]
    alt = tmp_path / "alt"
    g = sample().write(alt / "flat.jsonl")
    env = {"PI_CODING_AGENT_SESSION_DIR": str(alt)}
    assert SRC.roots(env, home) == [alt] and list(SRC.discover(env, home)) == [g]
    assert SRC.roots({"PI_CODING_AGENT_DIR": str(tmp_path / "ag")}, home) == [tmp_path / "ag" / "sessions"]
    assert list(SRC.discover({}, tmp_path / "nohome")) == []


def test_parsing(tmp_path):
    f = sample().write(pi_file(tmp_path))
    r = SRC.read(f)
    got = [(m.role, m.label, m.tool_name, m.text) for m in r.messages]
    assert got == [
        (Role.USER, "user", None, "Why does the zephyrine parser drop tabs?"),
        (Role.ASSISTANT, "thinking", None, "look at tokenizer"),
        (Role.ASSISTANT, "assistant", None, "It strips whitespace."),
        (Role.ASSISTANT, "tool-call:read", "read", '{"path": "/etc/secret"}'),
        (Role.TOOL, "tool:read", "read", "TOKEN=hunter2"),
        (Role.SUMMARY, "summary", None, "Parser strips tabs; fix in tokenizer."),
        (Role.USER, "user", None, "Now fix it"),
        (Role.ASSISTANT, "assistant", None, "Fixed."),
    ]
    assert r.messages[1].is_thinking and r.messages[3].is_tool_payload and r.messages[4].is_tool_payload
    s = r.session
    assert (s.agent, s.session_id, s.project, s.git_branch) == ("pi", SID, CWD, None)
    assert s.title == "Why does the zephyrine parser drop tabs?" and s.anchor_index == 0
    assert s.summary == "Parser strips tabs; fix in tokenizer."
    assert s.started.isoformat() == "2026-05-12T09:00:00+00:00" and s.updated > s.started
    assert s.message_count == 8 and "off_branch" not in s.extra
    assert SRC.resume_command(s) == f"cd '{CWD}' && pi --session {SID}"
    assert r.stats.skipped == 0
    assert_read_back(SRC, f, r.messages)


def test_tool_payloads_not_indexed_names_are(tmp_path):
    from crabsearch.index.documents import index_text_fields

    r = SRC.read(sample().write(tmp_path / "x.jsonl"))
    fields = [index_text_fields(m) for m in r.messages]
    assert fields[3] == {"tool": "read"} and fields[4] == {"tool": "read"}
    assert fields[1] == {} and fields[5] == {"compaction": "Parser strips tabs; fix in tokenizer."}


def test_session_info_name_is_title(tmp_path):
    s = sample()
    s.entry("session_info", name="  Tab bug  ")
    r = SRC.read(s.write(tmp_path / "a_b.jsonl"))
    assert r.session.title == "Tab bug"


def test_branches(tmp_path):
    s = V3Session("br", cwd="/w")
    u1 = s.user("abandoned question about quasars")
    s.assistant("quasar answer")
    s.compaction("old summary", u1)
    s.branch(None)  # pi resetLeaf: a new root
    u2 = s.user("active question about pulsars")
    s.assistant("pulsar answer")
    s.branch(u2)
    s.assistant("second try at pulsars")
    r = SRC.read(s.write(tmp_path / "t_br.jsonl"))
    texts = [m.text for m in r.messages]
    assert texts == ["abandoned question about quasars", "quasar answer", "old summary",
                     "active question about pulsars", "pulsar answer", "second try at pulsars"]
    # every message is kept (searchable); those off the active branch are listed
    assert r.session.extra["off_branch"] == [[0, 3], [4, 5]]
    # pi's picker titles a session by its first user message in file order (issue 14, rule 18)
    assert r.session.title == "abandoned question about quasars" and r.session.anchor_index == 0
    assert r.session.summary is None  # the compaction is on the abandoned branch
    assert active_branch(r.state)[-1] == s.leaf


def test_tool_call_id_as_parent_and_v1_lines(tmp_path):
    f = tmp_path / "v1_x.jsonl"
    lines = [{"type": "session", "id": "v1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/v"},
             {"type": "message", "timestamp": "2026-01-01T00:00:01Z",
              "message": {"role": "user", "content": "old style prompt"}},
             {"message": {"role": "assistant", "content": [{"type": "toolCall", "id": "tc9", "name": "ls",
                                                              "arguments": {}}]}},
             {"type": "message", "id": "r", "parentId": "tc9",
              "message": {"role": "toolResult", "toolCallId": "tc9", "content": "a b"}}]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = SRC.read(f)
    assert [(m.label, m.text) for m in r.messages] == [("user", "old style prompt"), ("tool-call:ls", "{}"),
                                                       ("tool:ls", "a b")]
    assert "off_branch" not in r.session.extra and r.session.title == "old style prompt"


def test_other_roles(tmp_path):
    s = V3Session("roles", cwd=None)
    s.message(role="bashExecution", command="make test", output="ok 3 passed", exitCode=0)
    s.message(role="assistant", content=[], stopReason="error", errorMessage="rate limited")
    s.message(role="custom", customType="note", content="ext note", display=True)
    s.entry("custom_message", customType="ctx", content=[{"type": "text", "text": "injected"}], display=False)
    s.entry("branch_summary", fromId="x", summary="branch went nowhere")
    s.message(role="user", content=[{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    s.entry("label", targetId="00000001", label="bookmark")
    r = SRC.read(s.write(tmp_path / "r_roles.jsonl"))
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "! make test"), (Role.TOOL, "tool:bash", "ok 3 passed"),
        (Role.SYSTEM, "system", "rate limited"), (Role.SYSTEM, "system", "ext note"),
        (Role.SYSTEM, "system", "injected"), (Role.SUMMARY, "summary", "branch went nowhere"),
        (Role.USER, "user", "[image]")]
    s_ = r.session
    assert s_.title is None and s_.project is None and s_.summary == "branch went nowhere"
    assert SRC.resume_command(s_) == "pi --session roles"


def test_clean_prompt():
    text = 'Sender (untrusted metadata):\n```json\n{"id": 1}\n```\n[Sun 2026-03-08 22:03 GMT+9] hello there'
    assert clean_prompt(text) == "hello there"
    assert clean_prompt("plain") == "plain"


def test_broken_lines_counted(tmp_path):
    data = sample().data()
    lines = data.split(b"\n")
    broken = b"\n".join(lines[:3] + [b'{"type":"message","id":', b"[1]"] + lines[3:])
    f = tmp_path / "b_x.jsonl"
    f.write_bytes(broken[:-20])  # and a torn last line
    r = SRC.read(f)
    assert r.stats.skipped == 2 and r.stats.reasons == {"broken JSON": 1, "not a JSON object": 1}
    assert r.stats.pending and len(r.messages) == 7


def test_incremental(tmp_path):
    s = sample()
    s.branch("00000003")
    s.user("a branch from the first prompt")
    s.entry("session_info", name="named later")
    assert_incremental(SRC, s.data(), tmp_path / "inc_x.jsonl")


def test_append_no_duplicates(tmp_path):
    s = sample()
    f = s.write(tmp_path / "g_x.jsonl")
    first = SRC.read(f)
    s.user("appended about gravitons")
    s.write(f)
    rest = SRC.read(f, first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(8, "appended about gravitons")]
    assert rest.session.message_count == 9


def test_corpus_file_reads():
    f = CORPUS / "openclaw" / "pi-agent_real-capture_compaction.jsonl"
    if not f.is_file():
        pytest.skip("corpus absent")
    r = SRC.read(f)
    assert r.stats.skipped == 0 and r.session.session_id == SID
    assert r.session.title == "Read hello.py and summarize what it prints without editing files."
    assert r.session.summary == "hello.py prints a fixture greeting."
    assert [m.role for m in r.messages].count(Role.SUMMARY) == 2
    assert_read_back(SRC, f, r.messages)


def test_end_to_end_cli(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    sample().write(pi_file(home / ".pi" / "agent" / "sessions"))
    monkeypatch.setenv("HOME", str(home))
    for var in ("PI_CODING_AGENT_SESSION_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    idx = str(tmp_path / "index")
    assert main(["--index-dir", idx, "index"]) == 0
    capsys.readouterr()
    assert main(["--index-dir", idx, "search", "--json", "zephyrine"]) == 0
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert (hit["agent"], hit["session_id"], hit["project"]) == ("pi", SID, CWD)
    assert hit["title"] == "Why does the zephyrine parser drop tabs?"
    assert hit["resume_command"] == f"cd '{CWD}' && pi --session {SID}"
    assert main(["--index-dir", idx, "search", "--json", "hunter2"]) == 0  # tool output: not indexed
    assert json.loads(capsys.readouterr().out)["hits"] == []
    assert main(["--index-dir", idx, "show", SID, "--json", "--no-redact"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [m["text"] for m in shown["messages"]][:3] == ["Why does the zephyrine parser drop tabs?",
                                                          "look at tokenizer", "It strips whitespace."]
    assert main(["--index-dir", idx, "status", "--json"]) == 0
    pi = next(a for a in json.loads(capsys.readouterr().out)["agents"] if a["agent"] == "pi")
    assert pi["files_found"] == 1 and pi["sessions"] == 1


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkapi`` no other session holds."""
    sid = "019e19b4-eb48-746a-aa6b-8dfcfa370108"
    cwd = "/home/dev/pi proj"
    s = V3Session(sid, cwd=cwd, start=t)
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.user(prompt_of("pi"))
    s.assistant(reply_of("pi"))
    s.entry("session_info", name="pi: worker stall")
    slug = "--" + cwd.strip("/").replace("/", "-") + "--"
    path = s.write(home / ".pi" / "agent" / "sessions" / slug / f"{t:%Y-%m-%dT%H-%M-%S-000Z}_{sid}.jsonl")
    return Expect("pi", sid, "pi: worker stall", cwd, f"cd '{cwd}' && pi --session {sid}", "quokkapi",
                  [prompt_of("pi"), reply_of("pi")], t, files=[path])

"""VSCodeSource: VS Code's chat sessions, written here in the shapes VS Code writes
(microsoft/vscode ``src/vs/workbench/contrib/chat/common/model/chatSessionStore.ts``,
``objectMutationLog.ts`` @ 047238f9, ``chatSessionOperationLog.ts`` @ 03d43368,
``chatService/chatService.ts`` @ 00817b7f): the older whole-file ``<id>.json`` and the 1.109+
append log ``<id>.jsonl``, under a temp HOME."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import UNKNOWN_KEY
from crabsearch.sources.vscode import VSCodeSource, replay

from agent_end_to_end import Reach, check_reach
from all_agents import Expect, ms, prompt_of, reply_of, write_file
from secret_samples import _GHP

SRC = VSCodeSource()
SID = "5f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"
T0 = 1773306000000  # 2026-03-12T09:00:00Z
CWD = "/home/dev/wombat api"


def md(value: str) -> dict:
    """A Markdown response part as VS Code stores it (an ``IMarkdownString``, no ``kind``)."""
    return {"value": value, "supportThemeIcons": False, "supportHtml": False, "baseUri": {"$mid": 1, "path": "/"}}


def terminal_call(call_id: str, command: str, output: str, **extra) -> dict:
    return {"kind": "toolInvocationSerialized", "presentation": None,
            "toolSpecificData": {"kind": "terminal", "commandLine": {"original": command}, "language": "sh",
                                 "terminalCommandOutput": {"text": output, "lineCount": 2}},
            "invocationMessage": {"value": f"Running `{command}`", "supportThemeIcons": False},
            "pastTenseMessage": {"value": f"Ran `{command}`", "supportThemeIcons": False},
            "isConfirmed": {"type": 1}, "isComplete": True, "toolCallId": call_id, "toolId": "run_in_terminal",
            "source": {"type": "internal", "label": "Built-In"}, **extra}


def read_call(call_id: str, path: str, content: str, **extra) -> dict:
    return {"kind": "toolInvocationSerialized", "presentation": None,
            "invocationMessage": {"value": f"Reading [](file://{path})"},
            "pastTenseMessage": {"value": f"Read [](file://{path})"},
            "resultDetails": {"input": json.dumps({"filePath": path}), "output": [
                {"type": "embed", "isText": True, "value": content}]},
            "isConfirmed": {"type": 1}, "isComplete": True, "toolCallId": call_id, "toolId": "copilot_readFile",
            "source": {"type": "internal", "label": "Built-In"}, **extra}


def request(n: int, text: str, response: list, **extra) -> dict:
    return {"requestId": f"request_{n}", "timestamp": T0 + n * 60_000, "message": {
        "text": text, "parts": [{"kind": "text", "text": text, "range": {"start": 0, "endExclusive": len(text)}}]},
        "variableData": {"variables": []}, "response": response, "responseId": f"response_{n}",
        "result": {"timings": {"firstProgress": 900, "totalElapsed": 4000}, "metadata": {"promptTokens": 10}},
        "followups": [], "modelId": "copilot/claude-sonnet-4.5", "agent": {"id": "github.copilot.editsAgent"},
        "modelState": {"value": 1}, **extra}


REQUESTS = [
    request(0, "why does the wombatgate build fail?", [
        {"kind": "thinking", "value": "Check the CI script first.", "id": "t1"},
        {"kind": "prepareToolInvocation", "toolName": "run_in_terminal"},
        terminal_call("call_1", "npm test -- --grep emuinput", "FAIL src/emuoutput.test.ts"),
        md("The test in "), {"kind": "inlineReference", "inlineReference": {
            "$mid": 1, "fsPath": "/home/dev/wombat api/src/gate.ts", "path": "/home/dev/wombat api/src/gate.ts",
            "scheme": "file"}, "name": "gate.ts"},
        md(" fails: the token "), md(f"{_GHP} expired."),
        {"kind": "undoStop", "id": "u1"}, {"kind": "codeblockUri", "uri": {"path": "/x"}},
        {"kind": "hologram", "value": "a kind from a newer VS Code"},
    ]),
    request(1, "fix it", [
        {"kind": "toolInvocationSerialized", "toolId": "runSubagent", "toolCallId": "call_sub",
         "invocationMessage": "Delegating to a sub-agent", "isComplete": True,
         "toolSpecificData": {"kind": "subagent", "description": "find the token", "agentName": "explore",
                              "prompt": "Find where the wombat token is read", "result": "It is read in ci.yml"}},
        read_call("call_2", "/home/dev/wombat api/ci.yml", "token: ${{ secrets.KOALASECRET }}",
                  subAgentInvocationId="call_sub"),
        {"kind": "warning", "content": {"value": "Copilot used a file outside the workspace"}},
        md("Rotated the token in ci.yml."),
    ]),
    request(2, "and the docs?", [], result={"errorDetails": {"message": "Sorry, the request was rate limited."}}),
]


def session_json(requests=REQUESTS, **extra) -> dict:
    return {"version": 3, "requesterUsername": "dev", "responderUsername": "GitHub Copilot", "initialLocation": "panel",
            "requests": requests, "sessionId": SID, "creationDate": T0 - 5000, "lastMessageDate": T0 + 3 * 60_000,
            "customTitle": "Wombatgate CI token", **extra}


def user_dir(home: Path, editor: str = "Code") -> Path:
    return home / ".config" / editor / "User"


def write_workspace(home: Path, folder: str = "file:///home/dev/wombat%20api", workspace_id: str = "a1b2c3",
                    editor: str = "Code") -> Path:
    d = user_dir(home, editor) / "workspaceStorage" / workspace_id
    write_file(d / "workspace.json", json.dumps({"folder": folder}))
    return d / "chatSessions"


def write_log(path: Path, *entries) -> Path:
    return write_file(path, "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in entries))


def test_registered_and_named():
    assert get_source("vscode").__class__ is VSCodeSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("vscode", "VS Code Copilot Chat", "VS Code")


def test_messages_of_each_request(tmp_path):
    f = write_file(write_workspace(tmp_path) / f"{SID}.json", json.dumps(session_json()))
    r = SRC.read(f)
    got = [(m.role, m.label, m.text, m.tool_name, m.offset, m.part, m.sidechain) for m in r.messages]
    assert got == [
        (Role.USER, "user", "why does the wombatgate build fail?", None, 0, 0, False),
        (Role.ASSISTANT, "thinking", "Check the CI script first.", None, 0, 1, False),
        (Role.ASSISTANT, "tool-call:run_in_terminal", "Ran `npm test -- --grep emuinput`\nnpm test -- --grep emuinput",
         "run_in_terminal", 0, 2, False),
        (Role.TOOL, "tool:run_in_terminal", "FAIL src/emuoutput.test.ts", "run_in_terminal", 0, 3, False),
        (Role.ASSISTANT, "assistant", f"The test in `gate.ts` fails: the token {_GHP} expired.", None, 0, 4, False),
        (Role.USER, "user", "fix it", None, 1, 0, False),
        (Role.ASSISTANT, "tool-call:runSubagent", "Delegating to a sub-agent\nFind where the wombat token is read",
         "runSubagent", 1, 1, False),
        (Role.TOOL, "tool:runSubagent", "It is read in ci.yml", "runSubagent", 1, 2, False),
        (Role.ASSISTANT, "tool-call:copilot_readFile", "Read [](file:///home/dev/wombat api/ci.yml)", "copilot_readFile",
         1, 3, True),
        (Role.TOOL, "tool:copilot_readFile", "token: ${{ secrets.KOALASECRET }}", "copilot_readFile", 1, 4, True),
        (Role.SYSTEM, "system", "Copilot used a file outside the workspace", None, 1, 5, False),
        (Role.ASSISTANT, "assistant", "Rotated the token in ci.yml.", None, 1, 6, False),
        (Role.USER, "user", "and the docs?", None, 2, 0, False),
        (Role.SYSTEM, "system", "Sorry, the request was rate limited.", None, 2, 1, False),
    ]
    assert [m.message_index for m in r.messages] == list(range(14))
    assert r.messages[5].timestamp.isoformat() == "2026-03-12T09:01:00+00:00"
    assert r.state[UNKNOWN_KEY] == {"hologram": 1} and r.stats.skipped == 0
    for m in r.messages:  # read back for display
        assert SRC.message_text(SRC.load(str(f), m.offset, m.length), m.part, m.label) == m.text


def test_session_fields(tmp_path):
    f = write_file(write_workspace(tmp_path) / f"{SID}.json", json.dumps(session_json()))
    s = SRC.read(f).session
    assert (s.agent, s.session_id, s.title, s.project, s.extra) == (
        "vscode", SID, "Wombatgate CI token", CWD, {"app": "VS Code"})
    assert s.started.isoformat() == "2026-03-12T08:59:55+00:00" and s.updated.isoformat() == "2026-03-12T09:03:00+00:00"
    assert (s.message_count, s.anchor_index) == (14, 0) and SRC.resume_command(s) is None
    untitled = write_file(f.with_name("other.json"), json.dumps(session_json(customTitle=None, sessionId=None)))
    s = SRC.read(untitled).session
    assert (s.session_id, s.title) == ("other", "why does the wombatgate build fail?")


def test_project_from_a_workspace_file_and_on_windows(tmp_path):
    d = user_dir(tmp_path) / "workspaceStorage"
    write_file(d / "w1" / "workspace.json", json.dumps({"workspace": "file:///home/dev/mono/all.code-workspace"}))
    write_file(d / "w2" / "workspace.json", json.dumps({"folder": "file:///c%3A/Users/dev/wombat"}))
    for w, project in (("w1", "/home/dev/mono"), ("w2", "c:/Users/dev/wombat"), ("w3", None)):
        f = write_file(d / w / "chatSessions" / f"{SID}.json", json.dumps(session_json()))
        assert SRC.read(f).session.project == project, w


def log_entries() -> list:
    """A 1.109+ log: the empty session, a request pushed, its response set part by part, the
    title set, a second request pushed, then cut and replaced (an edited prompt)."""
    first, second = REQUESTS[0], REQUESTS[1]
    empty = session_json(requests=[], customTitle=None)
    return [
        {"kind": 0, "v": empty},
        {"kind": 2, "k": ["requests"], "v": [dict(first, response=[])]},
        {"kind": 2, "k": ["requests", 0, "response"], "v": first["response"][:3]},
        {"kind": 2, "k": ["requests", 0, "response"], "v": first["response"][3:]},
        {"kind": 1, "k": ["customTitle"], "v": "Wombatgate CI token"},
        {"kind": 2, "k": ["requests"], "v": [dict(second, message={"text": "first try", "parts": []})]},
        {"kind": 2, "k": ["requests"], "v": [second], "i": 1},
        {"kind": 3, "k": ["requests", 1, "followups"]},
    ]


def test_log_replayed_like_the_whole_file(tmp_path):
    chats = write_workspace(tmp_path)
    flat = write_file(chats / "flat.json", json.dumps(session_json(requests=REQUESTS[:2])))
    log = write_log(chats / f"{SID}.jsonl", *log_entries())
    want, got = SRC.read(flat), SRC.read(log)
    assert [(m.role, m.label, m.text, m.offset, m.part) for m in got.messages] == [
        (m.role, m.label, m.text, m.offset, m.part) for m in want.messages]
    assert "first try" not in [m.text for m in got.messages]  # cut by the push with "i"
    assert (got.session.title, got.session.session_id, got.stats.skipped) == ("Wombatgate CI token", SID, 0)
    for m in got.messages:
        assert SRC.message_text(SRC.load(str(log), m.offset, m.length), m.part, m.label) == m.text


def test_broken_log_entries_are_skipped_and_counted(tmp_path):
    entries = log_entries()
    log = write_log(tmp_path / "chatSessions" / "x.jsonl", entries[0], "{broken", entries[1],
                    {"kind": 1, "k": ["requests", 7, "message"], "v": "off the end"}, [1, 2],
                    {"kind": 2, "k": ["requests", 0, "response"], "v": [md("partial answer")]})
    r = SRC.read(log)
    assert r.stats.reasons == {"broken JSON": 1, "entry off the session": 1, "not a JSON object": 1}
    assert [m.text for m in r.messages] == ["why does the wombatgate build fail?", "partial answer"]
    with open(log, "a") as fh:
        fh.write('{"kind": 2, "k": ["requests"], "v": [{"mess')  # being written
    r = SRC.read(log)
    assert r.stats.pending and r.stats.skipped == 3 and len(r.messages) == 2
    value, issues, torn = replay(b'{"kind": 1, "k": ["x"], "v": 1}\n{"kind": 0, "v": [1]}\n'
                                 b'{"kind": 2, "k": ["requests"], "v": [{"message": {"text": "hi"}}]}\n')
    assert value == {"requests": [{"message": {"text": "hi"}}]} and not torn
    assert issues == {"no initial value": 1, "initial value not an object": 1}


def test_discover_layouts_and_overrides(tmp_path):
    home = tmp_path / "home"
    chats = write_workspace(home)
    log = write_log(chats / f"{SID}.jsonl", *log_entries())
    write_file(chats / f"{SID}.json", json.dumps(session_json()))  # the pre-1.109 copy: the log wins
    older = write_file(chats / "0000aaaa-1111-2222-3333-444455556666.json", json.dumps(session_json()))
    empty = write_file(user_dir(home) / "globalStorage" / "emptyWindowChatSessions" / "e1.json", "{}")
    write_file(user_dir(home) / "globalStorage" / "transferredChatSessions" / "t1.json", "{}")
    mac = home / "Library" / "Application Support" / "Windsurf" / "User"
    windsurf = write_log(mac / "workspaceStorage" / "w" / "chatSessions" / "s1.jsonl", *log_entries())
    insiders = write_file(write_workspace(home, editor="Code - Insiders") / "s2.json", "{}")
    assert list(SRC.discover({}, home)) == [older, log, empty, insiders, windsurf]
    assert SRC.read(windsurf).session.extra == {"app": "Windsurf"}
    assert SRC.read(insiders).session.extra == {"app": "VS Code Insiders"}
    alt = tmp_path / "alt" / "User"
    moved = write_log(alt / "workspaceStorage" / "w" / "chatSessions" / "s3.jsonl", *log_entries())
    assert list(SRC.discover({"CRABSEARCH_VSCODE_DIR": str(alt)}, home)) == [moved]
    xdg = write_file(tmp_path / "xdg" / "VSCodium" / "User" / "workspaceStorage" / "w" / "chatSessions" / "s4.json", "{}")
    assert xdg in list(SRC.discover({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, home))
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_broken_files(tmp_path):
    for body, reason in ((b"{not json", "broken JSON"), (b"[1, 2]", "not a chat session"),
                         (b'{"requests": [5]}', "not a JSON object")):
        f = write_file(tmp_path / "chatSessions" / "b.json", body)
        r = SRC.read(f)
        assert r.messages == [] and r.stats.reasons == {reason: 1}, body


def test_a_rewrite_is_read_again_from_the_start(tmp_path):
    log = write_log(write_workspace(tmp_path) / f"{SID}.jsonl", *log_entries()[:2])
    before = SRC.fingerprint(str(log), log.stat().st_size)
    write_log(log, *log_entries())
    assert SRC.fingerprint(str(log), log.stat().st_size) != before
    assert len(SRC.read(log, 123, {"next_index": 99}).messages) == 12


def test_reached_through_index_search_show_export_and_mcp(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    write_log(write_workspace(home) / f"{SID}.jsonl", *log_entries())
    reach = Reach("vscode", SID, "wombatgate", "Wombatgate CI token", CWD, None,
                  ["why does the wombatgate build fail?", "Rotated the token in ci.yml."], _GHP,
                  hidden=["emuinput", "emuoutput", "koalasecret"])
    check_reach(capsys, monkeypatch, home, tmp_path / "index", reach)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkavscode`` no other session holds."""
    sid = "5f1c2d3e-4b5a-4c6d-8e7f-00000000a300"
    cwd = "/home/dev/vscodesvc"
    d = home / ".config" / "Code" / "User" / "workspaceStorage" / "9d8e7f6a5b4c"
    ws = write_file(d / "workspace.json", json.dumps({"folder": f"file://{cwd}"}))
    req = {"requestId": "request_1", "timestamp": ms(t + timedelta(seconds=5)),
           "message": {"text": prompt_of("vscode"), "parts": []}, "response": [], "modelId": "copilot/gpt-5"}
    log = write_log(d / "chatSessions" / f"{sid}.jsonl",
                    {"kind": 0, "v": {"version": 3, "sessionId": sid, "creationDate": ms(t), "requests": [],
                                      "initialLocation": "panel", "responderUsername": "GitHub Copilot"}},
                    {"kind": 2, "k": ["requests"], "v": [req]},
                    {"kind": 2, "k": ["requests", 0, "response"], "v": [md(reply_of("vscode"))]},
                    {"kind": 1, "k": ["customTitle"], "v": "VS Code: worker stall"})
    return Expect("vscode", sid, "VS Code: worker stall", cwd, None, "quokkavscode",
                  [prompt_of("vscode"), reply_of("vscode")], t, files=[log, ws])


def fuzz_units(home: Path) -> list:
    """The reader fuzz matrix's units: the whole-file session (records: its requests) and the log
    (records: its entries; a request stands for the entry that pushed it)."""
    from test_reader_fuzz import Unit, _touch

    chats = home / ".config" / "Code" / "User" / "workspaceStorage" / "f00d" / "chatSessions"
    flat_path, log_path = chats / "fuzz-flat.json", chats / "fuzz-log.jsonl"

    def write_flat(texts: list[str]) -> str:
        head = json.dumps(session_json(requests=[]))[:-1]
        write_file(flat_path, head + ', "requests": [' + ",".join(texts) + "]}")
        _touch(flat_path)
        return str(flat_path)

    def write_log_texts(texts: list[str]) -> str:
        write_file(log_path, "".join(t + "\n" for t in texts))
        _touch(log_path)
        return str(log_path)

    entries = [{"kind": 0, "v": session_json(requests=[])}] + [
        {"kind": 2, "k": ["requests"], "v": [r]} for r in REQUESTS] + [{"kind": 1, "k": ["customTitle"], "v": "t"}]
    return [Unit("vscode json", SRC, list(REQUESTS), write_flat),
            Unit("vscode log", SRC, entries, write_log_texts,
                 parts=lambda obj: [{"kind": 2, "k": ["requests"], "v": [obj]}])]

"""ClineSource: Cline / Roo Code task folders and Cline CLI sessions, built here in their real
layouts (formats.md section 6), plus the corpus sample when present."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.cline import ClineSource
from source_checks import CORPUS, state_size
from datetime import timedelta
from datetime import datetime
from all_agents import Expect, ms, prompt_of, reply_of, write_file

SRC = ClineSource()
TASK = "1767300000000"
ROO_TASK = "01KDX3Y5ZQ8M2N4P6R8T0V2W4Y"
CLI_ID = "4b1c2d3e-cli0-4f00-9a00-0123456789ab"
ENV_DETAILS = ("<environment_details>\n# VSCode Visible Files\nsrc/sched.ts\n\n# Current Working Directory "
               "(/home/dev/dingo) Files\nsrc/\nsecretenvword\n</environment_details>")


def cline_store(home: Path, editor: str = "Code", ext: str = "saoudrizwan.claude-dev") -> Path:
    return home / ".config" / editor / "User" / "globalStorage" / ext


def write(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def history() -> list:
    """An api_conversation_history.json: XML tool protocol, native tool use, feedback, completion."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nFix the dingoscheduler race\nin the worker\n</task>"},
                                     {"type": "text", "text": ENV_DETAILS}]},
        {"role": "assistant", "content": [{"type": "text", "text": (
            "<thinking>\nLook at the scheduler lock.\n</thinking>\n\nI'll read the wombatfile first.\n\n"
            "<read_file>\n<path>src/sched.ts</path>\n</read_file>")}]},
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'src/sched.ts'] Result:"},
                                     {"type": "text", "text": "export const LOCK = 'emuoutput';"},
                                     {"type": "text", "text": ENV_DETAILS}]},
        42,
        {"role": "assistant", "ts": 1767300500000, "content": [
            {"type": "thinking", "thinking": "A mutex around tick().", "signature": "x"},
            {"type": "text", "text": "Patching the tick loop."},
            {"type": "tool_use", "id": "toolu_1", "name": "replace_in_file", "input": {"path": "src/sched.ts", "diff": "emudiff"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "patched emuresult"}]},
            {"type": "text", "text": "<feedback>\nalso add a kookaburra test\n</feedback>"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": (
            "<attempt_completion>\n<result>\nFixed the dingoscheduler race with a mutex.\n</result>\n"
            "</attempt_completion>")}]},
        {"role": "user", "content": [{"type": "text", "text": "[TASK RESUMPTION] This task was interrupted 5 minutes ago."}]},
    ]


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    store = cline_store(home)
    write(store / "tasks" / TASK / "api_conversation_history.json", history())
    write(store / "tasks" / TASK / "ui_messages.json", [{"ts": 1767300000000, "type": "say", "say": "task", "text": "x"}])
    write(store / "state" / "taskHistory.json", [
        {"id": "1", "ts": 1, "task": "another task"},
        {"id": TASK, "ts": 1767300900000, "task": "Dingoscheduler race fix", "cwdOnTaskInitialization": "/home/dev/dingo app",
         "tokensIn": 10, "tokensOut": 2, "totalCost": 0.1}])
    roo = cline_store(home, "VSCodium", "rooveterinaryinc.roo-cline") / "tasks" / ROO_TASK
    write(roo / "api_conversation_history.json", [
        {"role": "user", "content": "<task>\nRename the quollhandler\n</task>"},
        {"role": "assistant", "content": "Renamed."}])
    write(roo / "history_item.json", {"id": ROO_TASK, "task": "Rename quollhandler", "workspace": "/home/dev/roo", "ts": 1767400000000})
    cli = home / ".cline" / "data" / "sessions" / CLI_ID
    write(cli / f"{CLI_ID}.messages.json", [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nport the bandicootcli flags\n</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Ported the flags."}]}])
    write(cli / f"{CLI_ID}.json", {"id": CLI_ID, "title": "Port bandicootcli flags", "cwd": "/home/dev/cli",
                                   "createdAt": "2026-01-05T10:00:00Z", "updatedAt": "2026-01-05T10:30:00Z"})
    return home


def task_path(home: Path) -> Path:
    return cline_store(home) / "tasks" / TASK / "api_conversation_history.json"


def load_back(path: Path, messages) -> list[str]:
    return [SRC.message_text(SRC.load(str(path), m.offset, m.length), m.part, m.label) for m in messages]


def test_registered_and_named():
    assert get_source("cline").__class__ is ClineSource
    assert (SRC.agent, SRC.badge) == ("cline", "Cline")


def test_discover_default_layouts(home):
    roo = cline_store(home, "VSCodium", "rooveterinaryinc.roo-cline") / "tasks" / ROO_TASK / "api_conversation_history.json"
    cli = home / ".cline" / "data" / "sessions" / CLI_ID / f"{CLI_ID}.messages.json"
    assert sorted(SRC.discover({}, home)) == sorted([task_path(home), roo, cli])
    mac = home / "Library" / "Application Support" / "Cursor" / "User" / "globalStorage" / "kilocode.kilo-code"
    kilo = write(mac / "tasks" / "1767000000000" / "api_conversation_history.json", [])
    assert kilo in list(SRC.discover({}, home))
    assert SRC.roots({}, home)[0] == home / ".cline" / "data"


def test_env_overrides(tmp_path):
    alt = tmp_path / "alt"
    f = write(alt / "data" / "sessions" / "s1" / "s1.messages.json", [])
    assert SRC.roots({"CLINE_DIR": str(alt)}, tmp_path)[0] == alt / "data"
    assert list(SRC.discover({"CLINE_DIR": str(alt)}, tmp_path)) == [f]
    assert SRC.roots({"CLINE_DATA_DIR": str(alt / "d2"), "CLINE_DIR": str(alt)}, tmp_path)[0] == alt / "d2"
    xdg = tmp_path / "xdg"
    g = write(xdg / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks" / "7" / "api_conversation_history.json", [])
    assert list(SRC.discover({"XDG_CONFIG_HOME": str(xdg)}, tmp_path)) == [g]
    assert list(SRC.discover({}, tmp_path / "empty")) == []


def test_task_messages_roles_labels(home):
    r = SRC.read(task_path(home))
    got = [(m.role, m.label, m.text, m.tool_name, m.offset, m.part) for m in r.messages]
    assert got == [
        (Role.USER, "user", "Fix the dingoscheduler race\nin the worker", None, 0, 0),
        (Role.ASSISTANT, "thinking", "Look at the scheduler lock.", None, 1, 0),
        (Role.ASSISTANT, "assistant", "I'll read the wombatfile first.", None, 1, 1),
        (Role.ASSISTANT, "tool-call:read_file", "<read_file>\n<path>src/sched.ts</path>\n</read_file>", "read_file", 1, 2),
        (Role.TOOL, "tool:read_file", "export const LOCK = 'emuoutput';", "read_file", 2, 0),
        (Role.ASSISTANT, "thinking", "A mutex around tick().", None, 4, 0),
        (Role.ASSISTANT, "assistant", "Patching the tick loop.", None, 4, 1),
        (Role.ASSISTANT, "tool-call:replace_in_file", '{"path": "src/sched.ts", "diff": "emudiff"}', "replace_in_file", 4, 2),
        (Role.USER, "user", "also add a kookaburra test\n[image]", None, 5, 0),
        (Role.TOOL, "tool:replace_in_file", "patched emuresult", "replace_in_file", 5, 1),
        (Role.ASSISTANT, "assistant", "Fixed the dingoscheduler race with a mutex.", None, 6, 0),
        (Role.ASSISTANT, "tool-call:attempt_completion", "<attempt_completion>\n<result>\nFixed the dingoscheduler race "
         "with a mutex.\n</result>\n</attempt_completion>", "attempt_completion", 6, 1),
        (Role.SYSTEM, "system", "[TASK RESUMPTION] This task was interrupted 5 minutes ago.", None, 7, 0),
    ]
    assert all("secretenvword" not in m.text for m in r.messages)  # environment details never kept
    assert [m.message_index for m in r.messages] == list(range(13))
    assert r.messages[5].timestamp.isoformat() == "2026-01-01T20:48:20+00:00"
    assert r.stats.reasons == {"not a JSON object": 1}
    assert load_back(task_path(home), r.messages) == [m.text for m in r.messages]


def test_task_session_fields(home):
    r = SRC.read(task_path(home))
    s = r.session
    assert (s.agent, s.session_id, s.project, s.title) == ("cline", TASK, "/home/dev/dingo app", "Dingoscheduler race fix")
    assert (s.message_count, s.anchor_index, s.summary, s.git_branch) == (13, 0, None, None)
    assert s.started.isoformat() == "2026-01-01T20:40:00+00:00"  # the task id (epoch ms)
    assert s.updated.isoformat() == "2026-01-01T20:55:00+00:00"  # taskHistory ts
    assert s.extra == {"app": "Cline"} and SRC.resume_command(s) is None  # IDE only
    assert r.end_offset == task_path(home).stat().st_size and state_size(r.state) < 4096


def test_roo_history_item_and_cli_session(home):
    roo = SRC.read(cline_store(home, "VSCodium", "rooveterinaryinc.roo-cline") / "tasks" / ROO_TASK / "api_conversation_history.json")
    s = roo.session
    assert (s.session_id, s.title, s.project, s.extra) == (ROO_TASK, "Rename quollhandler", "/home/dev/roo", {"app": "Roo Code"})
    assert s.started.isoformat() == "2026-01-01T15:48:33.911000+00:00"  # the ULID time part
    assert [(m.role, m.text) for m in roo.messages] == [(Role.USER, "Rename the quollhandler"), (Role.ASSISTANT, "Renamed.")]
    cli = SRC.read(home / ".cline" / "data" / "sessions" / CLI_ID / f"{CLI_ID}.messages.json").session
    assert (cli.session_id, cli.title, cli.project) == (CLI_ID, "Port bandicootcli flags", "/home/dev/cli")
    assert cli.updated.isoformat() == "2026-01-05T10:30:00+00:00"
    assert SRC.resume_command(cli) == f"cd /home/dev/cli && cline --id {CLI_ID}"


def test_title_and_cwd_fallbacks(tmp_path):
    f = write(cline_store(tmp_path) / "tasks" / "abc" / "api_conversation_history.json", history()[:2])
    write(cline_store(tmp_path) / "state" / "taskHistory.json", []).write_text("[{broken")
    s = SRC.read(f).session
    assert (s.title, s.project) == ("Fix the dingoscheduler race", "/home/dev/dingo")
    assert s.started == s.updated is not None  # no id time, no ts: the file's mtime


@pytest.mark.parametrize("body, reason", [(b'[{"role": "user", "content": "<task>hi', "broken JSON"),
                                          (b'{"not": "messages"}', "not a messages array"), (b"", "broken JSON")])
def test_broken_files_are_skipped_and_counted(tmp_path, body, reason):
    f = cline_store(tmp_path) / "tasks" / "1" / "api_conversation_history.json"
    f.parent.mkdir(parents=True)
    f.write_bytes(body)
    r = SRC.read(f)
    assert r.messages == [] and r.stats.reasons == {reason: 1} and r.session.message_count == 0
    with pytest.raises(OSError):
        SRC.read(tmp_path / "missing" / "api_conversation_history.json")


def test_rewritten_file_reindexed_without_duplicates(home, tmp_path):
    from crabsearch.index import Indexer
    from crabsearch.search import Engine

    index = tmp_path / "index"
    Indexer(index, env={"HOME": str(home)}).refresh()
    path = task_path(home)
    head = SRC.fingerprint(str(path), path.stat().st_size)
    msgs = history() + [{"role": "user", "content": [{"type": "text", "text": "<feedback>now the numbatqueue too</feedback>"}]}]
    write(path, msgs)  # Cline rewrites the whole file: same head, grown size
    assert SRC.fingerprint(str(path), 100) != head
    report = Indexer(index, env={"HOME": str(home)}).refresh()
    assert report.files_read == 1
    engine = Engine(index)
    [hit] = engine.search("numbatqueue").hits
    assert hit.session.message_count == 14
    [hit] = engine.search("dingoscheduler").hits
    page = engine.page(engine.find_session(TASK), 0, 50)
    assert page.total == 14 and [m.text for m in page.messages].count("Fix the dingoscheduler race\nin the worker") == 1
    write(path, history()[:2])  # rewritten shorter
    Indexer(index, env={"HOME": str(home)}).refresh()
    engine.reload()
    assert engine.search("numbatqueue").hits == [] and engine.search("kookaburra").hits == []


def test_corpus_task_reads_and_is_found(tmp_path):
    src = CORPUS / "others" / "cline"
    if not (src / "tasks").is_dir():
        pytest.skip("corpus absent")
    home = tmp_path / "home"
    shutil.copytree(src, cline_store(home))
    for f in SRC.discover({}, home):
        r = SRC.read(f)
        assert r.messages and r.stats.skipped == 0
        assert load_back(f, r.messages) == [m.text for m in r.messages]
    from crabsearch.index import Indexer
    from crabsearch.search import Engine

    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    [hit] = Engine(tmp_path / "index").search("hello").hits
    s = hit.session
    assert (s.agent, s.session_id, s.title, s.project) == ("cline", "1767225600000", "Say hello", "/home/example/work/demo")


def test_cli_end_to_end(home, tmp_path, monkeypatch, capsys):
    from crabsearch.cli import main

    monkeypatch.setenv("HOME", str(home))
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "XDG_CONFIG_HOME", "APPDATA", "VSCODE_PORTABLE"):
        monkeypatch.delenv(var, raising=False)
    index = str(tmp_path / "index")
    assert main(["--index-dir", index, "index"]) == 0
    capsys.readouterr()
    assert main(["--index-dir", index, "search", "--json", "dingoscheduler"]) == 0
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert (hit["agent"], hit["session_id"], hit["title"], hit["project"], hit["resume_command"]) == (
        "cline", TASK, "Dingoscheduler race fix", "/home/dev/dingo app", None)
    for hidden in ("emuoutput", "emudiff", "secretenvword"):  # tool payloads, environment details
        assert main(["--index-dir", index, "search", "--json", hidden]) == 0
        assert json.loads(capsys.readouterr().out)["hits"] == []
    assert main(["--index-dir", index, "search", "--json", "replace_in_file"]) == 0  # tool names are indexed
    assert [h["session_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == [TASK]
    assert main(["--index-dir", index, "search", "--json", "bandicootcli"]) == 0
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert hit["resume_command"] == f"cd /home/dev/cli && cline --id {CLI_ID}"
    assert main(["--index-dir", index, "show", TASK, "--json"]) == 0
    page = json.loads(capsys.readouterr().out)
    assert page["messages"][4]["text"] == "export const LOCK = 'emuoutput';"  # read back via load
    assert main(["--index-dir", index, "status", "--json"]) == 0
    agents = {a["agent"]: a for a in json.loads(capsys.readouterr().out)["agents"]}
    assert agents["cline"]["sessions"] == 3 and agents["cline"]["files_found"] == 3


def test_load_parses_the_task_once(home, monkeypatch):
    import crabsearch.jsonl as jsonl

    calls = []
    real = jsonl.loads
    monkeypatch.setattr(jsonl, "loads", lambda raw: calls.append(1) or real(raw))
    monkeypatch.setattr(jsonl, "_WHOLE", type(jsonl._WHOLE)())
    r = SRC.read(task_path(home))
    parsed = len(calls)  # the task file and its taskHistory.json
    assert load_back(task_path(home), r.messages) == [m.text for m in r.messages]
    assert len(calls) == parsed == 2
    assert SRC.load(str(task_path(home)), 3, 1) is None  # the non-object entry


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacline`` no other session holds."""
    task = str(ms(t))
    cwd = "/home/dev/dingo app"
    store = home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
    env_details = ("<environment_details>\n# Current Working Directory (/home/dev/dingo app) Files\nsrc/\n"
                   "</environment_details>")
    conv = write_file(store / "tasks" / task / "api_conversation_history.json", json.dumps([
        {"role": "user", "content": [{"type": "text", "text": f"<task>\n{prompt_of('cline')}\n</task>"},
                                     {"type": "text", "text": env_details}]},
        {"role": "assistant", "content": [{"type": "text", "text": reply_of("cline")}]}], indent=2))
    hist = write_file(store / "state" / "taskHistory.json", json.dumps([
        {"id": task, "ts": ms(t + timedelta(minutes=1)), "task": "Cline: worker stall",
         "cwdOnTaskInitialization": cwd, "tokensIn": 10, "tokensOut": 2, "totalCost": 0.01}]))
    return Expect("cline", task, "Cline: worker stall", cwd, None, "quokkacline", [prompt_of("cline"), reply_of("cline")],
                  t, files=[conv, hist])

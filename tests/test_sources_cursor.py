"""Cursor CLI agent transcripts (formats.md 6): ``~/.cursor/projects/<slug>/agent-transcripts``."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from crabsearch.index.documents import index_text_fields
from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.cursor import SOURCE, unslug

from source_checks import CORPUS, assert_incremental, assert_read_back, cli_ok
from all_agents import Expect, prompt_of, reply_of, write_jsonl
from secret_samples import _STRIPE_LIVE

LINES = [
    {"role": "user", "message": {"content": [{"type": "text", "text":
        "<user_info>OS linux</user_info>\n<user_query>\nwhy does the cron job run twice?\n</user_query>"}]}},
    {"role": "assistant", "message": {"content": [
        {"type": "thinking", "thinking": "Probably two crontab entries."},
        {"type": "text", "text": "Let me read the crontab."},
        {"type": "tool_use", "id": "t1", "name": "Shell", "input": {"command": "crontab -l", "token": "SECRET_TOKEN"}}]}},
    {"role": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "0 0 * * * backup.sh"}]}]}},
    {"role": "assistant", "message": {"content": [{"type": "text", "text": "Two entries overlap; remove one."}]}},
    {"type": "turn_ended", "status": "success"},
]


def slug(path: Path) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9]", "-", part) for part in path.parts[1:])


def write(home: Path, project: Path, sid: str, lines=LINES, nested: bool = False) -> Path:
    d = home / ".cursor" / "projects" / slug(project) / "agent-transcripts"
    path = d / sid / f"{sid}.jsonl" if nested else d / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


def test_registered():
    assert SOURCES["cursor"] is SOURCE


def test_parse(tmp_path):
    project = tmp_path / "src" / "my-app.v2"
    project.mkdir(parents=True)
    path = write(tmp_path / "home", project, "0b1c2d3e-aaaa-bbbb-cccc-111122223333")
    r = SOURCE.read(path)
    got = [(m.role, m.label, m.text, m.tool_name) for m in r.messages]
    assert got == [
        (Role.USER, "user", "why does the cron job run twice?", None),
        (Role.ASSISTANT, "thinking", "Probably two crontab entries.", None),
        (Role.ASSISTANT, "assistant", "Let me read the crontab.", None),
        (Role.ASSISTANT, "tool-call:Shell", '{"command": "crontab -l", "token": "SECRET_TOKEN"}', "Shell"),
        (Role.TOOL, "tool:Shell", "0 0 * * * backup.sh", "Shell"),
        (Role.ASSISTANT, "assistant", "Two entries overlap; remove one.", None),
    ]
    assert index_text_fields(r.messages[3]) == {"tool": "Shell"} and index_text_fields(r.messages[4]) == {"tool": "Shell"}
    assert index_text_fields(r.messages[1]) == {}
    s = r.session
    assert s.agent == "cursor" and s.session_id == "0b1c2d3e-aaaa-bbbb-cccc-111122223333"
    assert s.title == "why does the cron job run twice?" and s.project == str(project)
    assert s.started is None and s.updated == datetime.fromtimestamp(path.stat().st_mtime_ns / 1e9, timezone.utc)
    assert SOURCE.resume_command(s) == f"cd {project} && cursor-agent --resume 0b1c2d3e-aaaa-bbbb-cccc-111122223333"
    assert_read_back(SOURCE, path, r.messages)


def test_unknown_project_keeps_the_slug(tmp_path):
    path = write(tmp_path / "home", Path("/no/such dir/x"), "s1")
    s = SOURCE.read(path).session
    assert s.project == "no-such-dir-x"
    assert SOURCE.resume_command(s) == "cursor-agent --resume s1"
    assert unslug("") is None


def test_incremental(tmp_path, monkeypatch):
    monkeypatch.setattr(SOURCE, "mtime", lambda path: datetime(2026, 3, 14, tzinfo=timezone.utc))
    data = "".join(json.dumps(x) + "\n" for x in LINES).encode()
    d = tmp_path / ".cursor" / "projects" / "p" / "agent-transcripts"
    d.mkdir(parents=True)
    assert_incremental(SOURCE, data, d / "s.jsonl")


def test_broken_lines(tmp_path):
    path = write(tmp_path / "home", tmp_path, "s2")
    with open(path, "a") as fh:
        fh.write('not json\n[1]\n{"role": "assistant", "message": {"content": "plain string"}}\n{"role": "user", "mess')
    r = SOURCE.read(path)
    assert r.stats.skipped == 2 and r.messages[-1].text == "plain string"
    assert len(r.messages) == 7 and r.stats.pending


def test_discovery(tmp_path):
    home = tmp_path / "home"
    a = write(home, tmp_path / "a", "flat")
    b = write(home, tmp_path / "b", "nested", nested=True)
    sub = b.parent / "subagents" / "x.jsonl"
    sub.parent.mkdir()
    sub.write_text("{}\n")
    # subagent transcripts are sessions too (issue 14, rule 18)
    assert sorted(SOURCE.discover({}, home)) == sorted([a, b, sub])
    write(tmp_path / "h2", tmp_path / "c", "env")
    other = tmp_path / "h2" / ".cursor"
    assert [p.name for p in SOURCE.discover({"CURSOR_CONFIG_DIR": str(other)}, home)] == ["env.jsonl"]
    assert SOURCE.roots({"CURSOR_CONFIG_DIR": str(other)}, home)[0] == other
    assert SOURCE.roots({}, home) == [home / ".cursor", home / ".config" / "Cursor" / "User",
                                      home / "Library" / "Application Support" / "Cursor" / "User"]


@pytest.mark.skipif(not (CORPUS / "others" / "cursor").is_dir(), reason="corpus not present")
def test_corpus(tmp_path):
    for f in (CORPUS / "others" / "cursor").glob("*.jsonl"):
        r = SOURCE.read(f)
        assert r.stats.skipped == 0 and r.session.title == "List the files."
        assert [m.label for m in r.messages] == ["user", "assistant", "user", "assistant", "tool-call:Bash"]
        assert_read_back(SOURCE, f, r.messages)


def test_cli_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    project = tmp_path / "webapp"
    project.mkdir()
    write(home, project, "0b1c2d3e-aaaa-bbbb-cccc-111122223333")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CURSOR_CONFIG_DIR", raising=False)
    idx = str(tmp_path / "index")

    def run(*argv):
        return cli_ok(capsys, "--index-dir", idx, *argv)

    run("index")
    [hit] = json.loads(run("search", "--json", "overlap"))["hits"]
    assert hit["agent"] == "cursor" and hit["title"] == "why does the cron job run twice?"
    assert hit["project"] == str(project)
    assert hit["resume_command"] == f"cd {project} && cursor-agent --resume 0b1c2d3e-aaaa-bbbb-cccc-111122223333"
    assert json.loads(run("search", "--json", "SECRET_TOKEN"))["hits"] == []
    texts = [m["text"] for m in json.loads(run("show", "0b1c2d3e", "--json"))["messages"]]
    assert texts[0] == "why does the cron job run twice?" and "0 0 * * * backup.sh" in texts
    cursor = next(a for a in json.loads(run("status", "--json"))["agents"] if a["agent"] == "cursor")
    assert cursor["files_found"] == 1 and cursor["sessions"] == 1


# -- the editor's chats (composer): cursorDiskKV of globalStorage/state.vscdb ------------------------

COMPOSER_ID = "c0ffee00-1111-4222-8333-444455556666"
_STRIPE = _STRIPE_LIVE


def kv_store(path: Path, values: dict, items: dict | None = None) -> Path:
    """A ``state.vscdb`` as VS Code's storage service lays it out (``ItemTable``, Cursor's
    ``cursorDiskKV``), values JSON text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        con.execute("CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        for key, value in values.items():
            con.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, value if isinstance(value, str) else json.dumps(value)))
        for key, value in (items or {}).items():
            con.execute("INSERT INTO ItemTable VALUES (?, ?)", (key, json.dumps(value)))
    return path


def composer_values(cid=COMPOSER_ID, name="Speed up the tamarin build", secret=_STRIPE):
    bubbles = [
        {"_v": 3, "type": 1, "bubbleId": "b1", "text": f"why is the tamarin build slow? {secret}",
         "createdAt": "2026-03-14T10:00:00.000Z", "workspaceProjectDir": "/home/dev/tamarin"},
        {"_v": 3, "type": 2, "bubbleId": "b2", "thinking": {"text": "cache misses"}, "text": "Let me profile it.",
         "createdAt": "2026-03-14T10:00:05.000Z",
         "toolFormerData": {"name": "run_terminal_cmd", "toolCallId": "tc1", "rawArgs": '{"command": "make -j"}',
                            "result": "real 9m12s ocelotoutput", "status": "completed"}},
        {"_v": 3, "type": 2, "bubbleId": "b3", "text": "Enable ccache.", "createdAt": "2026-03-14T10:01:00.000Z"},
        {"_v": 3, "type": 7, "bubbleId": "b4", "text": "a kind Cursor may add"},
        {"_v": 3, "type": 1, "bubbleId": "b5", "rawText": "thanks", "createdAt": "2026-03-14T10:02:00.000Z"},
    ]
    headers = [{"bubbleId": b["bubbleId"], "type": b["type"]} for b in bubbles] + [
        {"bubbleId": "gone", "type": 2}, {"bubbleId": "empty", "type": 2}, {"bubbleId": "broken", "type": 2}]
    values = {f"composerData:{cid}": {"_v": 3, "composerId": cid, "name": name, "createdAt": 1773482400000,
                                       "lastUpdatedAt": 1773482520000, "fullConversationHeadersOnly": headers},
              f"bubbleId:{cid}:empty": "null", f"bubbleId:{cid}:broken": "{not json"}
    values.update({f"bubbleId:{cid}:{b['bubbleId']}": b for b in bubbles})
    return values


def editor_store(home: Path) -> Path:
    return home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"


def test_composer_chats_are_read_from_the_editor_store(tmp_path):
    db = kv_store(editor_store(tmp_path), {**composer_values(), "composerData:draft-1": {"composerId": "draft-1",
                                                                                        "fullConversationHeadersOnly": []}})
    [unit] = [u for u in SOURCE.discover({}, tmp_path) if "#" in str(u)]
    assert unit == Path(f"{db}#{COMPOSER_ID}")  # a draft without messages is not listed
    r = SOURCE.read(unit)
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", f"why is the tamarin build slow? {_STRIPE}", None),
        (Role.ASSISTANT, "thinking", "cache misses", None),
        (Role.ASSISTANT, "assistant", "Let me profile it.", None),
        (Role.ASSISTANT, "tool-call:run_terminal_cmd", '{"command": "make -j"}', "run_terminal_cmd"),
        (Role.TOOL, "tool:run_terminal_cmd", "real 9m12s ocelotoutput", "run_terminal_cmd"),
        (Role.ASSISTANT, "assistant", "Enable ccache.", None),
        (Role.USER, "user", "thanks", None)]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"7": 1}
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project, s.extra) == (
        "cursor", COMPOSER_ID, "Speed up the tamarin build", "/home/dev/tamarin", {"app": "Cursor IDE"})
    assert (s.started, s.updated) == (datetime(2026, 3, 14, 10, 0, tzinfo=timezone.utc),
                                      datetime(2026, 3, 14, 10, 2, tzinfo=timezone.utc))
    assert SOURCE.resume_command(s) is None and r.end_offset == 0
    assert SOURCE.stat(str(unit))[1] == 1773482520000 * 10**6 and SOURCE.locate(str(unit), 0) is None
    for m in r.messages:
        assert SOURCE.message_text(SOURCE.load(str(unit), m.offset, m.length), m.part, m.label) == m.text


def test_composer_workspace_inline_chats_and_transcript_twins(tmp_path):
    home = tmp_path / "home"
    inline = {"composerId": "old-1", "name": "", "createdAt": 1773400000000,
              "conversation": [{"type": 1, "bubbleId": "x", "text": "an inline tamarin chat"},
                               {"type": 2, "bubbleId": "y", "text": "inline answer"}]}
    twin = "0b1c2d3e-aaaa-bbbb-cccc-111122223333"
    db = kv_store(editor_store(home), {"composerData:old-1": inline, **composer_values(twin, name="twin")})
    ws = home / ".config" / "Cursor" / "User" / "workspaceStorage" / "ab12"
    kv_store(ws / "state.vscdb", {}, {"composer.composerData": {"allComposers": [{"composerId": "old-1"}]}})
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/old%20tamarin"}))
    project = tmp_path / "proj"
    project.mkdir()
    transcript = write(home, project, twin)  # the same chat, also written as an agent transcript
    units = list(SOURCE.discover({}, home))
    assert units == [transcript, Path(f"{db}#old-1")]  # the twin is read once, from its transcript
    r = SOURCE.read(units[1])
    assert [m.text for m in r.messages] == ["an inline tamarin chat", "inline answer"]
    assert (r.session.title, r.session.project) == ("an inline tamarin chat", "/home/dev/old tamarin")


def test_an_editor_store_that_cannot_be_listed_is_counted(tmp_path):
    store = editor_store(tmp_path)
    store.parent.mkdir(parents=True)
    store.write_bytes(b"garbage" * 500)
    [unit] = list(SOURCE.discover({}, tmp_path))
    assert unit == store
    r = SOURCE.read(unit)
    assert r.messages == [] and r.stats.reasons == {"unreadable database": 1}
    older = kv_store(tmp_path / "old" / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb", {})
    with sqlite3.connect(older) as con:
        con.execute("DROP TABLE cursorDiskKV")
    assert list(SOURCE.discover({}, tmp_path / "old")) == []  # an older editor's store: nothing to read


def test_composer_end_to_end(tmp_path, monkeypatch, capsys):
    from store_checks import Seen, end_to_end

    home = tmp_path / "home"
    kv_store(editor_store(home), composer_values())
    status = end_to_end(capsys, monkeypatch, tmp_path, home, Seen(
        "cursor", COMPOSER_ID, "Speed up the tamarin build", "/home/dev/tamarin", None, "tamarin",
        [f"why is the tamarin build slow? {_STRIPE}", "Let me profile it.", "Enable ccache.", "thanks"],
        hidden=[_STRIPE], unindexed=["ocelotoutput"]))
    assert (status["files_found"], status["sessions"], status["skipped_lines"]) == (1, 1, 1)
    assert status["unknown_kinds"] == {"7": 1}


def fuzz_units(home: Path) -> list:
    """The all-agents transcript (JSONL) and an editor chat fuzzed field by field
    (``tests/test_reader_fuzz.py``): the chat's records are its bubbles."""
    from test_reader_fuzz import Unit, _touch, jsonl_unit

    exp = all_agents_session(home / "cursor-fuzz-home", datetime(2026, 3, 8, tzinfo=timezone.utc))
    units = [jsonl_unit("all-agents cursor", SOURCES["cursor"], exp.files[0])]
    values = composer_values("fz")
    bubbles = [v for k, v in values.items() if k.startswith("bubbleId:fz:") and isinstance(v, dict)]
    path = home / "cursor-fuzz" / "globalStorage" / "state.vscdb"

    def write(texts: list[str]) -> str:
        if path.exists():
            path.unlink()
        kv = {"composerData:fz": values["composerData:fz"]}
        kv.update({f"bubbleId:fz:{b['bubbleId']}": t for b, t in zip(bubbles, texts)})
        kv_store(path, kv)
        _touch(path)
        return f"{path}#fz"

    def parts(obj) -> list:
        return [obj.get("bubble")] if isinstance(obj, dict) else [obj]

    return units + [Unit("cursor composer", SOURCES["cursor"], bubbles, write, parts)]


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacursor`` no other session holds."""
    sid = "0b1c2d3e-aaaa-bbbb-cccc-111122220109"
    project = home / "code" / "cursorproj"
    project.mkdir(parents=True, exist_ok=True)
    slug = "-".join(re.sub(r"[^A-Za-z0-9]", "-", part) for part in project.parts[1:])
    path = write_jsonl(home / ".cursor" / "projects" / slug / "agent-transcripts" / f"{sid}.jsonl",
                  {"role": "user", "message": {"content": [
                      {"type": "text", "text": f"<user_query>\n{prompt_of('cursor')}\n</user_query>"}]}},
                  {"role": "assistant", "message": {"content": [{"type": "text", "text": reply_of("cursor")}]}},
                  {"type": "turn_ended", "status": "success"})
    return Expect("cursor", sid, prompt_of("cursor"), str(project), f"cd {project} && cursor-agent --resume {sid}",
                  "quokkacursor", [prompt_of("cursor"), reply_of("cursor")], t, files=[path])

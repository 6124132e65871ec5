"""Cursor CLI agent transcripts (formats.md 6): ``~/.cursor/projects/<slug>/agent-transcripts``."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from crabsearch.index.writer import index_text_fields
from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.cursor import SOURCE, unslug

from source_checks import CORPUS, assert_incremental, assert_read_back, cli_ok
from all_agents import Expect, prompt_of, reply_of, write_jsonl

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
    assert SOURCE.roots({"CURSOR_CONFIG_DIR": str(other)}, home) == [other]
    assert SOURCE.roots({}, home) == [home / ".cursor"]


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

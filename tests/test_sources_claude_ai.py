"""ClaudeAISource and ``crabsearch import`` of a Claude.ai data export: ``conversations.json`` (a
list of conversations with ``chat_messages``) written here in the shape of a real export, as
agentsview ``internal/parser/claude_ai.go`` (b85eae5a7971) reads it."""

from __future__ import annotations

import json
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import member_path
from crabsearch.sources.claude_ai import ClaudeAISource

from agent_round_trip import round_trip
from all_agents import Expect, iso, prompt_of, reply_of, write_file
from secret_samples import _GHP
from source_checks import cli_ok
from test_sources_chatgpt import run_import

SRC = ClaudeAISource()
UUID = "5e1f0c2a-7b3d-4e8f-9a0b-1c2d3e4f5a6b"
ROOT = "00000000-0000-4000-8000-000000000000"


def msg(uid: str, parent: str, sender: str, content: list[dict], secs: int, text: str = "", **more) -> dict:
    at = f"2026-03-20T09:{secs // 60:02d}:{secs % 60:02d}.000000Z"
    return {"uuid": uid, "text": text, "content": content, "sender": sender, "created_at": at, "updated_at": at,
            "attachments": [], "files": [], "parent_message_uuid": parent, **more}


MESSAGES = [
    msg("m1", ROOT, "human", [{"type": "text", "text": f"why is the snorkelgate build red? token {_GHP}",
                               "citations": []}], 5,
        attachments=[{"file_name": "ci.log", "file_size": 40, "file_type": "text/plain",
                      "extracted_content": "lockfile mismatch in wobbleframe"}]),
    msg("m2a", "m1", "assistant", [{"type": "text", "text": "An older answer about the weather."}], 6),
    msg("m2", "m1", "assistant", [
        {"type": "thinking", "thinking": "check the CI log first", "summaries": []},
        {"type": "text", "text": "The lockfile drifted."},
        {"type": "tool_use", "name": "web_search", "input": {"query": "lockfile drift"}},
        {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "nimbostratus found"}]},
        {"type": "hologram", "x": 1}], 20),
    msg("m3", "m2", "human", [], 30, text="thanks"),
]
CONV = {"uuid": UUID, "name": "Snorkelgate CI", "summary": "", "created_at": "2026-03-20T09:00:00.000000Z",
        "updated_at": "2026-03-20T09:10:00.000000Z", "account": {"uuid": "acct-1"}, "chat_messages": MESSAGES}


def write_export(path: Path, convs: list | None = None) -> Path:
    text = json.dumps(convs if convs is not None else [CONV])
    if path.suffix == ".zip":
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("conversations.json", text)
            z.writestr("users.json", "[]")
            z.writestr("projects.json", "[]")
        return path
    return write_file(path, text)


def test_registered_and_named():
    assert get_source("claude-ai").__class__ is ClaudeAISource
    assert (SRC.agent, SRC.display, SRC.badge) == ("claude-ai", "Claude.ai export", "Claude.ai")


def test_messages_branches_and_fields(tmp_path):
    path = write_export(tmp_path / "export" / "conversations.json")
    unit = member_path(path, UUID)
    r = SRC.read(Path(unit))
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", f"why is the snorkelgate build red? token {_GHP}"),
        (Role.SYSTEM, "context:attachment", "[ci.log]\nlockfile mismatch in wobbleframe"),
        (Role.ASSISTANT, "assistant", "An older answer about the weather."),
        (Role.ASSISTANT, "thinking", "check the CI log first"),
        (Role.ASSISTANT, "assistant", "The lockfile drifted."),
        (Role.ASSISTANT, "tool-call:web_search", '{"query": "lockfile drift"}'),
        (Role.TOOL, "tool:web_search", "nimbostratus found"),
        (Role.USER, "user", "thanks"),
    ]
    assert r.session.extra["off_branch"] == [[2, 3]]  # the retried answer
    assert r.state["unknown_kinds"] == {"hologram": 1}
    s = r.session
    assert (s.session_id, s.title, s.project, s.message_count) == (UUID, "Snorkelgate CI", None, 8)
    assert (s.started.isoformat(), s.updated.isoformat()) == ("2026-03-20T09:00:00+00:00", "2026-03-20T09:10:00+00:00")
    assert SRC.resume_command(s) is None and "https://claude.ai/chat/ID" in SRC.resume_doc
    for m in r.messages:
        assert SRC.message_text(SRC.load(unit, m.offset, m.length), m.part, m.label) == m.text


def test_an_older_export_without_parent_links_has_no_branches(tmp_path):
    old = [{k: v for k, v in m.items() if k != "parent_message_uuid"} for m in MESSAGES]
    path = write_export(tmp_path / "conversations.json", [dict(CONV, chat_messages=old, name="")])
    r = SRC.read(Path(member_path(path, UUID)))
    assert "off_branch" not in r.session.extra
    assert r.session.title.startswith("why is the snorkelgate build red? token ") and _GHP not in r.session.title


def test_import_detects_a_claude_export(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    zip_path = write_export(home / "Downloads" / "data-2026-03-20.zip")
    index = str(tmp_path / "index")
    code, out, err = run_import(capsys, monkeypatch, home, "--index-dir", index, "import", str(zip_path))
    imports = home / ".local" / "share" / "crabsearch" / "imports.json"
    assert (code, err) == (0, "") and "Claude.ai export: 1 conversation in" in out and "agent:claude-ai" in out
    assert json.loads(imports.read_text()) == {"claude-ai": [str(zip_path)]}
    [hit] = json.loads(cli_ok(capsys, "--index-dir", index, "search", "--json", "agent:claude-ai snorkelgate"))["hits"]
    assert (hit["session_id"], hit["title"]) == (UUID, "Snorkelgate CI")


def test_index_search_show_export_and_mcp(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "claude-export"
    write_export(folder / "conversations.json")
    env = {"HOME": str(tmp_path / "home"), "CRABSEARCH_CONFIG": str(tmp_path / "none.toml"),
           "CRABSEARCH_CLAUDE_AI_EXPORT": str(folder)}
    trip = round_trip(capsys, monkeypatch, tmp_path / "index", env, "claude-ai", "snorkelgate", UUID)
    assert (trip.hit["agent"], trip.hit["session_id"], trip.hit["title"], trip.hit["resume_command"]) == (
        "claude-ai", UUID, "Snorkelgate CI", None)
    url = f"https://claude.ai/chat/{UUID}"  # no resume command: the conversation's web address
    assert (trip.hit["url"], trip.page["session"]["url"], trip.mcp_hits[0]["url"], trip.mcp_page["url"]) == (url,) * 4
    assert f"- **Open:** {url}\n" in trip.markdown
    index = str(tmp_path / "index")
    assert f"\n   open: {url}\n" in cli_ok(capsys, "--index-dir", index, "search", "snorkelgate")
    assert f"\nopen: {url}\n" in cli_ok(capsys, "--index-dir", index, "show", UUID)
    assert _GHP not in json.dumps(trip.hit) and _GHP not in trip.markdown and _GHP not in json.dumps(trip.mcp_page)
    assert [m.get("abandoned", False) for m in trip.page["messages"]] == [False, False, True] + [False] * 5
    assert "The lockfile drifted." in trip.markdown
    assert [h["session_id"] for h in trip.mcp_hits] == [UUID] and trip.mcp_page["total"] == 8
    assert any(k["agent"] == "claude-ai" and k["kind"] == "hologram" for k in trip.status["unknown_kinds"])
    assert json.loads(cli_ok(capsys, "--index-dir", str(tmp_path / "index"), "search", "--json",
                             "nimbostratus"))["hits"] == []  # tool output: not indexed by default


def fuzz_units(home: Path) -> list:
    """The fuzz matrix's unit: a conversation's messages, each fuzzed, in an export file."""
    from test_reader_fuzz import json_array_unit

    path = home / "fuzz-exports" / "claude-ai" / "conversations.json"
    unit = json_array_unit("claude.ai export", SRC, path, [dict(m) for m in MESSAGES],
                           {k: v for k, v in CONV.items() if k != "chat_messages"})
    write = unit.write

    def write_conversation(texts: list[str]) -> str:
        write(texts)  # {..., "messages": [...]}: one conversation; made a list of it, as exports are
        body = path.read_text("utf-8").replace('"messages": [', '"chat_messages": [', 1)
        path.write_text(f"[{body}]", "utf-8")
        return member_path(path, UUID)

    unit.write = write_conversation
    return [unit]


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): an unpacked export
    folder under ``home/Downloads`` that ``$CRABSEARCH_CLAUDE_AI_EXPORT`` names, started at ``t``,
    holding the word ``quokkaclaudeai`` no other session holds."""
    uid = "5e1f0c2a-7b3d-4e8f-9a0b-000000000039"
    conv = {"uuid": uid, "name": "Claude.ai: worker stall", "created_at": iso(t),
            "updated_at": iso(t + timedelta(seconds=60)), "chat_messages": [
                {"uuid": "a1", "text": "", "sender": "human", "created_at": iso(t + timedelta(seconds=5)),
                 "content": [{"type": "text", "text": prompt_of("claudeai")}], "attachments": [], "files": [],
                 "parent_message_uuid": ROOT},
                {"uuid": "a2", "text": "", "sender": "assistant", "created_at": iso(t + timedelta(seconds=60)),
                 "content": [{"type": "text", "text": reply_of("claudeai")}], "attachments": [], "files": [],
                 "parent_message_uuid": "a1"}]}
    path = write_export(home / "Downloads" / "claude-export" / "conversations.json", [conv])
    return Expect("claude-ai", uid, "Claude.ai: worker stall", None, None, "quokkaclaudeai",
                  [prompt_of("claudeai"), reply_of("claudeai")], t,
                  env={"CRABSEARCH_CLAUDE_AI_EXPORT": str(path.parent)}, files=[path])

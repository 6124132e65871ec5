"""WindsurfSource: a workspace's ``state.vscdb`` (VS Code's ``ItemTable``) holding the chat
panel's values in the two shapes agentsview's ``windsurf_provider.go`` (538600744d1b) reads, with
``workspace.json`` beside it, under a temp HOME."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.base import member_path
from crabsearch.sources.windsurf import WindsurfSource

from all_agents import Expect, prompt_of, reply_of, write_file
from secret_samples import _SENDGRID
from store_checks import Seen, end_to_end

SRC = WindsurfSource()
KEY = "workbench.panel.aichat.view.aichat.chatdata"
SID = "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968"


def session(sid=SID, title="Tune the marimba cache", text=f"why is the marimba cache cold? {_SENDGRID}"):
    return {"version": 1, "sessionId": sid, "customTitle": title, "creationDate": 1773482400000,
            "lastMessageDate": 1773482460000,
            "requests": [{"requestId": "r1", "message": {"text": text},
                          "response": [{"value": "The TTL is 0."}, {"kind": "toolInvocationSerialized", "x": 1},
                                       {"value": "Set it to 60s."}], "timestamp": 1773482400000},
                         {"requestId": "r2", "message": {"text": "thanks"}, "response": [], "timestamp": 1773482460000}]}


TABS = {"tabs": [
    {"tabId": "tab-1", "chatTitle": "Old marimba tab",
     "bubbles": [{"type": 1, "text": "how do marimba tabs work?"}, {"type": 2, "rawText": "Like this."},
                 {"type": "user", "initText": "and again?"}, {"type": "ai", "text": "Again."},
                 {"type": "robot", "text": "who is this"}, {"type": 2, "text": ""}]},
    {"tabId": "", "bubbles": [{"type": 1, "text": "no id"}]},
    {"tabId": "empty", "bubbles": []}]}


def workspace(user: Path, name: str, folder: str | None, values: dict) -> Path:
    d = user / "workspaceStorage" / name
    d.mkdir(parents=True, exist_ok=True)
    if folder:
        write_file(d / "workspace.json", json.dumps({"folder": "file://" + folder.replace(" ", "%20")}))
    db = d / "state.vscdb"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        con.execute("INSERT INTO ItemTable VALUES ('workbench.colorTheme', 'dark')")
        for key, value in values.items():
            con.execute("INSERT INTO ItemTable VALUES (?, ?)", (key, value if isinstance(value, str) else json.dumps(value)))
    return db


def user_dir(home: Path) -> Path:
    return home / ".config" / "Windsurf" / "User"


def test_registered():
    assert SOURCES["windsurf"].__class__ is WindsurfSource


def test_a_vscode_chat_session(tmp_path):
    db = workspace(tmp_path, "abc123", "/home/dev/marimba app", {KEY: session()})
    r = SRC.read(Path(member_path(db, SID)))
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", f"why is the marimba cache cold? {_SENDGRID}"),
        (Role.ASSISTANT, "assistant", "The TTL is 0.\nSet it to 60s."), (Role.USER, "user", "thanks")]
    s = r.session
    assert (s.session_id, s.title, s.project) == (SID, "Tune the marimba cache", "/home/dev/marimba app")
    assert (s.started, s.updated) == (datetime(2026, 3, 14, 10, 0, tzinfo=timezone.utc),
                                      datetime(2026, 3, 14, 10, 1, tzinfo=timezone.utc))
    assert SRC.resume_command(s) is None and r.end_offset == 0
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(member_path(db, SID)), m.offset, m.length), m.part, m.label) == m.text


def test_tabs_and_a_session_without_an_id(tmp_path):
    anonymous = session()
    del anonymous["sessionId"]
    db = workspace(tmp_path, "ws9", None, {KEY: TABS, "aiChat.chatdata": anonymous})
    units = sorted(SRC.discover({"CRABSEARCH_WINDSURF_DIR": str(tmp_path)}, tmp_path))
    assert units == [Path(member_path(db, "tab-1")), Path(member_path(db, "workspace-ws9"))]
    r = SRC.read(units[0])
    assert [(m.label, m.text) for m in r.messages] == [
        ("user", "how do marimba tabs work?"), ("assistant", "Like this."), ("user", "and again?"),
        ("assistant", "Again.")]
    assert r.state["unknown_kinds"] == {"robot": 1}
    assert (r.session.title, r.session.project) == ("Old marimba tab", None)
    stored = datetime.fromtimestamp(db.stat().st_mtime, timezone.utc)  # tabs keep no times: the store's
    assert abs((r.session.updated - stored).total_seconds()) < 0.001
    assert [m.text for m in SRC.read(units[1]).messages][0].startswith("why is the marimba cache cold?")


def test_roots_and_broken_values(tmp_path):
    home = tmp_path / "home"
    db = workspace(user_dir(home), "h1", "/w", {KEY: "{not json", "aiChat.chatdata": session("s2")})
    assert list(SRC.discover({}, home)) == [Path(member_path(db, "s2"))]
    assert SRC.roots({}, home)[:2] == [user_dir(home), home / "Library" / "Application Support" / "Windsurf" / "User"]
    assert Path("C:/A/Windsurf/User") in SRC.roots({"APPDATA": "C:/A"}, home)
    assert home / ".config" / "Windsurf - Next" / "User" in SRC.roots({}, home)
    assert SRC.roots({"CRABSEARCH_WINDSURF_DIR": "/u"}, home) == [Path("/u")]


def test_a_changed_value_is_read_again_whole(tmp_path):
    db = workspace(tmp_path, "abc", "/w", {KEY: session()})
    path = str(member_path(db, SID))
    size, mtime, _ = SRC.stat(path)
    longer = session()
    longer["requests"].append({"message": {"text": "one more"}, "response": [], "timestamp": 1773482520000})
    longer["lastMessageDate"] = 1773482520000
    workspace(tmp_path, "abc", "/w", {KEY: longer})
    assert SRC.stat(path)[:2] == (size + len(json.dumps({"request": longer["requests"][-1]})) + 2, 1773482520000 * 10**6)
    assert [m.text for m in SRC.read(Path(path)).messages][-1] == "one more"


def test_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    workspace(user_dir(home), "abc123", "/home/dev/marimba", {KEY: session()})
    status = end_to_end(capsys, monkeypatch, tmp_path, home, Seen(
        "windsurf", SID, "Tune the marimba cache", "/home/dev/marimba", None, "marimba",
        [f"why is the marimba cache cold? {_SENDGRID}", "The TTL is 0.\nSet it to 60s.", "thanks"],
        hidden=[_SENDGRID]))
    assert (status["files_found"], status["sessions"], status["skipped_lines"]) == (1, 1, 0)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkawindsurf`` no other session holds."""
    sid = "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a0290"
    cwd = "/home/dev/windsurfsvc"
    start = int(t.timestamp() * 1000)
    value = {"version": 1, "sessionId": sid, "customTitle": "Windsurf: worker stall", "creationDate": start,
             "lastMessageDate": start + 60000,
             "requests": [{"requestId": "r1", "message": {"text": prompt_of("windsurf")},
                           "response": [{"value": reply_of("windsurf")}], "timestamp": start}]}
    db = workspace(user_dir(home), "f00dface", cwd, {KEY: value})
    return Expect("windsurf", sid, "Windsurf: worker stall", cwd, None, "quokkawindsurf",
                  [prompt_of("windsurf"), reply_of("windsurf")], t, files=[db, db.parent / "workspace.json"])


def fuzz_units(home: Path) -> list:
    """The chat panel's values fuzzed field by field (``tests/test_reader_fuzz.py``): a VS Code
    session's requests, and a tab's bubbles."""
    from test_reader_fuzz import Unit, _touch

    def unit(name: str, sid: str, records: list, wrap) -> Unit:
        base = workspace(home / "windsurf-fuzz", name, "/w", {})

        def write(texts: list[str]) -> str:
            base.unlink()
            workspace(home / "windsurf-fuzz", name, "/w", {KEY: wrap(",".join(texts))})
            _touch(base)
            return member_path(base, sid)

        def parts(obj) -> list:
            return [obj.get("request", obj.get("bubble"))] if isinstance(obj, dict) else [obj]

        return Unit(f"windsurf {name}", SOURCES["windsurf"], records, write, parts)

    return [unit("requests", "fz", session()["requests"], lambda a: '{"sessionId": "fz", "requests": [' + a + "]}"),
            unit("tabs", "t", TABS["tabs"][0]["bubbles"][:4], lambda a: '{"tabs": [{"tabId": "t", "bubbles": [' + a + "]}]}")]

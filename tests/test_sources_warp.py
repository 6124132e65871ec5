"""WarpSource: ``warp.sqlite`` written here with Warp's own tables (warpdotdev/warp
``crates/persistence/src/schema.rs`` at 19548aec6285; ``ai_queries.input`` as ``NewAIQuery``
serializes ``PersistedAIInputType``, ``agent_conversations.summary`` as
``AgentConversationSummary``), under a temp HOME."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.base import member_path
from crabsearch.sources.warp import WarpSource

from all_agents import Expect, prompt_of
from secret_samples import _STRIPE_LIVE
from source_checks import key
from store_checks import Seen, end_to_end

SRC = WarpSource()
CID = "7a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c8d"

SCHEMA = """
CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL,
  conversation_data TEXT NOT NULL, last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, summary TEXT);
CREATE UNIQUE INDEX ux_agent_conversations_conversation_id ON agent_conversations (conversation_id);
CREATE TABLE agent_tasks (id INTEGER PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL, task_id TEXT NOT NULL,
  task BLOB NOT NULL, last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE ai_queries (id INTEGER PRIMARY KEY NOT NULL, exchange_id TEXT NOT NULL, conversation_id TEXT NOT NULL,
  start_ts DATETIME NOT NULL, input TEXT NOT NULL, working_directory TEXT, output_status TEXT NOT NULL,
  model_id TEXT NOT NULL DEFAULT '', planning_model_id TEXT NOT NULL DEFAULT '',
  coding_model_id TEXT NOT NULL DEFAULT '');
CREATE UNIQUE INDEX ux_ai_queries_exchange_id ON ai_queries(exchange_id);
"""


def query(text, context=()):
    return json.dumps([{"Query": {"text": text, "context": list(context), "referenced_attachments": {}}}])


class Db:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as con:
            con.executescript(SCHEMA)
        self.n = 0

    def conversation(self, cid=CID, title="Fix the yodel deploy", cwd="/home/dev/yodel", parent=None,
                     modified="2026-03-14 10:10:00"):
        data = {"server_conversation_token": "tok", **({"parent_conversation_id": parent} if parent else {})}
        summary = {"initial_query": "", "title": title, "initial_working_directory": cwd, "is_restorable": True}
        with sqlite3.connect(self.path) as con:
            con.execute("INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at, summary) "
                        "VALUES (?,?,?,?)", (cid, json.dumps(data), modified, json.dumps(summary)))
            con.execute("INSERT INTO agent_tasks (conversation_id, task_id, task) VALUES (?,?,?)",
                        (cid, "task-1", b"\x0a\x06task-1\x12\x08protobuf"))
        return self

    def exchange(self, input_json, cid=CID, cwd="/home/dev/yodel", t=None):
        self.n += 1
        t = t or datetime(2026, 3, 14, 10, self.n, tzinfo=timezone.utc)
        with sqlite3.connect(self.path) as con:
            con.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, "
                        "output_status, model_id) VALUES (?,?,?,?,?,?,?)",
                        (f"ex-{self.n}", cid, t.strftime("%Y-%m-%d %H:%M:%S.%f"), input_json, cwd, '"Completed"',
                         "auto"))
        return self


def build(root: Path) -> Db:
    db = Db(root / "warp.sqlite").conversation()
    db.exchange(query(f"why does the yodel deploy hang? key {_STRIPE_LIVE}",
                      [{"SelectedText": "kazoocontext"}]))
    db.exchange("[]")  # a tool-call step: no user input
    db.exchange("{broken")
    db.exchange(json.dumps([{"ResumeConversation": {}}]))
    db.exchange(query("add a timeout to the yodel probe"))
    return db


def test_registered():
    assert SOURCES["warp"].__class__ is WarpSource


def test_prompts_title_project_and_counts(tmp_path):
    db = build(tmp_path)
    path = Path(member_path(db.path, CID))
    r = SRC.read(path)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", f"why does the yodel deploy hang? key {_STRIPE_LIVE}"),
        (Role.USER, "user", "add a timeout to the yodel probe")]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"ResumeConversation": 1}
    s = r.session
    assert (s.session_id, s.title, s.project, s.parent_session_id) == (CID, "Fix the yodel deploy", "/home/dev/yodel", None)
    assert s.started == datetime(2026, 3, 14, 10, 1, tzinfo=timezone.utc)
    assert s.updated == datetime(2026, 3, 14, 10, 10, tzinfo=timezone.utc)
    assert SRC.resume_command(s) is None
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(path), m.offset, m.length), m.part, m.label) == m.text


def test_queries_without_a_conversation_row_and_child_agents(tmp_path):
    db = build(tmp_path)
    db.exchange(query("orphan prompt"), cid="lonely", cwd="/tmp/x")
    db.conversation("child-9", title="", parent=CID).exchange(query("check the probe logs"), cid="child-9")
    lonely = SRC.read(Path(member_path(db.path, "lonely"))).session
    assert (lonely.title, lonely.project) == ("orphan prompt", "/tmp/x")
    child = SRC.read(Path(member_path(db.path, "child-9"))).session
    assert (child.parent_session_id, child.title) == (CID, "check the probe logs")


def test_incremental(tmp_path):
    db = build(tmp_path)
    path = str(member_path(db.path, CID))
    first = SRC.read(Path(path))
    size = SRC.stat(path)[0]
    head = SRC.fingerprint(path, size)
    assert first.end_offset == size == 5
    db.exchange(query("and roll it out"))
    assert SRC.stat(path)[0] == 6 and SRC.fingerprint(path, size) == head
    rest = SRC.read(Path(path), first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(2, "and roll it out")]
    whole = SRC.read(Path(path))
    assert [key(m) for m in first.messages + rest.messages] == [key(m) for m in whole.messages]


def test_discovery_and_roots(tmp_path):
    home = tmp_path / "home"
    linux = build(home / ".local" / "state" / "warp-terminal")
    tui = Db(home / ".local" / "state" / "warp-terminal" / "tui" / "warp.sqlite").exchange(query("tui"), cid="t1")
    mac = Db(home / "Library" / "Group Containers" / "2BBY89MBSN.dev.warp" / "Library" / "Application Support" /
             "dev.warp.Warp-Stable" / "warp.sqlite").exchange(query("mac"), cid="m1")
    assert list(SRC.discover({}, home)) == [Path(member_path(linux.path, CID)), Path(member_path(tui.path, "t1")),
                                            Path(member_path(mac.path, "m1"))]
    assert SRC.roots({"XDG_STATE_HOME": "/s"}, home)[:2] == [Path("/s/warp-terminal"), Path("/s/warp-terminal-preview")]
    assert Path("C:/L/warp/Warp/data") in SRC.roots({"LOCALAPPDATA": "C:/L"}, home)
    assert SRC.roots({"CRABSEARCH_WARP_DIR": "/w"}, home) == [Path("/w")]


def test_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    build(home / ".local" / "state" / "warp-terminal")
    status = end_to_end(capsys, monkeypatch, tmp_path, home, Seen(
        "warp", CID, "Fix the yodel deploy", "/home/dev/yodel", None, "yodel",
        [f"why does the yodel deploy hang? key {_STRIPE_LIVE}", "add a timeout to the yodel probe"],
        hidden=[_STRIPE_LIVE], unindexed=["kazoocontext", "protobuf"]))
    assert (status["files_found"], status["sessions"], status["skipped_lines"]) == (1, 1, 1)
    assert status["unknown_kinds"] == {"ResumeConversation": 1}


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkawarp`` no other session holds. Warp
    keeps only the user's prompts readable: two of them."""
    cid = "7a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b0280"
    cwd = "/home/dev/warpsvc"
    follow = "Can the warp worker lock get a timeout?"
    db = Db(home / ".local" / "state" / "warp-terminal" / "warp.sqlite")
    db.conversation(cid, "Warp: worker stall", cwd, modified=(t + timedelta(minutes=2)).strftime("%Y-%m-%d %H:%M:%S"))
    db.exchange(query(prompt_of("warp")), cid, cwd, t)
    db.exchange(query(follow), cid, cwd, t + timedelta(minutes=1))
    return Expect("warp", cid, "Warp: worker stall", cwd, None, "quokkawarp", [prompt_of("warp"), follow], t,
                  files=[db.path])


def fuzz_units(home: Path) -> list:
    """A store fuzzed field by field (``tests/test_reader_fuzz.py``): the records are the
    conversation's ``input`` entries, one ``ai_queries`` row each."""
    from test_reader_fuzz import Unit, _touch

    path = home / "warp-fuzz" / "warp.sqlite"
    records = [{"Query": {"text": "fuzz warp", "context": [{"Block": {"id": 1}}], "referenced_attachments": {}}},
               {"Query": {"text": "second prompt"}}]

    def write(texts: list[str]) -> str:
        if path.exists():
            path.unlink()
        db = Db(path).conversation("fz")
        for raw in texts:
            db.exchange("[" + raw + "]", cid="fz")
        _touch(path)
        return member_path(path, "fz")

    def parts(obj) -> list:
        return list(obj.get("inputs") or []) if isinstance(obj, dict) else [obj]

    return [Unit("warp store", SOURCES["warp"], records, write, parts)]

"""GooseSource: ``sessions.db`` written here with Goose's own schema (block/goose
``crates/goose/src/session/storage.rs`` ``create_schema`` and ``add_message`` at 865e4a030a67:
``content_json`` blocks as ``MessageContent`` serializes them), and legacy ``*.jsonl`` sessions
(``session/legacy.rs``), under a temp HOME."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.base import member_path
from crabsearch.sources.goose import GooseSource

from all_agents import Expect, prompt_of, reply_of, write_jsonl
from secret_samples import _SK_PROJ
from source_checks import key
from store_checks import Seen, committed, end_to_end

SRC = GooseSource()
SID = "20260314_1"
T0 = 1773482400  # 2026-03-14T10:00:00Z, in seconds as Goose's created_timestamp

SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version) VALUES (13);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    accumulated_cost REAL, schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT,
    model_config_json TEXT, goose_mode TEXT NOT NULL DEFAULT 'auto', archived_at TIMESTAMP, project_id TEXT);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
"""

VISIBLE = {"userVisible": True, "agentVisible": True}
AGENT_ONLY = {"userVisible": False, "agentVisible": True}
INVISIBLE = {"userVisible": False, "agentVisible": False}


def text(t):
    return {"type": "text", "text": t}


def call(cid, name, args):
    return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": {"name": name, "arguments": args}}}


def result(cid, out):
    return {"type": "toolResponse", "id": cid,
            "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": out}], "isError": False}}}


class Db:
    """A ``sessions.db`` as Goose writes it."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.con() as con:
            con.executescript(SCHEMA)
        self.n = 0

    def con(self):
        return committed(self.path)

    def session(self, sid=SID, name="Fix the zorbulon cache", wd="/home/dev/goose app", t=T0, kind="user"):
        when = datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        with self.con() as con:
            con.execute("INSERT INTO sessions (id, name, working_dir, created_at, updated_at, session_type) "
                        "VALUES (?,?,?,?,?,?)", (sid, name, wd, when, when, kind))
        return self

    def message(self, role, *blocks, sid=SID, meta=VISIBLE, raw=None):
        self.n += 1
        with self.con() as con:
            con.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, "
                        "metadata_json) VALUES (?,?,?,?,?,?)",
                        (f"msg_{self.n}", sid, role, raw if raw is not None else json.dumps(list(blocks)),
                         T0 + self.n, json.dumps(meta)))
            con.execute("UPDATE sessions SET updated_at = ? WHERE id = ?",
                        (datetime.fromtimestamp(T0 + self.n, timezone.utc).strftime("%Y-%m-%d %H:%M:%S"), sid))


def build(root: Path) -> Db:
    db = Db(root / "sessions" / "sessions.db").session()
    db.message("user", text(f"why does the zorbulon cache evict hot keys? my key is {_SK_PROJ}"))
    db.message("assistant", {"type": "thinking", "thinking": "probably LRU sizing", "signature": "sig"},
               text("Let me check the config."), call("call_1", "developer__shell", {"command": "cat cache.toml"}))
    db.message("user", result("call_1", "size = 16 quetzalpayload"))
    db.message("assistant", text("The LRU size is too small."),
               {"type": "toolRequest", "id": "call_2", "toolCall": {"status": "error", "error": "no such tool"}})
    db.message("user", {"type": "toolResponse", "id": "call_2", "toolResult": {"status": "error", "error": "denied"}})
    db.message("user", text("why does the zorbulon cache evict hot keys?"), meta=INVISIBLE)
    db.message("user", text("Summary: we grew the zorbulon LRU to 4096."), meta=AGENT_ONLY)
    db.message("assistant", text("Your context was compacted."), meta=AGENT_ONLY)
    db.message("assistant", {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "Compacted"},
               {"type": "futureBlock", "x": 1}, {"type": "image", "data": "AAAA", "mimeType": "image/png"})
    db.message("user", raw="{not json")
    db.message("system", text("a role Goose does not write"))
    db.message("user", text("now add a metric"))
    return db


def unit(root: Path, sid=SID) -> Path:
    return Path(member_path(root / "sessions" / "sessions.db", sid))


def test_registered():
    assert SOURCES["goose"].__class__ is GooseSource


def test_messages_roles_labels_and_counts(tmp_path):
    build(tmp_path)
    r = SRC.read(unit(tmp_path))
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", f"why does the zorbulon cache evict hot keys? my key is {_SK_PROJ}", None),
        (Role.ASSISTANT, "thinking", "probably LRU sizing", None),
        (Role.ASSISTANT, "assistant", "Let me check the config.", None),
        (Role.ASSISTANT, "tool-call:developer__shell", '{"command": "cat cache.toml"}', "developer__shell"),
        (Role.TOOL, "tool:developer__shell", "size = 16 quetzalpayload", "developer__shell"),
        (Role.ASSISTANT, "assistant", "The LRU size is too small.", None),
        (Role.ASSISTANT, "tool-call:unknown", "no such tool", "unknown"),
        (Role.TOOL, "tool:unknown", "denied", "unknown"),
        (Role.SUMMARY, "summary", "Summary: we grew the zorbulon LRU to 4096.", None),
        (Role.SYSTEM, "system", "Your context was compacted.", None),
        (Role.SYSTEM, "system", "Compacted", None),
        (Role.USER, "user", "now add a metric", None),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.stats.places == [("row 10", "broken JSON")]
    assert r.state["unknown_kinds"] == {"futureBlock": 1, "system": 1}
    assert r.messages[0].timestamp == datetime(2026, 3, 14, 10, 0, 1, tzinfo=timezone.utc)
    for m in r.messages:  # windows and the session view read each message back by its row
        assert SRC.message_text(SRC.load(str(unit(tmp_path)), m.offset, m.length), m.part, m.label) == m.text


def test_session_fields_and_resume(tmp_path):
    build(tmp_path)
    s = SRC.read(unit(tmp_path)).session
    assert (s.agent, s.session_id, s.title, s.project) == ("goose", SID, "Fix the zorbulon cache", "/home/dev/goose app")
    assert s.summary == "Summary: we grew the zorbulon LRU to 4096." and s.extra["compactions"] == [8]
    assert s.started == datetime(2026, 3, 14, 10, 0, tzinfo=timezone.utc)
    assert s.updated == datetime(2026, 3, 14, 10, 0, 12, tzinfo=timezone.utc) and s.message_count == 12
    assert SRC.resume_command(s) == f"cd '/home/dev/goose app' && goose session --resume --session-id {SID}"
    with sqlite3.connect(tmp_path / "sessions" / "sessions.db") as con:
        con.execute("UPDATE sessions SET name = '', archived_at = '2026-03-15 08:00:00'")
    s = SRC.read(unit(tmp_path)).session
    assert s.title.startswith("why does the zorbulon cache evict hot keys?") and s.archived


def test_incremental_rows_and_a_replaced_conversation(tmp_path):
    db = build(tmp_path)
    path = str(unit(tmp_path))
    first = SRC.read(Path(path))
    size = SRC.stat(path)[0]
    head = SRC.fingerprint(path, size)
    assert first.end_offset == size == 12
    state = json.loads(json.dumps(first.state))
    db.message("assistant", text("Added a hit-ratio metric."))
    assert SRC.stat(path)[0] == 13 and SRC.fingerprint(path, size) == head  # appended: read from the offset
    rest = SRC.read(Path(path), first.end_offset, state)
    assert [(m.message_index, m.text) for m in rest.messages] == [(12, "Added a hit-ratio metric.")]
    whole = SRC.read(Path(path))
    assert [key(m) for m in first.messages + rest.messages] == [key(m) for m in whole.messages]
    assert rest.session.to_state() == whole.session.to_state()
    with sqlite3.connect(tmp_path / "sessions" / "sessions.db") as con:  # replace_conversation: delete, insert
        rows = con.execute("SELECT message_id, session_id, role, content_json, created_timestamp, metadata_json "
                           "FROM messages ORDER BY id").fetchall()
        con.execute("DELETE FROM messages")
        con.executemany("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, "
                        "metadata_json) VALUES (?,?,?,?,?,?)", rows)
    assert SRC.fingerprint(path, size) != head  # read again whole


def test_discovery_roots_and_legacy_files(tmp_path):
    home = tmp_path / "home"
    data = home / ".local" / "share" / "goose"
    build(data)
    imported = write_jsonl(data / "sessions" / f"{SID}.jsonl", {"description": "old", "working_dir": "/w"})
    legacy = write_jsonl(data / "sessions" / "project-x.jsonl", {"description": "old", "working_dir": "/w"})
    assert imported.exists()
    assert list(SRC.discover({}, home)) == [unit(data), legacy]  # the imported file is read from the store
    root = tmp_path / "root"
    build(root / "data")
    assert SRC.roots({"GOOSE_PATH_ROOT": str(root)}, home) == [root / "data"]
    assert list(SRC.discover({"GOOSE_PATH_ROOT": str(root)}, home)) == [unit(root / "data")]
    assert SRC.roots({"GOOSE_PATH_ROOT": "relative"}, home)[0] == data  # Goose ignores a relative root
    assert SRC.roots({"XDG_DATA_HOME": str(tmp_path / "x")}, home) == [tmp_path / "x" / "goose"]
    assert SRC.roots({"APPDATA": "C:/Users/u/AppData/Roaming"}, home)[1] == Path(
        "C:/Users/u/AppData/Roaming/Block/goose/data")
    hidden = tmp_path / "hidden"  # Goose's own hidden sessions are not read
    Db(hidden / "data" / "sessions" / "sessions.db").session(kind="hidden").message("user", text("internal"))
    assert list(SRC.discover({"GOOSE_PATH_ROOT": str(hidden)}, home)) == []


def test_legacy_jsonl_session(tmp_path):
    path = write_jsonl(tmp_path / "sessions" / "cache-fix.jsonl",
                       {"working_dir": "/home/dev/old", "description": "Old cache fix", "message_count": 3},
                       {"role": "user", "created": T0, "content": [text("why is the zorbulon slow?")]},
                       {"role": "assistant", "created": T0 + 5, "content": [
                           {"type": "reasoning", "text": "legacy reasoning block"}, text("It swaps."),
                           call("c1", "developer__shell", {"command": "free -m"})]},
                       {"role": "user", "created": T0 + 6, "content": [
                           {"type": "toolResponse", "id": "c1", "toolResult": {"status": "success", "value": [
                               {"type": "text", "text": "Swap: 2048"}]}}]})
    with open(path, "a") as fh:
        fh.write("{broken\n")
    r = SRC.read(path)
    assert [(m.label, m.text) for m in r.messages] == [
        ("user", "why is the zorbulon slow?"), ("thinking", "legacy reasoning block"), ("assistant", "It swaps."),
        ("tool-call:developer__shell", '{"command": "free -m"}'), ("tool:developer__shell", "Swap: 2048")]
    s = r.session
    assert (s.session_id, s.title, s.project) == ("cache-fix", "Old cache fix", "/home/dev/old")
    assert r.stats.reasons == {"broken JSON": 1}
    assert SRC.resume_command(s) == "cd /home/dev/old && goose session --resume --name cache-fix"


def test_a_running_goose_store_is_read_and_never_written(tmp_path):
    """Goose keeps ``sessions.db`` in WAL mode: a session committed only to the WAL is read, and
    nothing is created or changed beside the store."""
    db = build(tmp_path)
    writer = sqlite3.connect(db.path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO sessions (id, name, working_dir) VALUES ('20260314_2', 'Fresh', '/w')")
    writer.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES "
                   "('20260314_2', 'user', ?, ?)", (json.dumps([text("only in the wal")]), T0))
    writer.commit()
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in db.path.parent.iterdir()}
    assert (db.path.parent / "sessions.db-wal").stat().st_size > 0
    fresh = unit(tmp_path, "20260314_2")
    assert [m.text for m in SRC.read(fresh).messages] == ["only in the wal"]
    after = {p.name: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in db.path.parent.iterdir()}
    writer.close()
    assert after == before


def test_an_unreadable_store_is_counted_not_fatal(tmp_path):
    store = tmp_path / "data" / "sessions" / "sessions.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"not a database at all" * 100)
    [path] = SRC.discover({"GOOSE_PATH_ROOT": str(tmp_path)}, tmp_path)
    assert path == store
    r = SRC.read(path)
    assert r.messages == [] and r.stats.reasons == {"unreadable database": 1}


def test_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    build(home / ".local" / "share" / "goose")
    status = end_to_end(capsys, monkeypatch, tmp_path, home, Seen(
        "goose", SID, "Fix the zorbulon cache", "/home/dev/goose app",
        f"cd '/home/dev/goose app' && goose session --resume --session-id {SID}", "zorbulon",
        [f"why does the zorbulon cache evict hot keys? my key is {_SK_PROJ}", "Let me check the config.",
         "The LRU size is too small.", "now add a metric"],
        hidden=[_SK_PROJ], unindexed=["quetzalpayload"]))
    assert (status["files_found"], status["sessions"], status["skipped_lines"]) == (1, 1, 1)
    assert status["unknown_kinds"] == {"futureBlock": 1, "system": 1}


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkagoose`` no other session holds."""
    sid = "20260308_9"
    cwd = "/home/dev/goosesvc"
    db = Db(home / ".local" / "share" / "goose" / "sessions" / "sessions.db")
    start = int(t.timestamp())
    db.session(sid, "Goose: worker stall", cwd, start)
    with db.con() as con:
        for n, (role, words) in enumerate((("user", prompt_of("goose")), ("assistant", reply_of("goose"))), 1):
            con.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, "
                        "metadata_json) VALUES (?,?,?,?,?,?)",
                        (f"msg_{n}", sid, role, json.dumps([text(words)]), start + 60 * n, json.dumps(VISIBLE)))
        end = datetime.fromtimestamp(start + 120, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        con.execute("UPDATE sessions SET updated_at = ?", (end,))
    return Expect("goose", sid, "Goose: worker stall", cwd, f"cd {cwd} && goose session --resume --session-id {sid}",
                  "quokkagoose", [prompt_of("goose"), reply_of("goose")], t, files=[db.path])


def fuzz_units(home: Path) -> list:
    """A store fuzzed field by field (``tests/test_reader_fuzz.py``): the records are each
    message's ``metadata_json`` and then its ``content_json`` blocks, as opencode's unit keeps a
    message and its parts."""
    from test_reader_fuzz import Unit, _touch

    path = home / "goose-fuzz" / "sessions" / "sessions.db"
    messages = [
        ("user", VISIBLE, [text("fuzz goose")]),
        ("assistant", VISIBLE, [{"type": "thinking", "thinking": "hm", "signature": ""}, text("calling"),
                                call("c1", "developer__shell", {"command": "ls", "n": [1]})]),
        ("user", VISIBLE, [result("c1", "a b"), {"type": "toolResponse", "id": "c2", "toolResult": {
            "status": "success", "value": [{"type": "text", "text": "legacy list"}]}}]),
        ("user", AGENT_ONLY, [text("the summary")]),
        ("assistant", VISIBLE, [{"type": "systemNotification", "notificationType": "inlineMessage", "msg": "note"},
                                {"type": "actionRequired", "data": {"actionType": "elicitation", "id": "e1",
                                                                    "message": "which file?", "requested_schema": {}}}]),
    ]
    shape = [(role, len(blocks)) for role, _meta, blocks in messages]
    records = [r for _role, meta, blocks in messages for r in [meta] + blocks]

    def write(texts: list[str]) -> str:
        if path.exists():
            path.unlink()
        db = Db(path).session("fuzz_1")
        with db.con() as con:
            i = 0
            for n, (role, count) in enumerate(shape):
                meta, blocks = texts[i], texts[i + 1:i + 1 + count]
                i += 1 + count
                con.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) "
                            "VALUES ('fuzz_1', ?, ?, ?, ?)", (role, "[" + ",".join(blocks) + "]", T0 + n, meta))
        _touch(path)
        return member_path(path, "fuzz_1")

    def parts(obj) -> list:
        return [obj.get("metadata")] + list(obj.get("content") or []) if isinstance(obj, dict) else [obj]

    return [Unit("goose store", SOURCES["goose"], records, write, parts)]

"""OpenClawSource: JSONL transcripts (legacy layout, sessions.json titles, archives) and the
per-agent SQLite store (schema of OpenClaw >= 2026.8 as formats.md 4.1 and the deja-vu fixture
dump describe it), all built in the test."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3

import pytest

from crabsearch.cli import main
from crabsearch.model import Role
from crabsearch.sources import get_source, openclaw
from crabsearch.sources.base import member_path
from crabsearch.sources.openclaw import OpenClawSource
from source_checks import CORPUS, assert_incremental, assert_read_back
from v3_builders import V3Session
from datetime import datetime
from pathlib import Path
from all_agents import Expect, ms, prompt_of, reply_of, write_file

SRC = OpenClawSource()
S1 = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
S2 = "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e"
S3 = "c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e7f"

SCHEMA = """
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
  previous_session_id TEXT, reason TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  display_name TEXT) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
  created_at INTEGER NOT NULL, event_zstd BLOB, PRIMARY KEY (session_id, seq)) STRICT;
CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
"""


@pytest.fixture(autouse=True)
def _fresh_caches():
    openclaw._SUMMARY.clear()
    openclaw._JSON_STORES.clear()


def first_session() -> V3Session:
    s = V3Session(S1, cwd="/srv/bot")
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.user('Sender (untrusted metadata):\n```json\n{"from": "tg"}\n```\n[Sun 2026-03-08 22:03 GMT+9] '
           "why is the marmoset queue stuck")
    s.assistant("The consumer died.", thinking="check consumer", call=("tc1", "exec", {"command": "ps aux"}))
    s.result("tc1", "exec", "PASSWORD=swordfish")
    return s


def second_session() -> V3Session:
    s = V3Session(S2, cwd="/srv/api")
    u = s.user("after the reset: the pgbouncer pool timeout")
    s.assistant("raising server_idle_timeout fixed it")
    s.compaction("Pool timeout was the pgbouncer default.", u)
    return s


def make_db(path, sessions: dict[str, V3Session], nodes=(), windows=()) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    for sid, s in sessions.items():
        add_rows(con, sid, s.entries)
    for key, sid, entry in nodes:
        con.execute("INSERT INTO session_nodes VALUES (?,?,?,?)", (key, sid, json.dumps(entry), 1784883610000))
    for sid, key, name in windows:
        con.execute("INSERT INTO session_windows VALUES (?,?,NULL,NULL,1,1784883620000,?)", (sid, key, name))
    con.commit()
    con.close()
    return str(path)


def add_rows(con, sid, entries, start=0):
    for i, e in enumerate(entries, start):
        con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?,?,?,?)",
                    (sid, i, json.dumps(e), 1784538000000 + i))


def layout(home):
    """The default layout: a store with S1 (current for agent:main:main) and S2 (an old
    window of the same key), the old JSONL of S1 beside it, and JSONL-only S3 with its archive,
    a checkpoint, a deleted and a .bak file."""
    main_dir = home / ".openclaw" / "agents" / "main"
    db = make_db(main_dir / "agent" / "openclaw-agent.sqlite", {S1: first_session(), S2: second_session()},
                 nodes=[("agent:main:main", S1, {"sessionId": S1, "label": "Marmoset outage"})],
                 windows=[(S1, "agent:main:main", None), (S2, "agent:main:main", "Pool timeouts")])
    sessions = main_dir / "sessions"
    first_session().write(sessions / f"{S1}.jsonl")  # imported into the store: not discovered
    s3 = V3Session(S3, cwd="/home/dev/site")
    s3.user("render the okapi gallery")
    s3.assistant("Done.")
    s3.write(sessions / f"{S3}.jsonl")
    old = V3Session("0ld", cwd="/home/dev/site")
    old.user("archived chat about narwhals")
    old.write(sessions / "0ld.jsonl.reset.2026-07-01T00-00-00.000Z")
    old.write(sessions / f"{S3}.checkpoint.11111111-2222-4333-8444-555555555555.jsonl")
    old.write(sessions / "gone.jsonl.deleted.2026-07-01T00-00-00.000Z")
    old.write(sessions / f"{S3}.jsonl.bak")
    (sessions / "sessions.json").write_text(json.dumps({
        "agent:main:site": {"sessionId": S3, "updatedAt": 1784883610000, "displayName": "Okapi gallery"},
        "agent:main:main": {"sessionId": S1, "label": "stale legacy label"}}))
    return db, sessions


def test_registered():
    assert get_source("openclaw").__class__ is OpenClawSource


def test_discover_default_layout_and_env(tmp_path):
    home = tmp_path / "home"
    db, sessions = layout(home)
    found = [str(p) for p in SRC.discover({}, home)]
    assert found == [member_path(db, S1), member_path(db, S2),
                     str(sessions / "0ld.jsonl.reset.2026-07-01T00-00-00.000Z"), str(sessions / f"{S3}.jsonl")]
    assert SRC.roots({}, home) == [home / ".openclaw"]
    env = {"OPENCLAW_STATE_DIR": str(home / ".openclaw")}
    assert SRC.roots(env, tmp_path) == [home / ".openclaw"]
    assert [str(p) for p in SRC.discover(env, tmp_path / "elsewhere")] == found
    assert list(SRC.discover({}, tmp_path / "empty")) == []


def test_store_member_read(tmp_path):
    db, _ = layout(tmp_path)
    r = SRC.read(member_path(db, S1))
    got = [(m.role, m.label, m.tool_name, m.text) for m in r.messages]
    assert got[1:] == [(Role.ASSISTANT, "thinking", None, "check consumer"),
                       (Role.ASSISTANT, "assistant", None, "The consumer died."),
                       (Role.ASSISTANT, "tool-call:exec", "exec", '{"command": "ps aux"}'),
                       (Role.TOOL, "tool:exec", "exec", "PASSWORD=swordfish")]
    s = r.session
    assert (s.agent, s.session_id, s.project, s.path) == ("openclaw", S1, "/srv/bot", member_path(db, S1))
    assert s.title == "Marmoset outage" and s.extra["session_key"] == "agent:main:main"
    assert SRC.resume_command(s) == "cd /srv/bot && openclaw tui --session agent:main:main"
    assert r.end_offset == 5 and r.stats.skipped == 0
    assert SRC.stat(member_path(db, S1))[0] == 5
    for m in r.messages:  # the session view: one row by rowid
        assert SRC.message_text(SRC.load(s.path, m.offset, m.length), m.part, m.label) == m.text
    old = SRC.read(member_path(db, S2)).session
    assert old.title == "Pool timeouts" and old.summary == "Pool timeout was the pgbouncer default."
    assert "session_key" not in old.extra and SRC.resume_command(old) is None  # not the key's current session


def test_store_title_falls_back_to_first_prompt(tmp_path):
    db = make_db(tmp_path / "agents" / "a" / "agent" / "openclaw-agent.sqlite", {S1: first_session()})
    s = SRC.read(member_path(db, S1)).session
    assert s.title == "why is the marmoset queue stuck" and s.anchor_index == 0
    assert SRC.resume_command(s) is None


def test_store_incremental_rows(tmp_path):
    db, _ = layout(tmp_path)
    unit = member_path(db, S1)
    size, mtime, _ = SRC.stat(unit)
    head = SRC.fingerprint(unit, size)
    first = SRC.read(unit)
    more = V3Session(S1)
    more.leaf = first_session().leaf
    more.n = 10
    more.user("and the walrus backlog?")
    con = sqlite3.connect(db)
    add_rows(con, S1, more.entries[1:], start=5)
    con.commit()
    con.close()
    openclaw._SUMMARY.clear()
    size2, mtime2, _ = SRC.stat(unit)
    assert size2 == size + 1 and mtime2 > mtime and SRC.fingerprint(unit, size) == head  # as the index asks
    rest = SRC.read(unit, first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(5, "and the walrus backlog?")]
    assert rest.session.message_count == 6 and rest.end_offset == 6
    whole = SRC.read(unit)
    assert rest.session.to_state() == whole.session.to_state()


def test_an_event_blob_that_would_expand_past_a_line_s_cap_is_skipped(tmp_path):
    """A zstd bomb in ``event_zstd``: 20 MB of one byte, with and without the size in the frame
    header, compresses to a few kB. Neither is held in memory: both rows are skipped as
    undecodable, and the session's other messages are read."""
    import zstandard

    db = make_db(tmp_path / "agents" / "a" / "agent" / "openclaw-agent.sqlite", {S2: second_session()})
    con = sqlite3.connect(db)
    for seq, sized in ((90, True), (91, False)):
        blob = zstandard.ZstdCompressor(write_content_size=sized).compress(b" " * (20 << 20))
        assert len(blob) < 10_000
        con.execute("INSERT INTO transcript_events VALUES (?, ?, NULL, 1, ?)", (S2, seq, blob))
    con.commit()
    con.close()
    r = SRC.read(member_path(db, S2))
    assert len(r.messages) == 3 and r.stats.reasons == {"undecodable event_zstd": 2}


def test_store_broken_rows_and_databases(tmp_path):
    db = make_db(tmp_path / "agents" / "a" / "agent" / "openclaw-agent.sqlite", {S2: second_session()})
    con = sqlite3.connect(db)
    con.execute("INSERT INTO transcript_events VALUES (?, 90, '{\"type\":', 1, NULL)", (S2,))
    con.execute("INSERT INTO transcript_events VALUES (?, 91, NULL, 1, x'28b52ffd')", (S2,))
    con.commit()
    con.close()
    before = hashlib.sha1(open(db, "rb").read()).hexdigest()
    r = SRC.read(member_path(db, S2))
    assert len(r.messages) == 3 and r.stats.skipped == 2
    assert r.stats.reasons == {"broken JSON": 1, "undecodable event_zstd": 1}
    assert hashlib.sha1(open(db, "rb").read()).hexdigest() == before  # never written
    corrupt = tmp_path / "agents" / "b" / "agent" / "openclaw-agent.sqlite"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_bytes(b"not a database at all" * 100)
    empty = make_db(tmp_path / "agents" / "c" / "agent" / "openclaw-agent.sqlite", {})
    con = sqlite3.connect(empty)
    con.execute("DROP TABLE transcript_events")
    con.commit()
    con.close()
    env = {"OPENCLAW_STATE_DIR": str(tmp_path)}
    assert [str(p) for p in SRC.discover(env, tmp_path)] == [member_path(db, S2)]
    for bad in (str(corrupt), empty):
        r = SRC.read(member_path(bad, "x"))
        assert r.messages == [] and r.stats.reasons == {"database error": 1}
        with pytest.raises(OSError):
            SRC.stat(member_path(bad, "x"))
    with pytest.raises(FileNotFoundError):
        SRC.read(member_path(tmp_path / "missing" / "openclaw-agent.sqlite", "x"))


def test_jsonl_titles_resume_and_archives(tmp_path):
    _, sessions = layout(tmp_path)
    live = SRC.read(sessions / f"{S3}.jsonl").session
    assert live.title == "Okapi gallery" and live.session_id == S3 and live.project == "/home/dev/site"
    assert SRC.resume_command(live) == "cd /home/dev/site && openclaw tui --session agent:main:site"
    arch = SRC.read(sessions / "0ld.jsonl.reset.2026-07-01T00-00-00.000Z").session
    assert arch.session_id == "0ld" and arch.title == "archived chat about narwhals"
    assert SRC.resume_command(arch) is None


def test_jsonl_incremental(tmp_path):
    s = first_session()
    s.compaction("consumer restarted", s.leaf)
    s.branch("00000002")
    s.user("other branch")
    assert_incremental(SRC, s.data(), tmp_path / f"{S1}.jsonl")


def test_corpus_files():
    root = CORPUS / "openclaw"
    files = sorted(root.rglob("*.jsonl")) if root.is_dir() else []
    if not files:
        pytest.skip("corpus absent")
    for f in files:
        r = SRC.read(f)
        assert r.messages and r.stats.skipped == 0, f
        assert_read_back(SRC, f, r.messages)
    small = SRC.read(root / "agent-sessions_small.jsonl")
    assert small.session.session_id == "openclaw-stage0-small" and small.session.title == "List files"
    assert [m.label for m in small.messages] == ["user", "assistant", "tool-call:shell_exec", "tool:shell_exec"]
    large = SRC.read(root / "agent-sessions_large.jsonl")
    assert "off_branch" in large.session.extra and large.messages[-1].label == "tool:edit_file"
    assert large.session.extra["off_branch"] == [[0, 1]]  # the injected context on the model_change branch


def test_corpus_layout_end_to_end(tmp_path, capsys, monkeypatch):
    agents = CORPUS / "openclaw" / "deja-vu_agents"
    if not agents.is_dir():
        pytest.skip("corpus absent")
    home = tmp_path / "home"
    shutil.copytree(agents, home / ".openclaw" / "agents")
    found = list(SRC.discover({}, home))
    assert [p.name for p in found] == [f"{S1}.jsonl"]  # the checkpoint is skipped
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("OPENCLAW_STATE_DIR", raising=False)
    idx = str(tmp_path / "index")
    assert main(["--index-dir", idx, "index"]) == 0
    capsys.readouterr()
    assert main(["--index-dir", idx, "search", "--json", "conformance"]) == 0
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert (hit["agent"], hit["session_id"], hit["project"]) == ("openclaw", S1, "/workspace/registry-demo")
    assert hit["resume_command"] == "cd /workspace/registry-demo && openclaw tui --session agent:main:main"
    assert main(["--index-dir", idx, "search", "--json", "checkpoint"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"] == []


def test_end_to_end_cli(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    db, _ = layout(home)
    monkeypatch.setenv("HOME", str(home))
    for var in ("OPENCLAW_STATE_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    idx = str(tmp_path / "index")
    assert main(["--index-dir", idx, "index"]) == 0
    capsys.readouterr()

    def search(q):
        assert main(["--index-dir", idx, "search", "--json", q]) == 0
        return json.loads(capsys.readouterr().out)["hits"]

    [hit] = search("marmoset")  # in the store and in the old JSONL: found once
    assert (hit["agent"], hit["session_id"], hit["title"], hit["project"]) == (
        "openclaw", S1, "Marmoset outage", "/srv/bot")
    assert hit["resume_command"] == "cd /srv/bot && openclaw tui --session agent:main:main"
    [hit] = search("okapi")
    assert hit["title"] == "Okapi gallery" and hit["resume_command"].endswith("--session agent:main:site")
    assert [h["session_id"] for h in search("narwhals")] == ["0ld"]
    assert search("swordfish") == [] and [h["session_id"] for h in search("exec")] == [S1]
    assert main(["--index-dir", idx, "show", S1, "--json", "--no-redact"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [m["text"] for m in shown["messages"]][2:4] == ["The consumer died.", '{"command": "ps aux"}']
    assert main(["--index-dir", idx, "status", "--json"]) == 0
    oc = next(a for a in json.loads(capsys.readouterr().out)["agents"] if a["agent"] == "openclaw")
    assert oc["files_found"] == 4 and oc["sessions"] == 4
    # a new row in the store is picked up by the next refresh, without duplicating the rest
    con = sqlite3.connect(db)
    add_rows(con, S1, [{"type": "message", "id": "zz", "parentId": None, "timestamp": "2026-07-21T00:00:00Z",
                        "message": {"role": "user", "content": "the capybara follow-up"}}], start=5)
    con.commit()
    con.close()
    assert main(["--index-dir", idx, "index"]) == 0
    capsys.readouterr()
    [hit] = search("capybara")
    assert hit["session_id"] == S1 and hit["message_count"] == 6
    assert len(search("marmoset")) == 1


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaopenclaw`` no other session holds."""
    sid = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b0104"
    cwd = "/srv/clawbot"
    s = V3Session(sid, cwd=cwd, start=t)
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.user(prompt_of("openclaw"))
    s.assistant(reply_of("openclaw"))
    sessions = home / ".openclaw" / "agents" / "main" / "sessions"
    path = s.write(sessions / f"{sid}.jsonl")
    store = write_file(sessions / "sessions.json", json.dumps(
        {"agent:main:main": {"sessionId": sid, "updatedAt": ms(t), "label": "OpenClaw: worker stall"}}))
    return Expect("openclaw", sid, "OpenClaw: worker stall", cwd, f"cd {cwd} && openclaw tui --session agent:main:main",
                  "quokkaopenclaw", [prompt_of("openclaw"), reply_of("openclaw")], t, files=[path, store])

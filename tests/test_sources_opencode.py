"""OpencodeSource: ``opencode.db`` (SQLite, built here with opencode's schema) and the legacy
``storage/`` JSON layout (written here file by file), under a temp HOME."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from crabsearch.index.documents import index_text_fields
from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import member_path
from crabsearch.sources.opencode import OpencodeSource
from source_checks import CORPUS, cli_ok, key
from datetime import timedelta
from datetime import datetime
from all_agents import Expect, ms, prompt_of, reply_of

SRC = OpencodeSource()
T0 = 1773482400000  # 2026-03-14T10:00:00Z in ms

SCHEMA = """
create table project (id text primary key, worktree text);
create table session (id text primary key, project_id text not null, parent_id text, slug text not null,
  directory text not null, title text not null, version text not null, time_created integer not null,
  time_updated integer not null, time_archived integer);
create table message (id text primary key, session_id text not null, time_created integer not null,
  time_updated integer not null, data text not null);
create table part (id text primary key, message_id text not null, session_id text not null,
  time_created integer not null, time_updated integer not null, data text not null);
"""


class Db:
    """An ``opencode.db`` written the way opencode does (ids outside ``data``)."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.con() as con:
            con.executescript(SCHEMA)
        self.n = 0

    def con(self):
        return _Closing(sqlite3.connect(self.path))

    def session(self, sid, title, directory="/home/dev/oc app", parent=None, t=T0):
        with self.con() as con:
            con.execute("insert into session values (?,?,?,?,?,?,?,?,?,null)",
                        (sid, "proj1", parent, "slug", directory, title, "1.4.0", t, t))
        return self

    def message(self, sid, role, *parts, completed=True, summary=None, **fields):
        """Message ``msg_<n>`` with ``parts``; ``fields`` go into its ``data`` (``parentID``...)."""
        self.n += 1
        mid, t = f"msg_{self.n:04d}", T0 + self.n * 1000
        info = {"role": role, "time": {"created": t}}
        if role == "assistant":
            info.update({"modelID": "m", "providerID": "p", "path": {"cwd": "/home/dev/oc app", "root": "/"}})
            if completed:
                info["time"]["completed"] = t + 500
            if summary:
                info["summary"] = True
        info.update(fields)
        with self.con() as con:
            con.execute("insert into message values (?,?,?,?,?)", (mid, sid, t, t, json.dumps(info)))
            for i, p in enumerate(parts):
                con.execute("insert into part values (?,?,?,?,?,?)",
                            (f"prt_{self.n:04d}_{i}", mid, sid, t, t, p if isinstance(p, str) else json.dumps(p)))
            con.execute("update session set time_updated = ? where id = ?", (t, sid))
        return mid

    def complete(self, mid, part_id, part):
        with self.con() as con:
            row = con.execute("select data from message where id = ?", (mid,)).fetchone()
            info = json.loads(row[0])
            info["time"]["completed"] = info["time"]["created"] + 900
            con.execute("update message set data = ?, time_updated = time_updated + 900 where id = ?",
                        (json.dumps(info), mid))
            con.execute("update part set data = ?, time_updated = time_updated + 900 where id = ?",
                        (json.dumps(part), part_id))


class _Closing:
    def __init__(self, con):
        self.c = con

    def __enter__(self):
        return self.c

    def __exit__(self, *exc):
        if not exc[0]:
            self.c.commit()
        self.c.close()


def text(t, **kw):
    return {"type": "text", "text": t, "time": {"start": T0}, **kw}


def tool(name, inp, out=None, status="completed"):
    state = {"status": status, "input": inp, "time": {"start": T0}}
    if out is not None:
        state["output" if status == "completed" else "error"] = out
    return {"type": "tool", "callID": "call_1", "tool": name, "state": state}


def build_db(root: Path) -> Db:
    db = Db(root / "opencode.db")
    db.session("ses_main", "Fix the zorbulon cache eviction")
    db.message("ses_main", "user", text("why does the zorbulon cache evict hot keys?"),
               {"type": "file", "mime": "text/plain", "filename": "a.py", "url": "file:///a.py"})
    db.message("ses_main", "assistant", {"type": "step-start"}, {"type": "reasoning", "text": "probably LRU sizing"},
               text("The LRU size is too small."),
               tool("bash", {"command": "cat .env"}, "TOKEN=sk-live-hidden123"), {"type": "step-finish"})
    db.message("ses_main", "user", {"type": "compaction", "auto": True})
    db.message("ses_main", "assistant", text("Summary: we grew the zorbulon LRU to 4096."), summary=True)
    db.message("ses_main", "user", text("now add a metric"),
               text("Called the Read tool with the following input", synthetic=True))
    db.session("ses_child", "Child session - 2026-03-14T10:05:00.000Z", parent="ses_main")
    db.message("ses_child", "user", text("look for quasselbrand usages"))
    db.message("ses_child", "assistant", tool("grep", {"pattern": "x"}, "no such file", status="error"))
    db.session("ses_empty", "New session - 2026-03-14T11:00:00.000Z")
    return db


@pytest.fixture
def dbroot(tmp_path):
    root = tmp_path / "xdg" / "opencode"
    return root, build_db(root)


def unit(db: Db, sid: str) -> Path:
    return Path(member_path(db.path, sid))


def test_registered_and_named():
    assert get_source("opencode").__class__ is OpencodeSource
    assert (SRC.agent, SRC.display) == ("opencode", "opencode")


def test_db_messages_roles_labels(dbroot):
    _, db = dbroot
    r = SRC.read(unit(db, "ses_main"))
    got = [(m.role, m.label, m.text, m.tool_name) for m in r.messages]
    assert got == [
        (Role.USER, "user", "why does the zorbulon cache evict hot keys?", None),
        (Role.ASSISTANT, "thinking", "probably LRU sizing", None),
        (Role.ASSISTANT, "assistant", "The LRU size is too small.", None),
        (Role.ASSISTANT, "tool-call:bash", '{"command": "cat .env"}', "bash"),
        (Role.TOOL, "tool:bash", "TOKEN=sk-live-hidden123", "bash"),
        (Role.SUMMARY, "summary", "Summary: we grew the zorbulon LRU to 4096.", None),
        (Role.USER, "user", "now add a metric", None),
        (Role.SYSTEM, "system", "Called the Read tool with the following input", None),
    ]
    assert [m.message_index for m in r.messages] == list(range(8))
    assert r.messages[1].is_thinking and r.messages[3].is_tool_payload and r.messages[4].is_tool_payload
    assert r.stats.skipped == 0 and r.end_offset == max(m.offset for m in r.messages)
    for m in r.messages:  # the display path: one part row read back
        assert SRC.message_text(SRC.load(str(unit(db, "ses_main")), m.offset, m.length), m.part, m.label) == m.text


def test_db_session_fields(dbroot):
    _, db = dbroot
    s = SRC.read(unit(db, "ses_main")).session
    assert (s.agent, s.session_id, s.title, s.project) == (
        "opencode", "ses_main", "Fix the zorbulon cache eviction", "/home/dev/oc app")
    assert s.summary == "Summary: we grew the zorbulon LRU to 4096."
    assert s.started.isoformat() == "2026-03-14T10:00:00+00:00"
    assert s.updated.isoformat() == "2026-03-14T10:00:05+00:00"
    assert (s.message_count, s.anchor_index, s.parent_session_id) == (8, 0, None)
    assert SRC.resume_command(s) == "cd '/home/dev/oc app' && opencode '/home/dev/oc app' --session ses_main"
    child = SRC.read(unit(db, "ses_child")).session
    assert child.title == "look for quasselbrand usages"  # placeholder title -> first prompt
    assert child.parent_session_id == "ses_main"
    empty = SRC.read(unit(db, "ses_empty"))
    assert empty.session.title is None and empty.messages == []  # the indexer skips it


def test_db_tool_error_is_result(dbroot):
    _, db = dbroot
    msgs = SRC.read(unit(db, "ses_child")).messages
    assert [(m.role, m.label, m.text) for m in msgs[1:]] == [
        (Role.ASSISTANT, "tool-call:grep", '{"pattern": "x"}'), (Role.TOOL, "tool:grep", "no such file")]


def test_db_incremental_rows_and_running_message(dbroot):
    _, db = dbroot
    u = unit(db, "ses_main")
    first = SRC.read(u)
    size, mtime, _ = SRC.stat(str(u))
    head = SRC.fingerprint(str(u), size)
    state = json.loads(json.dumps(first.state))
    # A new turn: the assistant message is still running (not committed).
    db.message("ses_main", "user", text("and the glimmerfax dashboard"))
    mid = db.message("ses_main", "assistant", text("Working on the glimmer"), completed=False)
    size2, mtime2, _ = SRC.stat(str(u))
    assert size2 > size and mtime2 > mtime and SRC.fingerprint(str(u), size) == head
    second = SRC.read(u, first.end_offset, state)
    assert [(m.message_index, m.text) for m in second.messages] == [
        (8, "and the glimmerfax dashboard"), (9, "Working on the glimmer")]
    state2 = json.loads(json.dumps(second.state))
    assert state2["next_index"] == 9  # the running message is yielded, not committed
    db.complete(mid, f"prt_{db.n:04d}_0", text("Working on the glimmerfax dashboard: done"))
    size3, mtime3, _ = SRC.stat(str(u))
    assert size3 == size2 and mtime3 > mtime2 and SRC.fingerprint(str(u), size2) == SRC.fingerprint(str(u), size2)
    third = SRC.read(u, second.end_offset, state2)
    assert [(m.message_index, m.text) for m in third.messages] == [(9, "Working on the glimmerfax dashboard: done")]
    whole = SRC.read(u)
    got = [key(m) for m in first.messages + second.messages[:1] + third.messages]
    assert got == [key(m) for m in whole.messages]
    assert third.session.to_state() == whole.session.to_state()


def test_db_revert_changes_fingerprint(dbroot):
    _, db = dbroot
    u = str(unit(db, "ses_main"))
    size = SRC.stat(u)[0]
    head = SRC.fingerprint(u, size)
    with db.con() as con:
        con.execute("delete from part where id = (select max(id) from part where session_id = 'ses_main')")
    assert SRC.fingerprint(u, size) != head  # the indexer re-reads it from the start


def test_db_is_opened_read_only(dbroot):
    root, db = dbroot
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    for u in SRC.discover({"XDG_DATA_HOME": str(root.parent)}, root):
        r = SRC.read(u)
        for m in r.messages:
            SRC.load(str(u), m.offset, m.length)
        SRC.fingerprint(str(u), SRC.stat(str(u))[0])
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before


def test_db_broken_rows_and_missing_table(tmp_path):
    db = Db(tmp_path / "opencode" / "opencode.db")
    db.session("ses_b", "Broken rows")
    db.message("ses_b", "user", "{not json", text("the good kestrelpod row"))
    r = SRC.read(unit(db, "ses_b"))
    assert [m.text for m in r.messages] == ["the good kestrelpod row"]
    assert r.stats.skipped == 1 and r.stats.reasons == {"broken JSON": 1}
    with db.con() as con:
        con.execute("drop table part")
    r = SRC.read(unit(db, "ses_b"))
    assert r.messages == [] and r.stats.skipped == 1
    assert "no such table: part" in next(iter(r.stats.reasons))
    assert r.session.title == "Broken rows"
    u = str(unit(db, "ses_b"))
    assert SRC.stat(u)[0] == 0 and SRC.fingerprint(u, 0)  # still a unit, so its error is counted
    from crabsearch.index import Indexer
    from crabsearch.index.status import collect

    ix = Indexer(tmp_path / "index", env={"XDG_DATA_HOME": str(tmp_path)}, home=tmp_path)
    report = ix.refresh()
    assert report.skipped_lines == 1 and not report.errors
    [skipped] = collect(ix).skipped_files
    assert skipped["path"] == u and skipped["skipped"] == 1


def test_corrupt_or_tableless_db_is_a_counted_unit(tmp_path):
    root = tmp_path / "opencode"
    root.mkdir()
    (root / "opencode.db").write_bytes(b"this is not a sqlite database at all" * 100)
    [u] = SRC.discover({"XDG_DATA_HOME": str(tmp_path)}, tmp_path)
    assert u == root / "opencode.db"
    r = SRC.read(u)
    assert r.messages == [] and r.stats.skipped == 1 and r.session.title is None
    (root / "opencode.db").unlink()
    sqlite3.connect(root / "opencode.db").close()  # an empty database: no session table
    assert list(SRC.discover({"XDG_DATA_HOME": str(tmp_path)}, tmp_path)) == [root / "opencode.db"]
    with pytest.raises(OSError):
        SRC.read(tmp_path / "gone" / "opencode.db")
    with pytest.raises(OSError):  # the indexer treats it as gone
        SRC.stat(member_path(root / "opencode.db", "ses_x"))


# -- legacy storage ----------------------------------------------------------------------------


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return path


def build_legacy(root: Path, sid="ses_leg1", title="Port the quibbleworth parser", directory="/home/dev/legacy"):
    st = root / "storage"
    f = write_json(st / "session" / "proj1" / f"{sid}.json", {
        "id": sid, "version": "0.5.1", "projectID": "proj1", "directory": directory, "title": title,
        "time": {"created": T0, "updated": T0 + 9000}})
    write_json(st / "message" / sid / "msg_0001.json", {
        "id": "msg_0001", "sessionID": sid, "role": "user", "time": {"created": T0 + 1000},
        "summary": {"title": "old summary title", "body": "old summary body"}})
    write_json(st / "part" / "msg_0001" / "prt_0001.json", {
        "id": "prt_0001", "sessionID": sid, "messageID": "msg_0001", "type": "text",
        "text": "port the quibbleworth parser to rust"})
    write_json(st / "message" / sid / "msg_0002.json", {
        "id": "msg_0002", "sessionID": sid, "role": "assistant", "time": {"created": T0 + 2000, "completed": T0 + 3000}})
    write_json(st / "part" / "msg_0002" / "prt_0002.json", {
        "id": "prt_0002", "messageID": "msg_0002", "type": "reasoning", "text": "nom or pest"})
    write_json(st / "part" / "msg_0002" / "prt_0003.json", {
        "id": "prt_0003", "messageID": "msg_0002", "type": "tool", "callID": "c1", "tool": "read",
        "state": {"status": "completed", "input": {"filePath": "/x"}, "output": "secret-ish content",
                  "time": {"start": T0 + 2500, "end": T0 + 2600}}})
    write_json(st / "part" / "msg_0002" / "prt_0004.json", {
        "id": "prt_0004", "messageID": "msg_0002", "type": "text", "text": "Use pest grammars."})
    # an older message: the user text only in summary, no parts
    write_json(st / "message" / sid / "msg_0003.json", {
        "id": "msg_0003", "sessionID": sid, "role": "user", "time": {"created": T0 + 4000},
        "summary": {"title": "also the tokenizer"}})
    return f


def test_legacy_parse_and_read_back(tmp_path):
    f = build_legacy(tmp_path / "opencode")
    r = SRC.read(f)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "port the quibbleworth parser to rust"),
        (Role.ASSISTANT, "thinking", "nom or pest"),
        (Role.ASSISTANT, "tool-call:read", '{"filePath": "/x"}'),
        (Role.TOOL, "tool:read", "secret-ish content"),
        (Role.ASSISTANT, "assistant", "Use pest grammars."),
        (Role.USER, "user", "also the tokenizer"),
    ]
    s = r.session
    assert (s.session_id, s.title, s.project, s.message_count) == (
        "ses_leg1", "Port the quibbleworth parser", "/home/dev/legacy", 6)
    assert s.started.isoformat() == "2026-03-14T10:00:00+00:00" and s.updated.isoformat() == "2026-03-14T10:00:09+00:00"
    assert r.end_offset == 0 and r.stats.skipped == 0
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(f), m.offset, m.length), m.part, m.label) == m.text


def test_legacy_growth_changes_stat_and_broken_files_counted(tmp_path):
    f = build_legacy(tmp_path / "opencode")
    size, mtime, _ = SRC.stat(str(f))
    st = tmp_path / "opencode" / "storage"
    write_json(st / "part" / "msg_0003" / "prt_0009.json", "{broken")
    write_json(st / "message" / "ses_leg1" / "msg_0004.json", {
        "id": "msg_0004", "sessionID": "ses_leg1", "role": "user", "time": {"created": T0 + 5000}})
    write_json(st / "part" / "msg_0004" / "prt_0010.json", {"id": "prt_0010", "type": "text", "text": "and the lexer"})
    write_json(st / "message" / "ses_leg1" / "msg_0005.json", "not json")
    assert SRC.stat(str(f))[0] > size
    r = SRC.read(f)
    assert r.stats.skipped == 2
    assert [m.text for m in r.messages][-1] == "and the lexer"
    assert "also the tokenizer" not in [m.text for m in r.messages]  # msg_0003 now has a (broken) part
    write_json(f, "{")
    r = SRC.read(f)
    assert r.messages == [] and r.stats.skipped == 1


# -- a command the person ran (``!``) ----------------------------------------------------------
# opencode's ``shell`` (packages/opencode/src/session/prompt.ts; read in the bundles of
# opencode-ai 0.5.29, 1.0.61, 1.1.11 and 1.18.33 on npm, sst/opencode 00d0a710e3c9): a user
# message whose one part is the synthetic MARKER, then an assistant message (parentID from 1.0;
# modelID and providerID "" up to 1.0.x, the session's model from 1.1) with one bash tool part.
# opencode appends stdout and stderr to one ``output``.

MARKER = "The following tool was executed by the user"


def shell_part(command: str, output: str) -> dict:
    """The ``bash`` tool part ``shell`` completes (``title: ""``, ``metadata {output, description}``)."""
    return {"type": "tool", "tool": "bash", "callID": "01JQ8Z6V4K2M9XWT3R5B7N1C0D",
            "state": {"status": "completed", "time": {"start": T0, "end": T0 + 400}, "input": {"command": command},
                      "title": "", "metadata": {"output": output, "description": ""}, "output": output}}


def db_shell(db: Db, sid: str, command: str, output: str) -> tuple[str, str]:
    """A ``!command`` as opencode >= 1.1 writes it: (marker message id, command message id)."""
    user = db.message(sid, "user", text(MARKER, synthetic=True), agent="build",
                      model={"providerID": "anthropic", "modelID": "claude-sonnet-4"})
    ran = db.message(sid, "assistant", shell_part(command, output), parentID=user, mode="build", agent="build",
                     cost=0, modelID="claude-sonnet-4", providerID="anthropic")
    return user, ran


def test_db_user_shell_command_is_the_persons_text_and_its_output_tool_output(tmp_path):
    """opencode >= 1.1: ``! command`` is the person's text (user field, never the title), its
    output (stdout and stderr in one stream) a bash-mode tool result; it was a tool call of the
    assistant. The marker read in an earlier call still marks the command read later."""
    db = Db(tmp_path / "opencode" / "opencode.db")
    db.session("ses_sh", "New session - 2026-03-14T10:00:00.000Z")
    db_shell(db, "ses_sh", "pnpm test --filter api", "PASS api/user.test.ts\nError: connect ECONNREFUSED 127.0.0.1:5432\n")
    db.message("ses_sh", "user", text("why is postgres refusing the pnpm test connection?"))
    u = unit(db, "ses_sh")
    r = SRC.read(u)
    got = [(m.role, m.label, m.text, m.tool_name) for m in r.messages]
    assert got == [
        (Role.SYSTEM, "system", MARKER, None),
        (Role.USER, "user", "! pnpm test --filter api", None),
        (Role.TOOL, "tool:bash-mode", "PASS api/user.test.ts\nError: connect ECONNREFUSED 127.0.0.1:5432", "bash-mode"),
        (Role.USER, "user", "why is postgres refusing the pnpm test connection?", None)]
    assert index_text_fields(r.messages[1]) == {"user": "! pnpm test --filter api"}
    assert index_text_fields(r.messages[2]) == {"tool": "bash-mode"}  # its text only with tool output on
    assert index_text_fields(r.messages[2], tool_output=True)["tool_output"].endswith("127.0.0.1:5432")
    assert r.session.title == "why is postgres refusing the pnpm test connection?" and r.session.anchor_index == 3
    for m in r.messages:  # the display path: load finds the marker in the parent's parts
        assert SRC.message_text(SRC.load(str(u), m.offset, m.length), m.part, m.label) == m.text
    state = json.loads(json.dumps(r.state))
    db.message("ses_sh", "user", text(MARKER, synthetic=True))
    later = SRC.read(u, r.end_offset, state)
    state = json.loads(json.dumps(later.state))
    db.message("ses_sh", "assistant", shell_part("git push origin main", "rejected: non-fast-forward"),
               parentID=f"msg_{db.n:04d}")
    last = SRC.read(u, later.end_offset, state)
    assert [(m.role, m.label, m.text) for m in last.messages] == [
        (Role.USER, "user", "! git push origin main"), (Role.TOOL, "tool:bash-mode", "rejected: non-fast-forward")]
    only = Db(tmp_path / "only" / "opencode.db")
    only.session("ses_only", "New session - 2026-03-14T10:00:00.000Z")
    db_shell(only, "ses_only", "ls -la", "total 0")
    assert SRC.read(unit(only, "ses_only")).session.title is None  # a command is no prompt


def test_db_user_shell_command_whose_marker_a_session_message_row_holds(tmp_path):
    """A session with V2 ``session_message`` rows (rule 14): the marker message, held by such a
    row, is not read twice, yet the command's message it answers is still the person's text,
    read and loaded alike."""
    db = Db(tmp_path / "opencode" / "opencode.db")
    db.session("ses_v2", "Ship the ledger export")
    user, _ = db_shell(db, "ses_v2", "npm run build", "Error: Cannot find module 'vite'")
    with db.con() as con:
        con.execute("create table session_message (id text primary key, session_id text not null, type text not null, "
                    "seq integer not null, time_created integer not null, time_updated integer not null, "
                    "data text not null)")
        con.execute("insert into session_message values (?,?,?,?,?,?,?)", (user, "ses_v2", "synthetic", 1, T0, T0,
                                                                            json.dumps({"text": MARKER})))
    u = unit(db, "ses_v2")
    r = SRC.read(u)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "! npm run build"), (Role.TOOL, "tool:bash-mode", "Error: Cannot find module 'vite'"),
        (Role.SYSTEM, "system", MARKER)]
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(u), m.offset, m.length), m.part, m.label) == m.text


def test_legacy_user_shell_command_of_older_builds(tmp_path):
    """opencode 0.5.29 (no parentID) and 1.0.61 (parentID): the command's assistant message has
    ``modelID`` and ``providerID`` ``""``. A model's own bash call stays a tool call."""
    f = build_legacy(tmp_path / "opencode")
    st = tmp_path / "opencode" / "storage"
    for n, command, output, parent in ((5, "cat .env.local", "DATABASE_URL=postgres://app@db/app", None),
                                       (7, "make migrate", "make: *** [migrate] Error 1", "msg_0006")):
        if parent:
            write_json(st / "message" / "ses_leg1" / f"{parent}.json", {
                "id": parent, "sessionID": "ses_leg1", "role": "user", "time": {"created": T0 + n * 1000}})
            write_json(st / "part" / parent / "prt_0060.json", {
                "id": "prt_0060", "messageID": parent, "type": "text", "text": MARKER, "synthetic": True})
        mid = f"msg_{n:04d}"
        write_json(st / "message" / "ses_leg1" / f"{mid}.json", {
            "id": mid, "sessionID": "ses_leg1", "role": "assistant", "mode": "build", "cost": 0,
            "time": {"created": T0 + n * 1000 + 10, "completed": T0 + n * 1000 + 500}, "modelID": "", "providerID": "",
            **({"parentID": parent} if parent else {})})
        write_json(st / "part" / mid / f"prt_{n:04d}.json", {"id": f"prt_{n:04d}", "messageID": mid,
                                                             **shell_part(command, output)})
    r = SRC.read(f)
    assert [(m.role, m.label, m.text) for m in r.messages[6:]] == [
        (Role.USER, "user", "! cat .env.local"), (Role.TOOL, "tool:bash-mode", "DATABASE_URL=postgres://app@db/app"),
        (Role.SYSTEM, "system", MARKER),
        (Role.USER, "user", "! make migrate"), (Role.TOOL, "tool:bash-mode", "make: *** [migrate] Error 1")]
    assert r.messages[2].label == "tool-call:read" and r.session.title == "Port the quibbleworth parser"
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(f), m.offset, m.length), m.part, m.label) == m.text


def test_discover_env_default_and_dedup(tmp_path):
    home = tmp_path / "home"
    default = home / ".local" / "share" / "opencode"
    leg = build_legacy(default)
    dup = build_legacy(default, sid="ses_main")
    db = build_db(default)
    assert SRC.roots({}, home) == [default]
    found = list(SRC.discover({}, home))
    assert found == [unit(db, s) for s in ("ses_child", "ses_empty", "ses_main")] + [leg]
    assert dup not in found
    xdg = tmp_path / "xdg"
    other = build_legacy(xdg / "opencode", sid="ses_x")
    assert SRC.roots({"XDG_DATA_HOME": str(xdg)}, home) == [xdg / "opencode"]
    assert list(SRC.discover({"XDG_DATA_HOME": str(xdg)}, home)) == [other]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


# -- corpus ------------------------------------------------------------------------------------


def test_corpus_files_read(tmp_path):
    base = CORPUS / "others" / "opencode"
    if not base.is_dir():
        pytest.skip("corpus absent")
    files = sorted((base / "storage" / "session").glob("*/*.json"))
    assert files
    r = SRC.read(files[0])
    assert (r.session.session_id, r.session.title, r.session.project) == ("s_stage0_small", "OpenCode Small", "/tmp/repo")
    assert [(m.role, m.text) for m in r.messages] == [(Role.USER, "Hello")]
    db = tmp_path / "opencode.db"
    with _Closing(sqlite3.connect(db)) as con:
        con.executescript((base / "opencode.sql").read_text())
    u = Path(member_path(db, "registry-opencode"))
    r = SRC.read(u)
    assert r.stats.skipped == 0
    assert [(m.role, m.text) for m in r.messages] == [
        (Role.USER, "inspect the sqlite fixture"), (Role.ASSISTANT, "the sqlite rows are readable")]
    assert (r.session.title, r.session.project) == ("inspect the sqlite fixture", "/workspace/registry-demo")
    assert SRC.stat(str(u))[0] == 2


# -- end to end --------------------------------------------------------------------------------


run = cli_ok  # stdout; the exit code must be 0


def test_end_to_end_cli(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    root = home / ".local" / "share" / "opencode"
    build_db(root)
    build_legacy(root)
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    index = str(tmp_path / "index")
    run(capsys, "--index-dir", index, "index")
    hits = json.loads(run(capsys, "--index-dir", index, "search", "--json", "zorbulon"))["hits"]
    assert [(h["agent"], h["session_id"]) for h in hits] == [("opencode", "ses_main")]
    h = hits[0]
    assert h["title"] == "Fix the zorbulon cache eviction" and h["project"] == "/home/dev/oc app"
    assert h["resume_command"] == "cd '/home/dev/oc app' && opencode '/home/dev/oc app' --session ses_main"
    [leg] = json.loads(run(capsys, "--index-dir", index, "search", "--json", "quibbleworth"))["hits"]
    assert (leg["agent"], leg["session_id"], leg["project"]) == ("opencode", "ses_leg1", "/home/dev/legacy")
    [child] = json.loads(run(capsys, "--index-dir", index, "search", "--json", "quasselbrand"))["hits"]
    assert child["title"] == "look for quasselbrand usages"
    # tool payloads are not indexed, tool names are
    assert json.loads(run(capsys, "--index-dir", index, "search", "--json", "hidden123"))["hits"] == []
    status = json.loads(run(capsys, "--index-dir", index, "status", "--json"))
    assert "opencode" in json.dumps(status)
    page = json.loads(run(capsys, "--index-dir", index, "show", "ses_main", "--json"))
    texts = [m["text"] for m in page["messages"]]
    assert "The LRU size is too small." in texts and "probably LRU sizing" in texts


def test_indexer_incremental_no_duplicates(tmp_path):
    from crabsearch.index import Indexer
    from crabsearch.search import Engine

    root = tmp_path / "home" / ".local" / "share" / "opencode"
    db = build_db(root)
    index = tmp_path / "index"
    env = {"HOME": str(tmp_path / "home")}
    Indexer(index, env=env).refresh()
    db.message("ses_main", "user", text("what about the frobnitzel timeout"))
    report = Indexer(index, env=env).refresh()
    assert report.files_read == 1 and report.messages_added == 1  # only the new row
    engine = Engine(index)
    [hit] = engine.search("frobnitzel").hits
    assert hit.session.session_id == "ses_main" and hit.session.message_count == 9
    assert len(engine.search("zorbulon").hits) == 1
    ref = engine.find_session("ses_main")
    page = engine.page(ref, 0, 50)
    assert [m.text for m in page.messages][-1] == "what about the frobnitzel timeout"
    assert len(page.messages) == 9


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaopencode`` no other session holds."""
    sid = "ses_0106allagents"
    cwd = "/home/dev/oc app"
    path = home / ".local" / "share" / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    t0, t1 = ms(t), ms(t + timedelta(minutes=1))
    con.execute("insert into project values (?, ?)", ("proj1", cwd))
    con.execute("insert into session values (?,?,?,?,?,?,?,?,?,null)",
                (sid, "proj1", None, "quiet-quokka", cwd, "opencode: worker stall", "1.4.0", t0, t1))
    user_info = {"role": "user", "time": {"created": t0}}
    bot_info = {"role": "assistant", "time": {"created": t1, "completed": t1 + 500}, "modelID": "m",
                "providerID": "p", "path": {"cwd": cwd, "root": cwd}}
    for mid, when, info, parts in (
            ("msg_0001", t0, user_info, [{"type": "text", "text": prompt_of("opencode")}]),
            ("msg_0002", t1, bot_info, [{"type": "step-start"}, {"type": "text", "text": reply_of("opencode")},
                                        {"type": "step-finish"}])):
        con.execute("insert into message values (?,?,?,?,?)", (mid, sid, when, when, json.dumps(info)))
        for i, part in enumerate(parts):
            con.execute("insert into part values (?,?,?,?,?,?)",
                        (f"prt_{mid[4:]}_{i}", mid, sid, when, when, json.dumps(part)))
    con.commit()
    con.close()
    return Expect("opencode", sid, "opencode: worker stall", cwd, f"cd '{cwd}' && opencode '{cwd}' --session {sid}",
                  "quokkaopencode", [prompt_of("opencode"), reply_of("opencode")], t, files=[path])

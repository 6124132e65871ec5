"""CrushSource: ``crush.db`` written here with Crush's own migrations (charmbracelet/crush
``internal/db/migrations/*.sql`` at 37f36e93824e; ``parts`` as ``marshalParts`` writes them) in a
project's ``.crush`` data directory, found through ``projects.json``, under a temp HOME."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.base import member_path
from crabsearch.sources.crush import CrushSource

from all_agents import Expect, prompt_of, reply_of, write_file
from secret_samples import _GHP
from source_checks import key
from store_checks import Seen, committed, end_to_end

SRC = CrushSource()
SID = "5d1c2e3f-4a5b-4c6d-8e7f-901234567890"
T0 = 1773482400  # 2026-03-14T10:00:00Z in seconds, as strftime('%s', 'now') writes it

SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0, updated_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages
BEGIN UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
"""


def part(kind, **data):
    return {"type": kind, "data": data}


def finish(reason="end_turn", t=T0, **kw):
    return part("finish", reason=reason, time=t, **kw)


class Db:
    """A ``crush.db`` as Crush writes it."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.con() as con:
            con.executescript(SCHEMA)
        self.n = 0

    def con(self):
        return committed(self.path)

    def session(self, sid=SID, title="Fix the flaky snorkel test", parent=None, t=T0):
        with self.con() as con:
            con.execute("INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at) VALUES (?,?,?,?,?)",
                        (sid, parent, title, t, t))
        return self

    def message(self, role, *parts, sid=SID, summary=False, finished=None, raw=None):
        self.n += 1
        t = T0 + self.n
        if finished is None:
            finished = t if any(p.get("type") == "finish" for p in parts) else None
        with self.con() as con:
            con.execute("INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, "
                        "finished_at, provider, is_summary_message) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (f"m-{self.n:03d}", sid, role, raw if raw is not None else json.dumps(list(parts)), "m", t, t,
                         finished, "p", int(summary)))
            con.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (t, sid))
        return f"m-{self.n:03d}"

    def update(self, mid, *parts):
        with self.con() as con:
            con.execute("UPDATE messages SET parts = ?, finished_at = ?, updated_at = updated_at + 1 WHERE id = ?",
                        (json.dumps(list(parts)), T0 + 99, mid))


def build(project: Path) -> Db:
    db = Db(project / ".crush" / "crush.db").session()
    db.message("user", part("text", text=f"why is the snorkel test flaky? token {_GHP}"),
               part("binary", path="a.png", mime_type="image/png", data="AAAA"))
    db.message("assistant", part("reasoning", thinking="a race on the temp dir", signature="s"),
               part("text", text="Let me run it."),
               part("tool_call", id="tc1", name="bash", input='{"command":"go test ./snorkel"}', finished=True),
               finish("tool_use"))
    db.message("tool", part("tool_result", tool_call_id="tc1", name="bash", content="FAIL wobblestring"))
    db.message("assistant", part("text", text="The temp dir is shared; I made it per test."), finish())
    db.message("user", part("shell_command", command="git status", output="clean", exit_code=0))
    db.message("assistant", part("text", text="Summary: per-test temp dirs fixed the snorkel flake."),
               finish(), summary=True)
    db.message("assistant", finish("error", message="provider overloaded"))
    db.message("user", part("future_part", x=1), part("text", text="thanks"))
    db.message("user", raw="[broken")
    db.message("moderator", part("text", text="a role Crush does not write"))
    db.session("tc9", "Find the flaky tests", parent=SID)
    db.message("user", part("text", text="find flaky tests"), sid="tc9")
    db.session(f"title-{SID}", "Generate a title", parent=SID)
    db.message("user", part("text", text="title this"), sid=f"title-{SID}")
    return db


def unit(project: Path, sid=SID) -> Path:
    return Path(member_path(project / ".crush" / "crush.db", sid))


def test_registered():
    assert SOURCES["crush"].__class__ is CrushSource


def test_messages_roles_labels_and_counts(tmp_path):
    project = tmp_path / "snorkel"
    build(project)
    r = SRC.read(unit(project))
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", f"why is the snorkel test flaky? token {_GHP}", None),
        (Role.ASSISTANT, "thinking", "a race on the temp dir", None),
        (Role.ASSISTANT, "assistant", "Let me run it.", None),
        (Role.ASSISTANT, "tool-call:bash", '{"command":"go test ./snorkel"}', "bash"),
        (Role.TOOL, "tool:bash", "FAIL wobblestring", "bash"),
        (Role.ASSISTANT, "assistant", "The temp dir is shared; I made it per test.", None),
        (Role.USER, "user", "! git status", None),
        (Role.TOOL, "tool:shell", "clean", "shell"),
        (Role.SUMMARY, "summary", "Summary: per-test temp dirs fixed the snorkel flake.", None),
        (Role.SYSTEM, "system", "provider overloaded", None),
        (Role.USER, "user", "thanks", None),
    ]
    assert r.stats.reasons == {"broken JSON": 1}
    assert r.state["unknown_kinds"] == {"future_part": 1, "moderator": 1}
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(unit(project)), m.offset, m.length), m.part, m.label) == m.text


def test_session_fields_task_sessions_and_resume(tmp_path):
    project = tmp_path / "snorkel"
    build(project)
    s = SRC.read(unit(project)).session
    assert (s.session_id, s.title, s.project, s.parent_session_id) == (
        SID, "Fix the flaky snorkel test", str(project), None)
    assert s.summary == "Summary: per-test temp dirs fixed the snorkel flake." and s.extra["compactions"] == [8]
    assert s.started == datetime(2026, 3, 14, 10, 0, tzinfo=timezone.utc)
    assert s.updated == datetime(2026, 3, 14, 10, 0, 10, tzinfo=timezone.utc)
    assert SRC.resume_command(s) == f"cd {project} && crush --session {SID}"
    child = SRC.read(unit(project, "tc9")).session
    assert (child.parent_session_id, child.title) == (SID, "Find the flaky tests")
    assert SRC.resume_command(child) == f"cd {project} && crush --session {SID}"
    with sqlite3.connect(project / ".crush" / "crush.db") as con:
        con.execute("UPDATE sessions SET title = 'Untitled Session' WHERE id = ?", (SID,))
    assert SRC.read(unit(project)).session.title.startswith("why is the snorkel test flaky?")


def test_discovery_through_projects_json(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "code" / "snorkel"
    build(project)
    elsewhere = tmp_path / "code" / "big" / "data"  # a data_directory set in crush.json
    Db(elsewhere / "crush.db").session("s2").message("user", part("text", text="hi"), sid="s2")
    index = home / ".local" / "share" / "crush" / "projects.json"
    write_file(index, json.dumps({"projects": [
        {"path": str(project), "data_dir": str(project / ".crush"), "last_accessed": "2026-03-14T10:00:00Z"},
        {"path": str(tmp_path / "code" / "big"), "data_dir": str(elsewhere), "last_accessed": "2026-03-13T10:00:00Z"},
        {"path": "/gone", "data_dir": "/gone/.crush"}, "junk"]}))
    Db(home / ".crush" / "crush.db").session("s3").message("user", part("text", text="hello"), sid="s3")
    units = list(SRC.discover({}, home))
    assert units == [Path(member_path(home / ".crush" / "crush.db", "s3")), unit(project), unit(project, "tc9"),
                     Path(member_path(elsewhere / "crush.db", "s2"))]  # no title- session
    assert SRC.read(units[3]).session.project == str(tmp_path / "code" / "big")  # from projects.json
    assert SRC.roots({"CRUSH_GLOBAL_DATA": "/x"}, home) == [Path("/x"), home / ".crush"]
    assert SRC.roots({"XDG_DATA_HOME": "/xdg"}, home)[0] == Path("/xdg/crush")
    assert SRC.roots({"LOCALAPPDATA": "C:/L"}, home)[0] == Path("C:/L/crush")
    index.write_text("{broken")
    assert len(list(SRC.discover({}, home))) == 1  # ~/.crush only


def test_an_answer_still_streaming_is_read_again(tmp_path):
    project = tmp_path / "snorkel"
    db = Db(project / ".crush" / "crush.db").session()
    db.message("user", part("text", text="explain the snorkel"))
    mid = db.message("assistant", part("text", text="The snorkel is"))  # no finish part yet
    path = str(unit(project))
    first = SRC.read(Path(path))
    assert [m.text for m in first.messages] == ["explain the snorkel", "The snorkel is"]
    assert first.end_offset == 1 and first.state["next_index"] == 1  # the streaming row is not committed
    size, mtime, _ = SRC.stat(path)
    assert mtime == max(Path(db.path).stat().st_mtime_ns, 0)  # the store's mtime while it streams
    db.update(mid, part("text", text="The snorkel is a breathing tube."), finish())
    rest = SRC.read(Path(path), first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(1, "The snorkel is a breathing tube.")]
    assert SRC.stat(path)[1] == (T0 + 2) * 10**9  # finished: its session's updated_at again
    whole = SRC.read(Path(path))
    assert [key(m) for m in whole.messages] == [key(m) for m in first.messages[:1] + rest.messages]


def test_incremental_append(tmp_path):
    project = tmp_path / "snorkel"
    db = build(project)
    path = str(unit(project))
    first = SRC.read(Path(path))
    head = SRC.fingerprint(path, SRC.stat(path)[0])
    db.message("user", part("text", text="one more thing"))
    assert SRC.fingerprint(path, first.end_offset) == head
    rest = SRC.read(Path(path), first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(11, "one more thing")]
    with sqlite3.connect(db.path) as con:  # a message deleted: the session is read again whole
        con.execute("DELETE FROM messages WHERE id = 'm-002'")
    assert SRC.fingerprint(path, first.end_offset) != head


def test_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    project = tmp_path / "snorkel"
    build(project)
    write_file(home / ".local" / "share" / "crush" / "projects.json", json.dumps(
        {"projects": [{"path": str(project), "data_dir": str(project / ".crush")}]}))
    status = end_to_end(capsys, monkeypatch, tmp_path, home, Seen(
        "crush", SID, "Fix the flaky snorkel test", str(project), f"cd {project} && crush --session {SID}", "snorkel",
        [f"why is the snorkel test flaky? token {_GHP}", "Let me run it.",
         "The temp dir is shared; I made it per test.", "! git status", "thanks"],
        hidden=[_GHP], unindexed=["wobblestring"]))
    assert (status["files_found"], status["sessions"], status["skipped_lines"]) == (2, 2, 1)
    assert status["unknown_kinds"] == {"future_part": 1, "moderator": 1}


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacrush`` no other session holds."""
    sid = "5d1c2e3f-4a5b-4c6d-8e7f-901234560261"
    project = home / "code" / "crushsvc"
    db = Db(project / ".crush" / "crush.db")
    start = int(t.timestamp())
    db.session(sid, "Crush: worker stall", t=start)
    with db.con() as con:
        for n, (role, words) in enumerate((("user", prompt_of("crush")), ("assistant", reply_of("crush"))), 1):
            parts = [part("text", text=words)] + ([finish(t=start + 60)] if role == "assistant" else [])
            con.execute("INSERT INTO messages (id, session_id, role, parts, created_at, updated_at, finished_at) "
                        "VALUES (?,?,?,?,?,?,?)", (f"m{n}", sid, role, json.dumps(parts), start + 60 * n,
                                                   start + 60 * n, start + 60 * n if role == "assistant" else None))
        con.execute("UPDATE sessions SET updated_at = ?", (start + 120,))
    index = write_file(home / ".local" / "share" / "crush" / "projects.json", json.dumps(
        {"projects": [{"path": str(project), "data_dir": str(project / ".crush"),
                       "last_accessed": t.isoformat()}]}))
    return Expect("crush", sid, "Crush: worker stall", str(project), f"cd {project} && crush --session {sid}",
                  "quokkacrush", [prompt_of("crush"), reply_of("crush")], t, files=[db.path, index])


def fuzz_units(home: Path) -> list:
    """A store fuzzed field by field (``tests/test_reader_fuzz.py``): the records are each
    message's ``parts`` entries."""
    from test_reader_fuzz import Unit, _touch

    path = home / "crush-fuzz" / ".crush" / "crush.db"
    messages = [
        ("user", [part("text", text="fuzz crush"), part("binary", path="a", mime_type="x", data="")]),
        ("assistant", [part("reasoning", thinking="hm"), part("text", text="calling"),
                       part("tool_call", id="c1", name="bash", input='{"c": 1}'), finish("tool_use")]),
        ("tool", [part("tool_result", tool_call_id="c1", name="bash", content="a b", is_error=False)]),
        ("user", [part("shell_command", command="ls", output="x", exit_code=0)]),
        ("assistant", [finish("error", message="boom")]),
    ]
    shape = [(role, len(parts)) for role, parts in messages]
    records = [p for _role, parts in messages for p in parts]

    def write(texts: list[str]) -> str:
        if path.exists():
            path.unlink()
        db = Db(path).session("fz")
        with db.con() as con:
            i = 0
            for n, (role, count) in enumerate(shape):
                con.execute("INSERT INTO messages (id, session_id, role, parts, created_at, updated_at, finished_at) "
                            "VALUES (?, 'fz', ?, ?, ?, ?, ?)",
                            (f"m{n}", role, "[" + ",".join(texts[i:i + count]) + "]", T0 + n, T0 + n, T0 + n))
                i += count
        _touch(path)
        return member_path(path, "fz")

    def parts(obj) -> list:
        return list(obj.get("parts") or []) if isinstance(obj, dict) else [obj]

    return [Unit("crush store", SOURCES["crush"], records, write, parts)]

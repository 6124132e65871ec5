"""KiloSource: Kilo CLI's ``kilo.db`` (opencode's store under Kilo's names), built here with the
tables of ``@kilocode/cli-linux-x64`` 7.7.9's migrations (its bundled JS), under a temp HOME."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import member_path
from crabsearch.sources.kilo import KiloSource

from agent_doors import through_every_door
from all_agents import Expect, ms, prompt_of, reply_of
from secret_samples import _GHP
from test_reader_fuzz import Unit, opencode_unit

SRC = KiloSource()
T0 = 1773655200000  # 2026-03-16T10:00:00Z in ms
CWD = "/home/dev/kilo shop"

SCHEMA = """
create table project (id text primary key, worktree text not null, vcs text, name text, icon_url text,
  icon_color text, time_created integer not null, time_updated integer not null, time_initialized integer,
  sandboxes text not null);
create table session (id text primary key, project_id text not null, parent_id text, slug text not null,
  directory text not null, title text not null, version text not null, share_url text, summary_additions integer,
  summary_deletions integer, summary_files integer, summary_diffs text, revert text, permission text,
  time_created integer not null, time_updated integer not null, time_compacting integer, time_archived integer,
  workspace_id text, path text, agent text, model text, metadata text, cost real default 0 not null,
  tokens_input integer default 0 not null, tokens_output integer default 0 not null,
  tokens_reasoning integer default 0 not null, tokens_cache_read integer default 0 not null,
  tokens_cache_write integer default 0 not null);
create table message (id text primary key, session_id text not null, time_created integer not null,
  time_updated integer not null, data text not null);
create table part (id text primary key, message_id text not null, session_id text not null,
  time_created integer not null, time_updated integer not null, data text not null);
create table session_message (id text primary key, session_id text not null, type text not null, seq integer,
  time_created integer not null, time_updated integer not null, data text not null);
create table session_input (id text primary key, session_id text not null, prompt text not null,
  delivery text not null, admitted_seq integer not null, promoted_seq integer, time_created integer not null);
create table kilo_board (id text primary key, data text);
"""
"""The tables of Kilo 7.7.9's store that the reader reads (and one it does not: ``kilo_board``),
as its migrations leave them (``CREATE TABLE`` and the later ``ALTER TABLE ... ADD``)."""


class KiloDb:
    """A Kilo store written the way Kilo (opencode) does: ids outside ``data``."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.run(SCHEMA, script=True)
        self.run("insert into project (id, worktree, time_created, time_updated, sandboxes) values (?,?,?,?,?)",
                 ("prj_1", CWD, T0, T0, "[]"))
        self.n = 0

    def run(self, sql: str, args=(), script: bool = False) -> None:
        con = sqlite3.connect(self.path)
        (con.executescript(sql) if script else con.execute(sql, args))
        con.commit()
        con.close()

    def session(self, sid: str, title: str, parent: str | None = None, t: int = T0) -> "KiloDb":
        self.run("insert into session (id, project_id, parent_id, slug, directory, title, version, time_created, "
                 "time_updated, agent) values (?,?,?,?,?,?,?,?,?,?)",
                 (sid, "prj_1", parent, "brave-kiwi", CWD, title, "7.7.9", t, t, "code"))
        return self

    def message(self, sid: str, role: str, *parts, completed: bool = True, t: int | None = None) -> str:
        self.n += 1
        mid, t = f"msg_{self.n:04d}", t or T0 + self.n * 1000
        info = {"role": role, "time": {"created": t}, "agent": "code"}
        if role == "assistant":
            info.update({"modelID": "kilo/auto", "providerID": "kilo", "mode": "code",
                         "path": {"cwd": CWD, "root": CWD}})
            if completed:
                info["time"]["completed"] = t + 500
        self.run("insert into message values (?,?,?,?,?)", (mid, sid, t, t, json.dumps(info)))
        for i, p in enumerate(parts):
            self.run("insert into part values (?,?,?,?,?,?)",
                     (f"prt_{self.n:04d}_{i}", mid, sid, t, t, p if isinstance(p, str) else json.dumps(p)))
        self.run("update session set time_updated = ? where id = ?", (t, sid))
        return mid


def text(t: str, **kw) -> dict:
    return {"type": "text", "text": t, "time": {"start": T0, "end": T0 + 10}, **kw}


def build(root: Path, name: str = "kilo.db") -> KiloDb:
    db = KiloDb(root / name)
    db.session("ses_kilo1", "Speed up the kangaroute checkout")
    db.message("ses_kilo1", "user", text("why is the kangaroute checkout slow?"))
    db.message("ses_kilo1", "assistant", {"type": "step-start"}, {"type": "reasoning", "text": "N+1 queries"},
               {"type": "tool", "callID": "call_1", "tool": "bash",
                "state": {"status": "completed", "input": {"command": "rg checkout"},
                          "output": f"GITHUB_TOKEN={_GHP} numbatoutput", "time": {"start": T0, "end": T0 + 5}}},
               text("Batch the cart lookups."), {"type": "kilo-future-part", "x": 1}, "{broken part",
               {"type": "step-finish", "reason": "stop"})
    db.session("ses_kilo2", "Child session - 2026-03-16T10:05:00.000Z", parent="ses_kilo1")
    db.message("ses_kilo2", "user", text("list the checkout queries"))
    return db


def unit(db: KiloDb, sid: str) -> Path:
    return Path(member_path(db.path, sid))


def test_registered_and_named():
    assert get_source("kilo").__class__ is KiloSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("kilo", "Kilo CLI", "Kilo")


def test_messages_fields_and_resume(tmp_path):
    db = build(tmp_path / "kilo")
    r = SRC.read(unit(db, "ses_kilo1"))
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "why is the kangaroute checkout slow?"),
        (Role.ASSISTANT, "thinking", "N+1 queries"),
        (Role.ASSISTANT, "tool-call:bash", '{"command": "rg checkout"}'),
        (Role.TOOL, "tool:bash", f"GITHUB_TOKEN={_GHP} numbatoutput"),
        (Role.ASSISTANT, "assistant", "Batch the cart lookups."),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"kilo-future-part": 1}
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project) == ("kilo", "ses_kilo1", "Speed up the kangaroute checkout", CWD)
    assert SRC.resume_command(s) == f"cd '{CWD}' && kilo '{CWD}' --session ses_kilo1"
    child = SRC.read(unit(db, "ses_kilo2")).session
    assert (child.title, child.parent_session_id) == ("list the checkout queries", "ses_kilo1")
    for m in r.messages:  # the display path: one part row read back
        assert SRC.message_text(SRC.load(str(unit(db, "ses_kilo1")), m.offset, m.length), m.part, m.label) == m.text


def test_incremental_rows(tmp_path):
    db = build(tmp_path / "kilo")
    u = unit(db, "ses_kilo1")
    first = SRC.read(u)
    state = json.loads(json.dumps(first.state))
    db.message("ses_kilo1", "user", text("and the wallet page?"))
    second = SRC.read(u, first.end_offset, state)
    assert [(m.message_index, m.text) for m in second.messages] == [(5, "and the wallet page?")]


def test_the_stores_kilo_keeps(tmp_path):
    """``kilo.db``, ``kilo-<channel>.db`` and a leftover ``opencode-<channel>.db``; ``KILO_DB``
    (absolute or relative to the data folder); never opencode's own store or ``OPENCODE_DB``."""
    home = tmp_path / "home"
    root = home / ".local" / "share" / "kilo"
    build(root)
    KiloDb(root / "kilo-dev.db").session("ses_dev", "dev channel")
    KiloDb(root / "opencode-nightly.db").session("ses_old", "before the rename")
    KiloDb(root / "storage" / "kilo-nested.db").session("ses_nested", "not a store")
    KiloDb(home / ".local" / "share" / "opencode" / "opencode.db").session("ses_oc", "opencode's own")
    found = lambda env: sorted(str(p) for p in SRC.discover(env, home))  # noqa: E731
    assert found({}) == sorted([member_path(root / "kilo.db", "ses_kilo1"), member_path(root / "kilo.db", "ses_kilo2"),
                                member_path(root / "kilo-dev.db", "ses_dev"),
                                member_path(root / "opencode-nightly.db", "ses_old")])
    assert SRC.roots({}, home) == [root]
    other = tmp_path / "elsewhere.db"
    KiloDb(other).session("ses_else", "elsewhere")
    assert member_path(other, "ses_else") in found({"KILO_DB": str(other)})
    KiloDb(root / "named.db").session("ses_named", "relative")
    assert member_path(root / "named.db", "ses_named") in found({"KILO_DB": "named.db"})
    assert not any("ses_else" in p for p in found({"OPENCODE_DB": str(other)}))
    xdg = tmp_path / "xdg"
    build(xdg / "kilo")
    assert found({"XDG_DATA_HOME": str(xdg)}) == [member_path(xdg / "kilo" / "kilo.db", s) for s in ("ses_kilo1", "ses_kilo2")]


def test_v2_rows_of_a_newer_build(tmp_path):
    """A session written as ``session_message`` rows (the table Kilo 7.7.9 creates): read whole."""
    db = KiloDb(tmp_path / "kilo" / "kilo.db").session("ses_v2", "V2 rows")
    for seq, (kind, data) in enumerate([
            ("user", {"text": "rename the platypusfield column", "time": {"created": T0}}),
            ("assistant", {"content": [{"type": "reasoning", "text": "a migration"},
                                       {"type": "text", "text": "Added a migration."}], "time": {"created": T0 + 1}}),
            ("kilo-board-note", {"time": {"created": T0 + 2}})]):
        db.run("insert into session_message values (?,?,?,?,?,?,?)",
               (f"msg_v2_{seq}", "ses_v2", kind, seq, T0 + seq, T0 + seq, json.dumps(data)))
    r = SRC.read(unit(db, "ses_v2"))
    assert [(m.label, m.text) for m in r.messages] == [
        ("user", "rename the platypusfield column"), ("thinking", "a migration"), ("assistant", "Added a migration.")]
    assert r.state["unknown_kinds"] == {"kilo-board-note": 1}


def test_through_every_door(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    build(home / ".local" / "share" / "kilo")
    seen = through_every_door(
        capsys, monkeypatch, tmp_path, {"HOME": str(home)}, agent="kilo", session_id="ses_kilo1", word="kangaroute",
        title="Speed up the kangaroute checkout", resume=f"cd '{CWD}' && kilo '{CWD}' --session ses_kilo1",
        texts=["why is the kangaroute checkout slow?", "Batch the cart lookups."], secrets=(_GHP,),
        unindexed=("numbatoutput",))
    a = seen.agent_status("kilo")
    assert (a["files_found"], a["sessions"], a["skipped_lines"]) == (2, 2, 1)
    assert seen.unknown_kinds("kilo") == {"kilo-future-part": 1}


def fuzz_units(home: Path) -> list[Unit]:
    """A Kilo store with one session (``kilo.db`` is SQLite: neither JSONL nor a JSON array)."""
    t0 = T0
    oc = opencode_unit(home / ".local" / "share" / "kilo" / "kilo.db", "ses_fuzz", [
        ({"role": "user", "time": {"created": t0}}, [text("fuzz kilo")]),
        ({"role": "assistant", "time": {"created": t0, "completed": t0 + 5}, "modelID": "kilo/auto",
          "providerID": "kilo", "path": {"cwd": CWD, "root": CWD}},
         [{"type": "step-start"}, {"type": "reasoning", "text": "think"}, text("answer"),
          {"type": "tool", "tool": "bash", "callID": "c1",
           "state": {"status": "completed", "input": {"cmd": "ls"}, "output": "a b", "time": {"start": t0}}},
          {"type": "step-finish"}]),
    ])
    return [dataclasses.replace(oc, name="kilo db", source=SRC)]


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkakilo`` no other session holds."""
    db = KiloDb(home / ".local" / "share" / "kilo" / "kilo.db")
    t0, t1 = ms(t), ms(t + timedelta(minutes=1))
    db.session("ses_0211allagents", "Kilo: worker stall", t=t0)
    db.message("ses_0211allagents", "user", text(prompt_of("kilo")), t=t0)
    db.message("ses_0211allagents", "assistant", {"type": "step-start"}, text(reply_of("kilo")),
               {"type": "step-finish", "reason": "stop"}, t=t1)
    return Expect("kilo", "ses_0211allagents", "Kilo: worker stall", CWD,
                  f"cd '{CWD}' && kilo '{CWD}' --session ses_0211allagents", "quokkakilo",
                  [prompt_of("kilo"), reply_of("kilo")], t, files=[db.path])

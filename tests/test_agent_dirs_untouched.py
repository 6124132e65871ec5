"""Issue 16, defect 6: nothing is ever created or written in an agent's directory.

Opening a WAL-mode ``opencode.db`` with ``mode=ro`` created and rewrote ``opencode.db-wal`` and
``-shm`` beside it. Here a HOME holds the static fixtures, one session of every agent, and
SQLite stores in the states an agent leaves them in:

* ``opencode.db`` as a killed opencode left it: WAL mode, a session committed only to
  ``-wal`` (``-shm`` beside it);
* an OpenClaw store that OpenClaw is writing *now* (a connection of this test stays open, with a
  session committed only to the WAL);
* an OpenClaw store in WAL mode that OpenClaw closed cleanly (no ``-wal``: a read-only open
  would create one).

Every file (bytes, size, mode, mtime), symlink and directory (entries, mtime) under HOME is
recorded before and compared after ``index``, ``search`` (with windows), ``show``, ``export``,
``status``, the app (a pilot that searches, expands a result and opens sessions) and the MCP
server (a client that searches, pages and lists sessions): any difference fails. The sessions
committed only to a WAL must be found (a reader that ignored the WAL, as ``immutable=1`` alone
does, would not see them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from crabsearch import agentdb
from crabsearch.sources import SOURCES

from all_agents import FIRST_DAY, all_agents_env, build_all_agents_home, ms
from builders import NOW, settle
from source_checks import HOME as FIXTURE_HOME
from test_sources_openclaw import add_rows, make_db
from test_special_files import cli_env, run_crabsearch
from v3_builders import V3Session

WAL_OPENCODE = "ses_walonly"
LIVE_OPENCLAW = "d4e5f6a7-0000-4b8c-9d0e-1f2a3b4c0201"
IDLE_OPENCLAW = "e5f6a7b8-0000-4c9d-8e0f-2a3b4c5d0202"


def snapshot(root: Path) -> dict[str, tuple]:
    """``{path: facts}`` of everything under ``root``: files (mode, size, mtime, SHA-256),
    symlinks (target), directories (mode, mtime, entries), other files (mode, mtime)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        st = os.lstat(dirpath)
        out[dirpath] = ("dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns, tuple(sorted(dirnames + filenames)))
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[p] = ("symlink", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
                out[p] = ("file", stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns, digest)
            elif not stat.S_ISDIR(st.st_mode):
                out[p] = ("special", st.st_mode, st.st_mtime_ns)
    return out


def assert_untouched(before: dict[str, tuple], root: Path, after_what: str) -> None:
    """Fail, naming every path created, removed or changed, unless ``root`` is as ``before``."""
    after = snapshot(root)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert not changed, f"{after_what} changed the agents' directories:\n" + "\n".join(
        f"  {p}: {before.get(p, 'absent')} -> {after.get(p, 'absent')}" for p in changed)


def _opencode_killed_with_wal(db: Path, stage: Path) -> None:
    """Turn ``db`` into what a killed opencode leaves: WAL mode, a session committed only to
    ``-wal``, and the ``-shm`` of the dead connection."""
    t = FIRST_DAY + timedelta(days=20)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("insert into session values (?,?,?,?,?,?,?,?,?,null)",
                (WAL_OPENCODE, "proj1", None, "wal", "/home/dev/walproj", "opencode: only in the WAL", "1.4.0",
                 ms(t), ms(t)))
    info = {"role": "user", "time": {"created": ms(t)}}
    part = {"type": "text", "text": "the quokkawalonly gecko"}
    con.execute("insert into message values (?,?,?,?,?)", ("msg_wal1", WAL_OPENCODE, ms(t), ms(t), json.dumps(info)))
    con.execute("insert into part values (?,?,?,?,?,?)",
                ("prt_wal1", "msg_wal1", WAL_OPENCODE, ms(t), ms(t), json.dumps(part)))
    con.commit()
    stage.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        shutil.copy2(f"{db}{suffix}", stage / f"db{suffix}")  # as the kill left them
    assert os.path.getsize(f"{db}-wal") > 0
    con.close()  # checkpoints and removes -wal/-shm: put the killed state back
    for suffix in ("", "-wal", "-shm"):
        shutil.copy2(stage / f"db{suffix}", f"{db}{suffix}")


def _openclaw_session(sid: str, word: str, cwd: str) -> V3Session:
    s = V3Session(sid, cwd=cwd, start=FIRST_DAY + timedelta(days=21))
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.user(f"where did the {word} go")
    s.assistant(f"the {word} is in the WAL")
    return s


@pytest.fixture
def agents_home(tmp_path):
    """``(home, env, live connection)``: see the module docstring. The live OpenClaw connection
    stays open (OpenClaw running) until the test ends."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, home, symlinks=True)
    expects = build_all_agents_home(home)
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    _opencode_killed_with_wal(db, tmp_path / "stage")
    agents = home / ".openclaw" / "agents"
    live_db = make_db(agents / "live" / "agent" / "openclaw-agent.sqlite", {})
    live = sqlite3.connect(live_db)
    assert live.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    live.execute("PRAGMA wal_autocheckpoint=0")
    add_rows(live, LIVE_OPENCLAW, _openclaw_session(LIVE_OPENCLAW, "quokkawallive", "/srv/live").entries)
    live.commit()
    idle_db = make_db(agents / "idle" / "agent" / "openclaw-agent.sqlite",
                      {IDLE_OPENCLAW: _openclaw_session(IDLE_OPENCLAW, "quokkawalidle", "/srv/idle")})
    idle = sqlite3.connect(idle_db)
    assert idle.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    idle.close()
    assert not os.path.exists(idle_db + "-wal") and os.path.getsize(live_db + "-wal") > 0
    env = all_agents_env(home, expects)
    for src in SOURCES.values():  # every directory an agent is read from is under HOME
        for root in src.roots(env, home):
            assert Path(root).resolve().is_relative_to(home.resolve()), (src.agent, root)
    yield home, env, expects
    live.close()


WAL_WORDS = {"quokkawalonly": "opencode", "quokkawallive": "openclaw", "quokkawalidle": "openclaw"}


def test_cli_commands_write_nothing_in_agent_directories(agents_home, tmp_path):
    home, home_env, expects = agents_home
    tmp = tmp_path / "tmp"
    env = cli_env(home_env, tmp)
    index_dir = tmp_path / "index"
    before = snapshot(home)
    p = run_crabsearch(env, index_dir, "index")
    assert p.returncode == 0, p.stderr
    assert_untouched(before, home, "index")
    for word, agent in WAL_WORDS.items():  # committed only to a WAL, or to a WAL-mode store: found
        p = run_crabsearch(env, index_dir, "search", "--json", "--before", "4", "--after", "4", word)
        assert p.returncode == 0, p.stderr
        hits = json.loads(p.stdout)["hits"]
        assert [h["agent"] for h in hits] == [agent], (word, hits)
        assert any(word in item["text"] for item in hits[0]["window"])
        assert_untouched(before, home, f"search {word}")
    p = run_crabsearch(env, index_dir, "search", "--json", "--limit", "50", "worker")
    assert p.returncode == 0 and len(json.loads(p.stdout)["hits"]) == len(expects), p.stderr
    for sid in (WAL_OPENCODE, LIVE_OPENCLAW, IDLE_OPENCLAW, expects["opencode"].session_id):
        p = run_crabsearch(env, index_dir, "show", sid)
        assert p.returncode == 0 and "unavailable" not in p.stdout, (sid, p.stdout, p.stderr)
        p = run_crabsearch(env, index_dir, "export", sid)
        assert p.returncode == 0 and "unavailable" not in p.stdout, (sid, p.stdout, p.stderr)
    assert_untouched(before, home, "show and export")
    p = run_crabsearch(env, index_dir, "status")
    assert p.returncode == 0, p.stderr
    p = run_crabsearch(env, index_dir, "index")
    assert p.returncode == 0, p.stderr
    assert_untouched(before, home, "status and a second index")
    assert not [n for n in os.listdir(tmp) if n.startswith(agentdb.PREFIX)]  # private copies removed at exit


async def test_the_app_writes_nothing_in_agent_directories(agents_home, tmp_path):
    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.results import ResultList
    from crabsearch.tui.screens import SearchScreen
    from crabsearch.tui.session import SessionScreen

    home, env, _ = agents_home
    before = snapshot(home)
    app = CrabsearchApp(tmp_path / "index", env=env, now=NOW)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await settle(pilot)  # background indexing on start, then the recent sessions
        assert not app.indexing
        for word in WAL_WORDS:
            query = app.screen.query_one("#query")
            query.value = ""
            await pilot.press(*word)
            await settle(pilot)
            results = app.screen.query_one(ResultList)
            assert results.option_count == 1, word
            await pilot.press("down", "enter")  # expand: the window is read from the store
            await settle(pilot)
            assert results.expanded and any(word in i.text for i in next(iter(results.expanded.values()))[2])
            await pilot.press("o")  # open the session
            await settle(pilot)
            assert isinstance(app.screen, SessionScreen)
            await pilot.press("G", "g")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, SearchScreen)
            await pilot.press("escape")
            await settle(pilot)
    assert_untouched(before, home, "the app")


async def test_the_mcp_server_writes_nothing_in_agent_directories(agents_home, tmp_path):
    """``crabsearch mcp`` through the SDK's in-process client: its first search builds the index
    (the server's own refresh), then searches with windows, pages every session found and lists
    the recent ones."""
    from mcp import Client

    from crabsearch.index import Indexer
    from crabsearch.mcp_server import build_server
    from crabsearch.mcp_tools import Door, Refresher
    from crabsearch.search import Engine

    home, env, expects = agents_home
    before = snapshot(home)
    index_dir = tmp_path / "index"
    indexer = Indexer(index_dir, env=env)
    door = Door(Engine(index_dir), indexer, refresher=Refresher(indexer, wait=120))  # never "still indexing"
    async with Client(build_server(door), mode="legacy") as client:
        for word, agent in WAL_WORDS.items():
            r = await client.call_tool("search_sessions", {"query": word, "context_before": 4, "context_after": 4})
            assert not r.is_error, r.content[0].text
            hits = r.structured_content["hits"]
            assert [h["agent"] for h in hits] == [agent] and any(word in i["text"] for i in hits[0]["window"])
            assert_untouched(before, home, f"mcp search_sessions {word}")
        r = await client.call_tool("search_sessions", {"query": "worker", "limit": 20})
        found = r.structured_content["hits"]
        assert len(found) == min(20, len(expects)), r.content[0].text
        for hit in found:
            r = await client.call_tool("list_messages", {"session_id": hit["session_id"], "limit": 50})
            assert not r.is_error and "unavailable" not in r.content[0].text, (hit["session_id"], r.content[0].text)
        r = await client.call_tool("recent_sessions", {"limit": 50})
        assert not r.is_error and len(r.structured_content["sessions"]) >= len(found)
    assert_untouched(before, home, "the mcp server")


def test_agentdb_reads_commits_in_the_wal_and_writes_nothing(tmp_path):
    """The rule of :mod:`crabsearch.agentdb` on one store: immutable while nothing is committed
    outside the database file, a private copy (reused while unchanged) while the WAL holds
    commits, and nothing created or changed beside the store either way."""
    d = tmp_path / "agent"
    d.mkdir()
    db = str(d / "store.db")
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("create table t(x)")
    writer.execute("insert into t values ('in the file')")
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the file, -wal empty
    before = snapshot(d)

    def read():
        con = agentdb.connect(db)
        try:
            return [r[0] for r in con.execute("select x from t order by rowid")]
        finally:
            con.close()

    agentdb.clear()
    assert read() == ["in the file"] and agentdb.copies() == []  # immutable: no copy needed
    assert_untouched(before, d, "an immutable read")
    writer.execute("insert into t values ('only in the WAL')")
    writer.commit()
    before = snapshot(d)
    assert read() == ["in the file", "only in the WAL"]
    [copy] = agentdb.copies()
    assert stat.S_IMODE(os.stat(copy).st_mode) == 0o700 and not Path(copy).is_relative_to(d)
    assert read() == ["in the file", "only in the WAL"] and agentdb.copies() == [copy]  # reused
    assert_untouched(before, d, "reading a copy")
    writer.execute("insert into t values ('later')")
    writer.commit()
    before = snapshot(d)
    assert read()[-1] == "later" and len(agentdb.copies()) == 2  # a new copy; the previous one kept
    writer.execute("insert into t values ('later still')")
    writer.commit()
    assert read()[-1] == "later still" and len(agentdb.copies()) == 2 and copy not in agentdb.copies()
    con = agentdb.connect(db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        con.execute("insert into t values ('no')")
    con.close()
    writer.close()
    agentdb.clear()
    assert not os.path.exists(copy) and agentdb.copies() == []


def test_agentdb_refuses_special_files_and_sweeps_dead_copies(tmp_path, monkeypatch):
    fifo = tmp_path / "opencode.db"
    os.mkfifo(fifo)
    from crabsearch.files import NotRegularFile

    with pytest.raises(NotRegularFile, match="FIFO"):
        agentdb.connect(fifo)  # would block in SQLite's own open()
    monkeypatch.setattr(agentdb.tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"{agentdb.PREFIX}999999999-x"
    dead.mkdir()
    ours = tmp_path / f"{agentdb.PREFIX}{os.getpid()}-y"
    ours.mkdir()
    monkeypatch.setattr(agentdb, "_swept", False)
    db = tmp_path / "wal.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("create table t(x)")
    con.commit()
    agentdb.connect(db).close()  # a copy: the WAL holds the table
    assert not dead.exists() and ours.exists()
    con.close()
    agentdb.clear()

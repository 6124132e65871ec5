"""CoworkSource: Claude Desktop's local agent mode, written here as the app lays it out (kenn-io/
agentsview ``internal/parser/cowork.go`` and ``cowork_paths.go`` @538600744d1b): ``<root>/<org>/
<workspace>/local_<uuid>.json`` naming ``cliSessionId``, and the Claude Code transcript
``local_<uuid>/.claude/projects/<slug>/<cliSessionId>.jsonl`` (+ subagents) under a temp HOME."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

from crabsearch.index import Indexer
from crabsearch.model import Role
from crabsearch.search import Engine
from crabsearch.sources import get_source
from crabsearch.sources.cowork import CoworkSource
from crabsearch.sources.table import resume_cell

from agent_doors import through_every_door
from all_agents import Expect, ms, prompt_of, reply_of, write_file
from builders import ClaudeSession, ClaudeSubagent
from secret_samples import _SK_PROJ
from source_checks import assert_incremental, assert_read_back
from test_reader_fuzz import Unit, jsonl_unit, _touch

SRC = CoworkSource()
ORG, WS = "1f0c2d3e-0000-4000-8000-0000000000a1", "9b8a7c6d-0000-4000-8000-0000000000b2"
LOCAL = "50000000-0000-4000-8000-000000000001"
CLI = "c0000000-0000-4000-8000-000000000001"
T = datetime(2026, 3, 12, 9, 0, tzinfo=timezone.utc)


def root_of(home: Path) -> Path:
    """The Linux app-data root (``~/.config/Claude/local-agent-mode-sessions``)."""
    return home / ".config" / "Claude" / "local-agent-mode-sessions"


def write_meta(root: Path, local: str = LOCAL, cli: str | None = CLI, title: str = "Quarterly numbers",
               folders: list | None = None, t: datetime = T, **extra) -> Path:
    """``<root>/<org>/<workspace>/local_<local>.json`` as the app writes it."""
    meta = {"sessionId": f"local_{local}", "processName": "quiet-quokka", "title": title,
            "model": "claude-sonnet-4-6", "userSelectedFolders": folders if folders is not None else [],
            "createdAt": ms(t), "lastActivityAt": ms(t + timedelta(minutes=5)), "isArchived": False, **extra}
    if cli is not None:
        meta["cliSessionId"] = cli
    return write_file(root / ORG / WS / f"local_{local}.json", json.dumps(meta))


def session(root: Path, local: str = LOCAL, cli: str = CLI, cwd: str = "/sessions/quiet-quokka",
            t: datetime = T) -> ClaudeSession:
    """The Claude Code transcript of session ``local_<local>``: its ``.claude`` is the VM's config
    dir, so the builder's ``home`` is the session's folder."""
    return ClaudeSession(root / ORG / WS / f"local_{local}", session_id=cli, cwd=cwd, start=t, branch="HEAD")


def thinking(s: ClaudeSession, text: str) -> ClaudeSession:
    d = s._base("assistant")
    d["message"] = {"id": f"msg_{s.n}", "type": "message", "role": "assistant", "model": "claude-x",
                    "content": [{"type": "thinking", "thinking": text, "signature": "sig"}]}
    s.lines.append(d)
    return s


def full_session(home: Path) -> tuple[Path, Path, Path]:
    """A session with every kind of line, a subagent, an unknown kind, an ai-title and a broken
    line; returns (metadata, transcript, subagent)."""
    root = root_of(home)
    meta = write_meta(root, folders=["/home/dev/finance reports"])
    s = session(root).user("Summarise the wombatledger numbers for Q1").title("ignored transcript title")
    thinking(s, "the spreadsheet is in outputs")
    s.tool("Bash", {"command": f"export OPENAI_API_KEY={_SK_PROJ}"}, "revenue wallabyoutput 1200")
    s.assistant(f"Q1 revenue is up; the key {_SK_PROJ} was in your shell history.")
    s.task("count the invoices", "a1b2c3", "42 invoices")
    s.lines.append({"type": "ai-title", "aiTitle": "Auto title", "sessionId": CLI})
    s.lines.append({"type": "cowork-future-kind", "sessionId": CLI})
    s.compact("we summarised Q1").user("now Q2")
    path = s.write()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("{broken line\n")
    sub = ClaudeSubagent(s, "a1b2c3").user("count the invoices").assistant("42 invoices").write()
    return meta, path, sub


def test_registered_and_named():
    assert get_source("cowork").__class__ is CoworkSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("cowork", "Claude Cowork", "Cowork")
    assert resume_cell(SRC) == "none from a terminal: reopen it in Claude Desktop"


def test_discovery_follows_the_metadata_never_the_session_folders(tmp_path):
    home = tmp_path / "home"
    meta, path, sub = full_session(home)
    root = root_of(home)
    other = session(root, cli="c0000000-0000-4000-8000-0000000000ff").user("another conversation in the VM").write()
    assert other.parent == path.parent  # a transcript the metadata does not name
    write_meta(root, local="50000000-0000-4000-8000-000000000002", cli=None)  # never run
    write_meta(root, local="50000000-0000-4000-8000-000000000003", cli="c0000000-0000-4000-8000-00000000dead")
    write_meta(root, local="50000000-0000-4000-8000-000000000004", cli="../../escape")
    write_file(root / ORG / WS / "cowork-clientdata-cache.json", json.dumps({"cliSessionId": CLI}))
    outputs = root / ORG / WS / f"local_{LOCAL}" / "outputs" / "nested"
    write_meta(outputs, cli=CLI)  # a project the person attached, holding its own files: never entered
    session(outputs).user("inside outputs").write()
    assert sorted(SRC.discover({}, home)) == sorted([path, sub])
    assert SRC.roots({}, home) == [root]
    mac = home / "Library" / "Application Support" / "Claude" / "local-agent-mode-sessions"
    win = tmp_path / "roaming" / "Claude" / "local-agent-mode-sessions"
    write_meta(mac, local="50000000-0000-4000-8000-0000000000a0", cli="c0000000-0000-4000-8000-0000000000a0")
    mac_path = session(mac, "50000000-0000-4000-8000-0000000000a0", "c0000000-0000-4000-8000-0000000000a0").user("on a mac").write()
    write_meta(win, local="50000000-0000-4000-8000-0000000000b0", cli="c0000000-0000-4000-8000-0000000000b0")
    win_path = session(win, "50000000-0000-4000-8000-0000000000b0", "c0000000-0000-4000-8000-0000000000b0").user("on windows").write()
    assert SRC.roots({"APPDATA": str(tmp_path / "roaming")}, home) == [root, mac, win]
    assert sorted(SRC.discover({"APPDATA": str(tmp_path / "roaming")}, home)) == sorted([path, sub, mac_path, win_path])
    assert list(SRC.discover({"CRABSEARCH_COWORK_DIR": str(mac)}, home)) == [mac_path]
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


def test_messages_title_and_project(tmp_path):
    meta, path, sub = full_session(tmp_path / "home")
    r = SRC.read(path)
    got = [(m.role, m.label, m.text) for m in r.messages]
    assert got[:6] == [
        (Role.USER, "user", "Summarise the wombatledger numbers for Q1"),
        (Role.ASSISTANT, "thinking", "the spreadsheet is in outputs"),
        (Role.ASSISTANT, "tool-call:Bash", json.dumps({"command": f"export OPENAI_API_KEY={_SK_PROJ}"})),
        (Role.TOOL, "tool:Bash", "revenue wallabyoutput 1200"),
        (Role.ASSISTANT, "assistant", f"Q1 revenue is up; the key {_SK_PROJ} was in your shell history."),
        (Role.ASSISTANT, "tool-call:Task", got[5][2]),
    ]
    assert got[-3:] == [(Role.SYSTEM, "system", "Conversation compacted"),
                        (Role.SUMMARY, "summary", got[-2][2]), (Role.USER, "user", "now Q2")]
    assert r.stats.reasons == {"broken JSON": 1}
    assert r.state["unknown_kinds"] == {"cowork-future-kind": 1}
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project) == ("cowork", CLI, "Quarterly numbers", "/home/dev/finance reports")
    assert s.extra["subagents"] == [[5, "agent-a1b2c3"]] and s.extra["compactions"]
    assert SRC.resume_command(s) is None and SRC.fork_command(s) is None
    assert_read_back(SRC, path, r.messages)
    child = SRC.read(sub).session
    assert (child.session_id, child.parent_session_id, child.title) == ("agent-a1b2c3", CLI, "count the invoices")
    assert child.project == "/home/dev/finance reports"


def test_without_metadata_the_transcript_names_itself(tmp_path):
    """A metadata file without a title or folders, and one that is broken: Claude Code's title
    order and the transcript's cwd (the VM's folder)."""
    meta, path, _ = full_session(tmp_path / "home")
    meta.write_text(json.dumps({"cliSessionId": CLI, "title": "  ", "userSelectedFolders": [7, ""]}))
    s = SRC.read(path).session
    assert (s.title, s.project) == ("ignored transcript title", "/sessions/quiet-quokka")
    meta.write_text("{not json")
    assert SRC.read(path).session.title == "ignored transcript title"
    meta.unlink()
    assert SRC.read(path).session.title == "ignored transcript title"


def test_a_title_holding_a_key_is_stored_masked(tmp_path):
    meta, path, _ = full_session(tmp_path / "home")
    meta.write_text(json.dumps({"cliSessionId": CLI, "title": f"rotate {_SK_PROJ}"}))
    title = SRC.read(path).session.title
    assert _SK_PROJ not in title and title.startswith("rotate sk-pro")


def test_incremental(tmp_path):
    meta, path, _ = full_session(tmp_path / "home")
    assert_incremental(SRC, path.read_bytes(), path)


def test_a_rename_in_the_app_refreshes_the_session(tmp_path):
    home = tmp_path / "home"
    meta, path, _ = full_session(home)
    index = tmp_path / "index"
    env = {"HOME": str(home), "CRABSEARCH_CONFIG": str(tmp_path / "none.toml")}
    Indexer(index, env=env).refresh()
    assert _titles(index) == {"Quarterly numbers"}
    before = SRC.stat(str(path))
    write_meta(root_of(home), title="Renamed in the app", folders=["/home/dev/finance reports"])
    later = before[1] + 10**9
    os.utime(meta, ns=(later, later))
    assert SRC.stat(str(path))[1] == later and SRC.stat(str(path))[0] == before[0]
    Indexer(index, env=env).refresh()
    assert _titles(index) == {"Renamed in the app"}


def _titles(index: Path) -> set[str]:
    hits = Engine(index).search("wombatledger").hits
    return {h.session.title for h in hits if h.session.agent == "cowork"}


def test_through_every_door(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    full_session(home)
    seen = through_every_door(
        capsys, monkeypatch, tmp_path, {"HOME": str(home)}, agent="cowork", session_id=CLI, word="wombatledger",
        title="Quarterly numbers", texts=["Summarise the wombatledger numbers for Q1", "now Q2"],
        secrets=(_SK_PROJ,), unindexed=("wallabyoutput",))
    a = seen.agent_status("cowork")
    assert (a["files_found"], a["sessions"], a["skipped_lines"]) == (2, 2, 1)
    assert seen.unknown_kinds("cowork") == {"cowork-future-kind": 1}


def fuzz_units(home: Path) -> list[Unit]:
    """The all-agents transcript (its lines), and its ``local_<uuid>.json`` as one record."""
    exp = all_agents_session(home, T)
    transcript, meta = exp.files
    record = json.loads(meta.read_text("utf-8"))

    def write(texts: list[str]) -> str:
        meta.write_text(texts[0], "utf-8")
        _touch(meta)
        return str(transcript)

    return [jsonl_unit("all-agents cowork", SRC, transcript), Unit("cowork metadata", SRC, [record], write)]


def test_fuzz_units_read(tmp_path):
    """The units the reader fuzz matrix takes from here read their session."""
    units = fuzz_units(tmp_path / "home")
    for unit in units:
        r = SRC.read(Path(unit.write([json.dumps(x) for x in unit.records])))
        assert r.session.title == "Cowork: worker stall" and len(r.messages) == 2, unit.name


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacowork`` no other session holds."""
    root = root_of(home)
    local, cli = "50000000-0000-4000-8000-0000000000c1", "c0000000-0000-4000-8000-0000000000c1"
    folder = "/home/dev/cowork docs"
    meta = write_meta(root, local=local, cli=cli, title="Cowork: worker stall", folders=[folder], t=t)
    path = session(root, local=local, cli=cli, t=t).user(prompt_of("cowork")).assistant(reply_of("cowork")).write()
    return Expect("cowork", cli, "Cowork: worker stall", folder, None, "quokkacowork",
                  [prompt_of("cowork"), reply_of("cowork")], t, files=[path, meta])

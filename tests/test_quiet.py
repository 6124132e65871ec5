"""The resident server's refresh gate (``crabsearch.quiet``): inotify watches let a refresh skip
the stat walk of agents whose folders saw no event, and every change is still read."""

from __future__ import annotations

import json
import os
import sys

import pytest

from builders import ClaudeSession, CodexSession
from source_checks import run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux only")

SID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A home with a Claude Code and a Codex session, indexed, and the CLI as the resident
    server runs it (``cli.GATES`` and ``cli.KEPT`` kept between calls); returns
    ``(home, the Claude transcript, stats)``, ``stats`` counting each transcript ``stat`` a
    refresh makes (``Source.stat``) by agent."""
    from crabsearch import cli
    from crabsearch.sources import SOURCES

    home = tmp_path / "home"
    claude = ClaudeSession(home, session_id=SID, cwd="/home/dev/app").user(
        "the cron job runs twice at midnight").assistant("Two crontab entries overlap.").write()
    CodexSession(home, session_id="019a0000-1111-7222-8333-444455556666").user(
        "parser rejects step values").assistant("Use */5").write()
    for name, value in (("HOME", home), ("CRABSEARCH_INDEX_DIR", tmp_path / "index"),
                        ("XDG_CONFIG_HOME", tmp_path / "config")):
        monkeypatch.setenv(name, str(value))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "KEPT", {})
    monkeypatch.setattr(cli, "GATES", {})
    stats: dict[str, int] = {}
    for agent in ("claude", "codex"):
        src = SOURCES[agent]
        real = type(src).stat

        def counted(self, path, real=real):
            stats[self.agent] = stats.get(self.agent, 0) + 1
            return real(self, path)

        monkeypatch.setattr(type(src), "stat", counted)
    yield home, claude, stats
    for gate in (cli.GATES or {}).values():
        if gate is not None:
            gate.close()


def _search(capsys, *args) -> list[str]:
    code, out, err = run_cli(capsys, "search", *args, "--json")
    assert code == 0, err
    return [h["session_id"] for h in json.loads(out)["hits"]]


def test_an_unchanged_watched_home_is_not_walked(served, capsys):
    home, _, stats = served
    assert _search(capsys, "cron") == [SID]  # the first refresh walks and starts watching
    assert _search(capsys, "cron") == [SID]  # the first after it: clean
    stats.clear()
    assert _search(capsys, "cron") == [SID]
    assert _search(capsys, "parser") == ["019a0000-1111-7222-8333-444455556666"]
    assert stats == {}


@pytest.mark.parametrize("change", ["append", "touch", "new session", "new folder", "removed"])
def test_a_change_the_watches_see_is_refreshed(served, capsys, change):
    home, claude, stats = served
    for _ in range(3):
        _search(capsys, "cron")
    stats.clear()
    line = {"type": "user", "sessionId": SID, "uuid": "u-new", "parentUuid": None, "cwd": "/home/dev/app",
            "timestamp": "2026-01-02T10:00:00.000Z", "message": {"role": "user", "content": "a quokka appeared"}}
    if change == "append":
        with open(claude, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
        assert _search(capsys, "quokka") == [SID]
    elif change == "touch":  # same bytes, a new mtime: read again as before the gate
        os.utime(claude, ns=(1, 1))
        _search(capsys, "cron")
        assert stats.get("claude")
    elif change == "new session":  # in the folder of the first
        ClaudeSession(home, session_id="6d0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/app").user(
            "a quokka in the logs").write()
        assert _search(capsys, "quokka") == ["6d0375b4-57a5-4f26-b12d-d022ee4e51b7"]
    elif change == "new folder":  # a project folder made after the watches were
        ClaudeSession(home, session_id="6d0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/zoo").user(
            "a quokka in the logs").write()
        assert _search(capsys, "quokka") == ["6d0375b4-57a5-4f26-b12d-d022ee4e51b7"]
        stats.clear()  # and files made in it later are seen too
        ClaudeSession(home, session_id="7e0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/zoo").user(
            "a wombat in the logs").write()
        assert _search(capsys, "wombat") == ["7e0375b4-57a5-4f26-b12d-d022ee4e51b7"]
    else:
        claude.unlink()
        assert _search(capsys, "cron") == []


def test_an_index_another_process_changed_is_walked(served, capsys, tmp_path):
    """A refresh in another process (here: another Indexer) moves the manifest: the next
    served refresh does not trust its watches' silence."""
    from crabsearch.index.writer import Indexer

    home, claude, stats = served
    for _ in range(3):
        _search(capsys, "cron")
    ClaudeSession(home, session_id="6d0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/app").user(
        "a quokka in the logs").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    stats.clear()
    assert _search(capsys, "quokka") == ["6d0375b4-57a5-4f26-b12d-d022ee4e51b7"]
    assert stats.get("claude") and stats.get("codex")


def test_a_lost_index_is_rebuilt_from_every_transcript(served, capsys, tmp_path):
    import shutil

    for _ in range(3):
        _search(capsys, "cron")
    shutil.rmtree(tmp_path / "index")
    assert _search(capsys, "cron") == [SID]
    assert _search(capsys, "parser") == ["019a0000-1111-7222-8333-444455556666"]


def test_without_a_gate_every_refresh_walks(served, capsys, monkeypatch):
    """A process that runs one command (no ``cli.GATES``) stats every transcript, as before."""
    from crabsearch import cli

    _, _, stats = served
    monkeypatch.setattr(cli, "GATES", None)
    for _ in range(3):
        _search(capsys, "cron")
    stats.clear()
    _search(capsys, "cron")
    assert stats == {"claude": 1, "codex": 1}


def test_a_symbolic_link_under_a_root_means_walking(served, capsys, tmp_path):
    """A transcript reached through a link changes without an event in the watched folder."""
    home, claude, stats = served
    elsewhere = tmp_path / "elsewhere.jsonl"
    os.replace(claude, elsewhere)
    os.symlink(elsewhere, claude)
    for _ in range(3):
        _search(capsys, "cron")
    stats.clear()
    _search(capsys, "cron")
    assert stats.get("claude")


def test_indexer_unchanged_agents_are_kept_as_indexed(tmp_path):
    """``Indexer.refresh(unchanged=...)``: the agents named are not discovered, their indexed
    transcripts are neither read nor removed; the others are walked."""
    from crabsearch.index.writer import Indexer

    home = tmp_path / "home"
    claude = ClaudeSession(home, session_id=SID).user("the cron job runs twice").write()
    CodexSession(home, session_id="019a0000-1111-7222-8333-444455556666").user("parser rejects").write()
    ix = Indexer(tmp_path / "index", env={"HOME": str(home)})
    ix.refresh()
    claude.unlink()  # the caller says claude is unchanged: its documents stay
    report = ix.refresh(unchanged=frozenset({"claude"}))
    assert (report.files_removed, report.files_read, report.files_seen) == (0, 0, 2)
    report = ix.refresh()
    assert report.files_removed == 1

"""A refresh in worker processes (``crabsearch.index.parallel``): the same index as one process
builds, a worker's failures and deaths, the ``--jobs`` / ``index_jobs`` settings. The parent
killed mid-build: ``tests/test_index.py::test_killed_mid_index_the_next_run_finishes_without_duplicates``."""

from __future__ import annotations

import json
import os
import random
import signal
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from crabsearch import config
from crabsearch.cli import main
from crabsearch.index import Indexer, parallel, writer
from crabsearch.index.layout import WORKER_PREFIX, where
from crabsearch.search import Engine
from crabsearch.sources.claude import ClaudeSource

from builders import ClaudeSession, CodexSession, GeminiChat

WORDS = ("pangolin retry backoff database postgres timeout schema migration token refresh cache "
         "invalidation websocket reconnect flaky test fixture deploy rollback kubernetes pod "
         "memory leak profiler getUserById resolve_dirs src/auth/token-store.ts").split()
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def _text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def many_sessions(home: Path, n: int = 60, messages: int = 30) -> list:
    """``n`` sessions of Claude Code, Codex and Gemini CLI (in turn) with words drawn from
    :data:`WORDS`, each file's mtime an hour apart (a fixed reading order, newest first); the
    session builders."""
    rnd = random.Random(7)
    sessions = []
    for i in range(n):
        start = T0 + timedelta(hours=i)
        kind = i % 3
        s = (ClaudeSession(home, start=start) if kind == 0 else CodexSession(home, start=start) if kind == 1
             else GeminiChat(home, start=start, project_id=f"p{i}"))
        for j in range(messages):
            if kind == 2:
                s.user(f"session {i} asks {_text(rnd, 8)}")
                s.gemini(_text(rnd, rnd.randint(5, 40)))
            else:
                s.user(f"session {i} asks {_text(rnd, 8)}").assistant(_text(rnd, rnd.randint(5, 40)))
        if i % 5 == 0:
            (s.user if kind != 2 else s.gemini)("and one quokka")
        path = s.write()
        stamp = (start - T0).total_seconds() + 1_700_000_000
        os.utime(path, (stamp, stamp))
        sessions.append(s)
    return sessions


@pytest.fixture
def in_workers(monkeypatch):
    """Any refresh of two or more transcripts reads in workers; the in-process and worker
    batches are small (several segments, merges); returns the worker counts ``write`` was
    called with."""
    calls = []
    write = parallel.write
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "write", lambda *a: calls.append(a[3]) or write(*a))
    monkeypatch.setattr(writer, "FIRST_BATCH_DOCS", 40)
    monkeypatch.setattr(writer, "FIRST_BATCH_BYTES", 16 * 1024)
    return calls


def _segments(index_dir: Path) -> int:
    from crabsearch.index.store import open_index, release

    ix, _ = open_index(index_dir, create=False)
    try:
        return len(ix._read_toc().segments)
    finally:
        release(ix)


def _leftovers(index_dir: Path) -> list[str]:
    """Worker folders, and segment files the table of contents does not name."""
    from crabsearch.index.store import open_index, release

    gen = where(index_dir)
    ix, _ = open_index(index_dir, create=False)
    try:
        named = {seg.segment_id() for seg in ix._read_toc().segments}
    finally:
        release(ix)
    return sorted(n for n in os.listdir(gen) if n.startswith(WORKER_PREFIX)
                  or (n.startswith("MAIN_") and n.split(".")[0] not in named))


QUERIES = ["pangolin", "retry backoff", '"token refresh"', "auth*", "agent:codex database",
           "pangolin -quokka", "quokka", "getUserById", "session 17", "agent:gemini memory leak"]


def _results(index_dir: Path) -> dict:
    engine = Engine(index_dir)
    try:
        out = {}
        for q in QUERIES:
            hits = [h.to_json() for h in engine.search(q, limit=100).hits]
            # rows of equal score may come in document order, which differs between the builds
            out[q] = sorted(hits, key=lambda h: (-h["score"], h["session_id"]))
        return out
    finally:
        engine.close()


def test_two_workers_build_the_index_one_process_builds(tmp_path, in_workers):
    """Same hits, scores (BM25 statistics are the index's, summed over its segments), best hit
    per session and windows, for words, a phrase, a prefix, agent: filters and an exclusion."""
    home = tmp_path / "home"
    many_sessions(home)
    one = Indexer(tmp_path / "one", env={"HOME": str(home)}, jobs=1).refresh()
    assert in_workers == []
    two = Indexer(tmp_path / "two", env={"HOME": str(home)}, jobs=2).refresh()
    assert in_workers == [2]
    assert (two.files_read, two.messages_added, two.errors) == (one.files_read, one.messages_added, []) == (60, 3612, [])
    assert _segments(tmp_path / "two") > 2 and _leftovers(tmp_path / "two") == []
    a, b = _results(tmp_path / "one"), _results(tmp_path / "two")
    assert all(a[q] for q in QUERIES)
    assert a == b
    again = Indexer(tmp_path / "two", env={"HOME": str(home)}, jobs=2).refresh()
    assert (again.files_read, again.changed) == (0, False)


def test_workers_replace_what_changed_and_remove_what_is_gone(tmp_path, in_workers):
    """A refresh in workers over an index with documents: rewritten transcripts replace theirs
    (deleted by the parent in the commit that adds the new ones), grown ones add the new
    messages, deleted ones go; the same index as one process keeps."""
    home = tmp_path / "home"
    sessions = many_sessions(home, n=24, messages=10)
    paths = [s.path for s in sessions]
    for name, jobs in (("one", 1), ("two", 2)):
        assert Indexer(tmp_path / name, env={"HOME": str(home)}, jobs=jobs).refresh().files_read == 24
    paths[0].unlink()
    paths[3].write_text(paths[3].read_text().replace("session 3 asks", "session 3 rewritten asks"))
    for s in sessions[6:21:3]:  # Claude sessions: one more exchange each, appended
        s.user("the appended pangolin question").assistant("appended answer")
        with open(s.path, "a") as f:
            f.write("".join(json.dumps(line) + "\n" for line in s.lines[-2:]))
    for name, jobs in (("one", 1), ("two", 2)):
        r = Indexer(tmp_path / name, env={"HOME": str(home)}, jobs=jobs).refresh()
        assert (r.files_read, r.files_removed, r.errors) == (6, 1, [])
    assert in_workers == [2, 2]
    assert _results(tmp_path / "one") == _results(tmp_path / "two")
    e = Engine(tmp_path / "two")
    try:
        assert e.doc_count() == 23
        assert [h.session.message_count for h in e.search('"session 3 rewritten"', limit=5).hits] == [20]
        assert len(e.search('"appended pangolin"', limit=50).hits) == 5
    finally:
        e.close()


class FailingClaude(ClaudeSource):
    """Claude Code's reader, failing on a transcript whose name starts with ``bad``: a reader
    that is not the registered one travels to the worker whole (pickled)."""

    def read(self, path, start=0, state=None):
        if Path(path).name.startswith("bad"):
            raise ValueError("cannot make sense of this transcript")
        return super().read(path, start, state)


def test_a_bad_transcript_in_a_worker_is_that_files_error(tmp_path, in_workers):
    home = tmp_path / "home"
    many_sessions(home, n=9, messages=5)
    bad = ClaudeSession(home, session_id="bad00000-0000-4000-8000-000000000000").user("unreadable").write()
    from crabsearch.sources import SOURCES

    sources = [FailingClaude(), SOURCES["codex"], SOURCES["gemini"]]
    reports = {}
    for name, jobs in (("one", 1), ("two", 2)):
        idx = Indexer(tmp_path / name, env={"HOME": str(home)}, sources=sources, jobs=jobs)
        reports[name] = idx.refresh()
        assert reports[name].errors == [f"{bad}: ValueError: cannot make sense of this transcript"]
        assert reports[name].files_read == 9
        again = Indexer(tmp_path / name, env={"HOME": str(home)}, sources=sources, jobs=jobs).refresh()
        assert (again.errors, again.files_read) == ([], 0)  # named once: remembered in the manifest
    assert in_workers == [2]


def test_a_worker_killed_mid_build_is_noticed_and_its_transcripts_read_next_time(tmp_path, in_workers,
                                                                                  monkeypatch):
    home = tmp_path / "home"
    many_sessions(home, n=45, messages=40)
    monkeypatch.setattr(writer, "FIRST_BATCH_DOCS", 10**6)  # one segment per worker, at its end
    monkeypatch.setattr(writer, "FIRST_BATCH_BYTES", 10**9)
    crew = []
    start = parallel._Worker.__init__

    def started(self, *a, **kw):
        start(self, *a, **kw)
        crew.append(self)

    monkeypatch.setattr(parallel._Worker, "__init__", started)
    killed = []

    def progress(p):
        if p.files_done >= 4 and not killed:
            os.kill(crew[1].proc.pid, signal.SIGKILL)
            killed.append(crew[1].proc.pid)

    index = tmp_path / "index"
    report = Indexer(index, env={"HOME": str(home)}, jobs=2).refresh(progress=progress)
    assert killed
    assert [e for e in report.errors if "index worker stopped (killed by signal 9)" in e] == report.errors != []
    assert 0 < report.files_read < 45
    assert _leftovers(index) == []
    done = Indexer(index, env={"HOME": str(home)}, jobs=2).refresh()
    assert (done.errors, done.files_read + report.files_read) == ([], 45)
    e = Engine(index)
    try:
        assert e.doc_count() == 45
        hits = e.search("asks", limit=100).hits
        assert sorted(h.session.message_count for h in hits) == [80] * 36 + [81] * 9  # a quokka in every 5th
    finally:
        e.close()


class DyingClaude(ClaudeSource):
    """Claude Code's reader, whose process dies (``SIGKILL``) three seconds into reading a
    transcript that has a ``.die`` file beside it (removed first: the next refresh reads it)."""

    def read(self, path, start=0, state=None):
        marker = Path(path).with_suffix(".die")
        if marker.exists():
            marker.unlink()
            import time

            time.sleep(3)
            os.kill(os.getpid(), signal.SIGKILL)
        return super().read(path, start, state)


def test_a_transcript_done_after_a_workers_segment_waits_for_its_next_one(tmp_path, in_workers, monkeypatch):
    """A worker finishes a segment (after the newest transcript, batches of one message), reads
    the next transcript into its next segment and dies on the third: the commit of the first
    segment saves the newest transcript's manifest entry, not the second's (its documents were
    never committed), so the next refresh reads the second again."""
    home = tmp_path / "home"
    sessions = many_sessions(home, n=12, messages=5)
    newest = sorted(sessions, key=lambda s: -s.path.stat().st_mtime_ns)
    target = newest[2]  # tiny transcripts: the first worker is handed them all, newest first
    assert isinstance(target, ClaudeSession)
    target.path.with_suffix(".die").write_text("")
    monkeypatch.setattr(writer, "FIRST_BATCH_DOCS", 1)
    from crabsearch.sources import SOURCES

    sources = [DyingClaude(), SOURCES["codex"], SOURCES["gemini"]]
    slow = []

    def progress(p):  # the parent looks late: the first segment and the next "done" come together
        if not slow:
            slow.append(1)
            import time

            time.sleep(2)

    index = tmp_path / "index"
    first = Indexer(index, env={"HOME": str(home)}, sources=sources, jobs=2).refresh(progress=progress)
    assert [e for e in first.errors if "killed by signal 9" in e] == first.errors != []
    again = Indexer(index, env={"HOME": str(home)}, sources=sources, jobs=2).refresh()
    assert again.errors == []
    e = Engine(index)
    try:
        assert e.doc_count() == 12
        assert len(e.search("asks", limit=100).hits) == 12
    finally:
        e.close()


def test_jobs_setting(tmp_path, capsys, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text('index_jobs = "x"\n')
    cfg = config.load(path)
    assert cfg.index_jobs is None and "index_jobs must be a whole number" in cfg.problem
    path.write_text("index_jobs = 0\n")
    assert "index_jobs must be" in config.load(path).problem
    path.write_text("index_jobs = 3\n")
    assert (config.load(path).index_jobs, config.load(path).problem) == (3, None)
    assert Indexer(tmp_path / "i").jobs == parallel.default_jobs() >= 1
    for bad in ("0", "x", "-2"):
        assert main(["index", "--index-dir", str(tmp_path / "i"), "--jobs", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("crabsearch: argument --jobs:") and len(err.strip().splitlines()) == 1


def test_the_cli_and_the_app_take_jobs_from_the_option_then_the_config(tmp_path, monkeypatch):
    from crabsearch.config import Config
    from crabsearch.tui.app import CrabsearchApp

    home = tmp_path / "home"
    many_sessions(home, n=3, messages=2)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    (tmp_path / "config.toml").write_text("index_jobs = 6\n")
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(tmp_path / "config.toml"))
    seen = []
    monkeypatch.setattr(parallel, "workers_for", lambda jobs, todo: seen.append(jobs) or 1)
    assert main(["index", "--index-dir", str(tmp_path / "a")]) == 0
    assert main(["index", "--index-dir", str(tmp_path / "b"), "--jobs", "5"]) == 0
    assert seen == [6, 5]  # the config, then --jobs over it
    app = CrabsearchApp(index_dir=tmp_path / "c", env={"HOME": str(home)}, config=Config(index_jobs=5))
    assert app.indexer.jobs == 5  # more than any default (at most 4)

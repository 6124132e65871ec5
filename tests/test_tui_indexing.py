"""Indexing in the app: a first build, a deleted or damaged index rebuilt, the progress row and its
time left, the live refresh."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from builders import NOW, ClaudeSession, settle
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.indexing import IndexingProgress
from crabsearch.tui.results import ResultList
from tui_helpers import app_of, screen_rows, screen_words, until


async def test_deleting_the_index_while_running_rebuilds_it_and_keeps_answering(sample, tmp_path):
    import shutil

    home, index_dir = sample
    mine = tmp_path / "index"
    shutil.copytree(index_dir, mine, symlinks=True)
    app = CrabsearchApp(mine, env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    lines = []
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert len(screen.result.hits) == 4
        shutil.rmtree(mine)  # rm -rf ~/.cache/crabsearch/index
        progress = screen.query_one(IndexingProgress)
        original = progress._show

        def spy(text):
            original(text)
            lines.append(str(text))

        progress._show = spy
        await pilot.press(*"cron")
        await settle(pilot)
        assert app.screen is screen and len(screen.result.hits) == 3  # answered, after a rebuild
        assert screen.search_error is None
        assert any("The index was deleted: rebuilding it" in line for line in lines)
        assert any("rebuilt from your transcripts" in n.message for n in app._notifications)
        words = screen_words(app)
        assert "Error" not in words and "failed" not in words and "No agent transcripts" not in words
        await pilot.press("escape", "escape")  # back to the box, cleared: the recent sessions
        await settle(pilot)
        assert len(screen.result.hits) == 4 and not screen.query_one("#empty").display
        shutil.rmtree(mine)  # again, and this time nobody types: the app still notices
        screen.run_query("")  # what the watcher's periodic check does
        await settle(pilot)
        assert len(screen.result.hits) == 4 and (mine / "current").exists()


async def test_an_index_damaged_before_the_start_says_so_and_is_rebuilt(sample, tmp_path, monkeypatch):
    """A segment that no longer opens (its directory overwritten, size and time kept): the app
    says the index was damaged, not that it indexes for the first time, and shows the sessions
    once it is rebuilt."""
    import os
    import shutil

    from crabsearch.index.layout import where
    from crabsearch.tui.screens import SearchScreen

    home, index_dir = sample
    mine = tmp_path / "index"
    shutil.copytree(index_dir, mine, symlinks=True)
    for seg in where(mine).glob("*.seg"):
        st = os.stat(seg)
        data = bytearray(seg.read_bytes())
        data[-64:] = b"\xff" * 64  # the compound file's directory
        seg.write_bytes(bytes(data))
        os.utime(seg, ns=(st.st_atime_ns, st.st_mtime_ns))
    reasons = []
    original = SearchScreen.start_indexing

    def spy(self, rebuilding=None):
        reasons.append(rebuilding)
        return original(self, rebuilding)

    monkeypatch.setattr(SearchScreen, "start_indexing", spy)
    app = CrabsearchApp(mine, env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert reasons and reasons[0] == "damaged"
        assert len(screen.result.hits) == 4 and screen.search_error is None


async def test_first_run_shows_recent_sessions_after_the_first_batch_and_names_the_phase(tmp_path, monkeypatch):
    import threading

    from crabsearch.index import writer

    home = tmp_path / "home"
    for n in range(8):
        (ClaudeSession(home, session_id=f"00000000-0000-4000-8000-{n:012d}", cwd=f"/w/p{n}",
                       start=datetime(2026, 3, 1, tzinfo=timezone.utc) + timedelta(hours=n))
         .user(f"pelican number {n} asks about the wombat").assistant("a reply").assistant("more").write())
    monkeypatch.setattr(writer, "FIRST_BATCH_DOCS", 5)  # two sessions make the first batch
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    gate = threading.Event()
    read = app.indexer._index_file
    done = []

    def slow(writer_, job, report, progress):  # the third transcript waits for the test
        if len(done) == 2:
            gate.wait(20)
        done.append(job.path)
        return read(writer_, job, report, progress)

    app.indexer._index_file = slow
    lines = []
    original = IndexingProgress._show

    def spy(self, text):
        original(self, text)
        lines.append(str(text))

    monkeypatch.setattr(IndexingProgress, "_show", spy)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        results = screen.query_one(ResultList)
        for _ in range(600):  # the first batch is committed: its sessions are listed at once
            await pilot.pause(0.05)
            if results.option_count:
                break
        assert app.indexing and results.option_count == 2
        assert any(line.startswith("Indexing your transcripts · reading 2/8 files") for line in lines)
        assert any("writing the index" in line for line in lines)
        status = screen.query_one("#status").region
        bar = screen.query_one("#progress").region
        assert not status.overlaps(bar) and not screen.query_one("#index-status").region.overlaps(bar)
        await pilot.press(*"wombat")
        await pilot.pause(0.3)
        gate.set()
        await settle(pilot, timeout=30)
        assert not app.indexing and len(screen.result.hits) == 8  # the query typed meanwhile: answered
        assert "yet" not in str(screen.query_one("#status").render())


def first_build_reports():
    """``(seconds, Progress)`` of a first build of 500 MB read at 8 MB/s but for a slower
    stretch (4 MB/s from 60 to 160 MB: larger transcripts, a busy disk), 160 messages a MB,
    committed at 2,000 messages (0.3 s) and then every 40,000 (15 s each). A recorded 1 GB build
    (bench/gen.py) slowed so in its first minute, and its line said about 2 min left, then 3."""
    from crabsearch.index.writer import Progress

    mb = 1_000_000
    total, t, done, commits, next_commit = 500 * mb, 0.0, 0, 0, 2000
    out = []
    while done < total:
        rate = (4 if 60 * mb <= done < 160 * mb else 8) * mb
        step = min(total - done, rate // 2)
        t, done = t + step / rate, done + step
        p = Progress(done // mb, 1000, done, total, done * 160 // mb, "reading", commits)
        out.append((t, p))
        if p.messages >= next_commit or done == total:
            out.append((t, Progress(**{**p.__dict__, "phase": "writing"})))
            t += 0.3 if commits == 0 else 15.0
            commits, next_commit = commits + 1, 40_000 * (commits + 1)
            out.append((t, Progress(**{**p.__dict__, "commits": commits})))
    return out


async def test_the_time_left_falls_and_never_rises_during_a_first_build(sample, monkeypatch):
    """The indexing line's "about N s left" rose before it fell when the reading slowed for a
    while (the rate since the start fell): the rate is measured over the recent reading and
    what is shown holds rather than rising by a little."""
    import re
    from types import SimpleNamespace

    from crabsearch.tui import indexing
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(indexing, "time", SimpleNamespace(monotonic=lambda: clock.now))
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)  # the reports come from the test
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        shown = []
        for seconds, progress in first_build_reports():
            clock.now = 1000.0 + seconds
            screen._progress(IndexProgress(progress))
            said = re.search(r"about (\d+) (s|min) left", screen.query_one(IndexingProgress)._line[1])
            if said:
                shown.append(int(said[1]) * (60 if said[2] == "min" else 1))
        assert len(shown) > 100 and shown[0] >= 60
        rises = [(a, b) for a, b in zip(shown, shown[1:]) if b > a]
        assert not rises, rises


async def test_the_progress_bar_never_moves_back_during_a_first_build(sample, monkeypatch):
    """The bar stood at the bytes read while reading and went indeterminate (Textual's bar
    sweeping across) while a batch was written, then back to the bytes read when reading went
    on: it seemed to go backwards. It counts each byte when read and again when its batch is
    committed, of twice the bytes to read: it never moves back and is full once all is written."""
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)  # the reports come from the test
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        bar = screen.query_one("#progress")
        shown = []
        reports = first_build_reports()
        for _, progress in reports:
            screen._progress(IndexProgress(progress))
            shown.append((progress.phase, progress.bytes_done, progress.commits, bar.percentage))
        assert all(pct is not None for *_, pct in shown), [s for s in shown if s[-1] is None][:3]
        backwards = [(a, b) for a, b in zip(shown, shown[1:]) if b[-1] < a[-1]]
        assert not backwards, backwards[:3]
        total = reports[0][1].bytes_total
        first_batch = next(done for phase, done, commits, pct in shown if phase == "writing")
        half = next((done, pct) for phase, done, commits, pct in shown if done >= total / 2)  # one batch committed
        assert half[1] == pytest.approx((half[0] + first_batch) / (2 * total), abs=0.01)
        assert shown[-2][-1] < 1 and shown[-1][-1] == 1  # full once the last batch is committed


async def test_the_time_left_counts_down_while_a_commit_writes(sample, monkeypatch):
    """A commit writes for seconds with no report: the line's time left stood still; it is
    recounted every second (``IndexingProgress._tick``)."""
    import re
    from types import SimpleNamespace

    from crabsearch.tui import indexing
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(indexing, "time", SimpleNamespace(monotonic=lambda: clock.now))
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        reports = first_build_reports()
        at = next(i for i, (_, p) in enumerate(reports) if p.phase == "writing" and p.commits == 1)
        for seconds, progress in reports[:at + 1]:
            clock.now = 1000.0 + seconds
            screen._progress(IndexProgress(progress))
        before = int(re.search(r"about (\d+) s left", screen.query_one(IndexingProgress)._line[1])[1])
        clock.now += 5
        screen.query_one(IndexingProgress)._tick()
        assert int(re.search(r"about (\d+) s left", screen.query_one(IndexingProgress)._line[1])[1]) <= before - 4


@pytest.mark.parametrize("width", [120, 110, 80, 50])
async def test_the_indexing_line_fits_its_row_at_every_width(sample, width, monkeypatch):
    """The progress line never wraps mid-phrase ("about 12 s" / "left" on two rows at 110
    columns): it shortens its heading, then its phase, then drops the estimate."""
    from crabsearch.index.writer import Progress
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    monkeypatch.setattr(IndexingProgress, "_time_left", lambda self, p, now: 12.0)
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)  # progress comes from the test
    app = app_of(sample)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        for _ in range(2):  # the second one measures the row the first one showed
            screen.post_message(IndexProgress(Progress(120, 4780, 12_300_000, 45_000_000, 9000)))
            await pilot.pause()
        line = screen.query_one("#index-status")
        text = str(line.render())
        assert line.size.height == 1 and len(text) <= line.size.width, text
        assert "120/4,780 files" in text and (width < 80 or text.startswith("Indexing"))
        if width >= 110:
            assert text.endswith("about 12 s left"), text


@pytest.mark.parametrize("width", [50, 40, 30])
async def test_on_narrow_terminals_the_progress_bar_yields_its_row_to_the_text(sample, width, monkeypatch):
    from crabsearch.index.writer import Progress
    from crabsearch.tui.messages import IndexProgress
    from crabsearch.tui.screens import SearchScreen

    monkeypatch.setattr(IndexingProgress, "_time_left", lambda self, p, now: 12.0)
    monkeypatch.setattr(SearchScreen, "_index", lambda self: None)
    app = app_of(sample)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.start_indexing("first")
        screen.post_message(IndexProgress(Progress(120, 4780, 12_300_000, 45_000_000, 9000)))
        await pilot.pause()
        await pilot.resize_terminal(width, 30)  # made narrower while indexing
        await pilot.pause()
        screen.post_message(IndexProgress(Progress(121, 4780, 12_400_000, 45_000_000, 9000)))
        await pilot.pause()
        await pilot.pause()
        line, bar = screen.query_one("#index-status"), screen.query_one("#progress")
        text = str(line.render())
        assert line.size.height == 1 and len(text) <= line.size.width, text
        assert "121/4,780 files" in text
        assert any("121/4,780 files" in row for row in screen_rows(app))
        if bar.display:
            assert line.region.right < bar.region.x  # a space between the text and the bar
        assert bar.display == (width >= 50)


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="inotify: Linux only")
async def test_the_periodic_refresh_of_an_unchanged_home_stats_no_transcript(tmp_path, monkeypatch):
    """The app's refresh goes through the refresh gate (``crabsearch.quiet``): once a refresh
    completed, one with nothing touched skips the stat of every transcript, and a change made
    after it is still read by the next."""
    import json

    from crabsearch.sources import SOURCES
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)  # the test calls it
    src = SOURCES["claude"]
    stats = []
    real = type(src).stat
    monkeypatch.setattr(type(src), "stat", lambda self, path: stats.append(path) or real(self, path))
    home = tmp_path / "home"
    s = ClaudeSession(home).user("the first words")
    path = s.write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen

        async def periodic():
            screen._periodic_refresh()
            await until(pilot, lambda: not app.indexing)

        await periodic()  # the gate is clean after a completed refresh
        stats.clear()
        await periodic()
        await periodic()
        assert stats == []
        s.assistant("the agent now mentions the quokka")
        with open(path, "a") as fh:
            fh.write(json.dumps(s.lines[-1]) + "\n")
        await periodic()
        assert stats
        await pilot.press(*"quokka")
        await settle(pilot)
        assert len(screen.result.hits) == 1


async def test_an_appended_line_is_found_within_seconds_without_the_periodic_refresh(tmp_path, monkeypatch):
    import json

    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)  # only file events can refresh
    home = tmp_path / "home"
    s = ClaudeSession(home).user("first words only")
    path = s.write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"zanzibarquux")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert results.option_count == 0
        s.assistant("now the agent writes about zanzibarquux")
        with open(path, "a") as fh:
            fh.write(json.dumps(s.lines[-1]) + "\n")
        took = await until(pilot, lambda: results.option_count == 1)
        assert took < 5


async def test_a_refresh_does_not_move_the_rows_under_the_cursor_and_says_what_is_new(tmp_path, monkeypatch):
    from crabsearch.tui import screens

    monkeypatch.setattr(screens, "REFRESH_EVERY", 3600)
    home = tmp_path / "home"
    for n in range(5):
        ClaudeSession(home, session_id=f"55555555-0000-4000-8000-00000000000{n}",
                      start=datetime(2026, 3, 10 + n, tzinfo=timezone.utc)).user(f"old session {n}").write()
    app = CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        await pilot.press("down", "down", "down")
        before = [h.session.session_id for h in results.hits]
        at = results.current_hit.session.session_id
        row = results.highlighted
        (ClaudeSession(home, session_id="55555555-0000-4000-8000-000000000009",
                       start=datetime(2026, 3, 19, tzinfo=timezone.utc)).user("a new session").write())
        status = app.screen.query_one("#status")
        await until(pilot, lambda: "1 new session (Home: show)" in str(status.render()))
        assert [h.session.session_id for h in results.hits] == before  # nothing moved
        assert results.highlighted == row and results.current_hit.session.session_id == at
        await pilot.press("home")
        await settle(pilot)
        assert results.hits[0].session.session_id.endswith("9") and results.highlighted == 0
        assert "new session" not in str(status.render())


def test_watched_directories_are_the_agents_own_not_home_or_project_trees(tmp_path):
    from crabsearch.index import Indexer
    from crabsearch.watch import watch_roots

    home = tmp_path / "home"
    for d in (".claude/projects", ".codex/sessions", "code/proj"):
        (home / d).mkdir(parents=True)
    indexer = Indexer(tmp_path / "index", env={"HOME": str(home), "CRABSEARCH_AIDER_DIRS": str(home / "code")},
                      extra_dirs={"claude": [str(home / ".claude" / "projects")]})
    roots = watch_roots(indexer)
    assert sorted(roots) == [(home / ".claude").resolve(), (home / ".codex").resolve()]  # no home, no code

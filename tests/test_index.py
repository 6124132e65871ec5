"""Incremental indexing: unchanged, appended, partial last line, rewritten, deleted, version stamp."""

from __future__ import annotations

import json
import os

import pytest

from crabsearch.index import Indexer
from crabsearch.index.layout import where
from crabsearch.index.store import STAMP
from crabsearch.search import Engine

from builders import ClaudeSession, CodexSession


def make_indexer(home, tmp_path):
    return Indexer(tmp_path / "index", env={"HOME": str(home)})


def append_last(path, s) -> None:
    """Append the session builder ``s``'s last line to its transcript ``path`` (as the agent does)."""
    path.write_text(path.read_text() + json.dumps(s.lines[-1]) + "\n")


def hits_for(tmp_path, query, **kw):
    engine = Engine(tmp_path / "index")
    try:
        return engine.search(query, **kw).hits
    finally:
        engine.close()


def test_first_build_then_nothing_changed(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("the cron schedule drifts every night").assistant("Use UTC in the crontab").write()
    CodexSession(home).user("flaky retry backoff in the client").assistant("Add jitter").write()
    idx = make_indexer(home, tmp_path)
    first = idx.refresh()
    assert first.files_read == 2 and first.messages_added == 4
    assert first.by_agent == {"claude": 1, "codex": 1}
    again = idx.refresh()
    assert again.files_seen == 2 and again.files_read == 0 and again.messages_added == 0
    assert len(hits_for(tmp_path, "crontab")) == 1


def test_appended_lines_are_read_from_the_stored_offset(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home).user("first question about widgets")
    path = s.write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    s.assistant("an answer mentioning zanzibar")
    append_last(path, s)
    report = idx.refresh()
    assert report.files_read == 1 and report.messages_added == 1
    assert report.bytes_read < path.stat().st_size  # only the tail was read
    [hit] = hits_for(tmp_path, "zanzibar")
    assert hit.message_index == 1 and hit.session.message_count == 2


def test_partial_last_line_is_pending_then_indexed_once(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home).user("hello there")
    path = s.write()
    s.assistant("the word quokka appears here")
    full = json.dumps(s.lines[-1])
    with open(path, "a") as fh:
        fh.write(full[:25])  # the agent is still writing this line
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    assert hits_for(tmp_path, "quokka") == []
    with open(path, "a") as fh:
        fh.write(full[25:] + "\n")
    idx.refresh()
    [hit] = hits_for(tmp_path, "quokka")
    assert hit.session.message_count == 2


def test_unterminated_but_valid_last_line_is_indexed_and_not_duplicated(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home).user("alpha question").assistant("the answer is platypus")
    path = s.write()
    path.write_text(path.read_text().rstrip("\n"))  # file ends without a newline
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    assert len(hits_for(tmp_path, "platypus")) == 1
    s.assistant("and a follow up about wombats")
    path.write_text(path.read_text() + "\n" + json.dumps(s.lines[-1]) + "\n")
    idx.refresh()
    [hit] = hits_for(tmp_path, "platypus")
    assert hit.message_index == 1 and hit.session.message_count == 3
    engine = Engine(tmp_path / "index")
    page = engine.page(hit.ref, 0, 10)
    assert [m.message_index for m in page.messages] == [0, 1, 2]
    assert page.messages[2].text == "and a follow up about wombats"


def test_rewritten_file_is_reread_from_the_start(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home, session_id="11111111-aaaa-4aaa-8aaa-111111111111").user("old topic: marmalade")
    path = s.write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    s2 = ClaudeSession(home, session_id=s.session_id).user("new topic: kumquat").assistant("sure, kumquat")
    s2.write()
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    idx.refresh()
    assert hits_for(tmp_path, "marmalade") == []
    [hit] = hits_for(tmp_path, "kumquat")
    assert hit.session.message_count == 2


def test_shrunk_file_is_reread(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home).user("keep this: walrus").assistant("drop this: narwhal")
    path = s.write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    path.write_text(json.dumps(s.lines[0]) + "\n")
    idx.refresh()
    assert hits_for(tmp_path, "narwhal") == []
    assert len(hits_for(tmp_path, "walrus")) == 1


def test_vanished_file_documents_are_deleted(tmp_path):
    home = tmp_path / "home"
    path = ClaudeSession(home).user("ephemeral axolotl").write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    path.unlink()
    report = idx.refresh()
    assert report.files_removed == 1
    assert hits_for(tmp_path, "axolotl") == []


def test_a_run_pointed_elsewhere_keeps_what_other_folders_found(tmp_path):
    """One index, several views of what exists: ``CODEX_HOME=/mnt/backup/.codex crabsearch``
    (the README's example) found only the backup's rollout and deleted the home's sessions,
    which the next plain run read again from the start. Neither run deletes what the other
    found while its files are there: the plain run after reads nothing again and keeps the
    backup's session."""
    home, backup = tmp_path / "home", tmp_path / "backup"
    CodexSession(home).user("the home session about pelicans").write()
    CodexSession(home).user("another home session about pelicans").write()
    CodexSession(backup).user("the backup session about herons").write()
    plain = make_indexer(home, tmp_path)
    plain.refresh()
    pointed = Indexer(tmp_path / "index", env={"HOME": str(home), "CODEX_HOME": str(backup / ".codex")})
    report = pointed.refresh()
    assert report.files_removed == 0 and report.files_kept == 2 and report.files_read == 1
    assert len(hits_for(tmp_path, "pelicans")) == 2 and len(hits_for(tmp_path, "herons")) == 1
    again = plain.refresh()
    assert again.files_read == 0 and again.files_removed == 0 and again.files_kept == 1
    assert len(hits_for(tmp_path, "pelicans")) == 2 and len(hits_for(tmp_path, "herons")) == 1


def test_a_deleted_transcript_goes_even_when_its_folder_was_not_looked_in(tmp_path):
    """What keeps an indexed transcript that a run did not find is its file: once deleted, the
    run pointed elsewhere deletes its documents too (its ``stat`` says it does not exist)."""
    home, backup = tmp_path / "home", tmp_path / "backup"
    gone = CodexSession(home).user("a deleted session about pelicans").write()
    CodexSession(backup).user("the backup session about herons").write()
    make_indexer(home, tmp_path).refresh()
    gone.unlink()
    report = Indexer(tmp_path / "index", env={"HOME": str(home), "CODEX_HOME": str(backup / ".codex")}).refresh()
    assert report.files_removed == 1 and report.files_kept == 0
    assert hits_for(tmp_path, "pelicans") == []


def test_a_transcript_found_under_another_name_is_indexed_once(tmp_path):
    """A folder reached through a symlink one run and directly the next is one set of files: the
    documents of the old names go (the same device and inode), the session is not listed twice."""
    home, real = tmp_path / "home", tmp_path / "real"
    CodexSession(real).user("a session about pelicans").write()
    home.mkdir()
    (home / ".codex").symlink_to(real / ".codex")
    make_indexer(home, tmp_path).refresh()
    report = Indexer(tmp_path / "index", env={"HOME": str(home), "CODEX_HOME": str(real / ".codex")}).refresh()
    assert report.files_removed == 1 and report.files_kept == 0
    assert len(hits_for(tmp_path, "pelicans")) == 1
    assert Engine(tmp_path / "index").doc_count() == 1


def test_a_transcript_replaced_by_a_fifo_leaves_the_index(tmp_path):
    """A FIFO or a directory where a transcript was is no transcript (discovery passes it over,
    and it is never opened): its documents go, as a deleted file's do."""
    home = tmp_path / "home"
    path = ClaudeSession(home).user("ephemeral axolotl").write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    path.unlink()
    os.mkfifo(path)
    report = idx.refresh()
    assert report.files_removed == 1 and report.files_kept == 0
    assert hits_for(tmp_path, "axolotl") == []


def test_schema_version_mismatch_rebuilds(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("the ocelot").write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    (where(tmp_path / "index") / STAMP).write_text("0")
    report = idx.refresh()
    assert report.rebuilt and "rebuilding" in report.rebuilt
    assert report.files_read == 1
    assert len(hits_for(tmp_path, "ocelot")) == 1


def test_unreadable_transcript_is_named_not_fatal(tmp_path, monkeypatch):
    home = tmp_path / "home"
    good = ClaudeSession(home).user("the good capybara").write()
    bad = ClaudeSession(home).user("the bad one").write()
    from crabsearch.sources import SOURCES

    real_read = SOURCES["claude"].read

    def flaky(path, start=0, state=None):
        if str(path) == str(bad):
            raise PermissionError(13, "Permission denied")
        return real_read(path, start, state)

    monkeypatch.setattr(SOURCES["claude"], "read", flaky)
    report = make_indexer(home, tmp_path).refresh()
    assert any("Permission denied" in e for e in report.errors)
    assert len(hits_for(tmp_path, "capybara")) == 1
    assert good.exists()


def test_agent_directories_are_never_written(tmp_path):
    home = tmp_path / "home"
    path = ClaudeSession(home).user("read only please").write()
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in home.rglob("*") if p.is_file()}
    make_indexer(home, tmp_path).refresh()
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in home.rglob("*") if p.is_file()}
    assert before == after and path in after


def test_a_running_engine_sees_rewrites_and_deletions(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home).user("first version mentions tapir")
    path = s.write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    engine = Engine(tmp_path / "index")
    assert len(engine.recent()) == 1 and len(engine.search("tapir").hits) == 1
    s.user("appended words about okapi")
    append_last(path, s)
    idx.refresh()
    assert len(engine.recent()) == 1  # the session document was replaced, not duplicated
    [hit] = engine.search("okapi").hits
    assert hit.session.message_count == 2 and hit.item.text == "appended words about okapi"
    path.unlink()
    idx.refresh()
    assert engine.recent() == [] and engine.search("tapir").hits == []


def test_engine_on_an_empty_index_then_a_filled_one(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    idx = make_indexer(home, tmp_path)
    idx.refresh()  # creates an index with no segment
    engine = Engine(tmp_path / "index")
    assert engine.recent() == [] and engine.search("anything").hits == []
    ClaudeSession(home).user("now there is a gazelle").write()
    idx.refresh()
    assert len(engine.search("gazelle").hits) == 1 and len(engine.recent()) == 1


def test_empty_files_are_not_listed_as_sessions(tmp_path):
    home = tmp_path / "home"
    path = ClaudeSession(home).user("x").write()
    path.write_text("")
    make_indexer(home, tmp_path).refresh()
    assert Engine(tmp_path / "index").recent() == []


def test_two_indexers_at_once_index_each_session_once(tmp_path):
    import subprocess
    import sys

    home = tmp_path / "home"
    for i in range(30):
        ClaudeSession(home).user(f"session number {i} about lemurs").assistant("ok").write()
    env = {**os.environ, "HOME": str(home), "CRABSEARCH_INDEX_DIR": str(tmp_path / "index")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    procs = [subprocess.Popen([sys.executable, "-m", "crabsearch", "index", "--json"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    engine = Engine(tmp_path / "index")
    assert len(engine.recent(limit=100)) == 30
    assert engine.doc_count() == 30
    assert sum(json.loads(o)["files_read"] for o, _ in outs) == 30


def test_directory_symlinks_are_followed_once_and_loops_end(tmp_path):
    home = tmp_path / "home"
    elsewhere = tmp_path / "external"
    s = CodexSession(elsewhere).user("a symlinked rollout about narwhals")
    s.write()
    sessions = home / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "linked").symlink_to(elsewhere / ".codex" / "sessions")
    (sessions / "loop").symlink_to(sessions)  # a loop back to itself
    (sessions / "again").symlink_to(elsewhere / ".codex" / "sessions")  # the same directory twice
    report = make_indexer(home, tmp_path).refresh()
    assert report.files_read == 1
    assert len(hits_for(tmp_path, "narwhals")) == 1


def test_a_line_over_the_cap_is_skipped_and_counted(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home).user("before the giant line").assistant("x" * (17 * 1024 * 1024)).user("after it: manatee")
    path = s.write()
    report = make_indexer(home, tmp_path).refresh()
    assert report.skipped_lines == 1
    [hit] = hits_for(tmp_path, "manatee")
    assert hit.session.message_count == 2 and path.stat().st_size > 17_000_000


def test_a_generation_whose_table_of_contents_is_gone_is_rebuilt_and_says_so(tmp_path):
    """A user trial: with ``_MAIN_*.toc`` deleted, ``crabsearch search`` read every transcript
    again for half a minute without a word (Whoosh sees no index there); a stamped generation
    without its table of contents is damaged."""
    home = tmp_path / "home"
    ClaudeSession(home).user("durable dugong").write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    for f in where(tmp_path / "index").glob("_MAIN_*.toc"):
        f.unlink()
    report = idx.refresh()
    assert report.rebuilt == "index was damaged (its table of contents is missing); rebuilding"
    assert len(hits_for(tmp_path, "dugong")) == 1


@pytest.mark.parametrize("damage", ["segments", "toc"])
def test_a_damaged_index_is_rebuilt(tmp_path, damage):
    home = tmp_path / "home"
    ClaudeSession(home).user("durable dugong").write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    pattern = "*.seg" if damage == "segments" else "_MAIN_*.toc"
    files = list(where(tmp_path / "index").glob(pattern))
    assert files
    for f in files:
        f.write_bytes(b"\x00garbage" * 10)
    report = idx.refresh()
    assert report.rebuilt and "damaged" in report.rebuilt
    assert len(hits_for(tmp_path, "dugong")) == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_killed_mid_index_the_next_run_finishes_without_duplicates(tmp_path, jobs):
    """``kill -9`` of ``crabsearch index`` mid-build, in one process and with two workers (which
    die with it; any refresh reads in workers here: ``parallel.MIN_BYTES = 0``): the next run
    finishes, nothing twice, no worker folder left."""
    import signal
    import subprocess
    import sys
    import time

    from crabsearch.index.layout import WORKER_PREFIX

    home = tmp_path / "home"
    for i in range(40):
        s = ClaudeSession(home)
        for j in range(150):
            s.user(f"session {i} question {j} about the pangolin").assistant(f"answer {j}")
        s.write()
    env = {**os.environ, "HOME": str(home), "CRABSEARCH_INDEX_DIR": str(tmp_path / "index")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    cmd = ([sys.executable, "-m", "crabsearch", "index"] if jobs == 1 else
           [sys.executable, "-c", "import sys; from crabsearch.index import parallel; parallel.MIN_BYTES = 0; "
            "from crabsearch.cli import main; sys.exit(main(sys.argv[1:]))", "index", "--jobs", str(jobs)])
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    deadline = time.monotonic() + 60
    while jobs > 1 and proc.poll() is None and time.monotonic() < deadline:  # killed while its workers write
        gen = tmp_path / "index" / "current"
        if gen.is_dir() and any(n.startswith(WORKER_PREFIX) for n in os.listdir(gen)):
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    done = subprocess.run(cmd + ["--json"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [n for n in os.listdir(where(tmp_path / "index")) if n.startswith(WORKER_PREFIX)] == []
    engine = Engine(tmp_path / "index")
    assert engine.doc_count() == 40
    hits = engine.search("pangolin", limit=100).hits
    assert len(hits) == 40 and all(h.session.message_count == 300 for h in hits)


def test_a_mode_000_transcript_is_named_once_then_indexed_when_readable(tmp_path):
    """Real permissions, not a monkeypatched read. Root reads anything, so as root the indexer
    runs in a child process as ``nobody``."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp(prefix="crabsearch-mode000-"))
    try:
        os.chmod(root, 0o777)
        home = root / "home"
        ClaudeSession(home).user("the readable capybara").write()
        locked = ClaudeSession(home).user("the locked wombat").write()
        for p in [home, *home.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(locked, 0)
        script = ("import json, sys; from crabsearch.index import Indexer; "
                  "r = Indexer(sys.argv[1], env={'HOME': sys.argv[2]}).refresh(); "
                  "print(json.dumps({'errors': r.errors, 'read': r.files_read}))")
        as_nobody = os.geteuid() == 0

        def refresh() -> dict:
            def drop():  # runs in the child before exec
                os.setgid(65534)
                os.setuid(65534)

            try:
                out = subprocess.run([sys.executable, "-c", script, str(root / "index"), str(home)],
                                     capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent,
                                     preexec_fn=drop if as_nobody else None,
                                     env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
            except (PermissionError, subprocess.CalledProcessError) as exc:
                if as_nobody:  # e.g. the interpreter lives under /root
                    pytest.skip(f"running as root, and user nobody cannot run this Python: {exc}")
                raise
            return json.loads(out.stdout)

        first = refresh()
        assert first["read"] == 1 and len(first["errors"]) == 1
        assert str(locked) in first["errors"][0] and "ermission denied" in first["errors"][0]
        assert refresh()["errors"] == []  # named once, not at every refresh
        os.chmod(locked, 0o644)  # readable again (ctime changed): indexed
        third = refresh()
        assert third["read"] == 1 and third["errors"] == []
        assert len(Engine(root / "index").search("wombat").hits) == 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_readers_read_segments_in_place_not_copies(tmp_path):
    """Whoosh's mmap reader copied each segment's postings into a BytesIO; the zero-copy reader
    (index/whoosh_fixes.py) must be what segments open with, and read the same data."""
    from whoosh.filedb import compound

    from crabsearch.index.whoosh_fixes import ViewBufferFile, ViewFile

    assert compound.BufferFile is ViewBufferFile
    home = tmp_path / "home"
    ClaudeSession(home).user("a wombat in the segment").write()
    make_indexer(home, tmp_path).refresh()
    engine = Engine(tmp_path / "index")
    assert len(engine.search("wombat").hits) == 1
    f = ViewFile(memoryview(b"ab\ncd"))
    assert (f.readline(), f.tell(), f.read(1), f.read(), f.read()) == (b"ab\n", 3, b"c", b"d", b"")
    assert f.seek(-2, 2) == 3 and f.read(5) == b"cd" and f.seek(1) == 1 and f.readline() == b"b\n"


def test_a_hit_in_an_older_segment_gets_the_sessions_current_document(tmp_path):
    """A row's session document is looked up in its hit message's segment first
    (``filtering.live_document``); after an append, the transcript's session document there is
    the deleted one, and the current one (two messages) is in a newer segment."""
    home = tmp_path / "home"
    for i in range(40):  # enough documents that the first segment is neither merged nor purged
        ClaudeSession(home).user(f"other question {i}").assistant("other answer").write()
    s = ClaudeSession(home).user("first question about quokkas")
    path = s.write()
    idx = make_indexer(home, tmp_path)
    idx.refresh()
    s.assistant("an answer mentioning zanzibar")
    append_last(path, s)
    idx.refresh()
    engine = Engine(tmp_path / "index")
    try:
        assert len(engine._get_searcher().leaf_searchers()) > 1  # the old message stays where it was
        [hit] = engine.search("quokkas").hits
    finally:
        engine.close()
    assert hit.message_index == 0 and hit.session.message_count == 2

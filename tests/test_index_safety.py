"""Issue 16, defects 8 and 10: a damaged segment is rebuilt, and everything crabsearch writes is
private to the user, whoever made the index directory."""

from __future__ import annotations

import json
import os
import random
import stat
from pathlib import Path

import pytest

from builders import ClaudeSession
from source_checks import run_cli

from crabsearch.paths import write_atomically
from crabsearch.index import Indexer
from crabsearch.index.layout import where
from crabsearch.index.store import DAMAGED, SEAL, IndexDamaged, seal_problem
from crabsearch.paths import write_private
from crabsearch.search import Engine


def _home(tmp_path):
    home = tmp_path / "home"
    for i in range(12):
        (ClaudeSession(home, session_id=f"5afe{i:04d}-0000-4000-8000-000000000000", cwd=f"/home/dev/p{i}")
         .user(f"the cron job number {i} fails with a timeout")
         .assistant(f"I raised the timeout of job {i} and added a retry with backoff").write())
    return home


def _index(home, index_dir):
    return Indexer(index_dir, env={"HOME": str(home)}, home=home).refresh()


def _mode(p) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


# -- defect 10: permissions ------------------------------------------------------------------


def _walk(d):
    for top, dirs, files in os.walk(d):
        yield from (Path(top) / n for n in dirs + files)


def test_a_pre_existing_open_index_dir_becomes_private(tmp_path):
    home = _home(tmp_path)
    ix = tmp_path / "ix"
    ix.mkdir(mode=0o755)
    os.chmod(ix, 0o755)
    _index(home, ix)
    assert _mode(ix) == 0o700
    names = sorted(p.name for p in _walk(ix))
    assert "manifest.db" in names and SEAL in names
    assert "MAIN_WRITELOCK" not in names  # Whoosh's lock file is removed once its writer is done
    for p in _walk(ix):
        if not p.is_symlink():
            assert _mode(p) & 0o077 == 0, (p.name, oct(_mode(p)))


def test_an_index_made_world_readable_is_made_private_again(tmp_path):
    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    os.chmod(ix, 0o755)
    for p in _walk(ix):
        if not p.is_symlink():
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    (ClaudeSession(home).user("one more cron question").write())
    _index(home, ix)
    assert _mode(ix) == 0o700
    assert all(_mode(p) & 0o077 == 0 for p in _walk(ix) if not p.is_symlink())


def test_a_shared_directory_keeps_its_mode_and_other_files(tmp_path):
    home = _home(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    (shared / "notes.txt").write_text("mine")
    os.chmod(shared / "notes.txt", 0o644)
    _index(home, shared)
    assert _mode(shared) == 0o755  # not crabsearch's alone: other users keep their access
    assert _mode(shared / "notes.txt") == 0o644
    assert all(_mode(p) & 0o077 == 0 for p in _walk(shared) if p.name != "notes.txt" and not p.is_symlink())


def test_written_files_are_private(tmp_path):
    old = tmp_path / "old.txt"
    old.write_text("x")
    os.chmod(old, 0o644)
    write_private(old, "secret words")
    assert _mode(old) == 0o600 and old.read_text() == "secret words"
    new = tmp_path / "export.md"
    write_atomically(new, ["# a session\n"])
    assert _mode(new) == 0o600
    os.chmod(new, 0o640)  # an existing file keeps the mode its owner gave it
    write_atomically(new, ["# again\n"])
    assert _mode(new) == 0o640


def test_app_copy_file_is_private(tmp_path, monkeypatch):
    from crabsearch.tui.app import CrabsearchApp

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    app = CrabsearchApp(tmp_path / "ix", env={"HOME": str(tmp_path)}, index_on_start=False)
    app.copy_file = tmp_path / "cache" / "crabsearch" / "last-copy.txt"
    app.copy_to_clipboard = lambda text: None
    app.notify = lambda *a, **k: None
    app.actions.copy_text("sk-live key words", "hit")
    assert _mode(app.copy_file) == 0o600
    assert _mode(app.copy_file.parent) == 0o700


# -- defect 8: damage ------------------------------------------------------------------------


def _scribble(seg, seed: int, keep_mtime: bool, whole: bool = False) -> None:
    st = os.stat(seg)
    data = bytearray(seg.read_bytes())
    rnd = random.Random(seed)
    if whole:
        lo = len(data) // 5
        data[lo:len(data) - 64] = rnd.randbytes(len(data) - 64 - lo)
    else:
        for _ in range(64):
            at = rnd.randrange(max(1, len(data) - 64))
            data[at:at + 64] = rnd.randbytes(64)
    seg.write_bytes(bytes(data))
    if keep_mtime:
        os.utime(seg, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_overwritten_segment_is_rebuilt_by_the_next_index(tmp_path, capsys, monkeypatch):
    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    for seg in where(ix).glob("*.seg"):
        _scribble(seg, 1, keep_mtime=False)
    assert "changed on disk" in (seal_problem(ix) or "")
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run_cli(capsys, "index", "--index-dir", str(ix), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert "damaged" in report["rebuilt"] and report["messages_added"] == 24
    assert seal_problem(ix) is None
    code, out, err = run_cli(capsys, "search", "backoff", "--json", "--index-dir", str(ix))
    assert code == 0 and len(json.loads(out)["hits"]) == 12


def test_a_read_error_in_a_segment_marks_damage_and_search_rebuilds(tmp_path, capsys, monkeypatch):
    import shutil

    home = _home(tmp_path)
    pristine = tmp_path / "pristine"
    _index(home, pristine)
    ix = tmp_path / "ix"
    for seed in range(40):  # damage that size and mtime do not show: most seeds break a read
        shutil.rmtree(ix, ignore_errors=True)
        shutil.copytree(pristine, ix, symlinks=True)
        for seg in where(ix).glob("*.seg"):
            _scribble(seg, seed, keep_mtime=True)
        assert seal_problem(ix) is None
        engine = Engine(ix)
        try:
            for q in ("backoff", "timeout", "cron job", "retry*", '"job 3"', "agent:claude"):
                for hit in engine.search(q).hits:
                    engine.window(hit, 4, 4)
        except IndexDamaged as exc:  # never the raw zlib.error / UnicodeDecodeError
            assert "damaged" in str(exc)
            break
        finally:
            engine.close()
    else:
        pytest.fail("no seed damaged a segment read")
    assert (where(ix) / DAMAGED).exists()
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run_cli(capsys, "search", "backoff", "--json", "--no-refresh", "--index-dir", str(ix))
    assert code == 0, err
    assert "rebuilding" in err
    assert len(json.loads(out)["hits"]) == 12
    assert not (where(ix) / DAMAGED).exists()


def test_a_failure_that_damage_does_not_explain_is_not_called_damage(tmp_path, monkeypatch):
    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    engine = Engine(ix)

    def bug(*args, **kwargs):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "a bug, not damage")

    monkeypatch.setattr(engine._sessions, "decorate", bug)  # any step of a search
    with pytest.raises(UnicodeDecodeError):
        engine.search("backoff")
    assert not (where(ix) / DAMAGED).exists()  # every sealed file still matches its checksum


# -- defect 4: a rebuild swaps in a complete index --------------------------------------------


def test_a_variant_switch_builds_a_new_generation_and_swaps_it_in_when_complete(tmp_path, monkeypatch):
    from crabsearch.index import store
    from crabsearch.index.layout import current_dir

    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    old = current_dir(ix)
    engine = Engine(ix)
    assert len(engine.search("backoff").hits) == 12
    seen_during_build = []
    tools = Indexer(ix, env={"HOME": str(home)}, home=home, index_tool_output=True)

    def search_meanwhile(progress):
        reader = Engine(ix)
        seen_during_build.append((current_dir(ix), len(reader.search("backoff").hits)))
        reader.close()  # a reader that holds the old generation keeps it on disk

    # while the new generation is being written, searches still see the old, complete one
    report = tools.refresh(progress=search_meanwhile)
    assert "switched on" in report.rebuilt
    assert seen_during_build and all(gen == old and n == 12 for gen, n in seen_during_build)
    new = current_dir(ix)
    assert new != old and (old / store.RETIRED).exists()  # kept a while for searches that opened it
    assert len(engine.search("backoff").hits) == 12  # the running engine moved to the new generation
    monkeypatch.setattr(store, "GRACE", 0.0)
    ClaudeSession(home).user("a new backoff question").write()
    tools.refresh()
    assert not old.exists() and current_dir(ix) == new


def test_replaced_generations_go_at_the_next_refresh_even_with_nothing_to_do(tmp_path, monkeypatch):
    """Repeated tool-output switches each leave the replaced generation for :data:`GRACE` seconds;
    they stayed until a refresh found a change (143 copies, 50 MB in a fault run). A refresh that
    finds nothing to do removes them once their grace has passed, and keeps the current one."""
    from crabsearch.index import store
    from crabsearch.index.layout import current_dir

    home = _home(tmp_path)
    ix = tmp_path / "ix"
    for tools in (False, True, False, True):
        Indexer(ix, env={"HOME": str(home)}, home=home, index_tool_output=tools).refresh()
    gens = sorted(p.name for p in ix.iterdir() if p.name.startswith("gen-"))
    assert len(gens) == 4  # three replaced ones, within their grace
    engine = Engine(ix)
    assert len(engine.search("backoff").hits) == 12
    monkeypatch.setattr(store, "GRACE", 0.0)
    report = Indexer(ix, env={"HOME": str(home)}, home=home, index_tool_output=True).refresh()
    assert not report.files_read and not report.rebuilt  # nothing to do
    assert [p.name for p in ix.iterdir() if p.name.startswith("gen-")] == [current_dir(ix).name]
    assert len(engine.search("backoff").hits) == 12


def test_a_replaced_generation_stays_while_a_reader_holds_it(tmp_path, monkeypatch):
    """An engine that opened a generation and has not searched since a swap replaced it still has
    its files open: the generation is removed only once that engine lets go (its next search moves
    to the new one), by the next refresh, whatever that refresh finds."""
    from crabsearch.index import store
    from crabsearch.index.layout import current_dir

    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    old = current_dir(ix)
    engine = Engine(ix)
    assert len(engine.search("backoff").hits) == 12
    tools = Indexer(ix, env={"HOME": str(home)}, home=home, index_tool_output=True)
    tools.refresh()
    monkeypatch.setattr(store, "GRACE", 0.0)
    tools.refresh()
    assert old.exists() and current_dir(ix) != old  # held by the engine
    assert len(engine.search("backoff").hits) == 12  # moves to the new generation, lets go of the old
    tools.refresh()
    assert not old.exists()


def test_deleting_the_index_while_an_engine_runs_finds_nothing_then_the_rebuilt_one(tmp_path):
    import shutil

    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    engine = Engine(ix)
    assert len(engine.recent()) == 12
    shutil.rmtree(ix)
    assert engine.recent() == [] and engine.search("backoff").hits == []
    _index(home, ix)
    assert len(engine.search("backoff").hits) == 12


# -- defect 9: leftovers ---------------------------------------------------------------------


def _top(index_dir, queries):
    engine = Engine(index_dir)
    return {q: [(h.session.session_id, round(h.score, 6)) for h in engine.search(q, limit=20).hits]
            for q in queries}


def test_a_crash_between_commit_and_manifest_leaves_no_deleted_documents_that_change_scores(tmp_path, monkeypatch):
    from crabsearch.index.writer import Indexer as _Indexer

    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    for i in range(12, 20):  # a second batch, whose manifest save is lost in a crash
        (ClaudeSession(home, session_id=f"5afe{i:04d}-0000-4000-8000-000000000000", cwd=f"/home/dev/p{i}")
         .user(f"the cron job number {i} fails with a timeout after the deploy")
         .assistant(f"the deploy left job {i} without its retry").write())
    real_save = _Indexer._save

    def crash(self, manifest, entries):
        raise KeyboardInterrupt("killed after the commit, before the manifest save")

    monkeypatch.setattr(_Indexer, "_save", crash)
    with pytest.raises(KeyboardInterrupt):
        _index(home, ix)
    monkeypatch.setattr(_Indexer, "_save", real_save)
    _index(home, ix)  # reads the second batch again: its first documents are replaced
    clean = tmp_path / "clean"
    _index(home, clean)
    queries = ["cron", "timeout", "deploy retry", "job", "backoff", "the cron job", "fails", "retry", "number",
               "raised"]
    assert _top(ix, queries) == _top(clean, queries)
    from crabsearch.index.store import open_index

    index, _ = open_index(ix, create=False)
    with index.reader() as reader:
        assert reader.doc_count() == reader.doc_count_all()  # deleted documents were purged


def test_a_full_disk_at_commit_leaves_no_half_written_segment(tmp_path, monkeypatch):
    import errno

    from whoosh.index import TOC

    home = _home(tmp_path)
    ix = tmp_path / "ix"
    _index(home, ix)
    before = sorted(p.name for p in where(ix).iterdir())
    (ClaudeSession(home).user("a new question about the cron timeout " * 50).write())

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TOC, "write", full)
    with pytest.raises(OSError):
        _index(home, ix)
    monkeypatch.undo()
    after = sorted(p.name for p in where(ix).iterdir())
    assert [n for n in after if n not in before] == []  # the new segment is gone
    report = _index(home, ix)
    assert report.files_read == 1 and len(Engine(ix).search("backoff").hits) == 12


def test_a_damage_marker_keeps_its_first_reason(tmp_path):
    """Readers that find the index damaged one after the other leave one reason, not each the
    one before quoted inside its own (a user trial: three levels of "a search could not read it")."""
    from crabsearch.index.integrity import mark_damaged

    mark_damaged(tmp_path, "segment x failed to decode")
    mark_damaged(tmp_path, seal_problem(tmp_path))
    mark_damaged(tmp_path, seal_problem(tmp_path))
    assert (tmp_path / DAMAGED).read_text() == "segment x failed to decode"
    assert seal_problem(tmp_path) == "a search could not read it (segment x failed to decode)"


# -- a `current` that is not a link --------------------------------------------------------------


def test_a_current_copied_as_a_directory_is_deleted_and_rebuilt(tmp_path, capsys, monkeypatch):
    """A backup or sync that follows links (``cp -rL``, Python's ``copytree``) puts a directory
    where the ``current`` link was. ``index`` failed for ever (``[Errno 21] Is a directory:
    '.current.PID' -> 'current'``), each try leaving an empty ``gen-*`` and a ``.current.PID``;
    ``search`` said "run `crabsearch index`" and ``status`` "format -" with no hint. Now status
    names it, a search says the index is damaged and rebuilds it, and ``index`` deletes it,
    rebuilds and says so (nothing of the copy is kept), leaving one generation
    behind the link."""
    import shutil

    home, index_dir = _home(tmp_path), tmp_path / "index"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(index_dir))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    _index(home, index_dir)
    shutil.copytree(index_dir, tmp_path / "copy")  # follows the link: `current` becomes a directory
    shutil.rmtree(index_dir)
    (tmp_path / "copy").rename(index_dir)
    assert (index_dir / "current").is_dir() and not (index_dir / "current").is_symlink()

    code, out, _ = run_cli(capsys, "status")
    assert code == 0 and "warning: the index's `current` is a directory, not crabsearch's link" in out
    assert "`crabsearch index` deletes it and rebuilds the index from the transcripts" in out
    engine = Engine(index_dir)
    assert not engine.exists and "`current` is a directory" in engine.damage
    code, out, err = run_cli(capsys, "index")
    assert code == 0 and "`current` is a directory, not crabsearch's link" in err
    assert ": deleted; rebuilding the index from the transcripts" in err
    code, out, err = run_cli(capsys, "index")  # a sound index now
    assert code == 0 and err == ""
    assert (index_dir / "current").is_symlink()
    assert sorted(p.name for p in index_dir.iterdir() if p.name.startswith(("gen-", ".current."))) == [
        os.readlink(index_dir / "current")]
    code, out, _ = run_cli(capsys, "search", "timeout", "--json", "--limit", "20")
    assert code == 0 and len(json.loads(out)["hits"]) == 12


def test_index_says_it_deleted_a_directory_current(tmp_path):
    home, index_dir = _home(tmp_path), tmp_path / "index"
    _index(home, index_dir)
    gen = where(index_dir)
    (index_dir / "current").unlink()
    gen.rename(index_dir / "current")
    report = _index(home, index_dir)
    assert report.rebuilt.startswith("the index's `current` is a directory, not crabsearch's link")
    assert report.rebuilt.endswith(": deleted; rebuilding the index from the transcripts")
    assert report.messages_added == 24  # every message read again: nothing of the copy is kept
    assert (index_dir / "current").is_symlink()
    assert [p.name for p in index_dir.iterdir() if p.name.startswith("gen-")] == [os.readlink(index_dir / "current")]

"""An index directory that cannot be written (a fresh-user trial): ``CRABSEARCH_INDEX_DIR`` naming
a file left the app saying "Indexing your transcripts · looking for transcripts…" for ever, a
search said "still indexing", and an "Indexing failed: … File exists" toast came about once a
second (each failed refresh's search found no index and started the refresh again). The app now
says once where the index cannot be written, why and what to do, and does not try again."""

from __future__ import annotations

import errno
import os

from builders import NOW, build_sample_home, settle
from crabsearch.index.store import IndexError_
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.messages import FilesChanged


def failures(app) -> list[str]:
    return [n.message for n in app._notifications if "cannot be written" in n.message or "failed" in n.message]


async def test_an_index_dir_that_is_a_file_is_said_once_and_not_retried(tmp_path):
    home = build_sample_home(tmp_path / "home")
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    app = CrabsearchApp(afile, env={"HOME": str(home)}, now=NOW, cursor_blink=False)
    app.error_log = tmp_path / "errors.log"
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause(2.0)  # the old app failed, searched and started again, every ~50 ms here
        screen = app.screen
        said = failures(app)
        assert len(said) == 1, said
        assert not app.indexing
        assert f"The index cannot be written at {afile}: it is a file, not a folder" in said[0]
        assert "CRABSEARCH_INDEX_DIR" in said[0]
        line = str(screen.query_one("#index-status").render())
        assert f"cannot be written at {afile}" in line and "CRABSEARCH_INDEX_DIR" in line
        assert "looking for transcripts" not in line
        empty = screen.query_one("#empty")
        assert empty.display
        body = str(empty.content)
        assert "Could not index the transcripts" in body and f"{afile}: it is a file, not a folder" in body
        assert "Indexing your agent transcripts" not in body

        await pilot.press(*"parser")
        await settle(pilot)
        status = str(screen.query_one("#status").render())
        assert "the index is unavailable" in status and "still indexing" not in status

        # an agent's file changed: no refresh starts (it would fail again at once)
        screen.post_message(FilesChanged(1))
        await pilot.pause(0.5)
        assert not app.indexing and len(failures(app)) == 1
        # the periodic refresh (every 30 s) tries again, and the same failure is not said again
        tried, refresh = [], app.indexer.refresh
        app.indexer.refresh = lambda *a, **k: tried.append(1) or refresh(*a, **k)
        screen._periodic_refresh()
        await settle(pilot)
        await pilot.pause(0.5)
        assert tried and not app.indexing and len(failures(app)) == 1 and screen.index_error
    assert afile.read_text() == "not a folder\n"


def test_index_failure_says_where_why_and_what_to_do(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    inside = CrabsearchApp(afile / "index", env={"HOME": str(tmp_path)}, now=NOW)
    exc = IndexError_("cannot create the index")
    exc.__cause__ = NotADirectoryError(errno.ENOTDIR, "Not a directory", str(afile / "index"))
    assert inside.index_failure(exc) == (
        "The index cannot be written at ~/afile/index: ~/afile is a file, not a folder. "
        "Start crabsearch again with CRABSEARCH_INDEX_DIR=DIR (or --index-dir DIR) naming a folder it can write.")

    full = CrabsearchApp(tmp_path / "index", env={"HOME": str(tmp_path)}, now=NOW)
    said = full.index_failure(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "index" / "x.seg")))
    assert said.startswith(f"The index cannot be written at ~/index: {os.strerror(errno.ENOSPC)} (")
    assert "Free some disk space" in said

    denied = full.index_failure(PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "index")))
    assert denied.startswith("The index cannot be written at ~/index: Permission denied. Start crabsearch again")

    full.error_log = tmp_path / "errors.log"
    assert full.index_failure(RuntimeError("a bug")).startswith("Indexing failed unexpectedly")

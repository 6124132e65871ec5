"""SVG snapshot of a page that similarity search filled (``search.similar``): rows with some of
the words and rows similar in meaning interleaved, no rule between them, the status line counting
each; and the explain panel of such a row, saying what the page was ranked by. The embedder is
the tests' stand-in (``tests/concepts.py``). Update with
``pytest snapshots/test_similar_rows.py --snapshot-update`` only after looking at the new SVG."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy")

from builders import NOW, ClaudeSession, settle  # noqa: E402
from concepts import ConceptEmbedder  # noqa: E402

from crabsearch.index import Indexer, vectors  # noqa: E402
from crabsearch.tui.app import CrabsearchApp  # noqa: E402


def kennel_home(home):
    """Three sessions: a barking dog, a database migration, a cat."""
    ClaudeSession(home, session_id="d0000000-0000-4000-8000-00000000000a", cwd="/home/dev/kennel").user(
        "the dog barks all night at the mailman").assistant("try a white noise machine near the door").write()
    ClaudeSession(home, session_id="d0000000-0000-4000-8000-00000000000b", cwd="/home/dev/webapp").user(
        "the database migration fails on deploy").assistant("add the missing column first").write()
    ClaudeSession(home, session_id="d0000000-0000-4000-8000-00000000000c", cwd="/home/dev/pets").user(
        "my cats knock cups off the table, the mailman laughs").assistant("move the cups").write()


async def mixed(pilot):
    """``Hund Datenbank mailman``: two sessions say ``mailman`` (``any``; the dog's is also the most
    similar in meaning), the database's is found by meaning alone (``similar``); the cursor on the
    second row."""
    await settle(pilot)
    await pilot.press(*"Hund Datenbank mailman")
    await settle(pilot)
    await pilot.press("down", "down")
    await settle(pilot)
    pilot.app.clear_notifications()


async def explained(pilot):
    """The page of :func:`mixed`, the explain panel of the row under the cursor open."""
    await mixed(pilot)
    await pilot.press("x")
    await settle(pilot)


def similar_app(tmp_path, monkeypatch) -> CrabsearchApp:
    import crabsearch.embedder

    emb = ConceptEmbedder()
    monkeypatch.setattr(crabsearch.embedder, "load", lambda threads=None: emb)
    home = tmp_path / "home"
    kennel_home(home)
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    vectors.embed(tmp_path / "index", emb)
    return CrabsearchApp(tmp_path / "index", env={"HOME": str(home)}, now=NOW, index_on_start=False,
                         cursor_blink=False)


def test_similar_rows(snap_compare, tmp_path, monkeypatch):
    assert snap_compare(similar_app(tmp_path, monkeypatch), terminal_size=(100, 24), run_before=mixed)


def test_similar_row_explained(snap_compare, tmp_path, monkeypatch):
    assert snap_compare(similar_app(tmp_path, monkeypatch), terminal_size=(100, 24), run_before=explained)

"""The manifest database: entries without states, states on demand, changes only, removals,
replacement after a lost index, and migration from the JSON manifest of older versions."""

from __future__ import annotations

import json

from crabsearch.index import Indexer
from crabsearch.index.manifest import Manifest
from crabsearch.index.layout import where
from crabsearch.index.store import doc_total, open_index
from crabsearch.search import Engine

from builders import ClaudeSession, CodexSession


def build(tmp_path):
    home = tmp_path / "home"
    a = ClaudeSession(home).user("the cron schedule drifts").assistant("use UTC")
    b = CodexSession(home).user("flaky retry backoff").assistant("add jitter")
    a.write()
    b.write()
    idx = Indexer(tmp_path / "index", env={"HOME": str(home)})
    idx.refresh()
    return home, idx, a, b


def test_entries_load_without_states_and_states_come_on_demand(tmp_path):
    _, _, a, b = build(tmp_path)
    m = Manifest.load(tmp_path / "index")
    assert set(m.files) == {str(a.path), str(b.path)}
    assert all("state" not in e and e["offset"] == e["size"] for e in m.files.values())
    assert isinstance(m.state(str(a.path)), dict) and m.state("/no/such/file") is None
    assert not (where(tmp_path / "index") / "manifest.json").exists()


def test_save_writes_changes_and_removals_only(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    m = Manifest(d)
    m.save({"/a": {"size": 1, "state": {"n": 1}}, "/b": {"size": 2, "state": None}})
    m = Manifest.load(d)
    m.remove("/a")
    m.save({"/c": {"size": 3, "state": [1, 2]}})
    again = Manifest.load(d)
    assert again.files == {"/b": {"size": 2}, "/c": {"size": 3}}
    assert again.state("/c") == [1, 2] and again.state("/a") is None
    Manifest(d, replace=True).save({"/z": {"size": 9, "state": None}})  # an index rebuilt: old rows go
    assert set(Manifest.load(d).files) == {"/z"}


def test_paths_that_are_not_utf8_round_trip(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    odd = "/home/dev/caf\udce9.jsonl"  # a Latin-1 byte in a file name (surrogateescape)
    Manifest(d).save({odd: {"size": 1, "state": {"p": odd}}})
    m = Manifest.load(d)
    assert list(m.files) == [odd] and m.state(odd) == {"p": odd}


def test_an_unreadable_manifest_is_empty_and_the_index_is_rebuilt(tmp_path):
    home, _, _, _ = build(tmp_path)
    before = Engine(tmp_path / "index").doc_count()
    (where(tmp_path / "index") / "manifest.db").write_bytes(b"not a database at all")
    assert Manifest.load(tmp_path / "index").files == {}
    rep = Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    assert rep.files_read == 2
    assert Engine(tmp_path / "index").doc_count() == before  # replaced, not added twice


def test_a_lost_manifest_does_not_duplicate_documents(tmp_path):
    home, _, _, _ = build(tmp_path)
    before = Engine(tmp_path / "index").doc_count()
    (where(tmp_path / "index") / "manifest.db").unlink()
    report = Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    assert report.files_read == 2 and Engine(tmp_path / "index").doc_count() == before
    # said (the command line prints it: a user trial saw half a minute of silence)
    assert report.rebuilt == "the index's manifest was missing or unreadable; reading every transcript again"
    assert Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh().rebuilt is None  # once


def test_a_lost_manifest_does_not_leave_the_old_documents_on_disk(tmp_path):
    """Trial finding: each manifest loss re-read every file and the index grew (the replaced
    documents stayed in their segments as deleted ones). The first commit now drops them."""
    home, _, _, _ = build(tmp_path)
    index = tmp_path / "index"
    ix = open_index(index, create=False)[0]
    total = doc_total(ix)
    for _ in range(3):
        (where(index) / "manifest.db").unlink()
        assert Indexer(index, env={"HOME": str(home)}).refresh().files_read == 2
        assert doc_total(open_index(index, create=False)[0]) == total  # deleted ones included


def test_a_home_of_empty_transcripts_is_not_called_a_rebuild(tmp_path):
    """Empty transcripts give no documents: the manifest lists them and the index holds nothing,
    which is no loss to announce at every refresh."""
    home = tmp_path / "home"
    empty = home / ".claude" / "projects" / "-w" / "0c4e8d1a-0000-4000-8000-000000000000.jsonl"
    empty.parent.mkdir(parents=True)
    empty.write_text("")
    indexer = Indexer(tmp_path / "index", env={"HOME": str(home)})
    indexer.refresh()
    empty.write_text("\n")  # changed, still empty
    assert indexer.refresh().rebuilt is None

"""ZedSource: ``threads/threads.db`` written here as Zed writes it (zed-industries/zed
``crates/agent/src/db.rs`` at 0642ec7e49e2: the ``threads`` table and its added columns, the
``DbThread`` 0.3.0 document zstd-compressed at level 3; older documents as ``legacy_thread.rs``
shapes them), under a temp HOME."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import zstandard

from crabsearch.model import Role
from crabsearch.sources import SOURCES
from crabsearch.sources.base import member_path
from crabsearch.sources.zed import ZedSource

from all_agents import Expect, prompt_of, reply_of
from secret_samples import _NPM
from store_checks import Seen, end_to_end

SRC = ZedSource()
TID = "6c0a9e1d-2b3f-4a5c-8d7e-0f1a2b3c4d5e"

SCHEMA = """
CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
  data_type TEXT NOT NULL, data BLOB NOT NULL);
ALTER TABLE threads ADD COLUMN parent_id TEXT;
ALTER TABLE threads ADD COLUMN folder_paths TEXT;
ALTER TABLE threads ADD COLUMN folder_paths_order TEXT;
ALTER TABLE threads ADD COLUMN created_at TEXT;
"""

MESSAGES = [
    {"User": {"id": "u1", "content": [{"Text": f"why does the gryphon parser drop the last token? {_NPM}"},
                                      {"Mention": {"uri": {"File": {"abs_path": "/w/p.rs"}},
                                                   "content": "fn parse() { hippogriffcontent }"}}]}},
    {"Agent": {"content": [{"Thinking": {"text": "an off-by-one in the lexer", "signature": "s"}},
                           {"Text": "Let me read the lexer."},
                           {"ToolUse": {"id": "t1", "name": "read_file", "raw_input": "{\"path\":\"lex.rs\"}",
                                        "input": {"path": "lex.rs"}, "is_input_complete": True}},
                           {"RedactedThinking": "xxx"}, {"Wormhole": 1}],
               "tool_results": {"t1": {"tool_use_id": "t1", "tool_name": "read_file", "is_error": False,
                                       "content": {"Text": "for i in 0..len-1 basiliskcontent"}, "output": None}}}},
    "Resume",
    {"Agent": {"content": [{"Text": "The loop stops one short; fixed."},
                           {"ToolUse": {"id": "t2", "name": "terminal", "raw_input": "{}", "input": {"cmd": "cargo test"},
                                        "is_input_complete": True}}],
               "tool_results": {"t2": {"tool_use_id": "t2", "tool_name": "terminal", "is_error": False,
                                       "content": [{"type": "text", "text": "ok. 12 passed"}], "output": None}}}},
    {"Future": {"x": 1}},
    {"User": {"id": "u2", "content": [{"Text": "thanks"}]}},
]


def document(messages=MESSAGES, title="Fix the gryphon parser", **extra) -> dict:
    return {"title": title, "messages": messages, "updated_at": "2026-03-14T10:05:00Z", "version": "0.3.0",
            "detailed_summary": "We fixed an off-by-one in the gryphon lexer.", **extra}


def compress(doc: dict) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(json.dumps(doc).encode())


class Db:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as con:
            con.executescript(SCHEMA)

    def thread(self, tid=TID, doc=None, *, data=None, data_type="zstd", folders="/home/dev/gryphon\n/home/dev/lib",
               parent=None, updated="2026-03-14T10:05:00+00:00", created="2026-03-14T10:00:00+00:00", summary=None):
        doc = doc or document()
        with sqlite3.connect(self.path) as con:
            con.execute("INSERT OR REPLACE INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, "
                        "updated_at, data_type, data, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                        (tid, parent, folders, "0,1" if folders else None, summary or doc.get("title", ""), updated,
                         data_type, data if data is not None else compress(doc), created))
        return self


def store(home: Path) -> Path:
    return home / ".local" / "share" / "zed" / "threads" / "threads.db"


def unit(db: Path, tid=TID) -> Path:
    return Path(member_path(db, tid))


def test_registered():
    assert SOURCES["zed"].__class__ is ZedSource


def test_messages_roles_labels_and_counts(tmp_path):
    db = Db(tmp_path / "threads.db").thread()
    r = SRC.read(unit(db.path))
    assert [(m.role, m.label, m.text, m.tool_name) for m in r.messages] == [
        (Role.USER, "user", f"why does the gryphon parser drop the last token? {_NPM}", None),
        (Role.ASSISTANT, "thinking", "an off-by-one in the lexer", None),
        (Role.ASSISTANT, "assistant", "Let me read the lexer.", None),
        (Role.ASSISTANT, "tool-call:read_file", '{"path": "lex.rs"}', "read_file"),
        (Role.TOOL, "tool:read_file", "for i in 0..len-1 basiliskcontent", "read_file"),
        (Role.ASSISTANT, "assistant", "The loop stops one short; fixed.", None),
        (Role.ASSISTANT, "tool-call:terminal", '{"cmd": "cargo test"}', "terminal"),
        (Role.TOOL, "tool:terminal", "ok. 12 passed", "terminal"),
        (Role.USER, "user", "thanks", None),
    ]
    assert r.state["unknown_kinds"] == {"Wormhole": 1, "Future": 1}
    assert r.end_offset == 0 and r.stats.skipped == 0  # read whole at every change
    for m in r.messages:
        assert SRC.message_text(SRC.load(str(unit(db.path)), m.offset, m.length), m.part, m.label) == m.text


def test_thread_fields_subagents_and_no_resume(tmp_path):
    db = Db(tmp_path / "threads.db").thread()
    db.thread("child-1", document([{"User": {"id": "c", "content": [{"Text": "look for callers"}]}}], title=""),
              parent=TID, summary="")
    s = SRC.read(unit(db.path)).session
    assert (s.session_id, s.title, s.project, s.parent_session_id) == (TID, "Fix the gryphon parser",
                                                                     "/home/dev/gryphon", None)
    assert s.summary == "We fixed an off-by-one in the gryphon lexer."
    assert (s.started, s.updated) == (datetime(2026, 3, 14, 10, 0, tzinfo=timezone.utc),
                                      datetime(2026, 3, 14, 10, 5, tzinfo=timezone.utc))
    assert SRC.resume_command(s) is None
    child = SRC.read(unit(db.path, "child-1")).session
    assert (child.parent_session_id, child.title) == (TID, "look for callers")


def test_older_thread_formats(tmp_path):
    db = Db(tmp_path / "threads.db")
    v2 = {"version": "0.2.0", "summary": "Old agent thread", "updated_at": "2026-03-01T09:00:00Z",
          "detailed_summary_state": {"Generated": {"text": "an old summary", "message_range": {}}},
          "messages": [
              {"id": 0, "role": "user", "segments": [{"type": "text", "text": "rename the wyvern module"}],
               "tool_uses": [], "tool_results": [], "context": "file contents", "is_hidden": False},
              {"id": 1, "role": "assistant", "segments": [{"type": "thinking", "text": "grep first"},
                                                          {"type": "text", "text": "Renaming."}],
               "tool_uses": [{"id": "a", "name": "grep", "input": {"q": "wyvern"}}],
               "tool_results": [{"tool_use_id": "a", "is_error": False, "content": "3 matches", "output": None}]},
              {"id": 2, "role": "user", "segments": [{"type": "text", "text": "auto context"}], "is_hidden": True}]}
    db.thread("old-2", v2, data=json.dumps(v2).encode(), data_type="json", folders=None, summary="Old agent thread")
    unversioned = {"summary": "Oldest thread", "updated_at": "2026-02-01T09:00:00Z",
                   "messages": [{"id": 0, "role": "user", "text": "hello wyvern"},
                                {"id": 1, "role": "assistant", "text": "hello back"}]}
    db.thread("old-1", unversioned, data=json.dumps(unversioned).encode(), data_type="json", folders=None)
    r = SRC.read(unit(db.path, "old-2"))
    assert [(m.label, m.text) for m in r.messages] == [
        ("user", "rename the wyvern module"), ("thinking", "grep first"), ("assistant", "Renaming."),
        ("tool-call:grep", '{"q": "wyvern"}'), ("tool:grep", "3 matches"), ("system", "auto context")]
    assert (r.session.title, r.session.summary, r.session.project) == ("Old agent thread", "an old summary", None)
    assert [m.text for m in SRC.read(unit(db.path, "old-1")).messages] == ["hello wyvern", "hello back"]


def test_broken_and_unreadable_threads_are_counted(tmp_path):
    db = Db(tmp_path / "threads.db").thread()
    db.thread("bad-zstd", data=b"\x28\xb5\x2f\xfd garbage")
    db.thread("bad-json", data=b"{not json", data_type="json")
    for tid in ("bad-zstd", "bad-json"):
        r = SRC.read(unit(db.path, tid))
        assert r.messages == [] and r.stats.reasons == {"broken JSON": 1} and r.stats.places == [("thread", "broken JSON")]
    assert [m.text for m in SRC.read(unit(db.path)).messages][0].startswith("why does the gryphon")


def test_a_changed_thread_is_read_again_whole(tmp_path):
    db = Db(tmp_path / "threads.db").thread()
    path = str(unit(db.path))
    size, mtime, _ = SRC.stat(path)
    first = SRC.read(Path(path))
    longer = document(MESSAGES + [{"User": {"id": "u3", "content": [{"Text": "and the tests?"}]}}])
    db.thread(doc=longer, updated="2026-03-14T10:09:00+00:00")
    size2, mtime2, _ = SRC.stat(path)
    assert size2 > size and mtime2 == datetime(2026, 3, 14, 10, 9, tzinfo=timezone.utc).timestamp() * 10**9
    again = SRC.read(Path(path), first.end_offset, json.loads(json.dumps(first.state)))
    assert [m.message_index for m in again.messages] == list(range(10))  # the whole thread, from its start
    assert again.messages[-1].text == "and the tests?"


def test_discovery_and_roots(tmp_path):
    home = tmp_path / "home"
    linux = Db(store(home)).thread()
    mac = Db(home / "Library" / "Application Support" / "Zed" / "threads" / "threads.db").thread("m1")
    assert list(SRC.discover({}, home)) == [unit(linux.path), unit(mac.path, "m1")]
    assert SRC.roots({"XDG_DATA_HOME": "/x"}, home)[0] == Path("/x/zed")
    assert SRC.roots({"FLATPAK_XDG_DATA_HOME": "/f", "XDG_DATA_HOME": "/x"}, home)[0] == Path("/f/zed")
    assert SRC.roots({"LOCALAPPDATA": "C:/L"}, home)[-1] == Path("C:/L/Zed")
    assert SRC.roots({"CRABSEARCH_ZED_DIR": "/z"}, home) == [Path("/z")]


def test_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    Db(store(home)).thread()
    status = end_to_end(capsys, monkeypatch, tmp_path, home, Seen(
        "zed", TID, "Fix the gryphon parser", "/home/dev/gryphon", None, "gryphon",
        [f"why does the gryphon parser drop the last token? {_NPM}", "Let me read the lexer.",
         "The loop stops one short; fixed.", "thanks"],
        hidden=[_NPM], unindexed=["basiliskcontent", "hippogriffcontent"]))
    assert (status["files_found"], status["sessions"], status["skipped_lines"]) == (1, 1, 0)
    assert status["unknown_kinds"] == {"Wormhole": 1, "Future": 1}


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkazed`` no other session holds."""
    tid = "6c0a9e1d-2b3f-4a5c-8d7e-0f1a2b3c0270"
    cwd = "/home/dev/zedsvc"
    doc = document([{"User": {"id": "u1", "content": [{"Text": prompt_of("zed")}]}},
                    {"Agent": {"content": [{"Text": reply_of("zed")}], "tool_results": {}}}], title="Zed: worker stall")
    db = Db(store(home)).thread(tid, doc, folders=cwd, created=t.isoformat(),
                                updated=(t.replace(minute=2)).isoformat())
    return Expect("zed", tid, "Zed: worker stall", cwd, None, "quokkazed", [prompt_of("zed"), reply_of("zed")], t,
                  files=[db.path])


def fuzz_units(home: Path) -> list:
    """A thread fuzzed field by field (``tests/test_reader_fuzz.py``): the records are its
    messages, written as one zstd document."""
    from test_reader_fuzz import Unit, _touch

    path = home / "zed-fuzz" / "threads.db"
    messages = [m for m in MESSAGES if isinstance(m, dict)] + [
        {"id": 0, "role": "assistant", "segments": [{"type": "thinking", "text": "t"}, {"type": "text", "text": "x"}],
         "tool_uses": [{"id": "a", "name": "grep", "input": {"q": 1}}],
         "tool_results": [{"tool_use_id": "a", "is_error": False, "content": {"type": "text", "text": "r"}}]}]

    def write(texts: list[str]) -> str:
        if path.exists():
            path.unlink()
        raw = ('{"title": "fuzz", "version": "0.3.0", "updated_at": "2026-03-14T10:05:00Z", "messages": ['
               + ",".join(texts) + "]}").encode()
        Db(path).thread("fz", data=zstandard.ZstdCompressor(level=3).compress(raw))
        _touch(path)
        return member_path(path, "fz")

    return [Unit("zed threads", SOURCES["zed"], messages, write)]

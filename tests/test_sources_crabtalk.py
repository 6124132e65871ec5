"""CrabtalkSource: flat JSONL, step directories and the crabdb ``store.crmem`` (formats.md 5).

Fixtures are built here in the real layouts under a temporary ``~/.crabtalk``.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.base import member_path
from crabsearch.sources.crabtalk import CrabtalkSource
from source_checks import CORPUS, assert_incremental, cli_ok, key, state_size
from datetime import timedelta
from datetime import datetime
from all_agents import Expect, prompt_of, reply_of

SRC = CrabtalkSource()
H1 = "01K3ZQAAAAAAAAAAAAAAAAAAAA"
H2 = "01K3ZQBBBBBBBBBBBBBBBBBBBB"


# -- builders ----------------------------------------------------------------------------------


def jsonl(path: Path, *objs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs), "utf-8")
    return path


def step_dir(path: Path, meta: dict | None, *steps, first: int = 1) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if meta is not None:
        (path / "meta").write_text(json.dumps(meta), "utf-8")
    for i, s in enumerate(steps):
        raw = s if isinstance(s, bytes) else json.dumps(s, ensure_ascii=False).encode()
        (path / f"step-{first + i:06d}").write_bytes(raw)
    return path


class Store:
    """A crabdb ``store.crmem`` writer (formats.md 5.3): 32-byte header, Put/Delete records and
    index snapshots ``count u32 | {col u8, key_len u32, key, offset u64}*``."""

    def __init__(self):
        self.body = bytearray()
        self.live: dict[tuple[int, bytes], int] = {}
        self.index_at = self.index_len = 0

    def _rec(self, op: int, col: int, key: str, value: bytes) -> None:
        k = key.encode()
        if op == 0:
            self.live[(col, k)] = 32 + len(self.body)
        else:
            self.live.pop((col, k), None)
        self.body += struct.pack("<BBI", op, col, len(k)) + k + struct.pack("<I", len(value)) + value

    def put(self, key: str, value, col: int = 1) -> "Store":
        self._rec(0, col, key, value if isinstance(value, bytes) else json.dumps(value).encode())
        return self

    def delete(self, key: str, col: int = 1) -> "Store":
        self._rec(1, col, key, b"")
        return self

    def snapshot(self, point: bool = True) -> "Store":
        at = 32 + len(self.body)
        snap = struct.pack("<I", len(self.live))
        for (col, k), off in self.live.items():
            snap += struct.pack("<BI", col, len(k)) + k + struct.pack("<Q", off)
        self.body += snap
        if point:
            self.index_at, self.index_len = at, len(snap)
        return self

    def bytes(self) -> bytes:
        return struct.pack("<6sIH4xQQ", b"CRMEM\0", 1, 0, self.index_at, self.index_len) + bytes(self.body)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.bytes())
        return path


def meta(title="", summary=None, root=None, updated="2026-08-21T10:00:09.000000000+00:00", **kw) -> dict:
    d = {"agent": "01AGENT", "created_by": "user", "created_at": "2026-08-21T10:00:00.000000000+00:00",
         "title": title, "updated_at": updated, "message_count": 0, **kw}
    if summary is not None:
        d["summary"] = summary
    if root is not None:
        d["root"] = root
    return d


def user(text):
    return {"message": {"role": "user", "content": text}}


def assistant(*blocks):
    return {"message": {"role": "assistant", "content": list(blocks)}}


def msg_key(h: str, i: int) -> str:
    return f"local/session/{h}/msg/{i:012d}"


def read_back(unit, messages):
    for m in messages:
        obj = SRC.load(str(unit), m.offset, m.length)
        assert obj is not None, m
        assert SRC.message_text(obj, m.part, m.label) == m.text, m


def full(r):
    return [(m.role, m.label, m.text, m.tool_name) for m in r.messages]


# -- registration and discovery ----------------------------------------------------------------


def test_registered():
    assert get_source("crabtalk").__class__ is CrabtalkSource
    assert (SRC.agent, SRC.display) == ("crabtalk", "Crabtalk")


def layouts(root: Path) -> list[Path]:
    a = jsonl(root / "sessions" / "crab_user_1.jsonl", {"agent": "crab", "title": "t"})
    b = jsonl(root / "sessions" / "2026-03-25" / "crab_tg-1_1_x.jsonl", {"role": "user", "content": "hi"})
    c = step_dir(root / "sessions" / "crab_user_2", meta(), user("hi"))
    d = step_dir(root / "sessions" / "crab_user_3", None, user("no meta yet"))
    (root / "sessions" / "empty_dir").mkdir()
    (root / "memory.db").write_bytes(b"")
    Store().put(f"local/session/{H1}/meta", meta()).put(msg_key(H2, 0), user("x")).put(
        f"local/session/{H2}/evt/000000000000", {"event": "done"}).put(
        "local/agent/01AGENT", {"name": "crab"}, col=0).write(root / "store.crmem")
    return [a, b, c, d, Path(member_path(root / "store.crmem", H1)), Path(member_path(root / "store.crmem", H2))]


def test_discover_default_home_and_env_override(tmp_path):
    home = tmp_path / "home"
    expected = layouts(home / ".crabtalk")
    assert SRC.roots({}, home) == [home / ".crabtalk"]
    assert sorted(SRC.discover({}, home)) == sorted(expected)
    alt = tmp_path / "alt"
    other = layouts(alt)
    assert SRC.roots({"CRABTALK_HOME": str(alt)}, home) == [alt]
    assert sorted(SRC.discover({"CRABTALK_HOME": str(alt)}, home)) == sorted(other)
    assert list(SRC.discover({}, tmp_path / "nobody")) == []


# -- flat JSONL (formats.md 5.1) ---------------------------------------------------------------

JSONL_LINES = [
    {"agent": "crab", "created_by": "user", "created_at": "2026-04-05T09:12:03.512093771+00:00",
     "title": "Fix the zanzibar cache", "uptime_secs": 12},
    {"role": "user", "content": "Why is the zanzibar cache stale?"},
    {"role": "assistant", "reasoning_content": "Check the TTL first.", "content": "Looking.",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "read", "arguments": "{\"path\":\"cache.rs\"}"}}]},
    {"role": "tool", "content": "TOKEN=sk-secret-quux ttl=0", "tool_call_id": "call_1"},
    {"compact": "Cache TTL was zero; fixed.", "title": "Cache TTL was zero", "archived_at":
        "2026-04-05T10:00:00Z"},
    {"role": "system", "content": "daemon restarted"},
    {"role": "user", "content": [{"type": "text", "text": "and the tests?"}]},
    {"role": "assistant", "content": "Added them.", "agent": "reviewer"},
]


def test_jsonl_messages_and_session(tmp_path):
    f = jsonl(tmp_path / ".crabtalk" / "sessions" / "crab_user_1_fix.jsonl", *JSONL_LINES)
    r = SRC.read(f)
    assert full(r) == [
        (Role.USER, "user", "Why is the zanzibar cache stale?", None),
        (Role.ASSISTANT, "thinking", "Check the TTL first.", None),
        (Role.ASSISTANT, "assistant", "Looking.", None),
        (Role.ASSISTANT, "tool-call:read", '{"path":"cache.rs"}', "read"),
        (Role.TOOL, "tool:read", "TOKEN=sk-secret-quux ttl=0", "read"),  # name paired by call id
        (Role.SUMMARY, "summary", "Cache TTL was zero; fixed.", None),
        (Role.SYSTEM, "system", "daemon restarted", None),
        (Role.USER, "user", "and the tests?", None),
        (Role.ASSISTANT, "assistant", "Added them.", None),
    ]
    assert r.messages[1].is_thinking and r.messages[3].is_tool_payload and r.messages[4].is_tool_payload
    s = r.session
    assert (s.agent, s.session_id, s.title, s.summary) == (
        "crabtalk", "crab_user_1_fix", "Fix the zanzibar cache", "Cache TTL was zero; fixed.")
    assert s.project is None and s.message_count == 9 and s.anchor_index == 0
    assert s.started.isoformat() == "2026-04-05T09:12:03.512093+00:00"
    assert s.updated.isoformat() == "2026-04-05T10:00:00+00:00"
    assert SRC.resume_command(s) is None
    read_back(f, r.messages)


def test_jsonl_lost_meta_titles_from_first_prompt_and_bad_lines_counted(tmp_path):
    f = tmp_path / "crab_user_9.jsonl"
    f.write_text('{"role":"user","content":"first prompt\\nmore"}\nnot json\n[1]\n'
                 '{"role":"assistant","content":"ok"}\n{"role":"assistant","content":"tor', "utf-8")
    r = SRC.read(f)
    assert [m.text for m in r.messages] == ["first prompt\nmore", "ok"]
    assert r.session.title == "first prompt" and r.session.summary is None
    assert r.stats.reasons == {"broken JSON": 1, "not a JSON object": 1} and r.stats.pending


def test_jsonl_incremental(tmp_path):
    data = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in JSONL_LINES).encode()
    assert_incremental(SRC, data, tmp_path / "crab_user_1.jsonl")


# -- step directories (formats.md 5.2) ---------------------------------------------------------

STEPS = [
    user("Why does the wombat build fail?"),
    assistant({"type": "thinking", "thinking": "Run it."}, {"type": "text", "text": "Running the build."},
              {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "make"}}),
    {"event": "tool_start", "calls": [{"id": "toolu_1", "name": "bash", "arguments": "{}"}],
     "ts": "2026-07-20T03:00:05.100000000+00:00"},
    {"message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "PASSWORD=hunter2"}]},
        {"type": "image", "source": {}}]}},
    {"archive_name": "archive-1", "archived_at": "2026-07-20T03:05:00Z"},
    {"agent": "guest", "message": {"role": "assistant", "reasoning_content": "old shape",
                                   "content": "Fixed the wombat linker flags."}},
]
STEP_META = {"agent": "crab", "created_by": "user", "created_at": "2026-07-20T03:00:00.000000000+00:00",
             "title": "", "updated_at": "2026-07-20T03:05:41.913000000+00:00", "message_count": 3,
             "summary": "Wombat build fixed."}


def test_step_dir_messages_and_session(tmp_path):
    d = step_dir(tmp_path / "sessions" / "crab_user_2", STEP_META, *STEPS)
    r = SRC.read(d)
    assert full(r) == [
        (Role.USER, "user", "Why does the wombat build fail?", None),
        (Role.ASSISTANT, "thinking", "Run it.", None),
        (Role.ASSISTANT, "assistant", "Running the build.", None),
        (Role.ASSISTANT, "tool-call:bash", '{"command": "make"}', "bash"),
        (Role.TOOL, "tool:bash", "PASSWORD=hunter2", "bash"),
        (Role.USER, "user", "[image]", None),
        (Role.ASSISTANT, "thinking", "old shape", None),
        (Role.ASSISTANT, "assistant", "Fixed the wombat linker flags.", None),
    ]
    assert [(m.offset, m.part) for m in r.messages] == [(1, 0), (2, 0), (2, 1), (2, 2), (4, 0), (4, 1), (6, 0), (6, 1)]
    s = r.session
    assert (s.session_id, s.title, s.summary, s.path) == (
        "crab_user_2", "Why does the wombat build fail?", "Wombat build fixed.", str(d))
    assert s.started.isoformat() == "2026-07-20T03:00:00+00:00"
    assert s.updated.isoformat() == "2026-07-20T03:05:41.913000+00:00"
    assert r.end_offset == 7 and SRC.stat(str(d))[0] == 7 and state_size(r.state) < 4096
    read_back(d, r.messages)


def test_step_dir_incremental_new_steps_meta_rewrite_and_rewind(tmp_path):
    d = step_dir(tmp_path / "crab_user_2", STEP_META, *STEPS[:3])
    size, _, _ = SRC.stat(str(d))
    head = SRC.fingerprint(str(d), size)
    first = SRC.read(d)
    state = json.loads(json.dumps(first.state))
    step_dir(d, dict(STEP_META, title="Wombat build"), *STEPS[3:], first=4)
    grown, _, _ = SRC.stat(str(d))
    assert grown == 7 and SRC.fingerprint(str(d), size) == head
    rest = SRC.read(d, first.end_offset, state)
    whole = SRC.read(d)
    assert [key(m) for m in first.messages + rest.messages] == [key(m) for m in whole.messages]
    assert rest.session.title == "Wombat build" and rest.session.message_count == 8
    assert rest.session.to_state() == whole.session.to_state()
    # meta rewritten alone: the mtime moves, nothing new is read
    os.utime(d / "meta", ns=(10**18, 10**18))
    assert SRC.stat(str(d))[1] >= 10**18
    assert SRC.read(d, rest.end_offset, rest.state).messages == []
    # a rewind rewrites the kept steps with higher numbers: a different fingerprint
    for p in d.glob("step-*"):
        p.unlink()
    step_dir(d, None, *STEPS[:2], first=7)
    assert SRC.fingerprint(str(d), 8) != head


def test_step_dir_broken_steps_meta_and_pending_last(tmp_path):
    d = step_dir(tmp_path / "crab_user_4", None, user("alpha"), b"{broken", b"[1]", user("beta"), b'{"mess')
    (d / "meta").write_text("{not json")
    r = SRC.read(d)
    assert [m.text for m in r.messages] == ["alpha", "beta"]
    assert r.stats.reasons == {"broken step": 2, "broken meta": 1} and r.stats.pending
    assert r.end_offset == 5  # the unparseable last step is read again
    (d / "step-000005").write_text(json.dumps(user("gamma")))
    rest = SRC.read(d, r.end_offset, json.loads(json.dumps(r.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(2, "gamma")]


def test_step_dir_load_checks_length(tmp_path):
    d = step_dir(tmp_path / "crab_user_5", None, user("alpha"))
    [m] = SRC.read(d).messages
    assert SRC.load(str(d), m.offset, m.length) == user("alpha")
    assert SRC.load(str(d), m.offset, m.length + 1) is None
    with pytest.raises(OSError):
        SRC.load(str(d), 2, 5)


# -- crabdb store.crmem (formats.md 5.3) -------------------------------------------------------


def two_sessions() -> Store:
    s = Store()
    s.put(f"local/session/{H1}/meta", meta(root="/home/dev/app"))
    s.put(f"local/idx/sess/01AGENT/user/2026-08-21T10:00:00/{H1}", H1)
    s.put(msg_key(H1, 0), user("deploy the narwhal staging build"))
    s.put(msg_key(H1, 1), assistant({"type": "text", "text": "Deployed narwhal build 4821."},
                                     {"type": "tool_use", "id": "t1", "name": "deploy", "input": {"env": "stg"}}))
    s.put(f"local/session/{H1}/evt/000000000000", {"event": "done", "ts": "2026-08-21T10:00:09Z"})
    s.put(f"local/session/{H2}/meta", meta(title="Other"))
    s.put(msg_key(H2, 0), user("second session"))
    s.put(f"local/session/{H1}/meta", meta(title="Narwhal deploy", root="/home/dev/app"))  # newest wins
    s.put("local/memory/archive-x", "compacted text", col=2)
    return s


def test_store_sessions_messages_and_load(tmp_path):
    store = two_sessions().write(tmp_path / "store.crmem")
    unit = Path(member_path(store, H1))
    r = SRC.read(unit)
    assert full(r) == [
        (Role.USER, "user", "deploy the narwhal staging build", None),
        (Role.ASSISTANT, "assistant", "Deployed narwhal build 4821.", None),
        (Role.ASSISTANT, "tool-call:deploy", '{"env": "stg"}', "deploy"),
    ]
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project, s.path) == (
        "crabtalk", H1, "Narwhal deploy", "/home/dev/app", str(unit))
    assert s.started.isoformat() == "2026-08-21T10:00:00+00:00" and s.message_count == 3
    assert r.end_offset == 2 and r.stats.skipped == 0
    read_back(unit, r.messages)
    assert SRC.read(Path(member_path(store, H2))).session.title == "Other"
    with pytest.raises(FileNotFoundError):
        SRC.stat(member_path(store, "01NOSUCH"))


def test_store_incremental_append_and_compaction(tmp_path):
    path = tmp_path / "store.crmem"
    s = two_sessions()
    s.write(path)
    unit = member_path(path, H1)
    size, mtime, _ = SRC.stat(unit)
    head = SRC.fingerprint(unit, size)
    other = SRC.stat(member_path(path, H2))
    first = SRC.read(Path(unit))
    s.put(msg_key(H1, 2), user("and roll back the narwhal canary")).write(path)
    assert SRC.stat(unit)[0] == 3 and SRC.stat(unit)[1] != mtime and SRC.fingerprint(unit, size) == head
    assert SRC.stat(member_path(path, H2)) [:2] == other[:2]  # the other session is unchanged
    rest = SRC.read(Path(unit), first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in rest.messages] == [(3, "and roll back the narwhal canary")]
    # compaction deletes the msg keys: size shrinks (the indexer re-reads from 0)
    for i in range(3):
        s.delete(msg_key(H1, i))
    s.put(f"local/session/{H1}/archive", "archive-x")
    s.put(f"local/session/{H1}/meta", meta(title="Narwhal deploy", summary="Narwhal deployed."))
    s.write(path)
    assert SRC.stat(unit)[0] == 0
    r = SRC.read(Path(unit))
    assert r.messages == [] and r.session.summary == "Narwhal deployed."


def test_store_snapshot_is_the_starting_point(tmp_path):
    s = two_sessions().snapshot(point=False)  # an older snapshot stays embedded
    s.put(msg_key(H2, 1), user("after the first snapshot"))
    s.snapshot()  # the header points at this one
    s.put(msg_key(H2, 2), user("after the newest snapshot")).delete(msg_key(H2, 0))
    path = s.write(tmp_path / "store.crmem")
    assert sorted(SRC.discover({"CRABTALK_HOME": str(tmp_path)}, tmp_path)) == [
        Path(member_path(path, H1)), Path(member_path(path, H2))]
    r = SRC.read(Path(member_path(path, H2)))
    assert [m.text for m in r.messages] == ["after the first snapshot", "after the newest snapshot"]
    assert r.stats.skipped == 0
    r1 = SRC.read(Path(member_path(path, H1)))
    assert r1.session.title == "Narwhal deploy" and len(r1.messages) == 3


def test_store_torn_tail_bad_values_and_bad_snapshot_counted(tmp_path):
    s = two_sessions()
    s.put(msg_key(H1, 2), b"{not json")
    path = tmp_path / "store.crmem"
    path.write_bytes(s.bytes() + b"\x00\x01\x40\x00\x00\x00local/sess")  # torn tail
    r = SRC.read(Path(member_path(path, H1)))
    assert len(r.messages) == 3 and r.stats.reasons == {"broken message value": 1, "torn tail record": 1}
    assert SRC.read(Path(member_path(path, H2))).stats.skipped == 0  # store-wide issues counted once
    s.index_at, s.index_len = 10**6, 8  # the header points past the end
    s.write(path)
    r = SRC.read(Path(member_path(path, H1)))
    assert r.stats.reasons["bad index snapshot"] == 1 and len(r.messages) == 3  # replayed from byte 32


@pytest.mark.parametrize("data", [b"", b"CRMEM\0", b"SQLite format 3\0" + b"\0" * 100,
                                  struct.pack("<6sIH4xQQ", b"CRMEM\0", 9, 0, 0, 0)])
def test_store_not_a_store_never_crashes(tmp_path, data):
    (tmp_path / "store.crmem").write_bytes(data)
    assert list(SRC.discover({"CRABTALK_HOME": str(tmp_path)}, tmp_path)) == []
    r = SRC.read(Path(member_path(tmp_path / "store.crmem", H1)))
    assert r.messages == []


def test_store_parsed_once_per_change(tmp_path, monkeypatch):
    from crabsearch.sources import crabtalk

    store = two_sessions()
    path = store.write(tmp_path / "store.crmem")
    calls = []
    real = crabtalk._replay
    monkeypatch.setattr(crabtalk, "_replay", lambda *a: calls.append(1) or real(*a))
    src = CrabtalkSource()
    for unit in src.discover({"CRABTALK_HOME": str(tmp_path)}, tmp_path):
        src.stat(str(unit))
        src.fingerprint(str(unit), 0)
        src.read(unit)
    assert calls == [1]
    store.put(msg_key(H2, 1), user("more")).write(path)
    assert src.stat(member_path(path, H2))[0] == 2 and calls == [1, 1]


# -- the shared corpus -------------------------------------------------------------------------

CORPUS_CASES = [
    ("SYNTHETIC_2026-04_flat-jsonl", "crab_user_1_fix-login-redirect", "Fix login redirect",
     "trailing slash", Role.ASSISTANT),
    ("SYNTHETIC_2026-07_step-dir", "crab_user_2", "Why does `cargo test` fail on CI but not locally?",
     "fail on CI", Role.USER),
    ("SYNTHETIC_2026-08_crabdb", "01K3ZQ8Y7T6S5R4Q3P2N1M0KJH", "Staging deploy", None, None),
]


@pytest.mark.parametrize("layout,sid,title,phrase,role", CORPUS_CASES)
def test_corpus(layout, sid, title, phrase, role):
    root = CORPUS / "crabtalk" / layout
    if not root.is_dir():
        pytest.skip("corpus absent")
    [unit] = list(SRC.discover({"CRABTALK_HOME": str(root)}, root))
    r = SRC.read(unit)
    assert r.stats.skipped == 0 and r.session.session_id == sid and r.session.title == title
    read_back(unit, r.messages)
    if phrase:
        assert any(phrase in m.text and m.role is role for m in r.messages)
    else:  # compaction deleted every message: only the meta remains
        assert r.messages == [] and r.session.summary == "User deployed staging build 4821."
        assert r.session.project == "/home/dev/app"


# -- end to end: index, search, status, show ---------------------------------------------------


def test_end_to_end_cli(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    root = home / ".crabtalk"
    jsonl(root / "sessions" / "crab_user_1_fix.jsonl", *JSONL_LINES)
    step_dir(root / "sessions" / "crab_user_2", STEP_META, *STEPS)
    two_sessions().write(root / "store.crmem")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CRABTALK_HOME", raising=False)
    index = str(tmp_path / "index")

    def run(*argv):
        return cli_ok(capsys, "--index-dir", index, *argv)

    run("index")

    def hits(query):
        return json.loads(run("search", "--json", "--no-refresh", query))["hits"]

    [h] = hits("zanzibar")
    assert (h["agent"], h["session_id"], h["title"], h["project"], h["resume_command"]) == (
        "crabtalk", "crab_user_1_fix", "Fix the zanzibar cache", None, None)
    [h] = hits("wombat linker")
    assert (h["session_id"], h["title"]) == ("crab_user_2", "Why does the wombat build fail?")
    [h] = hits("narwhal")
    assert (h["session_id"], h["title"], h["project"]) == (H1, "Narwhal deploy", "/home/dev/app")
    assert any("narwhal" in i["text"] for i in h["window"])
    assert hits("hunter2") == [] and hits("sk-secret-quux") == []  # tool output is not indexed
    assert [x["session_id"] for x in hits("bash")] == ["crab_user_2"]  # tool names are indexed
    status = json.loads(run("status", "--json"))
    crab = next(a for a in status["agents"] if a["agent"] == "crabtalk")
    assert crab["files_found"] == 4 and crab["sessions"] == 4
    assert "Crabtalk: 4 sessions found in 3 files," in run("status")  # two in store.crmem
    page = json.loads(run("show", H1, "--json"))
    assert [i["text"] for i in page["messages"]][:2] == ["deploy the narwhal staging build", "Deployed narwhal build 4821."]
    page = json.loads(run("show", "crab_user_2", "--json"))
    assert page["messages"][0]["text"] == "Why does the wombat build fail?"
    # a new store message and a new step are picked up incrementally, nothing duplicated
    s = two_sessions().put(msg_key(H1, 2), user("rollback the narwhal canary"))
    s.write(root / "store.crmem")
    step_dir(root / "sessions" / "crab_user_2", None, user("what about the wombat tests?"), first=7)
    run("index")
    [h] = hits("canary")
    assert h["session_id"] == H1 and h["message_count"] == 4
    h, *lower = hits("wombat tests")  # the other sessions with one of the words fill the page below it
    assert h["session_id"] == "crab_user_2" and h["message_count"] == 9 and h["route"] == "phrase"
    assert all(x["route"] != "phrase" for x in lower)
    assert len(json.loads(run("show", H1, "--json"))["messages"]) == 4


def test_store_truncated_at_every_byte_never_crashes(tmp_path):
    data = two_sessions().snapshot().put(msg_key(H2, 1), user("tail")).bytes()
    path = tmp_path / "store.crmem"
    src = CrabtalkSource()
    for cut in range(len(data) + 1):
        path.write_bytes(data[:cut])
        for unit in src.discover({"CRABTALK_HOME": str(tmp_path)}, tmp_path):
            r = src.read(unit)
            assert set(r.stats.reasons) <= {"torn tail record", "bad index snapshot", "not a crmem store"}
            read_back(unit, r.messages)


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacrabtalk`` no other session holds."""
    handle = "01K3ZQAAAAAAAAAAAAAAAA0105"
    cwd = "/home/dev/crabapp"
    updated = t + timedelta(minutes=1)
    stamp = lambda x: x.strftime("%Y-%m-%dT%H:%M:%S.000000000+00:00")  # noqa: E731  (crabtalk's chrono form)
    path = (Store()
            .put(f"local/session/{handle}/meta", meta(title="Crabtalk: worker stall", root=cwd,
                                                          created_at=stamp(t), updated=stamp(updated)))
            .put(msg_key(handle, 0), user(prompt_of("crabtalk")))
            .put(msg_key(handle, 1), assistant({"type": "text", "text": reply_of("crabtalk")}))
            .write(home / ".crabtalk" / "store.crmem"))
    return Expect("crabtalk", handle, "Crabtalk: worker stall", cwd, None, "quokkacrabtalk",
                  [prompt_of("crabtalk"), reply_of("crabtalk")], t, files=[path])

"""The newest releases (checked 2026-12-06): one test per rule of the drift pass, each on a small
transcript in the agent's real shape (built here), each failing on the reader before its rule,
and ``search``, ``show`` and ``export`` agreeing through the CLI. The upstream source each rule
follows (file and commit, or npm version) is cited at its test and in the reader's docstring."""

from __future__ import annotations

import json

from crabsearch.sources import SOURCES

from builders import CodexSession
from source_checks import assert_incremental, cli_ok
from test_formats_today import agree, export, home, search, show  # noqa: F401 - the fixture

# -- Codex ---------------------------------------------------------------------------------------
# openai/codex: codex-rs/history/src/rollout_payload.rs at 5ef96ab2785f (RolloutItemWire),
# codex-rs/thread-store/src/local/segment_writer.rs and segment_writer_tests.rs at 848575dc0d9f,
# codex-rs/history/src/retained_context.rs at 86be5320b068; @openai/codex 0.171.0's binary.

PARENT = "019b0000-0000-7000-8000-0000000000a1"
CHILD = "019b0000-0000-7000-8000-0000000000a2"


def _line(s: CodexSession, kind: str, payload: dict) -> CodexSession:
    s.lines.append(s._env(kind, payload))
    return s


def _talk(s: CodexSession, author: str, recipient: str, content: str) -> CodexSession:
    """An ``inter_agent_communication`` line as ``InterAgentCommunication::new`` serializes it."""
    return _line(s, "inter_agent_communication", {"author": author, "recipient": recipient,
                                                  "other_recipients": [], "content": content,
                                                  "trigger_turn": True})


def test_codex_6_agents_talking_task_and_report(home, capsys, tmp_path):
    """Rule 6. In multi-agent v2 a subagent receives its task as an ``inter_agent_communication``
    from its parent's path: the subagent's first prompt and title, searchable. Its report reaches
    the parent the same way: a message of the parent labelled by its author. The other current
    line kinds are known: nothing is listed as unknown."""
    parent = CodexSession(home, session_id=PARENT).user("coordinate the otter survey")
    parent.tool("spawn_agent", {"task_name": "surveyor", "message": "Count the otters"}, "spawned")
    _talk(parent, "/root/surveyor", "/root", "Report: fourteen otters counted near the north weir")
    parent.assistant("The survey is done.")
    _line(parent, "dynamic_tools_updated", {"tools": [{"name": "lookup", "description": "x"}]})
    _line(parent, "security_risk_score", {"score": 2, "level": "low"})
    _line(parent, "inter_agent_communication_metadata", {"trigger_turn": True})
    parent.write()
    child = CodexSession(home, session_id=CHILD)
    child.lines[0]["payload"]["source"] = {"subagent": {"thread_spawn": {
        "parent_thread_id": PARENT, "depth": 1, "agent_path": "/root/surveyor", "agent_role": "surveyor"}}}
    _talk(child, "/root", "/root/surveyor", "Count the otters along the heronry weir")
    child.assistant("Counted fourteen.")
    path = child.write()

    read = SOURCES["codex"].read(path)
    assert [(m.role.value, m.text) for m in read.messages][0] == ("user", "Count the otters along the heronry weir")
    assert read.session.title == "Count the otters along the heronry weir"
    assert_incremental(SOURCES["codex"], path.read_bytes(), tmp_path / path.name)
    agree(capsys, "heronry", CHILD, "otters along the heronry weir")
    hit = agree(capsys, "fourteen otters", PARENT, "fourteen otters counted", role="assistant")
    assert [m["label"] for m in show(capsys, PARENT)["messages"] if "fourteen otters" in m["text"]] == [
        "agent:/root/surveyor"]
    assert "agent:/root/surveyor" in export(capsys, PARENT)
    assert json.loads(cli_ok(capsys, "status", "--json"))["unknown_kinds"] == []


def test_codex_6_voice_transcript_and_answers_are_read(home, capsys):
    """A ``realtime_item`` ``transcript_segment`` is what was said aloud (``{id,
    realtime_session_id, type, data: {role, text}}``); a ``retained_context`` ``verified_answer``
    holds the user's answers to the model's questions: both searchable, shown and exported; a
    message from another agent starts a turn that a rollback can drop."""
    s = CodexSession(home, session_id=PARENT).user("plan the lemur release")
    _line(s, "realtime_item", {"id": "rt1", "realtime_session_id": "rs1", "type": "realtime_session_started"})
    _line(s, "realtime_item", {"id": "rt2", "realtime_session_id": "rs1", "type": "transcript_segment",
                               "data": {"role": "user", "text": "ship the lemur build on thursday"}})
    _line(s, "realtime_item", {"id": "rt3", "realtime_session_id": "rs1", "type": "transcript_segment",
                               "data": {"role": "assistant", "text": "Thursday works for the lemur build"}})
    _line(s, "retained_context", {"type": "verified_answer", "turn_id": "t1", "call_id": "c1",
                                  "questions": [{"question": "Which region?", "answer": "the quokka region"}]})
    _talk(s, "/root/helper", "/root", "helper note about wombats")
    s.rolled_back(1)
    s.write()
    read = SOURCES["codex"].read(s.path)
    assert [(m.role.value, m.label) for m in read.messages] == [
        ("user", "user"), ("user", "voice"), ("assistant", "voice"), ("user", "user"),
        ("assistant", "agent:/root/helper")]
    assert read.session.extra["off_branch"] == [[4, 5]]
    assert read.session.title == "plan the lemur release"
    agree(capsys, "thursday", PARENT, "ship the lemur build on thursday")
    agree(capsys, "quokka", PARENT, "the quokka region")


def _rotate(s: CodexSession, segment_id: str | None = None) -> "object":
    """Rotate ``s`` as ``rotate_thread_segment`` does: copy the live rollout to
    ``<codex home>/rollout_segments/<thread>/<segment key>/<file name>`` and replace it with the
    thread's ``session_meta`` and a ``rollout_reference`` to the copy; returns the copy's path."""
    path = s.write()
    key = s.lines[0]["payload"].get("segment_id") or "initial"
    seg = s.home / ".codex" / "rollout_segments" / s.session_id / key / path.name
    seg.parent.mkdir(parents=True, exist_ok=True)
    seg.write_bytes(path.read_bytes())
    meta = json.loads(json.dumps(s.lines[0]))
    meta["payload"]["segment_id"] = segment_id
    s.lines = [meta, s._env("rollout_reference", {
        "rollout_path": str(seg), "thread_id": s.session_id, "rollout_timestamp": "2026-03-01T09-00-00",
        "segment_id": None if key == "initial" else key, "max_depth": 1})]
    s.write()
    return seg


def test_codex_7_rotated_segments_are_the_start_of_the_session(home, capsys):
    """Rule 7. A rotation copies the live rollout to an immutable segment and replaces it with
    ``session_meta`` and a ``rollout_reference``: what was said before the rotation stays in the
    index, nothing twice, across two rotations; a segment is not a session of its own."""
    s = CodexSession(home, session_id=PARENT).user("design the tapir cache").assistant("Tapir cache designed.")
    s.write()
    assert search(capsys, "tapir")
    first = _rotate(s, segment_id="0196a000-0000-7000-8000-000000000001")
    s.user("now the gecko eviction policy").assistant("Gecko policy set.")
    second = _rotate(s, segment_id="0196a000-0000-7000-8000-000000000002")
    s.user("finally the numbat metrics").assistant("Numbat metrics added.")
    path = s.write()
    assert sorted(SOURCES["codex"].discover({}, home)) == [path]
    read = SOURCES["codex"].read(path)
    assert [m.text for m in read.messages] == [
        "design the tapir cache", "Tapir cache designed.", "now the gecko eviction policy", "Gecko policy set.",
        "finally the numbat metrics", "Numbat metrics added."]
    assert read.session.title == "design the tapir cache" and read.stats.skipped == 0
    assert [SOURCES["codex"].locate(str(path), m.offset)[0] for m in read.messages] == [
        str(first)] * 2 + [str(second)] * 2 + [str(path)] * 2
    agree(capsys, "tapir", PARENT, "design the tapir cache")
    agree(capsys, "gecko", PARENT, "gecko eviction policy")
    agree(capsys, "numbat", PARENT, "numbat metrics")
    assert [m["text"] for m in show(capsys, PARENT)["messages"]] == [m.text for m in read.messages]
    assert export(capsys, PARENT).count("design the tapir cache") == 2  # the title and the message
    _assert_appends_after_the_head(path)


def _assert_appends_after_the_head(path) -> None:
    """Appends to a rotated rollout read incrementally give what one whole read gives, for every
    cut after its head (Codex writes the head, ``session_meta`` and ``rollout_reference``, into a
    temporary file it then renames over the rollout: the head is never seen half-written)."""
    from source_checks import key

    data, src = path.read_bytes(), SOURCES["codex"]
    whole = [key(m) for m in src.read(path).messages]
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    for cut in sorted({c for a, b in zip(ends[1:], ends[2:] + [len(data)]) for c in (a, (a + b) // 2)}):
        path.write_bytes(data[:cut])
        first = src.read(path)
        state = json.loads(json.dumps(first.state))
        committed = state["next_index"]
        path.write_bytes(data)
        rest = src.read(path, first.end_offset, state)
        got = [key(m) for m in first.messages if m.message_index < committed] + [key(m) for m in rest.messages]
        assert got == whole, f"cut at byte {cut}"


def test_codex_7_a_moved_home_a_missing_segment_and_a_fork(home, capsys, tmp_path):
    """A segment is found under the Codex home by thread and segment key when the recorded path
    no longer exists (a moved home); a segment that cannot be found is counted, never fatal; a
    reference to another thread's segment (a fork) is not read as this session's history."""
    s = CodexSession(home, session_id=PARENT).user("tune the axolotl pool").assistant("Pool tuned.")
    seg = _rotate(s)
    s.lines[1]["payload"]["rollout_path"] = "/elsewhere/.codex/rollout_segments/x/initial/" + seg.name
    s.user("then the okapi queue").write()
    assert [m.text for m in SOURCES["codex"].read(s.path).messages] == [
        "tune the axolotl pool", "Pool tuned.", "then the okapi queue"]
    seg.unlink()
    read = SOURCES["codex"].read(s.path)
    assert [m.text for m in read.messages] == ["then the okapi queue"]
    assert read.stats.reasons == {"rotated segment missing": 1}
    fork = CodexSession(home, session_id=CHILD).user("fork of the axolotl work")
    fork.lines.insert(1, fork._env("rollout_reference", {"rollout_path": str(seg), "thread_id": PARENT,
                                                         "nth_user_message": 1, "max_depth": 1}))
    read = SOURCES["codex"].read(fork.write())
    assert [m.text for m in read.messages] == ["fork of the axolotl work"] and read.stats.skipped == 0


# -- OpenClaw ------------------------------------------------------------------------------------
# openclaw 2026.9.6 (npm): dist/openclaw-agent-board-schema-*.mjs (the agent schema),
# dist/session-accessor.sqlite-transcript-write-*.mjs (replaceSqliteTranscriptSuffixInTransaction,
# rewriteTranscriptEventRowsExact, replaceTranscriptEventsSync), dist/session-accessor.sqlite-
# transcript-store-*.mjs and -state-*.mjs (rotateTranscriptGenerationInTransaction),
# dist/session-cold-storage-worker-*.mjs and -codec-*.mjs (cold archives).

OC1, OC2, OC3 = ("0c000000-0000-4000-8000-0000000000b1", "0c000000-0000-4000-8000-0000000000b2",
                 "0c000000-0000-4000-8000-0000000000b3")
OC_SCHEMA = """
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
  previous_session_id TEXT, reason TEXT, session_scope TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, transcript_observed_at INTEGER, transcript_updated_at INTEGER) STRICT;
CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL, entry_valid INTEGER, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
  created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq)) STRICT;
CREATE TABLE transcript_rewrite_watermarks (session_id TEXT NOT NULL PRIMARY KEY, generation TEXT NOT NULL,
  updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_transcript_cold_archives (session_id TEXT NOT NULL PRIMARY KEY, generation TEXT NOT NULL,
  archive_name TEXT NOT NULL UNIQUE, archive_sha256 TEXT NOT NULL, event_count INTEGER NOT NULL,
  raw_bytes INTEGER NOT NULL, archive_bytes INTEGER NOT NULL, last_seq INTEGER NOT NULL,
  archived_at INTEGER NOT NULL, storage TEXT NOT NULL, archive_blob BLOB) STRICT;
"""


def _oc_store(home, watermarks: bool = True):
    """An empty agent store (the 2026.9.6 schema's columns that matter here) and a writer."""
    import sqlite3

    from crabsearch.sources import openclaw

    for cache in ("_SUMMARY", "_ARCHIVES", "_COLDS", "_BLOB"):
        getattr(openclaw, cache, {}).clear()
    db = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    con.executescript(OC_SCHEMA if watermarks else OC_SCHEMA.split("CREATE TABLE transcript_rewrite")[0])
    return db, con


class _OcClock:
    """Milliseconds that always move on (OpenClaw's ``Date.now()``)."""

    def __init__(self):
        self.now = 1784538000000

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def _oc_window(con, sid, key, clock):
    con.execute("INSERT INTO session_windows VALUES (?,?,NULL,NULL,'conversation',?,?,NULL,?)",
                (sid, key, clock(), clock(), clock()))
    con.execute("INSERT INTO session_nodes VALUES (?,?,?,1,?)", (key, sid, json.dumps({"sessionId": sid}), clock()))


def _oc_insert(con, sid, entries, start, clock):
    for seq, e in enumerate(entries, start):
        con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?,?,?,?)",
                    (sid, seq, json.dumps(e), clock()))


def _oc_rotate(con, sid, generation, clock):
    """``rotateTranscriptGenerationInTransaction`` and ``touchTranscriptMutationInTransaction``."""
    now = clock()
    con.execute("INSERT INTO transcript_rewrite_watermarks VALUES (?,?,?) ON CONFLICT(session_id) DO UPDATE "
                "SET generation=excluded.generation, updated_at=excluded.updated_at", (sid, generation, now))
    con.execute("UPDATE session_windows SET transcript_updated_at=? WHERE session_id=?", (now, sid))


def test_openclaw_8_branch_and_exact_rewrites_reread_the_session(home, capsys):
    """Rule 8. A branch deletes the rows from ``startSeq`` on and inserts the new suffix (more
    rows than before); an exact rewrite changes a row where it is; both rotate the generation.
    After each, the session holds each turn once, no stale text, and every message loads."""
    from v3_builders import V3Session

    clock = _OcClock()
    db, con = _oc_store(home)
    _oc_window(con, OC1, "agent:main:main", clock)
    s = V3Session(OC1, cwd="/srv/bot")
    s.user("plan the ferret rollout")
    s.assistant("Ferret rollout planned in seventeen steps")
    s.user("add a canary stage for the ferrets")
    s.assistant("Canary stage added")
    _oc_insert(con, OC1, s.entries, 0, clock)
    _oc_rotate(con, OC1, "g1", clock)
    con.commit()
    agree(capsys, "canary", OC1, "canary stage")

    branch = V3Session(OC1, cwd="/srv/bot")
    branch.n, branch.leaf = 10, s.entries[2]["id"]
    branch.user("use a staged dingo rollout instead")
    branch.assistant("Dingo staging added")
    branch.assistant("The dingo stages run hourly")
    con.execute("DELETE FROM transcript_events WHERE session_id=? AND seq >= 3", (OC1,))
    _oc_insert(con, OC1, branch.entries[1:], 3, clock)
    _oc_rotate(con, OC1, "g2", clock)
    con.commit()
    assert [h for h in search(capsys, "canary") if h["session_id"] == OC1] == []
    agree(capsys, "dingo", OC1, "staged dingo rollout")
    texts = [m["text"] for m in show(capsys, OC1)["messages"]]
    assert texts == ["plan the ferret rollout", "Ferret rollout planned in seventeen steps",
                     "use a staged dingo rollout instead", "Dingo staging added", "The dingo stages run hourly"]

    row = json.loads(con.execute("SELECT event_json FROM transcript_events WHERE session_id=? AND seq=2",
                                 (OC1,)).fetchone()[0])
    row["message"]["content"][-1]["text"] = "Ferret rollout planned in four phases"
    con.execute("UPDATE transcript_events SET event_json=? WHERE session_id=? AND seq=2", (json.dumps(row), OC1))
    _oc_rotate(con, OC1, "g3", clock)
    con.commit()
    con.close()
    found = [h for h in search(capsys, "seventeen") if h["session_id"] == OC1]
    assert found == []
    agree(capsys, "phases", OC1, "planned in four phases", role="assistant")
    assert len(show(capsys, OC1)["messages"]) == 5
    assert "four phases" in export(capsys, OC1) and "seventeen" not in export(capsys, OC1)


def test_openclaw_8_rows_replaced_below_the_last_read_one_without_a_generation(home, capsys):
    """A store without ``transcript_rewrite_watermarks`` (before the table): a suffix replaced by
    as many rows as it had is still seen (the row at the stored size is no longer the same)."""
    from v3_builders import V3Session

    clock = _OcClock()
    db, con = _oc_store(home, watermarks=False)
    _oc_window(con, OC1, "agent:main:main", clock)
    s = V3Session(OC1, cwd="/srv/bot")
    s.user("profile the quoll importer")
    s.assistant("The quoll importer spends its time in xylophone decoding")
    _oc_insert(con, OC1, s.entries, 0, clock)
    con.commit()
    agree(capsys, "xylophone", OC1, "quoll importer spends", role="assistant")
    other = V3Session(OC1, cwd="/srv/bot")
    other.n, other.leaf = 10, s.entries[1]["id"]
    other.assistant("The numbat importer spends its time in hashing")
    con.execute("DELETE FROM transcript_events WHERE session_id=? AND seq = 2", (OC1,))
    _oc_insert(con, OC1, other.entries[1:], 2, clock)
    con.commit()
    con.close()
    assert [h for h in search(capsys, "xylophone") if h["session_id"] == OC1] == []
    assert [m["text"] for m in show(capsys, OC1)["messages"]] == [
        "profile the quoll importer", "The numbat importer spends its time in hashing"]


def _cold_archive(sid: str, entries: list[dict]) -> bytes:
    """A cold archive as the worker writes it: zstd JSONL of header, event and projection records."""
    import zstandard

    lines = [{"kind": "header", "version": 1, "sessionId": sid, "generation": "g9"}]
    lines += [{"kind": "event", "row": {"seq": n, "event_json": json.dumps(e), "created_at": 1784538000000 + n}}
              for n, e in enumerate(entries)]
    lines += [{"kind": "identity", "row": {"event_id": e.get("id", "h"), "seq": n, "event_type": e["type"],
                                           "parent_id": e.get("parentId"), "message_idempotency_key": None,
                                           "created_at": 1784538000000}} for n, e in enumerate(entries)]
    lines.append({"kind": "index", "row": {"indexed_seq": len(entries) - 1, "leaf_event_id": None, "needs_rebuild": 0,
                                           "active_event_count": 0, "active_message_count": 0, "updated_at": 1}})
    return zstandard.ZstdCompressor().compress("".join(json.dumps(x) + "\n" for x in lines).encode())


def test_openclaw_9_cold_storage_stays_searchable_and_archived(home, capsys):
    """Rule 9. With cold storage on, idle transcripts leave ``transcript_events`` for
    ``session_transcript_cold_archives``: in the store (``storage: sqlite``) or as
    ``<agent>/sessions/cold/<sha256>.jsonl.zst`` (``storage: file``). Both stay searchable, shown
    and exported, marked archived, still resumable; a leftover ``.jsonl`` is not read twice."""
    import hashlib

    from v3_builders import V3Session

    clock = _OcClock()
    db, con = _oc_store(home)
    sessions = db.parent.parent / "sessions"
    for sid, key, storage, words in ((OC2, "agent:main:ops", "file", "the wallaby backup schedule"),
                                     (OC3, "agent:main:dev", "sqlite", "the bilby lint rules")):
        _oc_window(con, sid, key, clock)
        s = V3Session(sid, cwd="/srv/bot")
        s.user(f"explain {words}")
        s.assistant("Here it is.")
        blob = _cold_archive(sid, s.entries)
        sha = hashlib.sha256(blob).hexdigest()
        name = f"{sha}.jsonl.zst"
        if storage == "file":
            (sessions / "cold").mkdir(parents=True)
            (sessions / "cold" / name).write_bytes(blob)
            s.write(sessions / f"{sid}.jsonl")  # left over from before the store
        con.execute("INSERT INTO session_transcript_cold_archives VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (sid, "g9", name, sha, len(s.entries), 1, len(blob), len(s.entries) - 1, clock(), storage,
                     blob if storage == "sqlite" else None))
    con.commit()
    con.close()
    for query, sid, text in (("wallaby", OC2, "wallaby backup schedule"), ("bilby", OC3, "bilby lint rules")):
        hit = agree(capsys, query, sid, text)
        assert hit["archived"] is True and hit["path"].endswith(f"#cold:{sid}")
        assert hit["resume_command"] and "openclaw tui --session agent:main:" in hit["resume_command"]
        assert show(capsys, sid)["session"]["archived"] is True
        assert "Archived" in export(capsys, sid)
    assert len(search(capsys, "wallaby")) == 1


# -- opencode ------------------------------------------------------------------------------------
# opencode-ai 1.18.33 (npm): the bundled storage/Database path (opencode.db for latest/beta/prod,
# opencode-<channel>.db otherwise, OPENCODE_DB first); anomalyco/opencode
# packages/core/src/session/input.ts at 0550cd8e14a9 (session_input: admitted, then promoted).

OC_INPUT = ("create table session_input (id text primary key, session_id text not null, prompt text not null, "
            "delivery text not null, admitted_seq integer not null, promoted_seq integer, time_created integer not null)")


def _opencode_store(path, *sessions, t=None):
    """A store at ``path`` with opencode's tables (the opencode test module's ``Db``), V2
    ``session_message`` and ``session_input``, holding ``sessions`` (``(id, title)``)."""
    import sqlite3

    from test_sources_opencode import T0, Db

    db = Db(path)
    for sid, title in sessions:
        db.session(sid, title, t=t or T0)
    con = sqlite3.connect(db.path)
    con.execute("create table session_message (id text primary key, session_id text not null, type text not null, "
                "seq integer not null, time_created integer not null, time_updated integer not null, data text not null)")
    con.execute(OC_INPUT)
    con.commit()
    con.close()
    return db


def test_opencode_10_every_channel_store_once_and_opencode_db(home, capsys, monkeypatch):
    """Rule 10. A non-default channel keeps ``opencode-<channel>.db`` beside ``opencode.db``;
    ``OPENCODE_DB`` names another store: every one is read, and a session a store was copied
    into is read once, from the store that updated it last."""
    from test_sources_opencode import T0, text

    data = home / ".local" / "share" / "opencode"
    main = _opencode_store(data / "opencode.db", ("ses_main", "Main channel work"))
    main.message("ses_main", "user", text("tune the pelican scheduler"))
    dev = _opencode_store(data / "opencode-dev.db", ("ses_dev", "Dev channel work"), ("ses_main", "Main, copied"),
                          t=T0 - 10_000_000)
    dev.message("ses_dev", "user", text("trace the cormorant leak"))
    custom = _opencode_store(home / "elsewhere" / "work.sqlite", ("ses_env", "From OPENCODE_DB"))
    custom.message("ses_env", "user", text("rename the albatross flags"))
    monkeypatch.setenv("OPENCODE_DB", str(custom.path))
    agree(capsys, "cormorant", "ses_dev", "cormorant leak")
    agree(capsys, "albatross", "ses_env", "albatross flags")
    [hit] = search(capsys, "pelican")
    assert hit["session_id"] == "ses_main" and hit["path"] == f"{main.path}#ses_main"
    assert [h["session_id"] for h in search(capsys, "channel")].count("ses_main") == 1


def test_opencode_10_a_queued_prompt_is_a_user_message(home, capsys):
    """A prompt sent while the session was busy waits in ``session_input`` (``promoted_seq``
    NULL): the user's message at the end of the session; once promoted (its ``session_message``
    row written with the same id) it is read once."""
    from test_sources_opencode import T0, text

    db = _opencode_store(home / ".local" / "share" / "opencode" / "opencode.db", ("ses_q", "Port the gannet parser"))
    m1 = db.message("ses_q", "user", text("port the gannet parser"))
    db.message("ses_q", "assistant", text("Porting the gannet parser now."))

    def queue(mid, words, seq, promoted=None):
        _oc_sql_path(db.path, "insert into session_input values (?,?,?,?,?,?,?)", mid, "ses_q",
                     json.dumps({"text": words, "files": [], "agents": [], "references": []}), "queue", seq,
                     promoted, T0 + 60_000 + seq)

    queue("msg_q1", "and also cover the booby tokenizer", 7)
    assert [(m["role"], m["text"]) for m in show(capsys, "ses_q")["messages"]][-1] == (
        "user", "and also cover the booby tokenizer")
    agree(capsys, "booby", "ses_q", "booby tokenizer")
    assert m1 != "msg_q1"
    queue("msg_q0", "an old prompt already answered", 3, promoted=4)  # promoted: its message row holds it
    _oc_sql_path(db.path, "insert into session_message values (?,?,?,?,?,?,?)", "msg_q0", "ses_q", "user", 4,
                 T0 + 60_003, T0 + 60_003, json.dumps({"text": "an old prompt already answered",
                                                      "time": {"created": T0 + 60_003}}))
    texts = [m["text"] for m in show(capsys, "ses_q")["messages"]]
    assert texts.count("an old prompt already answered") == 1
    assert texts.count("and also cover the booby tokenizer") == 1


def _oc_sql_path(path, sql, *args):
    import sqlite3

    con = sqlite3.connect(path)
    con.execute(sql, args)
    con.commit()
    con.close()


# -- Copilot CLI, Crabtalk -----------------------------------------------------------------------
# @github/copilot-sdk 1.0.14 (npm): dist/generated/session-events.d.ts. crabtalk/crabtalk at
# 72fbe605: crates/store/src/interface/session.rs (append_session_events), crates/store/src/
# session/event.rs (EventLine), docs/src/spec/storage.md (the keyspace).

COP = "c0p11000-1111-4222-8333-444455556666"


def test_copilot_11_sdk_1_0_14_events_are_known(home, capsys):
    """Rule 11. The events copilot-sdk 1.0.14 adds are metadata: the conversation around them is
    read as before, and ``status`` lists none of them as unknown."""
    d = home / ".copilot" / "session-state" / COP
    d.mkdir(parents=True)
    added = ["assistant.fusion_phase_started", "assistant.fusion_phase_activity", "assistant.fusion_phase_completed",
             "assistant.fusion_phase_failed", "session.fusion_route_started", "session.fusion_route_failed",
             "session.fusion_resolved", "session.fusion_completed", "model.call_finished",
             "session.completion_receipt", "subagent.configured", "session.auto_tier_recommendation",
             "session.auto_tier_switch_failed", "session.mcp_server_needs_reconnect", "session.mcp_server_removed",
             "session.mode_notice_delivered", "permission.messageAuthorization", "permission.assentDetected"]
    events = [{"type": "session.start", "data": {"sessionId": COP, "context": {"cwd": "/w"}}},
              {"type": "user.message", "data": {"content": "summarise the jerboa migration"}}]
    events += [{"type": t, "data": {"fusionId": "f1", "content": "Plan mode is on"}} for t in added]
    events.append({"type": "assistant.message", "data": {"content": "The jerboa migration moved three tables."}})
    with open(d / "events.jsonl", "w", encoding="utf-8") as fh:
        for n, e in enumerate(events):
            fh.write(json.dumps({**e, "id": f"e{n}", "timestamp": f"2026-11-30T10:00:{n:02d}.000Z",
                                 "parentId": None}) + "\n")
    agree(capsys, "jerboa", COP, "summarise the jerboa migration")
    assert len(show(capsys, COP)["messages"]) == 2
    assert json.loads(cli_ok(capsys, "status", "--json"))["unknown_kinds"] == []


def test_crabtalk_11_events_widen_the_session(home, capsys):
    """Rule 11. crabdb keeps a session's ``EventLine`` trace under ``session/<h>/evt/<idx>``:
    their ``ts`` widen its start and end (the meta's ``updated_at`` lags a run's last events)."""
    from test_sources_crabtalk import Store, meta, msg_key, user

    h = "01KCRAB0000000000000000011"
    store = Store().put(f"local/session/{h}/meta", meta(title="Quokka deploy"))
    store.put(msg_key(h, 0), user("deploy the quokka service"))
    store.put(f"local/session/{h}/evt/{0:012d}", {"event": "tool_start", "calls": [{"id": "c1", "name": "bash"}],
                                                  "ts": "2026-08-21T09:58:00.000000000+00:00"})
    store.put(f"local/session/{h}/evt/{1:012d}", {"event": "done", "model": "m", "iterations": 2,
                                                  "stop_reason": "stop", "usage": {}, "ts": "2026-08-21T10:07:30Z"})
    store.write(home / ".crabtalk" / "store.crmem")
    hit = agree(capsys, "quokka", h, "deploy the quokka service")
    assert (hit["started"], hit["updated"]) == ("2026-08-21T09:58:00.000Z", "2026-08-21T10:07:30.000Z")
    page = show(capsys, h)["session"]
    assert (page["started"], page["updated"]) == ("2026-08-21T09:58:00.000Z", "2026-08-21T10:07:30.000Z")
    assert "2026-08-21" in export(capsys, h)


# -- Gemini CLI ----------------------------------------------------------------------------------
# google-gemini/gemini-cli at 5411f113ca: packages/core/src/core/logger.ts (checkpoint-<tag>.json,
# logs.json), packages/core/src/services/chatRecordingService.ts (chat file names),
# packages/cli/src/ui/AppContainer.tsx (an -i prompt is submitted like a typed one).

GEM_SID = "6e0d0000-0000-4000-8000-0000000000c1"
OLD_SID = "aaaa1111-0000-4000-8000-0000000000c2"


def _content(role, *parts):
    return {"role": role, "parts": [p if isinstance(p, dict) else {"text": p} for p in parts]}


def test_gemini_saved_chats_and_prompt_log_are_read(home, capsys):
    """A ``/chat save <tag>`` checkpoint is a session titled by its tag, resumable with
    ``/chat resume``; the messages it copied from the chat it was saved from are shown once,
    naming the other session; ``logs.json`` prompts of a session without a chat file are a
    session of their own, and those of a session with one are not read twice."""
    import os

    from builders import GeminiChat

    chat = GeminiChat(home, session_id=GEM_SID, project_id="webapp", directories=["/home/dev/webapp"])
    chat.user("refactor the dormouse cache")
    chat.gemini("The dormouse cache now evicts by size.")
    chat.user("add dormouse metrics")
    chat.gemini("Added hit and miss counters.")
    chat.user("ship it")
    path = chat.write()
    project = path.parent.parent
    saved = [_content("user", "<session_context>\nThis is the Gemini CLI.</session_context>"),
             _content("model", "Got it. Thanks for the context!"),
             _content("user", "refactor the dormouse cache"),
             _content("model", "The dormouse cache now evicts by size."),
             _content("user", "add dormouse metrics"),
             _content("model", {"functionCall": {"name": "run_shell_command", "args": {"command": "make"}}}),
             _content("user", {"functionResponse": {"name": "run_shell_command", "response": {"output": "ok"}}}),
             _content("model", "Added hit and miss counters.")]
    (project / "checkpoint-release%20plan.json").write_text(json.dumps({"history": saved}), "utf-8")
    later = path.stat().st_mtime + 600
    os.utime(project / "checkpoint-release%20plan.json", (later, later))
    (project / "checkpoint-old%20notes.json").write_text(json.dumps([  # the legacy bare list
        _content("user", "sketch the narwhal importer"), _content("model", "Sketched.")]), "utf-8")
    (project / "logs.json").write_text(json.dumps([
        {"sessionId": OLD_SID, "messageId": 0, "timestamp": "2026-01-05T09:00:00.000Z", "type": "user",
         "message": "why is the lemming build red"},
        {"sessionId": OLD_SID, "messageId": 1, "timestamp": "2026-01-05T09:03:00.000Z", "type": "user",
         "message": "/chat save lemming"},
        {"sessionId": GEM_SID, "messageId": 0, "timestamp": "2026-03-14T10:00:10.000Z", "type": "user",
         "message": "refactor the dormouse cache"}], indent=2), "utf-8")

    hits = [h for h in search(capsys, "dormouse metrics")]
    assert len(hits) == 1 and hits[0]["also_in"] == 1
    ids = {hits[0]["session_id"], *hits[0]["also_in_sessions"]}
    assert ids == {GEM_SID, "checkpoint-release%20plan@webapp"}
    page = show(capsys, "checkpoint-release%20plan@webapp")
    assert page["session"]["title"] == "release plan" and page["session"]["project"] == "/home/dev/webapp"
    assert [(m["role"], m["label"]) for m in page["messages"]] == [
        ("system", "context"), ("assistant", "assistant"), ("user", "user"), ("assistant", "assistant"),
        ("user", "user"), ("assistant", "tool-call:run_shell_command"), ("tool", "tool:run_shell_command"),
        ("assistant", "assistant")]
    hit = agree(capsys, "narwhal", "checkpoint-old%20notes@webapp", "sketch the narwhal importer")
    assert hit["title"] == "old notes" and hit["resume_command"] == "gemini -i '/chat resume old notes'"
    assert "release plan" in export(capsys, "checkpoint-release%20plan@webapp")
    hit = agree(capsys, "lemming", OLD_SID, "why is the lemming build red")
    assert hit["title"] == "why is the lemming build red" and hit["resume_command"] is None
    assert [m["label"] for m in show(capsys, OLD_SID)["messages"]] == ["user", "context"]
    assert len(search(capsys, "refactor")) == 1  # the logged copy of the chat's prompt is not read


def test_gemini_broken_saved_chat_and_log_are_counted_not_fatal(tmp_path):
    """A checkpoint that is not JSON is one counted skip; a ``logs.json`` that is not an array
    gives no sessions; entries without the fields ``Logger`` checks are left out."""
    src = SOURCES["gemini"]
    project = tmp_path / ".gemini" / "tmp" / "p"
    project.mkdir(parents=True)
    (project / "checkpoint-x.json").write_text("{not json", "utf-8")
    read = src.read(project / "checkpoint-x.json")
    assert read.messages == [] and read.stats.reasons == {"broken JSON": 1}
    (project / "logs.json").write_text('{"sessionId": "s"}', "utf-8")
    assert [p for p in src.discover({}, tmp_path) if "logs.json" in str(p)] == []
    (project / "logs.json").write_text(json.dumps([{"sessionId": "s1", "messageId": "0", "type": "user",
                                                    "timestamp": "x", "message": "m"}, 7,
                                                   {"sessionId": "s2", "messageId": 0, "type": "user",
                                                    "timestamp": "2026-01-01T00:00:00Z", "message": "kept"}]))
    [unit] = [p for p in src.discover({}, tmp_path) if "logs.json" in str(p)]
    assert str(unit).endswith("logs.json#s2")
    assert [m.text for m in src.read(unit).messages] == ["kept"]


def test_openclaw_leaf_control_moves_the_active_branch(home, capsys):
    """OpenClaw 2026.9.6 writes ``{type: "leaf", targetId}`` when it moves the active leaf
    (``appendLeafControl``, ``dist/session-manager-*.mjs``): the entries after the target are off
    the active branch, and the kind is known."""
    from v3_builders import V3Session

    s = V3Session(OC1, cwd="/srv/bot")
    s.user("plan the ocelot launch")
    target = s.assistant("Ocelot launch planned")
    s.user("switch to a bobcat launch")
    s.assistant("Bobcat launch planned")
    s.entry("leaf", targetId=target)
    s.write(home / ".openclaw" / "agents" / "main" / "sessions" / f"{OC1}.jsonl")
    assert agree(capsys, "bobcat", OC1, "switch to a bobcat launch")["branch"] == "abandoned"
    assert agree(capsys, "ocelot", OC1, "plan the ocelot launch")["branch"] == "active"
    assert json.loads(cli_ok(capsys, "status", "--json"))["unknown_kinds"] == []

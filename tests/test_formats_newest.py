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

"""CodexSource against the fixtures in tests/fixtures/home/.codex (see tests/fixtures/README.md)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from crabsearch.model import Role
from crabsearch.sources import get_source
from crabsearch.sources.codex import CodexSource, codex_root, thread_names
from builders import CodexSession
from source_checks import CORPUS, HOME, assert_incremental, assert_read_back, state_size
from datetime import datetime
from all_agents import Expect, iso, prompt_of, reply_of, write_jsonl

SRC = CodexSource()
CODEX = HOME / ".codex"
C1 = "0195e2a4-7b1c-7d3e-9f20-4a5b6c7d8e9f"
C2 = "0195e7c0-1a2b-7c3d-8e4f-5a6b7c8d9e0f"
C3 = "0195a0b1-c2d3-7e4f-8a5b-6c7d8e9f0a1b"
C4 = "5d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
C1_FILE = CODEX / "sessions" / "2026" / "03" / "14" / f"rollout-2026-03-14T10-00-00-{C1}.jsonl"
C2_FILE = CODEX / "sessions" / "2026" / "03" / "15" / f"rollout-2026-03-15T09-30-00-{C2}.jsonl"
C3_FILE = CODEX / "archived_sessions" / f"rollout-2026-03-02T08-15-00-{C3}.jsonl"
C4_FILE = CODEX / "sessions" / f"rollout-2026-03-01T07-00-00-{C4}.jsonl"
ALL_FILES = [C1_FILE, C2_FILE, C3_FILE, C4_FILE]


def env(kind, payload, ts="2026-03-05T10:00:00.000Z"):
    return {"timestamp": ts, "type": kind, "payload": payload}


def meta(sid, cwd="/w", branch=None):
    return env("session_meta", {"id": sid, "cwd": cwd, "git": {"branch": branch} if branch else None})


def prompt(text):
    return env("event_msg", {"type": "user_message", "message": text, "images": []})


def home_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture Codex home."""
    dst = tmp_path / ".codex"
    shutil.copytree(CODEX, dst)
    return dst


# -- discovery -------------------------------------------------------------------------------------


def test_registered_and_named():
    assert get_source("codex").__class__ is CodexSource
    assert (SRC.agent, SRC.display) == ("codex", "Codex CLI")


def test_discover_fixture_home():
    assert sorted(SRC.discover({}, HOME)) == sorted(ALL_FILES)  # no history.jsonl, no session_index


def test_codex_home_env(tmp_path):
    root = tmp_path / "elsewhere"
    f = write_jsonl(root / "archived_sessions" / "2026" / "rollout-x.jsonl", meta("x"))
    g = write_jsonl(root / "archived_sessions" / "exported.jsonl", meta("y"))
    assert SRC.roots({"CODEX_HOME": str(root)}, HOME) == [root]
    assert sorted(SRC.discover({"CODEX_HOME": str(root)}, HOME)) == sorted([f, g])
    assert list(SRC.discover({}, tmp_path)) == []


# -- the backoff session ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def c1():
    return SRC.read(C1_FILE)


def test_c1_messages(c1):
    assert [(m.role.value, m.label) for m in c1.messages] == [
        ("user", "user"),  # event_msg only; the response_item copy and <environment_context> are skipped
        ("assistant", "thinking"),  # reasoning summary, never encrypted_content
        ("assistant", "tool-call:shell"), ("tool", "tool:shell"),
        ("assistant", "tool-call:apply_patch"), ("tool", "tool:apply_patch"),
        ("assistant", "assistant"),  # response_item message; the agent_message event is skipped
        ("summary", "summary"),  # compacted
        ("user", "user"), ("assistant", "tool-call:shell"), ("tool", "tool:shell"), ("assistant", "assistant"),
    ]
    ms = c1.messages
    assert "flaky retry backoff" in ms[0].text
    assert sum("flaky retry backoff" in m.text for m in ms if m.role is Role.USER) == 1
    assert "exponential backoff ceiling" in ms[1].text
    assert all("gAAAA" not in m.text and "environment_context" not in m.text for m in ms)
    assert json.loads(ms[2].text)["command"] == ["bash", "-lc", "rg -n backoff uploader/"]
    assert ms[3].text.startswith("uploader/retry.py:12:")  # {"output": ..., "metadata": ...} unwrapped
    assert ms[4].text.startswith("*** Begin Patch") and ms[5].tool_name == "apply_patch"
    assert sum("equal jitter" in m.text for m in ms if m.role is Role.ASSISTANT) == 1
    assert all(m.part == 0 for m in ms)


def test_c1_session(c1):
    s = c1.session
    assert (s.agent, s.session_id) == ("codex", C1)
    assert (s.project, s.git_branch) == ("/home/dev/uploader", "fix/retry-backoff")  # the meta matching the file
    assert s.title == "Fix flaky retry backoff in uploader"  # newest session_index line beats the event
    assert s.summary.startswith("Summary: the flaky retry backoff was fixed")
    assert s.anchor_index == 0 and s.message_count == 12
    assert s.started.isoformat() == "2026-03-14T10:00:00+00:00"
    assert s.updated.isoformat() == "2026-03-14T10:31:15+00:00"
    assert c1.stats.skipped == 1 and c1.stats.reasons == {"broken JSON": 1}
    assert SRC.resume_command(s) == f"cd /home/dev/uploader && codex resume {C1}"
    assert json.loads(json.dumps(c1.state)) == c1.state and state_size(c1.state) < 2048


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name[:40])
def test_read_back_every_message(path):
    read = SRC.read(path)
    assert read.messages
    assert_read_back(SRC, path, read.messages)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name[:40])
def test_incremental_equals_whole(path, tmp_path):
    dst = home_copy(tmp_path) / path.relative_to(CODEX)  # keep session_index.jsonl beside it
    assert_incremental(SRC, path.read_bytes(), dst)


# -- the other fixture sessions ---------------------------------------------------------------------------


def test_c2_event_title_images_local_shell():
    read = SRC.read(C2_FILE)
    s = read.session
    assert s.title == "Ingest pod liveness probe 503s"  # thread_name_updated, id not in session_index
    assert s.git_branch is None and s.project == "/home/dev/ingest"
    assert [(m.label, m.text) for m in read.messages[:3]] == [
        ("user", "The liveness probe keeps restarting the ingest pod 😵 — ログにも 503 が出ています\n[image]"),
        ("tool-call:local_shell", "kubectl describe pod ingest-0"),
        ("tool:local_shell", "Warning  Unhealthy  kubelet  Liveness probe failed: HTTP probe failed with statuscode: 503")]
    assert len(read.messages) == 4  # reasoning with only encrypted_content yields nothing


def test_c3_archived_with_pending_tail(tmp_path):
    read = SRC.read(C3_FILE)
    s = read.session
    assert s.title == "Is renumbering a protobuf enum safe for old clients?"  # first prompt
    assert read.stats.pending and read.end_offset == C3_FILE.read_bytes().rindex(b"\n") + 1
    assert [m.role for m in read.messages] == [Role.USER, Role.ASSISTANT]
    dst = home_copy(tmp_path) / C3_FILE.relative_to(CODEX)
    with open(dst, "ab") as fh:
        fh.write(b'stant","content":[{"type":"output_text","text":"Use reserved 3, 4; in the enum."}]}}\n')
    more = SRC.read(dst, read.end_offset, json.loads(json.dumps(read.state)))
    assert [(m.message_index, m.text) for m in more.messages] == [(2, "Use reserved 3, 4; in the enum.")]
    assert not more.stats.pending and more.session.message_count == 3


def test_c4_legacy_pre_envelope():
    read = SRC.read(C4_FILE)
    s = read.session
    assert (s.session_id, s.project, s.git_branch) == (C4, "/home/dev/legacy-tool", "legacy-main")
    assert s.title == "Convert the makefile lint target to ruff."
    assert [(m.role.value, m.label) for m in read.messages] == [
        ("user", "user"), ("assistant", "thinking"), ("assistant", "tool-call:shell"), ("tool", "tool:shell"),
        ("assistant", "assistant")]
    assert read.messages[3].text == "lint:\n\tflake8 src\n"
    assert s.started == s.updated and s.started.isoformat() == "2026-03-01T06:00:00+00:00"


# -- titles, metadata, session_index ------------------------------------------------------------------------


def test_meta_preference_and_defaults(tmp_path):
    fid = "0195aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
    p = write_jsonl(tmp_path / "sessions" / f"rollout-2026-03-05T10-00-00-{fid}.jsonl",
                    meta("0195parent", "/parent", "main"), meta(fid, "/child", "feat"), meta("0195later", "/x", "y"),
                    prompt("<environment_context><cwd>/child</cwd></environment_context>"), prompt("real one"))
    s = SRC.read(p).session
    assert (s.session_id, s.project, s.git_branch) == (fid, "/child", "feat")
    assert s.title == "real one" and s.anchor_index == 0 and s.message_count == 1
    q = write_jsonl(tmp_path / "sessions" / "rollout-no-meta.jsonl",
                    env("turn_context", {"cwd": "/from-turn"}), prompt("x"))
    s = SRC.read(q).session
    assert (s.session_id, s.project, s.title) == ("rollout-no-meta", "/from-turn", "x")


def test_outputs_and_pairing_variants(tmp_path):
    p = write_jsonl(
        tmp_path / "t.jsonl",
        env("response_item", {"type": "function_call_output", "call_id": "call_orphan", "output": "late"}),
        env("response_item", {"type": "function_call", "name": "mcp__db__query", "arguments": "{\"sql\":\"select 1\"}", "call_id": "c1"}),
        env("response_item", {"type": "function_call_output", "call_id": "c1",
                              "output": [{"type": "input_text", "text": "1 row"}, {"type": "input_image", "image_url": "data:x"}]}),
        env("response_item", {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "ruff"}}),
        env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "dup"}]}),
        env("event_msg", {"type": "agent_message", "message": "mirror"}),
        env("compacted", {"message": "", "replacement_history": []}),
    )
    read = SRC.read(p)
    assert [(m.label, m.text) for m in read.messages] == [
        ("tool:unknown", "late"), ("tool-call:mcp__db__query", '{"sql":"select 1"}'),
        ("tool:mcp__db__query", "1 row\n[image]"), ("tool-call:web_search", '{"type": "search", "query": "ruff"}'),
        ("user", "dup")]  # a response_item prompt with no event twin is still the user's prompt


def test_prompt_written_only_as_response_item_is_kept_once(tmp_path):
    item = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>cwd=/x</environment_context>"},
        {"type": "input_text", "text": "Step 1: list the files"}]}
    p = write_jsonl(
        tmp_path / "sessions" / "rollout-2026-01-01T00-00-00-0195aaaa-0000-7000-8000-000000000001.jsonl",
        env("response_item", item),  # an older build: no event_msg twin
        env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Step 2: count them"}]}),
        env("event_msg", {"type": "user_message", "message": "Step 2: count them"}),  # the twin
        env("event_msg", {"type": "user_message", "message": "Step 3: done"}),  # only the event
    )
    read = SRC.read(p)
    assert [(m.role.value, m.text) for m in read.messages] == [
        ("user", "Step 1: list the files"), ("user", "Step 2: count them"), ("user", "Step 3: done")]
    assert read.session.title == "Step 1: list the files"


def test_thread_names_cache_newest_and_broken(tmp_path):
    root = home_copy(tmp_path)
    names = thread_names(root)
    assert names[C1] == "Fix flaky retry backoff in uploader" and C2 not in names
    assert thread_names(root) is names  # cached by (mtime, size)
    idx = root / "session_index.jsonl"
    with open(idx, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": C2, "thread_name": "Renamed probe thread", "updated_at": "2026-03-16T00:00:00Z"}) + "\n")
        fh.write(json.dumps({"id": C1, "thread_name": "", "updated_at": "2026-03-16T00:00:01Z"}) + "\n")
    os.utime(idx, ns=(1, 1))
    fresh = thread_names(root)
    assert fresh[C2] == "Renamed probe thread" and C1 not in fresh  # an empty name clears it
    c2 = SRC.read(root / C2_FILE.relative_to(CODEX)).session
    assert c2.title == "Renamed probe thread"
    idx.unlink()
    assert thread_names(root) == {} and thread_names(None) == {}


def test_codex_root():
    assert codex_root(C1_FILE) == CODEX and codex_root(C3_FILE) == CODEX
    assert codex_root(Path("/tmp/loose/rollout.jsonl")) is None


def test_message_text_rejects_a_changed_record():
    obj = {"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}
    assert SRC.message_text(obj, 0, "user") == "hi"
    with pytest.raises(LookupError):
        SRC.message_text(obj, 0, "assistant")
    with pytest.raises(LookupError):
        SRC.message_text(obj, 1, "user")


# -- the shared corpus -----------------------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_corpus_reads_without_errors():
    files = sorted(p for d in ("codex", "real/codex") for p in (CORPUS / d).rglob("*.jsonl"))
    assert len(files) >= 8
    reads = {}
    for path in files:
        read = SRC.read(path)
        assert_read_back(SRC, path, read.messages)
        reads[path.name] = read
    real = reads["rollout-2025-10-31T19-02-58-c61729d4-da6d-46a4-9a29-ec2c614e5e23.jsonl"]
    s = real.session
    assert s.session_id == "c61729d4-da6d-46a4-9a29-ec2c614e5e23" and s.git_branch == "main"
    assert s.title == "Can we continue from where we left off?"
    users = [m.text for m in real.messages if m.role is Role.USER]
    assert "Can you research the printers in Cura and add them?" in users
    assert all("<environment_context>" not in t for t in users)
    legacy = reads["claude-code-log_legacy-pre-envelope_rollout-44444444-4444-4444-8444-444444444444.jsonl"]
    assert [m.text for m in legacy.messages] == ["Open the synthetic legacy session.", "The synthetic legacy session is open."]
    clean = reads["claude-code-log_rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"]
    assert all("SYNTHETIC_ENCRYPTED" not in m.text for m in clean.messages)
    assert reads["claude-code-log_malformed_rollout-66666666-6666-4666-8666-666666666666.jsonl"].stats.skipped == 1


def test_demo_sessions_read_cleanly():
    from crabsearch.paths import demo_home

    reads = [SRC.read(p) for p in SRC.discover({}, demo_home())]
    assert len(reads) == 4
    for read in reads:
        assert read.stats.skipped == 0 and read.session.title and read.messages
        assert_read_back(SRC, Path(read.session.path), read.messages)
    titles = {r.session.title for r in reads}
    assert {"Goroutine leak in thumbnail worker", "API rate limiting with Redis"} <= titles


# -- records with fields of the wrong type (a fresh-user trial) ------------------------------------


def line_offsets(path: Path) -> list[int]:
    """The byte offset of each line of ``path``."""
    offsets, at = [], 0
    for raw in path.read_bytes().splitlines(keepends=True):
        offsets.append(at)
        at += len(raw)
    return offsets


def test_a_line_with_a_field_of_the_wrong_type_is_skipped_and_counted(tmp_path):
    """An envelope line of a kind the reader reads whose ``payload`` is not an object, or a
    ``message`` item whose ``content`` is not a list (formats.md 2.2), has nothing to read: it is
    skipped and counted where it is (as a broken line is), never dropped without a word; the lines
    around it are read as before, and a prompt's event is still its one message when its
    ``response_item`` twin is the bad line."""
    c = CodexSession(tmp_path, session_id="0195bbbb-0000-7000-8000-000000000001")
    c.user("why is the marmot index stale")
    c.lines.append(c._env("response_item", None))
    c.lines.append(c._env("event_msg", None))
    c.assistant("gone").lines[-2]["payload"]["content"] = "notalist"
    c.lines.append(c._env("turn_context", [1]))
    c.assistant("the marmot index waits on a lock")
    c.lines.append(c._env("response_item", {}))
    del c.lines[-1]["payload"]  # no payload at all
    c.lines.append(c._env("compacted", "a summary"))
    c.lines.append(c._env("session_meta", None))
    c.user("rebuild the marmot index").lines[-1]["payload"]["content"] = "notalist"
    c.lines.append(c._env("response_item", {"type": "message", "role": "user"}))
    path = c.write()
    offsets = line_offsets(path)
    read = SRC.read(path)
    assert [m.text for m in read.messages] == ["why is the marmot index stale", "the marmot index waits on a lock",
                                               "rebuild the marmot index"]
    assert [m.message_index for m in read.messages] == [0, 1, 2] and read.session.message_count == 3
    assert read.stats.skipped == 9 and read.stats.reasons == {"bad field": 9}
    assert read.stats.places == [  # the first five are kept
        (offsets[3], "bad field (payload is null, not an object)"),
        (offsets[4], "bad field (payload is null, not an object)"),
        (offsets[5], "bad field (payload.content is a string, not a list)"),
        (offsets[7], "bad field (payload is a list, not an object)"),
        (offsets[10], "bad field (payload is missing)")]
    assert read.end_offset == path.stat().st_size
    s = read.session
    assert (s.session_id, s.project, s.git_branch) == ("0195bbbb-0000-7000-8000-000000000001", "/home/dev/api", "main")
    assert s.title == "why is the marmot index stale" and s.summary is None
    # a skipped line is no part of the session: the last two (the latest times) are not its end
    assert s.updated == read.messages[-1].timestamp
    missing = SRC.read(write_jsonl(tmp_path / "m.jsonl", c.lines[15], c.lines[11], c.lines[12]))
    assert [why for _, why in missing.stats.places] == ["bad field (payload.content is missing)",
                                                       "bad field (payload is a string, not an object)",
                                                       "bad field (payload is null, not an object)"]


def test_a_pre_envelope_item_with_a_field_of_the_wrong_type_is_skipped_and_counted(tmp_path):
    """The mid-2025 bare items (formats.md 2.1): a ``message`` whose ``content`` is not a list is
    counted as an envelope line's is."""
    p = write_jsonl(tmp_path / "sessions" / "rollout-2025-06-01-0195bbbb-0000-7000-8000-000000000002.jsonl",
                    {"id": "0195bbbb-0000-7000-8000-000000000002", "timestamp": "2025-06-01T10:00:00.000Z",
                     "instructions": "", "cwd": "/w"},
                    {"record_type": "state"},
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "tidy the yak"}]},
                    {"type": "message", "role": "assistant", "content": "notalist"},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yak tidied"}]})
    read = SRC.read(p)
    assert [m.text for m in read.messages] == ["tidy the yak", "yak tidied"]
    assert read.stats.places == [(line_offsets(p)[3], "bad field (content is a string, not a list)")]


def test_a_line_with_a_bad_field_appended_later_is_counted_too(tmp_path):
    c = CodexSession(tmp_path, session_id="0195bbbb-0000-7000-8000-000000000003")
    path = c.user("why is the marmot index stale").write()
    first = SRC.read(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(c._env("event_msg", None)) + "\n")
        fh.write(json.dumps(c._env("response_item", {"type": "message", "role": "assistant",
                                                     "content": [{"type": "output_text", "text": "it waits"}]})) + "\n")
    again = SRC.read(path, first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in again.messages] == [(1, "it waits")]
    assert again.stats.places == [(first.end_offset, "bad field (payload is null, not an object)")]


def test_a_timestamp_that_is_not_an_iso_string_is_no_time(tmp_path):
    """Codex writes a line's ``timestamp`` as an ISO-8601 string (formats.md 2.2). A number there
    is no time (``12345`` is not 1970-01-01): the line's message has no time of its own, as a line
    without a timestamp, and the session's start and end ignore it."""
    c = CodexSession(tmp_path, session_id="0195bbbb-0000-7000-8000-000000000004")
    c.user("when did the otter deploy run")
    c.lines[1]["timestamp"], c.lines[2]["timestamp"] = 12345, 1784538000000  # ms: 2026-07-20
    c.assistant("the otter deploy ran at noon").user("and the beaver deploy")
    c.lines[5]["timestamp"], c.lines[6]["timestamp"] = "soon", [1]
    c.assistant("the beaver deploy failed")
    c.lines[-1]["timestamp"] = 99999999999999  # the agent_message event: no message, no time
    read = SRC.read(c.write())
    assert [m.text for m in read.messages] == ["when did the otter deploy run", "the otter deploy ran at noon",
                                               "and the beaver deploy", "the beaver deploy failed"]
    times = [m.timestamp and m.timestamp.isoformat() for m in read.messages]
    assert times == [None, "2026-03-14T10:00:40+00:00", None, "2026-03-14T10:01:20+00:00"]
    assert read.session.started.isoformat() == "2026-03-14T10:00:40+00:00"
    assert read.session.updated.isoformat() == "2026-03-14T10:01:20+00:00"
    assert read.stats.skipped == 0 and read.session.title == "when did the otter deploy run"


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkacodex`` no other session holds."""
    sid = "019a0000-1111-7222-8333-444455550102"
    cwd = "/home/dev/codexapi"
    path = CodexSession(home, session_id=sid, cwd=cwd, start=t).user(prompt_of("codex")).assistant(reply_of("codex")).write()
    index = write_jsonl(home / ".codex" / "session_index.jsonl",
                   {"id": sid, "thread_name": "Codex: worker stall", "updated_at": iso(t)})
    return Expect("codex", sid, "Codex: worker stall", cwd, f"cd {cwd} && codex resume {sid}", "quokkacodex",
                  [prompt_of("codex"), reply_of("codex")], t, files=[path, index])


def test_a_user_shell_command_is_the_persons_text_and_its_output_tool_output(tmp_path):
    """``!cmd`` in Codex: a user ``message`` item holding ``<user_shell_command>`` (as
    ``format_user_shell_command_record`` writes it, ``codex-rs/core/src/user_shell_command.rs`` at
    2e267dec61b8). The command is the person's text; the output (stdout and stderr as one
    aggregated stream) a ``bash-mode`` tool result. It was dropped whole as injected context."""
    record = ("<user_shell_command>\n<command>\ncargo test -p core\n</command>\n<result>\nExit code: 101\n"
              "Duration: 1.2000 seconds\nOutput:\nerror[E0433]: failed to resolve: use of undeclared crate\n"
              "</result>\n</user_shell_command>")
    f = write_jsonl(tmp_path / "rollout-2026-03-05T10-00-00-x.jsonl", meta("x"), prompt("why does it fail"),
                    env("response_item", {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": record}]}))
    ms = SRC.read(f).messages
    assert [(m.role, m.label, m.text) for m in ms] == [
        (Role.USER, "user", "why does it fail"), (Role.USER, "user", "! cargo test -p core"),
        (Role.TOOL, "tool:bash-mode", "error[E0433]: failed to resolve: use of undeclared crate")]
    assert SRC.read(f).session.title == "why does it fail"

"""ClaudeSource against the fixtures in tests/fixtures/home/.claude (see tests/fixtures/README.md)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from crabsearch.index.documents import index_text_fields
from crabsearch.jsonl import iter_records
from crabsearch.model import Role
from crabsearch.sources import base, get_source
from crabsearch.sources.claude import ClaudeSource, classify
from builders import ClaudeSession
from source_checks import CORPUS, HOME, assert_incremental, assert_read_back, state_size
from datetime import datetime
from all_agents import Expect, prompt_of, reply_of, write_jsonl

SRC = ClaudeSource()
PROJECT = HOME / ".claude" / "projects" / "-home-dev-webapp"
CRON = "3b9f1c2e-5d4a-4e8b-9c71-2a6f0d8e4b13"
HOOK = "c41d7e92-8a3b-4f6e-b1d5-7e2a9c0f3b68"
CJK = "e8a0f5b2-3c71-4d9e-a6b4-5f1c2d3e4a90"
MOBILE = "7f3c2a10-6b5e-4d8f-a1c9-3e2d4b6a8f01"
CRON_FILE = PROJECT / f"{CRON}.jsonl"
HOOK_FILE = PROJECT / f"{HOOK}.jsonl"
CJK_FILE = HOME / ".claude" / "projects" / "-home-dev-----" / f"{CJK}.jsonl"
SUB_FILE = PROJECT / CRON / "subagents" / "agent-a7c3e9f1b2d40586.jsonl"
LEGACY_SUB_FILE = PROJECT / "agent-5e6f7a8b.jsonl"
MOBILE_FILE = HOME / ".claude" / "projects" / "-home-dev-mobile" / f"{MOBILE}.jsonl"
ALL_FILES = [CRON_FILE, HOOK_FILE, CJK_FILE, SUB_FILE, LEGACY_SUB_FILE, MOBILE_FILE]


def line(kind="user", uuid="u1", parent=None, sid="s-1", **kw):
    """A minimal Claude Code conversation line."""
    return {"parentUuid": parent, "isSidechain": False, "cwd": "/w", "sessionId": sid, "gitBranch": "main",
            "type": kind, "uuid": uuid, "timestamp": "2026-03-01T10:00:00.000Z", **kw}


def user(text, uuid="u1", **kw):
    return line("user", uuid, message={"role": "user", "content": text}, **kw)


def assistant(blocks, uuid="a1", msg_id="msg_1", **kw):
    return line("assistant", uuid, message={"id": msg_id, "role": "assistant", "model": "claude-x", "content": blocks}, **kw)


def labels(read):
    return [(m.role.value, m.label) for m in read.messages]


# -- discovery -------------------------------------------------------------------------------


def test_registered_and_named():
    assert get_source("claude").__class__ is ClaudeSource
    assert (SRC.agent, SRC.display) == ("claude", "Claude Code")


def test_discover_fixture_home():
    found = list(SRC.discover({}, HOME))
    assert sorted(found) == sorted(ALL_FILES)  # no journal.jsonl, no .meta.json


def test_roots_env_list_and_missing(tmp_path):
    other = tmp_path / "work-profile"
    write_jsonl(other / "projects" / "-srv" / "abc.jsonl", user("hi"))
    env = {"CLAUDE_CONFIG_DIR": f"{HOME / '.claude'} , {other},{tmp_path / 'absent'}"}
    assert SRC.roots(env, tmp_path) == [HOME / ".claude", other, tmp_path / "absent"]
    found = list(SRC.discover(env, tmp_path))
    assert other / "projects" / "-srv" / "abc.jsonl" in found and CRON_FILE in found
    assert SRC.roots({}, tmp_path) == [tmp_path / ".claude"]
    assert list(SRC.discover({}, tmp_path)) == []


# -- the cron session: every quirk in one file ---------------------------------------------------


@pytest.fixture(scope="module")
def cron():
    return SRC.read(CRON_FILE)


def test_cron_messages(cron):
    assert labels(cron) == [
        ("user", "user"),  # /model opus (the typed command: user text, not a prompt)
        ("tool", "tool:local-command"),  # its stdout
        ("user", "user"),  # the real prompt, system-reminder block dropped
        ("assistant", "thinking"), ("assistant", "assistant"),  # one reply split over four lines
        ("assistant", "tool-call:Read"), ("assistant", "tool-call:Bash"),
        ("tool", "tool:Read"), ("tool", "tool:Bash"),  # two results in one line: parts 0 and 1
        ("assistant", "assistant"), ("assistant", "tool-call:Edit"),  # the re-written text counted once
        ("tool", "tool:Edit"),  # result on an isMeta line is kept
        ("system", "system"), ("summary", "summary"),  # compact_boundary, isCompactSummary
        ("user", "user"), ("assistant", "assistant"), ("system", "system"),  # image prompt, reply, api_error
    ]
    ms = cron.messages
    assert [m.message_index for m in ms] == list(range(17))
    assert ms[0].text == "/model opus"
    assert ms[2].text.startswith("Our nightly-backup job fires an hour late") and "system-reminder" not in ms[2].text
    assert "cron schedule drift" in ms[2].text
    assert ms[5].tool_name == "Read" and json.loads(ms[5].text) == {"file_path": "/home/dev/webapp/deploy/crontab"}
    assert (ms[7].part, ms[8].part) == (0, 1) and ms[7].offset == ms[8].offset
    assert ms[9].part == 0 and ms[10].part == 1  # line 2 of that reply: block 0 was a repeat
    assert sum("every daylight saving switch" in m.text for m in ms) == 1
    assert ms[12].text == "Conversation compacted"
    assert ms[14].text == "[image]\nHere is the Grafana panel 📈 — does the 02:00 UTC run line up now?"
    assert ms[16].text == "API error: Overloaded"
    assert all(m.timestamp is not None and m.timestamp.tzinfo is not None for m in ms)


def test_cron_injected_text_never_appears(cron):
    for m in cron.messages:
        assert "Caveat:" not in m.text and "<system-reminder>" not in m.text
        assert "Request interrupted" not in m.text and "<command-" not in m.text
        assert "iVBORw0KGgo" not in m.text  # base64 image data


def test_cron_secret_only_in_tool_payload(cron):
    holders = [m for m in cron.messages if "sk-live-FAKEFAKEFAKE1234567890" in m.text]
    assert len(holders) == 1 and holders[0].role is Role.TOOL and holders[0].is_tool_payload
    assert holders[0].label == "tool:Bash"


def test_cron_session(cron):
    s = cron.session
    assert (s.agent, s.session_id, s.path) == ("claude", CRON, str(CRON_FILE))
    assert (s.project, s.git_branch, s.parent_session_id) == ("/home/dev/webapp", "fix/cron-drift", None)
    assert s.title == "cron drift: pin backup timer to UTC"  # custom-title beats both ai-titles
    assert s.summary.startswith("This session is being continued") and "pinned to UTC" in s.summary
    assert s.anchor_index == 2 and s.message_count == 17
    assert s.started.isoformat() == "2026-03-14T09:00:00+00:00"
    assert s.updated.isoformat() == "2026-03-14T09:31:30+00:00"
    assert cron.stats.skipped == 2 and cron.stats.reasons == {"broken JSON": 1, "not a JSON object": 1}
    assert cron.end_offset == CRON_FILE.stat().st_size and not cron.stats.pending
    assert SRC.resume_command(s) == f"cd /home/dev/webapp && claude --resume {CRON}"


def test_cron_state_small_and_json(cron):
    assert json.loads(json.dumps(cron.state)) == cron.state
    assert state_size(cron.state) < 4096


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_read_back_every_message(path):
    read = SRC.read(path)
    assert read.messages
    assert_read_back(SRC, path, read.messages)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_incremental_equals_whole(path, tmp_path):
    assert_incremental(SRC, path.read_bytes(), tmp_path / path.name)


def test_message_text_rejects_a_changed_record(cron):
    obj = next(iter_records(str(CRON_FILE), cron.messages[7].offset)).obj
    assert SRC.message_text(obj, 1, "tool:Bash").startswith("OnCalendar=")
    with pytest.raises(LookupError):
        SRC.message_text(obj, 2, "tool:Bash")
    with pytest.raises(LookupError):
        SRC.message_text(obj, 0, "assistant")


# -- titles, summaries, anchors --------------------------------------------------------------------


def test_summary_line_title_needs_leaf_in_file():
    read = SRC.read(HOOK_FILE)
    s = read.session
    # line 1: leaf elsewhere (ignored); line 2: leaf is the last line (valid); line 3: no leaf (ignored)
    assert s.title == "Payment webhook HMAC mismatch fixed by hashing the raw body"
    assert s.summary == s.title  # no compaction: the valid summary line is the summary
    assert s.git_branch is None  # gitBranch "" outside git
    assert s.updated.isoformat() == "2026-03-10T14:00:09+00:00"  # summary lines do not move it
    assert labels(read)[2:4] == [("assistant", "tool-call:Grep"), ("tool", "tool:Grep")]  # top-level drift lines


def test_title_order(tmp_path):
    base_lines = [user("first real prompt here", "u1"), assistant([{"type": "text", "text": "ok"}], "a1", parent="u1")]
    summary = {"type": "summary", "summary": "Summary title", "leafUuid": "a1"}
    ai = {"type": "ai-title", "aiTitle": "AI title", "sessionId": "s-1"}
    custom = {"type": "custom-title", "customTitle": "Custom title", "sessionId": "s-1"}
    cases = [
        ([], "first real prompt here"),
        ([summary], "Summary title"),
        ([summary, ai], "AI title"),
        ([custom, summary, ai, {**ai, "aiTitle": "Newer AI title"}], "Custom title"),
        ([ai, {**ai, "aiTitle": "Newer AI title"}, summary], "Newer AI title"),
    ]
    for i, (extra, title) in enumerate(cases):
        p = write_jsonl(tmp_path / f"s{i}.jsonl", *base_lines, *extra)
        assert SRC.read(p).session.title == title, extra


def test_summary_leaf_before_or_after_and_window(tmp_path):
    after = write_jsonl(tmp_path / "after.jsonl", {"type": "summary", "summary": "Later leaf", "leafUuid": "u2"},
                        user("p", "u1"), user("q", "u2", parent="u1"))
    assert SRC.read(after).session.title == "Later leaf"
    lines = [user(f"prompt {i}", f"u{i}") for i in range(200)]
    old = write_jsonl(tmp_path / "old.jsonl", *lines, {"type": "summary", "summary": "Too old", "leafUuid": "u0"})
    recent = write_jsonl(tmp_path / "recent.jsonl", *lines, {"type": "summary", "summary": "Recent", "leafUuid": "u199"})
    assert SRC.read(old).session.title == "prompt 0"  # beyond the uuid window: not trusted
    assert SRC.read(recent).session.title == "Recent"


def test_anchor_skips_commands_meta_and_compaction(tmp_path):
    p = write_jsonl(
        tmp_path / "a.jsonl",
        user("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"),
        user("<bash-input>ls -la</bash-input>", "u2"),
        user("<bash-stdout>total 0</bash-stdout><bash-stderr></bash-stderr>", "u3"),
        user("skill text", "u4", isMeta=True),
        user("continued summary", "u5", isCompactSummary=True),
        user([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}], "u6"),
        user([{"type": "text", "text": "<task-notification>done</task-notification>"},
              {"type": "text", "text": "Real question about the ORM"}], "u7"),
    )
    read = SRC.read(p)
    assert [(m.role.value, m.label, m.text) for m in read.messages] == [
        ("user", "user", "/clear"), ("user", "user", "! ls -la"),
        ("tool", "tool:bash-mode", "total 0"), ("summary", "summary", "continued summary"),
        ("user", "user", "[image]"), ("user", "user", "Real question about the ORM")]
    assert read.messages[4].part == 0 and read.messages[5].part == 0
    assert read.session.anchor_index == 5 and read.session.title == "Real question about the ORM"
    assert read.session.summary == "continued summary"


def test_typed_commands_are_user_text_but_not_prompts(tmp_path):
    cmd = ("<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n"
           "<command-args>the flaky checkout spec</command-args>")
    p = write_jsonl(
        tmp_path / "t.jsonl",
        user(cmd),
        line("system", "y1", subtype="local_command", level="info",
             content="<command-name>/agents</command-name>\n<command-message>agents</command-message>\n<command-args></command-args>"),
        line("system", "y2", subtype="local_command", level="info",
             content="<local-command-stdout>Agents dialog dismissed</local-command-stdout>"),
        user("<bash-input>git stash list</bash-input>", "u2"),
        user("<bash-input></bash-input>", "u3"),
        user([{"type": "text", "text": "<command-name>/model</command-name><command-args>opus</command-args>"},
              {"type": "text", "text": "Why does the checkout spec time out?"}], "u4"),
    )
    read = SRC.read(p)
    assert [(m.role.value, m.label, m.text, m.part) for m in read.messages] == [
        ("user", "user", "/review the flaky checkout spec", 0), ("user", "user", "/agents", 0),
        ("tool", "tool:local-command", "Agents dialog dismissed", 0), ("user", "user", "! git stash list", 0),
        ("user", "user", "/model opus", 0), ("user", "user", "Why does the checkout spec time out?", 1)]
    # searchable as user text (documents.index_text_fields), yet the real prompt is the title and anchor
    assert [index_text_fields(m) for m in read.messages[:2]] == [
        {"user": "/review the flaky checkout spec"}, {"user": "/agents"}]
    assert read.session.title == "Why does the checkout spec time out?" and read.session.anchor_index == 5
    assert_read_back(SRC, p, read.messages)


def test_command_with_arguments_titles_a_session_without_prompts(tmp_path):
    p = write_jsonl(tmp_path / "c.jsonl", user("<command-name>/clear</command-name><command-args></command-args>"),
                    user("<bash-input>make test</bash-input>", "u2"),
                    user("<command-name>/fix-issue</command-name><command-args>1423\nsee the log</command-args>", "u3"),
                    user("<command-name>/other</command-name><command-args>later one</command-args>", "u4"))
    s = SRC.read(p).session
    assert s.title == "/fix-issue 1423" and s.anchor_index == 2  # first line of the first command with args
    p2 = write_jsonl(tmp_path / "c2.jsonl", *[json.loads(x) for x in p.read_text().splitlines()],
                     {"type": "ai-title", "aiTitle": "Fix issue 1423", "sessionId": "s-1"})
    assert SRC.read(p2).session.title == "Fix issue 1423"


def test_a_session_of_bare_commands_is_titled_by_its_first_command(tmp_path):
    """A session whose only input is ``/init`` was ``(untitled)``; Claude Code's resume list shows
    the first command there (2.1.332, ``yLt`` in ``chunk-fn7g10bh.js``: a ``<command-name>`` is
    remembered as ``commandFallback`` and used when no prompt follows), so the title is it.
    A command with arguments still comes first (the arguments say what it was about)."""
    p = write_jsonl(tmp_path / "c.jsonl", user("<command-name>/mcp</command-name>"),
                    user("<local-command-stdout>No MCP servers configured.</local-command-stdout>", "u2"),
                    user("<command-name>/init</command-name><command-args></command-args>", "u3"))
    s = SRC.read(p).session
    assert s.title == "/mcp" and s.anchor_index == 0 and s.message_count == 3
    p2 = write_jsonl(tmp_path / "c2.jsonl", *[json.loads(x) for x in p.read_text().splitlines()],
                     user("<command-name>/review</command-name><command-args>PR 12</command-args>", "u4"))
    s = SRC.read(p2).session
    assert s.title == "/review PR 12" and s.anchor_index == 3


def test_a_prompt_that_opens_with_a_markdown_heading_is_titled_by_its_text(tmp_path):
    """``# Zephyrquokka deploy plan`` as a first prompt's first line titled the row ``#
    Zephyrquokka deploy plan`` and the export's heading ``# # Zephyrquokka deploy plan``: the
    heading marks are markup, not the title (``base.heading_text``, every agent's first-prompt
    title)."""
    p = write_jsonl(tmp_path / "c.jsonl", user("## Zephyrquokka deploy plan ##\n\nPlease fix the health check"),
                    user("#hashtags stay", "u2"))
    assert SRC.read(p).session.title == "Zephyrquokka deploy plan"
    p2 = write_jsonl(tmp_path / "c2.jsonl", user("#\n#hashtags stay"))
    assert SRC.read(p2).session.title == "#hashtags stay"


def test_classify():
    assert classify("  hello ").text == "hello"
    assert classify("[Request interrupted by user for tool use]") is None
    assert classify("<system-reminder>x</system-reminder>") is None
    assert classify("fix it\n<system-reminder>noise</system-reminder>").text == "fix it"
    assert classify("<command-message>x</command-message>") is None  # no command name
    cmd = classify("<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n"
                   "<command-args>@CLAUDE.md build the plan</command-args>")
    assert (cmd.role, cmd.label, cmd.text, cmd.prompt, cmd.fallback) == (
        Role.USER, "user", "/orchestrator @CLAUDE.md build the plan", False, True)
    bare = classify("<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>")
    assert (bare.role, bare.text, bare.prompt, bare.fallback, bare.last_resort) == (Role.USER, "/exit", False, False,
                                                                                  True)
    bang = classify("<bash-input>npm run e2e</bash-input>")
    assert (bang.role, bang.label, bang.text, bang.prompt, bang.fallback) == (Role.USER, "user", "! npm run e2e", False, False)
    assert classify("<bash-input>  </bash-input>") is None
    assert classify(None) is None


# -- tools -------------------------------------------------------------------------------------------


def test_tool_pairing_unknown_and_error_and_synthetic(tmp_path):
    p = write_jsonl(
        tmp_path / "t.jsonl",
        assistant([{"type": "tool_use", "id": "toolu_A", "name": "WebFetch", "input": {"url": "https://x.test"}},
                   {"type": "redacted_thinking", "data": "opaque"}, {"type": "thinking", "thinking": ""}]),
        user([{"type": "tool_result", "tool_use_id": "toolu_Z", "content": "from a resumed file"},
              {"type": "tool_result", "tool_use_id": "toolu_A", "is_error": True,
               "content": [{"type": "text", "text": "404"}, {"type": "image", "source": {"data": "AAAA"}}]}], "u2"),
        assistant([{"type": "text", "text": "API Error: 401 invalid key"}], "a2", "msg_2", isApiErrorMessage=True),
        assistant("bare string reply", "a3", "msg_3"),
    )
    read = SRC.read(p)
    assert [(m.label, m.tool_name, m.text) for m in read.messages] == [
        ("tool-call:WebFetch", "WebFetch", '{"url": "https://x.test"}'),
        ("tool:unknown", "unknown", "from a resumed file"),
        ("tool:WebFetch", "WebFetch", "404\n[image]"),
        ("system", None, "API Error: 401 invalid key"),
        ("assistant", None, "bare string reply")]
    assert read.state["pending"] == {}


def test_state_stays_small_on_long_sessions(tmp_path):
    objs = []
    for i in range(1500):  # interrupted tool calls never paired, many uuids and summaries
        objs.append(assistant([{"type": "tool_use", "id": f"toolu_{i:06d}", "name": "Bash", "input": {}}],
                              f"a{i}", f"msg_{i}"))
        objs.append({"type": "summary", "summary": f"s{i}", "leafUuid": f"nowhere-{i}"})
    read = SRC.read(write_jsonl(tmp_path / "long.jsonl", *objs))
    assert read.session.message_count == 1500
    assert state_size(read.state) < 8192


def test_oversized_line_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "iter_records", functools.partial(iter_records, max_line=400))
    big = user([{"type": "image", "source": {"type": "base64", "data": "A" * 2000}}], "u2")
    p = write_jsonl(tmp_path / "big.jsonl", user("before", "u1"), big, user("after", "u3"))
    read = SRC.read(p)
    assert [m.text for m in read.messages] == ["before", "after"]
    assert read.stats.oversized == 1 and read.messages[1].message_index == 1


# -- unterminated tail ---------------------------------------------------------------------------------


def test_unterminated_last_line(tmp_path):
    data = CJK_FILE.read_bytes()
    assert not data.endswith(b"\n")
    read = SRC.read(CJK_FILE)
    last = read.messages[-1]
    assert last.text.startswith("「idle in transaction」が97件") and last.message_index == 5
    assert read.end_offset == data.rindex(b"\n") + 1 == last.offset and not read.stats.pending
    assert read.state["next_index"] == 5  # the committed state excludes the tail
    assert read.session.message_count == 6  # the session shows it
    p = tmp_path / CJK_FILE.name
    p.write_bytes(data + b"\n")
    again = SRC.read(p, read.end_offset, json.loads(json.dumps(read.state)))
    assert [(m.message_index, m.text) for m in again.messages] == [(5, last.text)]
    assert again.end_offset == len(data) + 1


def test_cjk_session():
    s = SRC.read(CJK_FILE).session
    assert s.title == "データベースの接続プールが枯渇しています 🦀 どう調査すればいいですか？"
    assert s.project == "/home/dev/データ分析" and s.anchor_index == 0
    assert SRC.resume_command(s) == f"cd '/home/dev/データ分析' && claude --resume {CJK}"


# -- subagents --------------------------------------------------------------------------------------------


def test_subagent_new_layout():
    read = SRC.read(SUB_FILE)
    s = read.session
    assert s.session_id == "agent-a7c3e9f1b2d40586" and s.parent_session_id == CRON  # from the directory
    assert s.extra == {"agent_type": "Explore"}
    assert s.title.startswith("Find every crontab entry that still uses local time")
    assert SRC.resume_command(s) == f"cd /home/dev/webapp && claude --resume {CRON}"
    assert "orphaned lockfile" in read.messages[-1].text


def test_subagent_legacy_layout():
    s = SRC.read(LEGACY_SUB_FILE).session
    assert s.session_id == "agent-5e6f7a8b" and s.parent_session_id == HOOK  # from the lines
    assert s.title == "Check whether the staging webhook secret rotates nightly."


def test_bash_mode_stderr_is_the_persons_text_and_stdout_tool_output(tmp_path):
    """Bash mode (``!``, Claude Code 2.1.332, ``chunk-7p91pemn.js``'s handler ``he``): the
    answer line holds ``<bash-stdout>`` and ``<bash-stderr>`` (or the stderr alone: ``Command
    failed: …``). Its stderr is the person's own text (what they paste back later), its stdout
    a ``bash-mode`` tool result (indexed only with tool output on)."""
    p = write_jsonl(
        tmp_path / "a.jsonl",
        user("<bash-input>npm test</bash-input>", "u1"),
        user("<bash-stdout>2 passing</bash-stdout><bash-stderr>Error: Cannot find module './fixtures/db.js'</bash-stderr>",
             "u2"),
        user("<bash-stderr>Command failed: exit code 127</bash-stderr>", "u3"),
        user("<bash-stdout></bash-stdout><bash-stderr></bash-stderr>", "u4"),
    )
    ms = SRC.read(p).messages
    assert [(m.role.value, m.label, m.text) for m in ms] == [
        ("user", "user", "! npm test"), ("tool", "tool:bash-mode", "2 passing"),
        ("user", "stderr", "Error: Cannot find module './fixtures/db.js'"),
        ("user", "stderr", "Command failed: exit code 127")]
    assert index_text_fields(ms[2]) == {"user": ms[2].text}
    assert index_text_fields(ms[1]) == {"tool": "bash-mode"}  # its text only with tool output on


def test_inline_sidechain_and_command_session():
    """Claude Code 1.0.x: the only human input is a slash command with arguments; a Task subagent's
    turns are written inline (isSidechain) before the Task result."""
    read = SRC.read(MOBILE_FILE)
    ms, s = read.messages, read.session
    assert labels(read) == [
        ("user", "user"),  # /orchestrator @CLAUDE.md ... (the Caveat and the isMeta expansion are dropped)
        ("assistant", "assistant"), ("assistant", "tool-call:Task"),
        ("user", "user"),  # sidechain: the Task prompt, still a message
        ("assistant", "assistant"), ("assistant", "tool-call:Bash"), ("tool", "tool:Bash"),
        ("assistant", "assistant"),  # sidechain final answer
        ("tool", "tool:Task"), ("user", "user"), ("tool", "tool:bash-mode"), ("assistant", "assistant")]
    assert ms[0].text == "/orchestrator @CLAUDE.md refresh the release checklist for the Android build"
    assert ms[3].text.startswith("Inspect the gradle build files") and ms[9].text == "! ./gradlew :app:lintRelease"
    assert index_text_fields(ms[0]) == {"user": ms[0].text} and index_text_fields(ms[9]) == {"user": ms[9].text}
    assert s.title == "/orchestrator @CLAUDE.md refresh the release checklist for the Android build"
    assert s.anchor_index == 0 and s.message_count == 12
    assert (s.session_id, s.parent_session_id, s.project, s.git_branch) == (MOBILE, None, "/home/dev/mobile", "release/3.4")


def test_inline_sidechain_never_titles_the_parent(tmp_path):
    side = dict(isSidechain=True)
    task = user("Examine the lockfile for duplicate versions", "s1", **side)
    answer = assistant([{"type": "text", "text": "Found 3 duplicates."}], "s2", "msg_s", parent="s1", **side)
    later = user("Now upgrade the lockfile", "u2")
    parent = write_jsonl(tmp_path / "p.jsonl", assistant([{"type": "text", "text": "Delegating."}]), task, answer, later)
    read = SRC.read(parent)
    assert [(m.role.value, m.label) for m in read.messages] == [
        ("assistant", "assistant"), ("user", "user"), ("assistant", "assistant"), ("user", "user")]
    assert read.session.title == "Now upgrade the lockfile" and read.session.anchor_index == 3
    no_prompt = write_jsonl(tmp_path / "q.jsonl", assistant([{"type": "text", "text": "Delegating."}]), task, answer)
    s = SRC.read(no_prompt).session
    assert s.title is None and s.anchor_index == 0
    # a file of sidechain lines only is a subagent transcript under another name: its task is its title
    only = write_jsonl(tmp_path / "renamed.jsonl", task, answer)
    s = SRC.read(only).session
    assert s.title == "Examine the lockfile for duplicate versions" and s.anchor_index == 0
    # in an agent-*.jsonl file (every line isSidechain) the parent's task prompt is the title
    sub = write_jsonl(tmp_path / "agent-0a1b2c3d.jsonl", answer, task)
    s = SRC.read(sub).session
    assert s.title == "Examine the lockfile for duplicate versions" and s.anchor_index == 1
    (tmp_path / "inc").mkdir()
    for path in (parent, no_prompt, only, sub):
        assert_incremental(SRC, path.read_bytes(), tmp_path / "inc" / path.name)


def test_bom_line_is_read(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(user("hello from a BOM file")).encode() + b"\n")
    read = SRC.read(p)
    assert [m.text for m in read.messages] == ["hello from a BOM file"] and read.stats.skipped == 0
    assert read.session.title == "hello from a BOM file"
    assert_read_back(SRC, p, read.messages)


def test_session_id_trusts_lines(tmp_path):
    moved = write_jsonl(tmp_path / "renamed-copy.jsonl", user("hi", sid="4a1d0000-0000-4000-8000-000000000001"))
    assert SRC.read(moved).session.session_id == "4a1d0000-0000-4000-8000-000000000001"
    own = write_jsonl(tmp_path / "own-id.jsonl", user("hi", sid="other"), user("x", "u2", sid="own-id"))
    assert SRC.read(own).session.session_id == "own-id"  # a line naming the file's own id wins
    empty = write_jsonl(tmp_path / "empty-id.jsonl")
    assert SRC.read(empty).session.session_id == "empty-id"


# -- the shared corpus -------------------------------------------------------------------------------------


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for d in ("claude", "real/claude") for p in (CORPUS / d).rglob("*.jsonl"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_corpus_reads_without_errors():
    files = corpus_files()
    assert len(files) >= 20
    texts = {}
    for path in files:
        read = SRC.read(path)
        assert read.session.message_count == len(read.messages) or read.stats.pending
        assert_read_back(SRC, path, read.messages)
        texts[path.name] = read
    real = texts["155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl"]
    assert any(m.role is Role.USER and "What skills are available?" in m.text for m in real.messages)
    sub = texts["agent-a0ad4f44468bdf20d.jsonl"].session
    assert sub.parent_session_id == "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f" and sub.extra == {"agent_type": "general-purpose"}
    # 1.0.108: the only human input is /orchestrator with arguments; the inline subagent's task
    # prompt ("Examine the package.json file(s)...") must not become the title
    v108 = texts["d-kimuson_real_v1.0.108_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"]
    assert v108.session.title.startswith("/orchestrator @CLAUDE.md") and v108.session.anchor_index == 0
    assert any(m.role is Role.USER and m.text.startswith("Examine the package.json") for m in v108.messages)
    legacy = texts["d-kimuson_legacy-agent-file_agent-test-hash-123.jsonl"].session  # sidechain lines only
    assert legacy.title == "Run the test suite"
    edge = texts["claude-code-log_edge_cases.jsonl"]
    # claude-code-log's malformed lines: 42, [1], "massive error"; a user line whose message is a
    # string, and one whose content is misspelled (``contenst``): nothing to read, counted
    assert edge.stats.reasons == {"not a JSON object": 3, "bad field": 2}
    assert [why for _, why in edge.stats.places if why.startswith("bad field")] == [
        "bad field (message.content is missing)", "bad field (message is a string, not an object)"]
    assert any("中文" in m.text for m in edge.messages)


def test_demo_sessions_read_cleanly():
    from crabsearch.paths import demo_home

    reads = [SRC.read(p) for p in SRC.discover({}, demo_home())]
    assert len(reads) == 6  # five sessions and one subagent
    for read in reads:
        assert read.stats.skipped == 0 and read.session.title and read.messages
        assert_read_back(SRC, Path(read.session.path), read.messages)
    titles = {r.session.title for r in reads}
    assert {"Fix nightly sales report cron timezone", "getUserById → async UserRepository",
            "Zero-downtime invoice currency migration"} <= titles
    assert sum(r.session.summary is not None for r in reads) == 2  # compaction + summary line


# -- Claude Code's warm-up exchanges (2.0.x) ------------------------------------------------------


def _side(obj: dict, agent: str = "a9d48ea") -> dict:
    return {**obj, "isSidechain": True, "agentId": agent}


GREETING = [{"type": "text", "text": "I'm ready to help! I'm Claude Code's file search specialist."}]


def test_a_warm_up_subagent_file_yields_no_message(tmp_path):
    """Claude Code 2.0.71 sends ``Warmup`` to each subagent at a session's start: a two-line
    ``agent-<id>.jsonl`` (the shared corpus holds 8 such files) that is no conversation."""
    warm = write_jsonl(tmp_path / "-p" / "agent-a9d48ea.jsonl", _side(user("Warmup", uuid="w1")),
                       _side(assistant(GREETING, uuid="w2", parent="w1")))
    read = SRC.read(warm)
    assert read.messages == [] and read.session.message_count == 0
    blocks = write_jsonl(tmp_path / "-p" / "agent-b1.jsonl",  # the prompt as one text block, streamed reply
                         _side(user([{"type": "text", "text": "Warmup"}], uuid="w1"), "b1"),
                         _side(assistant(GREETING[:1], uuid="w2", parent="w1"), "b1"),
                         _side(assistant([{"type": "text", "text": "More."}], uuid="w3", parent="w2"), "b1"))
    assert SRC.read(blocks).messages == []


def test_warm_up_is_dropped_only_where_it_is_one(tmp_path):
    # A subagent that was warmed up and then given a task: the task and its work stay.
    work = write_jsonl(tmp_path / "-p" / "agent-c2.jsonl", _side(user("Warmup", uuid="w1"), "c2"),
                       _side(assistant(GREETING, uuid="w2", parent="w1"), "c2"),
                       _side(user("Find the cron parser", uuid="t1", parent="w2"), "c2"),
                       _side(assistant([{"type": "text", "text": "It is in sched.py."}], uuid="t2", parent="t1",
                                       msg_id="msg_2"), "c2"))
    read = SRC.read(work)
    assert [m.text for m in read.messages] == ["Find the cron parser", "It is in sched.py."]
    assert read.session.title == "Find the cron parser"
    # The word as a real prompt: in a main session, later in a subagent, or with more words.
    main = write_jsonl(tmp_path / "-p" / "s-1.jsonl", user("Warmup"), assistant(GREETING, parent="u1"))
    assert [m.text for m in SRC.read(main).messages][0] == "Warmup"
    later = write_jsonl(tmp_path / "-p" / "agent-d3.jsonl", _side(user("Check the logs", uuid="t1"), "d3"),
                        _side(user("Warmup", uuid="t2", parent="t1"), "d3"))
    assert [m.text for m in SRC.read(later).messages] == ["Check the logs", "Warmup"]
    more = write_jsonl(tmp_path / "-p" / "agent-e4.jsonl", _side(user("Warmup the cache first", uuid="w1"), "e4"))
    assert len(SRC.read(more).messages) == 1


@pytest.mark.skipif(not (CORPUS / "real" / "claude").is_dir(), reason="the shared corpus is not here")
def test_real_warm_up_files_hold_no_session():
    """The shared corpus's real Claude Code 2.0.71 home: its 8 warm-up files read as empty, its
    other files as before (the subagent and main sessions keep every message)."""
    files = sorted((CORPUS / "real" / "claude").rglob("agent-*.jsonl"))
    warm = [f for f in files if '"content":"Warmup"' in f.read_text("utf-8", "replace").split("\n", 1)[0]]
    assert len(warm) >= 8
    for f in warm:
        assert SRC.read(f).messages == [], f
    for f in set(files) - set(warm):
        assert SRC.read(f).messages, f


# -- records with fields of the wrong type (a fresh-user trial) ------------------------------------


def line_offsets(path: Path) -> list[int]:
    """The byte offset of each line of ``path``."""
    offsets, at = [], 0
    for raw in path.read_bytes().splitlines(keepends=True):
        offsets.append(at)
        at += len(raw)
    return offsets


def test_a_conversation_line_with_a_field_of_the_wrong_type_is_skipped_and_counted(tmp_path):
    """A ``user``/``assistant`` line whose ``message`` is not an object, or whose
    ``message.content`` is neither a string nor a list (formats.md 1.2), has nothing to read: it is
    skipped and counted where it is (as a broken line is), never dropped without a word; the lines
    around it are read as before."""
    s = ClaudeSession(tmp_path, session_id="bbbb0000-0000-4000-8000-000000000001")
    s.user("why does the walrus build fail")
    s.user("gone 1").lines[-1]["message"] = 123
    s.user("gone 2").lines[-1]["message"]["content"] = {"weird": True}
    s.assistant("gone 3").lines[-1]["message"]["content"] = {"weird": True}
    s.user("gone 4").lines[-1]["message"] = None
    s.assistant("gone 5").lines[-1]["message"]["content"] = 7
    s.assistant("the walrus build lacks a lockfile").user("add the walrus lockfile then")
    s.user("gone 6")
    del s.lines[-1]["message"]["content"]
    path = s.write()
    offsets = line_offsets(path)
    read = SRC.read(path)
    assert [m.text for m in read.messages] == ["why does the walrus build fail", "the walrus build lacks a lockfile",
                                               "add the walrus lockfile then"]
    assert [m.message_index for m in read.messages] == [0, 1, 2] and read.session.message_count == 3
    assert read.stats.skipped == 6 and read.stats.reasons == {"bad field": 6}
    assert read.stats.places == [  # the first five are kept
        (offsets[1], "bad field (message is a number, not an object)"),
        (offsets[2], "bad field (message.content is an object, not a string or a list)"),
        (offsets[3], "bad field (message.content is an object, not a string or a list)"),
        (offsets[4], "bad field (message is null, not an object)"),
        (offsets[5], "bad field (message.content is a number, not a string or a list)")]
    assert read.end_offset == path.stat().st_size
    session = read.session
    assert session.title == "why does the walrus build fail" and "off_branch" not in session.extra
    # a skipped line is no part of the session: its time (the latest here) is not the session's end
    assert session.updated.isoformat() == "2026-03-14T10:04:00+00:00"
    json.dumps(read.state)
    missing = SRC.read(write_jsonl(tmp_path / "m.jsonl", s.lines[-1]))
    assert missing.stats.places == [(0, "bad field (message.content is missing)")]


def test_a_line_with_a_bad_field_appended_later_is_counted_too(tmp_path):
    s = ClaudeSession(tmp_path, session_id="bbbb0000-0000-4000-8000-000000000002")
    path = s.user("why does the walrus build fail").write()
    first = SRC.read(path)
    more = ClaudeSession(tmp_path, session_id=s.session_id)
    more.n = 10
    more.user("gone").lines[-1]["message"] = "error"
    more.assistant("the walrus build lacks a lockfile")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(d) + "\n" for d in more.lines))
    again = SRC.read(path, first.end_offset, json.loads(json.dumps(first.state)))
    assert [(m.message_index, m.text) for m in again.messages] == [(1, "the walrus build lacks a lockfile")]
    assert again.stats.places == [(first.end_offset, "bad field (message is a string, not an object)")]


def test_a_timestamp_that_is_not_an_iso_string_is_no_time(tmp_path):
    """Claude Code writes ``timestamp`` as an ISO-8601 string (formats.md 1.2). A number there is
    no time (``12345`` is not 1970-01-01, nor a number of milliseconds a time in 2026): the message
    is read without a time of its own, as a line without a timestamp, and the session's start and
    end ignore it."""
    s = ClaudeSession(tmp_path, session_id="bbbb0000-0000-4000-8000-000000000003")
    s.user("when did the heron job start").lines[-1]["timestamp"] = 12345
    s.assistant("the heron job started at noon")
    s.user("and the ibis job").lines[-1]["timestamp"] = 1784538000000  # ms: 2026-07-20
    s.assistant("the ibis job never started").lines[-1]["timestamp"] = "yesterday"
    s.user("and the crane job").lines[-1]["timestamp"] = [1]
    s.assistant("the crane job is next")
    read = SRC.read(s.write())
    assert [m.text for m in read.messages] == [
        "when did the heron job start", "the heron job started at noon", "and the ibis job",
        "the ibis job never started", "and the crane job", "the crane job is next"]
    times = [m.timestamp and m.timestamp.isoformat() for m in read.messages]
    assert times == [None, "2026-03-14T10:01:00+00:00", None, None, None, "2026-03-14T10:03:00+00:00"]
    assert read.session.started.isoformat() == "2026-03-14T10:01:00+00:00"
    assert read.session.updated.isoformat() == "2026-03-14T10:03:00+00:00"
    assert read.stats.skipped == 0 and read.session.title == "when did the heron job start"


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaclaude`` no other session holds."""
    sid = "5c0375b4-0000-4f26-b12d-d022ee4e5101"
    cwd = "/home/dev/claude app"
    s = (ClaudeSession(home, session_id=sid, cwd=cwd, start=t).user(prompt_of("claude"))
         .assistant(reply_of("claude")).title("Claude: unstick the worker"))
    path = s.write()
    return Expect("claude", sid, "Claude: unstick the worker", cwd, f"cd '{cwd}' && claude --resume {sid}",
                  "quokkaclaude", [prompt_of("claude"), reply_of("claude")], t, files=[path])

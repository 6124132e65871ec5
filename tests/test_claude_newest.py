"""Claude Code as its newest release writes it: one test per rule, each on a small transcript in
the shape Claude Code 2.1.332 writes (npm ``@anthropic-ai/claude-code@2.1.332``, whose
``bin/claude.exe`` embeds the bundled JS as ``/$bunfs/root/chunk-*.js`` modules; each test names
the module and function it follows), each failing on the reader before it, and ``search``,
``show`` and ``export`` agreeing through the CLI."""

from __future__ import annotations

import json
import os

from crabsearch.sources import SOURCES

from builders import ClaudeSession, ClaudeSubagent
from source_checks import cli_ok
from test_formats_today import export, home, search, show  # noqa: F401 - ``home`` is a fixture

SID = "7b2f4c10-0000-4000-8000-000000000001"
NEW = "7b2f4c10-0000-4000-8000-000000000002"


NEWEST_METADATA_KINDS = (
    "progress", "file-history-snapshot", "file-history-delta", "last-prompt", "continued-in",
    "resume-head-vouch", "content-replacement", "data-flow-records", "data-flow-incomplete",
    "derived-from", "api-request-shape", "api-request-blob", "api-request", "api-request-resumed",
    "fork-context-ref", "frame-link", "summary", "custom-title", "ended-by-model", "ai-title", "tag",
    "relocated", "agent-name", "agent-color", "agent-setting", "pr-link", "artifact-comment-monitor",
    "artifact-autoreact-ledger", "bridge-session", "history-suppression", "attribution-snapshot",
    "mode", "permission-mode", "isolation-latch", "session-owner", "dev-mods", "memory-mode",
    "atis-latch", "tools-used", "worktree-state", "cost-state", "queue-operation", "observer-ref")
"""The keys of Claude Code 2.1.332's table of line kinds other than ``user``, ``assistant``,
``system`` and ``attachment`` (``var ehr={user:"transcript",...}``, ``chunk-bqhgd24a.js``)."""


def _hit_text(hit: dict) -> str:
    return next(i["text"] for i in hit["window"] if i["hit"])


def _texts(page: dict, word: str) -> list[tuple[str, str]]:
    return [(m["role"], m["label"]) for m in page["messages"] if word in m["text"]]


def test_1_injected_turns_are_not_the_persons_prompt(home, capsys):
    """Rule 1. A user turn the app wrote is not the person's prompt: text opening with a tag
    (``<ide_opened_file>``, ``<cross-session-message ...>``: Claude's ``Ust``/``zua`` test
    ``/^(?:\\s*<[a-z][\\w-]*[\\s>]|\\[Request interrupted by user[^\\]]*\\])/`` in ``vMe``,
    ``chunk-bqhgd24a.js``, and ``yLt``, ``chunk-fn7g10bh.js``) and a line whose ``origin.kind``
    is not ``human`` (``dHi``, ``chunk-4x8p6zpg.js``; the kinds: ``$r`` in ``chunk-xv20h9sv.js``).
    Neither is the title nor the anchor; each is shown and exported labelled by its origin, and
    is not found as what the user said. A prompt of punctuation only (``.``) is no title either:
    the next prompt is."""
    s = ClaudeSession(home, session_id=SID).user(".")
    s.assistant("Could you say more?")
    s.user("continue with the quokka migration")
    s.lines[-1]["origin"] = {"kind": "auto-continuation"}
    s.assistant("Continuing.")
    line = s._base("user")
    line["message"] = {"role": "user", "content": [
        {"type": "text", "text": "<ide_opened_file>The user opened the file /src/numbat.py in the IDE. "
                                 "This may or may not be related to the current task.</ide_opened_file>"},
        {"type": "text", "text": "rename the wombat parser"}]}
    s.lines.append(line)
    s.assistant("Renamed the wombat parser.")
    s.user('<cross-session-message from="build-bot">the pangolin build is green</cross-session-message>')
    s.lines[-1]["origin"] = {"kind": "peer", "from": "build-bot"}
    s.queued("keep the echidna tests", origin={"kind": "task-notification"})
    s.write()

    hit = search(capsys, "wombat")[0]
    assert hit["title"] == "rename the wombat parser"
    assert hit["role"] == "user" and "rename the wombat parser" in _hit_text(hit)
    listed = search(capsys, "")[0]  # a session listed without a query shows its anchor
    assert _hit_text(listed) == "rename the wombat parser"
    for word in ("quokka", "numbat", "pangolin", "echidna"):
        assert not [h for h in search(capsys, f"role:user {word}") if h["session_id"] == SID], word
    page = show(capsys, SID)
    assert _texts(page, "quokka") == [("system", "auto-continuation")]
    assert _texts(page, "numbat") == [("system", "ide_opened_file")]
    assert _texts(page, "pangolin") == [("system", "peer")]
    assert _texts(page, "echidna") == [("system", "task-notification")]
    assert _texts(page, "wombat parser") == [("user", "user"), ("assistant", "assistant")]
    md = export(capsys, SID)
    assert md.startswith("# rename the wombat parser\n")
    assert "auto-continuation" in md and "continue with the quokka migration" in md
    assert "message from build-bot" in md


def test_2_sidecar_title_and_archive(home, capsys):
    """Rule 2. ``<session id>/custom-title.json`` (``{customTitle, by, at}``: ``cHi``/``nSo``,
    ``chunk-4x8p6zpg.js``) names the session after the last ``custom-title`` line and before the
    rest (``v`` in ``chunk-vzj0gytf.js``: ``fre(tail,"custom-title")||sidecar||...||ai-title``);
    ``archived.json`` (``{archived, at, by}``, at most 4,096 bytes: ``hWn``) archives it until
    the person's next prompt after ``at`` (``Zyo``/``dHi``). A change to either refreshes the
    session, though the transcript is unchanged."""
    s = ClaudeSession(home, session_id=SID).user("tune the capybara cache")
    s.assistant("Tuned.")
    s.lines.append({"type": "ai-title", "aiTitle": "Capybara cache tuning", "sessionId": SID})
    path = s.write()
    folder = path.with_suffix("")
    folder.mkdir()
    (folder / "custom-title.json").write_text(json.dumps(
        {"customTitle": "Capybara sprint", "by": "user", "at": "2026-03-14T11:00:00.000Z"}))
    (folder / "archived.json").write_text(json.dumps(
        {"archived": True, "at": "2026-03-14T11:00:00.000Z", "by": "user"}))
    hit = search(capsys, "capybara")[0]
    assert (hit["title"], hit["archived"]) == ("Capybara sprint", True)
    page = show(capsys, SID)
    assert (page["session"]["title"], page["session"]["archived"]) == ("Capybara sprint", True)
    md = export(capsys, SID)
    assert md.startswith("# Capybara sprint\n") and "- **Archived:** yes" in md

    (folder / "custom-title.json").write_text(json.dumps({"customTitle": ".", "by": "user"}))
    (folder / "archived.json").write_text(json.dumps({"archived": False, "at": "2026-03-14T11:00:00Z"}))
    os.utime(folder / "archived.json", ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    hit = search(capsys, "capybara")[0]  # punctuation only: the next candidate, the ai-title
    assert (hit["title"], hit["archived"]) == ("Capybara cache tuning", False)

    (folder / "archived.json").write_text(json.dumps({"archived": True, "at": "2026-03-14T10:00:10Z"}))
    os.utime(folder / "archived.json", ns=(2_000_000_001_000_000_000, 2_000_000_001_000_000_000))
    assert search(capsys, "capybara")[0]["archived"] is False  # prompted after it was archived
    s.title("Capybara final")  # the last custom-title line comes before the sidecar
    s.write()
    assert show(capsys, SID)["session"]["title"] == "Capybara final"


def test_5_kinds_of_the_newest_release_are_known(home, capsys):
    """Rule 5. The 43 metadata line kinds of Claude Code 2.1.332 (its table of line kinds,
    ``var ehr={...}`` in ``chunk-bqhgd24a.js``) are not listed by ``status`` as unknown; a kind
    it does not write still is, and a file holding 30 new kinds has each of them named."""
    s = ClaudeSession(home, session_id=SID).user("count the okapi herd")
    for kind in NEWEST_METADATA_KINDS:
        s.lines.append({"type": kind, "sessionId": SID, "timestamp": "2026-03-14T10:01:00.000Z"})
    s.lines.append({"type": "file-history-delta", "messageId": "m1", "sessionId": SID})
    for n in range(30):
        s.lines.append({"type": f"new-kind-{n:02d}", "sessionId": SID})
    s.assistant("Counted.")
    path = s.write()
    cli_ok(capsys, "index")
    status = json.loads(cli_ok(capsys, "status", "--json"))
    kinds = sorted(u["kind"] for u in status["unknown_kinds"] if u["agent"] == "claude")
    assert kinds == [f"new-kind-{n:02d}" for n in range(30)]
    assert {"agent": "claude", "kind": "new-kind-07", "records": 1, "files": 1,
            "example": str(path)} in status["unknown_kinds"]
    assert "new-kind-29" in cli_ok(capsys, "status")
    assert search(capsys, "okapi")[0]["message_count"] == 2
    assert [m["text"] for m in show(capsys, SID)["messages"]] == ["count the okapi herd", "Counted."]
    assert "count the okapi herd" in export(capsys, SID)


def test_side_question_copy_is_the_parents_subagent(home, capsys):
    """A side question (``/btw``) ran on a copy of the session:
    ``<session id>/subagents/agent-aside_question-<hash>.jsonl``, its lines the parent's (same
    ``sessionId`` and ``uuid``s, ``isSidechain``), then the question. It is the parent's subagent:
    the parent keeps its id, rows, messages and resume command, and a message both hold is shown
    in the parent (Claude Code 2.1.332 no longer writes the copy: ``querySource:"side_question"``
    with ``skipTranscript:!0``, ``chunk-8vrwrv9m.js``; earlier releases left them in homes)."""
    parent = ClaudeSession(home, session_id=SID).user("migrate the tapir schema")
    parent.assistant("Migrated the tapir schema.").user("now backfill the tapir rows").assistant("Backfilled.")
    parent.write()
    copy = ClaudeSubagent(parent, "aside_question-4f2a9c0d1e")
    for line in parent.lines:
        copy.lines.append(dict(line, isSidechain=True, agentId="aside_question-4f2a9c0d1e"))
    copy.parent, copy.t = parent.parent, parent.t
    copy.user("btw what does backfill mean?").assistant("It fills rows written before the column existed.")
    copy.write()

    hit = search(capsys, "tapir schema")[0]
    assert (hit["session_id"], hit["message_count"], hit["parent_session_id"]) == (SID, 4, None)
    assert hit["resume_command"].endswith(f"claude --resume {SID}")
    rows = {h["session_id"]: h for h in search(capsys, "")}
    assert rows[SID]["message_count"] == 4
    assert rows["agent-aside_question-4f2a9c0d1e"]["parent_session_id"] == SID
    page = show(capsys, SID)
    assert page["session"]["message_count"] == 4 and not any("btw" in m["text"] for m in page["messages"])
    assert "btw what does backfill mean?" not in export(capsys, SID)
    side = show(capsys, "agent-aside_question-4f2a9c0d1e")
    assert side["session"]["parent_session_id"] == SID
    assert _texts(side, "btw what does") == [("user", "user")]
    # titled by its question, not by the parent's first prompt it copies
    assert side["session"]["title"] == rows["agent-aside_question-4f2a9c0d1e"]["title"] == \
        "btw what does backfill mean?"


def test_3_continued_in_links_the_two_sessions_and_resumes_the_new_one(home, capsys):
    """Rule 3. Sent to the background, a session gets a ``continued-in`` line
    ``{type, timestamp, sessionId, continuedInSessionId}`` (``hhl``, ``chunk-4x8p6zpg.js``;
    written by ``KQe`` in ``chunk-rc1vwjwv.js`` once the background session, ``claude --resume
    <old> --fork-session``, runs). The two are linked both ways in rows, ``show`` and ``export``,
    and the old session's resume command resumes the new one (Claude leaves the old id out of
    ``/resume``: "filtered from /resume: continued in", ``chunk-bqhgd24a.js``). A finished reply
    after the line undoes it (``zEr``)."""
    old = ClaudeSession(home, session_id=SID).user("profile the gecko importer").assistant("Profiling.")
    old.lines.append({"type": "continued-in", "timestamp": "2026-03-14T10:02:00.000Z", "sessionId": SID,
                      "continuedInSessionId": NEW})
    old.write()
    new = ClaudeSession(home, session_id=NEW).copy_of(old)
    new.lines = [d for d in new.lines if d.get("type") != "continued-in"]
    new.user("now speed up the gecko parser").assistant("Sped up.")
    new.write()

    rows = {h["session_id"]: h for h in search(capsys, "gecko importer")}
    hit = rows.get(SID) or rows[NEW]
    assert hit["session_id"] == NEW  # the copied history is shown in the newest session
    assert hit["continued_from"] == {"session_id": SID, "title": "profile the gecko importer"}
    text = cli_ok(capsys, "search", "gecko")
    assert "continued from profile the gecko importer" in text
    page = show(capsys, SID)
    assert page["session"]["continued_in"] == {"session_id": NEW, "title": "profile the gecko importer"}
    assert page["session"]["resume_command"].endswith(f"claude --resume {NEW}")
    assert f"continued in profile the gecko importer" in cli_ok(capsys, "show", SID)
    md = export(capsys, SID)
    assert f"- **Continued in:** `{NEW}`" in md and f"claude --resume {NEW}" in md
    assert f"- **Continued from:** `{SID}`" in export(capsys, NEW)
    assert show(capsys, NEW)["session"]["resume_command"].endswith(f"claude --resume {NEW}")

    old.lines[-1]["timestamp"] = "2026-03-14T10:01:00.000Z"
    old.user("one more thing about the gecko").assistant("Done.")
    old.lines[-1]["message"]["stop_reason"] = "end_turn"
    old.write()
    page = show(capsys, SID)
    assert page["session"]["continued_in"] is None
    assert page["session"]["resume_command"].endswith(f"claude --resume {SID}")


def _persisted_session(home) -> tuple[ClaudeSession, str]:
    """A Bash call whose output Claude Code cut to a ``<persisted-output>`` preview, saving the
    whole of it to ``<session id>/tool-results/<tool_use_id>.txt`` (``mK``/``BEe``/``xe`` in
    ``chunk-ety1djz5.js`` of 2.1.332), and the ``content-replacement`` line that records the
    preview (``insertContentReplacement``, ``chunk-bqhgd24a.js``)."""
    s = ClaudeSession(home, session_id=SID).user("dump the heron logs")
    s.tool("Bash", {"command": "cat heron.log"}, "")
    tid = s.lines[-2]["message"]["content"][0]["id"]
    full = "\n".join(f"line {n}: heron {'flamingo timeout' if n == 150 else 'ok'}" for n in range(4001)) + "\n"
    folder = s.path.with_suffix("") / "tool-results"
    preview = ("<persisted-output>\nOutput too large (78.1KB). Full output saved to: "
               f"{folder / (tid + '.txt')}\n\nPreview (first 2KB):\n{full[:2000]}\n...\n</persisted-output>")
    s.lines[-1]["message"]["content"][0]["content"] = preview
    s.lines.append({"type": "content-replacement", "sessionId": SID, "replacements": [
        {"kind": "tool-result", "toolUseId": tid, "replacement": preview}]})
    s.assistant("The last line is a flamingo timeout.")
    s.write()
    folder.mkdir(parents=True)
    (folder / f"{tid}.txt").write_text(full)
    return s, tid


def test_4_persisted_tool_output_is_read_from_its_file_when_tool_output_is_indexed(home, capsys):
    """Rule 4. With tool output indexed, a ``<persisted-output>`` preview's file is what is
    indexed, shown and exported (read through the regular-file-only opener); without it, the
    preview is, as before."""
    s, tid = _persisted_session(home)
    tools = "--index-tool-output"
    hits = search(capsys, "in:tools flamingo", tools)
    assert [h["session_id"] for h in hits] == [SID] and hits[0]["role"] == "tool"
    page = json.loads(cli_ok(capsys, "show", SID, "--json", "--limit", "50", tools))
    out = [m["text"] for m in page["messages"] if m["role"] == "tool"]
    assert len(out) == 1 and out[0].startswith("line 0: heron ok") and "line 150: heron flamingo" in out[0]
    assert out[0].endswith("line 4000: heron ok\n")
    assert "line 4000: heron ok" in cli_ok(capsys, "export", SID, tools)

    saved = s.path.with_suffix("") / "tool-results" / f"{tid}.txt"
    saved.unlink()
    os.mkfifo(saved)  # not a regular file: never opened for reading (it would block)
    s.write()
    os.utime(s.path, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    cli_ok(capsys, "index", tools)
    page = json.loads(cli_ok(capsys, "show", SID, "--json", "--limit", "50", tools))
    assert [m["text"][:18] for m in page["messages"] if m["role"] == "tool"] == ["<persisted-output>"]


def test_4_persisted_tool_output_without_tool_output_indexing_is_the_preview(home, capsys):
    """Rule 4, the opt-out: without tool output indexed nothing changes (the preview is the text)."""
    _persisted_session(home)
    page = show(capsys, SID)
    out = [m["text"] for m in page["messages"] if m["role"] == "tool"]
    assert len(out) == 1 and out[0].startswith("<persisted-output>") and "flamingo" not in out[0]
    assert "line 4000: heron ok" not in export(capsys, SID)


def test_1_injected_queued_turn_repeated_as_a_line_is_shown_once(home, capsys):
    """Rule 1 with the queue: a queued turn of another origin (``attachment`` ``queued_command``
    with ``origin``), drained and written again as a ``user`` line with that origin, is one
    message, as a queued prompt is."""
    s = ClaudeSession(home, session_id=SID).user("watch the lemur deploy").assistant("Watching.")
    s.queued("the lemur deploy finished", origin={"kind": "coordinator"})
    s.user("the lemur deploy finished")
    s.lines[-1]["origin"] = {"kind": "coordinator"}
    s.assistant("Noted.")
    s.write()
    assert _texts(show(capsys, SID), "deploy finished") == [("system", "coordinator")]
    assert export(capsys, SID).count("the lemur deploy finished") == 1
    assert search(capsys, "lemur")[0]["title"] == "watch the lemur deploy"


def test_1_pasted_markup_stays_the_persons_words_but_is_no_title(home, capsys):
    """Rule 1's other side: a prompt the person opened with pasted markup (``<template>``, an
    HTML tag, not one of the tags Claude Code writes in the person's place) is not the title,
    as Claude's ``vMe``/``yLt`` skip it, but it is what the user said: found with ``role:user``
    and shown as the user's."""
    s = ClaudeSession(home, session_id=SID).user('<template><div class="okapi-card">x</div></template> why is the okapi card not centered')
    s.assistant("The flex container needs align-items.")
    s.user("thanks, and the giraffe header too")
    s.write()
    hits = [h for h in search(capsys, "role:user okapi card") if h["session_id"] == SID]
    assert hits and hits[0]["title"] == "thanks, and the giraffe header too"
    assert _texts(show(capsys, SID), "okapi card not centered") == [("user", "user")]

"""Every agent as it writes today (issue 14): one test per numbered rule, each on a small
transcript in that agent's real shape (built here or by ``builders.py``), each failing without
its rule, and ``search``, ``show`` and ``export`` agreeing through the CLI. The upstream source
each rule follows is cited at its test (and in the reader's docstring)."""

from __future__ import annotations

import json

import pytest

from crabsearch.sources import SOURCES

from builders import ClaudeSession, CodexSession, GeminiChat
from v3_builders import V3Session
from source_checks import assert_incremental, assert_read_back, cli_ok


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake ``$HOME`` for the CLI, with every agent's override variable cleared."""
    home = tmp_path / "home"
    home.mkdir()
    for src in SOURCES.values():
        if src.env_var:
            monkeypatch.delenv(src.env_var, raising=False)
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "CRABSEARCH_AIDER_DIRS", "CRABSEARCH_SPECSTORY_DIRS",
                "CRABSEARCH_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    return home


def search(capsys, query: str, *flags: str) -> list[dict]:
    """``crabsearch search QUERY --json``: the hits."""
    return json.loads(cli_ok(capsys, "search", query, "--json", *flags))["hits"]


def show(capsys, session_id: str) -> dict:
    """``crabsearch show SESSION_ID --json --limit 500``."""
    return json.loads(cli_ok(capsys, "show", session_id, "--json", "--limit", "500"))


def export(capsys, session_id: str) -> str:
    """``crabsearch export SESSION_ID`` (Markdown on stdout)."""
    return cli_ok(capsys, "export", session_id)


def agree(capsys, query: str, session_id: str, text: str, role: str = "user") -> dict:
    """``search`` finds ``text`` in ``session_id`` as a ``role`` message, ``show`` lists it with
    that role, and ``export`` writes it; returns the hit."""
    hits = [h for h in search(capsys, query) if h["session_id"] == session_id]
    assert hits, f"{query!r} does not find {session_id}"
    hit = hits[0]
    assert hit["role"] == role and text in next(i["text"] for i in hit["window"] if i["hit"])
    page = show(capsys, session_id)
    assert [m["role"] for m in page["messages"] if text in m["text"]] == [role]
    assert text in export(capsys, session_id)
    return hit


# -- Claude Code ---------------------------------------------------------------------------------


SID = "3c1e5a70-0000-4000-8000-000000000001"


def test_claude_1_queued_prompt_is_a_user_message(home, capsys, tmp_path):
    """Rule 1. A prompt typed while the agent is busy is only an ``attachment`` line
    ``queued_command`` (agentsview issue 401 / PR 406, kenn-io/agentsview
    ``internal/parser/claude.go`` ``extractQueuedCommand``, 538600744d1b); its prompt may be a
    list of blocks. It is searchable, shown and exported as what the user said."""
    s = (ClaudeSession(home, session_id=SID).user("index the quarterly ledger files")
         .tool("Bash", {"command": "ls ledger"}, "q1.csv q2.csv")
         .queued("also skip the archived ocelot ledgers while you are at it")
         .assistant("Skipping the archived ledgers.")
         .queued([{"type": "text", "text": "and sort them by marmoset id"},
                  {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}])
         .assistant("Sorted."))
    path = s.write()
    read = SOURCES["claude"].read(path)
    users = [m.text for m in read.messages if m.role.value == "user"]
    assert users == ["index the quarterly ledger files", "also skip the archived ocelot ledgers while you are at it",
                     "and sort them by marmoset id\n[image]"]
    assert read.session.title == "index the quarterly ledger files"
    assert_read_back(SOURCES["claude"], path, read.messages)
    assert_incremental(SOURCES["claude"], path.read_bytes(), tmp_path / f"{SID}.jsonl")
    agree(capsys, "ocelot", SID, "archived ocelot ledgers")
    agree(capsys, "marmoset", SID, "sort them by marmoset id")


def test_claude_1_queued_prompt_alone_titles_and_is_not_doubled(home):
    """A session whose only prompt was queued takes its title from it; a ``user`` line that
    repeats a queued prompt (drained normally) is not a second message; a bash-mode queued
    command is ``! cmd``; a peer's message (``origin.kind: "peer"``, Claude Code docs,
    cross-session messaging) is not the user's prompt."""
    s = ClaudeSession(home, session_id=SID).queued("rename the wombat module").assistant("Renamed.")
    s.user("rename the wombat module").assistant("Already done.")
    s.queued("git status", mode="bash")
    s.queued("the build is green on my side", origin={"kind": "peer", "from": "ci-bot", "senderTaskId": "t1"})
    read = SOURCES["claude"].read(s.write())
    assert [(m.role.value, m.text) for m in read.messages] == [
        ("user", "rename the wombat module"), ("assistant", "Renamed."), ("assistant", "Already done."),
        ("user", "! git status"), ("system", "message from ci-bot: the build is green on my side")]
    assert read.session.title == "rename the wombat module"


def test_claude_2_rewind_to_the_first_prompt_is_an_abandoned_branch(home, capsys, tmp_path):
    """Rule 2. A rewind to the very first prompt writes the new prompt with ``parentUuid: null``;
    the replaced chain is an abandoned branch, as for a rewind to a later prompt. ``last-prompt``
    names the active leaf (the new branch)."""
    s = (ClaudeSession(home, session_id=SID).user("draft the pangolin migration plan")
         .assistant("Plan drafted with three pangolin phases").user("add a rollback step")
         .assistant("Rollback added").last_prompt("add a rollback step"))
    s.rewind_to(None).user("draft the narwhal migration plan instead").assistant("Narwhal plan drafted")
    s.last_prompt("draft the narwhal migration plan instead")
    path = s.write()
    read = SOURCES["claude"].read(path)
    assert read.session.extra["off_branch"] == [[0, 4]]
    assert_incremental(SOURCES["claude"], path.read_bytes(), tmp_path / f"{SID}.jsonl")
    old = agree(capsys, "pangolin", SID, "pangolin migration plan")
    assert old["branch"] == "abandoned"
    new = agree(capsys, "narwhal", SID, "narwhal migration plan")
    assert new["branch"] == "active"
    page = show(capsys, SID)
    assert [m.get("abandoned", False) for m in page["messages"]] == [True] * 4 + [False] * 2


def test_claude_2_roots_that_are_not_rewinds(home):
    """A compaction's new root keeps the history before it active; 1.0-era files (``parentUuid``
    null on every line, formats.md 1.7) are not rewound at each line."""
    s = ClaudeSession(home, session_id=SID).user("first").assistant("one").compact("summary of it")
    s.user("after compaction").assistant("two")
    assert "off_branch" not in SOURCES["claude"].read(s.write()).session.extra
    old = ClaudeSession(home, session_id=SID).user("first").assistant("one").user("second").assistant("two")
    for d in old.lines:
        d["version"] = "1.0.0"
        d["parentUuid"] = None
    old.lines[1]["parentUuid"] = old.lines[0]["uuid"]
    assert "off_branch" not in SOURCES["claude"].read(old.write()).session.extra


# -- Codex CLI -----------------------------------------------------------------------------------


CODEX = "019b0000-0000-7000-8000-000000000003"


def test_codex_3_rolled_back_turns_are_an_abandoned_branch(home, capsys, tmp_path):
    """Rule 3. ``event_msg`` ``thread_rolled_back`` drops the last N user turns from the active
    history (openai/codex ``core/src/codex/rollout_reconstruction.rs``,
    ``drop_last_n_user_turns``, 023cedaa25c0): they become an abandoned branch; a later rollback
    counts only the turns that survived the earlier one."""
    s = (CodexSession(home, session_id=CODEX).user("profile the heron importer").assistant("Profiled it.")
         .user("cache the heron lookups in redis").assistant("Cached in redis.")
         .user("and add a kingfisher metric").assistant("Metric added.")
         .rolled_back(2)
         .user("cache the heron lookups in memory instead").assistant("Cached in an LRU.")
         .rolled_back(1).user("no cache at all").assistant("Removed."))
    path = s.write()
    read = SOURCES["codex"].read(path)
    assert [m.text for m in read.messages][:2] == ["profile the heron importer", "Profiled it."]
    assert read.session.extra["off_branch"] == [[2, 8]]
    assert_incremental(SOURCES["codex"], path.read_bytes(), tmp_path / path.name)
    assert agree(capsys, "kingfisher", CODEX, "kingfisher metric")["branch"] == "abandoned"
    assert agree(capsys, "redis", CODEX, "heron lookups in redis")["branch"] == "abandoned"
    assert agree(capsys, "profile", CODEX, "profile the heron importer")["branch"] == "active"
    assert search(capsys, "removed")[0]["branch"] == "active"


def _zst(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def test_codex_4_compressed_archive_is_read_and_marked_archived(home, capsys):
    """Rule 4. Codex keeps archived rollouts as ``archived_sessions/rollout-*.jsonl.zst``
    (openai/codex ``rollout/src/compression.rs``, 005c818463ca): read through ``zstandard``,
    searchable, shown and exported, and marked archived (JSON ``archived: true``, the row, the
    CLI text, the export header)."""
    s = CodexSession(home, session_id=CODEX).user("tune the capybara rate limiter").assistant("Tuned.")
    plain = s.write()
    archived = home / ".codex" / "archived_sessions" / (plain.name + ".zst")
    archived.parent.mkdir(parents=True)
    archived.write_bytes(_zst(plain.read_bytes()))
    plain.unlink()
    hit = agree(capsys, "capybara", CODEX, "capybara rate limiter")
    assert hit["archived"] is True and hit["path"] == str(archived)
    assert show(capsys, CODEX)["session"]["archived"] is True
    assert "Archived" in export(capsys, CODEX)
    assert "(archived)" in cli_ok(capsys, "search", "capybara")
    assert "archived" in row_text(home, "capybara")


def row_text(home, query: str) -> str:
    """The app's result row (header, structure line, snippet) of the first hit, as plain text."""
    import os
    from datetime import datetime, timezone

    from rich.console import Console

    from crabsearch.search import Engine
    from crabsearch.tui.render import result_prompt

    result = Engine(os.environ["CRABSEARCH_INDEX_DIR"]).search(query)
    console = Console(width=160, record=True)
    console.print(result_prompt(result.hits[0], result.terms, datetime(2026, 4, 1, tzinfo=timezone.utc), str(home)))
    return console.export_text()


def test_codex_4_plain_to_compressed_keeps_one_session(home, capsys):
    """A rollout moved to ``archived_sessions/`` and compressed there (the ``.jsonl`` deleted)
    is the same one session before, during and after; a plain file beside its compressed copy is
    the one read (``should_skip_compressed_sibling``)."""
    s = CodexSession(home, session_id=CODEX).user("migrate the ibis schema").assistant("Migrated.")
    plain = s.write()
    [hit] = search(capsys, "ibis")
    assert hit["archived"] is False and hit["path"] == str(plain)
    archive = home / ".codex" / "archived_sessions"
    archive.mkdir(parents=True)
    (archive / plain.name).write_bytes(plain.read_bytes())  # moved: both exist for a moment
    (archive / (plain.name + ".zst")).write_bytes(_zst(plain.read_bytes()))
    [hit] = search(capsys, "ibis")
    assert hit["path"] == str(plain)
    plain.unlink()
    [hit] = search(capsys, "ibis")
    assert hit["path"] == str(archive / plain.name) and hit["archived"] is True
    (archive / plain.name).unlink()
    [hit] = search(capsys, "ibis")
    assert hit["path"] == str(archive / (plain.name + ".zst")) and hit["archived"] is True
    assert [m["text"] for m in show(capsys, CODEX)["messages"]] == ["migrate the ibis schema", "Migrated."]


def test_codex_4_broken_archive_is_that_file_only(home, capsys):
    """A ``.jsonl.zst`` that is not zstd is named as unreadable; other sessions are indexed."""
    CodexSession(home, session_id=CODEX).user("the okapi report").write()
    bad = home / ".codex" / "archived_sessions" / "rollout-2026-01-01T00-00-00-019b0000-0000-7000-8000-0000000000ff.jsonl.zst"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not zstd at all")
    assert search(capsys, "okapi")
    status = json.loads(cli_ok(capsys, "status", "--json"))
    assert [f["path"] for f in status["unreadable_files"]] == [str(bad)]


def test_codex_4_archive_decompressing_past_the_cap_is_refused(tmp_path, monkeypatch):
    """A small file can decompress to gigabytes: past ``ZST_MAX`` it is an error for that file."""
    from crabsearch.sources import codex

    path = tmp_path / ".codex" / "archived_sessions" / f"rollout-2026-01-01T00-00-00-{CODEX}.jsonl.zst"
    path.parent.mkdir(parents=True)
    path.write_bytes(_zst(b'{"type":"event_msg","payload":{}}\n' * 1000))
    monkeypatch.setattr(codex, "ZST_MAX", 1000)
    with pytest.raises(OSError, match="larger than"):
        SOURCES["codex"].read(path)


PARENT = "019b0000-0000-7000-8000-00000000000a"


def test_codex_5_subagent_links_its_parent_and_skips_the_copied_history(home, capsys, tmp_path):
    """Rule 5. A spawned subagent's rollout names its parent
    (``session_meta.source.subagent.thread_spawn.parent_thread_id``, openai/codex
    ``SubAgentSource::ThreadSpawn``) and begins with a copy of the parent's conversation; its own
    history starts at ``subagent_history_start_ordinal`` (``RolloutLine.ordinal``). The child is
    linked to its parent, and the copy is not the child's messages."""
    parent = CodexSession(home, session_id=PARENT).user("survey the walrus codebase").assistant("Spawning a helper.")
    parent.write()
    child = (CodexSession(home, session_id=CODEX).user("list every walrus module with tests")
             .assistant("Found twelve walrus modules with puffin tests."))
    path = child.spawned_by(parent).with_ordinals().write()
    read = SOURCES["codex"].read(path)
    assert [m.text for m in read.messages] == ["list every walrus module with tests",
                                               "Found twelve walrus modules with puffin tests."]
    assert read.session.parent_session_id == PARENT and read.session.session_id == CODEX
    assert read.session.title == "list every walrus module with tests"
    assert_incremental(SOURCES["codex"], path.read_bytes(), tmp_path / path.name)
    for line in child.lines:
        del line["ordinal"]  # a rollout without ordinals: counted from the first record
    assert [m.text for m in SOURCES["codex"].read(child.write()).messages][0] == "list every walrus module with tests"
    hit = agree(capsys, "puffin", CODEX, "puffin tests", role="assistant")
    assert hit["parent_session_id"] == PARENT and hit["parent_title"] == "survey the walrus codebase"
    hits = search(capsys, "survey")
    assert [h["session_id"] for h in hits] == [PARENT]  # the copied prompt is the parent's only
    assert "subagent of survey the walrus codebase" in cli_ok(capsys, "search", "puffin")


# -- Gemini CLI ----------------------------------------------------------------------------------
# google-gemini/gemini-cli at 5411f113cafa: packages/core/src/services/chatRecordingService.ts
# (loadConversationRecord), packages/core/src/utils/sessionUtils.ts (isIgnoredUserContent),
# packages/cli/src/utils/sessionUtils.ts, packages/core/src/config/projectRegistry.ts.

GEM = "6e0d0000-0000-4000-8000-000000000006"


def test_gemini_6_context_and_commands_are_not_prompts(home, capsys):
    """Rule 6. A user message starting with ``<session_context>`` or ``<hook_context>``, or a
    command starting with ``/`` or ``?``, is not conversation content (``isIgnoredUserContent``):
    never the title, labelled ``context`` (role system), not in the user field."""
    g = GeminiChat(home, GEM, directories=["/home/dev/gem"])
    g.user("<session_context>\nToday is Monday. The repo holds a tapir service.\n</session_context>")
    g.user("/memory add prefer the tapir logger")
    g.user("?what does the tapir flag do")
    g.user("<hook_context>tapir hook ran</hook_context>")
    g.user("rename the tapir handler")
    g.gemini("Renamed the tapir handler.")
    path = g.write()
    read = SOURCES["gemini"].read(path)
    assert [(m.role.value, m.label) for m in read.messages] == [("system", "context")] * 4 + [
        ("user", "user"), ("assistant", "assistant")]
    assert read.session.title == "rename the tapir handler" and read.session.anchor_index == 4
    assert_read_back(SOURCES["gemini"], path, read.messages)
    [hit] = search(capsys, "tapir")
    assert hit["title"] == "rename the tapir handler" and hit["role"] == "user"
    assert search(capsys, "monday") == []  # context is not indexed as what the user said
    page = show(capsys, GEM)
    assert [(m["role"], m["label"]) for m in page["messages"][:2]] == [("system", "context")] * 2
    assert "### #1 context" in export(capsys, GEM).replace("Context", "context")


def test_gemini_7_set_snapshot_replaces_the_message_list(home, capsys):
    """Rule 7. ``{"$set": {"messages": [...]}}`` clears the map and refills it (a checkpoint):
    messages not in it leave the active history."""
    g = GeminiChat(home, GEM, directories=["/home/dev/gem"])
    a = g.user("sketch the gecko importer")
    b = g.gemini("Gecko importer sketched.")
    g.user("add a salamander exporter too")
    g.gemini("Salamander exporter added.")
    g.set(messages=[{"id": a, "timestamp": "2026-03-14T10:00:10.000Z", "type": "user",
                     "content": [{"text": "sketch the gecko importer"}]},
                    {"id": b, "timestamp": "2026-03-14T10:00:20.000Z", "type": "gemini",
                     "content": "Gecko importer sketched."}])
    g.user("now the newt parser")
    read = SOURCES["gemini"].read(g.write())
    assert [m.text for m in read.messages] == ["sketch the gecko importer", "Gecko importer sketched.",
                                               "add a salamander exporter too", "Salamander exporter added.",
                                               "now the newt parser"]
    assert read.session.extra["rewound"] == [[2, 4]]
    assert agree(capsys, "salamander", GEM, "salamander exporter")["branch"] == "abandoned"
    assert agree(capsys, "gecko", GEM, "gecko importer")["branch"] == "active"


def test_gemini_8_an_updated_message_keeps_its_place(home, capsys, tmp_path):
    """Rule 8. The same ``id`` appended again replaces the earlier version in its original
    position (``Map.set`` on an existing key): one message, the latest text."""
    g = GeminiChat(home, GEM, directories=["/home/dev/gem"])
    g.user("why is the iguana cache cold")
    reply = g.gemini("Looking at the iguana")
    g.user("and the axolotl queue?")
    g.gemini("The iguana cache is cold because the warmup job is disabled.", mid=reply)
    path = g.write()
    read = SOURCES["gemini"].read(path)
    assert [m.text for m in read.messages] == [
        "why is the iguana cache cold", "The iguana cache is cold because the warmup job is disabled.",
        "and the axolotl queue?"]
    assert [m.message_index for m in read.messages] == [0, 1, 2]
    hit = agree(capsys, "warmup", GEM, "warmup job is disabled", role="assistant")
    assert hit["message_index"] == 1
    assert search(capsys, "looking") == []  # the earlier version is gone
    # an update appended later re-reads the whole chat: still one message, in place
    g.gemini("The iguana cache is cold: the warmup cron is paused.", mid=reply)
    g.write()
    assert search(capsys, "disabled") == []  # (search refreshes the index first)
    assert [m["text"] for m in show(capsys, GEM)["messages"]] == [
        "why is the iguana cache cold", "The iguana cache is cold: the warmup cron is paused.", "and the axolotl queue?"]


def test_gemini_9_rewind_to_an_unknown_id_clears_everything(home):
    """Rule 9. ``$rewindTo`` an id that is not in the chat clears every message (upstream:
    ``messagesMap.clear()``); later messages are the active history."""
    g = GeminiChat(home, GEM, directories=["/home/dev/gem"])
    g.user("first try at the lemur build")
    g.gemini("Built.")
    g.rewind("no-such-id")
    g.user("second try at the lemur build")
    read = SOURCES["gemini"].read(g.write())
    assert read.session.extra["rewound"] == [[0, 2]]
    assert read.session.title == "second try at the lemur build" and read.session.anchor_index == 2


def test_gemini_10_project_root_marker_is_the_project(home, capsys):
    """Rule 10. Short project ids (``tmp/<slug>/``) come with ``.project_root`` holding the path
    (``projectRegistry.ts``, ``PROJECT_ROOT_FILE``): the project when ``directories`` is absent,
    and the resume command runs there."""
    g = GeminiChat(home, GEM, project_id="my-app", project_root="/home/dev/my app\n")
    g.user("where is the yak config")
    g.write()
    [hit] = search(capsys, "yak")
    assert hit["project"] == "/home/dev/my app"
    assert hit["resume_command"] == f"cd '/home/dev/my app' && gemini --resume {GEM}"


def test_gemini_11_display_content_is_what_the_user_typed(home, capsys):
    """Rule 11. ``displayContent`` is the input as typed; ``content`` has ``@file`` expanded (by
    the ``read_many_files`` tool). Shown and titled from ``displayContent``; the expansion follows
    as that tool's output (indexed with tool output)."""
    g = GeminiChat(home, GEM, directories=["/home/dev/gem"])
    g.message("user", [{"text": "summarise @notes/okapi.md"}, {"text": "\n--- Content from referenced files ---"},
                       {"text": "\nContent from @notes/okapi.md:\n"}, {"text": "The okapi ledger balances nightly."},
                       {"text": "\n--- End of content ---"}],
              displayContent=[{"text": "summarise @notes/okapi.md"}])
    g.gemini("It balances nightly.")
    read = SOURCES["gemini"].read(g.write())
    assert [(m.label, m.text.splitlines()[0]) for m in read.messages] == [
        ("user", "summarise @notes/okapi.md"), ("tool:read_many_files", "summarise @notes/okapi.md"),
        ("assistant", "It balances nightly.")]
    assert read.session.title == "summarise @notes/okapi.md"
    [hit] = search(capsys, "summarise")
    assert hit["role"] == "user" and hit["title"] == "summarise @notes/okapi.md"
    page = show(capsys, GEM)
    assert [(m["label"], m["text"]) for m in page["messages"]][0] == ("user", "summarise @notes/okapi.md")
    assert "okapi ledger balances" in page["messages"][1]["text"]
    assert "summarise @notes/okapi.md" in export(capsys, GEM)
    assert search(capsys, "ledger") == []  # file contents are tool output: only with in:tools
    assert search(capsys, "ledger in:tools", "--index-tool-output")[0]["session_id"] == GEM


# -- opencode ------------------------------------------------------------------------------------
# anomalyco/opencode (formerly sst/opencode): packages/opencode/src/session/session.sql.ts (session
# columns revert, time_archived), revert.ts (SessionRevert.cleanup), packages/core/src/session/
# sql.ts, message.ts (08e3e1f96710) and history.ts (session_message rows: data + id + type by seq).


def _oc_db(home, *sessions):
    """opencode's database under ``$HOME/.local/share/opencode`` (the opencode test module's
    ``Db`` writes it as opencode does) holding ``sessions`` (``(id, title)``), then given today's
    ``session.revert`` column and the V2 ``session_message`` table."""
    import sqlite3

    from test_sources_opencode import Db

    db = Db(home / ".local" / "share" / "opencode" / "opencode.db")
    for sid, title in sessions:
        db.session(sid, title)
    con = sqlite3.connect(db.path)
    con.execute("alter table session add column revert text")
    con.execute("create table session_message (id text primary key, session_id text not null, type text not null, "
                "seq integer not null, time_created integer not null, time_updated integer not null, data text not null)")
    con.commit()
    con.close()
    return db


def _oc_sql(db, sql, *args):
    import sqlite3

    con = sqlite3.connect(db.path)
    con.execute(sql, args)
    con.commit()
    con.close()


def test_opencode_12_reverted_messages_are_an_abandoned_branch(home, capsys):
    """Rule 12. ``session.revert`` (``{"messageID", "partID"?}``) hides every message after the
    revert point, and of that message the parts from ``partID`` on (``SessionRevert.cleanup``):
    an abandoned branch until the next prompt deletes it; undoing the revert restores it."""
    from test_sources_opencode import text

    db = _oc_db(home, ("ses_r", "Tune the vole scheduler"))
    db.message("ses_r", "user", text("tune the vole scheduler"))
    db.message("ses_r", "assistant", text("Raised the vole quantum."))
    m3 = db.message("ses_r", "user", text("also shrink the shrew queue"))
    db.message("ses_r", "assistant", text("Shrank the shrew queue."), text("And added a mole metric."))
    assert [h["branch"] for h in search(capsys, "shrew")] == ["active"]
    _oc_sql(db, "update session set revert = ?, time_updated = time_updated + 1 where id = 'ses_r'",
            json.dumps({"messageID": m3, "snapshot": "abc"}))
    assert agree(capsys, "shrew", "ses_r", "shrink the shrew queue")["branch"] == "abandoned"
    assert agree(capsys, "vole", "ses_r", "tune the vole scheduler")["branch"] == "active"
    page = show(capsys, "ses_r")
    assert [m.get("abandoned", False) for m in page["messages"]] == [False, False, True, True, True]
    # a revert to a part: the message stays, its parts from that one on are hidden
    _oc_sql(db, "update session set revert = ?, time_updated = time_updated + 1 where id = 'ses_r'",
            json.dumps({"messageID": "msg_0004", "partID": "prt_0004_1"}))
    search(capsys, "vole")
    assert [m.get("abandoned", False) for m in show(capsys, "ses_r")["messages"]] == [False, False, False, False, True]
    _oc_sql(db, "update session set revert = null, time_updated = time_updated + 1 where id = 'ses_r'")
    assert search(capsys, "mole")[0]["branch"] == "active"


def test_opencode_13_archived_session_is_marked_and_searchable(home, capsys):
    """Rule 13. ``session.time_archived`` set: archived (JSON ``archived: true``, the row)."""
    from test_sources_opencode import text

    db = _oc_db(home, ("ses_a", "Old gerbil notes"), ("ses_b", "Fresh gerbil notes"))
    db.message("ses_a", "user", text("where are the gerbil notes for the hamster"))
    db.message("ses_b", "user", text("gerbil notes again"))
    _oc_sql(db, "update session set time_archived = 1773490000000, time_updated = time_updated + 1 where id = 'ses_a'")
    hits = {h["session_id"]: h["archived"] for h in search(capsys, "gerbil")}
    assert hits == {"ses_a": True, "ses_b": False}
    assert show(capsys, "ses_a")["session"]["archived"] is True
    assert "archived" in row_text(home, "hamster")


def test_opencode_14_session_message_rows_are_read_once(home, capsys):
    """Rule 14. The V2 ``session_message`` table (``seq`` order, ``data`` without ``id``/``type``)
    is read, and a message the legacy ``message``/``part`` tables also hold (same id, or same role
    and creation time) is not doubled."""
    from test_sources_opencode import T0, text

    db = _oc_db(home, ("ses_v", "Port the marten importer"))
    m1 = db.message("ses_v", "user", text("port the marten importer to rust"))  # also in session_message
    rows = [
        (m1, "user", 1, {"text": "port the marten importer to rust", "files": [], "agents": [], "references": [],
                         "time": {"created": T0 + 1000}}),
        ("smsg_2", "assistant", 2, {"agent": "build", "model": {"id": "m", "providerID": "p"},
                                    "time": {"created": T0 + 2000, "completed": T0 + 2500},
                                    "content": [{"type": "reasoning", "id": "r", "text": "check the crate layout"},
                                                {"type": "text", "id": "t", "text": "Ported the marten importer."},
                                                {"type": "tool", "id": "c", "name": "bash",
                                                 "state": {"status": "completed", "input": {"command": "cargo test"},
                                                           "content": [{"type": "text", "text": "ok"}],
                                                           "structured": {}, "result": None},
                                                 "time": {"created": T0 + 2100}}]}),
        ("smsg_3", "shell", 3, {"callID": "x", "command": "ls crates", "output": "marten",
                                "time": {"created": T0 + 3000}}),
        ("smsg_4", "model-switched", 4, {"model": {"id": "m2", "providerID": "p"}, "time": {"created": T0 + 3500}}),
        ("smsg_5", "user", 5, {"text": "now the weasel exporter", "files": [], "agents": [], "references": [],
                               "time": {"created": T0 + 4000}}),
        ("smsg_6", "hologram", 6, {"time": {"created": T0 + 4500}}),
    ]
    for mid, kind, seq, data in rows:
        _oc_sql(db, "insert into session_message values (?,?,?,?,?,?,?)", mid, "ses_v", kind, seq,
                data["time"]["created"], data["time"]["created"], json.dumps(data))
    hits = agree(capsys, "rust", "ses_v", "port the marten importer")
    page = show(capsys, "ses_v")
    assert [(m["role"], m["label"], m["text"]) for m in page["messages"]] == [
        ("user", "user", "port the marten importer to rust"), ("assistant", "thinking", "check the crate layout"),
        ("assistant", "assistant", "Ported the marten importer."), ("assistant", "tool-call:bash", '{"command": "cargo test"}'),
        ("tool", "tool:bash", "ok"), ("user", "user", "! ls crates"), ("tool", "tool:bash-mode", "marten"),
        ("user", "user", "now the weasel exporter")]
    assert hits["title"] == "Port the marten importer"
    agree(capsys, "weasel", "ses_v", "weasel exporter")


def test_opencode_12_13_legacy_storage_revert_and_archive(tmp_path):
    """Rules 12-13 in the legacy ``storage/`` layout: the session file's ``revert`` and
    ``time.archived``."""
    from test_sources_opencode import build_legacy

    f = build_legacy(tmp_path / "opencode")
    meta = json.loads(f.read_text())
    meta["revert"] = {"messageID": "msg_0002", "partID": "prt_0003"}
    meta["time"]["archived"] = meta["time"]["updated"]
    f.write_text(json.dumps(meta))
    read = SOURCES["opencode"].read(f)
    assert [m.text for m in read.messages][:2] == ["port the quibbleworth parser to rust", "nom or pest"]
    assert read.session.extra["off_branch"] == [[2, 6]] and read.session.archived is True


# -- Copilot CLI ---------------------------------------------------------------------------------
# github/copilot-sdk nodejs/src/generated/session-events.ts at cc0438d66e3e: UserMessageData.source
# ("skill-pdf", "agent-<agent-id>"), isAutopilotContinuation, and every event's agentId.

COP = "c0c0c0c0-1111-4222-8333-444455556666"


def _copilot(home, *events) -> Path:
    """``~/.copilot/session-state/<id>/events.jsonl`` with a ``session.start`` and ``events``
    (``(type, data, extra envelope fields)``), chained by ``parentId`` as the CLI writes them."""
    path = home / ".copilot" / "session-state" / COP / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines, parent = [], None
    for n, (kind, data, extra) in enumerate([("session.start", {"sessionId": COP, "context": {"cwd": "/home/dev/cop"}}, {})]
                                            + list(events)):
        eid = f"e{n:03d}"
        lines.append({"type": kind, "data": data, "id": eid, "parentId": parent,
                      "timestamp": f"2026-03-14T10:{n:02d}:00.000Z", **extra})
        parent = eid
    path.write_text("".join(json.dumps(d) + "\n" for d in lines), "utf-8")
    return path


def test_copilot_15_injected_and_subagent_messages_are_not_the_users(home, capsys):
    """Rule 15. A ``user.message`` with a ``source`` or ``isAutopilotContinuation`` is not the
    user's prompt (never the title; shown with its source); events with ``agentId`` belong to
    that sub-agent (sidechain messages, not the main thread)."""
    path = _copilot(
        home,
        ("user.message", {"content": "<skill>convert pdfs with the ibex tool</skill>", "source": "skill-pdf"}, {}),
        ("user.message", {"content": "keep going on the ibex migration", "isAutopilotContinuation": True}, {}),
        ("user.message", {"content": "migrate the ibex reports to parquet"}, {}),
        ("user.message", {"content": "scan the ibex folder for csv files"}, {"agentId": "agent-7"}),
        ("assistant.message", {"content": "Found 12 csv files in the ibex folder.", "toolRequests": []},
         {"agentId": "agent-7"}),
        ("user.message", {"content": "summary from the helper: 12 files", "source": "agent-agent-7"}, {}),
        ("assistant.message", {"content": "Migrated the ibex reports.", "toolRequests": []}, {}),
        ("session.future_event", {"x": 1}, {}),
    )
    read = SOURCES["copilot"].read(path)
    assert [(m.role.value, m.label, m.sidechain) for m in read.messages] == [
        ("system", "context:skill-pdf", False), ("system", "context:autopilot", False), ("user", "user", False),
        ("user", "user", True), ("assistant", "assistant", True), ("system", "context:agent-agent-7", False),
        ("assistant", "assistant", False)]
    assert read.session.title == "migrate the ibex reports to parquet" and read.session.anchor_index == 2
    assert read.state["unknown_kinds"] == {"session.future_event": 1}
    hit = agree(capsys, "parquet", COP, "migrate the ibex reports")
    assert hit["title"] == "migrate the ibex reports to parquet"
    page = show(capsys, COP)
    assert [m.get("sidechain", False) for m in page["messages"]] == [False, False, False, True, True, False, False]
    assert page["messages"][0]["label"] == "context:skill-pdf"
    assert search(capsys, "convert") == []  # a skill injection is not what the user said


def test_copilot_15_title_changed_names_the_session(home):
    """``session.title_changed`` (``data.title``) is the session's title."""
    path = _copilot(home, ("user.message", {"content": "fix the lynx build"}, {}),
                    ("session.title_changed", {"title": "Lynx build repair"}, {}))
    assert SOURCES["copilot"].read(path).session.title == "Lynx build repair"


# -- OpenClaw ------------------------------------------------------------------------------------
# openclaw/openclaw: transcript_events.event_zstd (agent schema >= 23), session_transcript_archives
# (openclaw-agent-schema.sql; session-accessor.sqlite-archive-store-kernel.ts).

OC1, OC2, OC3 = "0c000000-0000-4000-8000-000000000001", "0c000000-0000-4000-8000-000000000002", \
    "0c000000-0000-4000-8000-000000000003"


def test_openclaw_16_zstd_events_and_transcript_archives(home, capsys):
    """Rule 16. Large events are ``event_zstd`` (``event_json`` NULL): read by a default install
    (``zstandard`` is a dependency). Deleted and reset sessions kept in
    ``session_transcript_archives`` (identity or zstd blobs of the session's JSONL) are read,
    marked archived, and not resumable."""
    import sqlite3

    import zstandard

    from crabsearch.sources import openclaw
    from test_sources_openclaw import make_db

    openclaw._SUMMARY.clear()
    openclaw._ARCHIVES.clear()
    live = V3Session(OC1, cwd="/srv/bot")
    live.user("why is the kinkajou cron slow")
    live.assistant("The kinkajou cron waits on a lock.")
    db = make_db(home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite", {OC1: live},
                 nodes=[("agent:main:main", OC1, {"sessionId": OC1, "label": "Kinkajou cron"})])
    con = sqlite3.connect(db)
    big = V3Session(OC1, cwd="/srv/bot")
    big.n = 10
    big.leaf = live.leaf
    big.assistant("A long answer about the capuchin backlog " + "and more " * 50)
    event = json.dumps(big.entries[-1]).encode()
    con.execute("INSERT INTO transcript_events VALUES (?, 99, NULL, 1784538000099, ?)",
                (OC1, zstandard.ZstdCompressor().compress(event)))
    con.execute("CREATE TABLE session_transcript_archives (session_id TEXT NOT NULL, generation TEXT NOT NULL, "
                "session_key TEXT NOT NULL, reason TEXT NOT NULL, encoding TEXT NOT NULL, archive_blob BLOB NOT NULL, "
                "archive_sha256 TEXT NOT NULL, archive_name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, "
                "published_at INTEGER, PRIMARY KEY (session_id, generation)) STRICT")
    gone = V3Session(OC2, cwd="/srv/bot")
    gone.user("the tamarin deploy notes")
    gone.assistant("Tamarin deploys on Fridays.")
    reset = V3Session(OC3, cwd="/srv/bot")
    reset.user("old chat about the marmot importer")
    for sid, reason, encoding, blob in ((OC2, "deleted", "zstd", zstandard.ZstdCompressor().compress(gone.data())),
                                        (OC3, "reset", "identity", reset.data())):
        con.execute("INSERT INTO session_transcript_archives VALUES (?,?,?,?,?,?,?,?,?,NULL)",
                    (sid, "g1", "agent:main:main", reason, encoding, blob, hashlib_hex(blob), f"{sid}.{reason}.jsonl",
                     1784600000000))
    con.commit()
    con.close()
    hit = agree(capsys, "capuchin", OC1, "capuchin backlog", role="assistant")
    assert hit["archived"] is False and hit["resume_command"].endswith("openclaw tui --session agent:main:main")
    for query, sid, text in (("tamarin", OC2, "tamarin deploy notes"), ("marmot", OC3, "marmot importer")):
        hit = agree(capsys, query, sid, text)
        assert hit["archived"] is True and hit["resume_command"] is None
        assert hit["path"].endswith(f"#archive:{sid}.{'deleted' if sid == OC2 else 'reset'}.jsonl")
    assert "archived" in row_text(home, "tamarin")


def hashlib_hex(blob: bytes) -> str:
    import hashlib

    return hashlib.sha256(blob).hexdigest()


# -- Cline ---------------------------------------------------------------------------------------
# cline/cline sdk/packages/core at 21cb8d2525bc: session-manifest.ts, fixtures/session/session.json
# and session.messages.json, session-artifacts.ts (sub-agent files), types/common.ts (sources).


def _cline(home, sid, messages, manifest=None, agent="lead", stem=None, dir_id=None) -> Path:
    """``~/.cline/data/sessions/<dir>/<stem>.messages.json`` (+ the manifest ``<sid>.json``)."""
    d = home / ".cline" / "data" / "sessions" / (dir_id or sid)
    d.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        (d / f"{sid}.json").write_text(json.dumps(manifest), "utf-8")
    body = {"version": 1, "updated_at": "2026-07-15T05:42:04.818Z", "agent": agent, "sessionId": sid,
            "messages": messages}
    path = d / f"{stem or sid}.messages.json"
    path.write_text(json.dumps(body), "utf-8")
    return path


def _manifest(sid, title, source="cli", fork=None, ended="2026-07-15T05:42:04.865Z"):
    meta = {"source": source, "title": title}
    if fork:
        meta["fork"] = {"forkedFromSessionId": fork, "forkedAt": "2026-07-15T05:42:01.804Z", "source": source}
    return {"version": 1, "session_id": sid, "source": source, "pid": 1, "started_at": "2026-07-15T05:40:00.000Z",
            "ended_at": ended, "status": "completed", "interactive": True, "provider": "cline",
            "model": "m", "cwd": "/home/dev/cl", "workspace_root": "/home/dev/cl", "enable_tools": True,
            "enable_spawn": True, "enable_teams": False, "metadata": meta}


def test_cline_17_sdk_sessions_manifest_fork_subagent_and_editor(home, capsys):
    """Rule 17. The SDK manifest gives title, times and the fork origin (a fork copies messages
    with their ids: shown once); a sub-agent's messages file is its own session linked to the
    root; a session the VS Code extension created is labelled so and has no CLI resume command."""
    first = [{"id": "msg_1", "role": "user", "content": [{"type": "text", "text": "tune the heron cache"},
                                                         {"type": "file", "path": "/x.py", "content": "SECRET=1"}]},
             {"id": "msg_2", "role": "assistant", "content": [{"type": "text", "text": "Tuned the heron cache."}]}]
    _cline(home, "1784094053271_p8pzo", first, _manifest("1784094053271_p8pzo", "Heron cache tuning"))
    _cline(home, "1784094124598_rruoq",
           first + [{"id": "msg_3", "role": "user", "content": [{"type": "text", "text": "now the egret index"}]}],
           _manifest("1784094124598_rruoq", "Heron cache tuning (fork)", fork="1784094053271_p8pzo",
                     ended="2026-07-15T06:00:00.000Z"))
    _cline(home, "1784094053271_p8pzo__explorer",
           [{"id": "s1", "role": "user", "content": [{"type": "text", "text": "list the ibis modules"}]},
            {"id": "s2", "role": "assistant", "content": [{"type": "text", "text": "Found four ibis modules."}]}],
           agent="subagent", stem="explorer", dir_id="1784094053271_p8pzo")
    _cline(home, "1784094999000_vscod", [{"id": "v1", "role": "user", "content": [{"type": "text", "text": "fix the stork lint"}]}],
           _manifest("1784094999000_vscod", "Stork lint", source="vscode"))
    [hit] = search(capsys, "heron")
    assert hit["session_id"] == "1784094124598_rruoq" and hit["also_in"] == 1  # the fork copy, shown once
    assert hit["title"] == "Heron cache tuning (fork)" and hit["app"] == "Cline CLI"
    assert hit["started"] == "2026-07-15T05:40:00.000Z"
    assert hit["resume_command"] == "cd /home/dev/cl && cline --id 1784094124598_rruoq"
    assert search(capsys, "secret") == []  # attached file contents are not text
    sub = agree(capsys, "four", "1784094053271_p8pzo__explorer", "four ibis modules", role="assistant")
    assert sub["parent_session_id"] == "1784094053271_p8pzo" and sub["parent_title"] == "Heron cache tuning"
    assert sub["resume_command"] == "cd /home/dev/cl && cline --id 1784094053271_p8pzo"
    ide = agree(capsys, "stork", "1784094999000_vscod", "fix the stork lint")
    assert ide["app"] == "Cline (VS Code)" and ide["resume_command"] is None
    assert "Cline (VS Code)" in row_text(home, "stork")


# -- Cursor and pi -------------------------------------------------------------------------------
# Cursor (closed): kenn-io/agentsview issue 1627 / PR 1628 (agent-transcripts/<parent>/subagents/),
# tenequm/pond issue 207 (chats/<hash>/<chat id>/store.db, meta '0' = hex JSON with name).
# pi: badlogic/pi-mono session-manager.ts buildSessionInfo (83378aad7e74).


def _cursor_transcript(path: Path, *texts) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, t in enumerate(texts):
        role = "user" if n % 2 == 0 else "assistant"
        text = f"<timestamp>Mon Mar 16 2026</timestamp>\n<user_query>\n{t}\n</user_query>" if role == "user" else t
        lines.append({"role": role, "message": {"content": [{"type": "text", "text": text}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


def _cursor_store(home, chat_id, name) -> None:
    import sqlite3

    db = home / ".cursor" / "chats" / "5f1e0c" / chat_id / "store.db"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    meta = {"agentId": chat_id, "name": name, "createdAt": 1773600000000, "mode": "default"}
    con.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
    con.commit()
    con.close()


def test_cursor_18_subagents_titles_and_ide_transcripts(home, capsys):
    """Rule 18 (Cursor). ``<parent>/subagents/<child>.jsonl`` is a session linked to its parent;
    the CLI's ``store.db`` name titles a chat; a transcript without a CLI store where the CLI
    keeps them is the IDE's (labelled, no CLI resume command)."""
    agents = home / ".cursor" / "projects" / "home-dev-curs" / "agent-transcripts"
    cli_id, ide_id = "c11c11c1-0000-4000-8000-000000000001", "1de1de1d-0000-4000-8000-000000000002"
    _cursor_transcript(agents / cli_id / f"{cli_id}.jsonl", "audit the puffin api", "Delegating.")
    _cursor_transcript(agents / cli_id / "subagents" / "sub-1.jsonl", "list every puffin endpoint",
                       "Found nine puffin endpoints with quokka tags.")
    _cursor_transcript(agents / f"{ide_id}.jsonl", "refactor the wren form", "Refactored.")
    _cursor_store(home, cli_id, "Puffin API audit")
    hit = agree(capsys, "quokka", "sub-1", "nine puffin endpoints", role="assistant")
    assert hit["parent_session_id"] == cli_id and hit["parent_title"] == "Puffin API audit"
    assert hit["title"] == "list every puffin endpoint"
    [main] = [h for h in search(capsys, "audit") if h["session_id"] == cli_id]
    assert main["title"] == "Puffin API audit" and main["app"] == "Cursor CLI"
    assert main["resume_command"].endswith(f"cursor-agent --resume {cli_id}")
    ide = agree(capsys, "wren", ide_id, "refactor the wren form")
    assert ide["app"] == "Cursor IDE" and ide["resume_command"] is None
    assert "Cursor IDE" in row_text(home, "wren")


def test_pi_18_title_is_the_first_user_message_in_file_order(home):
    """Rule 18 (pi). pi's session picker shows the ``session_info`` name, else the first user
    message in file order (``buildSessionInfo``), even when a later branch replaced it."""
    s = V3Session("p1", cwd="/w")
    s.user("first question about the axolotl build")
    s.assistant("an answer")
    s.branch(None)
    s.user("another root: the newt build")
    read = SOURCES["pi"].read(s.write(home / ".pi" / "agent" / "sessions" / "--w--" / "t_p1.jsonl"))
    assert read.session.title == "first question about the axolotl build"
    s.entry("session_info", name="Axolotl and newt")
    read = SOURCES["pi"].read(s.write(home / ".pi" / "agent" / "sessions" / "--w--" / "t_p1.jsonl"))
    assert read.session.title == "Axolotl and newt"


# -- Drift shows itself --------------------------------------------------------------------------


def test_drift_unknown_record_kinds_are_listed_by_status(home, capsys):
    """Every reader counts the record kinds it does not know, per agent and kind with an example
    file; ``status`` and ``status --json`` list them; an appended read adds to the count."""
    s = ClaudeSession(home, session_id=SID).user("hello drift")
    s.lines.append({"type": "foo-bar", "uuid": "x1", "sessionId": SID})
    s.lines.append({"type": "foo-bar", "uuid": "x2", "sessionId": SID})
    path = s.write()
    c = CodexSession(home, session_id=CODEX).user("codex drift")
    c.lines.append({"timestamp": "2026-03-14T10:05:00.000Z", "type": "galaxy_brain", "payload": {"x": 1}})
    c.write()
    cli_ok(capsys, "index")
    out = cli_ok(capsys, "status")
    assert f"claude: 2 lines of unknown kind `foo-bar` (e.g. {path})" in out
    assert "codex: 1 line of unknown kind `galaxy_brain`" in out
    with open(path, "a", encoding="utf-8") as fh:  # an appended read adds to the count
        fh.write(json.dumps({"type": "foo-bar", "uuid": "x3", "sessionId": SID}) + "\n")
    cli_ok(capsys, "index")
    status = json.loads(cli_ok(capsys, "status", "--json"))
    assert {"agent": "claude", "kind": "foo-bar", "records": 3, "files": 1, "example": str(path)} in status["unknown_kinds"]
    assert [u["kind"] for u in status["unknown_kinds"]] == ["foo-bar", "galaxy_brain"]
    path.write_text(path.read_text().replace("foo-bar", "pr-link"))  # rewritten: counted again
    cli_ok(capsys, "index")
    assert [u["kind"] for u in json.loads(cli_ok(capsys, "status", "--json"))["unknown_kinds"]] == ["galaxy_brain"]


def test_drift_kind_names_are_bounded(tmp_path):
    """A hostile kind name is cut and made printable; past 64 kinds per file the rest are counted
    together."""
    from crabsearch.sources.base import note_unknown

    state: dict = {}
    note_unknown(state, "x" * 500 + "\x1b[31m")
    note_unknown(state, ["a", "list"])
    for n in range(78):
        note_unknown(state, f"kind-{n}")
    assert "x" * 64 in state["unknown_kinds"] and "(list)" in state["unknown_kinds"]
    assert len(state["unknown_kinds"]) == 65 and state["unknown_kinds"]["(other kinds)"] == 16

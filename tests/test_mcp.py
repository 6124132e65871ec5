"""``crabsearch mcp`` (issue 12): the three tools through the SDK's own client, in process.

Every tool, every cap, masking, tool output only with the opt-in, paging to the end, id
prefixes, each bad call (and the server serving on), a session appended between two calls,
and the structured results checked against the declared output schemas. The subprocess over
stdio is ``test_mcp_stdio.py``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone

import jsonschema
import pytest
from mcp import Client

from crabsearch.index import Indexer, RefreshReport
from crabsearch.mcp_server import build_server
from crabsearch.sources import AGENTS
from crabsearch.mcp_tools import (ENVELOPE_BYTES, LIST_TEXT_CAP, MAX_HITS, MAX_PAGE, MAX_RECENT, MAX_RESPONSE_BYTES,
                                  MAX_WINDOW,
                                  SEARCH_TEXT_CAP, TOOL_OUTPUT_HIDDEN, Door, Refresher, wire_bytes)
from crabsearch.search import Engine
from crabsearch.sources import SOURCES

from builders import ClaudeSession, CodexSession, skipping_session, unwritable
from secret_samples import _SK_PROJ

CRON = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
API = "019a0000-1111-7222-8333-444455556666"
LONG = "9f000000-3333-4444-8555-666677778888"
TWIN_A, TWIN_B = "abcd1111-0000-4000-8000-000000000001", "abcd2222-0000-4000-8000-000000000002"
ITEM_KEYS = {"message_index", "role", "label", "timestamp", "text", "truncated", "hit"}
HIT_KEYS = {"session_id", "agent", "title", "project", "updated", "message_index", "message_count", "route",
            "resume_command", "url", "notes", "window"}
T = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def cron_session(home):
    """A cron fix with a secret in the text and in a tool's output."""
    start = datetime(2026, 3, 19, 9, tzinfo=timezone.utc)
    return (ClaudeSession(home, session_id=CRON, cwd="/home/dev/webapp", start=start)
     .user("The nightly cron job runs twice at midnight. Can you find out why?")
     .assistant("I'll look at the crontab and the systemd timers.")
     .tool("Bash", {"command": "crontab -l"}, f"0 0 * * * run.sh\nOPENAI_API_KEY={_SK_PROJ}")
     .assistant(f"Two identical cron entries. The deploy key {_SK_PROJ} was also in the crontab.")
     .user("Remove the duplicate and make the deploy script idempotent.")
     .assistant("Done: deploy.sh now checks the crontab before adding the entry.")
     .title("Fix the double cron run").write())


def build_home(home):
    """Sessions for every test here: a cron fix with a secret and a tool call, a Codex session,
    a 120-message session with very long messages, 25 sessions that all say ``pelican``, two
    sessions whose ids share a prefix, one with terminal controls."""
    cron_session(home)
    (CodexSession(home, session_id=API, cwd="/home/dev/api", start=datetime(2026, 3, 18, 15, tzinfo=timezone.utc))
     .user("The HTTP client retry backoff explodes to minutes after a few failures")
     .assistant("The backoff doubles without a cap. I'll add a max delay and jitter.").write())
    long = ClaudeSession(home, session_id=LONG, cwd="/home/dev/bigrepo", start=T).title("Very long refactor")
    for i in range(60):
        filler = " ".join(f"word{i}x{j}" for j in range(900))  # ~9,000 characters
        long.user(f"step {i}: continue the refactor of module {i}. {filler}")
        long.assistant(f"{filler} and at the very end the albatross of module {i}")
    long.write()
    pelicans(home)
    ClaudeSession(home, session_id=TWIN_A, cwd="/home/dev/twins").user("twin session heron one").write()
    ClaudeSession(home, session_id=TWIN_B, cwd="/home/dev/twins").user("twin session heron two").write()
    flamingo(home)
    return home


def pelicans(home):
    """25 sessions that all say ``pelican``, each message over 1,024 characters."""
    for n in range(25):
        (ClaudeSession(home, session_id=f"b0000000-0000-4000-8000-{n:012d}", cwd=f"/home/dev/birds{n}",
                       start=datetime(2026, 2, 1 + n % 27, 8, tzinfo=timezone.utc))
         .user(f"pelican number {n} " + "feathers " * 150).assistant("pelican noted " + "wings " * 150)
         .user("more about the pelican").assistant("the pelican again").write())


FLAMINGO = "it prints \x1b]52;c;SGVsbG8=\x07 and \u202eevil\x9b"


def flamingo(home):
    """A session whose text holds an OSC 52 sequence, a bidi override and a C1 control."""
    (ClaudeSession(home, session_id="e5c0ffee-0000-4000-8000-000000000001", cwd="/home/dev/term")
     .user("show the escape in the flamingo log").assistant(FLAMINGO).write())


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp")
    home = build_home(root / "home")
    index_dir = root / "index"
    Indexer(index_dir, env={"HOME": str(home)}).refresh()
    return home, index_dir


def make_door(home, index_dir, *, tools: bool = False, every: float = 0.0) -> Door:
    indexer = Indexer(index_dir, env={"HOME": str(home)}, index_tool_output=tools)
    return Door(Engine(index_dir), indexer, tool_output=tools, refresher=Refresher(indexer, every=every))


@pytest.fixture
def door(indexed):
    return make_door(*indexed)


async def with_client(door, calls, *, mode: str = "legacy"):
    """Run ``calls(client, schemas)`` against ``door``'s server through the SDK's client."""
    async with Client(build_server(door), mode=mode) as client:
        tools = (await client.list_tools()).tools
        return await calls(client, {t.name: t.output_schema for t in tools})


def run(door, calls, **kw):
    try:
        return asyncio.run(with_client(door, calls, **kw))
    except BaseExceptionGroup as group:  # the client's task groups wrap a failed assertion
        leaf = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None


async def call(client, schemas, name, **args):
    """A successful call's ``(structured, text)``, checked against the declared schema and the
    64 KB cap."""
    r = await client.call_tool(name, args)
    assert not r.is_error, r.content[0].text
    assert len(r.content) == 1 and r.content[0].type == "text"
    jsonschema.validate(r.structured_content, schemas[name])
    assert wire_bytes(r.structured_content, r.content[0].text) <= MAX_RESPONSE_BYTES - ENVELOPE_BYTES
    return r.structured_content, r.content[0].text


async def error(client, name, **args) -> str:
    r = await client.call_tool(name, args)
    assert r.is_error and r.structured_content is None
    [block] = r.content
    assert "\n" not in block.text and "Traceback" not in block.text
    return block.text


def test_the_tools_and_their_arguments(door):
    async def calls(client, schemas):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"search_sessions", "list_messages", "recent_sessions"}
        props = {name: {k: v.get("default") for k, v in t.input_schema["properties"].items()}
                 for name, t in tools.items()}
        assert props == {
            "search_sessions": {"query": None, "limit": 5, "context_before": 2, "context_after": 2, "agent": None,
                                "project": None, "since": None},
            "list_messages": {"session_id": None, "offset": 0, "limit": 20},
            "recent_sessions": {"limit": 10, "agent": None, "project": None}}
        ranges = {name: {k: (v.get("minimum"), v.get("maximum")) for k, v in t.input_schema["properties"].items()
                         if v.get("type") == "integer"} for name, t in tools.items()}
        assert ranges == {"search_sessions": {"limit": (1, MAX_HITS), "context_before": (0, MAX_WINDOW - 1),
                                              "context_after": (0, MAX_WINDOW - 1)},
                          "list_messages": {"offset": (0, None), "limit": (1, MAX_PAGE)},
                          "recent_sessions": {"limit": (1, MAX_RECENT)}}
        for t in tools.values():
            assert all(v.get("description") for v in t.input_schema["properties"].values())
            if "agent" in t.input_schema["properties"]:
                agent = t.input_schema["properties"]["agent"]["anyOf"]
                assert agent == [{"type": "string", "enum": list(SOURCES)}, {"type": "null"}]
        assert tools["search_sessions"].input_schema["required"] == ["query"]
        assert tools["list_messages"].input_schema["required"] == ["session_id"]
        for t in tools.values():
            assert t.output_schema and t.output_schema["type"] == "object"
            assert t.annotations.read_only_hint and not t.annotations.destructive_hint
        guide = tools["search_sessions"].description
        assert "2-6 words" in guide and "list_messages" in guide and "context_before" in guide
        assert "next_offset" in tools["list_messages"].description

    run(door, calls)


def test_search_sessions_hits_windows_and_text(door):
    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="cron job midnight")
        assert data["query"] == "cron job midnight" and data["route"] == "all"
        assert not data["indexing"] and not data["trimmed"]
        [hit] = [h for h in data["hits"] if h["session_id"] == CRON]
        assert set(hit) == HIT_KEYS
        assert hit["agent"] == "claude" and hit["title"] == "Fix the double cron run"
        assert hit["project"] == "/home/dev/webapp" and hit["updated"].endswith("Z") and hit["message_index"] == 0
        assert hit["resume_command"] == f"cd /home/dev/webapp && claude --resume {CRON}"
        assert [i["message_index"] for i in hit["window"]] == [0, 1, 2]  # 2 after, none before the first
        assert all(set(i) == ITEM_KEYS for i in hit["window"]) and [i["hit"] for i in hit["window"]] == [1, 0, 0]
        lines = text.splitlines()
        assert lines[0] == ("Fix the double cron run · claude · /home/dev/webapp · 2026-03-19 09:03 UTC · "
                            "matched message #0")
        assert lines[1] == f"session_id {CRON} (7 messages)"
        assert lines[2] == "→ [user #0] The nightly cron job runs twice at midnight. Can you find out why?"
        assert lines[3] == "  [assistant #1] I'll look at the crontab and the systemd timers."
        assert lines[4] == '  [assistant #2] tool-call:Bash: {"command": "crontab -l"}'
        data, _ = await call(client, schemas, "search_sessions", query="backoff", agent="codex")
        assert [h["session_id"] for h in data["hits"]] == [API]
        data, _ = await call(client, schemas, "search_sessions", query="backoff", agent="claude")
        assert data["hits"] == []
        data, text = await call(client, schemas, "search_sessions", query="zqxjvbnwk")
        assert data["hits"] == [] and data["route"] is None and text == "No sessions match 'zqxjvbnwk'."

    run(door, calls)


def test_search_filters_project_and_since(door):
    async def calls(client, schemas):
        data, _ = await call(client, schemas, "search_sessions", query="pelican", project="birds3", limit=20)
        assert [h["project"] for h in data["hits"]] == ["/home/dev/birds3"]
        data, _ = await call(client, schemas, "search_sessions", query="pelican", since="2026-02-20", limit=20)
        assert data["hits"] and all(h["updated"] >= "2026-02-20" for h in data["hits"])
        assert len(data["hits"]) < 20
        data, _ = await call(client, schemas, "search_sessions", query="cron", project="/home/dev", since="2026-03-01")
        assert [h["session_id"] for h in data["hits"]] == [CRON]

    run(door, calls)


def test_caps_are_clamped_never_an_error(door):
    async def calls(client, schemas):
        data, _ = await call(client, schemas, "search_sessions", query="pelican", limit=500, context_before=0,
                             context_after=0)
        assert len(data["hits"]) == MAX_HITS
        data, _ = await call(client, schemas, "search_sessions", query="pelican", limit=-3)
        assert len(data["hits"]) == 1
        data, _ = await call(client, schemas, "search_sessions", query='"albatross of module 30"',
                             context_before=100, context_after=100)
        [hit] = data["hits"]
        window = hit["window"]
        assert len(window) == MAX_WINDOW and sum(i["hit"] for i in window) == 1
        idx = [i["message_index"] for i in window]
        assert idx == list(range(idx[0], idx[0] + MAX_WINDOW)) and hit["message_index"] in idx
        assert all(len(i["text"]) <= SEARCH_TEXT_CAP and i["truncated"] for i in window)
        the_hit = next(i for i in window if i["hit"])
        assert "albatross of module 30" in the_hit["text"]  # cut around the match
        data, _ = await call(client, schemas, "search_sessions", query="albatross", context_before=-5,
                             context_after=-1)
        assert all(len(h["window"]) == 1 for h in data["hits"])
        page, _ = await call(client, schemas, "list_messages", session_id=LONG, offset=0, limit=3)
        assert all(len(m["text"]) == LIST_TEXT_CAP and m["truncated"] for m in page["messages"])
        assert page["messages"][0]["text"].startswith("step 0: continue the refactor")

    run(door, calls)


def test_a_whole_response_stays_under_64_kb(door):
    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="pelican", limit=20, context_before=7,
                                context_after=8)
        assert data["trimmed"] and 1 <= len(data["hits"]) < 20
        assert data["notes"][-1].startswith(
            f"the answer was cut to stay under 64 KB ({len(data['hits'])} of 20 sessions shown)")
        assert wire_bytes(data, text) > MAX_RESPONSE_BYTES - 16 * 1024  # not cut more than needed
        page, text = await call(client, schemas, "list_messages", session_id=LONG, offset=10, limit=50)
        n = len(page["messages"])
        assert page["trimmed"] and 1 <= n < 50 and page["next_offset"] == 10 + n
        assert "(page shortened to stay under 64 KB)" in text and f"(next page: offset={10 + n})" in text

    run(door, calls)


def test_one_window_too_large_alone_is_narrowed_around_the_hit(tmp_path):
    home = tmp_path / "home"
    s = ClaudeSession(home, session_id=CRON)
    for i in range(20):  # C0 controls: 6 bytes each in JSON
        s.user(f"ibis {i} " + "\x01" * 1100 if i == 10 else "\x02" * 1100)
    s.write()

    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="ibis", context_before=8,
                                context_after=8)
        [hit] = data["hits"]
        assert data["trimmed"] and 1 < len(hit["window"]) < MAX_WINDOW
        assert sum(i["hit"] for i in hit["window"]) == 1 and hit["message_index"] == 10
        return [i["message_index"] for i in hit["window"]]

    kept = run(make_door(home, tmp_path / "index"), calls)
    assert kept == list(range(kept[0], kept[-1] + 1)) and abs((10 - kept[0]) - (kept[-1] - 10)) <= 1


def test_a_filter_that_matches_no_session_is_named(door):
    """``search_sessions`` with ``project: "nope"`` answered "No sessions match 'cron'." as if the
    words had found nothing: the note says which filter matched no session at all."""
    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="cron", project="nope")
        assert data["hits"] == [] and "project:nope matches no session" in data["notes"]
        assert text.startswith("(project:nope matches no session)")
        data, _ = await call(client, schemas, "search_sessions", query="zzzzqqqq", project="webapp")
        assert not any("matches no session" in n for n in data["notes"])  # webapp has sessions

    run(door, calls)


def test_a_quoted_phrase_found_nowhere_searches_its_words(door):
    """A pasted line whose quoted part no session holds answered "No sessions match": its words
    are searched instead, and the notes and the text say so."""
    note = 'no exact match for "cron runs thrice": showing sessions with its words'

    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query='nightly "cron runs thrice" midnight')
        assert data["hits"][0]["session_id"] == CRON and note in data["notes"]
        assert f"({note})" in text

    run(door, calls)


def test_list_messages_marks_where_a_line_was_skipped(tmp_path):
    """A line the reader skipped (a 17 MB paste) left no mark in ``list_messages``: the messages
    around it were listed as if nothing was there. ``skipped_lines`` (a new key) and the text
    block say where each one was, among the messages of the page."""
    home = tmp_path / "home"
    sid = skipping_session(home).session_id
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()

    async def calls(client, schemas):
        page, text = await call(client, schemas, "list_messages", session_id=sid[:8])
        assert [(s["before"], s["line"], s["text"]) for s in page["skipped_lines"]] == [
            (1, 2, "line 2 skipped: broken JSON"), (2, 4, "line 4 skipped: broken JSON")]
        assert "the grebe question\n\n⊘ line 2 skipped: broken JSON\n\n[assistant #1]" in text
        assert "the grebe answer\n\n⊘ line 4 skipped: broken JSON\n" in text
        page, _ = await call(client, schemas, "list_messages", session_id=sid[:8], offset=0, limit=1)
        assert page["skipped_lines"] == []

    run(make_door(home, tmp_path / "index"), calls)


def test_list_messages_pages_to_the_end_by_prefix(door):
    async def calls(client, schemas):
        seen, offset = [], 0
        while offset is not None:
            page, text = await call(client, schemas, "list_messages", session_id=CRON[:8], offset=offset, limit=3)
            assert page["session_id"] == CRON and page["total"] == 7 and page["offset"] == offset
            assert all(set(m) == ITEM_KEYS - {"hit"} for m in page["messages"])
            seen += [m["message_index"] for m in page["messages"]]
            offset = page["next_offset"]
        assert seen == list(range(7)) and text.endswith("(end of the session)")
        page, text = await call(client, schemas, "list_messages", session_id=CRON, offset=4, limit=2)
        assert [m["label"] for m in page["messages"]] == ["assistant", "user"]
        assert text.splitlines()[0] == "Fix the double cron run · claude · /home/dev/webapp · messages #4-#5 of 7"
        assert "[user #5] user · 2026-03-19 09:03 UTC\nRemove the duplicate" in text

    run(door, calls)


def test_recent_sessions(door):
    async def calls(client, schemas):
        data, text = await call(client, schemas, "recent_sessions")
        assert len(data["sessions"]) == 10 and not data["indexing"]
        updated = [s["updated"] for s in data["sessions"]]
        assert updated == sorted(updated, reverse=True) and data["sessions"][0]["session_id"] == CRON
        assert set(data["sessions"][0]) == {"session_id", "agent", "title", "project", "updated", "message_count",
                                            "resume_command", "url"}
        assert text.splitlines()[0] == (f"Fix the double cron run · claude · /home/dev/webapp · 2026-03-19 09:03 UTC"
                                        f" · 7 messages · session_id {CRON}")
        data, _ = await call(client, schemas, "recent_sessions", agent="codex")
        assert [s["session_id"] for s in data["sessions"]] == [API]
        data, _ = await call(client, schemas, "recent_sessions", project="twins", limit=500)
        assert {s["session_id"] for s in data["sessions"]} == {TWIN_A, TWIN_B}

    run(door, calls)


def test_secrets_are_always_masked(door):
    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="deploy key", context_before=4,
                                context_after=4)
        assert _SK_PROJ not in str(data) and _SK_PROJ not in text
        hit = next(i for i in data["hits"][0]["window"] if i["hit"])
        assert "sk-pro" in hit["text"] and "***" in hit["text"]
        page, text = await call(client, schemas, "list_messages", session_id=CRON, limit=50)
        assert _SK_PROJ not in str(page) and _SK_PROJ not in text
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert not any("redact" in p or "reveal" in p for t in tools.values() for p in t.input_schema["properties"])

    run(door, calls)


def test_tool_output_only_with_the_opt_in(indexed, tmp_path):
    home, index_dir = indexed

    async def calls(client, schemas):
        page, text = await call(client, schemas, "list_messages", session_id=CRON, offset=3, limit=1)
        return page["messages"][0], text

    off, text = run(make_door(home, index_dir), calls)
    assert off["role"] == "tool" and off["text"] == TOOL_OUTPUT_HIDDEN and "run.sh" not in text
    small = tmp_path / "home"
    cron_session(small)
    on, text = run(make_door(small, tmp_path / "tools-index", tools=True), calls)
    assert on["role"] == "tool" and on["text"].startswith("0 0 * * * run.sh") and _SK_PROJ not in on["text"]


def test_bad_calls_are_one_sentence_and_the_server_serves_on(door):
    async def calls(client, schemas):
        assert await error(client, "search_sessions", query="   ") == \
            "The query is empty: give 2-6 words of what you are looking for."
        assert await error(client, "search_sessions") == "Missing argument query."
        assert await error(client, "search_sessions", query="cron", limit="many") == \
            "Argument limit must be a whole number."
        assert await error(client, "search_sessions", query="cron", limit=2.5) == \
            "Argument limit must be a whole number."
        for name, args in (("search_sessions", {"query": "cron", "limit": True}),
                           ("search_sessions", {"query": "cron", "context_after": False}),
                           ("list_messages", {"session_id": CRON, "offset": True}),
                           ("recent_sessions", {"limit": True})):
            arg = next(k for k, v in args.items() if isinstance(v, bool))
            assert await error(client, name, **args) == f"Argument {arg} must be a whole number."
        data, _ = await call(client, schemas, "search_sessions", query="pelican", limit="3")  # documented
        assert len(data["hits"]) == 3
        assert await error(client, "search_sessions", query=["cron"]) == "Argument query must be a string."
        assert (await error(client, "search_sessions", query="cron", agent="vim")).startswith(
            "agent: no agent is called “vim”; the agents are claude, codex,")
        assert (await error(client, "search_sessions", query="cron", since="last week")).startswith(
            "since:last week: that is not a date; write 2026-01-31, today,")
        assert "double quote" in await error(client, "recent_sessions", project='a"b')
        assert await error(client, "list_messages", session_id="nope-nope") == \
            "No session 'nope-nope' in the index: use an id from search_sessions or recent_sessions."
        assert "at least 4 characters" in await error(client, "list_messages", session_id="zz")
        assert (await error(client, "list_messages", session_id="abcd")).startswith(
            "The session id prefix 'abcd' matches 2 sessions:")
        assert await error(client, "list_messages", session_id=CRON, offset=7) == \
            "offset 7 is past the end: the session has 7 messages (message_index 0 to 6)."
        assert "Unknown tool" in await error(client, "drop_index")
        data, _ = await call(client, schemas, "search_sessions", query="backoff")  # still serving
        assert data["hits"]

    run(door, calls)


def test_a_crash_is_one_sentence_too(door, monkeypatch):
    def broken(*a, **kw):
        raise RuntimeError("segment went missing\nTraceback (most recent call last): ...")

    monkeypatch.setattr(door.engine, "search", broken)

    async def calls(client, schemas):
        text = await error(client, "search_sessions", query="cron")
        assert text.startswith("crabsearch could not answer this call") and "segment" not in text
        page, _ = await call(client, schemas, "list_messages", session_id=CRON, limit=1)
        assert page["messages"]

    run(door, calls)


def test_control_characters_stay_data_in_json_and_inert_in_text(door):
    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="flamingo")
        item = data["hits"][0]["window"][1]
        assert item["text"] == FLAMINGO  # faithful JSON
        assert "\x1b" not in text and "\u202e" not in text and "\x9b" not in text and "␛]52;c;SGVsbG8=␇" in text

    run(door, calls)


def test_a_session_written_between_two_calls_is_found_by_the_second(tmp_path):
    home = tmp_path / "home"
    first = ClaudeSession(home, session_id=CRON, cwd="/home/dev/webapp").user("the cron job runs twice")
    first.write()
    index_dir = tmp_path / "index"
    d = make_door(home, index_dir, every=1.0)  # the server's own throttle: one refresh a second at most

    async def calls(client, schemas):
        data, _ = await call(client, schemas, "search_sessions", query="narwhal")
        assert data["hits"] == []
        time.sleep(1.05)
        first.assistant("the narwhal in the crontab did it").write()  # appended to the open session
        CodexSession(home, session_id=API).user("a narwhal in the codex session").write()  # a new session
        data, _ = await call(client, schemas, "search_sessions", query="narwhal")
        assert {h["session_id"] for h in data["hits"]} == {CRON, API}
        page, _ = await call(client, schemas, "list_messages", session_id=CRON)
        assert page["total"] == 2

    run(d, calls)


def test_still_indexing_answers_from_what_is_committed(indexed):
    home, index_dir = indexed

    class SlowIndexer:
        def refresh(self, cancelled=None):
            time.sleep(1.0)
            return RefreshReport()

    d = Door(Engine(index_dir), SlowIndexer(), refresher=Refresher(SlowIndexer(), wait=0.05))

    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="backoff")
        assert data["indexing"] and data["hits"] and "still indexing" in data["notes"][-1]
        assert text.startswith("(crabsearch is still indexing")

    run(d, calls)


def test_no_spelling_repair_while_still_indexing(indexed):
    """While a refresh still runs (a first build), a word the index does not hold yet is not
    repaired to one it holds: ``flake`` became ``frame`` 5 s into a first build. Once done, it is."""
    home, index_dir = indexed

    class SlowIndexer:
        def refresh(self, cancelled=None):
            time.sleep(1.0)
            return RefreshReport()

    async def calls(client, schemas):
        data, _ = await call(client, schemas, "search_sessions", query="pelicam")
        return data

    building = run(Door(Engine(index_dir), SlowIndexer(), refresher=Refresher(SlowIndexer(), wait=0.05)), calls)
    assert building["indexing"] and building["route"] != "repair" and building["hits"] == []
    assert not any("instead of" in n for n in building["notes"])
    done = run(make_door(home, index_dir), calls)
    assert done["route"] == "repair" and "showing results for pelican instead of pelicam" in done["notes"]


def test_the_modern_in_process_path_too(door):
    async def calls(client, schemas):
        data, _ = await call(client, schemas, "recent_sessions", limit=2)
        assert len(data["sessions"]) == 2

    run(door, calls, mode="auto")


def test_a_door_needs_masking(indexed):
    home, index_dir = indexed
    with pytest.raises(ValueError, match="masks secrets"):
        Door(Engine(index_dir, redact=False), Indexer(index_dir, env={"HOME": str(home)}))


def test_long_arguments_are_not_sent_back(door):
    """A 1,000,000-character argument: the answer echoes only the part of the query searched
    (512 characters at most: it was all of it, twice, a 2 MB answer), and an error message
    quotes at most 200 characters of any argument, the tool's name included (an unknown agent's
    error also lists the known agents)."""
    big = "cron " * 200_000

    async def calls(client, schemas):
        r = await client.call_tool("search_sessions", {"query": big})
        data, text = r.structured_content, r.content[0].text
        assert not r.is_error and data["hits"]
        assert big.startswith(data["query"]) and 400 < len(data["query"]) <= 512
        assert "the query was cut to its first 512 characters" in data["notes"]
        assert wire_bytes(data, text) < 32 * 1024
        r = await client.call_tool("search_sessions", {"query": "zqxjvbnwk " * 100_000, "project": "webapp"})
        assert r.structured_content["query"].startswith("zqxjvbnwk") and len(r.content[0].text) < 1024
        for name, args in (("search_sessions", {"query": "x", "agent": big}),
                           ("search_sessions", {"query": "x", "since": big}),
                           ("list_messages", {"session_id": big}), (big, {})):
            text = await error(client, name, **args)
            names = len(", ".join(AGENTS)) if name == "search_sessions" and "agent" in args else 0
            assert len(text) < 400 + names and "cron " * 41 not in text and "cron " * 39 in text, text[:80]
            assert "…" in text

    run(door, calls)


def test_no_transcripts_at_all_is_said_not_answered_as_no_match(tmp_path):
    """A home with no agent's transcripts (a client that starts the server without the user's
    HOME, say): "No sessions match" let an agent conclude the user never worked on it; the
    answer says that nothing was found to search, in its notes and its text."""
    (tmp_path / "home").mkdir()

    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="cron")
        recent, recent_text = await call(client, schemas, "recent_sessions")
        return data, text, recent, recent_text

    data, text, recent, recent_text = run(make_door(tmp_path / "home", tmp_path / "index"), calls)
    assert data["hits"] == [] and recent["sessions"] == []
    for notes, shown in ((data["notes"], text), (recent["notes"], recent_text)):
        [note] = notes
        assert note.startswith(f"crabsearch found no agent transcripts under {tmp_path / 'home'}")
        assert f"({note})" in shown


def test_an_index_directory_that_cannot_be_made_is_an_error_not_no_match(indexed, tmp_path, caplog):
    """``--index-dir`` naming a folder that cannot be made (here under a file): every tool says
    so as an error (they answered "No sessions match" and an empty list)."""
    home, _ = indexed
    (tmp_path / "a-file").write_text("")

    async def calls(client, schemas):
        return [await error(client, "search_sessions", query="cron"), await error(client, "recent_sessions"),
                await error(client, "list_messages", session_id=CRON)]

    for text in run(make_door(home, tmp_path / "a-file" / "index"), calls):
        assert text.startswith(f"crabsearch cannot create its index in {tmp_path / 'a-file' / 'index'} "
                               "(Not a directory), so it has nothing to search")
    # its log line said "searching what is already indexed", of an index that does not exist
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert f"cannot create the index in {tmp_path / 'a-file' / 'index'} (Not a directory)" in logged
    assert "already indexed" not in logged


def test_an_index_that_cannot_be_updated_is_searched_with_a_note(tmp_path):
    """An index that exists but cannot be written (immutable, a read-only mount): the answer is
    from it, with a note that it could not be updated (a session written since is not in it)."""
    home, index_dir = tmp_path / "home", tmp_path / "index"
    cron_session(home)
    Indexer(index_dir, env={"HOME": str(home)}).refresh()
    ClaudeSession(home, session_id=TWIN_A).user("the cron job again").write()

    async def calls(client, schemas):
        data, text = await call(client, schemas, "search_sessions", query="cron")
        page = await client.call_tool("list_messages", {"session_id": TWIN_A})
        return data, text, page

    with unwritable(index_dir):
        data, text, page = run(make_door(home, index_dir), calls)
    assert [h["session_id"] for h in data["hits"]] == [CRON]
    assert data["notes"][0] == (f"crabsearch could not update its index in {index_dir} (Operation not permitted): "
                                "the answer is from what was indexed before")
    assert text.startswith(f"({data['notes'][0]})")
    assert page.is_error and "(crabsearch could not update its index" in page.content[0].text

"""``crabsearch mcp`` as a client starts it: a subprocess speaking MCP over stdio (issue 12).

One session through the SDK's stdio client (the initialize handshake real clients use, every
tool, a bad call), and one at the byte level: stdout carries only JSON-RPC lines, each under
64 KB, with no raw terminal control from a transcript in them; logs go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from crabsearch.index import Indexer
from crabsearch.mcp_tools import MAX_RESPONSE_BYTES
from crabsearch.sources import SOURCES

from all_agents import CLEARED_ENV
from builders import ClaudeSession
from test_mcp import CRON, FLAMINGO, cron_session, flamingo, pelicans

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(argv, env)`` of ``crabsearch mcp`` over an indexed home (the server's own refresh then
    finds nothing to do), with no config file and nothing from the machine's agent variables."""
    root = tmp_path_factory.mktemp("mcp-stdio")
    home = root / "home"
    cron_session(home)
    pelicans(home)
    flamingo(home)
    index_dir = root / "index"
    Indexer(index_dir, env={"HOME": str(home)}).refresh()
    drop = set(CLEARED_ENV) | {s.env_var for s in SOURCES.values() if s.env_var}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(HOME=str(home), CRABSEARCH_CONFIG=str(root / "no-config.toml"),
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return [sys.executable, "-m", "crabsearch", "mcp", "--index-dir", str(index_dir)], env


def test_a_real_client_over_stdio(served):
    argv, env = served

    async def session():
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        async with Client(params, mode="legacy", read_timeout_seconds=TIMEOUT) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            found = await client.call_tool("search_sessions", {"query": "cron job", "limit": 3})
            page = await client.call_tool("list_messages", {"session_id": CRON[:8], "offset": 5})
            recent = await client.call_tool("recent_sessions", {"limit": 2})
            bad = await client.call_tool("search_sessions", {"query": ""})
            again = await client.call_tool("search_sessions", {"query": "pelican", "limit": 1})
            return names, found, page, recent, bad, again

    names, found, page, recent, bad, again = asyncio.run(asyncio.wait_for(session(), TIMEOUT))
    assert names == ["list_messages", "recent_sessions", "search_sessions"]
    assert not found.is_error and found.structured_content["hits"][0]["session_id"] == CRON
    assert found.content[0].text.startswith("Fix the double cron run · claude · /home/dev/webapp")
    assert not page.is_error and [m["message_index"] for m in page.structured_content["messages"]] == [5, 6]
    assert page.structured_content["next_offset"] is None
    assert not recent.is_error and len(recent.structured_content["sessions"]) == 2
    assert bad.is_error and bad.content[0].text == "The query is empty: give 2-6 words of what you are looking for."
    assert not again.is_error and len(again.structured_content["hits"]) == 1


def _rpc(proc, message: dict) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def test_stdout_carries_only_inert_protocol_lines(served):
    argv, env = served
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(TIMEOUT, proc.kill)  # a hung server fails the test, not the run
    watchdog.start()
    calls = {2: ("search_sessions", {"query": "flamingo"}),
             3: ("search_sessions", {"query": "pelican", "limit": 20, "context_before": 8, "context_after": 8}),
             4: ("list_messages", {"session_id": "no-such-session"}),
             5: ("search_sessions", {"query": "cron", "limit": "all of them"})}
    lines, replies = [], {}
    try:
        _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw-test", "version": "0"}}})
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, (name, args) in calls.items():
            _rpc(proc, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}})
        while not set(calls) | {1} <= set(replies):
            line = proc.stdout.readline()
            assert line.endswith(b"\n"), "the server stopped before answering every call"
            lines.append(line)
            assert len(line) <= MAX_RESPONSE_BYTES
            msg = json.loads(line)
            assert msg["jsonrpc"] == "2.0"
            replies[msg.get("id")] = msg
        proc.stdin.close()  # the client is done: the server exits
        rest, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and rest == b"", err.decode(errors="replace")
    out = b"".join(lines)
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw.encode() not in out
    assert set(calls) | {1} <= set(replies)
    assert replies[1]["result"]["serverInfo"]["name"] == "crabsearch"
    flamingo_hit = replies[2]["result"]["structuredContent"]["hits"][0]
    assert flamingo_hit["window"][1]["text"] == FLAMINGO
    assert b"\\u202e" in next(x for x in lines if json.loads(x).get("id") == 2)
    big = replies[3]["result"]
    assert big["structuredContent"]["trimmed"] and not big["isError"]
    assert replies[4]["result"]["isError"] and "no-such-session" in replies[4]["result"]["content"][0]["text"]
    assert replies[5]["result"]["isError"]
    assert replies[5]["result"]["content"][0]["text"] == "Argument limit must be a whole number."
    assert b"Traceback" not in err


PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
"""JSON-RPC 2.0's answer to a message that is not JSON (section 5.1: the id could not be read)."""

INVALID_REQUEST = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
"""JSON-RPC 2.0's answer to JSON that is not a request object (section 5.1), its id unread."""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw-test", "version": "0"}}}
SEARCH_FLAMINGO = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "search_sessions", "arguments": {"query": "flamingo"}}}


def _replies_until(served, feed, last_id) -> tuple[list[dict], bytes]:
    """Run ``crabsearch mcp``, let ``feed(proc)`` write its stdin, read the replies up to the one
    with id ``last_id`` (a list: until every one of those ids was answered, in whatever order
    concurrent calls finish), close stdin and check the server exits 0 with nothing more on
    stdout. Returns the replies in order and stderr."""
    wanted = set(last_id) if isinstance(last_id, list) else {last_id}
    argv, env = served
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(TIMEOUT, proc.kill)  # a hung server fails the test, not the run
    watchdog.start()
    replies = []
    try:
        feed(proc)
        while not wanted <= {r.get("id") for r in replies}:  # the error replies are written before it
            line = proc.stdout.readline()
            assert line.endswith(b"\n"), "the server stopped before answering every call"
            replies.append(json.loads(line))
        proc.stdin.close()
        rest, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and rest == b"", err.decode(errors="replace")  # no answer to the blank lines
    assert b"Traceback" not in err
    return replies, err


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on(served):
    """Each line that is not JSON (before the handshake, after it, cut short, not UTF-8) is answered
    with JSON-RPC's parse error, ``id`` null, and the next lines are served; a blank line is no
    message and gets no answer."""
    def feed(proc):
        proc.stdin.write(b"this is not json\n")
        _rpc(proc, INITIALIZE)
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"\n\n   \n\xff\xfe\n')
        _rpc(proc, SEARCH_FLAMINGO)

    replies, _ = _replies_until(served, feed, 3)
    assert [r for r in replies if r.get("id") is None] == [PARSE_ERROR] * 3
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    assert sorted(by_id) == [1, 3]  # the cut-short tools/list (id 2) was not JSON: no id to answer
    assert by_id[1]["result"]["serverInfo"]["name"] == "crabsearch"
    assert by_id[3]["result"]["structuredContent"]["hits"][0]["window"][1]["text"] == FLAMINGO


def test_json_that_is_not_a_request_gets_invalid_request_and_the_server_goes_on(served):
    """Valid JSON that is not a JSON-RPC message (an object without jsonrpc/method, a string, a
    number, null, an array, a batch: the SDK serves one message a line, MCP has no batches since
    2025-06-18) is answered with JSON-RPC's invalid request, ``id`` null; a malformed request whose
    id can be read is answered with that id. The valid requests around them are served."""
    def feed(proc):
        for line in (b'{"foo":1}', b'"just a string"', b"[1,2,3]", b"[]", b"42", b"null",
                     b'[{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}]'):
            proc.stdin.write(line + b"\n")
        _rpc(proc, INITIALIZE)
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _rpc(proc, {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": [1]})  # params must be an object
        _rpc(proc, {"jsonrpc": "1.0", "id": "nine", "method": "tools/list"})
        _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _rpc(proc, {"jsonrpc": "2.0", "id": 10, "result": "not an object"})  # a response: its id is not ours
        _rpc(proc, SEARCH_FLAMINGO)

    replies, _ = _replies_until(served, feed, [2, 3])  # calls are served concurrently
    assert [r for r in replies if r.get("id") is None] == [INVALID_REQUEST] * 8
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    assert sorted(by_id, key=str) == [1, 2, 3, 8, "nine"]  # nothing for the batch's id 7
    assert by_id[8] == {**INVALID_REQUEST, "id": 8} and by_id["nine"] == {**INVALID_REQUEST, "id": "nine"}
    assert by_id[1]["result"]["serverInfo"]["name"] == "crabsearch"
    assert sorted(t["name"] for t in by_id[2]["result"]["tools"]) == ["list_messages", "recent_sessions",
                                                                      "search_sessions"]
    assert by_id[3]["result"]["structuredContent"]["hits"][0]["window"][1]["text"] == FLAMINGO


def test_a_lone_surrogate_is_read_as_a_replacement_character_and_answered_with_the_id(served):
    """``"\\ud800"`` is valid JSON text (RFC 8259 section 8.2) that pydantic's parser refuses: a
    request holding one was answered with a parse error, id null, and the client waited for its
    id for ever. It is served with U+FFFD in its place; an id holding one is answered with
    U+FFFD there; JSON that is still no message gets invalid request with its id; a line cut
    short is still no JSON (a parse error)."""
    def feed(proc):
        _rpc(proc, INITIALIZE)
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": '
                         b'"search_sessions", "arguments": {"query": "flamingo \\ud800"}}}\n')
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": "a\\udc00", "method": "tools/list"}\n')
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": ["\\ud800"]}\n')
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 6, "method": "tools/list", "x": "\\ud800"\n')  # cut short
        _rpc(proc, SEARCH_FLAMINGO)

    replies, _ = _replies_until(served, feed, [3, 4])  # two searches: either may finish first
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    assert sorted(by_id, key=str) == [1, 3, 4, 5, "a\ufffd"]
    found = by_id[4]["result"]
    assert not found["isError"] and found["structuredContent"]["query"] == "flamingo \ufffd"
    assert found["structuredContent"]["hits"][0]["window"][1]["text"] == FLAMINGO
    assert len(by_id["a\ufffd"]["result"]["tools"]) == 3
    assert by_id[5] == {**INVALID_REQUEST, "id": 5}
    assert [r for r in replies if r.get("id") is None] == [PARSE_ERROR]


def _start(argv, env):
    """``crabsearch mcp`` started and initialized, its tools listed, as a client's health check
    does (``claude mcp list``): the process, its replies read."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    _rpc(proc, INITIALIZE)
    _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    for _ in range(2):
        assert proc.stdout.readline().endswith(b"\n")
    return proc


def _served_here(served, home: Path, index_dir: Path):
    argv, env = served
    return argv[:-1] + [str(index_dir)], {**env, "HOME": str(home)}


def bulky_home(home: Path, sessions: int = 60, kb: int = 500) -> Path:
    """``sessions`` Claude Code sessions of about ``kb`` KB each, most of it tool output (as real
    ones are), each saying ``heron`` once."""
    for n in range(sessions):
        s = ClaudeSession(home, session_id=f"c0000000-0000-4000-8000-{n:012d}", cwd=f"/home/dev/p{n % 7}",
                          start=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(hours=n))
        s.user(f"heron {n}: read the build log").assistant("Reading it.")
        for i in range(kb // 25):
            s.tool("Bash", {"command": f"make step{i}"}, f"step {i} line of output {n} " * 700)
        s.write()
    return home


def _committed(index_dir: Path) -> int | None:
    """Transcripts the index's manifest says are committed (None while there is none)."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{index_dir / 'current' / 'manifest.db'}?mode=ro", uri=True, timeout=0.1) as db:
            return db.execute("SELECT count(*) FROM files").fetchone()[0]
    except sqlite3.Error:
        return None


def _kill_when(proc, index_dir: Path, past: int, deadline: float) -> int:
    """Poll the manifest; kill -9 ``proc`` as soon as it has more than ``past`` transcripts
    committed. Returns how many it had."""
    import time

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        n = _committed(index_dir)
        if n is not None and n > past:
            proc.kill()
            proc.wait()
            return n
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    raise AssertionError(f"nothing committed past {past} in {deadline} s")


def test_a_health_check_starts_no_index_build(served, tmp_path):
    """``claude mcp list`` starts the server, lists its tools and kills it within about two
    seconds: the server had started a first index build at once and left it half-made
    (``MAIN.tmp``, ``MAIN_WRITELOCK``) at each check. Now nothing is written before a tool call
    (or ``START_DELAY`` seconds)."""
    home, index_dir = tmp_path / "home", tmp_path / "index"
    cron_session(home)
    proc = _start(*_served_here(served, home, index_dir))
    proc.kill()
    proc.wait()
    assert not index_dir.exists()


def test_a_build_killed_at_any_moment_goes_on_where_it_stopped(served, tmp_path):
    """kill -9 during a first build, twice: the next start goes on from what was committed, and
    a refresh stopped in the middle has committed part of what it read (a resumed build
    committed nothing before its end, so a server killed each time read the same transcripts
    again, for ever). Nothing of the killed writers stays once the build ends, and the index
    holds what a build in one go holds."""
    from crabsearch.index import Indexer
    from crabsearch.index.store import open_index

    home, index_dir = bulky_home(tmp_path / "home"), tmp_path / "index"
    total = len(list((home / ".claude" / "projects").rglob("*.jsonl")))
    search = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "search_sessions", "arguments": {"query": "heron"}}}
    first = _start(*_served_here(served, home, index_dir))
    _rpc(first, search)
    at_first = _kill_when(first, index_dir, 0, TIMEOUT)
    assert 0 < at_first < total
    second = _start(*_served_here(served, home, index_dir))
    _rpc(second, search)
    at_second = _kill_when(second, index_dir, at_first, TIMEOUT)
    assert at_first < at_second < total  # a commit in the middle of the second start's refresh
    report = Indexer(index_dir, env={"HOME": str(home)}).refresh()
    assert report.files_read == total - at_second and not report.errors
    gen = (index_dir / "current").resolve()
    assert not {"MAIN.tmp", "MAIN_WRITELOCK"} & {p.name for p in gen.iterdir()}
    Indexer(tmp_path / "clean", env={"HOME": str(home)}).refresh()
    counts = []
    for d in (index_dir, tmp_path / "clean"):
        ix, _ = open_index(d, create=False)
        with ix.searcher() as s:
            counts.append(s.doc_count())
    assert counts[0] == counts[1]


def test_sigint_stops_the_server(served, tmp_path):
    """Ctrl-C (SIGINT) ends ``crabsearch mcp``, also in the middle of a build: it had stopped
    answering and stayed alive (Python's KeyboardInterrupt waited for the thread reading
    stdin). It exits 130, having committed what it had read."""
    import signal
    import time

    home, index_dir = bulky_home(tmp_path / "home", sessions=20), tmp_path / "index"
    idle = _start(*_served_here(served, home, tmp_path / "idle-index"))
    try:
        idle.send_signal(signal.SIGINT)
        assert idle.wait(timeout=30) == 130
    finally:
        idle.kill()
    busy = _start(*_served_here(served, home, index_dir))
    try:
        _rpc(busy, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "search_sessions", "arguments": {"query": "heron"}}})
        end = time.monotonic() + TIMEOUT
        while not (index_dir / "current").exists() and time.monotonic() < end:
            time.sleep(0.01)
        busy.send_signal(signal.SIGINT)
        assert busy.wait(timeout=30) == 130
    finally:
        busy.kill()

"""Field-type fuzz over every reader (issue 16, defect 2): each field of each record, top level and
nested to depth 3, replaced by a list, a dict, a number, null, a 1 MB string and a value nested
1,000 lists deep. Reading never raises (and no reader even fails on a record: the shared loop
would skip it, but a reader reads what it can), the other records' messages are still produced,
the state can still be stored, and ``load`` / ``message_text`` of every message produced never
raise.

The records come from ``tests/fixtures/`` (Claude Code, Codex, Gemini) and from builders for the
formats built in code (one file per format, with tool calls and results, thinking, summaries).
Aider and SpecStory are Markdown, not records with fields: they are not fuzzed here.
Per unit, each field *shape* (its path with list positions as ``*``) is tried in one record
chosen with a fixed seed, with every value (``CRABSEARCH_FUZZ_ALL=1``: every field of every record
with every number, about a minute).
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import os
import random
import shutil
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from crabsearch.index.manifest import dumps
from crabsearch.sources import SOURCES, Source, module_of
from crabsearch.sources.base import member_path

from all_agents import AGENTS, FIRST_DAY, build_all_agents_home
from builders import ClaudeSession, CodexSession
from source_checks import HOME
from test_sources_crabtalk import Store, meta as crab_meta, msg_key
from test_sources_openclaw import SCHEMA as OPENCLAW_SCHEMA
from test_sources_opencode import SCHEMA as OPENCODE_SCHEMA
from v3_builders import V3Session

ALL = os.environ.get("CRABSEARCH_FUZZ_ALL") == "1"
"""Try every field of every record (else one record per field shape), and every number."""
SEED = 16
DEPTH = 3
DEEP = "@@deep@@"
"""Stands for a value nested 1,000 lists deep: too deep for ``json.dumps``, so it is written into
the serialized record as text."""
DEEP_JSON = "[" * 1000 + "]" * 1000
HUGE = "x" * (1024 * 1024)
VALUES = {"list": ["a", 1, None], "dict": {"k": "v", "n": [1]}, "number": None, "null": None, "huge": HUGE,
          "deep": DEEP}
NUMBERS = [0, -1, 1.5, 2 ** 64, 1e308, 1784538000000]


def to_json(value) -> str:
    return json.dumps(value, ensure_ascii=False).replace(json.dumps(DEEP), DEEP_JSON)


@dataclass
class Unit:
    """One unit to fuzz: its ``records`` (dicts; strings are raw lines kept as they are) and
    ``write``, which writes the unit from one JSON text per record and returns its path.
    ``parts`` gives the records a loaded message record stands for (opencode: message and part)."""

    name: str
    source: Source
    records: list
    write: Callable[[list[str]], str]
    parts: Callable[[object], list] = field(default=lambda obj: [obj])


_TICK = [10**18]


def _touch(path: Path) -> None:
    """A new mtime on every write: readers cache parsed files by (path, mtime, size)."""
    _TICK[0] += 10**9
    os.utime(path, ns=(_TICK[0], _TICK[0]))


# -- writers ---------------------------------------------------------------------------------------


def jsonl_unit(name: str, source: Source, path: Path) -> Unit:
    data = path.read_bytes()
    newline_at_end = data.endswith(b"\n")
    lines = data.split(b"\n")[:-1] if newline_at_end else data.split(b"\n")
    raw = [ln.decode("utf-8", "replace") for ln in lines]
    records: list = []
    for text in raw:
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        records.append(obj if isinstance(obj, dict) else text)

    def write(texts: list[str]) -> str:
        body = "\n".join(texts) + ("\n" if newline_at_end else "")
        path.write_text(body, "utf-8")
        _touch(path)
        return str(path)

    return Unit(name, source, records, write)


def json_array_unit(name: str, source: Source, path: Path, messages: list[dict], wrap: dict | None = None) -> Unit:
    """A whole-file JSON chat: the array itself (Cline) or ``wrap`` with it as ``messages``."""

    def write(texts: list[str]) -> str:
        array = "[" + ",".join(texts) + "]"
        body = array if wrap is None else to_json({**wrap, "messages": "@@array@@"}).replace('"@@array@@"', array)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, "utf-8")
        _touch(path)
        return str(path)

    return Unit(name, source, messages, write)


def opencode_unit(path: Path, sid: str, messages: list[tuple[dict, list[dict]]]) -> Unit:
    """An ``opencode.db`` with one session: records are the message infos, then their parts."""
    rows = []  # (kind, message number, part number)
    records = []
    for i, (info, parts) in enumerate(messages):
        rows.append(("message", i, None))
        records.append(info)
        for j, part in enumerate(parts):
            rows.append(("part", i, j))
            records.append(part)

    def write(texts: list[str]) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.unlink()
        con = sqlite3.connect(path)
        con.executescript(OPENCODE_SCHEMA)
        con.execute("insert into project values ('proj1', '/home/dev/oc')")
        con.execute("insert into session values (?,?,?,?,?,?,?,?,?,null)",
                    (sid, "proj1", None, "slug", "/home/dev/oc", "fuzz", "1.4.0", 1, 2))
        for (kind, i, j), text in zip(rows, texts):
            if kind == "message":
                con.execute("insert into message values (?,?,?,?,?)", (f"msg_{i:04d}", sid, i, i, text))
            else:
                con.execute("insert into part values (?,?,?,?,?,?)",
                            (f"prt_{i:04d}_{j}", f"msg_{i:04d}", sid, i, i, text))
        con.commit()
        con.close()
        _touch(path)
        return member_path(path, sid)

    def parts(obj) -> list:
        return [obj.get("info"), obj.get("part")] if isinstance(obj, dict) else [obj]

    return Unit("opencode db", SOURCES["opencode"], records, write, parts)


def openclaw_store_unit(path: Path, sid: str, session: V3Session) -> Unit:
    def write(texts: list[str]) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.unlink()
        con = sqlite3.connect(path)
        con.executescript(OPENCLAW_SCHEMA)
        for i, text in enumerate(texts):
            con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?,?,?,?)",
                        (sid, i, text, 1784538000000 + i))
        con.commit()
        con.close()
        _touch(path)
        return member_path(path, sid)

    return Unit("openclaw store", SOURCES["openclaw"], list(session.entries), write)


def crabtalk_store_unit(path: Path, handle: str, meta: dict, messages: list[dict]) -> Unit:
    def write(texts: list[str]) -> str:
        store = Store().put(f"local/session/{handle}/meta", texts[0].encode())
        for i, text in enumerate(texts[1:]):
            store.put(msg_key(handle, i), text.encode())
        store.write(path)
        _touch(path)
        return member_path(path, handle)

    return Unit("crabtalk store", SOURCES["crabtalk"], [meta] + messages, write)


def crabtalk_steps_unit(path: Path, meta: dict, steps: list[dict]) -> Unit:
    def write(texts: list[str]) -> str:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        (path / "meta").write_text(texts[0], "utf-8")
        for i, text in enumerate(texts[1:], 1):
            (path / f"step-{i:06d}").write_text(text, "utf-8")
        _touch(path)
        return str(path)

    return Unit("crabtalk steps", SOURCES["crabtalk"], [meta] + steps, write)


# -- the units ---------------------------------------------------------------------------------------


def fixture_units(home: Path) -> list[Unit]:
    """Every JSONL transcript of ``tests/fixtures/home`` (copied to ``home``)."""
    shutil.copytree(HOME, home, dirs_exist_ok=True)
    units = []
    for agent in ("claude", "codex", "gemini"):
        src = SOURCES[agent]
        for path in src.discover({}, home):
            units.append(jsonl_unit(f"fixture {agent} {path.name}", src, path))
    return units


def rich_records(home: Path) -> list[Unit]:
    """Units of every other format, with tool calls, results, thinking and summaries."""
    t = FIRST_DAY.isoformat().replace("+00:00", "Z")
    units = []

    claude = (ClaudeSession(home, session_id="f0000000-0000-4000-8000-000000000001").user("fuzz the claude reader")
              .assistant("reading").tool("Bash", {"command": "ls", "n": [1, {"a": 2}]}, "a b c")
              .task("look around", "abc123", "found it").compact("we looked around").user("more"))
    units.append(jsonl_unit("claude built", SOURCES["claude"], claude.write()))
    codex = (CodexSession(home, session_id="0195e2a4-0000-7000-8000-000000000002").user("fuzz codex")
             .assistant("ok").tool("shell", {"command": ["ls", "-l"]}, "total 0"))
    units.append(jsonl_unit("codex built", SOURCES["codex"], codex.write()))

    v3 = V3Session("f0000000-0000-4000-8000-000000000003", cwd="/srv/pi")
    v3.entry("model_change", provider="anthropic", modelId="claude-x")
    u = v3.user("fuzz the v3 reader")
    v3.assistant("on it", thinking="think", call=("tc1", "exec", {"command": "ps", "args": [1, 2]}))
    v3.result("tc1", "exec", "pid 1")
    v3.message(role="bashExecution", command="ls", output="x y")
    v3.compaction("summary of the fuzz", u)
    v3.entry("session_info", name="fuzzed")
    v3.entry("custom_message", content=[{"type": "text", "text": "injected"}])
    pi_path = v3.write(home / ".pi" / "agent" / "sessions" / "--srv-pi--" / "2026-03-08T09-00-00-000Z_f0000000.jsonl")
    units.append(jsonl_unit("pi", SOURCES["pi"], pi_path))
    oc_path = v3.write(home / ".openclaw" / "agents" / "main" / "sessions" / f"{v3.sid}.jsonl")
    units.append(jsonl_unit("openclaw jsonl", SOURCES["openclaw"], oc_path))
    units.append(openclaw_store_unit(home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite",
                                     "f0000000-0000-4000-8000-000000000004", v3))

    def ev(n, kind, data):
        return {"type": kind, "data": data, "id": f"e{n}", "timestamp": t, "parentId": f"e{n - 1}"}

    copilot = home / ".copilot" / "session-state" / "f0000000-0000-4000-8000-000000000005" / "events.jsonl"
    copilot.parent.mkdir(parents=True)
    copilot.write_text("".join(json.dumps(e) + "\n" for e in [
        ev(1, "session.start", {"sessionId": "f5", "startTime": t, "context": {"cwd": "/w", "branch": "main"}}),
        ev(2, "user.message", {"content": "fuzz copilot", "attachments": []}),
        ev(3, "assistant.message", {"messageId": "m1", "content": "calling", "reasoningText": "hmm",
                                    "toolRequests": [{"toolCallId": "c1", "name": "bash", "arguments": {"cmd": "ls"}}]}),
        ev(4, "tool.execution_start", {"toolCallId": "c1", "toolName": "bash", "arguments": {"cmd": "ls"}}),
        ev(5, "tool.execution_complete", {"toolCallId": "c1", "success": True, "result": {"content": "a b"}}),
        ev(6, "assistant.reasoning", {"content": "more thoughts"}),
        ev(7, "session.compaction_complete", {"summaryContent": "compacted copilot"}),
        ev(8, "session.error", {"message": "rate limited"}),
    ]))
    units.append(jsonl_unit("copilot", SOURCES["copilot"], copilot))

    cursor = home / ".cursor" / "projects" / "home-dev-c" / "agent-transcripts" / "f0000000-c.jsonl"
    cursor.parent.mkdir(parents=True)
    cursor.write_text("".join(json.dumps(e) + "\n" for e in [
        {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>fuzz cursor</user_query>"}]}},
        {"role": "assistant", "message": {"content": [
            {"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}}]}},
        {"role": "tool", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "data"}]}},
        {"role": "assistant", "message": {"content": "plain string"}},
        {"type": "turn_ended", "status": "success"},
    ]))
    units.append(jsonl_unit("cursor", SOURCES["cursor"], cursor))

    gemini_dir = home / ".gemini" / "tmp" / hashlib.sha256(b"/g").hexdigest() / "chats"
    gemini_dir.mkdir(parents=True)
    gemini_msgs = [
        {"id": "u1", "timestamp": t, "type": "user", "content": [{"text": "fuzz gemini"}]},
        {"id": "g1", "timestamp": t, "type": "gemini", "content": "answer", "thoughts": [
            {"subject": "s", "description": "d"}], "toolCalls": [
            {"id": "c1", "name": "read_file", "args": {"path": "x"},
             "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "text"}}}]}]},
        {"id": "g2", "timestamp": t, "type": "gemini", "content": [{"text": "second"}]},
    ]
    units.append(json_array_unit("gemini legacy json", SOURCES["gemini"], gemini_dir / "session-2026-03-08T09-00-f0000006.json",
                                 gemini_msgs, {"sessionId": "f0000006", "projectHash": "h", "startTime": t,
                                               "lastUpdated": t}))
    gemini_jsonl = gemini_dir / "session-2026-03-08T09-00-f0000007.jsonl"
    gemini_jsonl.write_text("".join(json.dumps(e) + "\n" for e in [
        {"sessionId": "f0000007", "projectHash": "h", "startTime": t, "lastUpdated": t, "kind": "main",
         "directories": ["/g"], "summary": "gemini fuzz"}] + gemini_msgs + [
        {"$set": {"summary": "new summary", "lastUpdated": t}}, {"$rewindTo": "g2"}]))
    units.append(jsonl_unit("gemini jsonl", SOURCES["gemini"], gemini_jsonl))

    cline_msgs = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nfuzz cline\n</task>"},
                                     {"type": "text", "text": "<environment_details>\n# Current Working Directory "
                                                              "(/w) Files\n</environment_details>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "<thinking>plan</thinking>reading"},
                                          {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x"}]},
                                     {"type": "text", "text": "[read_file for 'a'] Result:\nline"}]},
        {"role": "assistant", "content": "done"},
    ]
    store = home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
    units.append(json_array_unit("cline", SOURCES["cline"], store / "tasks" / "1767300000000" /
                                 "api_conversation_history.json", cline_msgs))

    t0 = 1784538000000
    units.append(opencode_unit(home / ".local" / "share" / "opencode" / "opencode.db", "ses_fuzz", [
        ({"role": "user", "time": {"created": t0}}, [{"type": "text", "text": "fuzz opencode"}]),
        ({"role": "assistant", "time": {"created": t0, "completed": t0 + 5}, "modelID": "m", "providerID": "p",
          "path": {"cwd": "/w", "root": "/w"}},
         [{"type": "step-start"}, {"type": "reasoning", "text": "think"}, {"type": "text", "text": "answer"},
          {"type": "tool", "tool": "bash", "callID": "c1",
           "state": {"status": "completed", "input": {"cmd": "ls"}, "output": "a b", "time": {"start": t0}}},
          {"type": "tool", "tool": "read", "state": {"status": "error", "input": {}, "error": "nope"}},
          {"type": "step-finish"}]),
        ({"role": "assistant", "summary": True, "time": {"created": t0, "completed": t0 + 9}},
         [{"type": "text", "text": "the summary"}, {"type": "compaction", "summary": "compacted"}]),
    ]))

    crab_msgs = [
        {"message": {"role": "user", "content": "fuzz crabtalk"}},
        {"message": {"role": "assistant", "reasoning_content": "hm", "content": [
            {"type": "text", "text": "calling"}, {"type": "tool_use", "id": "t1", "name": "bash", "input": {"c": 1}}],
            "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}},
        {"message": {"role": "tool", "tool_call_id": "c2", "name": "ls", "content": "a b"}},
        {"message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {"agent": "guest", "message": {"role": "assistant", "content": "guest reply"}},
        {"compact": "compacted crabtalk", "archive_name": "a1", "archived_at": t},
        {"event": "x", "ts": t},
    ]
    meta = crab_meta(title="crab fuzz", root="/w")
    units.append(crabtalk_store_unit(home / ".crabtalk" / "store.crmem", "01K3ZQFUZZAAAAAAAAAAAAAAAA", meta, crab_msgs))
    units.append(crabtalk_steps_unit(home / ".crabtalk" / "sessions" / "fuzz-steps", meta, crab_msgs))
    return units


def all_agents_units(home: Path) -> list[Unit]:
    """Every agent's all-agents session (its default layout) in a format that is records: a
    JSONL file, a JSON array; an agent whose store is neither (a database, a JSON object) gives
    its own units with ``fuzz_units(home) -> list[Unit]`` in ``tests/test_sources_<agent>.py``
    (:func:`rich_records` has those of the stores already here)."""
    build_all_agents_home(home)
    env = {"HOME": str(home)}
    units = []
    for agent in AGENTS:
        own = getattr(importlib.import_module(f"test_sources_{module_of(agent)}"), "fuzz_units", None)
        if own is not None:
            units += own(home)
            continue
        src = SOURCES[agent]
        for path in src.discover(env, home):
            if path.suffix == ".jsonl":
                units.append(jsonl_unit(f"all-agents {agent}", src, path))
            elif path.suffix == ".json" and isinstance(msgs := json.loads(path.read_text("utf-8")), list):
                units.append(json_array_unit(f"all-agents {agent}", src, path, msgs))
    return units


# -- mutation ----------------------------------------------------------------------------------------


def paths_of(value, depth: int = DEPTH, prefix: tuple = ()) -> list[tuple]:
    """Every field path of ``value`` down to ``depth`` (list items: the first three)."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value[:3]) if isinstance(value, list) else ()
    for k, v in items:
        out.append(prefix + (k,))
        if depth > 1:
            out += paths_of(v, depth - 1, prefix + (k,))
    return out


def mutated(record: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(record)
    target = out
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return out


def texts_of(records: list) -> list[str]:
    return [r if isinstance(r, str) else to_json(r) for r in records]


def message_key(m) -> tuple:
    return (m.role, m.text)


def check_read(unit: Unit, path: str, what: str):
    """Read ``path`` and check everything that must hold whatever the records hold."""
    src = unit.source
    try:
        read = src.read(Path(path))
    except Exception as exc:  # pragma: no cover - the failure message
        raise AssertionError(f"{what}: read raised {type(exc).__name__}: {exc}") from exc
    failed = [r for r in read.stats.reasons if r.startswith(("reader error", "session fields"))]
    assert not failed, f"{what}: the reader failed on a record (it should read what it can): " \
                       f"{failed} {read.stats.places}"
    try:
        dumps(read.state)
    except Exception as exc:  # pragma: no cover
        raise AssertionError(f"{what}: state cannot be stored: {type(exc).__name__}: {exc}") from exc
    for m in read.messages:
        try:
            obj = src.load(path, m.offset, m.length)
            if obj is not None:
                src.message_text(obj, m.part, m.label)
        except Exception as exc:  # pragma: no cover
            raise AssertionError(f"{what}: load/message_text of {m.label} raised {type(exc).__name__}: {exc}") from exc
    return read


def fuzz(unit: Unit, rng: random.Random) -> int:
    """Fuzz one unit; returns the number of reads."""
    records = unit.records
    path = unit.write(texts_of(records))
    base = check_read(unit, path, f"{unit.name} unchanged")
    # which records each baseline message came from
    owners = []
    for m in base.messages:
        obj = unit.source.load(path, m.offset, m.length)
        parts = unit.parts(obj)
        owners.append({i for i, r in enumerate(records) if not isinstance(r, str) and any(r == p for p in parts)})
    pairs = [(i, p) for i, r in enumerate(records) if isinstance(r, dict) for p in paths_of(r)]
    if not ALL:
        shapes: dict[tuple, list] = {}
        for i, p in pairs:
            shapes.setdefault(tuple("*" if isinstance(k, int) else k for k in p), []).append((i, p))
        pairs = [rng.choice(found) for found in shapes.values()]
    reads = 0
    for i, field_path in pairs:
        expected = Counter(message_key(m) for m, own in zip(base.messages, owners) if i not in own)
        tries = [(kind, value) for kind, value in VALUES.items() if kind != "number"]
        tries += [("number", n) for n in (NUMBERS if ALL else [rng.choice(NUMBERS)])]
        for kind, value in tries:
            changed = list(records)
            changed[i] = mutated(records[i], field_path, value)
            what = f"{unit.name}: record {i} field {field_path!r} = {kind}"
            read = check_read(unit, unit.write(texts_of(changed)), what)
            reads += 1
            missing = expected - Counter(message_key(m) for m in read.messages)
            assert not missing, f"{what}: lost messages of other records {[k[1][:60] for k in missing]}"
    unit.write(texts_of(records))
    return reads


@pytest.fixture(scope="module")
def units(tmp_path_factory) -> list[Unit]:
    root = tmp_path_factory.mktemp("fuzz")
    return (fixture_units(root / "fixtures") + rich_records(root / "rich") + all_agents_units(root / "all"))


def test_units_cover_every_record_format(units):
    agents = {u.source.agent for u in units}
    assert agents == set(SOURCES) - {"aider", "specstory"}
    assert all(u.records for u in units)


def test_no_field_of_any_record_stops_a_reader(units):
    rng = random.Random(SEED)
    reads = sum(fuzz(u, rng) for u in units)
    assert reads >= len(units) * 5 * len(VALUES)

"""Issue 16, defect 2 ("One bad line stops all indexing"): a record that a reader cannot handle,
for any reason, is skipped and counted, ``crabsearch status`` names its file, line and reason, and
nothing one file holds stops the other files from being indexed."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from crabsearch.index import Indexer
from crabsearch.index.manifest import Manifest
from crabsearch.jsonl import MAX_DEPTH, LineStats, iter_records, loads, scrub
from crabsearch.model import Role
from crabsearch.search import Engine
from crabsearch.sources import SOURCES
from crabsearch.sources.base import dump_text
from crabsearch.sources.claude import ClaudeSource

from all_agents import AGENTS, CLEARED_ENV, all_agents_env, build_all_agents_home
from builders import ClaudeSession, CodexSession
from source_checks import cli_ok, run_cli

SRC = ClaudeSource()
BAD_TYPE = '{"type":["user"]}\n'
BOOM = '{"type":"user","uuid":"boom","message":{"role":"user","content":"boom"}}\n'
"""A line the Claude reader fails on while :func:`failing_reader` is in place (the readers now
read every field type they meet, so a failing reader is simulated)."""


@pytest.fixture
def failing_reader(monkeypatch):
    """The Claude reader raises on the line whose uuid is ``boom`` (as it did on ``BAD_TYPE``)."""
    from crabsearch.sources import claude

    real = claude.pieces_of

    def pieces_of(obj):
        if obj.get("uuid") == "boom":
            {}[["user"]]  # TypeError: unhashable type: 'list'
        return real(obj)

    monkeypatch.setattr(claude, "pieces_of", pieces_of)


def deep_list(depth: int, leaf=None) -> list:
    """``[[[...leaf...]]]``, ``depth`` lists deep, built without recursion."""
    value: list = [] if leaf is None else [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value


def deep_json(depth: int, leaf: str = "") -> str:
    """The JSON text of :func:`deep_list` (``leaf`` is raw JSON)."""
    return "[" * depth + leaf + "]" * depth


def append(path: Path, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines))


def claude_session(home: Path) -> tuple[ClaudeSession, Path]:
    """A session whose words before and after the hostile line are ``narwhal`` and ``axolotl``."""
    s = ClaudeSession(home, session_id="aaaa0000-0000-4000-8000-000000000016")
    s.user("why is the narwhal service slow").assistant("the narwhal cache is cold")
    return s, s.write()


def finish_session(path: Path) -> None:
    """Lines after the hostile one (the reader must go on past it)."""
    more = ClaudeSession(Path("/unused"), session_id="aaaa0000-0000-4000-8000-000000000016")
    more.n = 50
    more.user("and the axolotl worker").assistant("the axolotl worker waits on a lock")
    append(path, *(json.dumps(d) + "\n" for d in more.lines))


DEEP = "@deep@"
"""Stands for a value nested 1,000 lists deep in :func:`assistant_line` (too deep for ``json.dumps``)."""


def assistant_line(blocks: list) -> str:
    line = json.dumps({"type": "assistant", "uuid": "deep-1", "sessionId": "aaaa0000-0000-4000-8000-000000000016",
                       "timestamp": "2026-03-14T10:10:00.000Z",
                       "message": {"id": "msg_deep", "role": "assistant", "model": "claude-x",
                                   "content": blocks}})
    return line.replace(json.dumps(DEEP), deep_json(1000))


# -- the three hostile records, read by the source ---------------------------------------------------


ALL_TEXTS = ["why is the narwhal service slow", "the narwhal cache is cold", "and the axolotl worker",
             "the axolotl worker waits on a lock"]


def test_a_type_that_is_a_list_is_a_line_of_unknown_type(tmp_path):
    _, path = claude_session(tmp_path / "home")
    append(path, BAD_TYPE, '{"type":{"a":1},"uuid":["x"],"message":7,"timestamp":[1]}\n')
    finish_session(path)
    read = SRC.read(path)
    assert [m.text for m in read.messages] == ALL_TEXTS
    assert [m.message_index for m in read.messages] == [0, 1, 2, 3]
    assert read.stats.skipped == 0 and read.end_offset == path.stat().st_size


def test_a_record_the_reader_cannot_handle_is_skipped_and_counted_with_its_offset(tmp_path, failing_reader):
    _, path = claude_session(tmp_path / "home")
    bad_at = path.stat().st_size
    append(path, BOOM)
    finish_session(path)
    read = SRC.read(path)
    assert [m.text for m in read.messages] == ALL_TEXTS
    assert [m.message_index for m in read.messages] == [0, 1, 2, 3]
    assert read.stats.skipped == 1 and read.stats.reasons == {"reader error (TypeError)": 1}
    [(offset, why)] = read.stats.places
    assert offset == bad_at and why == "reader error (TypeError: unhashable type: 'list')"
    assert read.end_offset == path.stat().st_size


def test_a_half_made_record_adds_no_messages(tmp_path, monkeypatch):
    """A reader failing after it appended messages for a record: those messages are dropped."""
    from crabsearch.sources import claude

    _, path = claude_session(tmp_path / "home")
    real = claude._link_subagents

    def failing(obj, pieces, new, *rest):
        if any("narwhal cache" in m.text for m in new):
            raise KeyError("boom")
        return real(obj, pieces, new, *rest)

    monkeypatch.setattr(claude, "_link_subagents", failing)
    read = SRC.read(path)
    assert [m.text for m in read.messages] == ["why is the narwhal service slow"]
    assert read.session.message_count == 1 and read.stats.skipped == 1


def test_a_failing_finish_is_counted_not_raised(tmp_path, monkeypatch):
    _, path = claude_session(tmp_path / "home")
    monkeypatch.setattr(ClaudeSource, "finish", lambda self, state, session: 1 / 0)
    read = SRC.read(path)
    assert len(read.messages) == 2 and read.stats.skipped == 1
    assert "ZeroDivisionError" in next(iter(read.stats.reasons))
    json.dumps(read.state)


def test_scrub_is_not_recursive():
    deep = deep_list(500, "\ud800")
    out = scrub(deep)
    for _ in range(499):
        out = out[0]
    assert out == ["\ufffd"]
    with pytest.raises(ValueError):
        scrub(deep_list(MAX_DEPTH + 5, "x"))
    assert scrub({"k\ud800": ["a", {"b": "\udfff"}], "n": 1}) == {"k\ufffd": ["a", {"b": "\ufffd"}], "n": 1}


def test_a_deep_line_with_a_lone_surrogate_is_read_not_fatal(tmp_path):
    line = '{"type":"user","message":{"role":"user","content":' + deep_json(500, '"\\ud800"') + "}}"
    obj = loads(line.encode())  # 500 deep is within what orjson itself reads
    assert obj["type"] == "user"
    with pytest.raises(ValueError):  # deeper than any parser here reads: a broken line
        loads(('{"a":' + deep_json(3000, '"\\ud800"') + "}").encode())
    _, path = claude_session(tmp_path / "home")
    append(path, line + "\n", '{"a":' + deep_json(3000, '"\\ud800"') + "}\n")
    finish_session(path)
    read = SRC.read(path)
    assert [m.text for m in read.messages if "axolotl" in m.text or "narwhal" in m.text] == [
        "why is the narwhal service slow", "the narwhal cache is cold", "and the axolotl worker",
        "the axolotl worker waits on a lock"]
    assert read.stats.reasons.get("broken JSON") == 1


def test_dump_text_never_raises():
    text = dump_text(deep_list(1000))
    assert text and len(text) < 80
    assert dump_text({"a": [1, "é"]}) == '{"a": [1, "é"]}'
    assert dump_text(None) == "" and dump_text("s") == "s"
    assert dump_text({1: object()}) and dump_text(float("nan")) == "NaN"


def test_a_deep_tool_input_keeps_the_assistant_text(tmp_path):
    _, path = claude_session(tmp_path / "home")
    append(path, assistant_line([{"type": "text", "text": "the okapi parser recursed"},
                                 {"type": "tool_use", "id": "toolu_deep", "name": "Edit",
                                  "input": DEEP}]) + "\n")
    finish_session(path)
    read = SRC.read(path)
    by_text = {m.text: m for m in read.messages}
    assert "the okapi parser recursed" in by_text
    [call] = [m for m in read.messages if m.label == "tool-call:Edit"]
    assert call.role is Role.ASSISTANT and 0 < len(call.text) < 80
    assert read.stats.skipped == 0 and len(read.messages) == 6
    obj = SRC.load(str(path), call.offset, call.length)
    assert SRC.message_text(obj, call.part, call.label) == call.text


# -- the whole CLI: one hostile line never stops indexing --------------------------------------------


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    CodexSession(home, session_id="019a0000-1111-7222-8333-444455550016").user(
        "the pangolin queue drops messages").assistant("raise the pangolin queue limit").write()
    for name in CLEARED_ENV + [s.env_var for s in SOURCES.values() if s.env_var]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    return home


def found(capsys, word: str) -> int:
    return len(json.loads(cli_ok(capsys, "search", word, "--json", "--no-refresh"))["hits"])


@pytest.mark.parametrize("hostile", [
    BAD_TYPE,
    '{"type":"user","message":{"role":"user","content":' + deep_json(500, '"\\ud800"') + "}}\n",
    assistant_line([{"type": "text", "text": "an okapi reply"},
                    {"type": "tool_use", "id": "t", "name": "Edit", "input": DEEP}]) + "\n",
], ids=["type-list", "deep-surrogate", "deep-tool-input"])
def test_index_and_search_survive_a_hostile_line(home, capsys, hostile):
    _, path = claude_session(home)
    append(path, hostile)
    finish_session(path)
    data = json.loads(cli_ok(capsys, "index", "--json"))
    assert data["errors"] == [] and data["files_read"] == 2
    for word in ("narwhal", "axolotl", "pangolin"):
        assert found(capsys, word) == 1, word
    code, out, err = run_cli(capsys, "search", "axolotl", "--json")  # a refreshing search
    assert code == 0 and len(json.loads(out)["hits"]) == 1, err
    if hostile is BAD_TYPE:
        append(path, BAD_TYPE)  # appended again later: read incrementally, still not fatal
        code, out, err = run_cli(capsys, "search", "pangolin", "--json")
        assert code == 0 and len(json.loads(out)["hits"]) == 1, err


def test_status_names_file_line_and_reason(home, capsys, failing_reader):
    _, path = claude_session(home)
    append(path, BOOM, "not json\n")
    finish_session(path)
    cli_ok(capsys, "index")
    data = json.loads(cli_ok(capsys, "status", "--json"))
    [entry] = data["skipped_files"]
    assert entry["path"] == str(path) and entry["skipped"] == 2
    assert entry["reasons"]["broken JSON"] == 1 and len(entry["reasons"]) == 2
    places = entry["places"]
    assert [p["line"] for p in places] == [3, 4]
    assert "unhashable type: 'list'" in places[0]["reason"] and places[1]["reason"] == "broken JSON"
    assert places[0]["offset"] == len(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    text = cli_ok(capsys, "status")
    assert f"{path}" in text and "line 3: " in text and "unhashable type: 'list'" in text
    assert "line 4: broken JSON" in text


def test_status_names_a_claude_line_with_a_field_of_the_wrong_type(home, capsys):
    """A fresh-user trial: ``{"type":"user","message":123}`` and a line whose ``message.content``
    is an object were dropped without a word. They are skipped and counted like a broken line:
    ``index --json`` adds them to ``skipped_lines``, ``status`` names file, line and reason."""
    _, path = claude_session(home)
    bad = ClaudeSession(Path("/unused"), session_id="aaaa0000-0000-4000-8000-000000000016")
    bad.n = 40
    bad.user("gone").lines[-1]["message"] = 123
    bad.assistant("gone").lines[-1]["message"]["content"] = {"weird": True}
    append(path, *(json.dumps(d) + "\n" for d in bad.lines))
    finish_session(path)
    data = json.loads(cli_ok(capsys, "index", "--json"))
    assert data["skipped_lines"] == 2 and data["errors"] == []
    [entry] = json.loads(cli_ok(capsys, "status", "--json"))["skipped_files"]
    assert entry["path"] == str(path) and entry["skipped"] == 2 and entry["reasons"] == {"bad field": 2}
    assert [(p["line"], p["reason"]) for p in entry["places"]] == [
        (3, "bad field (message is a number, not an object)"),
        (4, "bad field (message.content is an object, not a string or a list)")]
    text = cli_ok(capsys, "status")
    assert "line 3: bad field (message is a number, not an object)" in text
    for word in ("narwhal", "axolotl"):
        assert found(capsys, word) == 1, word


def test_status_names_a_codex_line_with_a_field_of_the_wrong_type(home, capsys):
    """A fresh-user trial: a rollout line whose ``payload`` is null, and a message item whose
    ``content`` is a string, were dropped without a word. They are skipped and counted like a
    broken line: ``index --json`` adds them to ``skipped_lines``, ``status`` names file, line and
    reason."""
    rollout = CodexSession(home, session_id="019a0000-1111-7222-8333-444455550016")
    path = rollout.path
    assert len(path.read_bytes().splitlines()) == 5
    rollout.t += timedelta(minutes=5)
    bad = [rollout._env("response_item", None),
           rollout._env("response_item", {"type": "message", "role": "assistant", "content": "notalist"}),
           rollout._env("response_item", {"type": "message", "role": "assistant",
                                          "content": [{"type": "output_text", "text": "the pangolin queue is full"}]})]
    append(path, *(json.dumps(d) + "\n" for d in bad))
    data = json.loads(cli_ok(capsys, "index", "--json"))
    assert data["skipped_lines"] == 2 and data["errors"] == []
    [entry] = json.loads(cli_ok(capsys, "status", "--json"))["skipped_files"]
    assert entry["path"] == str(path) and entry["skipped"] == 2 and entry["reasons"] == {"bad field": 2}
    assert [(p["line"], p["reason"]) for p in entry["places"]] == [
        (6, "bad field (payload is null, not an object)"),
        (7, "bad field (payload.content is a string, not a list)")]
    assert "line 6: bad field (payload is null, not an object)" in cli_ok(capsys, "status")
    assert found(capsys, "full") == 1


def test_places_are_kept_across_appends_and_capped(home, capsys, failing_reader):
    _, path = claude_session(home)
    append(path, "not json\n")
    cli_ok(capsys, "index")
    append(path, *(BOOM for _ in range(9)))
    cli_ok(capsys, "index")
    [entry] = json.loads(cli_ok(capsys, "status", "--json"))["skipped_files"]
    assert entry["skipped"] == 10
    assert [p["line"] for p in entry["places"]] == [3, 4, 5, 6, 7]
    assert entry["places"][0]["reason"] == "broken JSON"


# -- the indexer: a file that cannot be read is that file's error --------------------------------------


def test_a_reader_crash_is_the_file_s_error_and_the_others_are_indexed(home, tmp_path, monkeypatch):
    _, path = claude_session(home)
    claude = SOURCES["claude"]
    real = claude.read

    def crash(p, start=0, state=None):
        if Path(p) == path:
            raise RuntimeError("reader bug")
        return real(p, start, state)

    monkeypatch.setattr(claude, "read", crash)
    ix = Indexer(tmp_path / "index", env={"HOME": str(home)})
    report = ix.refresh()
    assert report.errors == [f"{path}: RuntimeError: reader bug"]
    assert report.files_read == 1
    manifest = Manifest.load(tmp_path / "index")
    assert manifest.errors[str(path)]["error"] == "RuntimeError: reader bug"
    assert str(path) not in manifest.files
    assert ix.refresh().errors == []  # named once, not at every refresh
    from crabsearch.index.status import collect

    assert collect(ix).unreadable_files == [{"path": str(path), "error": "RuntimeError: reader bug"}]
    monkeypatch.setattr(claude, "read", real)
    append(path, "\n")  # the file changes: read again
    assert ix.refresh().errors == []
    engine = Engine(tmp_path / "index")
    try:
        assert len(engine.search("narwhal").hits) == 1 and len(engine.search("pangolin").hits) == 1
    finally:
        engine.close()


def test_a_failure_while_making_documents_adds_nothing(home, tmp_path, monkeypatch):
    from crabsearch.index import writer

    _, path = claude_session(home)
    ix = Indexer(tmp_path / "index", env={"HOME": str(home)})
    real = writer.session_doc

    def failing(fkey, session):
        if session.agent == "claude":
            raise ValueError("bad session")
        return real(fkey, session)

    monkeypatch.setattr(writer, "session_doc", failing)
    report = ix.refresh()
    assert report.errors == [f"{path}: ValueError: bad session"] and report.files_read == 1
    engine = Engine(tmp_path / "index")
    try:
        assert engine.search("narwhal").hits == [] and len(engine.search("pangolin").hits) == 1
    finally:
        engine.close()


# -- every reader's loop skips a record it cannot handle ---------------------------------------------


# The function each source's loop calls per record (patched to fail on the quokka prompt).
PER_RECORD = {
    "claude": "crabsearch.sources.claude.pieces_of", "codex": "crabsearch.sources.codex.pieces_of",
    "gemini": "crabsearch.sources.gemini._pieces_owned", "openclaw": "crabsearch.sources.pi.entry_pieces",
    "crabtalk": "crabsearch.sources.crabtalk.pieces_of", "opencode": "crabsearch.sources.opencode.pieces_of",
    "copilot": "crabsearch.sources.copilot.pieces_of", "pi": "crabsearch.sources.pi.entry_pieces",
    "cursor": "crabsearch.sources.cursor.pieces_of", "cline": "crabsearch.sources.cline.pieces_of",
    "aider": "crabsearch.sources.aider._parse", "specstory": "crabsearch.sources.specstory._parse",
    "cowork": "crabsearch.sources.claude.pieces_of", "kilo": "crabsearch.sources.opencode.pieces_of",
    "omp": "crabsearch.sources.omp.entry_pieces", "qwen": "crabsearch.sources.qwen.pieces_of",
    "kimi": "crabsearch.sources.kimi.pieces_of",
    "vscode": "crabsearch.sources.vscode._pieces", "amp": "crabsearch.sources.amp.pieces_of",
    "droid": "crabsearch.sources.droid.pieces_of", "kiro": "crabsearch.sources.kiro.pieces_of",
    "openhands": "crabsearch.sources.openhands.pieces_of",
    "hermes": "crabsearch.sources.hermes.pieces_of", "grok": "crabsearch.sources.grok.pieces_of",
    "vibe": "crabsearch.sources.vibe.pieces_of", "chatgpt": "crabsearch.sources.chatgpt.pieces_of",
    "claude-ai": "crabsearch.sources.claude_ai.pieces_of",
}
ONE_RECORD_A_TURN = {"vscode"}
"""Agents whose record is a whole turn (a VS Code chat request holds the prompt and its response):
the failing record takes the reply with it."""


@pytest.mark.parametrize("agent", AGENTS)
def test_every_reader_skips_a_record_it_cannot_handle(agent, tmp_path, monkeypatch):
    import importlib

    home = tmp_path / "home"
    expects = build_all_agents_home(home)
    env = all_agents_env(home, expects)
    exp = expects[agent]
    src = SOURCES[agent]
    [unit] = list(src.discover(env, home))
    module_name, _, func = PER_RECORD[agent].rpartition(".")
    module = importlib.import_module(module_name)
    real = getattr(module, func)
    prompt = exp.texts[0]

    if func == "_parse":  # Markdown: the parser itself fails after its first block
        def failing(data, offset, ctx):
            for item in real(data, offset, ctx):
                yield item
                if not isinstance(item, int) and item.text == prompt:
                    raise RuntimeError("parser bug")
    else:
        def failing(obj, *rest):
            if prompt in json.dumps(obj, default=str):
                raise RuntimeError("reader bug")
            return real(obj, *rest)

    monkeypatch.setattr(module, func, failing)
    read = src.read(Path(unit))
    texts = [m.text for m in read.messages]
    if func == "_parse":  # the read ends at the failure, keeping what was read
        assert texts[-1] == prompt and exp.texts[1] not in texts
    elif agent in ONE_RECORD_A_TURN:
        assert prompt not in texts and exp.texts[1] not in texts and read.session.session_id == exp.session_id
    else:
        assert prompt not in texts and exp.texts[1] in texts
    assert read.stats.skipped >= 1 and any("RuntimeError" in r for r in read.stats.reasons)
    assert [m.message_index for m in read.messages] == list(range(len(read.messages)))
    json.dumps(read.state)


def test_line_stats_keep_the_first_places():
    stats = LineStats()
    for i in range(8):
        stats.skip("broken JSON", i * 10)
    stats.skip("database error")
    assert stats.skipped == 9 and stats.places == [(0, "broken JSON"), (10, "broken JSON"), (20, "broken JSON"),
                                                   (30, "broken JSON"), (40, "broken JSON")]


def test_iter_records_names_where_it_skipped(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"a":1}\nnot json\n[1]\n{"b":2}\n')
    stats = LineStats()
    assert [r.obj for r in iter_records(str(p), 0, stats)] == [{"a": 1}, {"b": 2}]
    assert stats.places == [(8, "broken JSON"), (17, "not a JSON object")]

"""Structure within sessions (issue 5) and its result-row marks (issue 6): subagents labelled with
their parent, duplicates of resumed or forked sessions shown once, abandoned branches, hits
before a compaction, and the parent's links to its subagents."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from crabsearch.index import Indexer
from crabsearch.search import Engine

from builders import ClaudeSession, ClaudeSubagent

PARENT = "11111111-0000-4000-8000-000000000001"
AGENT = "a7c3e9f1b2d40586"


def _index(tmp_path, home):
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return Engine(tmp_path / "index")


@pytest.fixture
def sub_home(tmp_path):
    home = tmp_path / "home"
    parent = (ClaudeSession(home, session_id=PARENT).user("audit the crontab entries please")
              .task("Find every crontab file in the repo", AGENT, "Found two crontab files.")
              .assistant("The subagent found them.").title("Crontab audit"))
    parent.write()
    (ClaudeSubagent(parent, AGENT).user("Find every crontab file in the repo")
     .assistant("Searching for zanzibarite markers in crontab files").write())
    return home


def test_subagent_hit_names_its_parent(tmp_path, sub_home):
    engine = _index(tmp_path, sub_home)
    [hit] = engine.search("zanzibarite").hits
    assert hit.session.session_id == f"agent-{AGENT}"
    assert hit.session.parent_session_id == PARENT
    assert hit.parent_title == "Crontab audit"
    d = hit.to_json()
    assert d["parent_session_id"] == PARENT and d["parent_title"] == "Crontab audit"
    # added fields, the old ones untouched
    assert {"also_in", "also_in_sessions", "branch", "before_compaction"} <= set(d)
    assert d["branch"] == "active" and d["also_in"] == 0 and d["before_compaction"] is False


def test_subagent_row_and_cli_text_say_subagent_of(tmp_path, sub_home, capsys):
    from crabsearch.cli_text import print_hits as _print_hits
    from crabsearch.tui.render import result_prompt

    engine = _index(tmp_path, sub_home)
    result = engine.search("zanzibarite")
    [hit] = result.hits
    from rich.console import Console
    console = Console(width=120, record=True)
    console.print(result_prompt(hit, result.terms, datetime(2026, 3, 20, tzinfo=timezone.utc), None))
    assert "subagent of Crontab audit" in console.export_text()
    _print_hits(result)
    assert "subagent of Crontab audit" in capsys.readouterr().out


def test_parent_not_indexed_falls_back_to_its_id(tmp_path, sub_home):
    parent = next(sub_home.rglob(f"{PARENT}.jsonl"))
    parent.unlink()
    engine = _index(tmp_path, sub_home)
    [hit] = engine.search("zanzibarite").hits
    assert hit.parent_title is None
    from crabsearch.hits import structure_notes
    assert structure_notes(hit) == [f"subagent of {PARENT}"]


def test_search_json_has_the_new_fields(tmp_path, sub_home):
    engine = _index(tmp_path, sub_home)
    d = json.loads(json.dumps(engine.search("zanzibarite").to_json()))
    assert d["hits"][0]["parent_title"] == "Crontab audit"
    assert "abandoned" not in d["hits"][0]["window"][0]  # optional item keys: only when true


# -- duplicates ----------------------------------------------------------------------------------

OLD = "22222222-0000-4000-8000-000000000002"
NEW = "33333333-0000-4000-8000-000000000003"


def _resumed(home, old_id=OLD, new_id=NEW, word="quokka"):
    old = (ClaudeSession(home, session_id=old_id).user(f"why does the {word} service time out")
           .assistant("The pool is too small."))
    old.write()
    new = ClaudeSession(home, session_id=new_id).copy_of(old).user("now raise the pool size").assistant("Raised.")
    new.write()
    return old, new


def test_message_uid_is_indexed_from_claude_uuid(tmp_path):
    from crabsearch.sources import SOURCES

    old, _ = _resumed(tmp_path / "home")
    read = SOURCES["claude"].read(old.path)
    assert [m.uid for m in read.messages] == [f"{d['uuid']}:0" for d in old.lines]


def test_resumed_copy_shows_the_hit_once_on_the_newest_session(tmp_path):
    home = tmp_path / "home"
    _resumed(home)
    engine = _index(tmp_path, home)
    [hit] = engine.search("quokka").hits
    assert hit.session.session_id == NEW
    assert hit.also_in == 1 and hit.also_in_sessions == [OLD]
    assert hit.item.text.startswith("why does the quokka")
    d = hit.to_json()
    assert d["also_in"] == 1 and d["also_in_sessions"] == [OLD]
    from crabsearch.hits import structure_notes
    assert "also in 1 other session" in structure_notes(hit)
    # a word only in the new part: no duplicate
    [hit] = engine.search("raise pool size").hits
    assert hit.session.session_id == NEW and hit.also_in == 0


def test_dedup_still_fills_the_limit(tmp_path):
    home = tmp_path / "home"
    for n in range(4):
        _resumed(home, f"{n}2222222-0000-4000-8000-000000000002", f"{n}3333333-0000-4000-8000-000000000003",
                 word="wombat")
    for n in range(3):
        ClaudeSession(home, session_id=f"{n}4444444-0000-4000-8000-000000000004").user(
            f"wombat number {n} alone").write()
    engine = _index(tmp_path, home)
    hits = engine.search("wombat", limit=5).hits
    ids = [h.session.session_id for h in hits]
    assert len(ids) == 5 == len(set(ids))
    assert not any(i[1:].startswith("2222222") for i in ids)  # the old copies never show
    assert engine.search("wombat", limit=20).hits.__len__() == 7


def test_same_ids_at_other_times_are_not_merged(tmp_path):
    """Same uid, different time: not a copy (short pi ids can collide across sessions)."""
    from v3_builders import V3Session

    home = tmp_path / "home"
    root = home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    a = V3Session("aaaa0000-pi")
    a.user("the numbat migration fails")
    a.write(root / "2026-05-12T09-00-00-000Z_aaaa0000-pi.jsonl")
    b = V3Session("bbbb0000-pi", start=a.t.replace(hour=11))
    b.user("the numbat migration fails")  # same entry id 00000001, another time
    b.write(root / "2026-05-12T11-00-00-000Z_bbbb0000-pi.jsonl")
    engine = _index(tmp_path, home)
    hits = engine.search("numbat").hits
    assert len(hits) == 2 and all(h.also_in == 0 for h in hits)


def test_pi_fork_copy_is_merged(tmp_path):
    from v3_builders import V3Session

    home = tmp_path / "home"
    root = home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    a = V3Session("aaaa0000-pi")
    a.user("the numbat migration fails")
    a.assistant("Retry it.")
    a.write(root / "2026-05-12T09-00-00-000Z_aaaa0000-pi.jsonl")
    b = V3Session("bbbb0000-pi")
    b.entries += a.entries[1:]
    b.n, b.leaf, b.t = a.n, a.leaf, a.t
    b.user("and now the second step")
    b.write(root / "2026-05-12T11-00-00-000Z_bbbb0000-pi.jsonl")
    engine = _index(tmp_path, home)
    [hit] = engine.search("numbat").hits
    assert hit.session.session_id == "bbbb0000-pi" and hit.also_in_sessions == ["aaaa0000-pi"]


# -- branches ------------------------------------------------------------------------------------

def _pi_branched(home):
    from v3_builders import V3Session

    s = V3Session("cccc0000-pi")
    u1 = s.user("set up the capybara deploy")
    s.assistant("Using the blue pipeline for capybara.")  # abandoned below
    s.user("no wait, try the axolotl route instead")       # abandoned
    s.branch(u1)
    s.assistant("Using the green pipeline.")
    s.user("good, ship it")
    root = home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    return s.write(root / "2026-05-12T09-00-00-000Z_cccc0000-pi.jsonl")


def test_hit_on_an_abandoned_branch_is_found_and_marked(tmp_path):
    home = tmp_path / "home"
    _pi_branched(home)
    engine = _index(tmp_path, home)
    [hit] = engine.search("axolotl").hits
    assert hit.session.extra["off_branch"] == [[1, 3]]
    assert hit.message_index == 2 and hit.branch == "abandoned"
    assert hit.to_json()["branch"] == "abandoned"
    # context along its own branch: the shared start and its own messages, not the branch after
    assert [(i.message_index, i.abandoned) for i in hit.window] == [(0, False), (1, True), (2, True)]
    assert hit.window[2].to_json()["abandoned"] is True
    from crabsearch.hits import structure_notes
    assert structure_notes(hit) == ["on an abandoned branch"]
    [hit] = engine.search("ship").hits
    assert hit.branch == "active"
    assert [i.message_index for i in hit.window] == [0, 3, 4]  # skips the abandoned messages
    page = engine.page(hit.ref, 0, 10)
    assert [m.abandoned for m in page.messages] == [False, True, True, False, False]


def test_gemini_rewound_messages_are_abandoned(tmp_path):
    from crabsearch.hits import abandoned_ranges, in_ranges
    from crabsearch.model import Session

    s = Session("gemini", "g1", "/x", extra={"rewound": [[3, 6]]})
    assert abandoned_ranges(s) == [(3, 6)]
    assert [in_ranges(i, abandoned_ranges(s)) for i in (2, 3, 5, 6)] == [False, True, True, False]


def test_session_view_marks_abandoned_messages():
    from crabsearch.hits import Item
    from crabsearch.tui.sessionlines import subagent_lines

    item = Item(0, "assistant", "tool-call:Task", None, "{}",
                subagents=[{"session_id": "agent-abc", "title": "Find files"},
                           {"session_id": "agent-def", "title": None}])
    assert [t.plain for t in subagent_lines(item)] == [
        "→ subagent session agent-abc: Find files", "→ subagent session agent-def (not indexed)"]


# -- compaction ----------------------------------------------------------------------------------

def test_claude_hit_before_compaction_is_labelled(tmp_path):
    home = tmp_path / "home"
    (ClaudeSession(home, session_id=OLD).user("the gecko build is slow").assistant("Caching helps.")
     .compact("We discussed the gecko build.").user("now the tapir tests").assistant("Fixed.").write())
    engine = _index(tmp_path, home)
    [hit] = engine.search("tapir").hits
    assert hit.session.extra["compactions"] == [2]
    assert hit.before_compaction is False
    [hit] = engine.search('"gecko build is slow"').hits
    assert hit.message_index == 0 and hit.before_compaction is True
    assert hit.to_json()["before_compaction"] is True
    from crabsearch.hits import structure_notes
    assert structure_notes(hit) == ["before compaction"]


def test_pi_and_codex_record_compactions(tmp_path):
    from crabsearch.sources import SOURCES
    from v3_builders import V3Session

    s = V3Session("dddd0000-pi")
    s.user("first")
    kept = s.assistant("answer")
    s.compaction("Summary of the start.", kept)
    s.user("after")
    path = s.write(tmp_path / "2026-05-12T09-00-00-000Z_dddd0000-pi.jsonl")
    assert SOURCES["pi"].read(path).session.extra["compactions"] == [2]

    from builders import CodexSession
    c = CodexSession(tmp_path / "home").user("first question").assistant("answer")
    c.lines.append(c._env("compacted", {"message": "Summary so far."}))
    c.user("second question")
    read = SOURCES["codex"].read(c.write())
    summary = [m.message_index for m in read.messages if m.role.value == "summary"]
    assert read.session.extra["compactions"] == summary == [2]


# -- parent links to subagents -------------------------------------------------------------------

def test_parent_page_links_the_spawning_call_to_its_subagent(tmp_path, sub_home, capsys):
    engine = _index(tmp_path, sub_home)
    ref = engine.find_session(PARENT)
    assert ref.session.extra["subagents"] == [[1, f"agent-{AGENT}"]]
    page = engine.page(ref, 0, 50)
    call = page.messages[1]
    assert call.label == "tool-call:Task"
    assert call.subagents == [{"session_id": f"agent-{AGENT}", "title": "Find every crontab file in the repo"}]
    assert all(not m.subagents for m in page.messages if m is not call)
    d = page.to_json()
    assert d["messages"][1]["subagents"][0]["session_id"] == f"agent-{AGENT}"
    assert "subagents" not in d["messages"][0]
    # the id named by the link finds the subagent session
    [hit] = engine.search(f"agent-{AGENT}").hits
    assert hit.session.session_id == f"agent-{AGENT}" and hit.parent_title == "Crontab audit"
    from crabsearch.cli_text import print_page as _print_page
    _print_page(page)
    assert f"→ subagent session agent-{AGENT}: Find every crontab file in the repo" in capsys.readouterr().out


def test_legacy_inline_agent_id_on_the_result_line(tmp_path):
    """Claude Code 2.0.x: ``agentId`` only at the top of the parent's result line."""
    from crabsearch.sources import SOURCES

    s = ClaudeSession(tmp_path / "home", session_id=PARENT).user("go").task("look around", "5e6f7a8b", "done")
    del s.lines[-1]["toolUseResult"]
    read = SOURCES["claude"].read(s.write())
    assert read.session.extra["subagents"] == [[1, "agent-5e6f7a8b"]]


# -- Claude Code rewinds ---------------------------------------------------------------------------


def test_claude_rewind_marks_the_abandoned_branch(tmp_path):
    from crabsearch.sources import SOURCES

    home = tmp_path / "home"
    s = ClaudeSession(home).user("set up the wombat parser").assistant("parser scaffolded")
    fork_point = s.parent
    s.user("now add yaml support").assistant("yaml added with pyyaml")  # abandoned below
    s.tool("Bash", {"command": "pytest"}, "3 passed")  # tool lines: results point at calls
    s.rewind_to(fork_point).user("now add toml support instead").assistant("toml added with tomllib")
    path = s.write()
    read = SOURCES["claude"].read(path)
    assert read.session.extra["off_branch"] == [[2, 6]]
    assert [m.text for m in read.messages[6:]] == ["now add toml support instead", "toml added with tomllib"]
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    [old] = engine.search("yaml").hits
    assert old.branch == "abandoned" and old.message_index in (2, 3)
    [new] = engine.search("toml").hits
    assert new.branch == "active"


def test_claude_linear_session_with_parallel_tools_has_no_branches(tmp_path):
    from crabsearch.sources import SOURCES

    home = tmp_path / "home"
    s = ClaudeSession(home).user("run both checks").assistant("running")
    call_parent = s.parent
    s.tool("Bash", {"command": "ruff"}, "ok")
    s.rewind_to(call_parent).tool("Bash", {"command": "mypy"}, "ok")  # a sibling call, not a rewind
    s.assistant("both pass").user("thanks").assistant("welcome")
    read = SOURCES["claude"].read(s.write())
    assert "off_branch" not in read.session.extra


def test_claude_rewind_found_in_an_appended_read(tmp_path):
    from crabsearch.sources import SOURCES

    home = tmp_path / "home"
    s = ClaudeSession(home).user("first prompt").assistant("first answer")
    fork_point = s.parent
    s.user("second prompt").assistant("second answer")
    path = s.write()
    src = SOURCES["claude"]
    first = src.read(path)
    s.rewind_to(fork_point).user("second prompt, edited").assistant("better answer")
    path.write_text("".join(json.dumps(line) + "\n" for line in s.lines))
    more = src.read(path, first.end_offset, first.state)
    assert more.session.extra["off_branch"] == [[2, 4]]


def test_many_copies_of_one_message_do_not_leave_the_page_short(tmp_path):
    """25 resumed copies of one session, and 11 other sessions: the copies fold into one row and
    the other sessions still fill the limit (trial finding: 6 rows of 12)."""
    home = tmp_path / "home"
    base = ClaudeSession(home, session_id="a0000000-0000-4000-8000-000000000000").user("the kestrel files are big")
    base.write()
    for n in range(25):
        ClaudeSession(home, session_id=f"c{n:07d}-0000-4000-8000-000000000000").copy_of(base).write()
    for n in range(11):
        ClaudeSession(home, session_id=f"d{n:07d}-0000-4000-8000-000000000000").user(
            f"kestrel notes, part {n}, a longer message about other things entirely").write()
    engine = _index(tmp_path, home)
    hits = engine.search("kestrel", limit=12).hits
    assert len(hits) == 12 and len({h.session.session_id for h in hits}) == 12
    assert sum(1 for h in hits if h.also_in) == 1

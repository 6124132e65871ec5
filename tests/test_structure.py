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
    from crabsearch.cli import _print_hits
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

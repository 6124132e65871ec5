"""The filter registry (``crabsearch.filters``): every registered filter has every piece the
query parser, the index, the app (chips, Tab, help, problem lines), the README and MCP read
from it, and a piece left out fails here (the checks are run on broken entries too)."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime
from pathlib import Path

import pytest

from crabsearch import filters as registry
from crabsearch.filters import FILTERS, Facts, Filter, McpArg
from crabsearch.query import parse
from crabsearch.sources import AGENTS

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 3, 20, 15, 30).astimezone()
FACTS = Facts(AGENTS, NOW)
KINDS = {"term", "messages", "project", "time", "fields"}


def some_value(f: Filter) -> str:
    """A value ``f`` takes: its first fixed completion, a known agent, or any name."""
    if isinstance(f.complete, tuple):
        return f.complete[0]
    return AGENTS[0] if f.name == "agent" else "webapp"


def problems_of(f: Filter, every: dict[str, Filter]) -> list[str]:
    """What ``f`` lacks of the pieces its readers need (empty: nothing)."""
    out = []
    if not f.name.isidentifier() or f.name != f.name.lower():
        out.append("its name is not a lowercase word (the query language's key)")
    if not (f.needs and f.valid):
        out.append("no needs or valid wording")
    empty = f.problem(f"{f.name}:", "", FACTS) or ""
    if not empty.startswith(f"{f.name}: needs {f.needs}"):
        out.append(f"its no-value line says {empty!r}")
    value = some_value(f)
    if f.problem(f"{f.name}:{value}", value, FACTS) is not None:
        out.append(f"{value!r} is not a value it takes")
    fixed = f.complete if isinstance(f.complete, tuple) else ()
    if not fixed and not f.complete:
        out.append("no completion source")
    out += [f"completes to {v!r}, a value it does not take" for v in fixed if f.problem("", v, FACTS)]
    if f.narrow.kind not in KINDS:
        out.append(f"narrows by {f.narrow.kind!r}, which the index does not know")
    if f.narrow.kind in ("term", "messages") and not f.narrow.field:
        out.append("narrows by a term with no field")
    if not (f.help and f"{f.name}:" in " ".join(f.help)):
        out.append("no help row naming it")
    rows = [g.readme for g in every.values() if g.readme]
    if not any(f"`{f.name}:" in row[0] for row in rows):
        out.append("no README row naming it")
    if f.picker is not None and not (f.picker.startswith("F") and f.picker[1:].isdigit()):
        out.append(f"its picker {f.picker!r} is no function key")
    if f.mcp is not None and not (f.mcp.description and f.mcp.tools):
        out.append("an MCP argument with no description or tool")
    return out


def test_every_registered_filter_has_every_piece():
    assert {name: problems_of(f, FILTERS) for name, f in FILTERS.items()} == {name: [] for name in FILTERS}


@pytest.mark.parametrize("broken,lacks", [
    (dict(help=("the thing", "does it")), "no help row naming it"),
    (dict(readme=None), "no README row naming it"),
    (dict(needs=""), "no needs or valid wording"),
    (dict(narrow=registry.Narrow("term")), "narrows by a term with no field"),
    (dict(narrow=registry.Narrow("regex", "role")), "narrows by 'regex', which the index does not know"),
    (dict(complete=("user", "robot")), "completes to 'robot', a value it does not take"),
    (dict(mcp=McpArg("", ("search_sessions",))), "an MCP argument with no description or tool"),
])
def test_an_entry_that_lacks_a_piece_is_caught(broken, lacks):
    role = dataclasses.replace(FILTERS["role"], **broken)
    assert lacks in problems_of(role, {**FILTERS, "role": role})


def test_the_parser_reads_each_filter_from_its_entry():
    for f in FILTERS.values():
        value = some_value(f)
        q = parse(f"word {f.name}:{value}", agents=AGENTS, now=NOW)
        assert q.words == ["word"] and q.values.get(f.name) is not None and q.notes == [], f.name
        q = parse(f"{f.name}:", agents=AGENTS, now=NOW)
        assert q.notes == [f"{f.problem(f'{f.name}:', '', FACTS)}; filter ignored"], f.name


def test_the_app_reads_each_filter_from_its_entry():
    from crabsearch.tui.filters import completions, filter_problem, filters, tokens
    from crabsearch.tui.panels import KEYS

    help_rows = dict(KEYS)["Query language"]
    for f in FILTERS.values():
        value = some_value(f)
        assert [(t.key, t.value) for t in filters(f"x {f.name}:{value}")] == [(f.name, value)]  # its chip
        assert f"{f.name}:" in completions(f.name[:2], 2, {})[2]  # Tab completes its name
        facets = {f.complete: [(value, 1)]} if isinstance(f.complete, str) else {}
        assert f"{f.name}:{value}" in completions(f"{f.name}:", len(f.name) + 1, facets)[2], f.name
        assert f.help in help_rows
        [tok] = tokens(f"{f.name}:")
        line = filter_problem(tok, AGENTS)
        assert line.startswith(f"{f.name}: needs {f.needs}") and line.endswith(
            f" ({f.picker} picks one)." if f.picker else "."), line


def test_the_readme_lists_the_registry():
    """The README's table of filters is :func:`crabsearch.filters.readme_rows` (to rewrite it:
    ``python -m crabsearch.filters``)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert registry.with_readme_rows(readme, AGENTS) == readme


def test_the_index_reads_each_filter_from_its_entry():
    from crabsearch.index.filtering import filters as clauses
    from crabsearch.index.schema import make_schema
    from crabsearch.index.store import INDEX_VERSION

    schema = make_schema()
    for f in FILTERS.values():
        pq = parse(f"{f.name}:{some_value(f)}", agents=AGENTS, now=NOW)
        narrowed = clauses(pq, sessions=False, kind=False)
        assert bool(narrowed) == (f.narrow.kind != "fields"), f.name
        if f.narrow.of_session is not None:
            assert f.narrow.field in schema and f".f{f.narrow.field}" in INDEX_VERSION


def test_mcp_declares_each_filter_argument(tmp_path):
    from crabsearch.mcp_server import build_server
    from crabsearch.mcp_tools import Door
    from crabsearch.search import Engine

    server = build_server(Door(Engine(tmp_path / "index"), indexer=None))
    tools = {t.name: t for t in asyncio.run(server.list_tools())}
    for f in FILTERS.values():
        for name, tool in tools.items():
            props = tool.input_schema["properties"]
            assert (f.name in props) == bool(f.mcp and name in f.mcp.tools), (f.name, name)
            if f.name in props:
                assert props[f.name]["description"] == f.mcp.description.format(agents=", ".join(AGENTS))
        assert f"{f.name}:" in tools["search_sessions"].input_schema["properties"]["query"]["description"]

"""The floors' imports: Whoosh's query objects are built inside ``crabsearch.index`` only
(``index.lookups``, ``index.querying``, ``index.filtering``); the search layer above it and the
app import nothing from Whoosh, read from each module's source (its ``import`` statements, at any
depth: a function-level import counts too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import crabsearch

PACKAGE = Path(crabsearch.__file__).parent


def imported(path: Path) -> list[str]:
    """The absolute module names ``path`` imports (``import X``, ``from X import y``: ``X``);
    relative imports are crabsearch's own and left out."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append(node.module)
    return out


@pytest.mark.parametrize("floor", ["search", "tui"])
def test_the_search_layer_and_the_app_import_nothing_from_whoosh(floor):
    modules = sorted((PACKAGE / floor).rglob("*.py"))
    assert modules
    found = {str(p.relative_to(PACKAGE)): [m for m in imported(p) if m == "whoosh" or m.startswith("whoosh.")]
             for p in modules}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_import_reader_sees_whoosh_imports_where_they_are():
    """The check above can fail: ``index.lookups`` imports Whoosh's query classes."""
    assert "whoosh.query" in imported(PACKAGE / "index" / "lookups.py")

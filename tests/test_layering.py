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


def crabsearch_imports(path: Path) -> set[str]:
    """The crabsearch modules ``path`` imports, relative imports resolved to absolute names
    (``from ..index import x`` in ``crabsearch/search/engine.py``: ``crabsearch.index``)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts if parts[-1] == "__init__" else parts[:-1]
    package = [p for p in package if p != "__init__"]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)]
            if node.module:
                out.add(".".join(base + [node.module]))
            else:
                out.update(".".join(base + [alias.name]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "crabsearch":
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name.split(".")[0] == "crabsearch")
    return out


DOORS = ("crabsearch.tui", "crabsearch.cli", "crabsearch.cli_text", "crabsearch.mcp_server", "crabsearch.mcp_tools",
         "crabsearch.mcp_text", "crabsearch.resident", "crabsearch.launch")
ABOVE = {
    "sources": ("crabsearch.index", "crabsearch.search", *DOORS),
    "index": ("crabsearch.search", *DOORS),
    "search": DOORS,
}
"""Per floor (a package of crabsearch), the floors above it, which it must not import
(``ARCHITECTURE.md``, "The floors")."""


def _upward(floor: str) -> dict[str, list[str]]:
    above = ABOVE[floor]
    found = {}
    for p in sorted((PACKAGE / floor).rglob("*.py")):
        bad = sorted(m for m in crabsearch_imports(p) if any(m == a or m.startswith(a + ".") for a in above))
        if bad:
            found[str(p.relative_to(PACKAGE))] = bad
    return found


@pytest.mark.parametrize("floor", sorted(ABOVE))
def test_no_floor_imports_the_floors_above_it(floor):
    assert _upward(floor) == {}


def test_the_import_reader_resolves_relative_imports():
    """The check above can fail: the search floor's engine imports the index floor, relatively."""
    assert "crabsearch.index.collect" in crabsearch_imports(PACKAGE / "search" / "engine.py")
    assert "crabsearch.sources" in crabsearch_imports(PACKAGE / "index" / "writer.py")


@pytest.mark.parametrize("library", ["whoosh", "textual"])
def test_whoosh_is_imported_only_by_the_index_and_textual_only_by_the_app(library):
    home = "index" if library == "whoosh" else "tui"
    found = {str(p.relative_to(PACKAGE)): hits for p in sorted(PACKAGE.rglob("*.py"))
             if not p.relative_to(PACKAGE).as_posix().startswith(home + "/")
             for hits in [[m for m in imported(p) if m == library or m.startswith(library + ".")]] if hits}
    assert found == {}

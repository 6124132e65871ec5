"""Issue 13 (whole-process CLI): what a search imports, the lazy agent registry, the lean whoosh
import, and the per-segment column files. Each test guards one structural change."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import crabsearch.sources as sources_pkg
from crabsearch.index import colfile
from crabsearch.index.collect import SegmentKeys
from crabsearch.index.layout import where
from crabsearch.index.store import open_index
from crabsearch.index.writer import Indexer
from crabsearch.sources import AGENTS, SOURCES, Source, agent_of

from builders import ClaudeSession, CodexSession

ROOT = Path(__file__).resolve().parent.parent

# Runs the CLI in a fresh interpreter and prints, on stderr, the crabsearch and heavy modules it
# imported (as JSON) after it finished.
_PROBE = r"""
import json, sys
from crabsearch.cli import main
code = main(sys.argv[1:])
sys.stderr.write("\nMODULES " + json.dumps(sorted(sys.modules)) + "\n")
sys.exit(code)
"""


@pytest.fixture
def built(tmp_path):
    """A home with one Claude and one Codex session, indexed; ``(env, index_dir)``."""
    home = tmp_path / "home"
    (ClaudeSession(home, session_id="5c0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/app")
     .user("the cron job runs twice at midnight").assistant("Two crontab entries overlap.").write())
    CodexSession(home, session_id="019a0000-1111-7222-8333-444455556666").user(
        "parser rejects step values").assistant("Use */5").write()
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_INDEX_DIR")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p))
    index_dir = tmp_path / "index"
    Indexer(index_dir, env={"HOME": str(home)}).refresh()
    return env, index_dir


def _search(env, index_dir, *args) -> tuple[dict, set[str]]:
    r = subprocess.run([sys.executable, "-c", _PROBE, "search", *args, "--json", "--index-dir", str(index_dir)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    modules = json.loads(r.stderr.rpartition("MODULES ")[2])
    return json.loads(r.stdout), set(modules)


def _python_ok(code: str) -> None:
    """Run ``code`` in a fresh interpreter (this repository first on its path): it must exit 0."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr


def _readers(modules: set[str]) -> set[str]:
    return {agent_of(m.rpartition(".")[2]) for m in modules if m.startswith("crabsearch.sources.")} & set(AGENTS)


def test_read_only_search_imports_no_writer_and_no_reader(built):
    env, index_dir = built
    data, modules = _search(env, index_dir, "zqxjvbnwk", "--no-refresh")
    assert data["hits"] == []
    assert "crabsearch.index.writer" not in modules
    assert _readers(modules) == set()
    assert not {"urllib.request", "asyncio", "cached_property", "sqlite3", "zstandard"} & modules


def test_search_imports_the_readers_of_the_agents_it_shows_only(built):
    env, index_dir = built
    data, modules = _search(env, index_dir, "cron", "--no-refresh")
    assert [h["agent"] for h in data["hits"]] == ["claude"]
    assert data["hits"][0]["resume_command"].endswith("claude --resume 5c0375b4-57a5-4f26-b12d-d022ee4e51b7")
    assert _readers(modules) == {"claude"}
    assert "crabsearch.index.writer" not in modules


def test_agents_list_every_source_module_in_order():
    found = {}
    for info in pkgutil.iter_modules(sources_pkg.__path__):
        module = __import__(f"crabsearch.sources.{info.name}", fromlist=["SOURCE"])
        src = getattr(module, "SOURCE", None)
        if isinstance(src, Source):
            assert src.agent == agent_of(info.name), "a reader module is named after its agent"
            found[src.agent] = src
    assert set(found) == set(AGENTS)
    assert list(AGENTS) == [s.agent for s in sorted(found.values(), key=lambda s: (s.order, s.agent))]
    assert list(SOURCES) == list(AGENTS) and len(SOURCES) == len(AGENTS)
    assert all(SOURCES[a] is found[a] for a in AGENTS) and SOURCES.get("vim") is None and "vim" not in SOURCES
    with pytest.raises(KeyError):
        SOURCES["vim"]


def test_lean_whoosh_import_leaves_no_stand_ins():
    code = ("import sys, crabsearch.index, whoosh.reading, functools\n"
            "assert 'urllib.request' not in sys.modules and 'cached_property' not in sys.modules\n"
            "assert isinstance(whoosh.reading.SegmentReader.__dict__['deleted_docs_set'], functools.cached_property)\n"
            "import urllib.request\n"
            "assert hasattr(urllib.request, 'Request') and hasattr(urllib.request, 'urlopen')\n"
            "import cached_property\n"
            "assert cached_property.cached_property is not functools.cached_property\n"
            "assert 'whoosh.lang.morph_en' not in sys.modules\n"
            "from whoosh.query.terms import variations\n"
            "assert 'render' in set(variations('rendering'))\n"
            "assert 'whoosh.lang.morph_en' in sys.modules\n"
            "assert 'whoosh.lang.porter' not in sys.modules\n"
            "from whoosh.analysis import StemmingAnalyzer\n"
            "assert [t.text for t in StemmingAnalyzer()('rendering tables')] == ['render', 'tabl']\n"
            "assert 'whoosh.lang.porter' in sys.modules\n")
    _python_ok(code)


def test_column_files_hold_whooshs_columns(built):
    _, index_dir = built
    gen = where(index_dir)
    ix, _ = open_index(index_dir, create=False)
    names = {n for n in os.listdir(gen) if n.startswith(colfile.PREFIX)}
    assert names == {colfile.PREFIX + seg.segment_id() for seg in ix._read_toc().segments}
    with ix.searcher() as s:
        for sub, _ in s.leaf_searchers():
            r = sub.reader()
            sid = r.segment().segment_id()
            got = colfile.load(gen, sid, r.doc_count_all())
            assert got is not None
            keys, updated, indexes = got
            assert keys == [k.decode() if isinstance(k, bytes) else k for k in r.column_reader("skey")]
            assert list(updated) == list(r.column_reader("updated"))
            assert list(indexes) == list(r.column_reader("idx"))
            assert colfile.load(gen, sid, r.doc_count_all() + 1) is None  # another segment's count: ignored
            cached = SegmentKeys()
            assert cached.keys(sub) == keys and cached.updated(sub) == updated and cached.indexes(sub) == indexes


def test_column_file_damage_falls_back_to_whoosh(built):
    _, index_dir = built
    gen = where(index_dir)
    for name in os.listdir(gen):
        if name.startswith(colfile.PREFIX):
            data = (gen / name).read_bytes()
            (gen / name).write_bytes(data[:-3])  # cut short
    ix, _ = open_index(index_dir, create=False)
    with ix.searcher() as s:
        for sub, _ in s.leaf_searchers():
            r = sub.reader()
            assert colfile.load(gen, r.segment().segment_id(), r.doc_count_all()) is None
            assert SegmentKeys().keys(sub) == [k.decode() if isinstance(k, bytes) else k for k in r.column_reader("skey")]


def test_column_files_follow_the_segments(built, tmp_path):
    env, index_dir = built
    home = Path(env["HOME"])
    for i in range(3):  # more commits: new segments get files, merged-away ones lose theirs
        ClaudeSession(home, session_id=f"5c0375b4-57a5-4f26-b12d-d022ee4e51c{i}").user(f"note {i}").write()
        Indexer(index_dir, env={"HOME": str(home)}).refresh()
    gen = where(index_dir)
    ix, _ = open_index(index_dir, create=False)
    names = {n for n in os.listdir(gen) if n.startswith(colfile.PREFIX)}
    assert names == {colfile.PREFIX + seg.segment_id() for seg in ix._read_toc().segments}
    assert colfile.decode(colfile.encode(["a", "b", "a"], [1, 2, 3], [0, -1, 5]), 3) == (
        ["a", "b", "a"], __import__("array").array("q", [1, 2, 3]), __import__("array").array("i", [0, -1, 5]))


def test_secret_patterns_compile_on_first_use_and_are_the_same():
    code = ("import crabsearch.redact as r\n"
            "assert r.secret_patterns.cache_info().currsize == 0\n"
            "big, curl = r.secret_patterns()\n"
            "assert r.secret_patterns() == (big, curl)\n"
            "assert big.pattern == r._compile(r._BRANCHES).pattern and curl.pattern == r._compile(r._CURL_BRANCHES).pattern\n"
            "assert r.redact('key sk-live-FAKEFAKEFAKE1234567890 here') == 'key sk-liv***7890 here'\n")
    _python_ok(code)


def test_ascii_text_is_tokenized_as_by_the_full_pattern():
    """The tokenizer's ASCII pattern (the CJK class cut to one non-ASCII character, so it
    compiles in well under a millisecond instead of ~15 ms) finds the same tokens in ASCII text
    as the full pattern, group for group."""
    import random
    import re
    import string

    from crabsearch.index import token_pattern

    full, ascii_only = re.compile(token_pattern.TOKEN_PATTERN), token_pattern.token_re(True)
    rnd = random.Random(13)
    alphabet = string.printable + "'#+-_./:@" * 3
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 80))) for _ in range(5000)]
    texts.append("".join(c for c in (ROOT / "README.md").read_text("utf-8") if c.isascii()))
    for text in texts:
        assert [(m.lastindex, m.span()) for m in full.finditer(text)] == \
               [(m.lastindex, m.span()) for m in ascii_only.finditer(text)], text
    assert token_pattern.token_re(False).pattern == token_pattern.TOKEN_PATTERN


def test_the_agent_column_fits_every_agent_badge():
    """``tui.render.AGENT_WIDTH`` is a constant (computing it imports every reader): it must be
    the longest badge or name of the agents plus 2."""
    from crabsearch.sources import SOURCES
    from crabsearch.tui.render import AGENT_WIDTH

    assert AGENT_WIDTH == max(len(s.badge or s.display or s.agent) for s in SOURCES.values()) + 2


def test_the_app_imports_neither_the_writer_nor_a_reader():
    """The app paints its first rows before it refreshes the index (issue 13): importing it must
    not import the index writer or any agent's reader (its Indexer is made on first use)."""
    _python_ok("import sys, crabsearch.tui.app\n"
               "assert 'crabsearch.index.writer' not in sys.modules\n"
               "readers = [m for m in sys.modules if m.startswith('crabsearch.sources.') and m != 'crabsearch.sources.base']\n"
               "assert not readers, readers\n")


def test_search_json_imports_neither_textual_nor_mcp(built):
    """``crabsearch search --json`` (with its refresh) in its own process: the terminal app's
    toolkit, the MCP SDK and the file watcher are never imported; nor, with no config file, no
    export and no compressed transcript, ``tomllib`` (the readers parse a config file they
    found), ``zipfile`` (an export's zip) and ``zstandard`` (OpenClaw's compressed events)."""
    env, index_dir = built
    data, modules = _search(env, index_dir, "cron")
    assert [h["agent"] for h in data["hits"]] == ["claude"]
    heavy = {m.partition(".")[0] for m in modules} & {"textual", "rich", "mcp", "pydantic", "watchfiles", "anyio"}
    assert not heavy, heavy
    assert not {m for m in modules if m.startswith(("crabsearch.tui", "crabsearch.mcp"))}
    assert "crabsearch.index.writer" in modules  # the refresh ran
    assert not {"tomllib", "zipfile", "zstandard"} & modules


def test_lookups_walk_matchers_instead_of_listing_every_clause(built, monkeypatch):
    """The session lookups a search makes per row (``index.lookups``) skip through their
    clauses: Whoosh's ``IntersectionMatcher.all_ids`` lists every document of each clause (all
    of an agent's documents for ``continued_from``) and is never called."""
    from whoosh.matching import binary

    from crabsearch.index import lookups

    def listed(self):
        raise AssertionError("IntersectionMatcher.all_ids lists every document of each clause")

    monkeypatch.setattr(binary.IntersectionMatcher, "all_ids", listed)
    _, index_dir = built
    ix, _ = open_index(index_dir, create=False)
    with ix.searcher() as s:
        assert lookups.continued_from(s, "claude", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7") == []
        docs = lookups.session_documents(s, "claude", ["5c0375b4-57a5-4f26-b12d-d022ee4e51b7"])
        assert len(docs) == 1 and "meta" in s.stored_fields(docs[0])
        from whoosh.query import Term
        assert len(lookups.transcript_messages(s, Term("kind", "m"), s.stored_fields(docs[0])["fkey"])) == 2


def test_search_without_refresh_imports_only_what_it_reads(built):
    """``search --json --no-refresh`` in its own process imports neither the terminal app's
    toolkit, the MCP SDK nor the index writer, and not what it never calls: ``difflib`` (only an
    unknown agent name's suggestions), the volatile parts' patterns (a pasted line's only)."""
    env, index_dir = built
    data, modules = _search(env, index_dir, "cron", "--no-refresh")
    assert [h["agent"] for h in data["hits"]] == ["claude"]
    heavy = {m.partition(".")[0] for m in modules} & {"textual", "rich", "mcp", "pydantic", "watchfiles", "anyio"}
    assert not heavy, heavy
    assert not {"crabsearch.index.writer", "difflib", "crabsearch.volatile", "whoosh.writing",
                "whoosh.qparser"} & modules

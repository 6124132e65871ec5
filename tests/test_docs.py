"""The documentation's shape: a README for users (short, linking every page of ``docs/``), links
that resolve, and code whose docstrings and comments state contracts, not the history of the
work (no issue numbers, no "fresh-user trial" stories: those belong in commit messages)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 350
HISTORY_WORDS = re.compile(r"\b[Ii]ssue[\s#]+[0-9]+|\b(fresh-)?user[\s#]+trial|\(a trial\)")
"""``issue 13``, ``issue\n    13``, ``# issue 5``, "a fresh-user trial", "a user trial": the history of
the work, wherever a line breaks. An upstream issue is cited as ``owner/repo#N``."""

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _docs() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md"))


def _slug(heading: str) -> str:
    """A Markdown heading's anchor as GitHub makes it: lowercased, punctuation but ``-`` and ``_``
    dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text("utf-8"), flags=re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.M)}


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text("utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


def test_the_readme_links_every_page_of_docs():
    readme = (ROOT / "README.md").read_text("utf-8")
    linked = {target.split("#")[0] for target in LINK.findall(readme)}
    pages = _docs()
    assert {"guide.md", "configuration.md", "cli.md", "mcp.md", "benchmarks.md"} <= {p.name for p in pages}
    assert [p.name for p in pages if f"docs/{p.name}" not in linked] == []


def test_the_readme_holds_the_command_ci_runs():
    """``.ci/run`` runs the README's test command, found by this exact text."""
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    [command] = re.findall(r'^TEST_CMD="(.+)"$', ci, flags=re.M)
    assert command in (ROOT / "README.md").read_text("utf-8")


@pytest.mark.parametrize("page", ["README.md", "SECURITY.md", "ARCHITECTURE.md", "bench/README.md", "bench/results/history.md",
                                  *(f"docs/{p.name}" for p in _docs())])
def test_every_relative_link_resolves(page):
    """Each link to a file of the repository names a file that exists, and its ``#anchor`` a
    heading of that file."""
    source = ROOT / page
    broken = []
    for target in LINK.findall(source.read_text("utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (source.parent / path).resolve() if path else source
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(target)
    assert broken == []


PATH_IN_CODE = re.compile(r"`((?:crabsearch|tests|docs|bench)/[^`\s]*)`")
"""A repository path written as code (```crabsearch/index/writer.py```); one holding ``<`` is a
pattern (``tests/test_sources_<agent>.py``), not a path."""


def test_every_path_architecture_names_exists():
    text = (ROOT / "ARCHITECTURE.md").read_text("utf-8")
    named = [p for p in PATH_IN_CODE.findall(text) if "<" not in p]
    assert len(named) > 30
    assert [p for p in named if not (ROOT / p).exists()] == []


def test_a_path_that_does_not_exist_is_found():
    assert PATH_IN_CODE.findall("see `crabsearch/index/nothing.py` and `tests/test_sources_<agent>.py`") == [
        "crabsearch/index/nothing.py", "tests/test_sources_<agent>.py"]
    assert not (ROOT / "crabsearch/index/nothing.py").exists()


def test_slugs_follow_github():
    assert _slug("`status --json`") == "status---json"
    assert _slug("Where it looks, and how to point it elsewhere") == "where-it-looks-and-how-to-point-it-elsewhere"
    assert _slug("Use it from your agent (MCP)") == "use-it-from-your-agent-mcp"


def test_no_code_names_an_issue_or_a_trial():
    """Docstrings and comments give the contract and the rule's source (an upstream file, a bench
    report, a doc section), not the issue or the trial that led to it."""
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "crabsearch").rglob("*.py"))
    assert files, "no module found"
    found = []
    for name in files:
        text = (ROOT / name).read_text("utf-8")
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()!r}" for m in HISTORY_WORDS.finditer(text)]
    assert found == []


@pytest.mark.parametrize("text", ["(issue 13)", "issue\n    13", "# issue\n# 5", "a fresh-user trial",
                                  "a fresh-user\n    trial", "a user trial", "(a trial)"])
def test_history_words_are_found_wherever_a_line_breaks(text):
    assert HISTORY_WORDS.search(text)


@pytest.mark.parametrize("text", ["kenn-io/agentsview#401", "a trial run of the bench", "an issue with it"])
def test_citations_and_plain_words_are_not_history(text):
    assert not HISTORY_WORDS.search(text)


SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", flags=re.S | re.M)
CODE_SPAN = re.compile(r"`(crabsearch [^`]+)`")
COMMANDS = {"search", "show", "export", "status", "index"}
"""The commands a documented line may run in a test (the app, ``mcp`` and ``import`` are not)."""


def _command_lines(text: str) -> list[tuple[str, bool]]:
    """``(line, in_block)``: each ``crabsearch ...`` line of the ``sh`` blocks, and each code span
    holding one, of a Markdown page."""
    lines = [(line, True) for block in SH_BLOCK.findall(text) for line in block.splitlines()
             if line.startswith("crabsearch ")]
    return lines + [(span, False) for span in CODE_SPAN.findall(SH_BLOCK.sub("", text))]


def _demo_commands() -> list[tuple[str, list[str]]]:
    """``(page, argv)`` of every documented command line that runs on the demo's sessions: those
    that carry ``--demo``, and the README's examples (its ``sh`` blocks), which it says run there
    with ``--demo`` added. Lines with a placeholder (``QUERY``, ``...``) or no command are left
    out."""
    out = []
    for page in ["README.md", *(f"docs/{p.name}" for p in _docs())]:
        for line, in_block in _command_lines((ROOT / page).read_text("utf-8")):
            argv = shlex.split(line, comments=True)[1:]
            if not set(argv) & COMMANDS or "..." in argv or any(a.isupper() for a in argv):
                continue
            if "--demo" in argv:
                out.append((page, argv))
            elif page == "README.md" and in_block:
                out.append((page, argv + ["--demo"]))
    return out


DEMO_COMMANDS = _demo_commands()


def test_the_documented_demo_commands_are_found():
    assert ("README.md", ["show", "5f0c9a7e", "--offset", "10", "--limit", "20", "--demo"]) in DEMO_COMMANDS
    assert ("README.md", ["export", "5f0c9a7e", "-o", "cron-fix.md", "--demo"]) in DEMO_COMMANDS


@pytest.mark.parametrize("page,argv", DEMO_COMMANDS, ids=[" ".join(a) for _, a in DEMO_COMMANDS])
def test_each_documented_demo_command_runs(page, argv, tmp_path, monkeypatch, capsys):
    """Each exits 0 on the bundled sessions (an id the demo does not hold exits 1)."""
    from source_checks import run_cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the demo's own index
    monkeypatch.chdir(tmp_path)  # export -o writes here
    code, _out, err = run_cli(capsys, *argv)
    assert code == 0, f"{page}: crabsearch {shlex.join(argv)}: {err}"


def test_the_resident_server_is_in_the_readme_and_security_md():
    """The background process ``search`` starts, which takes environments over a socket, is named
    where a user meets the CLI and in SECURITY.md's list of what crabsearch writes, with the
    directory, idle time and switch the code uses."""
    from crabsearch import launch

    minutes = f"{launch.IDLE_SECONDS // 60} idle minutes"
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "CRABSEARCH_NO_SERVER=1" in readme and minutes in readme
    security = (ROOT / "SECURITY.md").read_text("utf-8")
    stores = security.split("## What crabsearch stores")[1].split("\n## ")[0]
    for words in ["$XDG_RUNTIME_DIR/crabsearch/", "$TMPDIR/crabsearch-UID/", "0700", "0600", "environment",
                  f"up to {launch.IDLE_SECONDS // 60} minutes", "CRABSEARCH_NO_SERVER=1"]:
        assert words in stores, words


def test_the_readme_opening_counts_every_agent():
    """The opening paragraph gives the number of agents the readers know (no list of names that
    stops short of the table), and the table has a row for each."""
    from crabsearch.sources import SOURCES

    readme = (ROOT / "README.md").read_text("utf-8")
    opening = readme.split("\n\n")[2]
    assert opening.startswith("crabsearch reads the transcripts")
    assert re.findall(r"\b(\d+) agents\b", opening) == [str(len(SOURCES))]
    table = readme.split("<!-- agents: generated")[1].split("<!-- end of agents -->")[0]
    assert sum(line.startswith("| ") for line in table.splitlines()) == len(SOURCES) + 1  # and the header

"""Issue 16, defect 3: FIFOs, sockets and devices never block or feed crabsearch.

A FIFO where an agent keeps a side file (Claude's ``agent-x.meta.json``, Copilot's
``workspace.yaml``, OpenClaw's ``sessions.json``, ``~/.claude/settings.json``, ...) blocked
``index``, ``show``, ``export`` and ``status`` in ``open()`` forever; so did a transcript replaced
by a FIFO after it was indexed (``show``, ``export`` and search windows read it back by offset),
and a symlink to ``/dev/zero`` read without end. Every command here runs in a subprocess with a
timeout, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import crabsearch
from crabsearch import files
from crabsearch.files import NotRegularFile
from crabsearch.jsonl import iter_records, read_record, read_whole
from crabsearch.sources import SOURCES

from all_agents import AGENTS, CLEARED_ENV, all_agents_env, build_all_agents_home
from builders import ClaudeSession, ClaudeSubagent, CodexSession

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

TIMEOUT = 90
"""Seconds a command may take (it takes 1-3); past this it is taken as blocked."""
ROOT = Path(crabsearch.__file__).resolve().parents[1]


def cli_env(home_env: dict[str, str], tmp: Path) -> dict[str, str]:
    """The machine's environment without anything that moves an agent's directory, plus ``home_env``;
    ``TMPDIR`` private to the test (SQLite copies go there)."""
    drop = set(CLEARED_ENV) | {s.env_var for s in SOURCES.values() if s.env_var}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(home_env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    return env


def run_python(env: dict[str, str], *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """``python ARGS`` in a subprocess; a run past ``timeout`` fails the test (it was blocked)."""
    try:
        return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        pytest.fail(f"{' '.join(args)} did not finish in {timeout}s (blocked on a special file?)\n"
                    f"stdout: {out[-2000:]}\nstderr: {err[-2000:]}")


def run_crabsearch(env: dict[str, str], index_dir: Path, *argv: str) -> subprocess.CompletedProcess:
    """``crabsearch --index-dir INDEX_DIR ARGV`` in a subprocess, as :func:`run_python`."""
    return run_python(env, "-m", "crabsearch", "--index-dir", str(index_dir), *argv)


def _fifo(path: Path) -> Path:
    """Put a FIFO at ``path`` (replacing the file there)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)
    return path


def _finishes(fn, timeout: float = 20.0):
    """``fn()``'s result, or its exception raised here; fails the test when it does not return in
    ``timeout`` seconds (the thread is left blocked, as a daemon)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        pytest.fail(f"{fn} blocked for {timeout}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- the shared helper -------------------------------------------------------------------------


def test_regular_files_read_as_before(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    assert files.read_file(p) == p.read_bytes()
    assert files.read_file(p, 4) == b'{"a"'
    assert files.read_at(p, 9, 8) == b'{"b": 2}'
    assert files.read_text(p) == p.read_text()
    with files.open_file(p) as fh:
        assert fh.read() == p.read_bytes()
        assert os.get_blocking(fh.fileno())  # O_NONBLOCK is cleared after the check
    assert stat.S_ISREG(files.check_regular(p).st_mode)
    link = tmp_path / "link.jsonl"
    link.symlink_to(p)
    assert files.read_file(link) == p.read_bytes()  # a symlink to a regular file is fine
    files.copy_file(p, tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == p.read_bytes()
    assert stat.S_IMODE(os.stat(tmp_path / "copy").st_mode) == 0o600
    with pytest.raises(FileExistsError):
        files.copy_file(p, tmp_path / "copy")
    with pytest.raises(FileNotFoundError):
        files.read_file(tmp_path / "missing")


def _special_files(tmp_path) -> list[tuple[str, Path]]:
    """``(kind, path)``: a FIFO, symlinks to ``/dev/zero`` and ``/dev/null``, a directory and a
    Unix socket, each named like a transcript."""
    zero, null, d = tmp_path / "zero.jsonl", tmp_path / "null.jsonl", tmp_path / "dir.jsonl"
    zero.symlink_to("/dev/zero")
    null.symlink_to("/dev/null")
    d.mkdir()
    out = [("FIFO", _fifo(tmp_path / "fifo.jsonl")), ("character device", zero), ("character device", null),
           ("directory", d)]
    if hasattr(socket, "AF_UNIX"):
        cwd = os.getcwd()
        os.chdir(tmp_path)  # a socket path must be short: bind it relative to its directory
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind("sock.jsonl")
        finally:
            os.chdir(cwd)
        out.append(("socket", tmp_path / "sock.jsonl"))
    return out


@pytest.mark.parametrize("call", [
    files.read_file, files.read_text, files.check_regular, files.open_fd, lambda p: files.read_at(p, 0, 10),
    lambda p: files.copy_file(p, Path(str(p) + ".c")), lambda p: list(iter_records(str(p))),
    lambda p: read_record(str(p), 0, 10), lambda p: read_whole(str(p))])
def test_special_files_are_refused_at_once(tmp_path, call):
    for kind, path in _special_files(tmp_path):
        with pytest.raises(NotRegularFile) as info:
            _finishes(lambda: call(path))
        assert isinstance(info.value, OSError)
        assert info.value.kind == kind and info.value.filename == str(path)
        assert f"not a regular file ({kind})" in str(info.value)
        assert not os.path.exists(str(path) + ".c")


def test_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path, monkeypatch):
    """The name is checked with ``stat`` first, but what is opened is checked again with
    ``fstat``: a FIFO put there between the two must not block the open (``O_NONBLOCK``)."""
    regular = tmp_path / "regular"
    regular.write_text("x")
    fifo = _fifo(tmp_path / "swapped.jsonl")
    real_stat = os.stat
    monkeypatch.setattr(files.os, "stat", lambda p, *a, **k: real_stat(regular) if str(p) == str(fifo)
                        else real_stat(p, *a, **k))
    with pytest.raises(NotRegularFile, match="FIFO"):
        _finishes(lambda: files.read_file(fifo))


def test_every_reader_refuses_a_fifo_transcript(tmp_path):
    """A transcript that is a FIFO (discovered as a file, replaced before it is read) is an
    ``OSError`` from every source's read, fingerprint and load, never a wait."""
    units = [str(_fifo(tmp_path / name)) for name in ("x.jsonl", "x.json", "x.md", "meta")]
    units += [str(_fifo(tmp_path / "h.md")) + "#0", str(_fifo(tmp_path / "store.crmem")) + "#01K3ZQ",
              str(_fifo(tmp_path / "opencode.db")) + "#ses_1",
              str(_fifo(tmp_path / "openclaw-agent.sqlite")) + "#a1b2c3d4"]
    for unit in units:
        for src in SOURCES.values():
            for what, call in (("read", lambda: src.read(Path(unit))),
                               ("fingerprint", lambda: src.fingerprint(unit, 100)),
                               ("load", lambda: src.load(unit, 0, 10))):
                try:
                    got = _finishes(call)
                except (OSError, ValueError):  # ValueError: a unit path of another source's kind
                    continue
                ok = {"read": lambda: got.messages == [], "fingerprint": lambda: isinstance(got, str),
                      "load": lambda: got is None}[what]()
                assert ok, (src.agent, what, unit, got)  # finished, and nothing was read from the FIFO


# -- side files that are FIFOs -----------------------------------------------------------------


@pytest.fixture(scope="module")
def fifo_side_files(tmp_path_factory):
    """Every agent's session under one HOME, a Claude subagent, and a FIFO in place of each side
    file an agent keeps beside its transcripts."""
    root = tmp_path_factory.mktemp("fifo_sides")
    home = root / "home"
    expects = build_all_agents_home(home)
    parent = ClaudeSession(home, session_id="5c0375b4-0000-4f26-b12d-d022ee4e5199", cwd="/home/dev/sub app")
    parent.user("run the quokkaparent subagent").task("look for the lemur", "a1b2c3d4e5f60718", "found the lemur")
    parent.write()
    sub = ClaudeSubagent(parent, "a1b2c3d4e5f60718").user("look for the quokkasubagent lemur").assistant("found it")
    sub.write()
    sides = [sub.path.with_name(sub.path.stem + ".meta.json"),
             home / ".claude" / "settings.json",
             next(home.glob(".copilot/session-state/*/workspace.yaml")),
             home / ".openclaw" / "agents" / "main" / "sessions" / "sessions.json",
             home / ".codex" / "session_index.jsonl",
             next(home.glob(".config/Code/User/globalStorage/*/state/taskHistory.json"))]
    for p in sides:
        _fifo(p)
    env = cli_env(all_agents_env(home, expects), root / "tmp")
    return root, env, expects


def test_index_status_search_show_export_finish_with_fifo_side_files(fifo_side_files):
    root, env, expects = fifo_side_files
    index_dir = root / "index"
    p = run_crabsearch(env, index_dir, "index")
    assert p.returncode == 0, p.stderr
    p = run_crabsearch(env, index_dir, "search", "--json", "--limit", "50", "worker")
    assert p.returncode == 0, p.stderr
    hits = json.loads(p.stdout)["hits"]
    assert {h["agent"] for h in hits} == set(AGENTS)  # every session indexed, side file or not
    copilot = next(h for h in hits if h["agent"] == "copilot")
    assert copilot["title"].startswith("Why does the quokkacopilot")  # no workspace.yaml summary: first prompt
    p = run_crabsearch(env, index_dir, "search", "--json", "quokkasubagent")
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["hits"]) == 1  # the subagent, without its meta type
    p = run_crabsearch(env, index_dir, "status")
    assert p.returncode == 0, p.stderr
    assert "older than 30 days (the default)" in p.stdout  # settings.json is not a file: the default
    for agent in ("copilot", "openclaw", "claude"):
        sid = expects[agent].session_id
        p = run_crabsearch(env, index_dir, "show", sid)
        assert p.returncode == 0 and f"quokka{agent}" in p.stdout, p.stderr
        p = run_crabsearch(env, index_dir, "export", sid)
        assert p.returncode == 0 and f"quokka{agent}" in p.stdout, p.stderr


# -- transcripts replaced after indexing ----------------------------------------------------------

SCRIPT = """
import json, sys
from crabsearch.cli import main
ids = json.loads(sys.argv[1])
for agent, sid in ids.items():
    for label, argv in (("show", ["show", sid]), ("show-json", ["show", "--json", sid]), ("export", ["export", sid]),
                        ("search", ["search", "--no-refresh", "--json", "--before", "4", "--after", "4",
                                    "quokka" + agent])):
        print("BEGIN", agent, label, flush=True)
        print("RUN", agent, label, file=sys.stderr, flush=True)
        code = main(["--index-dir", sys.argv[2]] + argv)
        print("\\nEXIT", agent, label, code, flush=True)
"""


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_show_export_and_windows_finish_when_transcripts_become_special(tmp_path, kind):
    """Every agent's transcript (or store) replaced by a FIFO, or by a symlink to ``/dev/zero``,
    after it was indexed: ``show``, ``export`` and a search with windows read the messages back by
    offset; each finishes and says the messages are unavailable. Then ``index`` and ``status``."""
    home = tmp_path / "home"
    expects = build_all_agents_home(home)
    env = cli_env(all_agents_env(home, expects), tmp_path / "tmp")
    index_dir = tmp_path / "index"
    from crabsearch.index import Indexer

    Indexer(index_dir, env=all_agents_env(home, expects)).refresh()
    for exp in expects.values():
        # the transcript; an agent keeping one file per event (OpenHands' events/): every one
        for target in [f for f in exp.files if f.parent.name == "events" and f.is_file()] or exp.files[:1]:
            if kind == "fifo":
                _fifo(target)
            else:
                target.unlink()
                target.symlink_to("/dev/zero")
    ids = {a: e.session_id for a, e in expects.items()}
    p = run_python(env, "-c", SCRIPT, json.dumps(ids), str(index_dir))
    assert p.returncode == 0, p.stderr
    out = {(m.group(1), m.group(2)): m.group(3) for m in re.finditer(
        r"^BEGIN (\S+) (\S+)\n(.*?)\nEXIT \1 \2 0$", p.stdout, re.S | re.M)}
    for agent in AGENTS:
        for label in ("show", "show-json", "export", "search"):
            assert (agent, label) in out, (agent, label, p.stdout[-3000:], p.stderr[-3000:])
        for label in ("show", "export"):  # unavailable, not read from the FIFO or /dev/zero
            assert "message unavailable" in out[agent, label] and "I added a timeout" not in out[agent, label]
        window = json.loads(out[agent, "search"])["hits"][0]["window"]
        assert window and all("I added a timeout" not in item["text"] for item in window)
    p = run_crabsearch(env, index_dir, "status")
    assert p.returncode == 0, p.stderr
    p = run_crabsearch(env, index_dir, "index")
    assert p.returncode == 0, p.stderr
    p = run_crabsearch(env, index_dir, "search", "--json", "worker")
    assert p.returncode == 0, p.stderr


# -- transcripts that are not regular files ---------------------------------------------------------


def test_status_names_fifos_and_directories_where_transcripts_should_be(tmp_path):
    """A FIFO or a directory where a Claude Code transcript (``projects/<slug>/<uuid>.jsonl``) or
    a Codex rollout (``sessions/YYYY/MM/DD/rollout-*.jsonl``) should be: ``index`` and ``status``
    finish (the FIFO is never opened), and ``status`` counts each per agent and lists it with the
    unreadable files, in its text and in ``--json`` (the keys it had, plus ``files_not_regular``)."""
    home = tmp_path / "home"
    claude = ClaudeSession(home).user("where is the quokkaregular").assistant("here")
    claude.write()
    codex = CodexSession(home).user("where is the quokkarollout").assistant("there")
    codex.write()
    specials = {  # path -> kind, each named as its agent names a transcript
        _fifo(ClaudeSession(home).path): "FIFO",
        ClaudeSession(home).path: "directory",
        _fifo(CodexSession(home).path): "FIFO",
        CodexSession(home).path: "directory",
    }
    for path, kind in specials.items():
        if kind == "directory":
            path.mkdir(parents=True)
            (path / "inside.txt").write_text("not a transcript")
    env = cli_env({"HOME": str(home), "CRABSEARCH_CONFIG": str(tmp_path / "no-config.toml")}, tmp_path / "tmp")
    index_dir = tmp_path / "index"
    p = run_crabsearch(env, index_dir, "index")
    assert p.returncode == 0, p.stderr
    p = run_crabsearch(env, index_dir, "status", "--json")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    agents = {a["agent"]: a for a in got["agents"]}
    for agent in ("claude", "codex"):
        assert agents[agent]["files_found"] == 1 and agents[agent]["sessions"] == 1  # the regular one only
        assert agents[agent]["files_not_regular"] == 2
    assert all(a["files_not_regular"] == 0 for name, a in agents.items() if name not in ("claude", "codex"))
    unreadable = {f["path"]: f["error"] for f in got["unreadable_files"]}
    assert unreadable == {str(p): f"not a regular file ({kind})" for p, kind in specials.items()}
    assert {"skipped_files", "unknown_kinds", "warnings", "index_bytes"} <= set(got)  # the keys it had
    p = run_crabsearch(env, index_dir, "status")
    assert p.returncode == 0, p.stderr
    text = p.stdout
    assert "unreadable files (skipped):" in text
    for path, kind in specials.items():
        assert f"  {path}: not a regular file ({kind})" in text
    claude_line = next(line for line in text.splitlines() if line.startswith("Claude Code:"))
    assert claude_line.startswith("Claude Code: 1 transcript found,")
    assert claude_line.endswith(", 0 lines skipped, 2 non-regular files skipped")


def test_walk_files_yields_special_entries_only_when_noting(tmp_path):
    """:func:`walk_files` passes over what is not a regular file, as before; inside
    :func:`noting_not_regular` it yields the entries that match its pattern too (a directory
    both yielded and walked into) and notes each one's kind, without opening any."""
    from crabsearch.sources.base import noting_not_regular, walk_files

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.jsonl").write_text("{}\n")
    fifo = _fifo(tmp_path / "p" / "b.jsonl")
    folder = tmp_path / "p" / "c.jsonl"
    folder.mkdir()
    (folder / "d.jsonl").write_text("{}\n")
    _fifo(tmp_path / "p" / "other.txt")  # not matching the pattern: never noted
    (tmp_path / "p" / "gone.jsonl").symlink_to(tmp_path / "missing")  # a dangling link: passed over
    regular = [tmp_path / "p" / "a.jsonl", folder / "d.jsonl"]
    assert _finishes(lambda: list(walk_files(tmp_path, "**/*.jsonl"))) == regular

    def noting():  # in _finishes' thread: the noting is per thread (a context variable)
        with noting_not_regular() as noted:
            return list(walk_files(tmp_path, "**/*.jsonl")), noted

    found, noted = _finishes(noting)
    assert found == [tmp_path / "p" / "a.jsonl", fifo, folder, folder / "d.jsonl"]
    assert noted == {str(fifo): "FIFO", str(folder): "directory"}
    assert list(walk_files(tmp_path, "**/*.jsonl")) == regular  # the noting ended with the block

"""The resident server behind ``crabsearch search`` and ``show`` (``crabsearch.launch`` and
``crabsearch.resident``): what goes to it, the socket's directory, the answers it gives, and that
a served command prints exactly what the command prints when it runs in its own process."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from crabsearch import launch, resident

from builders import ClaudeSession

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")


@pytest.mark.parametrize("argv, sent", [
    (["search", "cron", "--json"], True),
    (["--index-dir", "search", "show", "x"], True),  # "search" is --index-dir's value here
    (["--demo", "show", "abcd"], True),
    (["search", "cron", "-flaky"], True),
    (["status"], False), (["index"], False), (["export", "abcd"], False), (["mcp"], False),
    ([], False),  # the app
    (["search", "cron", "--help"], False), (["-h"], False), (["--", "search"], False),
    (["search", "cron", "--hel"], False), (["search", "--he=x"], False),  # argparse's abbreviations
    (["search", "--history"], True),  # not a --help abbreviation: a usage error, served
    (["search", "cron", "-hh"], False), (["search", "-hello"], False),  # argparse: -h, then more flags
    (["--index-d", "show"], False), (["--index-di", "search", "status"], False),  # --index-dir's value
    (["--index-d", "x", "search", "cron"], True),
])
def test_only_search_and_show_go_to_the_server(argv, sent):
    assert launch.wanted(argv, {}) is sent


@pytest.mark.parametrize("value, sent", [("1", False), ("yes", False), ("0", True), ("", True)])
def test_crabsearch_no_server_turns_it_off(value, sent):
    assert launch.wanted(["search", "x"], {"CRABSEARCH_NO_SERVER": value}) is sent


def _short_dir() -> Path:
    """A new private directory with a short path (a socket's path must fit in 104 bytes)."""
    return Path(tempfile.mkdtemp(prefix="cs-"))


def test_socket_directory_is_private_or_not_used(tmp_path):
    run = _short_dir()
    path = launch.socket_path({"XDG_RUNTIME_DIR": str(run)})
    folder = run / "crabsearch"
    assert path is not None and Path(path).parent == folder
    assert folder.stat().st_mode & 0o777 == 0o700
    folder.chmod(0o755)  # readable by others: someone else could have made it
    assert launch.socket_path({"XDG_RUNTIME_DIR": str(run)}) is None
    folder.rmdir()
    folder.symlink_to(tmp_path)  # a link, even to a private directory, is not used
    assert launch.socket_path({"XDG_RUNTIME_DIR": str(run)}) is None
    tmp = run / "tmp"
    tmp.mkdir()
    path = launch.socket_path({"TMPDIR": str(tmp)})
    assert path is not None and Path(path).parent == tmp / f"crabsearch-{os.getuid()}"
    shutil.rmtree(run)
    long = tmp_path / ("x" * 80)
    long.mkdir()
    assert launch.socket_path({"XDG_RUNTIME_DIR": str(long)}) is None  # too long for a socket


def _answer(request: bytes, stale: bool = False) -> bytes:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        a.sendall(request)
        a.shutdown(socket.SHUT_WR)
        resident.handle(b, stale)
        b.close()
        return b"".join(iter(lambda: a.recv(4096), b""))


@pytest.mark.parametrize("value, seconds", [("30", 30.0), ("0.5", 0.5), (None, 600), ("", 600), ("0", 600),
                                            ("-1", 600), ("abc", 600), ("inf", 600), ("nan", 600)])
def test_idle_setting_must_be_a_positive_number(value, seconds):
    assert launch.idle_seconds(value) == seconds


@pytest.mark.parametrize("argv, command", [
    (["search", "x"], "search"), (["--index-d", "show"], None), (["--index-d", "search", "mcp"], "mcp"),
    (["show", "abcd", "--json"], "show"), (["search", "--limit", "zero", "x"], resident.USAGE), ([], None),
])
def test_server_reads_the_command_with_the_real_parser(argv, command):
    assert resident.served_command(argv) == command


def test_reply_frames_are_complete_or_refused():
    assert launch.parse(b"2 4\nwarn1 3\nout2 0\nx 1\n") == [(2, b"warn"), (1, b"out"), (2, b""), 1]
    assert launch.parse(b"x 0\n") == [0]
    for broken in (b"", b"1 3\nou", b"1 3\nout", b"1 3\noutx 0", b"1 3\noutx 0\nmore", b"3 1\nax 0\n", b"1 z\n"):
        assert launch.parse(broken) is None


def test_server_declines_what_it_must_not_run():
    ok = launch.request(["search", "x"], {b"HOME": b"/nowhere"}, b"/", ["utf-8", "strict"] * 2)
    assert _answer(ok, stale=True) == b"-stale\n"
    assert _answer(b"GET / HTTP/1.1\r\n\r\n") == b"-protocol\n"
    other = ok.replace(os.fsencode(launch.PACKAGE), b"/elsewhere/crabsearch")
    assert _answer(other) == b"-other installation\n"
    latin = ok.replace(b"\0" + sys.getfilesystemencoding().encode() + b"\0", b"\0latin-1\0", 1)
    assert latin != ok and _answer(latin) == b"-other installation\n"


def test_package_stamp_changes_when_a_file_changes(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 1\n")
    before = resident.package_stamp(str(tmp_path))
    assert before[1] == 2
    os.utime(tmp_path / "sub" / "b.py", ns=(before[0] + 10**9, before[0] + 10**9))
    assert resident.package_stamp(str(tmp_path)) != before
    (tmp_path / "c.py").write_text("")
    assert resident.package_stamp(str(tmp_path))[1] == 3


def test_a_kept_engine_reads_a_transcript_again_once_it_can_be_opened(tmp_path, monkeypatch, capsys):
    """The resident server keeps its engines between requests (``cli.KEPT``): a message that
    could not be read back (the transcript made unreadable, ``chmod 000``) stayed unavailable
    once the file could be read again (its size and mtime unchanged: no refresh reopens the
    engine, ``crabsearch index`` did not help), and the message blamed a change. It now says the
    file cannot be read, and the next request reads it again. The ``open`` fails as the kernel
    fails it for another user's file (``EACCES``): root reads any file."""
    import errno

    from crabsearch import cli
    from source_checks import run_cli

    home, sid = tmp_path / "home", "155715ec-0000-4000-8000-000000000000"
    path = ClaudeSession(home, session_id=sid).user("the cron job runs twice").assistant("Two entries.").write()
    for name, value in (("HOME", home), ("CRABSEARCH_INDEX_DIR", tmp_path / "index"),
                        ("CRABSEARCH_CONFIG", tmp_path / "none.toml")):
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr(cli, "KEPT", {})
    assert run_cli(capsys, "index")[0] == 0
    real_open = os.open

    def denied(name, *args, **kwargs):
        if os.fspath(name) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(name))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    code, out, _ = run_cli(capsys, "show", sid[:8], "--limit", "1")
    assert code == 0 and "[message unavailable: the transcript cannot be read (Permission denied)]" in out
    monkeypatch.setattr(os, "open", real_open)
    code, out, _ = run_cli(capsys, "show", sid[:8], "--limit", "1")
    assert code == 0 and "the cron job runs twice" in out and "unavailable" not in out


# -- a real server, in its own process ----------------------------------------------------------


@pytest.fixture
def served(tmp_path):
    """``(env, socket path, home)``: a home with one Claude Code session, its index, a private
    runtime directory; the server this test starts is stopped at the end."""
    home = tmp_path / "home"
    ClaudeSession(home, session_id="5c0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/app").user(
        "the cron job runs twice at midnight").assistant("Two crontab entries overlap.").write()
    run = _short_dir()
    env = _env(home, tmp_path, run, CRABSEARCH_SERVER_IDLE="60")
    path = launch.socket_path(env)
    yield env, path, home
    _stop(path)
    shutil.rmtree(run, ignore_errors=True)


def _env(home: Path, tmp_path: Path, run: Path, **more: str) -> dict[str, str]:
    """This process's environment for a crabsearch on ``home``: the server on (no
    ``CRABSEARCH_NO_SERVER``), its socket in ``run``, the index and config under ``tmp_path``,
    this repository's crabsearch first on the import path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CRABSEARCH_NO_SERVER", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(run), CRABSEARCH_INDEX_DIR=str(tmp_path / "index"),
               XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=os.pathsep.join([str(ROOT), *[p for p in [os.environ.get("PYTHONPATH")] if p]]), **more)
    return env


def _pid(path: str) -> int:
    """The pid of the server listening on ``path`` (its socket's peer credentials)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        return launch.peer_credentials(s)[0]


def _stop(path: str) -> None:
    """Stop the server on ``path``."""
    try:
        os.kill(_pid(path), 15)
    except OSError:
        pass


def crabsearch(env, *argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "crabsearch", *argv], env=env, capture_output=True,
                          text=True, timeout=120, cwd=kw.get("cwd", "/"))


def _wait_for(path: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the server did not start")


def _served(env, path, *argv) -> tuple[int | None, bytes]:
    """Run ``argv`` through the server from this process, as the client does: (exit code or
    None when it was not served, stdout bytes)."""
    r, w = os.pipe()
    saved, old_env = os.dup(1), dict(os.environ)
    os.dup2(w, 1)
    try:
        os.environ.clear()
        os.environ.update(env)
        code, _ = launch.call(path, list(argv))
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        os.dup2(saved, 1)
        os.close(w)
    out = b"".join(iter(lambda: os.read(r, 65536), b""))
    os.close(r)
    return code, out


def test_first_call_starts_a_server_and_later_calls_print_the_same(served):
    env, path, home = served
    first = crabsearch(env, "search", "cron", "--json")  # no server yet: runs itself, starts one
    assert first.returncode == 0, first.stderr
    _wait_for(path)
    pid = _pid(path)
    if os.path.exists(f"/proc/{pid}"):  # the query that started it is not on its command line (ps)
        assert b"cron" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    code, out = _served(env, path, "search", "cron", "--json")
    assert code == 0 and out.decode() == first.stdout
    alone = crabsearch({**env, "CRABSEARCH_NO_SERVER": "1"}, "search", "cron", "--json")
    assert alone.stdout == first.stdout
    sid = json.loads(out)["hits"][0]["session_id"]
    code, out = _served(env, path, "show", sid[:8], "--json")
    assert code == 0 and json.loads(out)["session"]["session_id"] == sid


def test_served_errors_keep_their_exit_code_and_stderr(served):
    env, path, _ = served
    crabsearch(env, "index")
    subprocess.run([sys.executable, "-c", "from crabsearch.launch import spawn; import sys; spawn(sys.argv[1])",
                    path], env=env, check=True, cwd="/")
    _wait_for(path)
    proc = crabsearch(env, "search", "cron", "--agent", "nosuchagent")
    assert proc.returncode == 2 and "agent: no agent is called “nosuchagent”" in proc.stderr and not proc.stdout
    code, _ = _served(env, path, "search", "cron", "--agent", "nosuchagent")
    assert code == 2


def test_each_request_has_its_own_environment_and_sees_new_messages(served, tmp_path):
    env, path, home = served
    crabsearch(env, "index")
    subprocess.run([sys.executable, "-c", "from crabsearch.launch import spawn; import sys; spawn(sys.argv[1])",
                    path], env=env, check=True, cwd="/")
    _wait_for(path)
    code, out = _served(env, path, "search", "quokka", "--json")
    assert code == 0 and json.loads(out)["hits"] == []
    ClaudeSession(home, session_id="6d0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/zoo").user(
        "a quokka in the logs").assistant("Quokkas are marsupials.").write()
    code, out = _served(env, path, "search", "quokka", "--json")  # refreshed by the served call
    assert code == 0 and [h["session_id"][:4] for h in json.loads(out)["hits"]] == ["6d03"]
    other = {**env, "CRABSEARCH_INDEX_DIR": str(tmp_path / "other-index"), "HOME": str(tmp_path / "empty")}
    code, out = _served(other, path, "search", "quokka", "--json", "--no-refresh")
    assert code == 1  # that environment's index does not exist: the served command says so
    assert not (tmp_path / "other-index").exists()


def test_idle_server_exits_and_a_second_one_does_not_start(served):
    env, path, _ = served
    env = {**env, "CRABSEARCH_SERVER_IDLE": "1"}
    code = "import sys; from crabsearch.resident import main; sys.exit(main(sys.argv[1:]))"
    one = subprocess.Popen([sys.executable, "-c", code, path, "3"], env=env, cwd="/")
    _wait_for(path)
    two = subprocess.run([sys.executable, "-c", code, path, "3"], env=env, cwd="/", timeout=30)
    assert two.returncode == 0 and one.poll() is None  # the second saw the lock and left at once
    assert one.wait(timeout=30) == 0
    assert not os.path.exists(path)


def test_status_says_whether_the_server_runs(served):
    env, path, _ = served
    crabsearch(env, "index")
    data = json.loads(crabsearch(env, "status", "--json").stdout)
    assert data["server"] == {"enabled": True, "socket": path, "running": False, "pid": None}
    assert "resident server: not running (the next search or show starts it)" in crabsearch(env, "status").stdout
    _started(env, path)
    data = json.loads(crabsearch(env, "status", "--json").stdout)["server"]
    assert data["running"] and data["pid"] == _pid(path)
    assert f"resident server: running (pid {data['pid']}, socket {path}" in crabsearch(env, "status").stdout


def test_a_dead_servers_socket_means_run_here_and_start_one(served):
    env, path, _ = served
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)  # bound, never listening: what a killed server leaves
    dead.close()
    assert launch.call(path, ["search", "x"]) == (None, True)
    proc = crabsearch(env, "search", "cron", "--json")
    assert proc.returncode == 0, proc.stderr
    _wait_for(path)  # the new server replaced the dead socket
    assert _served(env, path, "search", "cron", "--json")[0] == 0


SERVED_ONLY = ("import os, sys; from crabsearch import launch; "
               "code, _ = launch.call(launch.socket_path(os.environ), sys.argv[1:]); "
               "sys.exit(99 if code is None else code)")
"""A client that only asks the server (exit 99 when it was not served)."""


def _started(env, path) -> None:
    subprocess.run([sys.executable, "-c", "from crabsearch.launch import spawn; import sys; spawn(sys.argv[1])",
                    path], env=env, check=True, cwd="/")
    _wait_for(path)


def _both(env, *argv, merged: bool = False) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """``(served, alone)``: ``argv`` through the server only, and in its own process, as bytes."""
    err = subprocess.STDOUT if merged else subprocess.PIPE
    served = subprocess.run([sys.executable, "-c", SERVED_ONLY, *argv], env=env, stdout=subprocess.PIPE,
                            stderr=err, timeout=120, cwd="/")
    alone = subprocess.run([sys.executable, "-m", "crabsearch", *argv], env={**env, "CRABSEARCH_NO_SERVER": "1"},
                           stdout=subprocess.PIPE, stderr=err, timeout=120, cwd="/")
    assert served.returncode != 99, "not served"
    return served, alone


def _same(served, alone) -> None:
    assert (served.returncode, served.stdout, served.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def test_stdout_and_stderr_keep_their_order(served, tmp_path):
    env, path, _ = served
    crabsearch(env, "index")
    cfg = tmp_path / "config" / "crabsearch"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text("x = = [\n")  # a warning on stderr before the results
    _started(env, path)
    s, a = _both(env, "search", "cron", "--limit", "1", merged=True)
    _same(s, a)
    assert s.stdout.index(b"crabsearch: config") < s.stdout.index(b"cron")


@pytest.mark.parametrize("encoding", ["latin-1", "ascii:backslashreplace", "utf-16"])
def test_served_output_is_encoded_as_the_clients_streams(served, encoding):
    env, path, _ = served
    env = {**env, "PYTHONIOENCODING": encoding}
    crabsearch(env, "index")
    _started(env, path)
    for argv in (("search", "日本"), ("search", "crontab"), ("show", "nope日本"), ("search", "cron", "--json")):
        _same(*_both(env, *argv))


def test_each_request_has_its_own_time_zone(tmp_path):
    """``since:`` is a local date: 23:30 UTC is the next day in Tokyo (POSIX TZ ``JST-9``)."""
    home = tmp_path / "home"
    ClaudeSession(home, start=datetime(2026, 3, 19, 23, 30, tzinfo=timezone.utc)).user(
        "the nightly cron job").assistant("It ran.").write()
    run = _short_dir()
    env = _env(home, tmp_path, run, TZ="UTC")
    path = launch.socket_path(env)
    try:
        crabsearch(env, "index")
        _started(env, path)
        hits = {}
        for tz in ("UTC", "JST-9", "UTC"):
            s, a = _both({**env, "TZ": tz}, "search", "cron since:2026-03-20", "--json")
            _same(s, a)
            hits[tz] = len(json.loads(s.stdout)["hits"])
        assert hits == {"UTC": 0, "JST-9": 1}
    finally:
        _stop(path)
        shutil.rmtree(run, ignore_errors=True)


def test_server_leaves_when_its_socket_goes_and_cleans_up_on_sigterm(served):
    env, path, _ = served
    code = "import sys; from crabsearch.resident import main; sys.exit(main(sys.argv[1:]))"
    one = subprocess.Popen([sys.executable, "-c", code, path, "600"], env=env, cwd="/")
    _wait_for(path)
    os.unlink(path)  # nobody can reach it now: it must not hold the lock for ten minutes
    assert one.wait(timeout=resident.CHECK_SECONDS + 20) == 0
    two = subprocess.Popen([sys.executable, "-c", code, path, "600"], env=env, cwd="/")
    _wait_for(path)
    two.terminate()
    assert two.wait(timeout=30) == 0 and not os.path.exists(path)


def test_commands_the_server_must_not_run_are_declined(served):
    env, path, _ = served
    crabsearch(env, "index")
    _started(env, path)
    for argv in (["--index-d", "show"], ["--index-d", "search", "mcp"]):  # the app, the MCP server
        p = subprocess.run([sys.executable, "-c", SERVED_ONLY, *argv], env=env, capture_output=True, timeout=60,
                           cwd="/")
        assert p.returncode == 99 and not p.stdout


def test_served_commands_keep_the_clients_umask_and_import_nothing_from_its_directory(served, tmp_path,
                                                                                      monkeypatch):
    env, path, _ = served
    crabsearch(env, "index")
    _started(env, path)
    pid = _pid(path)
    if os.path.exists(f"/proc/{pid}"):
        assert b"-P" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    evil = tmp_path / "checkout"
    evil.mkdir()
    (evil / "shlex.py").write_text("raise SystemExit('imported from the working directory')\n")
    monkeypatch.chdir(evil)
    old = os.umask(0o077)
    try:
        code, out = _served({**env, "CRABSEARCH_INDEX_DIR": str(tmp_path / "new" / "index")},
                            path, "search", "cron", "--json")
    finally:
        os.umask(old)
    assert code == 0 and "claude --resume" in json.loads(out)["hits"][0]["resume_command"]
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700


def test_a_served_show_of_a_deleted_transcript_says_it_is_gone_on_every_message(served):
    """A user trial: through the server, ``show`` printed the messages it had read before the
    transcript was deleted and called only the others gone; alone, every one is gone."""
    env, path, home = served
    sid = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert crabsearch(env, "search", "cron").returncode == 0  # starts the server
    _wait_for(path)
    code, out = _served(env, path, "show", sid, "--limit", "1")
    assert code == 0 and b"cron job runs twice" in out
    next(home.rglob(f"{sid}.jsonl")).unlink()
    code, out = _served(env, path, "show", sid)
    alone = crabsearch({**env, "CRABSEARCH_NO_SERVER": "1"}, "show", sid)
    assert code == 0 and out.count(b"[message unavailable: the transcript is gone") == 2  # both messages
    assert out.decode() == alone.stdout

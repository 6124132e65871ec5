"""The CLI contract: commands, flags, JSON shapes, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from crabsearch.cli import main
from crabsearch.sources import AGENTS

from builders import ClaudeSession, CodexSession, skipping_session, unwritable
from source_checks import run_cli

HIT_KEYS = {"agent", "session_id", "title", "summary", "project", "git_branch", "path", "started", "updated",
            "message_count", "score", "message_index", "role", "window", "resume_command"}
ITEM_KEYS = {"message_index", "role", "label", "timestamp", "text", "truncated", "hit"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (ClaudeSession(home, session_id="5c0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/my app")
     .user("the cron job runs twice at midnight").assistant("Two crontab entries overlap.")
     .tool("Read", {"file_path": "/etc/crontab"}, "0 0 * * * run.sh").assistant("Removed one.")
     .title("Fix double cron run").write())
    CodexSession(home, session_id="019a0000-1111-7222-8333-444455556666").user(
        "cron parser rejects step values").assistant("Use */5").write()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    return home


run = run_cli  # (exit code, stdout, stderr)


def test_a_date_past_pythons_range_is_a_query_not_an_error(home, capsys):
    """``since:99999999d`` (a fresh-user trial: ``error: Python int too large to convert to C
    int``, exit 1): every session since the earliest moment; ``until:`` that far back, none."""
    code, out, err = run(capsys, "search", "cron since:99999999d", "--json")
    assert code == 0, err
    assert len(json.loads(out)["hits"]) == 2
    code, out, err = run(capsys, "search", "cron until:99999999h", "--json")
    assert code == 0 and json.loads(out)["hits"] == [], err


def test_search_json_shape(home, capsys):
    code, out, err = run(capsys, "search", "cron", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["query"] == "cron" and len(data["hits"]) == 2
    for hit in data["hits"]:
        assert HIT_KEYS <= set(hit)
        assert all(set(i) == ITEM_KEYS for i in hit["window"])
        assert sum(i["hit"] for i in hit["window"]) == 1
        assert hit["started"].endswith("Z") and hit["updated"].endswith("Z")
    claude = next(h for h in data["hits"] if h["agent"] == "claude")
    assert claude["title"] == "Fix double cron run"
    assert claude["project"] == "/home/dev/my app" and claude["git_branch"] == "main"
    assert claude["resume_command"] == "cd '/home/dev/my app' && claude --resume 5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    codex = next(h for h in data["hits"] if h["agent"] == "codex")
    assert codex["resume_command"].endswith("codex resume 019a0000-1111-7222-8333-444455556666")


def test_search_flags(home, capsys):
    code, out, _ = run(capsys, "search", "crontab", "--json", "--before", "0", "--after", "1", "--agent", "claude",
                       "--limit", "5")
    assert code == 0
    [hit] = json.loads(out)["hits"]
    assert [i["message_index"] for i in hit["window"]] == [hit["message_index"], hit["message_index"] + 1]


def test_a_session_without_messages_is_no_message_of_zero(home, capsys):
    """A session that holds only a title was listed as ``message #1 of 0`` (JSON: role ``user``,
    an empty window), and a session without a project left an empty gap in the row, where the app
    says ``no project``."""
    ClaudeSession(home, session_id="0e000000-0000-4000-8000-000000000000").title("Staging deploy").write()  # no cwd
    code, out, err = run(capsys, "search", "staging")
    assert code == 0, err
    row = out.splitlines()
    assert row[0].startswith("1. Staging deploy  [claude] (no project)  ")
    assert row[1] == "   id 0e000000-0000-4000-8000-000000000000  no messages (only its title is indexed)"
    [hit] = json.loads(run(capsys, "search", "staging", "--json")[1])["hits"]
    assert (hit["message_count"], hit["message_index"], hit["role"], hit["window"]) == (0, 0, None, [])


def test_an_over_long_query_is_echoed_as_searched_with_its_note(home, capsys):
    """``search --json`` echoed an 88,889-character query whole with ``"cut": true, "notes": []``,
    while the text output said it was cut and MCP echoed only the part searched: one rule for
    every door (``query.used_part``, the notes of ``request.Answer``)."""
    from crabsearch.query import MAX_QUERY_CHARS

    query = "cron " + "wombat " * 20_000
    code, out, err = run(capsys, "search", query, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["cut"] is True and len(data["query"]) <= MAX_QUERY_CHARS and query.startswith(data["query"])
    assert data["notes"] == [f"the query was cut to its first {MAX_QUERY_CHARS} characters"]
    code, out, _ = run(capsys, "search", query)
    assert f"(the query was cut to its first {MAX_QUERY_CHARS} characters)" in out


def test_a_quoted_phrase_found_nowhere_searches_its_words_with_a_note(home, capsys):
    """A pasted error whose quoted path differs today listed nothing: the phrase's words are
    searched instead, and ``notes`` (and the text output) say so."""
    note = 'no exact match for "/var/spool/crontab": showing sessions with its words'
    code, out, err = run(capsys, "search", 'cron job runs twice "/var/spool/crontab"', "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [h["session_id"][:8] for h in data["hits"]][:1] == ["5c0375b4"] and data["notes"] == [note]
    code, out, _ = run(capsys, "search", 'cron job runs twice "/var/spool/crontab"')
    assert f"({note})" in out


def test_no_hits_is_exit_zero(home, capsys):
    code, out, _ = run(capsys, "search", "xylophone", "--json")
    assert code == 0 and json.loads(out)["hits"] == []
    code, out, _ = run(capsys, "search", "xylophone")
    assert code == 0 and "no sessions match" in out


def test_readable_listing(home, capsys):
    code, out, _ = run(capsys, "search", "midnight")
    assert code == 0
    assert "Fix double cron run" in out and "claude --resume" in out


def test_show_pages(home, capsys):
    code, out, _ = run(capsys, "show", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "--limit", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["offset"] == 0 and data["limit"] == 2 and data["next_offset"] == 2
    assert data["total_messages"] == 5
    assert data["session"]["session_id"] == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert all(set(m) == {"message_index", "role", "label", "timestamp", "text"} for m in data["messages"])
    code, out, _ = run(capsys, "show", "5c0375b4", "--offset", "4", "--json")
    data = json.loads(out)
    assert data["next_offset"] is None and [m["message_index"] for m in data["messages"]] == [4]
    code, out, _ = run(capsys, "show", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7")
    assert "tool:Read" in out and "0 0 * * * run.sh" in out


def test_index_summary(home, capsys):
    code, out, _ = run(capsys, "index")
    assert code == 0 and "sessions: 2" in out
    code, out, _ = run(capsys, "index", "--json")
    data = json.loads(out)
    assert data["sessions"] == 2 and data["files_read"] == 0 and data["by_agent"] == {"claude": 1, "codex": 1}


def test_the_cli_reference_lists_every_key_of_index_json(home, tmp_path, capsys):
    """docs/cli.md's list of ``index --json``'s keys names every key it prints. ``rebuilt`` is
    null on a first run; after a format change, why every transcript was read again."""
    from pathlib import Path

    from crabsearch.index.layout import STAMP, current_dir

    doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text("utf-8")
    listed = doc[doc.index("`index --json` prints"):doc.index("`status --json` prints")]
    code, out, _ = run(capsys, "index", "--json")
    data = json.loads(out)
    assert code == 0 and data["rebuilt"] is None  # a first run: nothing to rebuild
    assert [key for key in data if f'"{key}"' not in listed] == []
    (current_dir(tmp_path / "index") / STAMP).write_text("0")  # an index from another version
    code, out, _ = run(capsys, "index", "--json")
    data = json.loads(out)
    assert data["rebuilt"].startswith("index format changed (0 -> ") and data["files_read"] == 2


@pytest.mark.parametrize("argv", [["search"], ["search", "x", "--limit", "-1"], ["search", "x", "--limit", "0"], ["search", "x", "--limit", "ten"],
                                  ["frobnicate"], ["search", "x", "--agent", "nosuch"], ["show"]])
def test_usage_errors_exit_2_with_one_line(home, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("crabsearch:")


def test_unknown_session_exits_1(home, capsys):
    code, _, err = run(capsys, "show", "no-such-session")
    assert code == 1 and "no session" in err and "Traceback" not in err


def test_unwritable_index_dir_is_one_line_error(home, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "index", "--index-dir", str(blocker / "index"))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_console_script_runs(home):
    assert main(["index"]) == 0
    proc = subprocess.run([sys.executable, "-m", "crabsearch", "search", "cron", "--json", "--no-refresh"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "hits" in json.loads(proc.stdout)


def test_demo_sessions_are_bundled_and_searchable(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "not-used"))
    code, out, err = run(capsys, "search", "--demo", "--index-dir", str(tmp_path / "demo-index"), "getUserById",
                         "--json")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert hits and all("/demo/home/" in h["path"] for h in hits)
    code, out, _ = run(capsys, "index", "--demo", "--index-dir", str(tmp_path / "demo-index"), "--json")
    data = json.loads(out)
    assert data["by_agent"]["claude"] >= 4 and data["by_agent"]["codex"] >= 4


def test_show_errors(home, capsys):
    ClaudeSession(home, session_id="5c0375b4-0000-4000-8000-000000000000").user("twin").write()
    code, _, err = run(capsys, "show", "5c03")
    assert code == 1 and "matches 2 sessions" in err
    code, _, err = run(capsys, "show", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "--offset", "99")
    assert code == 2 and "past the last message" in err


def test_search_without_an_index(home, capsys, tmp_path):
    code, _, err = run(capsys, "search", "cron", "--no-refresh", "--index-dir", str(tmp_path / "none"))
    assert code == 1 and "crabsearch index" in err


def test_search_when_the_index_cannot_be_updated(home, capsys, monkeypatch):
    run(capsys, "index")
    from crabsearch.index import Indexer

    def read_only(self, *a, **k):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(Indexer, "refresh", read_only)
    code, out, err = run(capsys, "search", "cron", "--json")
    assert code == 0 and "Read-only file system" in err and len(json.loads(out)["hits"]) == 2



def test_a_read_only_index_is_searched_and_said_once(home, capsys, tmp_path):
    """An index directory nothing can be written in (immutable: EPERM, as on a read-only mount or
    in a sandbox) while a new transcript waits: ``search`` and ``show`` answer from the index
    with one line saying it could not be updated (they exited 1: "cannot create the index ...
    Operation not permitted"); ``index`` says the same and exits 1."""
    run(capsys, "index")
    ClaudeSession(home, session_id="6d000000-0000-4000-8000-000000000000").user("cron, a third time").write()
    with unwritable(tmp_path / "index"):
        code, out, err = run(capsys, "search", "cron", "--json")
        assert code == 0, err
        assert len(json.loads(out)["hits"]) == 2
        assert err.count("cannot update the index") == 1 and "Operation not permitted" in err
        assert "searching what is already indexed" in err
        code, out, err = run(capsys, "show", "5c0375b4")
        assert code == 0 and "Fix double cron run" in out
        assert err.count("cannot update the index") == 1
        code, out, err = run(capsys, "index")
        assert code == 1 and err.count("cannot update the index") == 1 and "error" not in err
        # a script gets its JSON (stdout was empty), the error in it
        code, out, err = run(capsys, "index", "--json")
        data = json.loads(out)
        assert code == 1 and data["error"].startswith("cannot update the index") and data["sessions"] == 2
    code, out, _ = run(capsys, "index", "--json")
    assert code == 0 and json.loads(out)["error"] is None


def test_a_search_while_another_process_writes_waits_briefly_and_searches_what_is_committed(
        home, capsys, tmp_path, monkeypatch):
    """A search during ``crabsearch index`` waited 10 s (the writers' lock's wait for
    ``index``) before searching what was committed, which it can always search (readers need no
    lock). The refresh before a read waits ``READ_LOCK_WAIT`` (long enough for another search's
    refresh of an appended line), then answers from what is committed and says so; ``index``
    still waits ``LOCK_WAIT``."""
    from crabsearch.index import store, writer

    assert run(capsys, "index")[0] == 0
    ClaudeSession(home, session_id="6d000000-0000-4000-8000-000000000000").user("cron, a third time").write()
    waits = []

    def recorded(root, wait=store.LOCK_WAIT):
        waits.append(wait)
        return store.write_lock(root, wait)

    monkeypatch.setattr(writer, "write_lock", recorded)
    with store.write_lock(tmp_path / "index") as held:  # another process's build holds it
        assert held
        code, out, err = run(capsys, "search", "cron", "--json")
        hits = json.loads(out)["hits"]
        # what is committed, then the transcript the other build has not read yet, marked
        assert code == 0 and [h["indexed"] for h in hits] == [True, True, False]
        assert hits[2]["session_id"] == "6d000000-0000-4000-8000-000000000000"
        assert "another crabsearch is updating the index; searching what is committed" in err
        assert waits == [store.READ_LOCK_WAIT] and store.READ_LOCK_WAIT < store.LOCK_WAIT
    code, out, _ = run(capsys, "index", "--json")
    assert code == 0 and waits[-1] == store.LOCK_WAIT and json.loads(out)["files_read"] == 1


def test_an_index_directory_that_cannot_be_made_says_so_once(home, capsys, tmp_path, monkeypatch):
    """An index directory that cannot be created at all (here under a file): ``search`` said it
    was "searching what is already indexed", then "run `crabsearch index`", which fails the
    same way; ``index --json`` printed nothing. Each says once that the index cannot be made,
    and how to name a folder it can write."""
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "a-file" / "index"))
    code, out, err = run(capsys, "search", "cron")
    assert code == 1 and not out
    assert err == (f"crabsearch: cannot create the index in {tmp_path / 'a-file' / 'index'} (Not a directory), so "
                   "there is nothing to search: give --index-dir DIR (or CRABSEARCH_INDEX_DIR) naming a folder "
                   "crabsearch can write\n")
    code, out, err = run(capsys, "index", "--json")
    assert code == 1 and json.loads(out)["error"].startswith("cannot create the index in") and "already" not in err


def test_a_filter_name_with_no_value_is_noted_as_in_the_app(home, capsys):
    """``agent:`` alone lists the recent sessions with a note saying what it needs (the app
    did; the command line said nothing, a fresh-user trial); with a word, the word is searched."""
    code, out, _ = run(capsys, "search", "agent:", "--json")
    data = json.loads(out)
    assert code == 0 and data["route"] == "recent" and len(data["hits"]) == 2
    assert any(n.startswith("agent: needs a name") for n in data["notes"])
    code, out, _ = run(capsys, "search", "agent: cron", "--json")
    data = json.loads(out)
    assert len(data["hits"]) == 2 and any(n.startswith("agent: needs a name") for n in data["notes"])
    code, out, _ = run(capsys, "search", "since:")
    assert code == 0 and "since: needs a date" in out

def test_long_query_cut_is_reported(home, capsys):
    code, out, _ = run(capsys, "search", "cron " * 200, "--json")
    assert code == 0 and json.loads(out)["cut"] is True


def test_status(home, capsys, tmp_path):
    bad = home / ".claude" / "projects" / "-p" / "d0d0d0d0-0000-4000-8000-000000000000.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"type":"user","message":{"role":"user","content":"ok"},"sessionId":"d0d0"}\nnot json\n[1]\n')
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 90}')
    run(capsys, "index")
    code, out, _ = run(capsys, "status", "--json")
    data = json.loads(out)
    assert code == 0
    claude = next(a for a in data["agents"] if a["agent"] == "claude")
    assert claude["files_found"] == 2 and claude["sessions"] == 2 and claude["skipped_lines"] == 2
    assert data["skipped_files"][0]["path"] == str(bad)
    assert data["skipped_files"][0]["reasons"] == {"broken JSON": 1, "not a JSON object": 1}
    assert "90 days" in data["warnings"][0] and data["last_refresh"] and data["index_bytes"] > 0
    assert data["server"] == {"enabled": False, "socket": None, "running": False, "pid": None}  # conftest
    code, out, _ = run(capsys, "status")
    assert "Claude Code: 2 transcripts found, 2 sessions" in out and "files with skipped lines" in out
    assert "resident server: off (CRABSEARCH_NO_SERVER)" in out
    empty = home / ".claude" / "projects" / "-p" / "e0e0e0e0-0000-4000-8000-000000000000.jsonl"
    empty.write_text("")  # found, but holds no session: status says why the counts differ
    run(capsys, "index")
    code, out, _ = run(capsys, "status")
    assert "Claude Code: 3 transcripts found (1 without messages), 2 sessions" in out
    code, out, _ = run(capsys, "status", "--json")
    claude = next(a for a in json.loads(out)["agents"] if a["agent"] == "claude")
    assert (claude["files_found"], claude["files_empty"], claude["sessions"]) == (3, 1, 2)


def test_the_app_s_resume_command_runs_after_it_exits(home, monkeypatch):
    from crabsearch.tui import app as tui_app

    ran = []
    monkeypatch.setattr(tui_app.CrabsearchApp, "run", lambda self: "cd /tmp && claude --resume abc")
    monkeypatch.setattr("subprocess.call", lambda argv: ran.append(argv) or 7)
    assert main([]) == 7
    assert ran == [["/bin/sh", "-c", "cd /tmp && claude --resume abc"]]


def test_an_app_that_stopped_on_an_error_exits_non_zero(home, monkeypatch):
    """A user trial: the app crashed (Textual printed the traceback) and the shell saw exit 0."""
    from crabsearch.tui import app as tui_app

    def crashed(self):
        self._return_code = 1
        return "cd /tmp && claude --resume abc"  # never run after a crash

    ran = []
    monkeypatch.setattr(tui_app.CrabsearchApp, "run", crashed)
    monkeypatch.setattr("subprocess.call", lambda argv: ran.append(argv) or 0)
    assert main([]) == 1 and ran == []


def test_show_and_export_say_a_deleted_transcript_is_gone(home, capsys):
    """Issue 15: a transcript deleted since indexing reads as gone, not as "changed"."""
    sid = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert run(capsys, "index")[0] == 0
    next((home / ".claude" / "projects").rglob(f"{sid}.jsonl")).unlink()
    code, out, _ = run(capsys, "show", sid)
    assert code == 0 and "the transcript is gone (deleted or moved" in out and "changed since" not in out
    code, out, err = run(capsys, "export", sid)
    assert "the transcript is gone (deleted or moved" in out and "could not be read" in err


def test_show_and_export_mark_where_a_line_was_skipped(home, capsys):
    """A line the reader skipped (a 17 MB paste) was marked only in the app's session view:
    ``show``, ``show --json`` (a new key, ``skipped_lines``) and ``export`` list the messages
    around it with no mark where it was."""
    sid = skipping_session(home).session_id
    code, out, err = run(capsys, "show", sid[:8])
    assert code == 0, err
    assert "grebe question\n\n⊘ line 2 skipped: broken JSON\n\n#2 assistant" in out
    assert out.rstrip().endswith("the grebe answer\n\n⊘ line 4 skipped: broken JSON")
    page = json.loads(run(capsys, "show", sid[:8], "--json")[1])
    assert [(s["before"], s["line"], s["reason"]) for s in page["skipped_lines"]] == [
        (1, 2, "broken JSON"), (2, 4, "broken JSON")]
    first = json.loads(run(capsys, "show", sid[:8], "--json", "--limit", "1")[1])
    assert [s["before"] for s in first["skipped_lines"]] == []  # before message #2: not on this page
    code, out, _ = run(capsys, "export", sid[:8])
    assert "the grebe question\n\n⊘ *line 2 skipped: broken JSON*\n\n### #2 Assistant" in out
    assert out.endswith("⊘ *line 4 skipped: broken JSON*\n")
    assert "line 4 skipped" not in run(capsys, "export", sid[:8], "--to", "1")[1]


def test_show_and_export_read_messages_appended_since_the_last_refresh(home, capsys):
    """``show`` and ``export`` refresh first, as ``search`` does: a message appended to the
    transcript after the last search is listed (it was missing until the next search); with
    ``--no-refresh`` they read the session as indexed."""
    sid = "019a0000-1111-7222-8333-444455556666"
    assert run(capsys, "index")[0] == 0
    path = next((home / ".codex").rglob("*.jsonl"))
    CodexSession(home, session_id=sid).user("cron parser rejects step values").assistant("Use */5").user(
        "and a pelican appended later").write()
    assert list((home / ".codex").rglob("*.jsonl")) == [path]  # the same transcript, grown
    code, out, _ = run(capsys, "show", sid, "--no-refresh", "--json")
    assert code == 0 and "pelican" not in out
    code, out, _ = run(capsys, "show", sid, "--json")
    assert code == 0 and json.loads(out)["messages"][-1]["text"] == "and a pelican appended later"
    code, out, _ = run(capsys, "export", sid)
    assert code == 0 and "pelican appended later" in out


def test_demo_status_gives_no_advice_about_the_bundled_home(tmp_path, capsys, monkeypatch):
    """Issue 15: ``crabsearch --demo status`` told the user to set cleanupPeriodDays in a
    settings.json inside the installed package."""
    index = str(tmp_path / "demo-index")
    code, out, err = run(capsys, "--demo", "status", "--index-dir", index)
    assert code == 0, err
    assert "warning" not in out and "cleanupPeriodDays" not in out and "settings.json" not in out
    code, out, err = run(capsys, "status", "--demo", "--index-dir", index, "--json")
    assert code == 0, err
    assert json.loads(out)["warnings"] == []


def test_status_gives_the_index_size_and_the_transcript_bytes_it_was_built_from(tmp_path, capsys):
    """No percentage: ``transcript_bytes`` counts the transcript files indexed so far (not those
    still to read, nor databases, whose units are rows), so index / transcripts is no share of
    what is on disk (a partial index read as 3%, the demo's tiny one as 240%)."""
    from crabsearch.index.status import Status

    line = Status(index_dir="/i", index_bytes=600_000, index_version="v", last_refresh=None,
                  transcript_bytes=18_000_000).format().splitlines()[0]
    assert line == "index: /i (0.6 MB, built from 18.0 MB of transcript files)"
    line = Status(index_dir="/i", index_bytes=0, index_version=None, last_refresh=None,
                  transcript_bytes=0).format().splitlines()[0]
    assert line == "index: /i (0.0 MB)"
    code, out, err = run(capsys, "--demo", "status", "--index-dir", str(tmp_path / "demo-index"))
    assert code == 0 and "%" not in out.splitlines()[0], err


def test_a_transcript_with_a_hash_in_its_path_is_not_taken_for_gone(tmp_path):
    """``transcript_gone`` finds a member's file as the status panel does (cut at the last
    ``#``, and only when the path itself is not there): a ``#`` in a folder or file name is no
    member part."""
    from crabsearch.hits import transcript_gone

    (tmp_path / "C#").mkdir()
    history = tmp_path / "C#" / "h.md"
    history.write_text("# aider chat started at 2025-06-02 14:29:21\n")
    plain = tmp_path / "a#b.jsonl"
    plain.write_text("{}\n")
    assert not transcript_gone(f"{history}#0") and not transcript_gone(str(plain))
    assert transcript_gone(f"{tmp_path / 'gone.md'}#0") and transcript_gone(str(tmp_path / "gone#x.jsonl"))


def test_a_cut_query_is_quoted_as_searched(home, capsys):
    """A user trial: a 3,000-character query was cut to 512, then quoted whole in "no sessions match"."""
    code, out, _ = run(capsys, "search", "a" * 3000)
    assert code == 0 and "(the query was cut to its first 512 characters)" in out
    line = next(x for x in out.splitlines() if x.startswith("no sessions match"))
    assert len(line) < 600 and line.endswith("…'")


def test_readable_listing_shows_the_hit_where_it_is_in_the_message(tmp_path, monkeypatch, capsys):
    """The plain-text line of a hit shows the matched word also when it sits past the message's
    first 200 characters (a user trial: `database` at character 256-622 was in no line)."""
    home = tmp_path / "home"
    words = " ".join(f"filler{i}" for i in range(60))
    ClaudeSession(home).user(f"{words} and then the wombat database fell over").write()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    code, out, _ = run(capsys, "search", "wombat")
    line = next(x for x in out.splitlines() if x.startswith("   user: "))
    assert code == 0 and "wombat database" in line and line.startswith("   user: …") and len(line) <= 9 + 200
    code, out, _ = run(capsys, "search", "filler1")
    assert next(x for x in out.splitlines() if x.startswith("   user: ")).startswith("   user: filler0 filler1")


def test_version():
    """``crabsearch --version`` prints the package's version (there was none: a fresh-user trial)."""
    from crabsearch import __version__

    done = subprocess.run([sys.executable, "-m", "crabsearch", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"crabsearch {__version__}"


def _as_nobody(base, home):
    """A function running ``crabsearch ARGS`` on ``home`` (index in ``base/index``) as an
    unprivileged user, returning the ``CompletedProcess``: root reads any directory (``setpriv``
    drops to nobody). Skips the test when that is not possible."""
    import os
    import shutil
    from pathlib import Path

    drop = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv is needed to run as another user")
        drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CRABSEARCH_NO_SERVER": "1",
           "CRABSEARCH_INDEX_DIR": str(base / "index"), "CRABSEARCH_CONFIG": str(base / "none.toml"),
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}

    def cli(*argv):
        return subprocess.run([*drop, sys.executable, "-m", "crabsearch", *argv], env=env, capture_output=True,
                              text=True, timeout=120)
    return cli


def _open_to_all(base):
    """Everything under ``base`` readable and writable by anyone (for :func:`_as_nobody`)."""
    for p in [base, *base.rglob("*")]:
        p.chmod(0o777 if p.is_dir() else 0o666)


def _remove(base):
    """Delete ``base``, whatever modes a test left in it."""
    import shutil

    for p in [base, *base.rglob("*")]:
        try:
            p.chmod(0o700)
        except OSError:
            pass
    shutil.rmtree(base, ignore_errors=True)


def test_an_unreadable_project_directory_is_named_by_index_and_status():
    """A project directory crabsearch cannot list (``chmod 000``, another user's) was skipped
    without a word, while an unreadable file is named: ``index`` (stderr and ``--json``'s
    ``unreadable_dirs``) and ``status`` (text and JSON) name it now, and the other sessions are
    indexed. Run as an unprivileged user: root reads any directory."""
    import tempfile
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="crabsearch-unreadable-"))
    try:
        home = base / "home"
        ClaudeSession(home, session_id="5c0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/open").user(
            "the cron job runs twice").write()
        hidden = ClaudeSession(home, session_id="6d000000-0000-4000-8000-000000000000", cwd="/home/dev/closed")
        hidden.user("the cron job in the closed project").write()
        _open_to_all(base)
        hidden.path.parent.chmod(0)
        cli = _as_nobody(base, home)
        index, status = cli("index", "--json"), cli("status", "--json")
        text_index, text_status = cli("index"), cli("status")
    finally:
        _remove(base)
    where = str(hidden.path.parent)
    assert index.returncode == 0, index.stderr
    data = json.loads(index.stdout)
    assert data["unreadable_dirs"] == [f"{where}: Permission denied"] and data["files_seen"] == 1
    assert f"cannot read directory {where}: Permission denied; its transcripts are not indexed" in text_index.stderr
    assert json.loads(status.stdout)["unreadable_dirs"] == [{"path": where, "error": "Permission denied"}]
    listed = f"unreadable directories (their transcripts are skipped):\n  {where}: Permission denied"
    assert listed in text_status.stdout


def test_a_directory_made_unreadable_keeps_its_indexed_sessions():
    """A transcript that cannot be listed right now is not a deleted one: after ``chmod 000`` of a
    project directory, ``index`` removed its 16 indexed sessions (``search skills`` then answered
    with a spelling suggestion) and read them all again once it was readable. Now they stay
    searchable, ``index`` says it kept them, and nothing is read again afterwards."""
    import tempfile
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="crabsearch-unreadable-"))
    try:
        home = base / "home"
        ClaudeSession(home, cwd="/home/dev/open").user("the cron job runs twice").write()
        hidden = ClaudeSession(home, cwd="/home/dev/closed")
        hidden.user("the hobgoblin skills list").write()
        _open_to_all(base)
        cli = _as_nobody(base, home)
        first = cli("index", "--json")
        hidden.path.parent.chmod(0)
        closed = cli("index", "--json")
        found = cli("search", "hobgoblin", "--json", "--no-refresh")
        hidden.path.parent.chmod(0o777)
        reopened = cli("index", "--json")
    finally:
        _remove(base)
    assert first.returncode == 0 and json.loads(first.stdout)["files_read"] == 2, first.stderr
    data = json.loads(closed.stdout)
    assert data["files_removed"] == 0 and data["files_kept"] == 1 and data["unreadable_dirs"]
    assert [h["session_id"] for h in json.loads(found.stdout)["hits"]] == [hidden.session_id]
    again = json.loads(reopened.stdout)
    assert again["files_read"] == 0 and again["files_removed"] == 0 and again["files_kept"] == 0


def test_a_transcript_made_unreadable_after_indexing_is_named_by_status_and_show():
    """A transcript made unreadable after it was indexed (``chmod 000`` changes no size or mtime,
    so no refresh tries it): ``show`` said it "changed since it was indexed" and ``status`` did
    not list it. Now ``show`` says it cannot be read, and ``status`` lists it as unreadable."""
    import tempfile
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="crabsearch-unreadable-"))
    try:
        home = base / "home"
        s = ClaudeSession(home, cwd="/home/dev/open").user("the cron job runs twice")
        s.write()
        _open_to_all(base)
        cli = _as_nobody(base, home)
        cli("index")
        s.path.chmod(0)
        show, status = cli("show", s.session_id[:8]), cli("status", "--json")
    finally:
        _remove(base)
    assert show.returncode == 0 and "[message unavailable: the transcript cannot be read (Permission denied)]" in \
        show.stdout, show.stderr
    assert {"path": str(s.path), "error": "Permission denied"} in json.loads(status.stdout)["unreadable_files"]


def test_a_broken_config_file_keeps_what_its_folders_found(home, capsys, monkeypatch, tmp_path):
    """A config file that cannot be read means defaults for that run (no ``[sources]`` folders):
    that run deleted the sessions those folders had found, until a later run read them again.
    Now they stay, and the next run with the good config reads nothing again."""
    backup = tmp_path / "backup"
    CodexSession(backup).user("the backup session about herons").write()
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(f'[sources]\ncodex = ["{backup / ".codex"}"]\n')
    bad.write_text("this is [ not toml")
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(good))
    assert run(capsys, "index")[0] == 0
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(bad))
    code, out, err = run(capsys, "search", "cron", "--json")
    assert code == 0 and "using defaults" in err
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(good))
    code, out, _ = run(capsys, "search", "herons", "--json", "--no-refresh")
    assert len(json.loads(out)["hits"]) == 1
    code, out, _ = run(capsys, "index", "--json")
    assert json.loads(out)["files_read"] == 0 and json.loads(out)["files_removed"] == 0


def test_search_finds_a_session_by_the_start_of_its_id_as_show_does(home, capsys):
    """``crabsearch search 5c0375b4`` (the short id ``show`` takes) lists that session: the
    engine resolves it, for the app and MCP too."""
    code, out, err = run(capsys, "search", "5c0375b4", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["route"] == "id" and [h["session_id"][:8] for h in data["hits"]] == ["5c0375b4"]


def test_status_names_the_agents_that_found_nothing_on_one_line(home, capsys, monkeypatch, tmp_path):
    """Ten agents with "0 transcripts found ... (not found)", two lines each, hid the two that
    found something: those are listed in full, the rest named on one line; an agent the user
    pointed elsewhere (its environment variable, the config's [sources]) stays in full, with
    its folder not found. ``--json`` keeps every agent."""
    run(capsys, "index")
    code, out, _ = run(capsys, "status")
    assert code == 0 and "Claude Code: 1 transcript found" in out and "Codex CLI: 1 transcript found" in out
    assert "0 transcripts found" not in out and "(not found)" not in out
    [line] = [line for line in out.splitlines() if line.startswith("no transcripts found for ")]
    assert "Gemini CLI, OpenClaw" in line and "SpecStory" in line and "Claude Code" not in line
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "elsewhere"))
    code, out, _ = run(capsys, "status")
    assert "Gemini CLI: 0 transcripts found" in out and f"{tmp_path / 'elsewhere'}" in out
    assert "Gemini CLI" not in next(line for line in out.splitlines() if line.startswith("no transcripts"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # every program's: not a pointer at opencode
    code, out, _ = run(capsys, "status")
    assert "opencode" in next(line for line in out.splitlines() if line.startswith("no transcripts"))
    code, out, _ = run(capsys, "status", "--json")
    assert [a["agent"] for a in json.loads(out)["agents"]] == list(AGENTS)

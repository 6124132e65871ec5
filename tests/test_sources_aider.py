"""Aider: ``.aider.chat.history.md`` sessions as members of one Markdown log (formats.md 6)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from crabsearch.index.documents import index_text_fields
from crabsearch.model import Role, to_ms
from crabsearch.sources import SOURCES
from crabsearch.sources.aider import SOURCE, config_file, listed_dirs
from crabsearch.sources.base import split_member

from source_checks import CORPUS, key, run_cli
import hashlib
from all_agents import Expect, prompt_of, reply_of, write_file

S1 = """
# aider chat started at 2026-03-14 10:00:00

> /usr/bin/aider --model sonnet
> Aider v0.86.2
> Git repo: .git with 12 files

#### why does the cron job run twice at midnight?
#### it started after the deploy

<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>

Two crontab entries probably overlap.

</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>

The crontab has two entries for the nightly backup:

```markdown
#### this heading is inside a fence
> and so is this quote
```

Remove one of them.

> Tokens: 1.2k sent, 300 received.
> Applied edit to crontab export SECRET_TOKEN=abc123

#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all
"""

S2 = """
# aider chat started at 2026-03-15 09:30:00

#### rename the webhook handler

Renamed it to `on_webhook`.
"""


def write_log(path: Path, *sessions: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(sessions), "utf-8")
    return path


def local_utc(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%d %H:%M:%S").astimezone().astimezone(timezone.utc)


def members(path: Path) -> list[str]:
    return [p for p in SOURCE.discover({"CRABSEARCH_AIDER_DIRS": str(path.parent)}, path.parent / "nohome")]


def test_registered():
    assert SOURCES["aider"] is SOURCE


def test_parse_roles_labels_title(tmp_path):
    log = write_log(tmp_path / "webapp" / ".aider.chat.history.md", S1, S2)
    first, second = members(log)
    assert split_member(first) == (str(log), "1") and second.endswith(f"#{len(S1.encode()) + 1}")
    r = SOURCE.read(Path(first))
    got = [(m.role, m.label, m.text) for m in r.messages]
    assert got[0][:2] == (Role.TOOL, "tool:aider") and "Aider v0.86.2" in got[0][2]
    assert got[1] == (Role.USER, "user", "why does the cron job run twice at midnight?\nit started after the deploy")
    assert got[2] == (Role.ASSISTANT, "thinking", "Two crontab entries probably overlap.")
    assert got[3][:2] == (Role.ASSISTANT, "assistant")
    assert "#### this heading is inside a fence" in got[3][2] and got[3][2].endswith("Remove one of them.")
    assert got[4][:2] == (Role.TOOL, "tool:aider") and "SECRET_TOKEN" in got[4][2]
    assert got[5][:2] == (Role.USER, "user") and len(got) == 6
    # tool output is a payload: only the tool name is indexed; thinking is not indexed
    assert index_text_fields(r.messages[4]) == {"tool": "aider"}
    assert index_text_fields(r.messages[2]) == {}
    assert r.messages[4].is_tool_payload and r.messages[2].is_thinking
    s = r.session
    assert s.agent == "aider" and s.title == "why does the cron job run twice at midnight?"
    assert s.anchor_index == 1 and s.message_count == 6
    assert s.project == str(tmp_path / "webapp")
    assert s.started == s.updated == local_utc("2026-03-14 10:00:00")  # an earlier member: header time
    assert s.session_id.startswith("20260314-100000-")
    assert SOURCE.resume_command(s) == f"cd {tmp_path / 'webapp'} && aider --restore-chat-history"
    r2 = SOURCE.read(Path(second))
    assert [m.text for m in r2.messages] == ["rename the webhook handler", "Renamed it to `on_webhook`."]
    assert r2.session.title == "rename the webhook handler" and r2.session.session_id != s.session_id
    mtime = datetime.fromtimestamp(os.stat(log).st_mtime_ns / 1e9, tz=timezone.utc)
    assert r2.session.started == local_utc("2026-03-15 09:30:00")
    # the last member: the file's mtime when aider was still writing it (within 12 h of its start),
    # else its start: a file written (copied, restored) long after says nothing about the chat
    assert mtime > r2.session.started + timedelta(hours=12)
    assert r2.session.updated == r2.session.started
    end = r2.session.started + timedelta(hours=2)
    os.utime(log, ns=(int(end.timestamp() * 1e9),) * 2)
    assert SOURCE.read(Path(second)).session.updated == end
    # messages are absolute byte ranges; load + message_text give the same text back
    data = log.read_bytes()
    for path, read in ((first, r), (second, r2)):
        for m in read.messages:
            raw = data[m.offset:m.offset + m.length].decode()
            assert SOURCE.load(path, m.offset, m.length) == raw
            assert SOURCE.message_text(raw, m.part, m.label) == m.text


def test_quoted_project_resume(tmp_path):
    log = write_log(tmp_path / "my app" / ".aider.chat.history.md", S2)
    s = SOURCE.read(Path(members(log)[0])).session
    assert SOURCE.resume_command(s) == f"cd '{tmp_path / 'my app'}' && aider --restore-chat-history"


def test_confirmation_is_not_the_title(tmp_path):
    log = write_log(tmp_path / "p" / ".aider.chat.history.md",
                    "\n# aider chat started at 2026-03-14 10:00:00\n\n"
                    "#### Add file to the chat? (Y)es/(N)o [Yes]: y\n\n#### fix the login form\n")
    s = SOURCE.read(Path(members(log)[0])).session
    assert s.title == "fix the login form"


def test_interrupted_thinking_ends_at_next_prompt(tmp_path):
    log = write_log(tmp_path / "p" / ".aider.chat.history.md",
                    "\n# aider chat started at 2026-03-14 10:00:00\n\n#### first\n\n"
                    "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nlooping forever\n\n\n"
                    "#### you are looping, stop\n>  \n> ^C again to exit\n")
    r = SOURCE.read(Path(members(log)[0]))
    assert [(m.label, m.text) for m in r.messages] == [
        ("user", "first"), ("thinking", "looping forever"), ("user", "you are looping, stop"),
        ("tool:aider", "^C again to exit")]


def test_incremental_every_cut(tmp_path):
    """Growing the last member from every line boundary and mid-line gives the same messages as
    one read (the last block is yielded but re-read, so indexes do not shift)."""
    log = tmp_path / "p" / ".aider.chat.history.md"
    log.parent.mkdir()
    data = (S1 + "\nMore words after the confirmation.\n").encode()
    log.write_bytes(data)
    os.utime(log, ns=(10**18, 10**18))
    mp = members(log)[0]
    whole = SOURCE.read(Path(mp))
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    cuts = sorted(set(ends[1:] + [(a + b) // 2 for a, b in zip(ends[1:], ends[2:])]))
    for cut in cuts:
        log.write_bytes(data[:cut])
        first = SOURCE.read(Path(mp))
        state = json.loads(json.dumps(first.state))
        size = SOURCE.stat(mp)[0]
        assert first.end_offset <= size
        fp = SOURCE.fingerprint(mp, size)
        log.write_bytes(data)
        os.utime(log, ns=(10**18, 10**18))
        assert SOURCE.fingerprint(mp, size) == fp
        rest = SOURCE.read(Path(mp), first.end_offset, state)
        got = [key(m) for m in first.messages if m.message_index < state["next_index"]] + [key(m) for m in rest.messages]
        assert got == [key(m) for m in whole.messages], f"cut at byte {cut}"
        assert rest.session.to_state() == whole.session.to_state(), f"cut at byte {cut}"


def test_new_session_appended(tmp_path):
    """Appending a new section: the old last member keeps its messages, a new member appears,
    and earlier members keep size and mtime (the indexer skips them)."""
    log = write_log(tmp_path / "p" / ".aider.chat.history.md", S1)
    [m1] = members(log)
    before = SOURCE.stat(m1)
    r1 = SOURCE.read(Path(m1))
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(S2)
    os.utime(log, ns=(before[1] + 10**9, before[1] + 10**9))
    m1b, m2 = members(log)
    assert m1b == m1
    after = SOURCE.stat(m1)
    assert after[0] == before[0] + 1  # the blank line before the new header; the header is the new member's
    stable = SOURCE.stat(m1)[1]
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("#### and one more question\n")
    assert SOURCE.stat(m1)[:2] == (after[0], stable)
    rest = SOURCE.read(Path(m1), r1.end_offset, json.loads(json.dumps(r1.state)))
    assert [key(m) for m in r1.messages] == [key(m) for m in SOURCE.read(Path(m1)).messages]
    assert [m.message_index for m in rest.messages] == [5]  # the re-read last block, not a new one
    r2 = SOURCE.read(Path(m2))
    assert [m.text for m in r2.messages][-1] == "and one more question"


def test_broken_input(tmp_path):
    # bad UTF-8, a text preamble without a header, a truncated last line, no newline at the end
    log = tmp_path / "p" / ".aider.chat.history.md"
    log.parent.mkdir()
    pre = b"stray preamble \xff\xfe line\n\n"
    log.write_bytes(pre + b"# aider chat started at not-a-date\n\n#### caf\xc3\xa9 \xff\n\nhalf a rep")
    mps = members(log)
    assert [split_member(p)[1] for p in mps] == ["0", str(len(pre))]
    pre = SOURCE.read(Path(mps[0]))
    assert pre.messages[0].text == "stray preamble \ufffd\ufffd line" and pre.session.started is None
    r = SOURCE.read(Path(mps[1]))
    assert [m.text for m in r.messages] == ["caf\u00e9 \ufffd", "half a rep"]
    assert r.session.session_id.startswith("notadate-")  # no header time: the file's mtime
    assert r.session.started == r.session.updated == datetime.fromtimestamp(log.stat().st_mtime_ns // 10**6 / 1000, timezone.utc)
    # an empty file and a vanished member
    empty = tmp_path / "q" / ".aider.chat.history.md"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    assert members(empty) == []
    with pytest.raises(FileNotFoundError):
        SOURCE.stat(f"{log}#999")
    with pytest.raises(FileNotFoundError):
        SOURCE.read(Path(f"{log}#999"))
    log.unlink()
    with pytest.raises(OSError):
        SOURCE.read(Path(mps[1]))


def test_discovery(tmp_path):
    home = tmp_path / "home"
    projects = tmp_path / "projects"
    for rel in ("a", "b/c", "d/e/f"):
        write_log(projects / rel / ".aider.chat.history.md", S2)
    write_log(home / ".aider.chat.history.md", S2)
    other = write_log(tmp_path / "other" / ".aider.chat.history.md", S2)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f'[aider]\ndirs = ["{other.parent}", 3]\n')
    env = {"CRABSEARCH_AIDER_DIRS": os.pathsep.join([str(projects), "/does/not/exist"]), "CRABSEARCH_CONFIG": str(cfg)}
    found = {split_member(p)[0] for p in SOURCE.discover(env, home)}
    assert found == {str(projects / "a" / ".aider.chat.history.md"), str(projects / "b/c/.aider.chat.history.md"),
                     str(other), str(home / ".aider.chat.history.md")}  # d/e/f is three levels down
    assert listed_dirs(env, home, "CRABSEARCH_AIDER_DIRS", "aider") == [projects, Path("/does/not/exist"), other.parent]
    assert SOURCE.roots(env, home)[-1] == home
    # default config location under the test HOME; ~ expands to that HOME
    (home / ".config" / "crabsearch").mkdir(parents=True)
    (home / ".config" / "crabsearch" / "config.toml").write_text('[aider]\ndirs = ["~/work"]\n')
    write_log(home / "work" / "x" / ".aider.chat.history.md", S2)
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert config_file({}, home) == home / ".config" / "crabsearch" / "config.toml"
        assert {split_member(p)[0] for p in SOURCE.discover({}, home)} == {
            str(home / "work" / "x" / ".aider.chat.history.md"), str(home / ".aider.chat.history.md")}
    # aider's own override names the file
    custom = write_log(tmp_path / "elsewhere" / "chat.md", S2)
    assert {split_member(p)[0] for p in SOURCE.discover({"AIDER_CHAT_HISTORY_FILE": str(custom)}, tmp_path / "h")} \
        == {str(custom)}
    # a broken config is ignored
    cfg.write_text("[aider\n")
    assert listed_dirs({"CRABSEARCH_CONFIG": str(cfg)}, home, "CRABSEARCH_AIDER_DIRS", "aider") == []


@pytest.mark.skipif(not (CORPUS / "real" / "aider").is_dir(), reason="corpus not present")
def test_corpus():
    files = sorted((CORPUS / "real" / "aider").glob("*/.aider.chat.history.md")) + \
        sorted((CORPUS / "others" / "aider").glob(".aider.chat.history.md"))
    assert files
    texts: dict[str, list[str]] = {}
    for f in files:
        for mp in members(f):
            r = SOURCE.read(Path(mp))
            assert r.stats.skipped == 0
            texts[r.session.title or mp] = [m.text for m in r.messages if m.label in ("user", "assistant")]
            for m in r.messages:
                raw = SOURCE.load(mp, m.offset, m.length)
                assert SOURCE.message_text(raw, 0, m.label).startswith(m.text[:1000])
    rag = [t for title, ts in texts.items() for t in ts if "Про что проект мозгослав" in t]
    assert rag and all(t.startswith("Про что") for t in rag)
    assert any(t.startswith("Судя по предоставленным файлам, проект **Mozgoslav**") for ts in texts.values() for t in ts)
    assert "The history is readable." in texts["inspect the markdown history"]
    assert "add markdown file conventions to CONVENTIONS.md" in texts


run = run_cli  # (exit code, stdout, stderr)


def test_cli_end_to_end(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    project = tmp_path / "src" / "webapp"
    write_log(project / ".aider.chat.history.md", S1, S2)
    for var in ("CRABSEARCH_AIDER_DIRS", "CRABSEARCH_CONFIG", "XDG_CONFIG_HOME", "AIDER_CHAT_HISTORY_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    (home / ".config" / "crabsearch").mkdir(parents=True)
    (home / ".config" / "crabsearch" / "config.toml").write_text(f'[aider]\ndirs = ["{tmp_path / "src"}"]\n')
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(home / ".config" / "crabsearch" / "config.toml"))
    idx = str(tmp_path / "index")
    code, _, err = run(capsys, "--index-dir", idx, "index")
    assert code == 0, err
    code, out, err = run(capsys, "--index-dir", idx, "search", "--json", "crontab")
    assert code == 0, err
    [hit] = json.loads(out)["hits"]
    assert hit["agent"] == "aider" and hit["title"] == "why does the cron job run twice at midnight?"
    assert hit["project"] == str(project)
    assert hit["resume_command"] == f"cd {project} && aider --restore-chat-history"
    code, out, _ = run(capsys, "--index-dir", idx, "search", "--json", "SECRET_TOKEN")
    assert json.loads(out)["hits"] == []  # tool output is not indexed
    code, out, _ = run(capsys, "--index-dir", idx, "show", hit["session_id"], "--json")
    assert code == 0
    texts = [m["text"] for m in json.loads(out)["messages"]]
    assert "why does the cron job run twice at midnight?\nit started after the deploy" in texts
    assert any(t.endswith("Remove one of them.") for t in texts)
    code, out, _ = run(capsys, "--index-dir", idx, "status", "--json")
    aider = next(a for a in json.loads(out)["agents"] if a["agent"] == "aider")
    assert aider["files_found"] == 2 and aider["sessions"] == 2
    code, out, _ = run(capsys, "--index-dir", idx, "status")
    assert "Aider: 2 sessions found in 1 file," in out  # both sessions are in one history file


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaaider`` no other session holds."""
    code = home / "code"
    project = code / "aiderproj"
    local = t.replace(tzinfo=None)  # aider writes local time; the mtime (12 h later) decides "updated"
    path = write_file(project / ".aider.chat.history.md",
                  f"# aider chat started at {local:%Y-%m-%d %H:%M:%S}\n\n"
                  "> /usr/bin/aider --model sonnet\n> Aider v0.86.2\n\n"
                  f"#### {prompt_of('aider')}\n\n{reply_of('aider')}\n\n> Tokens: 1.2k sent, 300 received.\n")
    digest = hashlib.sha1(f"{path}#0".encode()).hexdigest()[:8]
    return Expect("aider", f"{local:%Y%m%d-%H%M%S}-{digest}", prompt_of("aider"), str(project),
                  f"cd {project} && aider --restore-chat-history", "quokkaaider", [prompt_of("aider"), reply_of("aider")],
                  t, env={"CRABSEARCH_AIDER_DIRS": str(code)}, files=[path])

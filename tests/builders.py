"""Builders that write small transcripts in the agents' real on-disk formats (for index, search,
CLI and TUI tests that need specific content). The static fixtures live in ``tests/fixtures/``."""

from __future__ import annotations

import json
import uuid as _uuid
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

T0 = datetime(2026, 3, 14, 10, 0, 0, tzinfo=timezone.utc)


def _ts(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeSession:
    """A Claude Code session: ``<home>/.claude/projects/<slug>/<session_id>.jsonl``."""

    def __init__(self, home: Path, session_id: str | None = None, cwd: str = "/home/dev/webapp",
                 start: datetime = T0, branch: str = "main"):
        self.home = Path(home)
        self.session_id = session_id or str(_uuid.uuid4())
        self.cwd = cwd
        self.t = start
        self.branch = branch
        self.lines: list[dict] = []
        self.parent: str | None = None
        self.n = 0

    @property
    def path(self) -> Path:
        slug = "".join(c if c.isalnum() else "-" for c in self.cwd)
        return self.home / ".claude" / "projects" / slug / f"{self.session_id}.jsonl"

    def _base(self, kind: str) -> dict:
        self.n += 1
        self.t += timedelta(seconds=30)
        uid = f"{self.session_id[:8]}-u{self.n:04d}"
        d = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
             "sessionId": self.session_id, "version": "2.1.0", "gitBranch": self.branch, "type": kind,
             "uuid": uid, "timestamp": _ts(self.t)}
        self.parent = uid
        return d

    def rewind_to(self, uuid: str | None) -> "ClaudeSession":
        """The next line's parent is ``uuid`` (Claude Code's rewind: Esc Esc, edit a prompt)."""
        self.parent = uuid
        return self

    def user(self, text: str) -> "ClaudeSession":
        d = self._base("user")
        d["message"] = {"role": "user", "content": text}
        self.lines.append(d)
        return self

    def assistant(self, text: str) -> "ClaudeSession":
        d = self._base("assistant")
        d["message"] = {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-x",
                        "content": [{"type": "text", "text": text}]}
        self.lines.append(d)
        return self

    def tool(self, name: str, tool_input: dict, output: str) -> "ClaudeSession":
        tid = f"toolu_{self.session_id[:6]}_{self.n}"
        d = self._base("assistant")
        d["message"] = {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-x",
                        "content": [{"type": "tool_use", "id": tid, "name": name, "input": tool_input}]}
        self.lines.append(d)
        r = self._base("user")
        r["message"] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": output}]}
        self.lines.append(r)
        return self

    def task(self, prompt: str, agent_id: str, answer: str, name: str = "Task") -> "ClaudeSession":
        """A ``Task`` (or ``Agent``) tool call and its result, which names the subagent it ran
        (``agentId`` on the result line and in ``toolUseResult``, formats.md 1.2 and 1.4)."""
        tid = f"toolu_{self.session_id[:6]}_{self.n}"
        d = self._base("assistant")
        d["message"] = {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-x",
                        "content": [{"type": "tool_use", "id": tid, "name": name,
                                     "input": {"description": prompt[:30], "prompt": prompt,
                                               "subagent_type": "general-purpose"}}]}
        self.lines.append(d)
        r = self._base("user")
        r["message"] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                     "content": [{"type": "text", "text": answer}]}]}
        r["toolUseResult"] = {"status": "completed", "prompt": prompt, "agentId": agent_id,
                              "content": [{"type": "text", "text": answer}]}
        r["agentId"] = agent_id
        self.lines.append(r)
        return self

    def copy_of(self, other: "ClaudeSession") -> "ClaudeSession":
        """Start with a copy of ``other``'s lines (same ``uuid``s and times, this session's
        ``sessionId``), as ``claude --resume`` wrote them in 1.x and some 2.x builds (formats.md
        1.4): the copied history then continues with new lines."""
        for d in other.lines:
            d = dict(d)
            if "sessionId" in d:
                d["sessionId"] = self.session_id
            self.lines.append(d)
        self.parent = other.parent
        self.t = max(self.t, other.t)
        self.n = max(self.n, other.n)
        return self

    def compact(self, summary: str) -> "ClaudeSession":
        """A compaction: the ``compact_boundary`` system line (``parentUuid`` null,
        ``logicalParentUuid`` the previous leaf) and the ``isCompactSummary`` user line (1.4)."""
        previous = self.parent
        self.parent = None
        b = self._base("system")
        b.update(subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=previous,
                 compactMetadata={"trigger": "manual", "preTokens": 1000})
        self.lines.append(b)
        u = self._base("user")
        u.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
        u["message"] = {"role": "user", "content": "This session is being continued from a previous "
                        "conversation that ran out of context. " + summary}
        self.lines.append(u)
        return self

    def title(self, text: str) -> "ClaudeSession":
        self.lines.append({"type": "custom-title", "customTitle": text, "sessionId": self.session_id})
        return self

    def queued(self, prompt, mode: str = "prompt", **attachment) -> "ClaudeSession":
        """A prompt typed while the agent was busy: a ``queue-operation`` enqueue line, then the
        ``attachment`` line ``queued_command`` that carries it (no ``user`` line), as Claude Code
        2.x writes them (agentsview issue 401 / PR 406). ``prompt`` is a string or a list of
        content blocks."""
        self.t += timedelta(seconds=5)
        self.lines.append({"type": "queue-operation", "operation": "enqueue",
                           "content": prompt if isinstance(prompt, str) else "", "sessionId": self.session_id,
                           "timestamp": _ts(self.t)})
        d = self._base("attachment")
        d["attachment"] = {"type": "queued_command", "prompt": prompt, "commandMode": mode,
                           "timestamp": d["timestamp"], **attachment}
        self.lines.append(d)
        return self

    def last_prompt(self, text: str) -> "ClaudeSession":
        """A ``last-prompt`` line naming the active leaf (``leafUuid``: the latest line)."""
        self.lines.append({"type": "last-prompt", "lastPrompt": text, "leafUuid": self.parent,
                           "sessionId": self.session_id})
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in self.lines), "utf-8")
        return self.path


class ClaudeSubagent(ClaudeSession):
    """A Claude Code (>= 2.1) subagent transcript of ``parent``:
    ``<slug>/<parent id>/subagents/agent-<agent_id>.jsonl``; every line is a sidechain line with
    ``agentId`` and the parent's ``sessionId`` (formats.md 1.1, 1.4)."""

    def __init__(self, parent: ClaudeSession, agent_id: str, start: datetime | None = None):
        super().__init__(parent.home, parent.session_id, parent.cwd, start or parent.t, parent.branch)
        self.agent_id = agent_id
        self.parent_dir = parent.path.with_suffix("")

    @property
    def path(self) -> Path:
        return self.parent_dir / "subagents" / f"agent-{self.agent_id}.jsonl"

    def _base(self, kind: str) -> dict:
        d = super()._base(kind)
        d["uuid"] = self.parent = f"{self.agent_id[:8]}-u{self.n:04d}"
        d.update(isSidechain=True, agentId=self.agent_id)
        return d


class CodexSession:
    """A Codex CLI rollout: ``<home>/.codex/sessions/YYYY/MM/DD/rollout-<stamp>-<id>.jsonl``."""

    def __init__(self, home: Path, session_id: str | None = None, cwd: str = "/home/dev/api",
                 start: datetime = T0, branch: str = "main"):
        self.home = Path(home)
        self.session_id = session_id or str(_uuid.uuid4())
        self.cwd = cwd
        self.t = start
        self.start = start
        self.n = 0
        self.lines: list[dict] = [self._env("session_meta", {
            "id": self.session_id, "timestamp": _ts(start), "cwd": cwd, "originator": "codex_cli_rs",
            "cli_version": "0.50.0", "source": "cli", "git": {"branch": branch}})]

    @property
    def path(self) -> Path:
        s = self.start
        return (self.home / ".codex" / "sessions" / f"{s:%Y}" / f"{s:%m}" / f"{s:%d}"
                / f"rollout-{s:%Y-%m-%dT%H-%M-%S}-{self.session_id}.jsonl")

    def _env(self, kind: str, payload: dict) -> dict:
        self.t += timedelta(seconds=10)
        return {"timestamp": _ts(self.t), "type": kind, "payload": payload}

    def user(self, text: str) -> "CodexSession":
        self.lines.append(self._env("event_msg", {"type": "user_message", "message": text}))
        self.lines.append(self._env("response_item", {"type": "message", "role": "user",
                                                      "content": [{"type": "input_text", "text": text}]}))
        return self

    def assistant(self, text: str) -> "CodexSession":
        self.lines.append(self._env("response_item", {"type": "message", "role": "assistant",
                                                      "content": [{"type": "output_text", "text": text}]}))
        self.lines.append(self._env("event_msg", {"type": "agent_message", "message": text}))
        return self

    def tool(self, name: str, arguments: dict, output: str) -> "CodexSession":
        self.n += 1
        cid = f"call_{self.n}"
        self.lines.append(self._env("response_item", {"type": "function_call", "name": name,
                                                      "arguments": json.dumps(arguments), "call_id": cid}))
        self.lines.append(self._env("response_item", {"type": "function_call_output", "call_id": cid,
                                                      "output": output}))
        return self

    def rolled_back(self, num_turns: int) -> "CodexSession":
        """``/undo``-style rollback: ``event_msg`` ``thread_rolled_back`` (openai/codex
        ``ThreadRolledBackEvent``), dropping the last ``num_turns`` user turns."""
        self.lines.append(self._env("event_msg", {"type": "thread_rolled_back", "num_turns": num_turns}))
        return self

    def spawned_by(self, parent: "CodexSession", agent_role: str = "explorer") -> "CodexSession":
        """Make this rollout a subagent of ``parent`` as Codex writes one: its ``session_meta``
        names the parent (``source.subagent.thread_spawn.parent_thread_id``) and
        ``subagent_history_start_ordinal``; the parent's ``session_meta`` and conversation follow,
        copied; every line carries its ``ordinal`` (paginated history mode)."""
        meta = self.lines[0]
        copied = [dict(d) for d in parent.lines]
        meta["payload"].update(source={"subagent": {"thread_spawn": {
            "parent_thread_id": parent.session_id, "depth": 1, "agent_path": f"/root/{agent_role}",
            "agent_nickname": None, "agent_role": agent_role}}},
            subagent_history_start_ordinal=1 + len(copied))
        self.lines = [meta] + copied + self.lines[1:]
        return self

    def with_ordinals(self) -> "CodexSession":
        """Number every line (``ordinal``, from 0), as paginated rollouts do."""
        for n, d in enumerate(self.lines):
            d["ordinal"] = n
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in self.lines), "utf-8")
        return self.path


class GeminiChat:
    """A Gemini CLI chat as the CLI writes it today (google-gemini/gemini-cli
    ``chatRecordingService.ts``): ``<home>/.gemini/tmp/<project id>/chats/session-<stamp>-<id8>.jsonl``,
    a metadata line, then message records (the same ``id`` re-appended when a message is
    updated), ``$set`` patches and ``$rewindTo`` records. ``project_root`` writes the project
    registry's ``tmp/<project id>/.project_root`` marker."""

    def __init__(self, home: Path, session_id: str | None = None, project_id: str = "webapp",
                 start: datetime = T0, directories: list[str] | None = None, project_root: str | None = None):
        self.home = Path(home)
        self.session_id = session_id or str(_uuid.uuid4())
        self.project_id = project_id
        self.t = start
        self.start = start
        self.project_root = project_root
        meta = {"sessionId": self.session_id, "projectHash": project_id, "startTime": _ts(start),
                "lastUpdated": _ts(start), "kind": "main"}
        if directories is not None:
            meta["directories"] = directories
        self.lines: list[dict] = [meta]
        self.n = 0

    @property
    def path(self) -> Path:
        return (self.home / ".gemini" / "tmp" / self.project_id / "chats"
                / f"session-{self.start:%Y-%m-%dT%H-%M}-{self.session_id[:8]}.jsonl")

    def message(self, kind: str, content, mid: str | None = None, **extra) -> str:
        """Append a message record; returns its id (pass ``mid`` to re-append an update)."""
        self.n += 1
        self.t += timedelta(seconds=10)
        mid = mid or f"m{self.n}"
        self.lines.append({"id": mid, "timestamp": _ts(self.t), "type": kind, "content": content, **extra})
        return mid

    def user(self, text: str, mid: str | None = None, **extra) -> str:
        return self.message("user", [{"text": text}], mid, **extra)

    def gemini(self, text: str, mid: str | None = None, **extra) -> str:
        return self.message("gemini", text, mid, model="gemini-2.5-pro", **extra)

    def set(self, **fields) -> "GeminiChat":
        self.lines.append({"$set": fields})
        return self

    def rewind(self, mid: str) -> "GeminiChat":
        self.lines.append({"$rewindTo": mid})
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.project_root is not None:
            (self.path.parent.parent / ".project_root").write_text(self.project_root, "utf-8")
        self.path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in self.lines), "utf-8")
        return self.path


NOW = datetime(2026, 3, 20, 12, 0, 0, tzinfo=timezone.utc)
"""The fixed clock for TUI tests and snapshots."""


def skipping_session(home):
    """A Claude Code session whose reader skips a broken line between its two messages and one
    after the last (an oversized line is skipped the same way: ``search.skipped``)."""
    s = ClaudeSession(home, session_id="cccccccc-0000-4000-8000-000000000002").user("the grebe question")
    s.assistant("the grebe answer")
    lines = [json.dumps(d) for d in s.lines]
    s.path.parent.mkdir(parents=True, exist_ok=True)
    s.path.write_text("\n".join([lines[0], '{"type": "user", "message": ', lines[1], '{"broken']) + "\n")
    return s


def build_sample_home(home: Path) -> Path:
    """A small, fixed set of sessions for TUI tests and snapshots (both agents, a long session,
    markup-like and escape-sequence text)."""
    (ClaudeSession(home, session_id="5c0375b4-57a5-4f26-b12d-d022ee4e51b7", cwd="/home/dev/webapp",
                   start=datetime(2026, 3, 19, 9, 0, tzinfo=timezone.utc))
     .user("The nightly cron job runs twice at midnight. Can you find out why?")
     .assistant("I'll look at the crontab and the systemd timers.")
     .tool("Bash", {"command": "crontab -l"}, "0 0 * * * /opt/app/run.sh\n0 0 * * * /opt/app/run.sh")
     .assistant("There are two identical cron entries; one was added by the deploy script.")
     .user("Remove the duplicate and make the deploy script idempotent.")
     .tool("Edit", {"file_path": "deploy.sh"}, "ok")
     .assistant("Done: deploy.sh now checks `crontab -l | grep -F run.sh` before adding the entry.")
     .title("Fix the double cron run").write())
    (CodexSession(home, session_id="019a0000-1111-7222-8333-444455556666", cwd="/home/dev/api",
                  start=datetime(2026, 3, 18, 15, 30, tzinfo=timezone.utc))
     .user("The HTTP client retry backoff explodes to minutes after a few failures")
     .assistant("The backoff doubles without a cap. I'll add a max delay and jitter.")
     .tool("shell", {"command": ["rg", "backoff"]}, "client.py:42: delay *= 2")
     .assistant("Capped the delay at 30s and added full jitter; the cron-like retry storm is gone.")
     .write())
    (ClaudeSession(home, session_id="7d1e0000-2222-4333-8444-555566667777", cwd="/home/dev/notes",
                   start=datetime(2026, 3, 12, 8, 0, tzinfo=timezone.utc))
     .user("Why does my log show [bold]literal[/bold] tags and [/path] brackets?")
     .assistant("Rich markup like [red]this[/red] is shown literally here; an escape \x1b[31m too.")
     .write())
    long = ClaudeSession(home, session_id="9f000000-3333-4444-8555-666677778888", cwd="/home/dev/bigrepo",
                         start=datetime(2026, 2, 1, 8, 0, tzinfo=timezone.utc)).title("Very long refactor")
    for i in range(300):
        long.user(f"step {i}: continue the refactor of module {i}")
        long.assistant(f"refactored module {i}" + (" and finally fixed the cron parser" if i == 280 else ""))
    long.write()
    return home


def _sample(tmp_path_factory):
    """``(home, index_dir)`` of the sample sessions, indexed once per test run."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("sample")
    home = build_sample_home(root / "home")
    index_dir = root / "index"
    Indexer(index_dir, env={"HOME": str(home)}).refresh()
    return home, index_dir


try:
    import pytest

    sample = pytest.fixture(scope="session")(_sample)
except ImportError:  # pragma: no cover
    pass


async def settle(pilot, timeout: float = 10.0) -> None:
    """Wait until the app's search screen shows the latest query's results and no worker runs
    (a search can end late on a loaded machine)."""
    import time

    app = pilot.app
    deadline = time.monotonic() + timeout
    await pilot.pause(0.05)
    while time.monotonic() < deadline:
        await app.workers.wait_for_complete()
        screen = next((s for s in app.screen_stack if hasattr(s, "settled")), None)
        if screen is None or (screen.settled and not app.indexing):
            break
        await pilot.pause(0.05)
    await app.workers.wait_for_complete()
    await pilot.pause()


def indexed_engine(tmp_path: Path, *sessions):
    """Write ``sessions`` (builders with a ``home``), index their home into ``tmp_path/index``
    and return a search ``Engine`` on it (the ranking tests' setup)."""
    from crabsearch.index import Indexer
    from crabsearch.search import Engine

    for s in sessions:
        s.write()
    Indexer(tmp_path / "index", env={"HOME": str(sessions[0].home)}).refresh()
    return Engine(tmp_path / "index")


def delete_without_merging(index_dir: Path, skey: str):
    """Delete session ``skey``'s documents from the index in ``index_dir`` without merging (the
    indexer's own commits purge deletions), leaving a segment with deleted documents; returns
    the index opened again."""
    from crabsearch.index.store import open_index

    ix, _ = open_index(index_dir, create=False)
    w = ix.writer()
    w.delete_by_term("skey", skey)
    w.commit(merge=False)
    return open_index(index_dir, create=False)[0]


def short_ids(result) -> list[str]:
    """The first four characters of each hit's session id, in rank order."""
    return [h.session.session_id[:4] for h in result.hits]


@contextmanager
def unwritable(directory: Path):
    """``directory`` and everything in it cannot be changed while the block runs, as on a
    read-only mount, an immutable directory or in a sandbox (writes fail with EPERM): ``chattr
    +i`` on each. Needs root (``chmod a-w`` would not do: crabsearch makes its own directory
    0700 again); skips the test where that is not to be had."""
    import os
    import subprocess

    import pytest

    if os.geteuid() != 0:
        pytest.skip("chattr +i needs root")
    targets = [str(p) for p in (directory, *directory.rglob("*")) if not p.is_symlink()]
    if subprocess.run(["chattr", "+i", *targets], capture_output=True).returncode:
        subprocess.run(["chattr", "-i", *targets], capture_output=True)
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *targets], check=True)

"""One session per agent, each in the agent's DEFAULT on-disk layout and real format, under one
test ``HOME`` (issue 5 "Done when": status, search, show and the app, for every agent at once).

:func:`build_all_agents_home` writes the twelve sessions and returns what each must look like
once indexed (:class:`Expect`); :func:`all_agents_env` is the environment to index them with
(only ``HOME`` plus the directory lists of Aider and SpecStory, which have no default location).
Each session holds a word found in no other session (``quokka<agent>``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from builders import ClaudeSession, CodexSession
from test_sources_crabtalk import Store, assistant as crab_assistant, meta as crab_meta, msg_key, user as crab_user
from test_sources_opencode import SCHEMA as OPENCODE_SCHEMA
from v3_builders import V3Session

AGENTS = ["claude", "codex", "gemini", "openclaw", "crabtalk", "opencode", "copilot", "pi", "cursor", "cline",
          "aider", "specstory"]
"""The twelve agents, in the order their sessions are dated (claude oldest, specstory newest)."""

FIRST_DAY = datetime(2026, 3, 8, 9, 0, tzinfo=timezone.utc)
"""The first agent's session starts here; each next agent's one day later (all before ``NOW``)."""

MTIME_AFTER = timedelta(hours=12)
"""Every file's mtime is its session's start plus this (after any local-time Aider header)."""


@dataclass
class Expect:
    """What one agent's session must look like after indexing: ``word`` is the unique search
    term; ``texts`` are the user and assistant message texts in order (what ``show`` reads back);
    ``env`` the variables beyond ``HOME`` the agent needs to be found; ``files`` the files written
    (their mtimes are pinned to ``updated``)."""

    agent: str
    session_id: str
    title: str
    project: str
    resume: str | None
    word: str
    texts: list[str]
    start: datetime
    env: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    @property
    def updated(self) -> datetime:
        """The pinned mtime of the session's files."""
        return self.start + MTIME_AFTER


def iso(t: datetime) -> str:
    """``2026-03-08T09:00:00.000Z``."""
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms(t: datetime) -> int:
    """Epoch milliseconds."""
    return int(t.timestamp() * 1000)


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, "utf-8")
    return path


def _jsonl(path: Path, *objs) -> Path:
    return _write(path, "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs))


def _prompt(agent: str) -> str:
    return f"Why does the quokka{agent} worker stall after the deploy?"


def _reply(agent: str) -> str:
    return f"The {agent} worker waits on a lock nobody releases; I added a timeout."


# -- one builder per agent: (home, start) -> Expect -------------------------------------------------


def _claude(home: Path, t: datetime) -> Expect:
    sid = "5c0375b4-0000-4f26-b12d-d022ee4e5101"
    cwd = "/home/dev/claude app"
    s = (ClaudeSession(home, session_id=sid, cwd=cwd, start=t).user(_prompt("claude"))
         .assistant(_reply("claude")).title("Claude: unstick the worker"))
    path = s.write()
    return Expect("claude", sid, "Claude: unstick the worker", cwd, f"cd '{cwd}' && claude --resume {sid}",
                  "quokkaclaude", [_prompt("claude"), _reply("claude")], t, files=[path])


def _codex(home: Path, t: datetime) -> Expect:
    sid = "019a0000-1111-7222-8333-444455550102"
    cwd = "/home/dev/codexapi"
    path = CodexSession(home, session_id=sid, cwd=cwd, start=t).user(_prompt("codex")).assistant(_reply("codex")).write()
    index = _jsonl(home / ".codex" / "session_index.jsonl",
                   {"id": sid, "thread_name": "Codex: worker stall", "updated_at": iso(t)})
    return Expect("codex", sid, "Codex: worker stall", cwd, f"cd {cwd} && codex resume {sid}", "quokkacodex",
                  [_prompt("codex"), _reply("codex")], t, files=[path, index])


def _gemini(home: Path, t: datetime) -> Expect:
    sid = "4c1f9a2e-7b3d-4e5f-9a8b-1c2d3e4f0103"
    cwd = "/home/dev/gemproj"
    project_hash = hashlib.sha256(cwd.encode()).hexdigest()
    path = _jsonl(home / ".gemini" / "tmp" / project_hash / "chats" / f"session-{t:%Y-%m-%dT%H-%M}-{sid[:8]}.jsonl",
                  {"sessionId": sid, "projectHash": project_hash, "startTime": iso(t),
                   "lastUpdated": iso(t + timedelta(minutes=1)), "kind": "main", "directories": [cwd],
                   "summary": "Gemini: worker stall"},
                  {"id": "u1", "timestamp": iso(t + timedelta(seconds=5)), "type": "user",
                   "content": [{"text": _prompt("gemini")}]},
                  {"id": "g1", "timestamp": iso(t + timedelta(minutes=1)), "type": "gemini",
                   "content": _reply("gemini"), "model": "gemini-2.5-pro"})
    return Expect("gemini", sid, "Gemini: worker stall", cwd, f"cd {cwd} && gemini --resume {sid}", "quokkagemini",
                  [_prompt("gemini"), _reply("gemini")], t, files=[path])


def _openclaw(home: Path, t: datetime) -> Expect:
    sid = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b0104"
    cwd = "/srv/clawbot"
    s = V3Session(sid, cwd=cwd, start=t)
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.user(_prompt("openclaw"))
    s.assistant(_reply("openclaw"))
    sessions = home / ".openclaw" / "agents" / "main" / "sessions"
    path = s.write(sessions / f"{sid}.jsonl")
    store = _write(sessions / "sessions.json", json.dumps(
        {"agent:main:main": {"sessionId": sid, "updatedAt": ms(t), "label": "OpenClaw: worker stall"}}))
    return Expect("openclaw", sid, "OpenClaw: worker stall", cwd, f"cd {cwd} && openclaw tui --session agent:main:main",
                  "quokkaopenclaw", [_prompt("openclaw"), _reply("openclaw")], t, files=[path, store])


def _crabtalk(home: Path, t: datetime) -> Expect:
    handle = "01K3ZQAAAAAAAAAAAAAAAA0105"
    cwd = "/home/dev/crabapp"
    updated = t + timedelta(minutes=1)
    stamp = lambda x: x.strftime("%Y-%m-%dT%H:%M:%S.000000000+00:00")  # noqa: E731  (crabtalk's chrono form)
    path = (Store()
            .put(f"local/session/{handle}/meta", crab_meta(title="Crabtalk: worker stall", root=cwd,
                                                          created_at=stamp(t), updated=stamp(updated)))
            .put(msg_key(handle, 0), crab_user(_prompt("crabtalk")))
            .put(msg_key(handle, 1), crab_assistant({"type": "text", "text": _reply("crabtalk")}))
            .write(home / ".crabtalk" / "store.crmem"))
    return Expect("crabtalk", handle, "Crabtalk: worker stall", cwd, None, "quokkacrabtalk",
                  [_prompt("crabtalk"), _reply("crabtalk")], t, files=[path])


def _opencode(home: Path, t: datetime) -> Expect:
    sid = "ses_0106allagents"
    cwd = "/home/dev/oc app"
    path = home / ".local" / "share" / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(OPENCODE_SCHEMA)
    t0, t1 = ms(t), ms(t + timedelta(minutes=1))
    con.execute("insert into project values (?, ?)", ("proj1", cwd))
    con.execute("insert into session values (?,?,?,?,?,?,?,?,?,null)",
                (sid, "proj1", None, "quiet-quokka", cwd, "opencode: worker stall", "1.4.0", t0, t1))
    user_info = {"role": "user", "time": {"created": t0}}
    bot_info = {"role": "assistant", "time": {"created": t1, "completed": t1 + 500}, "modelID": "m",
                "providerID": "p", "path": {"cwd": cwd, "root": cwd}}
    for mid, when, info, parts in (
            ("msg_0001", t0, user_info, [{"type": "text", "text": _prompt("opencode")}]),
            ("msg_0002", t1, bot_info, [{"type": "step-start"}, {"type": "text", "text": _reply("opencode")},
                                        {"type": "step-finish"}])):
        con.execute("insert into message values (?,?,?,?,?)", (mid, sid, when, when, json.dumps(info)))
        for i, part in enumerate(parts):
            con.execute("insert into part values (?,?,?,?,?,?)",
                        (f"prt_{mid[4:]}_{i}", mid, sid, when, when, json.dumps(part)))
    con.commit()
    con.close()
    return Expect("opencode", sid, "opencode: worker stall", cwd, f"cd '{cwd}' && opencode '{cwd}' --session {sid}",
                  "quokkaopencode", [_prompt("opencode"), _reply("opencode")], t, files=[path])


def _copilot(home: Path, t: datetime) -> Expect:
    sid = "0b7c2d4e-5f60-4a1b-9c8d-7e6f5a4b0107"
    cwd = "/home/dev/copilotsvc"
    d = home / ".copilot" / "session-state" / sid

    def ev(n: int, kind: str, data: dict, secs: int) -> dict:
        return {"type": kind, "data": data, "id": f"e{n}", "timestamp": iso(t + timedelta(seconds=secs)),
                "parentId": f"e{n - 1}" if n > 1 else None}

    path = _jsonl(d / "events.jsonl",
                  ev(1, "session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                          "copilotVersion": "1.0.11", "startTime": iso(t),
                                          "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}}, 0),
                  ev(2, "user.message", {"content": _prompt("copilot"), "attachments": []}, 5),
                  ev(3, "assistant.turn_start", {"turnId": "0"}, 6),
                  ev(4, "assistant.message", {"messageId": "m1", "content": _reply("copilot"), "toolRequests": []}, 60),
                  ev(5, "assistant.turn_end", {"turnId": "0"}, 61))
    ws = _write(d / "workspace.yaml", f"id: {sid}\ncwd: {cwd}\nsummary: 'Copilot: worker stall'\n")
    return Expect("copilot", sid, "Copilot: worker stall", cwd, f"cd {cwd} && copilot --resume {sid}",
                  "quokkacopilot", [_prompt("copilot"), _reply("copilot")], t, files=[path, ws])


def _pi(home: Path, t: datetime) -> Expect:
    sid = "019e19b4-eb48-746a-aa6b-8dfcfa370108"
    cwd = "/home/dev/pi proj"
    s = V3Session(sid, cwd=cwd, start=t)
    s.entry("model_change", provider="anthropic", modelId="claude-x")
    s.user(_prompt("pi"))
    s.assistant(_reply("pi"))
    s.entry("session_info", name="pi: worker stall")
    slug = "--" + cwd.strip("/").replace("/", "-") + "--"
    path = s.write(home / ".pi" / "agent" / "sessions" / slug / f"{t:%Y-%m-%dT%H-%M-%S-000Z}_{sid}.jsonl")
    return Expect("pi", sid, "pi: worker stall", cwd, f"cd '{cwd}' && pi --session {sid}", "quokkapi",
                  [_prompt("pi"), _reply("pi")], t, files=[path])


def _cursor(home: Path, t: datetime) -> Expect:
    sid = "0b1c2d3e-aaaa-bbbb-cccc-111122220109"
    project = home / "code" / "cursorproj"
    project.mkdir(parents=True, exist_ok=True)
    slug = "-".join(re.sub(r"[^A-Za-z0-9]", "-", part) for part in project.parts[1:])
    path = _jsonl(home / ".cursor" / "projects" / slug / "agent-transcripts" / f"{sid}.jsonl",
                  {"role": "user", "message": {"content": [
                      {"type": "text", "text": f"<user_query>\n{_prompt('cursor')}\n</user_query>"}]}},
                  {"role": "assistant", "message": {"content": [{"type": "text", "text": _reply("cursor")}]}},
                  {"type": "turn_ended", "status": "success"})
    return Expect("cursor", sid, _prompt("cursor"), str(project), f"cd {project} && cursor-agent --resume {sid}",
                  "quokkacursor", [_prompt("cursor"), _reply("cursor")], t, files=[path])


def _cline(home: Path, t: datetime) -> Expect:
    task = str(ms(t))
    cwd = "/home/dev/dingo app"
    store = home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
    env_details = ("<environment_details>\n# Current Working Directory (/home/dev/dingo app) Files\nsrc/\n"
                   "</environment_details>")
    conv = _write(store / "tasks" / task / "api_conversation_history.json", json.dumps([
        {"role": "user", "content": [{"type": "text", "text": f"<task>\n{_prompt('cline')}\n</task>"},
                                     {"type": "text", "text": env_details}]},
        {"role": "assistant", "content": [{"type": "text", "text": _reply("cline")}]}], indent=2))
    hist = _write(store / "state" / "taskHistory.json", json.dumps([
        {"id": task, "ts": ms(t + timedelta(minutes=1)), "task": "Cline: worker stall",
         "cwdOnTaskInitialization": cwd, "tokensIn": 10, "tokensOut": 2, "totalCost": 0.01}]))
    return Expect("cline", task, "Cline: worker stall", cwd, None, "quokkacline", [_prompt("cline"), _reply("cline")],
                  t, files=[conv, hist])


def _aider(home: Path, t: datetime) -> Expect:
    code = home / "code"
    project = code / "aiderproj"
    local = t.replace(tzinfo=None)  # aider writes local time; the mtime (12 h later) decides "updated"
    path = _write(project / ".aider.chat.history.md",
                  f"# aider chat started at {local:%Y-%m-%d %H:%M:%S}\n\n"
                  "> /usr/bin/aider --model sonnet\n> Aider v0.86.2\n\n"
                  f"#### {_prompt('aider')}\n\n{_reply('aider')}\n\n> Tokens: 1.2k sent, 300 received.\n")
    digest = hashlib.sha1(f"{path}#0".encode()).hexdigest()[:8]
    return Expect("aider", f"{local:%Y%m%d-%H%M%S}-{digest}", _prompt("aider"), str(project),
                  f"cd {project} && aider --restore-chat-history", "quokkaaider", [_prompt("aider"), _reply("aider")],
                  t, env={"CRABSEARCH_AIDER_DIRS": str(code)}, files=[path])


def _specstory(home: Path, t: datetime) -> Expect:
    sid = "0c56ec44-573e-4087-9413-650d54e10112"
    notes = home / "notes"
    project = notes / "specproj"
    reply_t = t + timedelta(minutes=1)
    path = _write(project / ".specstory" / "history" / f"{t:%Y-%m-%d_%H-%M-%S}Z-worker-stall.md",
                  f"<!-- Generated by SpecStory, Markdown v2.0.0 -->\n\n# {t:%Y-%m-%d %H:%M:%S}Z\n\n"
                  f"<!-- Claude Code Session {sid} ({t:%Y-%m-%d_%H-%M-%S}Z) -->\n\n"
                  f"_**User ({t + timedelta(seconds=5):%Y-%m-%d %H:%M:%S}Z)**_\n\n{_prompt('specstory')}\n\n---\n\n"
                  f"_**Agent (claude-opus-4-5 {iso(reply_t)})**_\n\n{_reply('specstory')}\n\n---\n\n")
    return Expect("specstory", sid, _prompt("specstory"), str(project), f"cd {project} && claude --resume {sid}",
                  "quokkaspecstory", [_prompt("specstory"), _reply("specstory")], t,
                  env={"CRABSEARCH_SPECSTORY_DIRS": str(notes)}, files=[path])


_BUILDERS = {"claude": _claude, "codex": _codex, "gemini": _gemini, "openclaw": _openclaw, "crabtalk": _crabtalk,
             "opencode": _opencode, "copilot": _copilot, "pi": _pi, "cursor": _cursor, "cline": _cline,
             "aider": _aider, "specstory": _specstory}


def build_all_agents_home(home: Path) -> dict[str, Expect]:
    """Write one session of each of the twelve agents under ``home`` in its default layout (Aider
    and SpecStory under ``home/code`` and ``home/notes``, see :func:`all_agents_env`); return
    ``{agent: Expect}``. Agent ``i`` of :data:`AGENTS` starts on ``FIRST_DAY + i days``; every
    file's mtime is pinned to its session's ``updated`` so that dates are deterministic."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    out: dict[str, Expect] = {}
    for i, agent in enumerate(AGENTS):
        exp = _BUILDERS[agent](home, FIRST_DAY + timedelta(days=i))
        stamp = exp.updated.timestamp()
        for f in exp.files:
            os.utime(f, (stamp, stamp))
        out[agent] = exp
    return out


CLEARED_ENV = ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLINE_DIR", "APPDATA", "VSCODE_PORTABLE", "PI_CODING_AGENT_DIR",
               "AIDER_CHAT_HISTORY_FILE", "CRABSEARCH_INDEX_DIR"]
"""Variables (beyond each source's ``env_var``) that would move an agent's default location: a
CLI test must not inherit them from the machine running it."""


def all_agents_index(tmp_path_factory):
    """``(home, index_dir, env, expects)``: the twelve sessions indexed once (for app and snapshot
    tests, which pass ``env`` to the app instead of reading ``os.environ``)."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("all_agents")
    home = root / "home"
    expects = build_all_agents_home(home)
    env = all_agents_env(home, expects)
    index_dir = root / "index"
    Indexer(index_dir, env=env).refresh()
    return home, index_dir, env, expects


def all_agents_env(home: Path, expects: dict[str, Expect]) -> dict[str, str]:
    """The environment that finds every session of ``expects``: ``HOME`` plus each agent's extra
    variables (only Aider and SpecStory have any), and ``CRABSEARCH_CONFIG`` pointing at no file
    so that no real config adds directories."""
    env = {"HOME": str(home), "CRABSEARCH_CONFIG": str(Path(home) / "no-config.toml")}
    for exp in expects.values():
        env.update(exp.env)
    return env

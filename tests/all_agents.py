"""One session per agent, each in the agent's DEFAULT on-disk layout and real format, under one
test ``HOME``: status, search, show and the app, for every agent at once.

Each agent's session is written by ``all_agents_session(home, t) -> Expect`` in its fixture test,
``tests/test_sources_<agent>.py`` (an agent is its reader module and that test).
:func:`build_all_agents_home` writes every agent's session and returns what each must look like
once indexed (:class:`Expect`); :func:`all_agents_env` is the environment to index them with
(``HOME`` plus the variables of agents with no default location, such as Aider and SpecStory).
Each session holds a word found in no other session (``quokka<agent>``).
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from crabsearch.sources import AGENTS as _SOURCES_AGENTS, module_of

AGENTS = list(_SOURCES_AGENTS)
"""Every agent, in ``Source.order``: the order their sessions are dated (the first oldest)."""

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


def write_file(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, "utf-8")
    return path


def write_jsonl(path: Path, *objs) -> Path:
    return write_file(path, "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs))


def prompt_of(agent: str) -> str:
    return f"Why does the quokka{agent} worker stall after the deploy?"


def reply_of(agent: str) -> str:
    return f"The {agent} worker waits on a lock nobody releases; I added a timeout."





























def build_all_agents_home(home: Path) -> dict[str, Expect]:
    """Write one session of each agent under ``home`` in its default layout (Aider
    and SpecStory under ``home/code`` and ``home/notes``, see :func:`all_agents_env`); return
    ``{agent: Expect}``. Agent ``i`` of :data:`AGENTS` starts on ``FIRST_DAY + i days``; every
    file's mtime is pinned to its session's ``updated`` so that dates are deterministic."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    out: dict[str, Expect] = {}
    for i, agent in enumerate(AGENTS):
        exp = importlib.import_module(f"test_sources_{module_of(agent)}").all_agents_session(home, FIRST_DAY + timedelta(days=i))
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
    """``(home, index_dir, env, expects)``: every agent's session indexed once (for app and snapshot
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

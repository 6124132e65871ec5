"""User settings: ``config.toml`` in the platformdirs config dir (``~/.config/crabsearch`` on Linux).

Known keys (anything else is ignored)::

    index_tool_output = false     # also index tool output (secrets masked), searched with in:tools
    theme = "textual-dark"        # any Textual theme name; Ctrl+T switches light/dark
    context = 4                   # messages before and after the hit in a context window (0-8)
    index_jobs = 2                # processes a large index build reads transcripts in (default: the cores)

    [sources]                     # extra directories per agent, each laid out like the agent's own
    claude = ["/mnt/old-laptop/.claude"]   # (what CLAUDE_CONFIG_DIR, CODEX_HOME, ... would point at)
    codex = "~/backup/.codex"     # one path may be a string; a path is absolute or starts with ~

    [resume]                      # extra arguments appended to an agent's resume command
    claude = "--model opus"

    [keys]                        # key overrides by action id (see the README for the ids)
    resume = "ctrl+o"

* ``[sources]``: a relative path is named as a problem and left out: it would be looked up from
  whatever directory crabsearch was started in (``claude = "notalist"`` is such a path).
* ``index_tool_output``: the first 3,072 characters of each tool output go into a separate
  low-weight field. Off by default: tool output carries credentials.
* ``index_jobs``: a whole number from 1 to :data:`MAX_JOBS`; unset (None), the indexer's
  default (``index.parallel.default_jobs``: the usable cores, at most 4). ``crabsearch index
  --jobs N`` overrides it for one run.

A missing file means defaults; an unreadable or invalid one is reported (``Config.problem``)
and defaults are used, never a crash.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from .files import read_text
from .sources import CARDS


KEY_ACTIONS = ("open", "expand", "widen", "narrow", "explain", "resume", "fork", "copy", "export", "editor",
               "sort", "reveal", "pick-agent", "pick-project", "pick-date", "find", "find-next",
               "find-previous", "next-hit", "previous-hit", "next-message", "previous-message", "tools",
               "thinking", "abandoned", "subagents", "full-text", "expand-message", "first", "last", "back", "help",
               "status", "theme")
"""Action ids that ``[keys]`` can rebind (the ``id`` of the app's key bindings)."""
MAX_JOBS = 64
"""The most worker processes ``index_jobs`` (and ``--jobs``) may ask for."""
KNOWN_KEYS = ("index_tool_output", "index_jobs", "theme", "context", "sources", "resume", "keys") + tuple(
    card.config_table for card in CARDS.values() if card.config_table)
"""The settings a config file may hold: crabsearch's own, then the agents' own tables
(``Source.config_table``: ``[aider]``, ``[specstory]``)."""
_KEYS = re.compile(r"[A-Za-z0-9_+\-]+(,[A-Za-z0-9_+\-]+)*")


@dataclass
class Config:
    """The settings in effect and where they came from; ``problem`` is a one-line message when
    the file could not be used."""

    index_tool_output: bool = False
    index_jobs: int | None = None
    theme: str | None = None
    context: int = 4
    sources: dict[str, list[str]] = field(default_factory=dict)
    resume: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    problem: str | None = None


def config_path() -> Path:
    """``$CRABSEARCH_CONFIG`` or ``<user config dir>/crabsearch/config.toml``."""
    env = os.environ.get("CRABSEARCH_CONFIG")
    return Path(env).expanduser() if env else Path(platformdirs.user_config_dir("crabsearch")) / "config.toml"


def load(path: Path | None = None) -> Config:
    """Read the config file (see the module docstring). Never raises."""
    path = path or config_path()
    cfg = Config(path=path)
    try:
        text = read_text(path, "utf-8")
    except FileNotFoundError:
        return cfg
    except (OSError, UnicodeDecodeError) as exc:
        cfg.problem = f"{path}: {exc}; using defaults"
        return cfg
    import tomllib  # only with a config file: a process without one does not import it

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        cfg.problem = f"{path}: {exc}; using defaults"
        return cfg
    problems = []
    value = data.get("index_tool_output", False)
    if isinstance(value, bool):
        cfg.index_tool_output = value
    else:
        problems.append("index_tool_output must be true or false; using false")
    jobs = data.get("index_jobs")
    if isinstance(jobs, int) and not isinstance(jobs, bool) and 1 <= jobs <= MAX_JOBS:
        cfg.index_jobs = jobs
    elif jobs is not None:
        problems.append(f"index_jobs must be a whole number from 1 to {MAX_JOBS}; using the number of cores")
    theme = data.get("theme")
    if isinstance(theme, str) and theme:
        cfg.theme = theme
    elif theme is not None:
        problems.append("theme must be a theme name")
    context = data.get("context", 4)
    if isinstance(context, int) and not isinstance(context, bool) and 0 <= context <= 8:
        cfg.context = context
    else:
        problems.append("context must be a number from 0 to 8; using 4")
    unknown = sorted(k for k in data if k not in KNOWN_KEYS)
    if unknown:
        problems.append(f"unknown setting {', '.join(unknown)} (known: {', '.join(KNOWN_KEYS)})")
    for name, kind in (("sources", list), ("resume", str), ("keys", str)):
        table = data.get(name, {})
        if not isinstance(table, dict):
            problems.append(f"[{name}] must be a table")
            continue
        for key, val in table.items():
            if kind is list and isinstance(val, str):
                val = [val]
            if isinstance(val, kind) and (kind is str or all(isinstance(v, str) for v in val)):
                if kind is list:
                    val = _absolute(key, val, problems)
                getattr(cfg, name)[key] = val
            else:
                problems.append(f"[{name}] {key} must be {'a list of paths' if kind is list else 'a string'}")
    from .sources import SOURCES

    for agent in [a for a in cfg.sources if a not in SOURCES]:
        problems.append(f"[sources] {agent} is not an agent (known: {', '.join(SOURCES)})")
        del cfg.sources[agent]
    for action, keys in list(cfg.keys.items()):
        if action not in KEY_ACTIONS:
            problems.append(f"[keys] {action} is not an action (known: {', '.join(KEY_ACTIONS)})")
            del cfg.keys[action]
        elif not _KEYS.fullmatch(keys.strip()):
            problems.append(f"[keys] {action} = {keys!r} is not a key name (e.g. \"ctrl+o\", \"f6\", \"y\")")
            del cfg.keys[action]
    if problems:
        cfg.problem = f"{path}: " + "; ".join(problems)
    return cfg


def _absolute(agent: str, paths: list[str], problems: list[str]) -> list[str]:
    """``paths`` without the relative ones (after ``~`` expansion), each named in ``problems``."""
    kept = []
    for p in paths:
        if os.path.isabs(os.path.expanduser(p)):
            kept.append(p)
        else:
            problems.append(f"[sources] {agent}: {p!r} is not an absolute path (start it with / or ~)")
    return kept

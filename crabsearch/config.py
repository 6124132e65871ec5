"""User settings: ``config.toml`` in the platformdirs config dir (``~/.config/crabsearch`` on Linux).

Known keys (anything else is ignored):

* ``index_tool_output = true``: also index the first 3,072 characters of each tool output, with
  secrets masked, in a separate low-weight field searched only with ``in:tools`` (crabsearch
  issue 3, "Privacy"). Off by default: tool output carries credentials.

A missing file means defaults; an unreadable or invalid one is reported (``Config.problem``)
and defaults are used, never a crash.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import platformdirs


@dataclass
class Config:
    """The settings in effect and where they came from; ``problem`` is a one-line message when
    the file could not be used."""

    index_tool_output: bool = False
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
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return cfg
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        cfg.problem = f"{path}: {exc}; using defaults"
        return cfg
    value = data.get("index_tool_output", False)
    if isinstance(value, bool):
        cfg.index_tool_output = value
    else:
        cfg.problem = f"{path}: index_tool_output must be true or false; using false"
    return cfg

"""Transcript sources: one module per agent format.

Every module in this package that defines ``SOURCE`` (a :class:`Source` instance) is registered:
``SOURCES`` maps its agent name (the ``agent:`` filter value) to it, ordered by ``Source.order``.
Adding an agent means adding one module here, named after its agent (``claude.py`` defines the
``claude`` source), its name in :data:`AGENTS`, and its fixtures under ``tests/``
(``tests/test_lazy_imports.py`` checks that the modules and :data:`AGENTS` agree).

The reader modules are imported on first use, one at a time (issue 13): a search that finds
nothing changed needs the readers of the agents it shows, not all twelve (each compiles its
patterns and pulls in sqlite3, zstandard, tomllib...). ``SOURCES["claude"]``,
``SOURCES.get(name)`` and ``name in SOURCES`` import one module; iterating the names
(``tuple(SOURCES)``, ``", ".join(SOURCES)``) imports none; ``values()`` and ``items()`` import
them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Iterator

from .base import FileRead, Source

AGENTS = ("claude", "codex", "gemini", "openclaw", "crabtalk", "opencode", "copilot", "pi", "cursor", "cline",
          "aider", "specstory")
"""Every agent name, in ``Source.order`` (lists, status, help); each is also its module's name."""


class Registry(Mapping):
    """agent name -> :class:`Source`, importing ``crabsearch.sources.<name>`` when a name is
    first looked up. Names come from :data:`AGENTS` (no import); a module whose ``SOURCE``
    names another agent is an error (``RuntimeError``): module and agent names are one."""

    def __init__(self, names: tuple[str, ...]):
        self._names = names
        self._loaded: dict[str, Source] = {}

    def _load(self, name: str) -> Source:
        src = self._loaded.get(name)
        if src is None:
            module = importlib.import_module(f"{__name__}.{name}")
            src = getattr(module, "SOURCE", None)
            if not isinstance(src, Source) or src.agent != name:
                raise RuntimeError(f"crabsearch.sources.{name} must define SOURCE with agent {name!r}")
            self._loaded[name] = src
        return src

    def __getitem__(self, name: str) -> Source:
        if name not in self._names:
            raise KeyError(name)
        return self._load(name)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


SOURCES: Registry = Registry(AGENTS)


def get_source(agent: str) -> Source:
    """The source for ``agent``; raises ``KeyError`` for an unknown agent name."""
    return SOURCES[agent]


__all__ = ["AGENTS", "SOURCES", "FileRead", "Registry", "Source", "get_source"]

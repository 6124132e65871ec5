"""Transcript sources: one module per agent format.

Every module in this package that defines ``SOURCE`` (a :class:`Source` instance) is an agent,
named after its module (``claude.py`` defines the ``claude`` source). Adding an agent is adding
its module and its fixture test (``tests/test_sources_<agent>.py``); ``tests/test_agent_registry.py``
fails when an agent lacks a piece, and ``tests/test_startup.py`` checks the names and order.

What is known of an agent without importing its reader is its card (:data:`CARDS`): the literal
class attributes ``agent``, ``order``, ``display``, ``badge``, ``env_var``, ``config_table``,
``project_tree`` and ``style`` of the class its module's ``SOURCE = X()`` line makes, read from
the module's text. The names in :data:`AGENTS`, the result rows' badges and column width, the
config's agent tables and the watcher's polled agents come from the cards; everything else
(roots, discovery, reading, resume and fork commands) from the reader itself.

The reader modules are imported on first use, one at a time: a search that finds nothing
changed needs the readers of the agents it shows, not all of them (each compiles its patterns
and pulls in sqlite3, zstandard, tomllib...). ``SOURCES["claude"]``, ``SOURCES.get(name)`` and
``name in SOURCES`` import one module; iterating the names (``tuple(SOURCES)``,
``", ".join(SOURCES)``) imports none; ``values()`` and ``items()`` import them all.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .base import FileRead, Source


@dataclass(frozen=True)
class Card:
    """An agent as its reader module declares it (see the module docstring; the meaning of each
    field is :class:`Source`'s attribute of that name)."""

    agent: str
    order: int = 100
    display: str = ""
    badge: str = ""
    env_var: str = ""
    config_table: str = ""
    project_tree: bool = False
    style: str = ""


_SOURCE_LINE = re.compile(rb"\nSOURCE = (\w+)\(\)")
_CARD_LINE = re.compile(r'^    (\w+) = ("[^"\\\n]*"|-?\d+|True|False)[ \t]*(?:#.*)?$')


def agent_of(module: str) -> str:
    """The agent a reader module is named for: its name, ``_`` written ``-`` (``claude_ai.py``
    reads agent ``claude-ai``)."""
    return module.replace("_", "-")


def module_of(agent: str) -> str:
    """The reader module of ``agent`` (:func:`agent_of` undone)."""
    return agent.replace("-", "_")


def read_cards(directory: Path) -> dict[str, Card]:
    """The cards of the reader modules in ``directory`` (a module whose text has a line
    ``SOURCE = X()``): the :class:`Card` fields written as literals in the body of ``class X``
    (up to its first method), by agent name, in ``(order, agent)`` order. Raises ``RuntimeError``
    for a module whose card names another agent than the module, or holds no ``agent``."""
    cards = []
    for path in sorted(directory.glob("*.py")):
        text = path.read_bytes()
        at = text.rfind(b"\nSOURCE = ")  # near the end, where modules make it
        found = _SOURCE_LINE.match(text, at) if at >= 0 else None
        if found is None:
            continue
        start = text.find(b"\nclass " + found.group(1) + b"(")
        end = text.find(b"\n    def ", start)
        values = {}
        for line in text[start:end].decode("utf-8").splitlines() if start >= 0 else ():
            m = _CARD_LINE.match(line)
            if m and m.group(1) in Card.__dataclass_fields__:
                raw = m.group(2)
                values[m.group(1)] = raw[1:-1] if raw.startswith('"') else raw == "True" if raw in (
                    "True", "False") else int(raw)
        if values.get("agent") != agent_of(path.stem):
            raise RuntimeError(f"crabsearch.sources.{path.stem} must define SOURCE with agent {agent_of(path.stem)!r}")
        cards.append(Card(**values))
    return {c.agent: c for c in sorted(cards, key=lambda c: (c.order, c.agent))}


CARDS: dict[str, Card] = read_cards(Path(__file__).resolve().parent)
"""Every agent's card, by name, in ``Source.order`` (lists, status, help)."""

AGENTS: tuple[str, ...] = tuple(CARDS)
"""Every agent name, in ``Source.order``; each is also its module's name."""


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
            module = importlib.import_module(f"{__name__}.{module_of(name)}")
            src = getattr(module, "SOURCE", None)
            if not isinstance(src, Source) or src.agent != name:
                raise RuntimeError(f"crabsearch.sources.{module_of(name)} must define SOURCE with agent {name!r}")
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


__all__ = ["AGENTS", "CARDS", "SOURCES", "Card", "FileRead", "Registry", "Source", "get_source"]

"""Transcript sources: one module per agent format.

Every module in this package that defines ``SOURCE`` (a :class:`Source` instance) is registered:
``SOURCES`` maps its agent name (the ``agent:`` filter value) to it, ordered by ``Source.order``.
Adding an agent means adding one module here and its fixtures under ``tests/`` and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import FileRead, Source


def _collect() -> dict[str, Source]:
    found: list[Source] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        source = getattr(module, "SOURCE", None)
        if isinstance(source, Source):
            found.append(source)
    found.sort(key=lambda s: (s.order, s.agent))
    return {s.agent: s for s in found}


SOURCES: dict[str, Source] = _collect()


def get_source(agent: str) -> Source:
    """The source for ``agent``; raises ``KeyError`` for an unknown agent name."""
    return SOURCES[agent]


__all__ = ["SOURCES", "FileRead", "Source", "get_source"]

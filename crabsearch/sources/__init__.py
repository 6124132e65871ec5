"""Transcript sources: one module per agent format.

``SOURCES`` maps an agent name (the ``agent:`` filter value) to its :class:`Source`. Adding an
agent means adding one module here and its fixtures under ``tests/fixtures/``.
"""

from __future__ import annotations

from .base import FileRead, Source
from .claude import ClaudeSource
from .codex import CodexSource
from .gemini import GeminiSource

SOURCES: dict[str, Source] = {s.agent: s for s in (ClaudeSource(), CodexSource(), GeminiSource())}


def get_source(agent: str) -> Source:
    """The source for ``agent``; raises ``KeyError`` for an unknown agent name."""
    return SOURCES[agent]


__all__ = ["SOURCES", "FileRead", "Source", "get_source"]

"""The README's table of agents, made from the readers (:class:`~crabsearch.sources.base.Source`'s
``display``, ``agent``, ``locations``, ``reads``, ``override``, :meth:`resume_command` or
``resume_doc``, ``upstream`` and ``checked``). ``python -m crabsearch.sources.table [README]``
rewrites the rows between :data:`README_START` and :data:`README_END`; a test checks the README
holds them."""

from __future__ import annotations

import sys
from pathlib import Path

from ..model import Session
from . import SOURCES
from .base import Source

README_START = "<!-- agents: generated from crabsearch/sources/ by `python -m crabsearch.sources.table` -->"
README_END = "<!-- end of agents -->"
HEADER = ["| agent (`agent:` name) | transcripts | override | resume | what is read | rules from | checked |",
          "|---|---|---|---|---|---|---|"]


def resume_cell(src: Source) -> str:
    """The agent's resume command for session ``ID`` in folder ``DIR`` (``cd DIR && claude --resume
    ID``), else its ``resume_doc``, else ``-``."""
    command = src.resume_command(Session(agent=src.agent, session_id="ID", path="/t", project="DIR"))
    return f"`{command}`" if command else (src.resume_doc or "-")


def row(src: Source) -> str:
    """One agent's row; a ``|`` in a cell is escaped."""
    cells = [f"{src.display} (`{src.agent}`)", src.locations, src.override, resume_cell(src), src.reads,
             src.upstream, src.checked]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def readme_rows() -> list[str]:
    """The header, then a row per agent in ``Source.order``."""
    return HEADER + [row(src) for src in SOURCES.values()]


def with_readme_rows(readme: str) -> str:
    """``readme`` with the lines between the markers replaced by :func:`readme_rows`. Raises
    ``ValueError`` when the markers are missing."""
    head, start, rest = readme.partition(README_START + "\n")
    _, end, tail = rest.partition(README_END)
    if not start or not end:
        raise ValueError("the README has no generated agent rows (its markers are missing)")
    return head + start + "".join(r + "\n" for r in readme_rows()) + end + tail


if __name__ == "__main__":  # pragma: no cover - rewrites the README's agent rows in place
    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "README.md")
    path.write_text(with_readme_rows(path.read_text(encoding="utf-8")), encoding="utf-8")

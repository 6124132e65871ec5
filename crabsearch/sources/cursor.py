"""Cursor CLI (``cursor-agent``) transcripts: ``~/.cursor/projects/<slug>/agent-transcripts/``.

Rules come from ``shared/reference/formats.md`` section 6 ("Cursor") and 7.1/7.2, and the sample
``shared/corpus/others/cursor/agent-transcripts_small.jsonl``. Decisions:

* Root: ``$CURSOR_CONFIG_DIR`` (formats.md names no override; this is the variable cursor-agent
  reads for its config directory), else ``~/.cursor``. Files: ``projects/*/agent-transcripts/<id>.jsonl``
  and the newer ``projects/*/agent-transcripts/<id>/<id>.jsonl``; ``subagents/`` files are not read.
  The IDE's ``state.vscdb`` and the CLI's ``chats/*/*/store.db`` are not read.
* Lines are ``{role, message: {content: [...]}}``: ``text`` blocks (a user's text inside
  ``<user_query>`` tags is unwrapped), ``thinking``/``reasoning`` blocks (thinking),
  ``tool_use`` (``tool-call:<name>``, input as JSON) and ``tool_result`` blocks or ``role: tool``
  lines (tool results, paired by id). ``{type: "turn_ended"}`` and unknown lines are skipped.
* No timestamps: ``updated`` = the file's mtime, ``started`` unknown. Session id = file stem.
  Title: the first user prompt (the CLI's ``store.db`` meta ``name`` is not read).
* Project: the slug is the working directory with ``/`` (and other non-alphanumerics) replaced
  by ``-``; the real path is recovered by walking the file system for directories whose names
  slug to the next parts, else the slug itself is shown (and resume has no ``cd``).
* Resume: ``cd <project> && cursor-agent --resume <id>`` (formats.md 6).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label)
from .base import FileRead, Source, cd_and, dump_text, env_dir, string, walk_files
from .pieces import Piece, emit, piece_text

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_SLUGS: dict[str, str] = {}


class CursorSource(Source):
    """Cursor CLI agent transcripts (JSONL, one session per file)."""

    agent = "cursor"
    order = 90
    env_var = "CURSOR_CONFIG_DIR"
    display = "Cursor CLI"
    badge = "Cursor"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CURSOR_CONFIG_DIR``, else ``~/.cursor``."""
        return [env_dir(env, "CURSOR_CONFIG_DIR", home / ".cursor")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``projects/*/agent-transcripts/<id>.jsonl`` and ``.../<id>/<id>.jsonl``."""
        for root in self.roots(env, home):
            for path in walk_files(root / "projects", "*/agent-transcripts/*.jsonl"):
                yield path
            for path in walk_files(root / "projects", "*/agent-transcripts/*/*.jsonl"):
                if path.parent.name == path.stem:
                    yield path

    def new_state(self, path: Path) -> dict:
        """The project comes from the ``projects/<slug>`` directory."""
        slug = path.parent.parent.name if path.parent.name == "agent-transcripts" else path.parents[2].name
        return {"slug": slug}

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The shared JSONL loop, then ``updated`` = the file's mtime. Raises ``OSError``."""
        read = super().read(path, start, state)
        mtime = self.mtime(path)
        for st in (read.state, None):
            session = read.session if st is None else Session.from_state(st["session"])
            session.updated = mtime
            if st is not None:
                st["session"] = session.to_state()
        return read

    @staticmethod
    def mtime(path: Path) -> datetime | None:
        """The file's modification time (aware UTC), None when it cannot be read."""
        try:
            return datetime.fromtimestamp(os.stat(path).st_mtime_ns / 1e9, tz=timezone.utc)
        except OSError:
            return None

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        emit(pieces_of(rec.obj), rec, state, out, None)

    def finish(self, state: dict, session: Session) -> None:
        """Session id = file stem; project from the slug; title = first user prompt."""
        session.session_id = Path(session.path).stem
        session.project = unslug(state.get("slug") or "")
        session.title = state.get("first_prompt") or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && cursor-agent --resume <id>`` (no ``cd`` when the project is only a slug)."""
        cwd = session.project if session.project and os.path.isabs(session.project) else None
        return cd_and(cwd, ["cursor-agent", "--resume", session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one transcript line, in order (see the module docstring)."""
    role = obj.get("role")
    if role not in ("user", "assistant", "tool"):
        return []
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else obj.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    out: list[Piece] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and string(block.get("text")).strip():
            text = block["text"]
            if role == "user":
                m = _QUERY.search(text)
                text = m.group(1) if m else text.strip()
                out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
            elif role == "tool":
                out.append(Piece(Role.TOOL, None, text, call_id=string(block.get("tool_use_id")) or None))
            else:
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
        elif kind in ("thinking", "reasoning"):
            text = string(block.get("thinking")) or string(block.get("text"))
            if text.strip():
                out.append(Piece(Role.ASSISTANT, LABEL_THINKING, text))
        elif kind in ("tool_use", "tool-call", "tool_call"):
            name = string(block.get("name")) or string(block.get("toolName")) or "unknown"
            args = block.get("input", block.get("args"))
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(args), name,
                             call_id=string(block.get("id")) or string(block.get("toolCallId")) or None))
        elif kind in ("tool_result", "tool-result"):
            result = block.get("content", block.get("result", block.get("output")))
            name = string(block.get("name")) or string(block.get("toolName")) or None
            call = string(block.get("tool_use_id")) or string(block.get("toolCallId")) or None
            out.append(Piece(Role.TOOL, None, _result_text(result), name, call_id=call))
    return out


def _result_text(result) -> str:
    if isinstance(result, list):
        return "\n".join(string(b.get("text")) if isinstance(b, dict) else dump_text(b) for b in result)
    return dump_text(result)


def unslug(slug: str, root: str = os.sep) -> str | None:
    """The existing directory whose absolute path slugs to ``slug`` (each path segment's
    non-alphanumerics as ``-``), found by walking down from ``root`` preferring the longest
    segment at each level; ``slug`` itself when none exists; None for an empty slug. Found
    paths are cached."""
    if not slug:
        return None
    if slug not in _SLUGS:
        found = _walk(root, slug.split("-"), 0, 0)
        if not found:
            return slug  # not cached: the directory may appear later
        _SLUGS[slug] = found
    return _SLUGS[slug]


def _walk(base: str, parts: list[str], i: int, depth: int) -> str | None:
    if i == len(parts):
        return base
    if depth > 64:
        return None
    try:
        names = os.listdir(base)
    except OSError:
        return None
    by_slug: dict[str, list[str]] = {}
    for n in names:
        by_slug.setdefault(re.sub(r"[^A-Za-z0-9]", "-", n), []).append(n)
    for j in range(len(parts), i, -1):
        for n in sorted(by_slug.get("-".join(parts[i:j]), [])):
            p = os.path.join(base, n)
            if os.path.isdir(p):
                found = _walk(p, parts, j, depth + 1)
                if found:
                    return found
    return None


SOURCE = CursorSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

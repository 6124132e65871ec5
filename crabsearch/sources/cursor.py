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

Current layout (rule 18; Cursor is closed, so these follow other tools' parsers and reports:
kenn-io/agentsview#1627 and #1628, tenequm/pond#207, momhq/mom#140):

* **Subagents**: Cursor writes a delegated (``Subagent`` tool) transcript to
  ``agent-transcripts/<parent>/subagents/<child>.jsonl``, one level deep. Each is a session of its
  own, ``parent_session_id`` = ``<parent>`` (its row says "subagent of ..."), titled by its task.
* **Titles**: the CLI keeps a per-chat SQLite store ``chats/<project hash>/<chat id>/store.db``
  whose ``meta`` row ``'0'`` is hex-encoded JSON with the chat's ``name``: that name is the
  session's title when the store exists (read-only through :func:`crabsearch.agentdb.connect`).
* **IDE or CLI**: the IDE's agent also writes ``agent-transcripts`` JSONL but keeps its chats in
  ``state.vscdb``; a transcript with a CLI ``store.db`` is ``Cursor CLI``, one without it where
  the CLI keeps stores (a ``chats`` directory exists) is ``Cursor IDE`` (``extra["app"]``, shown in
  result rows and the JSON ``app``) and gets no resume command; with no ``chats`` directory at all
  nothing tells them apart (no label, the CLI's resume command).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

import json
import sqlite3

from .. import agentdb
from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label)
from .base import FileRead, Source, capped, cd_and, dump_text, env_dir, string, walk_files
from .cursor_composer import COMPOSERS, composer_of
from .pieces import Piece, emit, piece_text

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_SLUGS: dict[str, str] = {}


class CursorSource(Source):
    """Cursor CLI agent transcripts (JSONL, one session per file)."""

    agent = "cursor"
    order = 90
    env_var = "CURSOR_CONFIG_DIR"
    locations = ("`~/.cursor/projects/*/agent-transcripts/*.jsonl`, subagents `<id>/subagents/*.jsonl`; the editor's "
                 "chats in `~/.config/Cursor/User/globalStorage/state.vscdb` (macOS / Windows app data)")
    reads = ("subagents linked to their parent; titles from the CLI's `chats/*/<id>/store.db`; the IDE's "
             "transcripts and the editor's composer chats (`cursorDiskKV` bubbles: thinking, tool calls) labelled "
             "`Cursor IDE`")
    override = "`CURSOR_CONFIG_DIR=DIR` (the CLI's), `XDG_CONFIG_HOME` (the editor's)"
    upstream = ("formats.md section 6 and a public sample transcript (`jazzyalex/agent-sessions`); the composer: "
                "cass `src/connectors/cursor.rs` (franken_agent_detection @6ae73d5f78d2)")
    display = "Cursor CLI"
    badge = "Cursor"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CURSOR_CONFIG_DIR``, else ``~/.cursor``; then the editor's ``User`` directories."""
        return [env_dir(env, "CURSOR_CONFIG_DIR", home / ".cursor")] + COMPOSERS.roots(env, home)

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``projects/*/agent-transcripts/<id>.jsonl``, ``.../<id>/<id>.jsonl`` and subagents
        ``.../<parent>/subagents/<id>.jsonl``; then the editor's chats whose id no transcript has."""
        ids = set()
        for root in self.roots(env, home)[:1]:
            for path in walk_files(root / "projects", "*/agent-transcripts/*.jsonl"):
                ids.add(path.stem)
                yield path
            for path in walk_files(root / "projects", "*/agent-transcripts/*/*.jsonl"):
                if path.parent.name == path.stem:
                    ids.add(path.stem)
                    yield path
            yield from walk_files(root / "projects", "*/agent-transcripts/*/subagents/*.jsonl")
        for unit in COMPOSERS.store_units(env, home):
            if str(unit).rpartition("#")[2] not in ids:
                yield unit

    # -- the editor's chats: delegated to cursor_composer ---------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        return COMPOSERS.stat(path) if composer_of(path) else super().stat(path)

    def fingerprint(self, path: str, size: int) -> str:
        return COMPOSERS.fingerprint(path, size) if composer_of(path) else super().fingerprint(path, size)

    def in_bytes(self, path: str) -> bool:
        return not composer_of(path) and super().in_bytes(path)

    def load(self, path: str, offset: int, length: int) -> object | None:
        return COMPOSERS.load(path, offset, length) if composer_of(path) else super().load(path, offset, length)

    def locate(self, path: str, offset: int) -> tuple[str, int] | None:
        return None if composer_of(path) else super().locate(path, offset)

    def new_state(self, path: Path) -> dict:
        """The project comes from the ``projects/<slug>`` directory; a subagent's parent from
        ``<parent>/subagents/``; the title and the app from the CLI's ``store.db`` (rule 18)."""
        if path.parent.name == "subagents":
            return {"slug": path.parents[3].name, "parent": path.parent.parent.name}
        slug = path.parent.parent.name if path.parent.name == "agent-transcripts" else path.parents[2].name
        state: dict = {"slug": slug}
        root = path.parents[3] if path.parent.name == "agent-transcripts" else path.parents[4]
        found, name = chat_store(root, path.stem)
        if found is not None:
            state["app"] = "Cursor CLI" if found else "Cursor IDE"
        if name:
            state["name"] = capped(name, 200)
        return state

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """An editor chat: :class:`~crabsearch.sources.cursor_composer.ComposerStore`; a
        transcript: the shared JSONL loop, then ``updated`` = the file's mtime. Raises ``OSError``."""
        if composer_of(str(path)):
            return COMPOSERS.read(path, start, state)
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
        """Session id = file stem; project from the slug; title = the chat's ``store.db`` name >
        first user prompt; parent and app (module docstring)."""
        session.session_id = Path(session.path).stem
        session.project = unslug(state.get("slug") or "")
        session.title = state.get("name") or state.get("first_prompt") or None
        session.anchor_index = state.get("anchor", 0)
        session.parent_session_id = state.get("parent")
        if state.get("app"):
            session.extra["app"] = state["app"]

    def message_text(self, obj: dict, part: int, label: str) -> str:
        if "bubble" in obj:  # an editor chat's message
            return COMPOSERS.message_text(obj, part, label)
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && cursor-agent --resume <id>`` (no ``cd`` when the project is only a
        slug); a subagent resumes its parent; an IDE chat has none (it reopens in the IDE)."""
        if session.extra.get("app") == "Cursor IDE":
            return None
        cwd = session.project if session.project and os.path.isabs(session.project) else None
        return cd_and(cwd, ["cursor-agent", "--resume", session.parent_session_id or session.session_id])


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


def chat_store(root: Path, chat_id: str) -> tuple[bool | None, str | None]:
    """``(found, name)`` of the CLI's store for ``chat_id``: ``<root>/chats/*/<chat_id>/store.db``,
    its ``meta`` row ``'0'`` hex-encoded JSON (``name``). ``found`` is True when such a store exists
    (even unreadable), False when the CLI keeps stores here but none for this chat (an IDE chat),
    None when there is no ``chats`` directory at all (nothing tells IDE from CLI); ``name`` is None
    when there is none. Never raises."""
    try:
        hashes = os.listdir(root / "chats")
    except OSError:
        return None, None
    for h in sorted(hashes):
        db = root / "chats" / h / chat_id / "store.db"
        if not db.is_file():
            continue
        try:
            con = agentdb.connect(db, timeout=1.0)
            try:
                row = con.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
            finally:
                con.close()
            value = row[0] if row else None
            raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value or b"")
            if raw[:1] != b"{":  # some builds store the JSON itself
                raw = bytes.fromhex(raw.decode("ascii")) if raw else raw
            meta = json.loads(raw.decode("utf-8", "replace"))
            name = string(meta.get("name")).strip() if isinstance(meta, dict) else ""
            return True, name or None
        except (OSError, sqlite3.Error, ValueError, UnicodeDecodeError):
            return True, None
    return False, None


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

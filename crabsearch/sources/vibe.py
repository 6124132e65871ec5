"""Mistral Vibe sessions: ``$VIBE_HOME/logs/session/<prefix>_<YYYYmmdd_HHMMSS>_<id8>/messages.jsonl``
(else ``~/.vibe``) with ``meta.json`` beside it, or under the ``save_dir`` of the ``[session_logging]``
table of ``$VIBE_HOME/config.toml``.

Rules come from Vibe's own code (mistralai/mistral-vibe 2.18.4 @ac8f1a09fdfb:
``vibe/core/paths/_vibe_home.py`` -- ``VIBE_HOME``, ``SESSION_LOG_DIR``;
``vibe/core/config/models.py`` -- ``SessionLoggingConfig`` (``save_dir``, ``session_prefix``);
``vibe/core/session/session_logger.py`` -- the folder name, ``messages.jsonl`` appended with the
new non-system messages of each interaction, ``meta.json`` replaced; ``vibe/core/types.py`` --
``LLMMessage``, ``SessionMetadata``; ``vibe/core/compaction.py`` -- the compaction context;
``vibe/cli/entrypoint.py`` -- ``--resume SESSION_ID``), and agentsview
``internal/parser/vibe.go`` @b85eae5a7971. Decisions:

* ``messages.jsonl``, append-only: the shared JSONL read loop; ``meta.json`` is read with it.
* Lines are ``LLMMessage`` dumps: ``user`` -> user prompt, unless ``injected`` (Vibe wrote it:
  hook output, plan reminders -> a ``context:injected`` system message; the compaction context,
  ``You are continuing a trajectory after a context compaction.``, -> a summary and the
  session's compaction point); ``assistant`` -> thinking (``reasoning_content``), text and one
  ``tool-call:<function.name>`` per ``tool_calls`` entry; ``tool`` (``name``, ``tool_call_id``) ->
  the tool result. The lines carry no times: ``meta.json`` ``start_time`` / ``end_time``, else the
  file's mtime.
* Session id: ``meta.json`` ``session_id``, else the folder name. Project:
  ``environment.working_directory``; branch ``git_branch``; title ``title`` (Vibe's generated or
  ``/rename`` title, or its first-prompt fallback), else the first prompt. A compaction, fork or
  rewind starts a new session (``parent_session_id``): each is its own session here.
* Resume: ``cd <cwd> && vibe --resume <id>``.
* **Drift**: a ``role`` this reader does not know is counted and listed by ``crabsearch status``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_text
from ..jsonl import Record
from ..model import LABEL_SUMMARY, Message, Role, Session
from .base import FileRead, Source, capped, cd_and, env_dir, note_unknown, parse_ts, string, walk_files
from .crabtalk import pieces_of as chat_pieces
from .pieces import Piece, emit, note_compaction, piece_text

ROLES = frozenset({"system", "user", "assistant", "tool"})
COMPACTION_OPENING = "You are continuing a trajectory after a context compaction."
"""The first line of ``compaction.render_compaction_context``."""
META_BYTES = 4 << 20
TITLE_CAP = 200


class VibeSource(Source):
    """Mistral Vibe: one ``messages.jsonl`` per session folder."""

    agent = "vibe"
    order = 370
    env_var = "VIBE_HOME"
    locations = "`~/.vibe/logs/session/*/messages.jsonl` (+ `meta.json`), or Vibe's `session_logging.save_dir`"
    reads = ("messages Vibe injected (hooks, reminders) not as prompts; the compaction context as a summary; "
             "the title from `meta.json`")
    override = "`VIBE_HOME=DIR`"
    upstream = ("mistralai/mistral-vibe 2.18.4 `vibe/core/session/session_logger.py`, `vibe/core/types.py`, "
                "`vibe/core/compaction.py` @ac8f1a09fdfb; agentsview `internal/parser/vibe.go` @b85eae5a7971")
    checked = "2026-12-06: mistral-vibe 2.18.4"
    display = "Mistral Vibe"
    badge = "Vibe"
    style = "bold black on dark_orange"
    known_kinds = {"role": ROLES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$VIBE_HOME/logs/session`` (else ``~/.vibe/...``), then the ``save_dir`` of Vibe's
        ``config.toml`` when it names another folder."""
        vibe_home = env_dir(env, "VIBE_HOME", home / ".vibe")
        out = [vibe_home / "logs" / "session"]
        saved = _save_dir(vibe_home / "config.toml", home)
        return out + ([saved] if saved and saved not in out else [])

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``*/messages.jsonl`` under each root."""
        for root in self.roots(env, home):
            yield from walk_files(root, "*/messages.jsonl")

    def new_state(self, path: Path) -> dict:
        return {"meta": _meta(path)}

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The shared JSONL loop, with ``meta.json`` read again on every call."""
        if state is not None and start:
            state = dict(state, meta=_meta(path))
        return super().read(path, start, state)

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        role = rec.obj.get("role")
        if not isinstance(role, str) or role not in ROLES:
            note_unknown(state, role)
        base = len(out)
        emit(pieces_of(rec.obj), rec, state, out, None)
        summaries = [i for i, m in enumerate(out[base:]) if m.role is Role.SUMMARY]
        if summaries:
            note_compaction(session, state["next_index"] + summaries[0])

    def finish(self, state: dict, session: Session) -> None:
        """Session fields from ``meta.json`` and the messages read (module docstring)."""
        meta = state.get("meta") or {}
        session.session_id = meta.get("id") or Path(session.path).parent.name
        session.project = meta.get("cwd") or None
        session.git_branch = meta.get("branch") or None
        session.title = meta.get("title") or state.get("first_prompt") or None
        session.started = session.updated = None
        for key in ("start", "end"):
            session.touch(parse_ts(meta.get(key)))
        if session.updated is None:
            session.touch(parse_ts(meta.get("mtime")))
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && vibe --resume <id>`` (``vibe/cli/entrypoint.py``)."""
        return cd_and(session.project, ["vibe", "--resume", session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one ``messages.jsonl`` line (see the module docstring)."""
    role = obj.get("role")
    if role not in ("user", "assistant", "tool"):
        return []
    pieces = chat_pieces(obj)
    if role == "user" and obj.get("injected") is True:
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, p.text) if p.text.lstrip().startswith(COMPACTION_OPENING)
                else Piece(Role.SYSTEM, "context:injected", p.text) for p in pieces]
    return pieces


def _save_dir(config: Path, home: Path) -> Path | None:
    """``[session_logging] save_dir`` of Vibe's ``config.toml`` (``~`` against ``home``), or None."""
    try:
        text = read_text(config, "utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    import tomllib  # with a config file only: not at every refresh's start

    try:
        table = tomllib.loads(text).get("session_logging")
    except tomllib.TOMLDecodeError:
        return None
    value = table.get("save_dir") if isinstance(table, dict) else None
    if not string(value).strip():
        return None
    value = value.strip()
    return home / value[2:] if value.startswith("~/") else Path(value) if os.path.isabs(value) else None


def _meta(messages: Path) -> dict:
    """What the reader takes from the ``meta.json`` beside ``messages``: ``id``, ``cwd``,
    ``branch``, ``title``, ``start``, ``end`` (strings) and ``mtime`` (the messages file's, epoch
    seconds); a missing or broken file gives what is left."""
    out: dict = {}
    try:
        out["mtime"] = os.stat(messages).st_mtime
    except OSError:
        pass
    try:
        data = json.loads(read_text(messages.parent / "meta.json", "utf-8")[:META_BYTES])
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return out
    if not isinstance(data, dict):
        return out
    environment = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    for key, value in (("id", data.get("session_id")), ("cwd", environment.get("working_directory")),
                       ("branch", data.get("git_branch")), ("start", data.get("start_time")),
                       ("end", data.get("end_time"))):
        if string(value).strip():
            out[key] = value.strip()
    if string(data.get("title")).strip():
        out["title"] = capped(data["title"].strip(), TITLE_CAP)
    return out


SOURCE = VibeSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""Crush (charmbracelet/crush) sessions: one ``crush.db`` per project data directory.

Rules come from Crush's own code (charmbracelet/crush at 37f36e93824e): ``internal/db/migrations/
*.sql`` and ``internal/db/sql/{sessions,messages}.sql`` (schema), ``internal/message/{message,
content}.go`` (``parts`` JSON), ``internal/session/session.go`` (task and title sessions),
``internal/config/load.go`` (``DataDirectory``, ``GlobalConfigData``), ``internal/projects/
projects.go`` (the project index) and ``internal/cmd/root.go`` (``--session``).

* **Where**: Crush keeps a project's data in its ``DataDirectory``: the nearest ``.crush`` above
  the working directory (up to the repository root), else ``<cwd>/.crush``, holding ``crush.db``.
  Every directory it ran in is listed in ``projects.json`` (``{"projects": [{"path",
  "data_dir", "last_accessed"}]}``) in its global data directory: ``$CRUSH_GLOBAL_DATA``, else
  ``$XDG_DATA_HOME/crush``, else ``~/.local/share/crush`` (``%LOCALAPPDATA%\\crush`` on Windows).
  Read: ``crush.db`` of every ``data_dir`` there, of ``~/.crush`` and of the global directory's own
  ``.crush`` (``crush server``'s workspace); each real file once.
* **Store**: ``sessions(id, parent_session_id, title, message_count, ..., updated_at,
  created_at, summary_message_id)`` and ``messages(id, session_id, role, parts, model,
  created_at, updated_at, finished_at, provider, is_summary_message)``, read through
  :class:`~crabsearch.sources.sqlstore.StoreSource`: one unit per session with messages, new rows
  read by rowid. An assistant message without a ``finish`` part is still streaming (Crush
  rewrites its ``parts`` in place): it is read but not committed, and its session's mtime is the
  store's while it streams, so that it is read again until it is finished. Times are epoch
  seconds (the schema comments say ms; ``strftime('%s')`` writes seconds): both are read.
* **Parts** (``[{"type", "data"}]``): ``text`` (user -> prompt, assistant -> assistant, system
  -> system; a message with ``is_summary_message`` -> the summary, a compaction point),
  ``reasoning`` (``thinking``) -> thinking, ``tool_call`` (``name``, ``input`` as the model wrote
  it) -> ``tool-call:<name>``, ``tool_result`` (``content``, paired by ``tool_call_id``) -> tool
  result, ``shell_command`` -> ``! command`` and its output, ``finish`` with an ``error`` or
  ``content_filter`` reason and a ``message`` -> system; ``image_url`` and ``binary`` (attachments)
  yield nothing.
* **Sessions**: title ``title``, except Crush's placeholders (``Untitled Session``, ``New
  Session``) -> the first prompt; a task (sub-agent) session has ``parent_session_id`` (linked,
  resumed through its parent); the title-generation sessions (``title-<parent>``) are Crush's own
  and are not read. Project: the ``path`` that ``projects.json`` gives the store's data directory,
  else the directory holding ``.crush``.
* **Resume**: ``cd <project> && crush --session <id>``.
* **Drift**: a part type or role this reader does not know is counted and listed by ``status``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Mapping

from ..files import read_file
from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message,
                     Role, Session, tool_call_label, tool_result_label)
from .base import bad_field, capped, cd_and, dump_text, note_unknown, parse_ts, string
from .pieces import Piece, emit, note_summaries, piece_text
from .sqlstore import StoreSource, epoch_ms, json_of, known, note_unknown_types, unique_files

PART_TYPES = frozenset({"reasoning", "text", "image_url", "binary", "tool_call", "tool_result", "finish",
                        "shell_command"})
"""``partType`` values of ``internal/message/content.go``."""
ROLES = frozenset({"user", "assistant", "system", "tool"})
PLACEHOLDERS = frozenset({"Untitled Session", "New Session"})
"""Crush's titles before one is generated (``agent.DefaultSessionName``, the UI's new session)."""
DB_NAME = "crush.db"
DATA_DIR = ".crush"
SUMMARY_CAP = 8192


class CrushSource(StoreSource):
    """Crush: the sessions of every project's ``crush.db`` (member paths)."""

    agent = "crush"
    order = 260
    display = "Crush"
    badge = "Crush"
    env_var = "CRUSH_GLOBAL_DATA"
    style = "bold white on medium_purple3"
    locations = ("`<project>/.crush/crush.db` of every project in `~/.local/share/crush/projects.json`, and "
                 "`~/.crush/crush.db`")
    reads = ("summaries (labelled, a compaction point); thinking; tool calls and results paired; `!` shell "
             "commands; task sessions linked to their parent; answers still streaming read again")
    override = "`CRUSH_GLOBAL_DATA=DIR` (its `projects.json`), `XDG_DATA_HOME`"
    upstream = ("charmbracelet/crush `internal/db/migrations/*.sql`, `internal/message/content.go`, "
                "`internal/projects/projects.go` @37f36e93824e")
    checked = "2026-12-06: charmbracelet/crush 37f36e93824e"
    known_kinds = {"part": PART_TYPES, "role": ROLES}
    rows_table = "messages"
    store_names = (DB_NAME,)

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Crush's global data directory (the project index), then ``~/.crush``."""
        if env.get("CRUSH_GLOBAL_DATA"):
            glob = Path(os.path.expanduser(env["CRUSH_GLOBAL_DATA"]))
        elif env.get("XDG_DATA_HOME"):
            glob = Path(os.path.expanduser(env["XDG_DATA_HOME"])) / "crush"
        elif env.get("LOCALAPPDATA"):
            glob = Path(env["LOCALAPPDATA"]) / "crush"
        else:
            glob = home / ".local" / "share" / "crush"
        return [glob, home / DATA_DIR]

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``crush.db`` of every project data directory (module docstring)."""
        glob, home_data = self.roots(env, home)
        listed = projects(glob)
        for data_dir, path in listed:
            if path:
                _PROJECTS[os.path.normpath(data_dir)] = path
        dirs = [home_data] + [Path(d) for d, _ in listed] + [glob / DATA_DIR]
        return unique_files(d / DB_NAME for d in dirs)

    # -- the store -------------------------------------------------------------------------------

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """Sessions with messages (not Crush's ``title-`` sessions): their largest message rowid and
        ``updated_at``; 0 for a session with an answer still streaming (module docstring)."""
        parents = {sid: (parent, epoch_ms(when)) for sid, parent, when in
                   con.execute("SELECT id, parent_session_id, updated_at FROM sessions")}
        live = {sid for (sid,) in con.execute("SELECT DISTINCT session_id FROM messages "
                                              "WHERE role = 'assistant' AND finished_at IS NULL")}
        out = {}
        for sid, size in con.execute("SELECT session_id, max(rowid) FROM messages GROUP BY session_id"):
            if sid not in parents or not isinstance(size, int):
                continue
            parent, ms = parents[sid]
            if parent and isinstance(sid, str) and sid == f"title-{parent}":
                continue
            out[sid] = (size, 0 if sid in live else ms)
        return out

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        cur = con.execute("SELECT * FROM sessions WHERE id = ?", (sid,))
        row = cur.fetchone()
        return dict(zip([d[0] for d in cur.description], row)) if row else {}

    def record(self, row: dict) -> dict | None:
        """A ``messages`` row with its ``parts`` parsed (None when they are not a JSON list)."""
        parts = json_of(row.get("parts"))
        if not isinstance(parts, list):
            return None
        return {"id": row.get("id"), "role": row.get("role"), "parts": parts, "created_at": row.get("created_at"),
                "finished_at": row.get("finished_at"), "summary": bool(row.get("is_summary_message"))}

    def settled(self, obj) -> bool:
        """An assistant message is settled once it has its ``finish`` part."""
        if not isinstance(obj, dict) or obj.get("role") != "assistant":
            return True
        return any(isinstance(p, dict) and p.get("type") == "finish" for p in obj.get("parts") or [])

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        if not meta:
            return
        title = string(meta.get("title")).strip()
        state["title"] = capped(title, 200) if title and title not in PLACEHOLDERS else None
        state["parent"] = string(meta.get("parent_session_id")) or None
        session.touch(parse_ts(meta.get("created_at")))
        session.touch(parse_ts(meta.get("updated_at")))
        state["project"] = project_of(Path(self.member(session.path)[0]).parent)

    # -- records ---------------------------------------------------------------------------------

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        if not known(obj.get("role"), ROLES):
            note_unknown(state, obj.get("role"))
            return
        if not isinstance(obj.get("parts"), list):
            raise bad_field(obj, "parts", "a list")
        note_unknown_types(state, obj["parts"], PART_TYPES)
        ts = parse_ts(obj.get("created_at"))
        session.touch(ts)
        pieces = pieces_of(obj)
        note_summaries(pieces, state, session, SUMMARY_CAP)
        emit(pieces, rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        session.title = state.get("title") or state.get("first_prompt") or None
        session.project = state.get("project") or None
        session.summary = state.get("summary") or None
        session.parent_session_id = state.get("parent")
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && crush --session <id>`` (a task session: its parent's)."""
        cwd = session.project if session.project and os.path.isabs(session.project) else None
        return cd_and(cwd, ["crush", "--session", session.parent_session_id or session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one Crush message (module docstring)."""
    role, parts = obj.get("role"), obj.get("parts")
    if not known(role, ROLES) or not isinstance(parts, list):
        return []
    out: list[Piece] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        data = part.get("data") if isinstance(part.get("data"), dict) else {}
        if kind == "text":
            text = string(data.get("text"))
            if not text.strip():
                continue
            if obj.get("summary") is True:
                out.append(Piece(Role.SUMMARY, LABEL_SUMMARY, text))
            elif role == "user":
                out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
            elif role == "system":
                out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, text))
            else:
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
        elif kind == "reasoning":
            text = string(data.get("thinking"))
            if text.strip():
                out.append(Piece(Role.ASSISTANT, LABEL_THINKING, text))
        elif kind == "tool_call":
            name = string(data.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(data.get("input")), name,
                             call_id=string(data.get("id")) or None))
        elif kind == "tool_result":
            name = string(data.get("name")) or None
            out.append(Piece(Role.TOOL, None, dump_text(data.get("content")), name,
                             call_id=string(data.get("tool_call_id")) or None))
        elif kind == "shell_command":
            command = string(data.get("command"))
            if command.strip():
                out.append(Piece(Role.USER, LABEL_USER, "! " + command))
            out.append(Piece(Role.TOOL, tool_result_label("shell"), dump_text(data.get("output")), "shell"))
        elif kind == "finish" and data.get("reason") in ("error", "content_filter"):
            text = string(data.get("message"))
            if text.strip():
                out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, text))
    return out


def projects(glob: Path) -> list[tuple[str, str]]:
    """``(data_dir, path)`` of every project in ``<glob>/projects.json`` (``[]`` when it is missing
    or broken); never raises."""
    try:
        data = json.loads(read_file(glob / "projects.json", 16 << 20))
    except (OSError, ValueError):
        return []
    items = data.get("projects") if isinstance(data, dict) else None
    out = []
    for p in items if isinstance(items, list) else []:
        if isinstance(p, dict) and isinstance(p.get("data_dir"), str) and p["data_dir"]:
            out.append((p["data_dir"], string(p.get("path"))))
    return out


_PROJECTS: dict[str, str] = {}
"""Data directory -> project path, from the ``projects.json`` files discovery has read."""


def project_of(data_dir: Path) -> str | None:
    """The project a data directory belongs to: the ``path`` a ``projects.json`` read by discovery
    gives it, else the directory holding ``.crush``, else None."""
    found = _PROJECTS.get(os.path.normpath(str(data_dir)))
    return found or (str(data_dir.parent) if data_dir.name == DATA_DIR else None)


SOURCE = CrushSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""Windsurf (Codeium's VS Code fork): the chat panel's history in each workspace's ``state.vscdb``.
Cascade's own conversations are not readable and are not read.

Windsurf is closed source; the rules follow agentsview's reader (kenn-io/agentsview
``internal/parser/windsurf_provider.go`` at 538600744d1b, and its ``docs/internal/
session-format-sources.md``, which lists the format as reverse-engineered, with no public source):

* **Where**: ``<User>/workspaceStorage/<hash>/state.vscdb`` of ``Windsurf`` and ``Windsurf -
  Next`` (``~/.config/...`` on Linux, ``~/Library/Application Support/...`` on macOS,
  ``%APPDATA%\\...`` on Windows; :mod:`crabsearch.sources.vscdb`); the project is the folder of
  ``workspace.json`` beside it. Windsurf has no variable naming the directory:
  ``CRABSEARCH_WINDSURF_DIR`` names a ``User`` directory.
* **What is read**: the ``ItemTable`` values ``workbench.panel.aichat.view.aichat.chatdata`` and
  ``aiChat.chatdata``, each either a VS Code chat session (``{"sessionId", "customTitle",
  "creationDate", "lastMessageDate" (ms), "requests": [{"message": {"text"}, "response":
  [{"value"}...], "timestamp"}]}``; without a ``sessionId`` it is named
  ``workspace-<hash>``) or a list of tabs (``{"tabs": [{"tabId", "chatTitle", "bubbles":
  [{"type", "text" | "rawText" | "initText"}]}]}``, ``type`` ``1``/``user`` the user, ``2``/
  ``ai``/``assistant`` the answer). Each session or tab is a unit, read whole at every change of
  the store (:class:`~crabsearch.sources.sqlstore.StoreSource`, ``incremental = False``); a tab's
  times are the store's mtime (tabs keep none).
* **Not read**: Cascade's conversations live in ``~/.codeium/windsurf/cascade/*.pb``, protobuf
  files encrypted (AES-GCM, by community analysis) with a key inside Windsurf's language server:
  nothing there is readable without it, and nothing is guessed.
* **Resume**: none from a shell; a chat reopens in Windsurf.
* **Drift**: a bubble type this reader does not know is counted and listed by ``status``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Iterable, Mapping

from ..jsonl import Record
from ..model import LABEL_ASSISTANT, LABEL_USER, Message, Role, Session
from .base import capped, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, piece_text
from .sqlstore import DocCache, StoreSource, epoch_ms, json_of, unique_files
from .vscdb import item, user_dirs, workspace_folder

CHAT_KEYS = ("workbench.panel.aichat.view.aichat.chatdata", "aiChat.chatdata")
USER_TYPES = frozenset({"1", "user", "human"})
ASSISTANT_TYPES = frozenset({"2", "ai", "assistant", "bot"})
APPS = ("Windsurf", "Windsurf - Next")
DB_NAME = "state.vscdb"
NO_ID = ""
"""Where :func:`chats` files a VS Code chat session that has no ``sessionId``."""


class WindsurfSource(StoreSource):
    """Windsurf: chat-panel sessions of each workspace's ``state.vscdb`` (member paths)."""

    agent = "windsurf"
    order = 290
    display = "Windsurf"
    badge = "Windsurf"
    env_var = "CRABSEARCH_WINDSURF_DIR"
    style = "bold black on sea_green3"
    locations = "`~/.config/Windsurf/User/workspaceStorage/*/state.vscdb` (and macOS / Windows app data)"
    reads = ("the chat panel's sessions and tabs kept in each workspace's `state.vscdb`; **not** Cascade's "
             "conversations (`~/.codeium/windsurf/cascade/*.pb`: encrypted protobuf, unreadable without "
             "Windsurf's key)")
    override = "`CRABSEARCH_WINDSURF_DIR=DIR` (a `User` directory), `XDG_CONFIG_HOME`"
    upstream = ("closed source; follows agentsview `internal/parser/windsurf_provider.go` @538600744d1b "
                "(reverse-engineered keys)")
    checked = "2026-12-06: agentsview 538600744d1b"
    resume_doc = "in Windsurf"
    known_kinds = {"bubble": USER_TYPES | ASSISTANT_TYPES}
    incremental = False
    store_names = (DB_NAME,)

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_WINDSURF_DIR`` alone when set; else the ``User`` directories of Windsurf
        and Windsurf - Next."""
        if env.get("CRABSEARCH_WINDSURF_DIR"):
            return [Path(os.path.expanduser(env["CRABSEARCH_WINDSURF_DIR"]))]
        return [d for app in APPS for d in user_dirs(app, env, home)]

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return unique_files(p for r in self.roots(env, home)
                            for p in walk_files(r / "workspaceStorage", f"*/{DB_NAME}"))

    # -- the store -------------------------------------------------------------------------------

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """Each chat session or tab: the size of its JSON and its last message time (0 for tabs)."""
        out = {}
        for sid, chat in _chats(con).items():
            size = len(json.dumps(chat["records"], ensure_ascii=False))
            out[sid or f"workspace-{Path(db).parent.name}"] = (size, epoch_ms(chat.get("updated")))
        return out

    def chat(self, con: sqlite3.Connection, sid: str) -> dict | None:
        chats = _chats(con)
        return chats.get(sid) or (chats.get(NO_ID) if sid.startswith("workspace-") else None)

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        chat = self.chat(con, sid) or {}
        return {k: chat.get(k) for k in ("title", "created", "updated")}

    def rows(self, con: sqlite3.Connection, sid: str, after: int) -> Iterable[tuple[int, int, object]]:
        chat = self.chat(con, sid)
        for i, rec in enumerate(chat["records"] if chat else []):
            yield i, 0, rec

    def row(self, con: sqlite3.Connection, sid: str, offset: int, length: int) -> object | None:
        chat = self.chat(con, sid)
        records = chat["records"] if chat else []
        return records[offset] if 0 <= offset < len(records) else None

    def place(self, offset: int) -> str:
        return f"message {offset}"

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        title = string(meta.get("title")).strip()
        state["title"] = capped(title, 200) if title else None
        db = Path(self.member(session.path)[0])
        state["project"] = workspace_folder(db.parent)
        session.touch(parse_ts(meta.get("created")))
        session.touch(parse_ts(meta.get("updated")))
        if meta.get("created") is None and meta.get("updated") is None:
            try:
                session.touch(parse_ts(os.stat(db).st_mtime))
            except OSError:
                pass

    # -- records ---------------------------------------------------------------------------------

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        bubble = rec.obj.get("bubble")
        if isinstance(bubble, dict) and _bubble_kind(bubble) not in USER_TYPES | ASSISTANT_TYPES:
            note_unknown(state, _bubble_kind(bubble) or None)
        request = rec.obj.get("request")
        ts = parse_ts(request.get("timestamp")) if isinstance(request, dict) else None
        session.touch(ts)
        emit(pieces_of(rec.obj), rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        session.title = state.get("title") or state.get("first_prompt") or None
        session.project = state.get("project") or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: a Windsurf chat reopens in Windsurf, not from a shell."""
        return None


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one request (the prompt, then the answer's ``value`` items) or one bubble."""
    request, bubble = obj.get("request"), obj.get("bubble")
    out: list[Piece] = []
    if isinstance(request, dict):
        message = request.get("message") if isinstance(request.get("message"), dict) else {}
        if string(message.get("text")).strip():
            out.append(Piece(Role.USER, LABEL_USER, message["text"], prompt=True))
        response = request.get("response") if isinstance(request.get("response"), list) else []
        answer = "\n".join(string(r.get("value")) for r in response if isinstance(r, dict) and string(r.get("value")))
        if answer.strip():
            out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, answer))
    elif isinstance(bubble, dict):
        text = next((t for t in (string(bubble.get(k)) for k in ("text", "rawText", "initText")) if t.strip()), "")
        kind = _bubble_kind(bubble)
        if text and kind in ASSISTANT_TYPES:
            out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
        elif text and kind in USER_TYPES:
            out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
    return out


def _bubble_kind(bubble: dict) -> str:
    """A bubble's ``type`` as text (``1``, ``user``, ...), lowercased; ``""`` when it has none."""
    kind = bubble.get("type")
    if isinstance(kind, bool):
        return ""
    return str(kind).strip().lower() if isinstance(kind, (str, int)) else ""


def _chats(con: sqlite3.Connection) -> dict[str, dict]:
    """``{session id: {"title", "created", "updated", "records"}}`` of the chat-panel values
    (module docstring); a VS Code session without an id under :data:`NO_ID`. Raises
    ``sqlite3.Error``."""
    values = tuple(item(con, key) for key in CHAT_KEYS)
    return _DOCS.get(con, (values,), lambda: _parse(values))


def _parse(values) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for value in values:
        data = json_of(value)
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("requests"), list) and data["requests"]:
            sid = string(data.get("sessionId")) or NO_ID
            out.setdefault(sid, {"title": data.get("customTitle"), "created": data.get("creationDate"),
                                 "updated": data.get("lastMessageDate"),
                                 "records": [{"request": r} for r in data["requests"]]})
        for tab in data.get("tabs") if isinstance(data.get("tabs"), list) else []:
            if not isinstance(tab, dict) or not string(tab.get("tabId")).strip():
                continue
            bubbles = tab.get("bubbles")
            if isinstance(bubbles, list) and bubbles:
                out.setdefault(tab["tabId"].strip(), {"title": tab.get("chatTitle"), "created": None, "updated": None,
                                                      "records": [{"bubble": b} for b in bubbles]})
    return out


_DOCS = DocCache()


SOURCE = WindsurfSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

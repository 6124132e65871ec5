"""Cursor's editor chats (the composer / agent panel), read for the ``cursor`` agent
(:mod:`crabsearch.sources.cursor`) from the ``cursorDiskKV`` table of
``<User>/globalStorage/state.vscdb``.

Cursor is closed source; the rules follow cass's connector (Dicklesworthstone/
franken_agent_detection ``src/connectors/cursor.rs`` at 6ae73d5f78d2), with the workspace of a
chat from the workspace stores' ``composer.composerData`` (as ChatWizard and Agent Sessions map
them):

* **Where**: the editor's ``User`` directory (:func:`~crabsearch.sources.vscdb.user_dirs`:
  ``~/.config/Cursor/User``, ``~/Library/Application Support/Cursor/User``,
  ``%APPDATA%\\Cursor\\User``), its ``globalStorage/state.vscdb``.
* **Chats**: one ``composerData:<composerId>`` value per chat (``name``, ``createdAt``,
  ``lastUpdatedAt`` in ms, and the order of its messages in ``fullConversationHeadersOnly``
  ``[{"bubbleId", "type"}]``; older builds keep the messages inline in ``conversation``), each
  message a ``bubbleId:<composerId>:<bubbleId>`` value: ``type`` 1 the user, 2 the assistant;
  ``text`` (else ``rawText``); ``thinking.text``; ``toolFormerData`` (``name``, ``rawArgs`` /
  ``params``, ``result``) a tool call and its result; ``createdAt`` (ISO) or ``timestamp``. A chat
  without messages (a draft) is not listed; a header whose bubble is missing or ``null`` yields
  nothing. Each chat is a unit ``<state.vscdb>#<composerId>``, read whole at every change
  (:class:`~crabsearch.sources.sqlstore.StoreSource`, ``incremental = False``: bubbles are
  rewritten in place); its mtime is ``lastUpdatedAt``.
* **Workspace**: a bubble's ``workspaceProjectDir`` or first ``file:`` ``workspaceUris`` (cass),
  else the folder (``workspace.json``) of the ``workspaceStorage/<hash>/state.vscdb`` whose
  ``ItemTable`` ``composer.composerData`` lists the chat in ``allComposers``.
* Sessions are labelled ``Cursor IDE`` (``extra["app"]``) and have no resume command: they
  reopen in the editor.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterable, Mapping
from urllib.parse import unquote

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session, tool_call_label)
from .base import capped, dump_text, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, piece_text
from .sqlstore import StoreSource, connect_store, epoch_ms, json_of, table_columns, unique_files
from .vscdb import item, user_dirs, workspace_folder

DB_NAME = "state.vscdb"
COMPOSER = "composerData:"
BUBBLE = "bubbleId:"
BUBBLE_TYPES = frozenset({1, 2})
APP = "Cursor IDE"


class ComposerStore(StoreSource):
    """The chats of Cursor's ``cursorDiskKV`` (module docstring); read for the ``cursor`` agent."""

    agent = "cursor"
    incremental = False
    store_names = (DB_NAME,)

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return user_dirs("Cursor", env, home)

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``globalStorage/state.vscdb`` of each ``User`` directory; notes the workspace of each
        chat the workspace stores list."""
        roots = self.roots(env, home)
        for root in roots:
            _note_workspaces(root)
        return unique_files(r / "globalStorage" / DB_NAME for r in roots)

    # -- the store -------------------------------------------------------------------------------

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """Each chat with messages: the size of its ``composerData`` value and ``lastUpdatedAt``
        (none in a store without ``cursorDiskKV``: an older editor's)."""
        out: dict[str, tuple[int, int]] = {}
        if not table_columns(con, "cursorDiskKV"):
            return out
        for key, value in con.execute("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?",
                                      (COMPOSER, COMPOSER[:-1] + ";")):
            data = json_of(value)
            if isinstance(data, dict) and (_headers(data) or _inline(data)):
                out[key[len(COMPOSER):]] = (len(value), epoch_ms(data.get("lastUpdatedAt") or data.get("createdAt")))
        return out

    def composer(self, con: sqlite3.Connection, sid: str) -> dict:
        data = json_of(item(con, COMPOSER + sid, "cursorDiskKV"))
        return data if isinstance(data, dict) else {}

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        data = self.composer(con, sid)
        return {"name": data.get("name"), "createdAt": data.get("createdAt"), "lastUpdatedAt": data.get("lastUpdatedAt"),
                "workspace": _WORKSPACES.get(sid)}

    def rows(self, con: sqlite3.Connection, sid: str, after: int) -> Iterable[tuple[int, int, object]]:
        """The chat's bubbles in the order of its headers (or inline); a bubble that is not JSON
        is a broken record, a missing or ``null`` one is passed over."""
        data = self.composer(con, sid)
        headers = _headers(data)
        if not headers:
            for i, bubble in enumerate(_inline(data)):
                yield i, 0, {"bubble": bubble}
            return
        prefix = f"{BUBBLE}{sid}:"
        bubbles = dict(con.execute("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?",
                                   (prefix, prefix[:-1] + ";")))
        for i, bid in enumerate(headers):
            raw = bubbles.get(prefix + bid)
            if raw is None:
                continue
            bubble = json_of(raw)
            if bubble is None and raw not in ("null", b"null"):
                yield i, 0, None
            elif isinstance(bubble, dict):
                yield i, 0, {"bubble": bubble}

    def row(self, con: sqlite3.Connection, sid: str, offset: int, length: int) -> object | None:
        data = self.composer(con, sid)
        headers = _headers(data)
        if not headers:
            inline = _inline(data)
            return {"bubble": inline[offset]} if 0 <= offset < len(inline) else None
        if not 0 <= offset < len(headers):
            return None
        bubble = json_of(item(con, f"{BUBBLE}{sid}:{headers[offset]}", "cursorDiskKV"))
        return {"bubble": bubble} if isinstance(bubble, dict) else None

    def place(self, offset: int) -> str:
        return f"message {offset}"

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        name = string(meta.get("name")).strip()
        state["name"] = capped(name, 200) if name else None
        state["workspace"] = meta.get("workspace")
        session.touch(parse_ts(meta.get("createdAt")))
        session.touch(parse_ts(meta.get("lastUpdatedAt")))

    # -- records ---------------------------------------------------------------------------------

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        bubble = rec.obj.get("bubble") if isinstance(rec.obj.get("bubble"), dict) else {}
        kind = bubble.get("type")
        if isinstance(kind, bool) or not isinstance(kind, int) or kind not in BUBBLE_TYPES:
            note_unknown(state, kind)
        if not state.get("project"):
            state["project"] = _bubble_workspace(bubble)
        ts = parse_ts(bubble.get("createdAt") or bubble.get("timestamp"))
        session.touch(ts)
        emit(pieces_of(rec.obj), rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        session.title = state.get("name") or state.get("first_prompt") or None
        session.project = state.get("project") or state.get("workspace") or None
        session.anchor_index = state.get("anchor", 0)
        session.extra["app"] = APP

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one bubble ``{"bubble": ...}`` (module docstring)."""
    bubble = obj.get("bubble")
    if not isinstance(bubble, dict):
        return []
    kind = bubble.get("type")
    text = string(bubble.get("text")) or string(bubble.get("rawText"))
    out: list[Piece] = []
    if kind == 1 and not isinstance(kind, bool):
        if text.strip():
            out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
        return out
    if kind != 2 or isinstance(kind, bool):
        return out
    thinking = bubble.get("thinking")
    thought = string(thinking.get("text")) if isinstance(thinking, dict) else string(thinking)
    if thought.strip():
        out.append(Piece(Role.ASSISTANT, LABEL_THINKING, thought))
    if text.strip():
        out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict) and (string(tool.get("name")) or tool.get("rawArgs") is not None):
        name = string(tool.get("name")) or "unknown"
        call_id = string(tool.get("toolCallId")) or string(bubble.get("bubbleId")) or None
        args = tool.get("rawArgs") if tool.get("rawArgs") is not None else tool.get("params")
        out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(args), name, call_id=call_id))
        if tool.get("result") is not None:
            out.append(Piece(Role.TOOL, None, dump_text(tool.get("result")), name, call_id=call_id))
    return out


def composer_of(path: str) -> bool:
    """True when unit ``path`` is a chat of an editor store (``.../state.vscdb#<composerId>``),
    or such a store yielded itself (it could not be listed)."""
    path = str(path)
    if Path(path).name == DB_NAME:
        return True
    return COMPOSERS.member(path) is not None and path.rpartition("#")[0].endswith(DB_NAME)


def _headers(data: dict) -> list[str]:
    headers = data.get("fullConversationHeadersOnly")
    return [string(h.get("bubbleId")) for h in headers if isinstance(h, dict) and string(h.get("bubbleId"))] \
        if isinstance(headers, list) else []


def _inline(data: dict) -> list:
    inline = data.get("conversation")
    return [b for b in inline if isinstance(b, dict)] if isinstance(inline, list) else []


def _bubble_workspace(bubble: dict) -> str | None:
    """cass's rule: ``workspaceProjectDir``, else the first ``file:`` of ``workspaceUris``."""
    if string(bubble.get("workspaceProjectDir")):
        return bubble["workspaceProjectDir"]
    for uri in bubble.get("workspaceUris") if isinstance(bubble.get("workspaceUris"), list) else []:
        if isinstance(uri, str) and uri.startswith("file://"):
            return unquote(uri[len("file://"):]) or None
    return None


_WORKSPACES: dict[str, str] = {}
"""composerId -> workspace folder, from the workspace stores discovery has read."""


def _note_workspaces(user: Path) -> None:
    """Note the folder of every chat that a ``workspaceStorage/<hash>/state.vscdb`` lists in its
    ``composer.composerData`` ``allComposers``. Never raises."""
    for db in walk_files(user / "workspaceStorage", f"*/{DB_NAME}"):
        folder = workspace_folder(db.parent)
        if not folder:
            continue
        try:
            with connect_store(str(db)) as con:
                data = json_of(item(con, "composer.composerData"))
        except (sqlite3.Error, OSError):
            continue
        listed = data.get("allComposers") if isinstance(data, dict) else None
        for c in listed if isinstance(listed, list) else []:
            if isinstance(c, dict) and string(c.get("composerId")):
                _WORKSPACES[c["composerId"]] = folder


COMPOSERS = ComposerStore()
"""The reader :mod:`crabsearch.sources.cursor` delegates editor chats to (not an agent of its own)."""

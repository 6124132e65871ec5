"""Gemini CLI's saved chats and prompt log, beside the chats of a project
(``~/.gemini/tmp/<project id>/``), from google-gemini/gemini-cli
``packages/core/src/core/logger.ts`` (at 5411f113ca):

* ``/chat save <tag>`` writes ``checkpoint-<encodeURIComponent(tag)>.json`` (older builds: the raw
  tag): ``{"history": Content[], "authType"?}``, or a bare ``Content[]`` (legacy), ``Content``
  being ``{role: "user" | "model", parts: [{text, thought?}, {functionCall}, {functionResponse},
  ...]}``: the chat as sent to the model, no ids, no times. Each is a session titled by its tag
  (``decodeURIComponent``), resumable with ``gemini -i '/chat resume <tag>'`` (an ``-i`` prompt
  goes through the same submit path as a typed one: ``AppContainer.tsx`` ``handleFinalSubmit``).
  **Its origin**: the chat of the same project whose prompts begin with the saved chat's prompts
  and that started last before the file was written. Its messages that are the origin's (same
  role and text, in order) take the origin message's id and time, so search shows such a message
  once and names the other session (``also_in``, the way resumed and forked copies are shown).
* ``logs.json``: ``[{sessionId, messageId, timestamp, type: "user", message}]``, every prompt
  typed (``Logger.logMessage``, ``useGeminiStream.ts``), kept after the chats of old sessions
  are gone. A session id with no chat file in ``chats/`` (named ``session-<time>-<first 8 of
  the id>.json[l]``, ``chatRecordingService.ts``) is a session of its own, unit
  ``logs.json#<session id>``: its prompts in order, titled by the first; not resumable.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import unquote

from ..files import read_file
from ..jsonl import loads
from ..model import Role
from .base import MEMBER_SEP, parse_ts, string

CHECKPOINT = "checkpoint-"
LOGS = "logs.json"
MATCH_SCAN = 64
"""Origin messages looked at past the last one matched, for the next saved message."""

_LOGS: dict[str, tuple[tuple, dict[str, list[dict]]]] = {}


def is_checkpoint(path: Path) -> bool:
    return path.name.startswith(CHECKPOINT) and path.suffix == ".json"


def tag_of(path: Path) -> str:
    """The tag a ``checkpoint-<tag>.json`` was saved under (percent-decoded, as Gemini CLI does)."""
    return unquote(path.name[len(CHECKPOINT):-len(".json")])


def history(data) -> list:
    """The ``Content`` list of a parsed checkpoint (``{"history": [...]}`` or a bare list)."""
    if isinstance(data, list):
        return data
    hist = data.get("history") if isinstance(data, dict) else None
    return hist if isinstance(hist, list) else []


def logged_sessions(path: str) -> dict[str, list[dict]]:
    """``{session id: its entries in messageId order}`` of a ``logs.json`` (entries with the
    fields ``Logger`` checks, ``type`` ``user``), cached by size and mtime; ``{}`` when missing
    or not a JSON array. Raises nothing."""
    try:
        st = os.stat(path)
        key = (st.st_size, st.st_mtime_ns)
        hit = _LOGS.get(path)
        if hit and hit[0] == key:
            return hit[1]
        data = loads(read_file(path))
    except (OSError, ValueError):
        return {}
    out: dict[str, list[dict]] = {}
    for e in data if isinstance(data, list) else []:
        if (isinstance(e, dict) and string(e.get("sessionId")) and isinstance(e.get("messageId"), int)
                and string(e.get("message")) and e.get("type") == "user"):
            out.setdefault(e["sessionId"], []).append(e)
    for entries in out.values():
        entries.sort(key=lambda e: e["messageId"])
    if len(_LOGS) > 8:
        _LOGS.clear()
    _LOGS[path] = (key, out)
    return out


def unlogged_chats(project_dir: Path, sessions) -> list[str]:
    """The session ids of ``sessions`` that have no chat file in ``<project_dir>/chats``."""
    try:
        names = os.listdir(project_dir / "chats")
    except OSError:
        names = []
    stems = {n.rsplit(".", 1)[0] for n in names if n.endswith((".json", ".jsonl"))}
    tails = {s.rsplit("-", 1)[-1] for s in stems}
    return [sid for sid in sessions if sid[:8] not in tails and sid not in stems and MEMBER_SEP not in sid
            and "/" not in sid]


def log_member(path: str) -> tuple[str, str] | None:
    """``(logs.json path, session id)`` of a ``logs.json#<id>`` unit, else None."""
    container, sep, sid = path.rpartition(MEMBER_SEP)
    return (container, sid) if sep and container.endswith(os.sep + LOGS) and sid and "/" not in sid else None


def log_stat(path: str) -> tuple[int, int, str]:
    """``(entries, newest entry time in ns, SHA-1 of the entries)`` of a ``logs.json`` unit.
    Raises ``FileNotFoundError`` when the session is no longer in the log."""
    container, sid = log_member(path)
    entries = logged_sessions(container).get(sid)
    if not entries:
        raise FileNotFoundError(path)
    digest = hashlib.sha1(repr([(e["messageId"], e["timestamp"], e["message"]) for e in entries]).encode())
    times = [parse_ts(e["timestamp"]) for e in entries]
    newest = max((int(t.timestamp() * 1e9) for t in times if t), default=0)
    return len(entries), newest + int(digest.hexdigest()[:6], 16) % 1_000_000, digest.hexdigest()


def link_to_origin(saved: list, origin: list) -> int:
    """Give each saved message that is the origin's (same role and text, in order: user and
    assistant text only) the origin message's ``uid`` and ``timestamp``; returns how many."""
    linked, at = 0, 0
    for m in saved:
        if m.role not in (Role.USER, Role.ASSISTANT) or m.is_tool_payload or m.is_thinking:
            continue
        for j in range(at, min(len(origin), at + MATCH_SCAN)):
            o = origin[j]
            if o.role is m.role and o.label == m.label and o.text == m.text and o.uid:
                m.uid, m.timestamp, at = o.uid, o.timestamp, j + 1
                linked += 1
                break
    return linked

"""OpenHands CLI conversations: ``~/.openhands/conversations/<id>/`` (``base_state.json`` and one
JSON file per event under ``events/``).

Rules come from OpenHands' own code: the CLI (``openhands`` 1.16.0 on PyPI, All-Hands-AI's
OpenHands-CLI: ``openhands_cli/locations.py``, ``conversations/store/local.py``,
``argparsers/util.py``) and the SDK it writes with (``openhands-sdk`` 1.58.2:
``openhands/sdk/conversation/persistence_const.py``, ``conversation/state.py``,
``conversation/event_store.py``, ``event/`` for each event's fields); agentsview
``internal/parser/openhands.go`` reads the same files.

* **Where**: ``$OPENHANDS_CONVERSATIONS_DIR``, else ``$OPENHANDS_PERSISTENCE_DIR/conversations``,
  else ``~/.openhands/conversations`` (the CLI's own variables). One session per directory
  ``<id>/`` (the id a UUID without dashes) holding ``events/event-<n:05d>-<event id>.json``.
* **The unit** is the directory: "size" and "offset" are event *numbers* (the highest + 1, the
  next to read), so new events are read alone; the fingerprint is the first event's name and
  bytes. An event file that does not parse is skipped and counted, unless it is the last one
  (being written: left for the next read). A message's ``offset`` is its event's number and its
  ``length`` the file's size.
* **Events** (``kind`` is the class name): ``MessageEvent`` (``source`` user or agent,
  ``llm_message: {role, content: [{type: text, text}], reasoning_content, thinking_blocks}``; a
  user message with a ``sender`` came from another agent: context, not a prompt),
  ``ActionEvent`` (``thought``, ``reasoning_content`` / ``thinking_blocks``, the call:
  ``tool_name``, ``tool_call_id``, ``tool_call.arguments``), ``ObservationEvent``
  (``observation.content`` text, paired by ``tool_call_id``), ``UserRejectObservation``
  (``rejection_reason``), ``AgentErrorEvent`` (``error``), ``Condensation`` and
  ``CondensationSummaryEvent`` (``summary``: a compaction), ``ConversationErrorEvent``
  (``code``, ``detail``); the others (system prompt, pauses, state updates, tokens, hooks,
  streaming deltas, ...) hold no conversation text. Other kinds are counted.
* **Times**: the SDK writes ``datetime.now().isoformat()``, the machine's local time without an
  offset: read as local time (an offset, when there is one, is honoured).
* **Session fields**: id the directory name; title the first prompt (the CLI's own title);
  project ``base_state.json`` ``workspace.working_dir`` (re-read on every read). Resume:
  ``cd <project> && openhands --resume <id>``.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import LineStats, Record, loads, read_whole
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role,
                     Session, tool_call_label)
from .base import FileRead, Source, cd_and, dump_text, note_unknown, parse_ts, string
from .crabtalk import numbered_records
from .pieces import Piece, emit, note_compaction, piece_text

EVENT_NAME = re.compile(r"^event-(\d{5,})-([0-9a-fA-F\-]{8,})\.json$")
"""An event file's name (``persistence_const.EVENT_NAME_RE``)."""
TEXT_KINDS = frozenset({"MessageEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation",
                        "AgentErrorEvent", "Condensation", "CondensationSummaryEvent", "ConversationErrorEvent"})
SILENT_KINDS = frozenset({"SystemPromptEvent", "PauseEvent", "InterruptEvent", "ConversationStateUpdateEvent",
                          "TokenEvent", "LLMCompletionLogEvent", "HookExecutionEvent", "SecurityAnalysisEvent",
                          "StreamingDeltaEvent", "CondensationRequest", "ACPToolCallEvent"})
EVENT_KINDS = TEXT_KINDS | SILENT_KINDS
_OFFSET = re.compile(r"(?:[zZ]|[+-]\d\d:?\d\d)$")


class OpenHandsSource(Source):
    """OpenHands CLI conversations, one session per conversation directory."""

    agent = "openhands"
    order = 340
    env_var = "OPENHANDS_PERSISTENCE_DIR"
    display = "OpenHands CLI"
    badge = "OpenHands"
    style = "bold black on gold3"
    locations = "`~/.openhands/conversations/<id>/events/event-*.json` (+ `base_state.json`)"
    reads = ("messages, thinking, tool calls and their observations, rejections and errors; condensations as "
             "summaries; new events read alone")
    override = "`OPENHANDS_PERSISTENCE_DIR=DIR` or `OPENHANDS_CONVERSATIONS_DIR=DIR` (OpenHands' own)"
    upstream = ("OpenHands CLI `openhands` 1.16.0 (`openhands_cli/locations.py`, `conversations/store/local.py`) and "
                "`openhands-sdk` 1.58.2 (`conversation/persistence_const.py`, `conversation/state.py`, `event/`)")
    checked = "2026-12-06: openhands 1.16.0, openhands-sdk 1.58.2"
    known_kinds = {"event": EVENT_KINDS}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$OPENHANDS_CONVERSATIONS_DIR``, else ``$OPENHANDS_PERSISTENCE_DIR/conversations``, else
        ``~/.openhands/conversations``."""
        if env.get("OPENHANDS_CONVERSATIONS_DIR"):
            return [Path(os.path.expanduser(env["OPENHANDS_CONVERSATIONS_DIR"]))]
        base = env.get(self.env_var)
        return [(Path(os.path.expanduser(base)) if base else home / ".openhands") / "conversations"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Every ``<id>/`` holding an ``events`` directory or a ``base_state.json``."""
        for root in self.roots(env, home):
            try:
                dirs = sorted(e.path for e in os.scandir(root) if e.is_dir())
            except OSError:
                continue
            for d in dirs:
                if os.path.isdir(os.path.join(d, "events")) or os.path.isfile(os.path.join(d, "base_state.json")):
                    yield Path(d)

    # -- units: a conversation directory ---------------------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        """(highest event number + 1, newest mtime of the directory, its events directory,
        ``base_state.json`` and last event, ctime). Raises ``OSError``."""
        st = os.stat(path)
        events = _events(path)
        mtime = st.st_mtime_ns
        names = ["events", "base_state.json"] + ([os.path.join("events", events[-1][1])] if events else [])
        for name in names:
            try:
                mtime = max(mtime, os.stat(os.path.join(path, name)).st_mtime_ns)
            except OSError:
                pass
        return (events[-1][0] + 1 if events else 0), mtime, st.st_ctime_ns

    def fingerprint(self, path: str, size: int) -> str:
        """SHA-1 of the first event's name and bytes. Raises ``OSError``."""
        h = hashlib.sha1()
        events = _events(path)
        if events:
            h.update(events[0][1].encode())
            h.update(read_file(os.path.join(path, "events", events[0][1])))
        return h.hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """Event number ``offset`` (None when gone or no longer ``length`` bytes). Raises ``OSError``."""
        name = next((n for i, n in _events(path) if i == offset), None)
        if name is None:
            return None
        raw = read_file(os.path.join(path, "events", name))
        obj = _json(raw) if len(raw) == length else None
        return obj if isinstance(obj, dict) else None

    def locate(self, path: str, offset: int) -> tuple[str, int] | None:
        """The event's own file, at its start."""
        name = next((n for i, n in _events(path) if i == offset), None)
        return (os.path.join(path, "events", name), 0) if name else None

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The events from number ``start`` on (see the module docstring). Raises ``OSError`` when
        the directory cannot be listed; a broken event, or one the reader cannot handle, is skipped
        and counted."""
        path = Path(path)
        if state is None or start == 0:
            start, state = 0, {"next_index": 0, "session": Session(
                agent=self.agent, session_id=path.name, path=str(path)).to_state()}
        state = copy.deepcopy(state)
        state["cwd"] = _working_dir(path) or state.get("cwd")
        session = Session.from_state(state["session"])
        stats = LineStats(end_offset=start)
        messages: list[Message] = []
        events = [(n, name) for n, name in _events(str(path)) if n >= start]
        for where, rec in numbered_records(path / "events", events, "event", stats):
            self.take(rec, state, session, messages, stats, where)
        self._seal(state, session, stats)
        return FileRead(session, messages, stats.end_offset, state, stats)

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind not in EVENT_KINDS:
            note_unknown(state, kind)
            return
        ts = local_ts(obj.get("timestamp"))
        session.touch(ts)
        if kind in ("Condensation", "CondensationSummaryEvent"):
            note_compaction(session, state["next_index"])
        emit(pieces_of(obj), rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        """Title: the first prompt; project: ``base_state.json`` ``workspace.working_dir``."""
        session.title = state.get("first_prompt") or None
        session.project = state.get("cwd") or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && openhands --resume <id>`` (``argparsers/util.py``)."""
        return cd_and(session.project, ["openhands", "--resume", session.session_id])


def local_ts(value) -> datetime | None:
    """An event's ``timestamp``: ISO-8601 in the machine's local time when it has no offset."""
    ts = parse_ts(value)
    if ts is None or not isinstance(value, str) or _OFFSET.search(value.strip()):
        return ts
    try:
        return ts.replace(tzinfo=None).astimezone(timezone.utc)
    except (OverflowError, OSError, ValueError):
        return ts


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one event (stateless; tool results are paired by call id)."""
    kind = obj.get("kind")
    call_id = string(obj.get("tool_call_id")) or None
    name = string(obj.get("tool_name")) or None
    if kind == "MessageEvent":
        message = obj.get("llm_message")
        if not isinstance(message, dict):
            return []
        out = _thinking(message)
        text = _texts(message.get("content"))
        if text:
            if obj.get("source") == "user":
                sender = string(obj.get("sender"))
                out.append(Piece(Role.SYSTEM, "context:" + re.sub(r"[^\w.-]", "?", sender[:60]), text) if sender
                           else Piece(Role.USER, LABEL_USER, text, prompt=True))
            else:
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
        return out
    if kind == "ActionEvent":
        out = _thinking(obj)
        thought = _texts(obj.get("thought"))
        if thought:
            out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, thought))
        call = obj.get("tool_call")
        args = call.get("arguments") if isinstance(call, dict) else None
        if args is None:
            action = obj.get("action")
            args = {k: v for k, v in action.items() if k != "kind"} if isinstance(action, dict) else None
        tool = name or "unknown"
        out.append(Piece(Role.ASSISTANT, tool_call_label(tool), dump_text(args), tool, call_id=call_id))
        return out
    if kind == "ObservationEvent":
        observation = obj.get("observation")
        text = _texts(observation.get("content")) if isinstance(observation, dict) else ""
        return [Piece(Role.TOOL, None, text, name, call_id=call_id)] if text else []
    if kind == "UserRejectObservation":
        text = "[rejected] " + string(obj.get("rejection_reason"))
        return [Piece(Role.TOOL, None, text.strip(), name, call_id=call_id)]
    if kind == "AgentErrorEvent":
        text = string(obj.get("error"))
        return [Piece(Role.TOOL, None, text, name, call_id=call_id)] if text.strip() else []
    if kind in ("Condensation", "CondensationSummaryEvent"):
        text = string(obj.get("summary")).strip()
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text else []
    if kind == "ConversationErrorEvent":
        text = ": ".join(t for t in (string(obj.get("code")), string(obj.get("detail"))) if t)
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
    return []


def _thinking(holder: dict) -> list[Piece]:
    """Reasoning as thinking: ``reasoning_content``, else the ``thinking_blocks``' text."""
    text = string(holder.get("reasoning_content")).strip()
    blocks = holder.get("thinking_blocks")
    if not text and isinstance(blocks, list):
        text = "\n".join(string(b.get("thinking")) for b in blocks if isinstance(b, dict) and string(b.get("thinking")))
    return [Piece(Role.ASSISTANT, LABEL_THINKING, text.strip())] if text.strip() else []


def _texts(content) -> str:
    """The text of a content list (``[{type: text, text}]``), or a string."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    return "\n".join(string(c.get("text")) for c in content
                     if isinstance(c, dict) and c.get("type") == "text" and string(c.get("text"))).strip()


def _events(path: str) -> list[tuple[int, str]]:
    """``(number, file name)`` of a conversation's event files, by number ([] when none)."""
    try:
        names = os.listdir(os.path.join(path, "events"))
    except OSError:
        return []
    return sorted((int(m.group(1)), n) for n in names if (m := EVENT_NAME.match(n)))


def _working_dir(path: Path) -> str | None:
    """``workspace.working_dir`` of the conversation's ``base_state.json``, or None."""
    try:
        data = read_whole(str(path / "base_state.json"))[0]
    except OSError:
        return None
    workspace = data.get("workspace") if isinstance(data, dict) else None
    if not isinstance(workspace, dict):
        return None
    return string(workspace.get("working_dir")) or None


def _json(raw: bytes):
    """The JSON value of ``raw``, or ``False`` when it does not parse."""
    try:
        return loads(raw)
    except ValueError:
        return False


SOURCE = OpenHandsSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

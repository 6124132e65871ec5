"""Qwen Code (QwenLM/qwen-code, the ``qwen`` command) chat recordings: one JSONL file per session.

Where its rules come from: QwenLM/qwen-code ``packages/core/src/services/chatRecordingService.ts``
@015346f1d5d7 (the ``ChatRecord`` type and its ``record*`` writers), ``packages/core/src/agents/
agent-transcript.ts``, ``services/sessionService.ts`` and ``config/storage.ts``, as bundled in npm
``@qwen-code/qwen-code`` 0.24.4 (``chunks/*.js``):

* **Layout**: ``<base>/projects/<cwd, every character but [a-zA-Z0-9] as ->/chats/<session
  id>.jsonl`` (a session id of 32-36 hex digits and ``-``: ``SESSION_FILE_PATTERN``); a subagent's
  transcript ``<base>/projects/<cwd>/subagents/<session id>/agent-<agent id>.jsonl`` beside its
  ``agent-<agent id>.meta.json`` (``agentType``, ``description``). ``<base>`` is
  ``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen`` (``Storage.getRuntimeBaseDir``); both
  are read when both are set. A runtime folder set only in Qwen's ``settings.json`` is not.
* **Records**: ``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version,
  gitBranch?, message?: {role: user|model, parts: [...]}, systemPayload?, toolCallResult?,
  agentId?, isSidechain?}``. ``user`` -> the person's prompt: ``systemPayload.displayText`` (what
  they typed, before ``@file`` expansion) when it says something, else the message's text parts;
  subtype ``mid_turn_user_message`` (typed while the agent worked) and ``realtime_message`` (said
  by voice) are prompts too; ``notification``, ``cron`` and ``goal_runtime`` -> system, labelled
  by their subtype. ``assistant`` parts -> ``thought: true`` text as thinking, other text as the
  reply, ``functionCall`` as ``tool-call:<name>`` with its ``args``. ``tool_result`` ->
  ``functionResponse`` as ``tool:<name>`` (``response.output``, else the response as JSON).
  ``system``: ``chat_compression`` -> a summary (the first ``compressedHistory`` content, where
  Qwen puts the summary), labelled as a compaction; ``slash_command`` at ``phase: invocation`` ->
  the typed ``/command`` (user text, not a prompt); ``custom_title`` -> the title (the latest,
  as ``readSessionTitleInfoFromFileSync`` takes it); ``parent_session`` -> the parent of a
  sub-session. Other subtypes carry no conversation; a type or subtype outside :data:`TYPES` /
  :data:`SUBTYPES` is counted as drift.
* **Branches**: records form a tree by ``parentUuid``; ``/rewind`` moves the tail back, so the
  active branch runs from the last record back to the root and records off it are an abandoned
  branch (``extra["off_branch"]``). The ``custom_title`` and ``session_source`` records re-written
  as anchors outside the chain (``updateActiveTail: false``) are children of the tail, so a file
  ending with one ends on the same branch.
* **Title**: the latest ``custom_title``, else the first user record without subtype
  (``extractFirstPromptFromRecords``). Project: the first record's ``cwd``; branch: the latest
  ``gitBranch``.
* **Resume**: ``qwen --resume <id>`` in the session's folder (sessions are looked up in the
  folder's project); a subagent resumes its parent session.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import Record, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label, tool_result_label)
from .base import Source, capped, cd_and, dump_text, iso_ts, note_unknown, pick_title, string, walk_files
from .pi import TREE_CAP, active_branch
from .pieces import Piece, emit, note_compaction, piece_text

TYPES = frozenset({"user", "assistant", "tool_result", "system"})
"""``ChatRecord.type`` values of qwen-code @015346f1d5d7."""
SUBTYPES = frozenset({
    "session_notes", "chat_compression", "slash_command", "ui_telemetry", "at_command", "attribution_snapshot",
    "notification", "background_task_completed", "cron", "mid_turn_user_message", "custom_title",
    "parent_session", "session_source", "session_execution_engine", "omni_recall", "session_model",
    "session_approval_mode", "rewind", "agent_bootstrap", "agent_launch_prompt", "agent_retry",
    "agent_session_ready", "file_history_snapshot", "user_text_elements", "session_artifact_event",
    "session_artifact_snapshot", "session_sources_snapshot", "branch_checkpoint", "goal_state", "goal_runtime",
    "goal_turn_end", "realtime_message", "turn_result", "managed_session_header_v1", "managed_session_event_v1",
    "managed_session_commit_v1"})
"""``ChatRecord.subtype`` values of qwen-code @015346f1d5d7."""
SAID = frozenset({"mid_turn_user_message", "realtime_message"})
"""User subtypes that are the person's own words."""
TITLE_CAP = 200
SUMMARY_CAP = 8192
META_BYTES = 64 * 1024
_SESSION_FILE = re.compile(r"[0-9a-fA-F-]{32,36}\.jsonl")


class QwenSource(Source):
    """Qwen Code: ``~/.qwen/projects/<cwd>/chats/<session id>.jsonl`` and subagent transcripts."""

    agent = "qwen"
    order = 230
    display = "Qwen Code"
    badge = "Qwen"
    env_var = "QWEN_HOME"
    style = "bold white on blue3"
    known_kinds = {"type": TYPES, "subtype": SUBTYPES}
    locations = ("`~/.qwen/projects/*/chats/<session>.jsonl`, subagents "
                 "`projects/*/subagents/<session>/agent-*.jsonl`")
    reads = ("what you typed (not the `@file` expansion); prompts typed while it worked and said by voice; "
             "renames (`/rename`, auto titles); a `/rewind` as an abandoned branch; compressions as summaries; "
             "subagents and sub-sessions linked to their parent")
    override = "`QWEN_HOME=DIR`, `QWEN_RUNTIME_DIR=DIR`"
    upstream = ("QwenLM/qwen-code `packages/core/src/services/chatRecordingService.ts` @015346f1d5d7, "
                "`agents/agent-transcript.ts`, `services/sessionService.ts`; `@qwen-code/qwen-code` 0.24.4")
    checked = "2026-12-06: 0.24.4"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$QWEN_RUNTIME_DIR`` (when set), then ``$QWEN_HOME`` or ``~/.qwen``."""
        out = [Path(os.path.expanduser(env["QWEN_RUNTIME_DIR"]))] if env.get("QWEN_RUNTIME_DIR") else []
        base = Path(os.path.expanduser(env["QWEN_HOME"])) if env.get("QWEN_HOME") else home / ".qwen"
        return out + ([base] if base not in out else [])

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``projects/*/chats/<session id>.jsonl`` and ``projects/*/subagents/*/agent-*.jsonl``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for pattern in ("*/chats/*.jsonl", "*/subagents/*/agent-*.jsonl"):
                for path in walk_files(root / "projects", pattern):
                    if (_SESSION_FILE.fullmatch(path.name) or path.name.startswith("agent-")) and path not in seen:
                        seen.add(path)
                        yield path

    def new_state(self, path: Path) -> dict:
        """The tree (``tree``: uuid -> ``[parentUuid, first message index, count]``); for a subagent
        transcript its agent id, parent session (the folder) and ``.meta.json`` agent type."""
        state: dict = {"tree": {}}
        if path.parent.parent.name == "subagents" and path.name.startswith("agent-"):
            state["sub"] = [path.stem, path.parent.name]
            meta = _json_file(path.with_name(path.stem + ".meta.json"))
            if string(meta.get("agentType")):
                state["agent_type"] = meta["agentType"][:TITLE_CAP]
        return state

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One record: envelope (session id, cwd, branch), tree link, title and parent, messages."""
        obj = rec.obj
        kind, subtype = obj.get("type"), obj.get("subtype")
        if not isinstance(kind, str) or kind not in TYPES:
            note_unknown(state, kind)
        elif subtype is not None and (not isinstance(subtype, str) or subtype not in SUBTYPES):
            note_unknown(state, subtype)
        if string(obj.get("sessionId")):
            state.setdefault("sid", obj["sessionId"])
        if string(obj.get("cwd")) and session.project is None:
            session.project = obj["cwd"]
        if string(obj.get("gitBranch")):
            session.git_branch = obj["gitBranch"]
        payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
        if kind == "system" and subtype == "custom_title" and string(payload.get("customTitle")).strip():
            state["title"] = capped(payload["customTitle"].strip(), TITLE_CAP)
        elif kind == "system" and subtype == "parent_session" and string(payload.get("parentSessionId")):
            state["parent"] = payload["parentSessionId"]
        ts = iso_ts(obj.get("timestamp"))
        session.touch(ts)
        pieces = pieces_of(obj)
        base, first = len(out), state["next_index"]
        if kind == "system" and subtype == "chat_compression":
            note_compaction(session, first)
        emit(pieces, rec, state, out, ts)
        for p in pieces:
            if p.role is Role.SUMMARY:
                state["summary"] = capped(p.text, SUMMARY_CAP)
        uuid = obj.get("uuid")
        if isinstance(uuid, str) and uuid:
            parent = obj.get("parentUuid")
            if len(state["tree"]) < TREE_CAP:
                state["tree"][uuid] = [parent if isinstance(parent, str) and parent else None, first, len(out) - base]
            state["last"] = uuid
            for m in out[base:]:
                m.uid = f"{uuid}:{m.part}"  # /branch copies records with their uuids

    def finish(self, state: dict, session: Session) -> None:
        """Session id, parent, title (custom title > first prompt), summary, anchor, off-branch
        ranges (module docstring)."""
        sub = state.get("sub")
        session.session_id = sub[0] if sub else (state.get("sid") or Path(session.path).stem)
        session.parent_session_id = sub[1] if sub else state.get("parent")
        if state.get("agent_type"):
            session.extra["agent_type"] = state["agent_type"]
        session.title = pick_title(state.get("title"), state.get("first_prompt"))
        session.summary = state.get("summary")
        session.anchor_index = state.get("anchor", 0)
        on = set(active_branch(state))
        off: list[list[int]] = []
        for uuid, (_, first, n) in sorted(state["tree"].items(), key=lambda kv: kv[1][1]):
            if n and uuid not in on:
                if off and first <= off[-1][1]:
                    off[-1][1] = max(off[-1][1], first + n)
                else:
                    off.append([first, first + n])
        if off and len(state["tree"]) < TREE_CAP:
            session.extra["off_branch"] = off
        else:
            session.extra.pop("off_branch", None)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        """Text of piece ``part`` of record ``obj`` (same extraction as :meth:`process`)."""
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && qwen --resume <id>``; a subagent's resumes its parent session."""
        target = session.parent_session_id if session.session_id.startswith("agent-") else session.session_id
        return cd_and(session.project, ["qwen", "--resume", target]) if target else None

    def fork_command(self, session: Session) -> str | None:
        """``cd <cwd> && qwen --resume <id> --fork-session`` (a new session from a copy)."""
        resume = self.resume_command(session)
        return f"{resume} --fork-session" if resume else None


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one record, in order (module docstring)."""
    kind, subtype = obj.get("type"), obj.get("subtype")
    subtype = subtype if subtype is None or isinstance(subtype, str) else ""
    msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    parts = [p for p in msg.get("parts") or [] if isinstance(p, dict)] if isinstance(msg.get("parts"), list) else []
    payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
    if kind == "user":
        shown = string(payload.get("displayText"))
        text = shown if shown.strip() else _text(parts)
        if not text.strip():
            return []
        if subtype is None or subtype in SAID:
            return [Piece(Role.USER, LABEL_USER, text, prompt=True)]
        return [Piece(Role.SYSTEM, subtype if subtype in SUBTYPES else LABEL_SYSTEM, text)]
    if kind == "assistant":
        out: list[Piece] = []
        for p in parts:
            if string(p.get("text")).strip():
                thought = p.get("thought") is True
                out.append(Piece(Role.ASSISTANT, LABEL_THINKING if thought else LABEL_ASSISTANT, p["text"]))
            elif isinstance(p.get("functionCall"), dict):
                call = p["functionCall"]
                name = string(call.get("name")) or "unknown"
                out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(call.get("args")), name,
                                 string(call.get("id")) or None))
        return out
    if kind == "tool_result":
        out = []
        for p in parts:
            resp = p.get("functionResponse")
            if isinstance(resp, dict):
                name, body = string(resp.get("name")), resp.get("response")
                text = body["output"] if isinstance(body, dict) and isinstance(body.get("output"), str) else dump_text(body)
                out.append(Piece(Role.TOOL, tool_result_label(name) if name else None, text, name or None,
                                 string(resp.get("id")) or None))
        return out
    if kind == "system" and subtype == "chat_compression":
        history = payload.get("compressedHistory")
        first = history[0] if isinstance(history, list) and history and isinstance(history[0], dict) else {}
        text = _text([p for p in first.get("parts") or [] if isinstance(p, dict)]) if isinstance(
            first.get("parts"), list) else ""
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text.strip() else []
    if kind == "system" and subtype == "slash_command" and payload.get("phase") == "invocation":
        command = string(payload.get("rawCommand")).strip()
        return [Piece(Role.USER, LABEL_USER, command)] if command else []
    return []


def _text(parts: list[dict]) -> str:
    """The text parts of a content that are not thoughts, joined (images ``[image]``)."""
    out = []
    for p in parts:
        if string(p.get("text")) and p.get("thought") is not True:
            out.append(p["text"])
        elif isinstance(p.get("inlineData"), dict) or isinstance(p.get("fileData"), dict):
            out.append("[image]" if string((p.get("inlineData") or p.get("fileData")).get("mimeType")).startswith(
                "image/") else "[file]")
    return "\n".join(out)


def _json_file(path: Path) -> dict:
    try:
        obj = loads(read_file(path, META_BYTES))
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


SOURCE = QwenSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""Kimi CLI (MoonshotAI, the ``kimi`` command) wire logs, in both generations of the tool.

**Kimi CLI, Python** (MoonshotAI/kimi-cli @4a550effdfcb: ``src/kimi_cli/session.py``,
``metadata.py``, ``share.py``, ``session_state.py``, ``wire/file.py``, ``wire/types.py``,
``wire/__init__.py``, ``subagents/store.py``, ``subagents/runner.py``): ``$KIMI_SHARE_DIR`` (else
``~/.kimi``) ``/sessions/<md5 of the work dir>/<session id>/wire.jsonl``, the work dir named in
``kimi.json`` (``work_dirs[].path``; the folder is ``<kaos>_<md5>`` off the local machine),
``state.json`` holding ``custom_title`` and ``archived``; a subagent's own log in
``<session>/subagents/<agent id>/wire.jsonl`` beside its ``meta.json`` (``subagent_type``). The
file opens with ``{"type": "metadata", "protocol_version"}``; each record is ``{"timestamp":
<epoch s>, "message": {"type": <class name>, "payload"}}``, written from the merged wire (a part
streamed in pieces is one record). ``TurnBegin`` / ``SteerInput`` ``user_input`` -> the person's
prompt; ``ContentPart`` ``text`` -> reply, ``think`` -> thinking; ``ToolCall``
(``function.name``, ``function.arguments``) and ``ToolResult`` (``return_value.output`` or
``message``) -> tool call and result; ``BtwBegin`` / ``BtwEnd`` (a ``/btw`` side question and its
answer) -> user text and reply; ``Notification`` -> system; ``CompactionBegin`` marks a
compaction. ``SubagentEvent`` repeats a foreground subagent's events in its parent's log: they
are read there, as sidechain messages, only when that subagent has no log of its own (older
releases wrote none).

**Kimi Code CLI** (MoonshotAI/kimi-code @d723cc47ee43: ``docs/en/guides/sessions.md``,
``packages/agent-core-v2/docs/wire-manifest.d.ts`` protocol 1.5, ``src/agent/contextMemory/
loopEventFold.ts``, ``src/session/sessionMetadata/sessionMetadata.ts``,
``src/workspace/sessionLifecycle/internal/forkTurnSlice.ts``): ``$KIMI_CODE_HOME`` (else
``~/.kimi-code``) ``/sessions/<work dir key>/<session id>/agents/<agent id>/wire.jsonl`` (the
main agent's ``main``) and ``<session id>/state.json`` (``title``, ``cwd``, ``archived``). Records
are ``{"type", ...payload, "time": <epoch ms>}``: ``turn.prompt`` / ``turn.steer`` ``input``
-> a prompt when ``origin.kind`` is ``user``, else a system message labelled by that kind;
``context.append_loop_event`` events ``content.part``, ``tool.call`` (``args``) and
``tool.result`` (``result.output``); ``context.apply_compaction`` ``summary`` -> a summary and a
compaction mark; ``context.undo`` ``count`` -> the last ``count`` turns become an abandoned
branch; ``config.update`` ``environmentDisclosure.cwd`` -> the project when ``state.json`` names
none. ``context.append_message`` repeats a turn's input for the context (``forkTurnSlice`` pairs
the two) and is passed over.

Title: the session's custom title (``state.json``), else the first prompt. Resume: ``kimi
--session <id>`` in the work dir (both generations; ``-r``/``--resume`` too); a subagent's
resumes its session. Record kinds outside :data:`LEGACY_KINDS`, :data:`WIRE_KINDS` and
:data:`LOOP_KINDS` are counted as drift.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import Record, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role,
                     Session, tool_call_label)
from .base import KIND_CHARS, Source, capped, cd_and, dump_text, note_unknown, parse_ts, pick_title, string, walk_files
from .pieces import Piece, abandon, emit, note_compaction, piece_text

LEGACY_KINDS = frozenset({
    "TurnBegin", "SteerInput", "TurnEnd", "StepBegin", "StepInterrupted", "StepRetry", "HookTriggered",
    "HookResolved", "CompactionBegin", "CompactionEnd", "MCPLoadingBegin", "MCPLoadingEnd", "StatusUpdate",
    "Notification", "ContentPart", "ToolCall", "ToolCallPart", "ToolResult", "ApprovalResponse",
    "ApprovalRequestResolved", "SubagentEvent", "PlanDisplay", "BtwBegin", "BtwEnd", "ApprovalRequest",
    "ToolCallRequest", "QuestionRequest", "HookRequest"})
"""``message.type`` of kimi-cli's wire records (``wire/types.py``: the ``Event`` and ``Request``
classes, ``ApprovalRequestResolved`` of wire v1)."""
WIRE_KINDS = frozenset({
    "metadata", "config.update", "context.append_loop_event", "context.append_message", "context.apply_compaction",
    "context.clear", "context.undo", "cron.add", "cron.cursor", "cron.delete", "forked", "full_compaction.begin",
    "full_compaction.cancel", "full_compaction.complete", "goal.clear", "goal.create", "goal.update",
    "interaction.request", "interaction.resolved", "interruptionReminder.recorded", "llm.request",
    "llm.tools_snapshot", "mcp.tools_discovered", "permission.record_approval_result", "permission.set_mode",
    "plan_mode.cancel", "plan_mode.enter", "plan_mode.exit", "plan.revision", "plugin.session_start",
    "profile.bind", "prompt.accepted", "runtime.set_binding", "staleGuard.cleared", "staleGuard.recorded",
    "swarm_mode.enter", "swarm_mode.exit", "task.started", "task.terminated", "task.waitDelivered",
    "token_counting.measured", "token_counting.rebased", "token_counting.truncated",
    "token_counting.turn_recorded", "tools.register_user_tool", "tools.reset_active_tools",
    "tools.set_active_tools", "tools.unregister_user_tool", "tools.update_store", "tower_mode.enter",
    "tower_mode.exit", "turn.cancel", "turn.ended", "turn.prompt", "turn.steer", "usage.record"})
"""Top-level ``type`` of Kimi Code's wire records (the 55 of ``wire-manifest.d.ts``, and the
``metadata`` line)."""
LOOP_KINDS = frozenset({"step.begin", "step.end", "content.part", "tool.call", "tool.result"})
"""``event.type`` of ``context.append_loop_event`` (``LoopRecordedEvent``)."""
TITLE_CAP = 200
SUMMARY_CAP = 8192
TURNS_KEPT = 256
"""Turn starts (message indexes) remembered for ``context.undo``."""
META_BYTES = 1 << 20


class KimiSource(Source):
    """Kimi CLI: ``~/.kimi/sessions/*/*/wire.jsonl`` and ``~/.kimi-code/sessions/*/*/agents/*/wire.jsonl``."""

    agent = "kimi"
    order = 240
    display = "Kimi CLI"
    badge = "Kimi"
    env_var = "KIMI_CODE_HOME"
    style = "bold white on grey23"
    known_kinds = {"message.type": LEGACY_KINDS, "type": WIRE_KINDS, "event.type": LOOP_KINDS}
    locations = ("`~/.kimi/sessions/*/*/wire.jsonl` (+ `subagents/*/wire.jsonl`), "
                 "`~/.kimi-code/sessions/*/*/agents/*/wire.jsonl`")
    reads = ("both generations (Python Kimi CLI, Kimi Code); titles and archiving from `state.json`; prompts "
             "typed while it worked; `/btw` side questions; an `/undo` as an abandoned branch; compactions; "
             "subagents linked to their session")
    override = "`KIMI_CODE_HOME=DIR`, `KIMI_SHARE_DIR=DIR` (the Python CLI's)"
    upstream = ("MoonshotAI/kimi-cli `src/kimi_cli/wire/types.py`, `wire/file.py`, `session.py` @4a550effdfcb; "
                "MoonshotAI/kimi-code `packages/agent-core-v2/docs/wire-manifest.d.ts` (protocol 1.5) @d723cc47ee43")
    checked = "2026-12-06: kimi-cli 4a550effdfcb, kimi-code d723cc47ee43"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$KIMI_SHARE_DIR`` or ``~/.kimi``, then ``$KIMI_CODE_HOME`` or ``~/.kimi-code``."""
        share, code = env.get("KIMI_SHARE_DIR"), env.get("KIMI_CODE_HOME")
        return [Path(os.path.expanduser(share)) if share else home / ".kimi",
                Path(os.path.expanduser(code)) if code else home / ".kimi-code"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Every session's and subagent's ``wire.jsonl`` (module docstring)."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for pattern in ("*/*/wire.jsonl", "*/*/subagents/*/wire.jsonl", "*/*/agents/*/wire.jsonl"):
                for path in walk_files(root / "sessions", pattern):
                    if path not in seen:
                        seen.add(path)
                        yield path

    def stat(self, path: str) -> tuple[int, int, int]:
        """The log's ``(size, mtime_ns, ctime_ns)``, its mtime the latest of it and its session's
        ``state.json`` (a rename or an archiving changes only that file)."""
        size, mtime, ctime = super().stat(path)
        folder = Path(path).parent
        if folder.parent.name in ("agents", "subagents"):
            folder = folder.parent.parent
        try:
            mtime = max(mtime, os.stat(folder / "state.json").st_mtime_ns)
        except OSError:
            pass
        return size, mtime, ctime

    def new_state(self, path: Path) -> dict:
        """Where the session's files are: its folder (``state.json``), its id, the agent of a
        subagent log, and for a Python CLI session the work dir from ``kimi.json``."""
        folder, agent = path.parent, None
        if folder.parent.name in ("agents", "subagents"):
            folder, agent = folder.parent.parent, folder.name
        state: dict = {"folder": str(folder), "sid": folder.name, "turns": []}
        if agent and agent != "main":
            state["agent"] = agent
            meta = _json(path.parent / "meta.json")
            if string(meta.get("subagent_type")):
                state["agent_type"] = meta["subagent_type"][:KIND_CHARS]
        if path.parent.parent.name != "agents":  # the Python CLI: the work dir is in kimi.json
            state["cwd"] = _work_dir(folder.parent.parent.parent, folder.parent.name)
        return state

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One record of either generation: drift, times, the work dir, undo, messages."""
        obj = rec.obj
        msg = obj.get("message")
        skip: list[int] = []
        if isinstance(msg, dict) and "timestamp" in obj:
            kind = msg.get("type")
            if not isinstance(kind, str) or kind not in LEGACY_KINDS:
                note_unknown(state, kind)
            ts = parse_ts(obj.get("timestamp"))
            if kind == "CompactionBegin":
                note_compaction(session, state["next_index"])
            if kind == "SubagentEvent":
                payload = msg.get("payload") if isinstance(msg.get("payload"), dict) else {}
                agent = string(payload.get("agent_id"))
                if agent and os.path.isfile(os.path.join(state["folder"], "subagents", agent, "wire.jsonl")):
                    skip = list(range(len(pieces_of(obj))))  # read as its own session
        else:
            kind = obj.get("type")
            if not isinstance(kind, str) or kind not in WIRE_KINDS:
                note_unknown(state, kind)
            ts = parse_ts(obj.get("time"))
            event = obj.get("event") if isinstance(obj.get("event"), dict) else None
            if kind == "context.append_loop_event" and event is not None and (
                    not isinstance(event.get("type"), str) or event["type"] not in LOOP_KINDS):
                note_unknown(state, event.get("type"))
            if kind == "config.update" and isinstance(obj.get("environmentDisclosure"), dict):
                state.setdefault("seen_cwd", string(obj["environmentDisclosure"].get("cwd")) or None)
            elif kind == "context.apply_compaction":
                note_compaction(session, state["next_index"])
            elif kind == "context.undo":
                _undo(obj.get("count"), state)
            elif kind == "turn.prompt":
                turns = state["turns"]
                turns.append(state["next_index"])
                del turns[:-TURNS_KEPT]
        if kind == "metadata":
            return
        session.touch(ts)
        pieces = pieces_of(obj)
        base = len(out)
        emit(pieces, rec, state, out, ts, skip)
        for p in pieces:
            if p.role is Role.SUMMARY:
                state["summary"] = capped(p.text, SUMMARY_CAP)
        if isinstance(msg, dict) and msg.get("type") == "SubagentEvent":
            for m in out[base:]:
                m.sidechain = True

    def finish(self, state: dict, session: Session) -> None:
        """Id, parent, title (custom title > first prompt), project, archived (``state.json``)."""
        meta = _json(Path(state["folder"]) / "state.json")
        agent = state.get("agent")
        session.session_id = f"{state['sid']}-{agent}" if agent else state["sid"]
        session.parent_session_id = state["sid"] if agent else None
        if state.get("agent_type"):
            session.extra["agent_type"] = state["agent_type"]
        custom = string(meta.get("custom_title")) or string(meta.get("title"))
        session.title = pick_title(None if agent else capped(custom.strip(), TITLE_CAP) or None,
                                   state.get("first_prompt"))
        session.project = state.get("cwd") or string(meta.get("cwd")) or state.get("seen_cwd") or None
        session.archived = meta.get("archived") is True
        session.summary = state.get("summary")
        session.anchor_index = state.get("anchor", 0)
        if state.get("off"):
            session.extra["off_branch"] = [list(r) for r in state["off"]]

    def message_text(self, obj: dict, part: int, label: str) -> str:
        """Text of piece ``part`` of record ``obj`` (same extraction as :meth:`process`)."""
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <work dir> && kimi --session <id>``; a subagent's resumes its session."""
        target = session.parent_session_id or session.session_id
        return cd_and(session.project, ["kimi", "--session", target])


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one record of either generation (module docstring)."""
    msg = obj.get("message")
    if isinstance(msg, dict) and "timestamp" in obj:
        return _legacy(msg)
    kind = obj.get("type")
    if kind in ("turn.prompt", "turn.steer"):
        text = _parts_text(obj.get("input"))
        origin = obj.get("origin")
        origin = string(origin.get("kind")) if isinstance(origin, dict) else string(origin)
        if not text.strip():
            return []
        if origin in ("", "user"):
            return [Piece(Role.USER, LABEL_USER, text, prompt=True)]
        return [Piece(Role.SYSTEM, "".join(c if c.isprintable() else "?" for c in origin[:KIND_CHARS]), text)]
    if kind == "context.append_loop_event" and isinstance(obj.get("event"), dict):
        return _loop(obj["event"])
    if kind == "context.apply_compaction":
        summary = obj.get("summary")
        text = _parts_text(summary.get("content")) if isinstance(summary, dict) else string(summary)
        text = text or string(obj.get("contextSummary"))
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text.strip() else []
    return []


def _legacy(msg: dict, nested: bool = False) -> list[Piece]:
    kind, payload = msg.get("type"), msg.get("payload") if isinstance(msg.get("payload"), dict) else {}
    if kind in ("TurnBegin", "SteerInput", "BtwBegin"):
        text = string(payload.get("question")) if kind == "BtwBegin" else _parts_text(payload.get("user_input"))
        prompt = kind != "BtwBegin" and not nested  # a subagent's task is its parent's words
        return [Piece(Role.USER, LABEL_USER, text, prompt=prompt)] if text.strip() else []
    if kind == "ContentPart":
        return _part(payload)
    if kind == "ToolCall":
        fn = payload.get("function") if isinstance(payload.get("function"), dict) else {}
        name = string(fn.get("name")) or "unknown"
        return [Piece(Role.ASSISTANT, tool_call_label(name), dump_text(fn.get("arguments")), name,
                      string(payload.get("id")) or None)]
    if kind == "ToolResult":
        value = payload.get("return_value") if isinstance(payload.get("return_value"), dict) else {}
        text = _parts_text(value.get("output")) or string(value.get("message"))
        return [Piece(Role.TOOL, None, text, call_id=string(payload.get("tool_call_id")) or "?")]
    if kind == "BtwEnd":
        text = string(payload.get("response")) or string(payload.get("error"))
        return [Piece(Role.ASSISTANT, LABEL_ASSISTANT, text)] if text.strip() else []
    if kind == "Notification":
        text = "\n".join(t for t in (string(payload.get("title")), string(payload.get("body"))) if t)
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
    if kind == "SubagentEvent" and not nested and isinstance(payload.get("event"), dict):
        return _legacy(payload["event"], nested=True)
    return []


def _loop(event: dict) -> list[Piece]:
    kind = event.get("type")
    if kind == "content.part" and isinstance(event.get("part"), dict):
        return _part(event["part"])
    if kind == "tool.call":
        name = string(event.get("name")) or "unknown"
        return [Piece(Role.ASSISTANT, tool_call_label(name), dump_text(event.get("args")), name,
                      string(event.get("toolCallId")) or None)]
    if kind == "tool.result":
        result = event.get("result") if isinstance(event.get("result"), dict) else {}
        return [Piece(Role.TOOL, None, _parts_text(result.get("output")) or string(result.get("note")),
                      call_id=string(event.get("toolCallId")) or "?")]
    return []


def _part(part: dict) -> list[Piece]:
    """A content part: ``text`` -> the reply, ``think`` -> thinking."""
    if part.get("type") == "think" and string(part.get("think")).strip():
        return [Piece(Role.ASSISTANT, LABEL_THINKING, part["think"])]
    if part.get("type") == "text" and string(part.get("text")).strip():
        return [Piece(Role.ASSISTANT, LABEL_ASSISTANT, part["text"])]
    return []


def _parts_text(value) -> str:
    """A string, or the ``text`` of a list of content parts joined (media ``[image]``...)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    out = []
    for p in value:
        if isinstance(p, dict) and string(p.get("text")):
            out.append(p["text"])
        elif isinstance(p, dict) and p.get("type") in ("image_url", "audio_url", "video_url"):
            out.append(f"[{p['type'][:-4]}]")
    return "\n".join(out)


def _undo(count, state: dict) -> None:
    """``context.undo``: the last ``count`` turns leave the active branch."""
    turns = state["turns"]
    if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= len(turns):
        start = turns[-count]
        if start < state["next_index"]:
            abandon(state, start, state["next_index"], keep=256)
        del turns[-count:]


def _work_dir(share: Path, folder: str) -> str | None:
    """The work dir of ``sessions/<folder>`` in ``<share>/kimi.json``: the ``work_dirs`` entry whose
    path's MD5 (prefixed ``<kaos>_`` off the local machine) names the folder."""
    for wd in _json(share / "kimi.json").get("work_dirs") or []:
        path = string(wd.get("path")) if isinstance(wd, dict) else ""
        if path:
            digest = hashlib.md5(path.encode("utf-8")).hexdigest()
            kaos = string(wd.get("kaos")) or "local"
            if folder in (digest, f"{kaos}_{digest}"):
                return path
    return None


def _json(path: Path) -> dict:
    try:
        data = read_file(path, META_BYTES + 1)
        obj = loads(data) if len(data) <= META_BYTES else None
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


SOURCE = KimiSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

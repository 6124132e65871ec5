"""GitHub Copilot CLI sessions: ``$COPILOT_HOME`` (else ``$XDG_CONFIG_HOME/.copilot`` and
``~/.copilot``), files ``session-state/<uuid>/events.jsonl`` (>= 1.0, beside ``workspace.yaml``) and
legacy flat ``session-state/<id>.jsonl``.

Rules come from ``shared/reference/formats.md`` section 6 and the Copilot CLI config-directory
reference (``~/.copilot`` by default; ``COPILOT_HOME`` is the override other readers honour, and
the docs say ``XDG_CONFIG_HOME`` moves the directory: both are looked at). Decisions:

* Envelope ``{type, data, id, timestamp, parentId}``, append-only: the shared JSONL read loop.
* ``session.start`` / ``session.resume``: ``data.sessionId``, ``data.context.cwd`` (project) and
  ``context.branch``. ``user.message`` -> user prompt (``content``; ``transformedContent`` adds
  harness context and is not used). ``assistant.message`` -> thinking (``reasoningText``), text
  (``content``) and one ``tool-call:<name>`` per ``toolRequests`` entry (``arguments``).
  ``assistant.reasoning`` -> thinking. ``tool.execution_complete`` -> the tool result
  (``result.content``, else ``error``), named by pairing ``toolCallId`` with its request.
  ``session.compaction_complete`` with a summary text -> summary. ``session.error`` -> system.
  Turn markers, model changes, ``tool.execution_start`` (a repeat of the request) and unknown
  types yield nothing.
* Copilot title: ``workspace.yaml`` ``summary`` (its own session summary), else the first user
  message. ``workspace.yaml`` is read when the events file is read (a summary change alone does not
  trigger a re-read); only the flat ``key: value`` lines it needs are parsed (no YAML dependency).
* Session id: ``session.start`` ``sessionId``, else the directory name (legacy: the file stem).

Current format (rule 15), from github/copilot-sdk ``nodejs/src/generated/session-events.ts``
(at cc0438d66e3e):

* A ``user.message`` whose ``data.source`` is set (``skill-pdf``: a hidden skill injection,
  ``agent-<id>``: a prompt from another agent) or whose ``data.isAutopilotContinuation`` is true
  (autopilot's continuation loop wrote it) is not the user's prompt: a ``system`` message labelled
  ``context:<source>`` (``context:autopilot``), never the title.
* An event with a top-level ``agentId`` ("Sub-agent instance identifier. Absent for events from
  the root/main agent") belongs to that sub-agent: its messages are sidechain messages (marked,
  hidden with ``s`` in the session view, never the title or anchor), not the main thread.
* ``session.title_changed`` (``data.title``) names the session (before the workspace summary).
* **copilot-sdk 1.0.14** (rule 11; ``dist/generated/session-events.d.ts`` on npm): the events it
  adds (``assistant.fusion_phase_*``, ``session.fusion_*``, ``model.call_finished``,
  ``session.completion_receipt``, ``subagent.configured``, ``session.auto_tier_*``,
  ``session.mcp_server_*``, ``session.mode_notice_delivered`` and six ``permission.*`` records)
  carry routing, receipts and notices, no conversation: known, passed over.
* **Drift**: an event ``type`` that is not one of :data:`KNOWN_TYPES` (every event the SDK declares)
  is counted (:func:`~crabsearch.sources.base.note_unknown`) and listed by ``crabsearch status``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_text
from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message,
                     Role, Session, tool_call_label)
from .base import capped, FileRead, Source, cd_and, dump_text, env_dir, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, piece_text, remember_call

WORKSPACE_KEYS = ("summary", "cwd", "branch")
SUMMARY_CAP = 8192
TITLE_CAP = 200
KNOWN_TYPES = frozenset("""
abort assistant.idle assistant.intent assistant.message assistant.message_delta assistant.message_start
assistant.reasoning assistant.reasoning_delta assistant.server_tool_progress assistant.streaming_delta
assistant.tool_call_delta assistant.turn_end assistant.turn_start assistant.usage auto_mode_switch.completed
auto_mode_switch.requested capabilities.changed command.completed command.execute command.queued
commands.changed elicitation.completed elicitation.requested exit_plan_mode.completed exit_plan_mode.requested
external_tool.completed external_tool.requested factory.run_settled factory.run_started factory.run_updated
hook.end hook.progress hook.start mcp.headers_refresh_completed mcp.headers_refresh_required
mcp.oauth_completed mcp.oauth_required mcp.prompts.list_changed mcp.resources.list_changed
mcp.tools.list_changed mcp_app.tool_call_complete model.call_failure pending_messages.modified
permission.completed permission.requested sampling.completed sampling.requested session.auto_mode_resolved
session.autopilot_objective_changed session.background_tasks_changed session.binary_asset
session.canvas.closed session.canvas.opened session.canvas.recorded session.canvas.registry_changed
session.canvas.removed session.canvas.unavailable session.compaction_complete session.compaction_start
session.context_changed session.context_cleared session.custom_agents_updated session.custom_notification
session.error session.extensions.attachments_pushed session.extensions_loaded session.handoff session.idle
session.info session.managed_settings_enforced session.managed_settings_resolved
session.mcp_server_status_changed session.mcp_servers_loaded session.mode_changed session.model_change
session.permissions_changed session.plan_changed session.remote_steerable_changed session.resume
session.schedule_cancelled session.schedule_created session.schedule_rearmed session.session_limits_changed
session.shutdown session.skills_loaded session.snapshot_rewind session.start session.task_complete
session.title_changed session.todos_changed session.tools_updated session.truncation
session.usage_checkpoint session.usage_info session.warning session.workspace_file_changed
session_limits_exhausted.completed session_limits_exhausted.requested skill.invoked subagent.completed
subagent.deselected subagent.failed subagent.selected subagent.started system.message system.notification
tool.execution_complete tool.execution_partial_result tool.execution_progress tool.execution_start
tool.user_requested tool_search.activated ui.ephemeral_query user.message user_input.completed
user_input.requested
assistant.fusion_phase_activity assistant.fusion_phase_completed assistant.fusion_phase_failed
assistant.fusion_phase_started model.call_finished permission.assentDetected permission.carriedForward
permission.contextualAuthorization permission.messageAuthorization permission.messageAuthorizationDegraded
permission.messageAuthorizationRead session.auto_tier_recommendation session.auto_tier_switch_failed
session.completion_receipt session.fusion_completed session.fusion_resolved session.fusion_route_failed
session.fusion_route_started session.mcp_server_needs_reconnect session.mcp_server_removed
session.mode_notice_delivered subagent.configured""".split())
"""Every event type the SDK declares (``session-events.ts``, the ``type`` of each ``*Event``; the
last 22 from copilot-sdk 1.0.14's ``session-events.d.ts``)."""


class CopilotSource(Source):
    """GitHub Copilot CLI (formats.md section 6). One session per events file."""

    agent = "copilot"
    order = 70
    env_var = "COPILOT_HOME"
    locations = "`~/.copilot/session-state/*/events.jsonl` and legacy `session-state/*.jsonl`"
    reads = ("injected messages (skills, other agents, autopilot) not as prompts; sub-agents' events as "
             "subagent turns")
    override = "`COPILOT_HOME=DIR`"
    upstream = "`@github/copilot-sdk` 1.0.14 (`dist/generated/session-events.d.ts`); formats.md section 6"
    checked = "2026-12-06: copilot-sdk 1.0.14"
    display = "Copilot CLI"
    badge = "Copilot"
    known_kinds = {"event": KNOWN_TYPES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$COPILOT_HOME``; else ``$XDG_CONFIG_HOME/.copilot`` (when set) and ``~/.copilot``."""
        if env.get("COPILOT_HOME"):
            return [env_dir(env, "COPILOT_HOME", home / ".copilot")]
        xdg = env.get("XDG_CONFIG_HOME")
        return ([env_dir(env, "XDG_CONFIG_HOME", home) / ".copilot"] if xdg else []) + [home / ".copilot"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``session-state/*/events.jsonl`` and legacy ``session-state/*.jsonl``."""
        for root in self.roots(env, home):
            for pattern in ("*/events.jsonl", "*.jsonl"):
                yield from walk_files(root / "session-state", pattern)

    def new_state(self, path: Path) -> dict:
        """Session id from the directory (``events.jsonl``) or the file stem (legacy flat file)."""
        sid = path.parent.name if path.name == "events.jsonl" else path.stem
        return {"dir_sid": sid, "ws": _workspace(path)}

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The shared JSONL loop, with ``workspace.yaml`` re-read on every call (see module doc)."""
        if state is not None and start:
            state = dict(state, ws=_workspace(path))
        return super().read(path, start, state)

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        kind, data = obj.get("type"), obj.get("data")
        if not isinstance(kind, str) or kind not in KNOWN_TYPES:
            note_unknown(state, kind)
        if not isinstance(data, dict):
            return
        ts = parse_ts(obj.get("timestamp"))
        session.touch(ts)
        if kind in ("session.start", "session.resume"):
            if string(data.get("sessionId")):
                state.setdefault("sid", data["sessionId"])
            ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
            state["cwd"] = string(ctx.get("cwd")) or state.get("cwd")
            state["branch"] = string(ctx.get("branch")) or state.get("branch")
            session.touch(parse_ts(data.get("startTime")))
            return
        if kind == "tool.execution_start":
            remember_call(state, string(data.get("toolCallId")), string(data.get("toolName")))
            return
        if kind == "session.title_changed":
            title = string(data.get("title")).strip()
            state["title"] = capped(title, TITLE_CAP) if title else None
            return
        pieces = pieces_of(obj)
        if kind == "session.compaction_complete" and pieces:
            state["summary"] = capped(pieces[0].text, SUMMARY_CAP)
        side = bool(string(obj.get("agentId")))
        base = len(out)
        emit(pieces, rec, state, out, ts, ns="side_" if side else "")
        if side:
            for m in out[base:]:
                m.sidechain = True  # a sub-agent's event, not the main thread (rule 15)

    def finish(self, state: dict, session: Session) -> None:
        """Copilot title: workspace ``summary`` > first user message; project: ``context.cwd`` >
        workspace ``cwd``; branch: ``context.branch`` > workspace ``branch``."""
        ws = state.get("ws") or {}
        session.session_id = state.get("sid") or state.get("dir_sid") or session.session_id
        session.title = state.get("title") or ws.get("summary") or state.get("first_prompt") or None
        session.summary = state.get("summary") or None
        session.project = state.get("cwd") or ws.get("cwd") or None
        session.git_branch = state.get("branch") or ws.get("branch") or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && copilot --resume <id>`` (formats.md 6)."""
        return cd_and(session.project, ["copilot", "--resume", session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one event line (stateless; tool results are named by pairing)."""
    kind, data = obj.get("type"), obj.get("data")
    if not isinstance(data, dict):
        return []
    if kind == "user.message":
        text = string(data.get("content"))
        if not text.strip():
            return []
        source = string(data.get("source")) or ("autopilot" if data.get("isAutopilotContinuation") is True else "")
        if source:  # not typed by the user (rule 15)
            return [Piece(Role.SYSTEM, "context:" + re.sub(r"[^\w.-]", "?", source[:60]), text)]
        return [Piece(Role.USER, LABEL_USER, text, prompt=True)]
    if kind == "assistant.reasoning":
        text = string(data.get("content"))
        return [Piece(Role.ASSISTANT, LABEL_THINKING, text)] if text.strip() else []
    if kind == "assistant.message":
        out = []
        if string(data.get("reasoningText")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, data["reasoningText"]))
        if string(data.get("content")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, data["content"]))
        reqs = data.get("toolRequests")
        for r in reqs if isinstance(reqs, list) else []:
            if isinstance(r, dict):
                name = string(r.get("name")) or "unknown"
                out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(r.get("arguments")), name,
                                 call_id=string(r.get("toolCallId")) or None))
        return out
    if kind == "tool.execution_complete":
        result = data.get("result")
        text = dump_text(result.get("content")) if isinstance(result, dict) else dump_text(result)
        if not text:
            err = data.get("error")
            text = string(err.get("message")) if isinstance(err, dict) else dump_text(err)
        return [Piece(Role.TOOL, None, text, string(data.get("toolName")) or None,
                      call_id=string(data.get("toolCallId")) or None)]
    if kind == "session.compaction_complete":
        text = string(data.get("summaryContent")) or string(data.get("summary"))
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text.strip() else []
    if kind == "session.error":
        text = string(data.get("message"))
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
    return []


def _workspace(events: Path) -> dict[str, str]:
    """``summary``, ``cwd`` and ``branch`` from the ``workspace.yaml`` beside ``events.jsonl``:
    top-level ``key: value`` lines only (quotes removed); ``{}`` when absent or unreadable."""
    if events.name != "events.jsonl":
        return {}
    try:
        text = read_text(events.parent / "workspace.yaml", "utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        k, sep, v = line.partition(":")
        if not sep or k not in WORKSPACE_KEYS or line[:1].isspace():
            continue
        v = v.strip()
        if v[:1] in "\"'" and v[-1:] == v[:1] and len(v) > 1:
            v = v[1:-1].replace('\\"', '"') if v[0] == '"' else v[1:-1].replace("''", "'")
        elif v and v[0] in "|>":  # a block scalar: the indented lines that follow
            block = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and not nxt[:1].isspace():
                    break
                block.append(nxt.strip())
            v = ("\n" if v[0] == "|" else " ").join(block).strip()
        if v:
            out[k] = v
    return out


SOURCE = CopilotSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

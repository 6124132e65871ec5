"""Cline, Roo Code and Kilo Code tasks (VS Code extensions), and Cline CLI sessions.

Rules come from ``shared/reference/formats.md`` section 6 ("Cline / Roo Code / Kilo Code") and
7.1-7.3. Layouts (one session per unit, the unit is a whole JSON file rewritten in place):

* Extension tasks: ``<VS Code user dir>/globalStorage/<extension>/tasks/<taskId>/
  api_conversation_history.json`` for the extensions ``saoudrizwan.claude-dev`` (Cline),
  ``rooveterinaryinc.roo-cline`` (Roo Code) and ``kilocode.kilo-code`` (Kilo Code), in the user
  dirs of ``Code``, ``Code - Insiders``, ``VSCodium`` and ``Cursor`` under ``$XDG_CONFIG_HOME``
  (else ``~/.config``), ``~/Library/Application Support`` and ``$APPDATA``, plus
  ``$VSCODE_PORTABLE/user-data`` and ``~/.vscode-server/data`` (remote hosts).
* Cline CLI: ``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, else ``~/.cline/data`` (the env vars
  the Cline CLI itself reads): ``sessions/<id>/<id>.messages.json`` with metadata in
  ``<id>.json``, and ``tasks/<taskId>/`` in the extension layout.

Decisions:

* The file is an Anthropic messages array (``{role, content: str | blocks, ts?}``). User text:
  ``<task>``/``<feedback>``/``<answer>``/``<user_message>`` wrappers are unwrapped and
  ``<environment_details>`` blocks dropped (never indexed); ``[TASK RESUMPTION]`` and ``[ERROR]``
  notices are system messages. ``[tool for 'x'] Result:`` text blocks (the XML tool protocol) and
  ``tool_result`` blocks are tool results; ``tool_use`` blocks and known tool XML elements in
  assistant text (``<read_file>...</read_file>``) are tool calls; ``<thinking>`` and thinking
  blocks are thinking. The user-facing text of ``attempt_completion`` (``<result>``),
  ``ask_followup_question`` (``<question>``) and ``plan_mode_respond`` (``<response>``) is also
  yielded as assistant text.
* Title: ``state/taskHistory.json`` entry ``task`` (Cline), else the task's
  ``history_item.json`` ``task`` (Roo), else the CLI metadata ``title``/``task``, else the first
  line of the ``<task>`` text (formats.md 7.2). Project: ``cwdOnTaskInitialization`` /
  ``workspace`` / ``cwd``, else the ``# Current Working Directory (...)`` line of the first
  environment details. Started: the task id (epoch ms, or the time part of a ULID); updated:
  the history ``ts``, message ``ts`` values, else the file's mtime.
* Incremental reading: none. Every read parses the whole file from 0 and the fingerprint hashes
  the whole file, so any rewrite replaces the task's messages. A message's ``offset`` is its
  position in the array (``length`` 1); :meth:`ClineSource.load` serves it from a small LRU of
  parsed files keyed by ``(path, mtime_ns, size)``.
* Resume: extension tasks reopen only in the IDE (None); CLI sessions ``cd <cwd> && cline --id <id>``.

Current format (rule 17), from cline/cline ``sdk/packages/core`` (at 21cb8d2525bc:
``src/session/models/session-manifest.ts``, ``fixtures/session/session.json`` and
``session.messages.json``, ``src/services/session-artifacts.ts``, ``src/session/models/
session-graph.ts``, ``src/types/common.ts``):

* The session manifest ``sessions/<id>/<id>.json`` (``version: 1``): ``metadata.title`` (else
  ``prompt``) is the title, ``started_at`` / ``ended_at`` the times, ``cwd`` (else
  ``workspace_root``) the project, ``source`` who created it, ``metadata.fork.forkedFromSessionId``
  the session it was forked from (``extra["forked_from"]``; the fork copies the messages with their
  ``id``, so a shared message is shown once, on the newest copy, as for Claude Code forks).
* The messages file ``{"version": 1, "agent": "lead" | "subagent" | "teammate", "sessionId",
  "messages": [{"id", "role", "content"}]}``. A sub-agent's or teammate's file sits in its root
  session's directory as ``<agentId>.messages.json`` (``<agentId>__<taskId>`` for a team task):
  its session id is ``<root>__<agentId>`` (``makeSubSessionId``, or the file's ``sessionId``) and
  its parent the root session. ``file`` content blocks (attached file contents) are not text.
* ``source`` ``vscode`` / ``jetbrains`` / ``ide`` / ``neovim`` (the SDK's ``SessionSource``): the
  session was created by the editor extension, not the CLI: labelled so (``extra["app"]``, shown
  in result rows) and, like extension tasks, reopened only in that editor (no resume command). A
  sub-agent session resumes its root session.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import LineStats, Record, read_whole
from ..model import (LABEL_ASSISTANT, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label, tool_result_label)
from .base import FileRead, Source, cd_and, dump_text, first_line, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, piece_text

BLOCK_TYPES = frozenset({"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "file",
                         "document"})
"""Content block types this reader knows; any other is counted as drift (``crabsearch status``)."""
EXTENSIONS = {"saoudrizwan.claude-dev": "Cline", "rooveterinaryinc.roo-cline": "Roo Code",
              "kilocode.kilo-code": "Kilo Code"}
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor")
TASK_FILE = "api_conversation_history.json"

_TOOLS = ("execute_command|read_file|write_to_file|replace_in_file|apply_diff|insert_content|"
          "search_and_replace|search_files|list_files|list_code_definition_names|codebase_search|"
          "browser_action|use_mcp_tool|access_mcp_resource|ask_followup_question|attempt_completion|"
          "plan_mode_respond|new_task|switch_mode|update_todo_list|fetch_instructions|web_fetch|"
          "load_mcp_documentation|condense|summarize_task|report_bug|new_rule|focus_chain")
_TOOL_XML = re.compile(rf"<({_TOOLS})>(.*?)</\1>", re.S)
_SPOKEN = {"attempt_completion": "result", "ask_followup_question": "question", "plan_mode_respond": "response"}
_THINKING = re.compile(r"<thinking>(.*?)</thinking>", re.S)
_ENV = re.compile(r"<environment_details>.*?(</environment_details>|\Z)", re.S)
_WRAP = re.compile(r"</?(task|feedback|answer|user_message)>")
_RESULT = re.compile(r"\[(\w+)(?: for [^\]]*)?\] Result:")
_CWD = re.compile(r"# Current Working Directory \((.+?)\) Files")
_ULID = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class ClineSource(Source):
    """Cline / Roo Code / Kilo Code tasks and Cline CLI sessions (formats.md section 6)."""

    agent = "cline"
    order = 100
    env_var = "CLINE_DATA_DIR"
    locations = ("VS Code `globalStorage/<extension>/tasks/*/api_conversation_history.json`, Cline CLI "
                 "`~/.cline/data/sessions/`")
    reads = ("the SDK session manifest (title, times, forks shown once); sub-agent and teammate sessions "
             "linked to their root; sessions the editor extension created labelled so")
    override = "`CLINE_DATA_DIR=DIR`"
    upstream = "formats.md section 6 (Cline, Roo Code, Kilo Code, the Cline CLI's session manifest)"
    resume_doc = "Cline CLI: `cd DIR && cline --id ID`; extension tasks: reopened in the editor"
    display = "Cline / Roo Code"
    badge = "Cline"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The Cline CLI data dir, then every extension storage dir that exists (the first
        candidate, ``~/.config/Code/.../saoudrizwan.claude-dev``, is listed even when missing)."""
        cli = env.get("CLINE_DATA_DIR") or (str(Path(env["CLINE_DIR"]) / "data") if env.get("CLINE_DIR") else "")
        out = [Path(cli).expanduser() if cli else home / ".cline" / "data"]
        stores = [u / "globalStorage" / ext for u in vscode_user_dirs(env, home) for ext in EXTENSIONS]
        return out + [s for i, s in enumerate(stores) if i == 0 or s.is_dir()]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``tasks/*/api_conversation_history.json`` and ``sessions/*/*.messages.json``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for pattern in (f"tasks/*/{TASK_FILE}", "sessions/*/*.messages.json"):
                for path in walk_files(root, pattern):
                    if path not in seen:
                        seen.add(path)
                        yield path

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The whole file, always from 0 (``start``/``state`` ignored: the file is rewritten).
        Raises ``OSError`` when it cannot be read; a broken file, and an entry that is not an object
        or that the reader cannot handle (:meth:`Source.take`), is skipped and counted."""
        path = Path(path)
        data, size = read_whole(str(path))
        stats = LineStats(end_offset=size)
        state = {"next_index": 0}
        cli = path.name.endswith(".messages.json")
        sid = path.name[: -len(".messages.json")] if cli else path.parent.name
        parent = None
        if cli and sid != path.parent.name:  # a sub-agent's or teammate's file in its root's directory
            parent = path.parent.name
            own = data.get("sessionId") if isinstance(data, dict) else None
            sid = own if isinstance(own, str) and own and own != parent else f"{parent}__{sid}"
        session = Session(agent=self.agent, session_id=sid, path=str(path), parent_session_id=parent)
        meta = _cli_meta(path, sid) if cli else _task_meta(path, sid)
        session.extra["app"] = (meta.get("app") or "Cline CLI") if cli else _app(path)
        if meta.get("forked_from"):
            session.extra["forked_from"] = meta["forked_from"]
        if isinstance(data, dict) and data.get("agent") in ("subagent", "teammate"):
            session.extra["agent_type"] = data["agent"]
        msgs = _messages(data)
        if data is None:
            stats.skip("broken JSON")
        elif msgs is None:
            stats.skip("not a messages array")
        messages: list[Message] = []
        for n, m in enumerate(msgs or []):
            if not isinstance(m, dict):
                stats.skip("not a JSON object", f"message {n}")
                continue
            self.take(Record(m, n, 1), state, session, messages, stats, f"message {n}", _take)
        self.take(Record(meta, 0, 0), state, session, [], stats, "session fields", _fields)
        session.message_count = state["next_index"]
        if session.updated is None:
            session.touch(parse_ts(os.stat(path).st_mtime))
        state.pop("pending", None)
        state["session"] = session.to_state()
        return FileRead(session, messages, size, state, stats)

    def fingerprint(self, path: str, size: int) -> str:
        """SHA-1 of the whole file: a rewrite is never taken for an append. Raises ``OSError``."""
        return hashlib.sha1(read_file(path)).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """Message number ``offset`` of the (cached) parsed file, or None. Raises ``OSError``."""
        msgs = _messages(read_whole(path)[0]) or []
        return msgs[offset] if 0 <= offset < len(msgs) and isinstance(msgs[offset], dict) else None

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """CLI sessions: ``cd <cwd> && cline --id <id>`` (a sub-agent's: its root session's);
        extension tasks and sessions an editor created: None (reopened in the editor only)."""
        if session.extra.get("app") != "Cline CLI":
            return None
        return cd_and(session.project, ["cline", "--id", session.parent_session_id or session.session_id])


def vscode_user_dirs(env: Mapping[str, str], home: Path, editors: tuple[str, ...] = EDITORS) -> list[Path]:
    """The ``User`` directories of VS Code and its forks named in ``editors`` (the names of their
    user-data folders), in this order: under ``$XDG_CONFIG_HOME`` (else ``~/.config``), under
    ``~/Library/Application Support`` and under ``$APPDATA`` for each editor, then
    ``$VSCODE_PORTABLE/user-data/User`` and ``~/.vscode-server/data/User`` (remote hosts). Whether
    they exist is not checked."""
    users = [Path(env.get("XDG_CONFIG_HOME") or home / ".config") / e / "User" for e in editors]
    users += [home / "Library" / "Application Support" / e / "User" for e in editors]
    users += [Path(env["APPDATA"]) / e / "User" for e in editors if env.get("APPDATA")]
    users += [Path(env["VSCODE_PORTABLE"]) / "user-data" / "User"] if env.get("VSCODE_PORTABLE") else []
    users += [home / ".vscode-server" / "data" / "User"]
    return users


def _fields(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """The session fields from the task's metadata ``rec.obj`` (title, cwd, time) and the
    messages read."""
    meta = rec.obj
    session.project = meta.get("cwd") or state.get("cwd")
    session.title = meta.get("title") or state.get("first_prompt") or None
    session.anchor_index = state.get("anchor", 0)
    session.touch(_id_time(session.session_id))
    session.touch(parse_ts(meta.get("ts")))
    session.touch(parse_ts(meta.get("started")))
    session.touch(parse_ts(meta.get("ended")))


def _take(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """One entry of the messages array: its messages, its time, and the first user entry's cwd."""
    m = rec.obj
    ts = parse_ts(m.get("ts"))
    session.touch(ts)
    content = m.get("content")
    for b in content if isinstance(content, list) else ():
        if isinstance(b, dict) and (not isinstance(b.get("type"), str) or b["type"] not in BLOCK_TYPES):
            note_unknown(state, b.get("type"))
    base = len(out)
    emit(pieces_of(m), rec, state, out, ts)
    if isinstance(m.get("id"), str) and m["id"]:
        for msg in out[base:]:
            msg.uid = f"{m['id']}:{msg.part}"  # a fork copies messages with their ids (rule 17)
    if "cwd" not in state and m.get("role") == "user":
        found = _CWD.search(_raw_text(m))
        state["cwd"] = found.group(1) if found else None


# -- files -------------------------------------------------------------------------------------

def _optional(path: Path) -> object:
    """A small side file (history, metadata) parsed, or None when missing or broken."""
    try:
        return read_whole(str(path))[0]
    except OSError:
        return None


def _messages(data) -> list | None:
    """The messages array: the file itself, or its ``messages`` (CLI); None when neither."""
    if isinstance(data, dict):
        data = data.get("messages")
    return data if isinstance(data, list) else None


def _task_meta(path: Path, task_id: str) -> dict:
    """Title, cwd and ts of a task from ``state/taskHistory.json`` (Cline) or the task's
    ``history_item.json`` (Roo); ``{}`` when neither knows it."""
    history = _optional(path.parents[2] / "state" / "taskHistory.json")
    found = [h for h in history if isinstance(h, dict) and string(h.get("id")) == task_id] \
        if isinstance(history, list) else []
    item = _optional(path.parent / "history_item.json")
    h = found[-1] if found else item if isinstance(item, dict) else None
    if h is None:
        return {}
    return {"title": first_line(string(h.get("task"))), "ts": h.get("ts"),
            "cwd": string(h.get("cwdOnTaskInitialization")) or string(h.get("workspace"))}


EDITOR_SOURCES = {"vscode": "Cline (VS Code)", "jetbrains": "Cline (JetBrains)", "ide": "Cline (IDE)",
                  "neovim": "Cline (Neovim)"}
"""Manifest ``source`` values of sessions an editor extension created (the SDK's ``SessionSource``)."""


def _cli_meta(path: Path, sid: str) -> dict:
    """Title, cwd, times, fork origin and creating app of a Cline CLI session from its manifest
    ``<id>.json`` (module docstring; older fields read loosely). A sub-agent's file has none: the
    root session's manifest gives its cwd."""
    m = _optional(path.parent / f"{sid}.json")
    if not isinstance(m, dict):
        m = _optional(path.parent / f"{path.parent.name}.json") if sid != path.parent.name else None
        root = m if isinstance(m, dict) else {}
        return {"cwd": string(root.get("cwd")) or string(root.get("workspace_root"))}
    meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
    pick = lambda *keys: next((m[k] for k in keys if m.get(k)), None)  # noqa: E731
    fork = meta.get("fork") if isinstance(meta.get("fork"), dict) else {}
    source = string(m.get("source")) or string(meta.get("source"))
    return {"title": first_line(string(meta.get("title")) or string(pick("title", "task", "name", "prompt"))),
            "cwd": string(pick("cwd", "cwdOnTaskInitialization", "workspaceRoot", "workspace_root", "workspace")),
            "ts": pick("updatedAt", "updated_at", "ts", "lastUpdated", "createdAt", "created_at"),
            "started": m.get("started_at"), "ended": m.get("ended_at"),
            "forked_from": string(fork.get("forkedFromSessionId")) or None,
            "app": EDITOR_SOURCES.get(source.lower())}


def _app(path: Path) -> str:
    """Which extension a task belongs to (from its storage directory name)."""
    return EXTENSIONS.get(path.parents[2].name, "Cline")


def _id_time(task_id: str):
    """A task id's creation time: epoch milliseconds, or the 48-bit time of a ULID."""
    if task_id.isdigit():
        return parse_ts(int(task_id))
    if len(task_id) == 26 and all(c in _ULID for c in task_id.upper()):
        ms = 0
        for c in task_id[:10].upper():
            ms = ms * 32 + _ULID.index(c)
        return parse_ts(ms)
    return None


# -- stateless extraction ----------------------------------------------------------------------


def _raw_text(m: dict) -> str:
    content = m.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(string(b.get("text")) for b in content if isinstance(b, dict)) if isinstance(content, list) else ""


def pieces_of(m: dict) -> list[Piece]:
    """The pieces of one Anthropic message, in order (see the module docstring)."""
    content = m.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    blocks = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
    return _user(blocks) if m.get("role") == "user" else _assistant(blocks) if m.get("role") == "assistant" else []


def _user(blocks: list[dict]) -> list[Piece]:
    out: list[Piece] = []
    said: list[str] = []
    result: list | None = None  # [name, texts] of an open "[tool] Result:" block
    for b in blocks:
        kind = b.get("type")
        if kind == "text":
            text = _ENV.sub("", string(b.get("text"))).strip()
            if not text:
                continue
            head = _RESULT.match(text)
            if head:
                result = [head.group(1), [text[head.end():].strip()]]
                out.append(result)  # filled in below, turned into a piece at the end
            elif text.startswith(("[TASK RESUMPTION]", "[ERROR]", "[NOTE]")):
                out.append(Piece(Role.SYSTEM, LABEL_SYSTEM, text))
            elif result is not None and not _WRAP.search(text):
                result[1].append(text)
            else:
                said.append(_WRAP.sub("", text).strip())
        elif kind == "image":
            said.append("[image]")
        elif kind == "tool_result":
            result = None
            out.append(Piece(Role.TOOL, None, _block_text(b.get("content")), call_id=string(b.get("tool_use_id"))))
    pieces = [Piece(Role.TOOL, tool_result_label(p[0]), "\n".join(t for t in p[1] if t), p[0])
              if isinstance(p, list) else p for p in out]
    text = "\n".join(t for t in said if t)
    if text:
        pieces.insert(0, Piece(Role.USER, LABEL_USER, text, prompt=text != "[image]"))
    return pieces


def _assistant(blocks: list[dict]) -> list[Piece]:
    thinking, said, spoken, calls = [], [], [], []
    for b in blocks:
        kind = b.get("type")
        if kind == "thinking" and string(b.get("thinking")).strip():
            thinking.append(b["thinking"].strip())
        elif kind == "text":
            text = string(b.get("text"))
            thinking += [t.strip() for t in _THINKING.findall(text) if t.strip()]
            for x in _TOOL_XML.finditer(text):
                name, inner = x.group(1), x.group(2)
                words = re.search(rf"<{_SPOKEN.get(name, '-')}>(.*?)</", inner, re.S)
                if words and words.group(1).strip():
                    spoken.append(words.group(1).strip())
                calls.append(Piece(Role.ASSISTANT, tool_call_label(name), x.group(0), name))
            rest = _TOOL_XML.sub("", _THINKING.sub("", text)).strip()
            if rest:
                said.append(rest)
        elif kind == "tool_use":
            name = string(b.get("name")) or "unknown"
            calls.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(b.get("input")), name,
                               call_id=string(b.get("id"))))
    out = [Piece(Role.ASSISTANT, LABEL_THINKING, "\n\n".join(thinking))] if thinking else []
    if said + spoken:
        out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, "\n\n".join(said + spoken)))
    return out + calls


def _block_text(content) -> str:
    """A ``tool_result`` content: a string, or text blocks (images as ``[image]``)."""
    if isinstance(content, str):
        return content
    parts = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict):
            parts.append(string(b.get("text")) if b.get("type") == "text" else "[image]" if b.get("type") == "image" else "")
    return "\n".join(p for p in parts if p)


SOURCE = ClineSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

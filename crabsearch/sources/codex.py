"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<stamp>-<uuid>.jsonl``.

Rules come from ``shared/reference/formats.md`` section 2 (2.1 layout and ``session_index.jsonl``,
2.2 envelope, 2.3 roles, 2.4 title/summary/project/branch, 2.5 resume) and 7.3 (role mapping).
Decisions the spec leaves open:

* The human prompt is written twice in envelope files (a ``response_item`` user message, then an
  ``event_msg.user_message``), and some builds write only the ``response_item``: the first of
  the two is yielded and its twin (the next prompt of the *other* kind with the same text,
  whitespace-normalised, or one containing the other) skipped, so each prompt comes once either way. Injected context items
  (``<environment_context>``, ``# AGENTS.md instructions`` ...) are never prompts. Assistant
  text comes only from ``response_item`` (``event_msg.agent_message`` is skipped). Pre-envelope
  files (bare items, formats.md 2.1 "mid-2025 Rust") have no events at all.
* Reasoning yields its ``summary`` texts (else plain ``content`` texts), never
  ``encrypted_content``. Any ``*_call`` item is a tool call, any ``*_output`` item a tool result
  paired by ``call_id``.
* The 2025-05 whole-file ``.json`` format is not read.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record, iter_records, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_THINKING, LABEL_USER, Message, Role,
                     Session, tool_call_label)
from ..redact import redact
from .base import capped, Source, cd_and, env_dir, parse_ts, dump_text, string, walk_files
from .pieces import Piece, emit, note_compaction, piece_text

SUMMARY_CAP = 8192
"""Characters of a compaction summary stored on the Session (the message keeps the full text)."""

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
             "<user_shell_command>", "<turn_aborted>", "<INSTRUCTIONS>")
_BARE_ITEMS = frozenset({"message", "reasoning", "function_call", "function_call_output",
                         "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                         "local_shell_call_output"})


class CodexSource(Source):
    """Codex CLI (formats.md section 2). One session per rollout file."""

    agent = "codex"
    order = 20
    env_var = "CODEX_HOME"
    display = "Codex CLI"
    badge = "Codex"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CODEX_HOME``, else ``~/.codex``."""
        return [env_dir(env, "CODEX_HOME", home / ".codex")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/**/rollout-*.jsonl``, ``archived_sessions/**/rollout-*.jsonl`` and
        ``archived_sessions/*.jsonl``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for sub, pattern in (("sessions", "**/rollout-*.jsonl"),
                                 ("archived_sessions", "**/rollout-*.jsonl"),
                                 ("archived_sessions", "*.jsonl")):
                for path in walk_files(root / sub, pattern):
                    if path not in seen:
                        seen.add(path)
                        yield path

    def new_state(self, path: Path) -> dict:
        """The thread uuid at the end of the file name (the default session id)."""
        m = _UUID.search(path.stem)
        return {"file_id": m.group(0) if m else None}

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One line: metadata (session_meta, header, thread name) and its messages."""
        obj = rec.obj
        kind, payload = obj.get("type"), obj.get("payload")
        ts = parse_ts(obj.get("timestamp"))
        session.touch(ts)
        if isinstance(payload, dict):
            if kind == "session_meta":
                _meta(payload, state, session)
                return
            if kind == "turn_context":
                if session.project is None and string(payload.get("cwd")):
                    session.project = payload["cwd"]
                return
            if kind == "event_msg" and payload.get("type") == "thread_name_updated":
                name = string(payload.get("thread_name")).strip()
                if name:
                    state["thread_name"] = name
                return
        elif kind is None and string(obj.get("id")) and "timestamp" in obj:
            _meta(obj, state, session)  # pre-envelope header {id, timestamp, instructions, git?, cwd?}
            return
        if kind == "compacted":
            note_compaction(session, state["next_index"])  # formats.md 2.2: earlier context replaced
        pieces = pieces_of(obj)
        skip = []
        for i, p in enumerate(pieces):
            if p.role is Role.SUMMARY:
                session.summary = capped(p.text, SUMMARY_CAP)
            elif p.role is Role.USER and p.prompt:
                # One prompt is written twice (response_item, then event_msg); some builds write
                # only one of them. Yield whichever comes first, skip its twin.
                text = redact(" ".join(p.text.split()))  # kept in the state: stored masked
                last_kind, last = state.get("last_prompt") or ("", "")
                if last and last_kind != kind and (text == last or text in last or last in text):
                    skip.append(i)
                    state.pop("last_prompt", None)
                else:
                    state["last_prompt"] = [kind, text]
        emit(pieces, rec, state, out, ts, skip=skip)

    def finish(self, state: dict, session: Session) -> None:
        """Session id; title = session_index.jsonl thread name > thread_name_updated event > first
        prompt (formats.md 2.4); anchor = first prompt."""
        session.session_id = state.get("sid") or state.get("file_id") or Path(session.path).stem
        names = thread_names(codex_root(Path(session.path)))
        session.title = (names.get(session.session_id) or names.get(state.get("file_id") or "")
                         or state.get("thread_name") or state.get("first_prompt") or None)
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        """Text of piece ``part`` of line ``obj`` (same extraction as :meth:`process`)."""
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && codex resume <id>`` (formats.md 2.5)."""
        return cd_and(session.project, ["codex", "resume", session.session_id])


# -- session_index.jsonl ------------------------------------------------------------------------

_NAMES: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


def codex_root(path: Path) -> Path | None:
    """The Codex home holding ``path`` (the parent of its nearest ``sessions`` or
    ``archived_sessions`` directory), or None."""
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            return parent.parent
    return None


def thread_names(root: Path | None) -> dict[str, str]:
    """``{thread id: name}`` from ``<root>/session_index.jsonl`` (lines ``{id, thread_name,
    updated_at}``; the last line for an id wins, an empty name clears it). Cached per process by
    path, mtime and size; a missing or unreadable file gives ``{}``, broken lines are skipped."""
    if root is None:
        return {}
    path = root / "session_index.jsonl"
    try:
        st = path.stat()
        key = (st.st_mtime_ns, st.st_size)
        hit = _NAMES.get(str(path))
        if hit and hit[0] == key:
            return hit[1]
        names: dict[str, str] = {}
        for rec in iter_records(str(path)):
            tid, name = string(rec.obj.get("id")), string(rec.obj.get("thread_name")).strip()
            if tid and name:
                names[tid] = name
            elif tid:
                names.pop(tid, None)
    except OSError:
        return {}
    _NAMES[str(path)] = (key, names)
    return names


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one rollout line, in order (formats.md 2.2-2.3, 7.3)."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        kind = obj.get("type")
        if kind == "response_item":
            return _item(payload, bare=False)
        if kind == "event_msg" and payload.get("type") == "user_message":
            return _user_event(payload)
        if kind == "compacted" and string(payload.get("message")).strip():
            return [Piece(Role.SUMMARY, LABEL_SUMMARY, payload["message"])]
        return []
    if "payload" not in obj and string(obj.get("type")) in _BARE_ITEMS:
        return _item(obj, bare=True)
    return []


def _user_event(p: dict) -> list[Piece]:
    text = string(p.get("message"))
    if text.lstrip().startswith(_INJECTED):
        text = ""
    images = sum(len(p[k]) for k in ("images", "local_images") if isinstance(p.get(k), list))
    parts = ([text] if text.strip() else []) + ["[image]"] * images
    return [Piece(Role.USER, LABEL_USER, "\n".join(parts), prompt=bool(text.strip()))] if parts else []


def _item(p: dict, bare: bool) -> list[Piece]:
    kind = string(p.get("type"))
    if kind == "message":
        role = p.get("role")
        if role == "assistant":
            text = "\n".join(_texts(p.get("content")))
            return [Piece(Role.ASSISTANT, LABEL_ASSISTANT, text)] if text.strip() else []
        if role == "user":
            texts = [t for t in _texts(p.get("content")) if not t.lstrip().startswith(_INJECTED)]
            text = "\n".join(texts)
            return [Piece(Role.USER, LABEL_USER, text, prompt=any(t != "[image]" for t in texts))] if text.strip() else []
        return []
    if kind == "reasoning":
        text = "\n\n".join(_texts(p.get("summary")) or _texts(p.get("content")))
        return [Piece(Role.ASSISTANT, LABEL_THINKING, text)] if text.strip() else []
    call_id = string(p.get("call_id")) or None
    if kind.endswith("_output"):
        return [Piece(Role.TOOL, None, _output_text(p.get("output")), call_id=call_id)]
    if kind.endswith("_call"):
        fn = p.get("function") if isinstance(p.get("function"), dict) else {}
        name = string(p.get("name")) or string(fn.get("name")) or kind[: -len("_call")]
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        command = action.get("command")
        if kind == "local_shell_call" and isinstance(command, list):
            text = shlex.join(c if isinstance(c, str) else dump_text(c) for c in command)
        else:
            raw = next((p[k] for k in ("arguments", "input", "action") if p.get(k) is not None), None)
            text = dump_text(raw)
        return [Piece(Role.ASSISTANT, tool_call_label(name), text, name, call_id)]
    return []


# -- small helpers -----------------------------------------------------------------------------


def _meta(p: dict, state: dict, session: Session) -> None:
    """Apply a session_meta (or pre-envelope header): the first one, unless a later one's id
    matches the file name's uuid, which then wins for good (formats.md 2.2)."""
    mid = string(p.get("id"))
    match = bool(mid) and mid == state.get("file_id")
    if state.get("meta") == "match" or (state.get("meta") and not match):
        return
    state["meta"] = "match" if match else "first"
    if mid:
        state["sid"] = mid
    if string(p.get("cwd")):
        session.project = p["cwd"]
    git = p.get("git")
    session.git_branch = (string(git.get("branch")) if isinstance(git, dict) else "") or None


def _texts(items) -> list[str]:
    """Texts of a content/summary list (``input_text``, ``output_text``, ``summary_text``, ...);
    images become ``[image]``."""
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            if item.get("type") in ("input_image", "image"):
                out.append("[image]")
            elif string(item.get("text")):
                out.append(item["text"])
    return out


def _output_text(output) -> str:
    """A tool output: a string (unwrapping the older ``{"output": ..., "metadata": ...}`` JSON
    string), a content list, or an object."""
    if isinstance(output, str):
        if output.lstrip().startswith('{"output"'):
            try:
                inner = loads(output.encode("utf-8", "surrogatepass"))
            except ValueError:
                return output
            if isinstance(inner, dict) and isinstance(inner.get("output"), str):
                return inner["output"]
        return output
    if isinstance(output, list):
        return "\n".join(_texts(output))
    if isinstance(output, dict):
        return string(output.get("text")) or string(output.get("output")) or dump_text(output)
    return ""


SOURCE = CodexSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

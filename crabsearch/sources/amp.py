"""Amp (Sourcegraph's coding agent) threads kept on disk: ``~/.local/share/amp/threads/T-*.json``.

Amp keeps its threads on its servers; the local files are the copies older releases kept (and
``amp threads export`` writes the same document). Amp is closed and documents no file format
(agentsview's ``docs/internal/session-format-sources.md`` records the search), so the rules follow
the peer parsers: agentsview ``internal/parser/amp.go`` at 53860074 and cass's connector
(franken_agent_detection ``src/connectors/amp.rs`` at 6ae73d5f), and ``shared/reference/formats.md``
section 6:

* **Where**: ``$XDG_DATA_HOME/amp`` (else ``~/.local/share/amp``), ``threads/T-*.json``; the VS Code
  extension's ``globalStorage/sourcegraph.amp/**/T-*.json`` (cass); or ``$CRABSEARCH_AMP_DIR``.
* **The thread** (one JSON object, rewritten whole): ``id`` (``T-<uuid>``, also the file name),
  ``created`` (ms), ``title``, ``env.initial.trees[]`` (``uri`` of the working tree,
  ``displayName``), ``messages[]``: ``{role: user | assistant, content: [blocks], meta: {sentAt
  (ms)}, usage: {timestamp, model, ...}}``. Blocks: ``text``, ``thinking``, ``redacted_thinking``,
  ``tool_use`` (``id``, ``name``, ``input``), ``tool_result`` (Amp's ``toolUseID`` and ``run:
  {status, result, error: {message}}``, or the Anthropic ``tool_use_id`` and ``content``),
  ``image``. Other block types are counted in ``status``.
* **Messages**: user text (the prompts), tool results (paired with their calls: ``run.result``
  as text, its ``output`` / ``content`` / ``diff`` when it is an object, the error message, or
  ``[cancelled]``), assistant thinking, text and tool calls (input as JSON). A message's
  ``offset`` is its position in ``messages`` (``length`` 1).
* **Session fields**: id the file name (else ``id``); title ``title``, else the first prompt;
  project the first tree's ``uri`` path; times ``created``, ``meta.sentAt`` and
  ``usage.timestamp``, else the file's mtime. Resume: ``cd <project> && amp threads continue <id>``.
* **Incremental reading**: none: the file is rewritten, so every change re-reads it (the
  fingerprint hashes it whole).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterator, Mapping
from urllib.parse import unquote, urlsplit

from ..files import read_file
from ..jsonl import LineStats, Record, read_whole
from ..model import LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session, tool_call_label
from .base import FileRead, Source, capped, cd_and, dump_text, env_dir, note_unknown, parse_ts, string, walk_files
from .cline import vscode_user_dirs
from .pieces import Piece, emit, piece_text

BLOCK_TYPES = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"})
TITLE_CAP = 200


class AmpSource(Source):
    """Amp threads (``threads/T-*.json``), one session per file."""

    agent = "amp"
    order = 310
    env_var = "CRABSEARCH_AMP_DIR"
    display = "Amp"
    badge = "Amp"
    style = "bold black on orange1"
    locations = "`~/.local/share/amp/threads/T-*.json`, VS Code `globalStorage/sourcegraph.amp/`"
    reads = ("the thread copies Amp keeps on disk (threads live on Amp's servers); tool results from `run`; "
             "format undocumented by Amp: read as the peer parsers read it")
    override = "`CRABSEARCH_AMP_DIR=DIR` (Amp has no variable of its own; `XDG_DATA_HOME` moves it)"
    upstream = ("no public source or format doc (Amp is closed); agentsview `internal/parser/amp.go` @ 53860074, "
                "cass `franken_agent_detection/src/connectors/amp.rs` @ 6ae73d5f; formats.md section 6")
    checked = "2026-12-06: agentsview 53860074"
    known_kinds = {"block": BLOCK_TYPES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_AMP_DIR``; else ``$XDG_DATA_HOME/amp`` (else ``~/.local/share/amp``) and
        the VS Code extensions' ``globalStorage/sourcegraph.amp`` that exist."""
        if env.get(self.env_var):
            return [env_dir(env, self.env_var, home)]
        data = env_dir(env, "XDG_DATA_HOME", home / ".local" / "share") / "amp"
        extension = [u / "globalStorage" / "sourcegraph.amp" for u in vscode_user_dirs(env, home)]
        return [data] + [e for e in extension if e.is_dir()]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``threads/T-*.json`` under the data dir, ``**/T-*.json`` under an extension's storage."""
        for i, root in enumerate(self.roots(env, home)):
            yield from walk_files(root, "threads/T-*.json" if i == 0 else "**/T-*.json")

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The whole file, always from 0 (``start``/``state`` ignored). Raises ``OSError`` when it
        cannot be read; a broken file or message is skipped and counted."""
        path = Path(path)
        data, size = read_whole(str(path))
        stats = LineStats(end_offset=size)
        thread = data if isinstance(data, dict) else {}
        if data is None:
            stats.skip("broken JSON")
        elif not isinstance(data, dict):
            stats.skip("not a thread")
        sid = path.stem if path.stem.startswith("T-") else string(thread.get("id")) or path.stem
        session = Session(agent=self.agent, session_id=sid, path=str(path))
        state: dict = {"next_index": 0}
        messages: list[Message] = []
        msgs = thread.get("messages")
        for n, m in enumerate(msgs if isinstance(msgs, list) else ()):
            if isinstance(m, dict):
                self.take(Record(m, n, 1), state, session, messages, stats, f"message {n}", _take)
            else:
                stats.skip("not a JSON object", f"message {n}")
        self.take(Record(thread, 0, 0), state, session, [], stats, "session fields", _fields)
        if session.updated is None:
            session.touch(parse_ts(os.stat(path).st_mtime))
        state.pop("pending", None)
        self._seal(state, session, stats)
        return FileRead(session, messages, size, state, stats)

    def finish(self, state: dict, session: Session) -> None:
        """Title: the thread's ``title``, else the first prompt."""
        session.title = state.get("title") or state.get("first_prompt") or None
        session.anchor_index = state.get("anchor", 0)

    def fingerprint(self, path: str, size: int) -> str:
        """SHA-1 of the whole file: a rewrite is never taken for an append. Raises ``OSError``."""
        return hashlib.sha1(read_file(path)).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """Message number ``offset`` of the (cached) parsed thread, or None. Raises ``OSError``."""
        data = read_whole(path)[0]
        msgs = data.get("messages") if isinstance(data, dict) else None
        if isinstance(msgs, list) and 0 <= offset < len(msgs) and isinstance(msgs[offset], dict):
            return msgs[offset]
        return None

    def locate(self, path: str, offset: int) -> tuple[str, int] | None:
        """None: a message's offset is its position in the thread, not a place in the file."""
        return None

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && amp threads continue <id>`` (formats.md section 6)."""
        return cd_and(session.project, ["amp", "threads", "continue", session.session_id])


def _fields(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """Title, project and creation time from the thread object."""
    thread = rec.obj
    title = string(thread.get("title")).strip()
    if title:
        state["title"] = capped(title, TITLE_CAP)
    session.touch(parse_ts(thread.get("created")))
    env = thread.get("env")
    initial = env.get("initial") if isinstance(env, dict) else None
    trees = initial.get("trees") if isinstance(initial, dict) else None
    tree = trees[0] if isinstance(trees, list) and trees and isinstance(trees[0], dict) else {}
    uri = string(tree.get("uri"))
    if uri.startswith("file:"):
        session.project = unquote(urlsplit(uri).path) or None


def _take(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """One message: its pieces and its time (``meta.sentAt``, ``usage.timestamp``)."""
    m = rec.obj
    meta, usage = m.get("meta"), m.get("usage")
    ts = parse_ts(meta.get("sentAt")) if isinstance(meta, dict) else None
    ts = ts or (parse_ts(usage.get("timestamp")) if isinstance(usage, dict) else None)
    session.touch(ts)
    content = m.get("content")
    for b in content if isinstance(content, list) else ():
        if isinstance(b, dict) and (not isinstance(b.get("type"), str) or b["type"] not in BLOCK_TYPES):
            note_unknown(state, b.get("type"))
    emit(pieces_of(m), rec, state, out, ts)


def pieces_of(m: dict) -> list[Piece]:
    """The pieces of one message (stateless; tool results are paired by call id)."""
    role = m.get("role")
    content = m.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    out: list[Piece] = []
    for b in blocks if isinstance(blocks, list) else ():
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text" and string(b.get("text")).strip():
            if role == "user":
                out.append(Piece(Role.USER, LABEL_USER, b["text"], prompt=True))
            elif role == "assistant":
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, b["text"]))
        elif kind == "thinking" and string(b.get("thinking")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, b["thinking"]))
        elif kind == "tool_use":
            name = string(b.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(b.get("input")), name,
                             call_id=string(b.get("id")) or None))
        elif kind == "tool_result":
            call_id = string(b.get("toolUseID")) or string(b.get("tool_use_id")) or None
            text = _run_text(b.get("run")) if "run" in b else _content_text(b.get("content"))
            if text:
                out.append(Piece(Role.TOOL, None, text, call_id=call_id))
    return out


def _run_text(run) -> str:
    """A tool run as text: its result, else its error message or ``[cancelled]``."""
    if not isinstance(run, dict):
        return ""
    result = run.get("result")
    if result is not None:
        return _result_text(result)
    status = run.get("status")
    if status == "error":
        error = run.get("error")
        return (string(error.get("message")) if isinstance(error, dict) else "") or "[error]"
    return "[cancelled]" if status == "cancelled" else ""


def _result_text(result) -> str:
    """``run.result``: a string as it is, an object's ``output`` / ``content`` / ``diff``, a list
    of strings one a line, else JSON (agentsview ``serializeAmpResult``)."""
    if isinstance(result, dict):
        for key in ("output", "content", "diff"):
            if key in result:
                return _result_text(result[key])
    if isinstance(result, list) and result and all(isinstance(r, str) for r in result):
        return "\n".join(result)
    return dump_text(result) if not isinstance(result, str) else result


def _content_text(content) -> str:
    """An Anthropic ``tool_result`` content: a string, or its text blocks."""
    if isinstance(content, list):
        return "\n".join(string(c.get("text")) for c in content if isinstance(c, dict) and string(c.get("text")))
    return string(content)


SOURCE = AmpSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

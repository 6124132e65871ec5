"""Kiro CLI sessions: ``~/.kiro/sessions/cli/<session id>.jsonl`` with ``<session id>.json`` beside.

Kiro CLI is closed source (kiro.dev/license); its documentation (kiro.dev/docs/cli/chat/
session-management) names the per-directory auto-save and ``--resume-id`` but no file format. The
rules follow the peer parsers and their recordings of real sessions: Irrlicht
``core/adapters/inbound/agents/kirocli/parser.go`` and ``replaydata/agents/kiro-cli/`` (Kiro CLI
2.5.1 and later) at 344d00e3, and agentsview ``internal/parser/kiro.go`` at 53860074:

* **Where**: ``$KIRO_HOME/sessions/cli/`` (the variable Kiro reads), else ``~/.kiro/sessions/cli/``.
  Not read: the SQLite store some releases keep (``~/.local/share/kiro-cli/data.sqlite3``, table
  ``conversations_v2``, which agentsview reads; Kiro's documentation names a database but not its
  schema) and the per-workspace layout Irrlicht reports for Kiro CLI 3 (undocumented).
* **Lines**: ``{"version": "v1", "kind": K, "data": {message_id, content: [blocks], meta:
  {timestamp (epoch s)}}}`` with ``K`` ``Prompt`` (blocks ``{"kind": "text", "data": str}``),
  ``AssistantMessage`` (``text`` and ``toolUse`` blocks: ``{toolUseId, name, input}``),
  ``ToolResults`` (``toolResult`` blocks: ``{toolUseId, content: [{kind: text | json, data}],
  status}``) and ``Clear`` (``/clear``: the conversation goes on in the same file). Other kinds
  and block kinds are counted.
* **Rewinds**: restoring a checkpoint appends the kept messages again with their own
  ``message_id``; a ``Prompt`` whose id was seen before starts such a copy, and the messages from
  its first copy on are listed as rewound (``extra["rewound"]``, ``[first, end)`` ranges).
* **The sidecar** ``<id>.json`` (re-read on every read: Kiro rewrites it): ``session_id``, ``cwd``,
  ``title``, ``created_at``, ``updated_at``.
* **Session fields**: id the sidecar's ``session_id`` (else the file name); title ``title``, else
  the first prompt; project ``cwd``; times the sidecar's and the prompts'. Resume: ``cd <cwd> &&
  kiro-cli chat --resume-id <id>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record, read_whole
from ..model import LABEL_ASSISTANT, LABEL_USER, Message, Role, Session, tool_call_label
from .base import FileRead, Source, capped, cd_and, dump_text, env_dir, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, abandon, emit, piece_text

LINE_KINDS = frozenset({"Prompt", "AssistantMessage", "ToolResults", "Clear"})
BLOCK_KINDS = frozenset({"text", "toolUse", "toolResult", "image"})
TITLE_CAP = 200
PROMPTS_KEPT = 128
"""Prompt ids remembered to recognise a checkpoint's copy (the newest kept; a rewind past them
reads the copies as new messages)."""


class KiroSource(Source):
    """Kiro CLI sessions (JSONL plus a metadata sidecar), one session per file."""

    agent = "kiro"
    order = 330
    env_var = "KIRO_HOME"
    display = "Kiro CLI"
    badge = "Kiro"
    style = "bold white on purple4"
    locations = "`~/.kiro/sessions/cli/<id>.jsonl` + `<id>.json`"
    reads = ("the sidecar's title and folder; checkpoint rewinds listed as rewound; not the SQLite store some "
             "releases keep (`~/.local/share/kiro-cli/data.sqlite3`) nor Kiro CLI 3's per-workspace layout: "
             "formats undocumented")
    override = "`KIRO_HOME=DIR` (Kiro's own)"
    upstream = ("no public source (Kiro CLI is closed; its docs name no format); Irrlicht "
                "`core/adapters/inbound/agents/kirocli/parser.go` and its Kiro 2.5 recordings @ 344d00e3, "
                "agentsview `internal/parser/kiro.go` @ 53860074")
    checked = "2026-12-06: Irrlicht 344d00e3 (Kiro CLI 2.5.1 recordings)"
    known_kinds = {"line": LINE_KINDS, "block": BLOCK_KINDS}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$KIRO_HOME``, else ``~/.kiro``."""
        return [env_dir(env, self.env_var, home / ".kiro")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/cli/*.jsonl``."""
        for root in self.roots(env, home):
            yield from walk_files(root / "sessions" / "cli", "*.jsonl")

    def new_state(self, path: Path) -> dict:
        return {"meta": _sidecar(path)}

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The shared JSONL loop, with the sidecar re-read on every call."""
        if state is not None and start:
            state = dict(state, meta=_sidecar(path))
        return super().read(path, start, state)

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        kind, data = obj.get("kind"), obj.get("data")
        if not isinstance(kind, str) or kind not in LINE_KINDS:
            note_unknown(state, kind)
            return
        if not isinstance(data, dict):
            return
        meta = data.get("meta")
        ts = parse_ts(meta.get("timestamp")) if isinstance(meta, dict) else None
        session.touch(ts)
        content = data.get("content")
        for b in content if isinstance(content, list) else ():
            if isinstance(b, dict) and (not isinstance(b.get("kind"), str) or b["kind"] not in BLOCK_KINDS):
                note_unknown(state, b.get("kind"))
        mid = string(data.get("message_id"))
        if mid and kind == "Prompt":
            seen = state.setdefault("prompts", {})
            if mid in seen and seen[mid] < state["next_index"]:
                first = seen[mid]  # a checkpoint restored: what follows copies the kept messages
                abandon(state, first, state["next_index"], keep=64)
                state["prompts"] = seen = {k: v for k, v in seen.items() if v < first}
            seen[mid] = state["next_index"]
            while len(seen) > PROMPTS_KEPT:
                del seen[next(iter(seen))]
        emit(pieces_of(obj), rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        """Session id, title, project and times from the sidecar; the rewound ranges."""
        meta = state.get("meta") or {}
        session.session_id = meta.get("session_id") or session.session_id
        session.title = meta.get("title") or state.get("first_prompt") or None
        session.project = meta.get("cwd") or None
        session.touch(parse_ts(meta.get("created_at")))
        session.touch(parse_ts(meta.get("updated_at")))
        if state.get("off"):
            session.extra["rewound"] = [list(r) for r in state["off"]]
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && kiro-cli chat --resume-id <id>``."""
        return cd_and(session.project, ["kiro-cli", "chat", "--resume-id", session.session_id])


def _sidecar(path: Path) -> dict:
    """``session_id``, ``cwd``, ``title``, ``created_at`` and ``updated_at`` of the ``<id>.json``
    beside ``path`` (strings only; the title masked and capped); ``{}`` when missing or broken."""
    try:
        data = read_whole(str(path.with_suffix(".json")))[0]
    except OSError:
        return {}
    if not isinstance(data, dict):
        return {}
    out = {k: data[k] for k in ("session_id", "cwd", "created_at", "updated_at") if string(data.get(k))}
    title = string(data.get("title")).strip()
    if title:
        out["title"] = capped(" ".join(title.split()), TITLE_CAP)
    return out


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one line (stateless; tool results are paired by call id)."""
    kind, data = obj.get("kind"), obj.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    out: list[Piece] = []
    for b in content if isinstance(content, list) else ():
        if not isinstance(b, dict):
            continue
        block, value = b.get("kind"), b.get("data")
        if block == "text" and string(value).strip():
            if kind == "Prompt":
                out.append(Piece(Role.USER, LABEL_USER, value, prompt=True))
            elif kind == "AssistantMessage":
                out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, value))
        elif block == "toolUse" and kind == "AssistantMessage" and isinstance(value, dict):
            name = string(value.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(value.get("input")), name,
                             call_id=string(value.get("toolUseId")) or None))
        elif block == "toolResult" and kind == "ToolResults" and isinstance(value, dict):
            text = _result_text(value)
            if text:
                out.append(Piece(Role.TOOL, None, text, call_id=string(value.get("toolUseId")) or None))
    return out


def _result_text(result: dict) -> str:
    """A tool result's ``content`` items as text (``text`` as it is, ``json`` as JSON), else
    ``[error]`` when its ``status`` is not ``success``."""
    items = result.get("content")
    parts = [string(c.get("data")) if c.get("kind") == "text" else dump_text(c.get("data"))
             for c in (items if isinstance(items, list) else ()) if isinstance(c, dict)]
    text = "\n".join(p for p in parts if p)
    status = result.get("status")
    return text or ("[error]" if isinstance(status, str) and status != "success" else "")


SOURCE = KiroSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

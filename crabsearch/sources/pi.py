"""pi-coding-agent sessions, and the pi session format v3 that OpenClaw shares (``openclaw.py``).

Layout (formats.md section 6, "pi-coding-agent"): ``$PI_CODING_AGENT_SESSION_DIR`` (else
``$PI_CODING_AGENT_DIR/sessions``, else ``~/.pi/agent/sessions``) holding
``--<cwd, / as ->--/<ISO time, : and . as ->_<uuid>.jsonl``; a custom session dir may be flat,
so every ``*.jsonl`` below the root is a session. Resume: ``pi --session <id>`` in the cwd.

Entries (formats.md 4.2, pi ``session-manager.ts``): line 1 is the header ``{type: "session",
version, id, timestamp, cwd, parentSession?}``; every other entry has ``type``, ``id``,
``parentId`` and ``timestamp``. What becomes a message (7.3):

* ``message`` by ``message.role``: ``user`` text (images ``[image]``) -> user prompt;
  ``assistant`` blocks -> ``thinking``, text (blocks of one message joined into one message)
  and ``toolCall`` (``tool-call:<name>``, arguments as JSON); an assistant turn without content
  but with ``errorMessage`` -> system; ``toolResult`` -> ``tool:<toolName>``; ``bashExecution``
  (the user's ``!cmd``) -> user ``! cmd`` plus a ``tool:bash`` result with its output;
  ``branchSummary`` / ``compactionSummary`` -> summary; ``custom`` / ``hookMessage`` /
  ``system`` -> system.
* ``compaction`` and ``branch_summary`` entries -> summary messages; ``custom_message``
  (extension-injected context) -> system; other entry types carry no text.
* v1 lines without ``id``/``parentId`` are chained to the previous entry (pi's v1 -> v2 rule).

Tree (formats.md 4.3): the active branch is the path from the last entry back to the root
through ``parentId``. OpenClaw (2026.9.6 on npm, ``dist/session-manager-*.mjs``
``appendLeafControl`` / ``createLeafControl``) also writes ``{type: "leaf", id, parentId,
targetId, appendParentId?, appendMode?}`` when it moves the active leaf (navigating the tree):
it links to ``targetId``, so the branch ends there until entries follow it. A ``parentId`` naming a ``toolCall`` block id (seen in the
``agent-sessions`` fixtures) leads to the entry holding that call (the latest
:data:`CALLS_KEPT` calls are remembered). Every entry stays searchable;
the messages of entries off the active branch are listed in ``Session.extra["off_branch"]`` as
``[start, end)`` message-index ranges (absent when every message is on the branch).

Title (pi ``buildSessionInfo``): the latest ``session_info.name``, else the first user prompt
on the active branch among the first :data:`PROMPTS_KEPT` prompts (else the first prompt). Summary: the text of the latest
``compaction`` / ``branch_summary`` entry on the active branch. Project: header ``cwd``; no git
branch. Session id: header ``id``, else the uuid after the last ``_`` of the file name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER,
                     Message, Role, Session, tool_call_label, tool_result_label)
from .base import capped, Source, cd_and, dump_text, first_line, note_unknown, parse_ts, string, walk_files
from .pieces import Piece, emit, note_compaction, piece_text

SUMMARY_CAP = 8192
"""Characters of a compaction summary kept on the Session and in state (messages keep it all)."""
SUMMARIES_KEPT = 16
"""Summary entries remembered in state (the latest on the active branch becomes the summary)."""
TREE_CAP = 200_000
"""Entries whose parent links are kept; past this, later entries count as on the branch."""
PROMPTS_KEPT = 64
"""Earliest user-prompt entries remembered as title candidates (beyond them, the first prompt)."""
CALLS_KEPT = 64
"""Latest toolCall ids remembered to resolve a ``parentId`` that names a call."""

_STAMP = re.compile(r"^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{1,2}:\d{2}[^\]]*\]\s*")
_SENDER = ("Sender (untrusted metadata)", "Conversation info (untrusted metadata)")


KNOWN_KINDS = frozenset({"session", "message", "thinking_level_change", "model_change", "compaction",
                         "branch_summary", "custom", "label", "session_info", "custom_message", "reset",
                         "leaf"})
"""Entry types of the v3 format (badlogic/pi-mono ``packages/coding-agent/src/core/session-manager.ts``
at 83378aad7e74; ``reset``: OpenClaw, formats.md 4.2; ``leaf``: OpenClaw 2026.9.6, see
:meth:`V3Source.process`); any other is counted as drift
(:func:`~crabsearch.sources.base.note_unknown`) and listed by ``crabsearch status``."""


class V3Source(Source):
    """The pi session format v3 (one session per JSONL file). Subclasses give the layout, the
    session id fallback (:meth:`id_from_path`) and stored titles (:meth:`stored_title`)."""

    known_kinds = {"line": KNOWN_KINDS}
    title_from_branch = True
    """Title from the first prompt on the active branch (OpenClaw); False: the first user
    message in file order, as pi's own session picker shows it."""

    def new_state(self, path: Path) -> dict:
        """Empty tree (``tree``: entry id -> ``[parentId, first message index, count]``), prompt
        entries (``prompts``: id -> ``[index, title]``), summary entries (``sums``) and recent
        tool call ids (``calls``: call id -> entry id)."""
        return {"tree": {}, "prompts": {}, "sums": {}, "calls": {}}

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One entry: the header's id and cwd, tree links, ``session_info`` names, messages."""
        obj = rec.obj
        kind = obj.get("type")
        ts = parse_ts(obj.get("timestamp"))
        if kind == "session":
            if string(obj.get("id")) and not state.get("sid"):
                state["sid"] = obj["id"]
            if string(obj.get("cwd")) and not session.project:
                session.project = obj["cwd"]
            if string(obj.get("parentSession")):
                session.extra["parent_session"] = obj["parentSession"]
            session.touch(ts)
            return
        msg = obj.get("message")
        if kind is None and isinstance(msg, dict):
            kind = "message"  # v1 lines
        if not isinstance(kind, str) or kind not in self.known_kinds["line"]:
            note_unknown(state, kind)
        if not isinstance(kind, str):
            return
        if ts is None and isinstance(msg, dict):
            ts = parse_ts(msg.get("timestamp"))
        session.touch(ts)
        eid = string(obj.get("id")) or f"@{rec.offset}"
        parent = obj.get("parentId") if "parentId" in obj else state.get("last")
        if kind == "leaf":  # OpenClaw's leaf control moves the active leaf to ``targetId``
            parent = obj.get("targetId")
        parent = parent if isinstance(parent, str) and parent else None
        if parent not in state["tree"] and parent in state["calls"]:
            parent = state["calls"][parent]  # a toolResult's parentId may name its call
        if kind == "session_info" and string(obj.get("name")).strip():
            state["name"] = obj["name"].strip()
        pieces = self.pieces(obj)
        base, first = len(out), state["next_index"]
        if kind == "compaction":
            note_compaction(session, first)  # formats.md 4.2: its summary replaces older entries
        emit(pieces, rec, state, out, ts)
        if string(obj.get("id")):
            for m in out[base:]:
                m.uid = f"{eid}:{m.part}"  # a fork copies the entries with their ids (formats.md 4.3)
        tree = state["tree"]
        if len(tree) < TREE_CAP:
            tree[eid] = [parent, first, len(out) - base]
        calls = state["calls"]
        for cid in _call_ids(msg) if kind == "message" else ():
            calls.pop(cid, None)
            calls[cid] = eid
            while len(calls) > CALLS_KEPT:
                del calls[next(iter(calls))]
        state["last"] = eid
        for p, m in zip(pieces, out[base:]):
            if p.prompt and eid not in state["prompts"] and len(state["prompts"]) < PROMPTS_KEPT:
                state["prompts"][eid] = [m.message_index, first_line(clean_prompt(p.text), 80)]
            if p.role is Role.SUMMARY and kind in ("compaction", "branch_summary"):
                sums = state["sums"]
                sums.pop(eid, None)
                sums[eid] = capped(p.text, SUMMARY_CAP)
                while len(sums) > SUMMARIES_KEPT:
                    del sums[next(iter(sums))]

    def finish(self, state: dict, session: Session) -> None:
        """Session id, title (:meth:`stored_title` > ``session_info`` name > first prompt on the
        active branch > first prompt), anchor, summary and off-branch ranges (module docstring)."""
        session.session_id = state.get("sid") or self.id_from_path(Path(session.path))
        branch = active_branch(state)
        on = set(branch)
        prompt = next((state["prompts"][e] for e in branch if e in state["prompts"]), None) \
            if self.title_from_branch else None
        if prompt is None and state["prompts"]:
            prompt = next(iter(state["prompts"].values()))
        session.anchor_index = prompt[0] if prompt else 0
        session.title = (self.stored_title(state, session) or state.get("name")
                         or (prompt[1] if prompt else None) or None)
        session.summary = next((state["sums"][e] for e in reversed(branch) if e in state["sums"]), None)
        off = sorted([first, first + n] for e, (_, first, n) in state["tree"].items() if n and e not in on)
        ranges: list[list[int]] = []
        for lo, hi in off:
            if ranges and lo <= ranges[-1][1]:
                ranges[-1][1] = max(ranges[-1][1], hi)
            else:
                ranges.append([lo, hi])
        if ranges and len(on) < TREE_CAP:
            session.extra["off_branch"] = ranges
        else:
            session.extra.pop("off_branch", None)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        """Text of piece ``part`` of entry ``obj`` (same extraction as :meth:`process`)."""
        return piece_text(self.pieces(obj), part, label)

    def pieces(self, obj: dict) -> list[Piece]:
        """The pieces of one entry (:func:`entry_pieces`; a fork with more message roles adds
        its own)."""
        return entry_pieces(obj)

    def id_from_path(self, path: Path) -> str:
        """The session id when the header has none: the file stem."""
        return path.stem

    def stored_title(self, state: dict, session: Session) -> str | None:
        """A title the agent keeps outside the transcript (none for pi)."""
        return None


class PiSource(V3Source):
    """pi-coding-agent (formats.md section 6; format 4.2-4.3). One session per file.

    Title (rule 18): as pi's own session picker shows it (badlogic/pi-mono
    ``packages/coding-agent/src/core/session-manager.ts`` ``buildSessionInfo`` and
    ``modes/interactive/components/session-selector.ts``, at 83378aad7e74): the latest
    ``session_info`` name, else the first user message in file order, whichever branch it is on.
    """

    title_from_branch = False
    agent = "pi"
    order = 80
    env_var = "PI_CODING_AGENT_SESSION_DIR"
    locations = "`~/.pi/agent/sessions/**/*.jsonl`"
    reads = "branches; the title as pi's picker shows it"
    override = "`PI_CODING_AGENT_SESSION_DIR=DIR`"
    upstream = "pi's `session-manager.ts` (session format v3); formats.md sections 4.2 and 6"
    display = "pi"
    badge = "pi"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$PI_CODING_AGENT_SESSION_DIR``, else ``$PI_CODING_AGENT_DIR/sessions``, else
        ``~/.pi/agent/sessions``."""
        for name, sub in (("PI_CODING_AGENT_SESSION_DIR", ""), ("PI_CODING_AGENT_DIR", "sessions")):
            value = env.get(name)
            if value:
                return [Path(value).expanduser() / sub if sub else Path(value).expanduser()]
        return [home / ".pi" / "agent" / "sessions"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Every ``*.jsonl`` under the root (``--<cwd>--/`` directories, or flat)."""
        for root in self.roots(env, home):
            yield from walk_files(root, "**/*.jsonl")

    def id_from_path(self, path: Path) -> str:
        """``<ISO time>_<uuid>.jsonl`` -> ``<uuid>``."""
        return path.stem.rpartition("_")[2] or path.stem

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && pi --session <id>`` (formats.md section 6)."""
        return cd_and(session.project, ["pi", "--session", session.session_id])


# -- the tree ------------------------------------------------------------------------------------


def active_branch(state: dict) -> list[str]:
    """Entry ids from the root to the last entry, following ``parentId`` (unknown parents end
    the walk; a cycle is walked once)."""
    tree, node, path, seen = state["tree"], state.get("last"), [], set()
    while node is not None and node not in seen:
        seen.add(node)
        path.append(node)
        link = tree.get(node)
        node = link[0] if link else None
    path.reverse()
    return path


def _call_ids(msg) -> list[str]:
    if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
        return []
    return [b["id"] for b in msg["content"]
            if isinstance(b, dict) and b.get("type") == "toolCall" and string(b.get("id"))]


def clean_prompt(text: str) -> str:
    """A user text without OpenClaw's channel envelope (a leading "Sender (untrusted
    metadata)" block ending in a code fence, and a ``[Sun 2026-03-08 22:03 GMT+9]`` stamp),
    formats.md 4.2. Used for titles only; the message keeps the full text."""
    s = text.lstrip()
    while s.startswith(_SENDER):
        fence = s.find("```")
        end = s.find("```", fence + 3) if fence >= 0 else -1
        if end < 0:
            break
        s = s[end + 3:].lstrip()
    return _STAMP.sub("", s) or text


# -- stateless extraction --------------------------------------------------------------------------


def entry_pieces(obj: dict) -> list[Piece]:
    """The pieces of one v3 entry, in order (module docstring)."""
    kind = obj.get("type")
    if kind == "message" or (kind is None and isinstance(obj.get("message"), dict)):
        return message_pieces(obj.get("message"))
    if kind in ("compaction", "branch_summary"):
        text = string(obj.get("summary"))
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text.strip() else []
    if kind == "custom_message":
        text = content_text(obj.get("content"))
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
    return []


def message_pieces(m) -> list[Piece]:
    """The pieces of one ``message`` object by its ``role``."""
    if not isinstance(m, dict):
        return []
    role, content = m.get("role"), m.get("content")
    if role == "user":
        text = content_text(content)
        real = any(t.strip() and t != "[image]" for t in text.split("\n"))
        return [Piece(Role.USER, LABEL_USER, text, prompt=real)] if text.strip() else []
    if role == "assistant":
        return _assistant(m)
    if role == "toolResult":
        name, call = string(m.get("toolName")), string(m.get("toolCallId")) or None
        if name:
            return [Piece(Role.TOOL, tool_result_label(name), content_text(content), name, call)]
        # no toolName: named by pairing with its call (emit), else "unknown"
        return [Piece(Role.TOOL, None if call else tool_result_label("unknown"), content_text(content),
                      None if call else "unknown", call)]
    if role == "bashExecution":
        cmd, output = string(m.get("command")), string(m.get("output"))
        return [Piece(Role.USER, LABEL_USER, "! " + cmd), Piece(Role.TOOL, tool_result_label("bash"), output, "bash")]
    if role in ("branchSummary", "compactionSummary"):
        text = string(m.get("summary")) or content_text(content)
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text.strip() else []
    if role in ("custom", "hookMessage", "system"):
        text = content_text(content)
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
    return []


def _assistant(m: dict) -> list[Piece]:
    content = m.get("content")
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    pieces: list[Piece] = []
    texts: list[str] = []
    slot = None
    for b in blocks:
        b = {"type": "text", "text": b} if isinstance(b, str) else b
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind in ("text", "image"):
            text = "[image]" if kind == "image" else string(b.get("text"))
            if text.strip():
                if slot is None:
                    slot = len(pieces)
                    pieces.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, ""))
                texts.append(text)
        elif kind == "thinking":
            text = string(b.get("thinking"))
            if text.strip():
                pieces.append(Piece(Role.ASSISTANT, LABEL_THINKING, text))
        elif kind == "toolCall":
            name = string(b.get("name")) or "unknown"
            args = b.get("arguments") if b.get("arguments") is not None else b.get("partialJson")
            pieces.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(args), name,
                                string(b.get("id")) or None))
    if slot is not None:
        pieces[slot] = Piece(Role.ASSISTANT, LABEL_ASSISTANT, "\n".join(texts))
    if not pieces and string(m.get("errorMessage")).strip():
        pieces.append(Piece(Role.SYSTEM, LABEL_SYSTEM, m["errorMessage"]))
    return pieces


def content_text(content) -> str:
    """A ``content`` string, or its ``text`` blocks joined with ``\\n`` (images ``[image]``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for b in content:
        if isinstance(b, str):
            out.append(b)
        elif isinstance(b, dict):
            if b.get("type") == "image":
                out.append("[image]")
            elif string(b.get("text")):
                out.append(b["text"])
    return "\n".join(out)


SOURCE = PiSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

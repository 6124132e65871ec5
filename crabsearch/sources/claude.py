"""Claude Code transcripts: ``<root>/projects/<slug>/<session>.jsonl`` plus subagent files.

Rules come from ``shared/reference/formats.md`` section 1 (1.1 layout, 1.2 line envelope and
injected user text, 1.3 record types, 1.4 compaction and sidechains, 1.5 title order, 1.6 resume)
and 7.3 (role mapping). Decisions the spec leaves open:

* Tool results are kept even on ``isMeta`` lines (current builds mark tool-result lines isMeta);
  ``isMeta`` only drops the line's text.
* A file is a subagent transcript when its name is ``agent-<id>.jsonl`` (``<id>`` letters, digits
  and ``-``, and under a ``subagents/`` folder also ``_``), wherever it lies (formats.md 1.1): ``agent-aside_question-<hash>.jsonl``, the
  copy of the session a side question (``/btw``) ran on, is its parent's subagent, never a second
  copy of the parent (it holds the parent's ``sessionId`` and message ids). Claude Code 2.1.332
  writes no such file any more (``querySource:"side_question"`` with ``skipTranscript:!0``,
  ``chunk-8vrwrv9m.js``); earlier releases left them in real homes.
* What the user typed stays searchable: a slash command (a ``user`` line, or a ``system``
  ``local_command`` line) becomes a ``user`` message showing the command and its arguments
  (``/orchestrator @CLAUDE.md build the plan``), and ``<bash-input>`` a ``user`` message
  ``! cmd``; each is its own message, never merged with the line's prompt text. Bash mode's
  answer, a ``user`` line ``<bash-stdout>OUT</bash-stdout><bash-stderr>ERR</bash-stderr>`` (or
  ``<bash-stderr>`` alone: ``Command failed: …``, ``Not run: …``; the handler ``he`` in
  ``/$bunfs/root/chunk-7p91pemn.js`` of Claude Code 2.1.332), is split: its stderr is what the
  person read and pastes back later, a ``user`` message labelled :data:`LABEL_STDERR` (indexed
  as their text, masked as all text is); its stdout a tool result of ``bash-mode`` (it can be
  anything, ``!env``, ``!cat .env``: indexed only with tool output on). Neither is a real
  prompt (formats.md 1.5 skips commands); a command *with arguments* is the title and anchor only
  of a session without any real prompt, and a bare command (``/init``) of one without either (as
  Claude Code's resume list: ``commandFallback`` in ``yLt``, ``chunk-fn7g10bh.js`` of 2.1.332). A slash
  command's output (``<local-command-stdout>``) becomes a tool result of the pseudo tool
  ``local-command`` (it may hold secrets, like any tool output). Other injected text is dropped.
* Lines with ``isSidechain: true`` in a file that is not a subagent file (Claude Code <= 1.0.x
  writes subagent turns inline into the parent file, formats.md 1.1) stay messages, but their
  prompts are the parent agent's task prompts: they never supply the title or anchor, except in a
  file holding no other conversation line (a subagent transcript under another name). In a
  subagent file the first prompt (the parent's task) is the subagent session's title.
* Assistant text of locally generated replies (``model: "<synthetic>"``, ``isApiErrorMessage``)
  is a ``system`` message.
* A ``summary`` line is a title candidate only when its ``leafUuid`` is a line of *this* file seen
  among the last :data:`UUID_WINDOW` conversation lines before it, or on a line after it (up to
  :data:`PENDING_SUMMARIES` summaries wait). Summaries without ``leafUuid`` or pointing into other
  files are ignored (searching other files is the job of a cross-file pass, not of one read).
* Repeated blocks of one API reply (same ``message.id``, same block content or tool_use id) are
  yielded once; only the current reply's keys are kept.
* A ``user`` or ``assistant`` line whose ``message`` is not an object, or whose
  ``message.content`` is neither a string nor a list (1.2), has nothing to read: it is skipped and
  counted (``bad field``, :class:`~crabsearch.sources.base.BadRecord`) like a broken line, and
  leaves nothing else behind. A content list is read in part: blocks that are not blocks are
  passed over. A ``timestamp`` that is not an ISO-8601 string (1.2) is no time: the line's
  messages have none, and the session's start and end ignore it (``12345`` is not 1970).

Current formats (Claude Code is closed, so these follow other tools' parsers and bug
reports):

* **Queued prompts** (rule 1): a prompt typed while the agent is busy is written as an
  ``attachment`` line ``{"attachment": {"type": "queued_command", "commandMode": "prompt",
  "prompt": str | [blocks]}}``, often with no ``user`` line at all (kenn-io/agentsview#401 /
  #406, commit 11292570d936; kenn-io/agentsview ``internal/parser/claude.go``
  ``extractQueuedCommand`` at 538600744d1b). It is a ``user`` message and a real
  prompt; ``commandMode: "bash"`` is ``! cmd`` (user text, not a prompt); ``isMeta`` and injected
  text (``<task-notification>``...) are dropped as on user lines. A ``user`` line repeating a
  queued prompt just seen (the queue was drained normally: ``queue-operation`` ``dequeue``, then
  the line) is not yielded twice. ``queue-operation`` lines themselves yield nothing.
* **Injected turns**: a ``user`` line or queued prompt whose ``origin.kind`` is not ``human``
  (``auto-continuation``, ``task-notification``, ``coordinator``, ``plugin``, ``channel``,
  ``voice-call``, ``observer-activity``, ``peer``, ...: the ``origin`` union ``$r`` in
  ``chunk-xv20h9sv.js`` of Claude Code 2.1.332; Claude's prompt-time test ``dHi`` in
  ``chunk-4x8p6zpg.js`` skips every kind but ``human``), and user text that opens with a tag
  (:data:`_TAGGED`: ``<ide_opened_file>``, ``<cross-session-message ...>``, ``<wake ...>``;
  Claude's title functions ``vMe``/``yLt`` skip it) were written by the app, not typed by the
  person: each is a ``system`` message labelled by its origin kind or tag name (a peer's reads
  ``message from <from>: ...``), never the title or anchor, and not indexed as the user's words.
  The tags this reader already drops (:data:`_INJECTED`) stay dropped. A tag that is not the
  harness's (:func:`_harness_tag`: ``<div>``, ``<template>`` pasted by the person) leaves the text
  the user's, searchable, but never the title, as in Claude.
* **Sidecars** (Claude Code 2.1.332, ``chunk-4x8p6zpg.js``): ``projects/<slug>/<session
  id>/custom-title.json`` ``{customTitle, by, at}`` (``cHi``) names the session after the last
  ``custom-title`` line and before the ``ai-title`` (``v`` in ``chunk-vzj0gytf.js``);
  ``archived.json`` ``{archived, at, by}`` (``hWn``, at most 4,096 bytes) archives it until the
  person's next prompt after ``at`` (``Zyo``). :meth:`ClaudeSource.stat` folds their mtimes into
  the transcript's, so a change to either refreshes the session.
* **Hand-off to a background session**: a ``continued-in`` line ``{sessionId,
  continuedInSessionId}`` (``hhl``, written into the old transcript by ``KQe`` in
  ``chunk-rc1vwjwv.js`` once the background session runs) links the session to the one that
  carries it on (``Session.extra["continued_in"]``), unless a finished reply or a prompt follows
  it (``zEr``, ``chunk-4x8p6zpg.js``); the old session's resume command resumes the new one.
* **Titles**: a title candidate of punctuation only (``.``) falls through to the next one
  (``base.pick_title``).
* **Rewind to the first prompt** (rule 2): the new prompt is written with ``parentUuid: null``
  (a new root), so no earlier line is its parent. In a file whose lines are linked (a line with
  a parent was seen since the last root) and written by Claude Code >= 2 (1.0-era files put
  ``parentUuid: null`` on every line, formats.md 1.7), such a prompt makes everything since the
  last root (the file's start, or the last compaction) an abandoned branch, exactly like a rewind
  to a later prompt. ``last-prompt`` lines name the active leaf (``leafUuid``); Claude Code only
  ever appends to the active branch, so the branch written last is it, as ``leafUuid`` agrees.
* **Drift**: a line whose ``type`` is none of :data:`KNOWN_KINDS` (which holds every kind Claude
  Code 2.1.332 writes: :data:`METADATA_KINDS`) is counted
  (:func:`~crabsearch.sources.base.note_unknown`) and listed by ``crabsearch status``.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import Record, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER,
                     Message, Role, Session, tool_call_label)
from .base import (KIND_CHARS, bad_field, capped, Source, cd_and, dump_text, first_line, iso_ts, names_something,
                   note_unknown, pick_title, reads_tool_output_files, string, walk_files)
from .pieces import Piece, abandon, emit, note_compaction, piece_text

UUID_WINDOW = 64
"""Hashes of this many most recent line uuids are kept to validate later summary lines."""
CHAIN_WINDOW = 200
"""Lines remembered (uuid hash -> message index after the line) to place a rewind's target
(a rewind further back is not marked; the manifest keeps every file's state, so it stays small)."""
PENDING_SUMMARIES = 8
"""Summary lines kept waiting for their leafUuid to appear later in the file."""
REPLY_KEYS = 64
"""De-duplication keys kept for the current assistant reply (message.id)."""
SUBAGENTS_KEPT = 1000
"""Links from spawning tool calls to subagent sessions kept in ``Session.extra["subagents"]``."""
SUMMARY_CAP = 8192
"""Characters of a compaction summary stored on the Session (the message keeps the full text)."""
TITLE_CAP = 200

_CONVERSATION = frozenset({"user", "assistant", "system", "tool_use", "tool_result", "attachment"})
METADATA_KINDS = frozenset({
    "progress", "file-history-snapshot", "file-history-delta", "last-prompt", "continued-in",
    "resume-head-vouch", "content-replacement", "data-flow-records", "data-flow-incomplete",
    "derived-from", "api-request-shape", "api-request-blob", "api-request", "api-request-resumed",
    "fork-context-ref", "frame-link", "summary", "custom-title", "ended-by-model", "ai-title", "tag",
    "relocated", "agent-name", "agent-color", "agent-setting", "pr-link", "artifact-comment-monitor",
    "artifact-autoreact-ledger", "bridge-session", "history-suppression", "attribution-snapshot",
    "mode", "permission-mode", "isolation-latch", "session-owner", "dev-mods", "memory-mode",
    "atis-latch", "tools-used", "worktree-state", "cost-state", "queue-operation", "observer-ref"})
"""Every line type other than the four conversation types that Claude Code 2.1.332 writes into a
transcript: the keys of its table of line kinds (``var ehr={user:"transcript",...}`` in the
npm package ``@anthropic-ai/claude-code@2.1.332``, ``bin/claude.exe``, embedded module
``/$bunfs/root/chunk-bqhgd24a.js``), which says how a compaction treats each kind. They carry
no conversation; this reader reads ``summary``, the titles, ``continued-in`` and ``last-prompt``
among them and passes over the rest."""
KNOWN_KINDS = _CONVERSATION | METADATA_KINDS | frozenset({"started", "result"})
"""Line types this reader knows: the conversation types, :data:`METADATA_KINDS`, and
``started``/``result`` (seen in the shared corpus); any other is counted as drift."""
QUEUED_KEPT = 8
"""Queued prompts remembered (CRC-32 of their text) to skip a ``user`` line that repeats one."""
_INJECTED = ("Caveat: The messages below were generated by the user while running local commands",
             "[Request interrupted by user", "<system-reminder>", "<task-notification>",
             "<bash-notification>", "<local-command-caveat>", "<user-prompt-submit-hook>")
_SUBAGENT = re.compile(r"agent-[A-Za-z0-9-]+")
_NESTED_SUBAGENT = re.compile(r"agent-[A-Za-z0-9_-]+")
"""Names of subagent files; under ``subagents/`` the id may also hold ``_``
(``agent-aside_question-<hash>``)."""
ASIDE = "agent-aside_question-"
"""The name a side question's copy of its session starts with (``/btw``, releases before 2.1.332)."""
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
"""A session id as Claude Code checks one (``Yj``, ``chunk-fn7g10bh.js`` of 2.1.332)."""
SIDECARS = ("custom-title.json", "archived.json")
"""Files in a session's folder (``projects/<slug>/<session id>/``) that change its fields."""
TITLE_SIDECAR_BYTES = 64 * 1024
ARCHIVED_SIDECAR_BYTES = 4096
"""Claude Code reads at most 4,096 bytes of ``archived.json`` and ignores a larger one (``hWn``,
``g=4096``, ``chunk-4x8p6zpg.js`` of 2.1.332); ``custom-title.json`` has no such bound there."""
_COMMAND = ("<command-name>", "<command-message>", "<command-args>")
LABEL_STDERR = "stderr"
"""Label of the stderr of a command the person ran in bash mode (``!``): their own text."""
_BASH_OUTPUT = ("<bash-stdout>", "<bash-stderr>")
_OUTPUT = {"<local-command-stdout>": "local-command", "<local-command-stderr>": "local-command",
           "<bash-stdout>": "bash-mode", "<bash-stderr>": "bash-mode"}
_OUTPUT_TAGS = re.compile(r"</?(?:local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>")
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_TAGGED = re.compile(r"\s*<([a-z][\w-]*)[\s>]")
r"""Text that opens with a tag (``<ide_opened_file>``, ``<cross-session-message from=...>``,
``<wake ...>``): Claude Code's own test for a turn it wrote in the person's place (``Ust`` /
``zua``, ``/^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])/``, in
``vMe`` and ``yLt``, the first-prompt title functions of 2.1.332: ``/$bunfs/root/chunk-bqhgd24a.js``
and ``chunk-fn7g10bh.js``)."""


_HARNESS_WORDS = frozenset({"wake", "channel", "remote"})
"""One-word tags of Claude Code 2.1.332's injected turns (``<wake ...>``, ``<channel ...>``,
``<remote>`` in its bundle's prompt builders)."""


class ClaudeSource(Source):
    """Claude Code (formats.md section 1). One session per file; subagent files (``agent-*.jsonl``)
    are sessions ``agent-<agentId>`` with ``parent_session_id`` set."""

    agent = "claude"
    order = 10
    env_var = "CLAUDE_CONFIG_DIR"
    locations = ("`~/.claude/projects/*/*.jsonl`, subagents `<session>/subagents/agent-*.jsonl` and legacy "
                 "`agent-*.jsonl`")
    reads = ("prompts typed while the agent was busy (`queued_command` attachments); a rewind, to the first "
             "prompt too, as an abandoned branch; subagents linked to their parent; turns the app wrote in "
             "your place (IDE context, another session's message, an `origin` other than you) shown labelled "
             "by their origin, never the title; renames and archiving in `<session>/custom-title.json` and "
             "`archived.json`; a session handed to a background session linked to it, its resume command "
             "resuming that one; with tool output indexed, a large output's saved file (`tool-results/`) read "
             "whole")
    override = "`CLAUDE_CONFIG_DIR=DIR` (a comma-separated list works too)"
    upstream = "`@anthropic-ai/claude-code` 2.1.332 (its bundled JS); formats.md section 1"
    checked = "2026-12-06: 2.1.332"
    known_kinds = {"line": KNOWN_KINDS}
    display = "Claude Code"
    badge = "Claude"
    style = "bold white on dark_orange3"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CLAUDE_CONFIG_DIR`` (each entry of a comma-separated list), else ``~/.claude``."""
        value = env.get("CLAUDE_CONFIG_DIR") or ""
        dirs = [Path(os.path.expanduser(v.strip())) for v in value.split(",") if v.strip()]
        return dirs or [home / ".claude"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``projects/*/*.jsonl`` (sessions and legacy ``agent-*.jsonl``) and
        ``projects/*/<session>/subagents/**/agent-*.jsonl``; never ``journal.jsonl``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for pattern in ("*/*.jsonl", "*/*/subagents/**/agent-*.jsonl"):
                for path in walk_files(root / "projects", pattern):
                    if path.name != "journal.jsonl" and path not in seen:
                        seen.add(path)
                        yield path

    def stat(self, path: str) -> tuple[int, int, int]:
        """The transcript's ``(size, mtime_ns, ctime_ns)``, its mtime the latest of its own and its
        sidecars' (:data:`SIDECARS`): renaming or archiving a session changes no byte of its
        transcript, and must still refresh it (read again from where it was: no new line, new
        session fields). One ``stat`` of the session's folder, two more when it exists."""
        size, mtime, ctime = super().stat(path)
        folder = path[:-len(".jsonl")] if path.endswith(".jsonl") else None
        if folder and not _is_subagent(Path(path)) and os.path.isdir(folder):
            for name in SIDECARS:
                try:
                    mtime = max(mtime, os.stat(os.path.join(folder, name)).st_mtime_ns)
                except OSError:
                    pass
        return size, mtime, ctime

    def new_state(self, path: Path) -> dict:
        """File facts: stem, the session's folder (its sidecars), and for subagent files the parent
        directory and ``.meta.json`` type."""
        state: dict = {"stem": path.stem}
        if not _is_subagent(path):
            state["folder"] = str(path.with_suffix(""))
        if _tools_folder(path):
            state["tools"] = _tools_folder(path)
        if _is_subagent(path):
            state["sub"] = True
            if path.stem.startswith(ASIDE):
                state["aside"] = True
            parts = path.parts[:-1]
            if "subagents" in parts:  # <session>/subagents/[workflows/<wf>/]agent-*.jsonl
                last = len(parts) - 1 - parts[::-1].index("subagents")
                state["parent_dir"] = parts[last - 1]
            try:
                meta = loads(read_file(path.with_name(path.stem + ".meta.json")))
                if isinstance(meta, dict) and isinstance(meta.get("agentType"), str):
                    state["agent_type"] = meta["agentType"]
            except (OSError, ValueError):
                pass
        return state

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One line: metadata (ids, cwd, branch, titles, summaries) and its messages."""
        obj = rec.obj
        kind = string(obj.get("type"))  # any other value is an unknown type
        if kind in ("user", "assistant"):
            _check_message(obj)  # before anything is noted: a bad line leaves no trace
        if kind not in KNOWN_KINDS:
            note_unknown(state, obj.get("type"))
        _note_envelope(obj, state, session)
        if kind == "summary":
            _summary_line(obj, state)
        elif kind == "continued-in":
            target = string(obj.get("continuedInSessionId"))
            if _UUID.fullmatch(target):
                state["continued_in"] = target
        elif kind in ("custom-title", "ai-title"):
            key = "customTitle" if kind == "custom-title" else "aiTitle"
            title = string(obj.get(key)).strip()
            if title:
                state[key] = capped(title, TITLE_CAP)
        if kind not in _CONVERSATION or (state.get("sub") and _warmup(obj, kind, state)):
            _chain(obj, state, state["next_index"])
            return
        ts = iso_ts(obj.get("timestamp"))  # ISO-8601 strings only (formats.md 1.2): 12345 is no time
        session.touch(ts)  # conversation lines only: summary/title lines are written later
        if isinstance(obj.get("uuid"), str):
            _see_uuid(obj["uuid"], state)
        pieces = persisted(pieces_of(obj), state.get("tools"))
        if (kind == "system" and obj.get("subtype") == "compact_boundary") or obj.get("isCompactSummary") is True:
            note_compaction(session, state["next_index"])  # formats.md 1.4
        for p in pieces:
            if p.role is Role.SUMMARY:
                session.summary = capped(p.text, SUMMARY_CAP)
                state["compacted"] = True
        if kind == "assistant" and _finished_reply(obj) or any(p.role is Role.USER for p in pieces):
            state.pop("continued_in", None)  # the conversation went on here after all
            if ts is not None and kind != "assistant":
                state["said_ms"] = max(state.get("said_ms", 0), int(ts.timestamp() * 1000))
        skip = _repeats(obj, pieces, state) if kind == "assistant" else _queued(kind, pieces, state)
        side = obj.get("isSidechain") is True and not state.get("sub")
        if not side and (kind != "attachment" or pieces):
            state["main_seen"] = True
        if not side and kind != "attachment" and any(p.prompt for p in pieces):
            _rewound(obj, state)
        if not side:
            _root(obj, kind, state)
        base = len(out)
        emit(pieces, rec, state, out, ts, skip, "side_" if side else "")
        if not side:
            _chain(obj, state, state["next_index"] + len(out) - base)
        if isinstance(obj.get("uuid"), str) and obj["uuid"]:
            for m in out[base:]:
                m.uid = f"{obj['uuid']}:{m.part}"  # copied verbatim by --resume (formats.md 1.4)
        if side:
            for m in out[base:]:
                m.sidechain = True
        if state.get("aside"):
            for m in out[base:]:
                if pieces[m.part].prompt and names_something(title := first_line(m.text, 80)):
                    state["aside_anchor"], state["aside_prompt"] = m.message_index, title
        _link_subagents(obj, pieces, out[base:], state, session, side)

    def finish(self, state: dict, session: Session) -> None:
        """Session id, parent, title (custom-title > ai-title > summary line > first prompt >
        first command with arguments > first command), summary (compaction summary, else the
        valid summary line), anchor (first prompt, else that command). Inline sidechain lines
        count only in a file without other conversation lines. A side question's copy
        (``agent-aside_question-<hash>``: the parent's lines, then the question) is titled and
        anchored by its last prompt, the question, not by the parent's first."""
        stem, sid = state["stem"], state.get("sid")
        if state.get("sub"):
            session.session_id = "agent-" + (state.get("agent_id") or stem[len("agent-"):])
            line_parent = sid if sid and not sid.startswith("agent-") else None
            session.parent_session_id = state.get("parent_dir") or line_parent
            if state.get("agent_type"):
                session.extra["agent_type"] = state["agent_type"]
        else:
            session.session_id = stem if state.get("stem_seen") else (sid or stem)
        spaces = ("",) if state.get("main_seen") else ("", "side_")
        firsts = [(ns + a, ns + t) for ns in spaces
                  for a, t in (("anchor", "first_prompt"), ("fallback_anchor", "fallback_title"))]
        firsts += [(ns + "last_anchor", ns + "last_title") for ns in spaces]
        if state.get("aside_anchor") is not None:  # a side question's copy: the question
            firsts.insert(0, ("aside_anchor", "aside_prompt"))
        anchor, first = next(((state[a], state.get(t)) for a, t in firsts if a in state), (0, None))
        sidecar = _sidecar(state, "custom-title.json", TITLE_SIDECAR_BYTES)
        renamed = string(sidecar.get("customTitle")).strip()
        session.title = pick_title(state.get("customTitle"), capped(renamed, TITLE_CAP) if renamed else None,
                                   state.get("aiTitle"), state.get("summary_title"), first)
        if not state.get("compacted"):
            session.summary = state.get("summary_title")
        session.anchor_index = anchor
        if state.get("off"):
            session.extra["off_branch"] = [list(r) for r in state["off"]]
        session.archived = _archived(_sidecar(state, "archived.json", ARCHIVED_SIDECAR_BYTES), state)
        if state.get("continued_in"):
            session.extra["continued_in"] = state["continued_in"]
        else:
            session.extra.pop("continued_in", None)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        """Text of piece ``part`` of line ``obj`` (same extraction as :meth:`process`)."""
        return piece_text(pieces_of(obj), part, label)

    def message_text_at(self, path: str, obj: dict, part: int, label: str) -> str:
        """:meth:`message_text`, a persisted tool output read from its file as :meth:`process`
        read it (:func:`persisted`)."""
        return piece_text(persisted(pieces_of(obj), _tools_folder(Path(path))), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && claude --resume <id>``; a subagent resumes its parent session, and a session
        handed to a background session (``extra["continued_in"]``) resumes that one: Claude Code
        leaves the old id out of ``/resume`` and refuses it for ``--continue`` (2.1.332,
        ``chunk-bqhgd24a.js``: "filtered from /resume: continued in", ``superseded``; ``yun`` in
        ``chunk-4x8p6zpg.js``: "Your most recent conversation moved to a background session")."""
        target = session.parent_session_id if session.session_id.startswith("agent-") else session.session_id
        target = string(session.extra.get("continued_in")) or target
        return cd_and(session.project, ["claude", "--resume", target]) if target else None

    def fork_command(self, session: Session) -> str | None:
        """``cd <cwd> && claude --resume <id> --fork-session`` (formats.md 1.6: a new session id
        starting from a copy of this history)."""
        resume = self.resume_command(session)
        return f"{resume} --fork-session" if resume else None


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one Claude Code line, in order (formats.md 1.2-1.4, 7.3)."""
    kind = obj.get("type")
    if kind == "user":
        return _user(obj)
    if kind == "assistant":
        return _assistant(obj)
    if kind == "system":
        return _system(obj)
    if kind == "attachment":
        return _attachment(obj)
    if kind == "tool_use":  # top-level drift shape (formats.md 1.3, last paragraph)
        name = string(obj.get("name")) or "unknown"
        return [Piece(Role.ASSISTANT, tool_call_label(name), dump_text(obj.get("input")), name,
                      string(obj.get("id")) or None)]
    if kind == "tool_result":
        name = string(obj.get("name")) or None
        text = _result_text(obj.get("output") if "output" in obj else obj.get("content"))
        return [Piece(Role.TOOL, f"tool:{name}" if name else None, text, name,
                      string(obj.get("tool_use_id")) or None)]
    return []


def classify(text) -> Piece | None:
    """One piece of user-typed text: a real prompt (``prompt=True``), a typed slash command or
    ``! cmd`` (user text, not a prompt; a command with arguments is a ``fallback`` title), a
    command output (tool result), or None for injected text (formats.md 1.2, last paragraph)."""
    s = string(text).strip()
    if not s or s.startswith(_INJECTED):
        return None
    if s.startswith(_COMMAND):
        name = _tag(s, "command-name")
        if not name:
            return None
        args = _tag(s, "command-args")
        return Piece(Role.USER, LABEL_USER, f"{name} {args}".strip(), fallback=bool(args), last_resort=not args)
    for tag, tool in _OUTPUT.items():
        if s.startswith(tag):
            body = _OUTPUT_TAGS.sub("", s).strip()
            return Piece(Role.TOOL, f"tool:{tool}", body, tool) if body else None
    if s.startswith("<bash-input>"):
        cmd = _tag(s, "bash-input")
        return Piece(Role.USER, LABEL_USER, "! " + cmd) if cmd else None
    s = _REMINDER.sub("", s).strip()
    tag = _TAGGED.match(s)
    if tag and _harness_tag(tag.group(1)):  # <ide_opened_file>, <cross-session-message from=...>
        return Piece(Role.SYSTEM, tag.group(1), s)
    if tag:  # <div>, <template>: pasted by the person, searchable, but never the title (Claude's rule)
        return Piece(Role.USER, LABEL_USER, s)
    return Piece(Role.USER, LABEL_USER, s, prompt=True) if s else None


def bash_output(text: str) -> list[Piece]:
    """Bash mode's answer (``<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>``, either
    part may be absent or empty): its stdout a ``bash-mode`` tool result, its stderr the
    person's own text (:data:`LABEL_STDERR`); the module docstring says why."""
    out, err = _tag(text, "bash-stdout"), _tag(text, "bash-stderr")
    pieces = [Piece(Role.TOOL, "tool:bash-mode", out, "bash-mode")] if out else []
    return pieces + ([Piece(Role.USER, LABEL_STDERR, err)] if err else [])


def _harness_tag(name: str) -> bool:
    """True when a tag opening user text is one Claude Code writes in the person's place: a name
    with ``_`` or ``-`` (``ide_opened_file``, ``cross-session-message``, ``user-memory-input``,
    ``mcp-resource``, ``teammate-message``) or one of :data:`_HARNESS_WORDS`. Another tag
    (``<div>``, ``<template>``) opens text the person pasted: Claude still never titles it
    (:data:`_TAGGED`), but it is what they said."""
    return "_" in name or "-" in name or name in _HARNESS_WORDS


def _attachment(obj: dict) -> list[Piece]:
    """A queued prompt (``attachment.type == "queued_command"``, rule 1 in the module docstring);
    other attachments (hook output, reminders, file contents) yield nothing."""
    att = obj.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "queued_command" or att.get("isMeta") is True:
        return []
    prompt = att.get("prompt")
    blocks = prompt if isinstance(prompt, list) else [prompt]
    texts = []
    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "image":
            texts.append("[image]")
            continue
        p = classify(b.get("text") if isinstance(b, dict) and b.get("type") == "text" else b)
        if p is not None and p.role is Role.USER:
            texts.append(p.text)
    text = "\n".join(texts).strip()
    if not text:
        return []
    if att.get("commandMode") == "bash":
        return [Piece(Role.USER, LABEL_USER, "! " + text)]
    return [_injected(att, text) or Piece(Role.USER, LABEL_USER, text, prompt=True)]


def _origin(holder: dict) -> str | None:
    """The ``origin.kind`` of a line or queued prompt that the person did not type (anything but
    ``human``; no ``origin`` is the person's), cut to :data:`~.base.KIND_CHARS` characters and
    made printable, or None."""
    origin = holder.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if kind is None or kind == "human":
        return None
    name = string(kind) or "origin"
    return "".join(c if c.isprintable() else "?" for c in name[:KIND_CHARS])


def _injected(holder: dict, text: str) -> Piece | None:
    """A turn the app or another agent wrote in the person's place ("Injected turns" in the
    module docstring): a ``system`` message labelled by its origin kind (a peer's names its sender:
    ``message from <name>: ...``), or None when ``holder`` (a line or an attachment) is the
    person's."""
    kind = _origin(holder)
    if kind is None:
        return None
    if kind == "peer":
        origin = holder["origin"]
        sender = string(origin.get("name")) or string(origin.get("from")) or "a peer"
        text = f"message from {sender}: {text}"
    return Piece(Role.SYSTEM, kind, text)


def _user(obj: dict) -> list[Piece]:
    pieces = _user_pieces(obj)
    if _origin(obj) is not None:
        pieces = [(_injected(obj, p.text) or p) if p.role in (Role.USER, Role.SYSTEM) else p for p in pieces]
    return pieces


def _user_pieces(obj: dict) -> list[Piece]:
    blocks = _content(obj)
    if blocks is None:
        return []
    if obj.get("isCompactSummary") is True:
        text = "\n".join(t for t in map(_block_text, blocks) if t).strip()
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text else []
    meta = obj.get("isMeta") is True
    pieces: list[Piece] = []
    texts: list[str] = []
    slot, real = None, False
    for b in blocks:
        b = {"type": "text", "text": b} if isinstance(b, str) else b
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "tool_result":
            pieces.append(Piece(Role.TOOL, None, _result_text(b.get("content"), b.get("text")),
                                call_id=string(b.get("tool_use_id")) or None))
            continue
        if meta:
            continue
        if kind == "text" and string(b.get("text")).lstrip().startswith(_BASH_OUTPUT):
            pieces += bash_output(string(b.get("text")))
            continue
        p = classify(b.get("text")) if kind == "text" else (
            Piece(Role.USER, LABEL_USER, "[image]") if kind == "image" else None)
        if p is None:
            continue
        if p.role is not Role.USER or not (p.prompt or kind == "image"):  # commands stand alone
            pieces.append(p)
            continue
        if slot is None:  # the human text of a line is one message, where its first block was
            slot = len(pieces)
            pieces.append(p)
        texts.append(p.text)
        real = real or p.prompt
    if slot is not None:
        pieces[slot] = Piece(Role.USER, LABEL_USER, "\n".join(texts), prompt=real)
    return pieces


def _assistant(obj: dict) -> list[Piece]:
    blocks = _content(obj)
    if blocks is None:
        return []
    synthetic = obj["message"].get("model") == "<synthetic>" or obj.get("isApiErrorMessage") is True
    role, label = (Role.SYSTEM, LABEL_SYSTEM) if synthetic else (Role.ASSISTANT, LABEL_ASSISTANT)
    pieces: list[Piece] = []
    for b in blocks:
        b = {"type": "text", "text": b} if isinstance(b, str) else b
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text" and string(b.get("text")).strip():
            pieces.append(Piece(role, label, b["text"], key=_key("x", b["text"])))
        elif kind == "thinking" and string(b.get("thinking")).strip():
            pieces.append(Piece(Role.ASSISTANT, LABEL_THINKING, b["thinking"], key=_key("t", b["thinking"])))
        elif kind in ("tool_use", "server_tool_use"):
            name, call_id, text = string(b.get("name")) or "unknown", string(b.get("id")) or None, dump_text(b.get("input"))
            pieces.append(Piece(Role.ASSISTANT, tool_call_label(name), text, name, call_id,
                                key=call_id or _key("u", name + text)))
        elif kind == "web_search_tool_result":
            call_id = string(b.get("tool_use_id")) or None
            pieces.append(Piece(Role.TOOL, None, _search_text(b.get("content")), "web_search", call_id,
                                key=_key("r", call_id or "")))
    return pieces


def _system(obj: dict) -> list[Piece]:
    if obj.get("subtype") == "compact_boundary":
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, "Conversation compacted")]
    if obj.get("isMeta") is True:
        return []
    content = obj.get("content")
    if isinstance(content, str):
        p = classify(content)
        if p is None:
            return []
        # plain text is a notice; a typed command (local_command lines) stays the user's text
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, p.text) if p.prompt else p]
    err = obj.get("error")
    if obj.get("subtype") == "api_error" and isinstance(err, dict) and string(err.get("message")):
        return [Piece(Role.SYSTEM, LABEL_SYSTEM, "API error: " + err["message"])]
    return []


# -- stateful helpers --------------------------------------------------------------------------


def _note_envelope(obj: dict, state: dict, session: Session) -> None:
    """sessionId (first one; the stem wins when any line carries it), first cwd, latest branch."""
    sid = string(obj.get("sessionId"))
    if sid:
        state.setdefault("sid", sid)
        if sid == state["stem"]:
            state["stem_seen"] = True
    cwd = string(obj.get("cwd"))
    if cwd and session.project is None:
        session.project = cwd
    branch = string(obj.get("gitBranch"))
    if branch:
        session.git_branch = branch
    agent_id = string(obj.get("agentId"))
    if agent_id and state.get("sub"):
        state.setdefault("agent_id", agent_id)


def _link_subagents(obj: dict, pieces: list[Piece], new: list[Message], state: dict, session: Session,
                    side: bool) -> None:
    """Link a spawning ``Task``/``Agent`` call to the subagent it ran (formats.md 1.4: the
    parent keeps the call and a tool_result carrying ``agentId``, top level on the line and, in
    2.x, in ``toolUseResult``). Calls are remembered (``task_calls``: call id -> message index,
    the latest :data:`REPLY_KEYS`); a result line with an agent id appends ``[call message
    index, "agent-<id>"]`` to ``session.extra["subagents"]`` (the result's own index when its call
    was not seen; at most :data:`SUBAGENTS_KEPT`). In a subagent file only ``toolUseResult``
    counts: the line's own ``agentId`` is the file's agent."""
    calls = state.get("task_calls")
    for m in new:
        if m.label in ("tool-call:Task", "tool-call:Agent") and pieces[m.part].call_id:
            calls = state.setdefault("task_calls", {})
            calls[pieces[m.part].call_id] = m.message_index
            while len(calls) > REPLY_KEYS:
                del calls[next(iter(calls))]
    if obj.get("type") != "user":
        return
    tur = obj.get("toolUseResult")
    agent_id = string(tur.get("agentId")) if isinstance(tur, dict) else ""
    if not agent_id and not state.get("sub") and not side:
        agent_id = string(obj.get("agentId"))
    if not agent_id or (state.get("sub") and agent_id == state.get("agent_id")):
        return
    for m in new:
        if m.role is Role.TOOL:
            index = (calls or {}).pop(pieces[m.part].call_id, m.message_index)
            links = session.extra.setdefault("subagents", [])
            if [index, "agent-" + agent_id] not in links:
                links.append([index, "agent-" + agent_id])
                del links[:-SUBAGENTS_KEPT]
            return


def _summary_line(obj: dict, state: dict) -> None:
    text, leaf = string(obj.get("summary")).strip(), string(obj.get("leafUuid"))
    if not text or not leaf:
        return  # no leafUuid: cannot tell which session it describes (formats.md 1.3)
    h = _hash(leaf)
    if h in state.get("uuids", ()):
        state["summary_title"] = capped(text, TITLE_CAP)
        return
    pending = state.setdefault("summaries", [])
    pending.append([h, capped(text, TITLE_CAP)])
    del pending[:-PENDING_SUMMARIES]


def _see_uuid(uuid: str, state: dict) -> None:
    h = _hash(uuid)
    window = state.setdefault("uuids", [])
    window.append(h)
    del window[:-UUID_WINDOW]
    pending = state.get("summaries")
    if pending and any(item[0] == h for item in pending):
        state["summary_title"] = [item for item in pending if item[0] == h][-1][1]
        pending[:] = [item for item in pending if item[0] != h]


def _repeats(obj: dict, pieces: list[Piece], state: dict) -> list[int]:
    """Positions of pieces this reply (``message.id``) already yielded on an earlier line."""
    mid = string(obj["message"].get("id")) if isinstance(obj.get("message"), dict) else ""
    if not mid:
        return []
    reply = state.get("reply")
    if not reply or reply[0] != mid:
        reply = state["reply"] = [mid, []]
    keys, skip = reply[1], []
    for i, p in enumerate(pieces):
        if p.key is not None:
            if p.key in keys:
                skip.append(i)
            else:
                keys.append(p.key)
    del keys[:-REPLY_KEYS]
    return skip


# -- sidecars and hand-offs -------------------------------------------------------------------


def _sidecar(state: dict, name: str, limit: int) -> dict:
    """The JSON object in sidecar ``name`` of the session's folder (``projects/<slug>/<session
    id>/``), or ``{}`` when there is none, it is not a regular file, it is larger than ``limit``
    bytes, or it is not a JSON object (Claude Code ignores such a file as well)."""
    folder = state.get("folder")
    if not folder:
        return {}
    try:
        data = read_file(os.path.join(folder, name), limit + 1)
        obj = loads(data) if len(data) <= limit else None
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _archived(sidecar: dict, state: dict) -> bool:
    """True when ``archived.json`` says ``{"archived": true, "at": <ISO time>}`` and the person
    has said nothing in the session since ``at`` (``state["said_ms"]``: the time of the latest
    line holding what the person typed): Claude Code unarchives a session on its next prompt
    (``Zyo``/``dHi``, ``chunk-4x8p6zpg.js`` of 2.1.332)."""
    if sidecar.get("archived") is not True:
        return False
    at = iso_ts(sidecar.get("at"))
    return at is not None and state.get("said_ms", 0) <= int(at.timestamp() * 1000)


def _finished_reply(obj: dict) -> bool:
    """An ``assistant`` line that ends a reply (``message.stop_reason`` a string, not an API error
    notice): after it, an earlier ``continued-in`` no longer holds (``zEr``/``ee``,
    ``chunk-4x8p6zpg.js`` of 2.1.332)."""
    msg = obj.get("message")
    return (obj.get("isApiErrorMessage") is not True and isinstance(msg, dict)
            and isinstance(msg.get("stop_reason"), str))


# -- persisted tool output ----------------------------------------------------------------------


PERSISTED_BYTES = 1 << 20
"""Bytes of a persisted tool output file read (Claude Code itself saves at most a bounded head of
an output that is larger still: "only the first ... were saved to")."""
_PERSISTED = re.compile(r"<persisted-output>\s.*?(?:Full output saved to|were saved to): ([^\n]+)", re.S)
_PERSISTED_NAME = re.compile(r"[A-Za-z0-9_.%-]+\.(?:txt|json)")


def _is_subagent(path: Path) -> bool:
    """True for a subagent transcript: ``agent-<id>.jsonl`` (the module docstring)."""
    nested = "subagents" in path.parts[:-1]
    return bool((_NESTED_SUBAGENT if nested else _SUBAGENT).fullmatch(path.stem))


def _tools_folder(path: Path) -> str | None:
    """``projects/<slug>/<session id>/tool-results`` for a session's transcript or one of its
    subagents' (``<session id>/subagents/.../agent-*.jsonl``: tool results are kept per root
    session, ``H0s`` in ``chunk-vhw4w89d.js`` of 2.1.332), else None."""
    if not _is_subagent(path):
        return str(path.with_suffix("") / "tool-results")
    parts = path.parts[:-1]
    if "subagents" not in parts:
        return None
    last = len(parts) - 1 - parts[::-1].index("subagents")
    return str(Path(*parts[:last]) / "tool-results")


def persisted(pieces: list[Piece], folder: str | None) -> list[Piece]:
    """``pieces`` with each tool output that Claude Code cut to a preview and saved to a file
    (``<persisted-output>`` ... ``Full output saved to: <path>`` ... ``</persisted-output>``:
    ``BEe``/``xe``/``mK`` in ``chunk-ety1djz5.js`` of 2.1.332; the file ``<tool_use_id>.txt`` or
    ``.json`` in the session's ``tool-results`` folder, ``Pzn``) replaced by that file's text,
    when tool output is indexed (``base.reads_tool_output_files``); otherwise as they are. Only a
    file of that name in ``folder`` (:func:`_tools_folder`) is read, through the regular-file-only
    opener, at most :data:`PERSISTED_BYTES`; a file that is gone or not a regular file leaves
    the preview."""
    if not folder or not reads_tool_output_files():
        return pieces
    out = []
    for p in pieces:
        m = _PERSISTED.match(p.text) if p.role is Role.TOOL and p.text.startswith("<persisted-output>") else None
        name = os.path.basename(m.group(1).strip().replace("\\", "/")) if m else ""
        if _PERSISTED_NAME.fullmatch(name):
            try:
                p = p._replace(text=read_file(os.path.join(folder, name), PERSISTED_BYTES).decode("utf-8", "replace"))
            except OSError:
                pass
        out.append(p)
    return out


# -- small helpers -----------------------------------------------------------------------------


WARMUP = "Warmup"
"""The prompt of Claude Code's cache warm-up (2.0.x): at a session's start it sends ``Warmup`` to
its subagents, each answering with a canned greeting in a subagent file of its own; real Claude
Code homes hold dozens of these two-line files (8 of the shared corpus's Claude Code files).
claude-code-log and claude-history drop them too (``shared/reference/peer-tools.md``)."""


def _warmup(obj: dict, kind: str, state: dict) -> bool:
    """True for a line of a subagent file's warm-up exchange, which yields no message: the file's
    first conversation line when it is a root (``parentUuid`` null) ``user`` line whose whole
    content is :data:`WARMUP`, and the ``assistant`` lines answering it (their ``parentUuid``
    is the prompt's or an earlier answer line's). A user line after it is the subagent's real
    work and is kept, with all that follows."""
    seen = state.get("warmup")
    uuid = obj.get("uuid")
    if seen is None:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
            content = content[0].get("text") if content[0].get("type") == "text" else None
        if (kind == "user" and state["next_index"] == 0 and obj.get("parentUuid") is None
                and content == WARMUP and isinstance(uuid, str)):
            state["warmup"] = [uuid]  # a list: the state is saved as JSON for the next refresh
            return True
        state["warmup"] = []  # not a warm-up file
        return False
    if kind == "assistant" and seen and obj.get("parentUuid") in seen and isinstance(uuid, str):
        seen[:] = seen[-7:] + [uuid]  # a reply's streamed lines chain one to the next
        return True
    seen.clear()  # anything else ends the exchange
    return False


def _chain(obj: dict, state: dict, index_after: int) -> None:
    """Remember a main-chain line (any type with a ``uuid``: progress and attachment lines are
    links of the chain too) as the latest, with the message index that follows it."""
    uuid = obj.get("uuid")
    if not isinstance(uuid, str) or not uuid or (obj.get("isSidechain") is True and not state.get("sub")):
        return
    h = _hash(uuid)
    chain = state.setdefault("chain", [])
    chain.append([h, index_after])
    del chain[:-CHAIN_WINDOW]


def _rewound(obj: dict, state: dict) -> None:
    """A real prompt whose ``parentUuid`` is not the latest line of the chain starts a new branch
    (Claude Code's rewind, Esc Esc: formats.md 1.4): the messages written since that parent are
    off the active branch from now on. Only prompts count (parallel tool calls and results also
    have parents other than the previous line, but they do not branch the conversation); a
    parent older than CHAIN_WINDOW lines is not placed, and nothing is marked."""
    parent, chain = obj.get("parentUuid"), state.get("chain")
    if not isinstance(parent, str) or not parent or not chain:
        return
    h = _hash(parent)
    if chain[-1][0] == h:
        return  # the usual case: it follows the latest line
    for ph, after in reversed(chain):
        if ph == h:
            if after < state["next_index"]:
                abandon(state, after, state["next_index"])
            return


def _queued(kind: str, pieces: list[Piece], state: dict) -> list[int]:
    """Remember a queued prompt's text; for a ``user`` line, the positions of prompts that repeat
    one remembered (the queue was drained normally, and the prompt written again as a line)."""
    queued = state.get("queued")
    if kind == "attachment":
        for p in pieces:
            if _said(p):
                queued = state.setdefault("queued", [])
                queued.append(_hash(p.text))
                del queued[:-QUEUED_KEPT]
        return []
    if kind != "user" or not queued:
        return []
    skip = []
    for i, p in enumerate(pieces):
        if _said(p) and _hash(p.text) in queued:
            queued.remove(_hash(p.text))
            skip.append(i)
    return skip


def _said(p: Piece) -> bool:
    """A prompt, or a turn written in the person's place (a ``system`` piece labelled by its
    origin, :func:`_injected`): what a queued prompt and the line repeating it both hold."""
    return p.prompt or (p.role is Role.SYSTEM and p.label != LABEL_SYSTEM)


def _root(obj: dict, kind: str, state: dict) -> None:
    """Track the tree's roots (rule 2 in the module docstring): a line without a parent starts a
    new root; a real prompt that does so in a linked file written by Claude Code >= 2 is a rewind
    to the first prompt, so the messages since the previous root leave the active branch. A
    compaction boundary is a root too (its history stays active: "before compaction")."""
    if kind not in ("user", "assistant", "system") or not isinstance(obj.get("uuid"), str):
        return
    if obj.get("parentUuid"):
        state["linked"] = True
        return
    if "parentUuid" not in obj:
        return
    start = state.get("root", 0)
    if (kind == "user" and state.get("linked") and _major(obj.get("version")) >= 2
            and any(p.prompt for p in _user(obj)) and start < state["next_index"]):
        abandon(state, start, state["next_index"])
    state["root"] = state["next_index"]
    state["linked"] = False


def _major(version) -> int:
    """The major number of a ``version`` string (``2.1.3`` -> 2), 0 when there is none."""
    head = string(version).split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _hash(value: str) -> int:
    return zlib.crc32(value.encode("utf-8", "replace"))


def _key(kind: str, text: str) -> str:
    return f"{kind}{zlib.crc32(text.encode('utf-8', 'replace')):08x}"


def _tag(text: str, name: str) -> str:
    m = re.search(rf"<{name}>(.*?)</{name}>", text, re.S)
    return m.group(1).strip() if m else ""


def _check_message(obj: dict) -> None:
    """Raise :class:`~crabsearch.sources.base.BadRecord` for a ``user`` or ``assistant`` line
    whose ``message`` is not an object or whose ``message.content`` is neither a string nor a list
    (formats.md 1.2: a Messages API object): such a line has nothing to read, and is skipped and
    counted rather than dropped without a word. A list whose blocks are not all blocks is read in
    part, as before (:func:`_user_pieces`, :func:`_assistant`)."""
    msg = obj.get("message")
    if not isinstance(msg, dict):
        raise bad_field(obj, "message", "an object")
    if not isinstance(msg.get("content"), (str, list)):
        raise bad_field(msg, "content", "a string or a list", "message.")


def _content(obj: dict) -> list | None:
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return None
    content = msg.get("content")
    if isinstance(content, str):
        return [content]
    return content if isinstance(content, list) else None


def _block_text(b) -> str:
    if isinstance(b, str):
        return b
    return string(b.get("text")) if isinstance(b, dict) and b.get("type") == "text" else ""


def _result_text(content, fallback=None) -> str:
    """A tool result's text: a string, or text blocks joined with ``\\n`` (images ``[image]``)."""
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, dict):
                parts.append("[image]" if b.get("type") == "image" else string(b.get("text")))
        content = "\n".join(p for p in parts if p)
    elif content is not None and not isinstance(content, str):
        content = dump_text(content)
    return content or string(fallback)


def _search_text(content) -> str:
    if not isinstance(content, list):
        return ""
    rows = (f"{string(r.get('title'))} {string(r.get('url'))}".strip() for r in content if isinstance(r, dict))
    return "\n".join(r for r in rows if r)


SOURCE = ClaudeSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

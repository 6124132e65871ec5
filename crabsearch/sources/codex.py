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

Current formats, checked against openai/codex ``codex-rs``:

* **Rollback** (rule 3): ``event_msg`` ``{"type": "thread_rolled_back", "num_turns": N}`` drops
  the last N user turns from the active history (``core/src/codex/rollout_reconstruction.rs``,
  ``history.drop_last_n_user_turns``, at 023cedaa25c0; ``ThreadRolledBackEvent`` in
  ``protocol/src/protocol.rs``): the messages from the N-th latest surviving prompt on become an
  abandoned branch (``extra["off_branch"]``). A user turn starts at each prompt yielded (the
  ``user_message`` event or its ``response_item`` twin, whichever comes first).
* **Compressed archives** (rule 4): ``rollout/src/compression.rs`` (at 005c818463ca) reads a rollout
  stored as ``rollout-*.jsonl.zst`` (zstd) wherever a ``.jsonl`` would be, and prefers the plain
  ``.jsonl`` when both exist (``should_skip_compressed_sibling``); archived threads are moved to
  ``archived_sessions/`` (``move_rollout_noclobber``) and compressed there. A ``.jsonl.zst`` is read
  whole through ``zstandard`` (offsets are those of the decompressed lines); a rollout whose file
  name is discovered twice (plain and compressed, or in ``sessions/`` and ``archived_sessions/``
  during a move) is read once: the plain file, in ``sessions/`` first. A session under
  ``archived_sessions/`` is ``archived``.
* **Subagents** (rule 5): a spawned thread's ``session_meta`` names its parent in
  ``source.subagent.thread_spawn.parent_thread_id`` (``SessionSource::SubAgent(
  SubAgentSource::ThreadSpawn {parent_thread_id, depth, agent_path, agent_nickname, agent_role})``;
  older files also write ``parent_thread_id`` at the top level) and
  ``subagent_history_start_ordinal``: records before that ordinal (the ``ordinal`` of each
  ``RolloutLine``, paginated history mode, numbered from 0 at the first record; counted here when
  a line has none) are the parent's conversation copied for context. They yield no messages and
  set nothing but the child's own ``session_meta``; the session's ``parent_session_id`` is the
  parent thread, and its title is its own first prompt (the task it was given).
* **Agents talking** (rule 6): in multi-agent v2 a thread receives other agents' messages as
  ``inter_agent_communication`` lines (``{author, recipient, other_recipients, content,
  trigger_turn}``, agent paths such as ``/root`` and ``/root/worker``: ``RolloutItemWire`` in
  ``codex-rs/history/src/rollout_payload.rs`` at 5ef96ab2785f; ``record_inter_agent_communication``
  persists the line and no ``response_item`` for it). A message from an ancestor of the recipient
  (its parent, when spawning it or giving it a follow-up task) is the task: a user prompt, so a
  subagent's first one is its title. Any other (a child reporting back, a sibling) is a message
  of the receiving thread labelled ``agent:<author path>`` (assistant text, searchable). Each
  starts a user turn for a rollback, as Codex counts it (``user_boundaries`` in
  ``rollout_reconstruction``).
* **Other current line kinds** (rule 6; 0.171.0's binary names ``session_meta,
  dynamic_tools_updated, response_item, inter_agent_communication,
  inter_agent_communication_metadata, compacted, turn_context, token_usage_record, world_state,
  security_risk_score, event_msg, realtime_item`` then ``id_allocation``; main adds
  ``retained_context`` and ``rollout_reference``): a ``realtime_item`` ``transcript_segment``
  (``{id, realtime_session_id, type, data: {role, text}}``, codex-rs ``protocol`` ``realtime``:
  what was said in a voice conversation, which the model-side history does not hold) is a
  ``voice`` message of that role; a ``retained_context`` ``verified_answer`` (``{turn_id,
  call_id, questions: [{question, answer}]}``, ``history/src/retained_context.rs`` at
  86be5320b068: the user's own answers to ``request_user_input``) is a user message of the
  answers; the rest (``dynamic_tools_updated``, ``security_risk_score``, ``id_allocation``, other
  realtime and retained items) is metadata, known and passed over.
* **Segment rotation** (rule 7, ``codex_segments``): a rollout that starts with a
  ``rollout_reference`` to a segment of its own thread is read as that segment (and the segments
  before it), then itself: one session, each line once. Segments are not discovered.
* **Drift**: a line whose ``type`` is none of :data:`KNOWN_KINDS` is counted
  (:func:`~crabsearch.sources.base.note_unknown`) and listed by ``crabsearch status``.
* **Wrong field types**: a line of a kind this reader reads whose ``payload`` is not an object,
  or a ``user``/``assistant`` ``message`` item whose ``content`` is not a list, has nothing to
  read: it is skipped and counted (``bad field``, :class:`~crabsearch.sources.base.BadRecord`)
  like a broken line, and leaves nothing else behind but its place in the line count of rule 5
  (the parent's lines copied into a subagent's rollout are not read, so not checked). A content list is read in part: items that are not items
  are passed over. A ``timestamp`` that is not an ISO-8601 string (2.2) is no time: the line's
  message has none, and the session's start and end ignore it (``12345`` is not 1970).
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Iterator, Mapping

from ..files import open_file
from ..jsonl import LineStats, Record, iter_records, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_THINKING, LABEL_USER, Message, Role,
                     Session, tool_call_label)
from ..redact import redact
from .base import (bad_field, capped, Source, cd_and, env_dir, iso_ts, note_unknown, dump_text,
                   records_of_bytes, matching, string, walk_files, unzstd)
from .codex_segments import (HEAD_LINES, REFERENCE, cached_chain, is_segment, segment_chain, segment_records,
                             split_offset)
from .pieces import Piece, abandon, emit, note_compaction, piece_text

SUMMARY_CAP = 8192
"""Characters of a compaction summary stored on the Session (the message keeps the full text)."""

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
             "<user_shell_command>", "<turn_aborted>", "<INSTRUCTIONS>")
_USER_SHELL = "<user_shell_command>"
_SHELL_RECORD = re.compile(r"<command>\n?(.*?)\n?</command>.*?(?:Output:\n?(.*?)\n?)?</result>", re.S)
LABEL_VOICE = "voice"
"""Label of what was said in a realtime voice conversation (``realtime_item`` transcript)."""
AGENT_LABEL = "agent:"
"""Label prefix of a message another agent sent this thread (``agent:/root/worker``)."""
_BARE_ITEMS = frozenset({"message", "reasoning", "function_call", "function_call_output",
                         "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                         "local_shell_call_output"})
KNOWN_KINDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted",
                         "inter_agent_communication", "realtime_item", "retained_context",
                         "rollout_reference", "world_state", "inter_agent_communication_metadata",
                         "token_usage_record", "dynamic_tools_updated", "security_risk_score",
                         "id_allocation"})
"""Envelope kinds this reader knows (formats.md 2.2 and the module docstring, rules 6-7; the last
six carry nothing to index)."""
_READ_KINDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted",
                         "inter_agent_communication", "realtime_item", "retained_context"})
"""Envelope kinds this reader reads: their ``payload`` must be an object (:func:`_check`)."""
ZST = ".zst"
TURNS_KEPT = 256
"""Message indexes of the latest surviving user turns kept to place a rollback."""
ZST_MAX = 256 << 20
"""Decompressed bytes read of one ``.jsonl.zst`` (a larger one is an error for that file only: a
small file can decompress to gigabytes)."""
ZST_CACHED = 64 << 20
"""A decompressed archive up to this size stays in memory for reading its messages back."""


class CodexSource(Source):
    """Codex CLI (formats.md section 2). One session per rollout file."""

    agent = "codex"
    order = 20
    env_var = "CODEX_HOME"
    locations = "`~/.codex/sessions/**/rollout-*.jsonl`, `~/.codex/archived_sessions/`"
    reads = ("archived rollouts, also zstd-compressed (`.jsonl.zst`), marked archived; `thread_rolled_back` as"
             " an abandoned branch; spawned subagents linked to their parent, without the parent's copied "
             "history; a v2 subagent's task (its title) and reports from other agents; voice transcripts; "
             "rotated segments as the start of their session")
    override = "`CODEX_HOME=DIR`"
    upstream = ("`openai/codex` `codex-rs` (`protocol`, `history/src/rollout_payload.rs` @5ef96ab2785f, "
                "`thread-store` @848575dc0d9f), `@openai/codex` 0.171.0; formats.md section 2")
    checked = "2026-12-06: 0.171.0, codex-rs main (rotation)"
    display = "Codex CLI"
    badge = "Codex"
    style = "bold white on dodger_blue3"
    known_kinds = {"line": KNOWN_KINDS}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CODEX_HOME``, else ``~/.codex``."""
        return [env_dir(env, "CODEX_HOME", home / ".codex")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/**/rollout-*.jsonl``, ``archived_sessions/**/rollout-*.jsonl`` and
        ``archived_sessions/*.jsonl``, each also compressed (``.jsonl.zst``). A rollout name found
        twice is yielded once (module docstring, rule 4): plain before compressed, ``sessions/``
        before ``archived_sessions/``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            walked = {sub: list(walk_files(root / sub, "**/*")) for sub in ("sessions", "archived_sessions")}
            found: list[Path] = []
            for sub, pattern in (("sessions", "**/rollout-*.jsonl"),
                                 ("archived_sessions", "**/rollout-*.jsonl"),
                                 ("archived_sessions", "*.jsonl"),
                                 ("sessions", "**/rollout-*.jsonl.zst"),
                                 ("archived_sessions", "**/*.jsonl.zst")):
                found += matching(walked[sub], root / sub, pattern)  # each tree walked once
            names: set[str] = set()
            for path in found:
                name = plain_name(path)
                if path in seen or name in names or is_segment(path):
                    continue
                seen.add(path)
                names.add(name)
                yield path

    def new_state(self, path: Path) -> dict:
        """The thread uuid at the end of the file name (the default session id); whether the file
        lies under ``archived_sessions/``."""
        m = _UUID.search(plain_name(path).removesuffix(".jsonl"))
        state: dict = {"file_id": m.group(0) if m else None}
        if any(parent.name == "archived_sessions" for parent in path.parents):
            state["archived"] = True
        return state

    def records(self, path: Path, start: int, stats: LineStats) -> Iterator[Record]:
        """The records of a rollout: its lines, decompressed first for a ``.jsonl.zst``; read
        from the start, the lines of the segments before it come first (rule 7)."""
        own = _lines(Path(path), start, stats)
        return own if start else _with_segments(Path(path), own, stats)

    def load(self, path: str, offset: int, length: int) -> object | None:
        """One record by the offset and length of its line (in the decompressed bytes of a
        ``.jsonl.zst``; in its segment for an offset past ``SEGMENT_BASE``). Raises ``OSError``."""
        k, offset = split_offset(offset)
        if k:
            chain = cached_chain(Path(path), codex_root(Path(path)), _head)
            if k > len(chain.paths):
                return None
            path = str(chain.paths[k - 1])
        if not path.endswith(ZST):
            return super().load(path, offset, length)
        raw = _decompressed(path)[offset:offset + length]
        try:
            obj = loads(raw) if len(raw) == length else None
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None

    def in_bytes(self, path: str) -> bool:
        """A ``.jsonl.zst``'s offsets are not bytes of the file: not added up as MB."""
        return not path.endswith(ZST) and super().in_bytes(path)

    def locate(self, path: str, offset: int) -> tuple[str, int] | None:
        """The file and offset of a line (in its segment, rule 7); None for a compressed rollout
        (an editor would show zstd frames)."""
        k, offset = split_offset(offset)
        if k:
            try:
                chain = cached_chain(Path(path), codex_root(Path(path)), _head)
            except OSError:
                return None
            path = str(chain.paths[k - 1]) if k <= len(chain.paths) else ""
        return None if not path or path.endswith(ZST) else super().locate(path, offset)

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One line: metadata (session_meta, header, thread name) and its messages."""
        obj = rec.obj
        kind, payload = obj.get("type"), obj.get("payload")
        ordinal = obj.get("ordinal")
        if not isinstance(ordinal, int) or isinstance(ordinal, bool):
            ordinal = state.get("records", 0)
        state["records"] = state.get("records", 0) + 1
        if isinstance(payload, dict) and kind == "session_meta":
            _meta(payload, state, session)
            return
        if ordinal < state.get("own_from", 0):
            return  # the parent's conversation, copied into a subagent's rollout (rule 5)
        _check(obj, kind, payload)  # before anything is noted: a bad line leaves no trace
        if kind is not None and (not isinstance(kind, str) or kind not in KNOWN_KINDS) and "payload" in obj:
            note_unknown(state, kind)
        ts = iso_ts(obj.get("timestamp"))  # ISO-8601 strings only (formats.md 2.2): 12345 is no time
        session.touch(ts)
        if isinstance(payload, dict):
            if kind == "turn_context":
                if session.project is None and string(payload.get("cwd")):
                    session.project = payload["cwd"]
                return
            if kind == "event_msg" and payload.get("type") == "thread_name_updated":
                name = string(payload.get("thread_name")).strip()
                if name:
                    state["thread_name"] = name
                return
            if kind == "event_msg" and payload.get("type") == "thread_rolled_back":
                _rolled_back(payload.get("num_turns"), state)
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
        base = len(out)
        emit(pieces, rec, state, out, ts, skip=skip)
        # each user message yielded, and each message from another agent, starts a user turn
        # (rules 3 and 6); numbered as emit numbers them
        turns = [state["next_index"] + i for i, m in enumerate(out[base:])
                 if m.role is Role.USER or kind == "inter_agent_communication"]
        if turns:
            kept = state.setdefault("turns", [])
            kept.extend(turns)
            del kept[:-TURNS_KEPT]

    def finish(self, state: dict, session: Session) -> None:
        """Session id; title = session_index.jsonl thread name > thread_name_updated event > first
        prompt (formats.md 2.4); anchor = first prompt."""
        session.session_id = (state.get("sid") or state.get("file_id")
                              or plain_name(Path(session.path)).removesuffix(".jsonl"))
        names = thread_names(codex_root(Path(session.path)))
        session.title = (names.get(session.session_id) or names.get(state.get("file_id") or "")
                         or state.get("thread_name") or state.get("first_prompt") or None)
        session.anchor_index = state.get("anchor", 0)
        session.parent_session_id = state.get("parent")
        if state.get("agent_type"):
            session.extra["agent_type"] = state["agent_type"]
        if state.get("off"):
            session.extra["off_branch"] = [list(r) for r in state["off"]]
        session.archived = bool(state.get("archived"))

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
        if kind == "inter_agent_communication":
            return _communication(payload)
        if kind == "realtime_item":
            return _realtime(payload)
        if kind == "retained_context":
            return _retained(payload)
        return []
    if "payload" not in obj and string(obj.get("type")) in _BARE_ITEMS:
        return _item(obj, bare=True)
    return []


def _communication(p: dict) -> list[Piece]:
    """An ``inter_agent_communication`` (rule 6): from an ancestor of the recipient, the task (a
    user prompt); from anyone else, a message labelled by its author."""
    text = string(p.get("content"))
    if not text.strip():
        return []
    author, recipient = string(p.get("author")), string(p.get("recipient"))
    if author and recipient.startswith(author.rstrip("/") + "/"):
        return [Piece(Role.USER, LABEL_USER, text, prompt=True)]
    return [Piece(Role.ASSISTANT, AGENT_LABEL + (author[:80] or "?"), text)]


def _realtime(p: dict) -> list[Piece]:
    """A ``realtime_item``: a ``transcript_segment`` is what the user or the model said aloud
    (rule 6); other realtime items carry no text."""
    data = p.get("data") if isinstance(p.get("data"), dict) else {}
    text = string(data.get("text"))
    if p.get("type") != "transcript_segment" or not text.strip():
        return []
    role = data.get("role")
    if role == "user":
        return [Piece(Role.USER, LABEL_VOICE, text)]
    return [Piece(Role.ASSISTANT, LABEL_VOICE, text)] if role == "assistant" else []


def _retained(p: dict) -> list[Piece]:
    """A ``retained_context`` ``verified_answer``: the user's answers to the model's questions
    (rule 6), one user message; other retained items are metadata."""
    questions = p.get("questions") if p.get("type") == "verified_answer" else None
    answers = [string(q.get("answer")) for q in questions if isinstance(q, dict)] if isinstance(questions, list) else []
    text = "\n".join(a for a in answers if a.strip())
    return [Piece(Role.USER, LABEL_USER, text)] if text else []


def _user_event(p: dict) -> list[Piece]:
    text = string(p.get("message"))
    if text.lstrip().startswith(_INJECTED):
        text = ""
    images = sum(len(p[k]) for k in ("images", "local_images") if isinstance(p.get(k), list))
    parts = ([text] if text.strip() else []) + ["[image]"] * images
    return [Piece(Role.USER, LABEL_USER, "\n".join(parts), prompt=bool(text.strip()))] if parts else []


def user_shell_command(text: str) -> list[Piece]:
    """A command the person ran with ``!`` (a user ``message`` item ``<user_shell_command>\n
    <command>\nCMD\n</command>\n<result>\nExit code: N\nDuration: …\nOutput:\nOUT\n</result>
    \n</user_shell_command>``: ``format_user_shell_command_record`` in
    ``codex-rs/core/src/user_shell_command.rs`` at 2e267dec61b8): ``! CMD`` as the person's own
    text, and its output a ``bash-mode`` tool result (Codex writes stdout and stderr as one
    aggregated stream, so no part of it can be told to be stderr: indexed only with tool
    output on). A record that does not parse gives nothing, as before."""
    m = _SHELL_RECORD.search(text)
    if m is None or not m.group(1).strip():
        return []
    out = (m.group(2) or "").strip()
    return [Piece(Role.USER, LABEL_USER, "! " + m.group(1).strip())] + (
        [Piece(Role.TOOL, "tool:bash-mode", out, "bash-mode")] if out else [])


def _item(p: dict, bare: bool) -> list[Piece]:
    kind = string(p.get("type"))
    if kind == "message":
        role = p.get("role")
        if role == "assistant":
            text = "\n".join(_texts(p.get("content")))
            return [Piece(Role.ASSISTANT, LABEL_ASSISTANT, text)] if text.strip() else []
        if role == "user":
            shell = [piece for t in _texts(p.get("content")) if t.lstrip().startswith(_USER_SHELL)
                     for piece in user_shell_command(t)]
            texts = [t for t in _texts(p.get("content")) if not t.lstrip().startswith(_INJECTED)]
            text = "\n".join(texts)
            prompt = [Piece(Role.USER, LABEL_USER, text, prompt=any(t != "[image]" for t in texts))] if text.strip() else []
            return shell + prompt
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
    matches the file name's uuid, which then wins for good (formats.md 2.2). A spawned
    subagent's meta names its parent and where its own history starts (rule 5)."""
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
    source = p.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    spawn = spawn if isinstance(spawn, dict) else {}
    parent = string(spawn.get("parent_thread_id")) or string(p.get("parent_thread_id"))
    for key in ("parent", "agent_type", "own_from"):
        state.pop(key, None)
    if parent and parent != mid:
        state["parent"] = parent
        kind = string(spawn.get("agent_role")) or string(spawn.get("agent_nickname"))
        if kind:
            state["agent_type"] = kind[:80]
    start = p.get("subagent_history_start_ordinal")
    if isinstance(start, int) and not isinstance(start, bool) and start > 0:
        state["own_from"] = start


def _check(obj: dict, kind, payload) -> None:
    """Raise :class:`~crabsearch.sources.base.BadRecord` for a line of a kind this reader reads
    whose ``payload`` is not an object, or a ``user``/``assistant`` ``message`` item (in an
    envelope or bare) whose ``content`` is not a list (formats.md 2.2): such a line has nothing to
    read, and is skipped and counted rather than dropped without a word. A content list is read
    in part, as before (:func:`_texts`)."""
    if isinstance(kind, str) and kind in _READ_KINDS:
        if not isinstance(payload, dict):
            raise bad_field(obj, "payload", "an object")
        if kind != "response_item":
            return
        item, prefix = payload, "payload."
    elif "payload" not in obj and string(kind) in _BARE_ITEMS:
        item, prefix = obj, ""  # a pre-envelope item (formats.md 2.1)
    else:
        return
    if (item.get("type") == "message" and item.get("role") in ("user", "assistant")
            and not isinstance(item.get("content"), list)):
        raise bad_field(item, "content", "a list", prefix)


def _rolled_back(num_turns, state: dict) -> None:
    """``thread_rolled_back``: the last ``num_turns`` surviving user turns leave the active history
    (rule 3); their messages, and everything after them so far, become an abandoned range."""
    turns = state.get("turns")
    if not isinstance(num_turns, int) or isinstance(num_turns, bool) or num_turns <= 0 or not turns:
        return
    start = turns[-min(num_turns, len(turns))]
    del turns[-min(num_turns, len(turns)):]
    if start < state["next_index"]:
        abandon(state, start, state["next_index"])


def _lines(path: Path, start: int, stats: LineStats) -> Iterator[Record]:
    """The JSON-object lines of a rollout from ``start`` (decompressed first for ``.jsonl.zst``)."""
    if str(path).endswith(ZST):
        return records_of_bytes(_decompressed(str(path)), start, stats)
    return iter_records(str(path), start, stats)


def _head(path: Path) -> Iterator[Record]:
    """The lines of a rollout from its start, for reading its head (rule 7)."""
    return _lines(path, 0, LineStats())


def _with_segments(path: Path, own: Iterator[Record], stats: LineStats) -> Iterator[Record]:
    """``own`` (a rollout's lines from its start), after the lines of the segments before it when
    its head holds a ``rollout_reference`` (rule 7); the head is looked at as it is read, so a
    rollout without one is read once, as before."""
    head: list[Record] = []
    for rec in own:
        head.append(rec)
        if rec.obj.get("type") not in ("session_meta", REFERENCE) or len(head) > HEAD_LINES:
            break
    if any(r.obj.get("type") == REFERENCE for r in head):
        chain = segment_chain(path, codex_root(path), _head)
        yield from segment_records(chain, lambda p, st: _lines(p, 0, st), stats)
    yield from head
    yield from own


def plain_name(path: Path) -> str:
    """A rollout's file name without the ``.zst`` of a compressed one (``rollout-...jsonl``)."""
    return path.name.removesuffix(ZST)


_ZCACHE: "OrderedDict[tuple, bytes]" = OrderedDict()
_ZLOCK = threading.Lock()


def _decompressed(path: str) -> bytes:
    """The decompressed bytes of a ``.jsonl.zst`` (opened as a regular file only, through
    ``zstandard``), at most :data:`ZST_MAX`; the last one up to :data:`ZST_CACHED` is kept,
    keyed by the file's size, mtime and inode. Raises ``OSError`` (also when ``zstandard`` is
    missing or the data is not zstd)."""
    with open_file(path) as fh:
        st = os.fstat(fh.fileno())
        key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
        with _ZLOCK:
            if key in _ZCACHE:
                return _ZCACHE[key]
        data = unzstd(fh, ZST_MAX, "the rollout")
    if len(data) <= ZST_CACHED:
        with _ZLOCK:
            _ZCACHE[key] = data
            while len(_ZCACHE) > 1:
                _ZCACHE.popitem(last=False)
    return data


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

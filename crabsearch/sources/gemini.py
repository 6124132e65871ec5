"""Gemini CLI chats: ``$GEMINI_CLI_HOME/.gemini`` (else ``~/.gemini``), files
``tmp/<project-id>/chats/session-*.jsonl`` (current), ``session-*.json`` (legacy whole file) and
subagent chats ``chats/<parentSessionId>/*.jsonl``.

Rules come from ``shared/reference/formats.md`` section 3 (3.1 layout, 3.2 the legacy ``.json``
ConversationRecord, 3.3 the append-only ``.jsonl`` records, 3.4 roles/title/tools, 3.5 resume)
and 7.3 (role mapping). Decisions and limitations of this module:

* Line 1 (and any later line without ``id`` that carries ``sessionId``) is metadata: session id,
  ``directories[0]`` as the project, ``summary`` as the title. A subagent chat's parent session
  id comes from its ``chats/<parent>/`` directory.
* A message yields, in order: ``thoughts`` (one ``thinking`` piece), its ``content`` text
  (``user`` -> user prompt, ``gemini``/``model`` -> assistant), then for each ``toolCalls`` entry
  the call (``tool-call:<name>``, args as JSON) and, when present, its result (``result``
  functionResponse output, else ``resultDisplay``). ``info`` / ``error`` / ``warning`` are skipped.
* **The chat is a map, replayed** (rules 7-9, as Gemini CLI itself loads a chat:
  google-gemini/gemini-cli ``packages/core/src/services/chatRecordingService.ts``
  ``loadConversationRecord``, at 5411f113cafa): messages live in an insertion-ordered map by
  ``id``. The same ``id`` appended again replaces the earlier version **in its original
  position** (a JavaScript ``Map.set`` on an existing key): one message, the latest text (rule 8).
  A ``{"$set": {"messages": [...]}}`` snapshot clears the map and refills it (rule 7).
  ``{"$rewindTo": X}`` deletes X and every message after it in map order; an X that is not in
  the map clears every message (rule 9). crabsearch yields every message ever seen, in the
  order its id first appeared, each from the line of its latest version (so a window or the
  session view shows the latest text); messages that are not in the final map are off the
  active history: ``Session.extra["rewound"]`` holds their ``[first, end)`` message-index ranges
  (they stay searchable, marked "on an abandoned branch"). Because an append can change any
  earlier message, a ``.jsonl`` is always read whole: its fingerprint includes its mtime, so
  every change is a full re-read (like a legacy ``.json``), and the state holds only the session.
* **Context is not a prompt** (rule 6): a ``user`` message whose text starts with
  ``<session_context>`` or ``<hook_context>``, or a command starting with ``/`` or ``?``
  (``isIgnoredUserContent`` in ``packages/core/src/utils/sessionUtils.ts``: not resumable
  conversation content; the UI skips the first two, ``packages/cli/src/utils/sessionUtils.ts``
  ``convertSessionToHistoryFormats``), is a ``system`` message labelled ``context``: never the
  title or anchor, not in the ``user`` field (system messages are not indexed).
* **Shell mode** (``!``): the record of a command the person ran (:func:`user_shell_command`)
  is ``! CMD`` as their text and its output a ``bash-mode`` tool result.
* **What the user typed** (rule 11): ``displayContent`` is the input as typed and shown by the
  CLI; ``content`` is what the model was sent, with ``@file`` references expanded by the
  ``read_many_files`` tool (``packages/cli/src/ui/hooks/atCommandProcessor.ts``). A message with
  both is shown, titled and indexed (``user`` field) from ``displayContent``; when ``content``
  says more, it follows as a tool result of ``read_many_files`` (shown folded; indexed as tool
  output, ``in:tools``, when tool-output indexing is on, since it holds file contents). Whether
  it is a prompt is decided on ``content``, as the CLI does.
* **The project** (rule 10): ``directories[0]``, else the path in ``tmp/<project>/.project_root``
  (written by ``packages/core/src/config/projectRegistry.ts`` for the short project ids that
  replaced hashes); the resume command then runs ``cd DIR && gemini --resume ID``.
* **Drift**: a line that is no message, ``$set``, ``$rewindTo`` or metadata (a new ``$``
  operator, say), and a message of a ``type`` this reader does not know, are counted
  (:func:`~crabsearch.sources.base.note_unknown`) and listed by ``crabsearch status``.
* **Saved chats and the prompt log** (:mod:`~crabsearch.sources.gemini_saved`): each
  ``tmp/<project>/checkpoint-<tag>.json`` (``/chat save <tag>``) is a session titled by its tag,
  its messages linked to the chat it was saved from; ``tmp/<project>/logs.json`` gives a session
  of prompts to each session id that has no chat file. Both are read whole at every change.
* **Legacy ``.json``** (3.2): parsed whole at every read (whole files are rewritten in place, so
  the fingerprint is a hash of the whole file and any change re-reads it from 0). A message's
  ``offset`` is its position in ``messages`` and ``length`` is 1; :meth:`GeminiSource.load`
  serves it from a small LRU of parsed files keyed by ``(path, mtime_ns, size)``. Drift files
  (``history[]`` of ``{role, parts, ts}``, ``start_time``) are read the same way.
* **``.json``/``.jsonl`` twins** (3.3: resuming a legacy chat writes ``<name>.jsonl`` with the
  whole history; same ``sessionId``, prefer the ``.jsonl``): ``discover`` drops ``X.json`` when
  ``X.jsonl`` sits beside it, and reading a ``.json`` whose ``sessionId`` is the metadata
  ``sessionId`` of any ``.jsonl`` in the same ``chats`` directory yields an empty session (not
  indexed). A ``.jsonl`` written after its ``.json`` was indexed under another name leaves the
  ``.json`` indexed until that file changes.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file, read_text
from ..jsonl import LineStats, Record, iter_records, read_record, read_whole
from ..model import (LABEL_ASSISTANT, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label, tool_result_label)
from .base import (capped, FileRead, Source, cd_and, dump_text, first_line, member_path, note_unknown, parse_ts,
                   string, walk_files)
from .gemini_saved import (history, is_checkpoint, link_to_origin, log_member, log_stat, logged_sessions, tag_of,
                           unlogged_chats)
from .pieces import Piece, emit, piece_text

ORIGINS_READ = 16
"""Chats read at most to find the one a saved chat was saved from."""
REWOUND_CAP = 64
"""Rewound index ranges kept on the session (the oldest two are merged beyond this)."""
SUMMARY_CAP = 8192
LABEL_CONTEXT = "context"
"""Label of injected context and commands in a ``user`` message (rule 6)."""
CONTEXT_TAGS = ("<session_context>", "<hook_context>")
COMMAND_MARKS = ("/", "?")
EXPANSION_TOOL = "read_many_files"
"""The tool Gemini CLI reads ``@file`` references with; a prompt's expanded ``content`` is its output."""
KNOWN_TYPES = frozenset({"user", "gemini", "model", "info", "error", "warning"})
"""Message ``type`` values this reader knows (formats.md 3.2-3.4; ``model``: drift files)."""
SHELL_RECORD = re.compile(r"I ran the following shell command:\n```sh\n(.*?)\n```\n\n"
                          r"This produced the following result:\n```\n(.*)\n```\s*", re.S)
"""A shell-mode command's record (``addShellCommandToGeminiHistory``: the command, then its
output, backslashes and backticks escaped with a backslash)."""
ROOT_CAP = 4096
"""Bytes of a ``.project_root`` file read (it holds one path)."""


class GeminiSource(Source):
    """Gemini CLI (formats.md section 3): ``.jsonl`` and legacy ``.json`` chats, one session per file."""

    agent = "gemini"
    order = 30
    env_var = "GEMINI_CLI_HOME"
    locations = ("`~/.gemini/tmp/*/chats/session-*.jsonl` and legacy `.json` (one session when both exist), "
                 "subagent chats")
    reads = ("the chat replayed as Gemini does (an updated message keeps its place, `$set` snapshots and "
             "`$rewindTo` as abandoned branches); what you typed (`displayContent`); context and commands not "
             "as prompts; the project from `.project_root`; `/chat save` checkpoints (titled by their tag) and"
             " `logs.json` prompts of sessions whose chat is gone")
    override = "`GEMINI_CLI_HOME=DIR` (uses `DIR/.gemini`)"
    upstream = ("`google-gemini/gemini-cli` `packages/core` (chat recording, `core/logger.ts`) @5411f113ca; "
                "formats.md section 3")
    checked = "2026-12-06: 0.61.0"
    display = "Gemini CLI"
    badge = "Gemini"
    known_kinds = {"message": KNOWN_TYPES, "record": frozenset({"$set", "$rewindTo"})}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
        base = env.get("GEMINI_CLI_HOME")
        return [(Path(base).expanduser() if base else home) / ".gemini"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``tmp/*/chats/session-*.jsonl``, subagent chats ``tmp/*/chats/*/*.jsonl`` and legacy
        ``tmp/*/chats/session-*.json`` unless a ``.jsonl`` of the same name sits beside it; saved
        chats ``tmp/*/checkpoint-*.json``; ``tmp/*/logs.json#<session id>`` for each logged
        session without a chat file."""
        yield from self._chats(env, home)
        for root in self.roots(env, home):
            yield from walk_files(root / "tmp", "*/checkpoint-*.json")
            for logs in walk_files(root / "tmp", "*/logs.json"):
                for sid in unlogged_chats(logs.parent, logged_sessions(str(logs))):
                    yield Path(member_path(logs, sid))

    def _chats(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for pattern in ("*/chats/session-*.jsonl", "*/chats/*/*.jsonl", "*/chats/session-*.json"):
                for path in walk_files(root / "tmp", pattern):
                    if path.suffix == ".json" and path.with_suffix(".jsonl").is_file():
                        continue  # the .jsonl twin holds the whole history (formats.md 3.3)
                    if path not in seen:
                        seen.add(path)
                        yield path

    def new_state(self, path: Path) -> dict:
        """A subagent chat's parent session id comes from its ``chats/<parent>/`` directory; the
        project's path from ``tmp/<project>/.project_root`` (rule 10)."""
        sub = path.parent.parent.name == "chats"
        state: dict = {"parent": path.parent.name if sub else None}
        parents = path.parents
        root = project_root(parents[2 if sub else 1]) if len(parents) > (2 if sub else 1) else None
        if root:
            state["root"] = root
        return state

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One line of a legacy read loop; ``.jsonl`` files are replayed whole (:meth:`read`)."""
        raise NotImplementedError("Gemini chats are read by GeminiSource.read")

    def finish(self, state: dict, session: Session) -> None:
        """Session id = metadata ``sessionId`` else file stem; project = ``directories[0]`` else
        ``.project_root``; title = ``summary`` > first active prompt (its ``displayContent``) > first
        rewound prompt (formats.md 3.4); anchor = that prompt; ``extra["rewound"]`` = message-index
        ranges off the active history."""
        session.session_id = state.get("sid") or Path(session.path).stem
        session.parent_session_id = state.get("parent")
        if session.project is None and state.get("root"):
            session.project = state["root"]
        session.title = (state.get("summary") or state.get("first_prompt") or state.get("rewound_prompt")
                         or None)
        session.summary = capped(state.get("summary") or "", SUMMARY_CAP) or None
        session.anchor_index = state.get("anchor", state.get("rewound_anchor", 0))
        if state.get("rewound"):
            session.extra["rewound"] = [list(r) for r in state["rewound"]]

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && gemini --resume <uuid>`` (formats.md 3.5: run from the project); a
        saved chat: ``gemini -i '/chat resume <tag>'``; a session known from the prompt log only:
        None."""
        if session.extra.get("saved_chat"):
            return cd_and(session.project, ["gemini", "-i", f"/chat resume {session.extra['saved_chat']}"])
        if log_member(session.path):
            return None
        return cd_and(session.project, ["gemini", "--resume", session.session_id])

    # -- saved chats and the prompt log (gemini_saved) ------------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        """A ``logs.json`` unit: ``(prompts, newest prompt time, same)``; files: ``os.stat``."""
        if log_member(str(path)):
            n, ns, _ = log_stat(str(path))
            return n, ns, ns
        return super().stat(path)

    def in_bytes(self, path: str) -> bool:
        return not log_member(str(path)) and super().in_bytes(path)

    def _read_log(self, path: str) -> FileRead:
        """The prompts one session left in ``logs.json`` (offset: position in that session's list)."""
        container, sid = log_member(path)
        stats = LineStats()
        state: dict = {"next_index": 0, "sid": sid}
        root = project_root(Path(container).parent)
        if root:
            state["root"] = root
        session = Session(agent=self.agent, session_id=sid, path=path)
        messages: list[Message] = []
        for n, e in enumerate(logged_sessions(container).get(sid, [])):
            rec = Record({"type": "user", "content": e["message"], "timestamp": e["timestamp"]}, n, 1)
            self.take(rec, state, session, messages, stats, f"prompt {n}", _json_message)
        self._seal(state, session, stats)
        return FileRead(session, messages, 0, state, stats)

    def _read_checkpoint(self, path: Path) -> FileRead:
        """A saved chat (``/chat save``): its ``Content`` list, titled by its tag, dated by the
        file, its messages linked to the chat it was saved from (module ``gemini_saved``)."""
        data, size = read_whole(str(path))
        stats = LineStats(end_offset=size)
        tag = tag_of(path)
        state: dict = {"next_index": 0, "sid": f"{path.stem}@{path.parent.name}", "summary": tag}
        root = project_root(path.parent)
        if root:
            state["root"] = root
        session = Session(agent=self.agent, session_id=path.stem, path=str(path))
        messages: list[Message] = []
        if data is None:
            stats.skip("broken JSON")
        for n, content in enumerate(history(data)):
            if not isinstance(content, dict):
                stats.skip("not a JSON object", f"message {n}")
                continue
            self.take(Record(content, n, 1), state, session, messages, stats, f"message {n}", _json_message)
        mtime = datetime.fromtimestamp(os.stat(path).st_mtime, tz=timezone.utc)
        origin = self._origin(path, messages, mtime)
        if origin is not None:
            link_to_origin(messages, origin.messages)
            session.extra["saved_from"] = origin.session.session_id
            session.project = origin.session.project
        for m in messages:
            session.touch(m.timestamp)
        session.touch(mtime)
        session.extra["saved_chat"] = tag
        self._seal(state, session, stats)
        session.summary = None  # the tag is the title, not a summary
        state["session"] = session.to_state()
        return FileRead(session, messages, size, state, stats)

    def _origin(self, path: Path, saved: list[Message], written: datetime) -> FileRead | None:
        """The chat ``path`` was saved from: of the project's chats that started before it was
        written (by the time in their names), the latest whose prompts begin with its prompts."""
        prompts = [m.text for m in saved if m.role is Role.USER and m.label == LABEL_USER]
        if not prompts:
            return None
        stamp = written.strftime("%Y-%m-%dT%H-%M")
        chats = sorted((p for p in walk_files(path.parent / "chats", "session-*.json*")
                        if p.suffix in (".json", ".jsonl") and p.name[8:24] <= stamp),
                       key=lambda p: p.name[8:24], reverse=True)
        for chat in chats[:ORIGINS_READ]:
            try:
                read = self.read(chat)
            except OSError:
                continue
            said = [m.text for m in read.messages if m.role is Role.USER and m.label == LABEL_USER]
            if said[:len(prompts)] == prompts:
                return read
        return None

    # -- the .jsonl map, replayed --------------------------------------------------------------

    def _read_jsonl(self, path: Path) -> FileRead:
        """Replay the whole chat (module docstring, rules 7-9), then yield every message ever seen
        in first-seen order from its latest version; those not in the final map are rewound."""
        stats = LineStats()
        state = self.new_state(path) | {"next_index": 0}
        session = Session(agent=self.agent, session_id=path.stem, path=str(path))
        chat = _Chat()
        for rec in iter_records(str(path), 0, stats):
            # an unterminated last line is read too: the next change re-reads the whole file
            self.take(rec, state, session, [], stats if rec.complete else LineStats(), rec.offset,
                      lambda r, st, se, out: chat.replay(r, st, se))
        messages: list[Message] = []
        cache: dict[int, tuple[dict | None, dict]] = {}  # the last line read: (record, its pieces)
        ranges: list[list[int]] = []
        for mid, (offset, length, k) in chat.latest.items():
            active = mid in chat.active
            if offset not in cache:
                cache.clear()
                try:
                    cache[offset] = (read_record(str(path), offset, length), {})
                except OSError:
                    cache[offset] = (None, {})
            obj, split = cache[offset]
            if obj is None:
                stats.skip("changed while read", offset)
                continue
            first = state["next_index"]
            self.take(Record(obj, offset, length), state, session, messages, stats, offset,
                      lambda r, st, se, out, k=k, mid=mid, active=active, split=split:
                      _emit_message(r, k, mid, active, st, se, out, split))
            if not active and state["next_index"] > first:
                if ranges and ranges[-1][1] == first:
                    ranges[-1][1] = state["next_index"]
                else:
                    ranges.append([first, state["next_index"]])
        while len(ranges) > REWOUND_CAP:
            ranges[:2] = [[ranges[0][0], ranges[1][1]]]
        if ranges:
            state["rewound"] = ranges
        self._seal(state, session, stats)
        return FileRead(session, messages, stats.end_offset, state, stats)

    # -- legacy whole-file .json ---------------------------------------------------------------

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The whole chat, always from 0 (``start``/``state`` ignored): a ``.jsonl`` replayed as a
        map (module docstring), a ``.json`` parsed whole. Raises ``OSError`` when the file cannot
        be read; a broken line or message, or one the reader cannot handle, is skipped and
        counted."""
        if log_member(str(path)):
            return self._read_log(str(path))
        if Path(path).suffix != ".json":
            return self._read_jsonl(Path(path))
        if is_checkpoint(Path(path)):
            return self._read_checkpoint(Path(path))
        return self._read_json(Path(path))

    def fingerprint(self, path: str, size: int) -> str:
        """``.json``: SHA-1 of the whole file (rewritten in place: any change is a full re-read).
        ``.jsonl``: the head hash and the file's mtime, so any change (an append can replace or
        rewind any earlier message) is a full re-read too. Raises ``OSError``."""
        if log_member(str(path)):
            return log_stat(str(path))[2]
        if Path(path).suffix != ".json":
            return f"{super().fingerprint(path, size)}:{os.stat(path).st_mtime_ns}"
        return hashlib.sha1(read_file(path)).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """``.json``: message number ``offset`` of the (cached) parsed file, or None.
        ``.jsonl``: the JSONL line. Raises ``OSError``."""
        member = log_member(str(path))
        if member:
            entries = logged_sessions(member[0]).get(member[1], [])
            e = entries[offset] if 0 <= offset < len(entries) else None
            return {"type": "user", "content": e["message"], "timestamp": e["timestamp"]} if e else None
        if Path(path).suffix != ".json":
            return super().load(path, offset, length)
        msgs = _json_messages(read_whole(path)[0])
        return msgs[offset] if 0 <= offset < len(msgs) and isinstance(msgs[offset], dict) else None

    def _read_json(self, path: Path) -> FileRead:
        data, size = read_whole(str(path))
        stats = LineStats(end_offset=size)
        state = self.new_state(path) | {"next_index": 0}
        session = Session(agent=self.agent, session_id=path.stem, path=str(path))
        messages: list[Message] = []
        if data is None:
            stats.skip("broken JSON")
        elif not isinstance(data, dict):
            stats.skip("not a JSON object")
        elif not (string(data.get("sessionId")) and _twin_ids(path).get(data["sessionId"])):
            self.take(Record(data, 0, 0), state, session, messages, stats, "chat metadata", _json_meta)
            for n, m in enumerate(_json_messages(data)):
                if not isinstance(m, dict):
                    stats.skip("not a JSON object", f"message {n}")
                    continue
                self.take(Record(m, n, 1), state, session, messages, stats, f"message {n}", _json_message)
        self._seal(state, session, stats)
        return FileRead(session, messages, size, state, stats)


def _json_meta(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """A whole-file chat's own fields: session id, summary, directories, start and update times."""
    data = rec.obj
    _meta(data, state, session)
    session.touch(parse_ts(data.get("startTime") or data.get("start_time")))
    session.touch(parse_ts(data.get("lastUpdated")))


def _json_message(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """One message of a whole-file chat (``offset`` = its position, ``length`` 1)."""
    ts = parse_ts(rec.obj.get("timestamp", rec.obj.get("ts")))
    session.touch(ts)
    emit(_message(rec.obj), rec, state, out, ts)


def _json_messages(data) -> list:
    """The message list of a whole-file chat: ``messages`` (3.2), or drift ``history``; a saved
    chat's ``history`` (or its bare legacy list)."""
    if isinstance(data, list):
        return history(data)
    if not isinstance(data, dict):
        return []
    msgs = data.get("messages", data.get("history"))
    return msgs if isinstance(msgs, list) else []


def _twin_ids(path: Path) -> dict[str, bool]:
    """``{sessionId: True}`` of the ``.jsonl`` chats beside ``path`` (their metadata line)."""
    ids: dict[str, bool] = {}
    try:
        names = [n for n in os.listdir(path.parent) if n.endswith(".jsonl")]
    except OSError:
        return ids
    for name in names:
        try:
            for rec in iter_records(str(path.parent / name)):
                if string(rec.obj.get("sessionId")):
                    ids[rec.obj["sessionId"]] = True
                break  # only the first record is metadata
        except OSError:
            continue
    return ids


class _Chat:
    """The replayed map of one ``.jsonl`` chat: ``latest`` = every id ever seen, in first-seen
    order, with where its latest version is (``(offset, length, k)``: the line, and the position
    in a ``$set`` snapshot's ``messages``, -1 for a message line); ``active`` = the ids in the
    chat's own map, in its order (a dict used as an ordered set)."""

    def __init__(self):
        self.latest: dict[str, tuple[int, int, int]] = {}
        self.active: dict[str, None] = {}

    def replay(self, rec: Record, state: dict, session: Session) -> None:
        """One line, as ``loadConversationRecord`` applies it."""
        obj = rec.obj
        if isinstance(obj.get("$rewindTo"), str):
            rid = obj["$rewindTo"]
            if rid in self.active:
                ids = list(self.active)
                for gone in ids[ids.index(rid):]:
                    del self.active[gone]
            else:
                self.active.clear()  # rule 9: an id not in the chat clears it
            return
        if isinstance(obj.get("id"), str):
            self._set(obj, rec, -1, state, session)
            return
        patch = obj.get("$set")
        if isinstance(patch, dict):
            _meta(patch, state, session)
            session.touch(parse_ts(patch.get("lastUpdated")))
            if isinstance(patch.get("messages"), list):
                self.active.clear()  # rule 7: a snapshot replaces the message list
                for k, m in enumerate(patch["messages"]):
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        self._set(m, rec, k, state, session)
            return
        if isinstance(obj.get("sessionId"), str):
            _meta(obj, state, session)
            session.touch(parse_ts(obj.get("startTime")))
            session.touch(parse_ts(obj.get("lastUpdated")))
            return
        dollar = next((k for k in obj if isinstance(k, str) and k.startswith("$")), None)
        note_unknown(state, dollar or obj.get("type"))

    def _set(self, m: dict, rec: Record, k: int, state: dict, session: Session) -> None:
        mid = m["id"]
        kind = m.get("type") or m.get("role")
        if not isinstance(kind, str) or kind not in KNOWN_TYPES:
            note_unknown(state, kind)
        session.touch(parse_ts(m.get("timestamp", m.get("ts"))))
        self.latest[mid] = (rec.offset, rec.length, k)  # a known id keeps its place (rule 8)
        self.active[mid] = None


def _emit_message(rec: Record, k: int, mid: str, active: bool, state: dict, session: Session,
                  out: list[Message], split: dict) -> None:
    """The messages of id ``mid`` from its latest version: message ``k`` of a ``$set`` snapshot
    line (-1: the line itself). Title candidates: the first active prompt, else the first
    rewound one. ``split`` keeps the line's pieces for the next id of the same line: a snapshot
    of N messages is split once, not N times (that was quadratic: 16 s for 2,000 messages)."""
    if "pieces" not in split:
        pieces, _, stamps, index = _pieces_owned(rec.obj)
        by_owner: dict[int, list[int]] = {}
        for i, owner in enumerate(index):
            by_owner.setdefault(owner, []).append(i)
        split.update(pieces=pieces, stamps=stamps, by_owner=by_owner)
    pieces, stamps = split["pieces"], split["stamps"]
    mine = split["by_owner"].get(k, []) if k >= 0 else list(range(len(pieces)))
    base = len(out)
    emit([pieces[i] for i in mine], rec, state, out, None, ns="_")
    for j, (m, i) in enumerate(zip(out[base:], mine)):
        m.part = i  # the piece's place in the line, as load() and message_text() count them
        m.timestamp = stamps[i]
        m.uid = f"{mid}:{j}"
        if pieces[i].prompt:
            anchor, title = ("anchor", "first_prompt") if active else ("rewound_anchor", "rewound_prompt")
            if anchor not in state:
                state[anchor] = state["next_index"] + j  # the read loop numbers from next_index
                state[title] = first_line(pieces[i].text, 80)
    for key in ("_anchor", "_first_prompt", "_fallback_anchor", "_fallback_title"):
        state.pop(key, None)


def project_root(project_dir: Path) -> str | None:
    """The project path in ``<project_dir>/.project_root`` (rule 10), or None when it is
    missing, unreadable, not a regular file, or not a path."""
    try:
        text = read_text(project_dir / ".project_root", "utf-8", errors="replace")
    except OSError:
        return None
    text = text[:ROOT_CAP].strip()
    return text if text and "\n" not in text and "\0" not in text else None


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one line, in order: a message line, or a ``$set`` messages snapshot."""
    return _pieces_owned(obj)[0]


def _pieces_owned(obj: dict):
    """(pieces, owning message id per piece, timestamp per piece, position of the owning message
    in a ``$set`` snapshot per piece: -1 for a message line)."""
    patch = obj.get("$set")
    if isinstance(patch, dict):
        msgs = patch.get("messages")
        msgs = list(enumerate(msgs)) if isinstance(msgs, list) else []
    elif "id" in obj or "type" in obj or "role" in obj:  # a line, or one legacy .json message
        msgs = [(-1, obj)]
    else:
        msgs = []
    pieces, owners, stamps, index = [], [], [], []
    for k, m in msgs:
        if not isinstance(m, dict):
            continue
        ps = _message(m)
        pieces += ps
        owners += [string(m.get("id"))] * len(ps)
        stamps += [parse_ts(m.get("timestamp", m.get("ts")))] * len(ps)
        index += [k] * len(ps)
    return pieces, owners, stamps, index


def _message(m: dict) -> list[Piece]:
    kind = m.get("type") or m.get("role")  # drift files and saved chats: ``Content`` ``{role, parts}``
    if kind == "user":
        return _user(m) + _part_tools(m)
    if kind not in ("gemini", "model"):
        return []  # info / error / warning notices, unknown types
    out: list[Piece] = []
    thoughts = m.get("thoughts")
    if isinstance(thoughts, list):
        texts = []
        for t in thoughts:
            if isinstance(t, dict):
                t = "\n".join(x for x in (string(t.get("subject")), string(t.get("description"))) if x.strip())
            if isinstance(t, str) and t.strip():
                texts.append(t)
        if texts:
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, "\n\n".join(texts)))
    text = _content(m.get("content") if "content" in m else m.get("parts"))
    if text.strip():
        out.append(Piece(Role.ASSISTANT, LABEL_ASSISTANT, text))
    calls = m.get("toolCalls")
    for c in calls if isinstance(calls, list) else []:
        if not isinstance(c, dict):
            continue
        name = string(c.get("name")) or "unknown"
        out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(c.get("args")), name))
        result = _result(c)
        if result is not None:
            out.append(Piece(Role.TOOL, tool_result_label(name), result, name))
    return out + _part_tools(m)


def _part_tools(m: dict) -> list[Piece]:
    """The ``functionCall`` / ``functionResponse`` parts of a ``Content`` (``{role, parts}``, a
    saved chat's history): tool calls and their results, paired by name."""
    parts = m.get("parts") if "content" not in m else None
    out: list[Piece] = []
    for part in parts if isinstance(parts, list) else []:
        call = part.get("functionCall") if isinstance(part, dict) else None
        resp = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(call, dict):
            name = string(call.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(call.get("args")), name))
        elif isinstance(resp, dict):
            name = string(resp.get("name")) or "unknown"
            text = _result({"result": [part]}) or ""
            out.append(Piece(Role.TOOL, tool_result_label(name), text, name))
    return out


def _user(m: dict) -> list[Piece]:
    """A user message (rules 6 and 11): context and commands are ``system`` ``context``; the text
    shown is ``displayContent`` when present, with the expanded ``content`` after it as
    ``read_many_files`` output when it says more."""
    content = _content(m.get("content") if "content" in m else m.get("parts"))
    shown = _content(m["displayContent"]) if m.get("displayContent") else ""
    text = shown if shown.strip() else content
    if not text.strip():
        return []
    head = content.strip() or text.strip()
    shell = user_shell_command(content)
    if shell:
        return shell
    if head.startswith(CONTEXT_TAGS + COMMAND_MARKS) or text.strip().startswith(CONTEXT_TAGS):
        return [Piece(Role.SYSTEM, LABEL_CONTEXT, text)]
    out = [Piece(Role.USER, LABEL_USER, text, prompt=text.strip() != "[image]")]
    if shown.strip() and content.strip() and content.strip() != shown.strip():
        out.append(Piece(Role.TOOL, tool_result_label(EXPANSION_TOOL), content, EXPANSION_TOOL))
    return out


def user_shell_command(text: str) -> list[Piece]:
    """A command the person ran in shell mode (``!``), as the chat records it: a ``user`` message
    whose one text part is ``I ran the following shell command:``, ``CMD`` in a ``sh`` fence,
    ``This produced the following result:`` and ``OUT`` in a fence (:data:`SHELL_RECORD`; ``addShellCommandToGeminiHistory`` in
    ``packages/cli/src/ui/hooks/useExecutionLifecycle.ts``; ``GeminiChat.addHistory`` records it
    with ``recordSyntheticMessage``, ``packages/core/src/core/geminiChat.ts``; both at
    google-gemini/gemini-cli 5411f113ca). ``! CMD`` is the person's own text; ``OUT`` (stdout and
    stderr as one stream, after ``Command exited with code N.`` and the like) a ``bash-mode``
    tool result, indexed only with tool output on. Empty when ``text`` is no such record."""
    m = SHELL_RECORD.fullmatch(text.strip() + "\n")
    if m is None or not m.group(1).strip():
        return []
    command, out = (re.sub(r"\\([\\`])", r"\1", g).strip() for g in m.groups())
    return [Piece(Role.USER, LABEL_USER, "! " + command)] + (
        [Piece(Role.TOOL, "tool:bash-mode", out, "bash-mode")] if out else [])


def _content(content) -> str:
    """A ``content`` string or Gemini ``Part[]`` (``text`` parts; inline data -> ``[image]``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if part.get("thought") is True:
                continue
            if string(part.get("text")):
                out.append(part["text"])
            elif isinstance(part.get("inlineData"), dict) or isinstance(part.get("fileData"), dict):
                out.append("[image]")
    return "\n".join(out)


def _result(call: dict) -> str | None:
    """A tool call's result text: functionResponse ``response.output`` (or the whole response),
    else a string ``resultDisplay``; None when the call has no result yet."""
    result = call.get("result")
    texts = []
    if isinstance(result, dict):
        result = [result]
    if isinstance(result, list):
        for part in result:
            if not isinstance(part, dict):
                continue
            fr = part.get("functionResponse")
            if isinstance(fr, dict):
                resp = fr.get("response")
                if isinstance(resp, dict) and isinstance(resp.get("output"), str):
                    texts.append(resp["output"])
                elif isinstance(resp, dict) and isinstance(resp.get("error"), str):
                    texts.append(resp["error"])
                elif resp is not None:
                    texts.append(dump_text(resp))
            elif string(part.get("text")):
                texts.append(part["text"])
    if texts:
        return "\n".join(texts)
    if isinstance(call.get("resultDisplay"), str):
        return call["resultDisplay"]
    return None


# -- small helpers -----------------------------------------------------------------------------


def _meta(p: dict, state: dict, session: Session) -> None:
    """Apply metadata fields (line 1 or a ``$set`` patch)."""
    if string(p.get("sessionId")) and not state.get("sid"):
        state["sid"] = p["sessionId"]
    if "summary" in p:
        state["summary"] = string(p.get("summary")).strip() or None
    dirs = p.get("directories")
    if isinstance(dirs, list) and dirs and string(dirs[0]):
        session.project = dirs[0]


SOURCE = GeminiSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

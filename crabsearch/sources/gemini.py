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
* **Re-written ids** (formats.md 3.3: last wins): the shared read loop numbers messages in file
  order and cannot retract one, so pieces of a re-appended id whose text was already yielded for
  that id are skipped (kept in a bounded state map); pieces that changed (streamed text grown, a
  tool result added) are yielded as *new* messages, so an earlier partial version stays indexed.
* ``$set`` patches: ``summary`` (title and session summary) and ``directories`` update the
  session; a ``messages`` snapshot yields the messages it holds (de-duplicated by id as above).
* **``$rewindTo: X``** (formats.md 3.3: X and everything after it is deleted): messages already
  indexed cannot be retracted, so they stay searchable, but they leave the *active* history:
  ``Session.extra["rewound"]`` lists the ``[first, end)`` message-index ranges that were rewound
  (from the first message yielded for X to the end at that point), the title and anchor move to
  the first prompt still active (a rewound first prompt is only a last-resort title), and the
  de-dup memory of the rewound ids is dropped. A rewind to an id no longer in the bounded map is
  ignored.
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
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import LineStats, Record, iter_records, read_whole
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label, tool_result_label)
from .base import capped, FileRead, Source, cd_and, dump_text, parse_ts, string, walk_files
from .pieces import Piece, emit, piece_text

SEEN_CAP = 256
"""Message ids whose first index and yielded piece hashes are kept in state (oldest dropped first)."""
REWOUND_CAP = 64
"""Rewound index ranges kept on the session (the oldest two are merged beyond this)."""
SUMMARY_CAP = 8192


class GeminiSource(Source):
    """Gemini CLI (formats.md section 3): ``.jsonl`` and legacy ``.json`` chats, one session per file."""

    agent = "gemini"
    order = 30
    env_var = "GEMINI_CLI_HOME"
    display = "Gemini CLI"
    badge = "Gemini"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
        base = env.get("GEMINI_CLI_HOME")
        return [(Path(base).expanduser() if base else home) / ".gemini"]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``tmp/*/chats/session-*.jsonl``, subagent chats ``tmp/*/chats/*/*.jsonl`` and legacy
        ``tmp/*/chats/session-*.json`` unless a ``.jsonl`` of the same name sits beside it."""
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
        """A subagent chat's parent session id comes from its ``chats/<parent>/`` directory."""
        parent = path.parent.name if path.parent.parent.name == "chats" else None
        return {"parent": parent, "seen": {}}

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        if "$rewindTo" in obj:
            _rewind(string(obj.get("$rewindTo")), state)
            return
        patch = obj.get("$set")
        if isinstance(patch, dict):
            _meta(patch, state, session)
            session.touch(parse_ts(patch.get("lastUpdated")))
            if isinstance(patch.get("messages"), list):
                self._emit(rec, state, session, out)
            return
        if "id" not in obj:
            if "sessionId" in obj:
                _meta(obj, state, session)
                session.touch(parse_ts(obj.get("startTime")))
                session.touch(parse_ts(obj.get("lastUpdated")))
            return
        self._emit(rec, state, session, out)

    def _emit(self, rec: Record, state: dict, session: Session,
              out: list[Message]) -> None:
        pieces, owners, stamps = _pieces_owned(rec.obj)
        seen: dict = state["seen"]
        skip = []
        counts: dict[tuple, int] = {}
        for i, p in enumerate(pieces):
            mid = owners[i]
            if not mid:
                continue
            k = (mid, p.label, p.text)
            counts[k] = counts.get(k, 0) + 1  # identical pieces within one version count apart
            h = hashlib.sha1(f"{p.label}\0{counts[k]}\0{p.text}".encode("utf-8", "replace")).hexdigest()[:12]
            first, hashes = seen.pop(mid, [None, []])
            if h in hashes:
                skip.append(i)
            else:
                hashes.append(h)
            seen[mid] = [first, hashes]  # re-insert: most recently used last
            while len(seen) > SEEN_CAP:
                del seen[next(iter(seen))]
        for ts in stamps:
            session.touch(ts)
        before = len(out)
        emit(pieces, rec, state, out, next((t for t in stamps if t), None), skip=skip)
        # A snapshot holds several messages, each with its own timestamp.
        kept = [i for i in range(len(pieces)) if i not in skip]
        nth = [sum(1 for j in range(i) if owners[j] == owners[i]) for i in range(len(pieces))]
        for m, i in zip(out[before:], kept):
            m.timestamp = stamps[i]
            if owners[i]:
                m.uid = f"{owners[i]}:{nth[i]}"
            entry = seen.get(owners[i])
            if entry is not None and entry[0] is None:
                entry[0] = m.message_index  # where a rewind to this id starts

    def finish(self, state: dict, session: Session) -> None:
        """Session id = metadata ``sessionId`` else file stem; title = ``summary`` > first user
        prompt (formats.md 3.4), still active after rewinds (else the first rewound prompt);
        anchor = that prompt; ``extra["rewound"]`` = rewound message-index ranges."""
        session.session_id = state.get("sid") or Path(session.path).stem
        session.parent_session_id = state.get("parent")
        session.title = (state.get("summary") or state.get("first_prompt") or state.get("rewound_prompt")
                         or None)
        session.summary = capped(state.get("summary") or "", SUMMARY_CAP) or None
        session.anchor_index = state.get("anchor", 0)
        if state.get("rewound"):
            session.extra["rewound"] = [list(r) for r in state["rewound"]]

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && gemini --resume <uuid>`` (formats.md 3.5: run from the project)."""
        return cd_and(session.project, ["gemini", "--resume", session.session_id])

    # -- legacy whole-file .json ---------------------------------------------------------------

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """``.jsonl``: the shared incremental loop. ``.json``: the whole file, always from 0
        (``start``/``state`` ignored). Raises ``OSError`` when the file cannot be read; a broken
        line or message, or one the reader cannot handle, is skipped and counted."""
        if Path(path).suffix != ".json":
            return super().read(path, start, state)
        return self._read_json(Path(path))

    def fingerprint(self, path: str, size: int) -> str:
        """``.json``: SHA-1 of the whole file (rewritten in place: any change is a full re-read).
        ``.jsonl``: the default head hash. Raises ``OSError``."""
        if Path(path).suffix != ".json":
            return super().fingerprint(path, size)
        return hashlib.sha1(read_file(path)).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """``.json``: message number ``offset`` of the (cached) parsed file, or None.
        ``.jsonl``: the JSONL line. Raises ``OSError``."""
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
    """The message list of a whole-file chat: ``messages`` (3.2), or drift ``history``."""
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


def _rewind(mid: str, state: dict) -> None:
    """Apply ``$rewindTo: mid``: note the rewound index range, forget the rewound ids, and move
    the title/anchor prompt when it was rewound."""
    entry = state["seen"].get(mid)
    if not entry or entry[0] is None:
        return
    first, end = entry[0], state["next_index"]
    for k in [k for k, v in state["seen"].items() if v[0] is None or v[0] >= first]:
        del state["seen"][k]
    if first < end:
        ranges = state.setdefault("rewound", [])
        ranges.append([first, end])
        if len(ranges) > REWOUND_CAP:
            ranges[:2] = [[ranges[0][0], ranges[1][1]]]
    if state.get("anchor", -1) >= first:
        prompt = state.pop("first_prompt", None)
        state["rewound_prompt"] = state.get("rewound_prompt") or prompt
        state.pop("anchor")


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one line, in order: a message line, or a ``$set`` messages snapshot."""
    return _pieces_owned(obj)[0]


def _pieces_owned(obj: dict):
    """(pieces, owning message id per piece, timestamp per piece)."""
    patch = obj.get("$set")
    if isinstance(patch, dict):
        msgs = patch.get("messages")
        msgs = [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []
    elif "id" in obj or "type" in obj or "role" in obj:  # a line, or one legacy .json message
        msgs = [obj]
    else:
        msgs = []
    pieces, owners, stamps = [], [], []
    for m in msgs:
        ps = _message(m)
        pieces += ps
        owners += [string(m.get("id"))] * len(ps)
        stamps += [parse_ts(m.get("timestamp", m.get("ts")))] * len(ps)
    return pieces, owners, stamps


def _message(m: dict) -> list[Piece]:
    kind = m.get("type") or m.get("role")  # drift files: ``{role, parts}``
    if kind == "user":
        text = _content(m.get("content") if "content" in m else m.get("parts"))
        return [Piece(Role.USER, LABEL_USER, text, prompt=bool(text.strip()) and text != "[image]")] \
            if text.strip() else []
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
    return out


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

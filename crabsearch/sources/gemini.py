"""Gemini CLI chats: ``$GEMINI_CLI_HOME/.gemini`` (else ``~/.gemini``), files
``tmp/<project-id>/chats/session-*.jsonl`` and subagent chats ``chats/<parentSessionId>/*.jsonl``.

Rules come from ``shared/reference/formats.md`` section 3 (3.1 layout, 3.3 the append-only
``.jsonl`` records, 3.4 roles/title/tools, 3.5 resume) and 7.3 (role mapping). Decisions and
limitations of this module:

* Only the current ``.jsonl`` format is read; the legacy whole-file ``.json`` is not discovered.
* Line 1 (and any later line without ``id`` that carries ``sessionId``) is metadata: session id,
  ``directories[0]`` as the project, ``summary`` as the title. A subagent chat's parent session
  id comes from its ``chats/<parent>/`` directory.
* A message line yields, in order: ``thoughts`` (one ``thinking`` piece), its ``content`` text
  (``user`` -> user prompt, ``gemini`` -> assistant), then for each ``toolCalls`` entry the call
  (``tool:<name>``, args as JSON) and, when present, its result (``result`` functionResponse
  output, else ``resultDisplay``). ``info`` / ``error`` / ``warning`` lines are skipped.
* **Re-written ids** (formats.md 3.3: last wins): the shared read loop numbers messages in file
  order and cannot retract one, so pieces of a re-appended id whose text was already yielded for
  that id are skipped (kept in a bounded state map); pieces that changed (streamed text grown, a
  tool result added) are yielded as *new* messages, so an earlier partial version stays indexed.
* ``$set`` patches: ``summary`` (title and session summary) and ``directories`` update the
  session; a ``messages`` snapshot yields the messages it holds (de-duplicated by id as above).
* ``$rewindTo`` is **not** applied: messages already yielded cannot be deleted by a source, so
  rewound messages stay in the index (the rewind only forgets the de-dup memory of the rewound id).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record
from ..model import (LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Message, Role, Session,
                     tool_call_label, tool_result_label)
from .base import Source, cd_and, parse_ts, dump_text, string, walk_files
from .pieces import Piece, emit, piece_text

SEEN_CAP = 256
"""Message ids whose yielded piece hashes are kept in state (oldest dropped first)."""
SUMMARY_CAP = 8192


class GeminiSource(Source):
    """Gemini CLI (formats.md section 3), current ``.jsonl`` chats. One session per file."""

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
        """``tmp/*/chats/session-*.jsonl`` and subagent chats ``tmp/*/chats/*/*.jsonl``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for pattern in ("*/chats/session-*.jsonl", "*/chats/*/*.jsonl"):
                for path in walk_files(root / "tmp", pattern):
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
            state["seen"].pop(string(obj.get("$rewindTo")), None)
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
            hashes = seen.pop(mid, [])
            if h in hashes:
                skip.append(i)
            else:
                hashes.append(h)
            seen[mid] = hashes  # re-insert: most recently used last
            while len(seen) > SEEN_CAP:
                del seen[next(iter(seen))]
        for ts in stamps:
            session.touch(ts)
        before = len(out)
        emit(pieces, rec, state, out, next((t for t in stamps if t), None), skip=skip)
        # A snapshot holds several messages, each with its own timestamp.
        kept = [i for i in range(len(pieces)) if i not in skip]
        for m, i in zip(out[before:], kept):
            m.timestamp = stamps[i]

    def finish(self, state: dict, session: Session) -> None:
        """Session id = metadata ``sessionId`` else file stem; title = ``summary`` > first user
        prompt (formats.md 3.4); anchor = first prompt."""
        session.session_id = state.get("sid") or Path(session.path).stem
        session.parent_session_id = state.get("parent")
        session.title = state.get("summary") or state.get("first_prompt") or None
        session.summary = (state.get("summary") or "")[:SUMMARY_CAP] or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && gemini --resume <uuid>`` (formats.md 3.5: run from the project)."""
        return cd_and(session.project, ["gemini", "--resume", session.session_id])


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
    elif "id" in obj:
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
    kind = m.get("type")
    if kind == "user":
        text = _content(m.get("content"))
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

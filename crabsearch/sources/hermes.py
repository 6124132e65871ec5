"""Hermes Agent (Nous Research) sessions: ``$HERMES_HOME/sessions/<session id>.jsonl`` (else
``~/.hermes``), and the same under each profile, ``profiles/<name>/sessions/``.

Rules come from Hermes's own code (NousResearch/hermes-agent, index version 00dd69bdbdae:
``hermes_constants.get_hermes_home`` -- ``$HERMES_HOME`` else ``~/.hermes``; profiles are homes
under ``profiles/<name>``; ``gateway/run.py`` writes the ``session_meta`` line of a fresh
transcript; ``hermes_state.divert_session_transcript_jsonl`` appends to
``sessions/<id>.jsonl``) and the peer parser agentsview ``internal/parser/hermes.go`` @b85eae5a7971
(line shapes, the skill-injection and compaction markers). Decisions:

* One file per session, append-only: the shared JSONL read loop. The session id is the file
  name's stem (``20260403_153620_5a3e2ff1``); the lines carry none.
* Lines are OpenAI chat messages with a ``role``: ``session_meta`` (first line: ``platform``,
  ``model``, ``tools``; yields nothing), ``user`` (``content`` a string or text parts) -> user
  prompt, ``assistant`` -> thinking (``reasoning``, else ``reasoning_content``), text and one
  ``tool-call:<function.name>`` per ``tool_calls`` entry, ``tool`` (``tool_call_id``) -> the
  tool result, named by pairing; ``system`` lines are the prompt, not indexed.
* A user line that starts ``[SYSTEM: The user has invoked the "<skill>" skill`` is Hermes's skill
  injection: the text after ``The user has provided the following instruction alongside the
  skill invocation:`` is the prompt, the rest a ``context:skill`` system message. One that starts
  ``[CONTEXT COMPACTION - REFERENCE ONLY]`` is the compaction summary (a summary, and the
  session's compaction point).
* Timestamps are naive ISO strings in the machine's local time (Python's ``datetime.now()``):
  read as local time.
* Hermes is not bound to a folder: no project. Title: the first prompt. Resume:
  ``hermes --resume <id>``.
* Hermes's newer builds keep sessions in ``state.db`` (SQLite) and write these JSONL files when
  that store is unavailable; ``state.db`` is not read here.
* **Drift**: a ``role`` this reader does not know is counted and listed by ``crabsearch status``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

from ..jsonl import Record
from ..model import LABEL_SUMMARY, LABEL_THINKING, Message, Role, Session
from .base import Source, cd_and, env_dir, note_unknown, parse_ts, string, walk_files
from .crabtalk import pieces_of as chat_pieces
from .pieces import Piece, emit, note_compaction, piece_text

ROLES = frozenset({"session_meta", "user", "assistant", "tool", "system"})
SKILL_PREFIX = '[SYSTEM: The user has invoked the "'
SKILL_INSTRUCTION = "The user has provided the following instruction alongside the skill invocation: "
RUNTIME_NOTE = "\n\n[Runtime note:"
COMPACTION_PREFIXES = ("[CONTEXT COMPACTION - REFERENCE ONLY]", "[CONTEXT COMPACTION \u2013 REFERENCE ONLY]")


class HermesSource(Source):
    """Hermes Agent: one JSONL transcript per session."""

    agent = "hermes"
    order = 350
    env_var = "HERMES_HOME"
    locations = "`~/.hermes/sessions/*.jsonl` (and `~/.hermes/profiles/*/sessions/`)"
    reads = ("skill injections as context, the user's instruction as the prompt; compaction summaries; "
             "not the newer `state.db` store")
    override = "`HERMES_HOME=DIR`"
    upstream = ("NousResearch/hermes-agent `hermes_constants.py`, `hermes_state.py`, `gateway/run.py` "
                "@00dd69bdbdae; agentsview `internal/parser/hermes.go` @b85eae5a7971")
    checked = "2026-12-06: hermes-agent 00dd69bdbdae"
    display = "Hermes Agent"
    badge = "Hermes"
    style = "bold white on purple4"
    known_kinds = {"role": ROLES}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$HERMES_HOME``, else ``~/.hermes``."""
        return [env_dir(env, "HERMES_HOME", home / ".hermes")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/*.jsonl`` and ``profiles/*/sessions/*.jsonl``."""
        for root in self.roots(env, home):
            yield from walk_files(root, "sessions/*.jsonl")
            yield from walk_files(root, "profiles/*/sessions/*.jsonl")

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        role = obj.get("role")
        if not isinstance(role, str) or role not in ROLES:
            note_unknown(state, role)
        ts = local_ts(obj.get("timestamp"))
        session.touch(ts)
        base = len(out)
        emit(pieces_of(obj), rec, state, out, ts)
        if any(m.role is Role.SUMMARY for m in out[base:]):
            note_compaction(session, state["next_index"] + next(
                i for i, m in enumerate(out[base:]) if m.role is Role.SUMMARY))

    def finish(self, state: dict, session: Session) -> None:
        """Title: the first prompt; no project (Hermes is not bound to a folder)."""
        session.title = state.get("first_prompt") or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """``hermes --resume <id>`` (Hermes's ``--resume SESSION_ID``; Hermes is not bound to a folder)."""
        return cd_and(None, ["hermes", "--resume", session.session_id])


def pieces_of(obj: dict) -> list[Piece]:
    """The pieces of one transcript line (see the module docstring)."""
    role = obj.get("role")
    if role not in ("user", "assistant", "tool"):
        return []
    pieces = chat_pieces(obj)
    if role == "assistant" and not any(p.label == LABEL_THINKING for p in pieces):
        thought = string(obj.get("reasoning")).strip()
        if thought:
            pieces.insert(0, Piece(Role.ASSISTANT, LABEL_THINKING, thought))
    if role == "user":
        pieces = [q for p in pieces for q in _user_piece(p)]
    return pieces


def _user_piece(p: Piece) -> list[Piece]:
    """A user text piece as Hermes meant it: a skill injection split into its context and the
    user's instruction, a compaction marker as a summary, else the prompt itself."""
    text = p.text.strip()
    if text.startswith(COMPACTION_PREFIXES):
        return [Piece(Role.SUMMARY, LABEL_SUMMARY, p.text)]
    if not text.startswith(SKILL_PREFIX):
        return [p]
    head, sep, said = text.partition(SKILL_INSTRUCTION)
    said = said.split(RUNTIME_NOTE, 1)[0].strip()
    out = [Piece(Role.SYSTEM, "context:skill", head.strip() if sep else text)]
    return out + ([p._replace(text=said)] if said else [])


def local_ts(value) -> datetime | None:
    """A Hermes timestamp: a naive ISO string in local time (an offset, when given, is kept)."""
    if isinstance(value, str) and value and "T" in value and not value.endswith(("Z", "z")) and \
            "+" not in value[10:] and "-" not in value[10:]:
        try:
            return datetime.fromisoformat(value).astimezone(timezone.utc)
        except (ValueError, OverflowError, OSError):
            return None
    return parse_ts(value) if isinstance(value, str) else None


SOURCE = HermesSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

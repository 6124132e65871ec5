"""The normalized model every source produces and every other layer consumes.

Plain dataclasses, no I/O. Sources (``crabsearch.sources``) turn agent transcripts into
:class:`Session` and :class:`Message`; the index stores them; search returns them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from enum import StrEnum


class Role(StrEnum):
    """Who a message comes from.

    ``user`` is the human; ``assistant`` the model's text, tool calls and thinking; ``tool`` a tool
    result; ``system`` harness notices; ``summary`` a compaction summary.
    """

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"
    SUMMARY = "summary"


# Labels, as the reference designs (Crabtalk, OpenClaw) use them. Tool labels carry the tool name:
# ``tool-call:Bash`` for a call, ``tool:Bash`` for its result.
LABEL_USER = "user"
LABEL_ASSISTANT = "assistant"
LABEL_THINKING = "thinking"
LABEL_SYSTEM = "system"
LABEL_SUMMARY = "summary"


def tool_call_label(name: str) -> str:
    """Label of a tool call message: ``tool-call:NAME``."""
    return f"tool-call:{name}"


def tool_result_label(name: str) -> str:
    """Label of a tool result message: ``tool:NAME``."""
    return f"tool:{name}"


@dataclass(slots=True)
class Message:
    """One message of a session, located in its transcript.

    ``message_index`` is the 0-based position in the session. ``offset`` and ``length`` are the
    byte span of the record (one JSONL line, without its newline) that holds the message; a record
    may hold several messages (a user line with several tool results), told apart by ``part``
    (0-based position among the messages the record yields). ``timestamp`` is timezone-aware UTC
    or None. ``text`` is the full text as the source extracted it (tool arguments rendered as
    text); whether it is indexed is decided by the index, from ``role`` and ``label``.

    ``uid`` is a stable id of the message where the format has one, the same in every file that
    copies it (a resumed or forked session's copy of earlier history): Claude Code
    ``<uuid>:<part>``, pi/OpenClaw ``<entry id>:<part>``, Gemini ``<message id>:<n>`` (n-th
    piece of that message); None for formats without ids (Codex). Search shows a message that
    several sessions share once, on the newest of them.
    """

    message_index: int
    role: Role
    label: str
    text: str
    offset: int
    length: int
    part: int = 0
    tool_name: str | None = None
    timestamp: datetime | None = None
    uid: str | None = None
    sidechain: bool = False
    """A subagent's turn written inline into its parent's transcript (Claude Code <= 1.0
    ``isSidechain`` lines); the session view can hide these (``s``)."""

    @property
    def is_tool_payload(self) -> bool:
        """True for tool calls (arguments) and tool results: text that may hold credentials."""
        return self.role is Role.TOOL or self.label.startswith("tool-call:")

    @property
    def is_thinking(self) -> bool:
        """True for model reasoning ("thinking") messages."""
        return self.label == LABEL_THINKING


@dataclass(slots=True)
class Session:
    """One agent session (one transcript file, or one subagent file).

    ``project`` is the working directory; ``started``/``updated`` are timezone-aware UTC or None;
    ``message_count`` counts every message the source yields (all roles). ``parent_session_id`` is
    set on subagent sessions. ``anchor_index`` is the message a row shows when only the title or
    summary matched: the first real user prompt (0 when there is none). ``archived`` is True for a
    session its agent archived (Codex ``archived_sessions/``, opencode ``time_archived``, OpenClaw
    transcript archives, Claude Code ``archived.json``): still searchable, marked in rows and JSON.
    ``extra["continued_in"]`` names the session this one was handed to (Claude Code's
    ``continued-in``), which its resume command resumes.
    """

    agent: str
    session_id: str
    path: str
    project: str | None = None
    git_branch: str | None = None
    title: str | None = None
    summary: str | None = None
    started: datetime | None = None
    updated: datetime | None = None
    message_count: int = 0
    parent_session_id: str | None = None
    anchor_index: int = 0
    extra: dict = field(default_factory=dict)
    archived: bool = False

    def touch(self, ts: datetime | None) -> None:
        """Widen ``started``/``updated`` to include ``ts`` (ignored when None)."""
        if ts is None:
            return
        if self.started is None or ts < self.started:
            self.started = ts
        if self.updated is None or ts > self.updated:
            self.updated = ts

    def to_state(self) -> dict:
        """JSON-safe dict (datetimes as epoch milliseconds); inverse of :meth:`from_state`."""
        d = asdict(self)
        for k in ("started", "updated"):
            d[k] = to_ms(d[k])
        return d

    @classmethod
    def from_state(cls, d: dict) -> "Session":
        """Rebuild a Session from :meth:`to_state` output."""
        d = dict(d)
        for k in ("started", "updated"):
            d[k] = from_ms(d.get(k))
        return cls(**d)


def to_ms(ts: datetime | None) -> int | None:
    """Epoch milliseconds of an aware datetime, or None."""
    return None if ts is None else int(ts.timestamp() * 1000)


def from_ms(ms: int | None) -> datetime | None:
    """Aware UTC datetime from epoch milliseconds, or None (0 and None both mean unknown)."""
    if not ms:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def iso(ts: datetime | None) -> str | None:
    """ISO-8601 UTC string with a ``Z`` suffix (millisecond precision), or None."""
    if ts is None:
        return None
    return ts.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

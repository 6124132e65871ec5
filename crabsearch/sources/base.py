"""What every source module provides, and helpers they share.

A source module (one per agent format) defines a subclass of :class:`Source` and an instance of
it named ``SOURCE``; ``crabsearch.sources`` collects every module's ``SOURCE`` into ``SOURCES``. Sources never know about the index: they discover
files and turn bytes into :class:`~crabsearch.model.Session` and
:class:`~crabsearch.model.Message`.

The rule every reader keeps: a record that a reader cannot handle, for any reason, is skipped and
counted (:meth:`Source.take`, ``FileRead.stats``), never fatal; nothing one record holds stops the
others from being read.

Incremental reading: :meth:`Source.read` takes the byte offset to start from and the ``state``
dict it returned last time (JSON-safe), and returns a :class:`FileRead` whose ``state`` resumes
exactly after the last complete line. A parsed but unterminated last line is yielded, but the
returned state is the one from *before* it, so the same messages (same ``message_index``) come
again when the file grows, and the index overwrites them instead of duplicating them.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import functools
import hashlib
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from ..files import kind_of, read_file
from ..jsonl import BOM, MAX_LINE, LineStats, Record, iter_records, loads, read_record
from ..model import Message, Session
from ..redact import redact


READERS_VERSION = 8
"""Bumped when a reader turns the same bytes into other messages or sessions. It is part of the
index stamp, so an index read by older readers is read again from the transcripts."""

TEXT_CAP = 64 * 1024
"""Characters of a message's text kept for indexing (display re-reads the record from the file)."""
TOOL_TEXT_CAP = 3072
"""Characters kept of a tool call's arguments or a tool result (never indexed by default)."""
READ_MARGIN = 4096
"""Characters a reader keeps beyond those caps, so that secrets are masked before the text is
cut to them (a PEM block or key cut at the cap is no longer recognisable as one)."""
HEAD_BYTES = 4096
"""Bytes of a file's head hashed to tell an appended file from a rewritten one."""
MEMBER_SEP = "#"
"""Separates a container file from a member in a unit path (``/x/opencode.db#ses_1``)."""


@dataclass
class FileRead:
    """The result of reading one transcript file (or its appended tail).

    ``session`` reflects everything read so far (including earlier reads, via the state).
    ``messages`` are only the messages read in *this* call, in order. ``end_offset`` is where the
    next read starts; ``state`` is what to pass back then. ``stats`` counts skipped lines.
    """

    session: Session
    messages: list[Message]
    end_offset: int
    state: dict
    stats: LineStats = field(default_factory=LineStats)


class Source:
    """One agent's transcript format. Subclasses set ``agent`` and implement the hooks.

    ``agent`` is the short name used in ``agent:`` filters and JSON (``claude``, ``codex``, ...);
    ``display`` is the human name; ``badge`` the short one on result rows (``Claude``). These and
    ``order``, ``env_var``, ``config_table``, ``project_tree`` and ``style`` are the agent's card
    (``crabsearch.sources.CARDS``): written as literals in the class body of the module's
    ``SOURCE``, they are read from its text without importing it.
    """

    agent: str = ""
    display: str = ""
    badge: str = ""
    order: int = 100
    """Where the agent sorts in lists (status, help): lower first."""
    env_var: str = ""
    """The agent's own directory override (``CLAUDE_CONFIG_DIR``); config ``[sources]`` extra
    directories are read by discovering with it set to each of them."""
    locations: str = ""
    """Where its transcripts are, as the README's agent table says it (Markdown)."""
    reads: str = ""
    """What the reader reads beyond what you and the assistant said, for that table (Markdown)."""
    override: str = ""
    """How to point it elsewhere, for that table (Markdown; its ``env_var`` at least)."""
    upstream: str = ""
    """Where its rules come from: the agent's own code (file and commit, or release), else the
    peer parser or samples it follows (Markdown)."""
    checked: str = ""
    """The release it was last compared with, and when (``2026-12-06: 2.1.332``); empty: never."""
    resume_doc: str = ""
    """Its resume command for that table when :meth:`resume_command` cannot give one from a
    session id and a folder alone (Markdown)."""
    config_table: str = ""
    """The agent's own table in crabsearch's ``config.toml`` (``[aider] dirs``), if it reads one:
    a known setting (``config.KNOWN_KEYS``)."""
    project_tree: bool = False
    """True when the agent's roots are the user's project folders: polled, never watched
    (``watch``)."""
    style: str = ""
    """The Rich style of the agent's badge on result rows (empty: one of a few, by name)."""
    known_kinds: Mapping[str, frozenset[str]] = {}
    """The record kinds this reader knows (reads, or knowingly passes over as metadata), by the
    field or table the agent names them in: ``{"line": {...}}`` for a JSONL ``type``, ``{"part":
    {...}, "session_message": {...}}`` for opencode. A kind outside them is counted
    (:func:`note_unknown`) and listed by ``crabsearch status``; ``bench/drift`` compares them with
    the kinds an agent's newest release writes. Empty: the reader declares none."""

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """Directories this agent keeps its transcripts under (honouring its env override)."""
        raise NotImplementedError

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Yield every transcript file under :meth:`roots`. Missing roots yield nothing."""
        raise NotImplementedError

    def new_state(self, path: Path) -> dict:
        """The state for a file never read before."""
        return {}

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """Turn one record into zero or more messages appended to ``out``; update ``state`` and
        ``session``. Unknown record types are ignored (the caller counts nothing for them)."""
        raise NotImplementedError

    def finish(self, state: dict, session: Session) -> None:
        """Derive session fields (title order, summary) after a read; must be idempotent."""

    def message_text(self, obj: dict, part: int, label: str) -> str:
        """Re-extract the text of message ``part`` of the record ``obj`` (for windows and the
        session view, which read records back from the file by offset)."""
        raise NotImplementedError

    def message_text_at(self, path: str, obj: dict, part: int, label: str) -> str:
        """:meth:`message_text` of a record read from unit ``path``, for a reader whose text can
        come from a file beside the transcript (Claude Code's persisted tool output, under
        :func:`full_tool_output`)."""
        return self.message_text(obj, part, label)

    def resume_command(self, session: Session) -> str | None:
        """Shell command that resumes the session in its working directory, or None."""
        return None

    def open_url(self, session: Session) -> str | None:
        """The web address that opens the session, for an agent whose sessions live in a web app
        and have no resume command (a ChatGPT or Claude.ai conversation), or None."""
        return None

    def fork_command(self, session: Session) -> str | None:
        """Shell command that starts a new session from a copy of this one's history (the
        original stays as it was), or None when the agent cannot fork."""
        return None

    def locate(self, path: str, offset: int) -> tuple[str, int] | None:
        """``(file, byte offset)`` of a message stored at ``offset`` in unit ``path``, for opening
        it in an editor; None when the unit is not a text file (a database row, say)."""
        return (path, offset) if os.path.isfile(path) else None

    # -- units: what discover() yields, one session each ---------------------------------------
    #
    # A unit is usually a transcript file. Formats that keep many sessions in one file (a SQLite
    # database, a key-value store, one Markdown log per project) or one session across many files
    # yield *member paths* instead, ``container + MEMBER_SEP + member`` (see member_path), and
    # override stat / fingerprint / read / load so that "size" and "offset" mean whatever lets
    # them read incrementally (rows, say). The indexer only compares and stores these values.

    def stat(self, path: str) -> tuple[int, int, int]:
        """``(size, mtime_ns, ctime_ns)`` of a unit; a grown size with the same fingerprint is read
        from the stored offset. Raises ``OSError`` (``FileNotFoundError`` when it is gone)."""
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns, st.st_ctime_ns

    def fingerprint(self, path: str, size: int) -> str:
        """Identity of a unit's beginning: SHA-1 of its first ``min(size, HEAD_BYTES)`` bytes.
        Raises ``OSError``."""
        return head_fingerprint(path, size)

    def in_bytes(self, path: str) -> bool:
        """True when this unit's ``stat`` size and offsets are bytes of a file (so progress and
        status can add them up as MB); False for member units counted in rows or steps."""
        return os.path.isfile(path)

    def load(self, path: str, offset: int, length: int) -> object | None:
        """The record a message was read from, by the ``offset``/``length`` stored with it, for
        :meth:`message_text` (windows and the session view read messages back this way, one at
        a time, never the whole transcript). Default: one JSONL line. Raises ``OSError``."""
        return read_record(path, offset, length)

    # -- the shared read loop ----------------------------------------------------------------

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """Read ``path`` from byte ``start`` with the ``state`` a previous read returned.

        Raises ``OSError`` when the file cannot be opened. Bad lines, and records the reader
        cannot handle (:meth:`process` raising anything), are skipped and counted in
        ``FileRead.stats`` with the byte offset of their line.
        """
        if state is None or start == 0:
            start, state = 0, self.new_state(path)
            state["session"] = Session(agent=self.agent, session_id=path.stem, path=str(path)).to_state()
            state["next_index"] = 0
        session = Session.from_state(state["session"])
        stats = LineStats()
        messages: list[Message] = []
        committed: dict | None = None
        for rec in self.records(path, start, stats):
            if not rec.complete:
                # Snapshot before the unterminated tail: it is re-read when the file grows.
                committed = copy.deepcopy(state)
                self._seal(committed, copy.deepcopy(session), LineStats())  # counted below if it fails
            # an unterminated record that fails is counted when it is complete
            self.take(rec, state, session, messages, stats if rec.complete else LineStats(), rec.offset)
        self._seal(state, session, stats)
        return FileRead(session, messages, stats.end_offset, committed or state, stats)

    def records(self, path: Path, start: int, stats: LineStats) -> Iterator[Record]:
        """The JSON-object records of ``path`` from ``start`` for :meth:`read` (default: the lines of
        a JSONL file, :func:`~crabsearch.jsonl.iter_records`); a source whose files are stored
        another way (Codex's zstd-compressed archives) yields the same records from its bytes.
        Raises ``OSError``."""
        return iter_records(str(path), start, stats)

    def take(self, rec: Record, state: dict, session: Session, out: list[Message], stats: LineStats,
             where: int | str | None = None,
             handle: Callable[[Record, dict, Session, list[Message]], None] | None = None) -> bool:
        """One record through ``handle`` (default :meth:`process`), then :meth:`number` for the
        messages it appended; every read loop goes through here.

        A record that the reader cannot handle, for any reason (``handle`` raises any
        ``Exception``), is skipped and counted: the messages it had appended are dropped and
        ``stats`` counts it under ``reader error (<exception type>)`` at ``where`` (the byte offset
        of its line, or a description such as ``row 12``); a record the reader refuses
        (:class:`BadRecord`: a field it reads has the wrong type) under :data:`BAD_FIELD`, its
        message the detail. Returns False for such a record.
        """
        before = len(out)
        try:
            (handle or self.process)(rec, state, session, out)
        except BadRecord as exc:
            del out[before:]
            stats.skip(BAD_FIELD, where, f"{BAD_FIELD} ({' '.join(str(exc).split())[:REASON_CAP]})")
            return False
        except Exception as exc:  # noqa: BLE001 - the rule: any failure skips this record only
            del out[before:]
            stats.skip(*failure(exc, where))
            return False
        self.number(out[before:], state)
        return True

    @staticmethod
    def number(new: list[Message], state: dict) -> None:
        """Give messages just made their ``message_index`` (``state["next_index"]`` on) and cut
        their text to what is indexed plus :data:`READ_MARGIN` (TEXT_CAP; TOOL_TEXT_CAP for tool
        payloads; the indexer masks, then cuts to the cap): the full text is read back from the
        transcript for display. :meth:`take` calls it."""
        for m in new:
            m.message_index = state["next_index"]
            state["next_index"] += 1
            cap = (TOOL_TEXT_CAP if m.is_tool_payload else TEXT_CAP) + READ_MARGIN
            if len(m.text) > cap:
                m.text = m.text[:cap]

    def _seal(self, state: dict, session: Session, stats: LineStats | None = None) -> None:
        """Set the message count, derive the session fields (:meth:`finish`) and store the session
        in ``state``. A ``finish`` that raises is counted in ``stats`` (the session keeps the
        fields it had), never fatal. A title that names nothing (punctuation only:
        :func:`names_something`) is replaced by the first prompt's (``state["first_prompt"]``,
        which :func:`~crabsearch.sources.pieces.emit` sets for every agent whose reader uses it),
        else by none: every agent's title passes here. Title and summary are stored masked (a
        title made from a pasted key must not sit in the manifest or the index unmasked)."""
        session.message_count = state["next_index"]
        try:
            self.finish(state, session)
        except Exception as exc:  # noqa: BLE001 - see take()
            if stats is not None:
                stats.skip(*failure(exc, None, "session fields"))
        if not names_something(session.title):  # ".": the first prompt (pieces.emit), else none
            session.title = pick_title(state.get("first_prompt"))
        if session.title:
            session.title = redact(session.title)
        if session.summary:
            session.summary = redact(session.summary)
        state["session"] = session.to_state()


REASON_CAP = 200
"""Characters of an exception's message kept as the reason a record was skipped."""
BAD_FIELD = "bad field"
"""The reason a record is skipped when a field its reader reads has the wrong type (:class:`BadRecord`)."""


class BadRecord(ValueError):
    """Raised by a reader for a record of a kind it reads whose fields it cannot use (a Claude Code
    ``message`` that is a number, say): :meth:`Source.take` skips the record and counts it under
    :data:`BAD_FIELD` at its line, as a broken line is counted, the exception's message (what
    :func:`bad_field` says) the detail. A reader raises it before it changes ``state`` or the
    session, so the record leaves no trace but the count."""


def json_kind(value) -> str:
    """What a JSON value is, in words: ``null``, ``a boolean``, ``a number``, ``a string``,
    ``a list``, ``an object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def bad_field(holder: dict, key: str, wanted: str, prefix: str = "") -> BadRecord:
    """The :class:`BadRecord` for ``holder[key]``, which is not ``wanted``:
    ``message is a number, not an object``, or ``message.content is missing`` (``prefix`` names
    where ``holder`` lies in the record: ``message.``)."""
    if key not in holder:
        return BadRecord(f"{prefix}{key} is missing")
    return BadRecord(f"{prefix}{key} is {json_kind(holder[key])}, not {wanted}")


def failure(exc: BaseException, where: int | str | None = None,
            what: str = "reader error") -> tuple[str, int | str | None, str]:
    """``(reason, where, detail)`` for :meth:`LineStats.skip` of a record a reader could not
    handle: the reason names the exception type only (``reader error (TypeError)``, so the
    per-file reason counts stay few), the detail adds its message (cut to :data:`REASON_CAP`)."""
    name = type(exc).__name__
    message = " ".join(str(exc).split())[:REASON_CAP]
    return f"{what} ({name})", where, f"{what} ({name}: {message})" if message else f"{what} ({name})"


# -- helpers shared by sources ---------------------------------------------------------------


def head_fingerprint(path: str | os.PathLike, size: int) -> str:
    """SHA-1 (hex) of the first ``min(size, HEAD_BYTES)`` bytes of a file. Raises ``OSError``
    (``files.NotRegularFile`` when it is not a regular file)."""
    return hashlib.sha1(read_file(path, min(size, HEAD_BYTES))).hexdigest()


def member_path(container: str | os.PathLike, member: str) -> str:
    """The unit path of ``member`` inside ``container`` (``/x/opencode.db#ses_1``)."""
    return f"{container}{MEMBER_SEP}{member}"


def split_member(path: str) -> tuple[str, str]:
    """``(container, member)`` of a unit path made by :func:`member_path`; raises ``ValueError``
    when ``path`` has no member part."""
    container, sep, member = str(path).rpartition(MEMBER_SEP)
    if not sep or not container:
        raise ValueError(f"not a member path: {path}")
    return container, member


def container_of(path: str) -> str:
    """The file that holds unit ``path``: ``path`` itself when it exists or its name has no
    member part, else the file it is a member of (``history.md#1234``, a database row or an
    archive member, is no file on disk; the container is cut at the last ``#``, so a ``#`` in a
    folder or file name stays)."""
    if MEMBER_SEP in os.path.basename(path) and not os.path.lexists(path):
        return path.rpartition(MEMBER_SEP)[0]
    return path


def parse_ts(value) -> datetime | None:
    """Parse an agent timestamp to aware UTC: ISO-8601 (``Z``, offsets, nanosecond fractions) or
    epoch seconds / milliseconds (numbers above 1e11 are taken as milliseconds). None if unusable.
    """
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            secs = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(secs, tz=timezone.utc)
        if isinstance(value, str) and value:
            s = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
            if "." in s:  # trim fractions beyond microseconds (Rust chrono writes nanoseconds)
                head, _, rest = s.partition(".")
                digits = ""
                i = 0
                while i < len(rest) and rest[i].isdigit():
                    digits += rest[i]
                    i += 1
                s = f"{head}.{(digits or '0')[:6]}{rest[i:]}"
            ts = datetime.fromisoformat(s)
            if ts.tzinfo is None:
                ts = ts.replace(tzinfo=timezone.utc)
            return ts.astimezone(timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def iso_ts(value) -> datetime | None:
    """:func:`parse_ts` of an ISO-8601 string only, for agents that write nothing else there
    (Claude Code, Codex): a number is no time (``12345`` is not 1970-01-01), None like a
    timestamp that is missing."""
    return parse_ts(value) if isinstance(value, str) else None


def string(value) -> str:
    """``value`` when it is a string, else ``""`` (agent records put anything anywhere)."""
    return value if isinstance(value, str) else ""


UNPRINTABLE = "[value too deeply nested or not JSON]"
"""What :func:`dump_text` gives for a value it cannot write as JSON."""


def dump_text(value) -> str:
    """A tool argument or output as text: strings as they are, other JSON compactly, None as ``""``.

    Never raises: a value nested too deeply to write (or not JSON at all) is the short
    :data:`UNPRINTABLE` placeholder, so the record's other messages are still read.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return UNPRINTABLE


_HEADING = re.compile(r"^#{1,6}(?: (.*?))?(?: #+)?$")
"""A Markdown ATX heading line, whitespace-collapsed (CommonMark 4.2: 1-6 ``#`` then a space or
the end of the line, an optional closing run of ``#``); group 1 is its text."""


def heading_text(line: str) -> str:
    """``line`` (whitespace-collapsed) without Markdown heading marks: ``# Deploy plan`` ->
    ``Deploy plan``, ``## Notes ##`` -> ``Notes``; ``#hashtag`` and other lines as they are."""
    m = _HEADING.match(line)
    return (m.group(1) or "").strip() if m else line


def first_line(text: str, limit: int = 80) -> str:
    """First non-empty line of ``text``, whitespace-collapsed, without Markdown heading marks
    (:func:`heading_text`: a prompt that opens with ``# Deploy plan`` is titled ``Deploy
    plan``; a row showed ``# Deploy plan`` and an export's heading ``# # Deploy plan``), secrets
    masked, then cut to ``limit`` characters with an ellipsis (used for titles from a first
    prompt). Masking comes first: a key cut in half is no longer recognisable as one."""
    for line in text.splitlines():
        line = heading_text(" ".join(line.split()))
        if line:
            line = redact(line)
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def names_something(title: str | None) -> bool:
    """True when ``title`` can name a session: it holds a letter or a digit (in any script). A
    title of punctuation and symbols only (``.``, ``...``, ``?!``, ``--``) says nothing: real
    Claude Code homes hold sessions whose first prompt or title is ``.``."""
    return bool(title) and any(c.isalnum() for c in title)


def pick_title(*candidates: str | None) -> str | None:
    """The first of ``candidates`` (an agent's title order) that :func:`names_something`, or None:
    a title of punctuation only falls through to the next candidate."""
    return next((c for c in candidates if names_something(c)), None)


def capped(text: str, limit: int) -> str:
    """``text`` with secrets masked, then cut to ``limit`` characters: for titles and summaries,
    which are stored (manifest, session documents). Masking comes first: a cut JWT or PEM block
    is no longer recognisable as one."""
    return redact(text)[:limit]


def cd_and(cwd: str | None, argv: Iterable[str]) -> str:
    """``cd 'CWD' && cmd args`` with every part shell-quoted; just the command when cwd is None."""
    cmd = " ".join(shlex.quote(a) for a in argv)
    return f"cd {shlex.quote(cwd)} && {cmd}" if cwd else cmd


def walk_files(root: Path, pattern: str, prune: Callable[[str], bool] | None = None) -> Iterator[Path]:
    """Regular files under ``root`` whose relative path matches ``pattern`` (``*`` within one
    path segment, ``**/`` any number of directories), sorted by path segments. A directory whose
    name ``prune`` is true for is not entered (a store whose session folders hold whole projects:
    Claude Desktop's ``local_<uuid>/``).

    Directory symlinks are followed, each real directory once (a symlink loop is walked once);
    unreadable directories are skipped (and noted inside :func:`noting_unreadable_dirs`). Never
    raises. Walks with ``os.scandir``: a file's type
    comes from its directory entry, so only symlinks and directories cost a ``stat`` (the
    no-change refresh of 7,500 transcripts spends most of its time here).

    Inside :func:`noting_not_regular` it also yields the entries matching ``pattern`` that are
    not regular files (a FIFO, socket or device, a directory: walked into as well) and notes
    their kind; a dangling symlink stays passed over.
    """
    if not root.is_dir():
        return
    noted = _NOT_REGULAR.get()
    rx = _glob_regex(pattern)
    found: list[str] = []
    seen_dirs: set[tuple[int, int]] = set()
    stack = [(str(root), "")]
    while stack:
        dirpath, rel_dir = stack.pop()
        try:
            st = os.stat(dirpath)
            if (st.st_dev, st.st_ino) in seen_dirs:
                continue  # already walked (a symlink loop, or two links to one directory)
            seen_dirs.add((st.st_dev, st.st_ino))
            with os.scandir(dirpath) as it:
                entries = list(it)
        except OSError as exc:
            unreadable = _UNREADABLE_DIRS.get()
            if unreadable is not None and not isinstance(exc, FileNotFoundError):
                unreadable[dirpath] = exc.strerror or str(exc)
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir():  # follows a symlink
                    if prune is None or not prune(entry.name):
                        stack.append((entry.path, rel))
                    if noted is not None and rx.fullmatch(rel):
                        noted[entry.path] = "directory"
                        found.append(entry.path)
                elif entry.is_file():
                    if rx.fullmatch(rel):
                        found.append(entry.path)
                elif noted is not None and rx.fullmatch(rel):
                    noted[entry.path] = kind_of(entry.stat().st_mode)  # a stat: nothing is opened
                    found.append(entry.path)
            except OSError:
                continue
    for path in sorted(found, key=lambda p: p.split(os.sep)):
        yield Path(path)


_FULL_TOOL_OUTPUT: contextvars.ContextVar[bool] = contextvars.ContextVar("crabsearch_full_tool_output",
                                                                         default=False)


@contextlib.contextmanager
def full_tool_output(on: bool) -> Iterator[None]:
    """Within the block (in this thread or task), :func:`reads_tool_output_files` is ``on``: the
    index holds tool output (the ``index_tool_output`` opt-in), so a reader reads a tool output
    that its agent stored in a file of its own rather than the preview in the transcript. The
    indexer reads with it, and windows and pages read back with it as their index was built."""
    token = _FULL_TOOL_OUTPUT.set(on)
    try:
        yield
    finally:
        _FULL_TOOL_OUTPUT.reset(token)


def reads_tool_output_files() -> bool:
    """True inside :func:`full_tool_output` ``(True)``."""
    return _FULL_TOOL_OUTPUT.get()


_NOT_REGULAR: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "crabsearch_not_regular", default=None)


@contextlib.contextmanager
def noting_not_regular() -> Iterator[dict[str, str]]:
    """For ``crabsearch status``: within the block (in this thread or task), :func:`walk_files`
    also yields what matches its pattern but is not a regular file, and notes it in the dict
    given, ``{path: kind}`` (``files.kind_of``: ``FIFO``, ``directory``, ...). A discovery run
    inside then yields them through each source's own rules, so a FIFO or a directory named like
    a transcript (``projects/<slug>/<uuid>.jsonl``) can be counted and named instead of being
    passed over without a word. Only a ``stat`` looks at them: a FIFO is never opened
    (``files.py``). The dict also holds entries that a source then left out by name (Codex walks
    ``**/*``): what discovery yields is what counts. Outside the block, discovery (and so the
    index) sees regular files only."""
    noted: dict[str, str] = {}
    token = _NOT_REGULAR.set(noted)
    try:
        yield noted
    finally:
        _NOT_REGULAR.reset(token)


_UNREADABLE_DIRS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "crabsearch_unreadable_dirs", default=None)


@contextlib.contextmanager
def noting_unreadable_dirs() -> Iterator[dict[str, str]]:
    """Within the block (in this thread or task), :func:`walk_files` notes each directory it
    could not list in the dict given, ``{path: reason}`` (``Permission denied``): its
    transcripts are skipped, and ``crabsearch index`` and ``status`` name it (an unreadable
    project directory was passed over without a word, while an unreadable file is named)."""
    noted: dict[str, str] = {}
    token = _UNREADABLE_DIRS.set(noted)
    try:
        yield noted
    finally:
        _UNREADABLE_DIRS.reset(token)


def matching(paths: Iterable[Path], root: Path, pattern: str) -> list[Path]:
    """The ``paths`` (found under ``root`` by :func:`walk_files`) whose path relative to ``root``
    matches ``pattern`` as :func:`walk_files` matches it, in their order: one walk of a tree
    serves several patterns (Codex: five patterns over two trees)."""
    rx = _glob_regex(pattern)
    return [p for p in paths if rx.fullmatch(p.relative_to(root).as_posix())]


@functools.lru_cache(maxsize=32)
def _glob_regex(pattern: str) -> re.Pattern:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def env_dir(env: Mapping[str, str], name: str, default: Path) -> Path:
    """The directory named by env var ``name`` (``~`` expanded) or ``default``."""
    value = env.get(name)
    return Path(os.path.expanduser(value)) if value else default


# -- drift: record kinds a reader does not know ------------------------------------------------

UNKNOWN_KEY = "unknown_kinds"
"""Where a reader counts the record kinds it does not know, in the file's state (the manifest
stores it; ``crabsearch status`` adds the counts up per agent and kind)."""
UNKNOWN_KINDS_KEPT = 64
"""Distinct unknown kinds counted per file; more are counted under :data:`OTHER_KINDS`. Large
enough that a whole release's new kinds are each named: Claude Code 2.1.332 added 26 line kinds
at once over the 21 this reader knew (47 in all), and 16 hid ten of them."""
OTHER_KINDS = "(other kinds)"
KIND_CHARS = 64
"""Characters of a kind name kept (a hostile file could name a kind with a megabyte)."""


def note_unknown(state: dict, kind) -> None:
    """Count one record of a kind this reader does not know in ``state[UNKNOWN_KEY]``
    (``{kind: count}``). A future agent version's new record kind is then listed by ``crabsearch
    status`` the day it appears, instead of being dropped without a word. The name is cut to
    :data:`KIND_CHARS` characters with control characters replaced; a record with no kind at all is
    counted as ``(none)``, one whose kind is not a string or number as ``(list)``, ``(dict)``...;
    past :data:`UNKNOWN_KINDS_KEPT` distinct kinds, the rest are counted together. The counts live
    in the state, so an appended read adds to them and a full re-read starts again from zero."""
    if isinstance(kind, str) and kind:
        name = kind
    elif isinstance(kind, (int, float)) and not isinstance(kind, bool):
        name = str(kind)
    else:
        name = "(none)" if kind is None or kind == "" else f"({type(kind).__name__})"
    name = "".join(c if c.isprintable() else "?" for c in name[:KIND_CHARS])
    counts = state.setdefault(UNKNOWN_KEY, {})
    if name not in counts and len(counts) >= UNKNOWN_KINDS_KEPT:
        name = OTHER_KINDS
    counts[name] = counts.get(name, 0) + 1


def unzstd(source, limit: int, what: str) -> bytes:
    """``source`` (zstd-compressed bytes, or a binary file at the start of a zstd stream)
    decompressed as a stream, at most ``limit`` bytes, so a small input that expands without end
    is refused, never held. Shared by the readers of compressed transcripts (Codex
    ``.jsonl.zst``, OpenClaw archives). Raises ``OSError`` naming ``what`` when ``zstandard`` is
    missing, the data is not zstd, or it decodes to more than ``limit`` bytes."""
    try:
        import zstandard
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise OSError(f"reading {what} needs the zstandard module") from exc
    buf = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(source) as reader:
            while len(buf) <= limit:
                more = reader.read(min(16 << 20, limit + 1 - len(buf)))
                if not more:
                    break
                buf += more
    except zstandard.ZstdError as exc:
        raise OSError(f"{what} is not a zstd stream: {exc}") from exc
    if len(buf) > limit:
        raise OSError(f"{what} decompressed is larger than {limit >> 20} MB")
    return bytes(buf)


def records_of_bytes(data: bytes, start: int, stats: LineStats) -> Iterator[Record]:
    """The JSON-object lines of ``data`` (a JSONL file held in memory: decompressed, or read from
    a database blob) from ``start``, as :func:`~crabsearch.jsonl.iter_records` yields a file's:
    broken, non-object and oversized lines skipped and counted, a last line without newline
    yielded as not complete (or pending when it does not parse)."""
    stats.end_offset = start
    pos = start
    while pos < len(data):
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl
        raw = data[pos:end]
        if len(raw) > MAX_LINE:
            stats.oversized += 1
            stats.skip("oversized line", pos)
        elif raw.removeprefix(BOM).strip():
            try:
                obj = loads(raw)
            except ValueError:
                obj = ValueError
            if obj is ValueError:
                if nl >= 0:
                    stats.skip("broken JSON", pos)
                else:
                    stats.pending = True
            elif not isinstance(obj, dict):
                if nl >= 0:
                    stats.skip("not a JSON object", pos)
            else:
                yield Record(obj, pos, end - pos, nl >= 0)
        if nl < 0:
            return
        pos = nl + 1
        stats.end_offset = pos

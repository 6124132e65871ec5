"""Data exports of chat apps (ChatGPT, Claude.ai): what their readers share, and the paths
``crabsearch import`` remembers.

An export is a ``.zip`` (read in place with :mod:`zipfile`, never extracted), the folder it was
unpacked into, or its ``conversations.json`` alone. The conversations are in ``conversations.json``
or, in larger ChatGPT exports, in the shards ``conversations-000.json``, ``conversations-001.json``...:
each a JSON array of conversation objects. A conversation is a session; its unit is the member path
``<file>#<conversation id>`` (``file``: the zip, or the JSON file holding it). A conversation's
records are the items its reader lists (ChatGPT's tree nodes, Claude.ai's ``chat_messages``); a
message's ``offset`` is its record's position in that list (``length`` 1). An export does not grow:
any change of the file (size, mtime) re-reads its conversations whole.

Exports are never found by looking around: a reader's roots are its environment variable's path,
the config's ``[sources]`` paths for it, and the paths ``crabsearch import`` remembered in
:func:`imports_file` (crabsearch's own data directory, never beside the export).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file, read_text
from ..jsonl import LineStats, Record, loads
from ..model import Message, Session
from ..paths import write_atomically
from .base import FileRead, Source, member_path, parse_ts, split_member, string
from .pieces import Piece, abandon, emit

EXPORT_CAP = 1 << 30
"""Bytes of conversation JSON read from one export (each file, or each zip member, decompressed);
a larger one is refused with a clear message, never half read."""
CONVERSATION_FILE = re.compile(r"(?:.*/)?conversations(?:-\d+)?\.json")
"""The conversation files of an export, at its top or one folder down (a zip of the folder)."""
KIND_CHATGPT, KIND_CLAUDE_AI = "chatgpt", "claude-ai"
PARSED_KEPT = 2
"""Exports kept parsed in memory (every conversation of one is read in a row)."""


class ExportError(ValueError):
    """A path that cannot be read as an export; the message is one line for the user."""


# -- reading an export ---------------------------------------------------------------------------


def conversation_files(path: Path) -> list[str]:
    """The conversation files of the export at ``path``: the zip members, the files of a folder
    (``conversations.json``, ``conversations-NNN.json``), or ``path`` itself. Raises
    :class:`ExportError` for a path that is none of these or a zip that cannot be read."""
    if path.is_dir():
        return [str(p) for p in sorted(path.iterdir()) if CONVERSATION_FILE.fullmatch(p.name) and p.is_file()]
    if not path.is_file():
        raise ExportError(f"{path}: no such file or folder")
    if path.suffix.lower() == ".zip":
        import zipfile  # a zip's only: not at every refresh's start

        try:
            with zipfile.ZipFile(path) as z:
                names = sorted(n for n in z.namelist() if CONVERSATION_FILE.fullmatch(n) and n.count("/") <= 1)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise ExportError(f"{path}: not a readable zip file ({exc})") from None
        return names
    return [str(path)]


def containers(root: Path) -> list[Path]:
    """The files that hold conversations for one root: the zip itself, each conversation file of
    a folder, or the file. Missing roots hold none; never raises."""
    try:
        if root.is_dir():
            return [Path(p) for p in conversation_files(root)]
        return [root] if root.is_file() else []
    except (ExportError, OSError):
        return []


def _load_conversations(container: str) -> list:
    """Every conversation object of ``container`` (a zip: all its conversation files). Raises
    :class:`ExportError` (too large, not JSON, not a list) or ``OSError``."""
    out: list = []
    if container.lower().endswith(".zip"):
        import zipfile

        try:
            with zipfile.ZipFile(container) as z:
                for name in conversation_files(Path(container)):
                    info = z.getinfo(name)
                    if info.file_size > EXPORT_CAP:
                        raise ExportError(f"{container}: {name} is {info.file_size >> 20} MB, more than the "
                                          f"{EXPORT_CAP >> 20} MB crabsearch reads")
                    with z.open(info) as fh:
                        raw = fh.read(EXPORT_CAP + 1)
                    out += _parse(raw, f"{container}: {name}")
        except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, NotImplementedError, EOFError) as exc:
            raise ExportError(f"{container}: not a readable zip file ({exc})") from None
        return out
    size = os.stat(container).st_size
    if size > EXPORT_CAP:
        raise ExportError(f"{container} is {size >> 20} MB, more than the {EXPORT_CAP >> 20} MB crabsearch reads")
    return _parse(read_file(container, EXPORT_CAP + 1), container)


def _parse(raw: bytes, what: str) -> list:
    if len(raw) > EXPORT_CAP:
        raise ExportError(f"{what} is more than the {EXPORT_CAP >> 20} MB crabsearch reads")
    try:
        data = loads(raw)
    except ValueError:
        raise ExportError(f"{what} is not JSON") from None
    if not isinstance(data, list):
        raise ExportError(f"{what} is not a list of conversations")
    return data


_PARSED: "OrderedDict[tuple, dict[str, dict[str, dict]]]" = OrderedDict()


def parsed(container: str) -> dict[str, dict[str, dict]]:
    """``{kind: {conversation id: conversation}}`` of ``container`` (:func:`kind_of` each), from a
    small LRU keyed by the file's path, size and mtime. Raises :class:`ExportError` or ``OSError``."""
    st = os.stat(container)
    key = (container, st.st_size, st.st_mtime_ns)
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return _PARSED[key]
    out: dict[str, dict[str, dict]] = {KIND_CHATGPT: {}, KIND_CLAUDE_AI: {}}
    for conv in _load_conversations(container):
        kind = kind_of(conv)
        cid = conversation_id(conv) if kind else ""
        if kind and cid:
            out[kind].setdefault(cid, conv)
    _PARSED[key] = out
    while len(_PARSED) > PARSED_KEPT:
        _PARSED.popitem(last=False)
    return out


def kind_of(conv) -> str | None:
    """``chatgpt`` for a conversation with a ``mapping`` tree, ``claude-ai`` for one with
    ``chat_messages``; None for anything else."""
    if not isinstance(conv, dict):
        return None
    if isinstance(conv.get("mapping"), dict):
        return KIND_CHATGPT
    if isinstance(conv.get("chat_messages"), list):
        return KIND_CLAUDE_AI
    return None


def conversation_id(conv: dict) -> str:
    """``conversation_id``, else ``id`` (ChatGPT), else ``uuid`` (Claude.ai); ``""`` when none is a
    usable string (no ``#`` or ``/``: it ends a member path)."""
    for key in ("conversation_id", "id", "uuid"):
        value = conv.get(key)
        if isinstance(value, str) and value.strip() and not set(value) & {"#", "/", "\n"}:
            return value.strip()
    return ""


def detect(path: Path) -> tuple[str, int]:
    """``(kind, conversations)`` of the export at ``path``: the kind most of its conversations are.
    Raises :class:`ExportError` (one line) when it holds no conversation of either kind, is not
    JSON, is too large or is a broken zip; ``OSError`` when it cannot be read."""
    files = conversation_files(path)
    if not files:
        raise ExportError(f"{path}: no conversations.json in it (give the export's .zip, its folder, "
                          "or its conversations.json)")
    counts = {KIND_CHATGPT: 0, KIND_CLAUDE_AI: 0}
    for container in containers(path) if path.is_dir() else [path]:
        for kind, convs in parsed(str(container)).items():
            counts[kind] += len(convs)
    kind = max(counts, key=counts.get)
    if not counts[kind]:
        raise ExportError(f"{path}: its conversations.json holds no ChatGPT or Claude.ai conversation")
    return kind, counts[kind]


_WEB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]{7,127}")
"""A conversation id that can stand in a web address as it is (the UUIDs both apps use); an id
made from a file name (no ``conversation_id``) or holding other characters is not one."""


def web_url(prefix: str, session: Session) -> str | None:
    """``prefix`` + the session's id, when the id is a web conversation id (:data:`_WEB_ID`)."""
    return prefix + session.session_id if _WEB_ID.fullmatch(session.session_id) else None


# -- the readers' shared part -----------------------------------------------------------------------


class ExportSource(Source):
    """A reader of one kind of export (``kind``); subclasses give :meth:`records`,
    :meth:`take_record` and :meth:`fields`."""

    kind = ""

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The path of its environment variable; else the paths ``crabsearch import`` remembered."""
        if env.get(self.env_var):
            return [Path(os.path.expanduser(env[self.env_var]))]
        return [Path(p) for p in remembered(env, home).get(self.agent, [])]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``<file>#<conversation id>`` for each conversation of this kind in each root (an export
        that cannot be read is yielded as itself, so the failure is named when it is read)."""
        for root in self.roots(env, home):
            for container in containers(root):
                try:
                    ids = parsed(str(container))[self.kind]
                except (ExportError, OSError):
                    yield container
                    continue
                for cid in ids:
                    yield Path(member_path(container, cid))

    def stat(self, path: str) -> tuple[int, int, int]:
        """The export file's ``(size, mtime_ns, ctime_ns)``; ``FileNotFoundError`` when the
        conversation is no longer in it."""
        container, cid = _split(path)
        st = os.stat(container)
        if cid is not None and cid not in self._conversations(container):
            raise FileNotFoundError(path)
        return st.st_size, st.st_mtime_ns, st.st_ctime_ns

    def fingerprint(self, path: str, size: int) -> str:
        """The conversation id with the export's size and mtime: any change of the file re-reads
        the conversation whole."""
        container, cid = _split(path)
        st = os.stat(container)
        return hashlib.sha1(f"{cid}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()

    def in_bytes(self, path: str) -> bool:
        return False

    def load(self, path: str, offset: int, length: int) -> object | None:
        """Record ``offset`` of the conversation, or None when it is gone."""
        container, cid = _split(path)
        try:
            conv = self._conversations(container).get(cid or "")
        except (ExportError, OSError):
            return None
        records = self.records(conv) if conv is not None else []
        return records[offset] if 0 <= offset < len(records) else None

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The conversation whole (``start``/``state`` ignored: an export does not grow). Raises
        ``OSError`` when the export cannot be opened; an export that is not one (not JSON, too
        large, a broken zip) is one skipped record; a record the reader cannot handle is skipped
        and counted."""
        container, cid = _split(str(path))
        size = os.stat(container).st_size
        stats = LineStats(end_offset=size)
        state = {"next_index": 0}
        session = Session(agent=self.agent, session_id=cid or Path(container).name, path=str(path))
        try:
            conv = self._conversations(container).get(cid or "") if cid is not None else None
        except ExportError as exc:
            stats.skip("not an export", None, str(exc))
            conv = None
        messages: list[Message] = []
        if conv is not None:
            self.take(Record(conv, 0, 0), state, session, [], stats, "conversation", self.begin)
            for n, record in enumerate(self.records(conv)):
                self.take(Record(record, n, 1), state, session, messages, stats, f"message {n}", self.take_record)
            self.take(Record(conv, 0, 0), state, session, [], stats, "conversation fields", self.fields)
        state.pop("pending", None)
        self._seal(state, session, stats)  # the message count; the title masked (or the first prompt)
        return FileRead(session, messages, size, state, stats)

    def _conversations(self, container: str) -> dict[str, dict]:
        return parsed(container)[self.kind]

    # -- per kind -------------------------------------------------------------------------------

    def records(self, conv: dict) -> list:
        """The conversation's records, in reading order."""
        raise NotImplementedError

    def begin(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """Note what the records need from the conversation ``rec.obj`` before they are read."""

    def take_record(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """One record's messages (for :meth:`Source.take`)."""
        raise NotImplementedError

    def fields(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """The session fields from the conversation ``rec.obj`` and the messages read."""
        raise NotImplementedError

    # -- shared by the kinds ----------------------------------------------------------------------

    @staticmethod
    def emit_on_branch(pieces: list[Piece], rec: Record, state: dict, out: list[Message], ts, node) -> None:
        """:func:`~crabsearch.sources.pieces.emit` one record's ``pieces``; when the conversation has
        an active branch (``state["active"]``, :func:`branch_path`) and the record's id ``node`` is
        not on it, the messages it gave are abandoned (``state["off"]``: an edited or regenerated
        turn, shown as off the branch)."""
        base = len(out)
        emit(pieces, rec, state, out, ts)
        active = state.get("active")
        if active and out[base:] and not (isinstance(node, str) and node in active):
            abandon(state, state["next_index"], state["next_index"] + len(out) - base)

    @staticmethod
    def conversation_fields(state: dict, session: Session, title, created, updated) -> None:
        """The session fields every kind sets from its conversation: ``title`` (stripped; the first
        prompt when it is empty or not a string), the times ``created`` and ``updated`` (anything
        :func:`~crabsearch.sources.base.parse_ts` reads), the anchor, and the abandoned ranges as
        ``extra["off_branch"]``; the active branch is dropped from the state."""
        session.title = string(title).strip() or state.get("first_prompt") or None
        session.touch(parse_ts(created))
        session.touch(parse_ts(updated))
        session.anchor_index = state.get("anchor", 0)
        if state.get("off"):
            session.extra["off_branch"] = state["off"]
        state.pop("active", None)


def branch_path(key, nodes: dict, parent: str) -> dict[str, bool] | None:
    """The ids on the path from node ``key`` up to the root of ``nodes`` (``{id: node}``; a node's
    ``parent`` field names its parent), as a dict kept in the state (``{id: True}``); None when
    ``key`` is not a node. The walk stops at a missing or non-object node and at a cycle."""
    path: dict[str, bool] = {}
    while isinstance(key, str) and key in nodes and key not in path and isinstance(nodes[key], dict):
        path[key] = True
        key = nodes[key].get(parent)
    return path or None


def _split(path: str) -> tuple[str, str | None]:
    """``(export file, conversation id)`` of a unit; the id is None for an export yielded itself."""
    try:
        container, cid = split_member(path)
    except ValueError:
        return path, None
    return (container, cid) if os.path.isfile(container) else (path, None)


# -- the paths `crabsearch import` remembered ---------------------------------------------------------


def imports_file(env: Mapping[str, str], home: Path) -> Path:
    """Where ``crabsearch import`` keeps the exports it read: ``imports.json`` in crabsearch's data
    directory, ``$XDG_DATA_HOME/crabsearch`` (else ``~/.local/share/crabsearch``; macOS
    ``~/Library/Application Support/crabsearch``, as platformdirs puts it), computed from ``env``
    and ``home``. ``$CRABSEARCH_IMPORTS`` names another file."""
    if env.get("CRABSEARCH_IMPORTS"):
        return Path(os.path.expanduser(env["CRABSEARCH_IMPORTS"]))
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(os.path.expanduser(env["XDG_DATA_HOME"])) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    return base / "crabsearch" / "imports.json"


def remembered(env: Mapping[str, str], home: Path) -> dict[str, list[str]]:
    """``{agent: [path, ...]}`` from :func:`imports_file`; ``{}`` when it is missing or broken
    (``crabsearch import`` says so when it adds to it). Never raises."""
    try:
        data = json.loads(read_text(imports_file(env, home), "utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: [p for p in v if isinstance(p, str) and os.path.isabs(p)] for k, v in data.items()
            if isinstance(k, str) and isinstance(v, list)}


def remember(env: Mapping[str, str], home: Path, agent: str, path: Path) -> bool:
    """Add ``path`` to ``agent``'s exports in :func:`imports_file` (created with its folder, mode
    0600, written atomically); False when it was there already. Raises ``OSError``, and
    :class:`ExportError` when the file exists but is not crabsearch's JSON (it is left as it is)."""
    file = imports_file(env, home)
    try:
        data = json.loads(read_text(file, "utf-8"))
    except FileNotFoundError:
        data = {}
    except (UnicodeDecodeError, ValueError):
        raise ExportError(f"{file} is not JSON; fix or remove it, then import again") from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ExportError(f"{file} is not a list of imported exports; fix or remove it, then import again")
    paths = data.setdefault(agent, [])
    if str(path) in paths:
        return False
    paths.append(str(path))
    file.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(file, [json.dumps(data, indent=2, ensure_ascii=False) + "\n"])
    return True

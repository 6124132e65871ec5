"""VS Code's own chat (GitHub Copilot Chat and the other chat participants), and the forks that keep
its store: one session per chat file.

Rules come from microsoft/vscode ``src/vs/workbench/contrib/chat/common/model/`` at 047238f9:
``chatSessionStore.ts`` (where the files are), ``chatSessionOperationLog.ts`` (at 03d43368: the
``storageSchema``, the fields written), ``objectMutationLog.ts`` (the ``.jsonl`` log) and
``chatService/chatService.ts`` (at 00817b7f: the response parts, ``IChatToolInvocationSerialized``,
``IChatThinkingPart``, ``IChatTerminalToolInvocationData``); the fields agree with agentsview's
``internal/parser/vscode_copilot.go`` at 53860074.

* **Where**: ``<User dir>/workspaceStorage/<workspace id>/chatSessions/<session id>.jsonl`` (VS Code
  1.109 on: an append log) or ``.json`` (before: the whole session, rewritten), and
  ``<User dir>/globalStorage/emptyWindowChatSessions/`` for windows with no folder. When both files
  of a session exist the ``.jsonl`` is read (VS Code reads it first). The User dirs are those of
  ``cline.vscode_user_dirs`` for ``Code``, ``Code - Insiders``, ``VSCodium``, ``Cursor``,
  ``Windsurf`` and ``Positron`` (a fork that keeps no such store yields nothing), or
  ``$CRABSEARCH_VSCODE_DIR`` (one User dir). ``globalStorage/transferredChatSessions/`` is not
  read: a copy handed to another window, deleted once read there.
* **The log**: line 1 ``{"kind": 0, "v": <session>}``; then ``{"kind": 1, "k": path, "v": value}``
  sets the value at ``path`` (keys and array indexes), ``{"kind": 2, "k": path, "v": [items],
  "i": n}`` cuts the array at ``path`` to ``n`` items (when ``i`` is given) and appends ``items``,
  ``{"kind": 3, "k": path}`` deletes. Past 1,024 entries VS Code rewrites the file as one initial
  entry. A line that does not parse, or whose path is not in the session, is skipped and counted
  (VS Code would refuse the whole file); an initial value that is missing or not an object is
  counted and taken as empty, so the entries after it are still read.
* **The session** (``ISerializableChatData`` version 3): ``sessionId``, ``creationDate`` (ms),
  ``customTitle``, ``requests[]``; each request ``{requestId, timestamp (ms), message: {text,
  parts}, response: [parts], result: {errorDetails?}, modelId, ...}``. A response part without
  ``kind`` is Markdown (``{value}``); with ``kind``: ``thinking`` (``value``: a string or
  strings), ``toolInvocationSerialized`` (``toolId``, ``toolCallId``, ``invocationMessage`` /
  ``pastTenseMessage``, ``toolSpecificData`` (``terminal``: ``commandLine.original`` and
  ``terminalCommandOutput.text``; ``input``: ``rawInput``; ``subagent``: ``prompt`` and
  ``result``), ``resultDetails`` (``{input, output: [{value}]}`` or a list of files),
  ``subAgentInvocationId`` on a sub-agent's calls), ``inlineReference`` (a file named in the
  text), ``warning``; the rest (edits, progress, confirmations, ...) hold no conversation text.
  Kinds outside :data:`RESPONSE_KINDS` are counted in ``status``.
* **Messages**: per request the prompt (``message.text``), then the response parts in order:
  Markdown and inline references joined into one assistant message until a thinking part or a
  tool call, thinking, each tool call (its invocation message and command or input) and its
  result, a warning as a system message, and ``result.errorDetails.message`` as a system
  message. A sub-agent's tool calls are side-chain messages. A message's ``offset`` is its
  request's position (``length`` 1): :meth:`VSCodeSource.load` serves the request from the parsed
  file (cached by path, mtime and size).
* **Session fields**: id ``sessionId`` (else the file name); title ``customTitle`` (VS Code's own
  or generated title), else the first prompt; project: the workspace's ``workspace.json``
  ``folder`` URI (a ``.code-workspace`` file: its folder); times ``creationDate``,
  ``lastMessageDate`` and the requests' ``timestamp``; ``extra["app"]`` the editor (``VS Code``,
  ``VS Code Insiders``, ``Cursor`` ...). The title index VS Code keeps in ``state.vscdb`` is not
  read.
* **Incremental reading**: none: a log entry can change an earlier request (a response part set
  again), so every change re-reads the whole file (the fingerprint hashes it) and replaces the
  session's messages. No resume command: a chat is reopened in the editor's chat view.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Iterator, Mapping
from urllib.parse import unquote, urlsplit

from ..files import read_file
from ..jsonl import LineStats, Record, loads, read_whole
from ..model import LABEL_ASSISTANT, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER, Message, Role, Session, tool_call_label
from .base import FileRead, Source, capped, dump_text, note_unknown, parse_ts, string, walk_files
from .cline import EDITORS as CLINE_EDITORS, vscode_user_dirs
from .pieces import Piece, emit, piece_text

EDITORS = CLINE_EDITORS + ("Windsurf", "Positron")
"""The user-data folder names of VS Code and the forks whose chat store is looked for."""
APPS = {"Code": "VS Code", "Code - Insiders": "VS Code Insiders", "VSCodium": "VSCodium", "Cursor": "Cursor",
        "Windsurf": "Windsurf", "Positron": "Positron"}
"""``extra["app"]`` by user-data folder name; any other (portable, remote) is ``VS Code``."""
TEXT_KINDS = frozenset({"markdownContent", "markdownVuln", "inlineReference"})
SILENT_KINDS = frozenset("""
autoModeResolution clearToPreviousToolInvocation codeCitation codeblockUri command confirmation
disabledClaudeHooks elicitation elicitationSerialized extensions externalEdit externalToolInvocationUpdate
hook info mcpAuthenticationRequired mcpServersStarting mcpServersStartingSlow move multiDiffData
notebookEdit notebookEditGroup planReview prepareToolInvocation progressMessage progressTask
progressTaskResult progressTaskSerialized pullRequest questionCarousel reference systemNotification
textEdit textEditGroup toolInvocation treeData undoStop usage usedContext voiceProgress workspaceEdit""".split())
"""Response part kinds that hold no conversation text (``IChatProgress`` in chatService.ts)."""
RESPONSE_KINDS = TEXT_KINDS | SILENT_KINDS | {"thinking", "toolInvocationSerialized", "warning"}
LOGS_CACHED = 8
TITLE_CAP = 200


class VSCodeSource(Source):
    """VS Code chat sessions (``chatSessions/*.json`` and ``*.jsonl``), one session per file."""

    agent = "vscode"
    order = 300
    env_var = "CRABSEARCH_VSCODE_DIR"
    display = "VS Code Copilot Chat"
    badge = "VS Code"
    style = "bold white on blue3"
    locations = ("`<VS Code User dir>/workspaceStorage/*/chatSessions/*.jsonl` (and `.json`), "
                 "`globalStorage/emptyWindowChatSessions/`; also Insiders, VSCodium, Cursor, Windsurf, Positron")
    reads = ("the 1.109+ append log replayed and the older whole-file sessions; thinking, tool calls and results; "
             "a sub-agent's tool calls as side-chain; the project from `workspace.json`; not the title index in "
             "`state.vscdb`")
    override = "`CRABSEARCH_VSCODE_DIR=<User dir>` (VS Code has no variable of its own but `VSCODE_PORTABLE`)"
    upstream = ("microsoft/vscode `src/vs/workbench/contrib/chat/common/model/chatSessionStore.ts`, "
                "`objectMutationLog.ts` @ 047238f9, `chatSessionOperationLog.ts` @ 03d43368, "
                "`chatService/chatService.ts` @ 00817b7f; agentsview `internal/parser/vscode_copilot.go`")
    checked = "2026-12-06: microsoft/vscode 047238f9"
    resume_doc = "reopened in the editor's chat view (no command)"
    known_kinds = {"response": RESPONSE_KINDS}

    def __init__(self):
        self._logs: OrderedDict[tuple, tuple[object, int, dict[str, int], bool]] = OrderedDict()

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_VSCODE_DIR``; else the editors' User dirs that exist (the first, VS Code's
        under ``~/.config``, listed even when missing)."""
        if env.get(self.env_var):
            return [Path(os.path.expanduser(env[self.env_var]))]
        users = vscode_user_dirs(env, home, EDITORS)
        return [u for i, u in enumerate(users) if i == 0 or u.is_dir()]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``workspaceStorage/*/chatSessions/*.jsonl`` and ``*.json`` (not a ``.json`` whose
        ``.jsonl`` is there) and ``globalStorage/emptyWindowChatSessions/*``."""
        for root in self.roots(env, home):
            for base, pattern in ((root / "workspaceStorage", "*/chatSessions/"),
                                  (root / "globalStorage" / "emptyWindowChatSessions", "")):
                logs = list(walk_files(base, pattern + "*.jsonl"))
                stems = {p.with_suffix("") for p in logs}
                flat = [p for p in walk_files(base, pattern + "*.json") if p.with_suffix("") not in stems]
                yield from sorted(logs + flat, key=lambda p: p.parts)

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """The whole file, always from 0 (``start``/``state`` ignored). Raises ``OSError`` when it
        cannot be read; a broken line or request is skipped and counted."""
        path = Path(path)
        data, size, issues, torn = self._parsed(str(path))
        stats = LineStats(end_offset=size, pending=torn)
        for reason, n in issues.items():
            for _ in range(n):
                stats.skip(reason)
        data = data if isinstance(data, dict) else None
        sid = string(data.get("sessionId")) if data else ""
        session = Session(agent=self.agent, session_id=sid or path.stem, path=str(path))
        state: dict = {"next_index": 0}
        requests = data.get("requests") if data else None
        if data is None and not issues:
            stats.skip("not a chat session")
        messages: list[Message] = []
        for n, req in enumerate(requests if isinstance(requests, list) else ()):
            if isinstance(req, dict):
                self.take(Record(req, n, 1), state, session, messages, stats, f"request {n}", _take)
            else:
                stats.skip("not a JSON object", f"request {n}")
        self.take(Record(data or {}, 0, 0), state, session, [], stats, "session fields",
                  lambda rec, state, session, out: _fields(rec.obj, path, state, session))
        if session.updated is None:
            session.touch(parse_ts(os.stat(path).st_mtime))
        state.pop("pending", None)
        self._seal(state, session, stats)
        return FileRead(session, messages, size, state, stats)

    def finish(self, state: dict, session: Session) -> None:
        """Title: ``customTitle``, else the first prompt."""
        session.title = state.get("title") or state.get("first_prompt") or None
        session.anchor_index = state.get("anchor", 0)

    def fingerprint(self, path: str, size: int) -> str:
        """SHA-1 of the whole file: any change is read again from the start. Raises ``OSError``."""
        return hashlib.sha1(read_file(path)).hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """Request number ``offset`` of the (cached) parsed file, or None. Raises ``OSError``."""
        data = self._parsed(path)[0]
        requests = data.get("requests") if isinstance(data, dict) else None
        if isinstance(requests, list) and 0 <= offset < len(requests) and isinstance(requests[offset], dict):
            return requests[offset]
        return None

    def locate(self, path: str, offset: int) -> tuple[str, int] | None:
        """None: a message's offset is a request number, not a place in the file."""
        return None

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: VS Code has no command that reopens a chat; it is reopened in the chat view."""
        return None

    def _parsed(self, path: str) -> tuple[object, int, dict[str, int], bool]:
        """``(session, size, {skip reason: count}, torn last line)`` of a chat file: a ``.json``
        parsed, a ``.jsonl`` replayed (the last few cached by path, mtime and size). Raises
        ``OSError``."""
        if not path.endswith(".jsonl"):
            data, size = read_whole(path)
            return data, size, ({} if data is not None else {"broken JSON": 1}), False
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        hit = self._logs.get(key)
        if hit is None:
            raw = read_file(path)
            value, issues, torn = replay(raw)
            hit = (value, len(raw), issues, torn)
            self._logs[key] = hit
            while len(self._logs) > LOGS_CACHED:
                self._logs.popitem(last=False)
        self._logs.move_to_end(key)
        return hit


# -- the log ---------------------------------------------------------------------------------


def replay(raw: bytes) -> tuple[object, dict[str, int], bool]:
    """``(session, {skip reason: count}, torn)`` of a chat log (``objectMutationLog.ts``
    ``read``): the initial value with every later entry applied. A last line without a newline
    that does not parse is torn (being written), not counted; None when the log has no entry."""
    value: object = None
    issues: dict[str, int] = {}
    torn = False

    def skip(reason: str) -> None:
        issues[reason] = issues.get(reason, 0) + 1

    lines = raw.split(b"\n")
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = loads(line)
        except ValueError:
            if n == len(lines) - 1:
                torn = True
            else:
                skip("broken JSON")
            continue
        if not isinstance(entry, dict):
            skip("not a JSON object")
            continue
        kind = entry.get("kind")
        if kind == 0:
            value = entry.get("v")
            if not isinstance(value, dict):
                skip("initial value not an object")
                value = {}
            continue
        if value is None:  # the initial entry is missing or broken: what follows still reads
            skip("no initial value")
            value = {}
        try:
            _apply(value, kind, entry)
        except (LookupError, TypeError, ValueError):
            skip("entry off the session")
    return value, issues, torn


def _apply(root: dict, kind, entry: dict) -> None:
    """Apply one set (1), push (2) or delete (3) entry to ``root``. Raises ``LookupError``,
    ``TypeError`` or ``ValueError`` when its path is not in ``root``."""
    path = entry.get("k")
    if kind not in (1, 2, 3) or not isinstance(path, list) or not path:
        raise ValueError("not an entry")
    parent = root
    for key in path[:-1]:
        parent = _child(parent, key)
    last = path[-1]
    if kind == 2:
        arr = _child(parent, last) if _has(parent, last) else []
        arr = arr if isinstance(arr, list) else []
        cut = entry.get("i")
        if cut is not None:
            if not isinstance(cut, int) or isinstance(cut, bool) or cut < 0:
                raise ValueError("bad cut")
            del arr[cut:]
        items = entry.get("v")
        if isinstance(items, list):
            arr.extend(items)
        _put(parent, last, arr)
    elif kind == 1:
        _put(parent, last, entry.get("v"))
    elif isinstance(parent, dict):
        parent.pop(_key(parent, last), None)
    else:
        _put(parent, last, None)


def _key(holder, key):
    if isinstance(holder, dict) and isinstance(key, str):
        return key
    if isinstance(holder, list) and isinstance(key, int) and not isinstance(key, bool):
        return key
    raise TypeError("path does not fit the value")


def _has(holder, key) -> bool:
    k = _key(holder, key)
    return k in holder if isinstance(holder, dict) else 0 <= k < len(holder)


def _child(holder, key):
    return holder[_key(holder, key)]


def _put(holder, key, value) -> None:
    k = _key(holder, key)
    if isinstance(holder, list) and k == len(holder):
        holder.append(value)
    else:
        holder[k] = value


# -- requests --------------------------------------------------------------------------------


def _fields(data: dict, path: Path, state: dict, session: Session) -> None:
    """Title, times, project and app from the session object and the files around it."""
    title = string(data.get("customTitle")).strip()
    if title:
        state["title"] = capped(title, TITLE_CAP)
    session.touch(parse_ts(data.get("creationDate")))
    session.touch(parse_ts(data.get("lastMessageDate")))
    if path.parent.name == "chatSessions":
        session.project = _workspace_folder(path.parent.parent / "workspace.json")
    user = next((p for p in path.parents if p.name == "User"), None)
    session.extra["app"] = APPS.get(user.parent.name, "VS Code") if user else "VS Code"


def _take(rec: Record, state: dict, session: Session, out: list[Message]) -> None:
    """One request: its messages (side-chain for a sub-agent's calls) and its time."""
    req = rec.obj
    ts = parse_ts(req.get("timestamp"))
    session.touch(ts)
    response = req.get("response")
    for p in response if isinstance(response, list) else ():
        if isinstance(p, dict) and "kind" in p and (not isinstance(p["kind"], str) or p["kind"] not in RESPONSE_KINDS):
            note_unknown(state, p["kind"])
    pieces = _pieces(req)
    base = len(out)
    emit([p for p, _ in pieces], rec, state, out, ts)
    for m in out[base:]:
        m.sidechain = pieces[m.part][1]


def pieces_of(req: dict) -> list[Piece]:
    """The pieces of one request (stateless; tool results are paired by call id)."""
    return [p for p, _ in _pieces(req)]


def _pieces(req: dict) -> list[tuple[Piece, bool]]:
    """``(piece, is a sub-agent's)`` of one request, in order (see the module docstring)."""
    out: list[tuple[Piece, bool]] = []
    message = req.get("message")
    text = string(message.get("text")) if isinstance(message, dict) else string(message)
    if text.strip():
        out.append((Piece(Role.USER, LABEL_USER, text, prompt=True), False))
    response = req.get("response")
    parts = [response] if isinstance(response, str) else response if isinstance(response, list) else []
    buf: list[str] = []

    def flush() -> None:
        joined = "".join(buf).strip()
        buf.clear()
        if joined:
            out.append((Piece(Role.ASSISTANT, LABEL_ASSISTANT, joined), False))

    for p in parts:
        if isinstance(p, str):
            buf.append(p)
            continue
        if not isinstance(p, dict):
            continue
        kind = p.get("kind")
        if kind is not None and not isinstance(kind, str):
            continue
        if kind is None or kind in TEXT_KINDS:
            buf.append(_part_text(p))
        elif kind == "thinking":
            flush()
            value = p.get("value")
            thought = "\n".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else string(value)
            if thought.strip():
                out.append((Piece(Role.ASSISTANT, LABEL_THINKING, thought.strip()), False))
        elif kind == "toolInvocationSerialized":
            flush()
            side = bool(string(p.get("subAgentInvocationId")))
            name = string(p.get("toolId")) or "unknown"
            call_id = string(p.get("toolCallId")) or None
            out.append((Piece(Role.ASSISTANT, tool_call_label(name), _call_text(p), name, call_id=call_id), side))
            result = _result_text(p)
            if result:
                out.append((Piece(Role.TOOL, None, result, name, call_id=call_id), side))
        elif kind == "warning":
            flush()
            warning = _markdown(p.get("content"))
            if warning.strip():
                out.append((Piece(Role.SYSTEM, LABEL_SYSTEM, warning.strip()), False))
    flush()
    result = req.get("result")
    details = result.get("errorDetails") if isinstance(result, dict) else None
    error = string(details.get("message")) if isinstance(details, dict) else ""
    if error.strip():
        out.append((Piece(Role.SYSTEM, LABEL_SYSTEM, error.strip()), False))
    return out


def _markdown(value) -> str:
    """A ``string | IMarkdownString`` as text."""
    return string(value.get("value")) if isinstance(value, dict) else string(value)


def _part_text(p: dict) -> str:
    """The text of a Markdown part (``{value}``, ``markdownContent``/``markdownVuln`` ``content``)
    or of an inline reference (the file it names, in backquotes)."""
    kind = p.get("kind")
    if kind is None:
        return string(p.get("value"))
    if kind != "inlineReference":
        return _markdown(p.get("content"))
    ref = p.get("inlineReference")
    uri = ref.get("uri") if isinstance(ref, dict) and isinstance(ref.get("uri"), dict) else ref
    name = string(p.get("name"))
    if not name and isinstance(uri, dict):
        name = string(uri.get("fsPath")) or string(uri.get("path")) or string(uri.get("external"))
    return f"`{name}`" if name else ""


def _call_text(p: dict) -> str:
    """A tool call's text: what it says it does, then its command, input or sub-agent prompt."""
    lines = [_markdown(p.get("pastTenseMessage")) or _markdown(p.get("invocationMessage"))]
    data = p.get("toolSpecificData")
    if isinstance(data, dict):
        kind = data.get("kind")
        if kind == "terminal":
            line = data.get("commandLine")
            lines.append(string(line.get("original")) if isinstance(line, dict) else string(data.get("command")))
        elif kind == "input":
            lines.append(dump_text(data.get("rawInput")))
        elif kind == "subagent":
            lines.append(string(data.get("prompt")))
        elif kind == "simpleToolInvocation":
            lines.append(string(data.get("input")))
    return "\n".join(line for line in lines if line.strip())


def _result_text(p: dict) -> str:
    """A tool call's result: a terminal's output, a sub-agent's result, the ``resultDetails``
    outputs (or the files it names); ``""`` when it kept none."""
    data = p.get("toolSpecificData")
    if isinstance(data, dict):
        output = data.get("terminalCommandOutput")
        if isinstance(output, dict) and string(output.get("text")):
            return output["text"]
        if data.get("kind") == "subagent" and string(data.get("result")):
            return data["result"]
        if data.get("kind") == "simpleToolInvocation" and string(data.get("output")):
            return data["output"]
    details = p.get("resultDetails")
    if isinstance(details, dict):
        outputs = details.get("output")
        if isinstance(outputs, list):
            return "\n".join(string(o.get("value")) for o in outputs if isinstance(o, dict) and string(o.get("value")))
        return ""
    if isinstance(details, list):
        files = [d.get("uri") if isinstance(d, dict) and isinstance(d.get("uri"), dict) else d for d in details]
        return "\n".join(string(f.get("fsPath")) or string(f.get("path")) for f in files if isinstance(f, dict))
    return ""


def _workspace_folder(manifest: Path) -> str | None:
    """The folder of a workspace from its ``workspace.json`` (``folder`` URI, else the folder of
    the ``workspace`` file), None when missing or unreadable."""
    try:
        data = read_whole(str(manifest))[0]
    except OSError:
        return None
    if not isinstance(data, dict):
        return None
    folder, workspace = string(data.get("folder")), string(data.get("workspace"))
    path = _uri_path(folder) if folder else _uri_path(workspace)
    if path and not folder:
        path = os.path.dirname(path)
    return path or None


def _uri_path(uri: str) -> str:
    """The path of a ``file://`` (or remote) URI, percent-decoded; a Windows drive path loses its
    leading ``/``."""
    path = unquote(urlsplit(uri).path)
    if len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]
    return path


SOURCE = VSCodeSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

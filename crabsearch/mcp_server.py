"""``crabsearch mcp``: the Model Context Protocol server, on the official ``mcp`` SDK.

Three read-only tools, each answering with ``structuredContent`` (the output schemas below) and a
readable text block: ``search_sessions``, ``list_messages`` and ``recent_sessions``. What they
answer is :mod:`crabsearch.mcp_tools`; this module declares them (names, arguments, the guide in
each description; the filter arguments from ``crabsearch.filters``), turns a bad call into an
``isError`` result of one sentence, and serves stdio:

* stdout carries only protocol messages: the protocol writes to its own copy of file
  descriptor 1, and fd 1 itself is pointed at stderr while the server runs, so a stray print
  lands in the log. Logs go to stderr.
* Every message is written as :func:`crabsearch.text.terminal_json` writes JSON: DEL, C1 controls
  and bidi overrides from transcripts are escaped as ``\\uXXXX`` (C0 controls already are), so
  the wire is inert in a terminal too; the text blocks are made :func:`~crabsearch.text.printable`.
* A line of stdin that is not JSON is answered with JSON-RPC's parse error, and one that is JSON but
  not a JSON-RPC message (``{"foo": 1}``, a string, an array) with its invalid request
  (:class:`_ParseErrors`; the SDK's stdio transport only logs them); the lines after it are served.
  A request holding a lone surrogate escape (``"\\ud800"``, valid JSON that pydantic refuses) is
  served with U+FFFD in its place.

This module does not use ``from __future__ import annotations``: the SDK reads the tools'
signatures to build their input and output schemas.
"""

import inspect
import json
import logging
import os
import re
import signal
import sys
import threading
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (INVALID_REQUEST, PARSE_ERROR, CallToolResult, ErrorData, JSONRPCError, TextContent,
                       ToolAnnotations, jsonrpc_message_adapter)
from pydantic import BaseModel, BeforeValidator, Field, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from . import __version__
from .filters import FILTERS, McpArg
from .mcp_tools import (LIST_TEXT_CAP, MAX_HITS, MAX_PAGE, MAX_RECENT, MAX_WINDOW, SEARCH_TEXT_CAP, Answer,
                        BadCall, Door, quoted)
from .sources import SOURCES
from .text import inert_json_text

log = logging.getLogger("crabsearch.mcp")

# -- the guide for the model -----------------------------------------------------------------

INSTRUCTIONS = (
    "crabsearch searches the user's past AI coding-agent sessions on this machine (Claude Code, Codex, "
    "Gemini CLI, Cursor, opencode and more). Use search_sessions when the user refers to earlier work, "
    "then list_messages to read a session on; recent_sessions lists the latest sessions.")

SEARCH_GUIDE = (
    "Search the user's past coding-agent sessions: the best-matching message of each session, with the "
    "messages around it.\n\n"
    "Use it when the user refers to earlier work (\"what did we decide about...\", \"the fix from last week\", "
    "\"like last time\") or when an earlier command, fix or decision would help.\n"
    "- query: 2-6 words in the user's own terms (names, error text, identifiers such as getUserById or "
    "src/auth/store.ts). \"exact phrase\", -word (leave out), prefix*, and filters inside the query work too: "
    "agent:codex, project:webapp, role:user, since:7d.\n"
    "- Start with the defaults. If a hit looks right, widen context_before/context_after, then read on with "
    "list_messages(session_id, offset) from a little before the hit (message_index counts from 0).\n"
    f"- Limits, enforced here: {MAX_HITS} sessions, {MAX_WINDOW} messages per window (the hit always inside), "
    f"{SEARCH_TEXT_CAP:,} characters per message (cut around the match, truncated: true), 64 KB per answer. "
    "Secrets are masked. {tools}")

TOOLS_OFF = ("Tool arguments and tool output are not searched, and tool output is not shown (the user can turn "
             "it on with index_tool_output = true in crabsearch's config.toml).")
TOOLS_ON = "Tool output is searched only with in:tools in the query; tool arguments are not searched."

LIST_GUIDE = (
    "Read one past session in order, a page at a time: messages offset to offset+limit-1 (message_index counts "
    "from 0, as in search_sessions).\n\n"
    "Pass a session_id from search_sessions or recent_sessions (a unique prefix of 4+ characters works). To read "
    "around a hit, start a little before it (offset = message_index - 2); follow next_offset to go on (null at "
    "the end).\n"
    f"Limits, enforced here: {MAX_PAGE} messages per page, {LIST_TEXT_CAP:,} characters per message "
    "(truncated: true when cut), 64 KB per answer. Secrets are masked.")

RECENT_GUIDE = (
    "List the user's most recently updated coding-agent sessions, newest first, with title, project and "
    "session_id.\n\n"
    "Use it for \"what was I working on yesterday\" or to pick a session to read with list_messages when there "
    f"are no words to search for. agent and project narrow the list; at most {MAX_RECENT} sessions.")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

AGENTS = ", ".join(SOURCES)
Query = Annotated[str, Field(description="2-6 words in the user's own terms; the query language of crabsearch "
                                         "(\"phrase\", -word, prefix*, "
                                         + ", ".join(f"{name}:" for name in FILTERS) + ")")]


def filter_argument(arg: McpArg):
    """The type of a filter's tool argument (``crabsearch.filters.McpArg``): a string or null,
    described, and with ``enum`` listing the agent names as its values."""
    described = Field(description=arg.description.format(agents=AGENTS))
    if arg.enum:
        return Annotated[str | None, described,
                         WithJsonSchema({"anyOf": [{"type": "string", "enum": list(SOURCES)}, {"type": "null"}]})]
    return Annotated[str | None, described]


def with_filters(tool):
    """``tool`` (whose ``**filters`` take them) declaring, after its own arguments, the filter
    arguments of the tool of its name (every ``crabsearch.filters`` entry whose ``McpArg`` names
    it), each a string or null, default null: the SDK reads the signature."""
    sig = inspect.signature(tool)
    params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=filter_argument(f.mcp))
               for f in FILTERS.values() if f.mcp and tool.__name__ in f.mcp.tools]
    tool.__signature__ = sig.replace(parameters=params)
    tool.__annotations__ = {**{p.name: p.annotation for p in params}, "return": sig.return_annotation}
    return tool


def _not_a_bool(value):
    """A whole-number argument: ``true``/``false`` are never numbers (pydantic's lax mode reads
    ``limit: true`` as 1). Anything else is pydantic's lax integer: a whole number, also written
    as a string (``"5"``, what some clients send) or as ``5.0``."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def whole(description: str, low: int, high: int | None = None):
    """A whole-number argument's type: ``description`` and the range in its schema
    (``minimum``/``maximum``: what is used; a value outside is clamped, never an error)."""
    bounds = {"minimum": low} | ({"maximum": high} if high is not None else {})
    return Annotated[int, BeforeValidator(_not_a_bool),
                     Field(description=f'{description}; a whole number ("5" is read as 5)', json_schema_extra=bounds)]


SearchLimit = whole(f"sessions to return, 1-{MAX_HITS} (clamped)", 1, MAX_HITS)
Before = whole(f"messages shown before the hit, 0-{MAX_WINDOW - 1} (clamped; a window holds at most {MAX_WINDOW})",
               0, MAX_WINDOW - 1)
After = whole(f"messages shown after the hit, 0-{MAX_WINDOW - 1} (clamped; a window holds at most {MAX_WINDOW})",
              0, MAX_WINDOW - 1)
Offset = whole("first message to return: its message_index, from 0", 0)
PageLimit = whole(f"messages per page, 1-{MAX_PAGE} (clamped)", 1, MAX_PAGE)
RecentLimit = whole(f"sessions to list, 1-{MAX_RECENT} (clamped)", 1, MAX_RECENT)


# -- output schemas (the structuredContent of each tool) ------------------------------------

class WindowMessage(BaseModel):
    message_index: int = Field(description="position in the session, from 0")
    role: str = Field(description="user, assistant, tool, system or summary")
    label: str = Field(description="user, assistant, thinking, tool-call:NAME, tool:NAME, system, summary")
    timestamp: str | None = Field(description="ISO-8601 UTC")
    text: str = Field(description=f"at most {SEARCH_TEXT_CAP:,} characters, secrets masked")
    truncated: bool = Field(description="true when text was cut")
    hit: bool = Field(description="true on the matched message")


class SessionHit(BaseModel):
    session_id: str
    agent: str
    title: str | None
    project: str | None = Field(description="the session's working directory")
    updated: str | None = Field(description="ISO-8601 UTC")
    message_index: int = Field(description="the matched message, from 0")
    message_count: int
    route: str | None = Field(description="how it matched: phrase, all, session, repair, any, similar (by meaning), id, recent")
    resume_command: str | None = Field(description="shell command that resumes the session in its agent")
    url: str | None = Field(default=None, description="web address that opens a web chat (ChatGPT, Claude.ai)")
    notes: list[str] = Field(description="subagent of, also in other sessions, abandoned branch, before compaction")
    window: list[WindowMessage]


class SearchOutput(BaseModel):
    query: str = Field(description="the part of the query searched (at most 512 characters)")
    route: str | None = Field(description="the first rung that matched, null when nothing did")
    indexing: bool = Field(description="true when indexing was still running: results may be incomplete")
    trimmed: bool = Field(description="true when sessions were left out to stay under 64 KB")
    notes: list[str]
    hits: list[SessionHit]


class PageMessage(BaseModel):
    message_index: int
    role: str
    label: str
    timestamp: str | None
    text: str = Field(description=f"at most {LIST_TEXT_CAP:,} characters, secrets masked")
    truncated: bool


class SkippedLineOut(BaseModel):
    before: int = Field(description="the message_index it comes before (total: after the last message)")
    line: int | None = Field(description="its line number in the transcript, from 1")
    size: int | None = Field(description="its length in bytes")
    reason: str = Field(description="why it was skipped: oversized line, broken JSON, ...")
    text: str = Field(description="line 3 skipped: 17 MB, over the 16 MB cap")


class PageOutput(BaseModel):
    session_id: str
    agent: str
    title: str | None
    project: str | None
    resume_command: str | None
    url: str | None = Field(default=None, description="web address that opens a web chat (ChatGPT, Claude.ai)")
    offset: int
    total: int = Field(description="messages in the session")
    next_offset: int | None = Field(description="offset of the next page; null at the end")
    trimmed: bool = Field(description="true when the page was shortened to stay under 64 KB")
    messages: list[PageMessage]
    skipped_lines: list[SkippedLineOut] = Field(
        default_factory=list, description="lines of the transcript its reader skipped among these messages")


class RecentSession(BaseModel):
    session_id: str
    agent: str
    title: str | None
    project: str | None
    updated: str | None
    message_count: int
    resume_command: str | None
    url: str | None = Field(default=None, description="web address that opens a web chat (ChatGPT, Claude.ai)")


class RecentOutput(BaseModel):
    indexing: bool
    notes: list[str]
    sessions: list[RecentSession]


# -- the server --------------------------------------------------------------------------------

class CrabsearchServer(MCPServer):
    """An :class:`MCPServer` whose argument errors are one sentence (the SDK's are pydantic's
    multi-line report), and whose unknown tool is quoted at most :data:`~crabsearch.mcp_tools.QUOTED_CHARS`
    characters (the SDK's ``Unknown tool: NAME`` sends back a name of any length)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if self._tool_manager.get_tool(name) is None:
            known = ", ".join(sorted(t.name for t in self._tool_manager.list_tools()))
            return error_result(f"Unknown tool {quoted(name)}: the tools are {known}.")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error_result(argument_error(exc.__cause__))
            raise


def build_server(door: Door) -> MCPServer:
    """The MCP server of ``door``'s three tools (not started)."""
    server = CrabsearchServer("crabsearch", title="crabsearch", version=__version__, instructions=INSTRUCTIONS,
                              log_level="WARNING")

    @with_filters
    def search_sessions(query: Query, limit: SearchLimit = 5, context_before: Before = 2, context_after: After = 2,
                        **filters) -> Annotated[CallToolResult, SearchOutput]:
        return answer(door.search_sessions, query, limit, context_before, context_after, **filters)

    def list_messages(session_id: Annotated[str, Field(description="a session_id from search_sessions or "
                                                                   "recent_sessions, or a unique prefix")],
                      offset: Offset = 0, limit: PageLimit = 20) -> Annotated[CallToolResult, PageOutput]:
        return answer(door.list_messages, session_id, offset, limit)

    @with_filters
    def recent_sessions(limit: RecentLimit = 10, **filters) -> Annotated[CallToolResult, RecentOutput]:
        return answer(door.recent_sessions, limit, **filters)

    search_guide = SEARCH_GUIDE.format(tools=TOOLS_ON if door.tool_output else TOOLS_OFF)
    for fn, guide, title in ((search_sessions, search_guide, "Search past agent sessions"),
                             (list_messages, LIST_GUIDE, "Read a past session"),
                             (recent_sessions, RECENT_GUIDE, "Recent agent sessions")):
        server.add_tool(fn, title=title, description=guide, annotations=READ_ONLY)
    return server


def answer(method, *args, **kwargs) -> CallToolResult:
    """``method(*args, **kwargs)`` as a tool result: the structured answer and its text block, or
    an ``isError`` result of one sentence (the server keeps serving either way)."""
    try:
        result: Answer = method(*args, **kwargs)
    except BadCall as exc:
        return error_result(str(exc))
    except Exception:  # a defect or an unreadable index: logged on stderr, one sentence to the client
        log.exception("crabsearch: %s failed", getattr(method, "__name__", "a tool"))
        return error_result("crabsearch could not answer this call (its log on stderr has the cause); "
                            "`crabsearch status` shows the state of the index.")
    return CallToolResult(content=[TextContent(type="text", text=result.text)], structured_content=result.data)


def error_result(sentence: str) -> CallToolResult:
    """An ``isError`` tool result holding ``sentence``."""
    return CallToolResult(content=[TextContent(type="text", text=sentence)], is_error=True)


_EXPECTED = (("int", "a whole number"), ("string", "a string"), ("bool", "true or false"),
             ("none", "null or left out"))


def argument_error(exc: ValidationError) -> str:
    """One sentence for the first argument that did not validate."""
    err = exc.errors()[0]
    name = ".".join(str(p) for p in err.get("loc", ())) or "the arguments"
    if err.get("type") == "missing":
        return f"Missing argument {name}."
    kind = err.get("type", "")
    expected = next((what for prefix, what in _EXPECTED if kind.startswith(prefix)), None)
    if expected:
        return f"Argument {name} must be {expected}."
    return f"Argument {name} is not valid: {err.get('msg', 'wrong type')}."


# -- stdio -------------------------------------------------------------------------------------

class _InertWire:
    """The protocol's stdout: each JSON-RPC line with DEL, C1 and bidi controls escaped
    (``text.inert_json_text``: the same JSON, not parsed again) and written to ``stream``."""

    def __init__(self, stream):
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self._stream.write(inert_json_text(line) + "\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()


class _ParseErrors:
    """The stdio transport's read stream with the lines that are not JSON-RPC messages answered here.

    The SDK's ``stdio_server`` (``mcp/server/stdio.py``) reads stdin a line at a time and puts on
    its read stream either a ``SessionMessage`` or, for a line that does not validate as one JSON-RPC
    message, the pydantic ``ValidationError``; the server's dispatcher only logs such an item
    (``JSONRPCDispatcher._dispatch``). JSON-RPC 2.0 (section 5.1, "Error object") wants a line that
    is not JSON answered with ``{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message":
    "Parse error"}}``, and JSON that is not a request object (``{"foo": 1}``, ``"a string"``,
    ``[1, 2, 3]``) with code -32600, "Invalid Request" (:func:`_error_reply`): this wrapper writes
    that to ``write`` (the transport's write stream, so it goes out through the SDK's one writer,
    whole) and reads on. A blank line (no message at all) is passed over without an answer.

    An array (a JSON-RPC batch) gets one Invalid Request, as the SDK's streamable HTTP transport
    answers it: MCP dropped batches in its 2025-06-18 revision and the SDK's stdio transport
    validates a line as one message, so it never serves a batch (only logs it). Everything else is
    the SDK's read stream unchanged, the sender's context included (``last_context``, which the
    dispatcher reads)."""

    def __init__(self, inner, write):
        self._inner = inner
        self._write = write

    @property
    def last_context(self):
        """The sender's context of the item received last (``mcp.shared._context_streams``)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        """The next item the server should see (``SessionMessage`` or ``Exception``); raises
        ``anyio.EndOfStream`` at the end of stdin."""
        while True:
            item = await self._inner.receive()
            if not isinstance(item, ValidationError):
                return item
            served = _with_surrogates_replaced(item)
            if served is not None:
                return served
            reply = _error_reply(item)
            if reply is not None:
                await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _loads(line) -> object:
    """``line`` parsed as JSON text by the standard library, which, unlike pydantic's parser,
    reads a lone surrogate escape (``"\\ud800"``: valid JSON text, RFC 8259 section 8.2);
    NaN and Infinity are not JSON. Raises ``ValueError`` or ``TypeError``."""
    def not_json(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=not_json)


def _surrogates_replaced(value):
    """``value`` (parsed JSON) with each lone surrogate in its strings and keys read as U+FFFD,
    as a UTF-8 decoder reads a broken sequence."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_surrogates_replaced(x) for x in value]
    if isinstance(value, dict):
        return {_surrogates_replaced(k): _surrogates_replaced(x) for k, x in value.items()}
    return value


def _with_surrogates_replaced(exc: ValidationError) -> SessionMessage | None:
    """The message of a stdin line that is JSON but holds a lone surrogate escape, which
    pydantic's parser rejects as ``json_invalid``: each lone surrogate read as U+FFFD
    (:func:`_surrogates_replaced`); None for any other line (answered by :func:`_error_reply`).
    The request is then served and answered with its own id (a parse error's null id would leave
    the client waiting for its answer); an id holding a lone surrogate is answered with U+FFFD in
    its place."""
    errors = exc.errors(include_url=False)
    line = errors[0].get("input") if errors and errors[0].get("type") == "json_invalid" else None
    if not isinstance(line, str) or "\\u" not in line:
        return None
    try:
        value = _surrogates_replaced(_loads(line))
        return SessionMessage(jsonrpc_message_adapter.validate_json(json.dumps(value), by_name=False))
    except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
        return None


def _error_reply(exc: ValidationError) -> JSONRPCError | None:
    """JSON-RPC's answer to a stdin line whose ``exc`` the SDK's stdio transport put on its read
    stream: the parse error for a line that is not JSON (pydantic's ``json_invalid``, the line its
    ``input``), None for a blank one, the invalid request for JSON that is not a JSON-RPC message.
    Its id is the request's own when the line is an object with a ``method`` and a usable ``id``
    (read from the errors' inputs: a ``missing`` field's is the whole object; or parsed again
    with ``json`` for JSON pydantic refused), else null."""
    errors = exc.errors(include_url=False)
    if errors and errors[0].get("type") == "json_invalid":
        line = errors[0].get("input")
        if isinstance(line, str) and not line.strip():
            return None
        try:  # JSON all the same (a lone surrogate that pydantic refuses), but not a message
            whole = _surrogates_replaced(_loads(line))
        except (TypeError, ValueError):
            return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    else:
        whole = next((e.get("input") for e in errors if e.get("type") == "missing" and len(e.get("loc", ())) == 2),
                     None)
    rid = whole.get("id") if isinstance(whole, dict) and "method" in whole else None
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        rid = None
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=INVALID_REQUEST, message="Invalid Request"))


async def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` over this process's stdin and stdout until stdin closes."""
    import anyio

    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="replace", newline="\n")
    os.dup2(2, 1)  # anything else written to fd 1 (a stray print, a library) goes to the log
    try:
        async with stdio_server(stdout=anyio.wrap_file(_InertWire(wire))) as (read, write):
            low = server._lowlevel_server  # the SDK's own in-process client does the same (mcp 2.x)
            await low.run(_ParseErrors(read, write), write, low.create_initialization_options())
    finally:
        wire.flush()
        os.dup2(wire.fileno(), 1)  # stdout is stdout again
        wire.close()


START_DELAY = 10.0
"""Seconds after the server starts before it refreshes the index on its own (a tool call
refreshes at once). A client's health check (``claude mcp list``, ``/mcp``) starts the server,
lists its tools and kills it within about two seconds: it should not start a first index build
it then kills."""
STOP_WAIT = 2.0
"""Seconds an interrupted or closed server gives the running refresh to end at its next
transcript and commit what it read."""


def serve(door: Door) -> int:
    """``crabsearch mcp``: serve ``door`` over stdio until the client closes stdin, refreshing the
    index at the first tool call or :data:`START_DELAY` seconds after the start, whichever comes
    first. SIGINT (Ctrl-C in a terminal, or a client) stops the refresh (:meth:`Refresher.stop`)
    and exits 130 at once: the thread that reads stdin cannot be interrupted, and Python's own
    KeyboardInterrupt would leave the server waiting for it, alive and no longer answering. Returns the
    exit code."""
    import anyio

    # Plain lines on stderr (the SDK would install a Rich handler, whose colours the CLI's inert
    # stderr shows as symbols in a terminal); the SDK's own setup is then a no-op.
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)

    def interrupted(signum, frame):
        door.refresher.stop(STOP_WAIT)
        sys.stderr.flush()
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)
    later = threading.Timer(START_DELAY, door.refresher.fresh, kwargs={"block": False})
    later.daemon = True
    later.start()
    try:
        anyio.run(run_stdio, build_server(door))
    finally:
        later.cancel()
        door.refresher.stop(STOP_WAIT)
    return 0

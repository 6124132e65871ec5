"""What ``crabsearch mcp`` answers, without the protocol: the three tools over the Engine and the
Indexer, their caps and result shapes; their text blocks are ``crabsearch.mcp_text``.
``crabsearch.mcp_server`` puts them on the wire with the ``mcp`` SDK; nothing here imports it.

The door has no search logic of its own: every hit, window and page comes from
:class:`crabsearch.search.Engine` (secrets always masked: the engine is made with
``redact=True`` and no call overrides it), and the index is refreshed with
:meth:`crabsearch.index.Indexer.refresh` before a search (:class:`Refresher`). What is decided
here is only what an agent may get: the caps below (clamped, never an error), tool output only
with the same opt-in as the app (``index_tool_output``), and a one-sentence :class:`BadCall` for
a call that cannot be answered.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from .hits import structure_notes
from .model import Role, iso
from .query import used_part
from .index.store import cannot_update, why_unwritable
from .search import AmbiguousSession, Engine, Hit, Item, SessionRef
from .search.request import Ask, BadArgument, given_filters, retrying, run
from .search.skipped import shown_with
from .mcp_text import page_text, recent_text, search_text
from .text import terminal_json

log = logging.getLogger("crabsearch.mcp")

# -- the caps: clamped, never an error ----------------------------------------------------------
MAX_HITS = 20
"""Sessions per ``search_sessions`` answer."""
MAX_WINDOW = 16
"""Messages in a window, the hit always inside (the engine's own clamp, ``hits.clamp_window``)."""
SEARCH_TEXT_CAP = 1024
"""Characters of one message in a window. The engine already cuts window text at 1,024 UTF-8
bytes, around the first match for the hit (``hits.cut_around``): never more characters."""
LIST_TEXT_CAP = 4096
"""Characters of one message in ``list_messages`` (from its start: a page has no match)."""
MAX_PAGE = 50
"""Messages per ``list_messages`` page."""
MAX_RECENT = 50
"""Sessions per ``recent_sessions`` answer."""
MAX_RESPONSE_BYTES = 64 * 1024
"""A whole response: the JSON-RPC line that carries the structured result and the text block.
Answers are measured as they go on the wire (``terminal_json``) with :data:`ENVELOPE_BYTES` left
for the envelope; sessions (or messages) are dropped from the end until it fits."""
ENVELOPE_BYTES = 1024

REFRESH_EVERY = 1.0
"""Seconds: a refresh that started less than this long ago is fresh enough (one refresh for a
burst of calls, such as an agent's parallel tool calls)."""
REFRESH_WAIT = 5.0
"""Seconds a call waits for a refresh (counted from its start) before it answers from what is
already committed, with ``indexing: true`` (a first build of a large index takes minutes)."""

TOOL_OUTPUT_HIDDEN = ("[tool output not shown: crabsearch passes tool output to agents only when "
                      "index_tool_output = true in its config.toml]")
INDEXING_NOTE = ("crabsearch is still indexing transcripts; results may be incomplete: ask again "
                 "in a minute")


class BadCall(Exception):
    """A call that cannot be answered; ``str()`` is one sentence for the model (an ``isError``
    result). The server keeps serving."""


@dataclass
class Answer:
    """A tool's answer: ``data`` is the structured result (the declared output schema of
    ``mcp_server``), ``text`` the readable block for clients that show only text."""

    data: dict
    text: str


QUOTED_CHARS = 200
"""Characters of an argument an error message quotes at most (a 1,000,000-character argument
is not sent back)."""


def quoted(value: str) -> str:
    """``value`` as an error message quotes it: ``repr`` of its first :data:`QUOTED_CHARS`
    characters, with ``…`` after the quote when it was longer."""
    return repr(value[:QUOTED_CHARS]) + ("…" if len(value) > QUOTED_CHARS else "")


def clamp(value: int, low: int, high: int) -> int:
    """``value`` within ``[low, high]``."""
    return max(low, min(high, value))


class Refresher:
    """Runs :meth:`Indexer.refresh` in a background thread, one at a time, for the calls that need
    a fresh index. Safe with other crabsearch processes (the index has its own writers' lock)."""

    def __init__(self, indexer, *, every: float = REFRESH_EVERY, wait: float = REFRESH_WAIT):
        self.indexer = indexer
        self.every = every
        self.wait = wait
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._started: float | None = None
        self._stopping = threading.Event()
        self.problem: str | None = None
        """Why the last refresh failed (``Operation not permitted``), None when it did not."""
        self.found: int | None = None
        """Transcripts the last finished refresh found, None before one finished."""

    def fresh(self, *, force: bool = False, block: bool = True) -> bool:
        """Refresh unless one started less than ``every`` seconds ago (``force``: always), or
        join the one running; wait at most ``wait`` seconds from its start (``block=False``: not
        at all). True when no refresh is running any more; False while one still is (the caller
        answers from what is committed)."""
        with self._lock:
            t = self._thread
            if self._stopping.is_set():
                return t is None or not t.is_alive()
            if t is None or not t.is_alive():
                recent = self._started is not None and time.monotonic() - self._started < self.every
                if recent and not force:
                    return True
                self._started = time.monotonic()
                t = self._thread = threading.Thread(target=self._run, name="crabsearch-refresh", daemon=True)
                t.start()
            deadline = self._started + (self.wait if block else 0.0)
        t.join(max(0.0, deadline - time.monotonic()))
        return not t.is_alive()

    def stop(self, wait: float) -> None:
        """Stop: the refresh running ends at its next transcript, committing what it read (the
        next start goes on from there), waited for at most ``wait`` seconds; no other starts."""
        with self._lock:
            self._stopping.set()
            t = self._thread
        if t is not None:
            t.join(wait)

    def _run(self) -> None:
        try:
            report = self.indexer.refresh(cancelled=self._stopping.is_set)
        except Exception as exc:  # e.g. a read-only index directory: search what is there
            self.problem = why_unwritable(exc)
            log.warning("crabsearch: %s", cannot_update(self.indexer.index_dir, exc, "searching"))
            return
        self.problem, self.found = None, report.files_seen
        if report.rebuilt:
            log.warning("crabsearch: %s", report.rebuilt)
        for err in report.errors[:5]:
            log.warning("crabsearch: skipped %s", err)
        if report.busy:
            log.info("crabsearch: another crabsearch is updating the index; searching what is committed")


class Door:
    """The three tools over one Engine and one Indexer (see the module docstring).
    ``tool_output`` is the app's opt-in (config ``index_tool_output``): without it the text of
    tool output messages is replaced by :data:`TOOL_OUTPUT_HIDDEN`."""

    def __init__(self, engine: Engine, indexer, *, tool_output: bool = False, refresher: Refresher | None = None):
        if not engine.redact:
            raise ValueError("the MCP door needs an Engine that masks secrets (redact=True)")
        self.engine = engine
        self.indexer = indexer
        self.tool_output = tool_output
        self.refresher = refresher or Refresher(indexer)

    # -- the tools ----------------------------------------------------------------------------

    def search_sessions(self, query: str, limit: int = 5, context_before: int = 2, context_after: int = 2,
                        **filters: str | None) -> Answer:
        """Best hit per session for ``query`` (the app's query language), each with a window of
        ``context_before``/``context_after`` messages around the hit. ``filters``: the filter
        arguments (``agent``, ``project``, ``since``: ``crabsearch.filters`` entries with an
        :class:`~crabsearch.filters.McpArg`), each overriding the query's own, noted.

        Shape: ``{"query", "route", "indexing", "trimmed", "notes": [str], "hits": [{"session_id",
        "agent", "title", "project", "updated", "message_index", "message_count", "route",
        "resume_command", "url", "notes": [str], "window": [{"message_index", "role", "label",
        "timestamp", "text", "truncated", "hit"}]}]}``. Caps: ``limit`` 1..20, each side of the
        window 0..15 and the window at most 16 with the hit inside, 1,024 characters a message,
        64 KB in all (``trimmed``: sessions dropped from the end). ``query`` echoes the part
        searched (512 characters at most); an unknown word is spelling-repaired only once no
        refresh runs (a half-built index lacks words); ``notes`` say when the index could not be
        updated or no transcripts were found. Raises :class:`BadCall` for an empty query, a
        filter value its filter does not take (an unknown agent, a ``since`` that is no date)
        or holding a double quote, or no index and an index directory that cannot be written."""
        if not query.strip():
            raise BadCall("The query is empty: give 2-6 words of what you are looking for.")
        given = _given(filters)
        limit = clamp(limit, 1, MAX_HITS)
        before, after = clamp(context_before, 0, MAX_WINDOW - 1), clamp(context_after, 0, MAX_WINDOW - 1)
        answer = run(self.engine, Ask(query, given, limit=limit, before=before, after=after),
                     refresh=self._fresh, rebuild=self._rebuild)
        result = answer.result
        notes = self._state_notes() + answer.notes
        if answer.indexing:
            notes.append(INDEXING_NOTE)
        data = {"query": used_part(query), "route": result.route, "indexing": answer.indexing, "trimmed": False,
                "notes": notes, "hits": [self._hit(h) for h in result.hits]}
        return _fit(data, "hits", search_text,
                    "the answer was cut to stay under 64 KB ({kept} of {all} sessions shown): ask for fewer "
                    "sessions or less context",
                    shrink=_narrower)

    def list_messages(self, session_id: str, offset: int = 0, limit: int = 20) -> Answer:
        """A page of one session, read from its transcript by stored offsets: messages
        ``offset .. offset+limit`` (``message_index`` counts from 0, as search hits do), after a
        refresh as for a search. ``session_id`` may be a unique prefix (4 characters or more).

        Shape: ``{"session_id", "agent", "title", "project", "resume_command", "url", "offset", "total",
        "next_offset", "trimmed", "messages": [{"message_index", "role", "label", "timestamp",
        "text", "truncated"}], "skipped_lines": [{"before", "line", "size", "reason", "text"}]}``;
        ``next_offset`` is null on the last page; ``skipped_lines``, the transcript's lines its
        reader skipped among the messages listed (``before``: the ``message_index`` each comes
        before, ``total`` after the last; ``search.skipped``). Caps: ``limit``
        1..50, 4,096 characters a message, 64 KB in all (``trimmed``: a shorter page, and
        ``next_offset`` where it stopped). Raises :class:`BadCall` for an unknown or ambiguous
        id and an offset past the last message."""
        self.refresher.fresh()  # the session may have grown (the agent's own, say)
        ref = self._session(session_id)
        total = ref.session.message_count
        offset, limit = max(0, offset), clamp(limit, 1, MAX_PAGE)
        if total and offset >= total:
            raise BadCall(f"offset {offset} is past the end: the session has {total} messages "
                          f"(message_index 0 to {total - 1}).")
        page = self._read(lambda: self.engine.page(ref, offset, limit))
        s = ref.session
        data = {"session_id": s.session_id, "agent": s.agent, "title": s.title, "project": s.project,
                "resume_command": ref.resume_command, "url": ref.open_url, "offset": offset, "total": total,
                "next_offset": None,
                "trimmed": False, "messages": [self._item(m, LIST_TEXT_CAP, window=False) for m in page.messages]}
        answer = _fit(data, "messages", page_text)
        end = offset + len(answer.data["messages"])
        if end < total:
            answer.data["next_offset"] = end
        lines = self._read(lambda: self.engine.skipped_lines(ref))
        answer.data["skipped_lines"] = [line.to_json() for line in shown_with(lines, offset, end, total)]
        answer.text = page_text(answer.data)
        return answer

    def recent_sessions(self, limit: int = 10, **filters: str | None) -> Answer:
        """The most recently updated sessions, newest first; ``filters`` as for
        :meth:`search_sessions` (``agent``, ``project``) narrow them.

        Shape: ``{"indexing", "notes": [str], "sessions": [{"session_id", "agent", "title",
        "project", "updated", "message_count", "resume_command", "url"}]}``. Caps: ``limit`` 1..50.
        Raises :class:`BadCall` for a filter value its filter does not take (an unknown agent)
        or holding a double quote."""
        given = _given(filters)
        limit = clamp(limit, 1, MAX_RECENT)
        if given:  # the filters alone: the recent sessions they allow
            answer = run(self.engine, Ask("", given, limit=limit), refresh=self._fresh, rebuild=self._rebuild)
            hits, notes, done = answer.result.hits, self._state_notes() + answer.notes, not answer.indexing
        else:
            done = self._fresh()
            hits, notes = self._read(lambda: self.engine.recent(limit=limit)), self._state_notes()
        if not done:
            notes.append(INDEXING_NOTE)
        data = {"indexing": not done, "notes": notes, "sessions": [_session(h.ref) for h in hits]}
        return _fit(data, "sessions", recent_text)

    # -- plumbing -----------------------------------------------------------------------------

    def _fresh(self) -> bool:
        """Refresh before a read (:meth:`Refresher.fresh`): False while the refresh still runs.
        Raises :class:`BadCall` when there is no index and none can be made (:meth:`_usable`)."""
        done = self.refresher.fresh()
        self._usable()
        return done

    def _rebuild(self, line: str) -> None:
        """Rebuild a damaged index from the transcripts (as the CLI does), said in the log."""
        log.warning("crabsearch: %s", line)
        self.refresher.fresh(force=True)
        self.engine.reload()

    def _read(self, call):
        """``call()``, made once more after rebuilding a damaged index (``request.retrying``)."""
        return retrying(call, self._rebuild)

    def _usable(self) -> None:
        """Raise :class:`BadCall` when there is no index to search and none can be made (the
        index directory cannot be written): said, not answered as "No sessions match"."""
        problem = self.refresher.problem
        if problem and not self.engine.exists:
            raise BadCall(f"crabsearch cannot create its index in {self.engine.index_dir} ({problem}), so it has "
                          "nothing to search: start the server with --index-dir DIR (or CRABSEARCH_INDEX_DIR) "
                          "naming a folder it can write.")

    def _state_notes(self) -> list[str]:
        """What an empty or old answer must not be taken for: an index that could not be updated,
        or no transcripts found at all (the user's work is then not "not found" but not seen)."""
        notes = []
        if self.refresher.problem:
            notes.append(f"crabsearch could not update its index in {self.engine.index_dir} "
                         f"({self.refresher.problem}): the answer is from what was indexed before")
        if self.refresher.found == 0:
            home = getattr(self.indexer, "home", None)
            where = f" under {home}" if home else ""
            notes.append(f"crabsearch found no agent transcripts{where} (`crabsearch status` lists where it "
                         "looks): nothing is searched, which says nothing about the user's past work")
        return notes

    def _session(self, session_id: str) -> SessionRef:
        sid = session_id.strip()
        if not sid:
            raise BadCall("session_id is empty: pass the session_id of a search_sessions or recent_sessions result.")
        done = True
        try:
            ref = self._read(lambda: self.engine.find_session(sid))
            if ref is None:  # written since the last refresh?
                done = self.refresher.fresh(force=True)
                ref = self._read(lambda: self.engine.find_session(sid))
        except AmbiguousSession as exc:
            raise BadCall(f"The session id prefix {exc}; give more of the id.") from None
        if ref is None and not done:
            raise BadCall(f"No session {quoted(sid)} in the index yet: crabsearch is still indexing; ask again in a "
                          "minute.")
        if ref is None:
            self._usable()
            hint = " (give at least 4 characters of the id)" if len(sid) < 4 else ""
            why = "".join(f" ({n})" for n in self._state_notes())
            raise BadCall(f"No session {quoted(sid)} in the index{hint}: use an id from search_sessions or "
                          f"recent_sessions.{why}")
        return ref

    def _hit(self, h: Hit) -> dict:
        d = _session(h.ref)
        d.update(message_index=h.message_index, route=h.route, notes=structure_notes(h),
                 window=[self._item(i, SEARCH_TEXT_CAP) for i in h.window])
        return d

    def _item(self, it: Item, cap: int, *, window: bool = True) -> dict:
        text, cut = it.text, it.truncated
        if it.role == Role.TOOL.value and not self.tool_output:
            text, cut = TOOL_OUTPUT_HIDDEN, False
        elif len(text) > cap:
            text, cut = text[:cap], True
        d = {"message_index": it.message_index, "role": it.role, "label": it.label, "timestamp": iso(it.timestamp),
             "text": text, "truncated": cut}
        if window:
            d["hit"] = it.hit
        return d


def _given(filters: dict[str, str | None]) -> dict[str, str]:
    """The filter arguments, checked (``request.given_filters``); :class:`BadCall` with the
    filter's problem line for a value it does not take."""
    try:
        return given_filters(filters)
    except BadArgument as exc:
        raise BadCall(f"{exc}.") from None


def _session(ref: SessionRef) -> dict:
    s = ref.session
    return {"session_id": s.session_id, "agent": s.agent, "title": s.title, "project": s.project,
            "updated": iso(s.updated), "message_count": s.message_count, "resume_command": ref.resume_command,
            "url": ref.open_url}


# -- size ----------------------------------------------------------------------------------------

def wire_bytes(data: dict, text: str) -> int:
    """UTF-8 bytes of a tool result with ``data`` and ``text`` as the server writes it."""
    result = {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}
    return len(terminal_json(result, indent=None).encode("utf-8"))


def _fit(data: dict, key: str, render, note: str | None = None, shrink=None) -> Answer:
    """The answer for ``data``, with items of ``data[key]`` dropped from the end until it fits in
    :data:`MAX_RESPONSE_BYTES`; when one item alone is too large, ``shrink(item)`` makes it
    smaller (None: it cannot). ``trimmed`` (and ``note``, formatted with ``kept`` and ``all``)
    say so."""
    budget = MAX_RESPONSE_BYTES - ENVELOPE_BYTES
    text = render(data)
    if wire_bytes(data, text) <= budget:
        return Answer(data, text)
    items = list(data[key])
    n_all = len(items)
    base = wire_bytes({**data, key: []}, render({**data, key: []}))
    costs = [wire_bytes({**data, key: [i]}, render({**data, key: [i]})) - base for i in items]
    keep, used = 0, base + 200  # room for the note and trimmed: true
    while keep < len(items) and (keep == 0 or used + costs[keep] <= budget):
        used += costs[keep]
        keep += 1
    full = data
    while True:
        data = {**full, key: items[:keep], "trimmed": True}
        if note:
            data["notes"] = [*full["notes"], note.format(kept=keep, all=n_all)]
        text = render(data)
        if not keep or wire_bytes(data, text) <= budget:
            return Answer(data, text)
        if keep > 1:
            keep -= 1
            continue
        smaller = shrink(items[0]) if shrink else None
        if smaller is None:
            return Answer(data, text)
        items[0] = smaller


def _narrower(hit: dict) -> dict | None:
    """``hit`` without the window message farthest from the hit (the later one of two as far);
    None when the window is the hit alone."""
    window = hit["window"]
    if len(window) <= 1:
        return None
    far = max(window, key=lambda i: (abs(i["message_index"] - hit["message_index"]), i["message_index"]))
    return {**hit, "window": [i for i in window if i is not far]}

"""The search screen: the search box, its filter chips, the status bar, the result rows, and the
flow between them (a search at each key, the index refreshed as transcripts change)."""

from __future__ import annotations

import dataclasses
import threading

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from ..hits import transcript_gone
from ..query import no_exact_match_note, parse
from ..search import Hit, IndexDamaged, SearchResult
from ..search.request import Ask, run
from ..text import counted, printable
from ..sources import SOURCES
from .filters import (DATE_CHOICES, RECENT_NOTE, FilterChips, PickerScreen, QueryInput, check_filters,
                      filter_problem, filters, means_nothing, remove_token, set_filter, typed_filter)
from .footer import KeyFooter
from .indexing import IndexingProgress, building_note, rebuilt_note
from .messages import FilesChanged, IndexDone, IndexProgress, SearchDone
from .panels import ExplainScreen, StatusScreen
from .render import agent_name, window_text
from .results import ResultList, session_key
from .session import SessionScreen
from .statusline import StatusLine
from .watcher import Watcher

RESULT_LIMIT = 50
"""Rows per load; moving near the end of the list loads the next 50. The recent sessions start
with 50; a typed query with a screenful (``ResultList.screenful``, 20 rows at 40 lines): each
key's search and paint cost less with fewer rows, and a page's rows do not depend on its size
(``search.ladder``), so the next rows only add to those shown."""
REFRESH_EVERY = 30.0  # seconds between background refreshes while the app is open
FIRST_LIST_WAIT = 0.3
"""Seconds the search screen's mount waits for the recent sessions the app started reading as it
loaded (``CrabsearchApp.on_load``): read by then, they are in the screen's first paint, not in a
second one after a paint of an empty list."""
SEARCH_TIME_LIMIT = 0.5
"""Seconds a search as you type runs; past it the best hits found so far are shown, marked
partial (a search that found nothing by then goes on to its end: :meth:`SearchScreen._answer`)."""
STALE_AFTER = 0.15
"""Seconds a search may take before the rows shown, another query's, are dimmed and the status
line says the new query is being searched (``SearchScreen._mark_stale``)."""
UNINDEXED_DELAY = 0.3
"""Seconds without a key after which a search made while the index is updated also looks at
the transcripts the index does not hold yet (each key's query would otherwise be looked for in turn)."""
UNINDEXED_SECONDS = 3.0
"""While the index is updated, how long a search looks at the transcripts it does not hold yet
(``search.pending``), after showing the indexed rows."""
QUOTE_PAUSE = 1.0
"""Seconds without a key after which a query with no closing quote that found nothing says it was
searched as one phrase (``SearchScreen._notes``), and a filter left unfinished at the end of the
box says what it lacks (``SearchScreen._problems_said``); Enter says it at once."""


class _EmptyBox(VerticalScroll):
    """What the results area says when nothing is listed (no transcripts, indexing): scrolls
    (Down from the search box, then Up / Down) when the terminal is too small for it; typing or
    Esc goes back to the search box."""

    def __init__(self, type_into_search, **kwargs) -> None:
        super().__init__(**kwargs)
        self.type_into_search = type_into_search

    def on_key(self, event) -> None:
        if (event.is_printable and event.character) or event.key in ("escape", "backspace"):
            event.stop()
            event.prevent_default()
            if event.key == "escape":
                self.screen.set_focus(self.screen.query_one("#query"))
            else:
                self.type_into_search("\b" if event.key == "backspace" else event.character)


class SearchScreen(Screen):
    """Search box, status line, result list, indexing progress. Typing searches as you type (at
    each key, in a worker; the stale query's search is stopped and its results dropped). An empty
    box lists recent sessions."""

    BINDINGS = [
        Binding("down", "results", "Results", show=False),
        Binding("escape", "clear", "Clear", show=False),
        Binding("f3", "pick_agent", "Agent", id="pick-agent"),
        Binding("f4", "pick_project", "Project", id="pick-project"),
        Binding("f5", "pick_date", "Date", id="pick-date"),
        Binding("ctrl+s", "toggle_sort", "Sort", id="sort"),
        Binding("ctrl+r", "toggle_reveal", "Reveal secrets", show=False, id="reveal"),
    ]

    sort = "relevance"
    """``relevance`` (recency breaks ties) or ``newest``."""

    reveal = False
    """True while secret-shaped strings are shown unmasked on this screen."""

    def __init__(self) -> None:
        super().__init__()
        self._go_live_after_first_paint = False
        self._facet_loads = 0  # loads of the pickers' counts started; the newest one's answer is kept
        self._generation = 0
        self._shown = -1
        self._stop: threading.Event | None = None  # set to end the search running (a newer one came)
        self._asked: tuple | None = None  # the newest search asked for, not started yet
        self._asked_lock = threading.Lock()
        self._unindexed = None  # search.pending.Unindexed, made on the first search while indexing
        self._searching = False  # a search worker is running (it takes what is asked next, too)
        self.result: SearchResult | None = None
        self._shown_sort = self.sort
        self._pending: SearchDone | None = None
        """Refreshed results held back while the user browses the rows (Home shows them)."""
        self._pending_new = 0
        self.problems: list[str] = []
        """What is wrong with the shown query's filters (shown in full under the status line)."""
        self.search_error: str | None = None
        self.index_error: str | None = None
        """Why indexing failed (``CrabsearchApp.index_failure``): shown, and only the periodic
        refresh tries again (:meth:`start_indexing`: an index directory that cannot be written
        would fail again at once, a toast each time)."""
        self._no_index = False
        """True when the last search found no index to search (``SearchDone.rebuild``)."""
        self._commits_seen = 0
        self._watcher = Watcher(self)
        self._gate = False  # the refresh gate: False until the first refresh makes it, None without inotify
        self._refresh_again = False
        """Files changed while a refresh ran: run another when it ends."""
        self._had_index = False
        """True once a search found an index: a later missing one was deleted."""
        self.rebuilding: str | None = None
        """Why the index is being built from scratch (``first``, ``deleted``, ``damaged``), or
        None for an ordinary refresh."""
        self.limit = RESULT_LIMIT
        """Rows asked for: RESULT_LIMIT, a screenful for a typed query; grows by RESULT_LIMIT as
        the cursor nears the end of the list."""
        self._asked_more = False
        """True while the next rows are on their way (they keep the cursor and the scroll)."""
        self._to_results = False
        """True when Down (or Enter) in the box found no rows yet, the search on its way: the
        focus goes to the rows when they come, unless the box's text changes first."""
        self.facets: dict[str, list[tuple[str, int]]] = {"agent": [], "project": []}
        """Agent and project names with session counts (Tab completion, pickers)."""
        self._typed_out: str | None = None
        """The box's text when the user last stopped typing it: Enter, or the focus into the rows."""
        self._paused_on: str | None = None
        """The box's text when the user last paused on it (:data:`QUOTE_PAUSE`)."""
        self._pause_timer = None  # its QUOTE_PAUSE, restarted at each key while the text holds a quote

    def compose(self) -> ComposeResult:
        app = self.app
        yield Static(self._title_text(), id="title")
        box = QueryInput(lambda: self.facets,
                         placeholder="Search your agent sessions…  (Down: results, F1: help, Ctrl+Q: quit)",
                         id="query", select_on_focus=False)
        box.cursor_blink = app.cursor_blink
        yield box
        chips = FilterChips(agents=tuple(SOURCES), id="chips")
        chips.display = False
        yield chips
        yield StatusLine(id="statusbar")
        yield ResultList(self._fetch_window, self.type_into_search, lambda: app.now, app.home,
                         newer_coming=lambda: not self.settled, id="results")
        with _EmptyBox(self.type_into_search, id="empty-box"):  # scrolls on a small terminal
            yield Static("", id="empty")
        yield KeyFooter()

    def _title_text(self) -> Text:
        t = Text()
        t.append(" crabsearch ", style="bold white on dark_orange3")
        t.append("  search past agent sessions", style="dim")
        if self.app.demo:
            t.append("   DEMO: bundled example sessions", style="bold yellow")
        return t

    def on_mount(self) -> None:
        self.query_one(IndexingProgress).fit_bar()
        self.query_one("#empty").display = self.query_one("#empty-box").display = False
        self.query_one(Input).focus()
        built = self.app.first_list_kept or self.app.engine.exists  # kept: opened after the first paint
        # On a built index the recent sessions come first, then the refresh and the watcher:
        # set before the first list, which may be shown right here.
        self._go_live_after_first_paint = self.app.index_on_start and built
        # The recent sessions: in the first paint when the app has read them by now (it started
        # as the app loaded), else from a worker; the filter pickers' counts after their paint.
        self.run_query("", here=self.app.first_recent_read(FIRST_LIST_WAIT))
        if self.app.index_on_start and not built:
            self._go_live()

    def _go_live(self) -> None:
        """Start the background refresh, the file watcher and the periodic refresh."""
        engine = self.app.engine
        self.start_indexing(None if engine.exists else "damaged" if engine.damage else "first")
        # Live: file events from the agents' directories refresh the index within a second;
        # every REFRESH_EVERY seconds a refresh catches what no event reports (new agent
        # directories, Aider and SpecStory logs in project folders, a deleted index).
        self._watch_files()
        self.set_interval(REFRESH_EVERY, self._periodic_refresh)

    def _periodic_refresh(self) -> None:
        """Look for new or changed transcripts (not ``_auto_refresh``: Textual's own name)."""
        if self._watcher.moved(self.app.indexer):  # an agent directory appeared or went
            self._watch_files()
        if not self.app.indexing:  # after a failure too: a full disk may have room again
            self.start_indexing(None if self.app.engine.exists or not self._had_index else "deleted", retry=True)

    def _watch_files(self) -> None:
        """(Re)start the watcher on the agents' directories there are now."""
        app = self.app
        self._watcher.start(lambda: app.indexer)

    def on_unmount(self) -> None:
        self._watcher.stop()
        if self._gate:
            self._gate.close()

    @on(FilesChanged)
    def _files_changed(self) -> None:
        """An agent wrote to its directory: refresh now, or right after the refresh running."""
        if self.app.indexing:
            self._refresh_again = True
        else:
            self.start_indexing()

    # -- searching ----------------------------------------------------------------------------

    @property
    def settled(self) -> bool:
        """True when the results shown are those of the latest query (nothing pending)."""
        return self._shown == self._generation

    @property
    def query_text(self) -> str:
        """The text in the search box."""
        return self.query_one(Input).value

    @on(Input.Changed, "#query")
    def _typed(self, event: Input.Changed) -> None:
        self._to_results = False  # typing on: the user wants the box
        self.query_one(FilterChips).show(event.value)
        self.limit = self.query_one(ResultList).screenful() if event.value.strip() else RESULT_LIMIT
        self.run_query(event.value)
        if not self.settled:  # the rows shown answer other text until the answer comes: say so
            self._update_status()
        self._typed_out = self._paused_on = None  # typing again
        if self._pause_timer is not None:
            self._pause_timer.stop()
        self._pause_timer = (self.set_timer(QUOTE_PAUSE, lambda: self._stopped_typing(paused=True))
                             if '"' in event.value or typed_filter(event.value, tuple(SOURCES)) else None)

    @on(Input.Submitted, "#query")
    def _submitted(self) -> None:
        self._stopped_typing()
        self.action_results()

    def on_descendant_focus(self, event) -> None:
        """The rows focused (Down, Enter, Tab, a click): the query is what the user meant."""
        if isinstance(event.widget, ResultList):
            self._stopped_typing()

    def _stopped_typing(self, paused: bool = False) -> None:
        """The user stopped typing the box's text (Enter, the rows focused; ``paused``: no key
        for :data:`QUOTE_PAUSE` seconds): the status says what only a finished query needs."""
        if paused:
            self._paused_on = self.query_text
        else:
            self._typed_out = self.query_text
        self._update_status()

    def run_query(self, text: str, *, here: bool = False) -> None:
        """Search for ``text`` (or list recent sessions when blank) in a worker, at once: a key
        searches without waiting for the typing to pause. The search still running, whose answer
        is now stale, is told to stop (``Engine.search``'s ``stop``): it ends at its next look at
        the clock, and the worker then takes the newest text (:meth:`_search`). ``here``: answer
        on this thread, shown before the next paint (the first list, when the app has read it
        already)."""
        self._generation += 1
        if self._stop is not None:
            self._stop.set()
        self._stop = threading.Event()
        if here:
            self._show(self._answer(text, self._generation, self._stop))
            return
        with self._asked_lock:
            self._asked = (text, self._generation, self._stop)
            start, self._searching = not self._searching, True
        if start:
            self._search()
        generation = self._generation
        self.set_timer(STALE_AFTER, lambda: self._mark_stale(generation))

    def _mark_stale(self, generation: int) -> None:
        """The search of ``generation`` is still running :data:`STALE_AFTER` after it was asked
        for: the rows shown answer another query, so they are dimmed (``-stale``) until its answer
        comes (:meth:`_show`); the status line already says what is being searched. The same query
        asked again (a refresh, more rows) leaves its own rows as they are."""
        if generation != self._generation or self.settled or self.result is None:
            return
        if self.query_text.strip() == (self.result.query or "").strip():
            return
        self.query_one(ResultList).add_class("-stale")
        self._update_status()  # the status line says what is being searched (StatusLine.show's pending)

    @work(thread=True, group="search", exit_on_error=False)
    def _search(self) -> None:
        """Answer the newest search asked for, then the one asked meanwhile, until none is left:
        one worker at a time. Keys sent faster than they are searched (text typed into the box
        one character at a time by a terminal without bracketed paste) search for the text as it
        is when the worker gets to it, not once per key (a worker per key would cancel every
        earlier one still listed: O(keys²))."""
        try:
            while True:
                with self._asked_lock:
                    asked, self._asked = self._asked, None
                    if asked is None:
                        self._searching = False
                        return
                if not asked[2].is_set():  # else a newer search was asked for since
                    done = self._answer(*asked)
                    self.post_message(done)
                    more = self._unindexed_rows(asked[0], done, asked[2])
                    if more is not None:
                        self.post_message(more)
        except BaseException:
            with self._asked_lock:  # the next search starts a worker again
                self._searching = False
            raise

    def _unindexed_rows(self, text: str, done: SearchDone, stop: threading.Event) -> SearchDone | None:
        """While the index is being updated, ``done`` with the rows of the transcripts it does
        not hold yet after its own (``search.pending``: marked, replaced when the build gets
        there); None when there are none to add."""
        if (not self.app.indexing or done.error or not text.strip() or len(done.result.hits) >= self.limit
                or stop.wait(UNINDEXED_DELAY)):  # typing on: the next key's search will look instead
            return None
        from ..search.pending import Unindexed, key_of

        if self._unindexed is None:
            self._unindexed = Unindexed(self.app.indexer)
        query, _ = check_filters(text, tuple(SOURCES))
        try:
            rows = self._unindexed.scan(query, limit=self.limit - len(done.result.hits), stop=stop,
                                        skip={key_of(h) for h in done.result.hits}, seconds=UNINDEXED_SECONDS,
                                        mask=not self.reveal)
        except Exception:  # noqa: BLE001 - a look beside the index: the indexed rows stand alone
            return None
        if not rows or stop.is_set():
            return None
        result = dataclasses.replace(done.result, hits=done.result.hits + rows)
        return SearchDone(done.generation, result, None, done.rebuild, done.problems)

    def _answer(self, text: str, generation: int, stop: threading.Event) -> SearchDone:
        """The search for ``text`` (the recent sessions when blank), as the message that shows it."""
        engine = self.app.engine
        error = rebuild = None
        kept = False
        problems: list[str] = []
        try:
            query, problems = check_filters(text, tuple(SOURCES))  # filters that mean nothing: left out
            if query.strip():
                # The last word with no space after it may still be being typed: read as a prefix.
                typing = not text[-1:].isspace() and text.split()[-1:] == query.split()[-1:]
                ask = Ask(query, limit=self.limit, before=0, after=0, time_limit=SEARCH_TIME_LIMIT, sort=self.sort,
                          explain=True, redact=not self.reveal, typing=typing, stop=stop,
                          repair=not (self.app.indexing and self.rebuilding))
                answer = run(engine, ask)
                if answer.result.partial and not answer.result.hits and not stop.is_set():
                    # Out of time before anything was found (a long pasted text, common words):
                    # nothing to show meanwhile, so the search goes on to its end; a key stops it.
                    answer = run(engine, dataclasses.replace(ask, time_limit=None))
                result, rebuild = answer.result, "damaged" if answer.damaged else None  # rebuilt in the background
            else:
                hits = self.app.first_recent(self.limit, not self.reveal)
                kept = hits is not None and self.app.first_list_kept  # the index is there: not opened yet
                if hits is None:
                    hits = engine.recent(limit=self.limit, redact=not self.reveal)
                result = SearchResult(query="", hits=hits, route="recent")
            result.query = text.strip() and text  # as typed: the status line quotes it
            if not kept and not rebuild and not engine.exists:  # never built, or deleted while the app runs
                rebuild = "missing"
        except IndexDamaged:  # the recent sessions' read: rebuilt in the background, listed again after
            result, rebuild = SearchResult(query=text, hits=[]), "damaged"
        except Exception as exc:  # one line in the status line, never a silent blank screen
            result, error = SearchResult(query=text, hits=[]), self.app.failure("The search", exc)
        return SearchDone(generation, result, error, rebuild, problems)

    @on(SearchDone)
    def _show(self, message: SearchDone) -> None:
        if message.generation != self._generation:
            return  # a newer query is on its way
        self._shown = message.generation
        # The same query again (an index refresh, Ctrl+R, more rows) keeps the cursor where it
        # is while the user browses the rows; another query, or another order, or a refresh while
        # the focus is still in the search box (a query typed during the first indexing), starts
        # at the first row.
        results = self.query_one(ResultList)
        more, self._asked_more = self._asked_more, False  # the next rows (the mouse wheel, too)
        same = (self.result is not None and (self.focused is results or more)
                and (self.result.query, self._shown_sort) == (message.result.query, self.sort))
        self._pending = None
        if more and same and message.error is None:
            # The next rows: those shown stay where they are. A page's rows do not depend on its
            # size, so they lead the answer, unless a search stopped early (``partial``) ranked
            # the rows shown: the answer's other sessions then follow them.
            shown = {session_key(h) for h in self.result.hits}
            message.result.hits = list(self.result.hits) + [
                h for h in message.result.hits if session_key(h) not in shown]
        if same and results.has_focus and results.highlighted is not None and message.error is None:
            moves, new = results.reorders(message.result.hits)
            if moves:  # the user is reading the rows: hold the refresh back, say so (Home shows it)
                self._pending, self._pending_new = message, new
                results.add_waiting_rows()  # the rows shown stay: all of them
                self._update_status()
                return
        self._shown_sort = self.sort
        results.remove_class("-stale")
        self.result = message.result
        self.search_error = message.error
        self._no_index = bool(message.rebuild)
        self.problems = message.problems
        results.show(message.result.hits, message.result.terms, keep=same)
        if self._to_results:  # Down was pressed before these rows came: into them now
            self._to_results = False
            if self.focused is self.query_one(Input):
                self.action_results()
        if message.rebuild is None and message.error is None:
            self._had_index = True
        elif message.rebuild and not self.app.indexing and self.app.index_on_start:
            # The index is gone or damaged: build it again in the background, answering meanwhile.
            self.start_indexing("damaged" if message.rebuild == "damaged" else
                                "deleted" if self._had_index else "first")
        self._update_status()
        if not self._facet_loads:  # F3/F4's agents and projects: not in the way of the first paint
            self.call_after_refresh(self._load_facets)
        if self._go_live_after_first_paint:
            self._go_live_after_first_paint = False
            self.call_after_refresh(self._go_live)

    @on(ResultList.ShowPending)
    def _show_pending(self) -> None:
        """Show the refreshed results held back while the user browsed the rows."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self.query_one(ResultList).show(pending.result.hits, pending.result.terms, keep=False)
            self.result, self.problems = pending.result, pending.problems
            self._update_status()

    @on(ResultList.NeedMore)
    def _more(self) -> None:
        """The cursor is near the last row: ask for the next RESULT_LIMIT rows, if there may be more."""
        if self.result is not None and self.settled and len(self.result.hits) >= self.limit:
            self.limit += RESULT_LIMIT
            self._asked_more = True
            self.run_query(self.query_text)

    @on(FilterChips.Remove)
    def _remove_filter(self, message: FilterChips.Remove) -> None:
        box = self.query_one(QueryInput)
        box.value = remove_token(box.value, message.start)
        box.focus()
        box.cursor_position = len(box.value)

    @on(QueryInput.NothingToComplete)
    def _tab_out(self) -> None:
        self.action_results()

    def _load_facets(self) -> None:
        """Read the filter pickers' agent and project counts (``Engine.facets``) in a worker; the
        answer of the newest load is kept. Loads are not cancelled by a newer one (an exclusive
        worker was: after the first paint and after an index refresh they overlap), so none is
        ever left cancelled, and the engine's lock runs them one after the other."""
        self._facet_loads += 1
        self._facets_worker(self._facet_loads)

    @work(thread=True, group="facets", exit_on_error=False)
    def _facets_worker(self, n: int) -> None:
        facets = self.app.engine.facets()
        self.app.call_from_thread(self._set_facets, n, facets)

    def _set_facets(self, n: int, facets: dict) -> None:
        if n == self._facet_loads:  # a newer load is on its way otherwise
            self.facets = facets

    def _pick(self, key: str, title: str, choices: list[tuple[str, str]]) -> None:
        box = self.query_one(QueryInput)
        current = next((t.value for t in filters(box.value) if t.key == key), None)

        def done(value: str | None) -> None:
            if value is not None:
                box.value = set_filter(box.value, key, value)
            box.focus()
            box.cursor_position = len(box.value)

        self.app.push_screen(PickerScreen(title, choices, current), done)

    def _narrowed_facets(self, key: str) -> tuple[list[tuple[str, int]], str]:
        """``(names with session counts, the other filters that narrow them)`` for the ``key``
        picker: the sessions that the query's other filters allow (``Engine.facets``: the
        projects of ``agent:claude`` sessions), most first; the filters the search leaves out
        (:func:`check_filters`) are left out here too. No other filter: the counts kept for Tab."""
        text = check_filters(self.query_text, tuple(SOURCES))[0]
        others = [t.text for t in filters(text) if t.key != key and t.key != "in"]
        if not others:
            return self.facets[key], ""
        facets = self.app.guarded("Counting the sessions", lambda: self.app.engine.facets(text), self.facets)
        return facets[key], " ".join(others)

    def action_pick_agent(self) -> None:
        """F3: only one agent's sessions (the agents of the sessions the query's other filters
        allow, with session counts)."""
        names, narrowed = self._narrowed_facets("agent")
        self._pick("agent", "Only sessions of agent…" + (f" (of {printable(narrowed)})" if narrowed else ""),
                   [(a, f"{agent_name(a)}  ({_sessions(n)})") for a, n in names])

    def action_pick_project(self) -> None:
        """F4: only one project's sessions (the working directory's last folder), of those the
        query's other filters allow, with session counts."""
        names, narrowed = self._narrowed_facets("project")
        self._pick("project", "Only sessions in project…" + (f" (of {printable(narrowed)})" if narrowed else ""),
                   [(p, f"{p}  ({_sessions(n)})") for p, n in names])

    def action_pick_date(self) -> None:
        """F5: only sessions active since a day."""
        self._pick("since", "Only sessions active…", DATE_CHOICES)

    def _fetch_window(self, hit: Hit, before: int, after: int):
        return self.app.guarded("Reading the context window", lambda: self.app.engine.window(
            hit, before, after, redact=not self.reveal), [])

    def action_toggle_sort(self) -> None:
        """Switch between relevance and newest-first, and search again."""
        self.sort = "newest" if self.sort == "relevance" else "relevance"
        self.run_query(self.query_text)

    def action_toggle_reveal(self) -> None:
        """Show secret-shaped strings unmasked on this screen (or mask them again)."""
        self.reveal = not self.reveal
        self.run_query(self.query_text)
        self.notify("Secrets shown unmasked on this screen" if self.reveal else "Secrets masked again")

    def _update_status(self) -> None:
        result = self.result
        if result is None:
            return
        n = len(result.hits)
        indexing = self.app.indexing
        line = self.query_one(StatusLine)
        text = self.query_text
        line.show(result, limit=self.limit, sort=self.sort, error=self.search_error,
                  index_failed=bool(self.index_error and self._no_index), indexing=indexing,
                  held_back=None if self._pending is None else self._pending_new,
                  pending=None if self.settled or (text.strip() and text) == result.query else text)
        line.show_notes(self._problems_said(result.query) + self._notes(result, n), rows_listed=bool(n))
        nothing_listed = n == 0 and not result.query.strip() and not self.search_error
        empty = self.query_one("#empty", Static)
        results = self.query_one(ResultList)
        empty.display = self.query_one("#empty-box").display = nothing_listed
        results.display = not nothing_listed
        if nothing_listed:
            empty.update(building_note(self.rebuilding) if indexing else self.app.empty_message(self.index_error))

    def _problems_said(self, text: str) -> list[str]:
        """:attr:`problems`, but that of a filter still being typed or chosen at the end of
        ``text`` (:func:`filters.typed_filter`: ``agent:`` that Tab put there, its value to come
        at the next Tab; ``agent:cl``; not ``agent:vim``, which no more typing makes valid) until
        the user stops typing: Enter, the focus into the rows, or a pause
        of :data:`QUOTE_PAUSE`. Its filter is left out of the search meanwhile, as it will be."""
        typed = typed_filter(text, tuple(SOURCES))
        if typed is None or text in (self._typed_out, self._paused_on) or not means_nothing(typed, tuple(SOURCES)):
            return self.problems
        held = filter_problem(typed, tuple(SOURCES))
        problems = [line for line in self.problems if line != held]
        return [] if problems == [RECENT_NOTE] else problems

    def _notes(self, result: SearchResult, n: int) -> list[str]:
        """The search's notes; what it says of a quote with no closing quote, ``no closing
        quote: "…" searched as one phrase`` (the CLI's note), or ``no exact match for "…":
        showing sessions with its words`` when that phrase matched nothing, only once the user
        stopped typing: Enter or the focus into the rows (rows or none), or a pause of
        :data:`QUOTE_PAUSE` on a query that found nothing. While a phrase is typed its quote is
        unclosed at every key, and each half-typed word matches no phrase (``"nightly cr``): a
        note there would come and go at every key. The engine notes it when the text ends with
        a space (the search is not ``typing`` then): typing too, left out."""
        text = result.query
        pq = parse(text) if '"' in text else None
        if pq is None or not pq.unclosed:
            return result.notes
        loosened = no_exact_match_note(pq.unclosed)
        note = loosened if loosened in result.notes else pq.unclosed_note
        notes = [line for line in result.notes if line not in (loosened, pq.unclosed_note)]
        if not self.search_error and (text == self._typed_out or (n == 0 and text == self._paused_on)):
            notes.append(note)
        return notes

    # -- indexing -----------------------------------------------------------------------------

    def start_indexing(self, rebuilding: str | None = None, *, retry: bool = False) -> None:
        """Refresh the index in the background; the list refreshes after each committed batch
        and when it is done. ``rebuilding`` says why the index is built from scratch (``first``,
        ``deleted``, ``damaged``): the indexing row (``IndexingProgress``) and the empty results
        area say so. After a failure (:attr:`index_error`) only a ``retry`` starts one (the
        periodic refresh, every :data:`REFRESH_EVERY` seconds: a full disk may have room again);
        searches and file events do not (an index directory that cannot be written would fail
        again at once, a toast each time), and the same failure again is not announced again."""
        if self.app.indexing or (self.index_error and not retry):
            return
        self.app.indexing = True
        self.rebuilding = rebuilding
        self._commits_seen = 0
        self.query_one(IndexingProgress).start(rebuilding)
        self._index()

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index(self) -> None:
        worker = get_current_worker()  # cancelled when the app quits: the refresh stops at its next file
        try:
            report = self._refresh(progress=lambda p: self.post_message(IndexProgress(p)),
                                   cancelled=lambda: worker.is_cancelled)
        except Exception as exc:  # shown, never a crash
            self.post_message(IndexDone(None, self.app.index_failure(exc)))
            return
        self.post_message(IndexDone(report, None))

    def _refresh(self, **options):
        """The index refresh, through a :class:`~crabsearch.quiet.Gate` where inotify is there
        (made on the first refresh, in its worker thread): the periodic refresh of a home
        nothing touched skips the stat of every transcript. Refreshes run one at a time (the
        ``index`` worker group is exclusive), so the gate is never used by two at once."""
        indexer = self.app.indexer
        if self._gate is False:
            from ..quiet import Gate

            self._gate = Gate.make(indexer)
        if self._gate is None:
            return indexer.refresh(**options)
        return self._gate.refresh(indexer, **options)

    @on(IndexProgress)
    def _progress(self, message: IndexProgress) -> None:
        p = message.progress
        if p.commits > self._commits_seen:  # a batch is searchable: show it (same query, same cursor)
            self._commits_seen = p.commits
            if self.app.indexing and p.files_done < p.files_total:  # after the last, IndexDone does it
                self._load_facets()
                self.run_query(self.query_text)
        self.query_one(IndexingProgress).advance(p)

    def on_resize(self) -> None:
        self.query_one(IndexingProgress).fit()
        self._update_status()  # the count line fits the width

    @on(IndexDone)
    def _indexed(self, message: IndexDone) -> None:
        self.app.indexing = False
        report = message.report
        changed = report is None or report.changed
        if changed:
            # A rebuilt index can carry the same generation number as the old one: reopen it,
            # and forget transcript records read before (files may have changed).
            self.app.engine.reload()
        self.query_one(IndexingProgress).done(message.error)
        said, self.index_error = self.index_error, message.error
        rebuilt, self.rebuilding = self.rebuilding, None
        if message.error:
            if message.error != said:  # a retry that fails the same way: already on screen
                self.notify(message.error, severity="error", timeout=10)
        elif report is not None:
            if report.busy:
                self.notify("Another crabsearch is updating the index; showing what is committed.")
            if rebuilt_note(rebuilt):
                self.notify(rebuilt_note(rebuilt))
            elif report.rebuilt:
                self.notify(report.rebuilt)
        if changed or self.result is None:
            self.run_query(self.query_text)  # first: the results on screen, then the pickers' counts
        else:
            self._update_status()
        if changed:
            self._load_facets()
        for screen in self.app.screen_stack:  # an open status panel (F2) and session view follow every refresh
            if isinstance(screen, (StatusScreen, SessionScreen)):
                screen.refreshed()
        if self._refresh_again:
            self._refresh_again = False
            self.start_indexing()
        elif not message.error:
            self.app.embed_new(changed)

    # -- navigation ---------------------------------------------------------------------------

    def action_results(self) -> None:
        """Move from the search box into the results."""
        results = self.query_one(ResultList)
        box = self.query_one("#empty-box")
        if box.display and box.max_scroll_y:  # no rows, and more to read than the screen holds
            self.set_focus(box)
        if results.option_count:
            # set_focus now, not focus() (which waits a frame): keys that arrived together with
            # this one (Down Enter from a fast typist or tmux) must reach the results.
            self.set_focus(results)
            if results.highlighted is None:
                results.highlighted = 0
        elif not self.settled:  # no rows yet, the search still running: go there when they come
            self._to_results = True

    def action_clear(self) -> None:
        """Esc in the search box: clear it."""
        box = self.query_one(Input)
        if box.value:
            box.value = ""

    @on(ResultList.Leave)
    def _leave_results(self) -> None:
        self._show_pending()
        self.set_focus(self.query_one(Input))

    def type_into_search(self, char: str) -> None:
        """Put a character typed in the results into the search box (``"\b"``: backspace) and
        move the focus there."""
        box = self.query_one(Input)
        box.focus()
        if char == "\b":
            box.action_delete_left()
        else:
            box.insert_text_at_cursor(char)

    @on(ResultList.Open)
    def _open(self, message: ResultList.Open) -> None:
        if transcript_gone(message.hit.session.path):  # nothing to read: say so, stay on the list
            self.notify("This session's transcript is gone (deleted or moved since it was indexed); "
                        "the next refresh removes it from the list.", severity="warning")
            return
        terms = self.result.terms if self.result else []
        self.app.push_screen(SessionScreen(message.hit, terms, self.result.query if self.result else ""))

    @on(ResultList.Explain)
    def _explain(self, message: ResultList.Explain) -> None:
        self.app.push_screen(ExplainScreen(message.hit, self.result))

    @on(ResultList.Resume)
    def _resume(self, message: ResultList.Resume) -> None:
        self.app.actions.resume(message.hit, fork=message.fork)

    @on(ResultList.Copy)
    def _copy(self, message: ResultList.Copy) -> None:
        hit, reveal = message.hit, self.reveal
        self.app.actions.copy_menu(
            hit, hit.message_index, lambda: window_text(message.window(), hit.message_index),
            lambda: next(iter(self.app.guarded("Reading the message", lambda: self.app.engine.page(
                hit.ref, hit.message_index, 1, redact=not reveal).messages, [])), None))

    @on(ResultList.Export)
    def _export(self, message: ResultList.Export) -> None:
        self.app.actions.export_menu(message.hit, message.window, redact=not self.reveal)

    @on(ResultList.Edit)
    def _edit(self, message: ResultList.Edit) -> None:
        self.app.actions.edit_message(message.hit, message.hit.message_index)


def _sessions(n: int) -> str:
    return counted(n, "session")

"""The app's two screens: search (with its results) and the session view."""

from __future__ import annotations

import dataclasses
import threading
import time

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, ProgressBar, Static
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup
from textual.worker import get_current_worker

from ..hits import GONE, UNAVAILABLE, continuation_notes, transcript_gone
from ..query import parse
from ..search import Hit, IndexDamaged, Item, SearchResult
from ..search.request import Ask, run
from ..text import printable
from ..sources import SOURCES
from .filters import (DATE_CHOICES, RECENT_NOTE, FilterChips, PickerScreen, QueryInput, SafeInput, check_filters,
                      filter_problem, filters, means_nothing, remove_token, set_filter, typed_filter)
from ..watch import watch, watch_roots
from .messages import FilesChanged, IndexDone, IndexProgress, SearchDone
from .panels import ExplainScreen, StatusScreen
from .render import agent_name, empty_session_note, session_header, window_text
from .eta import IndexClock
from .results import ResultList, count_line, session_key
from .transcript import TranscriptView

RESULT_LIMIT = 50
"""Rows per load; moving near the end of the list loads the next 50. The recent sessions start
with 50; a typed query with a screenful (``ResultList.screenful``, 20 rows at 40 lines): each
key's search and paint cost less with fewer rows (issue 13: typing at 1 GB), and a page's rows do
not depend on its size (``search.ladder``), so the next rows only add to those shown."""
MESSAGE_BYTES = 256 * 1024
"""Of one message's text read for the session view (a longer one ends with a note saying so;
``crabsearch show`` prints all of it)."""
REFRESH_EVERY = 30.0  # seconds between background refreshes while the app is open
FIRST_LIST_WAIT = 0.3
"""Seconds the search screen's mount waits for the recent sessions the app started reading as it
loaded (``CrabsearchApp.on_load``): read by then, they are in the screen's first paint, not in a
second one after a paint of an empty list (issue 13, the app's start)."""
SEARCH_TIME_LIMIT = 0.5  # seconds; past it the best hits found so far are shown, marked partial
UNINDEXED_DELAY = 0.3
"""...and only once no key came for this long (each key's query would be looked for in turn)."""
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


class KeyFooter(Footer):
    """Textual's ``Footer``, rebuilt only when the keys it shows change: Textual queues a full
    recompose (every key widget made and styled again, about 10 ms here) for each binding
    change, and a screen's start (activation, focus, the first results) sends several, most of
    which change nothing it shows."""

    _recompose_pending = False
    _shown: tuple | None = None

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or self._recompose_pending:
            return
        if self.is_attached and screen is self.screen:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_now)

    def _keys_shown(self) -> tuple:
        """What the footer would show: each shown binding (and the command palette's) with its
        key, description, action, state and tooltip."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple((key, b.key, b.description, b.action, enabled, tooltip)
                     for key, (_, b, enabled, tooltip) in self.screen.active_bindings.items()
                     if b.show or key == palette)

    async def _recompose_now(self) -> None:
        self._recompose_pending = False
        if not self.is_attached or not self.screen.is_attached:
            return  # its screen was closed before the rebuild ran (Esc right after a resize)
        shown = self._keys_shown()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
            self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Textual's compact style (one cell less around each key) when the keys would not fit in
        one line otherwise: at 140 columns, a highlighted row's keys lost ``f2 Status``. When even
        that does not fit, hints are left out in :data:`FOOTER_DROPS` order until the rest do
        (a fresh-user trial: at 80 columns the session view showed ``f`` of ``f2 Status`` and a
        highlighted row's keys ended in ``f3 Agen``); every key is in the help (F1) all the same."""
        hints = self._hints()
        for _, _, _, widgets in hints:
            for w in widgets:
                w.display = True
        width = self.size.width
        self.compact = sum(wide for _, wide, _, _ in hints) > width
        if not self.compact:
            return
        used = sum(narrow for _, _, narrow, _ in hints)
        for action in FOOTER_DROPS:
            if used <= width:
                break
            for actions, _, narrow, widgets in hints:
                if action in actions and widgets[0].display:
                    for w in widgets:
                        w.display = False
                    used -= narrow

    def _hints(self) -> list[tuple[set[str], int, int, list]]:
        """The footer's hints as ``(actions, width, compact width, widgets)``: a key with its
        description, a group of keys with its label (``[ ] Hits``), the palette key; widths in
        cells, margins and paddings included (Textual's footer styles and ``app.tcss``)."""
        out: list[tuple[set[str], int, int, list]] = []
        for child in self.children:
            if isinstance(child, FooterLabel) and out:
                actions, wide, narrow, widgets = out[-1]
                label = cell_len(str(child.content)) + 1
                out[-1] = (actions, wide + label, narrow + label, widgets + [child])
            elif isinstance(child, KeyGroup):
                keys = list(child.query(FooterKey))
                width = sum(cell_len(k.key_display) + 1 for k in keys) + 1  # a cell before each, one after
                out.append(({k.action for k in keys}, width, width, [child]))
            elif isinstance(child, FooterKey):
                width = cell_len(child.key_display) + cell_len(child.description)
                palette = child.has_class("-command-palette")
                out.append(({child.action}, width + (5 if palette else 3), width + (3 if palette else 2), [child]))
        return out


FOOTER_DROPS = ("widen", "narrow", "toggle_sort", "pick_date", "pick_project", "pick_agent", "status",
                "explain", "cycle_tools", "find", "copy", "resume", "open")
"""Actions whose footer hints are left out, first to last, while the footer's keys do not fit in
its line (``KeyFooter._fit``); Esc, F1, Ctrl+Q, ``[ ]`` and the palette key always stay."""


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
        failed again at once, in a loop of toasts)."""
        self._no_index = False
        """True when the last search found no index to search (``SearchDone.rebuild``)."""
        self._index_clock: IndexClock | None = None  # the time left of the refresh under way
        self._eta_timer = None  # ticks the indexing line's time left (``_tick_eta``)
        self._commits_seen = 0
        self._watched: list = []
        self._watch_stop: threading.Event | None = None
        self._refresh_again = False
        """Files changed while a refresh ran: run another when it ends."""
        self._had_index = False
        """True once a search found an index: a later missing one was deleted (defect 2)."""
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
        self._bar_wanted = True
        """False after indexing failed (its error takes the row); the width may hide it too."""
        self._index_line: tuple[list[str], str] | None = None
        """The indexing line's forms (phase, estimate): fitted again when the width changes."""
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
        with Vertical(id="statusbar"):
            yield Static("", id="status")
            yield Static("", id="notes")
            with Horizontal(id="indexbar"):
                yield Static("", id="index-status")
                yield ProgressBar(total=None, show_eta=False, id="progress")
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
        self.query_one("#indexbar").display = False
        self._fit_progress()
        self.query_one("#notes").display = False
        self.query_one("#empty").display = self.query_one("#empty-box").display = False
        self.query_one(Input).focus()
        built = self.app.first_list_kept or self.app.engine.exists  # kept: opened after the first paint
        # On a built index the recent sessions come first (issue 13: the app's start), then the
        # refresh and the watcher: set before the first list, which may be shown right here.
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
        if watch_roots(self.app.indexer) != self._watched:  # an agent directory appeared or went
            self._watch_files()
        if not self.app.indexing:  # after a failure too: a full disk may have room again
            self.start_indexing(None if self.app.engine.exists or not self._had_index else "deleted", retry=True)

    def _watch_files(self) -> None:
        """(Re)start the watcher thread on the agents' directories there are now. A plain
        daemon thread, not a worker: it runs as long as the screen, and tests wait for workers.
        The roots are found in that thread too: the first time, that makes the app's Indexer,
        which imports every agent's reader (~0.1 s the app's own thread need not wait for)."""
        self._stop_watching()
        self._watch_stop = stop = threading.Event()

        def run() -> None:
            self._watched = roots = watch_roots(self.app.indexer)
            if roots and not stop.is_set():
                watch(roots, lambda n: self.post_message(FilesChanged(n)), stop)

        threading.Thread(target=run, name="crabsearch-watch", daemon=True).start()

    def _stop_watching(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()

    def on_unmount(self) -> None:
        self._stop_watching()

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

    @work(thread=True, group="search", exit_on_error=False)
    def _search(self) -> None:
        """Answer the newest search asked for, then the one asked meanwhile, until none is left:
        one worker at a time. Keys sent faster than they are searched (2,000 characters typed
        into the box one by one, by a terminal without bracketed paste) search for the text as it
        is when the worker gets to it, not once per key: a worker per key froze the box for
        seconds (each new one cancelled every earlier one still listed, O(keys²))."""
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
                answer = run(engine, Ask(query, limit=self.limit, before=0, after=0, time_limit=SEARCH_TIME_LIMIT,
                                         sort=self.sort, explain=True, redact=not self.reveal, typing=typing,
                                         stop=stop, repair=not (self.app.indexing and self.rebuilding)))
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
        status = self.query_one("#status", Static)
        empty = self.query_one("#empty", Static)
        results = self.query_one(ResultList)
        if result is None:
            return
        n = len(result.hits)
        indexing = self.app.indexing
        unavailable = False
        if self.search_error:
            msg = self.search_error
        elif not result.query.strip() or (result.route == "recent" and n):
            msg = f"Recent sessions ({n}{'+' if n >= self.limit else ''})" if n else ""
        elif n == 0 and result.partial:  # out of time before anything was found
            msg = (f"Nothing found for “{printable(result.query.strip())}” before the search stopped "
                   "(very common words): add a word to narrow it")
        elif n == 0 and self.index_error and self._no_index and not indexing:  # indexing failed
            msg = f"“{printable(result.query.strip())}” was not searched: the index is unavailable (see below)"
            unavailable = True
        elif n == 0:  # also filters alone (`project:nonexistent`) that allow no session
            msg = f"No session matches “{printable(result.query.strip())}”"
            if indexing:
                msg += " yet (still indexing: it is searched again when indexing is done)"
        else:
            # How many rows each rung found (the next rows load as the cursor gets there: +), in
            # the status line's width: the screen's but the status bar's padding (measured, not
            # the line's own size, which lags a resize by a frame).
            msg = count_line(result.hits, (self.size.width or self.app.size.width) - 4, more=n >= self.limit,
                             repair=_repaired(result.query, result.corrections), one_word=_one_word(result.query))
            if result.partial:
                msg += " · stopped early (very common words): add a word to narrow it"
            if result.cut:
                msg += " · query cut to 512 characters"
        if self.sort == "newest":
            msg += " · newest first (Ctrl+S)"
        if self._pending is not None:  # refreshed results held back while the user browses
            new = self._pending_new
            msg += (f" · {new} new session{'s' if new != 1 else ''}" if new else " · updated results") + \
                " (Home: show)"
        status.update(Text(msg, style="bold red" if self.search_error or unavailable else "dim"))
        status.display = bool(msg)
        notes = self.query_one("#notes", Static)
        lines = [printable(n) for n in self._problems_said(result.query) + self._notes(result, n)]
        notes.update(Text("\n".join(lines)))  # in full, wrapped at words: never cut off
        notes.display = bool(lines)
        # Half the screen at most while rows are listed; with none, all the room there is.
        notes.styles.max_height = "50vh" if n else "100vh"
        nothing_listed = n == 0 and not result.query.strip() and not self.search_error
        empty.display = self.query_one("#empty-box").display = nothing_listed
        results.display = not nothing_listed
        if nothing_listed:
            empty.update(self._indexing_message() if indexing else self.app.empty_message(self.index_error))

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
        """The search's notes, ``no closing quote: "…" searched as one phrase`` (the CLI's note)
        only once the user stopped typing: Enter or the focus into the rows (rows or none), or a
        pause of :data:`QUOTE_PAUSE` on a query that found nothing. While a phrase is typed its
        quote is unclosed at every key, and each half-typed word finds nothing (``"nightly cr``):
        a note there would come and go at every key. The engine notes it when the text ends with
        a space (the search is not ``typing`` then): typing too, left out."""
        text = result.query
        note = parse(text).unclosed_note if '"' in text else None
        if not note:
            return result.notes
        notes = [line for line in result.notes if line != note]
        if not self.search_error and (text == self._typed_out or (n == 0 and text == self._paused_on)):
            notes.append(note)
        return notes

    def _indexing_message(self) -> Text:
        """What the empty results area says while the index is being built."""
        t = Text()
        t.append({"deleted": "The index was deleted: rebuilding it from your transcripts.",
                  "damaged": "The index was damaged: rebuilding it from your transcripts."}.get(
            self.rebuilding or "", "Indexing your agent transcripts."), style="bold")
        t.append("\n\nThe most recent sessions show here as soon as the first ones are indexed, in a few "
                 "seconds; you can type a search meanwhile.", style="dim")
        return t

    # -- indexing -----------------------------------------------------------------------------

    def start_indexing(self, rebuilding: str | None = None, *, retry: bool = False) -> None:
        """Refresh the index in the background; the list refreshes after each committed batch
        and when it is done. ``rebuilding`` says why the index is built from scratch (``first``,
        ``deleted``, ``damaged``): the index line and the empty results area say so. After a
        failure (:attr:`index_error`) only a ``retry`` starts one (the periodic refresh, every
        :data:`REFRESH_EVERY` seconds: a full disk may have room again); searches and file
        events do not (an index directory that cannot be written failed again at once, in a
        loop of toasts), and the same failure again is not announced again."""
        if self.app.indexing or (self.index_error and not retry):
            return
        self.app.indexing = True
        self.rebuilding = rebuilding
        self._commits_seen = 0
        self._index_clock = IndexClock(time.monotonic())
        self._index_line = None
        if self._eta_timer is None:
            self._eta_timer = self.set_interval(1.0, self._tick_eta)
        if rebuilding:
            self._show_index_line(Text(f"{self._index_what()} · looking for transcripts…", style="dim"))
            self.query_one("#progress", ProgressBar).update(total=None)
        self._index()

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index(self) -> None:
        worker = get_current_worker()  # cancelled when the app quits: the refresh stops at its next file
        try:
            report = self.app.indexer.refresh(progress=lambda p: self.post_message(IndexProgress(p)),
                                              cancelled=lambda: worker.is_cancelled)
        except Exception as exc:  # shown, never a crash
            self.post_message(IndexDone(None, self.app.index_failure(exc)))
            return
        self.post_message(IndexDone(report, None))

    def _index_what(self) -> str:
        return {"first": "Indexing your transcripts", "deleted": "The index was deleted: rebuilding it",
                "damaged": "The index was damaged: rebuilding it"}.get(self.rebuilding or "", "Indexing")

    def _show_index_line(self, text: Text | str) -> None:
        self.query_one("#indexbar").display = True
        self.query_one("#index-status", Static).update(text)

    @on(IndexProgress)
    def _progress(self, message: IndexProgress) -> None:
        p = message.progress
        if p.commits > self._commits_seen:  # a batch is searchable: show it (same query, same cursor)
            self._commits_seen = p.commits
            if self.app.indexing and p.files_done < p.files_total:  # after the last, IndexDone does it
                self._load_facets()
                self.run_query(self.query_text)
        bar = self.query_one("#progress", ProgressBar)
        now = time.monotonic()
        self._index_clock.update(p, now)
        if p.phase == "writing":  # Whoosh writes its postings: no measure of progress, seconds long
            bar.update(total=None)
            what = [f"writing the index ({p.messages:,} messages)", "writing the index", "writing"]
        else:
            bar.update(total=max(1, p.bytes_total), progress=p.bytes_done)
            what = [f"reading {p.files_done:,}/{p.files_total:,} files, {_mb(p.bytes_done)} of {_mb(p.bytes_total)}",
                    f"reading {p.files_done:,}/{p.files_total:,} files", f"{p.files_done:,}/{p.files_total:,} files"]
        self._index_line = (what, self._eta(self._time_left(p, now)))
        self._show_index_line(Text(self._fit_index_line(*self._index_line), style="dim"))

    def _tick_eta(self) -> None:
        """Every second while indexing: the time left again, without a new report (a commit
        writes for seconds with none: the line stood still)."""
        clock = self._index_clock
        if self.app.indexing and self._index_line is not None and clock is not None and clock.last is not None:
            eta = self._eta(self._time_left(clock.last, time.monotonic()))
            if eta != self._index_line[1]:
                self._index_line = (self._index_line[0], eta)
                self._show_index_line(Text(self._fit_index_line(*self._index_line), style="dim"))

    @staticmethod
    def _eta(left: float | None) -> str:
        """`` · about 40 s left`` (``… 3 min left`` from two minutes), or empty: none yet, or under
        a second (never "about 0 s left" with the writing still to come)."""
        if left is None or left < 1:
            return ""
        return f" · about {int(left)} s left" if left < 120 else f" · about {int(left // 60)} min left"

    def on_resize(self) -> None:
        self._fit_progress()
        self._update_status()  # the count line fits the width
        self.call_after_refresh(self._refit_index_line)

    def _refit_index_line(self) -> None:
        """The indexing line again, fitted to the new width."""
        if self.app.indexing and self._index_line is not None:
            self._show_index_line(Text(self._fit_index_line(*self._index_line), style="dim"))

    def _fit_progress(self) -> None:
        """The progress bar takes 24 columns, 12 on a terminal narrower than 80, none below 50:
        the indexing line's text keeps the row."""
        bar = self.query_one("#progress", ProgressBar)
        width = self.size.width or self.app.size.width
        bar.styles.width = 24 if width >= 80 else 12
        bar.display = self._bar_wanted and width >= 50

    def _fit_index_line(self, what: list[str], eta: str) -> str:
        """The longest form of the indexing line that fits its one row (``what``: the phase, long
        form first; ``eta``: `` · about N s left`` or empty): the phase shortens first, then the
        heading, then the estimate and the heading go; never a line wrapped mid-phrase."""
        bar = self.query_one("#progress", ProgressBar)
        # The row: the screen's width but the status bar's padding and the bar with its margin
        # (measured, not the line's own size, which lags a resize by a frame).
        room = (self.size.width or self.app.size.width) - 4 - (
            int(bar.styles.width.value) + 1 if bar.display and bar.styles.width else 0)
        if self.query_one("#index-status").size.width:
            room = min(room, self.query_one("#index-status").size.width)
        heads = [self._index_what(), "Indexing"]
        pairs = [(heads[0], what[0]), (heads[0], what[1]), (heads[1], what[0]), (heads[1], what[1])]
        forms = [f"{h} · {w}{e}" for e in (eta, "") for h, w in pairs] + [what[-1], "Indexing…"]
        return next((f for f in forms if len(f) <= room), forms[-1])

    def _time_left(self, p, now: float) -> float | None:
        """Seconds of indexing left at ``now``, as the indexing line says them (``eta.IndexClock``:
        the recent reading rate, the commits timed so far; held, never rising by a little), after
        the progress report ``p``; None too early to tell."""
        return self._index_clock.left(now)

    @on(IndexDone)
    def _indexed(self, message: IndexDone) -> None:
        self.app.indexing = False
        report = message.report
        changed = report is None or report.changed
        if changed:
            # A rebuilt index can carry the same generation number as the old one: reopen it,
            # and forget transcript records read before (files may have changed).
            self.app.engine.reload()
        self.query_one("#indexbar").display = False
        self.query_one("#index-status", Static).update("")
        said, self.index_error = self.index_error, message.error
        rebuilt, self.rebuilding = self.rebuilding, None
        if message.error:
            self.query_one("#index-status").styles.max_height = 4  # where, why, what to do: in full
            self._show_index_line(Text(message.error, style="bold red"))
            self._bar_wanted = False
            self._fit_progress()
            if message.error != said:  # a retry that fails the same way: already on screen
                self.notify(message.error, severity="error", timeout=10)
        elif report is not None:
            self._bar_wanted = True
            self._fit_progress()
            if report.busy:
                self.notify("Another crabsearch is updating the index; showing what is committed.")
            if rebuilt in ("deleted", "damaged"):
                self.notify(f"The index was {rebuilt}: it has been rebuilt from your transcripts.")
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


class SessionScreen(Screen):
    """The whole session, opened at the hit, paged from the transcript as you scroll."""

    BINDINGS = [Binding("escape,q", "back", "Back", id="back"),
                Binding("slash", "find", "Find", id="find"),
                Binding("r", "resume", "Resume", id="resume"),
                Binding("f", "fork", "Fork", show=False, id="fork"),
                Binding("c", "copy", "Copy", id="copy"),
                Binding("E", "export", "Export", show=False, id="export"),
                Binding("v", "edit", "Editor", show=False, id="editor"),
                Binding("ctrl+r", "toggle_reveal", "Reveal secrets", show=False, id="reveal")]

    reveal = False

    def __init__(self, hit: Hit, terms: list[str], query: str = "") -> None:
        super().__init__()
        self.hit = hit
        self.terms = terms
        self.search_text = query  # not ``query``: that is Textual's DOM query method

    def compose(self) -> ComposeResult:
        s = self.hit.session
        engine = self.app.engine
        with Vertical(id="session-header"):
            yield Static(self._header(), id="session-meta")
            yield Static("", id="position")
        view = TranscriptView(lambda off, lim: self.app.guarded("Reading the session", lambda: engine.page(
                                  self.hit.ref, off, lim, max_bytes=MESSAGE_BYTES, redact=not self.reveal).messages, []),
                              total=s.message_count, start=self.hit.message_index,
                              hit_index=self.hit.message_index, terms=self.terms,
                              hits=lambda: self.app.guarded("Finding the hits", lambda: engine.matching_messages(
                                  self.hit.ref, self.search_text), []),
                              message_bytes=MESSAGE_BYTES, id="transcript",
                              skipped=lambda: self.app.guarded("Finding the skipped lines",
                                                               lambda: engine.skipped_lines(self.hit.ref), []))
        yield view
        find = SafeInput(placeholder="Find in this session (any case)…  Enter: find · Esc: close", id="find",
                         select_on_focus=True)  # typing replaces the last find text
        find.cursor_blink = self.app.cursor_blink
        find.display = False
        yield find
        yield KeyFooter()

    def refreshed(self) -> None:
        """After an index refresh: follow the transcript (:meth:`TranscriptView.grow`: messages
        appended are shown, or counted in the position line), or, when it is no longer on disk,
        keep what was read and say so (:meth:`TranscriptView.went_away`)."""
        views = self.query(TranscriptView)  # none yet: the screen is being mounted
        if not views or views.first().gone:
            return
        view = views.first()
        ref = self.app.guarded("Reading the session", lambda: self.app.engine.session_now(self.hit.ref), None)
        if ref is None:
            if transcript_gone(self.hit.session.path):
                view.went_away()
            return
        if ref.session.message_count != self.hit.session.message_count:
            self.hit = dataclasses.replace(self.hit, ref=ref)  # pages read up to its new count
            view.grow(ref.session.message_count)
            self.on_resize()

    def _header(self) -> Text:
        """The header's lines (:func:`~crabsearch.tui.render.session_header`) for the screen's size."""
        return session_header(self.hit.session, self.hit.ref.resume_command, self.app.now, self.app.home,
                              max(0, self.size.width - 2), self.size.height,
                              notes=continuation_notes(self.hit.ref))

    def on_resize(self) -> None:
        """The header fits the screen's size (:func:`~crabsearch.tui.render.session_header`)."""
        self.query_one("#session-meta", Static).update(self._header())

    def on_mount(self) -> None:
        view = self.query_one(TranscriptView)
        view.focus()
        self.call_after_refresh(self._say_if_empty)
        if self.hit.branch == "abandoned":  # follow the hit's own branch, marked
            view.show_abandoned = True
            self.notify("This hit is on an abandoned branch (a rewind replaced it); a: active branch only")

    def _say_if_empty(self) -> None:
        """A session with no messages (compaction deleted them all), or one the index no longer
        holds (its transcript changed or went away after the list was shown), has nothing to
        page: say so rather than show an empty view."""
        if not self.hit.session.message_count:
            self.notify(empty_session_note(self.hit.session), timeout=10)
            return
        if not self.query_one(TranscriptView).loaded:
            gone = transcript_gone(self.hit.session.path)
            self.notify("Nothing to show: this session's transcript is "
                        + ("gone (deleted or moved since it was indexed)." if gone else
                           "no longer what was indexed; the next refresh reads it again."),
                        severity="warning")

    @property
    def current_message(self) -> int:
        """The message at the cursor (``J``/``K`` move it): what ``c``/``v`` act on."""
        return self.query_one(TranscriptView).cursor

    def action_back(self) -> None:
        """Esc: close the find bar when it is open, else back to the results."""
        box = self.query_one("#find", Input)
        if box.display:
            self._close_find()
        else:
            self.app.pop_screen()

    def action_find(self) -> None:
        """``/``: open the find bar (the last find text selected for replacing). The focus moves
        at once (``set_focus``, not ``focus()``, which waits a frame): keys typed in the same
        burst as ``/`` are the find text, not the view's keys."""
        box = self.query_one("#find", Input)
        box.display = True
        self.set_focus(box)

    @on(Input.Submitted, "#find")
    def _find_submitted(self, event: Input.Submitted) -> None:
        view = self.query_one(TranscriptView)
        self._close_find()
        view.find(event.value.strip())
        self._update_position()

    def _close_find(self) -> None:
        self.query_one("#find", Input).display = False
        self.query_one(TranscriptView).focus()

    def action_resume(self) -> None:
        """Resume this session in its agent (after a confirmation)."""
        self.app.resume(self.hit)

    def action_fork(self) -> None:
        """Fork this session (a new session from a copy of its history), after a confirmation."""
        self.app.resume(self.hit, fork=True)

    def _window(self, index: int):
        """The messages around ``index`` (``context`` on each side), as the view masks them."""
        context = self.app.context
        view = self.query_one(TranscriptView)
        if view.gone:  # no longer on disk: the messages the view read
            return view.read(max(0, index - context), 2 * context + 1)
        return self.app.guarded("Reading the context window", lambda: self.app.engine.page(
            self.hit.ref, max(0, index - context), 2 * context + 1, redact=not self.reveal).messages, [])

    def _message(self, index: int) -> Item | None:
        """Message ``index`` in full, masked unless revealed (as the view shows it); when the
        transcript is gone, or the index no longer holds what the view read, the view's own copy
        (:attr:`TranscriptView.held`, as far as it read it); None when the view has none."""
        view = self.query_one(TranscriptView)
        if not view.gone:
            items = self.app.guarded("Reading the message", lambda: self.app.engine.page(
                self.hit.ref, index, 1, redact=not self.reveal).messages, [])
            if items and items[0].text not in (GONE, UNAVAILABLE):
                return items[0]
        return next((it for it in view.held if it.message_index == index), None)

    def action_copy(self) -> None:
        """Copy the session id, resume command, path, the message at the cursor, or its window."""
        index = self.current_message
        self.app.copy_menu(self.hit, index, lambda: window_text(self._window(index), index),
                           lambda: self._message(index))

    def action_export(self) -> None:
        """Export the session, or the window around the cursor, to Markdown (the messages the view
        holds when the transcript is gone)."""
        index = self.current_message
        view = self.query_one(TranscriptView)
        self.app.export_menu(self.hit, lambda: self._window(index), redact=not self.reveal, around=index,
                             held=lambda: view.held)

    def action_edit(self) -> None:
        """Open the transcript in $EDITOR at the message at the cursor."""
        self.app.edit_message(self.hit, self.current_message)

    def action_toggle_reveal(self) -> None:
        """Show secret-shaped strings unmasked in this session view (or mask them again)."""
        if self.query_one(TranscriptView).gone:
            self.notify("This transcript is no longer on disk: what was read cannot be read again.",
                        severity="warning")
            return
        self.reveal = not self.reveal
        self.query_one(TranscriptView).reload()
        self.notify("Secrets shown unmasked on this screen" if self.reveal else "Secrets masked again")

    @on(TranscriptView.Position)
    def _position(self, message: TranscriptView.Position) -> None:
        self._where = (message.index, message.last, message.total)
        self._update_position()

    def _update_position(self) -> None:
        where = getattr(self, "_where", None)
        if where is None:
            return
        view = self.query_one(TranscriptView)
        first, last, total = where
        t = Text(f"messages {first + 1}–{last + 1} of {total}", style="dim")
        if view.new_messages:
            t.append(f" · {view.new_messages} new message{'s' if view.new_messages > 1 else ''}: End", style="bold")
        if view.gone:
            t.append(" · this transcript is no longer on disk", style="bold")
        t.append(f" · hit at #{self.hit.message_index + 1}")  # dim, as the line
        if view.find_text:
            t.append(" · find “", style="dim")
            t.append(printable(view.find_text), style="bold")
            n, total = view.find_position
            count = (f" {n}/{total}" if n else f" {total} matches") if total is not None else " (counting…)"
            t.append(f"”{count} n/N", style="dim")
        if view.tool_mode != "lines":
            t.append(f" · tools {'in full' if view.tool_mode == 'full' else 'hidden'}", style="dim")
        if not view.show_thinking:
            t.append(" · thinking hidden", style="dim")
        if view.show_abandoned:
            t.append(" · abandoned branches shown", style="dim")
        if not view.show_sidechains:
            t.append(" · subagent turns hidden", style="dim")
        if view.full:
            t.append(" · full text", style="dim")
        line = self.query_one("#position", Static)
        room = line.content_region.width or self.size.width - 2
        if room and t.cell_len + len(" · / find · ? keys") <= room:  # the hint only when it fits
            t.append(" · / find · ? keys", style="dim")
        elif room:
            t.truncate(room, overflow="ellipsis")  # one line: the header stays three
        line.update(t)


def _mb(n: int) -> str:
    """Bytes as ``3.1 MB`` (``45 MB`` from 10 MB up)."""
    return f"{n / 1e6:.1f} MB" if n < 10e6 else f"{n / 1e6:.0f} MB"


def _one_word(query: str) -> bool:
    """True when ``query`` searches one word (filters aside): no phrase, prefix or other word."""
    pq = parse(query, agents=tuple(SOURCES))
    return len(pq.words) == 1 and not (pq.phrases or pq.prefixes)


def _repaired(query: str, corrections: dict[str, str]) -> tuple[str, str] | None:
    """``(as typed, as searched)``: the words of ``query`` (filters aside), and the same with
    the spelling repairs ``corrections`` (``SearchResult.corrections``: typed word in lower case
    -> word used) put in; None when nothing was repaired."""
    if not corrections:
        return None
    words = parse(query, agents=tuple(SOURCES)).words or list(corrections)
    return " ".join(words), " ".join(corrections.get(w.lower(), w) for w in words)


def _sessions(n: int) -> str:
    return f"{n} session{'' if n == 1 else 's'}"

"""The status bar under the search box: the status line (what is listed), the query's notes, and
the indexing progress row (:class:`~crabsearch.tui.indexing.IndexingProgress`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ..query import parse
from ..search import SearchResult
from ..sources import SOURCES
from ..text import counted, printable
from .indexing import IndexingProgress
from .results import count_line


class StatusLine(Vertical):
    """Three rows, each hidden while it has nothing to say: ``#status``, one line on the rows
    listed (:meth:`show`); ``#notes``, what the search says about the query, in full and wrapped
    (:meth:`show_notes`); ``#indexbar``, the indexing progress."""

    def compose(self) -> ComposeResult:
        yield Static("", id="status")
        notes = Static("", id="notes")
        notes.display = False
        yield notes
        yield IndexingProgress(id="indexbar")

    def show(self, result: SearchResult, *, limit: int, sort: str, error: str | None = None,
             index_failed: bool = False, indexing: bool = False, held_back: int | None = None,
             pending: str | None = None) -> None:
        """Say what ``result`` lists: ``Recent sessions (50+)`` for the recent sessions, else the
        count of its rows by rung (``results.count_line``, fitted to the screen's width; ``+``
        when ``limit`` rows were asked for and got), or why nothing is listed. ``error``: the
        search failed (said in red instead); ``index_failed``: indexing failed and there is no
        index to search (said in red); ``indexing``: an index refresh is running (an empty
        answer may change); ``sort`` ``newest`` is said; ``held_back``: refreshed results are
        held back while the user browses the rows, with that many new sessions (``Home``
        shows them); ``pending``: the search box's text, when its answer is on its way and
        ``result`` answers other text: said instead of the count, which is not its answer."""
        n = len(result.hits)
        unavailable = False
        if pending is not None:
            msg = f"Searching “{quoted(pending)}”…" if pending.strip() else "Listing the recent sessions…"
        elif error:
            msg = error
        elif not result.query.strip() or (result.route == "recent" and n):
            msg = f"Recent sessions ({n}{'+' if n >= limit else ''})" if n else ""
        elif n == 0 and result.partial:  # out of time before anything was found
            msg = (f"Nothing found for “{quoted(result.query)}” before the search stopped "
                   "(very common words): add a word to narrow it")
        elif n == 0 and index_failed and not indexing:
            msg = f"“{quoted(result.query)}” was not searched: the index is unavailable (see below)"
            unavailable = True
        elif n == 0:  # also filters alone (`project:nonexistent`) that allow no session
            msg = f"No session matches “{quoted(result.query)}”"
            if indexing:
                msg += " yet (still indexing: it is searched again when indexing is done)"
        else:
            # How many rows each rung found (the next rows load as the cursor gets there: +), in
            # the status line's width: the screen's but the status bar's padding (measured, not
            # the line's own size, which lags a resize by a frame).
            msg = count_line(result.hits, (self.screen.size.width or self.app.size.width) - 4, more=n >= limit,
                             repair=_repaired(result.query, result.corrections), one_word=_one_word(result.query))
            if result.partial:
                msg += " · stopped early (very common words): add a word to narrow it"
            if result.cut:
                msg += " · query cut to 512 characters"
        if sort == "newest":
            msg += " · newest first (Ctrl+S)"
        if held_back is not None:
            msg += (f" · {counted(held_back, 'new session')}" if held_back else
                    " · updated results") + " (Home: show)"
        status = self.query_one("#status", Static)
        status.update(Text(msg, style="bold red" if error or unavailable else "dim"))
        status.display = bool(msg)

    def show_notes(self, lines: list[str], *, rows_listed: bool) -> None:
        """Show ``lines`` (filters left out, spelling, an unclosed quote) in full, wrapped at
        words, never cut off: in half the screen at most while rows are listed (``rows_listed``),
        else in all the room there is."""
        notes = self.query_one("#notes", Static)
        notes.update(Text("\n".join(printable(line) for line in lines)))
        notes.display = bool(lines)
        notes.styles.max_height = "50vh" if rows_listed else "100vh"


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


QUOTED_CHARS = 60
"""Characters of the query the status line quotes (a pasted page would push out what it says)."""


def quoted(query: str) -> str:
    """``query`` as the status line quotes it: stripped, terminal-safe, its first
    :data:`QUOTED_CHARS` characters and ``…`` when longer."""
    text = " ".join(query.split())
    return printable(text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS - 1].rstrip() + "…")

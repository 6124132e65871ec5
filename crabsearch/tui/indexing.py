"""The indexing progress row (``Indexing · reading 160/478 files, 15 MB of 45 MB · about 40 s
left`` and a bar), and the one place the stages of an index build are worded."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from .eta import IndexClock

REBUILT_BECAUSE = {"deleted": "The index was deleted", "damaged": "The index was damaged"}
"""Why an index is built again from scratch, as said while it is and once it is done."""


def heading(rebuilding: str | None) -> str:
    """The indexing row's heading for a build whose cause is ``rebuilding`` (``first``,
    ``deleted``, ``damaged``; None for an ordinary refresh)."""
    if rebuilding in REBUILT_BECAUSE:
        return f"{REBUILT_BECAUSE[rebuilding]}: rebuilding it"
    return "Indexing your transcripts" if rebuilding == "first" else "Indexing"


def building_note(rebuilding: str | None) -> Text:
    """What the empty results area says while the index is being built (``rebuilding`` as for
    :func:`heading`)."""
    t = Text()
    t.append(f"{REBUILT_BECAUSE[rebuilding]}: rebuilding it from your transcripts." if rebuilding in REBUILT_BECAUSE
             else "Indexing your agent transcripts.", style="bold")
    t.append("\n\nThe most recent sessions show here as soon as the first ones are indexed, in a few "
             "seconds; you can type a search meanwhile.", style="dim")
    return t


def rebuilt_note(rebuilt: str | None) -> str | None:
    """What is said once a build whose cause was ``rebuilt`` is done, or None: nothing to say."""
    if rebuilt not in REBUILT_BECAUSE:
        return None
    return f"{REBUILT_BECAUSE[rebuilt]}: it has been rebuilt from your transcripts."


class IndexingProgress(Horizontal):
    """One row, hidden but while an index refresh runs or after one failed: ``#index-status``,
    the heading, the phase and the time left, fitted to the row (never wrapped mid-phrase), and
    ``#progress``, the work done (:func:`work_done`: each byte counted when read and again when
    its batch is committed), which never moves back within a refresh. The owner calls
    :meth:`start`, :meth:`advance` with each progress report, :meth:`done`, and :meth:`fit` when
    the screen's width changes."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.display = False
        self.running = False
        self.rebuilding: str | None = None
        self._clock: IndexClock | None = None  # the time left of the refresh under way
        self._timer = None  # ticks the row's time left (:meth:`_tick`)
        self._line: tuple[list[str], str] | None = None
        """The row's forms (phase, estimate): fitted again when the width changes."""
        self._bar_wanted = True
        """False after indexing failed (its error takes the row); the width may hide it too."""
        self._commits = 0  # batches committed in the refresh under way, as last reported
        self._committed = 0  # bytes those batches hold (read before their commit)
        self._done = 0  # the bar's progress, in :func:`work_done`'s units: never lowered

    def compose(self) -> ComposeResult:
        yield Static("", id="index-status")
        yield ProgressBar(total=None, show_eta=False, id="progress")

    def start(self, rebuilding: str | None) -> None:
        """A refresh started (``rebuilding``: why it builds from scratch, as for :func:`heading`,
        said at once with ``looking for transcripts…``; an ordinary refresh shows its row with
        its first report)."""
        self.running = True
        self.rebuilding = rebuilding
        self._clock = IndexClock(time.monotonic())
        self._line = None
        self._commits = self._committed = self._done = 0
        if self._timer is None:
            self._timer = self.set_interval(1.0, self._tick)
        if rebuilding:
            self._show(Text(f"{heading(rebuilding)} · looking for transcripts…", style="dim"))
            self.query_one("#progress", ProgressBar).update(total=1, progress=0)

    def advance(self, p) -> None:
        """Show the progress report ``p`` (``index.writer.Progress``)."""
        bar = self.query_one("#progress", ProgressBar)
        now = time.monotonic()
        self._clock.update(p, now)
        if p.commits > self._commits:  # a batch committed: the bytes read before it are written
            self._commits, self._committed = p.commits, p.bytes_done
        done, total = work_done(p, self._committed)
        self._done = max(self._done, done)
        bar.update(total=total, progress=self._done)
        if p.phase == "writing":  # Whoosh writes its postings, seconds long, with no report meanwhile
            what = [f"writing the index ({p.messages:,} messages)", "writing the index", "writing"]
        else:
            what = [f"reading {p.files_done:,}/{p.files_total:,} files, {_mb(p.bytes_done)} of {_mb(p.bytes_total)}",
                    f"reading {p.files_done:,}/{p.files_total:,} files", f"{p.files_done:,}/{p.files_total:,} files"]
        self._line = (what, _eta(self._time_left(p, now)))
        self._show(Text(self._fitted(*self._line), style="dim"))

    def done(self, error: str | None) -> None:
        """The refresh ended: the row goes, or says ``error`` (where, why, what to do: in full,
        in red, the bar hidden) until a refresh succeeds."""
        self.running = False
        self.rebuilding = None
        self.display = False
        status = self.query_one("#index-status", Static)
        status.update("")
        if error:
            status.styles.max_height = 4
            self._show(Text(error, style="bold red"))
            self._bar_wanted = False
        else:
            self._bar_wanted = True
        self.fit_bar()

    def fit(self) -> None:
        """The screen's width changed: the bar now, the row's text after the next refresh (when
        the bar's width is known)."""
        self.fit_bar()
        self.call_after_refresh(self._refit)

    def fit_bar(self) -> None:
        """The progress bar takes 24 columns, 12 on a terminal narrower than 80, none below 50:
        the row's text keeps the row."""
        bar = self.query_one("#progress", ProgressBar)
        width = self.screen.size.width or self.app.size.width
        bar.styles.width = 24 if width >= 80 else 12
        bar.display = self._bar_wanted and width >= 50

    def _show(self, text: Text) -> None:
        self.display = True
        self.query_one("#index-status", Static).update(text)

    def _refit(self) -> None:
        """The row's text again, fitted to the new width."""
        if self.running and self._line is not None:
            self._show(Text(self._fitted(*self._line), style="dim"))

    def _tick(self) -> None:
        """Every second while indexing: the time left again, without a new report (a commit
        writes for seconds with none)."""
        clock = self._clock
        if self.running and self._line is not None and clock is not None and clock.last is not None:
            eta = _eta(self._time_left(clock.last, time.monotonic()))
            if eta != self._line[1]:
                self._line = (self._line[0], eta)
                self._show(Text(self._fitted(*self._line), style="dim"))

    def _fitted(self, what: list[str], eta: str) -> str:
        """The longest form of the row that fits it (``what``: the phase, long form first;
        ``eta``: `` · about N s left`` or empty): the phase shortens first, then the heading,
        then the estimate and the heading go; never a line wrapped mid-phrase."""
        bar = self.query_one("#progress", ProgressBar)
        # The row: the screen's width but the status bar's padding and the bar with its margin
        # (measured, not the row's own size, which lags a resize by a frame).
        room = (self.screen.size.width or self.app.size.width) - 4 - (
            int(bar.styles.width.value) + 1 if bar.display and bar.styles.width else 0)
        if self.query_one("#index-status").size.width:
            room = min(room, self.query_one("#index-status").size.width)
        heads = [heading(self.rebuilding), "Indexing"]
        pairs = [(heads[0], what[0]), (heads[0], what[1]), (heads[1], what[0]), (heads[1], what[1])]
        forms = [f"{h} · {w}{e}" for e in (eta, "") for h, w in pairs] + [what[-1], "Indexing…"]
        return next((f for f in forms if len(f) <= room), forms[-1])

    def _time_left(self, p, now: float) -> float | None:
        """Seconds of indexing left at ``now``, as the row says them (``eta.IndexClock``: the
        recent reading rate, the commits timed so far; held, never rising by a little), after
        the progress report ``p``; None too early to tell."""
        return self._clock.left(now)


def work_done(p, committed: int) -> tuple[int, int]:
    """``(done, total)`` of a refresh after the progress report ``p``
    (``index.writer.Progress``), ``committed`` bytes of it in committed batches: a byte counts
    once when it is read and once when its batch is written, of twice the bytes to read. Both
    halves only grow, so ``done`` does; reading and writing each take the bar half way."""
    return p.bytes_done + committed, 2 * max(1, p.bytes_total)


def _eta(left: float | None) -> str:
    """`` · about 40 s left`` (``… 3 min left`` from two minutes), or empty: none yet, or under
    a second (never "about 0 s left" with the writing still to come)."""
    if left is None or left < 1:
        return ""
    return f" · about {int(left)} s left" if left < 120 else f" · about {int(left // 60)} min left"


def _mb(n: int) -> str:
    """Bytes as ``3.1 MB`` (``45 MB`` from 10 MB up)."""
    return f"{n / 1e6:.1f} MB" if n < 10e6 else f"{n / 1e6:.0f} MB"

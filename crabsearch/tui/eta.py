"""How long indexing has left: the estimate behind the indexing line's ``about 40 s left``.

A refresh reads the transcripts (``Progress.phase == "reading"``, bytes counted) and commits its
batches (``writing``: Whoosh writes the postings, seconds at a time, with no progress report
until it is done). The time left is the reading still to do at the recent reading rate, plus
the messages not committed yet at the seconds a committed message took so far.

The estimate is smoothed (unsmoothed, it rose before it fell, early in a first build): the
reading rate is measured over the last :data:`READ_WINDOW` seconds of
reading (when that is slower than the rate since the start), and what is shown never rises
unless the estimate is more than :data:`RISE_MARGIN` times it: it holds, then falls.
"""

from __future__ import annotations

from collections import deque

WRITE_SECONDS_PER_MESSAGE = 0.0008
"""A first guess of the time Whoosh takes to commit a message (measured: 10k messages
committed in 8-10 s on a 2-core machine), until a commit has been timed."""
READ_WINDOW = 30.0
"""Seconds of reading the reading rate is measured over (all of it, early on)."""
RISE_MARGIN = 1.5
"""How much higher than the value shown an estimate must be to replace it (1.5: by half)."""
FIRST_ESTIMATE_AFTER = 2.0
"""Seconds before any estimate (and a tenth of the bytes read): too early to tell."""


class IndexClock:
    """The time a refresh started at ``started`` (``time.monotonic()``) has left, from its
    progress reports (``index.writer.Progress``), given to :meth:`update` as they come."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.writing = 0.0  # seconds spent in finished commits
        self.written = 0  # messages those commits wrote
        self.committed = 0  # messages committed so far
        self.writing_since: float | None = None  # when the commit under way began
        self.reads: deque[tuple[float, int]] = deque()  # (seconds of reading, bytes read) per report
        self.last = None  # the last progress report
        self.shown: float | None = None  # the seconds left last given

    @property
    def per_message(self) -> float:
        """Seconds a committed message took, over every commit so far (the guess before any)."""
        return self.writing / self.written if self.written else WRITE_SECONDS_PER_MESSAGE

    def update(self, p, now: float) -> None:
        """Take the progress report ``p`` that came at ``now``."""
        self.last = p
        if p.phase == "writing":
            if self.writing_since is None:
                self.writing_since = now
            return
        if self.writing_since is not None:  # a commit ended: time it
            self.writing += now - self.writing_since
            self.written += max(0, p.messages - self.committed)
            self.writing_since, self.committed = None, p.messages
        reading = now - self.started - self.writing
        self.reads.append((reading, p.bytes_done))
        while len(self.reads) > 2 and self.reads[1][0] <= reading - READ_WINDOW:
            self.reads.popleft()

    def estimate(self, now: float) -> float | None:
        """Seconds left by the last report, unsmoothed: the bytes left at the reading rate of the
        window, plus the messages not committed yet (those of all the bytes, at the rate read so
        far) at :attr:`per_message`, less the time the commit under way has taken. None in the
        first :data:`FIRST_ESTIMATE_AFTER` seconds, and before a tenth of the bytes is read."""
        p = self.last
        if (p is None or now - self.started < FIRST_ESTIMATE_AFTER or not p.bytes_total
                or p.bytes_done < p.bytes_total / 10):
            return None
        writing_now = now - self.writing_since if self.writing_since is not None else 0.0
        reading = max(0.001, now - self.started - self.writing - writing_now)
        seconds_per_byte = reading / p.bytes_done  # since the start
        (r0, b0), (r1, b1) = self.reads[0], self.reads[-1]
        if r1 - r0 >= FIRST_ESTIMATE_AFTER and b1 > b0:  # the window's, when it is slower
            seconds_per_byte = max(seconds_per_byte, (r1 - r0) / (b1 - b0))
        read_left = seconds_per_byte * max(0, p.bytes_total - p.bytes_done)
        messages = p.messages * p.bytes_total / p.bytes_done  # expected when everything is read
        write_left = self.per_message * max(0.0, messages - self.committed) - writing_now
        return read_left + max(0.0, write_left)

    def left(self, now: float) -> float | None:
        """Seconds left to show at ``now``: :meth:`estimate`, but never above the value last
        shown unless more than :data:`RISE_MARGIN` times it (a real change: a slower disk, a
        commit that merged segments); below it, the estimate. So the line holds, then falls."""
        raw = self.estimate(now)
        if raw is None:
            return None
        if self.shown is not None and self.shown <= raw <= self.shown * RISE_MARGIN:
            return self.shown
        self.shown = raw
        return raw

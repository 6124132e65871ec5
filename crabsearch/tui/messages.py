"""Messages the workers post to the screens (thread-safe: ``post_message``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # annotations only: importing the writer is work the app's start need not do
    from ..index import Progress, RefreshReport
    from ..search import SearchResult


class SearchDone(Message):
    """A search finished; ``generation`` tells a stale result from the current one; ``error`` is
    a one-line message when the search failed; ``rebuild`` is ``missing`` when there is no index
    (never built, or deleted) and ``damaged`` when it must be rebuilt; ``problems`` say what is
    wrong with filters that were left out (``agent:vim``)."""

    def __init__(self, generation: int, result: SearchResult, error: str | None = None,
                 rebuild: str | None = None, problems: list[str] | None = None) -> None:
        super().__init__()
        self.generation = generation
        self.result = result
        self.error = error
        self.rebuild = rebuild
        self.problems = problems or []
        """What is wrong with the query's filters (they were left out of the search)."""


class IndexProgress(Message):
    """Indexing progress (files and bytes done of the planned totals)."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress


class IndexDone(Message):
    """Indexing finished: ``report``, or ``error`` (one line) when it failed."""

    def __init__(self, report: RefreshReport | None, error: str | None) -> None:
        super().__init__()
        self.report = report
        self.error = error


class FilesChanged(Message):
    """Files changed in the agents' directories (``events`` file events in one burst)."""

    def __init__(self, events: int) -> None:
        super().__init__()
        self.events = events

"""The scans one search leaves for the next: what a query typed a key at a time asks again."""

from __future__ import annotations


class ScansKept:
    """The best documents per session that a search's scans found (``ladder.best_per``), kept for
    the next search of the same searcher: a query typed one key at a time asks again for much of
    what the key before asked for (``token refres`` reads ``refres`` as ``refresh`` and ranks
    ``token`` and ``refresh`` in one message, as ``token refresh`` then does; every key of
    ``error zqxjvbnwk`` past ``error z`` looks for ``error`` alone). Only the scans of the one
    search before are kept (those it found or took over from its own predecessor), so what is
    kept is one search's worth and a query typed again from its first key searches anew.

    A scan is known by everything its answer depends on: the query and filter clauses (Whoosh
    queries compare by their fields, words and boosts), the sessions asked for, the limit, the
    order, the ``-word`` exclusions and the time window. A scan stopped early (out of time, or
    the search no longer wanted) is not kept. Not thread-safe: the engine's lock holds."""

    def __init__(self) -> None:
        self.searcher = None
        self.before: dict = {}
        self.now: dict = {}

    def begin(self, searcher) -> None:
        """A new search of ``searcher``: the scans of the last one (when it was of the same
        searcher) can be taken; those of earlier ones are dropped."""
        self.before = self.now if searcher is self.searcher else {}
        self.now, self.searcher = {}, searcher

    def get(self, key) -> dict | None:
        """A copy of the answer kept for ``key`` (kept again for the next search), or None."""
        got = self.now.get(key)
        if got is None:
            got = self.before.pop(key, None)
            if got is None:
                return None
            self.now[key] = got
        return dict(got)

    def put(self, key, answer: dict) -> None:
        """Keep a complete scan's ``answer`` (a copy) for ``key``."""
        self.now[key] = dict(answer)

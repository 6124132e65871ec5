"""The search's caps: how much it keeps, scans and returns. The one place they are set (ranking
weights are in ``crabsearch.index.schema``: ``WEIGHTS``, ``PROXIMITY_SPAN``, ``TOPIC_WEIGHT``).

The caps that are part of the CLI contract (``--limit``, ``--before``/``--after``, a window's
messages and a text's bytes) are defined in ``crabsearch.hits`` with the dataclasses they bound
and imported here, so that this module lists every cap.
"""

from __future__ import annotations

from ..hits import DEFAULT_AFTER, DEFAULT_BEFORE, DEFAULT_LIMIT, MAX_ITEM_BYTES, MAX_WINDOW  # noqa: F401

DEDUP_SPARE = 5
"""Rows fetched beyond ``limit`` (at least; half the limit for larger ones) so that dropping
duplicate rows (the same message in resumed or forked sessions) still fills the limit."""

DEDUP_DEPTH = 4
"""Sessions a rung's lists keep at first: ``DEDUP_DEPTH`` times the rows fetched (copies are
folded after; ``ladder.climb`` deepens them when a left-out session could reach the page)."""

RUNG_DEPTH_MIN = 100
"""Sessions a rung's lists keep at first, at least (a page of 20's ``DEDUP_DEPTH`` times its
rows). A small page (MCP's 5) began at 40 and deepened 4x up to three times: each time is a new
scan, and a scan of 100 costs about what a scan of 20 does (6 GB, ``auth*`` at limit 5: 11 scans
and 244 ms, now 6 scans and 122 ms; the rows are the same, by the threshold rule)."""

LADDER_DEPTH_CAP = 200_000
"""Sessions a rung's two lists (by message score, by title and summary score) grow to at most
while making its first rows exact (``ladder.climb``, the threshold rule)."""

GATHER_CAP = 100_000
"""Matching documents the ``session`` and ``any`` rungs look at, at most (then the result is
``partial``)."""

MATCH_SCAN = 64 * 1024
"""Characters of a long hit message looked through for its first match (``windows.first_match``)."""

SESSION_DOCS_KEPT = 2048
"""Session documents kept in memory per searcher (the rows of a few result pages)."""

RECORDS_KEPT = 512
"""Transcript records kept in memory (windows and pages read them back by offset)."""


def fetch_for(limit: int) -> int:
    """Rows fetched for a page of ``limit`` sessions: the limit and :data:`DEDUP_SPARE` (or half
    the limit, when larger) spare rows for copies that are folded away."""
    return limit + max(DEDUP_SPARE, limit // 2)

"""The search's caps: how much it keeps, scans and returns; this module lists every one.

The caps that are part of the CLI contract (``--limit``, ``--before``/``--after``, a window's
messages and a text's bytes) are defined in ``crabsearch.hits`` with the dataclasses they bound,
and those that say how deep the ranking looks (a rung's lists, the session-wide rungs' matches) in
``crabsearch.ranking`` with the rest of the ranking; both are imported here.
"""

from __future__ import annotations

from ..hits import DEFAULT_AFTER, DEFAULT_BEFORE, DEFAULT_LIMIT, MAX_ITEM_BYTES, MAX_WINDOW  # noqa: F401
from ..ranking import DEDUP_DEPTH, GATHER_CAP, LADDER_DEPTH_CAP, RUNG_DEPTH_MIN  # noqa: F401

DEDUP_SPARE = 5
"""Rows fetched beyond ``limit`` (at least; half the limit for larger ones) so that dropping
duplicate rows (the same message in resumed or forked sessions) still fills the limit."""

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

"""The benches' ``--now``: the search clock (``Engine.search(now=)``) a ranking bench runs at, so
that a ranking that weighs recency measures the same ages at every run."""

from __future__ import annotations

from datetime import datetime, timezone

HELP = ("the search clock, an ISO date or time (naive: UTC), e.g. 2026-06-01; default: the "
        "current time (a checkout whose Engine.search takes no now= needs the default)")


def parse_now(text: str) -> datetime:
    """``text`` (``2026-06-01``, ``2026-06-01T12:00``, ``...+02:00``) as an aware datetime; a
    time without a zone is UTC. Raises ``ValueError`` for anything else (argparse says so)."""
    t = datetime.fromisoformat(text)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def clock_kwargs(now: datetime | None) -> dict:
    """The keyword arguments ``Engine.search`` is given for ``now``: none for the default (so an
    older checkout measured with ``--src`` still runs)."""
    return {} if now is None else {"now": now}

"""Dates as the query language writes them (``since:``/``until:``, MCP's ``since``): a day
``YYYY-MM-DD``, ``today``, ``yesterday``, or a time ago (``7d``, ``2w``, ``3m``, ``12h``), read
in the local time of a given ``now``."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

RELATIVE = re.compile(r"^(\d+)([dwmh])$")
"""A time ago: a whole number and a unit (``h`` hours, ``d`` days, ``w`` weeks, ``m`` 30-day months)."""

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
"""A ``since:``/``until:`` further back than Python's dates go: the earliest moment there is."""
LATEST = datetime.max.replace(tzinfo=timezone.utc)
"""The end of a day past Python's last one (``until:9999-12-31``): the latest moment there is."""


def parse_day(value: str, now: datetime) -> datetime | None:
    """The start (aware UTC) of a day given as ``YYYY-MM-DD``, ``today``, ``yesterday``, or a
    moment ``N`` units before ``now`` (``7d``, ``2w``, ``3m`` = 30-day months, ``12h``).
    Days are local days of ``now``'s timezone. None when ``value`` is none of these; a time
    before year 1 is :data:`EARLIEST`, a day after Python's last one :data:`LATEST`."""
    v = value.strip().lower()
    tz = now.tzinfo or timezone.utc
    if v in ("today", "yesterday"):
        d = now.date() - timedelta(days=1 if v == "yesterday" else 0)
        return _local_midnight(d, tz)
    m = RELATIVE.match(v)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        try:
            delta = {"h": timedelta(hours=n), "d": timedelta(days=n), "w": timedelta(weeks=n),
                     "m": timedelta(days=30 * n)}[unit]
            return (now - delta).astimezone(timezone.utc)
        except OverflowError:  # further back than year 1 (``since:99999999d``)
            return EARLIEST
    try:
        d = date.fromisoformat(v)
    except ValueError:
        return None
    try:
        return _local_midnight(d, tz)
    except OverflowError:  # 0001-01-01 east of UTC, 9999-12-31 west of it
        return EARLIEST if d.year == 1 else LATEST


def day_end(value: str, now: datetime) -> datetime | None:
    """The exclusive end of ``until:VALUE``: a day includes that whole day (the next local
    midnight, :data:`LATEST` past Python's last day); a time ago is that moment. None when
    ``value`` is not a date (:func:`parse_day`)."""
    day = parse_day(value, now)
    if day is None or RELATIVE.match(value):  # matched as typed (the parser has always done so)
        return day
    return LATEST if day > LATEST - timedelta(days=1) else day + timedelta(days=1)


def _local_midnight(d: date, tz) -> datetime:
    return datetime.combine(d, time(0, 0), tzinfo=tz).astimezone(timezone.utc)

"""Helpers of the app's pilot tests: an app on a built index, the screen's text, a wait for a
condition, and a 60-session index (the ``many`` fixture: import it into a test module)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from builders import NOW, ClaudeSession
from crabsearch.tui.app import CrabsearchApp


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """60 sessions that all mention "capybara"; every third also says "bath" (the refined
    query keeps some sessions of the first, in other places)."""
    from crabsearch.index import Indexer

    root = tmp_path_factory.mktemp("many")
    home = root / "home"
    for n in range(60):
        words = "capybara wants " + ("a bath " if n % 3 == 0 else "a nap ") + "and more words " * n
        ClaudeSession(home, session_id=f"00000000-0000-4000-8000-{n:012d}", cwd=f"/w/p{n}",
                      start=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(hours=n)).user(
            words).title(f"session {n}").write()
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"


def app_of(home_index, **kw) -> CrabsearchApp:
    """The app on ``(home, index_dir)`` at the fixed clock, with no background indexing unless
    ``index_on_start=True``."""
    home, index_dir = home_index
    kw.setdefault("index_on_start", False)
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, cursor_blink=False, **kw)


def screen_words(app) -> str:
    """The screen as an SVG screenshot, its non-breaking spaces made spaces."""
    return app.export_screenshot().replace("&#160;", " ")


def screen_rows(app) -> list[str]:
    """The screen's text, one string per row (the SVG's text pieces of a row joined)."""
    import html
    import re
    from collections import defaultdict

    rows = defaultdict(list)
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', app.export_screenshot()):
        rows[float(m.group(2))].append((float(m.group(1)), html.unescape(m.group(3)).replace("\xa0", " ")))
    return ["".join(t for _, t in sorted(rows[y])) for y in sorted(rows)]


async def until(pilot, check, seconds: float = 10.0) -> float:
    """Seconds until ``check()`` holds, pausing the pilot between looks; AssertionError after
    ``seconds``."""
    import time

    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if check():
            return time.monotonic() - t0
        await pilot.pause(0.05)
    raise AssertionError("not within %.0f s" % seconds)


async def opened(app, pilot, query: str):
    """The session view (``TranscriptView``) of the first row ``query`` finds, at its first
    message."""
    from builders import settle
    from crabsearch.tui.session import SessionScreen
    from crabsearch.tui.transcript import TranscriptView

    await settle(pilot)
    await pilot.press(*query)
    await settle(pilot)
    await pilot.press("down", "o")
    await settle(pilot)
    assert isinstance(app.screen, SessionScreen)
    view = app.screen.query_one(TranscriptView)
    view.go_to(0)
    await pilot.pause()
    return view


def shown(view) -> str:
    """The text of every rendered line of a session view."""
    return "\n".join(strip.text for _, strip in view._lines)

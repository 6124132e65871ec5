"""A query of filters alone with ``since:``/``until:`` lists the sessions as the rule says
(``Sessions.recent``): each session whose matching documents (session documents; with
``role:``, its messages of that role) have one inside the window, newest first by its newest
such document. Checked against a walk over every document's stored time; sessions are spread
over days and hours, in two segments, Claude Code and Codex."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from crabsearch.index import Indexer
from crabsearch.index.filtering import in_window, time_window
from crabsearch.query import parse
from crabsearch.search import Engine
from crabsearch.sources import SOURCES

from builders import ClaudeSession, CodexSession

START = datetime(2026, 1, 1, 6, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("since")
    home = tmp / "home"
    for n in range(36):
        start = START + timedelta(days=(n * 7) % 40, hours=(n * 5) % 24, minutes=n)
        s = (CodexSession(home, start=start) if n % 3 == 0 else ClaudeSession(home, start=start))
        for i in range(4 + n % 5):  # messages 30 s apart; some sessions long enough to cross an hour
            s.user(f"question {i} of session {n}")
            s.assistant(f"answer {i} " + "filler " * (n % 7))
        if n % 4 == 1:  # a session resumed days later: its last messages far from its first
            s.t += timedelta(days=9, minutes=n)
            s.user("back again").assistant("welcome back")
        s.write()
        if n == 17:
            Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    Indexer(tmp / "index", env={"HOME": str(home)}).refresh()
    return tmp / "index"


def expected(engine, text: str, limit: int) -> list[tuple[str, str]]:
    """Brute force: every live document's stored kind, role, agent and time."""
    pq = parse(text, agents=tuple(SOURCES))
    window = time_window(pq)
    newest: dict[tuple[str, str], tuple[int, int]] = {}
    searcher = engine._get_searcher()
    sessions = {offset + d for sub, offset in searcher.leaf_searchers()
                for ds in engine._keys.session_docs(sub).values() for d in ds}
    for d in range(searcher.doc_count_all()):
        if searcher.reader().is_deleted(d):
            continue
        f = searcher.stored_fields(d)
        if (d in sessions) == bool(pq.role) or (pq.role and f.get("role") != pq.role):
            continue
        if pq.agent and f.get("agent") != pq.agent:
            continue
        t = engine._keys.updated_of(searcher, d)
        if in_window(t, window):
            key = (f["agent"], f["skey"].partition(":")[2])
            newest[key] = max(newest.get(key, (0, -1)), (t, d))
    return [k for k, _ in sorted(newest.items(), key=lambda kv: kv[1], reverse=True)][:limit]


@pytest.mark.parametrize("text", [
    "since:2026-01-20", "until:2026-01-15", "since:2026-01-08 until:2026-01-30", "agent:codex since:2026-01-10",
    "agent:claude until:2026-02-01", "role:assistant until:2026-01-25", "role:user since:2026-01-12 agent:claude",
    "since:2027-01-01", "until:2020-01-01", "since:99999999d",
])
@pytest.mark.parametrize("limit", [3, 50])
def test_filters_alone_list_the_newest_sessions_in_the_window(index, text, limit):
    engine = Engine(index)
    got = [(h.session.agent, h.session.session_id) for h in engine.search(text, limit=limit).hits]
    assert got == expected(engine, text, limit)
    assert all(h.route == "recent" for h in engine.search(text, limit=limit).hits)


@pytest.mark.parametrize("text", ["role:assistant", "role:user agent:claude", "role:assistant until:2026-01-25"])
def test_a_role_filter_alone_shows_each_sessions_newest_message_of_that_role(index, text):
    """A fresh-user trial: ``role:assistant`` alone listed rows showing the first user prompt."""
    engine = Engine(index)
    pq = parse(text, agents=tuple(SOURCES))
    hits = engine.search(text, limit=10).hits
    assert hits
    for h in hits:
        [item] = h.window
        assert item.role == pq.role and item.message_index == h.message_index
        # the newest message of that role in the window, by the stored times
        searcher = engine._get_searcher()
        newest = max((engine._keys.updated_of(searcher, d), searcher.stored_fields(d)["idx"])
                     for d in searcher.document_numbers(skey=f"{h.session.agent}:{h.session.session_id}")
                     if searcher.stored_fields(d).get("role") == pq.role
                     and in_window(engine._keys.updated_of(searcher, d), time_window(pq) or (None, None)))
        assert h.message_index == newest[1]

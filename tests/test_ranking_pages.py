"""A page's rows do not depend on its size: the first ``n`` rows of any page are the rows of a
page of ``n`` (``ladder.climb``'s threshold rule). A session's score on a rung is its best
message's plus its title's; a session that is second best on both counts can beat every
session that is best on one, and it used to be missed when it made neither list's cut (the
app's End asked for more rows, and the top of the list reordered)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from builders import ClaudeSession, indexed_engine, short_ids

NOW = datetime.now(timezone.utc)


@pytest.fixture(autouse=True)
def short_lists(monkeypatch):
    """The rung's lists begin at ``fetch x DEDUP_DEPTH`` here, not at ``RUNG_DEPTH_MIN`` (100):
    these corpora of ~60-70 sessions would fit whole in a list of 100, and the threshold rule
    tested here would never run."""
    from crabsearch.search import ladder
    monkeypatch.setattr(ladder, "RUNG_DEPTH_MIN", 1)


def sid(n: int) -> str:
    return f"{n:04d}aaaa-0000-4000-8000-000000000000"


def session(home, n: int, hours: float) -> ClaudeSession:
    return ClaudeSession(home, sid(n), start=NOW - timedelta(hours=hours))


def lookups_of(monkeypatch) -> tuple[dict[str, list[set]], object]:
    """Record the sessions ``ladder.best_per`` is asked to look up, by kind (``titles_of``,
    ``messages_of``), in the dict returned with the real function (to put back)."""
    from crabsearch.search import ladder

    lookups: dict[str, list[set]] = {"titles_of": [], "messages_of": []}
    real = ladder.best_per

    def counting(ctx, q, clauses, limit, depth=ladder.DEDUP_DEPTH, titles_of=None, messages_of=None):
        for kind, sessions in (("titles_of", titles_of), ("messages_of", messages_of)):
            if sessions is not None:
                lookups[kind].append(set(sessions))
        return real(ctx, q, clauses, limit, depth, titles_of=titles_of, messages_of=messages_of)

    monkeypatch.setattr(ladder, "best_per", counting)
    return lookups, real


def both_halves(tmp_path, word: str = "walrus"):
    """30 sessions saying ``word`` in a short message (best by message, untitled), 30 titled
    with it (best by title, never saying it), and session 0500, a little behind on both counts
    (one word more in its message and in its title): the best sum."""
    home = tmp_path / "h"
    said = [session(home, i, 1 + i).user(f"{word} one two three").assistant("noted").title(f"notes {i}")
            for i in range(30)]
    titled = [session(home, 100 + i, 40 + i).user("hello there").assistant("noted").title(f"{word} one two")
              for i in range(30)]
    both = session(home, 500, 200).user(f"{word} one two three four").assistant("noted")
    both.title(f"{word} one two three")
    return indexed_engine(tmp_path, both, *said, *titled)


def test_a_session_second_best_on_both_counts_leads_a_page_of_one(tmp_path):
    e = both_halves(tmp_path)
    r = e.search("walrus", limit=1, explain=True)
    assert short_ids(r) == ["0500"]
    assert r.hits[0].explain["message_score"] > 0 and r.hits[0].explain["session_score"] > 0
    assert short_ids(e.search("walrus", limit=100))[0] == "0500"


def test_the_first_rows_are_the_rows_of_a_smaller_page(tmp_path):
    e = both_halves(tmp_path)
    full = short_ids(e.search("walrus", limit=100))
    assert len(full) == 61
    for n in (1, 2, 3, 5, 8, 13, 21, 34, 55):
        assert short_ids(e.search("walrus", limit=n)) == full[:n], n


def test_the_rule_holds_on_the_all_rung_and_for_a_title_found_session(tmp_path):
    """Two words (the ``all`` rung; the title list is "any of the words"): the same."""
    e = both_halves(tmp_path, word="walrus gizmo")
    r = e.search("walrus gizmo", limit=1, explain=True)
    assert short_ids(r) == ["0500"]
    full = short_ids(e.search("walrus gizmo", limit=100))
    for n in (1, 2, 4, 9, 30):
        assert short_ids(e.search("walrus gizmo", limit=n)) == full[:n], n


def test_a_session_found_by_its_title_gets_its_best_message_score(tmp_path):
    """Session 0600 is titled with the word and says it once in a long message: below the
    message list's cut-off at a page of one, its row still scores message plus title, as on a
    large page (where its message is in the list), and is anchored on that message."""
    home = tmp_path / "h"
    said = [session(home, i, 1 + i).user("walrus").assistant("noted").title(f"notes {i}") for i in range(30)]
    long = session(home, 600, 300).user("a long message " + "with many words " * 8 + "and one walrus in it")
    long.title("walrus")
    e = indexed_engine(tmp_path, long, *said)
    small = {h.session.session_id[:4]: h for h in e.search("walrus", limit=1, explain=True).hits}
    big = {h.session.session_id[:4]: h for h in e.search("walrus", limit=100, explain=True).hits}
    assert list(small) == [next(iter(big))]
    assert big["0600"].explain["message_score"] > 0
    assert big["0600"].explain["anchored_on"] == "hit"



def test_title_scores_come_from_the_title_scan_when_it_lists_every_titled_session(tmp_path, monkeypatch):
    """40 sessions say the words, 4 are titled with them: the rung's scan of every title for
    the words lists the 4 (fewer than its cut), so no session's title is looked up on its own,
    and each row's title score is the one that scan gave (0 for the untitled)."""
    from crabsearch.search import ladder

    home = tmp_path / "h"
    said = [session(home, i, 1 + i).user("walrus gizmo one two").assistant("noted").title(f"notes {i}")
            for i in range(40)]
    titled = [session(home, 100 + i, 60 + i).user("hello there").assistant("noted").title("walrus gizmo")
              for i in range(3)]
    both = session(home, 500, 200).user("walrus gizmo one two three").assistant("noted").title("walrus notes")
    e = indexed_engine(tmp_path, both, *said, *titled)
    lookups, real = lookups_of(monkeypatch)
    r = e.search("walrus gizmo", limit=1, explain=True)
    assert lookups["titles_of"] == []
    assert short_ids(r) == ["0500"] and r.hits[0].explain["session_score"] > 0
    monkeypatch.setattr(ladder, "best_per", real)
    rows = {h.session.session_id[:4]: h.explain["session_score"] for h in e.search("walrus gizmo", limit=100, explain=True).hits}
    assert len(rows) == 44 and {k for k, v in rows.items() if v > 0} == {"0500", "0100", "0101", "0102"}
    assert rows["0500"] == r.hits[0].explain["session_score"]


def test_title_found_sessions_are_looked_up_a_page_at_a_time(tmp_path, monkeypatch):
    """60 sessions say the word once alike (the same message score) under titles that hold it
    with more and more other words (lower and lower title scores): a page of one reads the best
    messages of a page's worth of them, highest title first, and stops once the rest cannot
    reach the page's last row (it read every session whose bound reached the first estimate);
    the page is the first row of a page of 100."""
    from crabsearch.search import ladder

    home = tmp_path / "h"
    sessions = [session(home, i, 1 + i).user("the walrus").assistant("noted").title("walrus " + "word " * i)
                for i in range(60)]
    e = indexed_engine(tmp_path, *sessions)
    lookups, real = lookups_of(monkeypatch)
    first = short_ids(e.search("walrus", limit=1))
    looked_up = [len(sessions) for sessions in lookups["messages_of"]]
    assert looked_up and sum(looked_up) <= 6, looked_up  # fetch_for(1): 6 rows
    monkeypatch.setattr(ladder, "best_per", real)
    assert first == short_ids(e.search("walrus", limit=100))[:1] == ["0000"]



def test_the_rule_holds_for_a_prefix_or_a_quoted_phrase_alone(tmp_path):
    """No word groups, only a prefix or a quoted phrase: the title scan for them is the prefix
    or the phrase itself. (It was an empty union that matched nothing, so a session's title
    score counted only when the rung's own short title list held it: 0500, tied with 0600-0605
    on its message and ahead by its long title, lost its title score on a page of one.)"""
    home = tmp_path / "h"
    filler = " ".join(f"filler{i}" for i in range(60))
    said = []
    for i in range(30):  # many short messages besides: a long one scores far below a short one
        s = session(home, i, 10 + i).user(f"walrus tusk {filler}").assistant("noted").title(f"notes {i}")
        for _ in range(10):
            s.user("ok go on").assistant("noted")
        said.append(s)
    titled = [session(home, 100 + i, 40 + i).user("hello there").assistant("noted").title("walrus tusk")
              for i in range(30)]
    tied = [session(home, 600 + i, 1 + i).user("walrus tusk").assistant("noted").title("notes") for i in range(6)]
    both = session(home, 500, 200).user("walrus tusk").assistant("noted")
    both.title("walrus tusk and a long title of many words about other things entirely")
    e = indexed_engine(tmp_path, both, *tied, *said, *titled)
    for query in ("walr*", '"walrus tusk"'):
        r = e.search(query, limit=1, explain=True)
        assert short_ids(r) == ["0500"], query
        assert r.hits[0].explain["session_score"] > 0
        full = short_ids(e.search(query, limit=100))
        assert full[:2] == ["0500", "0600"]
        for n in (1, 2, 5, 13, 34):
            assert short_ids(e.search(query, limit=n)) == full[:n], (query, n)

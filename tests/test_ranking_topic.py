"""Ranking of many-word descriptions (issue 11, the real set's ``prose``): the ``any`` rung's
topic score (a session that keeps coming back to several of the words), which one word in common
does not earn, and a phrase scored by how often the phrase itself occurs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from crabsearch.search.scoring import topic_scores
from crabsearch.search.ladder import Gathered

from builders import ClaudeSession, indexed_engine, short_ids

NOW = datetime.now(timezone.utc)


def sid(n: int) -> str:
    return f"{n:04d}bbbb-0000-4000-8000-000000000000"


def session(home, n, days=1):
    return ClaudeSession(home, sid(n), cwd="/home/dev/app", start=NOW - timedelta(days=days))


build, ids = indexed_engine, short_ids


def test_a_session_about_the_words_outranks_one_message_that_lists_more_of_them(tmp_path):
    """A description in other words: no message holds many of its words. The session that keeps
    coming back to two of them (``widget``, ``timezone``) comes before the one whose single
    message happens to hold more of them once; a session sharing one word gets no topic score."""
    home = tmp_path / "h"
    topic = session(home, 1, days=3).user("the widget shows the wrong date")
    for i in range(6):
        topic.assistant(f"step {i}: the widget converts the timezone before drawing").user(f"ok {i}")
    listing = session(home, 2, days=2).user("please review the release").assistant(
        "I changed the calendar header, how the widget renders and the timezone note in one go")
    for i in range(6):
        listing.user(f"unrelated question {i}").assistant(f"unrelated answer {i} about caching")
    others = [session(home, 10 + i, days=4 + i).user(f"fix the flaky test number {i}").assistant("done")
              for i in range(10)]
    e = build(tmp_path, topic, listing, *others)
    r = e.search("calendar widget renders appointments early across timezone boundaries")
    assert r.route == "any"
    assert ids(r)[:2] == ["0001", "0002"]


def test_one_word_in_common_earns_no_topic_score():
    one = Gathered(messages={10: [0, 0b01, [3.0, 0.0]], 11: [1, 0b01, [3.0, 0.0]]})
    two = Gathered(messages={20: [0, 0b01, [3.0, 0.0]], 21: [4, 0b10, [2.0, 0.0]]})
    scores = topic_scores({"a": one, "b": two}, 2, {"a": 10, "b": 10}, 10, 10.0)
    assert "a" not in scores and scores["b"] > 0


def test_topic_score_is_normalized_by_session_length():
    g = {k: Gathered(messages={i: [i, 0b11, [1.0, 1.0]] for i in range(3)}) for k in ("short", "long")}
    scores = topic_scores(g, 2, {"short": 10, "long": 1000}, 10, 100.0)
    assert scores["short"] > scores["long"]


def test_a_title_that_is_the_phrase_beats_a_message_repeating_its_words(tmp_path):
    """A phrase scores by the phrase's frequency (``whoosh_fixes`` 9), not by each word's: a
    message that says ``session`` and ``error`` over and over, and the phrase once (in a file
    name), no longer outranks the session titled with the phrase."""
    home = tmp_path / "h"
    titled = session(home, 1, days=3).user("it fails when I start it").title("Session Start Error")
    for i in range(6):
        titled.assistant(f"answer {i}").user(f"a short follow-up question number {i} about it")
    noisy = session(home, 2, days=1).user("look at the notes").assistant("which ones?").user(
        "see notes/session-start-error.md; " + "the session shows an error and the session error is back " * 8)
    e = build(tmp_path, titled, noisy)
    r = e.search("Session Start Error")
    assert r.route == "phrase"
    assert ids(r) == ["0001", "0002"]

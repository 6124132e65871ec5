"""The ranking policy (``crabsearch.ranking.Policy``): what the threshold rule of
``search.ladder`` relies on, checked for the policy in use and a recency prior over times years
apart (and after the clock: a clock set back); a change to the score without the bound (or the
bound without the score) fails here. And the search's clock, ``Engine.search(now=)``: what
``since:`` counts from and what a recency prior measures ages to."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crabsearch.ranking import POLICY, Policy
from crabsearch.search import Engine

from builders import ClaudeSession, indexed_engine, short_ids
from policies import DAY_MS, BoundWithoutPrior, PriorWithoutBound, RecencyPrior

NOW = int(datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp() * 1000)
YEAR = 365 * DAY_MS
POLICIES = {"in use": POLICY, "recency prior": RecencyPrior()}

parts = st.floats(min_value=0.0, max_value=80.0, allow_nan=False, allow_infinity=False)
times = st.integers(min_value=0, max_value=NOW + 3 * YEAR)  # the epoch to three years past the clock
clocks = st.integers(min_value=NOW - 20 * YEAR, max_value=NOW + 20 * YEAR)
checks = settings(max_examples=300, deadline=None, derandomize=True, database=None)


def score(policy: Policy, message: float, title: float, when: int, now: int) -> float:
    """The score as the engine asks for it: ``when`` only for a policy that uses time."""
    return policy.score(message, title, when if policy.uses_time else None, now)


def assert_within_bound(policy, message, title, more_message, more_title, when, now):
    """A session whose parts are at most ``(message + more_message, title + more_title)`` scores
    at most that bound, at any time; and a higher part never lowers the score."""
    top = policy.key(policy.bound(message + more_message, title + more_title, now))
    assert policy.key(score(policy, message, title, when, now)) <= top
    assert score(policy, message, title, when, now) <= score(policy, message + more_message,
                                                             title + more_title, when, now)


def assert_bound_reached(policy, message, title, now, when):
    """Some time (the epoch, years back, the clock, after it, or ``when``) reaches the bound."""
    whens = [0, now - 10 * YEAR, now - YEAR, now - DAY_MS, now, now + YEAR, when]
    best = max(policy.key(score(policy, message, title, w, now)) for w in whens if w >= 0)
    assert best == policy.key(policy.bound(message, title, now))


@pytest.mark.parametrize("name", POLICIES)
@checks
@given(message=parts, title=parts, more_message=parts, more_title=parts, when=times, now=clocks)
def test_no_session_scores_above_the_bound_of_its_parts(name, message, title, more_message, more_title,
                                                        when, now):
    assert_within_bound(POLICIES[name], message, title, more_message, more_title, when, now)


@pytest.mark.parametrize("name", POLICIES)
@checks
@given(message=parts, title=parts, now=clocks, when=times)
def test_the_bound_is_reached(name, message, title, now, when):
    assert_bound_reached(POLICIES[name], message, title, now, when)


def test_a_prior_added_to_the_score_alone_is_caught():
    """The recency exercise done wrong: a new session's score exceeds the bound the threshold
    rule stops by (a left-out session could then belong on the page)."""
    with pytest.raises(AssertionError):
        assert_within_bound(PriorWithoutBound(), 3.0, 1.0, 0.0, 0.0, NOW, NOW)
    assert_within_bound(RecencyPrior(), 3.0, 1.0, 0.0, 0.0, NOW, NOW)


def test_a_bound_widened_without_the_score_is_caught():
    """The other way: a bound no session reaches (the rule would look deeper than it needs)."""
    with pytest.raises(AssertionError):
        assert_bound_reached(BoundWithoutPrior(), 3.0, 1.0, NOW, NOW)
    assert_bound_reached(RecencyPrior(), 3.0, 1.0, NOW, NOW)


# -- the clock -----------------------------------------------------------------------------------

def sid(n: int) -> str:
    return f"{n:04d}dddd-0000-4000-8000-000000000000"


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, timezone.utc)


def test_since_counts_from_the_search_clock(tmp_path):
    home = tmp_path / "h"
    old = ClaudeSession(home, sid(1), start=at(NOW - 10 * YEAR)).user("walrus migration").assistant("ok")
    new = ClaudeSession(home, sid(2), start=at(NOW - DAY_MS)).user("walrus migration").assistant("ok")
    e = indexed_engine(tmp_path, old, new)
    assert short_ids(e.search("walrus since:30d", now=at(NOW))) == ["0002"]
    assert sorted(short_ids(e.search("walrus since:30d", now=at(NOW - 10 * YEAR + 5 * DAY_MS)))) == ["0001", "0002"]
    assert short_ids(e.search("walrus since:30d", now=at(NOW + YEAR))) == []


def test_a_recency_prior_ranks_by_the_search_clock(tmp_path):
    """Session 0001 (ten years old) says the word in a shorter message than 0002 (a day old):
    plain BM25 puts it first; a recency prior puts the new one first while it is new, and the
    old one first again once both are old (the clock thirty years on)."""
    home = tmp_path / "h"
    old = ClaudeSession(home, sid(1), start=at(NOW - 10 * YEAR)).user("walrus migration").assistant("ok")
    new = ClaudeSession(home, sid(2), start=at(NOW - DAY_MS)).user("walrus migration and a few other words")
    new.assistant("ok")
    e = indexed_engine(tmp_path, old, new)
    prior = Engine(tmp_path / "index", policy=RecencyPrior(weight=1.0))
    assert short_ids(e.search("walrus", now=at(NOW))) == ["0001", "0002"]
    assert short_ids(prior.search("walrus", now=at(NOW))) == ["0002", "0001"]
    assert short_ids(prior.search("walrus", now=at(NOW + 30 * YEAR))) == ["0001", "0002"]
    r = prior.search("walrus", now=at(NOW), explain=True)
    assert r.hits[0].score > r.hits[0].explain["message_score"] + r.hits[0].explain["session_score"]


def test_the_clock_defaults_to_now(tmp_path):
    home = tmp_path / "h"
    s = ClaudeSession(home, sid(1), start=datetime.now(timezone.utc) - timedelta(days=2)).user("walrus")
    e = indexed_engine(tmp_path, s.assistant("ok"))
    assert short_ids(e.search("walrus since:7d")) == ["0001"]
    assert short_ids(e.search("walrus since:7d", now=datetime.now(timezone.utc) + timedelta(days=30))) == []

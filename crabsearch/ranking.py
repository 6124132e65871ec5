"""How sessions are ranked: the one place to change it.

A search (``search.ladder``) lists sessions rung by rung (phrase, all, session, repair, any);
within a rung a session's row has two parts, both non-negative:

* its *message score*: its best message's BM25F score, the fields weighted by :data:`WEIGHTS`
  (per-document rungs), or its best window of messages and its topic score (the ``session`` and
  ``any`` rungs: ``search.scoring``, with :data:`PROXIMITY_SPAN` and the ``TOPIC_*`` weights);
* its *title score*: its title's and summary's BM25F score for every query word they hold.

:class:`Policy` makes the session's score from the two (:meth:`Policy.score`, which orders a
rung's rows) and says the most a session can score when only upper bounds of its parts are known
(:meth:`Policy.bound`). The per-document rungs keep two lists cut at ``k`` sessions (by message
score, by title score) and prove with the bound that no session left out of both can reach the
page (Fagin's threshold rule, ``ladder.Climb.rung``): the first ``n`` rows of a page of 100 are
then the page of ``n``. A change to the score is a change to the bound:
``tests/test_ranking_policy.py`` fails when a score exceeds its bound or a bound is never reached.

The rest of this module is the weights of those formulas and how deep a rung's lists look. The
field boosts are also the text fields of the index (``index.schema.TEXT_FIELDS``) and are given
to Whoosh as query-time boosts (``index.querying``).
"""

from __future__ import annotations

WEIGHTS: dict[str, float] = {
    "user": 1.5,         # what the user said counts most
    "acting": 1.3,       # assistant text of a turn that went on to call tools (it did the work)
    "assistant": 1.0,    # other assistant text
    "tool": 0.5,         # tool names only (never arguments or output)
    "tool_output": 0.3,  # opt-in (index_tool_output): redacted head of tool output, `in:tools`
    "title": 1.0,        # session document (often the first prompt itself: it counts on top)
    "summary": 1.0,      # session document: the session's summary
    "compaction": 1.0,   # compaction summary messages (a field of their own: message fields never
}                        # occur on session documents, so message queries need no kind filter
"""Query-time boosts per text field (BM25F, with the length normalization of
``index.whoosh_fixes``). A title made from the first prompt repeats that prompt's words, so
titles and summaries count as much as assistant text, on top of the message."""

PROXIMITY_SPAN = 4
"""Messages over which a session-wide match loses half its score (``search.scoring.proximity``): a
window of a session's messages holding every query word keeps ``1 / (1 + (span - 1) /
PROXIMITY_SPAN)`` of its words' scores, ``span`` counting the messages from the window's first
to its last (2 for two adjacent messages: 0.8)."""

TOPIC_WEIGHT = 1.0
"""Weight of a session's topic score in the ``any`` rung (``search.scoring.topic_scores``): a
session-level BM25 of the query's words (a word's frequency: the session's messages holding it;
the length: its documents), added to its best window's score. A description in the searcher's
own words shares few words with any one message of the session it describes, which keeps coming
back to them."""

TOPIC_MIN_WORDS = 2
"""The topic score counts for a session whose messages hold at least this many of the query's
word groups: one word in common says nothing of what a session is about."""

TOPIC_K1 = 1.2
TOPIC_B = 0.75
"""BM25's usual ``k1`` and ``b`` for the topic score."""

PLACES = 6
"""Decimal places to which scores are compared (:meth:`Policy.key`): sums of the same floats in
another order differ in their last bits, and the order of rows must not."""

DEDUP_DEPTH = 4
"""Sessions a rung's lists keep at first: ``DEDUP_DEPTH`` times the rows fetched (copies of one
message are folded after; the threshold rule deepens the lists when a left-out session could
reach the page)."""

RUNG_DEPTH_MIN = 100
"""Sessions a rung's lists keep at first, at least (a page of 20's ``DEDUP_DEPTH`` times its
rows): a scan of 100 costs about what a scan of 20 does, and a small page would otherwise scan
again and again as its lists deepen."""

LADDER_DEPTH_CAP = 200_000
"""Sessions a rung's two lists (by message score, by title score) grow to at most while the
threshold rule makes its first rows exact."""

GATHER_CAP = 100_000
"""Matching documents the ``session`` and ``any`` rungs look at, at most (then the result is
``partial``)."""


class Policy:
    """How a session's score is made from its parts, and its least upper bound.

    ``message`` and ``title`` are the row's message and title scores (see the module docs;
    non-negative). ``when`` is the time, in ms since the epoch, of the row's best document (a
    message's own time; for a row found by its title or summary alone, the session's last
    update), passed only when :attr:`uses_time` is set (else None: the engine then looks no time
    up). ``now`` is the search's clock in ms (``Engine.search(now=)``; a session may be dated
    after it, when a clock was set back).

    The threshold rule relies on three properties, which ``tests/test_ranking_policy.py``
    checks for the policy in use: :meth:`score` does not fall when ``message`` or ``title``
    rises; :meth:`bound` is at least :meth:`score` of any parts up to its own at any ``when``;
    and it is reached (by some ``when``), so that the rule stops as soon as it can.
    """

    uses_time: bool = False
    """True when :meth:`score` reads ``when``."""

    def score(self, message: float, title: float, when: int | None, now: int) -> float:
        """The session's score on its rung: the sum of its parts."""
        return message + title

    def bound(self, message: float, title: float, now: int) -> float:
        """The most :meth:`score` gives a session whose message score is at most ``message`` and
        title score at most ``title``, whatever its time."""
        return message + title

    @staticmethod
    def key(score: float) -> float:
        """``score`` as rows are compared and tied: rounded to :data:`PLACES` places."""
        return round(score, PLACES)


POLICY = Policy()
"""The policy every search ranks with (``search.Engine(policy=)`` takes another)."""

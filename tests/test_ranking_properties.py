"""Properties of the ranking over generated histories (hypothesis): sessions dated years apart,
messages and titles drawn from a small vocabulary, queries over it.

* A page's rows do not depend on its size: the first ``n`` rows of a page of 100 are the page
  of ``n`` (``ladder``'s threshold rule), with the policy in use and with a recency prior (whose
  score depends on each session's time: the rule must then widen its cut-offs by the prior, as
  ``Policy.bound`` says). The rung's lists start at one session per row fetched here (not
  ``RUNG_DEPTH_MIN``), so that these small histories overflow them and the rule runs.
* ``collect.best_per_session``'s six ways of scoring (an exact phrase, every word in one
  message, words and phrases in one union, a word with filter terms, a word alone, Whoosh's
  matcher for anything else) give the sessions, scores (to the bit), best documents and the
  matcher's tie rule (the first document) that walking Whoosh's matcher gives, over several
  segments and a deleted session, at several limits.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from whoosh.query import And, Or, Phrase, Prefix, Term

from crabsearch.index import Indexer, collect, conjunction, mixed, phrases
from crabsearch.index.collect import SegmentKeys, best_per_session
from crabsearch.index.filtering import ZeroScore
from crabsearch.index.phrases import TextPhrase
from crabsearch.index.querying import MESSAGE_FIELDS, PHRASE_FIELDS
from crabsearch.index.store import open_index
from crabsearch.ranking import POLICY, WEIGHTS
from crabsearch.search import Engine, ladder

from builders import ClaudeSession, CodexSession, delete_without_merging, short_ids
from policies import RecencyPrior

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
WORDS = ["walrus", "tusk", "gizmo", "cache", "retry"]
FILLER = ["one", "two", "three", "note", "then", "also", "the"]
SIX_YEARS = 6 * 365
examples = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True, database=None)

text = st.lists(st.sampled_from(WORDS + FILLER), min_size=1, max_size=7).map(" ".join)


@st.composite
def history(draw, least: int = 6, most: int = 40):
    """``least`` to ``most`` sessions as ``(hours before NOW, user messages, title or None)``,
    drawn from a seeded ``random.Random`` (hypothesis's own integers and lists favour small,
    edge and repeated values: sessions of one word dated NOW, whose scores tie). Each history
    is one of two kinds, alike:

    * spread: dated anywhere in six years, 1-3 messages of 1-7 words of the vocabulary, half
      of them titled (a session's title is otherwise its first prompt);
    * near ties: most sessions two to six years old and a fifth of them from the last month,
      one message each, most of them a query word and four to seven filler words, many of them
      one of two such lines (scores equal or a few percent apart: the rule's cut-offs fall
      among sessions that score alike, where a bound that leaves out a recency prior misses a
      newer session)."""
    rnd = draw(st.randoms(use_true_random=True))
    if rnd.random() < 0.5:
        def line() -> str:
            return " ".join(rnd.choice(WORDS + FILLER) for _ in range(rnd.randint(1, 7)))
        return [(rnd.randint(0, SIX_YEARS * 24), [line() for _ in range(rnd.randint(1, 3))],
                 line() if rnd.random() < 0.5 else None) for _ in range(rnd.randint(least, most))]

    def family() -> str:
        return " ".join([rnd.choice(WORDS[:3]), *(rnd.choice(FILLER) for _ in range(rnd.randint(4, 7)))])
    shared = [family() for _ in range(2)]

    def near() -> str:
        roll = rnd.random()
        if roll < 0.6:
            return rnd.choice(shared)
        if roll < 0.85:
            return family()
        return " ".join(rnd.choice(WORDS + FILLER) for _ in range(rnd.randint(1, 7)))
    return [(rnd.randint(0, 24 * 30) if rnd.random() < 0.2 else rnd.randint(2 * 365 * 24, SIX_YEARS * 24),
             [near()], near() if rnd.random() < 0.1 else None) for _ in range(rnd.randint(max(least, 10), most))]


def write(home: Path, sessions, first: int = 0) -> list:
    """The sessions as Claude Code transcripts (ids ``0000eeee-...`` on), written."""
    out = []
    for n, (hours, prompts, title) in enumerate(sessions, first):
        s = ClaudeSession(home, f"{n:04d}eeee-0000-4000-8000-000000000000", start=NOW - timedelta(hours=hours))
        for i, prompt in enumerate(prompts):
            s.user(prompt).assistant("noted" if i % 2 else f"noted {prompt.split()[0]}")
        if title is not None:
            s.title(title)
        s.write()
        out.append(s)
    return out


# -- a page's rows do not depend on its size ----------------------------------------------------

word = st.sampled_from(WORDS)
plain_words = st.lists(word, min_size=1, max_size=3, unique=True).map(" ".join)
queries = st.one_of(
    plain_words, plain_words,                                                   # phrase, all, session, any
    st.tuples(word, st.sampled_from(["zqxjv", "walrsu", "gizmmo"])).map(" ".join),  # repair, any
    word.map(lambda w: w[:3] + "*"),                                            # a prefix alone
    st.tuples(word, word).map(lambda p: f'"{p[0]} {p[1]}"'),                    # a quoted phrase alone
    st.tuples(word, st.sampled_from(["role:user", "-tusk", "since:3y"])).map(" ".join),
)


@pytest.mark.parametrize("policy", [POLICY, RecencyPrior()], ids=["policy in use", "recency prior"])
@examples
@given(sessions=history(), asked=st.lists(queries, min_size=1, max_size=3))
def test_the_first_rows_of_a_page_are_the_page_of_that_size(policy, sessions, asked):
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as patches:
        patches.enter_context(mock.patch.object(ladder, "RUNG_DEPTH_MIN", 1))
        patches.enter_context(mock.patch.object(ladder, "DEDUP_DEPTH", 1))
        home = Path(tmp) / "home"
        write(home, sessions)
        Indexer(Path(tmp) / "index", env={"HOME": str(home)}).refresh()
        engine = Engine(Path(tmp) / "index", policy=policy)
        for query in [*WORDS[:3], *asked]:
            full = short_ids(engine.search(query, limit=100, before=0, after=0, now=NOW))
            for n in (1, 2, 3, 5, 8):
                assert short_ids(engine.search(query, limit=n, before=0, after=0, now=NOW)) == full[:n], (query, n)


# -- the collector's six ways of scoring agree -----------------------------------------------------

def words_in(fields, w: str, boost: float = 1.0):
    from crabsearch.index.union import FlatOr
    return FlatOr([Term(f, w, boost=WEIGHTS[f]) for f in fields], boost=boost)


def phrase_in(fields, ws: list[str], cls=Phrase):
    from crabsearch.index.union import FlatOr
    return FlatOr([cls(f, ws, boost=WEIGHTS[f]) for f in fields if f in PHRASE_FIELDS])


FILTER_TERMS = [Term("agent", "claude", boost=0.0), Term("agent", "codex", boost=0.0), Term("role", "user", boost=0.0),
                Term("role", "assistant", boost=0.0)]
PROJECT = ZeroScore(Or([Term("project", "/home/dev/webapp"), Prefix("project", "/home/dev/webapp/")]))

SHAPES = {
    # name: (query from three words and a filter choice, the function that must score it)
    "an exact phrase": (lambda a, b, c, f: phrase_in(MESSAGE_FIELDS, [a, b], TextPhrase), "phrases.scores"),
    "every word in one message": (lambda a, b, c, f: And([words_in(MESSAGE_FIELDS, a), words_in(MESSAGE_FIELDS, b)]),
                                  "conjunction.scores"),
    "words and phrases in one union": (lambda a, b, c, f: from_union(words_in(MESSAGE_FIELDS, a),
                                                                      phrase_in(MESSAGE_FIELDS, [b, c])),
                                       "mixed.scores"),
    "a word with filter terms": (lambda a, b, c, f: And([words_in(MESSAGE_FIELDS, a), *f]), "_best_by_term"),
    "a word alone": (lambda a, b, c, f: words_in(MESSAGE_FIELDS, a), "_best_by_term"),
    "anything else": (lambda a, b, c, f: And([words_in(MESSAGE_FIELDS, a), Term("agent", "claude", boost=0.0), PROJECT]),
                      "_terms"),
}


def from_union(*parts):
    from crabsearch.index.union import FlatOr
    return FlatOr(list(parts))


def walked_best(searcher, query, limit: int) -> list[tuple]:
    """What the collector must give: walking Whoosh's matcher, each session's best document
    (the higher score; in a tie the first), the ``limit`` best sessions by score (a tie: the
    lower document), as ``(skey, score, docnum)``."""
    best: dict[str, tuple[float, int]] = {}
    context = searcher.context(needs_current=True)
    for sub, offset in searcher.leaf_searchers():
        m = query.matcher(sub, context)
        while m.is_active():
            d = offset + m.id()
            sc = m.score()
            k = searcher.stored_fields(d)["skey"]
            if k not in best or sc > best[k][0]:
                best[k] = (sc, d)
            m.next()
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:limit]
    return [(k, sc, d) for k, (sc, d) in ranked]


def scorers_called(searcher, query, limit: int):
    """``best_per_session(query)`` as ``(skey, score, docnum)``, and the names of the scoring
    functions it called."""
    called: set[str] = set()
    spied = [(phrases, "scores", "phrases.scores"), (conjunction, "scores", "conjunction.scores"),
             (mixed, "scores", "mixed.scores"), (collect, "_best_by_term", "_best_by_term"), (collect, "_terms", "_terms")]
    with ExitStack() as patches:
        for module, attr, name in spied:
            real = getattr(module, attr)
            patches.enter_context(mock.patch.object(module, attr, side_effect=lambda *a, _r=real, _n=name, **k:
                                                    called.add(_n) or _r(*a, **k)))
        top, partial = best_per_session(searcher, query, limit, SegmentKeys())
    assert not partial
    return [(k, b.score, b.docnum) for k, b in top], called


@examples
@given(sessions=history(least=2), codex=st.lists(text, min_size=1, max_size=4), split=st.integers(1, 5),
       drop=st.booleans(), shape=st.sampled_from(sorted(SHAPES)),
       words=st.lists(word, min_size=3, max_size=3), filter_terms=st.lists(st.sampled_from(FILTER_TERMS), min_size=1,
                                                                          max_size=2, unique_by=lambda t: t.text),
       limit=st.sampled_from([1, 2, 5, 100]))
def test_every_way_of_scoring_gives_the_matchers_best_sessions(sessions, codex, split, drop, shape, words,
                                                               filter_terms, limit):
    build, scorer = SHAPES[shape]
    query = build(*words, filter_terms)
    with tempfile.TemporaryDirectory() as tmp:
        home, index = Path(tmp) / "home", Path(tmp) / "index"
        cut = min(split, len(sessions) - 1)  # two refreshes: two segments at least
        first = write(home, sessions[:cut])
        Indexer(index, env={"HOME": str(home)}).refresh()
        write(home, sessions[cut:], first=cut)
        c = CodexSession(home)
        for prompt in codex:
            c.user(prompt).assistant(f"noted {prompt}")
        c.write()
        Indexer(index, env={"HOME": str(home)}).refresh()
        ix = delete_without_merging(index, f"claude:{first[0].session_id}") if drop else open_index(index, create=False)[0]
        with ix.searcher() as searcher:
            got, called = scorers_called(searcher, query, limit)
            assert got == walked_best(searcher, query, limit)
            if got:
                assert scorer in called, called

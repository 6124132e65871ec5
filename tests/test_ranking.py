"""Ranking and query-language rules through the engine: boosts, ladder, repair, exclusion,
prefixes, filters, sort, explain, tool-output scope, masking."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from crabsearch.index import Indexer
from crabsearch.search import Engine

from builders import ClaudeSession, CodexSession

NOW = datetime.now(timezone.utc)
SECRET = "sk-live-FAKEFAKEFAKE1234567890"


def build(tmp_path, *sessions, tools=False):
    for s in sessions:
        s.write()
    home = sessions[0].home
    Indexer(tmp_path / "index", env={"HOME": str(home)}, index_tool_output=tools).refresh()
    return Engine(tmp_path / "index")


def ids(result):
    return [h.session.session_id[:4] for h in result.hits]


def test_title_match_counts_on_top_of_the_best_message(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "aaaa0000-0000-4000-8000-000000000000").user("the quasar pipeline broke"),
              ClaudeSession(home, "bbbb0000-0000-4000-8000-000000000000").user("the quasar pipeline broke")
              .title("quasar outage"))
    r = e.search("quasar")
    assert ids(r) == ["bbbb", "aaaa"]
    assert r.hits[0].score > r.hits[1].score


def test_summary_match_counts_on_top(tmp_path):
    home = tmp_path / "h"
    s = ClaudeSession(home, "cccc0000-0000-4000-8000-000000000000").user("look at the nebula cache")
    s.lines.append({"type": "user", "isCompactSummary": True, "uuid": "c-sum", "parentUuid": None,
                    "sessionId": s.session_id, "cwd": s.cwd, "timestamp": "2026-03-14T11:00:00.000Z",
                    "message": {"role": "user", "content": "Summary: we tuned the nebula cache eviction."}})
    e = build(tmp_path, ClaudeSession(home, "dddd0000-0000-4000-8000-000000000000").user("look at the nebula cache"), s)
    assert ids(e.search("nebula"))[0] == "cccc"


def test_acting_assistant_turn_outranks_plain_assistant_text(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "eeee0000-0000-4000-8000-000000000000").user("hi").assistant("patching the zircon module"),
              ClaudeSession(home, "ffff0000-0000-4000-8000-000000000000").user("hi").assistant("patching the zircon module")
              .tool("Edit", {"file_path": "z.py"}, "ok"))
    assert ids(e.search("zircon")) == ["ffff", "eeee"]


def test_recency_breaks_ties(tmp_path):
    home = tmp_path / "h"
    old = ClaudeSession(home, "1111aaaa-0000-4000-8000-000000000000", start=NOW - timedelta(days=9)).user("same words here")
    new = ClaudeSession(home, "2222bbbb-0000-4000-8000-000000000000", start=NOW - timedelta(days=1)).user("same words here")
    e = build(tmp_path, old, new)
    assert ids(e.search("same words")) == ["2222", "1111"]


@pytest.fixture
def corpus(tmp_path):
    home = tmp_path / "h"
    return build(
        tmp_path,
        ClaudeSession(home, "a1a1a1a1-0000-4000-8000-000000000000", cwd="/home/dev/webapp",
                      start=NOW - timedelta(days=2)).user("the coalesce function drops nulls")
        .assistant("use coalesce with a default")
        .tool("Bash", {"command": "psql"}, f"token {SECRET} appears in this tool output with walrus"),
        ClaudeSession(home, "b2b2b2b2-0000-4000-8000-000000000000", cwd="/srv/api",
                      start=NOW - timedelta(days=40)).user("coalesce again, but for the api")
        .assistant("the api coalesce is fine"),
        CodexSession(home, "c3c3c3c3-0000-4000-8000-000000000000", cwd="/home/dev/webapp/tools",
                     start=NOW - timedelta(hours=3)).user("codex: the prefetch loop stalls").assistant("fixed prefetching"),
        tools=True,
    )


def test_repair_replaces_an_unknown_word_with_a_frequent_neighbour(corpus):
    r = corpus.search("coalesec")
    assert r.route == "repair" and r.corrections == {"coalesec": "coalesce"}
    assert len(r.hits) == 2 and "coalesce" in r.terms


def test_repair_of_the_second_letter_and_nearest_first(tmp_path):
    """Words keeping the first two letters are looked at first, but a nearer word that only
    keeps the first letter still wins over a farther one keeping both."""
    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "a1a1a1a1-0000-4000-8000-000000000000").user("the reconcile job").user("reconcile"),
              ClaudeSession(home, "b2b2b2b2-0000-4000-8000-000000000000").user("rebalance it").user("rebalance"))
    assert e.search("rceoncile").corrections == {"rceoncile": "reconcile"}  # 2nd letter typo
    assert e.search("rebalnce").corrections == {"rebalnce": "rebalance"}  # 1 edit, same 2 letters
    assert e.search("rxconcile").corrections == {"rxconcile": "reconcile"}  # substituted 2nd letter


def test_repair_reads_a_letters_words_once_per_searcher(tmp_path, monkeypatch):
    """Each key of a misspelt word repairs it again (search as you type): the words of its
    first letters are read from the index once per searcher, and the repairs are the same as
    reading them each time; a refreshed index (a new searcher) reads them afresh."""
    from crabsearch.index import querying

    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "a1a1a1a1-0000-4000-8000-000000000000").user("the reconcile job").user("reconcile"),
              ClaudeSession(home, "b2b2b2b2-0000-4000-8000-000000000000").user("rebalance it").user("rebalance"))
    reads = []
    vocabulary = querying._vocabulary
    monkeypatch.setattr(querying, "_vocabulary", lambda *a: reads.append(a[2]) or vocabulary(*a))
    typed = ["rceo", "rceon", "rceonc", "rceonci", "rceoncil", "rceoncile", "rebalnce", "rxconcile"]
    first = [e.search(w).corrections for w in typed]
    assert sorted(reads) == ["r", "rc", "re", "rx"]  # each once (rebalnce: rebalance within "re")
    assert first[-3:] == [{"rceoncile": "reconcile"}, {"rebalnce": "rebalance"}, {"rxconcile": "reconcile"}]
    assert e._get_searcher().__dict__.pop("_crab_vocabulary")  # a new searcher keeps none
    monkeypatch.setattr(querying, "VOCABULARY_MAX", 0)  # nothing kept: read at every repair
    assert [e.search(w).corrections for w in typed] == first
    assert len(reads) > 10  # read again at each repair


def test_repair_towards_a_word_found_only_once_when_nothing_else_is_close(corpus):
    r = corpus.search("prefetchh")  # 'prefetch' is in one message only (issue 11, problem 6)
    assert r.route == "repair" and r.corrections == {"prefetchh": "prefetch"} and ids(r) == ["c3c3"]
    assert r.notes == ["prefetchh → prefetch: a word found in one message only"]


def test_exclusion(corpus):
    assert ids(corpus.search("coalesce -api")) == ["a1a1"]


def test_prefix(corpus):
    assert ids(corpus.search("prefetch*")) == ["c3c3"]


def test_quoted_phrase_needs_adjacency(corpus):
    exact = corpus.search('"drops nulls"')
    assert ids(exact) == ["a1a1"] and exact.route == "phrase" and exact.notes == []
    # in no session in that order: its words instead (not a phrase match), and said
    loose = corpus.search('"nulls drops"')
    assert ids(loose) == ["a1a1"] and loose.route != "phrase"
    assert loose.notes == ['no exact match for "nulls drops": showing sessions with its words']


def test_filters_narrow_inside_the_search(corpus):
    assert ids(corpus.search("coalesce project:webapp")) == ["a1a1"]
    assert ids(corpus.search("coalesce project:/srv")) == ["b2b2"]
    assert sorted(ids(corpus.search("prefetching project:/home/dev/webapp"))) == ["c3c3"]
    assert ids(corpus.search("stalls agent:codex")) == ["c3c3"]
    assert corpus.search("stalls agent:claude").hits == []
    assert ids(corpus.search("coalesce role:user since:7d")) == ["a1a1"]
    assert ids(corpus.search("coalesce until:30d")) == ["b2b2"]
    assert ids(corpus.search("fine role:assistant")) == ["b2b2"]
    assert corpus.search("fine role:user").hits == []


def test_filters_alone_list_recent_matching_sessions(corpus):
    r = corpus.search("agent:codex")
    assert r.route == "recent" and ids(r) == ["c3c3"]


def test_tool_output_only_with_in_tools(corpus):
    assert corpus.search("walrus").hits == []
    [hit] = corpus.search("walrus in:tools").hits
    assert hit.item.label == "tool:Bash"
    assert SECRET not in hit.item.text and "sk-liv" in hit.item.text  # masked on display
    assert corpus.search("FAKEFAKEFAKE1234567890 in:tools").hits == []  # masked before indexing


def test_sort_newest(corpus):
    assert ids(corpus.search("coalesce", sort="newest")) == ["a1a1", "b2b2"]
    r = corpus.search("the", sort="newest")
    updated = [h.session.updated for h in r.hits]
    assert updated == sorted(updated, reverse=True)


def test_explain(corpus):
    [hit] = corpus.search("drops nulls", explain=True).hits
    ex = hit.explain
    assert ex["route"] == "phrase" and "user:drops" in ex["matched"] and ex["weights"]["user"] == 1.5


def test_masked_on_display_unless_asked(corpus):
    ref = corpus.find_session("a1a1a1a1")
    masked = corpus.page(ref, 0, 10).messages[-1].text
    plain = corpus.page(ref, 0, 10, redact=False).messages[-1].text
    assert SECRET not in masked and SECRET in plain


def test_stopwords_do_not_rank_but_a_quoted_stopword_phrase_matches(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "99990000-0000-4000-8000-000000000000").user("to be or not to be, said the prince"),
              ClaudeSession(home, "88880000-0000-4000-8000-000000000000").user("the prince of the city"))
    assert ids(e.search('"to be or not to be"')) == ["9999"]
    r = e.search("the prince")  # "the" is dropped from ranking; both have "prince"
    assert sorted(ids(r)) == ["8888", "9999"]


def test_nfd_and_nfc_find_each_other(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, ClaudeSession(home, "77770000-0000-4000-8000-000000000000").user("re\u0301sume\u0301 parsing"))
    assert ids(e.search("résumé")) == ["7777"] and ids(e.search("resume")) == ["7777"]


def test_prefix_matches_are_highlighted(corpus):
    r = corpus.search("prefetch*")
    assert "prefetch*" in r.terms
    item = r.hits[0].item
    marked = [item.text[a:b] for a, b in Engine.spans(item.text, r.terms)]
    assert marked and all(w.startswith("prefetch") for w in marked)


def test_sort_newest_shows_each_sessions_newest_matching_message(tmp_path):
    """Newest first orders sessions by their newest matching message, and that message is the
    hit (Whoosh's collapse over a reverse-sorted collector kept an older one)."""
    home = tmp_path / "h"
    old = ClaudeSession(home, "0001aaaa-0000-4000-8000-000000000000", start=NOW - timedelta(days=3))
    old.user("ocelot one").assistant("fine").user("ocelot two").assistant("ocelot three, the newest")
    new = ClaudeSession(home, "0002bbbb-0000-4000-8000-000000000000", start=NOW - timedelta(days=1))
    new.user("ocelot early").assistant("ocelot late")
    e = build(tmp_path, old, new)
    r = e.search("ocelot", sort="newest", before=0, after=0)
    assert [(h.session.session_id[:4], h.message_index) for h in r.hits] == [("0002", 1), ("0001", 3)]
    by_score = e.search("ocelot", before=0, after=0)
    assert {h.session.session_id[:4] for h in by_score.hits} == {"0001", "0002"}


def test_a_prefix_of_many_words_is_searched_as_its_commonest(tmp_path, monkeypatch):
    """A ``prefix*`` with more words in a field than ``MAX_PREFIX_TERMS`` is searched as the ones
    in the most documents (a two-letter prefix read as every word took seconds), and the search
    says so; under the cap, every word."""
    from crabsearch.index import querying

    monkeypatch.setattr(querying, "MAX_PREFIX_TERMS", 2)
    monkeypatch.setattr("crabsearch.search.engine.MAX_PREFIX_TERMS", 2)
    home = tmp_path / "h"
    sessions = [ClaudeSession(home, f"{n:04d}0000-0000-4000-8000-000000000000").user(text)
                for n, text in enumerate(["zebrafish tank", "zebrafish food", "zebrafish eggs",
                                          "zebrawood desk", "zebrawood chair", "zebrabug rarity"])]
    e = build(tmp_path, *sessions)
    r = e.search("zebr*", before=0, after=0)
    assert sorted(ids(r)) == ["0000", "0001", "0002", "0003", "0004"]  # not zebrabug, in one message
    assert r.notes == ["zebr* searched as its 2 commonest words (of 3)"]
    r = e.search("zebraf*", before=0, after=0)
    assert sorted(ids(r)) == ["0000", "0001", "0002"] and r.notes == []


def test_an_excluded_prefix_leaves_out_every_word_it_starts(tmp_path):
    """``-ret*`` leaves out the sessions holding any word starting with ``ret`` (it was read as
    the word ``ret``, which left out nothing: a fresh-user trial); ``-t*`` says a prefix needs
    two letters."""
    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "a1a10000-0000-4000-8000-000000000000").user("database retry logic"),
              ClaudeSession(home, "b2b20000-0000-4000-8000-000000000000").user("database returns nulls"),
              ClaudeSession(home, "c3c30000-0000-4000-8000-000000000000").user("database timeout"))
    assert ids(e.search("database -ret*", before=0, after=0)) == ["c3c3"]
    assert sorted(ids(e.search("database -ret", before=0, after=0))) == ["a1a1", "b2b2", "c3c3"]
    r = e.search("database -t*", before=0, after=0)
    assert r.notes == ["-t*: a prefix needs two letters or more; t searched as a word"]


def test_prefix_scores_do_not_depend_on_the_segment(tmp_path):
    """``auth*`` is scored as the sum of its words' BM25F scores. (Whoosh's ``Prefix`` scored a
    word with BM25 in a segment where the prefix had one word, and without it, boosted, where
    it had several: the same message scored differently by where it was indexed.)"""
    home = tmp_path / "h"
    idx = Indexer(tmp_path / "index", env={"HOME": str(home)})
    ClaudeSession(home, "a1a1a1a1-0000-4000-8000-000000000000", start=NOW - timedelta(days=2)) \
        .user("the authentication step fails").write()
    idx.refresh()
    ClaudeSession(home, "b2b2b2b2-0000-4000-8000-000000000000", start=NOW - timedelta(days=1)) \
        .user("the authentication step fails").write()
    ClaudeSession(home, "c3c3c3c3-0000-4000-8000-000000000000", start=NOW - timedelta(days=1)) \
        .user("authorize the application first, then look at the logs").write()  # same segment as b2b2
    idx.refresh()
    hits = Engine(tmp_path / "index").search("auth*", before=0, after=0).hits
    by_id = {h.session.session_id[:4]: h.score for h in hits}
    assert set(by_id) == {"a1a1", "b2b2", "c3c3"}
    assert by_id["a1a1"] == pytest.approx(by_id["b2b2"])


@pytest.mark.parametrize("filters", ["since:2026-01-01", "until:2099-01-01", "project:/home/dev",
                                     "project:webapp", "agent:claude", "since:2026-01-01 project:/home/dev/webapp"])
def test_filters_add_nothing_to_scores(tmp_path, filters):
    """A filter narrows; it never changes a score (Whoosh's constant-score wrapper added ~1.0
    to every match of a date range or a project prefix)."""
    home = tmp_path / "h"
    e = build(tmp_path,
              ClaudeSession(home, "a1a1a1a1-0000-4000-8000-000000000000", start=NOW - timedelta(days=2))
              .user("the heron cache").assistant("heron heron").title("heron notes"),
              ClaudeSession(home, "b2b2b2b2-0000-4000-8000-000000000000", cwd="/home/dev/webapp/sub",
                            start=NOW - timedelta(days=1)).user("a heron"))
    plain = {h.session.session_id: h.score for h in e.search("heron").hits}
    narrowed = {h.session.session_id: h.score for h in e.search(f"heron {filters}").hits}
    assert narrowed and all(narrowed[k] == pytest.approx(plain[k]) for k in narrowed)


def test_sort_newest_prefers_the_later_of_messages_with_the_same_time(tmp_path):
    home = tmp_path / "h"
    s = ClaudeSession(home, "0003cccc-0000-4000-8000-000000000000").user("gannet first").assistant("gannet second")
    s.lines[1]["timestamp"] = s.lines[0]["timestamp"]
    e = build(tmp_path, s)
    [hit] = e.search("gannet", sort="newest").hits
    assert hit.message_index == 1


def test_a_quoted_phrase_alone_is_the_phrase_route(corpus):
    r = corpus.search('"drops nulls"')
    assert r.route == "phrase" and len(r.hits) == 1


def test_a_long_hit_message_is_cut_around_its_match(tmp_path):
    """The window text of a hit deep in a long message shows the match (trial finding: the
    first 1 KB was shown, without it)."""
    home = tmp_path / "h"
    long = " ".join(f"filler{n}" for n in range(900)) + " the albatross retry loop " + "tail " * 300
    e = build(tmp_path, ClaudeSession(home, "0004dddd-0000-4000-8000-000000000000").user("hi").assistant(long))
    [hit] = e.search("albatross").hits
    assert "albatross" in hit.item.text and hit.item.text.startswith("… ") and hit.item.truncated
    assert len(hit.item.text.encode()) <= 1024
    [again] = [i for i in e.window(hit, 1, 1) if i.hit]  # widening the window keeps the cut
    assert "albatross" in again.text
    [short] = e.search("hi").hits
    assert not short.item.text.startswith("…")


def test_any_with_one_known_word_ranks_like_that_word(corpus):
    """A word with no postings anywhere (and no repair) beside a known one: the any rung is
    the known word's best hits (one best-hit scan instead of gathering every match)."""
    r = corpus.search("coalesce zzqqxxvv")
    assert r.route == "any" and r.corrections == {}
    assert sorted(ids(r)) == ["a1a1", "b2b2"]
    assert all("coalesce" in h.item.text for h in r.hits)
    newest = corpus.search("coalesce zzqqxxvv", sort="newest")
    assert ids(newest) == ["a1a1", "b2b2"]

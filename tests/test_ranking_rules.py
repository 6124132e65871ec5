"""Issue 11's numbered ranking problems, each as an input and the expected order: the ladder
fills the page from lower rungs, a session-wide match scores proximity, titles count per word,
identifier parts count only in a row, folding (``ß``, apostrophes, no repair across a folded
letter) and spelling repair towards a word found once."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest


from builders import ClaudeSession, indexed_engine, short_ids

NOW = datetime.now(timezone.utc)


def sid(n: int) -> str:
    return f"{n:04d}aaaa-0000-4000-8000-000000000000"


build, ids = indexed_engine, short_ids


def aged(home, n, days, cwd="/home/dev/webapp"):
    return ClaudeSession(home, sid(n), cwd=cwd, start=NOW - timedelta(days=days))


# -- 1. the ladder fills the page from the next rungs ------------------------------------------


def test_a_rung_with_fewer_sessions_than_the_limit_is_filled_from_the_next_rungs(tmp_path):
    """Six ordinary words: one long session holds every word somewhere (the session rung); a
    short session where the assistant said five of them in one message comes next (any rung),
    where the search used to stop at the first rung and show the long session alone."""
    home = tmp_path / "h"
    long = aged(home, 1, 5).user("hello")
    for i, word in enumerate(["lantern", "harbor", "ledger", "copper", "violet", "meadow"]):
        long.assistant(f"note {i}: something about the {word} here").user(f"ok {i}")
        long.assistant("unrelated filler text " * 5)
    short = aged(home, 2, 1).user("what did we decide?").assistant(
        "the lantern, the harbor, the ledger, the copper and the violet stay as they are")
    e = build(tmp_path, long, short)
    r = e.search("lantern harbor ledger copper violet meadow")
    assert r.route == "session"
    assert ids(r) == ["0001", "0002"]
    assert [h.route for h in r.hits] == ["session", "any"]
    assert json.loads(json.dumps(r.to_json()))["hits"][1]["route"] == "any"


def test_filled_rows_never_repeat_a_session_and_higher_rungs_stay_above(tmp_path):
    home = tmp_path / "h"
    phrase = aged(home, 1, 9).user("the walrus carpenter story")
    both = aged(home, 2, 1).user("carpenter tools").assistant("a walrus on the beach")  # session rung
    one = aged(home, 3, 0).user("a walrus again")  # any rung
    e = build(tmp_path, phrase, both, one)
    r = e.search("walrus carpenter")
    assert r.route == "phrase"
    assert ids(r) == ["0001", "0002", "0003"]
    assert [h.route for h in r.hits] == ["phrase", "session", "any"]
    assert ids(e.search("walrus carpenter", limit=1)) == ["0001"]


# -- 2. a session-wide match scores proximity ------------------------------------------------


def test_session_rung_prefers_words_close_together_over_a_long_session(tmp_path):
    """Words scattered over a long session (each in many short messages, which BM25 scores
    high) used to outrank a short session holding them in two adjacent messages."""
    home = tmp_path / "h"
    long = aged(home, 1, 1).user("start")
    for word in ["gizmo", "sprocket"] * 4:
        long.assistant(word)
        for i in range(12):
            long.user(f"filler number {i} about nothing in particular").assistant("ok")
    close = aged(home, 2, 9).user("a quick question about the bench").assistant(
        "the gizmo keeps turning on the bench today").assistant("then the sprocket slipped off the shaft")
    e = build(tmp_path, long, close)
    r = e.search("gizmo sprocket")
    assert r.route == "session"
    assert ids(r) == ["0002", "0001"]


def test_the_any_rung_prefers_the_words_close_together_over_more_of_them_far_apart(tmp_path):
    """A description of a short session (three of its words in one exchange) against a long
    session that mentions five of the six words once each, hundreds of messages apart: the
    any rung ranks by the best window of messages, not by how many words a session holds
    anywhere."""
    home = tmp_path / "h"
    long = aged(home, 1, 1).user("start")
    for word in ["kestrel", "harbor", "ledger", "copper", "violet"]:
        long.assistant(f"a note that mentions the {word} once")
        for i in range(15):
            long.user(f"filler {i} about nothing").assistant("ok")
    short = aged(home, 2, 9).user("the kestrel ledger broke").assistant("the kestrel ledger copper wiring is loose")
    e = build(tmp_path, long, short)
    r = e.search("kestrel harbor ledger copper violet meadow")
    assert r.route == "any"
    assert ids(r) == ["0002", "0001"]


def test_bm25f_statistics_count_the_documents_that_have_the_field(tmp_path):
    """The average length of a field is over the documents that have it, and a word has one
    idf whatever field holds it (index.whoosh_fixes 7 and 8): a title is not fifty times
    longer than average, and a word in a rare field is not rarer for it."""
    home = tmp_path / "h"
    build(tmp_path, aged(home, 1, 1).user("one two three four").title("alpha beta"),
          aged(home, 2, 2).user("five six").assistant("seven").title("gamma delta epsilon zeta"))
    from crabsearch.index.store import open_index
    ix, _ = open_index(tmp_path / "index", create=False)
    with ix.searcher() as s:
        assert s.avg_field_length("title") == 3.0  # (2 + 4) / 2 session documents
        assert s.avg_field_length("user") == 3.0  # (4 + 2) / 2 user messages
        assert s.idf("title", "alpha") == s.idf("user", "alpha") == s.idf("user", "one")


# -- 3. titles and summaries count per word --------------------------------------------------


def test_a_title_holding_some_of_the_words_adds_on_the_phrase_rung(tmp_path):
    home = tmp_path / "h"
    titled = aged(home, 1, 9).user("a ranking sanity check before release").title("ranking")
    plain = aged(home, 2, 1).user("a ranking sanity check before release").title("release notes")
    e = build(tmp_path, titled, plain)
    r = e.search("ranking sanity", explain=True)
    assert r.route == "phrase"
    assert ids(r) == ["0001", "0002"]
    assert r.hits[0].explain["session_score"] > 0


def test_a_summary_holding_some_of_the_words_adds_on_the_all_rung(tmp_path):
    home = tmp_path / "h"
    summarized = aged(home, 1, 9).user("sanity of the ranking, checked").compact("We tuned the ranking.")
    plain = aged(home, 2, 1).user("sanity of the ranking, checked")
    summarized.title("weekly notes")
    plain.title("weekly notes")
    e = build(tmp_path, summarized, plain)
    r = e.search("ranking sanity")
    assert r.route == "all"
    assert ids(r) == ["0001", "0002"]


# -- 4. identifier parts count only in a row -------------------------------------------------


def test_identifier_parts_match_only_adjacent_and_in_order(tmp_path):
    home = tmp_path / "h"
    loose = aged(home, 1, 1).user("get a user by id: timeout")
    in_a_row = aged(home, 2, 9).user("we call get user by id twice per request and it runs into a timeout")
    e = build(tmp_path, loose, in_a_row)
    assert ids(e.search("getUserById")) == ["0002"]
    r = e.search("getUserById timeout")
    assert r.route == "all"
    assert ids(r) == ["0002", "0001"] and [h.route for h in r.hits] == ["all", "any"]


def test_an_identifier_found_nowhere_reports_that_nothing_matched_it(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("fetch the order, look it up by the ref column"))
    r = e.search("fetchOrderByRef")
    assert r.hits == [] and r.route is None
    assert any("fetchOrderByRef" in n for n in r.notes)


# -- 5. folding ------------------------------------------------------------------------------


def test_sharp_s_folds_to_ss_both_ways(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("die Straße ist gesperrt"),
              aged(home, 2, 2).user("Hauptstrasse 5, second floor"),
              aged(home, 3, 3).user("the state of the state machine"))
    assert ids(e.search("Straße")) == ["0001"]
    assert ids(e.search("strasse")) == ["0001"]
    assert ids(e.search("Hauptstraße")) == ["0002"]


def test_no_repair_across_a_folded_letter(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("the user table").assistant("user rows for the user"),
              aged(home, 2, 2).user("another user question"))
    r = e.search("über")
    assert r.corrections == {} and r.hits == []


def test_an_apostrophe_keeps_the_word_whole(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("this isn't what the tests expect"),
              aged(home, 2, 2).user("the isn module of t"))
    assert ids(e.search("isnt")) == ["0001"]
    assert ids(e.search("isn't")) == ["0001"]
    assert ids(e.search('"isn\'t what"')) == ["0001"]


# -- 6. repair towards a word found once -----------------------------------------------------


def test_repair_to_a_word_found_in_one_message_when_nothing_else_is_close(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("the coalesce call drops nulls"),
              aged(home, 2, 2).user("something else entirely"))
    r = e.search("coalesec")
    assert r.route == "repair" and r.corrections == {"coalesec": "coalesce"}
    assert ids(r) == ["0001"]
    assert any("one message" in n for n in r.notes)


def test_a_frequent_neighbour_still_wins_over_a_word_found_once(tmp_path):
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("reconcile the ledger").assistant("reconcile done"),
              aged(home, 2, 2).user("reconciles once"))
    r = e.search("reconcil")
    assert r.corrections == {"reconcil": "reconcile"}
    assert not any("one message" in n for n in r.notes)


def test_a_number_is_never_repaired_into_another(tmp_path):
    """A fresh-user trial: ``55444`` was searched as ``554``, ``PR 4822`` as ``482`` (one digit
    away is another issue, port or build, not a typo). A word with a digit gets no repair; it is
    still completed while typed."""
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("merged PR 4821 and port 554"),
              aged(home, 2, 2).user("port 554 again, see PR 4821"),
              aged(home, 3, 3).user("build v2beta7 failed"), aged(home, 4, 4).user("build v2beta7 again"))
    for q in ("55444", "4822", "PR 4822", "v2beta8"):
        r = e.search(q)
        assert r.corrections == {}, q
    assert e.search("55444").hits == []
    assert e.search("482", typing=True).corrections == {"482": "4821"}  # completed while typed


def test_a_word_found_only_in_a_summary_is_not_repaired(tmp_path):
    """The trial's session whose messages compaction deleted kept its summary: a word found only
    there was found (route ``all``) and repaired too (``4821 -> 482``)."""
    home = tmp_path / "h"
    s = aged(home, 1, 1).user("deploy the staging build").assistant("done")
    s.lines.append({"type": "summary", "summary": "Staging deploy of zephyrine", "leafUuid": s.lines[-1]["uuid"]})
    s.title("Staging deploy")
    e = build(tmp_path, s, aged(home, 2, 2).user("zephyrina one"), aged(home, 3, 3).user("zephyrina two"))
    r = e.search("zephyrine")
    assert r.corrections == {} and ids(r)[:1] == ["0001"]


def test_a_name_whose_parts_are_indexed_is_not_repaired_into_another_name(tmp_path):
    """A fresh-user trial: a pasted line of code, ``filter(User.id == user_id)``, was searched
    as ``user.go`` and ``use_is`` (the indexed names nearest to the whole forms). A name joined
    by punctuation is repaired only into the same letters joined otherwise; a plain word is still
    repaired, and a name found nowhere is said once, however often it is typed."""
    home = tmp_path / "h"
    e = build(tmp_path, aged(home, 1, 1).user("open user.go and return the user and its id, use_is twice"),
              aged(home, 2, 2).user("user.go again: return the user check and the id, use_is too"),
              aged(home, 3, 3).user("the deploy checklist quokkaai"), aged(home, 4, 4).user("deploy again"))
    r = e.search("return filter(User.id == user_id)")  # the names: not whole, nor parts in a row
    assert r.corrections == {} and set(ids(r)) == {"0001", "0002"}
    # the same letters joined otherwise are still repaired
    assert e.search("quokka-ai").corrections == {"quokka-ai": "quokkaai"}
    assert e.search("deplyo").corrections == {"deplyo": "deploy"}
    twice = e.search("zork.quux(1) and zork.quux(1)")
    assert [n for n in twice.notes if n.startswith("nothing matched")] == [
        "nothing matched zork.quux(1) (whole, or its parts in a row)"]

"""A phrase of words typed apart counts as running text, not glued inside one path or identifier
(``index.phrases``; issue 11: SpecStory histories quote each other's file names, so a session's
title words matched as a phrase in every session that linked its file)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from crabsearch.index.tokenizer import NAME_MARK, text_analyzer
from crabsearch.index.phrases import inside_name

from builders import ClaudeSession, indexed_engine, short_ids

NOW = datetime.now(timezone.utc)


def sid(n: int) -> str:
    return f"{n:04d}cccc-0000-4000-8000-000000000000"


def session(home, n, days=1):
    return ClaudeSession(home, sid(n), cwd="/home/dev/app", start=NOW - timedelta(days=days))


build, ids = indexed_engine, short_ids


def marks(text):
    return [t.pos for t in text_analyzer()(text, positions=True, mode="index") if t.text == NAME_MARK]


def test_names_are_marked_at_their_first_and_last_leaf_when_indexing():
    assert marks("see docs/set-up-cli.md now") == [1, 5]
    assert marks("call getUserById and foo_bar") == [1, 4, 6, 7]
    assert marks("a real-time end-to-end test") == []  # hyphenated words are running text
    assert marks("bump to v1.2.3") == [2, 4]
    assert not [t for t in text_analyzer()("see docs/set-up-cli.md now", positions=True) if t.text == NAME_MARK]


def test_inside_name():
    m = [1, 5, 8, 9]  # names over positions 1-5 and 8-9
    assert inside_name(m, 2, 4) and inside_name(m, 1, 5) and inside_name(m, 8, 9)
    assert not inside_name(m, 0, 2) and not inside_name(m, 4, 6) and not inside_name(m, 6, 7)
    assert not inside_name(m, 5, 6) and not inside_name(m, 9, 10) and not inside_name([], 1, 2)


def test_a_title_beats_messages_that_quote_a_file_named_after_it(tmp_path):
    """The session titled ``Set Up Lantern Tool With Bun`` comes first; sessions whose short
    messages link its history file (``...-set-up-lantern-tool-with-bun.md``) hold the words
    only inside that name and come after it, found by every word in one message."""
    home = tmp_path / "h"
    titled = session(home, 1, days=5).user("let us start the new project").title("Set Up Lantern Tool With Bun")
    titled.assistant("I created package.json for the lantern tool").user("now the bun config")
    titled.assistant("bun is configured")
    quoting = []
    for n in (2, 3):
        s = session(home, n, days=n - 1).user("what did we do before?")
        s.assistant("See .notes/history/2025-04-26_20-30-set-up-lantern-tool-with-bun.md")
        s.user("and later?").assistant(f"see .notes/history/2025-04-2{n}_other-work.md")
        quoting.append(s)
    e = build(tmp_path, titled, *quoting)
    r = e.search("Lantern Tool with Bun")
    assert r.route == "phrase"
    assert ids(r)[0] == "0001"
    assert sorted(ids(r)[1:]) == ["0002", "0003"]
    assert [h.route for h in r.hits] == ["phrase", "all", "all"]


def test_running_text_beats_an_identifier_spelling_the_words(tmp_path):
    """``token refresh race`` said as words is the phrase; ``token_refresh_race`` (a test's name)
    holds them too, in one name, and comes after; quoted, the phrase still matches the name."""
    home = tmp_path / "h"
    said = session(home, 1, days=4).user("there is a token refresh race when two tabs are open").assistant("ok")
    named = session(home, 2, days=1).user("run test_token_refresh_race please").assistant("it passes")
    e = build(tmp_path, said, named)
    r = e.search("token refresh race")
    assert ids(r) == ["0001", "0002"]
    assert [h.route for h in r.hits] == ["phrase", "all"]
    q = e.search('"token refresh race"')
    assert sorted(ids(q)) == ["0001", "0002"]


def test_inside_names_side_by_side():
    """A span over parts of two names in a row (``set_token refreshAccessToken``) is no running
    text either; a span with one plain word is (``access_token refresh``)."""
    m = [1, 2, 3, 5]  # names over positions 1-2 and 3-5
    assert inside_name(m, 2, 3) and inside_name(m, 1, 5) and inside_name(m, 2, 4)
    assert not inside_name([1, 2, 4, 5], 2, 4) and not inside_name(m, 5, 6) and not inside_name(m, 0, 1)


def test_words_typed_apart_across_two_names_are_not_the_phrase(tmp_path):
    """A fresh-user trial at 1 GB: ``token refresh`` listed ``set_token refreshAccessToken``
    as the exact phrase. Said in words, or with one word outside a name (``access_token
    refresh``), it is the phrase; across two names it is every word in one message; quoted,
    it matches anywhere."""
    home = tmp_path / "h"
    said = session(home, 1, days=4).user("the token refresh fails after an hour").assistant("ok")
    half = session(home, 2, days=3).user("the access_token refresh logic is wrong").assistant("ok")
    names = session(home, 3, days=1).user("call set_token refreshAccessToken then").assistant("ok")
    e = build(tmp_path, said, half, names)
    r = e.search("token refresh")
    assert ids(r)[2] == "0003" and sorted(ids(r)[:2]) == ["0001", "0002"]
    assert [h.route for h in r.hits] == ["phrase", "phrase", "all"]
    assert sorted(ids(e.search('"token refresh"'))) == ["0001", "0002", "0003"]

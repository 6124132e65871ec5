"""Search rules: best hit per session, windows, caps, odd queries, privacy, title anchoring."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from crabsearch.index import Indexer
from crabsearch.search import MAX_WINDOW, AmbiguousSession, Engine, clamp_window, cut_bytes

from builders import ClaudeSession, CodexSession, short_ids

SECRET = "sk-live-FAKEFAKEFAKE1234567890"


@pytest.fixture
def engine(tmp_path):
    home = tmp_path / "home"
    long = ClaudeSession(home, session_id="aaaaaaaa-0000-4000-8000-000000000001").title("Long pelican session")
    for i in range(650):
        long.user(f"pelican question number {i}").assistant(f"pelican answer {i}")
    long.write()
    ClaudeSession(home, session_id="bbbbbbbb-0000-4000-8000-000000000002").user(
        "one pelican only").assistant("ok").write()
    (ClaudeSession(home, session_id="cccccccc-0000-4000-8000-000000000003")
     .user("deploy the service please")
     .tool("Bash", {"command": f"export OPENAI_API_KEY={SECRET}"}, f"key is {SECRET} and zebrafish")
     .assistant("Deployed.").title("Ship the service")
     .write())
    CodexSession(home, session_id="dddddddd-0000-4000-8000-000000000004").user(
        "why does the retry backoff explode").assistant("the jitter is missing").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    e = Engine(tmp_path / "index")
    yield e
    e.close()


def test_one_row_per_session_and_long_sessions_cannot_crowd_out(engine):
    hits = engine.search("pelican", limit=20).hits
    ids = [h.session.session_id for h in hits]
    assert len(ids) == len(set(ids)) == 2
    assert "bbbbbbbb-0000-4000-8000-000000000002" in ids


def test_limit_caps_sessions(engine):
    assert len(engine.search("pelican", limit=1).hits) == 1


def test_window_default_and_hit_always_included(engine):
    [hit] = [h for h in engine.search("question number 300").hits if h.session.message_count > 100]
    assert len(hit.window) == 9
    assert sum(i.hit for i in hit.window) == 1
    assert hit.item.message_index == hit.message_index
    narrow = engine.search("question number 300", before=0, after=0).hits[0]
    assert [i.message_index for i in narrow.window] == [narrow.message_index]


@pytest.mark.parametrize("before,after", [(100, 100), (0, 100), (100, 0), (3, 1)])
def test_window_caps(before, after):
    rng = clamp_window(500, 1000, before, after)
    assert 500 in rng and len(rng) <= MAX_WINDOW
    assert len(clamp_window(0, 1, before, after)) == 1


def test_window_clamped_at_session_edges():
    assert list(clamp_window(0, 10, 4, 4)) == [0, 1, 2, 3, 4]
    assert list(clamp_window(9, 10, 4, 4)) == [5, 6, 7, 8, 9]


def test_unused_room_on_one_side_goes_to_the_other():
    assert list(clamp_window(0, 20, 20, 20)) == list(range(16))
    assert list(clamp_window(19, 20, 20, 20)) == list(range(4, 20))
    assert list(clamp_window(2, 20, 15, 15)) == list(range(0, 16))


def test_window_text_is_cut_to_1024_bytes_on_a_character_boundary(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("long message " + "é" * 2000 + " endmarker").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    [hit] = Engine(tmp_path / "index").search("endmarker").hits
    item = hit.item
    assert item.truncated and len(item.text.encode()) <= 1024
    assert cut_bytes("ab€", 3) == ("ab", True)


@pytest.mark.parametrize("query", ["foo(bar)", "C++", "a-b", '"unbalanced', "*", "AND", "OR NOT", "[", "\\",
                                   "", "   ", "pelican AND", "x" * 5000, "ü~^!@#$%", "agent:", "title:pelican"])
def test_any_text_is_a_query(engine, query):
    result = engine.search(query)
    assert isinstance(result.hits, list)


def test_long_query_is_cut_and_reported(engine):
    result = engine.search("pelican " * 200)
    assert result.cut and result.hits


def test_tool_output_and_arguments_are_not_searchable(engine):
    assert engine.search(SECRET).hits == []
    assert engine.search("FAKEFAKEFAKE1234567890").hits == []
    assert engine.search("zebrafish").hits == []
    assert engine.search("OPENAI_API_KEY").hits == []


def test_tool_names_are_searchable(engine):
    [hit] = engine.search("bash").hits
    assert hit.session.session_id.startswith("cccccccc")
    assert hit.item.label in ("tool-call:Bash", "tool:Bash")


def test_title_match_anchors_on_first_user_prompt(engine):
    [hit] = engine.search("ship").hits
    assert hit.session.title == "Ship the service"
    assert hit.message_index == hit.session.anchor_index == 0
    assert hit.item.text == "deploy the service please"


def test_user_words_outrank_the_same_assistant_words(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("hello").assistant("the gnocchi recipe").write()
    ClaudeSession(home).user("the gnocchi recipe").assistant("hello").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    hits = Engine(tmp_path / "index").search("gnocchi").hits
    assert [h.role for h in hits] == ["user", "assistant"]


def test_all_words_first_then_any_word(engine):
    result = engine.search("retry backoff")
    assert result.route == "phrase" and len(result.hits) == 1
    result = engine.search("backoff retry")  # not adjacent in this order: every word, anywhere
    assert result.route == "all" and len(result.hits) == 1
    result = engine.search("pelican jitter")
    assert result.route == "any" and len(result.hits) == 3


def test_agent_filter(engine):
    assert [h.session.agent for h in engine.search("retry", agent="codex").hits] == ["codex"]
    assert engine.search("retry", agent="claude").hits == []
    # the query's own agent: is overridden, and the answer says so (a fresh-user trial)
    result = engine.search("retry agent:claude", agent="codex")
    assert [h.session.agent for h in result.hits] == ["codex"]
    assert result.notes == ["agent:claude in the query is overridden: searching codex only"]
    assert engine.search("retry agent:codex", agent="codex").notes == []


def test_an_unclosed_quote_says_it_is_read_as_a_phrase(engine):
    """A fresh-user trial: ``"database timeout`` found nothing, and nothing said it was read as
    one phrase; the app's search as you type does not say it (the quote is still being typed)."""
    note = 'no closing quote: "retry backoff" searched as one phrase'
    assert engine.search('"retry backoff').notes == [note]
    assert engine.search('"retry backoff"').notes == []
    assert engine.search('"retry backoff', typing=True).notes == []


def test_a_quoted_phrase_found_nowhere_searches_its_words(engine):
    """A pasted error quotes a path or value that differs today: a quoted phrase no session
    holds emptied the page, although its words fill it. Its words are searched as plain words
    (in place), and the note says so; a phrase that matches keeps its exact meaning."""
    result = engine.search('why does the "retry jitter" explode')
    assert short_ids(result) == ["dddd"]
    assert result.notes == ['no exact match for "retry jitter": showing sessions with its words']
    exact = engine.search('"retry backoff" explode')
    assert short_ids(exact) == ["dddd"] and exact.notes == []
    assert engine.search('"retry backoff" pelican').hits == []  # found: still required, exactly
    assert engine.search('"backoff retry" pelican').hits  # not in that order anywhere: its words
    assert engine.search('"retry jitter', typing=False).notes == [
        'no exact match for "retry jitter": showing sessions with its words']  # not "searched as one phrase"


def test_codex_prompt_indexed_once(engine):
    [hit] = engine.search("explode").hits
    assert hit.session.agent == "codex"
    assert [i.role for i in hit.window].count("user") == 1


def test_recent_lists_sessions_newest_first(engine):
    recent = engine.recent(limit=10)
    assert len(recent) == 4
    updated = [h.session.updated for h in recent]
    assert updated == sorted(updated, reverse=True)


def test_find_session_and_page(engine):
    ref = engine.find_session("aaaaaaaa-0000-4000-8000-000000000001")
    assert ref is not None and ref.session.message_count == 1300
    page = engine.page(ref, 1290, 50)
    assert [m.message_index for m in page.messages] == list(range(1290, 1300))
    assert page.next_offset is None
    assert engine.page(ref, 0, 10).next_offset == 10
    assert engine.find_session("aaaaaaaa").session.session_id == ref.session.session_id
    assert engine.find_session("nope-not-there") is None


def test_unicode_round_trips(tmp_path):
    home = tmp_path / "home"
    ClaudeSession(home).user("naïve café 🚀 emoji test").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    [hit] = engine.search("cafe").hits
    assert hit.item.text == "naïve café 🚀 emoji test"


def test_missing_index_finds_nothing(tmp_path):
    engine = Engine(tmp_path / "nothing-here")
    assert engine.search("anything").hits == [] and engine.recent() == []


def test_time_limit_returns_partial_best_hits_per_session(engine):
    result = engine.search("pelican", time_limit=1e-9)
    assert result.partial
    ids = [h.session.session_id for h in result.hits]
    assert len(ids) == len(set(ids)) >= 1
    full = engine.search("pelican")
    assert not full.partial and len(full.hits) == 2


def test_a_stopped_search_returns_no_hits(engine):
    """``stop`` set (the app: a newer key made this search stale): partial, and no context
    windows read for an answer nobody will see; unset, the full answer."""
    import threading

    stop = threading.Event()
    assert len(engine.search("pelican", stop=stop).hits) == 2
    stop.set()
    result = engine.search("pelican", stop=stop)
    assert result.partial and result.hits == []


def test_filtered_searches_over_many_documents_do_not_crash(tmp_path):
    """Regression: zero-boost filter terms once crashed Whoosh's block-quality skipping
    (ZeroDivisionError) once a collector's heap was full; it takes more matches than the limit."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    for n in range(400):
        s = CodexSession(home, session_id=f"019a0000-1111-7222-8333-{n:012d}", cwd=f"/w/p{n % 3}")
        s.user(f"database timeout number {n} " + "and filler words " * (n % 7)).assistant("database checked")
        s.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    for q in ("agent:codex database", "project:p1 database", "role:user database", "database", "agent:codex"):
        for limit in (1, 5, 40):
            result = engine.search(q, limit=limit)
            assert len(result.hits) == limit, q


def test_branch_window_follows_the_hits_own_branch():
    from crabsearch.hits import branch_window

    # messages 2..5 were abandoned by a rewind; 6.. is the branch that replaced them
    assert branch_window(3, 10, 4, 4, [(2, 6)]) == [0, 1, 2, 3, 4, 5]  # own branch: never past 5
    assert branch_window(7, 10, 4, 2, [(2, 6)]) == [0, 1, 6, 7, 8, 9]  # active: skips 2..5
    assert branch_window(7, 10, 4, 2, []) == [3, 4, 5, 6, 7, 8, 9]
    assert branch_window(12, 30, 20, 20, [(2, 6), (8, 9)]) == [0, 1, 6, 7, *range(9, 21)]
    assert len(branch_window(12, 30, 20, 20, [(2, 6)])) == MAX_WINDOW


def test_a_long_hit_is_cut_around_where_the_query_words_meet(tmp_path):
    """A user trial: a long message holding ``webhook`` early and ``webhook ... flarnish`` much
    later; the hit's text (cut to the window's bytes) kept the first ``webhook`` and lost
    ``flarnish``. It is cut around the stretch holding both."""
    from crabsearch.index import Indexer
    from crabsearch.search.windows import first_match

    filler = "the build log says nothing useful here " * 40
    text = f"The webhook fired once. {filler} Now the webhook retry fails with a flarnish error every time."
    assert first_match(text, ["webhook", "flarnish"], reach=512) == text.index("webhook retry")
    assert first_match(text, ["webhook", "flarnish"]) == text.index("webhook")  # no reach: the first
    home = tmp_path / "home"
    ClaudeSession(home).user(text).assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    [hit] = Engine(tmp_path / "index").search("webhook flarnish", before=0, after=0).hits
    [item] = hit.window
    assert item.truncated and "webhook retry fails with a flarnish error" in item.text


def test_a_long_hit_is_cut_around_the_identifier_not_its_scattered_parts(tmp_path):
    """A fresh-user trial: ``refreshAccessToken`` in a long message was cut out of its hit's
    text, which kept a stretch holding ``token-store`` and ``refresh_buffer`` (the identifier's
    parts, each alone, counted as more query words than the identifier itself)."""
    from crabsearch.index import Indexer
    from crabsearch.search.windows import first_match

    filler = "the build log says nothing useful here " * 30
    text = (f"First the cache. {filler} see token-store and refresh_buffer and the access log. {filler} "
            "Then call refreshAccessToken() before the request.")
    terms = ["refreshaccesstoken", "refresh", "access", "token", "refresh access token"]
    assert first_match(text, terms, reach=512) == text.index("refreshAccessToken")
    assert first_match("a refresh_access_token b", terms, reach=512) == 2  # the parts in a row
    assert first_match("prerefresh access token", terms, reach=512) is None  # not a part of a word
    home = tmp_path / "home"
    ClaudeSession(home).user(text).assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    [hit] = Engine(tmp_path / "index").search("refreshAccessToken", before=0, after=0).hits
    [item] = hit.window
    assert item.truncated and "refreshAccessToken() before" in item.text


def test_first_match_places_the_cut_on_whole_words():
    from crabsearch.search.windows import first_match as _first_match

    assert _first_match("another theme, then the end", ["the"]) == 20
    assert _first_match("Rethink: The plan", ["the"]) == 9  # case-folded
    assert _first_match("unauthorized, then auth works", ["auth*"]) == 19
    assert _first_match("数据库连接池超时了", ["连接", "超时"]) == 3
    assert _first_match("nothing here", ["walrus"]) is None


def test_facets_count_sessions_and_spell_project_folders_as_they_are(tmp_path):
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    ClaudeSession(home, cwd="/home/dev/My_App").user("one").write()
    ClaudeSession(home, cwd="/home/dev/My_App").user("two").write()
    CodexSession(home, cwd="/srv/api").user("three").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    f = engine.facets()
    assert f["project"] == [("My_App", 2), ("api", 1)]
    assert f["agent"] == [("claude", 2), ("codex", 1)]
    assert len(engine.search("one project:my_app").hits) == 1  # matched whatever the case


def test_windows_read_the_right_messages_across_segments_and_rewrites(tmp_path):
    """Window items are found by guessing the next document number (message i+1 is usually
    document d+1) and checking the guess: across an append in another segment, and after a
    rewrite left deleted documents behind, every item is still the right message."""
    from crabsearch.index import Indexer

    home = tmp_path / "home"
    s = ClaudeSession(home)
    for n in range(6):
        s.user(f"message {n} pelican" if n == 4 else f"message {n}")
    s.write()
    other = ClaudeSession(home).user("unrelated pelican text")
    other.write()
    idx = Indexer(tmp_path / "index", env={"HOME": str(home)})
    idx.refresh()
    for n in range(6, 9):
        s.user(f"message {n}")
    s.write()  # appended: messages 6-8 go to a new segment
    idx.refresh()
    engine = Engine(tmp_path / "index")
    [hit] = [h for h in engine.search("pelican", before=4, after=4).hits if h.session.session_id == s.session_id]
    assert [(i.message_index, i.text) for i in hit.window] == [
        (n, f"message {n}" + (" pelican" if n == 4 else "")) for n in range(0, 9)]
    other.lines[0]["message"]["content"] = "rewritten, no bird"
    other.write()
    idx.refresh()
    engine.reload()
    [hit] = engine.search("pelican", before=4, after=4).hits
    assert [i.message_index for i in hit.window] == list(range(0, 9)) and hit.item.message_index == 4


def test_exclusions_or_an_ignored_filter_alone_list_recent_sessions(tmp_path):
    """A user trial: ``-foo`` alone and ``since:banana`` alone (the filter ignored) found nothing,
    where filters alone list the recent sessions they allow. Now: the recent sessions, without
    those holding an excluded word, with a note saying so; and for a query with nothing in it."""
    home = tmp_path / "home"
    ClaudeSession(home).user("the walrus plan").assistant("ok").write()
    ClaudeSession(home).user("the kiwi plan").assistant("ok").write()
    CodexSession(home).user("the pelican plan").assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    result = engine.search("-walrus")
    assert result.route == "recent" and len(result.hits) == 2
    assert all("walrus" not in h.session.title for h in result.hits)
    assert any("listing recent sessions without the excluded words" in n for n in result.notes)
    result = engine.search("since:banana")
    assert result.route == "recent" and len(result.hits) == 3 and any("filter ignored" in n for n in result.notes)
    assert engine.search("-walrus agent:codex").hits[0].session.agent == "codex"
    for text in ("((", "--", "🦀"):  # punctuation or symbols alone: nothing to match, nothing listed, a note why
        result = engine.search(text)
        assert result.hits == [] and result.notes == ["nothing to search for: punctuation and symbols alone "
                                                      "are not indexed"]
    result = engine.search("  ")  # nothing typed: as the app's empty box (a trial: "no sessions match ''")
    assert result.route == "recent" and len(result.hits) == 3
    assert result.notes == ["nothing to search for: listing recent sessions"]


def test_an_exclusion_alone_reads_only_the_rows_it_lists(tmp_path, monkeypatch):
    """``-word`` alone took seconds on a large home: it made a row (read each session's first
    prompt from its transcript) for every session holding the word, then dropped them. The
    sessions holding it are left out before any row is made."""
    from crabsearch.search.sessions import Sessions

    home = tmp_path / "home"
    for i in range(30):
        ClaudeSession(home, start=datetime(2026, 3, 1, 9, i, tzinfo=timezone.utc)).user(
            f"walrus plan {i}").assistant("ok").write()
    for i in range(3):
        ClaudeSession(home, start=datetime(2026, 2, 1, 9, i, tzinfo=timezone.utc)).user(
            f"kiwi plan {i}").assistant("ok").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    made = []
    first_prompt_hit = Sessions.first_prompt_hit
    monkeypatch.setattr(Sessions, "first_prompt_hit", lambda self, *a, **k: made.append(1) or first_prompt_hit(
        self, *a, **k))
    for query in ("-walrus", "-walrus agent:claude", "-walrus since:2020-01-01"):
        made.clear()
        result = engine.search(query, limit=2)
        assert [h.session.title for h in result.hits] == ["kiwi plan 2", "kiwi plan 1"] and len(made) == 2, query


@pytest.fixture
def ids_engine(tmp_path):
    """Sessions whose ids a search word can start: two sharing ``5c0375``, one whose id starts
    with letters a word is spelled with (``decade00``), one with a SpecStory-like id made of a
    date; and sessions that say those words."""
    from datetime import datetime, timezone

    home = tmp_path / "home"
    day = datetime(2026, 3, 19, 9, tzinfo=timezone.utc)
    ClaudeSession(home, session_id="5c0375b4-57a5-4f26-b12d-d022ee4e51b7", start=day).user(
        "the nightly cron job runs twice").write()
    CodexSession(home, session_id="5c0375ff-0000-7000-8000-000000000002", start=day.replace(day=18)).user(
        "retry backoff explodes").write()
    ClaudeSession(home, session_id="decade00-0000-4000-8000-000000000003").user("an unrelated chat").write()
    ClaudeSession(home, session_id="eeeeeeee-0000-4000-8000-000000000004").user(
        "a decade of logs, written 2025-04-28").write()
    ClaudeSession(home, session_id="2025-04-28_18-51-notes").user("meeting notes").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    e = Engine(tmp_path / "index")
    yield e
    e.close()


def test_a_session_id_prefix_finds_its_sessions_as_show_does(ids_engine):
    """The start of a session id, as ``crabsearch show`` takes it, finds the session in a
    search (route ``id``); one that starts several ids lists them all, newest first; the
    query's filters still apply. The same resolver answers ``find_session``."""
    e = ids_engine
    result = e.search("5c0375b4")
    assert result.route == "id" and short_ids(result) == ["5c03"] and result.hits[0].route == "id"
    assert result.hits[0].session.session_id == e.find_session("5c0375b4").session.session_id
    both = e.search("5c0375")
    assert [h.session.agent for h in both.hits] == ["claude", "codex"]  # newest first
    with pytest.raises(AmbiguousSession):
        e.find_session("5c0375")
    assert [h.session.agent for h in e.search("5c0375 agent:codex").hits] == ["codex"]
    assert e.search("5c0375 since:2026-03-19").hits[0].session.agent == "claude"
    assert len(e.search("5c0375", limit=1).hits) == 1
    assert e.search("decade00").route == "id"  # a digit: an id's start


def test_ordinary_words_are_not_taken_for_session_ids(ids_engine):
    """Words are searched as words: fewer than six characters (``5c037``), a word spelled with
    the letters a-f (``decade``, whose letters start an id), a date that starts a SpecStory id
    made of a date and words, a hex word that starts no id."""
    e = ids_engine
    assert e.search("5c037").route != "id"
    decade = e.search("decade")
    assert decade.route != "id" and short_ids(decade) == ["eeee"]
    date = e.search("2025-04-28")
    assert date.route != "id" and short_ids(date) == ["eeee"]
    assert e.find_session("2025-04-28").session.session_id == "2025-04-28_18-51-notes"  # show: any id
    assert e.search("0badf00d").route is None


def test_facets_are_narrowed_by_the_querys_other_filters(tmp_path):
    """``Engine.facets(query)``: the projects of the sessions the query's other filters allow
    (agent, role, since, until), the agents of those its project allows; its words count
    nothing; the unnarrowed lists as before."""
    from datetime import datetime, timezone

    from crabsearch.index import Indexer

    home = tmp_path / "home"
    old = datetime(2025, 1, 5, 9, tzinfo=timezone.utc)
    ClaudeSession(home, cwd="/home/dev/webapp").user("one").write()
    ClaudeSession(home, cwd="/home/dev/webapp", start=old).user("two").write()
    CodexSession(home, cwd="/home/dev/webapp").user("three").write()
    CodexSession(home, cwd="/srv/api").user("four").write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    engine = Engine(tmp_path / "index")
    assert engine.facets("agent:claude")["project"] == [("webapp", 2)]
    assert engine.facets("agent:codex nothingsaysthis")["project"] == [("api", 1), ("webapp", 1)]
    assert engine.facets("project:webapp")["agent"] == [("claude", 2), ("codex", 1)]
    assert engine.facets("project:webapp until:2025-06-01")["agent"] == [("claude", 1)]
    assert engine.facets("agent:claude since:2025-06-01")["project"] == [("webapp", 1)]
    assert engine.facets("agent:claude role:assistant")["project"] == []  # no answer in these sessions
    assert engine.facets("agent:claude")["agent"] == engine.facets()["agent"] == [("claude", 2), ("codex", 2)]


PASTED = ("error: Cannot find package 'commander' from '/Users/dana/.local/state/minsky/git/local/minsky/"
          "task#017/src/cli.ts:12:5' at 0x7ffd3a2b (2026-01-02T12:33:04Z, 550e8400-e29b-41d4-a716-446655440000)")


def test_a_pasted_line_finds_the_session_of_its_words_whatever_its_volatile_parts(tmp_path):
    """An error pasted today differs from the one fixed in a past session by its places and
    numbers (another home folder and task folder, line:column, address, timestamp, run id): the
    session holding its words ranks first, above one that holds those volatile parts exactly
    and none of the error; a typed query keeps every word required."""
    home = tmp_path / "home"
    ClaudeSession(home, session_id="eeeeeeee-0000-4000-8000-000000000005").user(
        "bun test fails: error: Cannot find package 'commander' from "
        "'/Users/edobry/.local/state/minsky/git/004/src/cli.ts'").assistant(
        "commander is missing from the session workspace: install it there").write()
    decoy = ClaudeSession(home, session_id="ffffffff-0000-4000-8000-000000000006")
    for _ in range(3):
        decoy.user("open /Users/dana/.local/state/minsky/git/local/minsky/task#017/src/cli.ts:12:5 "
                   "at 0x7ffd3a2b, 2026-01-02T12:33:04Z, run 550e8400-e29b-41d4-a716-446655440000").assistant(
            "the error from the package is gone")
    decoy.write()
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    e = Engine(tmp_path / "index")
    result = e.search(PASTED)
    assert short_ids(result)[0] == "eeee"
    assert result.route == "all"  # every stable word in one message
    # typed: the address is a word like any other, still required (eeee lacks it: any word)
    typed = e.search("0x7ffd3a2b error")
    assert [(h.session.session_id[:4], h.route) for h in typed.hits] == [("ffff", "session"), ("eeee", "any")]
    e.close()

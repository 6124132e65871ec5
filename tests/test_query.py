"""The query language parser: words, phrases, exclusions, prefixes, filters, dates."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from crabsearch.query import parse, parse_day, reads_as_pasted
from crabsearch.volatile import stable_part

NOW = datetime(2026, 3, 20, 15, 30, tzinfo=timezone(timedelta(hours=2)))  # a local time, UTC+2
AGENTS = ("claude", "codex")


def test_words_phrases_exclusions_prefixes():
    q = parse('fix "cron schedule" -flaky -"not this" resol* a-b', agents=AGENTS, now=NOW)
    assert q.words == ["fix", "a-b"]
    assert q.phrases == ["cron schedule"]
    assert q.excluded == ["flaky", "not this"]
    assert q.prefixes == ["resol"]


def test_unbalanced_quote_runs_to_the_end():
    assert parse('say "hello world', now=NOW).phrases == ["hello world"]
    assert parse('say "hello world', now=NOW).unclosed == "hello world"
    assert parse('say "hello world"', now=NOW).unclosed is None


@pytest.mark.parametrize("text", ["*", "-", "--", '"', '""', "agent:", ":", "a*", "AND", "C++", "foo(bar)"])
def test_odd_input_never_raises_and_stays_words(text):
    q = parse(text, agents=AGENTS, now=NOW)
    assert not q.has_filters


def test_filters():
    q = parse("agent:Codex project:webapp role:user in:tools since:2026-03-01 until:2026-03-10 x",
              agents=AGENTS, now=NOW)
    assert (q.agent, q.project, q.role, q.in_tools) == ("codex", "webapp", "user", True)
    assert q.since == datetime(2026, 2, 28, 22, tzinfo=timezone.utc)  # local midnight, UTC+2
    assert q.until == datetime(2026, 3, 10, 22, tzinfo=timezone.utc)  # the whole 10th included
    assert q.words == ["x"]


def test_bad_filter_values_are_reported_and_ignored():
    q = parse("agent:vim role:robot since:someday in:space hello", agents=AGENTS, now=NOW)
    assert not q.has_filters and q.words == ["hello"]
    assert len(q.notes) == 4


def test_a_filter_given_twice_says_the_last_one_is_used():
    """A fresh-user trial: ``agent:codex agent:claude cron`` searched Claude only, with no word
    that agent:codex was dropped. One value at a time; the same value twice says nothing."""
    q = parse("agent:codex agent:claude role:user role:assistant since:7d since:2026-01-01 "
              "until:2026-03-01 until:2026-03-02 project:a project:b cron", agents=AGENTS, now=NOW)
    assert (q.agent, q.role, q.project) == ("claude", "assistant", "b")
    assert q.notes == [f"{k}: given twice; the last one, {k}:{v}, is used" for k, v in (
        ("agent", "claude"), ("role", "assistant"), ("since", "2026-01-01"), ("until", "2026-03-02"),
        ("project", "b"))]
    assert parse("agent:codex agent:Codex since:7d since:7d x", agents=AGENTS, now=NOW).notes == []


def test_unknown_key_is_a_word():
    assert parse("http://example.com note:x", agents=AGENTS, now=NOW).words == ["http://example.com", "note:x"]


@pytest.mark.parametrize("value,expected", [
    ("today", datetime(2026, 3, 19, 22, tzinfo=timezone.utc)),
    ("yesterday", datetime(2026, 3, 18, 22, tzinfo=timezone.utc)),
    ("7d", datetime(2026, 3, 13, 13, 30, tzinfo=timezone.utc)),
    ("2w", datetime(2026, 3, 6, 13, 30, tzinfo=timezone.utc)),
    ("12h", datetime(2026, 3, 20, 1, 30, tzinfo=timezone.utc)),
    ("2026-01-31", datetime(2026, 1, 30, 22, tzinfo=timezone.utc)),
    ("31/01/2026", None),
])
def test_days(value, expected):
    assert parse_day(value, NOW) == expected


@pytest.mark.parametrize("text,since,until", [
    ("since:99999999d", "earliest", None),
    ("since:99999m", "earliest", None),
    ("since:" + "9" * 30 + "w", "earliest", None),
    ("until:99999999h", None, "earliest"),
    ("since:0001-01-01", "earliest", None),  # local midnight, UTC+2: before year 1 in UTC
    ("until:9999-12-31", None, "latest"),  # west of UTC (below): the day ends after Python's last moment
])
def test_dates_past_pythons_range_are_its_ends_not_an_error(text, since, until):
    """A relative date further back than year 1, or a day at the end of Python's range (a
    fresh-user trial: ``since:99999999d`` failed the command with ``Python int too large to
    convert to C int`` and left the app on stale rows): the earliest or latest moment there is,
    no note; the search runs."""
    from crabsearch.query import EARLIEST, LATEST

    ends = {"earliest": EARLIEST, "latest": LATEST, None: None}
    now = NOW.astimezone(timezone(timedelta(hours=-5))) if until == "latest" else NOW
    q = parse("database " + text, agents=AGENTS, now=now)
    assert (q.since, q.until, q.notes, q.words) == (ends[since], ends[until], [], ["database"])


def test_long_query_is_cut():
    q = parse("word " * 200, now=NOW)
    assert q.cut and 505 <= len(q.text) <= 512
    assert set(q.words) == {"word"}  # cut between words, never inside one
    q = parse("x" * 600, now=NOW)
    assert q.cut and len(q.text) == 512  # one long word: cut at the limit


def test_an_empty_filter_being_typed_is_not_a_word_and_is_noted():
    """``agent:`` with no name is no word to search, and the note says what it needs (the app
    said so and the command line said nothing: a fresh-user trial)."""
    q = parse("agent: cron", agents=("claude",), now=NOW)
    assert q.words == ["cron"] and q.agent is None
    assert q.notes == ["agent: needs a name: the agents are claude; filter ignored"]
    for key in ("project", "role", "since", "until", "in"):
        q = parse(f"{key}:", now=NOW)
        assert not q.words and len(q.notes) == 1 and q.notes[0].startswith(f"{key}: needs ")


def test_a_prefix_needs_two_letters_and_says_so():
    """``t*`` and ``*`` were searched as the word ``t`` and as nothing, with no word of it (a
    fresh-user trial)."""
    assert parse("t*").notes == ["t*: a prefix needs two letters or more; t searched as a word"]
    assert parse("*").notes == ["*: a prefix needs two letters or more"]
    q = parse("database -ret* au*")
    assert q.notes == [] and q.excluded == ["ret*"] and q.prefixes == ["au"]


def test_a_dash_in_a_pasted_line_is_a_word_not_an_exclusion():
    """``adb exec-out screencap -p > weekly.png`` left out every session holding ``p``, the one
    it was pasted from among them: a ``-word`` excludes only in a query that reads as typed
    (at most eight parts, no shell or code marks), or at the end of a longer one without code
    marks, and with two characters or more."""
    assert parse("cron -flaky").excluded == ["flaky"]
    assert parse("git log -p").excluded == [] and parse("git log -p").words == ["git", "log", "-p"]
    pasted = parse("adb exec-out screencap -p > weekly.png")
    assert pasted.excluded == [] and "-p" in pasted.words
    inside = parse("error: unknown option -verbose while running the nightly build job")
    assert inside.excluded == [] and "-verbose" in inside.words
    # a long typed query's exclusions come at its end (filters may be among them): they hold
    long = parse("виджет календаря убрать многоточие у обрезанных событий -widget agent:codex -events")
    assert long.excluded == ["widget", "events"] and long.values["agent"] == "codex"
    assert "-widget" not in long.words and "-events" not in long.words
    assert parse("fix the nightly cron job that runs twice in production -cron").excluded == ["cron"]
    assert parse("adb exec-out screencap -p > weekly.png -force").excluded == []  # code marks: pasted
    assert parse('x = f(y) -"not this"').excluded == ["not this"]  # a quoted exclusion is meant


@pytest.mark.parametrize("word,stable", [
    ("'/Users/dana/.local/state/minsky/git/local/minsky/task#017/src/cli.ts'", "src/cli.ts"),
    ("(/home/sam/src/OpenPrintKit/.venv/lib/python3.12/site-packages/PySide6/QtWidgets.abi3.so)",
     "PySide6/QtWidgets.abi3.so"),
    ("'file:/Users/dana/code/minsky/process/tasks.md'", "process/tasks.md"),
    ("src/domain/session.ts:12:5", "src/domain/session.ts"), ("cli.ts:12:5", "cli.ts"),
    ("src/domain/session.ts", "src/domain/session.ts"),
    ("'/tmp/minsky-git-test-Xk29pQ':", None), ("/var/folders/x1/abc/T/out.log", None),
    ("/home/dana/.local/state/minsky/git/#004", None),
    ("331,", None), ("5087ms", None), ("#004", None), ("12:33:04", None), ("2026-01-02T12:33:04Z", None),
    ("0x7ffd3a2b", None), ("'4f1c9a07d2e35b6e8a90c1d47f2b5e3a6c8d9e01'.", None),
    ("550e8400-e29b-41d4-a716-446655440000", None), ("dana@laptop", None),
    ("'task#027'", None), ("test-session-1714482211", None),
    ("error:", "error:"), ("sha256", "sha256"), ("utf8mb4", "utf8mb4"), ("PySide6", "PySide6"),
    ("i18n", "i18n"), ("git@github.com", "git@github.com"), ("SessionDB().deleteSession", "SessionDB().deleteSession"),
])
def test_the_stable_part_of_a_pasted_word(word, stable):
    assert stable_part(word) == stable


def test_a_line_with_a_deep_path_or_code_reads_as_pasted():
    assert reads_as_pasted("error: Cannot find package 'x' from '/Users/dana/p/src/cli.ts'")
    assert reads_as_pasted("adb exec-out screencap -p > weekly.png")
    assert not reads_as_pasted("retry backoff 0x7ffd3a2b") and not reads_as_pasted("and/or src/cli.ts")

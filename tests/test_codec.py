"""The compact term dictionary (``index.codec``, issue 13 target 4) against Whoosh's ``W3Codec``:
the same terms, term statistics, postings, stored fields and search scores, through merges and in
an index whose older segments were written by ``W3Codec``; and a smaller index."""

from __future__ import annotations

import random
from datetime import datetime, timezone
from pathlib import Path

import pytest
from whoosh.codec.whoosh3 import W3Codec, W3TermInfo
from whoosh.filedb.filestore import RamStorage

from crabsearch.index import Indexer, writer as writer_mod
from crabsearch.index.codec import INLINE_MAX, CompactCodec, decode_info, encode_info
from crabsearch.index.termtable import BLOCK, TermTable, TermTableWriter
from crabsearch.index.store import open_index
from crabsearch.search import Engine

from builders import ClaudeSession, CodexSession

QUERIES = ["walrus", "the", "cache retry", "\"retry the cache\"", "walrus -cache", "wal*", "rare0word3",
           "the database timeout", "Bash", "number 7", "agent:codex walrus", "warlus", "zzzq nothing"]


def _write_batch(home: Path, batch: int) -> None:
    rnd = random.Random(batch)
    for n in range(4):
        k = batch * 4 + n
        s = ClaudeSession(home, f"{k:04d}aaaa-0000-4000-8000-000000000000",
                          start=datetime(2026, 3, 1 + k, 9, 0, tzinfo=timezone.utc))
        for i in range(rnd.randint(3, 40)):
            words = " ".join(rnd.choice(["the", "walrus", "cache", "retry", "database", "timeout",
                                         f"rare{k}word{i}", "number", str(i)]) for _ in range(rnd.randint(1, 30)))
            s.user(words).assistant(f"retry the cache {words[:40]}")
            if i % 7 == 0:
                s.tool("Bash", {"command": "ls"}, "ok").assistant("the retry worked, walrus")
        s.write()
    CodexSession(home, f"019a0000-1111-7222-8333-{batch:012d}").user("codex walrus retry").assistant("the cache").write()


def _refresh(index_dir: Path, home: Path, codec) -> None:
    """One refresh of ``index_dir`` whose segments ``codec()`` writes."""
    original = writer_mod.CompactCodec
    writer_mod.CompactCodec = codec
    try:
        Indexer(index_dir, env={"HOME": str(home)}).refresh()
    finally:
        writer_mod.CompactCodec = original


def _contents(index_dir: Path) -> tuple[dict, dict, int]:
    """``({term: (doc frequency, total weight, sorted postings)}, {document: stored fields},
    segments)``, a document named by its stored (file, message index, kind): the index's
    contents whatever its segments (commits are timed, so two builds split them differently)."""
    ix, _ = open_index(index_dir, create=False)
    terms, stored = {}, {}
    with ix.reader() as r:
        leaves = r.leaf_readers()
        for sub, _ in leaves:
            names = {}
            for d in range(sub.doc_count_all()):
                if not sub.is_deleted(d):
                    fields = sub.stored_fields(d)
                    names[d] = (fields["fkey"], fields["idx"], "meta" in fields)
                    stored[names[d]] = fields
            for (fn, text), ti in sub:
                m = sub.postings(fn, text)
                postings = []
                while m.is_active():
                    postings.append((names[m.id()], m.weight(), m.value()))
                    m.next()
                if postings:
                    df, weight, old = terms.get((fn, text), (0, 0.0, []))
                    terms[(fn, text)] = (df + len(postings), weight + sum(p[1] for p in postings), sorted(old + postings))
    return terms, stored, len(leaves)


def _results(index_dir: Path) -> dict:
    engine = Engine(index_dir)
    return {q: [(h.ref.fkey, h.message_index, h.score) for h in engine.search(q, limit=50).hits] for q in QUERIES}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Three indexes of one home, refreshed after each of four batches of new sessions (so
    segments are written and merged): by Whoosh's codec (what crabsearch wrote before), by the
    compact codec, and by Whoosh's for two batches then the compact one."""
    tmp = tmp_path_factory.mktemp("codec")
    w3 = lambda: W3Codec()  # noqa: E731
    plans = {"w3": [w3] * 4, "compact": [CompactCodec] * 4, "mixed": [w3, w3, CompactCodec, CompactCodec]}
    for batch in range(4):
        _write_batch(tmp / "home", batch)
        for name, codecs in plans.items():
            _refresh(tmp / name, tmp / "home", codecs[batch])
    return {name: tmp / name for name in plans}


def test_same_terms_postings_and_stored_fields_as_whoosh(built):
    """Every segment holds the same words with the same statistics, postings (documents,
    weights, positions) and stored fields, whichever codec wrote it; short lists are inlined."""
    w3, compact = _contents(built["w3"]), _contents(built["compact"])
    assert compact[0] == w3[0] and compact[1] == w3[1] and len(w3[1]) > 100
    assert _contents(built["mixed"])[:2] == w3[:2]
    ix, _ = open_index(built["compact"], create=False)
    with ix.reader() as r:
        infos = [ti for sub, _ in r.leaf_readers() for _, ti in sub]
    assert any(ti.is_inlined() for ti in infos) and any(not ti.is_inlined() for ti in infos)
    assert all(ti.is_inlined() == (ti.doc_frequency() <= INLINE_MAX) for ti in infos)


def test_same_search_results_and_scores(built):
    """Every query shape finds the same sessions, hits and scores (bit for bit) on the three
    indexes, including one whose older segments Whoosh's codec wrote and were merged."""
    expected = _results(built["w3"])
    assert any(expected.values())
    assert _results(built["compact"]) == expected
    assert _results(built["mixed"]) == expected


def test_merged_old_segments_are_rewritten_compact(built):
    """A merge writes the new segment with the compact codec: older indexes shrink as they merge."""
    ix, _ = open_index(built["mixed"], create=False)
    kinds = {type(seg.codec()).__name__ for seg in ix._segments()}
    assert "CompactCodec" in kinds


def test_index_is_smaller(built):
    """The same documents take less room (segment files only)."""
    def size(index_dir: Path) -> int:
        return sum(p.stat().st_size for p in (index_dir / "current").resolve().glob("*.seg"))
    assert size(built["compact"]) < 0.7 * size(built["w3"])


def test_term_table_lookups_and_ranges():
    """Front-coded blocks: every key found with its value, absent keys not found (before the
    first, between keys, past the last, a prefix of a key), ranges start at the right key,
    across block boundaries."""
    rnd = random.Random(5)
    keys = sorted({bytes([rnd.randrange(3)]) + bytes(rnd.choice(b"abc") for _ in range(rnd.randint(0, 6)))
                   for _ in range(500)})
    st = RamStorage()
    w = TermTableWriter(st.create_file("t"))
    w.fieldmap["f"] = 0
    for k in keys:
        w.add(k, k[::-1] + b"!")
    w.close()
    table = TermTable(st.open_file("t"), st.file_length("t"))
    assert len(keys) > 3 * BLOCK and table.block_count == -(-len(keys) // BLOCK) and table.fieldmap == {"f": 0}
    for k in keys:
        buf, start = table.value(k)
        assert buf[start:start + len(k) + 1] == k[::-1] + b"!"
    present = set(keys)
    for probe in [b"", b"\x00", b"\x05", b"\x01abcabcabc"] + [k + b"z" for k in keys[::17]] + [k[:-1] for k in keys]:
        if probe not in present:
            assert table.value(probe) is None
        assert [k for k, _, _ in table.items_from(probe)] == [k for k in keys if k >= probe]
    with pytest.raises(ValueError):
        w2 = TermTableWriter(st.create_file("u"))
        w2.add(b"b", b"")
        w2.add(b"a", b"")


@pytest.mark.parametrize("weights,values", [
    ((1.0,), (b"\x01",)),
    ((3.0, 1.0, 2.0), (b"\x01\x02\x03", b"\x05", b"\x07\x08")),
    ((1.5, 0.25), (b"\x01", b"\x02")),
    ((1.0, 1.0), ()),
])
def test_term_info_round_trip(weights, values):
    """A term info reads back with the same statistics and postings: whole and fractional
    weights, with and without position values, inlined and in the postings file."""
    ids = [3, 9, 200000][:len(weights)]
    ti = W3TermInfo()
    ti._weight, ti._df, ti._minlength, ti._maxlength = sum(weights), len(ids), 2, 700
    ti._maxweight, ti._minid, ti._maxid = max(weights), ids[0], ids[-1]
    for inline in (True, False):
        if inline:
            ti.set_inlined(ids, weights, values)
        else:
            ti._inlined, ti._offset, ti._length = None, 123456789, 4321
        back = decode_info(b"xx" + encode_info(ti), 2)
        assert (back.weight(), back.doc_frequency(), back.min_length(), back.max_length(), back.max_weight(),
                back.min_id(), back.max_id()) == (ti.weight(), ti.doc_frequency(), W3TermInfo.from_bytes(
                    ti.to_bytes()).min_length(), W3TermInfo.from_bytes(ti.to_bytes()).max_length(),
                    ti.max_weight(), ti.min_id(), ti.max_id())
        if inline:
            got_ids, got_weights, got_values = back.inlined_postings()
            assert (list(got_ids), list(got_weights)) == (ids, list(weights))
            assert list(got_values) == (list(values) if values else [None] * len(ids))
        else:
            assert not back.is_inlined() and back.extent() == (123456789, 4321)


@pytest.mark.parametrize("positions", [[], [0], [3], [0, 1, 2], [5, 300, 301], [1, 70000, 70001], list(range(0, 5000, 7))])
def test_positions_encoding_round_trips_and_reads_whooshs(positions):
    """Positions as gaps (1, 2 or 4 bytes each) read back, as do values Whoosh's ``Positions``
    wrote (segments built before); a word seen once takes 2 bytes instead of 13."""
    from whoosh.formats import Positions

    from crabsearch.index.schema import NamePositions

    ours, whooshs = NamePositions(), Positions()
    for value in (ours.encode(positions), whooshs.encode(positions)):
        assert ours.decode_positions(value) == positions
        assert ours.decode_frequency(value) == len(positions)
    if positions == [3]:
        assert len(ours.encode(positions)) == 2 < len(whooshs.encode(positions))


@pytest.mark.parametrize("keys", [3, 300, 70000])
def test_session_key_column_keeps_every_key(keys):
    """The session key column stores each key once and a reference per document, 1, 2 or 4
    bytes wide: past 65,536 keys in a segment no key is dropped (Whoosh's ``RefBytesColumn``
    drops them)."""
    from crabsearch.index.schema import SessionKeyColumn

    values = [f"claude:{n % keys:08d}".encode() for n in range(max(keys, 1000))]
    st = RamStorage()
    col = SessionKeyColumn()
    f = st.create_file("c")
    w = col.writer(f)
    for d, v in enumerate(values):
        if d != 5:  # a document without a key reads as the default (empty)
            w.add(d, v)
    w.finish(len(values))
    f.close()
    r = col.reader(st.open_file("c"), 0, st.file_length("c"), len(values))
    expected = values[:5] + [b""] + values[6:]
    assert list(r) == expected
    assert [r[d] for d in (0, 5, len(values) - 1)] == [expected[0], b"", expected[-1]]


def test_a_damaged_term_block_is_a_failed_read():
    """A term table block whose bytes changed raises (its CRC-32): varints of damaged bytes
    would otherwise decode to other words without an error, and the index would never know to
    rebuild."""
    from crabsearch.index.termtable import DamagedBlock

    st = RamStorage()
    w = TermTableWriter(st.create_file("t"))
    keys = [b"\x00\x00word%03d" % i for i in range(40)]
    for k in keys:
        w.add(k, b"v")
    w.close()
    data = bytearray(st.open_file("t").read(st.file_length("t")))
    data[5] ^= 0x20  # inside the first block
    with st.create_file("u") as f:
        f.write(bytes(data))
    table = TermTable(st.open_file("u"), st.file_length("u"))
    with pytest.raises(DamagedBlock):
        table.value(keys[1])
    with pytest.raises(DamagedBlock):
        list(table.items_from(b""))
    assert table.value(keys[-1]) is not None  # the other blocks still read


def test_field_cursor_walks_a_fields_words(built):
    """Whoosh's fuzzy matching walks a field's words with a cursor: first, next, find (the
    first word at or after a text) give the field's words in order, with their term infos."""
    ix, _ = open_index(built["compact"], create=False)
    with ix.reader() as r:
        sub = r.leaf_readers()[0][0]
        words = [t for t in sub.lexicon("user")]
        cur = sub.cursor("user")
        walked = [cur.text()]
        while cur.next() is not None:
            walked.append(cur.text())
        assert walked == [w.decode() for w in words] and len(walked) > 10 and not cur.is_valid()
        middle = words[len(words) // 2]
        assert cur.find(middle.decode()) == middle.decode()
        assert cur.term_info().doc_frequency() == sub.doc_frequency("user", middle)
        assert cur.find(middle.decode() + "\x00") == words[len(words) // 2 + 1].decode()
        assert cur.first() == words[0].decode()


def test_term_infos_are_remembered_per_segment(built, monkeypatch):
    """A word looked up again reads its block once (a search asks for the same words at every
    rung and in every field); a missing word stays missing; the memo empties when full."""
    from whoosh.reading import TermNotFound

    from crabsearch.index import codec

    ix, _ = open_index(built["compact"], create=False)
    with ix.reader() as r:
        sub = r.leaf_readers()[0][0]
        terms = sub._terms
        scans = []
        original = terms._table.value

        def counting(key):
            scans.append(key)
            return original(key)

        monkeypatch.setattr(terms._table, "value", counting)
        word = next(t for f, t in sub.all_terms() if f == "user")
        first = sub.term_info("user", word)
        assert sub.term_info("user", word) is first and sub.doc_frequency("user", word) == first.doc_frequency()
        for _ in range(2):
            with pytest.raises(TermNotFound):
                sub.term_info("user", b"zzqq-not-a-word")
        assert len(scans) == 2
        monkeypatch.setattr(codec, "INFOS_KEPT", 2)
        sub.doc_frequency("assistant", word)  # the memo is full: emptied, then this one kept
        assert len(terms._infos) == 1

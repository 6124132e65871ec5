"""crabsearch.jsonl: line splitting, skipped lines, the pending tail, decoding, record read-back."""

from __future__ import annotations

import json

import pytest

from crabsearch import jsonl
from crabsearch.jsonl import LineStats, iter_records, loads, read_record


def scan(path, start=0, **kw):
    stats = LineStats()
    recs = list(iter_records(str(path), start, stats, **kw))
    return recs, stats


def write(tmp_path, data: bytes, name="t.jsonl"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_objects_offsets_and_skips(tmp_path):
    lines = [b'{"a":1}', b'{"b":"x', b"42", b"[1]", b'"text"', b"", b"   ", b'{"c":[1,2]}']
    p = write(tmp_path, b"\n".join(lines) + b"\n")
    recs, stats = scan(p)
    assert [r.obj for r in recs] == [{"a": 1}, {"c": [1, 2]}]
    assert all(r.complete for r in recs)
    assert stats.skipped == 4
    assert stats.reasons == {"broken JSON": 1, "not a JSON object": 3}
    assert stats.end_offset == p.stat().st_size and not stats.pending
    for r in recs:  # offset/length point at the line without its newline
        assert read_record(str(p), r.offset, r.length) == r.obj
        assert p.read_bytes()[r.offset + r.length] == ord("\n")


def test_split_on_newline_only(tmp_path):
    line = json.dumps({"t": "a\rb\u2028c\u0085d"}, ensure_ascii=False).encode()
    p = write(tmp_path, line + b"\r\n" + b'{"n":2}\n')
    recs, stats = scan(p)
    assert recs[0].obj == {"t": "a\rb\u2028c\u0085d"}
    assert recs[0].length == len(line) + 1  # the \r of a CRLF file stays part of the line
    assert recs[1].obj == {"n": 2} and stats.skipped == 0


def test_unterminated_parsable_tail_is_yielded_but_not_committed(tmp_path):
    p = write(tmp_path, b'{"a":1}\n{"b":2}')
    recs, stats = scan(p)
    assert [(r.obj, r.complete) for r in recs] == [({"a": 1}, True), ({"b": 2}, False)]
    assert stats.end_offset == 8 and not stats.pending


@pytest.mark.parametrize("tail", [b'{"b":', b"42", b"[1"])
def test_unterminated_partial_tail_is_pending(tmp_path, tail):
    p = write(tmp_path, b'{"a":1}\n' + tail)
    recs, stats = scan(p)
    assert [r.obj for r in recs] == [{"a": 1}]
    assert stats.pending and stats.end_offset == 8
    assert stats.skipped == 0  # not counted: it is read again when the file grows


def test_resume_from_end_offset(tmp_path):
    p = write(tmp_path, b'{"a":1}\n{"b":')
    _, stats = scan(p)
    with open(p, "ab") as fh:
        fh.write(b'2}\n{"c":3}\n')
    recs, stats2 = scan(p, stats.end_offset)
    assert [r.obj for r in recs] == [{"b": 2}, {"c": 3}]
    assert recs[0].offset == 8 and stats2.end_offset == p.stat().st_size


def test_bad_utf8_and_lone_surrogates_become_replacement_char(tmp_path):
    p = write(tmp_path, b'{"t":"caf\xff"}\n{"t":"x\\ud800y"}\n{"t":"\\ud83e\\udd80"}\n{"\\udfff":1}\n')
    recs, _ = scan(p)
    assert [r.obj for r in recs] == [{"t": "caf\ufffd"}, {"t": "x\ufffdy"}, {"t": "\U0001f980"}, {"\ufffd": 1}]
    for r in recs:
        json.dumps(r.obj, ensure_ascii=False).encode("utf-8")  # no surrogate survives


def test_oversized_lines_are_skipped(tmp_path):
    big = b'{"blob":"' + b"x" * 500 + b'"}'
    p = write(tmp_path, b'{"a":1}\n' + big + b'\n{"b":2}\n')
    recs, stats = scan(p, max_line=100)
    assert [r.obj for r in recs] == [{"a": 1}, {"b": 2}]
    assert stats.oversized == 1 and stats.reasons == {"oversized line": 1}
    assert recs[1].offset == 8 + len(big) + 1
    assert read_record(str(p), recs[1].offset, recs[1].length) == {"b": 2}


def test_oversized_across_chunks_and_small_chunks(tmp_path, monkeypatch):
    body = b'{"a":1}\n' + b'{"blob":"' + b"y" * 300 + b'"}\n{"b":"\xe3\x83\x87"}\n' + b"z" * 250
    p = write(tmp_path, body)
    monkeypatch.setattr(jsonl, "CHUNK", 7)  # lines straddle many chunk boundaries
    recs, stats = scan(p, max_line=100)
    assert [r.obj for r in recs] == [{"a": 1}, {"b": "\u30c7"}]
    assert stats.oversized == 2 and stats.pending  # the unterminated oversized tail may still grow
    assert stats.end_offset == len(body) - 250


def test_deep_nesting_is_a_broken_line_not_a_crash(tmp_path):
    p = write(tmp_path, b"[" * 100_000 + b"]" * 100_000 + b'\n{"ok":1}\n')
    recs, stats = scan(p)
    assert [r.obj for r in recs] == [{"ok": 1}] and stats.skipped == 1


def test_loads_and_read_record_errors(tmp_path):
    with pytest.raises(ValueError):
        loads(b"{nope")
    p = write(tmp_path, b'[1,2]\n{"a":1}\n')
    assert read_record(str(p), 0, 5) is None  # not an object
    assert read_record(str(p), 1, 4) is None  # not JSON any more (file rewritten)
    with pytest.raises(OSError):
        read_record(str(tmp_path / "missing.jsonl"), 0, 1)


def test_start_beyond_end_reads_nothing(tmp_path):
    p = write(tmp_path, b'{"a":1}\n')
    recs, stats = scan(p, 100)
    assert recs == [] and stats.end_offset == 100


BOM = b"\xef\xbb\xbf"


def test_leading_bom_is_stripped(tmp_path):
    # a BOM at the file start (Windows editors, PowerShell Out-File) and one before a later line
    data = BOM + b'{"a":1}\n' + BOM + b'{"b":"\xe3\x83\x87"}\n' + BOM + b"\n" + b'{"c":3}\n'
    p = write(tmp_path, data)
    recs, stats = scan(p)
    assert [r.obj for r in recs] == [{"a": 1}, {"b": "\u30c7"}, {"c": 3}]
    assert stats.skipped == 0 and stats.end_offset == len(data)  # a BOM-only line is a blank line
    assert (recs[0].offset, recs[0].length) == (0, len(BOM) + 7)  # the span still covers the BOM
    for r in recs:
        assert read_record(str(p), r.offset, r.length) == r.obj


def test_bom_on_an_unterminated_tail(tmp_path):
    p = write(tmp_path, b'{"a":1}\n' + BOM + b'{"b":2}')
    recs, stats = scan(p)
    assert [(r.obj, r.complete) for r in recs] == [({"a": 1}, True), ({"b": 2}, False)]
    assert stats.end_offset == 8 and not stats.pending
    only_bom = write(tmp_path, BOM, "bom.jsonl")
    recs, stats = scan(only_bom)
    assert recs == [] and not stats.pending and stats.skipped == 0


def test_loads_bom_but_not_inner_or_doubled_bom(tmp_path):
    assert loads(BOM + b'{"a":1}') == {"a": 1}
    assert loads(BOM + b'{"t":"caf\xff"}') == {"t": "caf\ufffd"}  # slow path too
    assert loads(b'{"t":"' + BOM + b'"}') == {"t": "\ufeff"}  # inside a string it is data
    with pytest.raises(ValueError):
        loads(BOM + BOM + b'{"a":1}')
    p = write(tmp_path, b' ' + BOM + b'{"a":1}\n')
    recs, stats = scan(p)
    assert recs == [] and stats.reasons == {"broken JSON": 1}  # only a *leading* BOM is stripped


def test_lines_at_numbers_and_measures_the_lines_at_offsets_a_chunk_at_a_time(tmp_path, monkeypatch):
    """A skipped line's place (its byte offset) as a line number and a length, read in chunks:
    a line longer than many chunks, the last line without a newline, an offset past the end."""
    from crabsearch.jsonl import lines_at

    long = b"y" * 500
    body = b'{"a":1}\n' + long + b'\n\n{"b":2}\n' + b"tail"
    p = write(tmp_path, body)
    monkeypatch.setattr(jsonl, "CHUNK", 7)
    at = {0: (1, 7), 8: (2, 500), 509: (3, 0), 510: (4, 7), 518: (5, 4)}
    assert lines_at(str(p), [518, 8, 0, 509, 510, 10_000]) == at
    assert lines_at(str(p), [8, 100]) == {8: (2, 500)}  # 100 is inside line 2: no line starts there

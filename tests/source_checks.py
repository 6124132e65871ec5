"""Checks every source must pass, shared by the per-source test modules."""

from __future__ import annotations

import json
import os
from pathlib import Path

from crabsearch.jsonl import read_record
from crabsearch.model import Message
from crabsearch.sources import Source
from crabsearch.sources.base import READ_MARGIN, TEXT_CAP, TOOL_TEXT_CAP

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HOME = FIXTURES / "home"
CORPUS = Path(os.environ.get("CRABSEARCH_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
"""``../shared/corpus`` beside the clone (as CI lays it out), or ``$CRABSEARCH_CORPUS``."""


def key(m: Message) -> tuple:
    """Everything a message carries, for equality checks."""
    return (m.message_index, m.role, m.label, m.text, m.offset, m.length, m.part, m.tool_name, m.timestamp)


def assert_read_back(src: Source, path: Path, messages: list[Message]) -> None:
    """Each message's text comes back from its record via ``message_text`` (the display path):
    the same text, or its full form when the read loop capped the indexed copy."""
    for m in messages:
        obj = read_record(str(path), m.offset, m.length)
        assert obj is not None, m
        full = src.message_text(obj, m.part, m.label)
        cap = (TOOL_TEXT_CAP if m.is_tool_payload else TEXT_CAP) + READ_MARGIN
        assert full == m.text or (len(m.text) == cap and full.startswith(m.text)), m


def assert_incremental(src: Source, data: bytes, path: Path) -> None:
    """Reading a prefix and then the appended rest (state through JSON, as the manifest stores
    it) gives exactly the messages and session of one whole read, for every cut: each line
    boundary and the middle of each line."""
    path.write_bytes(data)
    whole = src.read(path)
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    starts = [0] + ends
    cuts = sorted(set(starts + [(a + b) // 2 for a, b in zip(starts, ends + [len(data)])]))
    for cut in cuts:
        path.write_bytes(data[:cut])
        first = src.read(path)
        state = json.loads(json.dumps(first.state))
        committed = state["next_index"]
        with open(path, "ab") as fh:
            fh.write(data[cut:])
        rest = src.read(path, first.end_offset, state)
        got = [key(m) for m in first.messages if m.message_index < committed] + [key(m) for m in rest.messages]
        assert got == [key(m) for m in whole.messages], f"cut at byte {cut}"
        assert rest.session.to_state() == whole.session.to_state(), f"cut at byte {cut}"
        assert rest.end_offset == whole.end_offset


def state_size(state: dict) -> int:
    """Bytes of the state as the manifest would store it."""
    return len(json.dumps(state))


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run ``crabsearch ARGV`` in-process: ``(exit code, stdout, stderr)``."""
    from crabsearch.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_ok(capsys, *argv) -> str:
    """Run ``crabsearch ARGV`` in-process, require exit code 0, return stdout."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    return out

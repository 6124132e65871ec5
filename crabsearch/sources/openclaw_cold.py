"""OpenClaw cold storage: transcripts moved out of ``transcript_events`` (``openclaw`` 2026.9.6 on
npm, ``dist/session-cold-storage-worker-*.mjs``, ``session-cold-storage-codec-*.mjs`` and the agent
schema in ``dist/openclaw-agent-board-schema-*.mjs``).

With ``session.maintenance.coldStorage.enabled``, maintenance archives transcripts idle past a
cut-off: it writes a zstd JSONL of records ``{"kind": "header", "version": 1, "sessionId",
"generation"}``, ``{"kind": "event", "row": {"seq", "event_json", "created_at"}}`` (one per
``transcript_events`` row, in ``seq`` order, ``event_json`` the entry's JSON text) and
``identity`` / ``active`` / ``index`` / ``fts`` records (projections, nothing to read), inserts a
``session_transcript_cold_archives`` row (``session_id, generation, archive_name, archive_sha256,
event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage, archive_blob``) and deletes
the session's ``transcript_events`` rows. ``storage`` is ``sqlite`` (the archive in
``archive_blob``) or ``file``: ``<agent>/sessions/cold/<sha256>.jsonl.zst`` (``archive_name``,
``resolveSessionColdArchivePath``: the store's ``agents/<id>/agent/`` maps to
``agents/<id>/sessions/``). Opening such a session restores it (the rows come back, the cold row
goes).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from ..jsonl import LineStats, Record, loads
from .base import records_of_bytes, string

COLD = "cold:"
"""Member prefix of a cold-stored session (``<db>#cold:<session id>``)."""
COLD_COLUMNS = "session_id, generation, archive_name, archive_sha256, event_count, archived_at, storage"
_NAME = re.compile(r"[a-f0-9]{64}\.jsonl\.zst")


def cold_rows(rows) -> dict[str, dict]:
    """``{session id: row as a dict}`` of ``session_transcript_cold_archives`` rows (the
    :data:`COLD_COLUMNS`); rows whose id cannot be a member name are left out."""
    out = {}
    for r in rows:
        sid = r["session_id"]
        if isinstance(sid, str) and sid and "/" not in sid and "#" not in sid:
            out[sid] = {k: r[k] for k in r.keys()}
    return out


def archive_file(db: str, name) -> Path | None:
    """Where a ``file`` archive lies (module docstring); None for a name OpenClaw would refuse."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None
    store_dir = Path(db).parent
    sessions = store_dir.parent / "sessions" if store_dir.name == "agent" else store_dir
    return sessions / "cold" / name


def events(data: bytes, start: int, stats: LineStats) -> Iterator[Record]:
    """The transcript entries of a decoded archive from byte ``start``: each ``event`` record's
    ``event_json`` parsed, at its line's offset; other records are passed over, an event whose
    ``event_json`` is no JSON object is skipped and counted."""
    for rec in records_of_bytes(data, start, stats):
        if rec.obj.get("kind") != "event":
            continue
        entry = unwrap(rec.obj)
        if entry is None:
            stats.skip("broken JSON", rec.offset)
            continue
        yield Record(entry, rec.offset, rec.length, rec.complete)


def unwrap(obj: dict) -> dict | None:
    """The entry of one ``event`` record, or None."""
    row = obj.get("row") if isinstance(obj, dict) else None
    text = string(row.get("event_json")) if isinstance(row, dict) else ""
    try:
        entry = loads(text.encode("utf-8", "surrogatepass")) if text else None
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None

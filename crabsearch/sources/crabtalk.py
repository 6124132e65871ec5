"""Crabtalk sessions under ``$CRABTALK_HOME`` (else ``~/.crabtalk``), in all three layouts.

Rules come from ``shared/reference/formats.md`` section 5 (5.1 JSONL, 5.2 step directories,
5.3 crabdb ``store.crmem``) and 7.2/7.3 (title, summary, roles). One unit per session:

* **JSONL** (2026-03..04): ``sessions/*.jsonl`` and ``sessions/<date>/*.jsonl``, read by the shared
  JSONL loop. Line 1 is the meta (``title``, ``created_at``); a ``{"compact": ...}`` marker is a
  ``summary`` message. Session id = file stem.
* **Step directory** (2026-04..08): the unit is the directory ``sessions/<slug>/`` (``meta`` +
  ``step-NNNNNN``, one JSON value each). "size" and "offset" are step *numbers*: ``stat`` gives the
  highest step number + 1, a read takes the steps from ``start`` on; the fingerprint is the first
  step's name and bytes, so a rewind (steps rewritten with higher numbers) re-reads from 0. An
  unparseable *last* step is still being written: it is left for the next read. Session id = slug.
* **crabdb** (2026-08..): ``store.crmem``, one member path ``store.crmem#<handle>`` per session.
  The store is replayed once per (size, mtime) (index snapshot at ``index_at``, then the records
  after it; a torn tail ends the replay and is counted). "size" = highest live ``msg/<idx>`` + 1,
  "offset" = next idx to read, "mtime" = a hash of the session's live records, the fingerprint
  = first live message; a message's offset/length are its value's bytes in the store, so ``load``
  is one ``pread``. Compaction deletes the msg keys, which shrinks "size": a full re-read drops the
  compacted messages from the index, as from the store (the meta summary remains).

**Events** (rule 11; crabtalk/crabtalk ``crates/store/src/interface/session.rs``
``append_session_events`` and ``crates/store/src/session/event.rs`` at 72fbe605, keyspace in
``docs/src/spec/storage.md``): crabdb also keeps ``session/<handle>/evt/<idx:012>`` keys, one
``EventLine`` each (``{"event": "tool_start" | "tool_result" | "done", ..., "ts"}``); like the
events of the older layouts, their ``ts`` widen the session's start and end. The
``session/<handle>/archive`` key names the memory entry a compaction moved the prefix to: no text.

Title: meta ``title`` (crabtalk's own ``set_title``), else the first user prompt (crabsearch's
fallback; crabtalk shows "(untitled)"). Summary: meta ``summary``, else the latest ``compact``
text (formats.md 7.2). Project: meta ``root`` (crabdb only). Messages carry no timestamps;
``started``/``updated`` come from meta ``created_at``/``updated_at`` and compaction/event times.
Both message shapes are read: OpenAI (``reasoning_content``, ``tool_calls``, ``role: tool``) and
Anthropic blocks (``thinking``, ``tool_use``, ``tool_result``); a guest agent's reply (``agent``
set) is an ``assistant`` message. Events are never messages (their ``ts`` widens the session).
Resume: none (formats.md 5: by handle through the daemon/TUI, no CLI flag), so None.
"""

from __future__ import annotations

import copy
import hashlib
import mmap
import os
import re
import struct
from pathlib import Path
from typing import Iterator, Mapping

from ..files import NotRegularFile, open_file, open_fd, read_at, read_file
from ..jsonl import LineStats, Record, loads
from ..model import (LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER,
                     Message, Role, Session, tool_call_label, tool_result_label)
from .base import (capped, FileRead, Source, dump_text, env_dir, parse_ts,
                   split_member, string, walk_files, member_path)
from .pieces import Piece, emit, piece_text

SUMMARY_CAP = 8192
"""Characters of a summary stored on the Session."""
KNOWN_KINDS = frozenset({"meta", "msg", "evt", "archive"})
"""The per-session keys of a crabdb store (``session/<handle>/<kind>...``, storage.md)."""
EVENT_KINDS = frozenset({"tool_start", "tool_result", "done"})
"""``EventLine`` kinds (``event``), for the drift check; an event's only use is its ``ts``."""
_HEADER = struct.Struct("<6sIH4xQQ")  # magic, version, flags, reserved, index_at, index_len: 32 bytes
_MAGIC = b"CRMEM\0"
_SESSION_COL = 1
_STEP = re.compile(r"step-(\d+)$")


class CrabtalkSource(Source):
    """Crabtalk (formats.md section 5): JSONL files, step directories and ``store.crmem``."""

    agent = "crabtalk"
    order = 50
    env_var = "CRABTALK_HOME"
    locations = "`~/.crabtalk/sessions/` (JSONL files and step directories), `~/.crabtalk/store.crmem`"
    reads = "events' times widen a session's start and end"
    override = "`CRABTALK_HOME=DIR`"
    upstream = "crabtalk `crates/store` @72fbe605; formats.md section 5"
    resume_doc = "- (through its daemon or TUI, by handle)"
    checked = "2026-12-06: main at 72fbe605"
    display = "Crabtalk"
    badge = "Crabtalk"
    known_kinds = {"store key": KNOWN_KINDS, "event": EVENT_KINDS}

    def __init__(self):
        self._stores: dict[str, tuple[tuple, dict]] = {}

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABTALK_HOME``, else ``~/.crabtalk``."""
        return [env_dir(env, "CRABTALK_HOME", home / ".crabtalk")]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """``sessions/*.jsonl``, ``sessions/*/*.jsonl``, step directories ``sessions/<slug>/``
        (holding ``meta`` or ``step-*``) and ``store.crmem#<handle>`` members."""
        for root in self.roots(env, home):
            sessions = root / "sessions"
            yield from walk_files(sessions, "*.jsonl")
            yield from walk_files(sessions, "*/*.jsonl")
            try:
                dirs = sorted(e.path for e in os.scandir(sessions) if e.is_dir())
            except OSError:
                dirs = []
            for d in dirs:
                if os.path.isfile(os.path.join(d, "meta")) or _steps(d):
                    yield Path(d)
            store = root / "store.crmem"
            try:
                handles = sorted(self._store(str(store))["sessions"]) if store.is_file() else []
            except OSError:
                handles = []
            for handle in handles:
                yield Path(member_path(store, handle))

    # -- units --------------------------------------------------------------------------------

    def stat(self, path: str) -> tuple[int, int, int]:
        """JSONL: the file's. Step dir: (highest step number + 1, newest mtime of the directory, meta
        and last step, ctime). crmem member: (highest msg idx + 1, hash of its live records,
        store ctime). Raises ``OSError`` (``FileNotFoundError`` when the unit is gone)."""
        kind = _kind(path)
        if kind == "jsonl":
            return super().stat(path)
        if kind == "steps":
            st = os.stat(path)
            steps = _steps(path)
            mtime = st.st_mtime_ns
            for name in ["meta"] + ([steps[-1][1]] if steps else []):
                try:
                    mtime = max(mtime, os.stat(os.path.join(path, name)).st_mtime_ns)
                except OSError:
                    pass
            return (steps[-1][0] + 1 if steps else 0), mtime, st.st_ctime_ns
        container, handle = split_member(path)
        store = self._store(container)
        info = store["sessions"].get(handle)
        if info is None:
            raise FileNotFoundError(2, "no such crabtalk session", path)
        msgs = info["msgs"]
        sig = hashlib.sha1(repr((info["meta"], sorted(msgs.items()), sorted(info["evts"].items()))).encode()).hexdigest()
        return (max(msgs) + 1 if msgs else 0), int(sig[:15], 16), store["ctime_ns"]

    def fingerprint(self, path: str, size: int) -> str:
        """JSONL: the head hash. Step dir: the first step's name and bytes. crmem member: the
        first live message's idx and bytes. Raises ``OSError``."""
        kind = _kind(path)
        if kind == "jsonl":
            return super().fingerprint(path, size)
        h = hashlib.sha1()
        if kind == "steps":
            steps = _steps(path)
            if steps:
                h.update(steps[0][1].encode())
                h.update(read_file(os.path.join(path, steps[0][1])))
            return h.hexdigest()
        container, handle = split_member(path)
        msgs = self._store(container)["sessions"].get(handle, {}).get("msgs") or {}
        if msgs:
            first = min(msgs)
            h.update(str(first).encode() + b"\0" + read_at(container, *msgs[first]))
        return h.hexdigest()

    def load(self, path: str, offset: int, length: int) -> object | None:
        """The record of one message: a JSONL line, step file ``step-<offset>`` (None when its
        size is no longer ``length``) or the store value at ``offset``. Raises ``OSError``."""
        kind = _kind(path)
        if kind == "jsonl":
            return super().load(path, offset, length)
        if kind == "steps":
            raw = read_file(Path(path, f"step-{offset:06d}"))
        else:
            raw = read_at(split_member(path)[0], offset, length)
        obj = _json(raw) if len(raw) == length else None
        return obj if isinstance(obj, dict) else None

    # -- reading ------------------------------------------------------------------------------

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """Read one unit from ``start`` (a byte offset, a step number or a msg idx, see the module
        docstring). Raises ``OSError`` when it cannot be read; a broken record, or one the reader
        cannot handle (:meth:`Source.take`), is skipped and counted."""
        kind = _kind(str(path))
        if kind == "jsonl":
            return super().read(path, start, state)
        if state is None or start == 0:
            sid = path.name if kind == "steps" else split_member(str(path))[1]
            start, state = 0, {"next_index": 0, "session": Session(
                agent=self.agent, session_id=sid, path=str(path)).to_state()}
        state = copy.deepcopy(state)
        session = Session.from_state(state["session"])
        stats = LineStats(end_offset=start)
        reader = self._read_steps if kind == "steps" else self._read_store
        meta, records = reader(str(path), start, stats)
        messages: list[Message] = []
        if isinstance(meta, dict):
            self.take(Record(meta, 0, 0), state, session, messages, stats, "meta",
                      lambda rec, state, session, out: _apply_meta(rec.obj, state, session))
        elif meta is not None:
            stats.skip("broken meta", "meta")
        for where, rec in records:
            self.take(rec, state, session, messages, stats, where)
        self._seal(state, session, stats)
        return FileRead(session, messages, stats.end_offset, state, stats)

    def _read_steps(self, path: str, start: int, stats: LineStats):
        try:
            meta = _json(read_file(Path(path, "meta")))
        except FileNotFoundError:
            meta = None
        except NotRegularFile:
            stats.skip("not a regular file", "meta")
            meta = None
        steps = [(n, name) for n, name in _steps(path) if n >= start]
        return meta, list(numbered_records(Path(path), steps, "step", stats))

    def _read_store(self, path: str, start: int, stats: LineStats):
        container, handle = split_member(path)
        store = self._store(container)
        info = store["sessions"].get(handle) or {"meta": None, "msgs": {}, "evts": {}}
        if start == 0 and store["sessions"] and handle == min(store["sessions"]):
            for reason, n in store["issues"].items():  # store-wide problems, counted once
                for _ in range(n):
                    stats.skip(reason)
        fd = open_fd(container)
        try:
            meta = _json(os.pread(fd, info["meta"][1], info["meta"][0])) if info["meta"] else None
            records = []
            for idx in sorted(info["evts"]):  # every read: their times only widen the session
                off, length = info["evts"][idx]
                obj = _json(os.pread(fd, length, off))
                if isinstance(obj, dict) and "event" in obj:
                    records.append((f"event {idx}", Record(obj, off, length)))
            for idx in sorted(i for i in info["msgs"] if i >= start):
                off, length = info["msgs"][idx]
                obj = _json(os.pread(fd, length, off))
                if isinstance(obj, dict):
                    records.append((f"message {idx}", Record(obj, off, length)))
                else:
                    stats.skip("broken message value", f"message {idx}")
                stats.end_offset = idx + 1
        finally:
            os.close(fd)
        return meta, records

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """A message (bare OpenAI line or ``{"message": ...}`` entry), a compact marker (summary
        message), an event (its ``ts`` only) or the JSONL meta line."""
        obj = rec.obj
        if isinstance(obj.get("message"), dict) or "role" in obj:
            emit(pieces_of(obj), rec, state, out, None)
        elif "compact" in obj or "archive_name" in obj:
            session.touch(parse_ts(obj.get("archived_at")))
            if string(obj.get("compact")).strip():
                state["compact"] = capped(obj["compact"].strip(), SUMMARY_CAP)
            emit(pieces_of(obj), rec, state, out, parse_ts(obj.get("archived_at")))
        elif "event" in obj:
            session.touch(parse_ts(obj.get("ts")))
        elif any(k in obj for k in ("created_at", "created_by", "title")):
            _apply_meta(obj, state, session)

    def finish(self, state: dict, session: Session) -> None:
        """Title = meta ``title`` > first prompt; summary = meta ``summary`` > latest compact."""
        session.title = state.get("title") or state.get("first_prompt") or None
        session.summary = state.get("summary") or state.get("compact") or None
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: crabtalk resumes a session by handle through its daemon/TUI (formats.md 5)."""
        return None

    def _store(self, path: str) -> dict:
        """The replayed store ``{"sessions": {handle: {"meta": (off, len) | None, "msgs": {idx:
        (off, len)}, "evts": {idx: (off, len)}}}, "issues": {reason: count}, "ctime_ns"}``, cached per
        (size, mtime, inode)."""
        with open_file(path) as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            hit = self._stores.get(path)
            if hit and hit[0] == key:
                return hit[1]
            if st.st_size < _HEADER.size:
                store = _group({}, {"not a crmem store": 1} if st.st_size else {})
            else:
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                    store = _replay(buf, st.st_size)
        store["ctime_ns"] = st.st_ctime_ns
        if len(self._stores) > 8:
            self._stores.clear()
        self._stores[path] = (key, store)
        return store


# -- crabdb store.crmem ------------------------------------------------------------------------


def _record(buf, size: int, pos: int):
    """``(op, col, key, value_offset, value_length, end)`` of the record at ``pos``, or None when
    it is torn or not a record."""
    if pos + 6 > size:
        return None
    op, col, klen = struct.unpack_from("<BBI", buf, pos)
    kend = pos + 6 + klen
    if op > 1 or col > 6 or kend + 4 > size:
        return None
    (vlen,) = struct.unpack_from("<I", buf, kend)
    end = kend + 4 + vlen
    return None if end > size else (op, col, bytes(buf[pos + 6:kend]), kend + 4, vlen, end)


def _replay(buf, size: int) -> dict:
    """Replay a store (formats.md 5.3): the snapshot the header points to, then the records after
    it (from byte 32 without one). Only Session-column ``local/session/`` keys are kept."""
    magic, version, _flags, index_at, index_len = _HEADER.unpack_from(buf, 0)
    if magic != _MAGIC or version != 1:
        return _group({}, {"not a crmem store" if magic != _MAGIC else "unknown crmem version": 1})
    live: dict[bytes, tuple[int, int]] = {}
    issues: dict[str, int] = {}
    pos = _HEADER.size
    if index_at:
        try:
            if index_at + index_len > size or index_at < pos:
                raise ValueError
            (count,) = struct.unpack_from("<I", buf, index_at)
            p = index_at + 4
            for _ in range(count):
                col, klen = struct.unpack_from("<BI", buf, p)
                key = bytes(buf[p + 5:p + 5 + klen])
                (off,) = struct.unpack_from("<Q", buf, p + 5 + klen)
                p += 13 + klen
                if col == _SESSION_COL and key.startswith(b"local/session/"):
                    rec = _record(buf, size, off)
                    if rec is None or rec[2] != key or rec[0] != 0:
                        raise ValueError
                    live[key] = rec[3:5]
            pos = index_at + index_len
        except (ValueError, struct.error):
            issues["bad index snapshot"] = 1
            live.clear()
    while pos < size:
        rec = _record(buf, size, pos)
        if rec is None:
            issues["torn tail record"] = 1
            break
        op, col, key, voff, vlen, pos = rec
        if col == _SESSION_COL and key.startswith(b"local/session/"):
            if op == 0:
                live[key] = (voff, vlen)
            else:
                live.pop(key, None)
    return _group(live, issues)


def _group(live: dict[bytes, tuple[int, int]], issues: dict[str, int]) -> dict:
    sessions: dict[str, dict] = {}
    for key, span in live.items():
        parts = key.decode("utf-8", "replace").split("/", 3)  # local, session, handle, rest
        if len(parts) < 4 or not parts[2] or "#" in parts[2]:
            continue
        info = sessions.setdefault(parts[2], {"meta": None, "msgs": {}, "evts": {}})
        if parts[3] == "meta":
            info["meta"] = span
        elif parts[3].startswith("msg/") and parts[3][4:].isdigit():
            info["msgs"][int(parts[3][4:])] = span
        elif parts[3].startswith("evt/") and parts[3][4:].isdigit():
            info["evts"][int(parts[3][4:])] = span
    return {"sessions": {h: i for h, i in sessions.items() if i["meta"] or i["msgs"]}, "issues": issues}


# -- stateless extraction ----------------------------------------------------------------------


def pieces_of(obj: dict) -> list[Piece]:
    """The messages of one record: a step/store entry ``{"agent"?, "message"}``, a bare JSONL
    message, or a legacy compact marker (one ``summary``)."""
    if isinstance(obj.get("message"), dict):
        return _message(obj["message"])
    if "role" in obj:
        return _message(obj)
    text = string(obj.get("compact")).strip()
    return [Piece(Role.SUMMARY, LABEL_SUMMARY, text)] if text else []


def _message(m: dict) -> list[Piece]:
    role, content = string(m.get("role")), m.get("content")
    if role == "tool":  # OpenAI tool result
        name = string(m.get("name")) or None
        return [Piece(Role.TOOL, tool_result_label(name) if name else None, _text(content), name,
                      string(m.get("tool_call_id")) or None)]
    kinds = {"user": (Role.USER, LABEL_USER), "assistant": (Role.ASSISTANT, LABEL_ASSISTANT),
             "system": (Role.SYSTEM, LABEL_SYSTEM)}
    if role not in kinds:
        return []
    out: list[Piece] = []
    if string(m.get("reasoning_content")).strip():
        out.append(Piece(Role.ASSISTANT, LABEL_THINKING, m["reasoning_content"]))
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for b in blocks if isinstance(blocks, list) else []:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text" and string(b.get("text")).strip():
            out.append(Piece(*kinds[role], b["text"], prompt=role == "user"))
        elif kind == "thinking" and string(b.get("thinking")).strip():
            out.append(Piece(Role.ASSISTANT, LABEL_THINKING, b["thinking"]))
        elif kind == "tool_use":
            name = string(b.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(b.get("input")), name,
                             string(b.get("id")) or None))
        elif kind == "tool_result":
            name = string(b.get("name")) or None
            out.append(Piece(Role.TOOL, tool_result_label(name) if name else None, _text(b.get("content")),
                             name, string(b.get("tool_use_id")) or None))
        elif kind == "image":
            out.append(Piece(*kinds[role], "[image]"))
    calls = m.get("tool_calls")
    for c in calls if isinstance(calls, list) else []:
        fn = c.get("function") if isinstance(c, dict) else None
        if isinstance(fn, dict):
            name = string(fn.get("name")) or "unknown"
            out.append(Piece(Role.ASSISTANT, tool_call_label(name), dump_text(fn.get("arguments")), name,
                             string(c.get("id")) or None))
    return out


def _text(content) -> str:
    """Tool output as text: a string, or the ``text`` of content blocks, else JSON."""
    if isinstance(content, list) and all(isinstance(b, (str, dict)) for b in content):
        return "\n".join(b if isinstance(b, str) else string(b.get("text")) for b in content)
    return dump_text(content)


# -- small helpers -----------------------------------------------------------------------------


def _kind(path: str) -> str:
    """``jsonl``, ``store`` (a ``*.crmem#<handle>`` member path) or ``steps`` (a directory)."""
    container, sep, member = path.rpartition("#")
    if sep and container.endswith(".crmem") and member and "/" not in member:
        return "store"
    return "jsonl" if path.endswith(".jsonl") else "steps"


def _steps(path: str) -> list[tuple[int, str]]:
    """``(number, name)`` of the ``step-N`` files of a step directory, by number ([] when none)."""
    try:
        names = os.listdir(path)
    except OSError:
        return []
    return sorted((int(m.group(1)), n) for n in names if (m := _STEP.match(n)))


def numbered_records(directory: Path, files: list[tuple[int, str]], what: str,
                     stats: LineStats) -> Iterator[tuple[str, Record]]:
    """``(place, record)`` of each file of ``files`` (``(number, name)`` in ``directory``, by
    number) holding a JSON object: ``place`` is ``"<what> <number>"``, the record's offset the
    number and its length the file's size. A file gone since the listing is passed over; one that
    is not a regular file, or not a JSON object, is skipped and counted in ``stats`` (``not a
    regular file``, ``broken <what>``), except the last, which may still be being written: it
    ends the read as ``pending``. ``stats.end_offset`` is the number after the last file read
    (set once its record has been taken, the generator resumed)."""
    for i, (n, name) in enumerate(files):
        try:
            raw = read_file(directory / name)
        except FileNotFoundError:
            continue  # removed (a rewind) since the listing
        except NotRegularFile:
            stats.skip("not a regular file", f"{what} {n}")
            stats.end_offset = n + 1
            continue
        obj = _json(raw)
        if not isinstance(obj, dict):
            if i == len(files) - 1:
                stats.pending = True  # the last file may still be being written
                break
            stats.skip(f"broken {what}", f"{what} {n}")
        else:
            yield f"{what} {n}", Record(obj, n, len(raw))
        stats.end_offset = n + 1


def _apply_meta(meta: dict, state: dict, session: Session) -> None:
    """Session meta (JSONL line 1, step ``meta``, store ``meta``): title, summary, times, root."""
    if "title" in meta:
        state["title"] = string(meta.get("title")).strip() or None
    if "summary" in meta:
        state["summary"] = capped(string(meta.get("summary")).strip(), SUMMARY_CAP) or None
    session.touch(parse_ts(meta.get("created_at")))
    session.touch(parse_ts(meta.get("updated_at")))
    if string(meta.get("root")):
        session.project = meta["root"]
    if string(meta.get("created_by")):
        session.extra["sender"] = meta["created_by"]


def _json(raw: bytes | None):
    """The JSON value of ``raw``: None when ``raw`` is None, ``False`` when it does not parse."""
    if raw is None:
        return None
    try:
        return loads(raw)
    except ValueError:
        return False


SOURCE = CrabtalkSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

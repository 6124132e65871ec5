"""Aider chat logs: ``.aider.chat.history.md`` in project directories the user lists.

Rules come from ``shared/reference/formats.md`` section 6 ("Aider") and the real logs in
``shared/corpus/real/aider``. Aider has no central store, so crabsearch looks where it is told:

* ``$CRABSEARCH_AIDER_DIRS`` (``os.pathsep``-separated directories), then ``dirs = [...]`` of the
  ``[aider]`` table of crabsearch's ``config.toml`` (found as ``crabsearch.config`` finds it:
  ``$CRABSEARCH_CONFIG``, else the platformdirs config dir, computed here from the env mapping and
  home: ``$XDG_CONFIG_HOME`` or ``~/.config`` on Linux, ``~/Library/Application Support`` on macOS;
  ``crabsearch.config`` does not expose the parsed TOML, so it is read again here), and always
  ``~/.aider.chat.history.md``. Each listed directory is searched itself and one and two levels
  below (people list their projects folder). ``$AIDER_CHAT_HISTORY_FILE`` (aider's own override)
  adds that file when absolute and otherwise renames the file looked for.
* One file holds many sessions, each starting at a ``# aider chat started at YYYY-MM-DD HH:MM:SS``
  line (local time). A session is a *member* ``<file>#<byte offset of its header>``; its size is
  its byte length (only the last member grows) and offsets stored with the index are relative to
  the member. Message offsets/lengths are absolute byte ranges in the file.
* Lines: ``####`` = user (one message per run of lines without a blank line), ``>`` = aider's tool/system output
  (``tool:aider`` payload: it holds shell output, never indexed), ``<thinking-content-HEX>`` ...
  ``</thinking-content-HEX>`` = thinking (an interrupted one ends at a ``####`` line after a blank
  line), anything else = assistant text. Inside a ``````` fence of
  assistant text, ``####`` and ``>`` lines are assistant text.
* Title: the first ``####`` line (formats.md 7.2), skipping ``(Y)es/(N)o`` confirmation answers.
  No ids: the session id is ``<header time>-<hash of file and offset>``. Project = the directory
  holding the file. Resume: ``aider --restore-chat-history`` there (it restores the whole log).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from ..files import open_file, read_text
from ..jsonl import LineStats
from ..model import LABEL_ASSISTANT, LABEL_THINKING, LABEL_USER, Role, Session, tool_result_label
from .base import HEAD_BYTES, FileRead, Source, cd_and, member_path, split_member
from .mdblocks import Block, fresh_state, lines_of, read_blocks, read_bytes

HISTORY = ".aider.chat.history.md"
LIVE_CHAT_MS = 12 * 3600 * 1000
"""A last chat's end (the file's mtime) is believed when it is at most this long after its start."""
HEADER = b"# aider chat started at "
TOOL = "aider"
"""Tool name of aider's ``>`` output lines."""
_CONFIRM = re.compile(r"\(Y\)es/\(N\)o")
_THINK_OPEN = re.compile(r"^<thinking-content-[0-9a-f]+>\s*$")
_THINK_CLOSE = re.compile(r"^</thinking-content-[0-9a-f]+>\s*$")
_CACHE: dict[str, tuple[int, int, list[int]]] = {}


# -- directories the user lists (shared with specstory.py) -------------------------------------


def config_file(env: Mapping[str, str], home: Path) -> Path:
    """crabsearch's ``config.toml``: ``$CRABSEARCH_CONFIG``, else the platformdirs location for
    ``home`` (``$XDG_CONFIG_HOME`` or ``~/.config`` on Linux, ``~/Library/Application Support`` on
    macOS, ``%APPDATA%`` on Windows), plus ``crabsearch/config.toml``."""
    if env.get("CRABSEARCH_CONFIG"):
        return expand(env["CRABSEARCH_CONFIG"], home)
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = expand(env["XDG_CONFIG_HOME"], home) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return base / "crabsearch" / "config.toml"


def listed_dirs(env: Mapping[str, str], home: Path, env_var: str, table: str) -> list[Path]:
    """Directories named by ``env_var`` (``os.pathsep``-separated) then by ``dirs`` of the TOML
    ``[table]`` of the config file, ``~`` expanded against ``home``, duplicates dropped. A missing
    or invalid config file lists nothing (``crabsearch status`` reports config problems). Never
    raises."""
    names = [p for p in env.get(env_var, "").split(os.pathsep) if p.strip()]
    try:
        text = read_text(config_file(env, home), "utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    if text:
        import tomllib  # with a config file only: not at every refresh's start

        try:
            data = tomllib.loads(text)
            dirs = data.get(table, {}).get("dirs", []) if isinstance(data.get(table), dict) else []
            names += [d for d in dirs if isinstance(d, str) and d.strip()] if isinstance(dirs, list) else []
        except tomllib.TOMLDecodeError:
            pass
    out: list[Path] = []
    for name in names:
        p = expand(name.strip(), home)
        if p not in out:
            out.append(p)
    return out


def expand(name: str, home: Path) -> Path:
    """``name`` as a Path with a leading ``~`` replaced by ``home`` (never the real HOME)."""
    if name == "~" or name.startswith("~/") or name.startswith("~" + os.sep):
        return home / name[2:] if len(name) > 1 else home
    return Path(name)


def find_below(dirs: Iterable[Path], relative: str, depth: int = 2) -> list[Path]:
    """Existing files ``d/relative``, ``d/*/relative``, ... down to ``depth`` levels below each
    directory, sorted per directory. Unreadable directories are skipped; never raises."""
    found: list[Path] = []
    for d in dirs_below(dirs, depth):
        p = d / relative
        if p.is_file() and p not in found:
            found.append(p)
    return found


def dirs_below(dirs: Iterable[Path], depth: int = 2) -> Iterator[Path]:
    """Each directory, then its non-hidden subdirectories down to ``depth`` levels (sorted)."""
    for d in dirs:
        level = [d]
        for n in range(depth + 1):
            yield from level
            if n < depth:
                level = [c for parent in level for c in _subdirs(parent)]


def _subdirs(d: Path) -> list[Path]:
    try:
        return sorted(c for c in d.iterdir() if c.is_dir() and not c.name.startswith("."))
    except OSError:
        return []


# -- Aider ---------------------------------------------------------------------------------------


class AiderSource(Source):
    """Aider (formats.md section 6): one session per ``# aider chat started at`` section."""

    agent = "aider"
    order = 110
    env_var = "CRABSEARCH_AIDER_DIRS"
    locations = "`.aider.chat.history.md` in `~`, and in directories you list (each, and two levels below)"
    override = "`CRABSEARCH_AIDER_DIRS=DIR:DIR`, or `[sources] aider = [\"~/code\"]`"
    upstream = "real public logs (`shared/corpus/real/aider`); formats.md section 6"
    display = "Aider"
    badge = "Aider"
    config_table = "aider"
    project_tree = True

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The listed directories (``$CRABSEARCH_AIDER_DIRS``, config ``[aider] dirs``) and home."""
        return listed_dirs(env, home, "CRABSEARCH_AIDER_DIRS", "aider") + [home]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[str]:
        """Member paths of every session in every history file (see the module docstring)."""
        name = env.get("AIDER_CHAT_HISTORY_FILE") or HISTORY
        files = [Path(name)] if os.path.isabs(name) and os.path.isfile(name) else []
        name = os.path.basename(name) or HISTORY
        files += find_below(listed_dirs(env, home, "CRABSEARCH_AIDER_DIRS", "aider"), name)
        for p in (home / name, home / HISTORY):
            if p.is_file() and p not in files:
                files.append(p)
        for f in files:
            try:
                _, starts = _members(str(f))
            except OSError:
                continue
            for off in starts:
                yield member_path(f, str(off))

    def stat(self, path: str) -> tuple[int, int, int]:
        """``(member length, mtime, ctime)``: the file's mtime for the last member, else a hash of
        the member's header line (earlier members never change). Raises ``OSError``
        (``FileNotFoundError`` when the member is gone)."""
        container, off, end, st, last = _locate(path)
        if last:
            return end - off, st.st_mtime_ns, st.st_ctime_ns
        head = read_bytes(container, off, 64).split(b"\n")[0]
        return end - off, int(hashlib.sha1(head).hexdigest()[:15], 16), st.st_ctime_ns

    def fingerprint(self, path: str, size: int) -> str:
        """SHA-1 of the member's first ``min(size, HEAD_BYTES)`` bytes. Raises ``OSError``."""
        container, off, _, _, _ = _locate(path)
        return hashlib.sha1(read_bytes(container, off, min(size, HEAD_BYTES))).hexdigest()

    def read(self, path: Path, start: int = 0, state: dict | None = None) -> FileRead:
        """Parse the member's byte range from ``start`` (relative to the member). Raises
        ``OSError`` (``FileNotFoundError`` when the file or the member is gone); a parser failure
        is counted, never fatal (:func:`~crabsearch.sources.mdblocks.read_blocks`)."""
        container, off, end, st, last = _locate(str(path))
        state, start = fresh_state(self, path, state, start)
        state["ctx"]["updated"] = st.st_mtime_ns // 1_000_000 if last else None
        data = read_bytes(container, off + start, end - off - start) if end > off + start else b""
        return read_blocks(self, path, off, start, state, _parse, data, LineStats())

    def finish(self, state: dict, session: Session) -> None:
        """Started = header time; updated = the file's mtime for the last member when it lies
        within :data:`LIVE_CHAT_MS` of that start (aider was still writing it), else started (a
        file copied, restored or touched later says nothing about the chat); title = first
        prompt; project = the directory of the file."""
        container = split_member(session.path)[0]
        ctx = state.get("ctx", {})
        started, updated = ctx.get("started"), ctx.get("updated")
        if started and updated and updated - started > LIVE_CHAT_MS:
            updated = None
        session.started = session.updated = _ms(started)
        session.touch(_ms(updated))
        stamp = (ctx.get("header") or "").replace("-", "").replace(":", "").replace(" ", "-")
        digest = hashlib.sha1(session.path.encode("utf-8", "replace")).hexdigest()[:8]
        session.session_id = f"{stamp or 'aider'}-{digest}"
        session.project = os.path.dirname(os.path.abspath(container))
        session.title = state.get("first_prompt") or None
        session.anchor_index = state.get("anchor", 0)

    def load(self, path: str, offset: int, length: int) -> str:
        """The raw Markdown of one message (its byte range). Raises ``OSError``."""
        container = split_member(path)[0] if "#" in os.path.basename(path) else path
        return read_bytes(container, offset, length).decode("utf-8", "replace")

    def message_text(self, obj, part: int, label: str) -> str:
        return block_text(str(obj), label)

    def resume_command(self, session: Session) -> str | None:
        """``cd <project> && aider --restore-chat-history`` (formats.md 6)."""
        return cd_and(session.project, ["aider", "--restore-chat-history"])


def block_text(raw: str, label: str) -> str:
    """A message's text from its raw lines: ``####``/``>`` prefixes and thinking tags removed."""
    lines = raw.replace("\r\n", "\n").split("\n")
    if label == LABEL_USER:
        lines = [_unprefix(ln, "####").rstrip() for ln in lines]
    elif label.startswith("tool:"):
        lines = [_unprefix(ln, ">").rstrip() for ln in lines]
    elif label == LABEL_THINKING:
        lines = [ln for ln in lines if not (_THINK_OPEN.match(ln) or _THINK_CLOSE.match(ln))]
    return "\n".join(lines).strip()


def _unprefix(line: str, mark: str) -> str:
    if line.startswith(mark + " "):
        return line[len(mark) + 1:]
    return line[len(mark):] if line.startswith(mark) else line


def _kind(line: str) -> str:
    if line.startswith("####") and (len(line) == 4 or line[4] in " \t"):
        return "user"
    if line.startswith(">") and (len(line) == 1 or line[1] in " \t"):
        return "tool"
    return "text"


_LABELS = {"user": (Role.USER, LABEL_USER, None), "tool": (Role.TOOL, tool_result_label(TOOL), TOOL),
           "text": (Role.ASSISTANT, LABEL_ASSISTANT, None), "think": (Role.ASSISTANT, LABEL_THINKING, None)}


def _parse(data: bytes, base: int, ctx: dict) -> Iterator[Block | int]:
    """Blocks of one member; every block start is a resume point. ``ctx`` keeps the header."""
    kind, first, last, fence, blank = None, 0, 0, False, True

    def block() -> Iterator[Block | int]:
        role, label, tool = _LABELS[kind]
        text = block_text(data[first - base:last - base].decode("utf-8", "replace"), label)
        if text:
            yield Block(role, label, first, last, text, tool,
                        prompt=kind == "user" and not _CONFIRM.search(text))

    for start, end, line in lines_of(data, base):
        if line.startswith(HEADER.decode()) and not kind:
            ctx["header"] = line[len(HEADER):].strip()
            ctx["started"] = _local_ms(ctx["header"])
            continue
        if kind == "think" and not (blank and _kind(line) == "user"):
            if _THINK_CLOSE.match(line):
                last = end
                yield from block()
                kind = None
            elif line.strip():
                last = end
            blank = not line.strip()
            continue
        if not line.strip():
            blank = True
            continue
        if kind == "text" and fence:
            new = "text"
        elif _THINK_OPEN.match(line):
            new = "think"
        else:
            new = _kind(line)
        split, blank = new == "user" and blank, False
        if new != kind or new == "think" or split:
            if kind:
                yield from block()
            yield start
            kind, first, fence = new, start, False
        if new == "text" and line.lstrip().startswith("```"):
            fence = not fence
        last = end
    if kind:
        yield from block()


def _local_ms(header: str) -> int | None:
    """Epoch ms of a ``YYYY-MM-DD HH:MM:SS`` header in the machine's local time (aider writes
    ``datetime.now()``); None when it does not parse."""
    try:
        return int(datetime.strptime(header[:19], "%Y-%m-%d %H:%M:%S").astimezone().timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None


def _ms(ms: int | None) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc) if ms else None


def _members(path: str) -> tuple[os.stat_result, list[int]]:
    """The file's stat and the byte offsets where its sessions start (cached per size and mtime):
    every header line, plus 0 when text precedes the first header. Raises ``OSError``."""
    st = os.stat(path)
    hit = _CACHE.get(path)
    if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
        return st, hit[2]
    starts: list[int] = []
    needle = b"\n" + HEADER
    with open_file(path) as fh:
        head = fh.read(65536)
        fh.seek(0)
        pos, tail = 0, b"\n"  # a header on the very first line counts too
        while chunk := fh.read(1 << 20):
            buf = tail + chunk
            i = buf.find(needle)
            while i >= 0:
                starts.append(pos - len(tail) + i + 1)
                i = buf.find(needle, i + 1)
            tail = buf[-(len(needle) - 1):]
            pos += len(chunk)
    if st.st_size and (not starts or head[:starts[0]].strip() or starts[0] > len(head)):
        starts.insert(0, 0)
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[path] = (st.st_size, st.st_mtime_ns, starts)
    return st, starts


def _locate(path: str) -> tuple[str, int, int, os.stat_result, bool]:
    """``(file, member start, member end, file stat, is last member)``. Raises ``OSError``
    (``FileNotFoundError`` when the member no longer starts a session) or ``ValueError``."""
    container, member = split_member(path)
    st, starts = _members(container)
    off = int(member)
    if off not in starts:
        raise FileNotFoundError(f"no aider session at byte {off} of {container}")
    i = starts.index(off)
    last = i == len(starts) - 1
    return container, off, st.st_size if last else starts[i + 1], st, last


SOURCE = AiderSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

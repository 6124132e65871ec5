"""What ``crabsearch status`` (and the app's status screen) reports about sources and the index.

Everything comes from the manifest, the index directory and a fresh discovery of the agents'
directories; nothing is indexed or written.
"""

from __future__ import annotations

import errno
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..files import NotRegularFile, read_file, read_text
from ..sources.base import MEMBER_SEP, container_of, noting_not_regular
from ..jsonl import lines_at, loads
from ..text import counted, printable
from . import vectors
from .manifest import Manifest
from .layout import STAMP, misplaced_current, misplaced_note, where
from .writer import LAST_REFRESH, Indexer

CLAUDE_DEFAULT_RETENTION_DAYS = 30


@dataclass
class AgentStatus:
    """One agent: where it looked, transcripts found on disk, and what the index holds.
    ``files_found`` counts the units found (one session each: a transcript file, or a session
    inside a file that holds many, such as an Aider history or an opencode database);
    ``files_holding`` the files (or session directories) they are in; ``files_empty`` the
    indexed ones that hold no session (an empty file, a Claude Code subagent's warm-up), which
    is why there can be fewer sessions than transcripts. ``files_not_regular`` counts what is
    named like a transcript but is not a regular file (a FIFO, a directory: never read, not in
    ``files_found``; each is listed in ``Status.unreadable_files`` too). The listing
    (:meth:`Status.format`) names the agents that found nothing on one line (:attr:`found_nothing`)."""

    agent: str
    display: str
    roots: list[str]
    files_found: int = 0
    files_holding: int = 0
    files_indexed: int = 0
    files_empty: int = 0
    sessions: int = 0
    messages: int = 0
    skipped_lines: int = 0
    files_not_regular: int = 0
    files_kept: int = 0
    """Indexed units this discovery did not find (found through other folders before: another
    ``CODEX_HOME``, a config since changed; or in a directory that cannot be listed now): the
    index keeps them while their files exist (``writer.Indexer.gone``)."""
    pointed: bool = False
    """True when the user pointed it at its folders: the config's ``[sources]`` for it, or its
    own environment variable (``CODEX_HOME``...) set."""

    @property
    def found_nothing(self) -> bool:
        """True when there is nothing to say of it but its name: nothing found, indexed or skipped
        in its usual folders, where the user did not point it."""
        return not (self.files_found or self.files_indexed or self.skipped_lines or self.files_not_regular
                    or self.pointed)


@dataclass
class Status:
    """The whole report (``to_json`` gives the ``crabsearch status --json`` object).

    ``skipped_files``: ``{"path", "skipped", "reasons": {reason: count}, "places": [...]}`` for the
    files with skipped lines or records (a record a reader cannot handle is skipped and counted,
    never fatal); ``places`` are the first few of them, each ``{"at", "line", "offset",
    "reason"}``: ``line`` (1-based) and ``offset`` (bytes) for a line of the file, else None and
    ``at`` naming the place (``row 12``, ``message 3``). ``unreadable_files``: ``{"path",
    "error"}`` for files that could not be read at all, by path: those the last refresh failed to
    read (the manifest's errors), and what discovery finds named like a transcript that is not a
    regular file (``error``: ``not a regular file (FIFO)``, as ``files.NotRegularFile`` says; the
    index never reads them), and the files found that this user cannot read now (``Permission
    denied``: a ``chmod`` after they were read, which changes no size or mtime, so no refresh
    tries them; their messages read as unavailable). ``unknown_kinds``: record kinds a reader does not know (a new kind in
    an agent's format), per agent and kind, ``{"agent", "kind",
    "records", "files", "example"}`` (``example``: the file holding the most of them), most records
    first. ``unreadable_dirs``: ``{"path", "error"}`` for the directories under an agent's root
    that could not be listed (``Permission denied``): their transcripts are not indexed."""

    index_dir: str
    index_bytes: int
    index_version: str | None
    last_refresh: str | None
    transcript_bytes: int
    agents: list[AgentStatus] = field(default_factory=list)
    skipped_files: list[dict] = field(default_factory=list)
    unreadable_files: list[dict] = field(default_factory=list)
    unreadable_dirs: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unknown_kinds: list[dict] = field(default_factory=list)
    similarity: dict = field(default_factory=dict)
    """Similarity search (``index.vectors``): ``{"vectors", "to_embed"}``, the messages and titles
    with a vector and the indexed messages not looked at yet (an upper bound: tool calls and
    results count, and get no vector); ``{"vectors": 0, "to_embed": 0}`` when it is off."""

    def to_json(self) -> dict:
        """A JSON-safe dict of every field."""
        return asdict(self)

    def format(self) -> str:
        """The readable ``crabsearch status`` listing (also shown by the app's status screen);
        control characters in paths are made visible."""
        size = f"{self.index_bytes / 1e6:.1f} MB"
        if self.transcript_bytes:  # files read so far, not databases: no share of what is on disk
            size += f", built from {self.transcript_bytes / 1e6:.1f} MB of transcript files"
        lines = [f"index: {self.index_dir} ({size})",
                 f"last refresh: {self.last_refresh or 'never'}; format {self.index_version or '-'}", ""]
        for a in self.agents:
            if a.found_nothing:
                continue
            found = (f"{counted(a.files_found, 'transcript')} found" if a.files_holding == a.files_found  # one file each
                     else f"{counted(a.files_found, 'session')} found in {counted(a.files_holding, 'file')}")
            if a.files_empty:
                found += f" ({a.files_empty} without messages)"
            lines.append(f"{a.display}: {found}, {counted(a.sessions, 'session')} "
                         f"and {counted(a.messages, 'message')} indexed, {counted(a.skipped_lines, 'line')} skipped"
                         + (f", {counted(a.files_not_regular, 'non-regular file')} skipped" if a.files_not_regular
                            else "")
                         + (f"; {counted(a.files_kept, 'indexed transcript')} not found in these folders now "
                            f"(kept while {'its file exists' if a.files_kept == 1 else 'their files exist'})"
                            if a.files_kept else ""))
            for root in a.roots:  # a folder, or a file (an imported export)
                lines.append(f"  looked in {root}" + ("" if Path(root).exists() else " (not found)"))
        missing = [a.display for a in self.agents if a.found_nothing]
        if missing:  # one line for them all: nine agents "0 transcripts found (not found)" hid the rest
            lines.append(f"no transcripts found for {', '.join(missing)} (in their usual folders: "
                         "crabsearch status --json lists them)")
        if self.skipped_files:
            lines += ["", "files with skipped lines:"]
            for f in self.skipped_files:
                why = ", ".join(f"{n} {r}" for r, n in f["reasons"].items())
                lines.append(f"  {f['skipped']:>5}  {f['path']}  ({why})")
                lines += [f"         {p['at']}: {p['reason']}" for p in f.get("places", [])]
        if self.unknown_kinds:
            lines += ["", "records of a kind crabsearch does not know (new in the agent's format?):"]
            for u in self.unknown_kinds:
                unit = "record" if MEMBER_SEP in u["example"] else "line"
                lines.append(f"  {u['agent']}: {counted(u['records'], unit)} of unknown kind `{u['kind']}` "
                             f"(e.g. {u['example']})")
        if self.unreadable_files:
            lines += ["", "unreadable files (skipped):"]
            lines += [f"  {f['path']}: {f['error']}" for f in self.unreadable_files]
        if self.unreadable_dirs:
            lines += ["", "unreadable directories (their transcripts are skipped):"]
            lines += [f"  {f['path']}: {f['error']}" for f in self.unreadable_dirs]
        sim = self.similarity
        if sim.get("vectors") or sim.get("to_embed"):
            left = (f"; up to {counted(sim['to_embed'], 'message', grouped=True)} to embed (crabsearch embed)"
                    if sim["to_embed"] else "")
            lines += ["", f"similarity search: {counted(sim['vectors'], 'vector', grouped=True)}{left}"]
        if self.warnings:
            lines += [""] + [f"warning: {w}" for w in self.warnings]
        return "\n".join(printable(line) for line in lines)


def collect(indexer: Indexer, *, top: int = 20) -> Status:
    """Build the status report for ``indexer``'s index and sources; ``top`` caps the list of
    files with skipped lines (most skipped first)."""
    d = indexer.index_dir
    manifest = Manifest.load(d)
    status = Status(
        index_dir=str(d), index_bytes=_dir_bytes(d), index_version=_read(where(d) / STAMP),
        last_refresh=_read(d / LAST_REFRESH),
        transcript_bytes=sum(e.get("bytes", e.get("size", 0)) for e in manifest.files.values()))
    by_agent: dict[str, AgentStatus] = {}
    for src in indexer.sources:
        # Pointed elsewhere: its own variable set (XDG_DATA_HOME, opencode's, is every program's)
        own_var = src.env_var and not src.env_var.startswith("XDG_")
        pointed = bool(indexer.extra_dirs.get(src.agent) or (own_var and indexer.env.get(src.env_var)))
        by_agent[src.agent] = AgentStatus(src.agent, src.display or src.agent,
                                          [str(r) for r in indexer.roots_of(src)], pointed=pointed)  # config dirs too
    holding: dict[str, set[str]] = {}
    unreadable_now: dict[str, str] = {}  # path -> the error status shows
    with noting_not_regular() as kinds:  # discovery yields FIFOs and directories too (only stat-ed)
        found = indexer.discover()
    for src, path in found:
        if path in kinds:
            by_agent[src.agent].files_not_regular += 1
            unreadable_now[path] = NotRegularFile(path, kinds[path]).strerror
            continue
        by_agent[src.agent].files_found += 1
        holding.setdefault(src.agent, set()).add(container_of(path))
    for files in holding.values():  # unreadable now, though unchanged since it was read (a chmod)
        for path in files:
            if os.path.isfile(path) and not os.access(path, os.R_OK):
                unreadable_now[path] = os.strerror(errno.EACCES)
    for agent, files in holding.items():
        by_agent[agent].files_holding = len(files)
    found_paths = {path for _, path in found}
    for path, e in manifest.files.items():
        a = by_agent.get(e.get("agent"))
        if a is None:
            continue
        a.files_indexed += 1
        a.files_kept += path not in found_paths
        a.messages += e.get("messages", 0)
        session = e.get("session", bool(e.get("messages")))  # a titled, emptied session counts
        a.sessions += 1 if session else 0
        a.files_empty += 0 if session else 1
        a.skipped_lines += e.get("skipped", 0)
        if e.get("skipped"):
            status.skipped_files.append({"path": path, "skipped": e["skipped"], "reasons": e.get("reasons", {}),
                                         "places": e.get("places") or []})
    status.skipped_files.sort(key=lambda f: -f["skipped"])
    del status.skipped_files[top:]
    status.similarity = {"vectors": vectors.count(d), "to_embed": vectors.pending(d)}
    for f in status.skipped_files:
        f["places"] = places(f["path"], f["places"])
    status.agents = list(by_agent.values())
    errors = {p: e.get("error") for p, e in manifest.errors.items()} | unreadable_now  # what it is now
    status.unreadable_files = [{"path": p, "error": e} for p, e in sorted(errors.items())]
    status.unreadable_dirs = [{"path": p, "error": e} for p, e in sorted(indexer.unreadable_dirs.items())]
    status.unknown_kinds = unknown_kinds(manifest)
    status.warnings = retention_warnings(indexer)
    misplaced = misplaced_current(d)
    if misplaced:
        status.warnings.insert(0, f"{misplaced_note(misplaced)}: `crabsearch index` deletes it and rebuilds "
                                  "the index from the transcripts")
    return status


UNKNOWN_KINDS_LISTED = 200
"""Distinct unknown kinds listed per agent (the most records first): every kind of a real home's
drift is named (a reader names up to ``base.UNKNOWN_KINDS_KEPT`` per file), while a home of
hostile files naming a new kind on every line cannot make the listing endless."""


def unknown_kinds(manifest: Manifest) -> list[dict]:
    """The unknown record kinds the readers counted (:meth:`Manifest.unknown_kinds`), added up
    per agent and kind: ``{"agent", "kind", "records", "files", "example"}``, most records first
    (``example``: the file holding the most of them); at most :data:`UNKNOWN_KINDS_LISTED` kinds
    per agent."""
    by: dict[tuple[str, str], dict] = {}
    for path, agent, kinds in manifest.unknown_kinds():
        for kind, n in kinds.items():
            u = by.setdefault((agent or "?", kind), {"agent": agent or "?", "kind": kind, "records": 0,
                                                     "files": 0, "example": path, "_most": 0})
            u["records"] += n
            u["files"] += 1
            if n > u["_most"]:
                u["example"], u["_most"] = path, n
    out = sorted(by.values(), key=lambda u: (-u["records"], u["agent"], u["kind"]))
    listed: dict[str, int] = {}
    kept = []
    for u in out:
        del u["_most"]
        listed[u["agent"]] = listed.get(u["agent"], 0) + 1
        if listed[u["agent"]] <= UNKNOWN_KINDS_LISTED:
            kept.append(u)
    return kept


def retention_warnings(indexer: Indexer) -> list[str]:
    """Warnings about agents deleting their own transcripts: Claude Code removes sessions older
    than ``cleanupPeriodDays`` (``settings.json``; default 30 days, formats.md section 0). None
    about the demo's bundled home (``--demo``): its files are part of the installed package."""
    from ..paths import demo_home

    out = []
    src = next((s for s in indexer.sources if s.agent == "claude"), None)
    if src is None:
        return out
    demo = demo_home()
    for root in src.roots(indexer.env, indexer.home):
        if not root.is_dir() or root.resolve().is_relative_to(demo):
            continue
        days, where = CLAUDE_DEFAULT_RETENTION_DAYS, "the default"
        try:
            value = loads(read_file(root / "settings.json")).get("cleanupPeriodDays")
            if value is not None:
                days, where = int(value), f"cleanupPeriodDays in {root / 'settings.json'}"
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        out.append(f"Claude Code deletes transcripts older than {days} days ({where}); crabsearch drops "
                   "a session from the index when its transcript is deleted. Set a larger "
                   f"cleanupPeriodDays in {root / 'settings.json'} to keep more history.")
    return out


def places(path: str, stored: list) -> list[dict]:
    """The stored ``[where, reason]`` places of a file's skipped lines as status items
    ``{"at", "line", "offset", "reason"}``: a byte offset becomes its 1-based line number, counted
    in the file as it is now (``line ?`` when the file is gone or shorter); other places are
    shown as stored (``file`` when the whole unit is meant)."""
    out = []
    items = [tuple(p) for p in stored if isinstance(p, (list, tuple)) and len(p) == 2]
    offsets = sorted({w for w, _ in items if isinstance(w, int) and not isinstance(w, bool)})
    numbers = line_numbers(path, offsets) if offsets else {}
    for where, reason in items:
        if isinstance(where, int) and not isinstance(where, bool):
            line = numbers.get(where)
            out.append({"at": f"line {line if line else '?'}", "line": line, "offset": where,
                        "reason": str(reason)})
        else:
            out.append({"at": str(where) if where is not None else "file", "line": None, "offset": None,
                        "reason": str(reason)})
    return out


def line_numbers(path: str, offsets: list[int]) -> dict[int, int]:
    """``{offset: 1-based line number}`` for the byte ``offsets`` of ``path``
    (:func:`~crabsearch.jsonl.lines_at`; offsets past the end, or a file that cannot be read,
    get none)."""
    if not os.path.isfile(path):
        return {}
    try:
        return {off: line for off, (line, _) in lines_at(path, offsets).items()}
    except OSError:
        return {}


def _dir_bytes(d: Path) -> int:
    """Bytes of the files in ``d`` and its generations (a rebuild in progress counts too)."""
    total = 0
    try:
        for p in d.iterdir():
            if p.is_symlink():
                continue
            if p.is_file():
                total += p.stat().st_size
            elif p.is_dir():
                total += _dir_bytes(p)
    except OSError:
        pass
    return total


def _read(p: Path) -> str | None:
    try:
        return read_text(p, "utf-8").strip() or None
    except OSError:
        return None

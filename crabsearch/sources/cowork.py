"""Claude Desktop's local agent mode (Cowork): the Claude Code transcripts the desktop app keeps for
each of its sessions, read by the Claude Code reader (:mod:`crabsearch.sources.claude`).

Claude Desktop is closed and publishes no schema of these files; the layout and fields follow
kenn-io/agentsview ``internal/parser/cowork.go``, ``cowork_paths.go`` and ``cowork_provider.go``
at 538600744d1b (its ``docs/internal/session-format-sources.md`` says the same of the app):

    <root>/<org id>/<workspace id>/local_<uuid>.json          the session's metadata
    <root>/<org id>/<workspace id>/local_<uuid>/.claude/projects/<slug>/<cliSessionId>.jsonl
    .../local_<uuid>/.claude/projects/<slug>/<cliSessionId>/subagents/**/agent-<id>.jsonl

``<root>`` is ``local-agent-mode-sessions`` in the app's Electron user-data folder:
``$XDG_CONFIG_HOME/Claude`` (else ``~/.config/Claude``) on Linux, ``~/Library/Application
Support/Claude`` on macOS, ``%APPDATA%\\Claude`` on Windows and, for the Store (MSIX) install,
``%LOCALAPPDATA%\\Packages\\Claude_pzs8sxrjxfjjc\\LocalCache\\Roaming\\Claude``.

Rules:

* **Discovery**: the metadata files ``local_<uuid>.json`` anywhere under the root, never entering
  a session's own folder ``local_<uuid>/`` (its ``outputs`` hold whole projects) nor
  ``skills-plugin``; for each whose ``cliSessionId`` names a transcript, that transcript in any
  ``<slug>`` folder of the session's ``.claude/projects`` and its subagents. A metadata file
  without ``cliSessionId`` (a session never run), or whose transcript is not there, is no session;
  other transcripts in the session's ``.claude`` are not read (agentsview's rule: the metadata
  names the conversation).
* **Transcripts**: every rule of the Claude Code reader (subagents, compactions, rewinds, tool
  calls and results, secrets). The session id is Claude Code's (``cliSessionId``).
* **Title**: the metadata's ``title`` (the name the app shows, and renames there), then Claude
  Code's title order; a subagent keeps its own (its task). The metadata file's mtime counts as the
  transcript's (:meth:`CoworkSource.stat`), so a rename in the app refreshes the session.
* **Project**: the first of the metadata's ``userSelectedFolders`` (the host folders the person
  attached), else the transcript's ``cwd`` (a path inside the app's VM, ``/sessions/<name>``).
* **Metadata file**: at most :data:`META_BYTES` are read; a missing or broken one leaves the
  transcript's own fields. ``createdAt`` / ``lastActivityAt`` are not read: a transcript's lines
  carry their times.
* **Resume**: none from a terminal (the conversation belongs to the app's session); it is
  reopened in Claude Desktop.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import loads
from ..model import Session
from .base import capped, matching, pick_title, string, walk_files
from .claude import TITLE_CAP, ClaudeSource

META_BYTES = 1 << 20
"""Bytes of a ``local_<uuid>.json`` read (the app's own are a few kilobytes)."""
_META_NAME = re.compile(r"local_[A-Za-z0-9-]+\.json")
_CLI_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
"""A ``cliSessionId`` that names a file (agentsview's ``IsValidSessionID``: no separators)."""
_PRUNED = ("skills-plugin", "node_modules", ".git")
_MARKER = f"{os.sep}.claude{os.sep}projects{os.sep}"


class CoworkSource(ClaudeSource):
    """Claude Desktop's Cowork sessions: Claude Code transcripts under the app's
    ``local-agent-mode-sessions`` folder, titled by their ``local_<uuid>.json``."""

    agent = "cowork"
    order = 200
    display = "Claude Cowork"
    badge = "Cowork"
    env_var = "CRABSEARCH_COWORK_DIR"
    style = "bold white on orange4"
    locations = ("Claude Desktop's `local-agent-mode-sessions/<org>/<workspace>/local_<uuid>.json` and the "
                 "transcript it names, `local_<uuid>/.claude/projects/*/<cliSessionId>.jsonl` (+ subagents), "
                 "in `~/.config/Claude`, `~/Library/Application Support/Claude` or `%APPDATA%\\Claude`")
    reads = ("all the Claude Code reader reads; the title the app shows (`local_<uuid>.json`, renames "
             "too); the folders you attached as the project")
    override = "`CRABSEARCH_COWORK_DIR=DIR` (a `local-agent-mode-sessions` folder)"
    upstream = ("agentsview `internal/parser/cowork.go`, `cowork_paths.go` @538600744d1b (the app is closed: "
                "no published schema); the Claude Code reader for the transcripts")
    checked = "2026-12-06: agentsview 538600744d1b"
    resume_doc = "none from a terminal: reopen it in Claude Desktop"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_COWORK_DIR``, else this platform's ``local-agent-mode-sessions`` (listed
        even when missing), then the other platforms' that exist (a home copied from another
        machine)."""
        if env.get("CRABSEARCH_COWORK_DIR"):
            return [Path(os.path.expanduser(env["CRABSEARCH_COWORK_DIR"]))]
        local = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
        apps = {"linux": Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Claude",
                "darwin": home / "Library" / "Application Support" / "Claude",
                "win32": Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Claude",
                "msix": local / "Packages" / "Claude_pzs8sxrjxfjjc" / "LocalCache" / "Roaming" / "Claude"}
        first = apps.pop(sys.platform if sys.platform in ("darwin", "win32") else "linux")
        found = [d / "local-agent-mode-sessions" for d in apps.values()]
        return [first / "local-agent-mode-sessions"] + [d for d in found if d.is_dir()]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """For each ``local_<uuid>.json`` naming a ``cliSessionId``, its transcript and subagents
        (module docstring)."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for meta_path in walk_files(root, "**/local_*.json", prune=_pruned):
                cli = string(read_meta(meta_path).get("cliSessionId"))
                if not _META_NAME.fullmatch(meta_path.name) or not _CLI_ID.fullmatch(cli):
                    continue
                projects = meta_path.with_suffix("") / ".claude" / "projects"
                found = list(walk_files(projects, "**/*.jsonl"))
                for pattern in (f"*/{cli}.jsonl", f"*/{cli}/subagents/**/agent-*.jsonl"):
                    for path in matching(found, projects, pattern):
                        if path not in seen:
                            seen.add(path)
                            yield path

    def stat(self, path: str) -> tuple[int, int, int]:
        """Claude Code's ``(size, mtime_ns, ctime_ns)``, the mtime the latest of it and the
        session's ``local_<uuid>.json`` (a rename in the app changes only that file)."""
        size, mtime, ctime = super().stat(path)
        meta = meta_path_of(path)
        if meta:
            try:
                mtime = max(mtime, os.stat(meta).st_mtime_ns)
            except OSError:
                pass
        return size, mtime, ctime

    def new_state(self, path: Path) -> dict:
        """Claude Code's state, and the session's metadata file."""
        state = super().new_state(path)
        state["cowork_meta"] = meta_path_of(str(path))
        return state

    def finish(self, state: dict, session: Session) -> None:
        """Claude Code's fields, then the metadata's title (not a subagent's) and attached folder."""
        super().finish(state, session)
        meta = read_meta(state["cowork_meta"]) if state.get("cowork_meta") else {}
        title = string(meta.get("title")).strip()
        if title and not state.get("sub"):
            session.title = pick_title(capped(title, TITLE_CAP), session.title)
        folders = meta.get("userSelectedFolders")
        folder = next((f for f in folders if string(f).strip()), None) if isinstance(folders, list) else None
        if folder:
            session.project = folder

    def resume_command(self, session: Session) -> str | None:
        """None: a Cowork session is reopened in Claude Desktop, not from a terminal."""
        return None


def meta_path_of(transcript: str) -> str | None:
    """``<...>/local_<uuid>.json`` of a transcript under ``<...>/local_<uuid>/.claude/projects/``,
    else None."""
    session_dir, marker, _ = transcript.rpartition(_MARKER)
    return session_dir + ".json" if marker and os.path.basename(session_dir).startswith("local_") else None


def read_meta(path: str | os.PathLike) -> dict:
    """The JSON object of a ``local_<uuid>.json``, or ``{}`` when it is missing, not a regular file,
    larger than :data:`META_BYTES` or not a JSON object."""
    try:
        data = read_file(path, META_BYTES + 1)
        obj = loads(data) if len(data) <= META_BYTES else None
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _pruned(name: str) -> bool:
    return name.startswith("local_") or name in _PRUNED


SOURCE = CoworkSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""oh-my-pi (``omp``, can1357/oh-my-pi): a pi fork writing pi's session format v3 with entries of
its own, read by the pi reader (:mod:`crabsearch.sources.pi`).

Where its rules come from: the TypeScript that npm ``@oh-my-pi/pi-coding-agent`` 18.3.4 ships
(``src/session/session-entries.ts``, ``session-title-slot.ts``, ``session-listing.ts``,
``session-manager.ts``, ``messages.ts``, ``task/executor.ts``, ``cli/flag-tables.ts``) and
``@oh-my-pi/pi-utils`` 18.2.9 ``src/dirs.ts``:

* **Layout**: ``~/.omp/agent/sessions/<cwd folder>/<ISO time>_<uuid>.jsonl`` (``~/.omp`` is
  ``~/$PI_CONFIG_DIR`` when set); named profiles keep theirs in ``~/.omp/profiles/<name>/agent/
  sessions``; on Linux and macOS, once ``$XDG_DATA_HOME/omp`` exists, in ``$XDG_DATA_HOME/omp/
  sessions`` (profiles: ``$XDG_DATA_HOME/omp/profiles/<name>/sessions``). Every one of them is
  read. A subagent's transcript lies in its parent's artifacts folder, ``<parent file without
  .jsonl>/<agent id>.jsonl`` (``task/executor.ts``); the advisor's ``__advisor*.jsonl`` there
  repeats the parent's conversation ("observability-only", omp's own listing skips it) and is
  not read. omp's ``PI_CODING_AGENT_DIR`` is the variable pi reads too: crabsearch reads that
  folder as pi's (``CRABSEARCH_OMP_DIR`` reads a sessions folder as omp's).
* **Title slot**: the first line of a file may be a fixed-width (256 bytes) ``{"type": "title",
  "v": 1, "title", "source"?, "updatedAt", "pad"}`` rewritten in place when the session is
  renamed; the file's head then differs, and the session is read again whole. Title (omp's
  ``scanSessionFile``): the slot's title (an empty one means none, and the header's is not used),
  else the header's ``title``; then the latest compaction's ``shortSummary``; then the first user
  prompt (pi's rule).
* **Entries** beyond pi's: ``model_usage``, ``service_tier_change``, ``reset_boundary``,
  ``ttsr_injection``, ``session_init`` (a subagent's task and agent: ``extra["agent_type"]``),
  ``mode_change``, ``credential_pin`` and ``title_change`` carry no conversation.
* **Message roles** beyond pi's (``messages.ts``): ``developer`` -> system; ``pythonExecution``
  (the person's ``$ code``) -> user ``$ code`` plus a ``tool:python`` result; ``fileMention``
  (files attached with ``@``) -> a ``tool:file`` result per file (its path and content).
* **Resume**: ``omp --resume <id>`` (``--resume``/``-r``/``--session``: a session of the folder,
  else of any folder); a subagent resumes its parent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Mapping

from ..files import read_file
from ..jsonl import Record, loads
from ..model import LABEL_SYSTEM, LABEL_USER, Message, Role, Session, tool_result_label
from .base import capped, cd_and, string, walk_files
from .pi import KNOWN_KINDS, PiSource, content_text, entry_pieces
from .pieces import Piece

OMP_KINDS = KNOWN_KINDS | frozenset({"title", "model_usage", "service_tier_change", "reset_boundary",
                                     "ttsr_injection", "session_init", "mode_change", "credential_pin",
                                     "title_change"})
"""Entry types of omp 18.3.4 (``SessionEntry`` in ``session-entries.ts``, and the title slot) with
pi's; any other is counted as drift."""
TITLE_CAP = 200
HEADER_BYTES = 64 * 1024
"""Bytes of a parent transcript read for its header's session id."""


class OmpSource(PiSource):
    """oh-my-pi: pi v3 transcripts under ``~/.omp/agent/sessions`` (module docstring)."""

    agent = "omp"
    order = 220
    display = "oh-my-pi"
    badge = "omp"
    env_var = "CRABSEARCH_OMP_DIR"
    style = "bold white on purple4"
    known_kinds = {"line": OMP_KINDS}
    locations = ("`~/.omp/agent/sessions/**/*.jsonl`, profiles' `~/.omp/profiles/*/agent/sessions`, "
                 "`$XDG_DATA_HOME/omp/sessions`; subagents in `<session>/<agent>.jsonl`")
    reads = ("branches; the title as omp shows it (its title slot, renames too); subagents linked to their "
             "parent; `$ python` and `! bash` runs; files attached with `@` (as tool output)")
    override = ("`CRABSEARCH_OMP_DIR=DIR` (a sessions folder); omp's `PI_CODING_AGENT_DIR` is read as pi's")
    upstream = ("`@oh-my-pi/pi-coding-agent` 18.3.4 (`src/session/session-entries.ts`, `session-title-slot.ts`, "
                "`session-listing.ts`, `messages.ts`), `@oh-my-pi/pi-utils` 18.2.9 `src/dirs.ts`; the pi reader")
    checked = "2026-12-06: 18.3.4"

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_OMP_DIR``, else ``~/.omp/agent/sessions`` (listed even when missing), then
        the profiles' and the XDG folders that exist (module docstring)."""
        if env.get("CRABSEARCH_OMP_DIR"):
            return [Path(os.path.expanduser(env["CRABSEARCH_OMP_DIR"]))]
        base = home / (env.get("PI_CONFIG_DIR") or ".omp")
        found = sorted(p / "agent" / "sessions" for p in _dirs(base / "profiles"))
        if env.get("XDG_DATA_HOME"):
            xdg = Path(os.path.expanduser(env["XDG_DATA_HOME"])) / "omp"
            found += [xdg / "sessions"] + sorted(p / "sessions" for p in _dirs(xdg / "profiles"))
        return [base / "agent" / "sessions"] + [d for d in found if d.is_dir()]

    def discover(self, env: Mapping[str, str], home: Path) -> Iterator[Path]:
        """Every ``*.jsonl`` under the roots but the advisors' ``__advisor*.jsonl``."""
        seen: set[Path] = set()
        for root in self.roots(env, home):
            for path in walk_files(root, "**/*.jsonl"):
                if not path.name.startswith("__advisor") and path not in seen:
                    seen.add(path)
                    yield path

    def new_state(self, path: Path) -> dict:
        """pi's state, and the parent transcript when the file lies in another's artifacts folder."""
        state = super().new_state(path)
        parent = str(path.parent) + ".jsonl"
        if os.path.isfile(parent):
            state["parent_file"] = parent
        return state

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        """The title slot (first line only), the header's title, compactions' short summaries and
        subagents' ``session_init``, then pi's reading of the entry."""
        obj = rec.obj
        kind = obj.get("type")
        if kind == "title":
            if rec.offset == 0 and obj.get("v") == 1 and isinstance(obj.get("title"), str):
                state["slot"] = capped(obj["title"].strip(), TITLE_CAP)
            return
        if kind == "session" and string(obj.get("title")).strip():
            state.setdefault("header_title", capped(obj["title"].strip(), TITLE_CAP))
        elif kind == "compaction" and string(obj.get("shortSummary")).strip():
            state["short_summary"] = capped(obj["shortSummary"].strip(), TITLE_CAP)
        elif kind == "session_init" and string(obj.get("agent")):
            session.extra["agent_type"] = obj["agent"][:TITLE_CAP]
        super().process(rec, state, session, out)

    def stored_title(self, state: dict, session: Session) -> str | None:
        """The slot's title (empty: none), else the header's; then the latest short summary."""
        title = (state["slot"] or None) if "slot" in state else state.get("header_title")
        return title or state.get("short_summary")

    def finish(self, state: dict, session: Session) -> None:
        """pi's fields, and a subagent's parent (the id in its parent transcript's header)."""
        super().finish(state, session)
        if state.get("parent_file"):
            if "parent_id" not in state:
                state["parent_id"] = header_id(state["parent_file"]) or self.id_from_path(Path(state["parent_file"]))
            session.parent_session_id = state["parent_id"]

    def pieces(self, obj: dict) -> list[Piece]:
        """pi's pieces, and those of omp's own message roles (module docstring)."""
        msg = obj.get("message")
        role = msg.get("role") if obj.get("type") == "message" and isinstance(msg, dict) else None
        if role == "developer":
            text = content_text(msg.get("content"))
            return [Piece(Role.SYSTEM, LABEL_SYSTEM, text)] if text.strip() else []
        if role == "pythonExecution":
            out = [Piece(Role.USER, LABEL_USER, "$ " + string(msg.get("code")))]
            return out + [Piece(Role.TOOL, tool_result_label("python"), string(msg.get("output")), "python")]
        if role == "fileMention":
            files = msg.get("files") if isinstance(msg.get("files"), list) else []
            return [Piece(Role.TOOL, tool_result_label("file"), f"{string(f.get('path'))}\n{string(f.get('content'))}",
                          "file") for f in files if isinstance(f, dict)]
        return entry_pieces(obj)

    def resume_command(self, session: Session) -> str | None:
        """``cd <cwd> && omp --resume <id>``; a subagent's resumes its parent."""
        target = session.parent_session_id or session.session_id
        return cd_and(session.project, ["omp", "--resume", target])


def header_id(path: str) -> str | None:
    """The ``id`` of the ``session`` header among the first lines of the transcript at ``path``
    (after a title slot), or None when it cannot be read or has none."""
    try:
        head = read_file(path, HEADER_BYTES)
    except OSError:
        return None
    for line in head.split(b"\n")[:-1][:2]:
        try:
            obj = loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "session":
            return string(obj.get("id")) or None
    return None


def _dirs(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []


SOURCE = OmpSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""Warp's agent conversations: the prompts you sent, from ``warp.sqlite``.

Rules come from Warp's own code (warpdotdev/warp at 19548aec6285): ``crates/persistence/src/
schema.rs`` and ``migrations/`` (``ai_queries``, ``agent_conversations``, ``agent_tasks``),
``app/src/persistence/block_list.rs`` (``NewAIQuery``), ``app/src/ai/blocklist/persistence.rs``
(``PersistedAIInputType``), ``app/src/persistence/agent.rs`` and ``crates/persistence/src/
model.rs`` (``AgentConversationData``, ``AgentConversationSummary``), ``crates/warp_core/src/
paths.rs`` (where the store is); agentsview's ``internal/parser/warp.go`` reads the same rows.

* **Where**: Warp's state directory: ``$XDG_STATE_HOME/warp-terminal`` (``~/.local/state/...``;
  ``warp-terminal-preview`` for Preview) on Linux, the app group container
  ``~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable``
  (else ``~/Library/Application Support/dev.warp.Warp-Stable``) on macOS,
  ``%LOCALAPPDATA%\\warp\\Warp\\data`` on Windows; the terminal UI keeps its own store in ``tui/``
  beneath. Warp has no variable naming the directory: ``CRABSEARCH_WARP_DIR`` does.
* **What is read**: every ``ai_queries`` row (``exchange_id, conversation_id, start_ts,
  input, working_directory, output_status, model_id``) whose ``input`` (``[{"Query": {"text",
  "context", "referenced_attachments"}}]``) holds a query: the user's prompt (its ``text``; the
  attached context is not read). A conversation is a session, its rows read incrementally by
  rowid. ``agent_conversations`` gives the title (its ``summary`` JSON ``title``, else the first
  prompt), the first working directory (``initial_working_directory``, else the first row's
  ``working_directory``) and the parent of a child agent (``conversation_data``
  ``parent_conversation_id``).
* **Not read**: Warp's answers, tool calls and their output live in ``agent_tasks.task``, a
  protobuf ``api::Task`` whose schema is in Warp's separate ``warp-proto-apis`` repository, not
  published with the app's source: they are not guessed at.
* **Resume**: none from a shell; a conversation reopens from Warp's conversation history.
* **Drift**: an input kind other than ``Query`` is counted and listed by ``status``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Mapping

from ..jsonl import Record
from ..model import LABEL_USER, Message, Role, Session
from .base import capped, note_unknown, parse_ts, string
from .pieces import Piece, emit, piece_text
from .sqlstore import StoreSource, epoch_ms, json_of, table_columns, unique_files

INPUT_KINDS = frozenset({"Query"})
"""``PersistedAIInputType`` variants (only ``Query`` is persisted)."""
DB_NAME = "warp.sqlite"
MAC_GROUP = "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support"
CHANNELS = (("warp-terminal", "dev.warp.Warp-Stable", "Warp"),
            ("warp-terminal-preview", "dev.warp.Warp-Preview", "WarpPreview"))
"""Per channel: the Linux project directory, the macOS bundle id, the Windows application name."""


class WarpSource(StoreSource):
    """Warp: agent conversations in ``warp.sqlite`` (member paths), the user's prompts only."""

    agent = "warp"
    order = 280
    display = "Warp"
    badge = "Warp"
    env_var = "CRABSEARCH_WARP_DIR"
    style = "bold white on grey35"
    locations = ("`~/.local/state/warp-terminal/warp.sqlite` (macOS: the `dev.warp.Warp-Stable` app group "
                 "container; Windows: `%LOCALAPPDATA%\\warp\\Warp\\data`)")
    reads = ("your prompts of each agent conversation, its title and working directory, child agents linked; "
             "**not** Warp's answers or tool calls (a protobuf whose schema Warp does not publish)")
    override = "`CRABSEARCH_WARP_DIR=DIR` (the directory holding `warp.sqlite`), `XDG_STATE_HOME`"
    upstream = ("warpdotdev/warp `crates/persistence/src/schema.rs`, `app/src/persistence/block_list.rs`, "
                "`app/src/ai/blocklist/persistence.rs` @19548aec6285; agentsview `internal/parser/warp.go`")
    checked = "2026-12-06: warpdotdev/warp 19548aec6285"
    resume_doc = "in Warp (conversation history)"
    known_kinds = {"input": INPUT_KINDS}
    rows_table = "ai_queries"
    session_column = "conversation_id"
    store_names = (DB_NAME,)

    def roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``$CRABSEARCH_WARP_DIR`` alone when set; else Warp's state directories (module docstring)."""
        if env.get("CRABSEARCH_WARP_DIR"):
            return [Path(os.path.expanduser(env["CRABSEARCH_WARP_DIR"]))]
        state = Path(os.path.expanduser(env["XDG_STATE_HOME"])) if env.get("XDG_STATE_HOME") else home / ".local" / "state"
        out = [state / linux for linux, _mac, _win in CHANNELS]
        out += [home / MAC_GROUP / mac for _linux, mac, _win in CHANNELS]
        out += [home / "Library" / "Application Support" / mac for _linux, mac, _win in CHANNELS]
        if env.get("LOCALAPPDATA"):
            out += [Path(env["LOCALAPPDATA"]) / "warp" / win / "data" for _linux, _mac, win in CHANNELS]
        return out

    def stores(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """``warp.sqlite`` of each root and of its ``tui/`` directory."""
        return unique_files(p for r in self.roots(env, home) for p in (r / DB_NAME, r / "tui" / DB_NAME))

    # -- the store -------------------------------------------------------------------------------

    def listing(self, con: sqlite3.Connection, db: str) -> dict[str, tuple[int, int]]:
        """Each conversation with queries: its largest ``ai_queries`` rowid and newest change
        (``agent_conversations.last_modified_at``, else its newest ``start_ts``)."""
        out = {cid: (size, epoch_ms(when)) for cid, size, when in
               con.execute("SELECT conversation_id, max(rowid), max(start_ts) FROM ai_queries GROUP BY conversation_id")}
        if table_columns(con, "agent_conversations"):
            for cid, when in con.execute("SELECT conversation_id, last_modified_at FROM agent_conversations"):
                if cid in out:
                    out[cid] = (out[cid][0], max(out[cid][1], epoch_ms(when)))
        return out

    def meta(self, con: sqlite3.Connection, sid: str) -> dict:
        cols = table_columns(con, "agent_conversations")
        if not cols:
            return {}
        wanted = [c for c in ("conversation_data", "summary", "last_modified_at") if c in cols]
        row = con.execute(f"SELECT {', '.join(wanted)} FROM agent_conversations WHERE conversation_id = ?",
                          (sid,)).fetchone()
        return dict(zip(wanted, row)) if row else {}

    def record(self, row: dict) -> dict | None:
        """An ``ai_queries`` row with its ``input`` parsed (None when it is not a JSON list)."""
        inputs = json_of(row.get("input"))
        if not isinstance(inputs, list):
            return None
        return {"inputs": inputs, "start_ts": row.get("start_ts"), "cwd": row.get("working_directory"),
                "model": row.get("model_id"), "exchange": row.get("exchange_id")}

    def apply_meta(self, meta: dict, state: dict, session: Session) -> None:
        summary = json_of(meta.get("summary"))
        summary = summary if isinstance(summary, dict) else {}
        data = json_of(meta.get("conversation_data"))
        data = data if isinstance(data, dict) else {}
        title = string(summary.get("title")).strip()
        state["title"] = capped(title, 200) if title else None
        state["start_cwd"] = string(summary.get("initial_working_directory")) or None
        state["parent"] = string(data.get("parent_conversation_id")) or None
        session.touch(parse_ts(meta.get("last_modified_at")))

    # -- records ---------------------------------------------------------------------------------

    def process(self, rec: Record, state: dict, session: Session, out: list[Message]) -> None:
        obj = rec.obj
        for item in obj.get("inputs") or []:
            kind = next(iter(item), None) if isinstance(item, dict) and len(item) == 1 else None
            if kind not in INPUT_KINDS:
                note_unknown(state, kind if isinstance(kind, str) else None)
        if not state.get("cwd") and string(obj.get("cwd")):
            state["cwd"] = obj["cwd"]
        ts = parse_ts(obj.get("start_ts"))
        session.touch(ts)
        emit(pieces_of(obj), rec, state, out, ts)

    def finish(self, state: dict, session: Session) -> None:
        session.title = state.get("title") or state.get("first_prompt") or None
        session.project = state.get("start_cwd") or state.get("cwd") or None
        session.parent_session_id = state.get("parent")
        session.anchor_index = state.get("anchor", 0)

    def message_text(self, obj: dict, part: int, label: str) -> str:
        return piece_text(pieces_of(obj), part, label)

    def resume_command(self, session: Session) -> str | None:
        """None: a Warp conversation reopens in Warp, not from a shell."""
        return None


def pieces_of(obj: dict) -> list[Piece]:
    """The user's prompt of each ``Query`` input of one ``ai_queries`` row."""
    out: list[Piece] = []
    for item in obj.get("inputs") if isinstance(obj.get("inputs"), list) else []:
        query = item.get("Query") if isinstance(item, dict) else None
        text = string(query.get("text")) if isinstance(query, dict) else ""
        if text.strip():
            out.append(Piece(Role.USER, LABEL_USER, text, prompt=True))
    return out


SOURCE = WarpSource()
"""The registered instance (``crabsearch.sources`` collects every module's ``SOURCE``)."""

"""The crabsearch terminal app: search box, one row per session, context windows, session view."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from rich.text import Text
from textual.app import App
from textual.binding import Binding

from ..index import Indexer
from ..search import Engine
from .render import short_path
from .panels import HelpScreen, ResumeScreen, StatusScreen
from .screens import SearchScreen


class CrabsearchApp(App[str | None]):
    """The app. ``index_dir`` is where the index lives; ``env`` is the environment the sources
    discover transcripts from (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``); ``now`` fixes the
    clock (tests); ``index_on_start=False`` skips the background refresh and ``cursor_blink=False``
    keeps the cursor still (tests and snapshots). ``run()`` returns the resume command the user
    confirmed (``r``), or None."""

    CSS_PATH = "app.tcss"
    TITLE = "crabsearch"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("f2", "status", "Status"),
        Binding("question_mark", "help", "Help", show=False),
    ]

    def __init__(self, index_dir: Path, *, env: dict[str, str] | None = None, demo: bool = False,
                 now: datetime | None = None, index_on_start: bool = True, cursor_blink: bool = True,
                 index_tool_output: bool = False) -> None:
        super().__init__()
        self.index_dir = Path(index_dir)
        self.env = dict(os.environ if env is None else env)
        self.home = self.env.get("HOME")
        self.demo = demo
        self._now = now
        self.index_on_start = index_on_start
        self.cursor_blink = cursor_blink
        self.indexing = False
        self.engine = Engine(self.index_dir)
        self.indexer = Indexer(self.index_dir, env=self.env, index_tool_output=index_tool_output)

    @property
    def now(self) -> datetime:
        """The clock used for relative dates (fixed in tests)."""
        return self._now or datetime.now(timezone.utc)

    def on_mount(self) -> None:
        self.push_screen(SearchScreen())

    def action_help(self) -> None:
        """Show every key."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def resume(self, hit) -> None:
        """Ask, then quit the app returning ``hit``'s resume command (``cli`` runs it after the
        terminal is restored)."""
        command = hit.ref.resume_command
        if not command:
            self.notify("This agent has no resume command.", severity="warning")
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self.exit(result=command)

        self.push_screen(ResumeScreen(hit), done)

    def action_status(self) -> None:
        """Show sources and index status."""
        if not isinstance(self.screen, StatusScreen):
            self.push_screen(StatusScreen())

    def status_text(self) -> str:
        """The ``crabsearch status`` report for this app's index and sources."""
        from ..index.status import collect

        return collect(self.indexer).format()

    def empty_message(self, error: str | None = None) -> Text:
        """What the app says when no session is indexed: the indexing ``error`` if there was one,
        else where it looked and how to point it elsewhere."""
        t = Text()
        if error:
            t.append("Could not index the transcripts:\n", style="bold red")
            t.append(f"  {error}\n\n")
            t.append(f"Index directory: {self.index_dir}\n")
            t.append("Point it elsewhere with --index-dir DIR or CRABSEARCH_INDEX_DIR=DIR.\n\n")
        t.append("No agent transcripts found.\n\n" if not error else "Transcripts are read from:\n", style="bold")
        t.append("Looked in:\n" if not error else "")
        for agent, root in self.indexer.roots():
            t.append(f"  {agent:<12}", style="cyan")
            t.append(f"{short_path(str(root), self.home)}\n")
        t.append("\nPoint crabsearch elsewhere with CLAUDE_CONFIG_DIR=DIR or CODEX_HOME=DIR (F2: status),\n")
        t.append("or try it on bundled example sessions: ")
        t.append("crabsearch --demo", style="bold")
        return t

    def on_unmount(self) -> None:
        self.engine.close()

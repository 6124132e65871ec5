"""The crabsearch terminal app: search box, one row per session, context windows, session view."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Group
from rich.text import Text
from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.worker import get_current_worker

from .. import paths
from ..config import Config
from ..search import Engine
from ..text import printable
from .render import short_path
from .panels import HelpScreen, PathColumns, StatusScreen, key_label
from .screens import RESULT_LIMIT, SearchScreen
from .actions import HitActions
from . import textual_fixes
from .idle_gc import TICK, IdleCollector

EMBED_BUDGET = 5.0
"""CPU seconds of background embedding after each refresh (:meth:`CrabsearchApp.embed_new`)."""


class CrabsearchApp(App[str | None]):
    """The app. ``index_dir`` is where the index lives; ``env`` is the environment the sources
    discover transcripts from (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``); ``now`` fixes the
    clock (tests); ``index_on_start=False`` skips the background refresh and ``cursor_blink=False``
    keeps the cursor still (tests and snapshots). ``run()`` returns the resume command the user
    confirmed (``r``), or None."""

    CSS_PATH = "app.tcss"
    TITLE = "crabsearch"
    COMMAND_PALETTE_BINDING = "ctrl+p"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f1", "help", "Help", id="help"),
        Binding("f2", "status", "Status", id="status"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False, id="theme"),
    ]

    def __init__(self, index_dir: Path, *, env: dict[str, str] | None = None, demo: bool = False,
                 now: datetime | None = None, index_on_start: bool = True, cursor_blink: bool = True,
                 index_tool_output: bool = False, config: Config | None = None) -> None:
        super().__init__()
        textual_fixes.apply()  # bad keyboard bytes: U+FFFD, not a crash; no garbage cycle per painted line
        self.collector = IdleCollector()
        self.config = config or Config()
        self.index_dir = Path(index_dir)
        self.env = dict(os.environ if env is None else env)
        self.home = self.env.get("HOME")
        self.demo = demo
        self._now = now
        self.index_on_start = index_on_start
        self.cursor_blink = cursor_blink
        self.indexing = False
        self.engine = Engine(self.index_dir, resume_flags=self.config.resume)
        self._indexer_options = {"index_tool_output": index_tool_output,
                                 "extra_dirs": {} if demo else self.config.sources,
                                 "jobs": self.config.index_jobs}
        self._indexer = None
        self._indexer_lock = threading.Lock()
        self._embedder = None  # the background embedder (one thread), False without the extra
        self._embed_more = True  # work may be left from before (a stopped crabsearch embed)
        self._first_recent = None  # the recent sessions read as the app loads (on_load): a Future
        self.first_list_kept = False
        """True when the first list is the one kept by the last listing (``search.snapshot``):
        the index is there, in the state it was listed in, and is opened after the first paint."""
        self.copy_file = paths.cache_dir() / "last-copy.txt"
        """Every copy is also written here: the fallback when the terminal ignores OSC 52."""
        self.error_log = paths.cache_dir() / "errors.log"
        """Where an unexpected error's details go (:meth:`failure`); the screen says only that."""
        self.editor_dir = paths.cache_dir() / "editor-copies"
        """Where ``v`` puts the read-only copy of a transcript that the editor opens
        (``editor.readonly_copy``): the agent's own file is never given to an editor."""
        self.actions = HitActions(self)
        """Resume, copy, export and edit, for the screens' hits."""

    def on_load(self) -> None:
        """The recent sessions for the first frame: as kept by the last listing when the index
        has not changed since (``Engine.kept_recent``: a file read, no index opened), else read
        in a thread while the screen is built and first painted. The search screen's first list
        takes them (:meth:`first_recent`) instead of starting its own read after its mount."""
        self._first_recent = early = Future()
        kept = self.engine.kept_recent(RESULT_LIMIT)
        if kept is not None:
            self.first_list_kept = True
            early.set_result(kept)
            return

        def read() -> None:
            try:
                early.set_result(self.engine.recent(limit=RESULT_LIMIT, redact=True))
            except BaseException as exc:  # noqa: BLE001 - raised again where the list is shown
                early.set_exception(exc)

        threading.Thread(target=read, name="crabsearch-first-list", daemon=True).start()

    def first_recent_read(self, wait: float) -> bool:
        """True when the recent sessions read at start (:meth:`on_load`) are there (read, or
        failed) within ``wait`` seconds."""
        early = self._first_recent
        return early is not None and not wait_for([early], timeout=wait).not_done

    def first_recent(self, limit: int, redact: bool):
        """The recent sessions read at start (:meth:`on_load`), once: a list of ``Hit``, or None
        when they were taken already or are asked for with another ``limit`` or masking. Raises
        what the read raised (``IndexDamaged``...)."""
        early, self._first_recent = self._first_recent, None
        if early is None or limit != RESULT_LIMIT or not redact:
            return None
        return early.result()

    @property
    def indexer(self):
        """The index writer (``crabsearch.index.Indexer``), made on first use: importing it and
        the agents' readers is work the first paint of the recent sessions need not wait for;
        the first refresh and the file watcher ask for it after that paint, each from its own
        thread, so it is made under a lock (once)."""
        with self._indexer_lock:
            if self._indexer is None:
                from ..index.writer import Indexer

                self._indexer = Indexer(self.index_dir, env=self.env, **self._indexer_options)
            return self._indexer

    @work(thread=True, exclusive=True, group="embed", exit_on_error=False)
    def embed_new(self, changed: bool) -> None:
        """Similarity search on (the index has vectors, the extra is installed): embed what the
        refreshes added, in the background, one thread, at most :data:`EMBED_BUDGET` CPU seconds
        each time, after a refresh that ``changed`` the index or while an earlier run left work
        (an unchanged home costs nothing). Searches use new vectors as they are written."""
        from ..index import vectors

        if not (changed or self._embed_more) or not vectors.store_path(self.index_dir).exists():
            return
        if self._embedder is None:
            from ..embedder import load

            self._embedder = load(threads=1) or False
        if self._embedder:
            worker = get_current_worker()
            done = vectors.embed(self.index_dir, self._embedder, budget=EMBED_BUDGET,
                                 cancelled=lambda: worker.is_cancelled)
            self._embed_more = bool(done.left or done.busy or worker.is_cancelled)

    @property
    def now(self) -> datetime:
        """The clock used for relative dates (fixed in tests)."""
        return self._now or datetime.now(timezone.utc)

    @property
    def program(self) -> str:
        """How to run crabsearch again, as the user did: ``crabsearch`` when that is the one on
        ``PATH``, else the path they typed (``.venv/bin/crabsearch``, as the README's set-up
        leaves it)."""
        argv0 = sys.argv[0] if sys.argv else ""
        if os.path.basename(argv0) != "crabsearch":
            return "crabsearch"
        found = shutil.which("crabsearch", path=os.environ.get("PATH"))
        if found and os.path.realpath(found) == os.path.realpath(argv0):
            return "crabsearch"
        return printable(short_path(argv0, os.environ.get("HOME")))

    def on_mount(self) -> None:
        cfg = self.config
        said = []  # one toast for the config's problems: a toast of a kind replaces the last (_on_notify)
        if cfg.theme:
            if cfg.theme in self.available_themes:
                self.theme = cfg.theme
            else:
                said.append(f"config: unknown theme {cfg.theme!r}; known: {', '.join(sorted(self.available_themes))}")
        if cfg.keys:
            self.set_keymap(cfg.keys)
        if cfg.problem:
            said.append(f"config {cfg.problem}")
        if said:
            self.notify("\n".join(said), severity="warning", timeout=8)
        self.push_screen(SearchScreen())
        threading.Thread(target=self.engine.warm, name="crabsearch-warm-model", daemon=True).start()
        # Python's full garbage collections: when the user is idle, not in a typed query's way.
        self.collector.start()
        self.set_interval(TICK, self._collect_if_idle)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self.collector.input()
        await super().on_event(event)

    def _collect_if_idle(self) -> None:
        """A full collection if one is due and the user idle: no worker but the index refresh
        running (a search, a session's scan, an export: the user waits for them)."""
        self.collector.tick(busy=any(not w.is_finished and w.group != "index" for w in self.workers))

    def notify(self, message: str, **kwargs) -> None:
        """Textual's notify, with markup off: messages quote paths, config sections (``[keys]``)
        and transcript text, which must show as written."""
        kwargs.setdefault("markup", False)
        super().notify(printable(message), **kwargs)

    def _on_notify(self, event) -> None:
        """One toast per kind (severity), the newest: a notification takes the place of the one
        of its kind still shown (toasts never stack up over the text they describe), and its
        toast goes at once. Textual's own ``_on_notify`` (App's, called
        after this one) then shows the new one. Where toasts go: ``app.tcss``."""
        from textual.widgets._toast import ToastHolder, ToastRack

        new = event.notification
        for old in [n for n in self._notifications if n.severity == new.severity]:
            self._unnotify(old, refresh=False)
            for screen in self.screen_stack:  # its holder too: Textual's rack leaves it behind
                for holder in screen.query(ToastHolder):
                    if holder.id == ToastRack._toast_id(old):
                        holder.remove()

    def get_system_commands(self, screen):
        """Command palette (Ctrl+P) entries: every action of the screen in view, then Textual's
        own (theme, keys, quit, screenshot)."""
        from .screens import SearchScreen
        from .session import SessionScreen

        entries: tuple = ()
        if isinstance(screen, SearchScreen):
            results = screen.query_one("#results")
            entries = (
                    ("Open session", "Open the highlighted session at its hit", results, "open"),
                    ("Expand / collapse row", "Show the context window of the highlighted row", results, "toggle"),
                    ("Resume session", "Quit and resume the highlighted session in its agent", results, "resume"),
                    ("Fork session", "Quit and fork the highlighted session (Claude Code)", results, "fork"),
                    ("Copy…", "Copy the session id, resume command, path, message or window", results, "copy"),
                    ("Export to Markdown…", "Write the session or its window to a Markdown file", results, "export"),
                    ("Open in editor", "Open a read-only copy of the transcript in $EDITOR at the hit", results,
                     "edit"),
                    ("Explain match", "Why the highlighted session matched", results, "explain"),
                    ("Widen window", "Two more messages on each side of the hit", results, "widen"),
                    ("Narrow window", "Two fewer messages on each side of the hit", results, "narrow"),
                    ("Filter by agent…", "Pick an agent (F3)", screen, "pick_agent"),
                    ("Filter by project…", "Pick a project (F4)", screen, "pick_project"),
                    ("Filter by date…", "Sessions active since… (F5)", screen, "pick_date"),
                    ("Toggle sort", "Relevance or newest first", screen, "toggle_sort"),
                    ("Reveal secrets", "Show masked secrets on this screen (or mask them again)", screen,
                     "toggle_reveal"))
        elif isinstance(screen, SessionScreen):
            view = screen.query_one("#transcript")
            entries = (
                    ("Find in session", "Find text in this session (then n / N)", screen, "find"),
                    ("Next hit", "Next message matching the query", view, "next_hit"),
                    ("Previous hit", "Previous message matching the query", view, "previous_hit"),
                    ("Tool calls: cycle", "First lines, in full, or hidden", view, "cycle_tools"),
                    ("Thinking: show / hide", "Show or hide the model's thinking", view, "toggle_thinking"),
                    ("Full text", "Long messages in full or folded", view, "toggle_full"),
                    ("This message in full", "The message at the cursor in full, or folded (Enter)", view,
                     "toggle_message"),
                    ("Abandoned branches: show / hide", "Messages a rewind replaced", view, "toggle_abandoned"),
                    ("Subagent turns: show / hide", "Subagent turns written into this transcript", view,
                     "toggle_sidechains"),
                    ("Next message", "Move the cursor to the next message (J)", view, "next_message"),
                    ("Previous message", "Move the cursor to the previous message (K)", view, "previous_message"),
                    ("First message", "Go to the start (g)", view, "first"),
                    ("Last message", "Go to the end (G)", view, "last"),
                    ("Resume session", "Quit and resume this session in its agent", screen, "resume"),
                    ("Fork session", "Quit and fork this session (Claude Code)", screen, "fork"),
                    ("Copy…", "Copy the session id, resume command, path, message or window", screen, "copy"),
                    ("Export to Markdown…", "Write the session or a window to a Markdown file", screen, "export"),
                    ("Open in editor", "Open a read-only copy of the transcript in $EDITOR at the cursor", screen,
                     "edit"),
                    ("Reveal secrets", "Show masked secrets in this view (or mask them again)", screen,
                     "toggle_reveal"))
        for title, help_text, target, action in entries:
            yield SystemCommand(title, help_text, lambda target=target, action=action: target.run_action(action))
        yield SystemCommand("Help: keys", "Every key, by screen, and the query language", self.action_help)
        yield SystemCommand("Sources and index status", "What was found and indexed, warnings",
                            self.action_status)
        yield SystemCommand("Light / dark theme", "Switch between the light and the dark theme",
                            self.action_toggle_theme)
        yield from super().get_system_commands(screen)

    def action_help_quit(self) -> None:
        """Ctrl+C with no text selected (Textual's binding: a selection in the search box or on
        the screen is copied first, by their own Ctrl+C). On the search screen it quits, as
        Ctrl+C does in a terminal program; elsewhere (the session view, a dialog) it says how to
        quit. (Textual's own message is markup, and this app's notifications show text as written.)"""
        from .screens import SearchScreen

        if isinstance(self.screen, SearchScreen):
            self.exit()
            return
        keys = [key for key, active in self.active_bindings.items() if active.binding.action in ("quit", "app.quit")]
        self.notify(f"Press {key_label(keys[0]) if keys else 'Ctrl+Q'} to quit crabsearch.",
                    title="Do you want to quit?")

    def action_toggle_theme(self) -> None:
        """Switch between the light and the dark theme."""
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def watch_theme(self) -> None:
        for screen in self.screen_stack:  # transcript strips are rendered with theme colours
            for view in screen.query("TranscriptView"):
                view.rerender()

    @property
    def context(self) -> int:
        """Messages before and after the hit in a context window (config ``context``)."""
        return self.config.context

    def action_help(self) -> None:
        """Show every key."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def failure(self, what: str, exc: BaseException) -> str:
        """The one line the screen shows when ``what`` (``The search``, ``Indexing``) failed
        with ``exc``. crabsearch's own errors and the system's (a full disk, a permission) say
        what is wrong in words; anything else is a bug, whose exception text and traceback are
        no message for a user (and may quote transcript text): they go to :attr:`error_log`
        (0600), which the line names."""
        if isinstance(exc, OSError):
            where = f" ({printable(str(exc.filename))})" if exc.filename else ""
            return f"{what} failed: {exc.strerror or 'input/output error'}{where}"
        if type(exc).__module__.startswith("crabsearch.") and str(exc):
            return f"{what} failed: {printable(str(exc))}"
        import traceback

        detail = ""
        try:
            log = self.error_log
            log.parent.mkdir(parents=True, exist_ok=True, mode=paths.PRIVATE_DIR)
            keep = log.read_text("utf-8", "replace")[-200_000:] if log.exists() else ""
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            paths.write_private(log, keep + f"\n{stamp} {what}:\n" + "".join(traceback.format_exception(exc)))
            detail = f"; the details are in {short_path(str(log), self.home)}"
        except OSError:
            pass
        return f"{what} failed unexpectedly{detail}"

    def index_failure(self, exc: BaseException) -> str:
        """The one line the app shows when indexing failed with ``exc``. When the index directory
        cannot be written (``store.IndexError_`` from an ``OSError``, or an ``OSError``: a file
        where the folder should be, a permission, a full disk): where, why, and what to do, as
        the app does not try again by itself. Anything else as :meth:`failure` says it."""
        import errno

        cause = exc if isinstance(exc, OSError) else exc.__cause__
        if not isinstance(cause, OSError):
            return self.failure("Indexing", exc)
        folder = self.index_dir
        blocker = None
        for p in (folder, *folder.parents):  # a file where the folder, or one it is in, should be
            try:
                if not p.is_dir() and p.exists():
                    blocker = p
                    break
            except OSError:
                break
        if blocker == folder:
            why = "it is a file, not a folder"
        elif blocker is not None:
            why = f"{printable(short_path(str(blocker), self.home))} is a file, not a folder"
        else:
            why = cause.strerror or "input/output error"
            if cause.filename and Path(str(cause.filename)) != folder:
                why += f" ({printable(short_path(str(cause.filename), self.home))})"
        other = "--index-dir DIR" if self.demo else "CRABSEARCH_INDEX_DIR=DIR (or --index-dir DIR)"
        if cause.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)) and blocker is None:
            fix = f"Free some disk space and start crabsearch again, or point {other} at a folder on another disk."
        else:
            fix = f"Start crabsearch again with {other} naming a folder it can write."
        return f"The index cannot be written at {printable(short_path(str(folder), self.home))}: {why}. {fix}"

    def guarded(self, what: str, call, default):
        """``call()``, or ``default`` after one line saying that ``what`` (``Reading the
        session``) failed (:meth:`failure`): the engine calls made on the app's own thread (a
        window expanded, a page scrolled into view, a message copied) must never end the app."""
        try:
            return call()
        except Exception as exc:  # an index swapped or damaged meanwhile, a bug: shown, not a crash
            self.notify(self.failure(what, exc), severity="error")
            return default

    def run_external(self, argv: list[str]) -> int:
        """Run ``argv`` in the terminal with the app suspended; returns its exit status (tests
        replace this to intercept the command). Raises ``OSError`` when it cannot start."""
        with self.suspend():
            return subprocess.call(argv)

    def action_status(self) -> None:
        """Show sources and index status."""
        if not isinstance(self.screen, StatusScreen):
            self.push_screen(StatusScreen())

    def status_text(self) -> str:
        """The ``crabsearch status`` report for this app's index and sources."""
        from ..index.status import collect

        status = collect(self.indexer)
        if not self.demo:
            return status.format()
        status.warnings = []  # advice about the bundled files (Claude Code's retention) is no use
        return (f"Demo: only the bundled example sessions in {short_path(str(paths.demo_home()), None)} are read. "
                f"Run {self.program} without --demo to search your own.\n\n" + status.format())

    def empty_message(self, error: str | None = None) -> Group:
        """What the app says when no session is indexed: the indexing ``error`` if there was one;
        then what to do, short enough to read without scrolling on a small terminal (the demo,
        the variables that point crabsearch elsewhere, F2); then where it looked, one row per
        agent (a wrapped path kept in the places' column)."""
        t = Text()
        if error:
            t.append("Could not index the transcripts:\n", style="bold red")
            t.append(f"  {error}\n\n")
            if "--index-dir DIR" not in error:  # index_failure says where and what to do itself
                t.append(f"Index directory: {self.index_dir}\n")
                t.append("Point it elsewhere with --index-dir DIR or CRABSEARCH_INDEX_DIR=DIR.\n\n")
        if not error:
            t.append("No agent transcripts found.\n\n", style="bold")
        t.append("Try crabsearch on bundled example sessions: ")
        t.append(f"{self.program} --demo", style="bold")
        t.append("\nPoint crabsearch elsewhere with CLAUDE_CONFIG_DIR=DIR or CODEX_HOME=DIR (F2: status).\n\n")
        t.append("Looked in:" if not error else "Transcripts are read from:", style="bold")
        places: dict[str, list[str]] = {}
        sources = {}
        for src in self.indexer.sources:
            places.setdefault(src.display or src.agent, [])
            sources.setdefault(src.display or src.agent, src)
        for agent, root in self.indexer.roots():
            places.setdefault(agent, []).append(printable(short_path(str(root), self.home)))
        rows = []
        for agent, roots in places.items():
            if roots:
                rows.append((agent, ", ".join(roots), ""))
            else:  # SpecStory: only in folders the user lists
                src = sources.get(agent)
                rows.append((agent, f"folders listed in {src.env_var} or the config's [sources] {src.agent}"
                             if src is not None and src.env_var else "nowhere yet", "dim"))
        return _Message(t, PathColumns(rows))

    def on_unmount(self) -> None:
        self.collector.stop()
        self.engine.close()


class _Message(Group):
    """A message of several renderables (:meth:`CrabsearchApp.empty_message`); ``str()`` is its
    text."""

    def __str__(self) -> str:
        return "\n".join(str(r) for r in self.renderables)

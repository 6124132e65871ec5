"""What the user can do with a hit (a result row or the session view's cursor): resume or fork
its session in its agent, copy a piece of it, export it to Markdown, open its transcript in an
editor. A service the screens call: it holds no widget state, and shows what it does through the
app (its dialogs, toasts, workers, clipboard)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from textual.binding import Binding

from .. import paths
from ..hits import GONE, UNAVAILABLE, transcript_gone, unreadable_count
from ..sources import SOURCES
from ..text import UNRUNNABLE, counted, printable, runnable
from .panels import ChoiceScreen, ResumeScreen
from .render import short_path

BINDINGS = [Binding("r", "resume", "Resume", id="resume"),
            Binding("f", "fork", "Fork", show=False, id="fork"),
            Binding("c", "copy", "Copy", id="copy"),
            Binding("E", "export", "Export", show=False, id="export"),
            Binding("v", "edit", "Editor", show=False, id="editor")]
"""The keys of :class:`HitActions`, the same on a result row and in the session view (each
screen's ``action_resume`` ... ``action_edit`` calls the service; ``[keys]`` rebinds them by id)."""


class HitActions:
    """Resume, fork, copy, export and edit for the hits of ``app`` (a ``CrabsearchApp``: its
    engine, environment, ``copy_file``, ``editor_dir`` and ``run_external``)."""

    def __init__(self, app) -> None:
        self.app = app

    def resume(self, hit, *, fork: bool = False) -> None:
        """Ask, then quit the app returning ``hit``'s resume (or, with ``fork``, fork) command;
        ``cli`` runs it after the terminal is restored."""
        src = SOURCES.get(hit.session.agent)
        command = hit.ref.fork_command if fork else hit.ref.resume_command
        if not command:
            name = src.display if src else hit.session.agent
            self.app.notify(f"{name} sessions cannot be {'forked' if fork else 'resumed'} from a terminal.",
                            severity="warning")
            return
        if not runnable(command):
            self.app.notify(UNRUNNABLE, severity="warning")
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self.app.exit(result=command)

        self.app.push_screen(ResumeScreen(hit, command, fork), done)

    def copy_menu(self, hit, message_index: int, window, message) -> None:
        """Ask what to copy of ``hit``'s session: its id, resume command, web link (a web chat's
        address, ``SessionRef.open_url``: offered only when there is one), transcript path,
        message ``message_index`` (``message()`` returns it, an ``Item`` in full as the screen
        shows it, or None when it cannot be read), or the context window (``window()`` returns
        its text)."""
        url = hit.ref.open_url
        choices = [("i", "session id"), ("r", "resume command"), *([("u", "web link")] if url else []),
                   ("p", "transcript path"), ("m", f"message #{message_index + 1} (full text)"),
                   ("w", f"context window around message #{message_index + 1}")]

        def done(key: str | None) -> None:
            if key is None:
                return
            s = hit.session
            if key == "i":
                self.copy_text(s.session_id, "session id")
            elif key == "r":
                if hit.ref.resume_command:
                    self.copy_text(hit.ref.resume_command, "resume command")
                else:
                    self.app.notify("This agent has no resume command.", severity="warning")
            elif key == "u":
                self.copy_text(url, "web link")
            elif key == "p":
                self.copy_text(s.path, "transcript path")
            elif key == "m":
                item = message()
                if item is None or item.text in (GONE, UNAVAILABLE):
                    why = (item.text.strip("[]").partition(": ")[2] if item is not None else
                           "the transcript is gone (deleted or moved since it was indexed)")
                    self.app.notify(f"Message #{message_index + 1} cannot be read: {why}.", severity="warning")
                else:
                    cut = ", as far as it was read before its transcript went away" if item.truncated else ""
                    self.copy_text(item.text, f"message #{message_index + 1}{cut}")
            elif key == "w":
                self.copy_text(window(), "context window")

        self.app.push_screen(ChoiceScreen("Copy to the clipboard", choices,
                                          "Secrets stay masked unless revealed with Ctrl+R."), done)

    def export_menu(self, hit, window, *, redact: bool = True, around: int | None = None, held=None) -> None:
        """Ask whether to export ``hit``'s whole session or the context window around message
        ``around`` (default the hit; ``window()`` returns its items) to Markdown, then write it to
        :meth:`export_dir` in a worker. ``held()``: the messages the screen holds (the session
        view's), exported in place of the whole session when its transcript is gone."""
        from ..export import file_stem

        stem = file_stem(hit.session)
        where = short_path(str(self.export_dir()), self.app.home)
        at = hit.message_index if around is None else around
        centre = hit if at == hit.message_index else dataclasses.replace(hit, message_index=at)

        def done(key: str | None) -> None:
            if key == "s":
                self._write(hit, self.export_dir() / f"{stem}.md", None, redact, held() if held else [])
            elif key == "w":
                self._write(centre, self.export_dir() / f"{stem}-at-{at + 1}.md", window(), redact)

        what = "the hit" if at == hit.message_index else f"message #{at + 1} (the cursor)"
        self.app.push_screen(ChoiceScreen("Export to Markdown", [("s", "the whole session"),
                                                                 ("w", f"the context window around {what}")],
                                          f"Written to {where}/; secrets masked unless revealed (Ctrl+R)."), done)

    def export_dir(self):
        """Where the app writes exports: the directory crabsearch was started in."""
        return Path(self.app.env.get("PWD") or os.getcwd())

    def _write(self, hit, path: Path, items, redact: bool, held=()) -> None:
        """Write ``hit``'s context window ``items``, or with ``items`` None its whole session, to
        ``path`` in a worker. The whole session is read as the index holds it now
        (``Engine.session_now``: with the messages a refresh added); when its transcript is gone
        (or the index no longer holds it), the messages ``held`` (the session view's) are written
        (``export.held_markdown``), or, with none, nothing: a file of the header alone claimed the
        session's messages and held none."""
        from ..export import full_title, held_markdown, session_markdown, window_markdown

        app, engine = self.app, self.app.engine

        def say(message: str, **kwargs) -> None:
            app.call_from_thread(app.notify, message, **kwargs)

        def write() -> None:
            missing = kept = 0
            pieces = None
            if items is not None:
                pieces = [window_markdown(hit, items, title=full_title(engine, hit.ref))]
            else:
                try:
                    ref = None if transcript_gone(hit.session.path) else engine.session_now(hit.ref, redact=redact)
                except Exception as exc:  # an index swapped or damaged meanwhile: said, not a crash
                    say(app.failure("The export", exc), severity="error")
                    return
                if ref is not None:
                    pieces = session_markdown(engine, ref, redact=redact)
                elif held:
                    pieces, kept = [held_markdown(hit.ref, list(held))], len(held)
            if pieces is None:
                say("Nothing exported: this session's transcript is gone (deleted or moved since it was indexed).",
                    severity="warning", timeout=10)
                return

            def counting():
                nonlocal missing
                for piece in pieces:
                    missing += unreadable_count(piece)
                    yield piece

            try:  # transcript text: readable by its owner only
                paths.write_atomically(path, counting(), mode=paths.PRIVATE_FILE)
            except OSError as exc:
                say(f"Export failed: {exc.strerror or exc}", severity="error")
                return
            where = short_path(str(path), app.home)
            if missing:
                say(f"Exported to {where}, but {counted(missing, 'message')} could not be read: the "
                    "transcript changed or is gone (run crabsearch index)", severity="warning", timeout=10)
            elif kept:
                say(f"Exported to {where}: the {counted(kept, 'message')} read before its transcript "
                    "was deleted or moved", severity="warning", timeout=10)
            else:
                say(f"Exported to {where}", timeout=6)

        self.app.run_worker(write, thread=True, group="export")

    def copy_text(self, text: str, what: str) -> None:
        """Put ``text`` on the clipboard with OSC 52, and in the app's ``copy_file`` for terminals
        that ignore OSC 52 (tmux without ``set-clipboard on``, some SSH setups): there is no way to
        know whether the terminal accepted it, so the message names the file."""
        self.app.copy_to_clipboard(text)
        saved = ""
        try:
            folder = self.app.copy_file.parent
            folder.mkdir(parents=True, exist_ok=True, mode=paths.PRIVATE_DIR)
            st = folder.stat()  # crabsearch's own cache directory: made private, as the index is
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                folder.chmod(paths.PRIVATE_DIR)
            # A file the user is told to `cat`: controls made inert (newlines and tabs kept);
            # the clipboard above gets the text exactly.
            paths.write_private(self.app.copy_file, printable(text.replace("\r\n", "\n"), tabs=True))
            where = short_path(str(self.app.copy_file), self.app.home)
            saved = f" If your terminal ignores OSC 52, it is also in {where}"
        except OSError:
            pass
        self.app.notify(f"Copied the {what} ({len(text):,} characters).{saved}", timeout=6)

    def edit_message(self, hit, message_index: int) -> None:
        """Open the transcript in ``$VISUAL``/``$EDITOR`` at message ``message_index``'s line: a
        private read-only copy of it (``editor.readonly_copy``, in the app's ``editor_dir``), never
        the agent's file (an editor writes beside the file it opens, a swap file, or into it). The app
        is suspended while the editor runs; the copy is removed when it exits (an editor that
        returns at once, ``code`` without ``--wait``, keeps it: a later run removes it)."""
        from ..editor import editor_command, editor_waits, line_of_offset, readonly_copy, remove_copy

        where = self.app.guarded("Finding the message", lambda: self.app.engine.locate(hit.ref, message_index), None)
        if where is None:
            if transcript_gone(hit.session.path):
                self.app.notify("The transcript file is gone (deleted or moved since it was indexed).",
                                severity="warning")
            else:
                self.app.notify("This session is not stored in a text file; there is nothing to open.",
                                severity="warning")
            return
        path, offset = where
        try:
            line = line_of_offset(path, offset)
        except OSError as exc:
            self.app.notify(f"Cannot read {printable(path)}: {exc.strerror or exc}", severity="error")
            return
        try:
            copy = readonly_copy(path, self.app.editor_dir)
        except OSError as exc:  # a full disk: the agent's own file is not opened instead
            folder = printable(short_path(str(self.app.editor_dir), self.app.home))
            self.app.notify(f"Cannot make a read-only copy of the transcript to open: {exc.strerror or exc} "
                            f"({folder}). The transcript was not opened: the editor only gets a copy, never the "
                            "agent's file.", severity="error", timeout=10)
            return
        argv = editor_command(copy, line, self.app.env)
        waits = editor_waits(argv)
        try:
            code = self.app.run_external(argv)
        except OSError as exc:
            remove_copy(copy)
            self.app.notify(f"Cannot run {printable(argv[0])}: {exc.strerror or exc} (set $EDITOR)", severity="error")
            return
        if waits:
            remove_copy(copy)
        name = printable(os.path.basename(path))
        said = (f"Opened a read-only copy of {name} at line {line:,}: the agent's transcript is never changed"
                + ("; the copy was removed when the editor closed." if waits else
                   f"; the copy is {printable(short_path(str(copy), self.app.home))}."))
        if code:
            self.app.notify(f"{printable(argv[0])} exited with status {code}. {said}", severity="warning", timeout=8)
        else:
            self.app.notify(said, timeout=8)

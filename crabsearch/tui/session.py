"""The session view's screen: a header, the transcript (:class:`~crabsearch.tui.transcript.TranscriptView`)
paged as it scrolls, a find bar, and the hit actions on the message at the cursor."""

from __future__ import annotations

import dataclasses

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static

from ..hits import GONE, UNAVAILABLE, continuation_notes, transcript_gone
from ..search import Hit, Item
from ..text import counted, printable
from .actions import BINDINGS as HIT_BINDINGS
from .filters import SafeInput
from .footer import KeyFooter
from .render import empty_session_note, session_header, window_text
from .transcript import TranscriptView

MESSAGE_BYTES = 256 * 1024
"""Of one message's text read for the session view (a longer one ends with a note saying so;
``crabsearch show`` prints all of it)."""


class SessionScreen(Screen):
    """The whole session, opened at the hit, paged from the transcript as you scroll."""

    BINDINGS = [Binding("escape,q", "back", "Back", id="back"),
                Binding("slash", "find", "Find", id="find"),
                *HIT_BINDINGS,
                Binding("ctrl+r", "toggle_reveal", "Reveal secrets", show=False, id="reveal")]

    reveal = False

    def __init__(self, hit: Hit, terms: list[str], query: str = "") -> None:
        super().__init__()
        self.hit = hit
        self.terms = terms
        self.search_text = query  # not ``query``: that is Textual's DOM query method

    def compose(self) -> ComposeResult:
        s = self.hit.session
        engine = self.app.engine
        with Vertical(id="session-header"):
            yield Static(self._header(), id="session-meta")
            yield Static("", id="position")
        view = TranscriptView(lambda off, lim: self.app.guarded("Reading the session", lambda: engine.page(
                                  self.hit.ref, off, lim, max_bytes=MESSAGE_BYTES, redact=not self.reveal).messages, []),
                              total=s.message_count, start=self.hit.message_index,
                              hit_index=self.hit.message_index, terms=self.terms,
                              hits=lambda: self.app.guarded("Finding the hits", lambda: engine.matching_messages(
                                  self.hit.ref, self.search_text), []),
                              message_bytes=MESSAGE_BYTES, id="transcript",
                              skipped=lambda: self.app.guarded("Finding the skipped lines",
                                                               lambda: engine.skipped_lines(self.hit.ref), []))
        yield view
        find = SafeInput(placeholder="Find in this session (any case)…  Enter: find · Esc: close", id="find",
                         select_on_focus=True)  # typing replaces the last find text
        find.cursor_blink = self.app.cursor_blink
        find.display = False
        yield find
        yield KeyFooter()

    def refreshed(self) -> None:
        """After an index refresh: follow the transcript (:meth:`TranscriptView.grow`: messages
        appended are shown, or counted in the position line), or, when it is no longer on disk,
        keep what was read and say so (:meth:`TranscriptView.went_away`)."""
        views = self.query(TranscriptView)  # none yet: the screen is being mounted
        if not views or views.first().gone:
            return
        view = views.first()
        ref = self.app.guarded("Reading the session", lambda: self.app.engine.session_now(self.hit.ref), None)
        if ref is None:
            if transcript_gone(self.hit.session.path):
                view.went_away()
            return
        if ref.session.message_count != self.hit.session.message_count:
            self.hit = dataclasses.replace(self.hit, ref=ref)  # pages read up to its new count
            view.grow(ref.session.message_count)
            self.on_resize()

    def _header(self) -> Text:
        """The header's lines (:func:`~crabsearch.tui.render.session_header`) for the screen's size."""
        return session_header(self.hit.session, self.hit.ref.resume_command, self.app.now, self.app.home,
                              max(0, self.size.width - 2), self.size.height,
                              notes=continuation_notes(self.hit.ref))

    def on_resize(self) -> None:
        """The header fits the screen's size (:func:`~crabsearch.tui.render.session_header`)."""
        self.query_one("#session-meta", Static).update(self._header())

    def on_mount(self) -> None:
        view = self.query_one(TranscriptView)
        view.focus()
        self.call_after_refresh(self._say_if_empty)
        if self.hit.branch == "abandoned":  # follow the hit's own branch, marked
            view.show_abandoned = True
            self.notify("This hit is on an abandoned branch (a rewind replaced it); a: active branch only")

    def _say_if_empty(self) -> None:
        """A session with no messages (compaction deleted them all), or one the index no longer
        holds (its transcript changed or went away after the list was shown), has nothing to
        page: say so rather than show an empty view."""
        if not self.hit.session.message_count:
            self.notify(empty_session_note(self.hit.session), timeout=10)
            return
        if not self.query_one(TranscriptView).loaded:
            gone = transcript_gone(self.hit.session.path)
            self.notify("Nothing to show: this session's transcript is "
                        + ("gone (deleted or moved since it was indexed)." if gone else
                           "no longer what was indexed; the next refresh reads it again."),
                        severity="warning")

    @property
    def current_message(self) -> int:
        """The message at the cursor (``J``/``K`` move it): what ``c``/``v`` act on."""
        return self.query_one(TranscriptView).cursor

    def action_back(self) -> None:
        """Esc: close the find bar when it is open, else back to the results."""
        box = self.query_one("#find", Input)
        if box.display:
            self._close_find()
        else:
            self.app.pop_screen()

    def action_find(self) -> None:
        """``/``: open the find bar (the last find text selected for replacing). The focus moves
        at once (``set_focus``, not ``focus()``, which waits a frame): keys typed in the same
        burst as ``/`` are the find text, not the view's keys."""
        box = self.query_one("#find", Input)
        box.display = True
        self.set_focus(box)

    @on(Input.Submitted, "#find")
    def _find_submitted(self, event: Input.Submitted) -> None:
        view = self.query_one(TranscriptView)
        self._close_find()
        view.find(event.value.strip())
        self._update_position()

    def _close_find(self) -> None:
        self.query_one("#find", Input).display = False
        self.query_one(TranscriptView).focus()

    def action_resume(self) -> None:
        """Resume this session in its agent (after a confirmation)."""
        self.app.actions.resume(self.hit)

    def action_fork(self) -> None:
        """Fork this session (a new session from a copy of its history), after a confirmation."""
        self.app.actions.resume(self.hit, fork=True)

    def _window(self, index: int):
        """The messages around ``index`` (``context`` on each side), as the view masks them."""
        context = self.app.context
        view = self.query_one(TranscriptView)
        if view.gone:  # no longer on disk: the messages the view read
            return view.read(max(0, index - context), 2 * context + 1)
        return self.app.guarded("Reading the context window", lambda: self.app.engine.page(
            self.hit.ref, max(0, index - context), 2 * context + 1, redact=not self.reveal).messages, [])

    def _message(self, index: int) -> Item | None:
        """Message ``index`` in full, masked unless revealed (as the view shows it); when the
        transcript is gone, or the index no longer holds what the view read, the view's own copy
        (:attr:`TranscriptView.held`, as far as it read it); None when the view has none."""
        view = self.query_one(TranscriptView)
        if not view.gone:
            items = self.app.guarded("Reading the message", lambda: self.app.engine.page(
                self.hit.ref, index, 1, redact=not self.reveal).messages, [])
            if items and items[0].text not in (GONE, UNAVAILABLE):
                return items[0]
        return next((it for it in view.held if it.message_index == index), None)

    def action_copy(self) -> None:
        """Copy the session id, resume command, path, the message at the cursor, or its window."""
        index = self.current_message
        self.app.actions.copy_menu(self.hit, index, lambda: window_text(self._window(index), index),
                           lambda: self._message(index))

    def action_export(self) -> None:
        """Export the session, or the window around the cursor, to Markdown (the messages the view
        holds when the transcript is gone)."""
        index = self.current_message
        view = self.query_one(TranscriptView)
        self.app.actions.export_menu(self.hit, lambda: self._window(index), redact=not self.reveal, around=index,
                             held=lambda: view.held)

    def action_edit(self) -> None:
        """Open the transcript in $EDITOR at the message at the cursor."""
        self.app.actions.edit_message(self.hit, self.current_message)

    def action_toggle_reveal(self) -> None:
        """Show secret-shaped strings unmasked in this session view (or mask them again)."""
        if self.query_one(TranscriptView).gone:
            self.notify("This transcript is no longer on disk: what was read cannot be read again.",
                        severity="warning")
            return
        self.reveal = not self.reveal
        self.query_one(TranscriptView).reload()
        self.notify("Secrets shown unmasked on this screen" if self.reveal else "Secrets masked again")

    @on(TranscriptView.Position)
    def _position(self, message: TranscriptView.Position) -> None:
        self._where = (message.index, message.last, message.total)
        self._update_position()

    def _update_position(self) -> None:
        where = getattr(self, "_where", None)
        if where is None:
            return
        view = self.query_one(TranscriptView)
        first, last, total = where
        t = Text(f"messages {first + 1}–{last + 1} of {total}", style="dim")
        if view.new_messages:
            t.append(f" · {counted(view.new_messages, 'new message')}: End", style="bold")
        if view.gone:
            t.append(" · this transcript is no longer on disk", style="bold")
        t.append(f" · hit at #{self.hit.message_index + 1}")  # dim, as the line
        if view.find_text:
            t.append(" · find “", style="dim")
            t.append(printable(view.find_text), style="bold")
            n, total = view.find_position
            count = (f" {n}/{total}" if n else " " + counted(total, "match", "matches")) if total is not None else " (counting…)"
            t.append(f"”{count} n/N", style="dim")
        if view.tool_mode != "lines":
            t.append(f" · tools {'in full' if view.tool_mode == 'full' else 'hidden'}", style="dim")
        if not view.show_thinking:
            t.append(" · thinking hidden", style="dim")
        if view.show_abandoned:
            t.append(" · abandoned branches shown", style="dim")
        if not view.show_sidechains:
            t.append(" · subagent turns hidden", style="dim")
        if view.full:
            t.append(" · full text", style="dim")
        line = self.query_one("#position", Static)
        room = line.content_region.width or self.size.width - 2
        if room and t.cell_len + len(" · / find · ? keys") <= room:  # the hint only when it fits
            t.append(" · / find · ? keys", style="dim")
        elif room:
            t.truncate(room, overflow="ellipsis")  # one line: the header stays three
        line.update(t)

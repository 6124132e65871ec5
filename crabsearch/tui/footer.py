"""The key footer: Textual's, rebuilt only when its keys change, and fitted to one line."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup


class KeyFooter(Footer):
    """Textual's ``Footer``, rebuilt only when the keys it shows change: Textual queues a full
    recompose (every key widget made and styled again) for each binding
    change, and a screen's start (activation, focus, the first results) sends several, most of
    which change nothing it shows."""

    _recompose_pending = False
    _shown: tuple | None = None

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or self._recompose_pending:
            return
        if self.is_attached and screen is self.screen:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_now)

    def _keys_shown(self) -> tuple:
        """What the footer would show: each shown binding (and the command palette's) with its
        key, description, action, state and tooltip."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple((key, b.key, b.description, b.action, enabled, tooltip)
                     for key, (_, b, enabled, tooltip) in self.screen.active_bindings.items()
                     if b.show or key == palette)

    async def _recompose_now(self) -> None:
        self._recompose_pending = False
        if not self.is_attached or not self.screen.is_attached:
            return  # its screen was closed before the rebuild ran (Esc right after a resize)
        shown = self._keys_shown()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
            self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Textual's compact style (one cell less around each key) when the keys would not fit in
        one line otherwise. When even that does not fit, hints are left out in
        :data:`FOOTER_DROPS` order until the rest do: never a hint cut off mid-word at the
        line's end (``f`` of ``f2 Status``); every key is in the help (F1) all the same."""
        hints = self._hints()
        for _, _, _, widgets in hints:
            for w in widgets:
                w.display = True
        width = self.size.width
        self.compact = sum(wide for _, wide, _, _ in hints) > width
        if not self.compact:
            return
        used = sum(narrow for _, _, narrow, _ in hints)
        for action in FOOTER_DROPS:
            if used <= width:
                break
            for actions, _, narrow, widgets in hints:
                if action in actions and widgets[0].display:
                    for w in widgets:
                        w.display = False
                    used -= narrow

    def _hints(self) -> list[tuple[set[str], int, int, list]]:
        """The footer's hints as ``(actions, width, compact width, widgets)``: a key with its
        description, a group of keys with its label (``[ ] Hits``), the palette key; widths in
        cells, margins and paddings included (Textual's footer styles and ``app.tcss``)."""
        out: list[tuple[set[str], int, int, list]] = []
        for child in self.children:
            if isinstance(child, FooterLabel) and out:
                actions, wide, narrow, widgets = out[-1]
                label = cell_len(str(child.content)) + 1
                out[-1] = (actions, wide + label, narrow + label, widgets + [child])
            elif isinstance(child, KeyGroup):
                keys = list(child.query(FooterKey))
                width = sum(cell_len(k.key_display) + 1 for k in keys) + 1  # a cell before each, one after
                out.append(({k.action for k in keys}, width, width, [child]))
            elif isinstance(child, FooterKey):
                width = cell_len(child.key_display) + cell_len(child.description)
                palette = child.has_class("-command-palette")
                out.append(({child.action}, width + (5 if palette else 3), width + (3 if palette else 2), [child]))
        return out


FOOTER_DROPS = ("widen", "narrow", "toggle_sort", "pick_date", "pick_project", "pick_agent", "status",
                "explain", "cycle_tools", "find", "copy", "resume", "open")
"""Actions whose footer hints are left out, first to last, while the footer's keys do not fit in
its line (``KeyFooter._fit``); Esc, F1, Ctrl+Q, ``[ ]`` and the palette key always stay."""

"""Opening a transcript in the user's editor at a message's line.

A message is located by the byte offset of its record (``Message.offset``); editors want a line
number, so :func:`line_of_offset` counts the newlines before the offset, and
:func:`editor_command` builds the argv that opens the file at that line.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from .files import open_file

CHUNK = 1 << 20
"""Bytes read at a time while counting newlines (1 MiB)."""

# How each editor takes "open FILE at LINE", from its own command-line documentation:
# vi/vim/nvim/nano/emacs/micro/kak/gedit accept "+LINE FILE" (POSIX vi: "+command"); VS Code and
# its forks "-g FILE:LINE" (``code --help``: --goto); Sublime Text, Helix and Zed "FILE:LINE".
_PLUS = "plus"
_GOTO = "goto"
_SUFFIX = "suffix"
_STYLES = {
    **dict.fromkeys(("vi", "vim", "nvim", "gvim", "mvim", "view", "nano", "pico", "emacs", "emacsclient",
                     "micro", "kak", "gedit", "ne", "jed", "joe", "mg"), _PLUS),
    **dict.fromkeys(("code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"), _GOTO),
    **dict.fromkeys(("subl", "sublime_text", "hx", "helix", "zed", "zeditor"), _SUFFIX),
}


def line_of_offset(path: str | os.PathLike, offset: int) -> int:
    """The 1-based line number holding byte ``offset`` of the file at ``path``: 1 + the number
    of ``\\n`` bytes before ``offset`` (so CRLF counts once; a lone CR is not a line end, as in
    vim's unix format). An offset at or past the end of the file gives the line after the last
    newline. Reads at most ``offset`` bytes, :data:`CHUNK` at a time (never the whole file at
    once). Raises ValueError for a negative offset, OSError when the file cannot be read."""
    if offset < 0:
        raise ValueError(f"negative offset: {offset}")
    newlines = 0
    left = offset
    with open_file(path) as f:
        while left > 0:
            chunk = f.read(min(CHUNK, left))
            if not chunk:
                break
            newlines += chunk.count(b"\n")
            left -= len(chunk)
    return newlines + 1


def editor_command(path: str | os.PathLike, line: int, env: Mapping[str, str] | None = None) -> list[str]:
    """The argv that opens ``path`` at 1-based ``line`` in the user's editor.

    The editor is ``$VISUAL``, else ``$EDITOR``, else ``vi`` (the POSIX convention; blank values
    are skipped), read from ``env`` (default ``os.environ``) and split with :func:`shlex.split`,
    so ``EDITOR="code --wait"`` keeps its flags; a value shlex cannot split (an unbalanced quote)
    is taken as one program path. The line goes in the form the editor understands, known by
    its program name (directory, case and ``.exe``/``.cmd``/``.bat`` ignored): ``+LINE path``
    (vi, vim, nvim, nano, emacs, micro, kak, ..., and any editor not known), ``-g path:LINE``
    (VS Code and its forks), ``path:LINE`` (Sublime Text ``subl``, Helix ``hx``, Zed). A line
    below 1 is taken as 1; a path starting with ``-`` or ``+`` is prefixed with ``./`` so it is
    not read as an option. Never raises for any environment."""
    env = os.environ if env is None else env
    value = next((v for v in (env.get("VISUAL"), env.get("EDITOR")) if v and v.strip()), "vi")
    try:
        argv = shlex.split(value)
    except ValueError:
        argv = [value.strip()]
    argv = argv or ["vi"]
    line = max(1, int(line))
    target = os.fspath(path)
    if target.startswith(("-", "+")):
        target = "./" + target
    name = os.path.basename(argv[0]).lower()
    for ext in (".exe", ".cmd", ".bat"):
        name = name.removesuffix(ext)
    style = _STYLES.get(name, _PLUS)
    if style == _GOTO:
        return argv + ["-g", f"{target}:{line}"]
    if style == _SUFFIX:
        return argv + [f"{target}:{line}"]
    return argv + [f"+{line}", target]

"""Opening a transcript in the user's editor at a message's line.

A message is located by the byte offset of its record (``Message.offset``); editors want a line
number, so :func:`line_of_offset` counts the newlines before the offset, and
:func:`editor_command` builds the argv that opens the file at that line.

The editor never gets the agent's own file: crabsearch only reads transcripts, and an editor
given one writes beside it (vi's swap file changed the agent's directory) or into it (one
``:w``). :func:`readonly_copy` makes a byte-identical copy (so the line is the same) in a private
directory of crabsearch's own, mode 0400 in a 0700 directory, with the transcript's name;
:func:`remove_copy` removes it when the editor exits, and copies an earlier crabsearch left
behind (it was killed, or the editor was one that returns at once) are removed by the next
:func:`readonly_copy`.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .files import copy_file, open_file

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
    style = _STYLES.get(_program(argv), _PLUS)
    if style == _GOTO:
        return argv + ["-g", f"{target}:{line}"]
    if style == _SUFFIX:
        return argv + [f"{target}:{line}"]
    return argv + [f"+{line}", target]


COPY_MODE = 0o400
"""The read-only copy's mode (:func:`readonly_copy`)."""
COPY_PREFIX = "view-"
"""A copy's directory is ``<base>/view-<pid>-<random>``: the pid of the crabsearch that made it
tells a stale one (its crabsearch has exited) from one still open in an editor."""

# Editors that hand the file to a window of theirs and return at once unless told to wait (their
# own --help): a copy removed when they return would be gone before the window reads it.
_RETURNS_AT_ONCE = {
    **dict.fromkeys(("code", "code-insiders", "codium", "vscodium", "cursor", "windsurf", "subl",
                     "sublime_text", "zed", "zeditor", "gedit"), ("-w", "--wait")),
    **dict.fromkeys(("gvim", "mvim"), ("-f", "--nofork")),
}


def _program(argv: list[str]) -> str:
    """The editor's program name: directory, case and ``.exe``/``.cmd``/``.bat`` left out."""
    name = os.path.basename(argv[0]).lower() if argv else ""
    for ext in (".exe", ".cmd", ".bat"):
        name = name.removesuffix(ext)
    return name


def editor_waits(argv: list[str]) -> bool:
    """True when the editor ``argv`` runs until the file is closed (vi, nano, emacs, ``code
    --wait``...), False when it returns at once, leaving the file to a window of its own (``code``,
    ``subl``, ``zed``, ``gedit`` without ``-w``/``--wait``, ``gvim`` without ``-f``,
    ``emacsclient -n``)."""
    name = _program(argv)
    if name == "emacsclient":
        return not any(a in ("-n", "--no-wait") for a in argv[1:])
    waits = _RETURNS_AT_ONCE.get(name)
    return waits is None or any(a in waits for a in argv[1:])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def _private_dir(base: Path) -> None:
    """Make ``base`` (crabsearch's own directory of copies) if missing, 0700; refuse a symlink
    or a directory of another user (``OSError``)."""
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = os.lstat(base)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise NotADirectoryError(errno.ENOTDIR, "not a private directory of crabsearch's", str(base))
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(base, 0o700)


def clean_stale(base: str | os.PathLike) -> None:
    """Remove the copies in ``base`` whose crabsearch has exited (its pid is in the directory's
    name). Never raises."""
    try:
        entries = list(os.scandir(base))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(COPY_PREFIX) or not entry.is_dir(follow_symlinks=False):
            continue
        pid = entry.name[len(COPY_PREFIX):].partition("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)


def readonly_copy(path: str | os.PathLike, base: str | os.PathLike) -> Path:
    """A byte-identical copy of the transcript at ``path`` for an editor to open: the same file
    name, mode 0400, in a new 0700 directory ``base/view-<pid>-<random>`` (``base`` is made 0700
    when missing). Copied :data:`files.CHUNK` at a time (transcripts reach hundreds of MB); stale
    copies in ``base`` go first (:func:`clean_stale`). Raises ``OSError`` (a full disk, an
    unreadable transcript) with nothing left behind."""
    base = Path(base)
    _private_dir(base)
    clean_stale(base)
    folder = Path(tempfile.mkdtemp(prefix=f"{COPY_PREFIX}{os.getpid()}-", dir=base))  # 0700
    dest = folder / (os.path.basename(os.fspath(path)) or "transcript")
    try:
        copy_file(path, dest, mode=COPY_MODE)
        os.chmod(dest, COPY_MODE)  # whatever the umask
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return dest


def remove_copy(copy: str | os.PathLike) -> None:
    """Remove a copy :func:`readonly_copy` made, with its directory (and whatever the editor
    left in it: a swap file). Never raises."""
    folder = Path(copy).parent
    if folder.name.startswith(COPY_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)

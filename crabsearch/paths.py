"""Where crabsearch keeps its own files (never inside an agent's directory).

Index: ``platformdirs.user_cache_dir("crabsearch")/index``, overridden by ``--index-dir`` or
``$CRABSEARCH_INDEX_DIR``. The demo (``crabsearch --demo``) keeps a separate index beside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "crabsearch"


def cache_dir() -> Path:
    """The per-user cache directory (``~/.cache/crabsearch`` on Linux)."""
    return Path(platformdirs.user_cache_dir(APP))


def index_dir(override: str | os.PathLike | None = None, *, demo: bool = False) -> Path:
    """The index directory: ``override``, else ``$CRABSEARCH_INDEX_DIR``, else the cache dir
    (``index`` or, for the demo, ``demo-index``)."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("CRABSEARCH_INDEX_DIR")
    if env and not demo:
        return Path(env).expanduser()
    return cache_dir() / ("demo-index" if demo else "index")


def demo_home() -> Path:
    """The bundled example home directory (Claude Code and Codex layouts) used by ``--demo``."""
    return Path(__file__).resolve().parent / "demo" / "home"


PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def open_private(path: Path):
    """``path`` opened for writing text (UTF-8), created or truncated with mode 0600 (an existing
    file is made 0600 too; a symlink is refused): everything crabsearch writes holds words from
    transcripts. Raises ``OSError``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "w", encoding="utf-8")


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through :func:`open_private` (mode 0600). Raises ``OSError``."""
    with open_private(path) as fh:
        fh.write(text)


def write_atomically(target: Path, pieces, *, mode: int | None = None, sync: bool = True,
                     hidden: bool = True) -> None:
    """Write ``pieces`` (``str``, UTF-8, or ``bytes``) to a temporary file beside ``target``, then
    rename it over ``target`` (``os.replace``): ``target`` is the old file or the complete new
    one, never half of one. ``mode``: the new file's permissions (None: the old file's, or for a
    new file 0600: what crabsearch writes holds transcript text, exports included).
    ``sync``: fsync before the rename. The temporary file is ``[.]<name>.<random>.tmp``
    (``hidden``: with the dot). Raises OSError (the temporary file is removed)."""
    import tempfile

    if mode is None:
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = PRIVATE_FILE
    prefix = f"{'.' if hidden else ''}{target.name}."
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in pieces:
                f.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def make_private(directory: Path, owned_names) -> None:
    """Make ``directory`` 0700 and the files in it that crabsearch wrote 0600 (``owned_names(name)``
    says which: an index directory may be one the user made, 0755, with files of their own).
    Whoever created it, only its owner can read the index. The directory itself is changed only
    when every entry in it is crabsearch's (``--index-dir /tmp`` must not lock out other users).
    Symlinks are never followed; errors are ignored (a read-only or foreign directory stays as
    it is)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    ours = True
    for entry in entries:
        if not owned_names(entry.name):
            ours = False
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mode & 0o077:
                os.chmod(entry.path, PRIVATE_FILE, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass
    if ours:
        try:
            st = os.stat(directory)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.chmod(directory, PRIVATE_DIR)
        except OSError:
            pass

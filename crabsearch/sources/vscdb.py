"""What the readers of VS Code forks' ``state.vscdb`` stores share (Windsurf's chat panel, Cursor's
composer): where an editor keeps its ``User`` directory, a workspace's folder, and an ``ItemTable``
value.

A VS Code-based editor keeps global state in ``<User>/globalStorage/state.vscdb`` and each opened
folder's in ``<User>/workspaceStorage/<hash>/state.vscdb``, with ``workspace.json`` beside it
naming the folder (``{"folder": "file:///path"}``, or ``{"workspace": ".../x.code-workspace"}``
for a multi-root workspace). Both are SQLite stores with tables ``ItemTable(key, value)`` and, in
Cursor, ``cursorDiskKV(key, value)`` (VS Code's ``storage`` service; the same layout cass's
``cursor.rs`` and agentsview's ``vscode_*`` readers open).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Mapping
from urllib.parse import unquote, urlparse

from ..files import read_file


def user_dirs(app: str, env: Mapping[str, str], home: Path) -> list[Path]:
    """The ``User`` directories of editor ``app`` (``Cursor``, ``Windsurf``): Linux
    ``$XDG_CONFIG_HOME/<app>/User`` (else ``~/.config``), macOS ``~/Library/Application
    Support/<app>/User``, Windows ``%APPDATA%\\<app>\\User``."""
    config = Path(os.path.expanduser(env["XDG_CONFIG_HOME"])) if env.get("XDG_CONFIG_HOME") else home / ".config"
    out = [config / app / "User", home / "Library" / "Application Support" / app / "User"]
    if env.get("APPDATA"):
        out.append(Path(env["APPDATA"]) / app / "User")
    return out


def workspace_folder(directory: Path) -> str | None:
    """The folder a ``workspaceStorage/<hash>`` directory belongs to, from its ``workspace.json``
    (a ``file:`` URI made a path; a remote or multi-root workspace: its path as the URI gives
    it); None when there is none. Never raises."""
    try:
        data = json.loads(read_file(directory / "workspace.json", 1 << 20))
    except (OSError, ValueError):
        return None
    uri = (data.get("folder") or data.get("workspace")) if isinstance(data, dict) else None
    if not isinstance(uri, str) or not uri:
        return None
    parsed = urlparse(uri)
    path = unquote(parsed.path) if parsed.scheme else uri
    if len(path) > 2 and path[0] == "/" and path[2] == ":":  # file:///C:/x on Windows
        path = path[1:]
    return path or None


def item(con: sqlite3.Connection, key: str, table: str = "ItemTable") -> object | None:
    """The value stored under ``key`` in ``table`` (text or bytes), or None. Raises
    ``sqlite3.Error`` (a store without that table, say)."""
    row = con.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None

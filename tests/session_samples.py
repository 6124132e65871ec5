"""A session with everything the session view renders: Markdown (heading, list, emphasis, a table,
a code fence, a link, an image, HTML), tool calls (a shell command with escape sequences in its
arguments, an edit), folded tool output and a diff (``test_tui_transcript``, ``snapshots``)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from builders import ClaudeSession

RICH_SESSION_ID = "66666666-0000-4000-8000-000000000001"


def write_rich_session(home: Path) -> Path:
    s = ClaudeSession(home, session_id=RICH_SESSION_ID, cwd="/home/dev/ocelot",
                      start=datetime(2026, 3, 19, 14, 0, tzinfo=timezone.utc))
    s.user("make the **ocelot** parser strict")
    s.assistant("## Plan\n\n1. read `parse()`\n2. add a *strict* flag <b>now</b>\n\n"
                "| option | default |\n|---|---|\n| strict | off |\n\n"
                "```python\ndef parse(text, strict=False):\n    return text\n```\n\n"
                "See [the docs](https://example.com/ocelot) and ![diagram](https://example.com/d.png).")
    s.tool("Bash", {"command": "pytest -q tests/test_parse.py \x1b[2J \u202eevil", "description": "run"},
           "1 failed\n" + "\n".join(f"line {i}" for i in range(30)))
    s.tool("Edit", {"file_path": "ocelot.py", "old_string": "def parse(text):\n    return text\n",
                    "new_string": "def parse(text, strict=False):\n    return text\n"}, "ok")
    s.tool("Bash", {"command": "git diff"}, "diff --git a/o.py b/o.py\n--- a/o.py\n+++ b/o.py\n@@ -1 +1 @@\n"
                                              "-def parse(text):\n+def parse(text, strict=False):")
    s.assistant("Done: the ocelot parser is strict now.")
    return s.write()


def indexed_rich_session(root: Path) -> tuple[Path, Path]:
    """``root/home`` with :func:`write_rich_session`'s session, indexed into ``root/index``;
    returns ``(home, index dir)`` (the session view's fixtures)."""
    from crabsearch.index import Indexer

    home = root / "home"
    write_rich_session(home)
    Indexer(root / "index", env={"HOME": str(home)}).refresh()
    return home, root / "index"

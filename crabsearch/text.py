"""Making transcript text safe to show in a terminal.

Transcript text is data: it is never parsed as Rich/Textual markup (callers wrap it in
``rich.text.Text``), and terminal control characters in it (ESC sequences, BEL, CR...) are
replaced by visible symbols so they cannot move the cursor, change colours or retitle the window.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode "control pictures": ESC -> U+241B
    if code == 0x7F:
        return "\u2421"
    return "\ufffd"


def printable(text: str) -> str:
    """``text`` with C0/C1 control characters (except newline and tab) made visible; tabs become
    four spaces."""
    return _CONTROL.sub(_visible, text).replace("\t", "    ")

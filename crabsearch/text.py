"""Making transcript text safe to show in a terminal: the one sanitizer every door uses.

Every string that comes from a transcript or a file name (message text, tool labels, titles,
project paths, agent-supplied ids, file paths in warnings) is data that may be hostile: a tool
name can hold ``ESC ]52;c;...BEL`` (writes the clipboard through tmux), ``ESC ]0;...`` (retitles
the window) or ``ESC [2J`` (blanks the screen). Before any terminal output it goes through
:func:`printable`, and JSON through :func:`terminal_json`; it is never parsed as Rich/Textual
markup (callers wrap it in ``rich.text.Text``).

Also the one way a count is worded with its noun (:func:`counted`: ``1 match``, ``2 matches``).
"""

from __future__ import annotations

import json
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but newline and tab, DEL, C1 controls (U+0080-U+009F: U+009B is an 8-bit CSI to
some terminals) and the bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069), which can
make text read in another order than it is stored."""

_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What ``json.dumps(..., ensure_ascii=False)`` leaves raw but a terminal may act on (it already
escapes C0 controls)."""


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode "control pictures": ESC -> U+241B
    if code == 0x7F:
        return "\u2421"
    return "\ufffd"  # C1 and bidi controls: the replacement character


def printable(text: str, *, tabs: bool = False) -> str:
    """``text`` with every control character made visible and inert: C0 controls (except newline
    and tab) as their Unicode control pictures (ESC -> ␛), DEL as ␡, C1 controls and bidi
    overrides/isolates as U+FFFD; tabs become four spaces unless ``tabs`` (Markdown exports keep
    them). Other characters are kept as they are (one for one), so ``printable`` never changes
    what a search can match."""
    if text.isprintable():  # the common case: no control character at all (fast path)
        return text
    text = _CONTROL.sub(_visible, text)
    return text if tabs else text.replace("\t", "    ")


UNRUNNABLE = ("This session's working directory or id holds control characters: crabsearch will not run "
              "its command (c, then r, copies it to look at).")
"""What the app and the command line say instead of running such a resume or fork command."""


def runnable(command: str) -> bool:
    """False when a resume or fork command (built from a transcript's working directory and
    session id) holds a control character (a newline, a tab or one :func:`printable` shows):
    quoted, it is no shell injection, but run, a shell's ``cd`` error printed it raw, and an
    ``ESC ]52`` in the directory wrote the clipboard."""
    return command.isprintable()


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_json(obj, *, indent: int | None = 2) -> str:
    """``obj`` as JSON text (UTF-8 kept readable, ``ensure_ascii=False``) in which no character
    can act on a terminal: C0 controls are escaped by ``json``, and DEL, C1 controls and bidi
    overrides are escaped here as ``\\uXXXX``. ``json.loads`` gives back exactly ``obj``: the
    data stays faithful, only its spelling changes. Raises ``TypeError`` for values JSON cannot
    hold. With ``indent=2`` (the CLI's) the text comes from ``orjson``, 10x faster than ``json``'s
    pure-Python indenting encoder and the same text but for exponents (``1e-7``, not ``1e-07``);
    ``json`` writes what ``orjson`` refuses (integers past 64 bits, lone surrogates)."""
    if indent == 2:
        import orjson

        try:
            return inert_json_text(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode())
        except TypeError:  # orjson.JSONEncodeError is one
            pass
    return inert_json_text(json.dumps(obj, ensure_ascii=False, indent=indent))


def inert_json_text(text: str) -> str:
    """JSON text with DEL, C1 controls and bidi overrides escaped as ``\\uXXXX``, without parsing
    it: in valid JSON they can only stand inside strings, where the escape means the same
    character (``json`` already escapes C0 controls). What :func:`terminal_json` does to its
    output, for JSON another library wrote (the MCP SDK's messages)."""
    return _JSON_UNSAFE.sub(_escape, text)


def counted(count: int, noun: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """``1 session``, ``3 sessions``, ``0 matches``: ``count`` and ``noun``, or its ``plural``
    (``noun + "s"`` by default) when ``count`` is not 1; ``grouped``: the count with thousands
    separators (``1,204 lines``)."""
    return (f"{count:,}" if grouped else str(count)) + " " + (noun if count == 1 else plural or noun + "s")

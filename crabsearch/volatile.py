"""The volatile parts of a pasted line: what changes from one run of the same error to the next.

An error or a stack frame pasted today differs from the one in the session where it was fixed
by its numbers and places, not by its words: line and column numbers, addresses, durations,
timestamps, ids, temporary paths, the home folder and checkout a path starts with.
:func:`stable_part` says which part of one whitespace-separated word of a pasted line is the
message (``crabsearch.index.querying`` requires that part and counts the whole word only as
weak evidence, when it matches).

Volatile, as a whole word (surrounding quotes, brackets and ``,;:`` aside):

* numbers, with a unit or ``#``: ``331``, ``5087ms``, ``1.2.10``, ``100%``, ``#004``;
* line:column and clock times: ``12:5``, ``12:33:04``; ISO dates and timestamps
  (``2026-01-02``, ``2026-01-02T12:33:04Z``);
* addresses and hex ids: ``0x7ffd3a2b``, a git hash (``4f1c9a07``: seven hex digits or more,
  a digit among them), a UUID;
* a shell prompt's ``user@host`` (no dot after the ``@``: ``git@github.com`` is kept);
* an identifier with a volatile part: a run of three digits or more (``task#017``,
  ``test-session-1714482211``), a hex id, or a temporary name's random part (six characters or
  more, two digits and both cases: ``Xk29pQ``);
* a temporary path (``/tmp/…``, ``/var/folders/…``, ``/private/var/…``, ``…\\Temp\\…``).

A file name loses its line:column suffix (``cli.ts:12:5`` -> ``cli.ts``), and so does a path
(two parts or more, ``/`` or ``\\``); an absolute one
(``/``, ``~``, ``C:\\``, ``file:``) or one with a volatile part is its file name and the folder
holding it (``/Users/dana/…/task#017/src/cli.ts`` -> ``src/cli.ts``; the folder only when it is
stable), a relative path with no volatile part stays whole (``src/domain/session.ts``).
"""

from __future__ import annotations

import re

_EDGES = "'\"()[]{}<>,;:`"
_WHOLE = re.compile(
    r"""(?ix)^(?:
      [+-]?\#?\d+(?:[.,:]\d+)*(?:%|[a-z]{1,3})?          # 331, 5087ms, 1.2.10, 12:5, 12:33:04, #004
    | 0x[0-9a-f]+                                          # an address
    | (?=[0-9a-f]*\d)[0-9a-f]{7,}                          # a git hash, a hex id
    | [0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}          # a UUID
    | \d{4}-\d{2}-\d{2}(?:[t\ _]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?
    | [\w.-]+@[\w-]+                                       # user@host (a prompt)
    )$""")
_PART_VOLATILE = re.compile(r"(?i)^(?:\d{3,}|(?=[0-9a-f]*\d)[0-9a-f]{7,})$")
"""One alphanumeric part of an identifier that is volatile by itself: three digits or more, or a
hex id (``_shuffled`` is the other kind)."""
_SHUFFLED = re.compile(r"^(?=(?:.*\d){2})(?=.*[a-z])(?=.*[A-Z]).{6,}$")
"""A temporary name's random part: six characters or more, two digits and both cases
(``Xk29pQ``; not ``sha256``, ``utf8mb4``, ``PySide6``, ``i18n``)."""
_TEMP = re.compile(r"(?i)(?:^|[/\\:])(?:tmp|temp|var[/\\]folders|private[/\\]var)[/\\]")
_ABSOLUTE = re.compile(r"(?i)^(?:[/~\\]|[a-z]:[/\\]|file:|[a-z]+://)")
_LINE_COL = re.compile(r"(?::\d+)+$")
_FILE_LINE = re.compile(r"\.\w+(?::\d+)+$")
"""A file name with its line (and column): ``cli.ts:12:5``."""
_SEP = re.compile(r"[/\\]+")


def stable_part(word: str) -> str | None:
    """The part of ``word`` (one whitespace-separated word of a pasted line) that is the message:
    ``word`` itself when nothing in it is volatile, a shorter form for a path (see the module
    docs), or None when the whole word is volatile. Never raises."""
    core = word.strip(_EDGES)
    if not core:
        return word
    if _WHOLE.match(core):
        return None
    if len([p for p in _SEP.split(core) if p]) >= 2:
        return _path_part(core)
    if _FILE_LINE.search(core):
        return stable_part(_LINE_COL.sub("", core))
    if _volatile_parts(core):
        return None
    return word


def _path_part(path: str) -> str | None:
    """A path's stable part (the module docs), None when its file name is volatile."""
    if _TEMP.search(path):
        return None
    path = _LINE_COL.sub("", path)
    parts = [p for p in _SEP.split(path) if p]
    if not _ABSOLUTE.match(path) and not any(_volatile_parts(p) for p in parts):
        return path
    name = parts[-1]
    if _WHOLE.match(name) or _volatile_parts(name):
        return None
    folder = parts[-2] if len(parts) > 1 else ""
    if folder and not _WHOLE.match(folder) and not _volatile_parts(folder) and ":" not in folder:
        return f"{folder}/{name}"
    return name


def _volatile_parts(text: str) -> bool:
    """True when one alphanumeric part of ``text`` is volatile (``_PART_VOLATILE``, ``_SHUFFLED``)."""
    return any(_PART_VOLATILE.match(p) or _SHUFFLED.match(p) for p in re.findall(r"[A-Za-z0-9]+", text))

"""How a compound splits into pieces: paths, identifiers, versions, addresses.

A **compound** is a run of word characters (letters, digits, ``_``; at least one letter or
digit) joined by the connectors ``_ - . / : @ + #``, optionally with a leading ``#`` (``#123``)
and a trailing ``++`` or ``#`` (``C++``, ``C#``); ``index.tokenizer`` finds them in the text.
:func:`split` cuts one level by level and keeps every piece that is narrower than its parent (so
a plain word has no pieces):

1. on ``/ : @ # +`` (paths, URLs, e-mail addresses, ``std::fs``, ``#123``, ``C++``);
2. on ``.`` (file extensions, ``os.path.join``, versions, domains);
3. on ``-`` and ``_`` (``bd-q3fy``, ``resolve_dirs``, ``__init__``);
4. on case changes (camelCase humps): before an upper-case letter that follows a lower-case
   one (``getUser``), and before an upper-case letter followed by a lower-case one that follows
   an upper-case letter or a digit (``HTTPServer`` -> ``HTTP``, ``Server``; ``base64Encode`` ->
   ``base64``, ``Encode``). Letter/digit runs stay whole (``q3fy``, ``utf8``, ``v2``), and so
   does anything without lower-case letters (``CASE42``, ``Q3FY``, ``2FA``) or capitalized
   (``Fixed``). Known misfits: ``iOS`` -> ``i``, ``OS``; ``OAuth`` -> ``O``, ``Auth``.

The pieces of the last level are the **leaves**. Examples (the analyzer's terms, lowercased,
the whole compound first)::

    resolve_dirs         resolve_dirs resolve dirs
    getUserById          getuserbyid get user by id
    HTTPServerError      httpservererror http server error
    bd-q3fy              bd-q3fy bd q3fy
    src/main/foo-bar.ts  src/main/foo-bar.ts src main foo-bar.ts foo-bar foo bar ts
    C++                  c++ c
    #123                 #123 123
    v1.2.3               v1.2.3 v1 2 3
    user@example.com     user@example.com user example.com example com

Intermediate pieces (``foo-bar.ts``, ``foo-bar``, ``example.com``) are kept too, so a query for
a file name or a domain matches a longer path or address by its whole form. A compound longer
than :data:`MAX_COMPOUND` characters is data, not split at all (the tokenizer gives its
letter/digit runs as plain words).
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_COMPOUND = 255
"""A longer compound is data rather than a name (a base64 blob, minified code, a long URL):
the tokenizer gives only its letter/digit runs, each a plain word, with no whole form, no
intermediate pieces and no case splitting, which would flood the index with junk terms (Lucene's
default maximum token length is 255 too)."""

# Token kinds (the ``kind`` attribute of every token the tokenizer yields; the query side reads it).
WORD = "word"     # a token that stands alone: a plain word, a CJK bigram or unigram
WHOLE = "whole"   # a compound that has pieces (its pieces follow it)
PIECE = "piece"   # an intermediate piece of a compound (``foo-bar.ts``)
LEAF = "leaf"     # a piece of the last level (``foo``); leaves carry the positions
MARK = "mark"     # index.tokenizer.NAME_MARK at a name's first and last leaf (indexing only)

_LEVELS = (
    re.compile(r"[^/:@#+]+"),   # 1. paths, URLs, addresses, ``::``, ``#123``, ``C++``
    re.compile(r"[^.]+"),       # 2. extensions, dotted names, versions, domains
    re.compile(r"[^\-_]+"),     # 3. kebab-case and snake_case
)
"""Splitting levels before the last one (case changes): each regex finds the sub-runs."""

_HYPHENATED_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)+")
"""Letters and digits joined by hyphens only (``real-time``, ``end-to-end``): running text, not a
name, unless a camelCase hump splits it further."""


def is_name(word: str, leaves: int) -> bool:
    """True when the compound ``word`` of ``leaves`` leaves is a name (a path, file name, dotted,
    snake_case or camelCase identifier): anything with two leaves or more but a plain hyphenated
    word such as ``real-time`` or ``follow-up``, which is running text."""
    return leaves > 1 and not (_HYPHENATED_RE.fullmatch(word) and leaves == word.count("-") + 1)


def _case_bounds(s: str) -> list[int]:
    """Indexes in ``s`` (letters and digits only) where a camelCase hump starts: an upper-case
    letter after a lower-case one (``getUser``), or an upper-case letter followed by a
    lower-case one after an upper-case letter or a digit (``HTTPServer``, ``base64Encode``).
    Runs without lower-case letters never split (``Q3FY``, ``2FA``)."""
    out = []
    n = len(s)
    for i in range(1, n):
        if not s[i].isupper():
            continue
        p = s[i - 1]
        if p.islower() or ((p.isupper() or p.isdigit()) and i + 1 < n and s[i + 1].islower()):
            out.append(i)
    return out


@lru_cache(maxsize=16384)
def split(word: str) -> tuple[tuple[tuple[int, int, int, str], ...], int]:
    """The pieces of the compound ``word``, ``((start, end, leaf_index, kind), ...)`` in text
    order (longer first at equal starts, the whole itself excluded; ``kind`` :data:`PIECE` or
    :data:`LEAF`, ``start``/``end`` index ``word``), and its number of leaves (1 and no pieces
    when it does not split). Cached per distinct string."""
    pieces: list[tuple[int, int, int, str]] = []
    leaves = 0

    def walk(lo: int, hi: int, level: int) -> None:
        nonlocal leaves
        if level == len(_LEVELS):  # case changes: every run is a leaf
            edges = [lo] + [lo + b for b in _case_bounds(word[lo:hi])] + [hi]
            for a, b in zip(edges, edges[1:]):
                if (a, b) != (lo, hi):
                    pieces.append((a, b, leaves, LEAF))
                leaves += 1
            return
        for m in _LEVELS[level].finditer(word, lo, hi):
            a, b = m.span()
            if (a, b) == (lo, hi):  # nothing to split at this level
                walk(a, b, level + 1)
                continue
            at, first = len(pieces), leaves
            pieces.append((a, b, first, PIECE))
            walk(a, b, level + 1)
            if leaves == first:  # no letters or digits in it (``..`` in ``a/../b``)
                del pieces[at]
            elif len(pieces) == at + 1:  # it did not split any further: a leaf
                pieces[at] = (a, b, first, LEAF)

    walk(0, len(word), 0)
    walk = None  # noqa: F841 - the nested function refers to itself: a reference cycle otherwise
    return tuple(pieces), leaves

"""Highlighting: where a query's terms are in displayed text.

:func:`spans` and :func:`term_spans` analyze the text with the index's analyzer
(``tokenizer.text_analyzer``) and return the character spans of the tokens whose term is
wanted; offsets index the text as given (also when it is not NFC: ``index.nfc``). The wanted
terms come from the query (``querying.Compiler.terms``): analyzed terms, ``prefix*`` entries,
and runs (an identifier's parts, ``get user by id``) highlighted only where they stand in a row.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .tokenizer import text_analyzer


def spans(text: str, wanted: set[str]) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of ``text`` whose analyzed form is in ``wanted`` (for
    highlighting query terms in displayed text), in order; an entry ending in ``*`` matches
    tokens starting with it (prefix queries). Offsets index ``text`` as given
    (also when it is not NFC). A piece inside an already returned compound span is not
    returned again; spans of adjacent CJK bigrams overlap by one character."""
    return [(s, e) for s, e, _ in term_spans(text, wanted)]


def term_spans(text: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    """:func:`spans` with what each span matched: ``(start, end, entry)``, ``entry`` the analyzed
    term of ``wanted`` (or the ``prefix*`` entry) it is.

    An entry with spaces is a run (``get user by id``, an identifier's parts: ``querying.
    Compiler.terms``): its words are highlighted only where they stand in a row, in order, as
    one span from the first to the last (the search matches ``getUserById`` as its whole form or
    its parts in a row, never ``user`` alone); a word of a run is not highlighted on its own.

    ASCII text without runs is analyzed only around the places a wanted word can be
    (:func:`_near_matches`): the same spans, for a fraction of the work on a long message (the
    app highlights a screenful of messages for each typed query)."""
    if not wanted:
        return []
    runs = [tuple(w.split()) for w in wanted if " " in w]
    if runs:
        parts = {p for run in runs for p in run}
        wanted = {w for w in wanted if " " not in w and w not in parts}
    prefixes = tuple(w[:-1] for w in wanted if w.endswith("*") and len(w) > 1)
    out: list[tuple[int, int, str]] = []
    at: dict[int, dict[str, tuple[int, int]]] = {}  # position -> run word -> its span
    last_s = last_e = -1
    if runs or not text.isascii():
        tokens = text_analyzer()(text, chars=True, positions=bool(runs))
    else:
        tokens = _near_matches(text, wanted, prefixes)
    for t in tokens:
        term = t.text
        if runs and term in parts:
            at.setdefault(t.pos, {}).setdefault(term, (t.startchar, t.endchar))
        if term in wanted or (prefixes and term.startswith(prefixes)):
            s, e = t.startchar, t.endchar
            if last_s <= s and e <= last_e:
                continue
            if term not in wanted:
                term = next(p for p in prefixes if term.startswith(p)) + "*"
            out.append((s, e, term))
            last_s, last_e = s, e
    if at:
        out = _with_runs(out, at, runs)
    return out


NEAR_GAP = 64
"""Characters between two stretches of text that :func:`_near_matches` analyzes as one (each
analyzer call costs a few microseconds of set-up)."""


def _near_matches(text: str, wanted: set[str], prefixes: tuple[str, ...]):
    """The tokens (with ``startchar``/``endchar``) of the stretches of the ASCII ``text`` that
    can hold a token of ``wanted`` or starting with one of ``prefixes``: the same tokens there
    as analyzing the whole text, and none elsewhere.

    Why it holds: no token holds a space, and the tokenizer's pattern has no look-behind and
    looks ahead only across characters a token can hold, so the text between two spaces (or an
    end) gives the same tokens alone as in the whole text. An ASCII token's term is its text
    lower-cased (folding leaves lower-case ASCII as it is), or that with apostrophes taken out
    (``isn't`` is ``isnt``): so only a stretch whose lower-cased text holds a wanted word, a
    prefix or an apostrophe can give a wanted token."""
    needles = tuple(sorted({w for w in wanted if w.isascii() and not w.endswith("*")} | set(prefixes) | {"'"}))
    search = _needle_re(needles).search
    lower = text.lower()
    analyze = text_analyzer()
    at = 0
    while (m := search(lower, at)) is not None:
        start = lower.rfind(" ", 0, m.start()) + 1
        end = lower.find(" ", m.end())
        while end >= 0 and (nxt := search(lower, end)) is not None and nxt.start() - end <= NEAR_GAP:
            end = lower.find(" ", nxt.end())  # the next stretch is near: one analyzer call for both
        end = len(text) if end < 0 else end
        yield from analyze(text[start:end], chars=True, start_char=start)
        at = end


@lru_cache(maxsize=256)
def _needle_re(needles: tuple[str, ...]) -> re.Pattern:
    """Any of ``needles`` (literal text), compiled once per set of query words."""
    return re.compile("|".join(map(re.escape, needles)))


def _with_runs(out: list[tuple[int, int, str]], at: dict, runs: list[tuple[str, ...]]) -> list[tuple[int, int, str]]:
    """``out`` with the spans of each run found in ``at`` (position -> word -> character span)
    added in order; a span inside another (a run inside a highlighted whole identifier) is
    dropped."""
    found = list(out)
    for run in runs:
        for pos, words in at.items():
            if run[0] in words and all(run[i] in at.get(pos + i, ()) for i in range(1, len(run))):
                found.append((words[run[0]][0], at[pos + len(run) - 1][run[-1]][1], " ".join(run)))
    found.sort(key=lambda x: (x[0], -x[1]))
    kept: list[tuple[int, int, str]] = []
    for s, e, entry in found:
        if kept and kept[-1][0] <= s and e <= kept[-1][1]:
            continue
        kept.append((s, e, entry))
    return kept

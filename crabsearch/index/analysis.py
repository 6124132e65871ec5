"""What a query's text becomes: its terms, its groups (an identifier whole or in parts), its
phrase terms, and the folded letters spelling repair keeps.

Every function analyzes the text with the analyzer the index uses (``tokenizer.text_analyzer``,
so a query term is spelled as the indexed one) and reads each token's ``kind``
(``compounds.WORD``, ``WHOLE``, ``PIECE``, ``LEAF``):

* :func:`terms`: every distinct term in order (wholes, pieces, leaves). ANDing them all
  requires the whole form, so ``getUserById`` matches only messages containing it.
* :func:`groups`: per token ``[whole, leaf, ...]``, so a search layer can require the whole
  form OR all its leaves ("in parts": a message saying ``get the user by id`` matches too).
* :func:`phrase_terms`: the leaves along the positions, for ``Phrase`` queries (the tokenizer's
  module docs, "Positions").
* :func:`folded_contexts`: the letters folding changed, with their neighbours.

Highlighting the terms in displayed text is ``index.highlight``.
"""

from __future__ import annotations

from whoosh.analysis import LowercaseFilter

from .compounds import LEAF, WHOLE, WORD
from .tokenizer import CJKBigramTokenizer, CompoundTokenizer, fold, text_analyzer  # noqa: F401 - see below

# An index's table of contents pickles its schema, whose analyzer names its tokenizer's class by
# module and name: an index built when the tokenizer lived here names
# ``crabsearch.index.analysis.CompoundTokenizer`` (or ``CJKBigramTokenizer``), so both names stay
# importable from this module.


def folded_contexts(text: str) -> dict[str, list[str]]:
    """For each word of ``text`` that folding changed (``über``, ``Straße``): its folded form
    -> the folded letters with their neighbours (``über``: ``["ub"]``; ``münchn``: ``["mun"]``).
    Spelling repair keeps these (a repair that replaces a folded letter's neighbourhood crosses
    into an unrelated word: ``über`` -> ``user``)."""
    out: dict[str, list[str]] = {}
    raw = CompoundTokenizer() | LowercaseFilter()
    for tok in raw(text):
        if tok.kind not in (WORD, WHOLE) or tok.text == fold(tok.text):
            continue
        folded, changed = "", []
        for c in tok.text:
            f = fold(c)
            if f != c:
                changed.extend(range(len(folded), len(folded) + len(f)))
            folded += f
        contexts, start = [], None
        for i in range(len(folded) + 1):
            inside = i in changed
            if inside and start is None:
                start = i
            elif not inside and start is not None:
                contexts.append(folded[max(0, start - 1):i + 1])
                start = None
        out.setdefault(folded, contexts)
    return out


def terms(text: str) -> list[str]:
    """The analyzed terms of ``text``, in order, without duplicates (whole compounds, their
    pieces and their leaves: ``getUserById`` -> ``getuserbyid get user by id``)."""
    seen: dict[str, None] = {}
    for tok in text_analyzer()(text):
        seen.setdefault(tok.text, None)
    return list(seen)


def groups(text: str) -> list[list[str]]:
    """The analyzed terms of ``text`` grouped per token: ``[whole, leaf, leaf, ...]`` for a
    compound, ``[word]`` for a plain word or a CJK bigram, in order, identical groups once.

    ``groups("getUserById foo")`` is ``[["getuserbyid", "get", "user", "by", "id"], ["foo"]]``.
    A search layer can require, per group, the whole form OR all of its leaves (intermediate
    pieces such as ``foo-bar.ts`` are left out: the leaves already cover them).
    """
    return [group for group, _ in group_leaves(text)]


def group_leaves(text: str) -> list[tuple[list[str], list[str]]]:
    """:func:`groups` with each group's leaves along the positions (duplicates kept), for a
    phrase of an identifier's parts: ``group_leaves("foo.foo getUserById")`` is
    ``[(["foo.foo", "foo"], ["foo", "foo"]), (["getuserbyid", "get", "user", "by", "id"],
    ["get", "user", "by", "id"])]``; a plain word's leaves are ``[word]``. Identical groups
    once (the first)."""
    out: list[tuple[list[str], list[str]]] = []
    seen: set[tuple[str, ...]] = set()
    cur: list[str] | None = None
    leaves: list[str] = []

    def close():
        if cur is not None:
            key = tuple(cur)
            if key not in seen:
                seen.add(key)
                out.append((cur, leaves or [cur[0]]))

    for tok in text_analyzer()(text):
        kind = tok.kind
        if kind == WORD or kind == WHOLE:
            close()
            cur, leaves = [tok.text], []
        elif kind == LEAF and cur is not None:
            leaves.append(tok.text)
            if tok.text not in cur:
                cur.append(tok.text)
    close()
    return out


def phrase_terms(text: str) -> list[str]:
    """The terms of ``text`` along the positions (plain words, CJK bigrams and the leaves of
    compounds, duplicates kept): the words for a Whoosh ``Phrase`` query.

    ``phrase_terms("call resolve_dirs now")`` is ``["call", "resolve", "dirs", "now"]``, which
    matches both ``call resolve_dirs now`` and ``call resolve dirs now`` in indexed text.
    """
    return [tok.text for tok in text_analyzer()(text) if tok.kind == WORD or tok.kind == LEAF]

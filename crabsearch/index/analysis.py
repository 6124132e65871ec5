"""The analyzer used at index time and query time (the same pipeline both ways).

Tokens are runs of word characters (identifiers keep their underscores and digits), lowercased
and accent-folded (``café`` and ``cafe`` match). The tokenizer never fails on any input.
"""

from __future__ import annotations

from functools import lru_cache

from whoosh.analysis import CharsetFilter, LowercaseFilter, RegexTokenizer
from whoosh.support.charset import accent_map

TOKEN_PATTERN = r"\w+"


@lru_cache(maxsize=1)
def text_analyzer():
    """The shared analyzer: ``RegexTokenizer(\\w+) | LowercaseFilter | CharsetFilter(accent_map)``."""
    return RegexTokenizer(TOKEN_PATTERN) | LowercaseFilter() | CharsetFilter(accent_map)


def terms(text: str) -> list[str]:
    """The analyzed terms of ``text``, in order, without duplicates."""
    seen: dict[str, None] = {}
    for tok in text_analyzer()(text):
        seen.setdefault(tok.text, None)
    return list(seen)


def spans(text: str, wanted: set[str]) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of tokens of ``text`` whose analyzed form is in
    ``wanted`` (for highlighting query terms in displayed text)."""
    if not wanted:
        return []
    return [(t.startchar, t.endchar) for t in text_analyzer()(text, chars=True) if t.text in wanted]

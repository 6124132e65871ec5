"""The analyzer used at index time and query time (the same pipeline both ways).

Tokens are runs of word characters (identifiers keep their underscores and digits), lowercased
and accent-folded (``café`` and ``cafe`` match). The tokenizer never fails on any input.

CJK text has no spaces between words, so a run of CJK characters (Han, Hiragana, Katakana
including the prolonged sound mark ``ー``, Hangul) is split into overlapping character
**bigrams**, like Lucene's ``CJKBigramFilter``: ``日付のフォ`` gives ``日付``, ``付の``, ``のフ``,
``フォ``. A CJK character standing alone (no CJK neighbour) gives a unigram. A CJK run directly
followed by Latin letters or digits is split from them (``関数getUser`` -> ``関数``, ``getuser``).

Consequences for queries (analyzed the same way):

* a two-character query (``日付``) is one bigram and matches it anywhere inside a sentence;
* a longer query (``フォーマット``) gives several bigrams, which the search layer ANDs per
  message (so it matches messages containing them all, usually the word itself);
* a **single-character** CJK query (``日``) is a unigram and only matches that character where
  it stood alone in the indexed text, not inside a longer run (a known limitation).
"""

from __future__ import annotations

import re
from functools import lru_cache

from whoosh.analysis import CharsetFilter, LowercaseFilter, Token, Tokenizer
from whoosh.support.charset import accent_map

CJK_CHARS = (
    "\u1100-\u11ff"           # Hangul Jamo
    "\u3005-\u3007"           # 々 〆 〇 (iteration mark, closing mark, ideographic zero)
    "\u3021-\u3029"           # Hangzhou numerals
    "\u3031-\u3035"           # vertical kana repeat marks
    "\u303b\u303c"            # 〻 〼
    "\u3041-\u3096"           # Hiragana
    "\u309d-\u309f"           # ゝ ゞ ゟ
    "\u30a1-\u30fa"           # Katakana
    "\u30fc-\u30ff"           # ー ヽ ヾ ヿ (prolonged sound mark, iteration marks, digraph)
    "\u3131-\u318e"           # Hangul Compatibility Jamo
    "\u31f0-\u31ff"           # Katakana Phonetic Extensions
    "\u3400-\u4dbf"           # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"           # CJK Unified Ideographs
    "\ua960-\ua97c"           # Hangul Jamo Extended-A
    "\uac00-\ud7a3"           # Hangul Syllables
    "\ud7b0-\ud7fb"           # Hangul Jamo Extended-B
    "\uf900-\ufaff"           # CJK Compatibility Ideographs
    "\uff66-\uff9f"           # Halfwidth Katakana (incl. ｰ and the halfwidth voicing marks)
    "\uffa0-\uffdc"           # Halfwidth Hangul
    "\U0001b000-\U0001b16f"   # Kana Supplement / Extended-A / Small Kana Extension
    "\U00020000-\U0003134f"   # CJK Unified Ideographs Extensions B-G, Compatibility Supplement
)
"""Character class body (for ``[...]``) of the characters that are bigrammed."""

TOKEN_PATTERN = rf"([{CJK_CHARS}]+)|([^\W{CJK_CHARS}]+)"
"""Group 1: a run of CJK characters (bigrammed); group 2: a run of other word characters."""

_TOKEN_RE = re.compile(TOKEN_PATTERN)


class CJKBigramTokenizer(Tokenizer):
    """``\\w+`` runs as tokens, except that runs of CJK characters become overlapping bigrams
    (an isolated CJK character becomes a unigram). Positions are consecutive over all tokens
    (so phrase queries over adjacent bigrams work); a bigram's chars span its two characters.

    Module-level and stateless (the pattern is a module constant), so it pickles into the
    index TOC by reference.
    """

    def __eq__(self, other):
        return self.__class__ is other.__class__

    def __hash__(self):
        return hash(self.__class__)

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, tokenize=True, mode="", **kwargs):
        """Tokenize ``value``; keyword arguments as for Whoosh's ``RegexTokenizer``."""
        assert isinstance(value, str), "%r is not unicode" % (value,)
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:
            t.original = t.text = value
            t.boost = 1.0
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar = start_char
                t.endchar = start_char + len(value)
            yield t
            return
        pos = start_pos
        for match in _TOKEN_RE.finditer(value):
            run = match.group(1)
            if run is None or len(run) == 1:
                # An ordinary word, or an isolated CJK character (unigram).
                t.text = match.group(0)
                t.boost = 1.0
                if keeporiginal:
                    t.original = t.text
                t.stopped = False
                if positions:
                    t.pos = pos
                pos += 1
                if chars:
                    t.startchar = start_char + match.start()
                    t.endchar = start_char + match.end()
                yield t
                continue
            base = start_char + match.start()
            for i in range(len(run) - 1):
                t.text = run[i:i + 2]
                t.boost = 1.0
                if keeporiginal:
                    t.original = t.text
                t.stopped = False
                if positions:
                    t.pos = pos
                pos += 1
                if chars:
                    t.startchar = base + i
                    t.endchar = base + i + 2
                yield t


@lru_cache(maxsize=1)
def text_analyzer():
    """The shared analyzer: ``CJKBigramTokenizer | LowercaseFilter | CharsetFilter(accent_map)``."""
    return CJKBigramTokenizer() | LowercaseFilter() | CharsetFilter(accent_map)


def terms(text: str) -> list[str]:
    """The analyzed terms of ``text``, in order, without duplicates."""
    seen: dict[str, None] = {}
    for tok in text_analyzer()(text):
        seen.setdefault(tok.text, None)
    return list(seen)


def spans(text: str, wanted: set[str]) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of tokens of ``text`` whose analyzed form is in
    ``wanted`` (for highlighting query terms in displayed text). Spans of adjacent CJK bigrams
    overlap by one character."""
    if not wanted:
        return []
    return [(t.startchar, t.endchar) for t in text_analyzer()(text, chars=True) if t.text in wanted]

"""The one regular expression that finds the tokens in a text: CJK runs, plain words, words
with apostrophes and compounds (``index.tokenizer`` turns each match into tokens).

A **compound** (``index.compounds``) never ends in a connector, so sentence punctuation is not
glued on (``fixed it.`` -> ``fixed``, ``it``; ``see src/.`` -> ``see``, ``src``); a leading
``-``, ``.``, ``/`` or ``@`` is not part of it (``--no-verify`` -> ``no-verify``,
``@types/node`` -> ``types/node``). A word with an apostrophe inside stays one word (``isn't``
is ``isnt``, ``user's`` is ``user``: :func:`apostrophe_word`). Plain ASCII words (lower case,
capitalized, upper case: nearly all prose) are recognized by the pattern itself, so the
tokenizer never tries to split them.

CJK
---

CJK text has no spaces between words, so a run of CJK characters (:data:`CJK_CHARS`: Han,
Hiragana, Katakana including the prolonged sound mark ``ー``, Hangul) is split into overlapping
character **bigrams**, like Lucene's ``CJKBigramFilter``: ``日付のフォ`` gives ``日付``, ``付の``,
``のフ``, ``フォ``. A CJK character standing alone (no CJK neighbour) gives a unigram. A CJK run
directly followed by Latin letters or digits is split from them (``関数getuser`` -> ``関数``,
``getuser``). Bigrams take consecutive positions.

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

_CONNECTOR = r"[\-./:@+#]"          # ``_`` is a word character, so it is in _WORD

_APOSTROPHES = "'\u2019"
"""An apostrophe inside a word (ASCII ``'`` and the typographic ``’``) keeps the word whole."""


def _token_pattern(cjk: str) -> str:
    """:data:`TOKEN_PATTERN` with ``cjk`` as the body of the CJK character class."""
    _ALNUM = rf"[^\W_{cjk}]"      # a letter or digit that is not CJK
    _WORD = rf"[^\W{cjk}]"        # ... or an underscore
    return (
        rf"([{cjk}]+)"
        rf"|((?:[a-z0-9]++|[A-Z][a-z0-9]*+|[A-Z0-9]++)"
        rf"(?!{_WORD}|{_CONNECTOR}+{_WORD}|\+\+|#|[{_APOSTROPHES}]{_ALNUM}))"
        rf"|({_ALNUM}+(?:[{_APOSTROPHES}]{_ALNUM}+)+)"
        rf"|(#?_*{_ALNUM}{_WORD}*(?:{_CONNECTOR}+{_WORD}+)*(?:\+\+|#)?)"
    )


TOKEN_PATTERN = _token_pattern(CJK_CHARS)
"""Group 1: a run of CJK characters (bigrammed); group 2: an ASCII word that is certainly a
plain word (lower case, capitalized or upper case; the fast path); group 3: letters and digits
with apostrophes inside (``isn't``, ``O'Reilly``, ``user's``: one word, see
:func:`apostrophe_word`); group 4: any other compound (see the module docs; it may still turn
out to be a plain word, ``naïve``)."""

CJK_GROUP, PLAIN_GROUP, APOSTROPHE_GROUP, COMPOUND_GROUP = 1, 2, 3, 4


def in_no_name(term: str) -> bool:
    """True when ``term`` holds a CJK character (:data:`CJK_CHARS`): a bigram or unigram of a
    CJK run, which no name can hold (a compound's characters are never CJK: see the module
    docs), so a phrase with such a word never lies within one name."""
    return not term.isascii() and _cjk_re().search(term) is not None


@lru_cache(maxsize=None)
def _cjk_re() -> re.Pattern:
    """One character of :data:`CJK_CHARS`, compiled on first use."""
    return re.compile(f"[{CJK_CHARS}]")


@lru_cache(maxsize=None)
def token_re(ascii_only: bool) -> re.Pattern:
    """:data:`TOKEN_PATTERN` compiled on first use (compiling it is slow, most of it in the CJK
    ranges of its character classes, and a process that analyzes nothing should not pay it).
    ASCII text gets the same pattern with the CJK class reduced to one non-ASCII character: it
    cannot occur in ASCII text, so the matches are the same, and a process that sees only ASCII
    (most queries) never compiles the full one."""
    return re.compile(_token_pattern("\U0010ffff") if ascii_only else TOKEN_PATTERN)


def apostrophe_word(word: str) -> str:
    """A word with apostrophes inside, as one term: a final ``'s`` (English possessive, as
    Lucene's ``EnglishPossessiveFilter``) is dropped (``user's`` -> ``user``), other apostrophes
    are removed (``isn't`` -> ``isnt``, ``O'Reilly`` -> ``OReilly``), so the word matches the
    same word typed without them (``isn't`` is one word, not ``isn`` and ``t``)."""
    if len(word) > 2 and word[-2] in _APOSTROPHES and word[-1] in "sS":
        word = word[:-2]
    return word.replace("'", "").replace("\u2019", "")


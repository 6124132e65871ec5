"""The analyzer used at index time and query time (the same pipeline both ways).

``CompoundTokenizer | LowercaseFilter | CharsetFilter(FOLD_MAP)``: tokens are lowercased and
accent-folded (``café`` and ``cafe`` match; ``ß`` is ``ss``, ``æ`` is ``ae``: :data:`FOLD_MAP`).
A word with an apostrophe inside stays one word (``isn't`` is ``isnt``, ``user's`` is ``user``).
The tokenizer never fails on any input.

Compounds: identifiers match whole and in parts
-----------------------------------------------

A **compound** is a run of word characters (letters, digits, ``_``; at least one letter or
digit) joined by the connectors ``_ - . / : @ + #``, optionally with a leading ``#`` (``#123``)
and a trailing ``++`` or ``#`` (``C++``, ``C#``). A compound never ends in a connector, so
sentence punctuation is not glued on (``fixed it.`` -> ``fixed``, ``it``; ``see src/.`` ->
``see``, ``src``); a leading ``-``, ``.``, ``/`` or ``@`` is not part of it (``--no-verify`` ->
``no-verify``, ``@types/node`` -> ``types/node``). The tokenizer emits the
whole compound and then its **pieces**, splitting level by level and emitting every piece that
is narrower than its parent (so a plain word yields just itself):

1. on ``/ : @ # +`` (paths, URLs, e-mail addresses, ``std::fs``, ``#123``, ``C++``);
2. on ``.`` (file extensions, ``os.path.join``, versions, domains);
3. on ``-`` and ``_`` (``bd-q3fy``, ``resolve_dirs``, ``__init__``);
4. on case changes (camelCase humps): before an upper-case letter that follows a lower-case
   one (``getUser``), and before an upper-case letter followed by a lower-case one that follows
   an upper-case letter or a digit (``HTTPServer`` -> ``HTTP``, ``Server``; ``base64Encode`` ->
   ``base64``, ``Encode``). Letter/digit runs stay whole (``q3fy``, ``utf8``, ``v2``), and so
   does anything without lower-case letters (``CASE42``, ``Q3FY``, ``2FA``) or capitalized
   (``Fixed``). Known misfits: ``iOS`` -> ``i``, ``OS``; ``OAuth`` -> ``O``, ``Auth``.

The pieces of the last level are the **leaves**. Examples (after lowercasing)::

    resolve_dirs         resolve_dirs resolve dirs
    getUserById          getuserbyid get user by id
    HTTPServerError      httpservererror http server error
    bd-q3fy              bd-q3fy bd q3fy
    src/main/foo-bar.ts  src/main/foo-bar.ts src main foo-bar.ts foo-bar foo bar ts
    C++                  c++ c
    #123                 #123 123
    v1.2.3               v1.2.3 v1 2 3
    user@example.com     user@example.com user example.com example com

Intermediate pieces (``foo-bar.ts``, ``foo-bar``, ``example.com``) are emitted too, so a query
for a file name or a domain matches a longer path or address by its whole form.
A compound longer than :data:`MAX_COMPOUND` (255) characters is treated as data (base64,
minified code): only its letter/digit runs, as plain words.

Positions (for phrase queries)
------------------------------

Positions follow the **leaves**, like Lucene's ``WordDelimiterGraphFilter`` with
``preserveOriginal``: the leaves of a compound take consecutive positions, the whole compound
and every intermediate piece take the position of their first leaf, and the next token after
the compound comes at ``last leaf + 1``. So ``call resolve_dirs now`` is ``call`` at 0,
``resolve_dirs`` and ``resolve`` at 1, ``dirs`` at 2, ``now`` at 3. The chain of leaves is the
canonical path through the text: a phrase query must be built from :func:`phrase_terms` (the
leaves, not :func:`terms`), and then the phrase ``resolve dirs`` matches ``resolve_dirs``, the
phrase ``get user`` matches ``getUserById``, and the phrase ``call resolve_dirs now`` (leaves
``call resolve dirs now``) matches the text ``call resolve_dirs now``. A phrase that names the
whole compound *and* the word after it (``["resolve_dirs", "now"]``) does not match: Whoosh
positions are single integers, so the whole compound cannot also end at its last leaf.

Names: where a phrase lies inside one path or identifier
-------------------------------------------------------

When indexing (``mode="index"`` with positions, as Whoosh's ``Positions`` format asks), every
compound that is a **name** (a path, file name, dotted, snake_case or camelCase identifier: any
compound but a plain hyphenated word such as ``real-time`` or ``follow-up``, which is running
text) also gives the term :data:`NAME_MARK` at the position of its first leaf and at the
position of its last: ``see docs/set-up-cli.md now`` marks positions 1 and 5. A phrase's span
lying within such pairs is found only inside names (``set up cli`` in the file name), which
``index.phrases.TextPhrase`` tells apart from the same words as running text (SpecStory
histories quote each other's file names, ``...-setting-up-minsky-cli-with-bun.md``, so a
session's title words matched as a phrase in every session that named its file;
``bench/relevance_real``, ``title`` queries). The
mark is never produced from a query (no token holds a space) and does not count in a field's
length (``index.schema.NamePositions``).

Every token's ``startchar``/``endchar`` cover its own characters (a piece its substring, the
whole compound all of it), so highlighting marks exactly what matched.

Query side
----------

* :func:`terms`: every distinct term in order (wholes, pieces, leaves). ANDing them all
  requires the whole form, so ``getUserById`` matches only messages containing it.
* :func:`groups`: per token ``[whole, leaf, ...]``, so a search layer can require the whole
  form OR all its leaves ("in parts": a message saying ``get the user by id`` matches too).
* :func:`phrase_terms`: the leaves along the positions, for ``Phrase`` queries (see above).
* :func:`spans`: highlighting; a piece inside an already returned compound span is skipped.

CJK
---

CJK text has no spaces between words, so a run of CJK characters (Han, Hiragana, Katakana
including the prolonged sound mark ``ー``, Hangul) is split into overlapping character
**bigrams**, like Lucene's ``CJKBigramFilter``: ``日付のフォ`` gives ``日付``, ``付の``, ``のフ``,
``フォ``. A CJK character standing alone (no CJK neighbour) gives a unigram. A CJK run directly
followed by Latin letters or digits is split from them (``関数getuser`` -> ``関数``, ``getuser``).
Bigrams take consecutive positions.

Consequences for queries (analyzed the same way):

* a two-character query (``日付``) is one bigram and matches it anywhere inside a sentence;
* a longer query (``フォーマット``) gives several bigrams, which the search layer ANDs per
  message (so it matches messages containing them all, usually the word itself);
* a **single-character** CJK query (``日``) is a unigram and only matches that character where
  it stood alone in the indexed text, not inside a longer run (a known limitation).

Unicode normalization
---------------------

Text that is not in NFC (``cafe\\u0301``, macOS file names, decomposed Hangul) is normalized to
NFC before tokenizing, so it analyzes exactly like its composed form. Character offsets are
mapped back to the **original** text, so :func:`spans` and ``startchar``/``endchar`` always index
the string the caller passed in (a composed character covers its whole decomposed sequence).
NFC text (nearly all text) is only checked, never copied.

Speed
-----

``_bench()`` in this module measures the full analyzer (``positions=True``, as when indexing)
on ~4 KB of English prose, of code-heavy text (identifiers, paths, URLs) and of NFD (decomposed)
French. Code-heavy text yields more tokens for its size (compounds and their parts) at about the
same cost per token as prose; NFD text, a rare case, also pays for normalization and offset
mapping.

One regex pass finds CJK runs, plain words and compounds. Plain ASCII words (lower case,
capitalized, upper case: nearly all prose) are recognized by the regex itself and never split;
any other compound is split only when it is not a plain lower-case word, and the split of each
distinct compound string is cached (:func:`_split`).
"""

from __future__ import annotations

import re
import unicodedata
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
:func:`_apostrophe_word`); group 4: any other compound (see the module docs; it may still turn
out to be a plain word, ``naïve``)."""

CJK_GROUP, PLAIN_GROUP, APOSTROPHE_GROUP, COMPOUND_GROUP = 1, 2, 3, 4

NAME_MARK = " name"
"""The term marking where a name compound's leaves start and end (see "Names" in the module
docs); the space keeps it out of reach of any query word."""

_HYPHENATED_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)+")
"""Letters and digits joined by hyphens only (``real-time``, ``end-to-end``): running text, not a
name, unless a camelCase hump splits it further."""


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
def _token_re(ascii_only: bool) -> re.Pattern:
    """:data:`TOKEN_PATTERN` compiled on first use (compiling it is slow, most of it in the CJK
    ranges of its character classes, and a process that analyzes nothing should not pay it).
    ASCII text gets the same pattern with the CJK class reduced to one non-ASCII character: it
    cannot occur in ASCII text, so the matches are the same, and a process that sees only ASCII
    (most queries) never compiles the full one."""
    return re.compile(_token_pattern("\U0010ffff") if ascii_only else TOKEN_PATTERN)


MAX_COMPOUND = 255
"""A longer compound is data rather than a name (a base64 blob, minified code, a long URL):
it gives only its letter/digit runs, each a plain word (as the previous tokenizer did), with no
whole form, no intermediate pieces and no case splitting, which would flood the index with
junk terms (Lucene's default maximum token length is 255 too)."""

_ALNUM_RUN_RE = re.compile(r"[^\W_]+")

_LEVELS = (
    re.compile(r"[^/:@#+]+"),   # 1. paths, URLs, addresses, ``::``, ``#123``, ``C++``
    re.compile(r"[^.]+"),       # 2. extensions, dotted names, versions, domains
    re.compile(r"[^\-_]+"),     # 3. kebab-case and snake_case
)
"""Splitting levels before the last one (case changes): each regex finds the sub-runs."""

# Token kinds (the ``kind`` attribute of every token; :func:`groups` and :func:`phrase_terms`
# use it).
WORD = "word"     # a token that stands alone: a plain word, a CJK bigram or unigram
WHOLE = "whole"   # a compound that has pieces (its pieces follow it)
PIECE = "piece"   # an intermediate piece of a compound (``foo-bar.ts``)
LEAF = "leaf"     # a piece of the last level (``foo``); leaves carry the positions
MARK = "mark"     # NAME_MARK at a name's first and last leaf (indexing only)


def is_name(word: str, leaves: int) -> bool:
    """True when the compound ``word`` of ``leaves`` leaves is a name (see the module docs):
    anything with two leaves or more but a plain hyphenated word."""
    return leaves > 1 and not (_HYPHENATED_RE.fullmatch(word) and leaves == word.count("-") + 1)

_NON_ASCII_RE = re.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")


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
def _split(word: str) -> tuple[tuple[tuple[int, int, int, str], ...], int]:
    """The pieces of a compound, ``((start, end, leaf_index, kind), ...)`` in text order
    (longer first at equal starts, the whole itself excluded), and its number of leaves."""
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


def _nfc_map(text: str):
    """``(nfc_text, starts, ends)`` where normalized character ``k`` came from
    ``text[starts[k]:ends[k]]``; None when the pieces do not reassemble (then the caller
    tokenizes ``text`` as it is)."""
    nfc = unicodedata.normalize
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    # NFC never composes or reorders across an ASCII character except with the one before a
    # non-ASCII run (``e`` + U+0301), so only those stretches need work.
    for m in _NON_ASCII_RE.finditer(text):
        a, b = m.span()
        if last < a:
            parts.append(text[last:a])
            starts.extend(range(last, a))
            ends.extend(range(last + 1, a + 1))
        cs = a
        for i in range(a + 1, b + 1):
            if i < b:
                c = text[i]
                if unicodedata.combining(c):
                    continue
                seg = text[cs:i]
                if nfc("NFC", seg + c) != nfc("NFC", seg) + nfc("NFC", c):
                    continue  # composes with the cluster (Hangul vowel / final jamo)
            seg = nfc("NFC", text[cs:i])
            parts.append(seg)
            starts.extend([cs] * len(seg))
            ends.extend([i] * len(seg))
            cs = i
        last = b
    if last < len(text):
        parts.append(text[last:])
        starts.extend(range(last, len(text)))
        ends.extend(range(last + 1, len(text) + 1))
    out = "".join(parts)
    if out != nfc("NFC", text):
        return None
    return out, starts, ends


def _set_chars(t: Token, s: int, e: int, start_char: int, starts, ends) -> None:
    """Set ``t.startchar``/``t.endchar`` from the span ``s:e`` of the analysed text, mapped back
    to the original text through ``starts``/``ends`` when normalization changed its length
    (``_nfc_map``; None: the same offsets), plus ``start_char``."""
    if starts is not None:
        s, e = starts[s], ends[e - 1]
    t.startchar = start_char + s
    t.endchar = start_char + e


class CompoundTokenizer(Tokenizer):
    """Compounds (whole, then their pieces) and CJK bigrams, as described in the module docs.

    Every token carries a ``kind`` (:data:`WORD`, :data:`WHOLE`, :data:`PIECE`, :data:`LEAF`).
    Positions follow the leaves (a whole compound or intermediate piece sits at the position of
    its first leaf); chars index the text as passed in, even when it was NFC-normalized.

    Module-level and stateless (the patterns are module constants), so it pickles into the
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
        t.boost = 1.0
        t.stopped = False
        original_len = len(value)
        starts = ends = None
        if not unicodedata.is_normalized("NFC", value):
            mapped = _nfc_map(value)
            if mapped is not None:
                value, starts, ends = mapped
        if not tokenize:
            t.original = t.text = value
            t.kind = WORD
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar = start_char
                t.endchar = start_char + original_len
            yield t
            return
        pos = start_pos
        marks = positions and mode == "index"  # NAME_MARK: indexing only (module docs, "Names")
        for match in _token_re(value.isascii()).finditer(value):
            group = match.lastindex
            if group == CJK_GROUP and match.end() - match.start() > 1:  # CJK bigrams
                run = match.group(1)
                base = match.start()
                for i in range(len(run) - 1):
                    t.text = run[i:i + 2]
                    t.kind = WORD
                    if keeporiginal:
                        t.original = t.text
                    if positions:
                        t.pos = pos
                    pos += 1
                    if chars:
                        s, e = base + i, base + i + 2
                        _set_chars(t, s, e, start_char, starts, ends)
                    yield t
                continue
            # A plain word (the fast path), a word with apostrophes, an isolated CJK character or
            # a compound.
            t.text = word = match.group(group)
            if group == APOSTROPHE_GROUP:
                t.text = word = _apostrophe_word(word)
            if group == COMPOUND_GROUP and len(word) > MAX_COMPOUND:
                base = match.start()
                for m in _ALNUM_RUN_RE.finditer(word):
                    t.text = m.group()
                    t.kind = WORD
                    if keeporiginal:
                        t.original = t.text
                    if positions:
                        t.pos = pos
                    pos += 1
                    if chars:
                        s, e = base + m.start(), base + m.end()
                        _set_chars(t, s, e, start_char, starts, ends)
                    yield t
                continue
            if group == COMPOUND_GROUP and not (word.islower() and word.isalnum()):
                pieces, leaves = _split(word)
            else:
                pieces = None
            t.kind = WHOLE if pieces else WORD
            if keeporiginal:
                t.original = word
            if positions:
                t.pos = pos
            if chars:
                s, e = match.span()
                _set_chars(t, s, e, start_char, starts, ends)
            yield t
            if not pieces:
                pos += 1
                continue
            base = match.start()
            for a, b, k, kind in pieces:
                t.text = word[a:b]
                t.kind = kind
                if keeporiginal:
                    t.original = t.text
                if positions:
                    t.pos = pos + k
                if chars:
                    s, e = base + a, base + b
                    _set_chars(t, s, e, start_char, starts, ends)
                yield t
            if marks and is_name(word, leaves):
                t.text = NAME_MARK
                t.kind = MARK
                if keeporiginal:
                    t.original = word
                if chars:
                    s, e = match.span()
                    _set_chars(t, s, e, start_char, starts, ends)
                for p in (pos, pos + leaves - 1):
                    t.pos = p
                    yield t
            pos += leaves

CJKBigramTokenizer = CompoundTokenizer
"""The former name (kept so older code and pickles that name it still load)."""


def _apostrophe_word(word: str) -> str:
    """A word with apostrophes inside, as one term: a final ``'s`` (English possessive, as
    Lucene's ``EnglishPossessiveFilter``) is dropped (``user's`` -> ``user``), other apostrophes
    are removed (``isn't`` -> ``isnt``, ``O'Reilly`` -> ``OReilly``), so the word matches the
    same word typed without them (``isn't`` is one word, not ``isn`` and ``t``)."""
    if len(word) > 2 and word[-2] in _APOSTROPHES and word[-1] in "sS":
        word = word[:-2]
    return word.replace("'", "").replace("\u2019", "")


FOLD_MAP: dict[int, str] = {
    **accent_map,
    ord("ß"): "ss", ord("ẞ"): "ss",  # Straße = Strasse (accent_map had ß -> s: "strase")
    ord("æ"): "ae", ord("Æ"): "ae", ord("œ"): "oe", ord("Œ"): "oe",
    ord("ĳ"): "ij", ord("Ĳ"): "ij", ord("þ"): "th", ord("Þ"): "th",
    ord("ﬀ"): "ff", ord("ﬁ"): "fi", ord("ﬂ"): "fl", ord("ﬃ"): "ffi", ord("ﬄ"): "ffl", ord("ﬅ"): "st", ord("ﬆ"): "st",
}
"""Character folding after lowercasing: Whoosh's ``accent_map`` (accents removed: ``café`` =
``cafe``), with letters that stand for two (``ß`` = ``ss``, ``æ`` = ``ae``, ``œ`` = ``oe``, the
typographic ligatures) spelled out, as German and English writers type them without the key."""


def fold(text: str) -> str:
    """``text`` folded as the analyzer folds a token's characters (after lowercasing)."""
    return text.translate(FOLD_MAP)


@lru_cache(maxsize=1)
def text_analyzer():
    """The shared analyzer: ``CompoundTokenizer | LowercaseFilter | CharsetFilter(FOLD_MAP)``."""
    return CompoundTokenizer() | LowercaseFilter() | CharsetFilter(FOLD_MAP)


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
    (:func:`_near_matches`): the same spans, about 10x faster on a long message (the app
    highlights a screenful of messages for each typed query)."""
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


def _bench(repeat: int = 200) -> dict[str, float]:  # pragma: no cover - a measuring aid
    """Median milliseconds to analyze ~4 KB of prose and of code-heavy text (as when indexing,
    ``positions=True``); the numbers in the module docstring come from here."""
    import statistics
    import time

    prose = (
        "The quick brown fox jumps over the lazy dog. I looked at the failing test again and "
        "it seems the problem is in how we handle the configuration when the user has not set "
        "a home directory. Could you check whether the fallback works, and then run the whole "
        "suite once more? Thanks, that fixed it. Now let's update the documentation so other "
        "people know about the change, and write a short note in the changelog. "
    )
    code = (
        "def resolve_dirs(env): return [Path(p) for p in env.get('XDG_DATA_DIRS', '').split(':')]\n"
        "Edited src/main/foo-bar.ts and crabsearch/index/analysis.py; see getUserById() in "
        "HTTPServerError.java, ticket #123, bd-q3fy, v1.2.3, https://github.com/foo/bar/pull/42 "
        "self._cache[key] = value  # TODO(user@example.com): C++ std::vector<int> x; i += 1\n"
    )
    ana = text_analyzer()
    out = {}
    for name, base in (("prose", prose), ("code", code)):
        text = (base * (4096 // len(base) + 1))[:4096]
        n = sum(1 for _ in ana(text, positions=True))
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in ana(text, positions=True):
                pass
            times.append(time.perf_counter() - t0)
        out[name] = round(statistics.median(times) * 1000, 3)
        out[name + "_tokens"] = n
    return out

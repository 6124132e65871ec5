"""The analyzer used at index time and query time (the same pipeline both ways).

:func:`text_analyzer` is ``CompoundTokenizer | LowercaseFilter | CharsetFilter(FOLD_MAP)``:
tokens are lowercased and accent-folded (``café`` and ``cafe`` match; ``ß`` is ``ss``, ``æ`` is
``ae``: :data:`FOLD_MAP`). The tokenizer never fails on any input. Where the tokens are is
``index.token_pattern`` (one regex pass: CJK runs, plain words, compounds); how a compound
splits is ``index.compounds``; what a query's text becomes is ``index.analysis``; highlighting
is ``index.highlight``.

Each match gives tokens: a plain word itself; a CJK run its overlapping bigrams; a compound
(``resolve_dirs``, ``src/main/foo-bar.ts``) its whole form, then its pieces and leaves
(``compounds.split``); a compound longer than ``compounds.MAX_COMPOUND`` characters only its
letter/digit runs, as plain words.

Positions (for phrase queries)
------------------------------

Positions follow the **leaves**, like Lucene's ``WordDelimiterGraphFilter`` with
``preserveOriginal``: the leaves of a compound take consecutive positions, the whole compound
and every intermediate piece take the position of their first leaf, and the next token after
the compound comes at ``last leaf + 1``. So ``call resolve_dirs now`` is ``call`` at 0,
``resolve_dirs`` and ``resolve`` at 1, ``dirs`` at 2, ``now`` at 3. The chain of leaves is the
canonical path through the text: a phrase query must be built from ``analysis.phrase_terms``
(the leaves, not ``analysis.terms``), and then the phrase ``resolve dirs`` matches
``resolve_dirs``, the phrase ``get user`` matches ``getUserById``, and the phrase ``call
resolve_dirs now`` (leaves ``call resolve dirs now``) matches the text ``call resolve_dirs
now``. A phrase that names the whole compound *and* the word after it (``["resolve_dirs",
"now"]``) does not match: Whoosh positions are single integers, so the whole compound cannot
also end at its last leaf.

Names: where a phrase lies inside one path or identifier
-------------------------------------------------------

When indexing (``mode="index"`` with positions, as Whoosh's ``Positions`` format asks), every
compound that is a **name** (``compounds.is_name``: any compound but a plain hyphenated word
such as ``real-time``, which is running text) also gives the term :data:`NAME_MARK` at the
position of its first leaf and at the position of its last: ``see docs/set-up-cli.md now``
marks positions 1 and 5. A phrase's span lying within such pairs is found only inside names
(``set up cli`` in the file name), which ``index.phrases.TextPhrase`` tells apart from the same
words as running text (SpecStory histories quote each other's file names,
``...-setting-up-minsky-cli-with-bun.md``: ``bench/relevance_real``, ``title`` queries). The
mark is never produced from a query (no token holds a space) and does not count in a field's
length (``index.schema.NamePositions``).

Characters
----------

Every token's ``startchar``/``endchar`` cover its own characters (a piece its substring, the
whole compound all of it) in the text as passed in, also when it was not NFC (``index.nfc``),
so highlighting marks exactly what matched.

The split of each distinct compound string is cached (``compounds.split``); a plain lower-case
word is never split. :func:`_bench` measures the analyzer.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from whoosh.analysis import CharsetFilter, LowercaseFilter, Token, Tokenizer
from whoosh.support.charset import accent_map

from .compounds import MARK, MAX_COMPOUND, WHOLE, WORD, is_name, split
from .nfc import nfc_map
from .token_pattern import APOSTROPHE_GROUP, CJK_GROUP, COMPOUND_GROUP, apostrophe_word, token_re

NAME_MARK = " name"
"""The term marking where a name compound's leaves start and end (see "Names" in the module
docs); the space keeps it out of reach of any query word."""

_ALNUM_RUN_RE = re.compile(r"[^\W_]+")


class CompoundTokenizer(Tokenizer):
    """Compounds (whole, then their pieces) and CJK bigrams, as described in the module docs.

    Every token carries a ``kind`` (``compounds.WORD``, ``WHOLE``, ``PIECE``, ``LEAF``, ``MARK``).
    Positions follow the leaves (a whole compound or intermediate piece sits at the position of
    its first leaf); chars index the text as passed in, even when it was NFC-normalized.

    Module-level and stateless (the patterns are module constants), so it pickles into the
    index's table of contents by reference (``index.analysis`` keeps the name an index built
    before this module existed gives).
    """

    def __eq__(self, other):
        return self.__class__ is other.__class__

    def __hash__(self):
        return hash(self.__class__)

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, tokenize=True, mode="", **kwargs):
        """Tokenize ``value``; keyword arguments as for Whoosh's ``RegexTokenizer``. Yields one
        ``Token`` object, changed in place for each token (as Whoosh's tokenizers do)."""
        assert isinstance(value, str), "%r is not unicode" % (value,)
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        t.stopped = False
        original_len = len(value)
        starts = ends = None
        if not unicodedata.is_normalized("NFC", value):
            mapped = nfc_map(value)
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
        out = _Out(t, positions, chars, keeporiginal, start_char, starts, ends)
        marks = positions and mode == "index"  # NAME_MARK: indexing only (module docs, "Names")
        pos = start_pos
        for match in token_re(value.isascii()).finditer(value):
            group = match.lastindex
            word = match.group(group)
            if group == CJK_GROUP:
                if len(word) > 1:
                    pos = yield from out.bigrams(word, match.start(), pos)
                    continue
            elif group == APOSTROPHE_GROUP:
                word = apostrophe_word(word)
            elif group == COMPOUND_GROUP:
                if len(word) > MAX_COMPOUND:
                    pos = yield from out.data_words(word, match.start(), pos)
                    continue
                if not (word.islower() and word.isalnum()):
                    pieces, leaves = split(word)
                    if pieces:
                        pos = yield from out.compound(word, match.start(), pos, pieces, leaves, marks)
                        continue
            # One token: a plain word (nearly all prose), a word with apostrophes, a CJK
            # character with no CJK neighbour or a compound that does not split (``naïve``).
            t.text = word
            t.kind = WORD
            if keeporiginal:
                t.original = word
            if positions:
                t.pos = pos
            if chars:
                out.set_chars(*match.span())
            yield t
            pos += 1


CJKBigramTokenizer = CompoundTokenizer
"""The former name (kept so older code and pickles that name it still load)."""


class _Out:
    """One tokenizer call's output: its ``Token`` (changed in place for each token), what the
    caller asked it to carry (``positions``, ``chars``, ``keeporiginal``), and how a span of the
    analysed text maps to ``startchar``/``endchar``. Each step yields its tokens and returns the
    position after them."""

    __slots__ = ("t", "positions", "chars", "keeporiginal", "start_char", "starts", "ends")

    def __init__(self, t: Token, positions: bool, chars: bool, keeporiginal: bool, start_char: int,
                 starts: list[int] | None, ends: list[int] | None):
        self.t = t
        self.positions = positions
        self.chars = chars
        self.keeporiginal = keeporiginal
        self.start_char = start_char
        self.starts = starts
        self.ends = ends

    def set_chars(self, s: int, e: int) -> None:
        """Set ``startchar``/``endchar`` from the span ``s:e`` of the analysed text, mapped back
        to the original text through ``starts``/``ends`` when normalization changed it
        (``nfc.nfc_map``; None: the same offsets), plus ``start_char``."""
        if self.starts is not None:
            s, e = self.starts[s], self.ends[e - 1]
        self.t.startchar = self.start_char + s
        self.t.endchar = self.start_char + e

    def _words(self, texts_and_spans, pos: int):
        """Each ``(text, start, end)`` as a plain word at consecutive positions from ``pos``."""
        t, positions, chars, keeporiginal = self.t, self.positions, self.chars, self.keeporiginal
        for text, s, e in texts_and_spans:
            t.text = text
            t.kind = WORD
            if keeporiginal:
                t.original = text
            if positions:
                t.pos = pos
            pos += 1
            if chars:
                self.set_chars(s, e)
            yield t
        return pos

    def bigrams(self, run: str, base: int, pos: int):
        """The overlapping bigrams of the CJK ``run`` (two characters or more) found at ``base``."""
        return self._words(((run[i:i + 2], base + i, base + i + 2) for i in range(len(run) - 1)), pos)

    def data_words(self, word: str, base: int, pos: int):
        """The letter/digit runs of the over-long compound ``word`` found at ``base``."""
        return self._words(((m.group(), base + m.start(), base + m.end()) for m in _ALNUM_RUN_RE.finditer(word)), pos)

    def compound(self, word: str, base: int, pos: int, pieces, leaves: int, marks: bool):
        """The compound ``word`` found at ``base``: the whole, its ``pieces`` (``compounds.split``)
        at the positions of their leaves, and, when ``marks`` and it is a name, :data:`NAME_MARK`
        at its first and last leaf."""
        t, positions, chars, keeporiginal = self.t, self.positions, self.chars, self.keeporiginal
        t.text = word
        t.kind = WHOLE
        if keeporiginal:
            t.original = word
        if positions:
            t.pos = pos
        if chars:
            self.set_chars(base, base + len(word))
        yield t
        for a, b, k, kind in pieces:
            t.text = word[a:b]
            t.kind = kind
            if keeporiginal:
                t.original = t.text
            if positions:
                t.pos = pos + k
            if chars:
                self.set_chars(base + a, base + b)
            yield t
        if marks and is_name(word, leaves):
            t.text = NAME_MARK
            t.kind = MARK
            if keeporiginal:
                t.original = word
            if chars:
                self.set_chars(base, base + len(word))
            for p in (pos, pos + leaves - 1):
                t.pos = p
                yield t
        return pos + leaves


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


def _bench(repeat: int = 200) -> dict[str, float]:  # pragma: no cover - a measuring aid
    """Median milliseconds to analyze ~4 KB of English prose and of code-heavy text
    (identifiers, paths, URLs), as when indexing (``positions=True``), and their token counts.
    Code-heavy text yields more tokens for its size (compounds and their parts)."""
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

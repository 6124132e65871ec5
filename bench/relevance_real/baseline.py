"""A plain BM25 baseline: one document per session, its user and assistant text.

Okapi BM25 with ``k1 = 1.2`` and ``b = 0.75`` (the usual defaults, Lucene's among them) and
Lucene's idf, ``log(1 + (N - n + 0.5) / (n + 0.5))``. Words are :func:`tokens` (letters and
digits, lowercased and accent-folded; CJK as bigrams); no stemming, no stopwords, no fields, no
phrases, no spelling repair. A query is the set of its words; a session's score is the sum of the
BM25 weights of the query words it holds; ties go to the more recently updated session. Titles,
summaries, tool names, thinking and tool output are not in the documents: "user and assistant
text" of issue 11.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

K1 = 1.2
B = 0.75


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")


def fold(text: str) -> str:
    """Lowercased, accents removed (NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """The words of ``text`` in order: runs of letters and digits (``_``, ``-``, ``.``, ``/`` and
    every other non-alphanumeric split: ``resolve_dirs`` is ``resolve``, ``dirs``; camelCase is
    one word), lowercased and accent-folded; a run of Chinese, Japanese or Korean characters as
    overlapping character bigrams (a lone character as itself), like Lucene's CJK analyzer."""
    out: list[str] = []
    for m in _TOKEN.finditer(fold(text)):
        run = m.group(1)
        if run:
            out.extend([run[i:i + 2] for i in range(len(run) - 1)] or [run])
        else:
            out.append(m.group(2))
    return out


class BM25:
    """The baseline index over ``sessions``: objects with ``session_id``, ``updated`` (seconds)
    and ``messages`` (the user and assistant texts), such as :class:`corpus.SessionText`."""

    def __init__(self, sessions):
        self.ids = [s.session_id for s in sessions]
        self.updated = [s.updated for s in sessions]
        self.tf = [Counter(tokens("\n".join(s.messages))) for s in sessions]
        self.length = [sum(c.values()) for c in self.tf]
        self.avgdl = sum(self.length) / max(1, len(self.length))
        self.df: Counter = Counter()
        for c in self.tf:
            self.df.update(c.keys())

    def idf(self, word: str) -> float:
        """Lucene's BM25 idf of ``word`` (0 for a word no session holds)."""
        n, total = self.df.get(word, 0), len(self.ids)
        return math.log(1 + (total - n + 0.5) / (n + 0.5)) if n else 0.0

    def search(self, query: str, limit: int = 10) -> list[str]:
        """Session ids, best first (at most ``limit``; only sessions holding a query word)."""
        words = set(tokens(query))
        scored = []
        for i, tf in enumerate(self.tf):
            score = 0.0
            norm = K1 * (1 - B + B * self.length[i] / self.avgdl)
            for w in words:
                f = tf.get(w)
                if f:
                    score += self.idf(w) * f * (K1 + 1) / (f + norm)
            if score > 0:
                scored.append((score, self.updated[i], self.ids[i]))
        scored.sort(key=lambda r: (-r[0], -r[1], r[2]))
        return [sid for _, _, sid in scored[:limit]]

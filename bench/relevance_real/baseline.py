"""A plain BM25 baseline: one document per session, its user and assistant text.

Okapi BM25 with ``k1 = 1.2`` and ``b = 0.75`` (the usual defaults, Lucene's among them) and
Lucene's idf, ``log(1 + (N - n + 0.5) / (n + 0.5))``. Words are :func:`corpus.tokens` (letters and
digits, lowercased and accent-folded; CJK as bigrams); no stemming, no stopwords, no fields, no
phrases, no spelling repair. A query is the set of its words; a session's score is the sum of the
BM25 weights of the query words it holds; ties go to the more recently updated session. Titles,
summaries, tool names, thinking and tool output are not in the documents: "user and assistant
text" of issue 11.
"""

from __future__ import annotations

import math
from collections import Counter

from corpus import SessionText, tokens

K1 = 1.2
B = 0.75


class BM25:
    """The baseline index over ``sessions`` (:class:`corpus.SessionText`)."""

    def __init__(self, sessions: list[SessionText]):
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

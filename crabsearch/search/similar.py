"""Similarity search (the ``semantic`` extra): sessions whose messages mean what the query says,
in any language, fused into the ladder's rows.

On when the index root holds a vector store (``crabsearch embed`` made it:
``index.vectors``) and an embedder is installed (``crabsearch.embedder``); otherwise
:meth:`Similar.active` is False and a search is what it is without it (one ``stat`` per search).

**Ranking.** The query (its words and phrases, filters aside) is embedded; a session's
similarity is its best vector's cosine (a message, or its title). When a rung that finds every
word (phrase, all, session, repair) found a session, the page is the ladder's alone: the words
answered the query, and similar sessions would only pad it. Otherwise the ``any`` rung's rows
(some of the words) and the sessions by similarity are fused by a convex combination of their
normalized scores (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid
Retrieval", ACM TOIS 2023, found it ahead of reciprocal rank fusion, its one weight learnt from
few queries): ``LEXICAL_WEIGHT * words + (1 - LEXICAL_WEIGHT) * meaning``, where ``words`` is a
row's score over the best row's (BM25's least is 0) and ``meaning`` is where a session's cosine
sits between the most similar one's and that less the embedder's ``margin`` (0 at or below it:
a model's cosines of unrelated texts are far from 0; multilingual-e5-small's sit around 0.8); a
session missing from one list has 0 there. Scores, not ranks: a session the words ranked first
by a wide lead keeps its place, one they ranked close to others rises when it means the query
best. Reciprocal rank fusion (cass fuses by it, ``shared/reference/peer-tools.md``) counts ranks
only: in a history of ~450 sessions, where many are about equally similar to a query, it moved
sessions the words ranked first by a wide lead below others (``docs/benchmarks.md``).
A session found only by similarity gets the route ``similar``, its best message as the hit (its
title: anchored on the first prompt) and its cosine as score; a session in both keeps the
ladder's row (it knows the words it matched). The search's filters and ``-word`` exclusions
hold for it; ``in:tools`` and ``sort="newest"`` searches are not fused. The first
:data:`FUSE_DEPTH` rows of a page do not depend on its size (the ladder is climbed to at least
that many sessions when fusing).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

from ..index import vectors
from .ladder import Row
from .sessions import passing_sessions

FUSE_DEPTH = 30
"""Rows of each ranking that take part in the fusion (and the least the ladder is asked for)."""
LEXICAL_WEIGHT = 0.7
"""The words' share of a fused score, the similarity's the rest: the hard relevance set's top-3
moves by at most one query from 0.6 to 0.8, on its 57 sessions and among ~450
(``docs/benchmarks.md``)."""
WORD_ROUTES = frozenset({"phrase", "all", "session", "repair"})
"""Rungs that find every word of the query: a page with a row of theirs is not fused."""
RELOAD_EVERY = 5.0
"""Seconds a changed store waits before it is read again (the background job writes it every few
messages; a search re-reading every vector each time would be slower than the search)."""
QUERIES_KEPT = 64
"""Query vectors kept (the app searches the same text again as a page grows or a filter changes)."""


class Similar:
    """The vector store of the index root ``root`` and an embedder (None: ``crabsearch.embedder.
    load()`` when first needed). Thread-safe."""

    def __init__(self, root: Path, embedder=None):
        self.root = Path(root)
        self._embedder = embedder
        self._tried = embedder is not None
        self._lock = threading.Lock()
        self._stamp = None
        self._read_at = 0.0
        self._loaded: vectors.Loaded | None = None
        self._queries: OrderedDict[str, object] = OrderedDict()
        self.failure: str | None = None
        """Why the model failed (then similarity search is off for this engine), or None."""

    def _vectors(self) -> vectors.Loaded | None:
        """The store's vectors, read again when its file changed (at most every
        :data:`RELOAD_EVERY` seconds); None without a store."""
        try:
            st = vectors.store_path(self.root).stat()
        except OSError:
            self._stamp = self._loaded = None
            return None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        now = time.monotonic()
        if stamp != self._stamp and (self._stamp is None or now - self._read_at >= RELOAD_EVERY):
            self._loaded, self._stamp, self._read_at = vectors.load(self.root), stamp, now
        return self._loaded

    def _get_embedder(self):
        if not self._tried:
            from ..embedder import load  # noqa: PLC0415

            self._embedder, self._tried = load(), True
        return self._embedder

    @property
    def margin(self) -> float:
        """The embedder's margin (cosine): how far below the most similar session a session may
        be and still count; 0.0 without an embedder."""
        return self._embedder.margin if self._embedder is not None else 0.0

    def active(self) -> bool:
        """True when searches are fused: a store with vectors of the installed embedder's model."""
        if not vectors.store_path(self.root).exists():
            return False
        with self._lock:
            embedder = self._get_embedder()
            loaded = self._vectors() if embedder is not None else None
            return bool(loaded and loaded.keys and loaded.model == embedder.name)

    def warm(self) -> bool:
        """Load the model now when searches are fused (:meth:`active`), so that the first such
        search does not wait for it; False when similarity search is off."""
        if not self.active():
            return False
        try:
            self._embedder.query("warm")  # not under the lock: a search that does not fuse goes on
        except Exception as exc:  # noqa: BLE001 - said by the next search that would fuse
            self._embedder, self.failure = None, f"{type(exc).__name__}: {exc}"[:200]
            return False
        return True

    def _query_vector(self, text: str):
        vec = self._queries.get(text)
        if vec is None:
            vec = self._queries[text] = self._embedder.query(text)
            while len(self._queries) > QUERIES_KEPT:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return vec

    def ranking(self, ctx, pq, depth: int = FUSE_DEPTH) -> list[Row]:
        """Up to ``depth`` sessions by similarity to ``pq``'s words and phrases, best first, within
        the embedder's ``margin`` of the best, as ``similar`` rows (see the module docs); sessions
        the search's filters or exclusions drop, or that the index no longer holds, are left
        out. A model that fails sets :attr:`failure` and turns similarity search off: ``[]``."""
        import numpy as np  # noqa: PLC0415

        text = " ".join(v for _, v in pq.sequence).strip()
        if not text:
            return []
        with self._lock:
            loaded = self._vectors()
            if not loaded or not loaded.keys:
                return []
            try:
                sims = loaded.scores(self._query_vector(text))
            except Exception as exc:  # noqa: BLE001 - a broken model install: the words alone answer
                self._embedder, self.failure = None, f"{type(exc).__name__}: {exc}"[:200]
                return []
        searcher, keys = ctx.searcher, ctx.keys
        allowed = None
        if pq.has_filters:
            allowed = {keys.key_of(searcher, d) for d in passing_sessions(searcher, pq, keys)}
        top = min(len(sims), depth * 50)
        order = np.argpartition(-sims, top - 1)[:top]
        order = order[np.argsort(-sims[order], kind="stable")]
        rows: list[Row] = []
        seen: set[str] = set()
        for i in order:
            fkey, idx = loaded.keys[i]
            s_doc = searcher.document_number(mkey=f"{fkey}:s")
            if s_doc is None:
                continue  # a transcript the index no longer holds
            skey = keys.key_of(searcher, s_doc)
            if skey in seen or skey in ctx.excluded or (allowed is not None and skey not in allowed):
                continue
            m_doc = searcher.document_number(mkey=f"{fkey}:{idx}") if idx >= 0 else None
            if idx >= 0 and m_doc is None:
                continue  # a message the index does not hold (yet)
            score = float(sims[i])
            if rows and score < rows[0].score - self._embedder.margin:
                break
            seen.add(skey)
            rows.append(Row(score, 0, m_doc, s_doc, score, 0.0, [], "similar", skey))
            if len(rows) >= depth:
                break
        return rows


def found_by_words(rows: list[Row]) -> bool:
    """True when a rung of :data:`WORD_ROUTES` found a row: the page is the ladder's alone (no
    query to embed)."""
    return any(r.route in WORD_ROUTES for r in rows)


def fuse(rows: list[Row], similar: list[Row], margin: float) -> list[Row]:
    """``rows`` (ladder order) and ``similar`` (:meth:`Similar.ranking`, whose cosines lie within
    ``margin`` of its first) fused as the module docs say: unchanged when a row's route is one of
    :data:`WORD_ROUTES` or ``similar`` is empty; else the first :data:`FUSE_DEPTH` of each by
    their combined score (a tie: the ladder's order, its rows first), then the ladder's
    remaining rows. Each fused row is a copy holding its ``fused`` parts."""
    if found_by_words(rows) or not similar:
        return rows
    ladder, meaning = rows[:FUSE_DEPTH], similar[:FUSE_DEPTH]
    top = max((r.score for r in ladder), default=0.0)
    words = {r.skey: (r.score / top if top > 0 else 1.0) for r in ladder}
    floor = meaning[0].score - margin
    cosine = {r.skey: max(0.0, (r.score - floor) / margin) if margin > 0 else 1.0 for r in meaning}
    row_of: dict[str, Row] = {}
    for r in ladder + meaning:
        row_of.setdefault(r.skey, r)
    place = {skey: i for i, skey in enumerate(row_of)}

    def combined(skey: str) -> float:
        return LEXICAL_WEIGHT * words.get(skey, 0.0) + (1 - LEXICAL_WEIGHT) * cosine.get(skey, 0.0)

    fused = sorted(row_of, key=lambda s: (-combined(s), place[s]))
    parts = [replace(row_of[s], fused=(words.get(s, 0.0), cosine.get(s, 0.0), combined(s))) for s in fused]
    return parts + [r for r in rows[FUSE_DEPTH:] if r.skey not in row_of]

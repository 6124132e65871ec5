"""How the session-wide rungs score a session: proximity windows and the session's topic.

The ``session`` and ``any`` rungs (``search.ladder``) rank a session by what its matching
messages hold, not by one message:

* :func:`best_window` (``session``): the shortest runs of consecutive messages holding every
  word, their words' best scores decayed by the run's span (:func:`proximity`), so a long
  session mentioning the words far apart does not win by its length;
* :func:`best_span` (``any``): the same for runs of at most ``2 * PROXIMITY_SPAN`` messages
  holding any of the words;
* :func:`topic_scores` (``any``): a session-level BM25 of the query's words, each word's
  frequency being the number of the session's messages that hold it and the session's length
  its number of documents, added with weight :data:`~crabsearch.ranking.TOPIC_WEIGHT` when
  its messages hold at least two of the words. A
  description in other words than the session's (a many-word ``prose`` query) shares only a
  few, scattered words with any one message of it; the session it describes keeps coming back
  to them, which a best window alone does not see.

Weights live in ``crabsearch.ranking`` (``PROXIMITY_SPAN``, ``TOPIC_WEIGHT``,
``TOPIC_MIN_WORDS``, ``TOPIC_K1``, ``TOPIC_B``), which also composes a row's score from these.
"""

from __future__ import annotations

from collections import Counter, deque
from math import log

from ..ranking import PROXIMITY_SPAN, TOPIC_B, TOPIC_K1, TOPIC_MIN_WORDS, TOPIC_WEIGHT


def proximity(span: int) -> float:
    """The share of a window's score kept for a window of ``span`` messages:
    ``1 / (1 + (span - 1) / PROXIMITY_SPAN)`` (1 for one message, 1/2 at ``PROXIMITY_SPAN + 1``)."""
    return 1.0 / (1.0 + (span - 1) / PROXIMITY_SPAN)


def best_window(messages: list[tuple[int, int, list[float], int]], need: int) -> tuple[float, int, int] | None:
    """The best window of a session's matching ``messages`` (``(message index, group bit mask,
    score per group, document number)``, in message order) that holds every group of the bit
    mask ``need``: ``(value, span, document number of its best message)``, None when no window
    holds them all.

    A window's value is the sum, over the needed groups, of the best score for the group of a
    window message, times :func:`proximity` of its ``span`` (the messages from its first to its
    last). Windows are the shortest ones ending at each message (two pointers, one pass); each
    group's best score in the window is kept in a monotonic queue."""
    bits = [b for b in range(need.bit_length()) if need >> b & 1]
    count = dict.fromkeys(bits, 0)
    queues = {b: deque() for b in bits}  # window positions holding b, their scores for b decreasing
    missing, left, out = len(bits), 0, None
    for right, (_idx, mask, scores, _doc) in enumerate(messages):
        for b in bits:
            if mask >> b & 1:
                missing -= count[b] == 0
                count[b] += 1
                q = queues[b]
                while q and messages[q[-1]][2][b] <= scores[b]:
                    q.pop()
                q.append(right)
        if missing:
            continue
        while True:  # drop messages from the left while the window still holds every group
            lmask = messages[left][1]
            if any(lmask >> b & 1 and count[b] == 1 for b in bits):
                break
            for b in bits:
                if lmask >> b & 1:
                    count[b] -= 1
                    if queues[b][0] == left:
                        queues[b].popleft()
            left += 1
        span = messages[right][0] - messages[left][0] + 1
        value = sum(messages[queues[b][0]][2][b] for b in bits) * proximity(span)
        if out is None or value > out[0]:
            best = max(range(left, right + 1), key=lambda p: sum(messages[p][2]))
            out = (value, span, messages[best][3])
    return out


def best_span(messages: list[tuple[int, int, list[float], int]]) -> tuple[float, int]:
    """The ``any`` rung's value of a session: ``(value, document number of the best message of
    the best window)``. A window is one message, or the messages of at most ``2 *
    PROXIMITY_SPAN`` consecutive ones ending at a matching message; its value is the sum over
    the word groups it holds of their best score in it, times :func:`proximity` of its span. One
    pass with a monotonic queue per group."""
    n_groups = len(messages[0][2])
    reach = 2 * PROXIMITY_SPAN
    queues = [deque() for _ in range(n_groups)]
    left, best = 0, (-1.0, messages[0][3])
    for right, (idx, mask, scores, doc) in enumerate(messages):
        single = sum(scores)
        if single > best[0]:
            best = (single, doc)
        while idx - messages[left][0] + 1 > reach:
            left += 1
        for b in range(n_groups):
            q = queues[b]
            while q and q[0] < left:
                q.popleft()
            if mask >> b & 1:
                while q and messages[q[-1]][2][b] <= scores[b]:
                    q.pop()
                q.append(right)
        if left < right:
            value = sum(messages[q[0]][2][b] for b, q in enumerate(queues) if q) * proximity(idx - messages[left][0] + 1)
            if value > best[0]:
                top = max(range(left, right + 1), key=lambda p: sum(messages[p][2]))
                best = (value, messages[top][3])
    return best


_SEGMENT_LENGTHS: dict[tuple, Counter] = {}
"""Documents per session key of each segment, by ``(segment id, live documents)`` (a segment's
keys never change; deletions change its live count): the segments of the last searcher seen."""
_LENGTHS: list = [None, {}]
"""``[searcher state, {skey: documents}]``: the merged lengths of the last searcher state."""


def session_lengths(searcher, keys) -> dict[str, int]:
    """Each session's number of live documents (messages, tool calls and its session document)
    in ``searcher``: ``{skey: documents}``, counted from ``keys`` (``collect.SegmentKeys``, the
    ``skey`` column per segment) once per segment and deletion state, and merged once per
    searcher state."""
    leaves = searcher.leaf_searchers()
    state = tuple((keys._segment_id(sub), sub.reader().doc_count()) for sub, _ in leaves)
    if _LENGTHS[0] == state:
        return _LENGTHS[1]
    merged: Counter = Counter()
    for part, (sub, _) in zip(state, leaves):
        counts = _SEGMENT_LENGTHS.get(part)
        if counts is None:
            column = keys.keys(sub)
            reader = sub.reader()
            counts = Counter(column[d] for d in reader.all_doc_ids()) if reader.has_deletions() else Counter(column)
            counts.pop("", None)
            _SEGMENT_LENGTHS[part] = counts
        merged.update(counts)
    for part in [p for p in _SEGMENT_LENGTHS if p not in state]:
        del _SEGMENT_LENGTHS[part]
    _LENGTHS[:] = [state, dict(merged)]
    return _LENGTHS[1]


def topic_scores(gathered: dict, n_groups: int, lengths: dict[str, int], sessions: int,
                 avg_length: float) -> dict[str, float]:
    """Each gathered session's topic score (see the module docs), for the sessions whose
    messages hold at least ``TOPIC_MIN_WORDS`` of the word groups: ``TOPIC_WEIGHT`` times the
    sum, over the word groups its messages hold, of ``idf * n * (k1 + 1) / (n + k1 * (1 - b + b * L /
    avg_length))``, where ``n`` is the number of its messages holding the group, ``L`` its
    length (``lengths``: documents per session key) and the idf Lucene's, over ``sessions``
    sessions, of the sessions holding the group (in a message, the title or the summary).

    ``gathered`` is ``ladder.gather``'s ``{skey: Gathered}``."""
    held = [0] * n_groups  # sessions holding each group
    per: dict[str, list[int]] = {}
    for skey, g in gathered.items():
        counts = [0] * n_groups
        for mask, n in Counter(m[1] for m in g.messages.values()).items():
            for b in range(n_groups):
                if mask >> b & 1:
                    counts[b] += n
        per[skey] = counts
        for b in range(n_groups):
            if counts[b] or g.s_mask >> b & 1:
                held[b] += 1
    total = max(sessions, max(held, default=0))
    idf = [log(1 + (total - h + 0.5) / (h + 0.5)) for h in held]
    avg = avg_length or 1.0
    out = {}
    for skey, counts in per.items():
        if sum(1 for n in counts if n) < TOPIC_MIN_WORDS:
            continue  # one word in common says nothing of what a session is about
        norm = TOPIC_K1 * (1 - TOPIC_B + TOPIC_B * lengths.get(skey, avg) / avg)
        value = sum(idf[b] * n * (TOPIC_K1 + 1) / (n + norm) for b, n in enumerate(counts) if n)
        out[skey] = TOPIC_WEIGHT * value
    return out

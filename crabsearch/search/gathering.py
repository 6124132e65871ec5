"""The session-wide rungs (``session``, ``any``): every session matching any query word, with
every matching message and its score per word, and the rungs' entries made from them.

``ctx`` is the search in progress (``ladder.Context``). An entry is ``(score, document number,
matched (field, term) pairs)``, the message part of a row: the title and summary part is added
by the rung (``ladder.Climb.take``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..index.collect import OutOfTime, each_match
from ..index.querying import SESSION_FIELDS
from ..ranking import GATHER_CAP, WEIGHTS
from .scoring import best_span, best_window, session_lengths, topic_scores


@dataclass(slots=True)
class Gathered:
    """What :func:`gather` found of one session: ``messages``, its matching messages as
    ``docnum -> [message index, bit mask of the word groups it holds, score per group]``;
    ``s_mask``, the groups its title and summary hold; ``title_doc``, its session document when
    that matched; ``matched``, the ``(field, term)`` pairs."""

    messages: dict = field(default_factory=dict)
    s_mask: int = 0
    title_doc: int | None = None
    matched: set = field(default_factory=set)

    def covered(self) -> int:
        """The number of word groups the session holds somewhere (messages, title, summary)."""
        mask = self.s_mask
        for m in self.messages.values():
            mask |= m[1]
        return bin(mask).count("1")

    def ordered(self) -> list[tuple[int, int, list[float], int]]:
        """The matching messages as ``(message index, group mask, scores, document number)``,
        in message order."""
        return sorted((m[0], m[1], m[2], d) for d, m in self.messages.items())


def gather(ctx, groups) -> dict[str, Gathered]:
    """Every session matching any word group, with every matching document and its score for
    each group (one scan per group: a message's score for a word is that word's BM25F score in
    it), for :func:`any_entries` and :func:`session_entries`. Scans at most
    :data:`~crabsearch.ranking.GATHER_CAP` matches in all (then ``partial``)."""
    comp = ctx.comp
    per: dict[str, Gathered] = {}
    seen = 0
    kinds: dict[tuple, tuple] = {}  # matched pairs -> (those in text fields, title or summary only)
    try:
        for gi, group in enumerate(groups):
            q = comp.group_scan(group, ctx.m_filters, ctx.s_filters)
            for key, score, docnum, terms, idx in each_match(ctx.searcher, q, ctx.keys, deadline=ctx.deadline,
                                                            excluded=ctx.excluded, window=ctx.window,
                                                            stop=ctx.stop):
                seen += 1
                if seen > GATHER_CAP:
                    ctx.result.partial = True
                    return per
                g = per.get(key)
                if g is None:
                    g = per[key] = Gathered()
                kind = kinds.get(terms)
                if kind is None:
                    kind = kinds[terms] = (tuple((f, t) for f, t in terms if f in WEIGHTS),
                                           all(f in SESSION_FIELDS for f, _ in terms))
                g.matched.update(kind[0])
                if kind[1]:  # the title and summary: added per word by the rung
                    g.s_mask |= 1 << gi
                    g.title_doc = docnum
                    continue
                m = g.messages.get(docnum)
                if m is None:
                    m = g.messages[docnum] = [idx, 0, [0.0] * len(groups)]
                m[1] |= 1 << gi
                m[2][gi] = score
    except OutOfTime:
        ctx.result.partial = True
    return per


def any_entries(ctx, gathered: dict[str, Gathered], n_groups: int) -> dict[str, tuple]:
    """The ``any`` rung's entries ``{skey: (score, document, matched pairs)}``: each session
    scored by its best window of messages (``scoring.best_span``: the query words it holds close
    together, each counted once at its best score there, decayed by the window's span), so a
    long session that mentions many of the words far apart does not outrank a short one about
    them, plus its topic score (``scoring.topic_scores``: how often its
    messages come back to each word, BM25 at the session level, length-normalized); its hit is
    the window's best message. The title and summary score is added by the rung."""
    lengths = session_lengths(ctx.searcher, ctx.keys) if ctx.sort != "newest" else {}
    topic = topic_scores(gathered, n_groups, lengths, len(lengths),
                         sum(lengths.values()) / len(lengths)) if lengths else {}
    out = {}
    for k, g in gathered.items():
        if g.messages:
            value, doc = best_span(g.ordered())
        else:  # the title or summary alone: anchored on the first prompt
            value, doc = 0.0, g.title_doc
        out[k] = (value + topic.get(k, 0.0), doc, sorted(g.matched))
    return out


def session_entries(gathered: dict[str, Gathered], n_groups: int) -> dict[str, tuple]:
    """The ``session`` rung's entries: the sessions holding every word group, spread over their
    messages (and title or summary), scored by proximity: the best window
    of consecutive messages that holds the groups the title and summary do not
    (:func:`best_window`), its words' scores decayed by the window's span (the title and summary
    score is added by the rung). Only the window counts, so a long session's many mentions do
    not add up; its hit is the window's best message."""
    out = {}
    full = (1 << n_groups) - 1
    for k, g in gathered.items():
        if g.covered() != n_groups:
            continue
        need = full & ~g.s_mask
        found = best_window(g.ordered(), need) if need else None
        if found is None:
            out[k] = (0.0, g.title_doc if not g.messages else max(g.messages, key=lambda d: sum(g.messages[d][2])),
                      sorted(g.matched))
        else:
            value, _span, doc = found
            out[k] = (value, doc, sorted(g.matched))
    return out

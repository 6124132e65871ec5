"""The search engine: queries, best hit per session, context windows, session paging.

This is the only layer above ``crabsearch.index`` that touches Whoosh; the TUI and the CLI call
:class:`Engine` and get plain dataclasses back.

Rules (issue "end to end"; the reference designs in ``shared/reference/seed-designs.md``):

* **Best hit per session**: results are collapsed on the session key, so each session appears once,
  ranked by its best document; one long session cannot push others off the page.
* A session whose title or summary matches is anchored on its first real user prompt.
* **Context window**: the rules and the returned dataclasses live in ``crabsearch.hits``.
* Any text is a valid query: ``crabsearch.query`` parses it without ever raising, and
  ``index.querying`` builds query objects directly (no Whoosh query parser), so punctuation,
  ``AND``, ``*`` or an unbalanced quote never raise.
* Window and session text is read from the transcript by stored byte offsets (a ``pread`` per
  record), never from the index.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path

from whoosh.query import And, Or, Term

from .index.analysis import spans as _spans
from .index.collect import OutOfTime, SegmentKeys, best_per_session, each_match
from .index.querying import (MESSAGE_FIELDS, SESSION_FIELDS, Compiler, covered, filters, in_window, passing,
                              project_name, time_window)
from .index.schema import WEIGHTS
from .index.store import (IndexDamaged, current_dir, is_damage, mark_damaged, open_index, seal_problem,
                          variant_of)
from .index.union import FlatOr
from .hits import (  # re-exported: the engine's public names live here too  # noqa: F401
    DEFAULT_AFTER, DEFAULT_BEFORE, DEFAULT_LIMIT, MAX_ITEM_BYTES, MAX_WINDOW, UNAVAILABLE, AmbiguousSession,
    Hit, Item, Page, SearchResult, SessionRef, abandoned_ranges, branch_window, clamp_window, cut_around, cut_bytes,
    in_ranges,
    last_compaction)
from .model import Role, Session, from_ms
from .query import parse
from .redact import redact as redact_secrets
from .sources import SOURCES


DEDUP_SPARE = 5
DEDUP_DEPTH = 4
"""Sessions kept per rung: ``DEDUP_DEPTH`` times the rows fetched (copies are folded after)."""
"""Rows fetched beyond ``limit`` (at least; half the limit for larger ones) so that dropping
duplicate rows (the same message in resumed or forked sessions) still fills the limit."""

MATCH_SCAN = 64 * 1024
"""Characters of a long hit message looked through for its first match (``_first_match``)."""

SESSION_DOCS_KEPT = 2048
"""Session documents kept in memory per searcher (the rows of a few result pages)."""

__all__ = ["AmbiguousSession", "IndexDamaged", "DEFAULT_AFTER", "DEFAULT_BEFORE", "DEFAULT_LIMIT", "Engine", "Hit", "Item",
           "MAX_ITEM_BYTES", "MAX_WINDOW", "Page", "SearchResult", "SessionRef", "UNAVAILABLE", "clamp_window",
           "cut_bytes"]


def _guarded(method):
    """Run an :class:`Engine` read; a failure that only damage explains (a segment that no longer
    decodes or changed on disk: ``store.is_damage``) marks the index for a rebuild and raises
    :class:`~crabsearch.index.store.IndexDamaged` with the cause, instead of the raw
    ``zlib.error`` on every search from then on. Other errors pass through unchanged."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except IndexDamaged:
            raise
        except Exception as exc:
            if not is_damage(self.index_dir, exc):
                raise
            cause = f"{type(exc).__name__}: {exc}"[:200]
            mark_damaged(self.index_dir, cause)
            self.close()
            raise IndexDamaged(f"the index is damaged ({cause}); it is rebuilt from the transcripts "
                               "at the next refresh") from exc
    return run


class Engine:
    """Search over the index in ``index_dir``. Thread-safe: one searcher, guarded by a lock,
    refreshed when another writer has committed. A missing index simply finds nothing.

    ``redact`` (default True) masks secret-shaped strings in every text it returns (windows,
    pages); ``window`` and ``page`` can override it per call (the app's reveal key)."""

    def __init__(self, index_dir: Path, *, redact: bool = True, resume_flags: dict[str, str] | None = None):
        self.index_dir = Path(index_dir)
        self.redact = redact
        self.resume_flags = dict(resume_flags or {})
        """Config ``[resume]``: agent -> arguments added to its resume and fork commands."""
        self._mask = redact  # masking for the call in progress (set under the lock)
        self._gate: tuple = (None, frozenset(), None)  # deadline, excluded sessions, time window
        self._m_filters: list = []  # the message filters of the search in progress
        self._comp: Compiler | None = None  # the query compiler of the search in progress
        self._lock = threading.RLock()
        self._ix = None
        self._searcher = None
        self._facets: tuple[object, dict] | None = None
        self._records: OrderedDict[tuple, dict | None] = OrderedDict()
        self._keys = SegmentKeys()  # each document's session key, read once per segment
        self._session_docs: OrderedDict[str, dict | None] = OrderedDict()  # fkey -> session document

    # -- plumbing -----------------------------------------------------------------------------

    def _get_searcher(self):
        if self._ix is not None and Path(self._ix.storage.folder) != current_dir(self.index_dir):
            # A rebuild swapped in a new generation (or the index was deleted): reopen.
            self.close()
            self._records.clear()
        if self._searcher is None:
            if self._ix is None:
                self._ix, _ = open_index(self.index_dir, create=False)
                if self._ix is None:
                    return None
            self._searcher = self._ix.searcher()
        elif not self._searcher.up_to_date():
            # A new searcher, not ``refresh()``: refresh reuses the old segment readers, which
            # keep their old deletion sets (rewritten and removed sessions would show twice), and
            # it fails on an index that has no segment yet.
            self._searcher.close()
            self._searcher = self._ix.searcher()
            self._keys.keep_only(self._searcher)
            self._session_docs.clear()
        return self._searcher

    def close(self) -> None:
        """Release the searcher (and its file handles)."""
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()
            self._searcher = self._ix = None
            self._session_docs.clear()

    def reload(self) -> None:
        """Reopen the index from disk (after it was rebuilt or replaced) and forget the records
        read so far (transcripts may have changed)."""
        self.close()
        with self._lock:
            self._records.clear()

    def _record(self, src, path: str, off: int, length: int) -> object | None:
        key = (path, off, length)
        if key in self._records:
            self._records.move_to_end(key)
            return self._records[key]
        try:
            obj = src.load(path, off, length)
        except (OSError, ValueError):  # gone, or no longer what was indexed
            obj = None
        self._records[key] = obj
        if len(self._records) > 512:
            self._records.popitem(last=False)
        return obj

    def _ref(self, searcher, fkey: str) -> SessionRef | None:
        """The session of transcript ``fkey`` (its session document, kept per searcher: a lookup
        asks every segment)."""
        docs = self._session_docs
        if fkey in docs:
            docs.move_to_end(fkey)
            fields = docs[fkey]
        else:
            fields = docs[fkey] = searcher.document(mkey=f"{fkey}:s")
            if len(docs) > SESSION_DOCS_KEPT:
                docs.popitem(last=False)
        if not fields:
            return None
        return self._session_ref(fields)

    def _session_ref(self, fields: dict) -> SessionRef:
        """A SessionRef from a session document's stored fields; its title and summary masked
        when masking is on (a title made from a first prompt can hold a pasted key)."""
        session = Session.from_state(fields["meta"])
        if self._mask:
            session.title = redact_secrets(session.title) if session.title else session.title
            session.summary = redact_secrets(session.summary) if session.summary else session.summary
        return SessionRef(session, fields["fkey"], self.resume_flags.get(session.agent, "").strip())

    def _has_tool_output(self) -> bool:
        """True when this index holds tool output (its stamp says ``+tools``)."""
        try:
            return variant_of(self.index_dir) == "tools"
        except OSError:
            return False

    def _masking(self, redact: bool | None) -> None:
        self._mask = self.redact if redact is None else redact

    def _items(self, searcher, ref: SessionRef, indexes, hit_index: int | None,
               max_bytes: int | None, redact: bool | None = None, terms: list[str] | None = None,
               anchor: tuple[int, int] | None = None) -> list[Item]:
        """The messages ``indexes`` of a session, read from its transcript, each cut to
        ``max_bytes``; the hit message (``hit_index``) around its first match of ``terms``.
        ``anchor`` is ``(message index, document number)`` of one message when known (the hit)."""
        src = SOURCES.get(ref.session.agent)
        mask = self._mask if redact is None else redact
        off = abandoned_ranges(ref.session)
        items = []
        guess = anchor
        for i in indexes:
            f, guess = self._message_doc(searcher, ref.fkey, i, guess)
            if not f:
                continue
            obj = self._record(src, ref.session.path, f["off"], f["len"]) if src else None
            text = UNAVAILABLE
            if obj is not None:
                try:
                    text = src.message_text(obj, f.get("part", 0), f["label"])
                except Exception:  # a record that no longer matches what was indexed
                    text = UNAVAILABLE
            if mask:
                text = redact_secrets(text)
            truncated = False
            if max_bytes is not None and i == hit_index and terms and len(text) > max_bytes // 4:
                long = len(text.encode("utf-8", "replace")) > max_bytes
                text, truncated = cut_around(text, max_bytes, _first_match(text, terms) if long else None)
            elif max_bytes is not None:
                text, truncated = cut_bytes(text, max_bytes)
            items.append(Item(i, f["role"], f["label"], from_ms(f.get("ts")), text, truncated, i == hit_index,
                              abandoned=in_ranges(i, off), sidechain=bool(f.get("side"))))
        return items

    @staticmethod
    def _message_doc(searcher, fkey: str, index: int, guess: tuple[int, int] | None
                     ) -> tuple[dict | None, tuple[int, int] | None]:
        """The stored fields of message ``index`` of transcript ``fkey``, and ``(index, docnum)``
        to guess the next one from. A transcript's messages are indexed one after another, so
        message i+k is usually document d+k: that guess is checked (same transcript, same
        index, not deleted) before falling back to a term lookup, which asks every segment."""
        if guess is not None:
            d = guess[1] + (index - guess[0])
            if 0 <= d < searcher.doc_count_all() and not searcher.reader().is_deleted(d):
                f = searcher.stored_fields(d)
                if f.get("fkey") == fkey and f.get("idx") == index and f.get("role"):
                    return f, (index, d)
        d = searcher.document_number(mkey=f"{fkey}:{index}")
        if d is None:
            return None, guess
        return searcher.stored_fields(d), (index, d)

    def _doc_text(self, session: Session, f: dict) -> str | None:
        """The full text of the message document ``f`` of ``session``, read from the transcript
        (None when it cannot be read)."""
        src = SOURCES.get(session.agent)
        obj = self._record(src, session.path, f["off"], f["len"]) if src else None
        if obj is None:
            return None
        try:
            return src.message_text(obj, f.get("part", 0), f["label"])
        except Exception:  # a record that no longer matches what was indexed
            return None

    def _dedupe(self, searcher, ref: SessionRef, idx: int, key: tuple) -> tuple[SessionRef, int, list[str]]:
        """Where to show a hit message that several sessions hold (issue 5, "Duplicates"; rule
        from formats.md 1.4 and peer-tools.md: resumed and forked sessions copy earlier history
        with the same message ids): every message document with the same ``uid``, agent and time
        that passes the query's filters (and is not in a ``-word`` excluded session) is a copy;
        the row goes to the most recently updated session among them, and the others' ids are
        returned. ``key`` is ``(agent, uid, ts)``; returns ``(ref, message index, other session
        ids)``. Test fixtures and short pi ids can give unrelated messages the same id and time, so
        a copy must also have the same text. One term lookup, plus a record read and a session
        document per copy."""
        agent, uid, ts, text = key
        excluded, window = self._gate[1], self._gate[2]
        best, best_idx, best_time = ref, idx, ref.session.updated
        others: dict[str, str] = {}  # skey -> session id
        own = f"{agent}:{ref.session.session_id}"
        copies = sorted(Term("uid", uid).docs(searcher))  # a short posting list: usually just the hit
        if len(copies) > 1 and self._m_filters:
            copies = passing(searcher, copies, self._m_filters)
        for docnum in copies:
            if window and not in_window(self._keys.updated_of(searcher, docnum), window):
                continue
            f = searcher.stored_fields(docnum)
            if f.get("skey") in excluded:
                continue
            if f.get("agent") != agent or f.get("ts") != ts or f.get("skey") == own or f["skey"] in others:
                continue
            other = self._ref(searcher, f["fkey"])
            if other is None or self._doc_text(other.session, f) != text:
                continue
            others[f["skey"]] = other.session.session_id
            t = other.session.updated
            if t is not None and (best_time is None or t > best_time):
                best, best_idx, best_time = other, f["idx"], t
        if best is not ref:
            others.pop(f"{agent}:{best.session.session_id}", None)
            others[own] = ref.session.session_id
        return best, best_idx, sorted(others.values())

    def _decorate(self, searcher, hits: list[Hit]) -> list[Hit]:
        """Structure marks of result rows (issue 5): the parent's title for subagent sessions (one
        session-document lookup per parent, for the rows returned only), ``branch`` and
        ``before_compaction`` from the session's recorded ranges."""
        parents: dict[str, str | None] = {}
        for hit in hits:
            s = hit.session
            if s.parent_session_id:
                if s.parent_session_id not in parents:
                    parents[s.parent_session_id] = self._title_of(searcher, s.parent_session_id, s.agent)
                hit.parent_title = parents[s.parent_session_id]
            hit.branch = "abandoned" if in_ranges(hit.message_index, abandoned_ranges(s)) else "active"
            mark = last_compaction(s)
            hit.before_compaction = mark is not None and hit.message_index < mark
        return hits

    def _title_of(self, searcher, session_id: str, agent: str | None = None) -> str | None:
        """The (masked) title of the newest indexed session ``session_id`` (of ``agent`` when
        given), or None when it is not indexed or has no title."""
        docs = [d for d in searcher.documents(session_id=session_id) if not agent or d.get("agent") == agent]
        if not docs:
            return None
        best = max(docs, key=lambda d: (d.get("meta") or {}).get("updated") or 0)
        return self._session_ref(best).session.title

    # -- public API ---------------------------------------------------------------------------

    @_guarded
    def search(self, query: str, *, limit: int = DEFAULT_LIMIT, before: int = DEFAULT_BEFORE,
               after: int = DEFAULT_AFTER, agent: str | None = None, sort: str = "relevance",
               time_limit: float | None = None, explain: bool = False,
               redact: bool | None = None) -> SearchResult:
        """Best hit per session for ``query`` (the query language of ``crabsearch.query``), with
        context windows; never raises for any text.

        ``limit`` caps the number of sessions; ``agent`` is the same as ``agent:NAME`` in the
        query. ``sort`` is ``relevance`` (recency breaks ties) or ``newest`` (sessions by their
        newest matching message). ``time_limit`` (seconds) stops scoring early and returns the best
        hits found so far with ``partial=True`` (the app uses it so a word found in every message
        stays responsive; scripts get complete results). ``explain`` fills ``Hit.explain``.
        ``redact`` overrides the engine's masking for this call.

        Ranking: a session's score is its best message's score (fields boosted by role, see
        ``index.schema.WEIGHTS``) plus its title and summary score, so a title or summary match
        counts on top of the best message; a session that matches only by title or summary is
        anchored on its first real user prompt.
        """
        pq = parse(query, agents=tuple(SOURCES))
        if agent:
            pq.agent = agent
        result = SearchResult(query=query, hits=[], cut=pq.cut, notes=list(pq.notes), sort=sort)
        if limit <= 0:
            return result
        with self._lock:
            self._masking(redact)
            searcher = self._get_searcher()
            if searcher is None or searcher.doc_count_all() == 0:
                return result
            by_id = self._by_id(searcher, query, pq)
            if by_id:
                result.route, result.hits = "id", by_id
                return result
            comp = self._comp = Compiler(pq, searcher)
            if comp.empty:
                if pq.has_filters and not (pq.words or pq.phrases or pq.excluded):
                    result.route = "recent"
                    result.hits = self._recent(searcher, limit, pq)
                    if pq.in_tools and not self._has_tool_output():
                        result.notes.append("tool output is not indexed (index_tool_output = true in "
                                            "config.toml); listing recent sessions")
                return result
            # The kind term is implied by the fields searched (never on both kinds of document).
            # since:/until: are checked by the collectors (time_window), not as Whoosh ranges.
            m_filters = filters(pq, sessions=False, kind=False, time=False)
            s_filters = None if pq.in_tools else filters(pq, sessions=True, kind=False, time=False)
            self._m_filters = m_filters  # copies of a hit message must pass them too (_dedupe)
            fetch = limit + max(DEDUP_SPARE, limit // 2)  # spare rows: duplicates are dropped
            # One deadline for the whole ladder; -word drops whole sessions inside the search.
            self._gate = (None if not time_limit else time.monotonic() + time_limit,
                          self._excluded_sessions(searcher, comp), time_window(pq))
            s_rungs = dict(comp.rungs(SESSION_FIELDS))
            multi = len(comp.groups) > 1
            rows: list[tuple] = []  # ranked rows of every rung used, in ladder order
            listed: set[str] = set()

            titles: dict[tuple, dict] = {}

            def title_scores(groups) -> dict[str, tuple]:
                """Each session's title and summary score for any of the word groups: every word
                they hold counts, on every rung (issue 11, problem 3)."""
                if s_filters is None or sort == "newest":
                    return {}
                key = tuple(map(tuple, groups))
                if key not in titles:  # one scan of the session documents (one per session)
                    titles[key] = self._run(searcher, comp.any_query(SESSION_FIELDS, groups), s_filters,
                                            searcher.doc_count_all(), sort, result, depth=1)
                return titles[key]

            def take(route: str, found: dict, sessions: dict | None = None, by_coverage: bool = False,
                     groups=None) -> None:
                """Add a rung's sessions not listed by a higher rung, ranked within the rung: its
                message entries ``found``, its title/summary entries ``sessions`` (a title or
                summary holding the rung's words), and every session's title and summary score
                for the words they hold."""
                found = {k: v for k, v in found.items() if k not in listed}
                sessions = {k: v for k, v in (sessions or {}).items() if k not in listed}
                partial = title_scores(comp.groups if groups is None else groups)
                sessions.update((k, partial[k]) for k in set(found) | set(sessions) if k in partial)
                if not found and not sessions:
                    return
                ranked = self._rank(searcher, found, sessions, sort, route, by_coverage)
                rows.extend(ranked)
                listed.update(r[-1] for r in ranked)
                if result.route is None:
                    result.route = route

            def done() -> bool:
                """Out of time (what was found is the answer), or enough sessions for the page."""
                return result.partial or len(listed) >= fetch

            agg = None
            session_done = False
            for route, mq in comp.rungs(MESSAGE_FIELDS):
                if done():
                    break
                if route == "repair" and multi and comp.all_known():
                    # Before repairing spelling: every word somewhere in the session.
                    agg = self._aggregate(searcher, comp, comp.groups, m_filters, s_filters, result)
                    take("session", _session_entries(agg, len(comp.groups)))
                    session_done = True
                    if done():
                        break
                found = self._run(searcher, mq, m_filters, fetch, sort, result)
                sq = s_rungs.get(route)
                sessions = {} if sq is None or s_filters is None else self._run(
                    searcher, sq, s_filters, fetch, sort, result)
                take(route, found, sessions, groups=comp.repaired_groups() if route == "repair" else None)
            if multi and not done():
                repaired = comp.repaired_groups()
                known = [g for g in repaired if comp.has_postings(g)]
                if len(known) == 1:
                    # Only one word is in the index at all ("error zqxjvbnwk"): "any" is that word
                    # alone, found by the best-hit collector instead of gathering every match.
                    take("any", self._any_one(searcher, comp, known[0], m_filters, s_filters, fetch, sort, result),
                         by_coverage=True, groups=[known[0]])
                else:
                    if agg is None or repaired != comp.groups:  # "any" uses the repaired words too
                        agg = self._aggregate(searcher, comp, repaired, m_filters, s_filters, result)
                    if not session_done:
                        take("session", _session_entries(agg, len(comp.groups)), groups=repaired)
                    if not done():
                        take("any", _any_entries(agg), by_coverage=True, groups=repaired)
            result.hits = self._hits(searcher, rows, limit, before, after, explain)
            for word in comp.unmatched():  # an identifier found nowhere, whole or in a row
                result.notes.append(f"nothing matched {word} (whole, or its parts in a row)")
            used = any(h.route in ("repair", "any") for h in result.hits)
            result.corrections = dict(comp.corrections) if used else {}
            for word in sorted(comp.rare) if used else ():  # the route hint says so (issue 11, problem 6)
                result.notes.append(f"{word} → {comp.corrections[word]}: a word found in one message only")
            result.terms = comp.terms if used else [t for t in comp.terms if t not in comp.corrections.values()]
            if pq.in_tools and not self._has_tool_output():
                result.notes.append("tool output is not indexed: set index_tool_output = true in config.toml "
                                    "(or --index-tool-output) to search it with in:tools")
        return result

    def _by_id(self, searcher, query: str, pq) -> list[Hit]:
        """A query that is exactly one indexed session id (a pasted id, or a subagent's
        ``agent-XXXX`` named in its parent's session view) finds that session, anchored on its
        first prompt; ``[]`` otherwise (one term lookup)."""
        token = query.strip()
        if not token or len(token) < 4 or any(c.isspace() for c in token) or ":" in token:
            return []
        docs = [d for d in searcher.documents(session_id=token) if not pq.agent or d.get("agent") == pq.agent]
        hits = []
        for f in sorted(docs, key=lambda d: -((d.get("meta") or {}).get("updated") or 0)):
            ref = self._session_ref(f)
            idx = ref.session.anchor_index
            items = self._items(searcher, ref, range(idx, idx + 1), idx, MAX_ITEM_BYTES)
            hits.append(Hit(ref, 0.0, idx, items[0].role if items else Role.USER.value, items, route="id"))
        return self._decorate(searcher, hits)

    def _excluded_sessions(self, searcher, comp) -> frozenset[str]:
        """The keys (``skey``) of the sessions holding an excluded word."""
        q = comp.excluded_query()
        if q is None:
            return frozenset()
        return frozenset(self._keys.key_of(searcher, d) for d in q.docs(searcher))

    def _aggregate(self, searcher, comp, groups, m_filters, s_filters, result,
                   cap: int = 100_000) -> dict[str, "_Gathered"]:
        """Sessions matching any word group, with every matching document taken into account:
        ``{skey: _Gathered}`` (see :func:`_any_entries` and :func:`_session_entries` for how the
        ``any`` and ``session`` rungs rank them). Scans at most ``cap`` matching documents (then
        ``partial``)."""
        parts = [And([comp.any_query(MESSAGE_FIELDS, groups), *m_filters])]
        if s_filters is not None:
            parts.append(And([comp.any_query(SESSION_FIELDS, groups), *s_filters]))
        deadline, excluded, window = self._gate
        matches = []
        try:
            for match in each_match(searcher, FlatOr(parts) if len(parts) > 1 else parts[0], self._keys,
                                    deadline=deadline, excluded=excluded, window=window):
                if len(matches) >= cap:
                    result.partial = True
                    break
                matches.append(match)
        except OutOfTime:
            result.partial = True
        matches.sort(key=lambda m: -m[1])  # best first (stable: document order breaks ties)
        per: dict[str, _Gathered] = {}
        kinds: dict[tuple, tuple] = {}  # matched terms -> what they mean (a few dozen kinds)
        for key, score, docnum, terms, idx in matches:
            kind = kinds.get(terms)
            if kind is None:
                matched = frozenset((f, t) for f, t in terms if f in WEIGHTS)
                words = frozenset(t for _, t in matched)
                cover = [gi for gi, g in enumerate(groups) if covered(g, words)]
                kind = kinds[terms] = (matched, words, cover, sum(1 << gi for gi in cover),
                                       all(f in SESSION_FIELDS for f, _ in matched))
            matched, words, cover, mask, session_doc = kind
            g = per.get(key)
            if g is None:
                g = per[key] = _Gathered([0.0] * len(groups))
            if not session_doc:  # the title and summary score is added per word by the rung
                for gi in cover:
                    if score > g.by_group[gi]:
                        g.by_group[gi] = score
            # The best message (message fields never occur on a session document); the session
            # document (title, summary) only when no message of the session matched.
            if g.best is None or (g.best[1] and not session_doc):
                g.best = (docnum, session_doc)
            if session_doc:
                g.s_mask, g.s_score, g.s_doc = g.s_mask | mask, max(g.s_score, score), docnum
            elif mask:
                g.messages.append((idx, mask, score, docnum))
            if terms not in g.kinds:
                g.kinds.add(terms)
                g.matched |= matched
                g.words |= words
        for g in per.values():
            g.covered = sum(covered(grp, g.words) for grp in groups)
        return per

    def _any_one(self, searcher, comp, group, m_filters, s_filters, fetch, sort, result) -> dict[str, tuple]:
        """The ``any`` rung when a single word group has postings: the same entries as
        :meth:`_aggregate` would give (a session's score is its best document's for that group,
        message or title/summary; its hit is its best message), from two best-hit scans."""
        found = self._run(searcher, comp.any_query(MESSAGE_FIELDS, [group]), m_filters, fetch, sort, result)
        sessions = {} if s_filters is None else self._run(
            searcher, comp.any_query(SESSION_FIELDS, [group]), s_filters, fetch, sort, result)
        combined = {}
        for key in set(found) | set(sessions):
            m, s_ = found.get(key), sessions.get(key)
            # The title and summary score is added by the rung (``take``); a session found by
            # its title alone is anchored on its first prompt.
            combined[key] = (m[0], m[1], m[2], 1) if m else (0.0, s_[1], [], 1)
        return combined

    def _run(self, searcher, q, clauses, limit, sort, result, depth: int = DEDUP_DEPTH) -> dict[str, tuple]:
        """Run one query, collapsed to the best document per session; returns the ``limit *
        depth`` best sessions as ``{skey: (score, document number, matched (field, term) pairs)}``."""
        if clauses is None:
            return {}
        deadline, excluded, window = self._gate
        # Every session's best is found anyway; more of them than the rows shown are returned so
        # that copies of one message (resumed or forked sessions, folded into one row by _merge)
        # cannot leave the page short.
        top, partial = best_per_session(searcher, And([q, *clauses]), limit * depth, self._keys,
                                        newest=sort == "newest",
                                        deadline=deadline, excluded=excluded, window=window)
        result.partial = result.partial or partial
        out = {}
        for skey, best in top:
            score = 0.0 if sort == "newest" else float(best.score)  # newest: the score is the time
            out[skey] = (score, best.docnum, best.terms)
        return out

    def _rank(self, searcher, found, sessions, sort, route, by_coverage: bool = False) -> list[tuple]:
        """One rung's rows, best first, from per-session best message entries (``found``) and
        title/summary entries (``sessions``), ``{skey: (score, document number, matched pairs[,
        groups covered])}``: a session's score is the sum of both; ``by_coverage`` ranks by
        groups covered first; ``sort="newest"`` by the best document's time. Each row is
        ``(score, newest, covered, message doc, session doc, message score, session score,
        matched, route, skey)``."""
        prelim = []
        for skey in set(found) | set(sessions):
            m_score, m_doc, m_terms, *m_cov = found.get(skey, (0.0, None, []))
            s_score, s_doc, s_terms = sessions.get(skey, (0.0, None, []))
            # Recency (ties, and --sort newest): the best document's time (a message's own time,
            # else its session's; a session document's: the session's), from the column cache.
            newest = self._keys.updated_of(searcher, m_doc if m_doc is not None else s_doc)
            prelim.append((m_score + s_score, newest, m_cov[0] if m_cov else 0, m_doc, s_doc,
                           m_score, s_score, list(m_terms) + list(s_terms), route, skey))
        if sort == "newest":
            prelim.sort(key=lambda r: (-r[1], -r[0]))
        else:
            prelim.sort(key=lambda r: (-r[2] if by_coverage else 0, -round(r[0], 6), -r[1]))
        return prelim

    def _hits(self, searcher, prelim, limit, before, after, explain) -> list[Hit]:
        """Hits for ranked rows (:meth:`_rank`, rungs in ladder order): each session once, a
        message that several sessions copy shown once (``_dedupe``), with context windows."""
        rows = []
        seen: dict[tuple, int] = {}  # (agent, uid, ts) of a hit message -> its row
        fetch = limit + max(DEDUP_SPARE, limit // 2)
        for score, newest, _cov, m_doc, s_doc, m_score, s_score, matched, route, _skey in prelim:
            if len(rows) >= fetch:
                break  # stored fields and session documents are read for the rows (and a few spare) only
            m_fields = None if m_doc is None else searcher.stored_fields(m_doc)
            s_fields = None if s_doc is None else searcher.stored_fields(s_doc)
            ref = self._ref(searcher, (m_fields or s_fields)["fkey"])
            if ref is None:
                continue
            by_message = bool(m_fields and m_fields.get("role"))
            idx = m_fields["idx"] if by_message else ref.session.anchor_index
            key = None
            if by_message and m_fields.get("uid"):
                text = self._doc_text(ref.session, m_fields)
                if text is not None:
                    key = (ref.session.agent, m_fields["uid"], m_fields.get("ts"), text)
            if key is not None and key in seen:
                continue  # the same message in another session: one row (_dedupe picks which)
            if key is not None:
                seen[key] = len(rows)
            rows.append([score, newest, ref, idx, m_score, s_score, matched, by_message, _cov, key, [],
                         m_doc if by_message else None, route])
        shown: set[str] = set()
        kept = []
        for row in rows:
            if len(kept) >= limit:
                break
            if row[9] is not None:
                moved_from = row[2]
                row[2], row[3], row[10] = self._dedupe(searcher, row[2], row[3], row[9])
                if row[2] is not moved_from:
                    row[11] = None  # the hit's document is another session's now
            if row[2].fkey in shown:
                continue  # moved to a session that already has a row
            shown.add(row[2].fkey)
            kept.append(row)
        rows = kept
        hits = []
        terms = self._comp.terms if self._comp is not None else []
        for score, _, ref, idx, m_score, s_score, matched, by_message, _cov, _key, others, doc, route in rows:
            window = branch_window(idx, ref.session.message_count, before, after, abandoned_ranges(ref.session))
            items = self._items(searcher, ref, window, idx, MAX_ITEM_BYTES, terms=terms,
                                anchor=(idx, doc) if doc is not None else None)
            hit_item = next((i for i in items if i.hit), None)
            hit = Hit(ref, score, idx, hit_item.role if hit_item else Role.USER.value, items,
                      also_in_sessions=others, terms=list(terms), route=route)
            if explain:
                hit.explain = {
                    "route": route, "message_score": round(m_score, 4), "session_score": round(s_score, 4),
                    "anchored_on": "hit" if by_message else "first prompt (title or summary match)",
                    "matched": sorted({f"{f}:{t}" for f, t in matched if f in WEIGHTS}),
                    "weights": {f: WEIGHTS[f] for f in sorted({f for f, _ in matched if f in WEIGHTS})},
                }
            hits.append(hit)
        return self._decorate(searcher, hits)

    @_guarded
    def recent(self, *, limit: int = 50, agent: str | None = None, redact: bool | None = None) -> list[Hit]:
        """The most recently updated sessions (session documents only, newest first), each as a
        Hit whose window is just its first real user prompt."""
        pq = parse("", agents=tuple(SOURCES))
        pq.agent = agent
        with self._lock:
            self._masking(redact)
            searcher = self._get_searcher()
            return [] if searcher is None else self._recent(searcher, limit, pq)

    def _recent(self, searcher, limit: int, pq) -> list[Hit]:
        clauses = filters(pq, sessions=True)
        if clauses is None:  # role: filters: list the newest sessions with such messages
            res = searcher.search(And(filters(pq, sessions=False)), limit=limit, sortedby="updated",
                                  reverse=True, collapse="skey", collapse_limit=1)
        else:
            res = searcher.search(And(clauses) if len(clauses) > 1 else clauses[0], limit=limit,
                                  sortedby="updated", reverse=True, collapse="skey", collapse_limit=1)
        hits = []
        for r in res:
            f = r.fields()
            ref = self._session_ref(f) if f.get("meta") else self._ref(searcher, f["fkey"])
            if ref is None:
                continue
            idx = ref.session.anchor_index
            items = self._items(searcher, ref, range(idx, idx + 1), idx, MAX_ITEM_BYTES)
            hits.append(Hit(ref, 0.0, idx, items[0].role if items else Role.USER.value, items, route="recent"))
        return self._decorate(searcher, hits)

    @_guarded
    def window(self, hit: Hit, before: int, after: int, *, redact: bool | None = None) -> list[Item]:
        """A new context window around ``hit`` (for widening or narrowing it in place)."""
        with self._lock:
            self._masking(redact)
            searcher = self._get_searcher()
            if searcher is None:
                return []
            rng = branch_window(hit.message_index, hit.session.message_count, before, after,
                                abandoned_ranges(hit.session))
            return self._items(searcher, hit.ref, rng, hit.message_index, MAX_ITEM_BYTES, redact, hit.terms)

    @_guarded
    def locate(self, ref: SessionRef, message_index: int) -> tuple[str, int] | None:
        """``(file, byte offset)`` where message ``message_index`` of ``ref``'s session starts (for
        opening it in an editor), or None when the message is unknown or its source is not a
        text file (a database row)."""
        src = SOURCES.get(ref.session.agent)
        with self._lock:
            searcher = self._get_searcher()
            fields = searcher.document(mkey=f"{ref.fkey}:{message_index}") if searcher else None
        if not fields or src is None:
            return None
        return src.locate(ref.session.path, fields["off"])

    @_guarded
    def matching_messages(self, ref: SessionRef, query: str, cap: int = 5000) -> list[int]:
        """Message indexes of ``ref``'s session that match any word of ``query`` (for jumping
        between hits in the session view), ascending; at most ``cap``."""
        pq = parse(query, agents=tuple(SOURCES))
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None or searcher.doc_count_all() == 0:
                return []
            comp = Compiler(pq, searcher)
            if comp.empty:
                return []
            q = comp.any_query(MESSAGE_FIELDS) if comp.groups else comp.rungs(MESSAGE_FIELDS)[0][1]
            docs = list(And([q, Term("fkey", ref.fkey), Term("kind", "m")]).docs(searcher))[:cap]
            return sorted(searcher.stored_fields(d)["idx"] for d in docs)

    @_guarded
    def find_session(self, session_id: str) -> SessionRef | None:
        """The session with this id (exact, or a unique prefix of at least 4 characters); when
        several transcript files carry the same id, the most recently updated one.

        Returns None when nothing matches; raises :class:`AmbiguousSession` when a prefix matches
        several sessions."""
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None or not session_id:
                return None
            docs = list(searcher.documents(session_id=session_id))
            if not docs and len(session_id) >= 4:
                from whoosh.query import Prefix
                res = searcher.search(Prefix("session_id", session_id), limit=50)
                docs = [r.fields() for r in res]
                ids = sorted({d["meta"]["session_id"] for d in docs})
                if len(ids) > 1:
                    raise AmbiguousSession(session_id, ids)
            if not docs:
                return None
            best = max(docs, key=lambda d: d["meta"].get("updated") or 0)
            self._masking(None)
            return self._session_ref(best)

    @_guarded
    def page(self, ref: SessionRef, offset: int = 0, limit: int = 50,
             max_bytes: int | None = None, *, redact: bool | None = None) -> Page:
        """Messages ``offset .. offset+limit`` of a session, read from its transcript by offset.
        ``max_bytes`` caps each text (None: full text); ``redact`` overrides the engine's
        masking for this call."""
        offset, limit = max(0, offset), max(0, limit)
        total = ref.session.message_count
        with self._lock:
            self._masking(redact)
            searcher = self._get_searcher()
            items = [] if searcher is None else self._items(
                searcher, ref, range(offset, min(total, offset + limit)), None, max_bytes, redact)
            if items:
                self._link_subagents(searcher, ref, items)
        return Page(ref, offset, limit, total, items)

    def _link_subagents(self, searcher, ref: SessionRef, items: list[Item]) -> None:
        """Fill ``Item.subagents`` of the page's spawning tool calls from the session's
        ``extra["subagents"]`` (``[message index, subagent session id]``, recorded by the Claude
        Code source), with the subagents' titles: one index query for the whole page."""
        by_index = {it.message_index: it for it in items}
        links = [(i, sid) for i, sid in ref.session.extra.get("subagents") or ()
                 if i in by_index and isinstance(sid, str)]
        if not links:
            return
        ids = sorted({sid for _, sid in links})
        q = And([Term("kind", "s"), Term("agent", ref.session.agent), Or([Term("session_id", s) for s in ids])])
        titles: dict[str, tuple] = {}
        for docnum in q.docs(searcher):
            f = searcher.stored_fields(docnum)
            sid, updated = f["meta"]["session_id"], f["meta"].get("updated") or 0
            if sid not in titles or updated > titles[sid][0]:
                titles[sid] = (updated, f)
        for i, sid in links:
            title = self._session_ref(titles[sid][1]).session.title if sid in titles else None
            by_index[i].subagents.append({"session_id": sid, "title": title})

    @property
    def exists(self) -> bool:
        """True when there is an index to search (it may still be empty)."""
        with self._lock:
            return self._get_searcher() is not None

    @property
    def damage(self) -> str | None:
        """Why the index must be rebuilt before it can be searched (a segment changed on disk, or
        a search could not read one), or None."""
        return seal_problem(self.index_dir)

    def doc_count(self) -> int:
        """Number of indexed sessions (0 when there is no index)."""
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None:
                return 0
            return len(list(searcher.document_numbers(kind="s")))

    @_guarded
    def facets(self) -> dict[str, list[tuple[str, int]]]:
        """What the filters can take: ``{"agent": [(name, sessions)], "project": [(last folder,
        sessions)]}``, most sessions first (for Tab completion and the filter pickers). Counts
        session documents through the postings of each term; cached per index generation."""
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None:
                return {"agent": [], "project": []}
            if self._facets and self._facets[0] is searcher:  # same index generation
                return self._facets[1]
            sessions = set(searcher.document_numbers(kind="s"))
            # Project names are matched lowercased (``projname``) but shown as the folder is
            # spelled (from the full paths in ``project``; the first spelling seen wins).
            spelled: dict[str, str] = {}
            for raw in searcher.lexicon("project"):
                folder = project_name(raw.decode("utf-8", "replace"))
                if folder:
                    spelled.setdefault(folder, raw.decode("utf-8", "replace").rstrip("/\\").replace("\\", "/")
                                       .rsplit("/", 1)[-1])
            out: dict[str, list[tuple[str, int]]] = {}
            for name, fieldname in (("agent", "agent"), ("project", "projname")):
                counts = []
                for term in searcher.lexicon(fieldname):
                    docs = set(searcher.postings(fieldname, term).all_ids()) & sessions
                    if docs:
                        text = term.decode("utf-8", "replace")
                        counts.append((spelled.get(text, text) if name == "project" else text, len(docs)))
                out[name] = sorted(counts, key=lambda c: (-c[1], c[0].lower()))
            self._facets = (searcher, out)
            return out

    @staticmethod
    def spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
        """Character spans of ``text`` that match any of the analyzed query ``terms``."""
        return _spans(text, set(terms))


PROXIMITY_SPAN = 4
"""Messages over which a session-wide match loses half its score: a window of the session's
messages holding every query word scores ``1 / (1 + (span - 1) / PROXIMITY_SPAN)`` of its
words' scores, ``span`` counting the messages from the first to the last of the window (2 for two
adjacent messages)."""


@dataclass(slots=True)
class _Gathered:
    """What :meth:`Engine._aggregate` gathered of one session: ``by_group``, the best score of a
    document holding each word group; ``best``, ``(document number, is the session document)``
    of the best match; ``matched`` ``(field, term)`` pairs and ``words``; ``messages``, the
    matching messages as ``(message index, bit mask of the groups they hold, score, document
    number)``; ``s_mask``, ``s_score``, ``s_doc`` the same for the session document (title and
    summary); ``covered``, the number of groups the session holds somewhere."""

    by_group: list[float]
    best: tuple[int, bool] | None = None
    matched: set = field(default_factory=set)
    words: set = field(default_factory=set)
    kinds: set = field(default_factory=set)
    messages: list = field(default_factory=list)
    s_mask: int = 0
    s_score: float = 0.0
    s_doc: int | None = None
    covered: int = 0


def _any_entries(gathered: dict[str, _Gathered]) -> dict[str, tuple]:
    """The ``any`` rung's entries ``{skey: (score, document, matched pairs, groups covered)}``: a
    session's score is the sum over word groups of the best score of a message holding the group
    (its title and summary score is added by the rung); the rung ranks by groups covered first
    (``_rank(by_coverage=True)``)."""
    return {k: (sum(g.by_group), g.best[0], sorted(g.matched), g.covered) for k, g in gathered.items()}


def _session_entries(gathered: dict[str, _Gathered], n_groups: int) -> dict[str, tuple]:
    """The ``session`` rung's entries: the sessions holding every word group, spread over their
    messages (and title or summary), scored by proximity (issue 11, problem 2): the best window
    of consecutive messages that holds the groups the title and summary do not
    (:func:`best_window`): its words' scores times :data:`PROXIMITY_SPAN`'s decay (the title and
    summary score is added by the rung). Only the window counts, so a long session's many
    mentions do not add up; its hit is the window's best message."""
    out = {}
    full = (1 << n_groups) - 1
    for k, g in gathered.items():
        if g.covered != n_groups:
            continue
        need = full & ~g.s_mask
        found = best_window(sorted(g.messages), need) if need else None
        if found is None:
            out[k] = (0.0, g.best[0], sorted(g.matched), n_groups)
        else:
            value, _span, doc = found
            out[k] = (value, doc, sorted(g.matched), n_groups)
    return out


def best_window(messages: list[tuple[int, int, float, int]], need: int) -> tuple[float, int, int] | None:
    """The best window of a session's matching ``messages`` (``(message index, group bit mask,
    score, document number)``, sorted by message index) that holds every group of the bit mask
    ``need``: ``(value, span, document number of its best message)``, None when no window holds
    them all.

    A window's value is the sum, over the needed groups, of the best score of a window message
    holding the group, times ``1 / (1 + (span - 1) / PROXIMITY_SPAN)``; ``span`` counts the
    messages from the window's first to its last. Windows are the shortest ones ending at each
    message (two pointers, one pass); each group's best score in the window is kept in a
    monotonic queue."""
    bits = [b for b in range(need.bit_length()) if need >> b & 1]
    count = dict.fromkeys(bits, 0)
    queues = {b: deque() for b in bits}  # window positions holding b, scores decreasing
    missing, left, out = len(bits), 0, None
    for right, (_idx, mask, score, _doc) in enumerate(messages):
        for b in bits:
            if mask >> b & 1:
                missing -= count[b] == 0
                count[b] += 1
                q = queues[b]
                while q and messages[q[-1]][2] <= score:
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
        value = sum(messages[queues[b][0]][2] for b in bits) / (1 + (span - 1) / PROXIMITY_SPAN)
        if out is None or value > out[0]:
            top = max((queues[b][0] for b in bits), key=lambda p: messages[p][2])
            out = (value, span, messages[top][3])
    return out


def _first_match(text: str, terms: list[str]) -> int | None:
    """Character offset of the first query term in ``text`` (its first :data:`MATCH_SCAN`
    characters), or None: a case-folded substring search, where a word counts only when it is
    not part of a longer word (``the`` in ``other``); a ``prefix*`` only needs its start to be a
    word start; CJK terms (bigrams inside runs of CJK text) count anywhere. Offsets are those of
    the case-folded text, which can differ by a few characters for rare scripts (it only places
    a cut)."""
    low = text[:MATCH_SCAN].lower()
    best = None
    for term in terms:
        prefix = term.endswith("*")
        needle = term.rstrip("*")
        if not needle:
            continue
        anywhere = not needle.isascii() and any(_is_cjk(c) for c in needle)
        pos = low.find(needle)
        while pos != -1 and (best is None or pos < best):
            before = low[pos - 1] if pos else " "
            after = low[pos + len(needle)] if pos + len(needle) < len(low) else " "
            if anywhere or (not before.isalnum() and (prefix or not after.isalnum())):
                best = pos
                break
            pos = low.find(needle, pos + 1)
    return best


def _is_cjk(c: str) -> bool:
    """True for a Han, kana or Hangul character (the analyzer indexes their runs as bigrams)."""
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF

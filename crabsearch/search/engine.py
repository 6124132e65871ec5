"""The engine facade: :class:`Engine`, the one entry point of the TUI and the CLI.

It owns the index searcher (reopened when another writer committed or a rebuild swapped in a new
generation), the per-searcher caches, and the lock; every public read goes through
:func:`_guarded`. The work is done by the other modules of this package: ``ladder`` (the ranking
policy), ``sessions`` (session documents, copies, subagent links, listings) and ``windows``
(messages read back from the transcripts by offset).
"""

from __future__ import annotations

import functools
import threading
import time
from datetime import datetime
from pathlib import Path

from ..filters import FILTERS
from ..hits import AmbiguousSession, Hit, Item, Page, SearchResult, SessionRef, abandoned_ranges, branch_window
from ..index.highlight import spans as _spans
from ..index.highlight import term_spans as _term_spans
from ..index.collect import SegmentKeys
from ..index.filtering import filters, folder_of, matching_nothing, time_window
from ..index.lookups import transcript_messages
from ..index.querying import MAX_PREFIX_TERMS, MESSAGE_FIELDS, Compiler
from ..index.store import (Damage, IndexDamaged, current_dir, is_damage, mark_damaged, open_index, release,
                           seal_problem, variant_of)
from ..query import no_exact_match_note, parse
from ..ranking import POLICY, Policy
from ..sources import SOURCES
from .caps import DEFAULT_AFTER, DEFAULT_BEFORE, DEFAULT_LIMIT, MAX_ITEM_BYTES, fetch_for
from . import skipped, snapshot
from .skipped import SkippedLine
from .ladder import Context, ScansKept, climb, excluded_sessions, unmatched_phrases
from .sessions import Sessions, id_documents, passing_sessions
from .similar import FUSE_DEPTH, Similar, found_by_words, fuse
from .windows import Windows


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
    pages, titles); ``search``, ``window`` and ``page`` can override it per call (the app's
    reveal key). ``resume_flags`` are config ``[resume]`` arguments per agent. ``policy``: how a
    session's score is composed and bounded (``crabsearch.ranking``; default its ``POLICY``).
    ``embedder``: the model similarity search embeds queries with (``crabsearch.embedder``;
    default the installed one, if any), used when the index has vectors (``search.similar``)."""

    def __init__(self, index_dir: Path, *, redact: bool = True, resume_flags: dict[str, str] | None = None,
                 keep_scans: bool = True, policy: Policy | None = None, embedder=None):
        self.index_dir = Path(index_dir)
        self._similar = Similar(self.index_dir, embedder)
        self.policy = POLICY if policy is None else policy
        self.redact = redact
        self.resume_flags = dict(resume_flags or {})
        """Config ``[resume]``: agent -> arguments added to its resume and fork commands."""
        self._lock = threading.RLock()
        self._ix = None
        self._searcher = None
        self._facets: tuple[object, dict] | None = None  # (searcher, {filters: facets})
        self._keys = SegmentKeys()  # each document's session key, time and index, read once per segment
        self._sessions = Sessions(self.resume_flags)
        self._windows = Windows()
        self._snapshot_kept = None  # (index state, limit) of the masked recent rows last kept
        self._scans = ScansKept() if keep_scans else None
        """The last search's best-per-session scans, for the next (``keep_scans=False``: every
        search scans anew, as a benchmark that repeats one query wants)."""

    # -- plumbing -----------------------------------------------------------------------------

    def _get_searcher(self):
        if self._ix is not None and Path(self._ix.storage.folder) != current_dir(self.index_dir):
            # A rebuild swapped in a new generation (or the index was deleted): reopen.
            self.close()
            self._windows.forget()
        if self._searcher is None:
            if self._ix is None:
                self._ix, problem = open_index(self.index_dir, create=False)
                if isinstance(problem, Damage):  # not "nothing found": the index must be rebuilt
                    mark_damaged(self.index_dir, problem)
                    raise IndexDamaged(f"{problem} from the transcripts at the next refresh")
                if self._ix is None:
                    return None
            self._searcher = self._ix.searcher()
            self._windows.full_tool_output = self._has_tool_output()
        elif not self._searcher.up_to_date():
            # A new searcher, not ``refresh()``: refresh reuses the old segment readers, which
            # keep their old deletion sets (rewritten and removed sessions would show twice), and
            # it fails on an index that has no segment yet.
            self._searcher.close()
            self._searcher = self._ix.searcher()
            self._keys.keep_only(self._searcher)
            self._sessions.forget()
        return self._searcher

    def close(self) -> None:
        """Release the searcher (and its file handles)."""
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()
            if self._ix is not None:
                release(self._ix)  # a generation a swap replaced can go now
            self._searcher = self._ix = None
            self._sessions.forget()

    def reload(self) -> None:
        """Reopen the index from disk (after it was rebuilt or replaced) and forget the records
        read so far (transcripts may have changed)."""
        self.close()
        with self._lock:
            self._windows.forget()

    def _mask(self, redact: bool | None) -> bool:
        """Whether this call masks secrets: ``redact``, or the engine's default."""
        return self.redact if redact is None else redact

    def _has_tool_output(self) -> bool:
        """True when this index holds tool output (its stamp says ``+tools``)."""
        try:
            return variant_of(self.index_dir) == "tools"
        except OSError:
            return False

    # -- public API ---------------------------------------------------------------------------

    @_guarded
    def search(self, query: str, *, limit: int = DEFAULT_LIMIT, before: int = DEFAULT_BEFORE,
               after: int = DEFAULT_AFTER, agent: str | None = None, sort: str = "relevance",
               time_limit: float | None = None, explain: bool = False,
               redact: bool | None = None, typing: bool = False, stop=None, repair: bool = True,
               given: dict[str, str] | None = None, now: datetime | None = None) -> SearchResult:
        """Best hit per session for ``query`` (the query language of ``crabsearch.query``), with
        context windows; never raises for any text.

        ``limit`` caps the number of sessions. ``given``: filter values by name from outside the
        query (``--agent``, MCP's arguments), each overriding the query's own with a note
        (``query.parse``'s ``given``); ``agent`` is ``given={"agent": agent}``. ``sort`` is ``relevance`` (recency breaks ties) or ``newest`` (sessions by their
        newest matching message, each rung's sessions in turn). ``time_limit`` (seconds) stops
        scoring early and returns the best hits found so far with ``partial=True`` (the app uses
        it so a word found in every message stays responsive; scripts get complete results).
        ``explain`` fills ``Hit.explain``. ``redact`` overrides the engine's masking for this
        call. ``typing`` (the app's search as you type): the query's last word may be the start
        of a longer one, so when it is not indexed but starts indexed words it is read as its most
        frequent completion (``conf`` -> ``config``), never spelling-repaired (``cong``).
        ``stop`` (a ``threading.Event``): once set, scoring ends and the search returns no hits,
        ``partial`` (the app sets it when a newer key makes this search's answer useless).
        ``repair=False``: an unknown word is not spelling-repaired to its nearest indexed word (the
        app, while the index is built from scratch: a word not indexed yet became a common one,
        ``token`` -> ``then``). ``now`` (an aware datetime; default the current time) is the
        search's clock: what ``since:7d`` and ``yesterday`` count from, and the time a ranking
        policy that weighs recency measures ages to.

        Ranking (``search.ladder``): the rungs phrase, all, session, repair, any, each filling
        what the ones above left of the page; within a rung a session's score is the ranking
        policy's (``crabsearch.ranking``) of its best message's (fields boosted by role) and its
        title and summary score for every query word they hold; a session that matches only by
        title or summary is anchored on its first real user prompt. When the index has vectors
        and an embedder is installed, the sessions most similar in meaning are fused into the
        rows below the rungs that found every word (``search.similar``; route ``similar``).
        """
        now = datetime.now().astimezone() if now is None else now
        given = dict(given or {})
        if agent:
            given["agent"] = agent
        pq = parse(query, agents=tuple(SOURCES), given=given, now=now)
        if pq.unclosed and not typing:  # `"database timeout` says why it may find nothing
            pq.notes.append(pq.unclosed_note)
        result = SearchResult(query=query, hits=[], cut=pq.cut, notes=list(pq.notes), sort=sort)
        if limit <= 0:
            return result
        mask = self._mask(redact)
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None or searcher.doc_count_all() == 0:
                return result
            by_id = self._sessions.by_id(searcher, pq, self._windows, mask, limit)
            if by_id:
                result.route, result.hits = "id", by_id
                return result
            typed_last = query.split()[-1] if typing and query.split() else None
            comp = Compiler(pq, searcher, typing=typed_last, repair=repair)
            if comp.empty:
                # Nothing typed, or filters, exclusions or an ignored filter alone (nothing to
                # match): the recent sessions they allow, as the app lists them for an empty box.
                # Words that analyze to nothing (punctuation) match nothing.
                if not (pq.words or pq.phrases) and (pq.has_filters or pq.excluded or pq.notes or not query.strip()):
                    gone = excluded_sessions(searcher, comp, self._keys)
                    result.hits = self._sessions.recent(searcher, limit, pq, self._windows, mask, self._keys, gone)
                    result.route = "recent"
                    if pq.in_tools and not self._has_tool_output():
                        result.notes.append("tool output is not indexed (index_tool_output = true in "
                                            "config.toml); listing recent sessions")
                    elif not pq.has_filters:
                        result.notes.append("nothing to search for: listing recent sessions"
                                            + (" without the excluded words" if pq.excluded else ""))
                else:  # `--` or `🦀`: nothing to search for, and the note says so
                    result.notes.append("nothing to search for: punctuation and symbols alone are not indexed")
                _note_empty_filters(searcher, pq, result)
                return result
            # The kind term is implied by the fields searched (never on both kinds of document).
            # since:/until: are checked by the collectors (time_window), not as Whoosh ranges.
            # One deadline for the whole ladder; -word drops whole sessions inside the search.
            fusing = sort == "relevance" and not pq.in_tools and self._similar.active()
            ctx = Context(searcher, comp, self._keys,
                          m_filters=filters(pq, sessions=False, kind=False, time=False),
                          s_filters=None if pq.in_tools else filters(pq, sessions=True, kind=False, time=False),
                          deadline=None if not time_limit else time.monotonic() + time_limit,
                          excluded=excluded_sessions(searcher, comp, self._keys), window=time_window(pq),
                          sort=sort, fetch=max(fetch_for(limit), FUSE_DEPTH) if fusing else fetch_for(limit),
                          result=result, stop=stop, kept=self._scans,
                          policy=self.policy, now=int(now.timestamp() * 1000))
            if self._scans is not None:
                self._scans.begin(searcher)
            rows = climb(ctx)
            said: set[str] = set()  # words already in a note
            missing = [] if rows or result.partial else unmatched_phrases(ctx)
            if missing:  # a quoted phrase found nowhere empties every rung: its words instead
                loose = pq.loosened(missing)
                ctx.comp = Compiler(loose, searcher, typing=typed_last, repair=repair)
                found = climb(ctx)
                if found:
                    if pq.unclosed in missing:  # not searched as one phrase after all
                        result.notes = [n for n in result.notes if n != pq.unclosed_note]
                    result.notes += [no_exact_match_note(p) for p in missing]
                    said = {w for p in missing for w in p.split()}
                    rows, pq, comp = found, loose, ctx.comp
                else:
                    ctx.comp = comp
            if fusing and not result.partial and not found_by_words(rows):
                rows = fuse(rows, self._similar.ranking(ctx, pq), self._similar.margin)
                if self._similar.failure:
                    result.notes.append(f"similarity search is off: the model failed ({self._similar.failure})")
                if rows and result.route is None:
                    result.route = rows[0].route
            if stop is not None and stop.is_set():  # nobody wants the answer: no windows read for it
                result.partial = True
                return result
            result.hits = self._sessions.hits(ctx, rows, limit, before, after, explain, self._windows, mask)
            for word in [w for w in comp.unmatched() if w not in said]:  # an identifier found nowhere
                result.notes.append(f"nothing matched {word} (whole, or its parts in a row)")
            for prefix, count in comp.capped.items():
                result.notes.append(f"{prefix}* searched as its {MAX_PREFIX_TERMS} commonest words (of {count})")
            used = any(h.route in ("repair", "any") for h in result.hits)
            result.corrections = dict(comp.corrections) if used else {}
            for word in sorted(comp.rare) if used else ():  # a repair to a word found once: said
                result.notes.append(f"{word} → {comp.corrections[word]}: a word found in one message only")
            result.terms = comp.terms if used else [t for t in comp.terms if t not in comp.corrections.values()]
            if pq.in_tools and not self._has_tool_output():
                result.notes.append("tool output is not indexed: set index_tool_output = true in config.toml "
                                    "(or --index-tool-output) to search it with in:tools")
            _note_empty_filters(searcher, pq, result)
        return result

    def warm(self) -> bool:
        """Load the embedding model now when similarity search is on (``search.similar``: the
        index has vectors, the extra is installed), so that the first search using it need not
        wait (about 1.5 s of CPU); False when it is off. Call it off the app's thread."""
        return self._similar.warm()

    @_guarded
    def recent(self, *, limit: int = 50, agent: str | None = None, redact: bool | None = None) -> list[Hit]:
        """The most recently updated sessions (session documents only, newest first), each as a
        Hit whose window is just its first real user prompt. Without ``agent``, masked rows are
        also kept beside the index with its state (``search.snapshot``) for the app's next first
        frame."""
        pq = parse("", agents=tuple(SOURCES))
        pq.agent = agent
        mask = self._mask(redact)
        read_in = snapshot.state(self.index_dir) if agent is None and mask else None
        with self._lock:
            searcher = self._get_searcher()
            rows = [] if searcher is None else self._sessions.recent(searcher, limit, pq, self._windows, mask,
                                                                         self._keys)
        if read_in is not None and searcher is not None and (read_in, limit) != self._snapshot_kept:
            snapshot.save(self.index_dir, read_in, limit, self.resume_flags, rows)  # the app's next first frame
            self._snapshot_kept = read_in, limit
        return rows

    def kept_recent(self, limit: int) -> list[Hit] | None:
        """The masked recent sessions :meth:`recent` kept for ``limit`` (with this engine's
        resume arguments) when the index is still in the state they were read from
        (``search.snapshot``): a file read, the index not opened; None for a miss."""
        return snapshot.load(self.index_dir, limit, self.resume_flags)

    @_guarded
    def window(self, hit: Hit, before: int, after: int, *, redact: bool | None = None) -> list[Item]:
        """A new context window around ``hit`` (for widening or narrowing it in place)."""
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None:
                return []
            rng = branch_window(hit.message_index, hit.session.message_count, before, after,
                                abandoned_ranges(hit.session))
            return self._windows.items(searcher, hit.ref, rng, hit.message_index, MAX_ITEM_BYTES,
                                       self._mask(redact), hit.terms)

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
            docs = transcript_messages(searcher, q, ref.fkey)[:cap]
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
            docs = [searcher.stored_fields(d) for d in id_documents(searcher, session_id, prefix=len(session_id) >= 4)]
            ids = sorted({d["meta"]["session_id"] for d in docs})
            if len(ids) > 1:
                raise AmbiguousSession(session_id, ids)
            if not docs:
                return None
            best = max(docs, key=lambda d: d["meta"].get("updated") or 0)
            return self._sessions.session_ref(best, self._mask(None))

    @_guarded
    def session_now(self, ref: SessionRef, *, redact: bool | None = None) -> SessionRef | None:
        """``ref``'s session as the index holds it now (a refresh may have read messages appended
        to its transcript since ``ref`` was made: its ``message_count`` is then larger), or None
        when the index no longer holds it (its transcript was deleted or moved)."""
        with self._lock:
            searcher = self._get_searcher()
            return None if searcher is None else self._sessions.ref(searcher, ref.fkey, self._mask(redact))

    @_guarded
    def skipped_lines(self, ref: SessionRef) -> list[SkippedLine]:
        """The lines of ``ref``'s transcript its reader skipped (the first few the index keeps),
        each placed before the message it comes before, numbered and measured
        (``search.skipped``). Reads the transcript up to the end of the last of them: call it
        off the app's thread."""
        found = skipped.places(self.index_dir, ref)
        if not found:
            return []
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None:
                return []
            placed = [(off, skipped.message_after(searcher, ref, off), why) for off, why in found]
        return skipped.measured(ref.session.path, placed)

    @_guarded
    def page(self, ref: SessionRef, offset: int = 0, limit: int = 50,
             max_bytes: int | None = None, *, redact: bool | None = None) -> Page:
        """Messages ``offset .. offset+limit`` of a session, read from its transcript by offset.
        ``max_bytes`` caps each text (None: full text); ``redact`` overrides the engine's
        masking for this call."""
        offset, limit = max(0, offset), max(0, limit)
        total = ref.session.message_count
        mask = self._mask(redact)
        with self._lock:
            searcher = self._get_searcher()
            items = [] if searcher is None else self._windows.items(
                searcher, ref, range(offset, min(total, offset + limit)), None, max_bytes, mask)
            if items:
                self._sessions.link_subagents(searcher, ref, items, mask)
            if searcher is not None:
                self._sessions.link_continuations(searcher, ref, mask)
        return Page(ref, offset, limit, total, items)

    @_guarded
    def link(self, ref: SessionRef, *, redact: bool | None = None) -> SessionRef:
        """``ref`` with its ``links`` filled (the sessions it was handed to or from: rows get them
        from the search, pages from :meth:`page`); ``redact`` as for :meth:`page`."""
        with self._lock:
            searcher = self._get_searcher()
            if searcher is not None:
                self._sessions.link_continuations(searcher, ref, self._mask(redact))
        return ref

    @property
    def exists(self) -> bool:
        """True when there is an index to search (it may still be empty); False when there is
        none, or it is damaged (then :attr:`damage` says why)."""
        with self._lock:
            try:
                return self._get_searcher() is not None
            except IndexDamaged:
                return False

    @property
    def damage(self) -> str | None:
        """Why the index must be rebuilt before it can be searched (a segment changed on disk, or
        a search could not read one), or None."""
        return seal_problem(self.index_dir)

    def doc_count(self) -> int:
        """Number of indexed sessions (0 when there is no index, or it is damaged)."""
        with self._lock:
            try:
                searcher = self._get_searcher()
            except IndexDamaged:
                return 0
            if searcher is None:
                return 0
            return len(list(searcher.document_numbers(kind="s")))

    @_guarded
    def facets(self, query: str = "") -> dict[str, list[tuple[str, int]]]:
        """What the filters can take, for Tab completion and the filter pickers: per filter whose
        values come from the index (``crabsearch.filters``: ``complete`` names a facet),
        ``[(value, sessions)]``, most sessions first: ``{"agent": [("claude", 12), ...],
        "project": [(last folder, sessions), ...]}``. Counts session documents through the
        postings of each term; cached per index generation.

        ``query``'s filters narrow each list but its own: the projects of the sessions that its
        ``agent:``, ``role:``, ``since:`` and ``until:`` allow (``agent:claude``: only the
        projects with Claude Code sessions, counted as such), the agents of those its other
        filters allow; a name with no such session is left out. Its words are not counted (a
        filter picked from the list narrows the search that the words make)."""
        pq = parse(query, agents=tuple(SOURCES))
        faceted = [f for f in FILTERS.values() if isinstance(f.complete, str)]
        narrowing = {f.name: pq.without(f.name) for f in faceted}
        key = tuple((f, tuple(sorted(q.values.items()))) for f, q in narrowing.items() if q.has_filters)
        with self._lock:
            searcher = self._get_searcher()
            if searcher is None:
                return {f.complete: [] for f in faceted}
            if self._facets and self._facets[0] is searcher and key in self._facets[1]:  # same index generation
                return self._facets[1][key]
            everything = set(searcher.document_numbers(kind="s"))
            # Project names are matched lowercased (``projname``) but shown as the folder is
            # spelled (from the full paths in ``project``; the first spelling seen wins).
            spelled: dict[str, str] = {}
            for raw in searcher.lexicon("project"):
                folder = folder_of(raw.decode("utf-8", "replace"))
                if folder:
                    spelled.setdefault(folder.lower(), folder)
            out: dict[str, list[tuple[str, int]]] = {}
            for f in faceted:
                q = narrowing[f.name]
                fieldname = "projname" if f.narrow.kind == "project" else f.narrow.field
                sessions = passing_sessions(searcher, q, self._keys) if q.has_filters else everything
                counts = []
                for term in searcher.lexicon(fieldname) if fieldname in searcher.schema else ():
                    docs = set(searcher.postings(fieldname, term).all_ids()) & sessions
                    if docs:
                        text = term.decode("utf-8", "replace")
                        counts.append((spelled.get(text, text) if fieldname == "projname" else text, len(docs)))
                out[f.complete] = sorted(counts, key=lambda c: (-c[1], c[0].lower()))
            if not self._facets or self._facets[0] is not searcher:
                self._facets = (searcher, {})
            if len(self._facets[1]) > 16:  # the facets of other queries' filters: a few kept
                self._facets[1].clear()
            self._facets[1][key] = out
            return out

    @staticmethod
    def spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
        """Character spans of ``text`` that match any of the analyzed query ``terms``."""
        return _spans(text, set(terms))

    @staticmethod
    def term_spans(text: str, terms: list[str]) -> list[tuple[int, int, str]]:
        """:meth:`spans` with the term each span matched: ``(start, end, term)``."""
        return _term_spans(text, set(terms))


def _note_empty_filters(searcher, pq, result: SearchResult) -> None:
    """When ``result`` has no hits, a note for each filter of ``pq`` that no session matches at
    all (``project:nope matches no session``): which filter emptied it, not only that nothing
    matched the words (``index.filtering.matching_nothing``)."""
    if not result.hits and pq.has_filters:
        result.notes += [f"{f} matches no session" for f in matching_nothing(searcher, pq)]

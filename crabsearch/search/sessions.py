"""Session bookkeeping: session documents, copies of one message in several sessions, subagent
links, titles, and the listings that are not searches (recent sessions, a session by its id).

A session document (``kind:s``, one per transcript) stores the ``Session`` as ``meta``; a
``SessionRef`` is built from it, with its title and summary masked when masking is on (a title
made from a first prompt can hold a pasted key).
"""

from __future__ import annotations

import heapq
import re
from collections import OrderedDict

from ..hits import Hit, Item, SessionRef, abandoned_ranges, branch_window, in_ranges, last_compaction
from ..index.collect import SegmentKeys
from ..index.filtering import filters, in_window, live_document, passing, term_docs, time_window
from ..index.lookups import all_of, continued_from, session_documents
from ..index.schema import WEIGHTS
from ..model import Role, Session
from ..redact import redact_kept as redact_secrets
from .caps import MAX_ITEM_BYTES, SESSION_DOCS_KEPT


class Sessions:
    """Session documents of the current searcher (the last :data:`SESSION_DOCS_KEPT` looked
    up), turned into ``SessionRef`` objects; ``resume_flags`` are config ``[resume]``
    arguments per agent."""

    def __init__(self, resume_flags: dict[str, str]) -> None:
        self.resume_flags = resume_flags
        self._docs: OrderedDict[str, dict | None] = OrderedDict()  # fkey -> session document

    def forget(self) -> None:
        """Drop the session documents kept (a new searcher)."""
        self._docs.clear()

    def ref(self, searcher, fkey: str, mask: bool, near: int | None = None) -> SessionRef | None:
        """The session of transcript ``fkey`` (its session document, kept per searcher), or None
        when it has none. ``near``: a document of the transcript, whose segment is asked first
        (``index.filtering.live_document``); without it, every segment is asked."""
        docs = self._docs
        if fkey in docs:
            docs.move_to_end(fkey)
            fields = docs[fkey]
        else:
            fields = docs[fkey] = live_document(searcher, "mkey", f"{fkey}:s", near)
            if len(docs) > SESSION_DOCS_KEPT:
                docs.popitem(last=False)
        if not fields:
            return None
        return self.session_ref(fields, mask)

    def session_ref(self, fields: dict, mask: bool) -> SessionRef:
        """A SessionRef from a session document's stored fields; its title and summary masked
        when ``mask``."""
        session = Session.from_state(fields["meta"])
        if mask:
            session.title = redact_secrets(session.title) if session.title else session.title
            session.summary = redact_secrets(session.summary) if session.summary else session.summary
        return SessionRef(session, fields["fkey"], self.resume_flags.get(session.agent, "").strip())

    def dedupe(self, ctx, ref: SessionRef, idx: int, key: tuple, windows, mask: bool
               ) -> tuple[SessionRef, int, list[str]]:
        """Where to show a hit message that several sessions hold (rule from formats.md 1.4 and peer-tools.md: resumed and forked sessions copy earlier history
        with the same message ids): every message document with the same ``uid``, agent and time
        that passes the query's filters (``ctx``: and is not in a ``-word`` excluded session) is
        a copy; the row goes to the most recently updated session among them that is not a
        subagent, when there is one (a subagent file that copies its parent's history, Claude
        Code's side-question ``agent-aside_question-*``, is listed as the parent's subagent, never
        in the parent's place), and the others' ids are returned. ``key`` is ``(agent, uid, ts, text)``; returns ``(ref, message index,
        other session ids)``. Test fixtures and short pi ids can give unrelated messages the same
        id and time, so a copy must also have the same text (read through ``windows``). One term
        lookup, plus a record read and a session document per copy."""
        searcher = ctx.searcher
        agent, uid, ts, text = key
        best, best_idx, best_rank = ref, idx, _rank(ref.session)
        others: dict[str, str] = {}  # skey -> session id
        own = f"{agent}:{ref.session.session_id}"
        copies = term_docs(searcher, "uid", uid)  # a short posting list: usually just the hit
        if len(copies) > 1 and ctx.m_filters:
            copies = passing(searcher, copies, ctx.m_filters)
        for docnum in copies:
            if ctx.window and not in_window(ctx.keys.updated_of(searcher, docnum), ctx.window):
                continue
            f = searcher.stored_fields(docnum)
            if f.get("skey") in ctx.excluded:
                continue
            if f.get("agent") != agent or f.get("ts") != ts or f.get("skey") == own or f["skey"] in others:
                continue
            other = self.ref(searcher, f["fkey"], mask, docnum)
            if other is None or windows.doc_text(other.session, f) != text:
                continue
            others[f["skey"]] = other.session.session_id
            rank = _rank(other.session)
            if rank > best_rank:
                best, best_idx, best_rank = other, f["idx"], rank
        if best is not ref:
            others.pop(f"{agent}:{best.session.session_id}", None)
            others[own] = ref.session.session_id
        return best, best_idx, sorted(others.values())

    def decorate(self, searcher, hits: list[Hit], mask: bool) -> list[Hit]:
        """Structure marks of result rows: the parent's title for subagent sessions (one
        session-document lookup per parent, for the rows returned only), ``branch`` and
        ``before_compaction`` from the session's recorded ranges."""
        parents: dict[str, str | None] = {}
        for hit in hits:
            s = hit.session
            if s.parent_session_id:
                if s.parent_session_id not in parents:
                    parents[s.parent_session_id] = self.title_of(searcher, s.parent_session_id, mask, s.agent)
                hit.parent_title = parents[s.parent_session_id]
            self.link_continuations(searcher, hit.ref, mask)
            hit.branch = "abandoned" if in_ranges(hit.message_index, abandoned_ranges(s)) else "active"
            mark = last_compaction(s)
            hit.before_compaction = mark is not None and hit.message_index < mark
        return hits

    def link_continuations(self, searcher, ref: SessionRef, mask: bool) -> None:
        """Fill ``ref.links``: the session this one was handed to (``extra["continued_in"]``, a
        Claude Code ``continued-in`` line) and the newest one handed to it (a session document
        whose ``continued_in`` is this id), each ``{"session_id", "title"}``. Two term lookups."""
        s = ref.session
        target = s.extra.get("continued_in")
        if isinstance(target, str) and target:
            ref.links["continued_in"] = {"session_id": target,
                                         "title": self.title_of(searcher, target, mask, s.agent)}
        docs = [searcher.stored_fields(d) for d in continued_from(searcher, s.agent, s.session_id)]
        if docs:
            old = self.session_ref(max(docs, key=lambda d: (d.get("meta") or {}).get("updated") or 0), mask)
            ref.links["continued_from"] = {"session_id": old.session.session_id, "title": old.session.title}

    def title_of(self, searcher, session_id: str, mask: bool, agent: str | None = None) -> str | None:
        """The (masked) title of the newest indexed session ``session_id`` (of ``agent`` when
        given), or None when it is not indexed or has no title."""
        docs = [d for d in searcher.documents(session_id=session_id) if not agent or d.get("agent") == agent]
        if not docs:
            return None
        best = max(docs, key=lambda d: (d.get("meta") or {}).get("updated") or 0)
        return self.session_ref(best, mask).session.title

    def link_subagents(self, searcher, ref: SessionRef, items: list[Item], mask: bool) -> None:
        """Fill ``Item.subagents`` of the page's spawning tool calls from the session's
        ``extra["subagents"]`` (``[message index, subagent session id]``, recorded by the Claude
        Code source), with the subagents' titles: one index query for the whole page."""
        by_index = {it.message_index: it for it in items}
        links = [(i, sid) for i, sid in ref.session.extra.get("subagents") or ()
                 if i in by_index and isinstance(sid, str)]
        if not links:
            return
        ids = sorted({sid for _, sid in links})
        titles: dict[str, tuple] = {}
        for docnum in session_documents(searcher, ref.session.agent, ids):
            f = searcher.stored_fields(docnum)
            sid, updated = f["meta"]["session_id"], f["meta"].get("updated") or 0
            if sid not in titles or updated > titles[sid][0]:
                titles[sid] = (updated, f)
        for i, sid in links:
            title = self.session_ref(titles[sid][1], mask).session.title if sid in titles else None
            by_index[i].subagents.append({"session_id": sid, "title": title})

    def first_prompt_hit(self, searcher, ref: SessionRef, windows, mask: bool, route: str) -> Hit:
        """A row for a whole session (no message matched): its first real user prompt."""
        idx = ref.session.anchor_index
        items = windows.items(searcher, ref, range(idx, idx + 1), idx, MAX_ITEM_BYTES, mask)
        return Hit(ref, 0.0, idx, items[0].role if items else Role.USER.value, items, route=route)

    def by_id(self, searcher, pq, windows, mask: bool, limit: int) -> list[Hit]:
        """A query whose only word is a session id finds that session, anchored on its first
        prompt: an indexed id exactly (a pasted id, or a subagent's ``agent-XXXX`` named in its
        parent's session view), or the start of hex ids (:func:`id_prefix_shaped`: ``5c0375b4``,
        the short id ``crabsearch show`` also takes); newest first, at most ``limit``, within the
        query's filters (``5c0375b4 agent:claude``). ``[]`` otherwise: a term lookup, and a walk
        of the ids that start with an id-shaped word."""
        if len(pq.words) != 1 or pq.phrases or pq.prefixes or pq.excluded or len(pq.words[0]) < 4:
            return []
        clauses = filters(pq, sessions=True, kind=False, time=False)
        if clauses is None:  # role: only messages have one
            return []
        token = pq.words[0]
        docs = id_documents(searcher, token, prefix=id_prefix_shaped(token), hex_only=True)
        if docs and clauses:
            docs = passing(searcher, docs, clauses)
        window = time_window(pq)
        fields = [searcher.stored_fields(d) for d in docs]
        fields = [f for f in fields if window is None or in_window(_ms(f), window)]
        hits = [self.first_prompt_hit(searcher, self.session_ref(f, mask), windows, mask, "id")
                for f in sorted(fields, key=lambda f: -_ms(f))[:limit]]
        return self.decorate(searcher, hits, mask)

    def recent(self, searcher, limit: int, pq, windows, mask: bool, keys: SegmentKeys,
               skip: frozenset[str] = frozenset()) -> list[Hit]:
        """The most recently updated sessions that the filters of ``pq`` allow (session
        documents; with ``role:``, sessions with such messages), newest first, each anchored
        on its first prompt (with ``role:``, on its newest message of that role, so that a row of
        ``role:assistant`` shows what the assistant said). ``skip``: session keys left out
        (``-word`` alone) before any row is made, so only ``limit`` rows are ever read.

        ``since:``/``until:`` are checked on each matching document's ``updated`` time from
        ``keys``, the engine's column cache (``filtering.time_window``, the collectors' rule), not
        as a range of ``hour`` terms (Whoosh walks a union of every hour in it)."""
        window = time_window(pq)
        clauses = filters(pq, sessions=True, time=False)
        # role: filters: list the newest sessions with such messages
        query = all_of(filters(pq, sessions=False, time=False) if clauses is None else clauses)
        if window is not None or clauses is None:
            # With role: too: Whoosh's sorted search collapsed by session kept a session's first
            # message of the role, not its newest.
            docs = _newest_per_session(searcher, query, keys, window, limit, skip)
        else:
            found = searcher.search(query, limit=limit + len(skip), sortedby="updated", reverse=True,
                                    collapse="skey", collapse_limit=1)
            docs = [r.docnum for r in found if not skip or keys.key_of(searcher, r.docnum) not in skip][:limit]
        fields = [searcher.stored_fields(d) for d in docs]
        hits = []
        for f in fields:
            if f.get("meta"):
                hits.append(self.first_prompt_hit(searcher, self.session_ref(f, mask), windows, mask, "recent"))
                continue
            ref = self.ref(searcher, f["fkey"], mask)
            idx = f.get("idx")
            if ref is not None and isinstance(idx, int):  # role:: the newest message of that role
                items = windows.items(searcher, ref, range(idx, idx + 1), idx, MAX_ITEM_BYTES, mask)
                hits.append(Hit(ref, 0.0, idx, items[0].role if items else f.get("role") or "", items,
                                route="recent"))
            elif ref is not None:
                hits.append(self.first_prompt_hit(searcher, ref, windows, mask, "recent"))
        return self.decorate(searcher, hits, mask)

    def hits(self, ctx, rows, limit: int, before: int, after: int, explain: bool, windows, mask: bool) -> list[Hit]:
        """Result rows for ranked ``rows`` (``ladder.Row``, rungs in ladder order): each session
        once, a message that several sessions copy shown once (:meth:`dedupe`), each with its
        context window (``before``/``after`` neighbours on the hit's branch) and, with
        ``explain``, how it matched. Stored fields and session documents are read for
        ``ctx.fetch`` (``caps.fetch_for(limit)``) rows at most."""
        searcher = ctx.searcher
        picked = []
        seen: set[tuple] = set()  # (agent, uid, ts, text) of the hit messages so far
        for row in rows:
            if len(picked) >= ctx.fetch:
                break
            m_fields = None if row.m_doc is None else searcher.stored_fields(row.m_doc)
            s_fields = None if row.s_doc is None else searcher.stored_fields(row.s_doc)
            ref = self.ref(searcher, (m_fields or s_fields)["fkey"], mask,
                           row.m_doc if row.m_doc is not None else row.s_doc)
            if ref is None:
                continue
            by_message = bool(m_fields and m_fields.get("role"))
            idx = m_fields["idx"] if by_message else ref.session.anchor_index
            key = None
            if by_message and m_fields.get("uid"):
                text = windows.doc_text(ref.session, m_fields)
                if text is not None:
                    key = (ref.session.agent, m_fields["uid"], m_fields.get("ts"), text)
            if key is not None and key in seen:
                continue  # the same message in another session: one row (dedupe picks which)
            if key is not None:
                seen.add(key)
            picked.append([row, ref, idx, by_message, key, row.m_doc if by_message else None])
        shown: set[str] = set()
        hits = []
        terms = ctx.comp.terms
        for row, ref, idx, by_message, key, doc in picked:
            if len(hits) >= limit:
                break
            others: list[str] = []
            if key is not None:
                moved_from = ref
                ref, idx, others = self.dedupe(ctx, ref, idx, key, windows, mask)
                if ref is not moved_from:
                    doc = None  # the hit's document is another session's now
            if ref.fkey in shown:
                continue  # moved to a session that already has a row
            shown.add(ref.fkey)
            rng = branch_window(idx, ref.session.message_count, before, after, abandoned_ranges(ref.session))
            items = windows.items(searcher, ref, rng, idx, MAX_ITEM_BYTES, mask, terms,
                                  anchor=(idx, doc) if doc is not None else None)
            hit_item = next((i for i in items if i.hit), None)
            hit = Hit(ref, row.score, idx, hit_item.role if hit_item else Role.USER.value, items,
                      also_in_sessions=others, terms=list(terms), route=row.route)
            if explain:
                hit.explain = {
                    "route": row.route, "message_score": round(row.m_score, 4), "session_score": round(row.s_score, 4),
                    "anchored_on": "hit" if by_message else "first prompt (title or summary match)",
                    "matched": sorted({f"{f}:{t}" for f, t in row.matched if f in WEIGHTS}),
                    "weights": {f: WEIGHTS[f] for f in sorted({f for f, _ in row.matched if f in WEIGHTS})},
                }
                if row.fused is not None:  # ranked by words and meaning together (search.similar)
                    from .similar import LEXICAL_WEIGHT  # noqa: PLC0415 - similar imports this module

                    words, meaning, combined = row.fused
                    hit.explain["fused"] = {"words": round(words, 4), "meaning": round(meaning, 4),
                                            "words_weight": LEXICAL_WEIGHT, "score": round(combined, 4)}
            hits.append(hit)
        return self.decorate(searcher, hits, mask)


ID_PREFIX_MIN = 6
"""The fewest characters of a session id that the search box takes as its start (``crabsearch
show`` takes 4: it is told the text is an id; a search is not)."""
ID_PREFIX_CAP = 1000
"""Session documents read for one id prefix at most."""
_HEX_ID = re.compile(r"[0-9a-fA-F-]+")


def id_prefix_shaped(token: str) -> bool:
    """True when a search ``token`` reads as the start of a hex session id (a UUID: Claude Code,
    Codex, Gemini CLI's ``sessionId``, Copilot CLI, Cursor): :data:`ID_PREFIX_MIN` characters or
    more, hex digits and dashes only, and a digit among them, so that a word spelled with the
    letters a-f (``facade``, ``decade``, ``added``) stays a word."""
    return (len(token) >= ID_PREFIX_MIN and _HEX_ID.fullmatch(token) is not None
            and any(c.isdigit() for c in token))


def id_documents(searcher, session_id: str, *, prefix: bool, hex_only: bool = False) -> list[int]:
    """The numbers (ascending) of the session documents whose id is ``session_id``; when there
    are none and ``prefix``, of those whose id starts with it (:data:`ID_PREFIX_CAP` at most),
    only hex ids (UUIDs) with ``hex_only``: an id made of a date and words (SpecStory's
    ``2025-04-28_18-51-…``) is not the one a search word that starts it names. The one resolver
    of ``Engine.find_session`` (``crabsearch show``, MCP's ``list_messages``) and of the search
    (:meth:`Sessions.by_id`)."""
    docs = term_docs(searcher, "session_id", session_id)
    if docs or not prefix:
        return docs
    found = []
    reader = searcher.reader()
    for sid in reader.expand_prefix("session_id", session_id):
        sid = sid.decode("utf-8", "replace") if isinstance(sid, bytes) else sid
        if hex_only and not _HEX_ID.fullmatch(sid):
            continue
        found += term_docs(searcher, "session_id", sid)
        if len(found) >= ID_PREFIX_CAP:
            break
    return sorted(found[:ID_PREFIX_CAP])


def _ms(fields: dict) -> int:
    """A session document's ``updated`` time (ms; 0 for none), from its stored ``meta``."""
    return (fields.get("meta") or {}).get("updated") or 0


def passing_sessions(searcher, pq, keys: SegmentKeys) -> set[int]:
    """The session documents (numbers) of the sessions that the filters of ``pq`` allow (its
    words aside), as :meth:`Sessions.recent` lists them: by their session document, or with
    ``role:`` by their messages of that role; ``since:``/``until:`` by each document's time."""
    clauses = filters(pq, sessions=True, time=False)
    query = all_of(filters(pq, sessions=False, time=False) if clauses is None else clauses)
    allowed = {keys.key_of(searcher, d) for d in _newest_per_session(searcher, query, keys, time_window(pq), None)}
    return {d for d in searcher.document_numbers(kind="s") if keys.key_of(searcher, d) in allowed}


def _newest_per_session(searcher, query, keys: SegmentKeys, window: tuple | None, limit: int | None,
                        skip: frozenset[str] = frozenset()) -> list[int]:
    """The global number of the newest document matching ``query`` inside the ``since:``/
    ``until:`` ``window`` (``filtering.in_window``; None: any time) of each of the ``limit``
    sessions (None: all; never one of ``skip``, session keys) whose such document is newest,
    newest first (a tie: the later document), with the
    times read from the column cache: what a search sorted by ``updated`` and collapsed by
    session should give (Whoosh's keeps a session's first match in document order)."""
    newest: dict[str, tuple[int, int]] = {}
    context = searcher.context()
    for sub, offset in searcher.leaf_searchers():
        m = query.matcher(sub, context)
        if not m.is_active():
            continue
        updated, skeys = keys.updated(sub), keys.keys(sub)
        for d in m.all_ids():
            t = updated[d]
            if window is None or in_window(t, window):
                key = skeys[d]
                if key in skip:
                    continue
                got = newest.get(key)
                if got is None or (t, offset + d) > got:
                    newest[key] = (t, offset + d)
    if limit is None:
        return [doc for _, doc in sorted(newest.values(), reverse=True)]
    return [doc for _, doc in heapq.nlargest(limit, newest.values())]


def _rank(session: Session) -> tuple:
    """How :meth:`Sessions.dedupe` orders the sessions holding one message: a session before a
    subagent, then the most recently updated (one with no time last)."""
    t = session.updated
    return (session.parent_session_id is None, t is not None, t.timestamp() if t else 0.0)

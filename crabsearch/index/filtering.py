"""Filters of a query (``agent:``, ``project:``, ``role:``, ``since:``/``until:``, and every other
entry of ``crabsearch.filters.FILTERS``, by its :class:`~crabsearch.filters.Narrow`) as Whoosh
clauses that narrow without scoring, and the field values they match (written by the index
writer: ``hour``, ``projname``, and each filter's own field)."""

from __future__ import annotations

import os
from bisect import bisect_right
from datetime import datetime, timezone

from whoosh.matching import NullMatcherClass, WrappingMatcher
from whoosh.query import And, Or, Prefix, Query, Term, TermRange
from whoosh.query.wrappers import WrappingQuery
from whoosh.reading import TermNotFound

from ..filters import FILTERS
from ..query import ParsedQuery
from .union import posting_blocks, without_deleted


def hour_key(ts: datetime | None) -> str | None:
    """The ``hour`` field value of a time: ``YYYYMMDDHH`` in UTC (None stays None)."""
    return None if ts is None else ts.astimezone(timezone.utc).strftime("%Y%m%d%H")


def folder_of(project: str) -> str:
    """The last segment of a working directory as spelled (``/home/me/WebApp/`` -> ``WebApp``;
    ``\\`` separators too; ``""`` for none)."""
    return project.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]


def project_name(project: str | None) -> str | None:
    """The ``projname`` field value: the working directory's last segment, lowercased."""
    return (folder_of(project).lower() or None) if project else None


class ZeroScore(WrappingQuery):
    """The documents of ``child``, each with score 0: a filter. Its matcher is the child's,
    wrapped with boost 0, so it stays lazy (``skip_to``). Whoosh's ``ConstantScoreQuery(q, 0)``
    is not a filter here: when the search keeps matchers current (as crabsearch's collectors
    do, for matched terms) it returns the child's matcher unchanged, so a ``since:`` range or a
    ``project:/path`` prefix would add about 1.0 to every score it lets through."""

    def matcher(self, searcher, context=None):
        m = self.child.matcher(searcher, context)
        return m if isinstance(m, NullMatcherClass) else WrappingMatcher(m, boost=0.0)

    def __eq__(self, other):
        """The same filter: the same child query (Whoosh's ``WrappingQuery`` compares by identity)."""
        return type(other) is type(self) and self.child == other.child

    def __hash__(self):
        return hash((type(self).__name__, self.child))


def _zero(q: Query) -> Query:
    """``q`` as a filter that adds nothing to the score: a term with boost 0, anything else in a
    :class:`ZeroScore`. Both stay lazy (skip_to), where Whoosh's ``ConstantScoreQuery`` first
    reads every id of its posting list (all message documents, for ``kind:m``)."""
    if isinstance(q, Term):
        return Term(q.fieldname, q.text, boost=0.0)
    return ZeroScore(q)


def is_filter(q: Query) -> bool:
    """True for a clause of :func:`filters` (it adds 0 to a document's score)."""
    return isinstance(q, ZeroScore) or is_filter_term(q)


def split_filters(query: Query) -> tuple[Query, list[Query]]:
    """``(query, filter clauses)``: an ``And`` of one query and filter clauses (:func:`is_filter`)
    gives that query and the clauses; any other query is itself, with none."""
    if type(query) is And:
        main = [q for q in query.subqueries if not is_filter(q)]
        if len(main) == 1:
            return main[0], [q for q in query.subqueries if is_filter(q)]
    return query, []


def passing(searcher, docnums: list[int], clauses: list[Query]) -> list[int]:
    """The documents of ``docnums`` (ascending) that match every query of ``clauses``, found by
    skipping one matcher to each of them (never reading the clauses' whole posting lists)."""
    m = And(clauses).matcher(searcher, searcher.boolean_context())
    out = []
    for d in docnums:
        if not m.is_active():
            break
        if m.id() < d:
            m.skip_to(d)
        if m.is_active() and m.id() == d:
            out.append(d)
    return out


def is_filter_term(q: Query) -> bool:
    """True for a filter clause that is one term (``agent:``, ``role:``, a project's name,
    ``kind``): a ``Term`` of boost 0 (:func:`_zero`)."""
    return type(q) is Term and q.boost == 0.0


def term_docs(searcher, fieldname: str, text: str) -> list[int]:
    """The numbers of the live documents of ``searcher`` (every segment) whose ``fieldname``
    holds the term ``text``, in order: Whoosh's reader postings, which score nothing. The same
    documents as ``Term(fieldname, text).docs(searcher)``, which builds a BM25 scorer in every
    segment for each lookup (a search checks each hit's message id for copies in other sessions
    with one). An unknown field or term gives ``[]``."""
    if fieldname not in searcher.schema:
        return []
    try:
        return list(searcher.reader().postings(fieldname, searcher.schema[fieldname].to_bytes(text)).all_ids())
    except TermNotFound:
        return []


def leaf_of(searcher, docnum: int):
    """``(leaf searcher, its document number)`` of global document ``docnum``."""
    leaves = searcher.leaf_searchers()
    i = bisect_right([off for _, off in leaves], docnum) - 1
    sub, offset = leaves[i]
    return sub, docnum - offset


def live_document(searcher, fieldname: str, text: str, near: int | None = None) -> dict | None:
    """The stored fields of the live document of ``searcher`` whose ``fieldname`` holds ``text``
    (a unique key: a transcript's session document by ``mkey``), or None. ``near``, a global
    document number, names the segment asked first: a transcript's session document is written
    with its messages, so it is usually in a hit message's segment, one term lookup instead of
    one in every segment (a search looks up a session document per row shown). Only when it is
    not there are all segments asked (``Searcher.document``)."""
    if near is not None:
        sub, _ = leaf_of(searcher, near)
        docs = term_docs(sub, fieldname, text)  # a segment's postings leave its deleted documents out
        if docs:
            return sub.stored_fields(docs[0])
    return searcher.document(**{fieldname: text})


def term_filter_ids(searcher, clauses: list[Query]) -> set[int] | None:
    """The documents of the leaf searcher ``searcher`` that match every clause of ``clauses``
    when each is a filter term (``agent:``, ``role:``, a project's name, ``kind``: a ``Term``
    of boost 0), read block by block from their posting lists (deleted documents included: the
    caller's own postings leave them out). None when a clause is anything else (a project path,
    a time range), for the caller to walk matchers instead."""
    if not all(map(is_filter_term, clauses)):
        return None
    out: set[int] | None = None
    reader = searcher.reader()
    for q in clauses:
        raw = searcher.schema[q.fieldname].to_bytes(q.text) if q.fieldname in searcher.schema else None
        if raw is None or (q.fieldname, raw) not in reader:
            return set()
        ids: set[int] = set()
        for block, _ in posting_blocks(without_deleted(reader.postings(q.fieldname, raw))[0]):
            ids.update(block)
        out = ids if out is None else out & ids
        if not out:
            return out
    return out


def time_window(pq: ParsedQuery) -> tuple[int | None, int | None] | None:
    """``since:``/``until:`` as ``(from_ms, to_ms)`` on the ``updated`` column, both cut to the
    hour (UTC) like the ``hour`` field: a document passes when it has a time and
    ``from_ms <= updated < to_ms`` (None: open). None when the query has neither."""
    if not (pq.since or pq.until):
        return None

    def floor(ts):
        if ts is None:
            return None
        utc = ts.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)
        return int(utc.timestamp() * 1000)
    return floor(pq.since), floor(pq.until)


def in_window(updated: int, window: tuple[int | None, int | None]) -> bool:
    """True when a document's ``updated`` time (ms, 0 = none) is inside :func:`time_window`."""
    lo, hi = window
    return bool(updated) and (lo is None or updated >= lo) and (hi is None or updated < hi)


def filters(pq: ParsedQuery, *, sessions: bool, kind: bool = True, time: bool = True) -> list[Query] | None:
    """Filter clauses for message documents, or for session documents when ``sessions``: one per
    filter set in ``pq``, in :data:`~crabsearch.filters.FILTERS` order, as its ``Narrow`` says
    (``in:tools`` has none: it changes the fields searched, ``querying``).

    ``time=False`` leaves out ``since:``/``until:``, for a caller that checks
    :func:`time_window` itself (the engine's collectors read the time of each match from a
    column cache: cheaper than Whoosh's range, which reads every posting of every hour in it).
    ``kind=False`` leaves out the ``kind`` term: for a query on MESSAGE_FIELDS or SESSION_FIELDS,
    whose fields only ever occur on that kind of document, it is implied, and intersecting with
    it would cost a skip per matching document. Returns None
    when the filters exclude every document of that kind (``role:`` excludes session documents:
    only messages have a role).
    """
    out: list[Query] = [Term("kind", "s" if sessions else "m")] if kind else []
    timed = False
    for f in FILTERS.values():
        value = pq.values.get(f.name)
        if value is None or value is False:
            continue
        narrow = f.narrow
        if narrow.kind == "term":
            out.append(Term(narrow.field, value))
        elif narrow.kind == "messages":
            if sessions:
                return None
            out.append(Term(narrow.field, value))
        elif narrow.kind == "project":
            out.append(_project(value))
        elif narrow.kind == "time" and time and not timed:
            timed = True
            out.append(TermRange("hour", hour_key(pq.since), hour_key(pq.until), startexcl=False, endexcl=True))
    return [_zero(q) for q in out]


def matching_nothing(searcher, pq: ParsedQuery) -> list[str]:
    """The filters of ``pq`` that no document of the index matches on its own, as the query
    language writes them (``project:nope``), in :data:`~crabsearch.filters.FILTERS` order:
    which filter emptied a result (``since:``/``until:`` are not looked at: a time window
    matching nothing says so plainly). A term filter costs a term lookup; ``project:/path``
    walks the paths below it."""
    out = []
    for f in FILTERS.values():
        value = pq.values.get(f.name)
        if value is None or value is False or f.narrow.kind == "time":
            continue
        clause = _project(value) if f.narrow.kind == "project" else Term(f.narrow.field, value)
        if not clause.matcher(searcher).is_active():
            out.append(f"{f.name}:{value}")
    return out


def _project(project: str) -> Query:
    """``project:NAME`` (the working directory's last folder, any case) or ``project:/path``
    (the folder itself or anything below it, not ``/home/me/webapp-old`` for ``/home/me/webapp``)."""
    if "/" in project or "\\" in project:
        path = os.path.expanduser(project).rstrip("/") or "/"
        return Or([Term("project", path), Prefix("project", path.rstrip("/") + "/")])
    return Term("projname", project.lower())

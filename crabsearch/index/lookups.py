"""The documents the search asks for by what they are: the Whoosh query objects for them are
built here, so that ``crabsearch.search`` imports nothing from Whoosh.

Every function returns global document numbers of the searcher it is given (ascending, live
documents only) or a query object to hand back to ``index`` (``collect.best_per_session``, a
searcher's ``search``); none of them scores.
"""

from __future__ import annotations

from whoosh.query import And, Or, Query, Term
from whoosh.reading import TermNotFound


def all_of(clauses: list[Query]) -> Query:
    """The documents matching every clause of ``clauses`` (at least one): the clause itself when
    there is one."""
    return clauses[0] if len(clauses) == 1 else And(clauses)


def within(query: Query, clauses: list[Query]) -> Query:
    """``query`` restricted to the documents matching every filter clause of ``clauses`` (``[]``:
    none), scored as ``query`` (filter clauses score 0: ``filtering.filters``)."""
    return And([query, *clauses])


def matching(searcher, query: Query) -> list[int]:
    """The documents matching ``query``, found by walking its matcher (each step skips to the
    next document every clause holds) rather than by ``Query.docs``: Whoosh's intersection
    (``IntersectionMatcher.all_ids``) lists every document of each clause into a set first, so an
    ``And`` of a rare term with ``kind:s`` and an agent read all of that agent's documents."""
    try:
        m = query.matcher(searcher, searcher.boolean_context())
    except TermNotFound:
        return []
    out = []
    while m.is_active():
        out.append(m.id())
        m.next()
    return out


def transcript_messages(searcher, query: Query, fkey: str) -> list[int]:
    """The message documents of transcript ``fkey`` that match ``query``."""
    return matching(searcher, And([query, Term("fkey", fkey), Term("kind", "m")]))


def continued_from(searcher, agent: str, session_id: str) -> list[int]:
    """The session documents of ``agent`` whose ``continued_in`` is ``session_id`` (the sessions
    that were handed to it)."""
    if not searcher.doc_frequency("continued_in", session_id):  # most sessions: no matcher built at all
        return []
    return matching(searcher, And([Term("kind", "s"), Term("agent", agent), Term("continued_in", session_id)]))


def session_documents(searcher, agent: str, session_ids: list[str]) -> list[int]:
    """The session documents of ``agent`` whose session id is one of ``session_ids`` (a
    non-empty list; several transcripts can carry one id)."""
    q = And([Term("kind", "s"), Term("agent", agent), Or([Term("session_id", s) for s in session_ids])])
    return matching(searcher, q)

"""The search engine: queries, best hit per session, context windows, session paging.

This is the only layer above ``crabsearch.index`` that holds an index searcher, and it imports
nothing from Whoosh: the query objects are built in ``crabsearch.index`` (``querying``,
``filtering``, ``lookups``). The TUI and the CLI call :class:`Engine` and get plain dataclasses
back (``crabsearch.hits``). Where each rule lives:

* ``engine``: :class:`Engine`, the facade (search, recent, window, page, find_session, locate,
  matching_messages, session_now, skipped_lines, facets), its searcher and caches, and
  damaged-index handling (``_guarded``);
* ``ladder``: the rungs (phrase, all, session, repair, any), filling a page from lower rungs,
  titles and summaries per word, and the threshold rule that makes a page's rows independent of
  its size; how a row's score is composed and bounded is ``crabsearch.ranking`` (with every
  weight);
* ``gathering``: the session-wide rungs' scan of every matching message and their entries;
* ``scoring``: how the session-wide rungs score a session: proximity windows of its messages and
  its topic score (session-level BM25 of the words, for many-word descriptions);
* ``scans``: the scans one search leaves for the next (typing a query a key at a time);
* ``sessions``: session documents, copies of one message in several sessions, subagent links
  and titles, result rows, the recent-sessions and session-id listings;
* ``windows``: context windows and session pages read from the transcripts by stored offsets;
* ``skipped``: where a transcript's skipped lines were, for the session view's placeholders;
* ``snapshot``: the recent sessions as last listed, kept beside the index for the app's next
  first frame while the index is unchanged;
* ``caps``: every cap (weights are in ``crabsearch.ranking``).

Rules (the reference designs in ``shared/reference/seed-designs.md``):

* **Best hit per session**: results are collapsed on the session key, so each session appears
  once, ranked by its best document; one long session cannot push others off the page.
* A session whose title or summary matches is anchored on its first real user prompt.
* Any text is a valid query: ``crabsearch.query`` parses it without ever raising, and
  ``index.querying`` builds query objects directly (no Whoosh query parser), so punctuation,
  ``AND``, ``*`` or an unbalanced quote never raise.
* Window and session text is read from the transcript by stored byte offsets (a ``pread`` per
  record), never from the index.
"""

from __future__ import annotations

from ..hits import (AmbiguousSession, Hit, Item, Page, SearchResult, SessionRef, UNAVAILABLE, clamp_window,
                    cut_bytes)
from ..index.store import IndexDamaged
from .caps import DEFAULT_AFTER, DEFAULT_BEFORE, DEFAULT_LIMIT, MAX_ITEM_BYTES, MAX_WINDOW
from .engine import Engine
from .skipped import SkippedLine

__all__ = ["AmbiguousSession", "IndexDamaged", "DEFAULT_AFTER", "DEFAULT_BEFORE", "DEFAULT_LIMIT", "Engine", "Hit",
           "Item", "MAX_ITEM_BYTES", "MAX_WINDOW", "Page", "SearchResult", "SessionRef", "SkippedLine",
           "UNAVAILABLE", "clamp_window", "cut_bytes"]

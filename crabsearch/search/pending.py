"""A cheap look at the transcripts the index does not hold yet, while a build runs.

A first build reads the newest transcripts first (``Indexer`` sorts a build's files by mtime):
on a history of gigabytes, a word said only in older sessions finds nothing for minutes. While
a build runs, :meth:`Unindexed.scan` looks at the transcripts the manifest does not hold as they
are now, oldest first (the build reaches them last): a byte search of each file for every query
word (as typed, in lower case, upper case and capitalised; ``\\u`` escapes for other scripts), then,
for a file holding them all, its reader, and the first message whose indexed text
(``writer.index_text_fields``; the session's title too) holds every query term
(``analysis.terms``). Each such file gives one row with ``Hit.indexed`` False and route
``unindexed`` and the hit message alone in its window: the build replaces it with the indexed
row when it gets there. A word spelled otherwise in the file (accents the query lacks) is not
found this way. Only plain words, quoted phrases (their words) and ``agent:`` are looked at: a
query with other filters, exclusions or prefixes is not scanned, nor one whose words are all
shorter than :data:`MIN_WORD` ASCII characters.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path

from ..hits import Hit, Item, SessionRef, cut_around
from ..index.analysis import terms
from ..index.highlight import term_spans
from ..index.manifest import Manifest, file_key
from ..query import parse
from ..redact import redact_kept
from ..sources import SOURCES
from ..sources.base import container_of
from .caps import MAX_ITEM_BYTES

ROUTE = "unindexed"
MIN_WORD = 3
"""A query whose words are all shorter (ASCII) is not scanned: nearly every transcript holds them."""
SLICE = 1 << 20
"""Bytes searched per call (:func:`_find`)."""
KEPT_QUERIES = 4
"""What the transcripts gave is kept for this many queries (:meth:`Unindexed.scan`)."""
LIST_SECONDS = 2.0
"""The unindexed files are listed again (a stat per transcript) at most this often."""


def needles(word: str) -> list[bytes]:
    """The byte strings that ``word`` may appear as in a transcript (JSON text, UTF-8)."""
    forms = {word, word.lower(), word.upper(), word.capitalize()}
    out = {f.encode("utf-8") for f in forms}
    out |= {f.encode("ascii", "backslashreplace").replace(b"\\x", b"\\u00") for f in forms if not f.isascii()}
    return sorted(out)


class Unindexed:
    """The transcripts of ``indexer``'s sources that the index in its ``index_dir`` does not hold
    (not in the manifest, or changed since), listed at most every :data:`LIST_SECONDS`."""

    def __init__(self, indexer):
        from ..index.writer import Indexer

        # its own: discover() sets attributes that a refresh running meanwhile reads
        self.indexer = Indexer(indexer.index_dir, env=indexer.env, home=indexer.home, sources=indexer.sources,
                               index_tool_output=indexer.index_tool_output, extra_dirs=indexer.extra_dirs)
        self._lock = threading.Lock()
        self._listed: tuple[float, list] = (0.0, [])
        self._looked: OrderedDict[tuple, dict] = OrderedDict()
        """By (query, mask): what each transcript gave, ``{path: (size, mtime_ns, row or None)}``,
        so that a search stopped by the next one (each commit of the build searches again) goes
        on where it stopped."""

    def files(self) -> list[tuple[object, str, int, int]]:
        """``[(source, path, size, mtime_ns)]``, oldest first (by mtime)."""
        with self._lock:
            at, files = self._listed
            if time.monotonic() - at < LIST_SECONDS:
                return files
            known = Manifest.load(self.indexer.index_dir).files
            out = []
            for src, path in self.indexer.discover():
                try:
                    size, mtime_ns, _ = src.stat(path)
                except Exception:  # noqa: BLE001 - gone, unreadable: nothing to look at
                    continue
                old = known.get(path)
                if not old or old["size"] != size or old["mtime_ns"] != mtime_ns:
                    out.append((mtime_ns, src, path, size))
            files = [(src, path, size, mtime_ns) for mtime_ns, src, path, size in sorted(out, key=lambda t: t[0])]
            self._listed = (time.monotonic(), files)
            return files

    def scan(self, query: str, *, limit: int, skip: set[str] = frozenset(), seconds: float = 3.0,
             stop: threading.Event | None = None, mask: bool = True) -> list[Hit]:
        """Up to ``limit`` rows for ``query`` from the unindexed transcripts (see the module
        docstring), none for a session key (``agent:session_id``) in ``skip``; stops after
        ``seconds`` or once ``stop`` is set. Never raises for a transcript."""
        pq = parse(query, agents=tuple(SOURCES))
        if (set(pq.values) - {"agent"}) or pq.excluded or pq.prefixes or limit <= 0:
            return []
        words = [w for text in (*pq.words, *pq.phrases) for w in text.split() if any(c.isalnum() for c in w)]
        wanted = set(terms(" ".join(words)))
        if not wanted or not any(len(w) >= MIN_WORD or not w.isascii() for w in words):
            return []  # "z" is in every transcript: each would be read
        finding = [needles(w) for w in words]
        deadline = time.monotonic() + seconds
        hits: list[Hit] = []
        seen = set(skip)
        contents: dict[str, bool] = {}
        with self._lock:
            looked = self._looked.pop((query, mask), None) or {}
            self._looked[(query, mask)] = looked
            while len(self._looked) > KEPT_QUERIES:
                self._looked.popitem(last=False)
        for src, path, size, mtime_ns in self.files():
            if len(hits) >= limit or time.monotonic() > deadline or (stop is not None and stop.is_set()):
                break
            if pq.agent and src.agent != pq.agent:
                continue
            known = looked.get(path)
            if known is not None and known[:2] == (size, mtime_ns):
                hit = known[2]
            else:
                container = container_of(path)
                if container not in contents:
                    contents[container] = _holds(container, finding)
                hit = _row(src, path, wanted, mask) if contents[container] else None
                looked[path] = (size, mtime_ns, hit)
            if hit is not None and key_of(hit) not in seen:
                seen.add(key_of(hit))
                hits.append(hit)
        return hits


def _holds(path: str, finding: list[list[bytes]]) -> bool:
    """True when the file at ``path`` holds one of the needles of every word."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return all(any(_find(data, n) for n in forms) for forms in finding)


def _find(data: bytes, needle: bytes) -> bool:
    """``needle in data``, :data:`SLICE` bytes at a time: another thread (the app's, drawing the
    keys typed meanwhile) runs between the slices, where one search of a 100 MB transcript held
    the interpreter for its whole length."""
    for start in range(0, len(data), SLICE):
        if data.find(needle, start, start + SLICE + len(needle) - 1) >= 0:
            return True
    return False


def _row(src, path: str, wanted: set[str], mask: bool) -> Hit | None:
    """The row of the transcript at ``path``: its first message whose indexed text holds every
    term of ``wanted`` (else its title), or None."""
    from ..index.documents import index_text_fields

    try:
        read = src.read(Path(path))
    except Exception:  # noqa: BLE001 - a transcript the build will name as unreadable
        return None
    s = read.session
    for m in read.messages:
        text = " ".join(index_text_fields(m).values())
        if text and wanted <= set(terms(text)):
            first = next((a for a, _, _ in term_spans(m.text, wanted)), None)
            shown, cut = cut_around(redact_kept(m.text) if mask else m.text, MAX_ITEM_BYTES, first)
            item = Item(m.message_index, m.role.value, m.label, m.timestamp, shown, truncated=cut, hit=True)
            return Hit(SessionRef(s, file_key(path)), 0.0, m.message_index, m.role.value, [item],
                       terms=sorted(wanted), route=ROUTE, indexed=False)
    if s.title and wanted <= set(terms(s.title)):
        return Hit(SessionRef(s, file_key(path)), 0.0, 0, "user", [], terms=sorted(wanted), route=ROUTE,
                   indexed=False)
    return None


def key_of(hit: Hit) -> str:
    """A row's session key, ``agent:session_id`` (what :meth:`Unindexed.scan` skips)."""
    return f"{hit.session.agent}:{hit.session.session_id}"


"""Compiling a parsed query (``crabsearch.query.ParsedQuery``) into Whoosh queries.

The plain words go down a ladder and the search stops at the first rung that finds something
(README.md, Query language; ``docs/guide.md``, The query language in depth):

1. ``phrase``: the words adjacent and in order (two or more words);
2. ``all``: every word in one message (or in the title/summary);
3. ``repair``: a word with no postings is replaced by the closest word of the index's own
   vocabulary (Damerau-Levenshtein distance <= 2, same first letter) that occurs in at least
   two documents, then ``all`` again;
4. ``any``: any of the words.

Quoted phrases, ``word*`` prefixes and filters are required on every rung; ``-word`` excludes.
In a pasted line (``query.reads_as_pasted``) a word's volatile parts (``crabsearch.volatile``)
are not required: only its stable part is, the whole word counts when a message holds it
(``Compiler.weak``).
Filters are part of the query itself (constant score 0), so they narrow before the result
limit. Field boosts come from :data:`~crabsearch.ranking.WEIGHTS`.
"""

from __future__ import annotations

from whoosh.query import And, AndMaybe, Or, Phrase, Prefix, Query, Term
from whoosh.support.levenshtein import distance

from ..query import ParsedQuery, reads_as_pasted
from ..ranking import WEIGHTS
from .analysis import folded_contexts, group_leaves, phrase_terms
from .phrases import TextPhrase
from .union import FlatOr

MESSAGE_FIELDS = ("user", "assistant", "acting", "tool", "compaction")
SESSION_FIELDS = ("title", "summary")
TOOL_FIELDS = ("tool_output", "tool")
PHRASE_FIELDS = {"user", "assistant", "acting", "compaction", "summary", "title", "tool_output"}
MIN_REPAIR_FREQ = 2
"""A spelling repair prefers a word found in at least this many messages; a word found in fewer
is used only when no such word is close (``Compiler._closest``)."""
MAX_PREFIX_TERMS = 64
"""A ``prefix*`` is searched as the words it expands to in a field (a flat union, scored term at
a time when it is the whole query), at most this many: beyond, the ones in the most documents
(``_expand``)."""


def _any_field(term: str, fields) -> Query:
    return FlatOr([Term(f, term, boost=WEIGHTS[f]) for f in fields])


def _phrase(terms: list[str], fields, text: bool = False) -> Query:
    """The exact phrase of ``terms`` in any of ``fields``; ``text``: as running text only (a
    span within one path or identifier does not count: ``index.phrases.TextPhrase``)."""
    if len(terms) == 1:
        return _any_field(terms[0], fields)
    cls = TextPhrase if text else Phrase
    return FlatOr([cls(f, terms, boost=WEIGHTS[f]) for f in fields if f in PHRASE_FIELDS])


STOPWORDS = frozenset("""a an and are as at be but by for from has have how i if in into is it its
me my no not of on or our so that the their then there these this to was we what when where which
who why will with you your""".split())
"""A short English stopword list: dropped from the ``all``/``any`` rungs when the query has other
words (a quoted phrase, or the phrase rung, keeps them: ``"to be or not to be"`` still matches)."""


def _letters(word: str) -> str:
    """``word``'s letters and digits, its punctuation left out."""
    return "".join(c for c in word if c.isalnum())


class Compiler:
    """Builds the rungs of the ladder for one parsed query against one searcher (the searcher
    is only consulted for spelling repair: which words have postings, and their neighbours).

    Words are analyzed into groups (``analysis.groups``): an identifier matches whole or by all of
    its parts (``getUserById`` or ``get user by id``); phrases use ``analysis.phrase_terms``.
    """

    def __init__(self, pq: ParsedQuery, searcher, typing: str | None = None, repair: bool = True):
        self.pq = pq
        self.searcher = searcher
        self.repair = repair
        """False: an unknown word is never spelling-repaired (``Engine.search(repair=False)``)."""
        self._typing = {g[0] for g, _ in group_leaves(typing)} if typing in pq.words else set()
        """The last word while it is being typed (``Engine.search(typing=True)``): read as the
        start of a longer word (:meth:`_completion`), not repaired."""
        self._leaves: dict[tuple[str, ...], list[str]] = {}  # group -> its parts in order
        self._spelled: dict[tuple[str, ...], str] = {}  # group -> the word as typed
        self._folded: dict[str, list[str]] = {}  # folded word -> its folded letters in context
        words, weak_words, reduced = pq.words, [], set()
        if reads_as_pasted(pq.text):
            from ..volatile import stable_part  # its patterns compiled for a pasted line only

            stable = [stable_part(w) for w in pq.words]
            if any(stable):
                words = [s for s in stable if s]
                weak_words = [w for w, s in zip(pq.words, stable) if s != w]
                reduced = {s for w, s in zip(pq.words, stable) if s and s != w}
        for w in words:
            for g, leaves in group_leaves(w):
                self._leaves.setdefault(tuple(g), leaves)
                if w not in reduced:  # a path's stable part is no word the user typed
                    self._spelled.setdefault(tuple(g), w)
            for word, contexts in folded_contexts(w).items():
                self._folded.setdefault(word, contexts)
        all_groups = _dedupe_groups([list(g) for g in self._leaves])
        content = [g for g in all_groups if not (len(g) == 1 and g[0] in STOPWORDS)]
        self.groups = content or all_groups
        self.weak: list[list[str]] = []
        """The word groups of a pasted line's volatile parts (``crabsearch.volatile``: line and
        column numbers, addresses, ids, timestamps, a path's changing folders), whole: never
        required, they add to a message's score on the ``all`` and ``repair`` rungs when it
        holds them (:meth:`with_weak`); the session-wide rungs leave them out."""
        for w in weak_words:
            for g, leaves in group_leaves(w):
                if tuple(g) not in self._leaves and g not in self.weak:
                    self._leaves[tuple(g)] = leaves
                    self.weak.append(g)
        self.phrase_words = phrase_terms(" ".join(pq.words))
        analyzed = [(p, phrase_terms(p)) for p in pq.phrases]
        self.phrases = [t for _, t in analyzed if t]
        self.typed_phrases = [p for p, t in analyzed if t]
        """The quoted phrases as typed, one for each of :attr:`phrases`."""
        self.prefixes = [p.lower() for p in pq.prefixes]
        self.excluded = [t for t in (phrase_terms(x) for x in pq.excluded if not _is_prefix(x)) if t]
        self.excluded_prefixes = [x.rstrip("*").lower() for x in pq.excluded if _is_prefix(x)]
        """``-word*``: sessions holding any word that starts so are left out."""
        self.corrections: dict[str, str] = {}
        self.rare: set[str] = set()
        """The words of ``corrections`` repaired to a word found in one message only."""
        self._closest_cache: dict[str, str | None] = {}
        self._prefix_cache: dict[tuple, Query] = {}
        self.capped: dict[str, int] = {}
        """Each ``prefix*`` with more than :data:`MAX_PREFIX_TERMS` words in a field, and its
        most words in one field: it was searched as the commonest of them."""
        self._postings_cache: dict[tuple[str, ...], bool] = {}
        self._once: set[str] = set()  # repairs found in one message only

    @property
    def terms(self) -> list[str]:
        """Every positive term (words, phrase words, ``prefix*`` entries, corrections), for
        highlighting; an identifier's parts also as one run entry (``get user by id``), which
        the highlighter shows only where the parts stand in a row (``highlight.term_spans``),
        unless one of them is also a word of the query on its own."""
        alone = {g[0] for g in self.groups if len(g) == 1}
        out = [t for g in self.groups for t in g]
        out += [" ".join(g[1:]) for g in self.groups if len(g) > 2 and not alone.intersection(g[1:])]
        out += [t for p in self.phrases for t in p]
        out += [g[0] for g in self.weak]  # a volatile part whole, where it matched
        out += [p + "*" for p in self.prefixes]  # highlighted by prefix (highlight.spans)
        return _dedupe(out + list(self.corrections.values()))

    @property
    def empty(self) -> bool:
        """True when nothing positive is left to match after analysis."""
        return not (self.groups or self.phrases or self.prefixes)

    def fields(self, fields):
        """The fields searched: ``in:tools`` searches tool output (and tool names) only."""
        return TOOL_FIELDS if self.pq.in_tools else fields

    def group_query(self, group: list[str], fields) -> Query:
        """One word group: the whole form, or its parts adjacent and in order (``getUserById``
        is ``getuserbyid`` or the phrase ``get user by id``, never
        ``get``, ``user``, ``by`` and ``id`` anywhere in a message). A field without positions
        (tool names) has the whole form only."""
        whole = _any_field(group[0], fields)
        if len(group) == 1:
            return whole
        parts = self.leaves(group)
        in_order = _phrase(parts, fields) if len(parts) > 1 else _any_field(parts[0], fields)
        return FlatOr([whole, in_order])

    def leaves(self, group: list[str]) -> list[str]:
        """A group's parts along the positions, duplicates kept (``foo.foo``: ``foo foo``)."""
        return self._leaves.get(tuple(group)) or group[1:] or group[:1]

    def required(self, fields) -> list[Query]:
        """Quoted phrases and prefixes: required on every rung."""
        out = [_phrase(p, fields) for p in self.phrases]
        out += [self.prefix_query(p, fields) for p in self.prefixes]
        return out

    def phrase_query(self, terms: list[str], fields) -> Query:
        """One quoted phrase's ``terms`` in ``fields`` (``in:tools``: tool output), as every
        rung requires it."""
        return _phrase(terms, self.fields(fields))

    def prefix_query(self, prefix: str, fields) -> Query:
        """``prefix*`` in ``fields``: the words it expands to, each as a term (one flat union,
        scored like Whoosh's ``Prefix``: the sum of the words' BM25F scores), at most
        :data:`MAX_PREFIX_TERMS` of them per field, the commonest (``_expand``; a prefix cut so
        is in :attr:`capped`)."""
        key = (prefix, tuple(fields))
        if key not in self._prefix_cache:
            parts: list[Query] = []
            for f in fields:
                words, count = _expand(self.searcher, f, prefix, MAX_PREFIX_TERMS)
                if count > len(words):
                    self.capped[prefix] = max(count, self.capped.get(prefix, 0))
                parts += [Term(f, w, boost=WEIGHTS[f]) for w in words]
            self._prefix_cache[key] = FlatOr(parts)
        return self._prefix_cache[key]

    def rungs(self, fields) -> list[tuple[str, Query]]:
        """``(route, query)`` for the per-document rungs ``phrase`` and ``all`` (and ``repair``,
        ``any`` for session documents), over ``fields``."""
        fields = self.fields(fields)
        required = self.required(fields)
        if not self.groups:  # only quoted phrases and prefixes: "phrase" when it is phrases alone
            return [("phrase" if self.phrases and not self.prefixes else "all", self.finish(required))]
        out: list[tuple[str, Query]] = []
        if len(self.groups) == 1 and len(self.groups[0]) > 1 and self._known(self.groups[0][0]):
            # A lone identifier that the index knows whole (getUserById, src/auth/token-store.ts):
            # its whole term is the exact match, and cheaper than the phrase of its parts.
            out.append(("phrase", self.finish(required + [_any_field(self.groups[0][0], fields)])))
        elif len(self.phrase_words) > 1:
            # Words typed apart count as running text, not inside one path or identifier
            # (index.phrases); one identifier's parts (getUserById: get user by id) match anywhere.
            phrase = _phrase(self.phrase_words, fields, text=len(self._leaves) > 1)
            out.append(("phrase", self.finish(required + [phrase])))
        out.append(("all", self.with_weak(self.finish(required + [self.group_query(g, fields) for g in self.groups]),
                                          fields)))
        repaired = self.repaired_groups()
        if repaired != self.groups:
            out.append(("repair", self.with_weak(
                self.finish(required + [self.group_query(g, fields) for g in repaired]), fields)))
        return out

    def with_weak(self, query: Query, fields) -> Query:
        """``query``, its score raised by the :attr:`weak` groups a document holds (Whoosh's
        ``AndMaybe``: the documents are ``query``'s)."""
        if not self.weak:
            return query
        return AndMaybe(query, FlatOr([self.group_query(g, fields) for g in self.weak]))

    def any_query(self, fields, groups=None) -> Query:
        """Any of the word groups (required parts still required); with no word groups (only
        quoted phrases or prefixes: ``auth*``), the required parts alone. (An empty union there
        matched nothing: a title scan of ``auth*`` found no session, so a session's title score
        counted only when the rung's own title list held it, and the page depended on its size.)"""
        fields = self.fields(fields)
        groups = self.groups if groups is None else groups
        anyof = [FlatOr([self.group_query(g, fields) for g in groups])] if groups else []
        return self.finish(self.required(fields) + anyof)

    def group_scan(self, group: list[str], m_filters: list[Query], s_filters: list[Query] | None) -> Query:
        """The message documents holding the word group ``group`` (:meth:`any_query` over
        :data:`MESSAGE_FIELDS`) that pass ``m_filters``, and, unless ``s_filters`` is None, the
        session documents whose title or summary hold it that pass ``s_filters``: one query
        (a ``FlatOr`` of the two), each document scored by the group alone."""
        parts = [And([self.any_query(MESSAGE_FIELDS, [group]), *m_filters])]
        if s_filters is not None:
            parts.append(And([self.any_query(SESSION_FIELDS, [group]), *s_filters]))
        return FlatOr(parts) if len(parts) > 1 else parts[0]

    def finish(self, parts: list[Query]) -> Query:
        """AND the parts (exclusions apply per session: see :meth:`excluded_query`)."""
        return parts[0] if len(parts) == 1 else And(parts)

    def excluded_query(self) -> Query | None:
        """Documents holding an excluded word or phrase, or any word of an excluded ``prefix*``
        (any text field, titles included); the engine drops every session that has one."""
        if not self.excluded and not self.excluded_prefixes:
            return None
        fields = tuple(WEIGHTS)
        # every word of an excluded prefix (Whoosh's Prefix), not its commonest: none may be left in
        return Or([_phrase(x, fields) for x in self.excluded]
                  + [Prefix(f, p) for p in self.excluded_prefixes for f in fields])

    def repaired_groups(self) -> list[list[str]]:
        """The groups with unknown plain words replaced by their closest frequent neighbour."""
        out = []
        for g in self.groups:
            w = g[0]  # a plain word, or an identifier's whole form (``useInfinteScroll``)
            if w not in self._closest_cache:  # failures are remembered too: the lookup is costly
                self._closest_cache[w] = self._closest(w)
            fixed = self._name_repair(g, self._closest_cache[w])
            if fixed and fixed != w:
                self.corrections[w] = fixed
                if fixed in self._once:
                    self.rare.add(w)
                g = [fixed]
            out.append(g)
        return out

    def _name_repair(self, group: list[str], fixed: str | None) -> str | None:
        """``fixed``, the spelling repair of ``group``'s whole form, as it may stand for a name
        joined by punctuation (``user.id``, ``user_id``, ``quokka-ai``): None when the name is
        found as typed (whole, or its parts in a row: :meth:`has_postings`), or when the repair
        changes more than its punctuation. The indexed word nearest to a name's whole form is
        mostly another name (``user.go``, ``use_is``), not what was meant; the same letters
        joined otherwise (``quokkaai``) are. A plain word's repair is ``fixed`` unchanged."""
        if len(group) < 2 or all(c.isalnum() for c in group[0]) or not fixed:
            return fixed
        if self.has_postings(group) or _letters(fixed) != _letters(group[0]):
            return None
        return fixed

    def all_known(self) -> bool:
        """True when every word group has postings somewhere (whole, or every part): otherwise no
        session can hold every word, and the session-wide rung is skipped."""
        return all(self.has_postings(g) for g in self.groups)

    def has_postings(self, group: list[str]) -> bool:
        """True when a word group occurs somewhere: its whole form, or its parts adjacent and in
        order (one phrase lookup, remembered; only when every part is known)."""
        known = self._known
        if known(group[0]):
            return True
        if len(group) == 1 or not all(known(t) for t in group[1:]):
            return False
        key = tuple(group)
        if key not in self._postings_cache:
            parts = self.leaves(group)
            q = _phrase(parts, tuple(PHRASE_FIELDS)) if len(parts) > 1 else _any_field(parts[0], tuple(WEIGHTS))
            self._postings_cache[key] = next(iter(q.docs(self.searcher)), None) is not None
        return self._postings_cache[key]

    def unmatched(self) -> list[str]:
        """The identifiers of the query, as typed, that occur nowhere (whole, or their parts in
        a row) and have no spelling repair: the search says that nothing matched them."""
        out = []
        for g in self.groups:
            if len(g) > 1 and tuple(g) in self._spelled and g[0] not in self.corrections and not self.has_postings(g):
                typed = self._spelled.get(tuple(g), g[0])
                if typed not in out:  # a name typed twice, or one that analyzes to two: said once
                    out.append(typed)
        return out

    def _known(self, term: str) -> bool:
        """True when ``term`` has postings in some text field."""
        return any(self.searcher.doc_frequency(f, term) for f in WEIGHTS)

    def _closest(self, word: str) -> str | None:
        """The nearest indexed word occurring in >= 2 documents, when ``word`` (four letters or
        more; three while it is typed, for its completion only) has no postings;
        when no such word is close, the nearest word found in one message (in a small history
        the word a user mistypes often occurs once; such a repair is
        listed in ``rare`` and the search says so). A word found only in a session's summary
        is known (a session with no messages left has only its summary); a word with a digit
        is never repaired (``55444`` is not ``554``: a number, version or id one digit away is
        another thing, not a typo), only completed
        while it is typed.

        Candidates are within Damerau-Levenshtein distance 2 and share the first letter (most
        misspellings keep it); nearest first, then most frequent. Words that also share the
        second letter are looked at first: a candidate among them at distance 1 is taken without
        scanning every word of the first letter. A word typed
        with letters that folding changed (``über``, ``Straße``) is repaired only to a word that
        keeps each of them with its neighbours (``analysis.folded_contexts``): ``über`` is
        never ``user`` (no repair is better than a wrong one)."""
        s = self.searcher
        keep = self._folded.get(word, ())
        # Message fields only: a title made from the first prompt would count that prompt twice.
        fields = ("user", "assistant", "acting", "compaction")
        if len(word) < 3 or any(s.doc_frequency(f, word) for f in (*fields, "title", "summary")):
            return None
        if word in self._typing:  # search as you type: `conf` is config in the making, not cong
            done = self._completion(word, fields)
            if done is not None:
                return done
        if len(word) < 4 or not self.repair:  # three letters: completed while typed, never repaired
            return None
        if any(c.isdigit() for c in word):  # 55444 is no misspelt 554: an issue, a port, a build
            return None
        best: tuple[int, int, str] | None = None
        once: tuple[int, str] | None = None
        seen: set[str] = set()
        for prefix in (word[:2], word[:1]):
            for cand in _known_words(s, fields, prefix, seen):
                if abs(len(cand) - len(word)) > 2:
                    continue
                dist = distance(word, cand, limit=2)
                if dist > 2 or not all(c in cand for c in keep):
                    continue
                freq = sum(s.doc_frequency(g, cand) for g in fields)
                if freq < MIN_REPAIR_FREQ:
                    if freq and (once is None or (dist, cand) < once):
                        once = (dist, cand)
                    continue
                key = (dist, -freq, cand)
                if best is None or key < best:
                    best = key
            if best is not None and best[0] <= 1:
                break
        if best is None and once is not None:
            self._once.add(once[1])
            return once[1]
        return best[2] if best else None

    def _completion(self, word: str, fields: tuple[str, ...]) -> str | None:
        """The most frequent indexed word that starts with ``word`` (of the first 2000 read),
        or None when no word does."""
        best: tuple[int, str] | None = None
        for n, cand in enumerate(_vocabulary(self.searcher, fields, word, set())):
            if n >= 2000:
                break
            freq = sum(self.searcher.doc_frequency(f, cand) for f in fields)
            if freq and cand != word and (best is None or (-freq, cand) < best):
                best = (-freq, cand)
        return best[1] if best else None


def _is_prefix(word: str) -> bool:
    """``word*`` with two letters or more before the ``*`` (the query language's prefix)."""
    return word.endswith("*") and len(word.rstrip("*")) >= 2


def _expand(searcher, field: str, prefix: str, cap: int) -> tuple[list[str], int]:
    """``(words, count)``: the indexed words of ``field`` starting with ``prefix`` (every
    segment's), sorted, and how many there are. More than ``cap`` of them: the ``cap`` found in
    the most documents (ties: the first in byte order), as Lucene rewrites a prefix query to its
    top terms (every word, as Whoosh's ``Prefix`` has it, reads every posting list of a short
    prefix, and a message's score adds up every one of them it holds)."""
    words: set[str] = set()
    for word in _vocabulary(searcher, (field,), prefix, set()):
        words.add(word)
        if len(words) > cap:
            break
    else:
        return sorted(words), len(words)
    found: dict[bytes, int] = {}
    for leaf, _ in searcher.reader().leaf_readers():
        for raw, info in leaf.iter_prefix(field, prefix):
            found[raw] = found.get(raw, 0) + info.doc_frequency()
    top = sorted(found, key=lambda raw: (-found[raw], raw))[:cap]
    return sorted(raw.decode("utf-8", "replace") for raw in top), len(found)


def _vocabulary(searcher, fields, prefix: str, seen: set[bytes]):
    """Each indexed word of ``fields`` starting with ``prefix`` that is not in ``seen`` (which
    it is added to), read segment by segment: Whoosh's multi-segment ``expand_prefix`` merges
    the segments' sorted lists through a heap, twice as slow, and its per-segment
    ``terms_within`` automaton is slower still."""
    for leaf, _ in searcher.reader().leaf_readers():
        for f in fields:
            for raw in leaf.expand_prefix(f, prefix):
                if raw not in seen:
                    seen.add(raw)
                    yield raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


VOCABULARY_KEPT = 8
"""Word lists (fields and one or two first letters) kept per searcher for spelling repair."""
VOCABULARY_MAX = 200_000
"""A longer word list is read again at each repair, not kept (memory)."""


def _known_words(searcher, fields, prefix: str, seen: set[str]):
    """:func:`_vocabulary` for spelling repair, kept per top-level searcher (its words never
    change), so that each key typed in a misspelt or nonsense word (``zqxjvbnwk``) does not read
    every word of its first letter in each field of each segment again. ``seen`` holds the words
    (``str``) given already; they are skipped and added to."""
    kept = searcher.__dict__.setdefault("_crab_vocabulary", {})
    key = (tuple(fields), prefix)
    words = kept.get(key)
    if words is None:
        words = tuple(_vocabulary(searcher, fields, prefix, set()))
        if len(words) <= VOCABULARY_MAX:
            if len(kept) >= VOCABULARY_KEPT:
                kept.clear()
            kept[key] = words
    for word in words:
        if word not in seen:
            seen.add(word)
            yield word


def _dedupe_groups(items) -> list[list[str]]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for g in items:
        if tuple(g) not in seen:
            seen.add(tuple(g))
            out.append(g)
    return out


def _dedupe(items) -> list[str]:
    seen: dict[str, None] = {}
    for t in items:
        seen.setdefault(t, None)
    return list(seen)

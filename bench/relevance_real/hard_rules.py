"""The labelling rules of the hard set (hard_queries.py), checked on every run of ``run.py --set hard``.

Each rule is a necessary condition a label must meet, computed with :func:`corpus.tokens` (the
baseline's words, independent of crabsearch's analyzer) on what crabsearch indexes of the target
session by default (``corpus.SessionText``: user and assistant text and the title, no tool output).
"The session" below means every word of those; "a message" one user or assistant text.

* ``pasted_error``: an error as pasted today, with something volatile changed. Its *volatile*
  words are the words with a digit and the words of a path-like chunk (a whitespace-separated
  chunk holding ``/``, ``\\`` or ``@``: a path, a ``user@host`` prompt); its *message words* are
  the others of two letters or more. Checked: at least two message words, all of them in a run of
  at most five lines of one message (the lines the error was copied from; the lines are also
  joined without a break, undoing a terminal's hard wrap at 80 columns), and at least one volatile
  word occurring nowhere in the session (the changed path, number, id, user or temporary
  directory).
* ``pasted_code``: code or a command pasted as written, quotes included. Checked: at least two
  words; the query, whitespace collapsed and folded, occurs in one message; it holds one of
  ``" ' ` ( ) [ ] { } < > = $ | ; & * / \\`` or a chunk starting with ``-`` (a flag).
* ``cross_language``: another language than the session's (``lang``: en, es, ru, ja or zh).
  Checked: the query is in that language's script (ru Cyrillic; ja kana; zh Han without kana;
  en and es Latin only); leaving out *names* (in a ru/ja/zh query a run of Latin letters, digits
  and ``_ . / # @ - :``; in an en/es query a whitespace-separated chunk with a capital, a digit or
  one of ``_ . / # @ - :``), at least two words are left, at least half of them occur nowhere in
  the session, and no two of them in a row occur in a row in a message.
* ``recall``: the searcher's memory of the session in their own words. Checked like the typed
  set's ``prose``: no three query words in a row occur in a row in a message, and at least one
  query word occurs nowhere in the session.
* ``outcome``: a question about what was decided or found ("which ... did we pick"). Checked: it
  starts with a question word (which, what, how, where, why, when, who, did, was, is) or ends with
  ``?``, and no three query words in a row occur in a row in a message.
* ``tool_action``: something the agent did with its tools ("when the agent rewrote ..."). Checked:
  it starts with "when", the session called at least one tool, and the words are not all in one
  message (a description of the action, not a quote).
* ``long``: a long description. Checked: at least 15 words, no four in a row occurring in a row
  in a message, and at least one word occurring nowhere in the session.
* ``lookalike``: the target among sessions of one project that look alike (``decoys``: one or
  more sessions of the same group in hard_queries.GROUPS). Checked: target and decoys are in one
  group and distinct; at least half of the query words occur in each decoy; and some query word
  occurs in each target and in no decoy (the detail that decides).
"""

from __future__ import annotations

import re

from corpus import fold, grams, tokens

TYPES = ("pasted_error", "pasted_code", "cross_language", "recall", "outcome", "tool_action", "long", "lookalike")
LANGS = ("en", "es", "ru", "ja", "zh")
QUESTION_WORDS = {"which", "what", "how", "where", "why", "when", "who", "did", "was", "is"}
CODE_CHARS = set("\"'`()[]{}<>=$|;&*/\\")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN_RUN = re.compile(r"([A-Za-z0-9_./#@:-]*[A-Za-z][A-Za-z0-9_./#@:-]*)")
_NAME_MARK = re.compile(r"[A-Z0-9_./#@:-]")


def copies_run(query_words: list[str], messages: list[list[str]], n: int) -> bool:
    """Whether ``n`` consecutive query words occur consecutively in one of ``messages``."""
    runs = grams(query_words, n)
    return bool(runs) and any(runs & grams(m, n) for m in messages)


def _path_like(chunk: str) -> bool:
    return "/" in chunk or "\\" in chunk or "@" in chunk


def error_words(query: str) -> tuple[set[str], set[str]]:
    """``(message words, volatile words)`` of a pasted error (see the module docstring)."""
    message, volatile = set(), set()
    for chunk in query.split():
        for t in tokens(chunk):
            if _path_like(chunk) or any(c.isdigit() for c in t):
                volatile.add(t)
            elif len(t) >= 2:
                message.add(t)
    return message, volatile


def _line_windows(text: str, size: int = 5):
    lines = text.split("\n")
    for i in range(len(lines)):
        run = lines[i:i + size]
        yield set(tokens("\n".join(run))) | set(tokens("".join(run)))


def _script_ok(query: str, lang: str) -> bool:
    cyr, kana, han = bool(_CYRILLIC.search(query)), bool(_KANA.search(query)), bool(_HAN.search(query))
    if lang == "ru":
        return cyr and not kana and not han
    if lang == "ja":
        return kana and not cyr
    if lang == "zh":
        return han and not kana and not cyr
    return not (cyr or kana or han)


def foreign_words(query: str, lang: str) -> list[list[str]]:
    """The query's words outside names, as runs (a name breaks a run; see the module docstring)."""
    if lang in ("ru", "ja", "zh"):
        pieces = [(p, i % 2 == 1) for i, p in enumerate(_LATIN_RUN.split(query))]
    else:
        pieces = [(c, bool(_NAME_MARK.search(c.strip(".,;:!?\"'()¿¡")))) for c in query.split()]
    runs, run = [], []
    for piece, is_name in pieces:
        if is_name:
            if run:
                runs.append(run)
            run = []
        else:
            run.extend(tokens(piece))
    if run:
        runs.append(run)
    return runs


def problems(q: dict, s, where: str, by_id: dict, groups: dict) -> list[str]:
    """What is wrong with hard query ``q`` for its expected session ``s`` (a corpus.SessionText);
    ``where`` names the pair in the messages; ``by_id`` maps session ids to SessionText;
    ``groups`` is hard_queries.GROUPS (group -> session keys)."""
    kind, query = q["type"], q["query"]
    qt = tokens(query)
    qw = set(qt)
    msgs = [tokens(t) for t in s.messages]
    every = set(tokens(s.title)).union(*map(set, msgs))
    out = []
    if kind == "pasted_error":
        message, volatile = error_words(query)
        if len(message) < 2:
            out.append(f"{where}: a pasted error needs two message words")
        elif not any(message <= w for t in s.messages for w in _line_windows(t)):
            out.append(f"{where}: the message words are not in one run of five lines of a message")
        if not volatile - every:
            out.append(f"{where}: no volatile word (number, path) was changed: all occur in the session")
    elif kind == "pasted_code":
        flat = " ".join(fold(query).split())
        if len(qt) < 2:
            out.append(f"{where}: pasted code needs two words")
        if not any(flat in " ".join(fold(t).split()) for t in s.messages):
            out.append(f"{where}: the code is not in a message as written")
        if not (CODE_CHARS & set(query) or any(c.startswith("-") for c in query.split())):
            out.append(f"{where}: no quote, bracket, operator, path or flag: that is a phrase, not code")
    elif kind == "cross_language":
        lang = q.get("lang")
        runs = foreign_words(query, lang)
        words = set().union(*map(set, runs)) if runs else set()
        if lang not in LANGS or not _script_ok(query, lang):
            out.append(f"{where}: the query is not in the script of its language {lang!r}")
        if len(words) < 2:
            out.append(f"{where}: fewer than two words outside names")
        elif 2 * len(words - every) < len(words):
            out.append(f"{where}: more than half of the words outside names occur in the session")
        if any(copies_run(r, msgs, 2) for r in runs):
            out.append(f"{where}: two words in a row are copied from a message")
    elif kind == "recall":
        if qw <= every:
            out.append(f"{where}: a recall query needs a word the session never uses")
        if copies_run(qt, msgs, 3):
            out.append(f"{where}: a recall query must not copy three words in a row")
    elif kind == "outcome":
        first = qt[0] if qt else ""
        if first not in QUESTION_WORDS and not query.rstrip().endswith("?"):
            out.append(f"{where}: an outcome query is a question")
        if copies_run(qt, msgs, 3):
            out.append(f"{where}: an outcome query must not copy three words in a row")
    elif kind == "tool_action":
        if not qt or qt[0] != "when":
            out.append(f"{where}: a tool action query starts with 'when'")
        if not s.tools:
            out.append(f"{where}: the session called no tool")
        if any(qw <= set(m) for m in msgs):
            out.append(f"{where}: the words are all in one message (a quote, not a description)")
    elif kind == "long":
        if len(qt) < 15:
            out.append(f"{where}: a long query has at least 15 words")
        if copies_run(qt, msgs, 4):
            out.append(f"{where}: a long query must not copy four words in a row")
        if qw <= every:
            out.append(f"{where}: a long query needs a word the session never uses")
    elif kind == "lookalike":
        out.extend(_lookalike_problems(q, s, where, qw, every, by_id, groups))
    return out


def _lookalike_problems(q, s, where, qw, every, by_id, groups) -> list[str]:
    out = []
    keys = set(q["expect_keys"]) | set(q.get("decoy_keys", []))
    if not q.get("decoys"):
        out.append(f"{where}: a look-alike query names its decoys")
        return out
    if not any(keys <= set(members) for members in groups.values()):
        out.append(f"{where}: target and decoys are not in one group")
    if set(q["decoy_keys"]) & set(q["expect_keys"]):
        out.append(f"{where}: a decoy is also a target")
    decoy_words = set()
    for sid, key in zip(q["decoys"], q["decoy_keys"]):
        d = by_id.get(sid)
        if d is None:
            out.append(f"{where}: decoy {key} ({sid}) is not in the corpus")
            continue
        dw = set(tokens(d.title)).union(*(set(tokens(t)) for t in d.messages))
        decoy_words |= dw
        if 2 * len(qw & dw) < len(qw):
            out.append(f"{where}: decoy {key} holds fewer than half of the query words (not a look-alike)")
    if not (qw & every) - decoy_words:
        out.append(f"{where}: no query word is in the target and in no decoy (no deciding detail)")
    return out

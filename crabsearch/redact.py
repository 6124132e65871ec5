"""Masking secret-shaped strings in transcript text before it is shown.

Masking rules: crabsearch issue 3, *Privacy* ("Mask keeps the first 6 and last 4 characters
(``***`` if short)"); the key prefixes are as published by each vendor (OpenAI/Anthropic ``sk-``,
GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``, Slack ``xox?-``, AWS
``AKIA``/``ASIA``, Google ``AIza``, GitLab ``glpat-``, Hugging Face ``hf_``, JWT ``eyJ``).

Public API:

* :func:`redact` -- the text with every secret masked (the same ``str`` object when there is none).
* :func:`find_secrets` -- ``(start, end)`` character spans of the secrets, sorted and
  non-overlapping (for tests and highlighting).
* :func:`mask` -- one secret masked: ``first 6 + "***" + last 4``, or just ``***`` when the secret
  is shorter than 14 characters (``mask("sk-live-FAKEFAKEFAKE1234567890") == "sk-liv***7890"``).

What counts as a secret (the span that is masked is in brackets):

* Vendor keys, whole: ``[sk-...]`` (20+ key characters after ``sk-``, at least one uppercase
  letter or digit, so kebab-case names are not keys), ``[ghp_...]`` (and ``gho_ ghu_ ghs_ ghr_``,
  20+), ``[github_pat_...]`` (20+), ``[xoxb-...]`` (``xoxa- xoxb- xoxe- xoxp- xoxr- xoxs-``, 10+,
  with a digit), ``[AKIA...]``/``[ASIA...]`` + exactly 16 uppercase letters/digits, ``[AIza...]`` +
  exactly 35, ``[glpat-...]`` (20+), ``[hf_...]`` (30+), JWTs ``[eyJ....<part>.<part>]``. A key must
  start a word: ``task-list``, ``ask-me`` or ``sketch`` never match.
* ``Authorization: <scheme> [credentials]`` (also ``Proxy-Authorization``, JSON ``"Authorization":
  "..."`` and ``=``); with no known scheme the whole value must look like a token.
* ``Bearer [token]`` anywhere: the word is kept; the token must be 16+ token characters and not a
  plain word, so "bearer of bad news" or "Bearer Internationalization" stay.
* Assignments ``NAME=[value]``, ``NAME: [value]``, ``"name": "[value]"``, ``name = '[value]'``
  (also ``:=`` and ``=>``) where NAME ends in ``token``, ``secret``, ``password`` or ``passwd`` (any
  case, e.g. ``GITHUB_TOKEN``, ``clientSecret``, ``db_password``) or is a key name: ``*_KEY`` in
  upper case (``OPENAI_API_KEY``) or ``api key``/``secret key``/``access key``/... in any case
  (``apiKey``, ``x-api-key``, ``aws_secret_access_key``); ``sort_key``/``cache_key`` are not.
  Only the value is masked. To leave code alone, a value is kept when it is a placeholder
  (``$VAR``, ``${X}``, ``<your-key>``, ``{{x}}``, ``%s``, ``xxxx``), a type or constant
  (``None``, ``null``, ``true``, ``str``, ``string``...), an attribute (``self.token``), a call
  (``get_token()``: the value must end at a delimiter), a plain identifier where code is likely
  (unquoted, and the name is not an UPPER_CASE env var or the separator has spaces around it:
  ``api_key=api_key``, ``token: str``, ``password = pw``), or all digits for a name other than
  a password (``max_token=512``).
* PEM private keys: ``-----BEGIN ... PRIVATE KEY-----`` + base64 (+ ``Proc-Type``/``DEK-Info``
  headers) + ``-----END ... PRIVATE KEY-----`` becomes one line
  ``-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----``; a block cut off before its
  END line (a context window) is masked up to where the base64 stops (``... KEY----- ***``).
  ``OPENSSH``/``EC``/``ENCRYPTED``/... labels and ``PGP PRIVATE KEY BLOCK`` too; public keys and
  certificates are not secrets and stay.
  JSON-escaped newlines (a literal ``\\n``) are understood.
* URL credentials ``scheme://user:[password]@host``: only the password.

Already-masked text is left as it is (anything containing or touching ``***``), so
``redact(redact(x)) == redact(x)``.

Limits: a quoted assignment value is looked at up to 256 characters, an unquoted one up to 1,024
(a longer one is left to the vendor patterns), a URL user and password up to 256 each.

Speed: one compiled regex. Every branch of it starts with a literal character, and a rare one
(``password`` is entered at its ``w``, ``eyJ`` at ``J``; the characters before are checked by a
lookbehind), so ``re``'s first-character skip does the pre-check in C: most positions are never
entered, and a text with no secret costs one ``search`` and returns the same object. A separate
substring pre-check (``any(marker in text ...)`` over the ~30 markers, case variants included)
was measured at ~1.4 ms per 100 KB, *slower* than the whole scan, so there is none. Measured
(Python 3.11, this machine): ~0.9 ms per 100 KB of message text from ``bench/gen.py``
transcripts (20 MB), ~0.8 ms per 100 KB of code, ~0.6 ms of English prose, ~1.1 ms with a
secret every 2 KB; a 300-character context window ~2.5 us. Adversarial inputs stay linear (the
work per candidate is bounded): ``"key=" * 25000`` takes ~70 ms for its 100 KB.
"""

from __future__ import annotations

import re

__all__ = ["find_secrets", "mask", "redact"]

MASK = "***"
_KEEP_HEAD = 6
_KEEP_TAIL = 4
_SHORT = 14  # secrets shorter than this are masked as just "***"
_SHORT_VALUE = 24  # the same for values with no public vendor prefix (passwords, URL passwords,
# assignment values, bearer tokens): their first 6 characters are not a known prefix, so a
# 14-character password would show 10 of its characters


def mask(secret: str) -> str:
    """``secret`` masked: its first 6 and last 4 characters around ``***``; ``***`` alone when it is
    shorter than 14 characters (so at least 4 characters are always hidden)."""
    if len(secret) < _SHORT:
        return MASK
    return secret[:_KEEP_HEAD] + MASK + secret[-_KEEP_TAIL:]


# --- the pattern --------------------------------------------------------------------------------
#
# One regex, an alternation whose every branch starts with a plain literal character: sre then
# builds a first-character set for the whole pattern and only enters it at positions holding one
# of those characters. To keep those positions few, a branch starts at a *rare* character of its
# marker (``eyJ`` starts at ``J``, ``password`` at ``w``, ``Authorization`` at ``z``), checks the
# characters before it with a lookbehind (and the word boundary with a negative one), and records
# how far the marker reaches back (``_BACK``). Each branch ends with an empty named group, so
# ``match.lastgroup`` names the branch; its inner groups are named ``<branch>__<group>``.

_WORDCH = r"A-Za-z0-9_\-"
_BACK: dict[str, int] = {}  # branch -> characters of its marker before the match start


def _branch(tag: str, head: str, anchor: str, rest: str, before: str | None = _WORDCH,
            back: int | None = None) -> str:
    """``head`` + ``anchor`` + ``rest``, matched from ``anchor`` on (``head``: a fixed-width regex,
    ``back`` characters, default ``len(head)``); ``before``: characters that may not precede
    ``head``."""
    marker = head + re.escape(anchor)
    look = (f"(?<={marker})" if head else "") + (f"(?<![{before}]{marker})" if before else "")
    _BACK[tag] = len(head) if back is None else back
    rest = rest.replace("(?P<", f"(?P<{tag}__")
    return f"{re.escape(anchor)}{look}{rest}(?P<{tag}>)"


# An assignment: the name ends with the keyword and a separator follows. The value is quoted
# ("..." / '...', optionally JSON-escaped) or a run of value characters that ends at a delimiter
# (so ``get_token()`` or ``Optional[str]`` are not values).
_UNQUOTED = r"""[^\s"'`,;&<>(){}\[\]]"""
_ASSIGN_TAIL = (
    r"""(?P<kwend>)(?:\\?["'])?(?P<sp1>[ \t]*)(?::=|=>|=|:)(?P<sp2>[ \t]*)(?:"""
    r"""\\?"(?P<dq>[^"\n]{1,256}?)\\?"|"""
    r"""\\?'(?P<sq>[^'\n]{1,256}?)\\?'|"""
    rf"""(?P<uv>(?!=){_UNQUOTED}{{1,1024}}+)(?=[\s"'`,;&)\]}}]|\Z))"""
)
# keyword: (case-insensitive head, rare anchor character, rest)
_KEYWORDS = {"key": ("ke", "y", ""), "token": ("to", "k", "en"), "secret": ("se", "c", "ret"),
             "password": ("pass", "w", "(?:or)?d")}

_TOKEN_CHARS = r"A-Za-z0-9._~+/=\-"
_SCHEMES = r"(?i:bearer|basic|token|digest|bot|negotiate|ntlm|apikey|key)"
_AUTH_TAIL = (
    r"""(?i:ation)(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?"""
    rf"(?:(?P<scheme>{_SCHEMES})[ \t]+)?(?P<auth>[{_TOKEN_CHARS}]+)"
)
_BEARER_TAIL = rf"(?i:earer)[ \t]+(?P<bearer>[{_TOKEN_CHARS}]{{16,}})"

_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_SEP = r"(?:[ \t\r\n]|\\[nr])+"
_PEM_B64 = r"[A-Za-z0-9+/=]{16,}"
_PEM_TAIL = (
    rf"IN {_PEM_LABEL}(?:"
    rf"(?P<body>(?:[A-Za-z0-9+/=\s:,.\\]|-(?!----))*?)(?P<end>-----END {_PEM_LABEL})"
    rf"|(?:{_PEM_SEP}(?:{_PEM_B64}|[A-Za-z\-]+: [A-Za-z0-9,\-]+))*{_PEM_SEP}{_PEM_B64})"
)

_BRANCHES = [
    _branch("pem", "-----BE", "G", _PEM_TAIL, before=None),
    _branch("k_sk", "s", "k", rf"-[{_WORDCH}]{{20,}}"),
    _branch("k_ghpat", "githu", "b", r"_pat_[A-Za-z0-9_]{20,}"),
    _branch("k_gh", "gh[pousr]", "_", r"[A-Za-z0-9]{20,}", back=3),
    _branch("k_glpat", "", "g", rf"lpat-[{_WORDCH}]{{20,}}"),
    _branch("k_slack", "", "x", r"ox[abeprs]-[A-Za-z0-9\-]{10,}"),
    _branch("k_aws", "", "A", r"(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])", before="A-Za-z0-9"),
    _branch("k_google", "", "A", rf"Iza[{_WORDCH}]{{35}}(?![{_WORDCH}])"),
    _branch("k_hf", "h", "f", r"_[A-Za-z0-9]{30,}"),
    _branch("k_jwt", "ey", "J", rf"[{_WORDCH}]{{8,}}\.[{_WORDCH}]{{8,}}\.[{_WORDCH}]*"),
    _branch("url", "[A-Za-z0-9]", ":",
            r"""//(?P<user>[^\s:/@?#"'<>\[\]]{0,256}+):(?P<pw>[^\s/@?#"'<>]{1,256}+)@""",
            before=None, back=0),
]
# Authorization in any case (after a "-" too: Proxy-Authorization), Bearer in any case, and the
# assignment keywords in any case (the anchor in lower or upper case).
_BRANCHES += [_branch(f"auth_{c}", "(?i:authori)", c, _AUTH_TAIL, before="A-Za-z0-9_", back=7)
              for c in "zZ"]
_BRANCHES += [_branch(f"bearer_{c}", "", c, _BEARER_TAIL, before="A-Za-z0-9_") for c in "bB"]
_BRANCHES += [_branch(f"assign_{kw}_{c}", f"(?i:{head})", c, f"(?i:{rest})" + _ASSIGN_TAIL,
                      before=None, back=len(head))
              for kw, (head, anchor, rest) in _KEYWORDS.items() for c in (anchor, anchor.upper())]

_SECRET_RE = re.compile("|".join(_BRANCHES))

# --- deciding on a candidate ----------------------------------------------------------------------

_NAME_BEFORE = re.compile(r"[A-Za-z0-9_\-]*\Z")
_KEY_NAME = re.compile(
    r"(?:api|secret|private|access|auth|client|app|master|encryption|signing|license|"
    r"subscription|service|account)[_\-]?key\Z", re.IGNORECASE
)
_NOT_VALUES = frozenset(
    "none null nil true false undefined str string int bool bytes any optional required "
    "redacted hidden env".split()
)
_PLACEHOLDER_START = ("$", "<", "{", "%", "...")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.\-]*")
_ATTRIBUTE = re.compile(r"[a-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+")  # no digits: not ya29.a0B
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+")
_UPPER_OR_DIGIT = re.compile(r"[A-Z0-9]")


def _placeholder(value: str) -> bool:
    """``$VAR``, ``${X}``, ``<your-key>``, ``{{x}}``, ``%s``, ``...``, ``xxxx``."""
    return value.startswith(_PLACEHOLDER_START) or len(set(value)) == 1


def _value_ok(value: str, quoted: bool = False) -> bool:
    """Not a placeholder, a type or constant, nor (unquoted) an attribute access."""
    return not (_placeholder(value) or value.lower() in _NOT_VALUES
                or (not quoted and _ATTRIBUTE.fullmatch(value)))


def _tokenish(value: str, min_len: int) -> bool:
    """Long enough, not a plain word (``required``, ``Internationalization``), not a placeholder."""
    return len(value) >= min_len and not _PLAIN_WORD.fullmatch(value) and _value_ok(value)


def _assignment(text: str, m: re.Match, tag: str) -> tuple[int, int] | None:
    """The value span of an assignment (branch ``tag``), or None when it is not a secret."""
    kw = tag.split("_")[1]
    kw_start = m.start() - _BACK[tag]
    before = _NAME_BEFORE.search(text, max(0, kw_start - 64), kw_start).group()
    name = before + text[kw_start:m.start(f"{tag}__kwend")]
    if kw == "key" and not (_KEY_NAME.search(name) or (name.endswith("_KEY") and name.isupper())):
        return None
    for quote in ("dq", "sq", "uv"):
        start, end = m.span(f"{tag}__{quote}")
        if start >= 0:
            break
    value = text[start:end]
    if quote == "uv":
        stripped = value.rstrip(".:")  # the end of a sentence
        end -= len(value) - len(stripped)
        value = stripped
        # Code passes identifiers (api_key=api_key, token: str); an env var (API_KEY=...), a
        # command-line flag (--password=...) or a URL query (?token=...) passes values.
        spaced = bool(m.group(f"{tag}__sp1") or m.group(f"{tag}__sp2"))
        name_start = kw_start - len(before)
        not_code = (name.isupper() or name.startswith("-")
                    or text.startswith(("?", "&"), name_start - 1)) and not spaced
        if not value or (not not_code and _IDENTIFIER.fullmatch(value)):
            return None
    if not _value_ok(value, quote != "uv") or (value.isdigit() and kw != "password"):
        return None
    return start, end


def _candidate(text: str, m: re.Match) -> tuple[int, int, str] | None:
    """``(start, end, replacement)`` for a match of the big pattern, or None to skip it."""
    tag = m.lastgroup
    if tag == "pem":
        start = m.start() - _BACK[tag]
        if m.group("pem__end") is not None:
            if not _PEM_B64_RE.search(m.group("pem__body")):
                return None
            begin = text[start:m.start("pem__body")]
            return start, m.end(), f"{begin} {MASK} {m.group('pem__end')}"
        begin = _PEM_BEGIN.match(text, start).group()
        return start, m.end(), f"{begin} {MASK}"
    if tag.startswith("k_"):
        start, end = m.start() - _BACK[tag], m.end()
        if tag == "k_sk" and not _UPPER_OR_DIGIT.search(text, start + 3, end):
            return None  # sk-some-long-kebab-case-name
        if tag == "k_slack" and not _DIGIT.search(text, start, end):
            return None
    elif tag == "url":
        start, end = m.span("url__pw")
        if _placeholder(text[start:end]):
            return None
    elif tag.startswith("auth_"):
        start, end = m.span(f"{tag}__auth")
        value = text[start:end].rstrip(".")
        end = start + len(value)
        if m.group(f"{tag}__scheme") is None:
            if not _tokenish(value, 8):
                return None
        elif _placeholder(value):
            return None
    elif tag.startswith("bearer_"):
        start, end = m.span(f"{tag}__bearer")
        value = text[start:end].rstrip(".")
        end = start + len(value)
        if not _tokenish(value, 16):
            return None
    else:
        span = _assignment(text, m, tag)
        if span is None:
            return None
        start, end = span
    if end <= start:
        return None
    if MASK in text[start:end] or text.startswith(MASK, end) or text.endswith(MASK, 0, start):
        return None  # already masked
    if not tag.startswith("k_") and end - start < _SHORT_VALUE:
        return start, end, MASK  # a password or token without a public prefix: hide it all
    return start, end, mask(text[start:end])


_PEM_BEGIN = re.compile(r"-----BEGIN " + _PEM_LABEL)
_PEM_B64_RE = re.compile(_PEM_B64)
_DIGIT = re.compile(r"[0-9]")


def _scan(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, replacement)`` of every secret, in order."""
    found: list[tuple[int, int, str]] = []
    search = _SECRET_RE.search
    pos = done = 0
    while (m := search(text, pos)) is not None:
        hit = _candidate(text, m)
        if hit is None or hit[1] <= done:
            pos = m.start() + 1  # look again inside a rejected match: a value may hold a key
            continue
        start, end, replacement = hit
        if start < done:  # a marker reaching back into the previous secret: mask the rest
            start, replacement = done, mask(text[done:end])
        found.append((start, end, replacement))
        pos = done = max(end, m.start() + 1)
    return found


# --- public API -----------------------------------------------------------------------------------


def find_secrets(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the secrets in ``text``, sorted and non-overlapping.

    For an assignment, a URL or an ``Authorization``/``Bearer`` header the span is the value only;
    for a PEM private key it is the whole block, BEGIN and END lines included."""
    return [(start, end) for start, end, _ in _scan(text)]


def redact(text: str) -> str:
    """``text`` with every secret masked (see the module docstring for the rules).

    Returns ``text`` itself when there is nothing to mask."""
    hits = _scan(text)
    if not hits:
        return text
    parts = []
    pos = 0
    for start, end, replacement in hits:
        parts.append(text[pos:start])
        parts.append(replacement)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)

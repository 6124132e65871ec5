"""Masking secret-shaped strings in transcript text before it is shown.

Masking rule (README.md, Privacy; ``docs/guide.md``, Privacy in detail): a key keeps its first 6
and last 4 characters (``***`` if short); the key prefixes are as published by each vendor
(OpenAI/Anthropic ``sk-``, GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``,
Slack ``xox?-``, AWS ``AKIA``/``ASIA``, Google ``AIza``, GitLab ``glpat-``, Hugging Face ``hf_``,
JWT ``eyJ``).
The later kinds (:data:`RULES_VERSION` 2 and 3) follow the published scanner rules named with
each below: gitleaks ``config/gitleaks.toml`` (github.com/gitleaks/gitleaks, commit b58d3f1, by
rule id), Yelp detect-secrets ``detect_secrets/plugins/*.py`` (github.com/Yelp/detect-secrets,
commit 5e14193, by detector class) and, for the Google kinds neither has, Nosey Parker
``crates/noseyparker/data/default/builtin/rules/*.yml`` (github.com/praetorian-inc/noseyparker,
commit 2e6e7f3, by rule id). Where a rule leans on an entropy threshold or a keyword near the
secret, a cheaper test stands in for it, stated with the kind.

Public API:

* :func:`redact` -- the text with every secret masked (the same ``str`` object when there is none).
* :func:`find_secrets` -- ``(start, end)`` character spans of the secrets, sorted and
  non-overlapping (for tests and highlighting).
* :func:`mask` -- one secret masked: ``first 6 + "***" + last 4``, or just ``***`` when the secret
  is shorter than 14 characters (``mask("sk-live-FAKEFAKEFAKE1234567890") == "sk-liv***7890"``).
* :data:`RULES_VERSION` -- bumped when what is masked changes (an index built under older rules
  holds, and finds, what they did not mask).

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
  a password (``max_token=512``). An unquoted value ends at a JSON-escaped newline or tab (a
  literal ``\\n`` in a tool call's arguments) as at the character itself.
* PEM private keys: ``-----BEGIN ... PRIVATE KEY-----`` + base64 (+ ``Proc-Type``/``DEK-Info``
  headers) + ``-----END ... PRIVATE KEY-----`` becomes one line
  ``-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----``; a block cut off before its
  END line (a context window) is masked up to where the base64 stops (``... KEY----- ***``).
  ``OPENSSH``/``EC``/``ENCRYPTED``/... labels and ``PGP PRIVATE KEY BLOCK`` too; public keys and
  certificates are not secrets and stay.
  JSON-escaped newlines (a literal ``\\n``) are understood.
* URL credentials ``scheme://user:[password]@host``: only the password.

Kinds from published scanner rules (vendor keys keep 6 + 4 characters, values follow the value
rule):

* Stripe ``[sk_live_...]``, ``[rk_live_...]``, and the ``_test_`` and ``_prod_`` variants
  (gitleaks ``stripe-access-token``: 10+ letters/digits; detect-secrets ``StripeDetector`` has
  ``live`` only). Test keys are masked too: they still open the account's test-mode data and a
  pasted one is as findable as a live one. In place of the entropy test, the key must hold an
  uppercase letter or a digit and must not run on into ``_``: ``sk_test_connectionpooling``,
  ``sk_live_mode``, ``task_test_...`` stay.
* npm ``[npm_...]`` + exactly 36 letters/digits (gitleaks ``npm-access-token``), with an uppercase
  letter or digit; the legacy ``.npmrc`` ``_authToken=<uuid>`` (detect-secrets ``NpmDetector``)
  is an assignment.
* SendGrid ``[SG.<22>.<43>]`` (detect-secrets ``SendGridDetector``; gitleaks
  ``sendgrid-api-token``: 66 characters after ``SG.``).
* Slack webhooks ``https://hooks.slack.com/services/[T.../B.../<secret>]`` (also ``workflows/``
  and ``triggers/``; detect-secrets ``SlackDetector``, gitleaks ``slack-webhook-url``): the path is
  masked, the host stays. The last segment must be 8+ characters and not one repeated character
  (Slack's documented ``XXXXXXXX...`` example stays).
* Google OAuth client secrets ``[GOCSPX-...]`` + exactly 28 (Nosey Parker ``np.google.2``) and
  access tokens ``[ya29.<20+>]`` (``np.google.4``, with dots inside for service-account tokens
  ``ya29.c.``; a final dot is the sentence's; an uppercase letter or digit is needed).
* Telegram bot tokens ``[<5-16 digits>:A<34>]`` (gitleaks ``telegram-bot-api-token`` without its
  ``telegr`` keyword; detect-secrets ``TelegramBotTokenDetector``): the digits must start a word
  or follow ``bot`` (``api.telegram.org/bot<token>/``), so ``clm12345:Agency...`` stays.
* Twilio API keys ``[SK<32 hex>]`` (gitleaks ``twilio-api-key``, detect-secrets
  ``TwilioKeyDetector``), a whole word, with a digit and a hex letter. Account SIDs ``AC...`` are
  identifiers, not secrets.
* AWS secret access keys (40 base-64 characters): after a label with spaces,
  ``AWS Secret Access Key [None]: [...]`` (``aws configure``) or ``secret access key: [...]``
  (Nosey Parker ``np.aws.2``; ``aws_secret_access_key=`` and ``"SecretAccessKey":`` are
  assignments already), and the first such value within 80 characters after an ``AKIA``/``ASIA``
  id on its line (a credentials CSV row, ``client("AKIA...", "...")``; detect-secrets
  ``AWSKeyDetector.get_secret_access_keys`` pairs them the same way). In place of gitleaks'
  entropy test the value must hold an uppercase letter, a lowercase one and a digit, so a git
  SHA-1 next to a key id stays.
* ``curl -u user:[password]`` / ``--user``/``--user=`` (quoted too; gitleaks ``curl-auth-user``):
  only the password, only inside a ``curl`` command (``curl`` earlier on the line or on lines it
  continues with ``\\``, not after ``&&``/``||``/``|``), so ``docker run -u 1000:1000`` stays; the
  allowlist of that rule is kept (``$VAR``, ``<...>``, ``[...]``, ``{{...}}``, ``pass``,
  ``password``, ``pwd``, ``test``, ``token``, ``changeme``, ``changeit``).
* Prose: ``password is [X]``, ``password was: [X]`` (``passwd`` too). Neither scanner has this
  (both need an assignment operator). A quoted X is masked unless it is a placeholder or a
  constant; an unquoted one only when it looks like a password -- 4+ characters with a digit, a
  symbol or a lower-to-upper case change (``hunter2``, ``Tr0ub4dor&3``), all digits only from 6
  -- so "the password is stored hashed", "is 8-64 characters", "is SHA256-hashed", "is None"
  stay, and so does "the password is swordfish" (a plain word is indistinguishable from prose).
  ``password: X`` is the assignment rule: ``password: hunter2`` is masked, ``password: str`` and
  ``password: swordfish`` are not.
* A secret's name in prose, then an opaque value: a prose form of gitleaks ``generic-api-key``
  (commit 009e025), which needs an assignment operator after the name. The name is ``token``,
  ``secret``, ``password`` or a key's name (those of the assignment rule, also as two words:
  ``API key``, ``access key``; ``primary key``, ``the key`` are not), then optionally a few words
  -- a preposition (``for of from to in on at``) and up to 3 more words of 1-16 characters, a
  colon after them or not (``the API key for openai``, ``the password for the db is``; gitleaks'
  ``identifierSuffix`` in ``cmd/generate/config/utils/generate.go``, commit 9a16d92, lets 20
  characters of words sit between the name and the operator) -- then a space, ``is``/``was`` (a
  colon after it or not), ``(`` or a quote, then [the value]: 20-256 characters with a letter and a
  digit whose Shannon entropy is at least 3.5 bits a character (gitleaks' threshold for that
  rule), 3.0 for a UUID or 32+ hex digits (gitleaks' hex rules use 3): ``the token `<uuid>```,
  ``API key is <uuid>``, ``the aws secret is <40 characters>``, ``twilio auth token <32 hex>``
  (gitleaks has Twilio's ``SK`` API keys only). An id with no such name right before it stays
  searchable: ``session <uuid>``, ``claude --resume <uuid>``, ``the token count for session
  <uuid>``, ``the token for session <uuid>`` (the last word before the value names what an id
  identifies: session, user, request, account, ...; with ``is`` between, the value is masked),
  and so do a test's ``00000000-0000-...`` and words, identifiers and versions. Two
  words naming a key work in assignments too (``API key: <value>``).

Already-masked text is left as it is (anything containing or touching ``***``), so
``redact(redact(x)) == redact(x)``.

Limits: a quoted assignment value is looked at up to 256 characters, an unquoted one up to 1,024
(a longer one is left to the vendor patterns), a URL user and password up to 256 each.

Speed: one compiled regex. Every branch of it starts with a literal character, and a rare one
(``password`` is entered at its ``w``, ``eyJ`` at ``J``; the characters before are checked by a
lookbehind), so ``re``'s first-character skip does the pre-check in C: most positions are never
entered, and a text with no secret costs one ``search`` and returns the same object. The branches
are grouped by that character (``k(?:...|...)``) and a literal that follows it is matched before
the lookbehinds, so an entered position costs one comparison per branch that cannot match there;
so many branches cost little. ``curl -u`` is not a branch of its own (entering at every ``u``
was measurably slower, and so is even ``"curl" in text``): a ``curl`` branch at ``c`` finds the
command and a second regex reads the 2 KB after it. A separate substring pre-check (``any(marker
in text ...)`` over the ~30 markers, case variants included) measured *slower* than the whole
scan, so there is none. Adversarial inputs stay linear (the work per candidate is bounded:
``"key=" * 25000``, ``"curl -u a:" * 10000``; ``tests/test_redact.py``).
"""

from __future__ import annotations

import bisect
import collections
import functools
import math
import re

__all__ = ["RULES_VERSION", "find_secrets", "mask", "redact", "redact_value", "secret_patterns"]

RULES_VERSION = 4
"""1: the first kinds (vendor key prefixes, assignments, ``Authorization``, PEM keys, URL
passwords); 2: Stripe, npm, SendGrid, Slack webhooks, Google OAuth, Telegram, Twilio, AWS
secret keys, curl -u, "password is X"; 3: a secret's name in prose before an opaque
value (a UUID after "API key is", an AWS secret after "aws secret is", a Twilio auth token), and a
key's name in two words in an assignment (``API key: ...``); 4: a few words between the name
and the value ("the API key for openai <uuid>", "the password for the db is <uuid>")."""

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
            back: int | None = None) -> tuple[str, str]:
    """``(anchor, body)``: ``head`` + ``anchor`` + ``rest``, matched from ``anchor`` on (``head``: a
    fixed-width regex, ``back`` characters, default ``len(head)``); ``before``: characters that may
    not precede ``head``. A literal character that starts ``rest`` is matched before the
    lookbehinds, so sre skips the branch with one comparison where it is absent."""
    lit = _LITERAL_START.match(rest)
    lit = lit.group() if lit else ""
    rest = rest[len(lit):]
    marker = head + re.escape(anchor) + lit
    look = (f"(?<={marker})" if head else "") + (f"(?<![{before}]{marker})" if before else "")
    _BACK[tag] = len(head) if back is None else back
    rest = rest.replace("(?P<", f"(?P<{tag}__").replace("(?P=", f"(?P={tag}__")
    return anchor, f"{lit}{look}{rest}(?P<{tag}>)"


_LITERAL_START = re.compile(r"(?:\\[.\-]|[A-Za-z0-9_:/\-])(?![{*+?])")


def _compile(branches: list[tuple[str, str]]) -> re.Pattern:
    """One regex: the branches grouped by anchor (``k(?:<sk->|<sk_live_>|...)``), so that at a
    position sre compares the character with each anchor once, not with every branch; its
    compiled program kept on disk between processes (``kept_regex``)."""
    groups: dict[str, list[str]] = {}
    for anchor, body in branches:
        groups.setdefault(anchor, []).append(body)
    from .kept_regex import compile_kept

    return compile_kept("|".join(
        re.escape(anchor) + (bodies[0] if len(bodies) == 1 else f"(?:{'|'.join(bodies)})")
        for anchor, bodies in groups.items()))


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

_JSON_BREAK = re.compile(r"\\[nrt]")
"""A JSON-escaped newline, carriage return or tab (a tool call's arguments are JSON text)."""
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
    _branch("k_stripe", "[sr]", "k", r"_(?:live|test|prod)_[A-Za-z0-9]{10,}+(?![A-Za-z0-9_])",
            back=1),
    _branch("k_npm", "npm", "_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
    _branch("k_sendgrid", "S", "G", r"\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])"),
    _branch("k_gocspx", "GOCSP", "X", r"-[A-Za-z0-9_\-]{28}(?![A-Za-z0-9_\-])"),
    _branch("k_ya29", "", "y", r"a29\.[A-Za-z0-9_.\-]{20,4096}+"),
    _branch("k_twilio", "S", "K", r"[0-9a-fA-F]{32}(?![A-Za-z0-9_])", before="A-Za-z0-9_"),
    _branch("k_slackhook", r"hooks\.slac", "k",
            r"\.com/(?:services|workflows|triggers)/"
            r"(?P<path>[A-Za-z0-9_+]{1,64}+(?:/[A-Za-z0-9_+]{1,64}+){2,4}+)(?![A-Za-z0-9_+/])",
            before=None, back=10),
    # the bot id's digits (5-16) are counted back from the colon by _candidate
    _branch("k_telegram", "[0-9]", ":", r"A[A-Za-z0-9_\-]{34}(?![A-Za-z0-9_\-])", before=None),
    _branch("curl", "", "c", r"url(?![A-Za-z0-9_])", before="A-Za-z0-9_"),  # see _CURL_BRANCHES
    _branch("url", "[A-Za-z0-9]", ":",
            r"""//(?P<user>[^\s:/@?#"'<>\[\]]{0,256}+):(?P<pw>[^\s/@?#"'<>]{1,256}+)@""",
            before=None, back=0),
]
# "... secret access key [None]: <40 characters>" (aws configure's prompt, prose): the label has a
# space, so the assignment branches (a name of word characters) do not see it.
_BRANCHES += [_branch(f"awslabel_{c}", "(?i:access ke|secret ke)", c,
                      r"(?:[ \t]*+\[[^\]\n]{0,40}+\])?(?:[ \t]*+[:=]|[ \t]++(?i:is):?)[ \t]*+"
                      r"""(?:\\?["'`])?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",
                      before="A-Za-z0-9_", back=9)
              for c in "yY"]
# "the password is X" / "password was: X" in prose
_BRANCHES += [_branch(f"prose_{c}", "(?i:pass)", c,
                      r"""(?i:(?:or)?d)[ \t]++(?i:is|was)(?:[ \t]*+:)?[ \t]++(?:"""
                      r"""(?P<q>[\"'`])(?P<qv>[^"'`\n]{1,64}?)(?P=q)|"""
                      r"""(?P<uv>[^\s"'`,;<>()\[\]{}]{1,128}+))""",
                      before=None, back=4)
              for c in "wW"]
# Authorization in any case (after a "-" too: Proxy-Authorization), Bearer in any case, and the
# assignment keywords in any case (the anchor in lower or upper case).
_BRANCHES += [_branch(f"auth_{c}", "(?i:authori)", c, _AUTH_TAIL, before="A-Za-z0-9_", back=7)
              for c in "zZ"]
_BRANCHES += [_branch(f"bearer_{c}", "", c, _BEARER_TAIL, before="A-Za-z0-9_") for c in "bB"]
_BRANCHES += [_branch(f"assign_{kw}_{c}", f"(?i:{head})", c, f"(?i:{rest})" + _ASSIGN_TAIL,
                      before=None, back=len(head))
              for kw, (head, anchor, rest) in _KEYWORDS.items() for c in (anchor, anchor.upper())]

# "the token `<value>`", "API key is <value>", "twilio auth token <value>": a secret's name, then
# (with no assignment operator: those are the assignment branches, tried first at the same
# character) an opaque value, which _candidate judges (_opaque).
# Between the name and the value: a preposition and up to 3 more short words ("for openai", "for
# the db", "for the deploy bot:"), as gitleaks lets 20 characters of words sit between the name
# and its operator; _candidate turns away an id's noun right before the value ("for session").
_CONTEXT_WORDS = (r"(?P<words>[ \t]++(?i:for|of|from|to|in|on|at)"
                  r"(?:[ \t]++[A-Za-z][A-Za-z0-9_.\-]{0,15}){0,3}(?:[ \t]*+:)?)?")
_CONTEXT_TAIL = (_CONTEXT_WORDS +
                 r"""(?:[ \t]*+\(|[ \t]++(?:(?i:is|was)(?:[ \t]*+:)?[ \t]++)?)(?:\\?["'`])?"""
                 r"""(?P<v>[A-Za-z0-9+/=_.\-]{20,256}+)(?![A-Za-z0-9+/=_\-])""")
_BRANCHES += [_branch(f"context_{kw}_{c}", f"(?i:{head})", c, f"(?i:{rest})" + _CONTEXT_TAIL,
                      before="A-Za-z0-9_", back=len(head))
              for kw, (head, anchor, rest) in _KEYWORDS.items()
              for c in (anchor, anchor.upper())]

# curl -u / --user user:password: a regex of its own, run after each "curl" the big regex finds
# (entering it at every "u" would cost ~15 %); _candidate checks the command.
_CURL_BRANCHES = ([_branch(
    "curlu", "[ \t\\-]-", "u",
    r"""(?:ser)?(?:=|[ \t]++)(?:\\?"(?P<u1>[^":\n]{0,128}+):(?P<p1>[^"\n]{1,256}+)"|"""
    r"""\\?'(?P<u2>[^':\n]{0,128}+):(?P<p2>[^'\n]{1,256}+)'|"""
    r"""(?P<u3>[^\s:"'`;|&<>()]{0,128}+):(?P<p3>[^\s"'`;|&<>()]{1,256}+)"""
    r"""(?=[\s;|&<>)]|\Z))""",
    before=None, back=2)])


@functools.cache
def secret_patterns() -> tuple[re.Pattern, re.Pattern]:
    """``(the big pattern, the curl -u pattern)``, compiled on first use and kept: compiling
    them is slow, which a process that never masks anything (a search that finds
    nothing, ``crabsearch status``) should not pay at import. The same patterns as
    compiling at import: the branches are built at import, only ``re.compile`` waits."""
    return _compile(_BRANCHES), _compile(_CURL_BRANCHES)

# --- deciding on a candidate ----------------------------------------------------------------------

_NAME_BEFORE = re.compile(r"[A-Za-z0-9_\-]*\Z")
_KEY_NAME = re.compile(
    r"(?:api|secret|private|access|auth|client|app|master|encryption|signing|license|"
    r"subscription|service|account)[_\-]?key\Z", re.IGNORECASE
)
_KEY_NAME_SPACED = re.compile(
    r"(?<![A-Za-z0-9])(?:api|secret|private|access|auth|client|app|master|encryption|signing|license|"
    r"subscription|service|account)[ \t]key\Z", re.IGNORECASE
)


def _spaced_key_name(text: str, kw_start: int) -> bool:
    """Whether the ``key`` at ``kw_start`` is a key's name written as two words (``API key``,
    ``access key``, ``License Key``); ``primary key``, ``the key`` are not."""
    return bool(_KEY_NAME_SPACED.search(text, max(0, kw_start - 16), kw_start + 3))


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
    if kw == "key" and not (_KEY_NAME.search(name) or (name.endswith("_KEY") and name.isupper())
                            or _spaced_key_name(text, kw_start)):  # "API key: ..."
        return None
    for quote in ("dq", "sq", "uv"):
        start, end = m.span(f"{tag}__{quote}")
        if start >= 0:
            break
    value = text[start:end]
    if quote == "uv":
        # A JSON-escaped line break ends the value as the character does: ``api_key\n`` was
        # masked whole, and the next line joined onto the masked one.
        escaped = _JSON_BREAK.search(value)
        if escaped:
            end -= len(value) - escaped.start()
            value = value[:escaped.start()]
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
        if tag == "k_telegram":
            digits = _DIGITS_BEFORE.search(text, max(0, m.start() - 17), m.start())
            start = digits.start()
            if not 5 <= len(digits.group()) <= 16 or (
                    start and _WORD_BEFORE.match(text, start - 1)
                    and not text.endswith("bot", 0, start)):  # api.telegram.org/bot<token>/
                return None
        elif tag == "k_slackhook":
            start, end = m.span("k_slackhook__path")
            last = text[text.rfind("/", start, end) + 1:end]
            if len(last) < 8 or _placeholder(last):
                return None  # .../T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX (Slack's docs)
        elif tag == "k_ya29":
            end = start + len(text[start:end].rstrip("."))
        check = _KEY_CHECKS.get(tag)
        if check is not None:
            skip, *needed = check
            if not all(p.search(text, start + skip, end) for p in needed):
                return None  # sk-some-long-kebab-case-name, sk_test_connectionpooling
    elif tag == "curlu":
        for i in "123":
            start, end = m.span(f"curlu__p{i}")
            if start >= 0:
                user = m.group(f"curlu__u{i}")
                break
        value = text[start:end]
        # unquoted: not the end of a sentence ("curl -u user:password."); quoted: the backslash
        # of a JSON-escaped closing quote (-u \\"user:password\\")
        value = value.rstrip(".,:;") if i == "3" else value.removesuffix("\\")
        end = start + len(value)
        if (not value or _placeholder(value) or value.startswith("[")
                or value.lower() in _CURL_NOT_PASSWORDS
                or (value.isdigit() and user.isdigit())  # docker -u 1000:1000 after a curl
                or not _in_curl_command(text, m.start())):
            return None
    elif tag.startswith("awslabel_"):
        start, end = m.span(f"{tag}__v")
        if not _mixed_base64(text, start, end):
            return None
    elif tag.startswith("context_"):
        start, end = m.span(f"{tag}__v")
        value = text[start:end].rstrip(".")
        end = start + len(value)
        kw_start = m.start() - _BACK[tag]
        if ((tag.startswith("context_key") and not _spaced_key_name(text, kw_start))
                or not _opaque(value) or _id_noun_before(text, m, tag)):
            return None
    elif tag.startswith("prose_"):
        start, end = m.span(f"{tag}__qv")
        if start >= 0:
            if not _value_ok(text[start:end], True):
                return None
        else:
            start, end = m.span(f"{tag}__uv")
            value = text[start:end].rstrip(".,:;")
            end = start + len(value)
            if not _prose_password(value):
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
_LETTER = re.compile(r"[A-Za-z]")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_HEX_LETTER = re.compile(r"[a-fA-F]")
# A vendor key's body (after ``skip`` characters of prefix) must hold each of these: random keys
# do (a 24-character base-62 key has no uppercase letter nor digit with probability ~1e-9), names
# built from words do not.
_KEY_CHECKS = {
    "k_sk": (3, _UPPER_OR_DIGIT),
    "k_slack": (0, _DIGIT),
    "k_stripe": (8, _UPPER_OR_DIGIT),
    "k_npm": (4, _UPPER_OR_DIGIT),
    "k_ya29": (5, _UPPER_OR_DIGIT),
    "k_twilio": (2, _DIGIT, _HEX_LETTER),
}
_DIGITS_BEFORE = re.compile(r"[0-9]+\Z")
_WORD_BEFORE = re.compile(r"[A-Za-z0-9_]")
# gitleaks curl-auth-user allowlist: passwords that are placeholders in docs and examples
_CURL_NOT_PASSWORDS = frozenset("pass password pwd test token changeme changeit".split())
_CURL = re.compile(r"curl(?![A-Za-z0-9_])")
_SPACE = re.compile(r"\s")
_COMMAND_SEPARATOR = re.compile(r"&&|\|\||\s\|\s")
_B64_40 = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_NUMBERISH = re.compile(r"[0-9][0-9.,:/\-]*")
_PASSWORDY = re.compile(r"[0-9!@#$%^&*+=?~|\\/]|[a-z][A-Z]")
_HYPHEN_WORD_END = re.compile(r"-[a-z]{3,}\Z")


def _in_curl_command(text: str, pos: int) -> bool:
    """Whether ``pos`` is in a ``curl`` command: ``curl`` earlier on its line or on the lines it
    continues (``\\`` at their end), at most 1 KB back, with no ``&&``/``||``/`` | `` between."""
    lo = max(0, pos - 1024)
    start = text.rfind("\n", lo, pos) + 1
    while start >= 2 and start > lo and text[start - 2] == "\\":
        start = text.rfind("\n", lo, start - 1) + 1
    start = max(start, lo)
    curl = text.rfind("curl", start, pos)
    while curl >= 0 and ((curl and _WORD_BEFORE.match(text, curl - 1))
                         or not _CURL.match(text, curl)):  # libcurl, curly
        curl = text.rfind("curl", start, curl)
    return curl >= 0 and not _COMMAND_SEPARATOR.search(text, curl + 4, pos)


def _mixed_base64(text: str, start: int, end: int) -> bool:
    """An AWS secret access key's shape: an uppercase letter, a lowercase one and a digit (a random
    40-character base-64 string lacks one with probability ~1e-3; a SHA-1 has no uppercase)."""
    return bool(_UPPER.search(text, start, end) and _LOWER.search(text, start, end)
                and _DIGIT.search(text, start, end))


def _aws_secret_after(text: str, end: int) -> tuple[int, int] | None:
    """The span of an AWS secret access key later on the line of an access key id that ends at
    ``end`` (within 80 characters: ``AKIA..., <secret>`` in a credentials CSV, ``Key("AKIA...",
    "<secret>")``), or None."""
    limit = text.find("\n", end, end + 121)
    limit = end + 121 if limit < 0 else limit
    for m in _B64_40.finditer(text, end, min(limit, len(text))):
        if m.start() - end > 80:
            break
        if m.end() < len(text) and text[m.end()] in _B64_CHARS:
            continue  # cut by the window: longer than 40
        if _mixed_base64(text, m.start(), m.end()):
            return m.span()
    return None


_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=")


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F\-]+")


def _entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in collections.Counter(value).values())


def _opaque(value: str) -> bool:
    """A value that looks random, as a key or token does: 20+ characters with a digit and a letter
    and a Shannon entropy of at least 3.5 bits a character (gitleaks ``generic-api-key``'s
    threshold), 3.0 for hex and UUIDs (a 32-digit hex string holds at most 16 symbols; gitleaks'
    hex rules use 3). Words, identifiers (``getUserByIdAndName``), version strings and the
    placeholder UUIDs of tests (``00000000-0000-...``) are not."""
    if not (_DIGIT.search(value) and _LETTER.search(value)) or _placeholder(value):
        return False
    hexish = _UUID.fullmatch(value) or (_HEX.fullmatch(value) and len(value) >= 32)
    return _entropy(value) >= (3.0 if hexish else 3.5)


# Nouns naming what an id identifies: "the token for session <uuid>" names the session's id.
_ID_NOUNS = frozenset(
    "session sessions id ids uuid request requests user users account accounts project projects "
    "run runs thread threads conversation conversations chat chats message messages trace job "
    "jobs build builds commit commits task tasks issue issues ticket tickets org organization "
    "workspace tenant customer device instance record row table".split())


def _id_noun_before(text: str, m: re.Match, tag: str) -> bool:
    """Whether the words between a secret's name and the value (``for session``) end in an id's
    noun (:data:`_ID_NOUNS`) right before it, with no ``is``/``was`` between."""
    start, end = m.span(f"{tag}__words")
    if start < 0:
        return False
    between = text[end:m.start(f"{tag}__v")].strip(" \t\"'`\\")
    last = text[start:end].rstrip(" \t:").rsplit(None, 1)[-1].lower()
    return not between and last in _ID_NOUNS


def _prose_password(value: str) -> bool:
    """An unquoted word after "password is" that looks like a password, not like the prose that
    usually follows (is stored, is required, is 8 characters, is SHA256-hashed): 4+ characters
    with a digit, a symbol or a lower-to-upper case change, and not a number shorter than 6
    digits or a range, nor a word ending in ``-hashed``-like suffix."""
    if (len(value) < 4 or not _value_ok(value) or _HYPHEN_WORD_END.search(value)
            or "://" in value):  # "the password is https://vault/..." points to it
        return False
    if _NUMBERISH.fullmatch(value):
        return value.isdigit() and len(value) >= 6
    return bool(_PASSWORDY.search(value))


def _scan(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, replacement)`` of every secret, in order."""
    found: list[tuple[int, int, str]] = []
    extra: list[tuple[int, int, str]] = []  # found by a second look: merged at the end
    secret_re, curl_user_re = secret_patterns()
    search = secret_re.search
    pos = done = 0
    curl_done = 0
    while (m := search(text, pos)) is not None:
        if m.lastgroup == "curl":  # look for -u user:password in the 2 KB after it (to a blank)
            pos = m.end()
            if pos > curl_done:
                ws = _SPACE.search(text, pos + 2048)
                curl_done = ws.start() if ws else len(text)
                extra += filter(None, (_candidate(text, c) for c in
                                       curl_user_re.finditer(text, m.start(), curl_done)))
            continue
        hit = _candidate(text, m)
        if hit is None or hit[1] <= done:
            pos = m.start() + 1  # look again inside a rejected match: a value may hold a key
            continue
        start, end, replacement = hit
        if start < done:  # a marker reaching back into the previous secret: mask the rest
            start, replacement = done, mask(text[done:end])
        found.append((start, end, replacement))
        pos = done = max(end, m.start() + 1)
        if m.lastgroup == "k_aws" and (span := _aws_secret_after(text, end)) is not None:
            extra.append((*span, mask(text[span[0]:span[1]])))
    if extra:  # kept unless they overlap a secret already found (a key in a curl password)
        starts = [start for start, _, _ in found]
        for hit in sorted(extra):
            start, end = hit[0], hit[1]
            i = bisect.bisect_right(starts, start)
            if (i == 0 or found[i - 1][1] <= start) and (i == len(found) or end <= found[i][0]):
                found.insert(i, hit)
                starts.insert(i, start)
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


KEPT_CHARS = 4_000_000
"""Characters of text whose masked form :func:`redact_kept` keeps (cleared when full; ~4-8 MB)."""

_kept: dict[str, str] = {}
_kept_chars = 0


def redact_kept(text: str) -> str:
    """:func:`redact`, its answer kept for the same text again (:data:`KEPT_CHARS`; a text over
    a sixteenth of it is not kept). For search results: a search masks the title, summary and
    window messages of every row it shows, mostly the rows of the keystroke before (a quarter of
    a typed query's row building at 1 GB was this scan). The patterns are fixed for the process.
    Indexing masks each message once and calls :func:`redact`."""
    global _kept_chars
    out = _kept.get(text)
    if out is None:
        out = redact(text)
        if len(text) <= KEPT_CHARS // 16:
            if _kept_chars + len(text) > KEPT_CHARS:
                _kept.clear()
                _kept_chars = 0
            _kept[text] = out
            _kept_chars += len(text)
    return out


def redact_value(value, _depth: int = 0):
    """A JSON-like ``value`` (dicts, lists, strings, numbers) with every string in it passed
    through :func:`redact`; dict keys are kept. For state that is stored (a reader's resume state
    in the manifest): everything crabsearch stores is masked, like everything it indexes. Values
    nested deeper than 64 levels are returned as they are (reader states are shallow)."""
    if isinstance(value, str):
        return redact(value)
    if _depth > 64:
        return value
    if isinstance(value, dict):
        return {k: redact_value(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, _depth + 1) for v in value]
    return value

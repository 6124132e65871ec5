"""Unicode normalization with offsets back to the original text.

Text that is not in NFC (``cafe\\u0301``, macOS file names, decomposed Hangul) is tokenized in
its NFC form, so it analyzes exactly like its composed form; :func:`nfc_map` says where each
character of that form came from, so the tokens' ``startchar``/``endchar`` (and the highlighting
spans built on them) index the string the caller passed in, a composed character covering its
whole decomposed sequence. NFC text (nearly all text) is only checked
(``unicodedata.is_normalized``), never copied.
"""

from __future__ import annotations

import re
import unicodedata

_NON_ASCII_RE = re.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")


def nfc_map(text: str) -> tuple[str, list[int], list[int]] | None:
    """``(nfc_text, starts, ends)`` where normalized character ``k`` came from
    ``text[starts[k]:ends[k]]``; None when the pieces do not reassemble into
    ``unicodedata.normalize("NFC", text)`` (then the caller tokenizes ``text`` as it is)."""
    nfc = unicodedata.normalize
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    # NFC never composes or reorders across an ASCII character except with the one before a
    # non-ASCII run (``e`` + U+0301), so only those stretches need work.
    for m in _NON_ASCII_RE.finditer(text):
        a, b = m.span()
        if last < a:
            parts.append(text[last:a])
            starts.extend(range(last, a))
            ends.extend(range(last + 1, a + 1))
        cs = a
        for i in range(a + 1, b + 1):
            if i < b:
                c = text[i]
                if unicodedata.combining(c):
                    continue
                seg = text[cs:i]
                if nfc("NFC", seg + c) != nfc("NFC", seg) + nfc("NFC", c):
                    continue  # composes with the cluster (Hangul vowel / final jamo)
            seg = nfc("NFC", text[cs:i])
            parts.append(seg)
            starts.extend([cs] * len(seg))
            ends.extend([i] * len(seg))
            cs = i
        last = b
    if last < len(text):
        parts.append(text[last:])
        starts.extend(range(last, len(text)))
        ends.extend(range(last + 1, len(text) + 1))
    out = "".join(parts)
    if out != nfc("NFC", text):
        return None
    return out, starts, ends

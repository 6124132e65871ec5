"""Markdown for the session view: Rich's ``Markdown`` made safe for transcript text (see
``messageview``, whose ``markdown`` imports this module on first use: Rich's Markdown and
markdown-it are slow to import, which the app's start need not pay), and the plain
text it shows (what find in the session view matches)."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.markdown import Heading, Markdown
from rich.text import Text

from ..redact import MASK


class _LeftHeading(Heading):
    """A heading on the left, bold (Rich centres level 1); the ``#`` marks kept, dim."""

    LEVEL_ALIGN = {}

    def __rich_console__(self, console, options):
        text = self.text.copy()
        text.justify = "left"
        level = int(self.tag[1:]) if self.tag[1:].isdigit() else 1
        yield Text.assemble(("#" * level + " ", "dim"), text)


def parse(markup: str, breaks: bool = False) -> list[Token]:
    """``markup``'s tokens as the session view reads Markdown: CommonMark with tables and
    strikethrough, HTML off (a tag in a transcript is text), an image as text in its line
    (``[image: alt] (address)``), a masked secret's ``***`` as text (:func:`_mask`); with
    ``breaks``, every line break kept (a user's pasted log keeps its lines, as GitHub shows a
    comment)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    md.inline.ruler.before("emphasis", "secret_mask", _mask)
    tokens = md.parse(markup)
    for token in tokens:
        if token.children:
            token.children = [_image_text(c) if c.type == "image" else
                              _hard(c) if breaks and c.type == "softbreak" else c for c in token.children]
    return tokens


def _mask(state, silent: bool) -> bool:
    """Inline rule, before emphasis: a run of exactly three ``*`` is text. It is the mask
    :func:`crabsearch.redact.mask` puts in place of a secret (``AKIAIO***MPLE``), which
    emphasis would take as its marks and draw as ``AKIAIOMPLE``, a value that looks real. Runs of
    one, two or four ``*`` stay emphasis; a line of ``***`` alone is still a rule (a block,
    read before this)."""
    src, pos = state.src, state.pos
    if src[pos:pos + 3] != MASK or src[pos + 3:pos + 4] == "*" or (pos and src[pos - 1] == "*"):
        return False
    if not silent:
        state.pending += MASK
    state.pos = pos + 3
    return True


class SafeMarkdown(Markdown):
    """Rich's Markdown read by :func:`parse` (``breaks``: line breaks kept), headings on the left,
    links as text with their address (``hyperlinks=False``)."""

    elements = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, markup: str, breaks: bool = False, **kwargs) -> None:
        kwargs["hyperlinks"] = False
        super().__init__(markup, **kwargs)
        self.parsed = parse(markup, breaks)


def plain(markup: str, breaks: bool = False) -> str:
    """The text :class:`SafeMarkdown` shows for ``markup``, without its layout: the words of each
    block on lines of their own, code as written, a heading with its ``#`` marks, a link's text
    then its address in brackets, no emphasis marks (a ``**`` is no longer there to find)."""
    out: list[str] = []
    for token in parse(markup, breaks):
        if token.type == "heading_open":
            out.append("#" * int(token.tag[1:]) + " ")
        elif token.type in ("fence", "code_block"):
            out.append(token.content)
        elif token.type == "inline":
            out.append(_inline(token.children or []))
        elif token.type in _AFTER:
            out.append(_AFTER[token.type])
    return "".join(out)


_AFTER = {"heading_close": "\n", "paragraph_close": "\n", "th_close": " ", "td_close": " ", "tr_close": "\n"}
"""What ends a block's text in :func:`plain` (a table's cells are a line of words)."""


def _inline(children: list[Token]) -> str:
    parts: list[str] = []
    links: list[str] = []
    for c in children:
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
        elif c.type == "softbreak":
            parts.append(" ")
        elif c.type == "hardbreak":
            parts.append("\n")
        elif c.type == "link_open":
            links.append(str(c.attrs.get("href", "")))
        elif c.type == "link_close" and links:
            parts.append(f" ({links.pop()})")
    return "".join(parts)


def _hard(token: Token) -> Token:
    return Token("hardbreak", "br", 0)


def _image_text(token: Token) -> Token:
    alt = "".join(c.content for c in token.children or [])
    out = Token("text", "", 0)
    out.content = f"[image{': ' + alt if alt else ''}] ({token.attrs.get('src', '')})"
    return out

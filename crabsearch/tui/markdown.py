"""Markdown for the session view: Rich's ``Markdown`` made safe for transcript text (see
``messageview``, whose ``markdown`` imports this module on first use: Rich's Markdown and
markdown-it cost ~30 ms at import, which the app's start need not pay, issue 13)."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.markdown import Heading, Markdown
from rich.text import Text


class _LeftHeading(Heading):
    """A heading on the left, bold (Rich centres level 1); the ``#`` marks kept, dim."""

    LEVEL_ALIGN = {}

    def __rich_console__(self, console, options):
        text = self.text.copy()
        text.justify = "left"
        level = int(self.tag[1:]) if self.tag[1:].isdigit() else 1
        yield Text.assemble(("#" * level + " ", "dim"), text)


class SafeMarkdown(Markdown):
    """Rich's Markdown with HTML shown as written (the parser's ``html`` option off: a tag in a
    transcript is text), headings on the left, images as text and links as text with their
    address (``hyperlinks=False``)."""

    elements = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, markup: str, **kwargs) -> None:
        kwargs["hyperlinks"] = False
        super().__init__(markup, **kwargs)
        parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
        self.parsed = parser.parse(markup)
        for token in self.parsed:  # an image is text in its line: [image: alt] (address)
            if token.children and any(c.type == "image" for c in token.children):
                token.children = [_image_text(c) if c.type == "image" else c for c in token.children]


def _image_text(token: Token) -> Token:
    alt = "".join(c.content for c in token.children or [])
    out = Token("text", "", 0)
    out.content = f"[image{': ' + alt if alt else ''}] ({token.attrs.get('src', '')})"
    return out

"""Tool output as the session view shows it: colours a command printed kept, JSON made readable.

* SGR escape sequences (``ESC [ ... m``: colours, bold, underline) become styles, decoded by
  Rich's ``AnsiDecoder``; every other control sequence (cursor moves, clears, OSC titles and
  clipboard writes, C1 controls) stays inert, shown as :func:`crabsearch.text.printable` shows it
  (``␛[2J``): only the SGR sequences reach the decoder, everything between them is made printable
  first. Blinking and concealed text are not kept (concealed text would be hidden on screen).
* A result that is one JSON object or array is pretty-printed, and a string in it that holds line
  breaks is shown as its lines, unescaped, under its key (a string that is itself a JSON object
  or array is pretty-printed there in turn). MCP results are such JSON: an MCP server answers
  with content blocks whose text is often the server's own JSON; Claude Code keeps the blocks in
  its ``tool_result`` (formats.md 1.2), and Codex writes them as JSON text into
  ``function_call_output.output`` (openai/codex codex-rs/protocol/src/models.rs,
  ``impl From<&CallToolResult> for FunctionCallOutputPayload``: ``serde_json::to_string(content)``,
  or the ``structured_content``; commit 001cb8e2).
"""

from __future__ import annotations

import json
import re

from rich.ansi import AnsiDecoder
from rich.style import Style
from rich.text import Text

from ..jsonl import loads
from ..text import printable

SGR = re.compile(r"\x1b\[[0-9;]*m")
"""A Select Graphic Rendition sequence: the only escape sequence turned into a style."""
NOT_SHOWN = Style(blink=False, blink2=False, conceal=False)
"""Set over every decoded style: text never blinks or hides."""
JSON_DEPTH = 40
"""Nesting pretty-printed; deeper values are shown as compact JSON on their line."""
KEY_STYLE = "bold"
INDENT = "  "


def tool_output(text: str) -> Text:
    """``text`` (a tool's output as read from the transcript) as a ``Text`` with no control
    character left in it: pretty-printed when it is a JSON object or array (:func:`readable_json`),
    else its SGR sequences as styles (:func:`ansi_text`)."""
    value = json_value(text)
    if value is not None:
        return readable_json(value)
    return ansi_text(text)


def ansi_text(text: str) -> Text:
    """``text`` with its SGR sequences decoded into styles and everything else made printable."""
    if "\x1b[" not in text:
        return Text(printable(text))
    pieces, at = [], 0
    for m in SGR.finditer(text):
        pieces.append(printable(text[at:m.start()]))
        pieces.append(m.group())
        at = m.end()
    pieces.append(printable(text[at:]))
    out = Text("\n").join(AnsiDecoder().decode("".join(pieces)))
    out.spans[:] = [span._replace(style=_shown(span.style)) for span in out.spans]
    return out


def _shown(style) -> Style:
    return (Style.parse(style) if isinstance(style, str) else style) + NOT_SHOWN


def json_value(text: str):
    """The JSON object or array ``text`` holds (leading and trailing white space aside), else None."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")) or not stripped.endswith(("}", "]")):
        return None
    try:
        value = loads(stripped.encode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeEncodeError):
        return None
    return value if isinstance(value, (dict, list)) else None


def readable_json(value) -> Text:
    """``value`` (parsed JSON) indented two spaces a level, keys in bold; a string holding line
    breaks as its lines under its key, one level in; every string made printable."""
    out = Text()
    _value(out, value, 0, "")
    return out


def _value(out: Text, value, depth: int, lead: str) -> bool:
    """Append ``value`` to ``out`` at ``depth``; ``lead`` starts its first line (``"key": ``).
    Returns True when it ended with the lines of a string (no comma goes after them)."""
    pad = INDENT * depth
    nested = _nested(value) if isinstance(value, str) else None
    if isinstance(value, str) and ("\n" in value or nested is not None):
        if lead:
            out.append(pad)
            out.append(lead.rstrip(), style=KEY_STYLE)
            out.append("\n")
            depth += 1
        if nested is not None:
            return _value(out, nested, depth, "")
        lines = printable(value).split("\n")
        out.append("\n".join(INDENT * depth + line for line in lines))
        return True
    out.append(pad)
    out.append(lead, style=KEY_STYLE)
    if not isinstance(value, (dict, list)) or not value or depth >= JSON_DEPTH:
        out.append(printable(json.dumps(value, ensure_ascii=False)))
        return False
    out.append("{" if isinstance(value, dict) else "[")
    entries = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    for n, (key, item) in enumerate(entries):
        out.append("\n")
        key_text = "" if key is None else printable(json.dumps(str(key), ensure_ascii=False)) + ": "
        block = _value(out, item, depth + 1, key_text)
        if n < len(entries) - 1 and not block:
            out.append(",")
    out.append("\n" + pad + ("}" if isinstance(value, dict) else "]"))
    return False


def _nested(value: str):
    """The JSON object or array a string holds (MCP servers put their JSON answer in a text
    field), else None."""
    return json_value(value) if value[:1] in "{[" else None

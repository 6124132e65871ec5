"""How one message looks in the session view: pure functions from an ``Item`` to a Rich renderable.

* user, assistant, summary text and thinking: Markdown (headings, lists, emphasis, tables,
  quotes), fenced code highlighted by its language (Rich's ``Markdown`` and ``Syntax``), ``diff``
  fences coloured; a user's line breaks are kept (a pasted terminal log or stack trace keeps its
  lines); thinking is dim italic;
* a tool call: one line, ``Bash(crontab -l)``, its main argument; expanded (``t``, or Enter on the
  message): every argument, an edit as a coloured diff of the old and the new text;
* tool output: dim, folded to its first lines; a diff in it coloured, the colours and bold of a
  command's own output kept, a JSON answer pretty-printed (``tooloutput``);
* system notices: dim.

:func:`drawn_text` is the text a message shows in full, as plain text: what find (``/``) matches.

Never an interpreter of what a transcript says: text goes through :func:`crabsearch.text.printable`
first (escape sequences, C1 and bidi controls become visible symbols; so do the strings decoded
from a tool call's JSON arguments; in tool output only SGR colour sequences are read, as styles),
Rich markup is never parsed (``[bold]`` shows as written: Markdown makes ``Text`` objects, never
markup), HTML is shown as written (the Markdown parser's HTML is off), and links and images are
shown as text with their address (no OSC 8 hyperlinks, nothing fetched).
"""

from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text

from ..search import Item
from ..text import counted, printable
from .tooloutput import tool_output

PROSE_LINES = 80
"""Lines of user, assistant and summary text shown before the message is folded."""
OTHER_LINES = 8
"""Lines of tool output, expanded tool calls, thinking and system notices shown before folding."""
FULL_LINES = 5000
"""Lines shown of a message in full (``e``, Enter)."""
ONE_LINER = 240
"""Characters of a tool call's main argument on its one line."""
MAIN_ARGUMENTS = ("command", "cmd", "file_path", "pattern", "path", "notebook_path", "query", "url", "prompt",
                  "description", "skill", "subject", "task", "content", "input")
"""The argument a tool call's one line shows, the first one it has (Glob and Grep: the pattern, not the
directory searched in)."""


@dataclass(frozen=True)
class Look:
    """What a message's rendering depends on besides its text (part of the cache key)."""

    width: int
    dark: bool
    full: bool = False
    """Shown in full: ``e``, Enter on the message, a find match in its folded part."""
    tools_full: bool = False
    """``t``: tool calls and output in full."""


def is_tool(item: Item) -> bool:
    """A tool call or tool output (what ``t`` folds, expands or hides)."""
    return item.role == "tool" or item.label.startswith("tool-call:")


def is_prose(item: Item) -> bool:
    """User, assistant or summary text (folded after :data:`PROSE_LINES`)."""
    return item.role in ("user", "assistant", "summary") and item.label != "thinking" and not is_tool(item)


def is_markdown(item: Item) -> bool:
    """Rendered as Markdown: prose (:func:`is_prose`) and thinking."""
    return is_prose(item) or (item.label == "thinking" and not is_tool(item))


def body(item: Item, look: Look) -> tuple[RenderableType, str]:
    """``(renderable, what is folded away)`` of ``item``'s text as the session view shows it;
    what is folded away in words (:func:`left_out`), ``""`` when nothing is."""
    if item.label.startswith("tool-call:"):
        return tool_call(printable(item.label.partition(":")[2]), printable(item.text), look)
    full = look.full or (look.tools_full and is_tool(item))
    cap = FULL_LINES if full else PROSE_LINES if is_prose(item) else OTHER_LINES
    if item.role == "tool":
        output = tool_output(item.text)
        shown, more = fold(output.plain, cap, look.width)
        if looks_like_diff(shown):
            return diff_text(shown), more
        output = output[:len(shown)]
        output.style = "dim"  # under the output's own colours
        return output, more
    shown, more = fold(printable(item.text), cap, look.width)
    if is_markdown(item):
        return markdown(shown, look, breaks=item.role == "user",
                        style="dim italic" if item.label == "thinking" else "none"), more
    return Text(shown, style="dim"), more


def drawn_text(item: Item) -> str:
    """The text ``item`` shows in full (a tool call with every argument, tool output unfolded),
    as plain text without its layout: the words and symbols on screen, not the transcript's
    (a tool call's JSON keys, Markdown's ``**``, escape codes read as colours are not there)."""
    if item.label.startswith("tool-call:"):
        name, text = printable(item.label.partition(":")[2]), printable(item.text)
        return one_line(name, text).plain + "\n" + _arguments_text(text)
    if item.role == "tool":
        return tool_output(item.text).plain
    text = printable(item.text)
    if is_markdown(item):
        from .markdown import plain

        return plain(text, breaks=item.role == "user")
    return text


def preview(item: Item) -> Text:
    """``item`` as the results list previews it (a row's snippet, an expanded row's window): a
    tool call as its one line (``Bash(npm test)``), tool output as the view draws it
    (:func:`~crabsearch.tui.tooloutput.tool_output`: a command's colours and bold kept, dim
    under them; a JSON answer indented, its strings' line breaks as lines); other text as
    written, made printable. Markdown is not rendered in a preview (its marks show as typed): the
    list is drawn again at each key typed, and parsing a message's Markdown costs more than the
    rest of its row."""
    if item.label.startswith("tool-call:"):
        return one_line(printable(item.label.partition(":")[2]), printable(item.text))
    if item.role == "tool":
        output = tool_output(item.text)
        output.style = "dim"
        return output
    return Text(printable(item.text))


def fold(text: str, cap: int, width: int) -> tuple[str, str]:
    """The first ``cap`` lines of ``text`` and what is left out, in words (:func:`left_out`). One
    huge line (minified JSON, base64) is cut after the screen lines it would wrap to, and what is
    left of it is counted in characters: a 1 MB line is not "1 more line", as if a line were
    hidden, when most of one line is."""
    lines = text.splitlines() or [""]
    more, chars = max(0, len(lines) - cap), 0
    shown = "\n".join(lines[:cap])
    room = cap * max(20, width)
    if cap < FULL_LINES and len(shown) > room:
        rest = shown[room:]
        chars = len(rest.partition("\n")[0])  # of the line cut
        more += rest.count("\n")  # the lines after it, up to the cap
        shown = shown[:room]
    return shown, left_out(more, chars)


def left_out(lines: int, chars: int) -> str:
    """What a fold leaves out, in words (``""``: nothing): ``12 more lines``; a cut inside a line
    counts the rest of that line in characters, ``992,400 more characters``, ``and 3 more lines``
    when whole lines follow it."""
    parts = []
    if chars:
        parts.append(counted(chars, "more character", grouped=True))
    if lines:
        parts.append(counted(lines, "more line", grouped=True))
    return " and ".join(parts)


def markdown(text: str, look: Look, breaks: bool = False, style: str = "none") -> RenderableType:
    """``text`` as Markdown in ``style``, code highlighted with a theme for the app's light or
    dark look; ``breaks``: every line break kept."""
    from .markdown import SafeMarkdown  # Rich's Markdown and markdown-it: on the first session opened

    theme = "monokai" if look.dark else "friendly"
    return SafeMarkdown(text, breaks=breaks, style=style, code_theme=theme, inline_code_theme=theme)


# -- tool calls --------------------------------------------------------------------------------


def arguments(text: str):
    """A tool call's arguments: the JSON object (or list) its text holds, else None (cut short,
    or not JSON at all). Every string in it is made printable again: JSON's ``\\u001b`` escapes
    decode to the very control characters ``printable`` took out of the text."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return _inert(json.loads(text))
    except (ValueError, RecursionError):
        return None


def _inert(value):
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [_inert(v) for v in value]
    if isinstance(value, dict):
        return {printable(str(k)): _inert(v) for k, v in value.items()}
    return value


def main_argument(args) -> str:
    """The argument a tool call's one line shows: the first of :data:`MAIN_ARGUMENTS` it has (a
    shell command given as a list is joined; ``bash -lc SCRIPT`` shows the script), else its
    arguments as ``key=value`` pairs."""
    if isinstance(args, dict):
        for key in MAIN_ARGUMENTS:
            value = args.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                if len(value) == 3 and value[1] in ("-lc", "-c") and value[0].endswith("sh"):
                    return value[2]
                return shlex.join(value)
            if isinstance(value, str) and value.strip():
                return value
        return ", ".join(f"{k}={_short(v)}" for k, v in args.items())
    return _short(args)


def _short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return printable(text) if len(text) <= 60 else printable(text[:59]) + "…"


def one_line(name: str, text: str) -> Text:
    """``Name(main argument)`` on one line (newlines shown as ⏎)."""
    args = arguments(text)
    arg = main_argument(args) if args is not None else text
    arg = " ⏎ ".join(part.strip() for part in arg.strip().splitlines() if part.strip())
    if len(arg) > ONE_LINER:
        arg = arg[: ONE_LINER - 1] + "…"
    return Text.assemble((name or "tool", "bold"), ("(", "dim"), (arg, ""), (")", "dim"), no_wrap=True,
                         overflow="ellipsis")


def tool_call(name: str, text: str, look: Look) -> tuple[RenderableType, str]:
    """A tool call: its one line; in full, every argument below it (:func:`expansion`)."""
    head = one_line(name, text)
    if not (look.full or look.tools_full):
        return head, ""
    more = expansion(text)
    if isinstance(more, str):
        from rich.syntax import Syntax  # with Pygments: imported when a session first shows a tool call

        more = Syntax(more, "json", theme="monokai" if look.dark else "friendly", word_wrap=True,
                      background_color="default")
    return Group(head, more), ""


def expansion(text: str) -> Text | str:
    """What a tool call (its arguments ``text``, printable) shows under its one line in full: an
    edit as a coloured diff of the old and the new text (every edit of a multi-edit), a patch
    argument as a coloured diff, else its arguments as indented JSON (a ``str``, for the
    caller to highlight), or the text as it is when it is no JSON."""
    args = arguments(text)
    path = str(args.get("file_path") or "") if isinstance(args, dict) else ""
    if isinstance(args, dict) and isinstance(args.get("old_string"), str) and isinstance(args.get("new_string"), str):
        return edit_diff(args["old_string"], args["new_string"], path)
    if isinstance(args, dict) and isinstance(args.get("edits"), list):
        return Text("\n").join(edit_diff(e["old_string"], str(e.get("new_string") or ""), path)
                               for e in args["edits"] if isinstance(e, dict) and isinstance(e.get("old_string"), str))
    patch = next((v for v in (args.values() if isinstance(args, dict) else []) if isinstance(v, str)
                  and looks_like_diff(v)), None)
    if patch is not None:  # Codex apply_patch and friends
        return diff_text(patch)
    if args is not None:
        return json.dumps(args, indent=2, ensure_ascii=False)
    return Text(text, style="dim")


def _arguments_text(text: str) -> str:
    more = expansion(text)
    return more if isinstance(more, str) else more.plain


# -- diffs -------------------------------------------------------------------------------------


def looks_like_diff(text: str) -> bool:
    """True for a unified diff (``@@`` hunks, ``diff --git``, or ``---``/``+++`` file lines) or
    a Codex patch (``*** Begin Patch``)."""
    head = text[:4000]
    return ("\n@@ " in "\n" + head or head.startswith("diff --git") or "\ndiff --git" in head
            or ("\n--- " in "\n" + head and "\n+++ " in head) or "*** Begin Patch" in head)


DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("diff ", "bold"), ("***", "bold"),
               ("+", "green"), ("-", "red"))


def diff_text(text: str) -> Text:
    """A diff with added lines green, removed red, hunk headers cyan."""
    out = Text()
    for n, line in enumerate(text.split("\n")):
        if n:
            out.append("\n")
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "dim")
        out.append(line, style=style)
    return out


def edit_diff(old: str, new: str, path: str) -> Text:
    """An edit (old text replaced by new) as a coloured unified diff."""
    lines = difflib.unified_diff(printable(old).splitlines(), printable(new).splitlines(),
                                 fromfile=printable(path) or "before", tofile=printable(path) or "after",
                                 lineterm="", n=2)
    return diff_text("\n".join(lines))


# -- sizes -------------------------------------------------------------------------------------


def estimate_lines(item: Item, look: Look) -> int:
    """A guess of the screen lines ``item``'s body takes (before it is rendered: the view lays
    out messages it has not rendered yet with it, and corrects it when it renders them)."""
    if item.label.startswith("tool-call:"):
        return 1 if not (look.full or look.tools_full) else 12
    full = look.full or (look.tools_full and is_tool(item))
    cap = FULL_LINES if full else PROSE_LINES if is_prose(item) else OTHER_LINES
    width = max(20, look.width - 5)
    lines = item.text.splitlines()[:cap] or [""]
    return sum(1 + len(line) // width for line in lines) + (1 if len(item.text.splitlines()) > cap else 0)

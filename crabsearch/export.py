"""Sessions and context windows as Markdown (``crabsearch export``, and the app's export keys).

Format: a header (title, then a list: agent, project, branch, started/updated, message count,
session id, resume command or a web chat's address), then one ``### #N Label · time`` section per
message, in order.
User and assistant text is written as it is (it is usually Markdown already); a code fence left
open in it is closed after the message, so it cannot swallow the messages after it. Tool calls
and tool output go in fenced blocks whose fence is longer than any backtick run in the text, so
no transcript text can end the block early (CommonMark: a closing fence must be at least as long
as the opening one). Thinking is a block quote. Times are UTC.

Control characters other than newline and tab are made visible (``crabsearch.text``), so an
export printed to a terminal cannot drive it; CRLF becomes LF. Secrets are masked by the engine
(``Engine.page(..., redact=)``) unless the caller asks otherwise.

A session is read with ``Engine.page`` :data:`PAGE` messages at a time and yielded piece by piece,
so a long session is never held in memory whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from .hits import Hit, Item, SessionRef
from .search.skipped import MARK, SkippedLine, after_last, before, shown_with
from .sources.base import heading_text
from .model import LABEL_ASSISTANT, LABEL_SUMMARY, LABEL_SYSTEM, LABEL_THINKING, LABEL_USER
from .text import printable

PAGE = 50
"""Messages read per ``Engine.page`` call."""

_HEADINGS = {LABEL_USER: "User", LABEL_ASSISTANT: "Assistant", LABEL_THINKING: "Thinking",
             LABEL_SYSTEM: "System", LABEL_SUMMARY: "Summary"}
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


FILE_STEM_MAX = 120
"""Characters of an export's file name before ``.md`` at most (file systems allow 255 bytes)."""


def file_stem(session) -> str:
    """An export's file name, ``.md`` aside: ``claude-5c0375b4-57a5-4f26-b12d-d022ee4e51b7``, the
    agent and the whole session id (``crabsearch show`` and ``export`` take it back), characters
    other than letters, digits, ``-`` and ``_`` made ``-``; an id too long for a file name
    (:data:`FILE_STEM_MAX`) gives its first 8 characters, the short id ``show`` takes too."""
    stem = f"{session.agent}-{session.session_id}"
    if len(stem) > FILE_STEM_MAX:
        stem = f"{session.agent}-{session.session_id[:8]}"
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in stem)


def session_markdown(engine, ref: SessionRef, *, redact: bool | None = True, start: int = 0,
                     stop: int | None = None, include_tools: bool = True,
                     page_size: int = PAGE) -> Iterator[str]:
    """The session ``ref`` as Markdown, in pieces (header first, then one piece per message).

    ``start``/``stop`` are 0-based message indexes, ``stop`` exclusive (None: to the end; both
    clamped to the session). ``redact``: mask secrets (True), show them (False), or the engine's
    setting (None). ``include_tools=False`` leaves tool calls and tool output out. A line the
    reader skipped is a :func:`placeholder` where it was. Messages are
    read ``page_size`` at a time with ``engine.page``; a message whose transcript line changed
    since indexing reads as ``hits.UNAVAILABLE``. Raises what ``engine.page`` raises (nothing
    for a missing transcript: its messages read as unavailable)."""
    total = ref.session.message_count
    start = min(max(0, start), total)
    stop = total if stop is None else min(max(start, stop), total)
    part = f"#{start + 1}" + (f"-#{stop}" if stop > start + 1 else "")
    engine.link(ref, redact=redact)
    yield header(ref, f"{total}" + (f" (exported: {part})" if (start, stop) != (0, total) else ""),
                 full_title(engine, ref))
    skipped = shown_with(engine.skipped_lines(ref), start, stop, total)
    offset = start
    while offset < stop:
        page = engine.page(ref, offset, min(page_size, stop - offset), redact=redact)
        if not page.messages:
            break
        for item in page.messages:
            yield from (placeholder(line) for line in before(skipped, item.message_index))
            if include_tools or not is_tool(item):
                yield message(item)
        offset += len(page.messages)
    yield from (placeholder(line) for line in after_last(skipped, total))


def placeholder(line: SkippedLine) -> str:
    """Where the reader skipped a line of the transcript: ``\n⊘ *line 3 skipped: 17 MB, over the
    16 MB cap*\n`` (``search.skipped``)."""
    return f"\n{MARK} *{clean(line.text())}*\n"


def window_markdown(hit: Hit, items: Iterable[Item] | None = None, *, include_tools: bool = True,
                    title: str | None = None) -> str:
    """A context window as Markdown: the same header and message sections as
    :func:`session_markdown`, only ``items`` (default ``hit.window``), the hit's section marked
    ``(hit)``; ``title`` replaces the stored title (:func:`full_title`). Items are used as they
    are (already masked, and cut to ``MAX_ITEM_BYTES`` by the engine; a cut text is followed by
    a note)."""
    items = list(hit.window if items is None else items)
    shown = (f"{hit.session.message_count} (window: #{items[0].message_index + 1}-#{items[-1].message_index + 1}"
             f" around #{hit.message_index + 1})" if items else f"{hit.session.message_count}")
    return header(hit.ref, shown, title) + "".join(
        message(i) for i in items if include_tools or i.hit or not is_tool(i))


def held_markdown(ref: SessionRef, items: list[Item], *, title: str | None = None) -> str:
    """A session whose transcript is gone (deleted or moved since it was indexed) as Markdown,
    from the messages ``items`` a caller read before it went (the app's session view: each
    message as far as it read it, a cut one followed by a note): the header and sections of
    :func:`session_markdown`; when ``items`` are not the whole session, the Messages line says
    which ones these are (``120 (exported: #1-#40, the messages read before its transcript was
    deleted or moved)``)."""
    total = ref.session.message_count
    shown = f"{total}"
    if items and [i.message_index for i in items] != list(range(total)):
        first, last = items[0].message_index + 1, items[-1].message_index + 1
        part = f"#{first}" + (f"-#{last}" if last > first else "")
        shown += f" (exported: {part}, the messages read before its transcript was deleted or moved)"
    return header(ref, shown, title) + "".join(message(i) for i in items)


TITLE_CHARS = 300
"""The most of a first prompt's line an export's title shows."""


def full_title(engine, ref: SessionRef) -> str | None:
    """The title a session's export starts with: a title made from the first prompt is stored
    cut (``…`` at 80 characters); this is that prompt's whole first line (up to
    :data:`TITLE_CHARS`), read from the transcript. None when the stored title is whole, or the
    prompt no longer starts with it. Masked always, as stored titles are."""
    title = " ".join((ref.session.title or "").split())
    if not title.endswith("…"):
        return None
    try:
        page = engine.page(ref, ref.session.anchor_index, 1, redact=True)
    except Exception:  # noqa: BLE001 - the stored title is still a title
        return None
    for item in page.messages:
        line = next((heading_text(" ".join(ln.split())) for ln in item.text.splitlines()
                     if heading_text(" ".join(ln.split()))), "")
        if len(line) > len(title) - 1 and line.startswith(title[:-1].rstrip()):
            return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1].rstrip() + "…"
    return None


def header(ref: SessionRef, messages: str, title: str | None = None) -> str:
    """The Markdown header of a session: ``# title`` and a list of its fields; ``messages`` is
    the text of the Messages line; ``title`` replaces the stored one (:func:`full_title`)."""
    s = ref.session
    rows = [("Agent", s.agent), ("Project", code_span(s.project) if s.project else None),
            ("Branch", code_span(s.git_branch) if s.git_branch else None),
            ("Started", when(s.started)), ("Updated", when(s.updated)), ("Messages", messages),
            ("Session", code_span(s.session_id)),
            ("Parent session", code_span(s.parent_session_id) if s.parent_session_id else None),
            ("Continued in", _link(ref.links.get("continued_in"))),
            ("Continued from", _link(ref.links.get("continued_from"))),
            ("Archived", "yes (its agent archived it)" if s.archived else None),
            ("Resume", code_span(ref.resume_command) if ref.resume_command else None),
            ("Open", ref.open_url),
            ("Transcript", code_span(s.path))]
    title = " ".join(clean(title or s.title or "").split()) or "(untitled)"
    out = [f"# {title}\n\n"] + [f"- **{k}:** {v}\n" for k, v in rows if v]
    if s.summary:
        out.append("\n" + quote(clean(s.summary)))
    return "".join(out)


def _link(link: dict | None) -> str | None:
    """A linked session in the header: its id, then its title when known."""
    if not link:
        return None
    title = " ".join(clean(link.get("title") or "").split())
    return code_span(link["session_id"]) + (f" ({title})" if title else "")


def message(item: Item) -> str:
    """One message as a Markdown section: ``\\n### #N Label · time[ · (hit)]\\n\\n`` + body."""
    head = f"\n### #{item.message_index + 1} {heading(item.label)}"
    if item.timestamp:
        head += f" · {when(item.timestamp)}"
    if item.hit:
        head += " · (hit)"
    if getattr(item, "abandoned", False):
        head += " · (abandoned branch: a rewind replaced it)"
    if getattr(item, "sidechain", False):
        head += " · (subagent turn)"
    text = clean(item.text)
    if is_tool(item):
        lang = "json" if item.label.startswith("tool-call:") and text.lstrip().startswith(("{", "[")) else ""
        body = fenced(text, lang)
    elif item.label == LABEL_THINKING:
        body = quote(text)
    else:
        body = balanced(text) + "\n"
    note = "\n*(cut: the rest of this message is not shown)*\n" if item.truncated else ""
    return f"{head}\n\n{body}{note}"


def heading(label: str) -> str:
    """Readable heading of a message label: ``tool-call:Bash`` -> ``Tool call · `Bash```."""
    if label in _HEADINGS:
        return _HEADINGS[label]
    kind, _, name = label.partition(":")
    if kind in ("tool-call", "tool") and name:
        return f"{'Tool call' if kind == 'tool-call' else 'Tool output'} · {code_span(name)}"
    return clean(label)


def is_tool(item: Item) -> bool:
    """True for a tool call or tool output item (the same rule as ``Message.is_tool_payload``)."""
    return item.role == "tool" or item.label.startswith("tool-call:")


def when(ts: datetime | None) -> str | None:
    """``YYYY-MM-DD HH:MM:SS UTC`` of an aware datetime, or None."""
    return None if ts is None else ts.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def clean(text: str) -> str:
    """``text`` with CRLF and CR line ends as LF and other control characters except tab made
    visible (``crabsearch.text.printable``; tabs are kept)."""
    text = text.replace("\r\n", "\n")
    return "\t".join(printable(part) for part in text.split("\t"))


def fence_for(text: str, char: str = "`") -> str:
    """A code fence that ``text`` cannot close: ``char`` repeated once more than its longest run
    in ``text``, at least 3 times."""
    longest = max((len(m) for m in re.findall(re.escape(char) + "+", text)), default=0)
    return char * max(3, longest + 1)


def fenced(text: str, lang: str = "") -> str:
    """``text`` in a fenced code block (a fence from :func:`fence_for`), ending with a newline."""
    fence = fence_for(text)
    return f"{fence}{lang}\n{text}{'' if text.endswith(chr(10)) or not text else chr(10)}{fence}\n"


def code_span(text: str) -> str:
    """``text`` as an inline code span (backtick run longer than any in it; padded with a space
    when it starts or ends with a backtick); newlines become spaces."""
    text = " ".join(clean(text).splitlines())
    ticks = "`" * (max((len(m) for m in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def quote(text: str) -> str:
    """``text`` as a block quote (every line prefixed with ``> ``), ending with a newline."""
    return "".join(f"> {line}".rstrip(" ") + "\n" for line in text.split("\n"))


def balanced(text: str) -> str:
    """``text`` with a closing fence appended when it leaves a fenced code block open (CommonMark
    rule: a block opened by N backticks or tildes closes at a line of N or more of the same
    character and nothing else), so the sections after it are not swallowed."""
    open_fence = None
    for line in text.split("\n"):
        m = _FENCE_LINE.match(line)
        if not m:
            continue
        run, rest = m.groups()
        if open_fence is None:
            if not (run[0] == "`" and "`" in rest):  # a backtick fence's info string has no backtick
                open_fence = run
        elif run[0] == open_fence[0] and len(run) >= len(open_fence) and not rest.strip():
            open_fence = None
    if open_fence is None:
        return text
    return f"{text}{'' if text.endswith(chr(10)) else chr(10)}{open_fence}"

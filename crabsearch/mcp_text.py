"""The text blocks of ``crabsearch mcp``'s answers, for clients that show only text:
the same data as the structured result, laid out to read. Every block is made
:func:`~crabsearch.text.printable` (transcript text cannot act on a terminal that shows it)."""

from __future__ import annotations

from .search.skipped import MARK
from .text import printable


def _when(ts: str | None) -> str:
    return f"{ts[:10]} {ts[11:16]} UTC" if ts else "?"


def _line(text: str) -> str:
    return " ".join(text.split())


def search_text(data: dict) -> str:
    """The Crabtalk layout: per session a header line (title · agent · project · updated ·
    matched message #N) and its id (and web address, a web chat's), then one line per window message, ``[role #N] text`` (``#N``
    is ``message_index``; the label before the text when it says more than the role, such as
    ``tool-call:Bash``), the hit marked ``→``, a cut text ending in ``…``."""
    out = [f"({n})" for n in data["notes"]]
    if not data["hits"]:
        out.append(f"No sessions match {data['query']!r}.")
        return printable("\n".join(out), tabs=True)
    for h in data["hits"]:
        out.append("")
        out.append(" · ".join([h["title"] or "(untitled)", h["agent"], h["project"] or "?", _when(h["updated"]),
                               f"matched message #{h['message_index']}" if h["message_count"] else
                               "no messages (only its title is indexed)"]))
        out.append(f"session_id {h['session_id']} ({h['message_count']} messages)"
                   + (f"; {'; '.join(h['notes'])}" if h["notes"] else "")
                   + (f"; open {h['url']}" if h.get("url") else ""))
        for i in h["window"]:
            mark = "→ " if i["hit"] else "  "
            kind = f"{i['label']}: " if i["label"] != i["role"] else ""
            out.append(f"{mark}[{i['role']} #{i['message_index']}] {kind}{_line(i['text'])}"
                       + (" …" if i["truncated"] else ""))
    out.append("")
    out.append("Read on with list_messages(session_id, offset=N) from message #N.")
    return printable("\n".join(out).lstrip("\n"), tabs=True)


def page_text(data: dict) -> str:
    """A header (title · agent · project, the range shown), then each message as a line
    ``[role #N] label · time`` followed by its text as written."""
    msgs = data["messages"]
    shown = (f"messages #{msgs[0]['message_index']}-#{msgs[-1]['message_index']} of {data['total']}"
             if msgs else f"no messages ({data['total']} in the session)")
    out = [" · ".join([data["title"] or "(untitled)", data["agent"], data["project"] or "?", shown]),
           f"session_id {data['session_id']}" + (f"; open {data['url']}" if data.get("url") else "")]
    skipped = data.get("skipped_lines") or []
    for m in msgs:
        out += [f"\n{MARK} {s['text']}" for s in skipped if s["before"] == m["message_index"]]
        out.append("")
        out.append(f"[{m['role']} #{m['message_index']}] {m['label']} · {_when(m['timestamp'])}")
        out.append(m["text"] + (" …" if m["truncated"] else ""))
    out += [f"\n{MARK} {s['text']}" for s in skipped if s["before"] >= data["total"]]
    out.append("")
    if data["trimmed"]:
        out.append("(page shortened to stay under 64 KB)")
    out.append(f"(next page: offset={data['next_offset']})" if data["next_offset"] is not None
               else "(end of the session)")
    return printable("\n".join(out), tabs=True)


def recent_text(data: dict) -> str:
    """One line per session: title · agent · project · updated · N messages · session_id."""
    out = [f"({n})" for n in data["notes"]]
    if not data["sessions"]:
        out.append("No sessions.")
    for s in data["sessions"]:
        out.append(" · ".join([s["title"] or "(untitled)", s["agent"], s["project"] or "?", _when(s["updated"]),
                               f"{s['message_count']} messages", f"session_id {s['session_id']}"]
                              + ([f"open {s['url']}"] if s.get("url") else [])))
    return printable("\n".join(out), tabs=True)

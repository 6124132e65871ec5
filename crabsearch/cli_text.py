"""What the ``crabsearch`` commands print: the text lines of ``index``, ``status``, ``search``
and ``show``, and their JSON (:func:`dump`, inert in a terminal: ``text.terminal_json``).

The text output is for people (its wording may change); the JSON shapes are the CLI contract
(``docs/cli.md``). Every transcript string printed as text goes through ``text.printable``.
``crabsearch.cli`` parses the command line and runs the commands; nothing here reads the index.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .text import printable, terminal_json


def server_line(srv: dict) -> str:
    """``crabsearch status``'s line on the resident server (``launch.server``)."""
    if not srv["enabled"]:
        return "resident server: off (CRABSEARCH_NO_SERVER)"
    if srv["socket"] is None:
        return "resident server: not used (no private directory for its socket)"
    if not srv["running"]:
        return "resident server: not running (the next search or show starts it)"
    pid = f"pid {srv['pid']}, " if srv["pid"] else ""
    return f"resident server: running ({pid}socket {srv['socket']}; it stops when idle)"


def app_of(session) -> str | None:
    """Which app created a session when its agent has several (``Cline CLI``, ``Cline (VS Code)``,
    ``Roo Code``, ``Cursor IDE``, ``Cursor CLI``), else None: the JSON ``app`` of a hit or page."""
    app = session.extra.get("app")
    return app if isinstance(app, str) and app else None


def dump(obj) -> None:
    """``obj`` as JSON on stdout (``text.terminal_json``: inert in a terminal), one line feed after."""
    sys.stdout.write(terminal_json(obj) + "\n")


def search_json(result, notes: list[str]) -> dict:
    """``crabsearch search --json``: ``result.to_json()`` with ``notes`` (the text output's notes:
    the result's own, a spelling repair, a cut query) and each hit's ``archived`` and ``app``."""
    d = result.to_json()
    d["notes"] = notes
    for hit, hd in zip(result.hits, d["hits"]):
        hd["archived"] = hit.session.archived
        hd["app"] = app_of(hit.session)
    return d


def page_json(page) -> dict:
    """``crabsearch show --json``: ``page.to_json()`` with the session's ``archived`` and ``app``."""
    d = page.to_json()
    d["session"]["archived"] = page.ref.session.archived
    d["session"]["app"] = app_of(page.ref.session)
    return d


def warn(report) -> None:
    """A refresh ``report``'s rebuild reason and its first five errors, each a line on stderr."""
    if report.rebuilt:
        print(f"crabsearch: {report.rebuilt}", file=sys.stderr)
    for err in report.errors[:5]:
        print(f"crabsearch: skipped {err}", file=sys.stderr)


def print_report(report, index_dir: Path, sessions: int, as_json: bool, error: str | None = None) -> None:
    """``crabsearch index``'s summary of ``report`` (JSON with ``as_json``); ``error``: why the
    index could not be updated (the JSON's ``error``, null when it was)."""
    data = {"index_dir": str(index_dir), "files_seen": report.files_seen, "files_read": report.files_read,
            "files_removed": report.files_removed, "files_kept": report.files_kept, "sessions": sessions,
            "messages_added": report.messages_added, "skipped_lines": report.skipped_lines,
            "by_agent": report.by_agent, "errors": report.errors, "unreadable_dirs": report.unreadable_dirs,
            "busy": report.busy,
            "rebuilt": report.rebuilt, "seconds": round(report.seconds, 3), "error": error}
    if as_json:
        dump(data)
        return
    warn(report)
    for d in report.unreadable_dirs:
        print(f"crabsearch: cannot read directory {d}; its transcripts are not indexed", file=sys.stderr)
    agents = ", ".join(f"{k} {v}" for k, v in sorted(report.by_agent.items())) or "none found"
    print(f"index: {index_dir}")
    one = report.files_kept == 1
    kept = (f"; {report.files_kept} indexed {'transcript' if one else 'transcripts'} not found in these folders "
            f"{'is' if one else 'are'} kept (still on disk)" if report.files_kept else "")
    print(f"transcripts: {report.files_seen} ({agents}); read {report.files_read}, removed {report.files_removed}"
          + kept)
    print(f"sessions: {sessions}; messages added: {report.messages_added}; "
          f"skipped lines: {report.skipped_lines}; {report.seconds:.2f}s")


def print_hits(result, notes: list[str] | None = None) -> None:
    """The hits of ``result`` as text, after ``notes`` (default: ``request.Answer``'s for the
    result), each in parentheses."""
    from .hits import structure_notes
    from .query import used_part
    from .search.request import Answer

    for note in Answer(result).notes if notes is None else notes:
        print(f"({note})")
    if not result.hits:
        print(f"no sessions match {used_part(result.query) + ('…' if result.cut else '')!r}")
        return
    for n, hit in enumerate(result.hits, 1):
        s = hit.session
        when = s.updated.strftime("%Y-%m-%d %H:%M") if s.updated else "?"
        print(f"{n}. {printable(s.title or '(untitled)')}  [{s.agent}] {_project(s)}  {when}"
              + ("  (archived)" if s.archived else "") + ("  (similar in meaning)" if hit.route == "similar" else ""))
        item = hit.item
        if item is not None:
            print(f"   {item.label}: {printable(_around(' '.join(item.text.split()), result.terms))}")
        where = f"message #{hit.message_index + 1} of {s.message_count}" if s.message_count else NO_MESSAGES
        print(f"   id {s.session_id}  {where}")
        notes = structure_notes(hit)
        if notes:
            print(f"   {printable('; '.join(notes))}")
        if hit.ref.resume_command:
            print(f"   resume: {printable(hit.ref.resume_command)}")
        if hit.ref.open_url:
            print(f"   open: {printable(hit.ref.open_url)}")
        if hit.explain:
            ex = hit.explain
            print(f"   explain: {ex['route']}; score {hit.score:.3f} = message {ex['message_score']:.3f} + "
                  f"title/summary {ex['session_score']:.3f}; anchored on {ex['anchored_on']}; "
                  f"matched {', '.join(ex['matched']) or '-'}")


NO_MESSAGES = "no messages (only its title is indexed)"
"""What a result row says instead of ``message #N of M`` for a session that holds no message."""


def _project(session) -> str:
    """A session's project in a text row, ``(no project)`` when it has none (the app's rows say
    ``no project``), so a row's columns never hold an empty field."""
    return printable(session.project) if session.project else "(no project)"


SNIPPET_CHARS = 200
"""Characters (UTF-8 bytes) of the hit message a plain-text result shows."""


def _around(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """``width`` bytes of ``text`` that show its first match of the query's ``terms``
    (``hits.cut_around``, a quarter of the line before the match), wherever in the message the
    match is; the text's start when no term matches."""
    from .hits import cut_around
    from .search import Engine

    spans = Engine.term_spans(text, terms) if terms else []
    return cut_around(text, width, spans[0][0] if spans else None, lead=width // 4)[0]


def print_page(page) -> None:
    from .hits import continuation_notes
    from .search.skipped import MARK, after_last, before

    s = page.ref.session
    shown = (f"messages {page.offset + 1}-{page.offset + len(page.messages)} of {page.total}"
             if page.messages else f"no messages shown ({page.total} in the session)")
    print(f"{printable(s.title or '(untitled)')}  [{s.agent}] {_project(s)}  {shown}"
          + ("  (archived)" if s.archived else ""))
    for note in continuation_notes(page.ref):
        print(printable(note))
    if page.ref.resume_command:
        print(f"resume: {printable(page.ref.resume_command)}")
    if page.ref.open_url:
        print(f"open: {printable(page.ref.open_url)}")
    for m in page.messages:
        for s in before(page.skipped, m.message_index):
            print(f"\n{MARK} {s.text()}")
        when = m.timestamp.strftime("%Y-%m-%d %H:%M:%S") if m.timestamp else ""
        mark = "  (abandoned branch)" if m.abandoned else ""
        print(f"\n#{m.message_index + 1} {m.label} {when}{mark}")
        print(printable(m.text))
        for sub in m.subagents:
            print(f"→ subagent session {printable(sub['session_id'])}: {printable(sub['title'] or '(not indexed)')}")
    for s in after_last(page.skipped, page.total):
        print(f"\n{MARK} {s.text()}")
    if page.next_offset is not None:
        print(f"\n(next page: --offset {page.next_offset})")

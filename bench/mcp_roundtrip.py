"""``crabsearch mcp`` round trips, measured as a client sees them (issue 12): the server as a
subprocess speaking stdio, driven by the ``mcp`` SDK's own client (the initialize handshake
clients use today). Called by ``run.py`` after the engine's query latency; see README.md.

* *start*: from spawning ``python -m crabsearch mcp`` to the initialize handshake done, and to
  the first ``search_sessions`` answer (interpreter start-up, imports, the server's refresh of an
  unchanged index, the search). Median of ``starts`` servers.
* *search_sessions round trip*: one warm server, the bench's query shapes in the tool's default
  shape (limit 5, context 2+2), 2 warm-up calls then ``runs`` timed calls per shape, back to
  back. The server refreshes at most once a second, so a burst like this one pays for the
  refresh about once a second (when a timed call falls there, it is in that call).
* *after a pause*: a rare-word search 1.05 s after the previous call, so each one pays for a
  no-change refresh first (what an agent's first call of a turn costs).
* *engine*: ``Engine.search`` with the same arguments in the bench process, timed right after
  each shape's round trips: the round trip minus it is what the protocol adds.
* *list_messages* (20 messages from a little before a hit) and *recent_sessions* (10).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

MOVED_BY = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "APPDATA", "VSCODE_PORTABLE", "CLINE_DIR", "PI_CODING_AGENT_DIR",
            "AIDER_CHAT_HISTORY_FILE", "CRABSEARCH_AIDER_DIRS", "CRABSEARCH_SPECSTORY_DIRS", "CRABSEARCH_INDEX_DIR")
"""Variables that would point the server's discovery at real transcripts, beside each source's."""


def server_env(base: dict[str, str], work: Path) -> dict[str, str]:
    """``base`` (the bench's child environment) without anything that moves an agent's
    directory, and with no config file (a user's ``index_tool_output = true`` would rebuild the
    bench's index)."""
    from crabsearch.sources import SOURCES

    drop = set(MOVED_BY) | {s.env_var for s in SOURCES.values() if s.env_var}
    env = {k: v for k, v in base.items() if k not in drop}
    env["CRABSEARCH_CONFIG"] = str(work / "no-config.toml")
    return env


async def _timed(client, name: str, args: dict, check) -> tuple[float, object]:
    t = time.perf_counter()
    r = await client.call_tool(name, args)
    dt = time.perf_counter() - t
    check(not r.is_error, f"mcp {name}({args}) failed: {r.content[0].text if r.content else r}")
    return dt, r


async def _serve(argv: list[str], env: dict[str, str], first_query: str, check):
    """Start a server; ``(client context, seconds to initialized, seconds to the first answer)``."""
    from mcp import Client, StdioServerParameters

    t0 = time.perf_counter()
    ctx = Client(StdioServerParameters(command=argv[0], args=argv[1:], env=env), mode="legacy",
                 read_timeout_seconds=600)
    client = await ctx.__aenter__()
    t_init = time.perf_counter() - t0
    await _timed(client, "search_sessions", {"query": first_query}, check)
    return ctx, client, t_init, time.perf_counter() - t0


def _engine_times(engine, args: dict, runs: int) -> list[float]:
    """``Engine.search`` in this process for the same call (the server's work without the
    protocol), 2 warm-up calls then ``runs`` timed ones."""
    kw = dict(limit=5, before=2, after=2, agent=args.get("agent"))
    for _ in range(2):
        engine.search(args["query"], **kw)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        engine.search(args["query"], **kw)
        times.append(time.perf_counter() - t)
    return times


async def _bench(argv, env, index_dir, shapes, queries, runs: int, starts: int, pauses: int, summary,
                 check) -> dict:
    from crabsearch.search import Engine

    out: dict = {"start": {}, "search": [], "shape": {"limit": 5, "context_before": 2, "context_after": 2}}
    engine = Engine(index_dir, keep_scans=False)  # each run a search, not the last one's scans again
    rare = queries["rare"]
    inits, firsts = [], []
    for n in range(starts):
        ctx, client, t_init, t_first = await _serve(argv, env, rare, check)
        inits.append(t_init)
        firsts.append(t_first)
        if n < starts - 1:
            await ctx.__aexit__(None, None, None)
    out["start"] = {"initialized_s": summary(inits), "first_answer_s": summary(firsts)}
    try:
        calls = []
        for name, key, agent in shapes:
            args = {"query": queries[key]}
            if agent:
                args["agent"] = agent
            calls.append((name, args))
            for _ in range(2):
                await _timed(client, "search_sessions", args, check)
        times: dict[str, list] = {name: [] for name, _ in calls}
        last: dict = {}
        for _ in range(runs):  # the shapes in turn: the server keeps the scans of the search before
            for name, args in calls:
                dt, last[name] = await _timed(client, "search_sessions", args, check)
                times[name].append(dt)
        for name, args in calls:
            agent, r = args.get("agent"), last[name]
            data = r.structured_content or {}
            out["search"].append({"shape": name, "query": args["query"], "agent": agent, "route": data.get("route"),
                                  "hits": len(data.get("hits", [])), "rt": summary(times[name]),
                                  "engine": summary(_engine_times(engine, args, runs))})
            want = agent or ("codex" if "agent:codex" in args["query"] else None)
            if want:
                check(all(h["agent"] == want for h in data.get("hits", [])), f"mcp {args}: agent filter leaked")
        paused = []
        for _ in range(pauses):
            await asyncio.sleep(1.05)
            dt, _ = await _timed(client, "search_sessions", {"query": rare}, check)
            paused.append(dt)
        out["after_pause_s"] = summary(paused)
        _, r = await _timed(client, "search_sessions", {"query": rare, "limit": 1}, check)
        hit = (r.structured_content or {}).get("hits") or [None]
        if check(hit[0] is not None, f"mcp: no hit for {rare!r}"):
            args = {"session_id": hit[0]["session_id"], "offset": max(0, hit[0]["message_index"] - 2), "limit": 20}
            out["list_messages_s"] = summary([(await _timed(client, "list_messages", args, check))[0]
                                               for _ in range(runs)])
        out["recent_sessions_s"] = summary([(await _timed(client, "recent_sessions", {}, check))[0]
                                             for _ in range(runs)])
    finally:
        engine.close()
        await ctx.__aexit__(None, None, None)
    return out


def bench_mcp(index_dir: Path, base_env: dict[str, str], work: Path, shapes, queries: dict, runs: int,
              starts: int, pauses: int, summary, check) -> dict:
    """Start ``crabsearch mcp`` on ``index_dir`` (HOME from ``base_env``) and time its round trips
    (module docstring); into a report dict. ``summary(values)`` is run.py's (median, p95...);
    ``check(ok, what)`` records failed calls."""
    argv = [sys.executable, "-m", "crabsearch", "mcp", "--index-dir", str(index_dir)]
    env = server_env(base_env, work)
    return asyncio.run(_bench(argv, env, index_dir, shapes, queries, runs, starts, pauses, summary, check))


def print_mcp(m: dict, ms) -> None:
    """The printed table of :func:`bench_mcp`'s report (``ms`` formats seconds)."""
    st = m["start"]
    print("\nMCP server (`crabsearch mcp` over stdio, the SDK's client; search_sessions limit 5, context 2+2)")
    print(f"  {'start: spawn -> initialized / -> first answer':<46} {ms(st['initialized_s']['median'])} / "
          f"{ms(st['first_answer_s']['median'])}  (median of {st['first_answer_s']['n']})")
    print(f"  {'shape':<20} {'query':<36} {'route':<8} {'hits':>5} {'p50':>9} {'p95':>9}   "
          f"{'engine p50':>10} {'p95':>9}")
    for x in m["search"]:
        print(f"  {x['shape']:<20} {x['query']:<36} {x['route'] or '-':<8} {x['hits']:>5} "
              f"{ms(x['rt']['median']):>9} {ms(x['rt']['p95']):>9}   {ms(x['engine']['median']):>10} "
              f"{ms(x['engine']['p95']):>9}")
    worst = max(x["rt"]["p95"] for x in m["search"])
    over = statistics.median(x["rt"]["median"] - x["engine"]["median"] for x in m["search"])
    print(f"  {'worst p95 of the shapes':<46} {ms(worst)}")
    print(f"  {'round trip minus engine (median of the shapes)':<46} {ms(over)}  (engine: Engine.search, same "
          "call, in the bench process)")
    if "after_pause_s" in m:
        print(f"  {'after a 1 s pause (with a no-change refresh)':<46} {ms(m['after_pause_s']['median'])} median, "
              f"{ms(m['after_pause_s']['p95'])} p95")
    if "list_messages_s" in m:
        print(f"  {'list_messages (20 messages) p50 / p95':<46} {ms(m['list_messages_s']['median'])} / "
              f"{ms(m['list_messages_s']['p95'])}")
    print(f"  {'recent_sessions (10) p50 / p95':<46} {ms(m['recent_sessions_s']['median'])} / "
          f"{ms(m['recent_sessions_s']['p95'])}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run bench/run.py; this module is its MCP step")

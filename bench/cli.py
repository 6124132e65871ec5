#!/usr/bin/env python3
"""Whole-process timings of the ``crabsearch`` command and of the app's start (issue 13, targets 1-2).

    python bench/cli.py [--mb 50] [--runs 15] [--app-runs 7] [--workdir DIR] [--out FILE]
    python bench/cli.py --smoke          # 2 MB, 3 runs, 2 app starts: a quick check, < 1 min

What is timed (medians and p95 over ``--runs`` runs of every query shape, interleaved):

* ``crabsearch search Q --json`` as a user runs it after the README's ``pip install .``: the
  console script of a copy installed in the work directory (``install``; not this repository's
  editable ``.venv``, whose import hook adds 15-40 ms to every start), a new process each time, with its default refresh and with ``--no-refresh``; for the shape
  with an agent filter ``--agent codex``. Wall time from spawning the process to its exit, seen
  by this process, and the child's CPU time (user + system, ``os.wait4``), which a shared machine
  disturbs less.
* The same two modes with ``CRABSEARCH_NO_SERVER=1`` ("alone"): the command runs in its own
  process, as the first call does and as it did before the resident server. The default modes go
  through the server (``crabsearch.launch``), which the warm-up's first call starts; their CPU
  time is the client's only (the server's work is not the child's).
* The first call: no server running (the last one stopped), so the command runs itself and starts
  one (``--first-runs`` times; the server is stopped after each).
* ``rg -liF Q`` on the agents' directories of the same home (``.claude``, ``.codex``): the
  query text as one fixed string, any case, file names only. The ratio is crabsearch's median over
  ripgrep's, per shape and over all shapes (median of the per-shape medians).
* App start: ``crabsearch`` with no command (the terminal app) in a subprocess, Textual's headless
  driver (``App.run(headless=True)``), on the warm index, background refresh and file watching on
  as a user has them. Timed from spawning the process to the first call of the results list's
  ``show`` with rows (the recent sessions) plus the screen refresh after it
  (``call_after_refresh``): the child then writes one line to its stdout, which this process
  reads. Interpreter start, imports, the app's compose, the recent-sessions query and the first
  paint of the rows are inside; the terminal's own drawing is not (headless).

The home is ``bench/gen.py --mb N`` (seed 1) plus, when ``../shared/corpus/real`` exists next to
the repository, its real Claude Code and Codex transcripts copied in (``real_files`` in the
report). The index is built once with ``crabsearch index``; every measured child has ``HOME``
set to the home, no ``CLAUDE_CONFIG_DIR``/``CODEX_HOME``/``CRABSEARCH_INDEX_DIR``,
``XDG_CONFIG_HOME`` inside the home (no user config), and bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` removed, ``PYTHONPYCACHEPREFIX`` in the work directory; one
warm-up run fills it): an installed package has its ``.pyc`` files, and without them every run
would compile crabsearch's sources (~80 ms here).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import gen  # noqa: E402  (bench/gen.py)
from run import EXTRA_QUERIES, QUERY_SHAPES, git_info, pick_spread_pair, summary  # noqa: E402

REAL = ROOT.parent / "shared" / "corpus" / "real"
TARGETS = {"refresh": 0.100, "no_refresh": 0.080, "rg_ratio": 5.0, "app_start": 0.5}
"""Issue 13: targets 1 (median over the shapes, seconds; ratio against ripgrep) and 2."""

# The child of an app-start run: the app as ``crabsearch`` starts it, headless, writing one line
# to fd 1 at the first frame composed after the first rows are shown (``App._display``, where a
# terminal would be written; print would go to Textual's capture).
_APP_CHILD = r"""
import os, sys
from textual.app import App
from crabsearch.tui import results

_show = results.ResultList.show
def show(self, hits, *a, **k):
    _show(self, hits, *a, **k)
    if hits and not getattr(self.app, "_bench_rows", False):
        self.app._bench_rows = True
results.ResultList.show = show
_display = App._display
def display(self, screen, renderable):
    _display(self, screen, renderable)
    if renderable is not None and getattr(self, "_bench_rows", False) and not getattr(self, "_bench_done", False):
        self._bench_done = True
        os.write(1, b"shown\n")
        self.exit()
App._display = display
_run = App.run
App.run = lambda self, **kw: _run(self, headless=True, **kw)
from crabsearch.cli import main
sys.exit(main(sys.argv[1:]))
"""


def child_env(home: Path, work: Path) -> dict[str, str]:
    """The environment of every measured child (see the module docstring)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CRABSEARCH_INDEX_DIR", "PYTHONDONTWRITEBYTECODE",
                        "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_CACHE_HOME"] = str(work / "cache")
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env.pop("PYTHONPATH", None)  # crabsearch comes from the installed copy (``install``)
    env.pop("CRABSEARCH_NO_SERVER", None)  # the resident server as a user has it (a mode turns it off)
    env.pop("CRABSEARCH_SERVER_IDLE", None)
    run_dir = work / "run"  # the server's socket, in this work directory
    run_dir.mkdir(mode=0o700, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(run_dir)
    return env


def stop_servers(env: dict[str, str]) -> int:
    """Stop every resident server whose socket is in ``env``'s runtime directory (SIGTERM to the
    pid its socket's peer credentials give); returns how many were stopped."""
    import signal
    import socket

    from crabsearch.launch import peer_credentials

    stopped = 0
    for sock_path in (Path(env["XDG_RUNTIME_DIR"]) / "crabsearch").glob("*.sock"):
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock_path))
                pid = peer_credentials(s)[0]
            os.kill(pid, signal.SIGTERM)
        except OSError:  # nobody listening: a socket left behind
            sock_path.unlink(missing_ok=True)
            continue
        stopped += 1
        for _ in range(300):  # until it is gone
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.01)
        sock_path.unlink(missing_ok=True)
    return stopped


def install(work: Path, src: Path = ROOT, name: str = "installed") -> Path:
    """crabsearch installed as the README's ``pip install .`` installs it, in ``work/installed``:
    a virtual environment whose site-packages holds a copy of ``crabsearch/`` and whose ``bin``
    holds pip's console script; its dependencies come from this Python's site-packages through a
    ``.pth`` line (so nothing is downloaded). Returns the environment's Python. An editable
    install (``pip install -e``, this repository's ``.venv``) is not what users run: its import
    hook costs 15-40 ms at every start (``python -X importtime``: ``__editable___crabsearch_*``).
    ``src``: the source tree whose ``crabsearch/`` is copied; ``name``: the environment's folder."""
    import sysconfig

    venv = work / name
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    shutil.rmtree(site / "crabsearch", ignore_errors=True)
    shutil.copytree(src / "crabsearch", site / "crabsearch", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "crabsearch-bench-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = venv / "bin" / "crabsearch"
    script.write_text(f"#!{python}\nimport re\nimport sys\nfrom crabsearch.launch import main\n"
                      "if __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      "    sys.exit(main())\n")
    script.chmod(0o755)
    return python


def rg_command() -> tuple[list[str], str]:
    """``(command, label)``: ripgrep (PyPI's ``ripgrep`` package puts ``rg`` beside this Python),
    else ``grep -rliF`` as a stand-in, labelled so."""
    for cand in (Path(sys.executable).with_name("rg"), shutil.which("rg")):
        if cand and Path(cand).exists():
            return [str(cand), "-liF"], "rg -liF"
    return ["grep", "-rliF"], "grep -rliF (ripgrep not installed)"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """``(wall seconds, child CPU seconds, exit code, stdout)`` of one run of ``cmd``."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, proc.returncode, out


def app_start(python: Path, env: dict[str, str], index_dir: Path, timeout: float = 60) -> float | None:
    """Seconds from spawning the app (headless, with the installed ``python``) to its first rows
    painted; None on failure."""
    cmd = [str(python), "-c", _APP_CHILD, "--index-dir", str(index_dir)]
    t = time.perf_counter()
    # From the work directory: ``python -c`` puts the current directory first on sys.path, and
    # from this repository it would import crabsearch/ here instead of the installed copy.
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=index_dir.parent)
    try:
        line = proc.stdout.readline()
        took = time.perf_counter() - t
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return None
    return took if line.strip() == b"shown" else None


def make_home(work: Path, mb: float, seed: int) -> dict:
    """The generated home (kept when it exists) and the real transcripts copied into it."""
    home = work / "home"
    meta_path = home / "bench-corpus.json"
    if not meta_path.exists():
        gen.write_corpus(home, mb, seed)
    real = 0
    if REAL.is_dir():
        for agent, sub, dest in (("claude", "projects", home / ".claude" / "projects"),
                                 ("codex", "sessions", home / ".codex" / "sessions")):
            for repo in sorted((REAL / agent).glob(f"*/{sub}")):
                for f in repo.rglob("*"):
                    if f.is_file():
                        target = dest / f.relative_to(repo)
                        if not target.exists():
                            target.parent.mkdir(parents=True, exist_ok=True)
                            shutil.copy2(f, target)
                        real += 1
    return {"home": home, "meta": json.loads(meta_path.read_text()), "real_files": real}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=50, help="generated history size in MB (default 50)")
    ap.add_argument("--runs", type=int, default=15, help="runs per shape and mode (default 15)")
    ap.add_argument("--app-runs", type=int, default=7, help="app starts (default 7)")
    ap.add_argument("--first-runs", type=int, default=5, help="first calls, each starting a server (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="work here (kept; the home and index are reused)")
    ap.add_argument("--out", default=str(HERE / "out" / "cli.json"), help="JSON report (default bench/out/cli.json)")
    ap.add_argument("--smoke", action="store_true", help="2 MB, 3 runs, 2 app starts")
    ap.add_argument("--tree", help="install this source tree's crabsearch/ (default: this repository's), "
                                   "e.g. a worktree of an older commit, to compare on one home")
    args = ap.parse_args(argv)
    if args.smoke:
        args.mb, args.runs, args.app_runs, args.first_runs = 2, 3, 2, 2
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="crabsearch-cli-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return run(work, args)
    finally:
        stop_servers(child_env(work / "home", work))
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


def run(work: Path, args) -> int:
    h = make_home(work, args.mb, args.seed)
    home, meta = h["home"], h["meta"]
    index_dir = work / "index"
    env = child_env(home, work)
    python = install(work, Path(args.tree) if args.tree else ROOT)
    cs = [str(python.with_name("crabsearch"))]
    t = time.perf_counter()
    subprocess.run(cs + ["index", "--index-dir", str(index_dir), "--json"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    build_s = time.perf_counter() - t
    queries = dict(meta["queries"], **EXTRA_QUERIES)
    queries["spread"] = pick_spread_pair(index_dir, args.seed)["query"]
    rg, rg_label = rg_command()
    roots = [str(home / d) for d in (".claude", ".codex") if (home / d).is_dir()]
    transcripts = [p for r in roots for p in Path(r).rglob("*") if p.is_file()]
    corpus = {"files": len(transcripts), "bytes": sum(p.stat().st_size for p in transcripts),
              "real_files": h["real_files"]}

    def cs_cmd(q, agent, refresh):
        cmd = cs + ["search", *q.split(), "--json", "--index-dir", str(index_dir)]
        if agent:
            cmd += ["--agent", agent]
        return cmd + ([] if refresh else ["--no-refresh"])

    alone_env = dict(env, CRABSEARCH_NO_SERVER="1")
    problems = []
    # the first call: no server, so it runs itself and starts one (stopped again each time)
    first = []
    for _ in range(args.first_runs):
        stop_servers(env)
        timed(cs_cmd("the", None, True), alone_env)  # the page cache warm, as for the other modes
        w, _, rc, _ = timed(cs_cmd("token refresh", None, True), env)
        first.append(w)
        if rc != 0:
            problems.append(f"first call: exit {rc}")
        time.sleep(0.5)  # the server it started finishes its own start before the next stop
    # warm-up: bytecode caches, the page cache, the index's files, the server
    for _ in range(2):
        timed(cs_cmd("the", None, True), env)
        timed(cs_cmd("the", None, True), alone_env)
        timed(rg + ["the", *roots], env)
    rows = []
    shapes = [(name, queries[key], agent) for name, key, agent in QUERY_SHAPES]
    modes = {name: {"refresh": cs_cmd(q, agent, True), "no_refresh": cs_cmd(q, agent, False),
                    "alone": cs_cmd(q, agent, True), "alone_no_refresh": cs_cmd(q, agent, False),
                    "rg": rg + [q, *roots]} for name, q, agent in shapes}
    wall = {name: {m: [] for m in modes[name]} for name, _, _ in shapes}
    cpu = {name: {m: [] for m in modes[name]} for name, _, _ in shapes}
    hits: dict[str, int] = {}
    for _ in range(args.runs):
        # Interleaved (a burst of load hits every mode alike), each mode through every shape in
        # turn: the server keeps the scans of the search before for the next (the same query again
        # would take them, and time that, not a search).
        for m in ("refresh", "no_refresh", "alone", "alone_no_refresh", "rg"):
            for name, _, _ in shapes:
                w, c, rc, out = timed(modes[name][m], alone_env if m.startswith("alone") else env)
                if m != "rg" and rc != 0:
                    problems.append(f"{name}: {m} exit {rc}")
                if m == "no_refresh" and name not in hits and rc == 0:
                    hits[name] = len(json.loads(out)["hits"])
                wall[name][m].append(w)
                cpu[name][m].append(c)
    for name, q, agent in shapes:
        row = {"shape": name, "query": q, "agent": agent, "hits": hits.get(name)}
        for m in modes[name]:
            row[m] = summary(wall[name][m])
            row[f"{m}_cpu"] = summary(cpu[name][m])
        row["rg_ratio"] = row["refresh"]["median"] / row["rg"]["median"]
        rows.append(row)
        print(f"  {name:22} refresh {row['refresh']['median'] * 1000:5.0f} ms  no-refresh "
              f"{row['no_refresh']['median'] * 1000:5.0f} ms  alone {row['alone']['median'] * 1000:5.0f} / "
              f"{row['alone_no_refresh']['median'] * 1000:5.0f} ms  rg {row['rg']['median'] * 1000:4.1f} ms",
              flush=True)
    app = [s for s in (app_start(python, env, index_dir) for _ in range(args.app_runs)) if s is not None]
    if len(app) < args.app_runs:
        problems.append(f"app start: {args.app_runs - len(app)} of {args.app_runs} runs did not show rows")
    all_modes = ("refresh", "no_refresh", "alone", "alone_no_refresh", "rg")
    overall = {m: statistics.median(r[m]["median"] for r in rows) for m in all_modes}
    overall.update({f"{m}_cpu": statistics.median(r[f"{m}_cpu"]["median"] for r in rows) for m in all_modes})
    overall["rg_ratio"] = overall["refresh"] / overall["rg"]
    overall["alone_rg_ratio"] = overall["alone"] / overall["rg"]
    report = {
        "date": time.strftime("%Y-%m-%d"), "git": git_info(), "tree": args.tree, "python": platform.python_version(),
        "cpus": os.cpu_count(), "mb": args.mb, "runs": args.runs, "corpus": corpus, "build_s": build_s,
        "command": cs, "rg": rg_label, "shapes": rows, "overall": overall,
        "app_start": summary(app) if app else None, "first_call": summary(first) if first else None,
        "targets": TARGETS, "problems": problems,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    table = format_table(report)
    print(table)
    out.with_suffix(".txt").write_text(table + "\n")
    return 1 if problems else 0


def format_table(r: dict) -> str:
    """The printed table: one row per shape, then the targets with their figures."""
    ms = lambda s: f"{s * 1000:.0f}"  # noqa: E731
    c = r["corpus"]
    lines = [f"crabsearch whole-process CLI and app start: {r['date']}, git {r['git'].get('commit')}"
             f"{' (crabsearch/ dirty)' if r['git'].get('crabsearch_dirty') else ''}, Python {r['python']}, "
             f"{r['cpus']} CPUs",
             f"home: {c['files']} transcripts, {c['bytes'] / 1e6:.1f} MB ({c['real_files']} real), "
             f"{r['runs']} runs per shape and mode; ripgrep: {r['rg']}",
             "",
             "Through the resident server (the default after the first call; cpu: the client's only), and "
             "alone (CRABSEARCH_NO_SERVER=1: the command in its own process, as before the server).",
             "",
             "| shape | hits | search --json p50 / p95 ms (cpu) | --no-refresh p50 / p95 ms (cpu) "
             "| alone: search --json / --no-refresh p50 ms | rg p50 ms | x rg |",
             "|---|---|---|---|---|---|---|"]
    for row in r["shapes"]:
        f, n, g = row["refresh"], row["no_refresh"], row["rg"]
        lines.append(f"| {row['shape']} | {row['hits']} | {ms(f['median'])} / {ms(f['p95'])} "
                     f"({ms(row['refresh_cpu']['median'])}) | {ms(n['median'])} / {ms(n['p95'])} "
                     f"({ms(row['no_refresh_cpu']['median'])}) | {ms(row['alone']['median'])} / "
                     f"{ms(row['alone_no_refresh']['median'])} | {g['median'] * 1000:.1f} | {row['rg_ratio']:.1f} |")
    o, t = r["overall"], r["targets"]
    ok = lambda good: "met" if good else "NOT met"  # noqa: E731
    lines += ["",
              f"median over shapes: search --json {ms(o['refresh'])} ms (cpu {ms(o['refresh_cpu'])}), target "
              f"<= {ms(t['refresh'])}: {ok(o['refresh'] <= t['refresh'])}",
              f"                    --no-refresh {ms(o['no_refresh'])} ms (cpu {ms(o['no_refresh_cpu'])}), target "
              f"<= {ms(t['no_refresh'])}: {ok(o['no_refresh'] <= t['no_refresh'])}",
              f"                    {r['rg']} {o['rg'] * 1000:.1f} ms; crabsearch / ripgrep {o['rg_ratio']:.1f}x, "
              f"target <= {t['rg_ratio']:.0f}x: {ok(o['rg_ratio'] <= t['rg_ratio'])}",
              f"alone (no server):  search --json {ms(o['alone'])} ms, --no-refresh {ms(o['alone_no_refresh'])} ms, "
              f"{o['alone_rg_ratio']:.1f}x ripgrep"]
    fc = r.get("first_call")
    if fc:
        lines.append(f"first call (no server yet: runs alone and starts one): median {ms(fc['median'])} ms (n={fc['n']})")
    a = r["app_start"]
    if a:
        lines.append(f"app start (launch to recent sessions painted, headless, warm index): median "
                     f"{ms(a['median'])} ms, p95 {ms(a['p95'])} ms (n={a['n']}), target <= {ms(t['app_start'])}: "
                     f"{ok(a['median'] <= t['app_start'])}")
    for p in r["problems"]:
        lines.append(f"PROBLEM: {p}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

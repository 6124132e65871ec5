#!/usr/bin/env python3
"""A full index build at several ``--jobs``, interleaved, with peak RSS per process and query
latency after.

    python bench/parallel_build.py HOME [--jobs 1,2] [--rounds 2] [--base DIR] [--query-runs 10]
                                   [--out bench/results/NAME]

``HOME`` is a tree from ``bench/gen.py`` (generated once, reused). Each round builds a fresh index
of it once per variant, in the order given (1, 2, 1, 2, ...: a load that changes during the
sitting hits every variant alike): ``python -m crabsearch index --json --jobs N``, and with
``--base DIR`` first a build by the crabsearch package exported to ``DIR`` (the code before the
change, e.g. ``git archive <commit> crabsearch | tar -x -C DIR``; run with ``python -S`` so the
editable install of this checkout does not shadow it). Per build: wall time, MB/s, CPU seconds
of the whole process tree and the peak RSS of its largest process (exact: ``RUSAGE_CHILDREN`` of
a parent of its own per build), each process's ``VmHWM`` and CPU seconds sampled from ``/proc``
every 50 ms (parent and workers; the busiest process's CPU seconds is the build's critical path
when every process has a core of its own: the wall time on an otherwise idle machine), the load average before it, the index size and segment count. Then query latency
(``run.bench_queries``, every shape of ``bench/run.py``) on the last index of each variant.
Writes ``OUT.json`` and ``OUT.md``-ready lines on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import run  # noqa: E402  (bench/run.py)

MB = run.MB


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    if int(f.read().rpartition(")")[2].split()[1]) == pid:
                        out.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _hwm_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


_WRAPPER = r"""
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    json.dump({"rc": r.returncode, "cpu_s": u.ru_utime + u.ru_stime, "maxrss_kib": u.ru_maxrss}, f)
"""
"""A parent of its own for each build: its ``RUSAGE_CHILDREN`` is that build's tree alone (the
largest ``ru_maxrss`` of the build's processes, their CPU time)."""


def _cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (``/proc/PID/stat``)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def measured(cmd: list[str], env: dict, work: Path) -> dict:
    """Run ``cmd``; wall time, CPU of its tree, exact tree max RSS, sampled VmHWM per process."""
    load = os.getloadavg()
    t = time.perf_counter()
    usage = work / "usage.json"
    proc = subprocess.Popen([sys.executable, "-c", _WRAPPER, str(usage), *cmd], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    hwm: dict[int, int] = {}
    cpu: dict[int, float] = {}
    import threading

    out: dict = {}
    reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"), proc.communicate())))
    reader.start()
    build = None
    while proc.poll() is None:
        if build is None:
            kids = _children(proc.pid)
            build = kids[0] if kids else None
        if build is not None:
            for pid in [build, *_children(build)]:
                v = _hwm_kib(pid)
                if v is not None:
                    hwm[pid] = max(hwm.get(pid, 0), v)
                c = _cpu_s(pid)
                if c is not None:
                    cpu[pid] = max(cpu.get(pid, 0.0), c)
        time.sleep(0.05)
    reader.join()
    wall = time.perf_counter() - t
    u = json.loads(usage.read_text())
    parent = hwm.pop(build, 0)
    parent_cpu = cpu.pop(build, 0.0)
    return {"wall_s": wall, "rc": u["rc"], "load_before": [round(x, 2) for x in load],
            "cpu_s": u["cpu_s"], "tree_max_rss_mib": u["maxrss_kib"] / 1024,
            "parent_hwm_mib": parent / 1024, "worker_hwm_mib": sorted(v / 1024 for v in hwm.values()),
            "parent_cpu_s": parent_cpu, "worker_cpu_s": sorted(cpu.values()),
            "stdout": out.get("stdout", b"").decode("utf-8", "replace"),
            "stderr": out.get("stderr", b"").decode("utf-8", "replace")[-2000:]}


def segments(index_dir: Path) -> int:
    from crabsearch.index.store import open_index, release

    ix, _ = open_index(index_dir, create=False)
    try:
        return len(ix._read_toc().segments)
    finally:
        release(ix)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("home", type=Path)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--base", type=Path, help="a crabsearch package exported from the commit before")
    ap.add_argument("--query-runs", type=int, default=10, help="0: no query latency")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    meta = json.loads((args.home / "bench-corpus.json").read_text("utf-8"))
    work = args.workdir or Path(tempfile.mkdtemp(prefix="crabsearch-parallel-"))
    env = run.child_env(args.home)
    variants = ([("base", None)] if args.base else []) + [(f"jobs{j}", int(j)) for j in args.jobs.split(",")]
    site = sysconfig.get_paths()["purelib"]
    boot = ("import sys; sys.path[:0] = [sys.argv.pop(1), sys.argv.pop(1)]; "
            "from crabsearch.cli import main; sys.exit(main(sys.argv[1:]))")
    builds: list[dict] = []
    for r in range(args.rounds):
        for name, jobs in variants:
            idx = work / f"index-{name}"
            shutil.rmtree(idx, ignore_errors=True)
            if jobs is None:
                cmd = [sys.executable, "-S", "-c", boot, str(args.base), site, "index", "--index-dir", str(idx), "--json"]
            else:
                cmd = [sys.executable, "-m", "crabsearch", "index", "--index-dir", str(idx), "--json", "--jobs", str(jobs)]
            res = measured(cmd, env, work)
            if res["rc"] != 0:
                print(f"{name}: exit {res['rc']}: {res['stderr']}", file=sys.stderr)
                return 1
            rep = json.loads(res.pop("stdout"))
            res.pop("stderr")
            res.update(variant=name, round=r, jobs=jobs, mb_per_s=meta["bytes"] / MB / res["wall_s"],
                       messages=rep.get("messages_added"), errors=len(rep.get("errors") or []),
                       index_bytes=run.dir_bytes(idx), segments=segments(idx))
            res["mb_per_cpu_s"] = meta["bytes"] / MB / res["cpu_s"]
            res["busiest_cpu_s"] = max([res["parent_cpu_s"], *res["worker_cpu_s"]])
            builds.append(res)
            print(f"round {r} {name:6} {res['wall_s']:6.1f} s {res['mb_per_s']:5.1f} MB/s  cpu {res['cpu_s']:6.1f} s "
                  f"({res['mb_per_cpu_s']:4.1f} MB/cpu-s; busiest process {res['busiest_cpu_s']:5.1f} s, parent {res['parent_cpu_s']:4.1f} s)  parent {res['parent_hwm_mib']:5.0f} MiB  workers "
                  f"{[round(x) for x in res['worker_hwm_mib']]} MiB  tree max {res['tree_max_rss_mib']:4.0f} MiB  "
                  f"{res['segments']} segments {res['index_bytes'] / MB:5.1f} MB  load {res['load_before']}", flush=True)
    check = run.Checks()
    latency = {}
    if not args.query_runs:
        variants = []
    else:
        spread = run.pick_spread_pair(work / f"index-{variants[-1][0]}", 1)
        queries = {**meta["queries"], **run.EXTRA_QUERIES, "spread": spread["query"]}
    for name, _ in variants:
        rows = run.bench_queries(work / f"index-{name}", queries, args.query_runs, check)
        latency[name] = [{"shape": r["shape"], "query": r["query"], "api_p50_ms": r["api"]["median"] * 1000,
                          "tui_p50_ms": r["tui"]["median"] * 1000, "hits": r["api_hits"]} for r in rows]
        print(f"queries on {name}: " + ", ".join(f"{x['shape']} {x['api_p50_ms']:.1f}" for x in latency[name]), flush=True)
    report = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "usable_cores": len(os.sched_getaffinity(0))},
              "git": run.git_info(), "corpus": {k: meta[k] for k in ("files", "messages", "bytes")},
              "builds": builds, "query_latency": latency, "checks_failed": check.failed}
    if args.out:
        args.out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Issue 16, defect 4: three indexers, an agent appending every 50 ms, searches, and a fourth
indexer switching tool-output indexing on (a rebuild each time), all at once, for 20 seconds:
every appended message is indexed exactly once, and nothing fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from builders import ClaudeSession

from crabsearch.search import Engine

SECONDS = float(os.environ.get("CRABSEARCH_STRESS_SECONDS", "20"))


def _env(home: Path, index_dir: Path, *extra: str) -> dict:
    env = {**os.environ, "HOME": str(home), "CRABSEARCH_INDEX_DIR": str(index_dir)}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    return env


LOOP = """
import subprocess, sys, time
argv, until = sys.argv[2:], float(sys.argv[1])
fails = 0
runs = 0
while time.time() < until:
    p = subprocess.run([sys.executable, "-m", "crabsearch", *argv], capture_output=True, text=True)
    runs += 1
    if p.returncode != 0:
        fails += 1
        sys.stderr.write(f"exit {p.returncode}: {p.stderr.strip()[:300]}\\n")
print(runs, fails)
"""


def test_three_indexers_an_appender_and_searches_leave_no_duplicates(tmp_path):
    home = tmp_path / "home"
    index_dir = tmp_path / "index"
    sessions = [ClaudeSession(home, session_id=f"c0ffee{i:02d}-0000-4000-8000-000000000000").user(f"start {i}")
                for i in range(3)]
    paths = [s.write() for s in sessions]
    env = _env(home, index_dir)
    first = subprocess.run([sys.executable, "-m", "crabsearch", "index"], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr  # `search --no-refresh` needs an index to exist
    until = time.time() + SECONDS
    loops = [subprocess.Popen([sys.executable, "-c", LOOP, str(until), *argv], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for argv in (["index"], ["index"], ["index"], ["search", "marmot", "--json"],
                          ["index", "--index-tool-output"], ["search", "marmot", "--no-refresh"])]
    written = [1, 1, 1]  # messages per session
    n = 0
    while time.time() < until:
        i = n % 3
        s = sessions[i]
        before = len(s.lines)
        s.user(f"marmot note {n} of session {i}")
        with open(paths[i], "a", encoding="utf-8") as fh:
            for d in s.lines[before:]:
                fh.write(json.dumps(d) + "\n")
        written[i] += 1
        n += 1
        time.sleep(0.05)
    outs = [p.communicate(timeout=120) for p in loops]
    failures = [err for _, err in outs if err.strip()]
    assert not failures, failures
    assert all(int(out.split()[0]) > 0 for out, _ in outs)
    final = subprocess.run([sys.executable, "-m", "crabsearch", "index", "--json"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    engine = Engine(index_dir)
    for i, s in enumerate(sessions):
        ref = engine.find_session(s.session_id)
        page = engine.page(ref, 0, 100_000)
        texts = [m.text for m in page.messages]
        assert len(texts) == len(set(texts)) == written[i], (i, len(texts), len(set(texts)), written[i])
        assert page.total == written[i]
    assert engine.doc_count() == 3

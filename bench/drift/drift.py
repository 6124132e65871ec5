"""Drift: the record kinds an agent's newest release writes that its crabsearch reader does not know.

    mkdir /tmp/npm && cd /tmp/npm && npm i @openai/codex @google/gemini-cli opencode-ai \\
        @github/copilot-sdk openclaw @anthropic-ai/claude-code
    python bench/drift/drift.py --npm /tmp/npm [--checkout crabtalk=/path/to/crabtalk] [--json]

Each agent's kinds are read from what it ships (``--npm``: a directory an ``npm i`` ran in) or from
a source checkout (``--checkout agent=DIR``: a work tree, or a bare git directory such as
``/work/.mirror/<owner>+<name>/repo``, read at ``HEAD``). A reader's known kinds are its
``Source.known_kinds`` (``crabsearch/sources/base.py``); a reader that declares none is compared
with its module's ``KNOWN_KINDS`` / ``KNOWN_TYPES``. Kinds are found by each agent's own shape
(below): an extractor is a heuristic over shipped code, so a kind it lists is a lead to check in
the agent's source, and a kind it misses is not proof of absence.

* ``claude`` (``@anthropic-ai/claude-code``, the native binary's strings): kebab-case
  ``type:"..."`` literals written beside ``sessionId`` / ``uuid`` / ``messageId`` (line kinds).
* ``codex`` (``@openai/codex``, the native binary's strings, or ``codex-rs/history/src/
  rollout_payload.rs``): the serde variant names of ``RolloutItemWire`` (line ``type``).
* ``gemini`` (``@google/gemini-cli`` bundle, or ``packages/core/src/services/
  chatRecordingTypes.ts``): message ``type`` values and ``$`` record operators.
* ``opencode`` (``opencode-ai``, the native binary's strings): the ``*Part`` and
  ``SessionMessage`` schema names (part ``type``, ``session_message.type``).
* ``copilot`` (``@github/copilot-sdk`` ``dist/generated/session-events.d.ts``, or
  ``nodejs/src/generated/session-events.ts``): every declared event ``type``.
* ``openclaw`` (``openclaw``, ``dist/session-manager-*.mjs``): transcript entry ``type`` values.
* ``crabtalk`` (checkout only: ``docs/src/spec/storage.md`` and ``crates/store/src/session/
  event.rs``): per-session store keys and ``EventLine`` kinds.

Prints, per agent, where the kinds came from (package version or commit) and the kinds the
reader does not know; exit status 1 when there is any. Not part of CI (it needs the packages).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from crabsearch.sources import SOURCES  # noqa: E402

STRINGS_MIN = 6
"""Shortest printable run kept when reading a native binary's strings."""
KIND_MAX = 40
"""Longest unknown run between two known variant names still taken for a kind (longer: the
variant list has ended and field names follow)."""


# -- reading what an agent ships -------------------------------------------------------------------


def package(npm: Path, name: str) -> Path | None:
    """``<npm>/**/node_modules/<name>`` (the first found), or None."""
    for cand in sorted(npm.glob(f"**/node_modules/{name}")):
        if (cand / "package.json").is_file():
            return cand
    return None


def version(pkg: Path) -> str:
    return json.loads((pkg / "package.json").read_text()).get("version", "?")


def strings(path: Path) -> str:
    """The printable ASCII runs of a binary (as ``strings -n 6``), newline-separated."""
    data = path.read_bytes()
    return "\n".join(m.decode() for m in re.findall(rb"[\x20-\x7e]{%d,}" % STRINGS_MIN, data))


def native(npm: Path, name: str, binary: str) -> tuple[str, str] | None:
    """``(strings of the platform binary, "<name> <version>")`` of an npm package shipping one in a
    ``<name>-<platform>`` package, or None."""
    pkg = package(npm, name)
    if pkg is None:
        return None
    stem = pkg.name.split("-")[0]
    for plat in sorted(set(pkg.parent.glob(f"{pkg.name}-*")) | set(pkg.parent.glob(f"{stem}-*-*"))):
        hits = [p for p in plat.rglob(binary) if p.is_file() and p.stat().st_size > 1 << 20]
        if hits:
            return strings(hits[0]), f"{name} {version(pkg)}"
    return None


class Checkout:
    """A source tree: a work tree, or a bare git directory read at ``HEAD``."""

    def __init__(self, path: Path):
        self.path = path
        self.bare = not (path / ".git").exists() and (path / "HEAD").is_file()

    def read(self, rel: str) -> str | None:
        if not self.bare:
            f = self.path / rel
            return f.read_text(errors="replace") if f.is_file() else None
        out = subprocess.run(["git", "--git-dir", str(self.path), "show", f"HEAD:{rel}"], capture_output=True)
        return out.stdout.decode(errors="replace") if out.returncode == 0 else None

    def label(self) -> str:
        git = ["git", "--git-dir", str(self.path)] if self.bare else ["git", "-C", str(self.path)]
        out = subprocess.run(git + ["rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
        return f"{self.path.name if not self.bare else self.path.parent.name} @ {out.stdout.strip() or '?'}"


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def kebab(name: str) -> str:
    return snake(name).replace("_", "-")


# -- per agent -----------------------------------------------------------------------------------


def claude(npm, checkout, known):
    """Claude Code's table of line kinds (how a compaction treats each: ``{user:"transcript",
    assistant:"transcript", ..., "file-history-delta":"boundary-cleared", ...}``, ``ehr`` in
    2.1.332's ``chunk-bqhgd24a.js``): every key is a line kind it writes. Without the table (a
    release that renamed its values), every ``type:"kebab-case"`` near a session field."""
    got = native(npm, "@anthropic-ai/claude-code", "claude") if npm else None
    if got is None:
        return None
    s, where = got
    table = re.search(r'\{user:"transcript",[^{}]*\}', s)
    if table:
        keys = re.findall(r'(?:^|[{,])"?([a-z][a-z0-9-]*)"?:"[a-z-]+"', table.group(0))
        return where, {"line": set(keys)}
    kinds = set()
    for m in re.finditer(r'type:"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"', s):
        if re.search(r"sessionId|leafUuid|messageId|uuid:", s[max(0, m.start() - 300):m.end() + 300]):
            kinds.add(m.group(1))
    return where, {"line": kinds}


def codex(npm, checkout, known):
    if checkout:
        text = checkout.read("codex-rs/history/src/rollout_payload.rs")
        body = re.search(r"enum RolloutItemWire[^{]*\{(.*?)\n\}", text or "", re.S)
        if body:
            names = re.findall(r"^    ([A-Z]\w*) \{", body.group(1), re.M)
            return checkout.label(), {"line": {snake(n) for n in names}}
    got = native(npm, "@openai/codex", "codex") if npm else None
    if got is None:
        return None
    s, where = got
    return where, {"line": between_known(s, known.get("line", set()), anchor="response_item")}


def between_known(s: str, known: set[str], anchor: str) -> set[str]:
    """The kinds in a blob of concatenated serde variant names (a Rust binary keeps them without
    separators): around each ``anchor``, the known names are matched longest first, and what lies
    strictly between two of them is a kind the reader does not know (or several, joined)."""
    found: set[str] = set()
    names = sorted(known, key=len, reverse=True)
    for m in re.finditer(re.escape(anchor), s):
        lo = m.start()
        while lo > 0 and (s[lo - 1].islower() or s[lo - 1] == "_"):
            lo -= 1
        hi = m.end()
        while hi < len(s) and (s[hi].islower() or s[hi] == "_"):
            hi += 1
        blob, pos, parts, pending = s[lo:hi], 0, [], ""
        while pos < len(blob):
            name = next((n for n in names if blob.startswith(n, pos)), None)
            if name:
                if pending:
                    parts.append((False, pending))
                    pending = ""
                parts.append((True, name))
                pos += len(name)
            else:
                pending += blob[pos]
                pos += 1
        if pending:
            parts.append((False, pending))
        if sum(1 for k, _ in parts if k) < 4:
            continue  # not the variant list
        first = next(i for i, (k, _) in enumerate(parts) if k)
        end = next((i for i in range(first, len(parts)) if not parts[i][0] and len(parts[i][1]) > KIND_MAX),
                   len(parts))
        last = max(i for i in range(first, end) if parts[i][0])
        found |= {n for k, n in parts[first:last + 1]}
    return found


def gemini(npm, checkout, known):
    if checkout:
        types = checkout.read("packages/core/src/services/chatRecordingTypes.ts")
        service = checkout.read("packages/core/src/services/chatRecordingService.ts") or ""
        block = re.search(r"ConversationRecordExtra\s*=(.*?);\n\n", types or "", re.S)
        if block:
            msg = set(re.findall(r"'(\w+)'", " ".join(re.findall(r"type:([^;]+);", block.group(1)))))
            ops = set(re.findall(r"appendRecord\(\{\s*(\$\w+)", service))
            return checkout.label(), {"message": msg, "record": ops}
    pkg = package(npm, "@google/gemini-cli") if npm else None
    if pkg is None:
        return None
    msg, ops = set(), set()
    for f in sorted(pkg.glob("bundle/*.js")):
        s = f.read_text(errors="replace")
        if "$rewindTo" not in s:
            continue
        ops |= set(re.findall(r"appendRecord\(\{\s*(\$\w+)", s))
        for m in re.finditer(r"recordMessage\(\{", s):
            t = re.search(r'type: "(\w+)"', s[m.start():m.start() + 400])
            if t:
                msg.add(t.group(1))
        msg |= set(re.findall(r'newMessage\(\s*"(\w+)"', s))
        break
    return f"@google/gemini-cli {version(pkg)}", {"message": msg, "record": ops}


def opencode(npm, checkout, known):
    got = native(npm, "opencode-ai", "opencode") if npm else None
    if got is None:
        return None
    s, where = got
    parts = {kebab(n[:-4]) for n in re.findall(r"[{,]([A-Z][A-Za-z]*Part):\(\)=>", s) if n != "Part"}
    v2 = set()
    for m in re.finditer(r"\{([^{}]*SessionMessage:\(\)=>[^{}]*)\}", s):
        names = re.findall(r"([A-Z]\w*):\(\)=>", m.group(1))
        v2 |= {kebab(n) for n in names if n not in ("ID", "Message", "SessionMessage", "UnknownError")
               and not n.startswith(("ToolState", "Assistant")) or n == "Assistant"}
    return where, {"part": parts, "session_message": v2}


def copilot(npm, checkout, known):
    text, where = None, None
    if checkout:
        text, where = checkout.read("nodejs/src/generated/session-events.ts"), checkout.label()
    if text is None and npm:
        pkg = package(npm, "@github/copilot-sdk")
        f = pkg / "dist" / "generated" / "session-events.d.ts" if pkg else None
        if f and f.is_file():
            text, where = f.read_text(), f"@github/copilot-sdk {version(pkg)}"
    if text is None:
        return None
    return where, {"event": set(re.findall(r'Session event "([^"]+)"', text))}


def openclaw(npm, checkout, known):
    pkg = package(npm, "openclaw") if npm else None
    if pkg is None:
        return None
    kinds = set()
    for f in sorted(pkg.glob("dist/session-manager-*.mjs")):
        s = f.read_text(errors="replace")
        for m in re.finditer(r'type: "([a-z_]+)"', s):
            if "timestamp" in literal(s, m.start()):  # an entry has one; tree nodes do not
                kinds.add(m.group(1))
    return f"openclaw {version(pkg)}", {"line": kinds}


def literal(s: str, at: int) -> str:
    """The object literal around position ``at`` (from its ``{`` to the matching ``}``)."""
    lo = s.rfind("{", 0, at)
    depth, hi = 0, lo
    while 0 <= hi < len(s):
        depth += {"{": 1, "}": -1}.get(s[hi], 0)
        if depth == 0:
            break
        hi += 1
    return s[lo:hi + 1] if lo >= 0 else ""


def crabtalk(npm, checkout, known):
    if not checkout:
        return None
    spec = checkout.read("docs/src/spec/storage.md") or ""
    event = checkout.read("crates/store/src/session/event.rs") or ""
    keys = set(re.findall(r"session/\{handle\}/(\w+)", spec))
    body = re.search(r"enum EventLine \{(.*?)\n\}", event, re.S)
    events = {snake(n) for n in re.findall(r"^    ([A-Z]\w*) \{", body.group(1), re.M)} if body else set()
    return checkout.label(), {"store key": keys, "event": events}


EXTRACTORS = {"claude": claude, "codex": codex, "gemini": gemini, "opencode": opencode, "copilot": copilot,
              "openclaw": openclaw, "crabtalk": crabtalk}


def reader_kinds(agent: str) -> dict[str, frozenset[str]]:
    """The reader's declared ``Source.known_kinds``."""
    return dict(SOURCES[agent].known_kinds)


def check(agent: str, npm: Path | None, checkout: Checkout | None) -> dict:
    known = reader_kinds(agent)
    got = EXTRACTORS[agent](npm, checkout, {k: set(v) for k, v in known.items()})
    if got is None:
        return {"agent": agent, "source": None, "unknown": {}, "note": "no package or checkout given"}
    where, written = got
    unknown = {ns: sorted(kinds - set(known.get(ns, ()))) for ns, kinds in written.items()}
    return {"agent": agent, "source": where, "written": {ns: sorted(k) for ns, k in written.items()},
            "unknown": {ns: k for ns, k in unknown.items() if k}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npm", type=Path, help="a directory `npm i` installed the agents' packages in")
    ap.add_argument("--checkout", action="append", default=[], metavar="AGENT=DIR",
                    help="an agent's source checkout (work tree or bare git dir)")
    ap.add_argument("--agent", action="append", choices=sorted(EXTRACTORS), help="only these agents")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    checkouts = dict(c.split("=", 1) for c in args.checkout)
    results = [check(a, args.npm, Checkout(Path(checkouts[a])) if a in checkouts else None)
               for a in args.agent or EXTRACTORS]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            if r["source"] is None:
                print(f"{r['agent']}: not checked ({r['note']})")
                continue
            counts = ", ".join(f"{len(v)} {ns}" for ns, v in r["written"].items())
            print(f"{r['agent']}: {r['source']}: {counts} kinds; "
                  + ("all known" if not r["unknown"] else "unknown to the reader:"))
            for ns, kinds in r["unknown"].items():
                print(f"  {ns}: {', '.join(kinds)}")
    return 1 if any(r["unknown"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

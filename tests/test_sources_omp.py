"""OmpSource: oh-my-pi transcripts written here as ``@oh-my-pi/pi-coding-agent`` 18.3.4 writes them
(``session-manager.ts``: a fixed-width title slot line, the v3 header, entries), under a temp HOME."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path

from crabsearch.index import Indexer
from crabsearch.model import Role
from crabsearch.search import Engine
from crabsearch.sources import get_source
from crabsearch.sources.omp import OmpSource

from agent_doors import through_every_door
from all_agents import Expect, iso, prompt_of, reply_of
from secret_samples import _SK_PROJ
from source_checks import assert_incremental, assert_read_back
from v3_builders import T0, V3Session

SRC = OmpSource()
SID = "019e2a00-7b4c-7d1e-9a2b-3c4d5e6f7001"
CWD = "/home/dev/omp shop"
SLOT_BYTES = 256


def slot(title: str = "", source: str | None = None, updated: str = "2026-05-12T09:00:00.000Z") -> str:
    """The title slot line, exactly 256 UTF-8 bytes with its newline (``serializeTitleSlot``)."""
    fields = {"type": "title", "v": 1, "title": title, **({"source": source} if source else {}), "updatedAt": updated}
    bare = json.dumps({**fields, "pad": ""}, ensure_ascii=False, separators=(",", ":")) + "\n"
    line = json.dumps({**fields, "pad": " " * (SLOT_BYTES - len(bare.encode()))}, ensure_ascii=False,
                      separators=(",", ":")) + "\n"
    assert len(line.encode()) == SLOT_BYTES
    return line


class OmpSession(V3Session):
    """A v3 transcript as omp writes it: the title slot, then the header (``title`` when set)."""

    def __init__(self, sid: str = SID, cwd: str = CWD, start: datetime = T0, title: str = "",
                 header_title: str | None = None, **header):
        super().__init__(sid, cwd=cwd, start=start)
        self.title = title
        if header_title is not None:
            self.entries[0].update(title=header_title, titleSource="auto")
        self.entries[0].update(header)

    def lines(self) -> list[str]:
        return [slot(self.title)] + super().lines()


def folder(home: Path) -> Path:
    """The sessions folder of ``CWD`` (an absolute path outside home: ``--<path>--``)."""
    return home / ".omp" / "agent" / "sessions" / ("--" + CWD.strip("/").replace("/", "-") + "--")


def full_session(home: Path) -> tuple[OmpSession, Path]:
    s = OmpSession(title="Cart totals drift", header_title="auto title")
    s.entry("model_change", model="anthropic/claude-x", role="default")
    s.entry("credential_pin", provider="anthropic", hash="ab12")
    u = s.user("why do the dingoledger cart totals drift?")
    s.assistant("Checking the rounding.", thinking="rounding mode", call=("tc1", "bash", {"command": "rg round"}))
    s.result("tc1", "bash", "src/cart.ts: Math.round dugongoutput")
    s.message(role="pythonExecution", code="print(0.1 + 0.2)", output="0.30000000000000004", exitCode=0)
    s.message(role="bashExecution", command=f"export OPENAI_API_KEY={_SK_PROJ}", output="", exitCode=0)
    s.message(role="fileMention", files=[{"path": "src/cart.ts", "content": "export const total = 1"}])
    s.message(role="developer", content=[{"type": "text", "text": "Prefer integer cents."}])
    s.assistant("Use integer cents.")
    s.entry("model_usage", purpose="title", api="anthropic-messages", provider="anthropic", model="claude-x",
            usage={"input": 1}, stopReason="stop")
    s.entry("title_change", title="Cart totals drift", source="user")
    s.compaction("we moved to integer cents", u)
    s.entries[-1]["shortSummary"] = "Integer cents"
    s.entry("omp_future_kind", x=1)
    path = s.write(folder(home) / f"2026-05-12T09-00-00-000Z_{SID}.jsonl")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("{broken line\n")
    return s, path


def subagent(home: Path, parent: Path) -> Path:
    child = OmpSession("019e2a00-7b4c-7d1e-9a2b-3c4d5e6f7002", parentSession=str(parent))
    child.entry("session_init", systemPrompt="You are scout.", task="find the rounding calls", tools=["read"],
                agent="scout")
    child.user("find the rounding calls")
    child.assistant("Two calls in cart.ts.")
    return child.write(parent.with_suffix("") / "scout.jsonl")


def test_registered_and_named():
    assert get_source("omp").__class__ is OmpSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("omp", "oh-my-pi", "omp")


def test_messages_title_and_kinds(tmp_path):
    _, path = full_session(tmp_path / "home")
    r = SRC.read(path)
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", "why do the dingoledger cart totals drift?"),
        (Role.ASSISTANT, "thinking", "rounding mode"),
        (Role.ASSISTANT, "assistant", "Checking the rounding."),
        (Role.ASSISTANT, "tool-call:bash", '{"command": "rg round"}'),
        (Role.TOOL, "tool:bash", "src/cart.ts: Math.round dugongoutput"),
        (Role.USER, "user", "$ print(0.1 + 0.2)"),
        (Role.TOOL, "tool:python", "0.30000000000000004"),
        (Role.USER, "user", f"! export OPENAI_API_KEY={_SK_PROJ}"),
        (Role.TOOL, "tool:bash", ""),
        (Role.TOOL, "tool:file", "src/cart.ts\nexport const total = 1"),
        (Role.SYSTEM, "system", "Prefer integer cents."),
        (Role.ASSISTANT, "assistant", "Use integer cents."),
        (Role.SUMMARY, "summary", "we moved to integer cents"),
    ]
    assert r.stats.reasons == {"broken JSON": 1} and r.state["unknown_kinds"] == {"omp_future_kind": 1}
    s = r.session
    assert (s.agent, s.session_id, s.title, s.project, s.parent_session_id) == (
        "omp", SID, "Cart totals drift", CWD, None)
    assert SRC.resume_command(s) == f"cd '{CWD}' && omp --resume {SID}"
    assert_read_back(SRC, path, r.messages)


def test_title_order(tmp_path):
    """The slot's title; an empty slot: no stored title (not the header's), then the short summary;
    without a slot (an older file), the header's title; else the first prompt."""
    home = tmp_path / "home"
    s, path = full_session(home)
    s.title = ""
    s.write(path)
    assert SRC.read(path).session.title == "Integer cents"
    s.entries = [e for e in s.entries if e.get("type") != "compaction"]
    s.write(path)
    assert SRC.read(path).session.title == "why do the dingoledger cart totals drift?"
    path.write_text("".join(V3Session.lines(s)), "utf-8")  # no slot line
    assert SRC.read(path).session.title == "auto title"


def test_a_rename_rewrites_the_slot_and_is_read(tmp_path):
    """The slot is rewritten in place (same size): the head changes, the session is read whole."""
    home = tmp_path / "home"
    s, path = full_session(home)
    index = tmp_path / "index"
    env = {"HOME": str(home), "CRABSEARCH_CONFIG": str(tmp_path / "none.toml")}
    Indexer(index, env=env).refresh()
    data = path.read_bytes()
    renamed = slot("Integer cents everywhere", "user").encode() + data[SLOT_BYTES:]
    assert len(renamed) == len(data)
    path.write_bytes(renamed)
    later = os.stat(path).st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))
    Indexer(index, env=env).refresh()
    hits = Engine(index).search("dingoledger").hits
    assert [(h.session.title, h.session.message_count) for h in hits] == [("Integer cents everywhere", 13)]


def test_subagents_and_advisors(tmp_path):
    home = tmp_path / "home"
    _, path = full_session(home)
    child = subagent(home, path)
    advisor = OmpSession("019e2a00-7b4c-7d1e-9a2b-3c4d5e6f7003").write(path.with_suffix("") / "__advisor.jsonl")
    assert advisor.is_file()
    assert sorted(SRC.discover({}, home)) == sorted([path, child])
    s = SRC.read(child).session
    assert (s.session_id, s.parent_session_id, s.title, s.extra["agent_type"]) == (
        "019e2a00-7b4c-7d1e-9a2b-3c4d5e6f7002", SID, "find the rounding calls", "scout")
    assert SRC.resume_command(s) == f"cd '{CWD}' && omp --resume {SID}"


def test_roots_profiles_xdg_and_override(tmp_path):
    home = tmp_path / "home"
    base = home / ".omp"
    assert SRC.roots({}, home) == [base / "agent" / "sessions"]
    work = base / "profiles" / "work" / "agent" / "sessions"
    xdg = tmp_path / "xdg"
    for d in (work, xdg / "omp" / "sessions", xdg / "omp" / "profiles" / "lab" / "sessions"):
        d.mkdir(parents=True)
    env = {"XDG_DATA_HOME": str(xdg)}
    assert SRC.roots(env, home) == [base / "agent" / "sessions", work, xdg / "omp" / "sessions",
                                    xdg / "omp" / "profiles" / "lab" / "sessions"]
    p = OmpSession().write(work / "-code" / f"2026-05-12T09-00-00-000Z_{SID}.jsonl")
    assert list(SRC.discover({}, home)) == [p]
    assert SRC.roots({"PI_CONFIG_DIR": ".omp-dev"}, home) == [home / ".omp-dev" / "agent" / "sessions"]
    assert SRC.roots({"CRABSEARCH_OMP_DIR": str(tmp_path / "s"), "XDG_DATA_HOME": str(xdg)}, home) == [tmp_path / "s"]
    assert SRC.roots({"PI_CODING_AGENT_DIR": str(tmp_path / "pi")}, home) == [base / "agent" / "sessions", work]


def test_incremental(tmp_path):
    _, path = full_session(tmp_path / "home")
    assert_incremental(SRC, path.read_bytes(), path)


def test_through_every_door(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    _, path = full_session(home)
    subagent(home, path)
    seen = through_every_door(
        capsys, monkeypatch, tmp_path, {"HOME": str(home)}, agent="omp", session_id=SID, word="dingoledger",
        title="Cart totals drift", resume=f"cd '{CWD}' && omp --resume {SID}",
        texts=["why do the dingoledger cart totals drift?", "Use integer cents."], secrets=(_SK_PROJ,),
        unindexed=("dugongoutput",))
    a = seen.agent_status("omp")
    assert (a["files_found"], a["sessions"], a["skipped_lines"]) == (2, 2, 1)
    assert seen.unknown_kinds("omp") == {"omp_future_kind": 1}


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): its default layout
    under ``home``, started at ``t``, holding the word ``quokkaomp`` no other session holds."""
    sid = "019e2a00-7b4c-7d1e-9a2b-3c4d5e6f0220"
    s = OmpSession(sid, start=t, title="omp: worker stall")
    s.entry("model_change", model="anthropic/claude-x")
    s.user(prompt_of("omp"))
    s.assistant(reply_of("omp"))
    path = s.write(folder(home) / f"{iso(t).replace(':', '-').replace('.', '-')}_{sid}.jsonl")
    return Expect("omp", sid, "omp: worker stall", CWD, f"cd '{CWD}' && omp --resume {sid}", "quokkaomp",
                  [prompt_of("omp"), reply_of("omp")], t, files=[path])

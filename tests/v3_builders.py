"""Builders for pi session format v3 transcripts (pi-coding-agent and OpenClaw), as the agents
write them (pi ``session-manager.ts``: header line, then entries with ``id``/``parentId``)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

T0 = datetime(2026, 5, 12, 9, 0, 0, tzinfo=timezone.utc)


def iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class V3Session:
    """A v3 transcript: ``entries`` (dicts, header first); each append is a child of ``leaf``
    (the last entry unless :meth:`branch` moved it), like pi's SessionManager."""

    def __init__(self, sid: str, cwd: str | None = "/home/dev/proj", start: datetime = T0):
        self.sid, self.t, self.n = sid, start, 0
        header = {"type": "session", "version": 3, "id": sid, "timestamp": iso(start)}
        if cwd is not None:
            header["cwd"] = cwd
        self.entries: list[dict] = [header]
        self.leaf: str | None = None

    def entry(self, kind: str, **fields) -> str:
        self.n += 1
        self.t += timedelta(seconds=10)
        eid = f"{self.n:08x}"
        self.entries.append({"type": kind, "id": eid, "parentId": self.leaf, "timestamp": iso(self.t), **fields})
        self.leaf = eid
        return eid

    def message(self, **msg) -> str:
        msg.setdefault("timestamp", int((self.t + timedelta(seconds=10)).timestamp() * 1000))
        return self.entry("message", message=msg)

    def user(self, text: str) -> str:
        return self.message(role="user", content=[{"type": "text", "text": text}])

    def assistant(self, text: str | None = None, thinking: str | None = None,
                  call: tuple[str, str, dict] | None = None) -> str:
        blocks = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "thinkingSignature": "sig"})
        if text:
            blocks.append({"type": "text", "text": text})
        if call:
            blocks.append({"type": "toolCall", "id": call[0], "name": call[1], "arguments": call[2]})
        return self.message(role="assistant", content=blocks, api="anthropic-messages", provider="anthropic",
                            model="claude-x", usage={"input": 1, "output": 2}, stopReason="toolUse" if call else "stop")

    def result(self, call_id: str, name: str, output: str) -> str:
        return self.message(role="toolResult", toolCallId=call_id, toolName=name,
                            content=[{"type": "text", "text": output}], isError=False)

    def compaction(self, summary: str, first_kept: str) -> str:
        return self.entry("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=1234,
                          details={"readFiles": [], "modifiedFiles": []}, fromHook=False)

    def branch(self, entry_id: str | None) -> "V3Session":
        self.leaf = entry_id
        return self

    def lines(self) -> list[str]:
        return [json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries]

    def data(self) -> bytes:
        return "".join(self.lines()).encode("utf-8")

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path

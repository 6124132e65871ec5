"""bench/drift/drift.py on small stand-ins for what agents ship (the real packages are not in CI):
a kind a release writes that its reader does not know is listed, and the readers' known kinds
come from ``Source.known_kinds``."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from crabsearch.sources import SOURCES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def drift():
    spec = importlib.util.spec_from_file_location("bench_drift", ROOT / "bench" / "drift" / "drift.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pkg(npm: Path, name: str, ver: str) -> Path:
    d = npm / "node_modules" / name
    d.mkdir(parents=True)
    (d / "package.json").write_text(json.dumps({"name": name, "version": ver}))
    return d


def test_a_new_kind_in_a_shipped_binary_and_sdk_is_listed(drift, tmp_path, capsys):
    npm = tmp_path / "npm"
    _pkg(npm, "@openai/codex", "9.9.9")
    plat = _pkg(npm, "@openai/codex-linux-x64", "9.9.9") / "vendor" / "bin"
    plat.mkdir(parents=True)
    blob = (b"\x00RecordingCompletedseq\x00session_metaresponse_itemhologram_cacheevent_msgcompactedturn_context"
            b"replacement_historyreplacement_history_metadatamcp_resource_originswindow_number\x00")
    (plat / "codex").write_bytes(b"\x00" * (2 << 20) + blob)
    sdk = _pkg(npm, "@github/copilot-sdk", "1.0.99") / "dist" / "generated"
    sdk.mkdir(parents=True)
    sdk.joinpath("session-events.d.ts").write_text(
        ' * Session event "session.start". x\n * Session event "session.teleported". y\n')
    assert drift.main(["--npm", str(npm), "--agent", "codex", "--agent", "copilot"]) == 1
    out = capsys.readouterr().out
    assert "codex: @openai/codex 9.9.9: 6 line kinds; unknown to the reader:\n  line: hologram_cache" in out
    assert "copilot: @github/copilot-sdk 1.0.99: 2 event kinds; unknown to the reader:\n  event: session.teleported" in out


def test_claude_codes_kinds_come_from_its_table_of_line_kinds(drift, tmp_path, capsys):
    """Claude Code's kinds are the keys of its table of line kinds (``{user:"transcript", ...}``),
    not every kebab-case ``type:`` in the bundle."""
    npm = tmp_path / "npm"
    _pkg(npm, "@anthropic-ai/claude-code", "9.9.9")
    plat = _pkg(npm, "@anthropic-ai/claude-code-linux-x64", "9.9.9") / "bin"
    plat.mkdir(parents=True)
    blob = (b'\x00ehr={user:"transcript",assistant:"transcript","ai-title":"last-wins",'
            b'"hologram-ledger":"accumulate",mode:"last-wins"}\x00{type:"local-jsx",sessionId:x}\x00')
    (plat / "claude").write_bytes(b"\x00" * (2 << 20) + blob)
    assert drift.main(["--npm", str(npm), "--agent", "claude"]) == 1
    out = capsys.readouterr().out
    assert ("claude: @anthropic-ai/claude-code 9.9.9: 5 line kinds; unknown to the reader:\n"
            "  line: hologram-ledger\n") in out


def test_readers_declare_their_kinds(drift):
    """Every reader the tool checks says what it knows (``Source.known_kinds``)."""
    for agent in drift.EXTRACTORS:
        kinds = drift.reader_kinds(agent)
        assert kinds and all(kinds.values()), agent
    assert "inter_agent_communication" in SOURCES["codex"].known_kinds["line"]
    assert "leaf" in SOURCES["openclaw"].known_kinds["line"]
    assert "continued-in" in SOURCES["claude"].known_kinds["line"]


def test_no_package_is_not_checked(drift, tmp_path, capsys):
    assert drift.main(["--npm", str(tmp_path), "--agent", "opencode"]) == 0
    assert "opencode: not checked" in capsys.readouterr().out
    sys.modules.pop("bench_drift", None)

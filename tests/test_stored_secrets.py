"""Issue 16, defects 5 and 7: every secret kind is masked in every channel (search, ``--json``,
plain text, export, ``show``) and in everything crabsearch stores (index terms, stored fields,
manifest, any byte under the index directory). Titles are masked before they are cut."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing

import pytest

from builders import ClaudeSession
from secret_samples import SECRET_SAMPLES
from source_checks import run_cli

from crabsearch.index import Indexer
from crabsearch.index.layout import where
from crabsearch.index.store import open_index

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
       "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")


def _pieces(raw: str) -> list[str]:
    """The distinctive parts of a secret: its runs of 8+ letters and digits, lowercased (how the
    analyzer would hold them), the whole secret too."""
    return [raw] + [p.lower() for p in re.findall(r"[A-Za-z0-9]{8,}", raw)]


SECRETS = [(kind, text, raw) for kind, text, raw in SECRET_SAMPLES] + [
    ("jwt_custom_title", JWT + " is the token the app sends", JWT),  # odd: a custom title holds it
    ("jwt_first_prompt", JWT + " was in the log", JWT)]  # even: the first prompt, longer than a title


@pytest.fixture(scope="module")
def stash(tmp_path_factory):
    root = tmp_path_factory.mktemp("stash")
    home = root / "home"
    for i, (kind, text, raw) in enumerate(SECRETS):
        s = ClaudeSession(home, session_id=f"5ec4e7{i:02d}-0000-4000-8000-000000000000", cwd=f"/home/dev/s{i}")
        s.user(text + f"\nplease look at vault{i} quickly")  # the first line becomes the title
        s.assistant(f"vault{i}: I saw {text} in the config")
        s.tool("Bash", {"command": f"grep -r key ~/vault{i}"}, f"vault{i} output: {text}")
        s.user(f"<bash-input>./deploy --vault vault{i}</bash-input>")  # bash mode (`!`): stderr is indexed
        s.user(f"<bash-stdout>vault{i} listed {text}</bash-stdout><bash-stderr>vault{i} failed: {text}</bash-stderr>")
        s.compact(f"vault{i} summary: the user pasted {text}")
        if i % 2:
            s.title(f"vault{i} title {text}")
        s.write()
        _opencode_shell(home, i, text)
    index_dir = root / "index"
    Indexer(index_dir, env={"HOME": str(home)}, home=home, index_tool_output=True).refresh()
    return home, index_dir


def _opencode_shell(home, i: int, text: str) -> None:
    """An opencode session (legacy storage, 1.0.x) whose one turn is a ``!`` command holding
    ``text``, with its output: marker user message, then the command's assistant message
    (``modelID``/``providerID`` ``""``) and its bash part (opencode's ``shell``, prompt.ts)."""
    st, sid = home / ".local" / "share" / "opencode" / "storage", f"ses_oc{i:02d}"
    files = {
        f"session/proj1/{sid}.json": {"id": sid, "projectID": "proj1", "directory": f"/home/dev/oc{i}",
                                      "title": f"New session - 2026-03-14T10:00:{i:02d}.000Z",
                                      "time": {"created": 1773482400000, "updated": 1773482409000}},
        f"message/{sid}/msg_a{i:02d}.json": {"id": f"msg_a{i:02d}", "sessionID": sid, "role": "user",
                                             "time": {"created": 1773482401000}},
        f"part/msg_a{i:02d}/prt_a.json": {"id": "prt_a", "type": "text", "synthetic": True,
                                          "text": "The following tool was executed by the user"},
        f"message/{sid}/msg_b{i:02d}.json": {"id": f"msg_b{i:02d}", "sessionID": sid, "role": "assistant",
                                             "parentID": f"msg_a{i:02d}", "modelID": "", "providerID": "",
                                             "time": {"created": 1773482402000, "completed": 1773482403000}},
        f"part/msg_b{i:02d}/prt_b.json": {"id": "prt_b", "type": "tool", "tool": "bash", "callID": "01JQ8Z6V4K",
                                          "state": {"status": "completed", "input": {"command": f"ocdeploy{i} {text}"},
                                                    "title": "", "output": f"vault{i} shell said {text}"}},
    }
    for rel, obj in files.items():
        (st / rel).parent.mkdir(parents=True, exist_ok=True)
        (st / rel).write_text(json.dumps(obj), encoding="utf-8")


def _assert_absent(blob: str, where_: str) -> None:
    for kind, _text, raw in SECRETS:
        for piece in _pieces(raw):
            assert piece not in blob, f"{kind}: {piece!r} in {where_}"


def test_no_secret_is_a_term_of_the_index(stash):
    _, index_dir = stash
    ix, _ = open_index(index_dir, create=False)
    with ix.reader() as reader:
        terms = {t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t)
                 for _field, t in reader.all_terms()}
    for kind, _text, raw in SECRETS:
        for piece in _pieces(raw):
            assert not any(piece.lower() in t for t in terms), f"{kind}: {piece!r} is findable"


def test_nothing_stored_holds_a_secret(stash):
    _, index_dir = stash
    ix, _ = open_index(index_dir, create=False)
    with ix.searcher() as searcher:
        stored = repr([searcher.stored_fields(d) for d in range(searcher.doc_count_all())])
    _assert_absent(stored, "stored fields")
    with closing(sqlite3.connect(where(index_dir) / "manifest.db")) as con:
        rows = repr([bytes(b).decode("utf-8", "replace") for row in con.execute(
            "SELECT path, entry, state FROM files") for b in row if b is not None])
    _assert_absent(rows, "the manifest")
    for p in index_dir.rglob("*"):
        if p.is_file():
            _assert_absent(p.read_bytes().decode("latin-1"), str(p))


def test_titles_are_masked_before_they_are_cut(stash, capsys, monkeypatch):
    home, index_dir = stash
    monkeypatch.setenv("HOME", str(home))
    for i in (len(SECRETS) - 2, len(SECRETS) - 1):  # the JWT sessions: custom title, first prompt
        code, out, _ = run_cli(capsys, "search", f"vault{i}", "--json", "--no-refresh", "--index-dir", str(index_dir))
        assert code == 0
        [hit] = [h for h in json.loads(out)["hits"] if h["session_id"].startswith(f"5ec4e7{i:02d}")]
        assert "eyJhbG***" in hit["title"] and JWT[:20] not in hit["title"], hit["title"]


@pytest.mark.parametrize("argv", [
    ("search", "vault{i}", "--json", "--explain"), ("search", "vault{i}"), ("search", "vault{i}", "in:tools"),
    ("show", "5ec4e7{i:02d}", "--json"), ("show", "5ec4e7{i:02d}"), ("export", "5ec4e7{i:02d}"),
])
def test_every_channel_masks_every_kind(stash, capsys, monkeypatch, argv):
    home, index_dir = stash
    monkeypatch.setenv("HOME", str(home))
    for i, (kind, _text, raw) in enumerate(SECRETS):
        args = [a.format(i=i) for a in argv]
        extra = ["--no-refresh"] if args[0] == "search" else []
        code, out, err = run_cli(capsys, *args, *extra, "--index-dir", str(index_dir))
        assert code == 0, (kind, err)
        assert f"vault{i}" in out, (kind, out[:300])
        assert raw not in out, f"{kind} shown unmasked by {' '.join(args)}"


def test_searching_for_a_secret_finds_nothing_of_it(stash, capsys, monkeypatch):
    home, index_dir = stash
    monkeypatch.setenv("HOME", str(home))
    for kind, _text, raw in SECRETS:
        code, out, _ = run_cli(capsys, "search", f'"{raw}"', "--json", "--no-refresh", "--index-dir", str(index_dir))
        assert code == 0
        hits = json.loads(out)["hits"]
        assert all(h["route"] not in ("phrase", "all") for h in hits), (kind, [h["route"] for h in hits])
        assert raw not in json.dumps(hits)  # the query itself is echoed; nothing found shows it


def test_a_bang_command_is_found_as_the_persons_text_masked(stash, capsys, monkeypatch):
    """opencode's ``!`` command (opencode ``shell``, prompt.ts; opencode-ai 1.0.61) is the
    person's text: found without ``in:tools``, its secret masked (it was an unindexed tool call)."""
    home, index_dir = stash
    monkeypatch.setenv("HOME", str(home))
    for i, (kind, _text, raw) in enumerate(SECRETS):
        code, out, err = run_cli(capsys, "search", f"ocdeploy{i}", "--json", "--no-refresh", "--index-dir", str(index_dir))
        assert code == 0, (kind, err)
        assert f"ses_oc{i:02d}" in [h["session_id"] for h in json.loads(out)["hits"]], kind
        assert raw not in out, kind

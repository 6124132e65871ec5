"""ChatGPTSource and ``crabsearch import``: ChatGPT data exports written here in the shape of a
real export (``conversations.json``: a list of conversations with a ``mapping`` tree of nodes,
``current_node`` the branch the app shows), as agentsview ``internal/parser/chatgpt.go``
(b85eae5a7971) reads them: in a zip, an unpacked folder, or the file alone."""

from __future__ import annotations

import json
import os
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from crabsearch.model import Role
from crabsearch.sources import SOURCES, get_source
from crabsearch.sources import exports
from crabsearch.sources.base import member_path
from crabsearch.sources.chatgpt import ChatGPTSource

from agent_round_trip import round_trip
from all_agents import CLEARED_ENV, Expect, prompt_of, reply_of, write_file
from secret_samples import _GHP
from source_checks import assert_read_back, cli_ok, run_cli

SRC = ChatGPTSource()
CID = "67d1a2b3-0c4d-8000-9e5f-0a1b2c3d4e5f"
OTHER = "67d1a2b3-0c4d-8000-9e5f-00000000beef"
T0 = 1773997200.0  # 2026-03-20T09:00:00Z


def node(nid: str, parent: str | None, children: list[str], role: str | None = None, kind: str = "text",
         secs: float = 0, name: str | None = None, recipient: str = "all", hidden: bool = False, **content) -> dict:
    """One ``mapping`` node; ``role`` None: the root without a message."""
    if role is None:
        return {"id": nid, "message": None, "parent": parent, "children": children}
    message = {"id": nid, "author": {"role": role, "name": name, "metadata": {}}, "create_time": T0 + secs,
               "update_time": None, "content": {"content_type": kind, **content}, "status": "finished_successfully",
               "end_turn": True, "weight": 1.0, "metadata": {"is_visually_hidden_from_conversation": hidden} if hidden
               else {"model_slug": "gpt-5"}, "recipient": recipient, "channel": None}
    return {"id": nid, "message": message, "parent": parent, "children": children}


def conversation(cid: str = CID, title: str = "Snorkelgate CI", nodes: list[dict] | None = None,
                 current: str = "n6") -> dict:
    nodes = nodes if nodes is not None else NODES
    return {"title": title, "create_time": T0, "update_time": T0 + 600, "mapping": {n["id"]: n for n in nodes},
            "moderation_results": [], "current_node": current, "plugin_ids": None, "conversation_id": cid,
            "conversation_template_id": None, "gizmo_id": None, "is_archived": False, "safe_urls": [],
            "default_model_slug": "gpt-5", "id": cid}


NODES = [
    node("root", None, ["n1"]),
    node("n1", "root", ["n2"], "system", parts=[""], hidden=True),
    node("n2", "n1", ["n3b", "n3", "n3c"], "user", secs=5, parts=[f"why is the snorkelgate build red? token {_GHP}"]),
    node("n3b", "n2", [], "assistant", secs=6, parts=["An older answer about the weather."]),
    node("n3", "n2", ["n4"], "assistant", "thoughts", secs=7,
         thoughts=[{"summary": "Reading CI", "content": "check the CI log first", "finished": True}], source_analysis_msg_id="x"),
    node("n4", "n3", ["n4r"], "assistant", "code", secs=8, recipient="python", language="unknown",
         text="print(open('ci.log').read())"),
    node("n4r", "n4", ["n5"], "assistant", "reasoning_recap", secs=8, content="Thought for 5s"),
    node("n5", "n4r", ["n6"], "tool", "execution_output", secs=9, name="python", text="lockfile mismatch in wobbleframe"),
    node("n6", "n5", [], "assistant", "multimodal_text", secs=20,
         parts=["The lockfile drifted.", {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"}]),
    node("n3c", "n2", [], "assistant", "future_widget", secs=30, parts=["a widget answer"]),
]
OTHER_CONV = conversation(OTHER, "Otter facts", [node("r", None, ["u"]), node("u", "r", ["a"], "user", parts=["hello otter"]),
                                                 node("a", "u", [], "assistant", parts=["Otters hold hands."])], "a")


def export_json(*convs) -> str:
    return json.dumps(list(convs or (conversation(), OTHER_CONV)))


def write_zip(path: Path, text: str | None = None, member: str = "conversations.json") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(member, text if text is not None else export_json())
        z.writestr("chat.html", "<html>the same chats</html>")
        z.writestr("user.json", json.dumps({"id": "user-1", "email": "dev@example.com"}))
    return path


def test_registered_and_named():
    assert get_source("chatgpt").__class__ is ChatGPTSource
    assert (SRC.agent, SRC.display, SRC.badge) == ("chatgpt", "ChatGPT export", "ChatGPT")


def test_a_conversation_opens_at_its_web_address_only_with_a_web_id():
    from crabsearch.model import Session

    def url(agent: str, sid: str) -> str | None:
        return get_source(agent).open_url(Session(agent=agent, session_id=sid, path="/t"))

    assert url("chatgpt", CID) == f"https://chatgpt.com/c/{CID}"
    assert url("claude-ai", CID) == f"https://claude.ai/chat/{CID}"
    # an id made from the file name (no conversation id), or one that is no web id, has none
    for sid in ("conversations.json", "a b?c=d", "x" * 200, "short"):
        assert url("chatgpt", sid) is None
    assert url("claude", CID) is None  # a terminal agent resumes instead


def test_every_branch_is_read_and_the_hidden_ones_are_abandoned(tmp_path):
    zip_path = write_zip(tmp_path / "export.zip")
    unit = member_path(zip_path, CID)
    r = SRC.read(Path(unit))
    assert [(m.role, m.label, m.text) for m in r.messages] == [
        (Role.USER, "user", f"why is the snorkelgate build red? token {_GHP}"),
        (Role.ASSISTANT, "assistant", "An older answer about the weather."),
        (Role.ASSISTANT, "thinking", "check the CI log first"),
        (Role.ASSISTANT, "tool-call:python", "print(open('ci.log').read())"),
        (Role.TOOL, "tool:python", "lockfile mismatch in wobbleframe"),
        (Role.ASSISTANT, "assistant", "The lockfile drifted.\n[image]"),
        (Role.ASSISTANT, "assistant", "a widget answer"),
    ]
    assert r.session.extra["off_branch"] == [[1, 2], [6, 7]]
    assert r.state["unknown_kinds"] == {"future_widget": 1} and r.stats.skipped == 0
    s = r.session
    assert (s.session_id, s.title, s.project, s.anchor_index, s.message_count) == (CID, "Snorkelgate CI", None, 0, 7)
    assert (s.started.isoformat(), s.updated.isoformat()) == ("2026-03-20T09:00:00+00:00", "2026-03-20T09:10:00+00:00")
    assert SRC.resume_command(s) is None and "https://chatgpt.com/c/ID" in SRC.resume_doc
    for m in r.messages:  # read back by offset, as windows and pages do
        assert SRC.message_text(SRC.load(unit, m.offset, m.length), m.part, m.label) == m.text


def test_zip_folder_and_file_are_read_alike_and_shards_too(tmp_path):
    zip_path = write_zip(tmp_path / "export.zip")
    folder = tmp_path / "unpacked"
    write_file(folder / "conversations.json", export_json())
    sharded = tmp_path / "sharded"
    write_file(sharded / "conversations-000.json", export_json(conversation()))
    write_file(sharded / "conversations-001.json", export_json(OTHER_CONV))
    for root in (zip_path, folder, folder / "conversations.json", sharded):
        found = sorted(SRC.discover({"CRABSEARCH_CHATGPT_EXPORT": str(root)}, tmp_path))
        assert sorted(str(p).rpartition("#")[2] for p in found) == sorted([CID, OTHER]), root
        texts = [m.text for p in found if p.name.endswith(CID) for m in SRC.read(p).messages]
        assert "The lockfile drifted.\n[image]" in texts
    assert list(SRC.discover({}, tmp_path)) == []  # never looked for


def test_an_export_that_changes_is_read_again_and_a_gone_conversation_is_gone(tmp_path):
    zip_path = write_zip(tmp_path / "export.zip")
    unit = member_path(zip_path, OTHER)
    size, _, _ = SRC.stat(unit)
    before = SRC.fingerprint(unit, size)
    write_zip(zip_path, export_json(conversation()))
    os.utime(zip_path, ns=(1, 1))
    with pytest.raises(FileNotFoundError):
        SRC.stat(unit)
    assert SRC.fingerprint(member_path(zip_path, CID), size) != before


def clean_env(monkeypatch, home: Path) -> None:
    """``HOME`` set, no config file, and no agent override of the machine running the test."""
    for name in CLEARED_ENV + [s.env_var for s in SOURCES.values() if s.env_var] + ["CRABSEARCH_IMPORTS"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(home / "no-config.toml"))


def run_import(capsys, monkeypatch, home: Path, *argv: str) -> tuple[int, str, str]:
    clean_env(monkeypatch, home)
    return run_cli(capsys, *argv)


def test_import_remembers_the_export_in_crabsearch_data_and_indexes_it(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    zip_path = write_zip(home / "Downloads" / "chatgpt-export.zip")
    index = str(tmp_path / "index")
    code, out, err = run_import(capsys, monkeypatch, home, "--index-dir", index, "import", "~/Downloads/chatgpt-export.zip")
    imports = home / ".local" / "share" / "crabsearch" / "imports.json"
    assert (code, err) == (0, "")
    assert out == (f"ChatGPT export: 2 conversations in {zip_path} (remembered in {imports}); "
                   "search them with agent:chatgpt\n")
    assert json.loads(imports.read_text()) == {"chatgpt": [str(zip_path)]}
    assert oct(imports.stat().st_mode & 0o777) == "0o600"
    assert sorted(os.listdir(zip_path.parent)) == ["chatgpt-export.zip"]  # nothing beside the export
    [hit] = json.loads(cli_ok(capsys, "--index-dir", index, "search", "--json", "otter"))["hits"]
    assert (hit["agent"], hit["session_id"], hit["title"], hit["resume_command"]) == ("chatgpt", OTHER, "Otter facts", None)
    code, out, _ = run_import(capsys, monkeypatch, home, "--index-dir", index, "import", str(zip_path), "--json")
    data = json.loads(out)
    assert (code, data["agent"], data["conversations"], data["added"], data["imports_file"]) == (
        0, "chatgpt", 2, False, str(imports))
    assert json.loads(imports.read_text()) == {"chatgpt": [str(zip_path)]}
    status = cli_ok(capsys, "--index-dir", index, "status")
    assert f"  looked in {zip_path}\n" in status  # a file location that exists is found
    zip_path.unlink()
    assert f"  looked in {zip_path} (not found)\n" in cli_ok(capsys, "--index-dir", index, "status")


@pytest.mark.parametrize("make,says", [
    (lambda d: write_file(d / "notes.txt", "hello"), "is not JSON"),
    (lambda d: write_file(d / "conversations.json", "[1, 2, 3]"), "holds no ChatGPT or Claude.ai conversation"),
    (lambda d: write_file(d / "data.json", '{"a": 1}'), "is not a list of conversations"),
    (lambda d: write_file(d / "broken.zip", b"PK\x03\x04 not really a zip"), "not a readable zip file"),
    (lambda d: write_zip(d / "other.zip", member="photos.json"), "no conversations.json in it"),
    (lambda d: d / "missing.zip", "no such file or folder"),
])
def test_import_refuses_what_is_not_an_export_in_one_line(tmp_path, monkeypatch, capsys, make, says):
    home = tmp_path / "home"
    home.mkdir()
    path = make(tmp_path)
    code, out, err = run_import(capsys, monkeypatch, home, "--index-dir", str(tmp_path / "index"), "import", str(path))
    assert (code, out) == (1, "") and err.count("\n") == 1 and says in err and "Traceback" not in err, err
    assert not (home / ".local" / "share" / "crabsearch" / "imports.json").exists()


def test_import_refuses_a_huge_export_and_takes_usage_errors(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    zip_path = write_zip(tmp_path / "export.zip")
    monkeypatch.setattr(exports, "EXPORT_CAP", 1000)
    code, _, err = run_import(capsys, monkeypatch, home, "--index-dir", str(tmp_path / "index"), "import", str(zip_path))
    assert code == 1 and "more than the 0 MB crabsearch reads" in err and err.count("\n") == 1
    code, _, err = run_import(capsys, monkeypatch, home, "import")
    assert code == 2 and "the following arguments are required: PATH" in err
    code, _, err = run_import(capsys, monkeypatch, home, "--demo", "import", str(zip_path))
    assert code == 2 and "not with --demo" in err
    with pytest.raises(SystemExit) as done:
        run_import(capsys, monkeypatch, home, "import", "--help")
    assert done.value.code == 0
    help_text = capsys.readouterr().out
    assert "ChatGPT or Claude.ai data export" in help_text and "never extracted" in help_text


def test_a_broken_imports_file_is_named_and_left_alone(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    imports = write_file(home / ".local" / "share" / "crabsearch" / "imports.json", "{not json")
    zip_path = write_zip(tmp_path / "export.zip")
    code, _, err = run_import(capsys, monkeypatch, home, "--index-dir", str(tmp_path / "index"), "import", str(zip_path))
    assert code == 1 and f"{imports} is not JSON; fix or remove it" in err
    assert imports.read_text() == "{not json"


def test_config_sources_entry_reads_an_export(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    zip_path = write_zip(tmp_path / "exports" / "chatgpt.zip")
    config = write_file(tmp_path / "config.toml", f'[sources]\nchatgpt = ["{zip_path}"]\n')
    clean_env(monkeypatch, home)
    monkeypatch.setenv("CRABSEARCH_CONFIG", str(config))
    index = str(tmp_path / "index")
    cli_ok(capsys, "--index-dir", index, "index")
    [hit] = json.loads(cli_ok(capsys, "--index-dir", index, "search", "--json", "otter"))["hits"]
    assert hit["session_id"] == OTHER


def test_index_search_show_export_and_mcp(tmp_path, monkeypatch, capsys):
    zip_path = write_zip(tmp_path / "export.zip")
    env = {"HOME": str(tmp_path / "home"), "CRABSEARCH_CONFIG": str(tmp_path / "none.toml"),
           "CRABSEARCH_CHATGPT_EXPORT": str(zip_path)}
    trip = round_trip(capsys, monkeypatch, tmp_path / "index", env, "chatgpt", "snorkelgate", CID)
    assert (trip.hit["agent"], trip.hit["session_id"], trip.hit["title"], trip.hit["resume_command"]) == (
        "chatgpt", CID, "Snorkelgate CI", None)
    url = f"https://chatgpt.com/c/{CID}"  # no resume command: the conversation's web address
    assert (trip.hit["url"], trip.page["session"]["url"], trip.mcp_hits[0]["url"], trip.mcp_page["url"]) == (url,) * 4
    assert f"- **Open:** {url}\n" in trip.markdown
    index = str(tmp_path / "index")
    assert f"\n   open: {url}\n" in cli_ok(capsys, "--index-dir", index, "search", "snorkelgate")
    assert f"\nopen: {url}\n" in cli_ok(capsys, "--index-dir", index, "show", CID)
    assert _GHP not in json.dumps(trip.hit) and _GHP not in trip.markdown and _GHP not in json.dumps(trip.mcp_page)
    assert [m["text"] for m in trip.page["messages"]][5] == "The lockfile drifted.\n[image]"
    assert [m.get("abandoned", False) for m in trip.page["messages"]] == [False, True, False, False, False, False, True]
    assert "The lockfile drifted." in trip.markdown
    assert [h["session_id"] for h in trip.mcp_hits] == [CID] and trip.mcp_page["total"] == 7
    chatgpt = next(a for a in trip.status["agents"] if a["agent"] == "chatgpt")
    assert (chatgpt["files_found"], chatgpt["sessions"], chatgpt["skipped_lines"]) == (2, 2, 0)
    assert any(k["agent"] == "chatgpt" and k["kind"] == "future_widget" for k in trip.status["unknown_kinds"])
    assert json.loads(cli_ok(capsys, "--index-dir", str(tmp_path / "index"), "search", "--json",
                             "wobbleframe"))["hits"] == []  # tool output: not indexed by default


def fuzz_units(home: Path) -> list:
    """The fuzz matrix's unit: a conversation's nodes, each fuzzed, in an export file."""
    from test_reader_fuzz import Unit, _touch

    path = home / "fuzz-exports" / "chatgpt" / "conversations.json"

    def write(texts: list[str]) -> str:
        conv = conversation(nodes=[])
        body = json.dumps([conv]).replace('"mapping": {}', '"mapping": {' + ", ".join(
            f'"{NODES[i]["id"]}": {t}' for i, t in enumerate(texts)) + "}")
        write_file(path, body)
        _touch(path)
        return member_path(path, CID)

    return [Unit("chatgpt export", SRC, [dict(n) for n in NODES], write)]


def all_agents_session(home: Path, t: datetime) -> Expect:
    """This agent's session in the all-agents home (``tests/all_agents.py``): an export zip under
    ``home/Downloads`` that ``$CRABSEARCH_CHATGPT_EXPORT`` names, started at ``t``, holding the word
    ``quokkachatgpt`` no other session holds."""
    cid = "67d1a2b3-0c4d-8000-9e5f-000000000038"
    start = t.timestamp()
    nodes = [node("root", None, ["u"]),
             node("u", "root", ["a"], "user", parts=[prompt_of("chatgpt")]),
             node("a", "u", [], "assistant", parts=[reply_of("chatgpt")])]
    conv = conversation(cid, "ChatGPT: worker stall", nodes, "a")
    conv["create_time"], conv["update_time"] = start, start + 60
    for n in conv["mapping"].values():
        if n["message"]:
            n["message"]["create_time"] = start + 5
    path = write_zip(home / "Downloads" / "chatgpt-export.zip", json.dumps([conv]))
    return Expect("chatgpt", cid, "ChatGPT: worker stall", None, None, "quokkachatgpt",
                  [prompt_of("chatgpt"), reply_of("chatgpt")], t,
                  env={"CRABSEARCH_CHATGPT_EXPORT": str(path)}, files=[path])



async def test_the_apps_copy_menu_offers_the_conversations_web_link(tmp_path):
    from builders import NOW, settle
    from crabsearch.index import Indexer
    from crabsearch.tui.app import CrabsearchApp
    from crabsearch.tui.panels import ChoiceScreen

    env = {"HOME": str(tmp_path / "home"), "CRABSEARCH_CHATGPT_EXPORT": str(write_zip(tmp_path / "export.zip"))}
    Indexer(tmp_path / "index", env=env).refresh()
    app = CrabsearchApp(tmp_path / "index", env=env, now=NOW, index_on_start=False, cursor_blink=False)
    app.copy_file = tmp_path / "last-copy.txt"
    copied = []
    app.copy_to_clipboard = copied.append
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"snorkelgate")
        await settle(pilot)
        await pilot.press("down", "c")
        assert isinstance(app.screen, ChoiceScreen) and "web link" in str(app.screen.query_one("OptionList").get_option_at_index(2).prompt)
        await pilot.press("u")
        assert copied == [f"https://chatgpt.com/c/{CID}"]

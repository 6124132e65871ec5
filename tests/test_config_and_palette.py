"""Config file keys (theme, context, [sources], [resume], [keys]), the theme key and the palette."""

from __future__ import annotations

from crabsearch import config
from crabsearch.index import Indexer
from crabsearch.search import Engine
from crabsearch.tui.app import CrabsearchApp
from crabsearch.tui.panels import ResumeScreen
from crabsearch.tui.results import ResultList

from builders import NOW, ClaudeSession, settle


def test_config_reads_every_key(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('theme = "textual-light"\ncontext = 2\nindex_tool_output = true\n'
                    '[sources]\nclaude = ["/mnt/old/.claude"]\ncodex = "/mnt/old/.codex"\n'
                    '[resume]\nclaude = "--model opus"\n[keys]\nresume = "ctrl+o"\n')
    cfg = config.load(path)
    assert cfg.problem is None
    assert (cfg.theme, cfg.context, cfg.index_tool_output) == ("textual-light", 2, True)
    assert cfg.sources == {"claude": ["/mnt/old/.claude"], "codex": ["/mnt/old/.codex"]}
    assert cfg.resume == {"claude": "--model opus"} and cfg.keys == {"resume": "ctrl+o"}


def test_config_bad_values_are_named_and_defaults_used(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('context = 99\ntheme = 3\nsources = "x"\n[resume]\nclaude = 1\n')
    cfg = config.load(path)
    assert cfg.context == 4 and cfg.theme is None and cfg.sources == {} and cfg.resume == {}
    for part in ("context must be", "theme must be", "[sources] must be a table", "[resume] claude must be"):
        assert part in cfg.problem


def test_a_relative_sources_path_is_named_and_left_out(tmp_path):
    """A ``[sources]`` path is absolute or starts with ~: a relative one (a string such as
    ``claude = "notalist"``, or in a list) would be looked for in the current directory, so it is
    named as a problem, as ``codex = [42]`` is, and not used."""
    path = tmp_path / "config.toml"
    path.write_text('[sources]\nclaude = "notalist"\ncodex = [42]\n'
                    'aider = ["~/code", "rel/dir", "/srv/code"]\ngemini = "~/old/.gemini"\n')
    cfg = config.load(path)
    assert cfg.sources == {"claude": [], "aider": ["~/code", "/srv/code"], "gemini": ["~/old/.gemini"]}
    for part in ("[sources] claude: 'notalist' is not an absolute path", "[sources] codex must be a list of paths",
                 "[sources] aider: 'rel/dir' is not an absolute path"):
        assert part in cfg.problem
    assert "~/code" not in cfg.problem and "gemini" not in cfg.problem


def test_extra_source_directories_are_indexed(tmp_path):
    home, old = tmp_path / "home", tmp_path / "old-laptop" / ".claude"
    ClaudeSession(home).user("the current laptop session").write()
    ClaudeSession(old.parent, session_id="11111111-2222-4333-8444-555555555555").user(
        "an archived capybara session").write()  # writes under old-laptop/.claude/projects/...
    indexer = Indexer(tmp_path / "index", env={"HOME": str(home)}, extra_dirs={"claude": [str(old)]})
    report = indexer.refresh()
    assert report.files_seen == 2
    hits = Engine(tmp_path / "index").search("capybara").hits
    assert [h.session.session_id for h in hits] == ["11111111-2222-4333-8444-555555555555"]
    assert any(str(old) in str(root) for _, root in indexer.roots())


def make_app(sample, cfg, **kw):
    home, index_dir = sample
    return CrabsearchApp(index_dir, env={"HOME": str(home)}, now=NOW, index_on_start=False, cursor_blink=False,
                         config=cfg, **kw)


async def test_theme_context_keys_and_resume_flags_from_config(sample):
    cfg = config.Config(theme="textual-light", context=1, keys={"resume": "ctrl+o"},
                        resume={"claude": "--model opus"})
    app = make_app(sample, cfg)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "textual-light"
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down", "enter")
        results = app.screen.query_one(ResultList)
        assert [i.message_index for i in results.expanded[0][2]] == [4, 5, 6]  # context = 1
        await pilot.press("ctrl+o")  # resume, rebound
        assert isinstance(app.screen, ResumeScreen)
        assert app.screen.command.endswith("claude --resume 5c0375b4-57a5-4f26-b12d-d022ee4e51b7 --model opus")
        await pilot.press("escape", "ctrl+t")
        assert app.theme == "textual-dark"


async def test_unknown_theme_is_reported_not_fatal(sample):
    """With another problem of the config: both said, in one toast (a toast of a kind takes the
    place of the last)."""
    app = make_app(sample, config.Config(theme="no-such-theme", problem="x.toml: [keys] bogus is not an action"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert any("unknown theme" in n.message and "[keys] bogus" in n.message for n in app._notifications)


async def test_command_palette_lists_the_screens_actions(sample):
    app = make_app(sample, config.Config())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for t in ("Open session", "Resume session", "Fork session", "Copy…", "Export to Markdown…",
                  "Open in editor", "Toggle sort", "Light / dark theme", "Help: keys"):
            assert t in titles
        await pilot.press(*"idempotent")
        await settle(pilot)
        await pilot.press("down")
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Open session")
        await command.callback()  # the palette awaits it too
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Find in session" in titles and "Tool calls: cycle" in titles


def test_unknown_settings_actions_agents_and_bad_keys_are_named(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('contex = 2\n[keys]\nopen = "not a key!!"\nbogus = "ctrl+x"\nresume = "ctrl+o"\n'
                    '[sources]\nvim = ["/tmp"]\nclaude = ["/tmp/c"]\n')
    cfg = config.load(path)
    assert cfg.keys == {"resume": "ctrl+o"} and cfg.sources == {"claude": ["/tmp/c"]}
    for part in ("unknown setting contex", "[keys] bogus is not an action", "'not a key!!' is not a key name",
                 "[sources] vim is not an agent"):
        assert part in cfg.problem


def test_every_binding_id_can_be_rebound_from_the_config():
    from textual.binding import Binding

    from crabsearch.tui import app, filters, results, screens, session, transcript

    ids = {b.id for mod in (app, filters, results, screens, session, transcript) for cls in vars(mod).values()
           if isinstance(cls, type) for b in getattr(cls, "BINDINGS", []) if isinstance(b, Binding) and b.id}
    assert ids and ids <= set(config.KEY_ACTIONS), ids - set(config.KEY_ACTIONS)

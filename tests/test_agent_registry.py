"""The agent registry (``crabsearch.sources``): every agent module has every piece the rest of
crabsearch reads from it (its card, read from the module's text without importing it, and its
reader's hooks), and a piece left out fails here (the checks are run on broken modules too)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from rich.style import Style

from crabsearch import config, watch
from crabsearch.sources import AGENTS, CARDS, Card, Source, module_of, read_cards
from crabsearch.tui.render import AGENT_STYLES, AGENT_WIDTH

TESTS = Path(__file__).resolve().parent
HOOKS = ("roots", "discover", "message_text", "resume_command")


def problems_of(src: Source, card: Card) -> list[str]:
    """What the agent of ``src`` (its reader) and ``card`` (read from its module's text) lacks."""
    out = [f"{name} is {getattr(src, name)!r} in the reader but {getattr(card, name)!r} in the card (not a "
           "literal in the SOURCE class's body?)" for name in Card.__dataclass_fields__
           if getattr(src, name) != getattr(card, name)]
    if not (card.display and card.badge and card.env_var):
        out.append("no display name, badge or env override")
    out += [f"no {hook} of its own" for hook in HOOKS if getattr(type(src), hook) is getattr(Source, hook)]
    if type(src).process is Source.process and type(src).read is Source.read:
        out.append("no process (or read) of its own")
    root = os.path.join(os.sep, "elsewhere")
    if not any(str(r).startswith(root) for r in src.roots({card.env_var: root}, Path("/home/x"))):
        out.append(f"its roots ignore {card.env_var}")
    if len(card.badge) + 2 > AGENT_WIDTH:
        out.append("its badge is wider than the agent column")
    if card.style and Style.parse(card.style) is None:
        out.append("no badge style")
    if card.config_table and card.config_table not in config.KNOWN_KEYS:
        out.append(f"[{card.config_table}] is not a known setting")
    if card.project_tree != (card.agent in watch.PROJECT_TREE_SOURCES):
        out.append("the watcher does not know whether to poll it")
    if not (src.locations and src.upstream and card.env_var in src.override):
        out.append(f"no README row: where its transcripts are, where its rules come from, or {card.env_var} "
                   "in its override")
    fixture_test = TESTS / f"test_sources_{module_of(card.agent)}.py"
    if not fixture_test.is_file():
        out.append(f"no tests/test_sources_{module_of(card.agent)}.py")
    elif "\ndef all_agents_session(" not in fixture_test.read_text("utf-8"):
        out.append(f"tests/test_sources_{module_of(card.agent)}.py has no all_agents_session (its session in the all-agents home)")
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_has_every_piece(agent):
    src = importlib.import_module(f"crabsearch.sources.{module_of(agent)}").SOURCE
    assert problems_of(src, CARDS[agent]) == []


def test_the_cards_are_what_the_app_and_config_use():
    assert len({c.order for c in CARDS.values()}) == len(CARDS)
    assert AGENT_STYLES == {a: c.style for a, c in CARDS.items() if c.style}
    assert config.KNOWN_KEYS[-2:] == ("aider", "specstory") and watch.PROJECT_TREE_SOURCES == ("aider", "specstory")


SKETCH = '''"""A sketch of an agent."""

from pathlib import Path

from crabsearch.sources.base import Source


class SketchSource(Source):
    """Sketch."""

    agent = "sketchagent"
    order = 5
    display = "Sketch Agent"
    badge = "Sketch"
    env_var = "SKETCH_HOME"

    def roots(self, env, home):
        return [Path(env.get("SKETCH_HOME") or home / ".sketch")]


SOURCE = SketchSource()
'''


def test_cards_are_read_from_the_module_text(tmp_path):
    (tmp_path / "sketchagent.py").write_text(SKETCH)
    (tmp_path / "helper.py").write_text("HELPER = 1\n")
    assert read_cards(tmp_path) == {"sketchagent": Card("sketchagent", 5, "Sketch Agent", "Sketch", "SKETCH_HOME")}


def test_an_agent_name_with_a_hyphen_is_read_from_its_module_with_an_underscore(tmp_path):
    """``claude-ai`` is read by ``claude_ai.py`` (a module name cannot hold ``-``); a module
    naming another agent is refused."""
    (tmp_path / "sketch_agent.py").write_text(SKETCH.replace('agent = "sketchagent"', 'agent = "sketch-agent"'))
    assert list(read_cards(tmp_path)) == ["sketch-agent"]
    assert module_of("sketch-agent") == "sketch_agent"
    (tmp_path / "sketch_agent.py").write_text(SKETCH)
    with pytest.raises(RuntimeError, match="must define SOURCE with agent 'sketch-agent'"):
        read_cards(tmp_path)


@pytest.mark.parametrize("change,lacks", [
    (('    badge = "Sketch"', "    badge = DISPLAY.split()[0]"),
     "badge is 'Sketch' in the reader but '' in the card (not a literal in the SOURCE class's body?)"),
    (('    env_var = "SKETCH_HOME"\n', ""), "no display name, badge or env override"),
    (('env.get("SKETCH_HOME") or ', ""), "its roots ignore SKETCH_HOME"),
    (("", ""), "no discover of its own"),
    (("", ""), "no tests/test_sources_sketchagent.py"),
])
def test_an_agent_that_lacks_a_piece_is_caught(tmp_path, change, lacks):
    text = SKETCH.replace(*change).replace('"""A sketch of an agent."""',
                                           '"""A sketch of an agent."""\nDISPLAY = "Sketch Agent"')
    (tmp_path / "sketchagent.py").write_text(text)
    namespace: dict = {}
    exec(compile(text, str(tmp_path / "sketchagent.py"), "exec"), namespace)
    assert lacks in problems_of(namespace["SOURCE"], read_cards(tmp_path)["sketchagent"])


def test_a_module_whose_source_is_another_agent_is_refused(tmp_path):
    (tmp_path / "other.py").write_text(SKETCH)
    with pytest.raises(RuntimeError, match="crabsearch.sources.other must define SOURCE with agent 'other'"):
        read_cards(tmp_path)


def test_the_readme_lists_every_agent():
    """The README's table of agents is :func:`crabsearch.sources.table.readme_rows` (to rewrite it:
    ``python -m crabsearch.sources.table``)."""
    from crabsearch.sources.table import with_readme_rows

    readme = (TESTS.parent / "README.md").read_text(encoding="utf-8")
    assert with_readme_rows(readme) == readme

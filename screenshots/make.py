"""Regenerate the README screenshots (SVG) from the sample sessions used by the snapshot tests.

Usage: ``python screenshots/make.py`` (from the repository root, with the test extra installed).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from all_agents import all_agents_env, build_all_agents_home  # noqa: E402
from builders import NOW, build_sample_home  # noqa: E402
from crabsearch.index import Indexer  # noqa: E402
from crabsearch.tui.app import CrabsearchApp  # noqa: E402

SHOTS = {
    "recent": [],
    "results": list("cron"),
    "expanded": list("cron") + ["down", "enter"],
    "session": list("parser") + ["down", "o"],
    "help": ["f1"],
    "filtered": list("cron agent:claude"),
    "find": list("parser") + ["down", "o", "slash"] + list("module 281") + ["enter"],
}
AGENT_SHOTS = {"agents": []}
"""Shots of the twelve agents' sessions (tests/all_agents.py): the badges."""


async def shoot(index_dir: Path, env: dict[str, str], name: str, keys: list[str]) -> None:
    app = CrabsearchApp(index_dir, env=env, now=NOW, index_on_start=False, cursor_blink=False)
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        for key in keys:
            await pilot.press(key)
            if key in ("n", "r") or len(key) > 1:
                await pilot.pause(0.3)
                await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.save_screenshot(str(ROOT / "screenshots" / f"{name}.svg"))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = build_sample_home(Path(tmp) / "home")
        index_dir = Path(tmp) / "index"
        Indexer(index_dir, env={"HOME": str(home)}).refresh()
        for name, keys in SHOTS.items():
            asyncio.run(shoot(index_dir, {"HOME": str(home)}, name, keys))
            print(f"screenshots/{name}.svg")
        home = Path(tmp) / "agents-home"
        env = all_agents_env(home, build_all_agents_home(home))
        index_dir = Path(tmp) / "agents-index"
        Indexer(index_dir, env=env).refresh()
        for name, keys in AGENT_SHOTS.items():
            asyncio.run(shoot(index_dir, env, name, keys))
            print(f"screenshots/{name}.svg")


if __name__ == "__main__":
    main()

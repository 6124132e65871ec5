"""Snapshot tests share the builders and the sample index with ``tests/``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from builders import sample  # noqa: E402,F401  (the fixture)
from markers import pytest_collection_modifyitems  # noqa: E402,F401  (snapshots are slow)

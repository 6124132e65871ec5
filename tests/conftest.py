"""Shared fixtures (defined in ``builders.py`` so ``snapshots/`` can share them).

Every ``crabsearch`` a test starts runs its command itself: no resident server is left behind
(``CRABSEARCH_NO_SERVER``; ``test_resident.py`` starts its own, in its own directories).
"""

import os

os.environ["CRABSEARCH_NO_SERVER"] = "1"

from builders import sample  # noqa: E402,F401
from markers import pytest_collection_modifyitems  # noqa: E402,F401


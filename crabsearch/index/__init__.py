"""The Whoosh index: schema and analyzer, opening with a version stamp, incremental writer.

Only ``crabsearch.search`` and the CLI's ``index`` command use this package; the TUI never does.
"""

from .store import open_index
from .writer import Indexer, Progress, RefreshReport

__all__ = ["Indexer", "Progress", "RefreshReport", "open_index"]

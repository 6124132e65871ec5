"""The ``slow`` mark: what the inner loop (``pytest -m "not slow"``) leaves out. Both
``tests/conftest.py`` and ``snapshots/conftest.py`` install :func:`pytest_collection_modifyitems`."""

import inspect

import pytest

SLOW_MODULES = frozenset({
    "test_reader_fuzz", "test_bench_smoke", "test_concurrency", "test_agent_dirs_untouched",
    "test_special_files", "test_resident", "test_mcp_stdio", "test_terminal_safety", "test_startup",
    "test_relevance_real", "test_pool", "test_codec", "test_parallel_build",
})
"""Modules whose tests start processes, fuzz, race writers or build large indexes."""


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` what the inner loop (``pytest -m "not slow"``) skips: the app pilots (async
    tests), the SVG snapshots, and the tests of :data:`SLOW_MODULES`. ``pytest -q`` runs all."""
    slow = pytest.mark.slow
    for item in items:
        if item.get_closest_marker("slow"):
            continue  # both conftests (tests/, snapshots/) run this hook
        module = item.module.__name__.rpartition(".")[2] if getattr(item, "module", None) else ""
        func = getattr(item, "function", None)
        if (module in SLOW_MODULES or "snap_compare" in getattr(item, "fixturenames", ())
                or (func is not None and inspect.iscoroutinefunction(func))):
            item.add_marker(slow)

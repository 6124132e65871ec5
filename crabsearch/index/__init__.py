"""The Whoosh index: schema and analyzer, opening with a version stamp, incremental writer.

Only ``crabsearch.search`` and the CLI's ``index`` command use this package; the TUI never does.

The names below are imported on first use (PEP 562), not with the package: a read-only search
imports ``crabsearch.index.store`` and friends through ``crabsearch.search``, and must not pay
for the writer (``writer.py``, and through it every agent reader) when nothing changed.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types


def _urlretrieve(*args, **kwargs):  # pragma: no cover - whoosh's name for it; crabsearch never calls it
    from urllib.request import urlretrieve

    return urlretrieve(*args, **kwargs)


def _variations(*args, **kwargs):  # pragma: no cover - whoosh's Variations query; crabsearch never builds one
    from whoosh.lang.morph_en import variations

    return variations(*args, **kwargs)


def _stem(*args, **kwargs):  # pragma: no cover - whoosh's stemming filters; crabsearch's analyzer never stems
    from whoosh.lang.porter import stem

    return stem(*args, **kwargs)


def import_whoosh_lean() -> None:
    """Import ``whoosh.compat`` and ``whoosh.reading`` without two imports they make that
    crabsearch never uses: ``urllib.request`` (``whoosh.compat`` binds ``urlretrieve``, pulling
    in ``http.client``, ``email`` and ``ssl``) and the ``cached_property`` package
    (``whoosh.reading``; it imports ``asyncio``). While they import, ``sys.modules``
    holds stand-ins: ``urlretrieve`` importing the real one when called, and the standard
    library's ``functools.cached_property`` (the same non-data descriptor for the one plain
    method whoosh decorates, ``SegmentReader.deleted_docs_set``). Also ``whoosh.lang.morph_en``,
    which ``whoosh.query`` imports for its ``Variations`` query (unused here) and which compiles
    ~50 regular expressions at import: its stand-in's ``variations`` imports the real
    module when called; and ``whoosh.lang.porter`` (``whoosh.analysis`` binds its ``stem`` as the
    default of its stemming filters, which crabsearch's analyzer does not use; it compiles a
    dozen regular expressions at import), whose stand-in's ``stem`` imports it when called. The
    stand-ins are removed
    afterwards, so any later ``import urllib.request`` gets the real module. Does nothing when
    whoosh or those modules are imported already (``python -X importtime`` shows what each costs)."""
    if "whoosh.reading" in sys.modules:
        return
    stubs = {}
    if "urllib.request" not in sys.modules and "whoosh.compat" not in sys.modules:
        stubs["urllib.request"] = types.ModuleType("urllib.request")
        stubs["urllib.request"].urlretrieve = _urlretrieve
    if "cached_property" not in sys.modules:
        stubs["cached_property"] = types.ModuleType("cached_property")
        stubs["cached_property"].cached_property = functools.cached_property
    if "whoosh.lang.morph_en" not in sys.modules and "whoosh.query" not in sys.modules:
        stubs["whoosh.lang.morph_en"] = types.ModuleType("whoosh.lang.morph_en")
        stubs["whoosh.lang.morph_en"].variations = _variations
    if "whoosh.lang.porter" not in sys.modules and "whoosh.analysis" not in sys.modules:
        stubs["whoosh.lang.porter"] = types.ModuleType("whoosh.lang.porter")
        stubs["whoosh.lang.porter"].stem = _stem
    sys.modules.update(stubs)
    try:
        import whoosh.analysis  # noqa: F401
        import whoosh.compat  # noqa: F401
        import whoosh.query  # noqa: F401
        import whoosh.reading  # noqa: F401
    finally:
        for name, module in stubs.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


import_whoosh_lean()

_LAZY = {"Indexer": "writer", "Progress": "writer", "RefreshReport": "writer", "open_index": "store"}

__all__ = ["Indexer", "Progress", "RefreshReport", "open_index"]


def __getattr__(name: str):
    """``Indexer``, ``Progress``, ``RefreshReport`` (``writer``) and ``open_index`` (``store``),
    imported when first asked for; AttributeError for any other name."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

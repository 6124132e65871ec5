"""crabsearch: search your past AI coding-agent sessions from the terminal.

Layers, in the one direction data flows: ``sources`` (agent formats) -> ``model`` -> ``index``
(Whoosh) -> ``search`` (the engine) -> ``tui`` and ``cli``.
"""

__version__ = "0.1.0"

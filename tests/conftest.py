"""Shared fixtures (defined in ``builders.py`` so ``snapshots/`` can share them)."""

from builders import sample  # noqa: F401

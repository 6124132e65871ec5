"""Keyboard input that cannot stop the app: Textual's Linux drivers read the terminal as strict
UTF-8, so one byte that is not UTF-8 (a Latin-1 paste, a terminal sending 8-bit Meta keys) raised
``UnicodeDecodeError`` in the input thread and the app exited with a traceback (a fresh-user
trial; Textual 8.2.8 ``drivers/linux_driver.py:430``, ``linux_inline_driver.py:133``; upstream
Textualize/textual#6456, open). :func:`tolerate_bad_bytes` makes them decode a bad byte as
U+FFFD, as the fix proposed upstream does."""

from __future__ import annotations

import codecs
import importlib
from functools import partial

DRIVERS = ("textual.drivers.linux_driver", "textual.drivers.linux_inline_driver")
"""The driver modules that build the strict decoder (``getincrementaldecoder("utf-8")()``)."""


def replacing_decoder(encoding: str):
    """``codecs.getincrementaldecoder(encoding)`` whose decoders replace an invalid byte with
    U+FFFD instead of raising (``errors="replace"``)."""
    return partial(codecs.getincrementaldecoder(encoding), errors="replace")


def tolerate_bad_bytes() -> None:
    """Make Textual's terminal drivers decode keyboard input with :func:`replacing_decoder`
    (their module's ``getincrementaldecoder``, looked up each time the input thread starts).
    A driver that cannot be imported here (not on this platform) is left alone."""
    for name in DRIVERS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        module.getincrementaldecoder = replacing_decoder

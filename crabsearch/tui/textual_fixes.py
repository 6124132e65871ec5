"""Two fixes to Textual 8.2.8, applied by the app (:func:`apply`).

* Keyboard input that cannot stop the app: Textual's Linux drivers read the terminal as strict
  UTF-8, so one byte that is not UTF-8 (a Latin-1 paste, a terminal sending 8-bit Meta keys)
  raised ``UnicodeDecodeError`` in the input thread and the app exited with a traceback
  (``drivers/linux_driver.py:430``, ``linux_inline_driver.py:133``; upstream
  Textualize/textual#6456, open). :func:`tolerate_bad_bytes` makes them decode a bad byte as
  U+FFFD, as the fix proposed upstream does.
* No garbage cycle per painted line: ``Strip.divide`` with the one cut at its end kept
  ``[self]`` in the strip's own cache (``strip.py:596``), so every line the compositor painted
  was a reference cycle, freed only by Python's cyclic collections. :func:`no_divide_cycle`
  answers that case without the cache. The cycles left while typing hang off Textual's workers
  (worker, task and context) and its LRU caches' rings, left as they are. (These fixes make
  Python's full collections a little shorter, not fewer: ``idle_gc`` moves them to when the
  user is idle.)
"""

from __future__ import annotations

import codecs
import importlib
from functools import partial

from textual.strip import Strip

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


_divide = Strip.divide


def divide(self: Strip, cuts) -> list[Strip]:
    """``Strip.divide``, but a strip cut only at its end is ``[self]`` without being kept in the
    strip's own cache (a cycle: strip -> cache -> list -> strip)."""
    cuts = list(cuts)
    if [cut for cut in cuts if cut <= self.cell_length] == [self.cell_length]:
        return [self]
    return _divide(self, cuts)


def no_divide_cycle() -> None:
    """Make ``Strip.divide`` :func:`divide`."""
    Strip.divide = divide


def apply() -> None:
    """Both fixes (idempotent)."""
    tolerate_bad_bytes()
    no_divide_cycle()

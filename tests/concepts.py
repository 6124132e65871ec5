"""A stand-in embedder for tests of similarity search (``crabsearch.embedder``'s interface, no
model): a text's vector counts its *concepts*, words of several languages mapped to one concept
by :data:`CONCEPTS` (other words: themselves), hashed into :data:`DIM` dimensions and scaled to
length 1. So ``Hund`` and ``dog`` are one concept: a query shares no word with a session and
still finds it, as a multilingual model's would."""

from __future__ import annotations

import hashlib
import re

import numpy as np

DIM = 64
CONCEPTS = {
    "hund": "dog", "hunde": "dog", "perro": "dog", "собака": "dog", "犬": "dog", "dogs": "dog",
    "bellt": "bark", "ladra": "bark", "лает": "bark", "barks": "bark", "barking": "bark",
    "katze": "cat", "gato": "cat", "кошка": "cat", "cats": "cat",
    "datenbank": "database", "base": "database", "базa": "database", "databases": "database",
}
STOP = frozenset({"the", "a", "der", "die", "das", "el", "la", "and", "und", "y"})


class ConceptEmbedder:
    """``name``, ``passages``, ``query`` as ``crabsearch.embedder.E5``; counts calls in
    ``embedded`` (passages) and ``queries``."""

    name = "test-concepts/1"
    margin = 0.5

    def __init__(self):
        self.embedded = 0
        self.queries = 0

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(DIM, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            if word in STOP:
                continue
            concept = CONCEPTS.get(word, word)
            v[int(hashlib.sha1(concept.encode()).hexdigest(), 16) % DIM] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def passages(self, texts: list[str]) -> np.ndarray:
        self.embedded += len(texts)
        return np.vstack([self._vector(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

    def query(self, text: str) -> np.ndarray:
        self.queries += 1
        return self._vector(text)

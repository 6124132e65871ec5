"""Ranking policies for tests (``crabsearch.ranking.Policy``): a recency prior as a newcomer
would add it, done right (its score and its bound changed together) and done wrong both ways."""

from __future__ import annotations

from crabsearch.ranking import Policy

DAY_MS = 86_400_000


class RecencyPrior(Policy):
    """Newer sessions score more: the sum of the parts times ``1 + weight * 0.5 ** (age /
    half_life_days)``, ``age`` in days from the row's time to the search's clock (0 for a row
    dated after it); the bound is the sum times ``1 + weight`` (an age of 0)."""

    uses_time = True

    def __init__(self, weight: float = 0.5, half_life_days: float = 365.0) -> None:
        self.weight, self.half_life_days = weight, half_life_days

    def score(self, message, title, when, now):
        age = max(0, now - when) / DAY_MS
        return (message + title) * (1 + self.weight * 0.5 ** (age / self.half_life_days))

    def bound(self, message, title, now):
        return (message + title) * (1 + self.weight)


class PriorWithoutBound(RecencyPrior):
    """The exercise done wrong: the score has the prior, the bound is still the plain sum."""

    def bound(self, message, title, now):
        return message + title


class BoundWithoutPrior(RecencyPrior):
    """The other way wrong: the bound has room for the prior, the score does not add it."""

    uses_time = False

    def score(self, message, title, when, now):
        return message + title

"""Rates from simulations with their binomial (Wilson) interval, for the statistical
validation suite.

Every rate a validation test asserts on comes with a 95% Wilson interval (``stats.wilson_interval``,
itself checked against scipy in tests/test_stats.py), and the assertion is on the interval's bound:
"at most" claims need the upper bound under the target, "at least" claims the lower bound over it,
unless a test says it only checks that the simulation is *consistent* with a target.
"""

from __future__ import annotations

import attrs
import numpy as np

from profiler_core.stats import wilson_interval


@attrs.frozen
class Rate:
    """A share of simulated runs and its 95% Wilson interval."""

    hits: int
    n: int
    lower: float
    upper: float

    @property
    def rate(self) -> float:
        """The observed share."""
        return self.hits / self.n

    def __str__(self) -> str:
        return f"{self.rate:.1%} [{self.lower:.1%}, {self.upper:.1%}] of {self.n}"


def rate(events: np.ndarray) -> Rate:
    """The share of True in ``events`` with its 95% Wilson interval."""
    events = np.asarray(events, dtype=bool)
    found = wilson_interval(int(events.sum()), int(events.size))
    return Rate(
        hits=int(events.sum()), n=int(events.size), lower=found.lower, upper=found.upper
    )

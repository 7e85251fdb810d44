"""Success rates over repetitions: Wilson intervals, the interval of a difference of
rates, pass@k and pass^k."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from statistics import NormalDist

from ._common import DEFAULT_CONFIDENCE, check_confidence
from .types import RateInterval, StatsInputError


def _check_counts(n: int, c: int, n_name: str, c_name: str) -> tuple[int, int]:
    """Validate 0 <= c <= n for integer counts."""
    for name, value in ((n_name, n), (c_name, c)):
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Integral)
            or value < 0
        ):
            raise StatsInputError(
                f"{name}: expected a non-negative integer, got {value!r}"
            )
    if c > n:
        raise StatsInputError(f"{c_name} ({c}) cannot exceed {n_name} ({n})")
    return int(n), int(c)


def wilson_interval(
    successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE
) -> RateInterval:
    """Wilson score interval for a success rate ``successes / n``."""
    n, successes = _check_counts(n, successes, "n", "successes")
    confidence = check_confidence(confidence)
    if n == 0:
        # No trials: the rate is unknown and any rate in [0, 1] is consistent.
        return RateInterval(
            successes=0, trials=0, rate=math.nan, lower=0.0, upper=1.0,
            confidence_level=confidence, reason="no trials",
        )  # fmt: skip
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    rate = successes / n
    z2n = z * z / n
    centre = (rate + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(rate * (1.0 - rate) / n + z2n / (4.0 * n))
    # At 0 or n successes the exact bound is the rate itself; rounding could
    # otherwise leave it a hair inside and exclude the observed rate.
    lower = 0.0 if successes == 0 else min(rate, max(0.0, centre - half))
    upper = 1.0 if successes == n else max(rate, min(1.0, centre + half))
    return RateInterval(
        successes=successes,
        trials=n,
        rate=rate,
        lower=lower,
        upper=upper,
        confidence_level=confidence,
    )


def rate_difference_interval(
    successes_a: int,
    n_a: int,
    successes_b: int,
    n_b: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float, float]:
    """(difference, lower, upper) of the rate of A minus the rate of B, by Newcombe's
    hybrid score interval.

    Built from the two Wilson intervals (Newcombe 1998, method 10): it stays inside
    [-1, 1] and behaves at rates of 0 and 1, where the Wald interval collapses.
    nan when either group has no trials.
    """
    a = wilson_interval(successes_a, n_a, confidence)
    b = wilson_interval(successes_b, n_b, confidence)
    if n_a == 0 or n_b == 0:
        return math.nan, math.nan, math.nan
    diff = a.rate - b.rate
    lower = diff - math.sqrt((a.rate - a.lower) ** 2 + (b.upper - b.rate) ** 2)
    upper = diff + math.sqrt((a.upper - a.rate) ** 2 + (b.rate - b.lower) ** 2)
    return diff, lower, upper


def _check_k(n: int, k: int) -> int:
    """Validate 1 <= k <= n."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise StatsInputError(f"k: expected an integer >= 1, got {k!r}")
    if k > n:
        raise StatsInputError(
            f"k ({k}) cannot exceed the number of repetitions n ({n})"
        )
    return int(k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: chance that at least one of k of the n runs (c passed) passes."""
    n, c = _check_counts(n, c, "n", "c")
    k = _check_k(n, k)
    # Exact integer arithmetic; only the final division rounds.
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: chance that all of k runs drawn from the n (c passed) pass."""
    n, c = _check_counts(n, c, "n", "c")
    k = _check_k(n, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))

"""Result types of the statistics engine: frozen, slotted, keyword-only values."""

from __future__ import annotations

from typing import Literal

import attrs

#: Cohen's d magnitude labels; "undefined" when d itself is undefined (nan).
Magnitude = Literal["negligible", "small", "medium", "large", "undefined"]

#: Direction of a permutation test, as in the original.
Alternative = Literal["two-sided", "less", "greater"]


class StatsInputError(ValueError):
    """Input that no statistic can be computed from (e.g. NaN values, k > n)."""


@attrs.frozen(kw_only=True)
class DescriptiveStats:
    """Summary of one sample; fields as in the original, nan where undefined."""

    count: int
    mean: float
    median: float
    p90: float
    p95: float
    min: float
    max: float
    iqr: float
    cv: float
    stddev: float


@attrs.frozen(kw_only=True)
class ConfidenceInterval:
    """A percentile-bootstrap interval around a point estimate."""

    lower: float
    upper: float
    confidence_level: float
    resamples: int
    point_estimate: float
    #: Why the interval is undefined, infinite or degenerate; None when it is ordinary.
    reason: str | None = None


@attrs.frozen(kw_only=True)
class EffectSize:
    """Cohen's d with its conventional magnitude label."""

    d: float
    magnitude: Magnitude
    reason: str | None = None


@attrs.frozen(kw_only=True)
class PermutationResult:
    """Outcome of a permutation (or sign-flip) test on the difference of means."""

    p_value: float
    observed_difference: float
    #: Random permutations drawn, or every arrangement when ``exact``.
    permutations: int
    exact: bool = False
    reason: str | None = None


@attrs.frozen(kw_only=True)
class ComparisonResult:
    """Everything one A-versus-B comparison of a metric reports."""

    mode_a: str
    mode_b: str
    metric: str
    #: (1 - median(A) / median(B)) * 100; positive means A is lower.
    reduction_pct: float
    #: Bootstrap interval of ``reduction_pct`` at ``confidence_level`` (0.95 by default).
    ci95: tuple[float, float]
    effect_size: float
    effect_magnitude: Magnitude
    p_value: float
    #: Holm-adjusted across the metrics of one comparison; equals ``p_value`` until adjusted.
    p_value_adjusted: float
    paired: bool
    n_a: int
    n_b: int
    confidence_level: float
    reason: str | None = None


@attrs.frozen(kw_only=True)
class RateInterval:
    """A success rate with its Wilson score interval."""

    successes: int
    trials: int
    rate: float
    lower: float
    upper: float
    confidence_level: float
    reason: str | None = None

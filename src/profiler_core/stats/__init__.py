"""Statistics engine: descriptive stats (of one sample or many groups), bootstrap CIs,
effect sizes, permutation tests, rates.

numpy only, vectorised, seeded with ``numpy.random.Generator(PCG64(seed))``
(seed 42 by default): identical input and seed give identical results. See
docs/statistics.md for definitions and the degenerate-input policy.
"""

from __future__ import annotations

from ._common import (
    DEFAULT_CONFIDENCE,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)
from .bootstrap import bootstrap_ci, bootstrap_reduction_ci
from .comparison import (
    cohens_d,
    compare_groups,
    holm_adjust,
    holm_adjust_comparisons,
    magnitude_of,
)
from .descriptive import compute_descriptive
from .grouped import grouped_descriptive
from .permutation import permutation_test, permutation_test_normal
from .rates import pass_at_k, pass_hat_k, rate_difference_interval, wilson_interval
from .types import (
    Alternative,
    ComparisonResult,
    ConfidenceInterval,
    DescriptiveStats,
    EffectSize,
    Magnitude,
    PermutationResult,
    RateInterval,
    StatsInputError,
)

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Alternative",
    "ComparisonResult",
    "ConfidenceInterval",
    "DescriptiveStats",
    "EffectSize",
    "Magnitude",
    "PermutationResult",
    "RateInterval",
    "StatsInputError",
    "bootstrap_ci",
    "bootstrap_reduction_ci",
    "cohens_d",
    "compare_groups",
    "compute_descriptive",
    "grouped_descriptive",
    "holm_adjust",
    "holm_adjust_comparisons",
    "magnitude_of",
    "pass_at_k",
    "pass_hat_k",
    "permutation_test",
    "permutation_test_normal",
    "rate_difference_interval",
    "wilson_interval",
]

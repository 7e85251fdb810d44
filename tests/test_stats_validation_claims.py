"""Claims of docs/statistics.md checked against scipy, where they hold and where they
stop holding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import permutation_test as scipy_permutation_test
from scipy.stats import t as student_t

from profiler_core.stats import permutation_test
from profiler_core.stats.stratified import t_cdf, t_quantile


def _scipy_p(a, b) -> float:
    return float(scipy_permutation_test((a, b), lambda x, y: np.mean(x) - np.mean(y), permutation_type="independent",
                                        n_resamples=np.inf, alternative="two-sided").pvalue)  # fmt: skip


def test_the_exact_permutation_p_matches_scipy_for_equal_group_sizes_only():
    """Equal sizes: the same p as scipy. Unequal: scipy doubles the smaller one-sided p,
    we count |t| >= |t0|."""
    rng = np.random.default_rng(4180)
    for _ in range(5):
        a, b = rng.normal(0, 1, 5), rng.normal(0.8, 1, 5)
        assert permutation_test(a, b).p_value == pytest.approx(
            _scipy_p(a, b), rel=1e-12
        )
    a, b = [1.0, 2.0, 3.0, 10.0], [2.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    ours, theirs = permutation_test(a, b).p_value, _scipy_p(a, b)
    assert ours == pytest.approx(0.32857, abs=1e-4) and theirs == pytest.approx(
        0.36190, abs=1e-4
    )


@pytest.mark.parametrize("df", [5, 10, 45, 200])
def test_the_gates_t_quantile_and_distribution_agree_with_scipy(df):
    for p in (0.9, 0.95, 0.975, 0.995):
        assert t_quantile(p, df) == pytest.approx(
            student_t.ppf(p, df), rel=6e-3 if df < 10 else 5e-4
        )
    for x in (-2.5, 0.3, 1.7):
        assert t_cdf(x, df) == pytest.approx(student_t.cdf(x, df), abs=1e-3)

"""Property tests (hypothesis) and scipy oracles for profiler_core.stats.

scipy is a test-only oracle: the engine itself runs on numpy alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from profiler_core.stats import (
    bootstrap_ci,
    bootstrap_reduction_ci,
    holm_adjust,
    pass_at_k,
    pass_hat_k,
    permutation_test,
    wilson_interval,
)

scipy_stats = pytest.importorskip("scipy.stats")

# Few resamples keep each example cheap; the assertions hold for any count.
FAST = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
positive = st.floats(
    min_value=0.01, max_value=1e6, allow_nan=False, allow_infinity=False
)
samples = st.lists(finite, min_size=1, max_size=40)
# scipy's permutation_test needs two or more observations per sample.
small_ints = st.lists(st.integers(min_value=-5, max_value=5), min_size=2, max_size=6)


def _median_reduction(x, y, axis=-1):
    return (1 - np.median(x, axis=axis) / np.median(y, axis=axis)) * 100


def _abs_mean_difference(x, y, axis=-1):
    return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def _abs_mean_of_differences(x, y, axis=-1):
    return np.abs(np.mean(x - y, axis=axis))


# ------------------------------------------------------------- scipy oracles


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_bootstrap_ci_agrees_with_scipy(seed, statistic):
    values = np.random.default_rng(seed).lognormal(3, 0.7, size=45)
    ours = bootstrap_ci(values, resamples=8000, statistic=statistic, seed=seed)
    ref = scipy_stats.bootstrap(
        (values,), getattr(np, statistic), method="percentile", n_resamples=8000,
        rng=np.random.default_rng(seed + 100),
    ).confidence_interval  # fmt: skip
    # Monte-Carlo error of a 2.5% quantile of 8,000 draws (and, for the median,
    # the gap between neighbouring order statistics) is well under 15% of the width.
    width = ref.high - ref.low
    assert ours.lower == pytest.approx(ref.low, abs=0.15 * width)
    assert ours.upper == pytest.approx(ref.high, abs=0.15 * width)


@pytest.mark.parametrize("paired", [False, True])
def test_reduction_ci_agrees_with_scipy(paired):
    rng = np.random.default_rng(9)
    b = rng.lognormal(4, 0.5, size=50)
    a = (
        b * rng.normal(0.85, 0.1, size=50)
        if paired
        else rng.lognormal(3.85, 0.5, size=50)
    )
    ours = bootstrap_reduction_ci(a, b, paired=paired, resamples=8000)
    ref = scipy_stats.bootstrap(
        (a, b), _median_reduction, method="percentile", paired=paired,
        n_resamples=8000, vectorized=True, rng=np.random.default_rng(1),
    ).confidence_interval  # fmt: skip
    assert ours.point_estimate == pytest.approx(_median_reduction(a, b))
    width = ref.high - ref.low
    assert ours.lower == pytest.approx(ref.low, abs=0.15 * width)
    assert ours.upper == pytest.approx(ref.high, abs=0.15 * width)


@FAST
@given(a=small_ints, b=small_ints)
def test_exact_permutation_test_equals_scipy(a, b):
    # Integer data has many tied null statistics: both must count them alike.
    ours = permutation_test(a, b)
    assert ours.exact
    ref = scipy_stats.permutation_test(
        (np.array(a, float), np.array(b, float)), _abs_mean_difference,
        alternative="greater", n_resamples=np.inf, vectorized=True,
    )  # fmt: skip
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@FAST
@given(
    pairs=st.lists(
        st.tuples(st.integers(-5, 5), st.integers(-5, 5)), min_size=2, max_size=10
    )
)
def test_exact_sign_flip_test_equals_scipy(pairs):
    a, b = (np.array(column, float) for column in zip(*pairs, strict=True))
    ours = permutation_test(a, b, paired=True)
    assert ours.exact
    ref = scipy_stats.permutation_test(
        (a, b), _abs_mean_of_differences, permutation_type="samples",
        alternative="greater", n_resamples=np.inf, vectorized=True,
    )  # fmt: skip
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_random_permutation_test_agrees_with_scipy(paired, alternative):
    rng = np.random.default_rng(11)
    a = rng.normal(0, 1, size=30)
    b = (a if paired else rng.normal(0, 1, size=30)) + rng.normal(0.45, 1, size=30)
    ours = permutation_test(a, b, paired=paired, alternative=alternative)
    if alternative == "two-sided":
        statistic = _abs_mean_of_differences if paired else _abs_mean_difference
        scipy_alternative = "greater"
    else:
        statistic = (
            (lambda x, y, axis=-1: np.mean(x - y, axis=axis))
            if paired
            else (lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis))
        )
        scipy_alternative = alternative
    ref = scipy_stats.permutation_test(
        (a, b), statistic, permutation_type="samples" if paired else "independent",
        alternative=scipy_alternative, n_resamples=10_000, vectorized=True,
        rng=np.random.default_rng(2),
    )  # fmt: skip
    # Two estimates of p from 10,000 draws each: SE of the difference <= 0.0071.
    assert ours.p_value == pytest.approx(ref.pvalue, abs=0.03)


@FAST
@given(n=st.integers(1, 300), data=st.data())
def test_wilson_matches_scipy_and_contains_the_rate(n, data):
    successes = data.draw(st.integers(0, n))
    confidence = data.draw(st.sampled_from([0.8, 0.9, 0.95, 0.99]))
    interval = wilson_interval(successes, n, confidence)
    assert 0.0 <= interval.lower <= interval.rate <= interval.upper <= 1.0
    assert interval.rate == successes / n
    ref = scipy_stats.binomtest(successes, n).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    assert interval.lower == pytest.approx(ref.low, abs=1e-12)
    assert interval.upper == pytest.approx(ref.high, abs=1e-12)


# ------------------------------------------------------------------ properties


@FAST
@given(values=samples, confidence=st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_median_ci_contains_the_point_estimate(values, confidence):
    ci = bootstrap_ci(values, resamples=300, confidence=confidence)
    assert ci.lower <= ci.point_estimate <= ci.upper
    assert min(values) <= ci.lower and ci.upper <= max(values)


@FAST
@given(values=samples, seed=st.integers(0, 2**32 - 1))
def test_same_input_and_seed_give_the_same_result(values, seed):
    assert bootstrap_ci(values, resamples=100, seed=seed) == bootstrap_ci(
        values, resamples=100, seed=seed
    )
    assert permutation_test(values, values[::-1], permutations=100, seed=seed) == (
        permutation_test(values, values[::-1], permutations=100, seed=seed)
    )


@FAST
@given(a=samples, b=samples, paired=st.booleans())
def test_p_value_is_in_zero_one(a, b, paired):
    if paired:
        b = (b * len(a))[: len(a)]
    result = permutation_test(a, b, paired=paired, permutations=200)
    assert 0.0 < result.p_value <= 1.0


@FAST
@given(
    a=st.lists(positive, min_size=1, max_size=30),
    b=st.lists(positive, min_size=1, max_size=30),
)
def test_reduction_sign_follows_the_medians(a, b):
    ci = bootstrap_reduction_ci(a, b, resamples=100)
    med_a, med_b = np.median(a), np.median(b)
    assert np.sign(ci.point_estimate) == np.sign(med_b - med_a)
    assert ci.lower <= ci.upper


@FAST
@given(
    cells=st.lists(st.floats(0, 1000, allow_nan=False), min_size=8, max_size=30),
    shift=st.floats(0.5, 2.0),
    noise=st.lists(st.floats(-0.05, 0.05, allow_nan=False), min_size=30, max_size=30),
)
def test_paired_test_is_at_least_as_powerful_on_correlated_cells(cells, shift, noise):
    # Cells vary far more than the shift, but each B cell tracks its A cell.
    a = np.array(cells)
    assume(a.std() > 20 * shift)
    b = a + shift + np.array(noise[: a.size])
    paired = permutation_test(a, b, paired=True, permutations=500)
    unpaired = permutation_test(a, b, permutations=500)
    assert paired.p_value <= unpaired.p_value


def _holm_reference(p):
    """Textbook Holm: step down through the sorted p-values."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@FAST
@given(st.lists(st.floats(0, 1, allow_nan=False), max_size=25))
def test_holm_is_monotone_bounded_and_textbook(p):
    adjusted = holm_adjust(p)
    assert adjusted == pytest.approx(_holm_reference(p), abs=1e-12)
    for raw, adj in zip(p, adjusted, strict=True):
        assert raw <= adj <= 1.0
    for i, j in itertools.product(range(len(p)), repeat=2):
        if p[i] <= p[j]:
            assert adjusted[i] <= adjusted[j]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), data=st.data())
def test_pass_at_k_and_pass_hat_k_by_enumeration(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    any_pass = sum(any(s) for s in subsets) / len(subsets)
    all_pass = sum(all(s) for s in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(any_pass, abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(all_pass, abs=1e-12)
    assert pass_hat_k(n, c, k) <= c / n <= pass_at_k(n, c, k) or c in (0, n)


@FAST
@given(values=st.lists(positive, min_size=2, max_size=30))
def test_zero_baseline_is_never_a_fake_zero(values):
    zeros = [0.0] * (len(values) + 1)
    ci = bootstrap_reduction_ci(values, zeros, resamples=50)
    assert math.isnan(ci.point_estimate) and ci.reason

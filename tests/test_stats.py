"""Unit and parity tests of profiler_core.stats (parity figures: anchor-parity/README.md)."""

from __future__ import annotations

import ast
import inspect
import json
import math
from pathlib import Path

import attrs
import numpy as np
import pytest

import profiler_core.stats as stats
from profiler_core.stats import (
    StatsInputError,
    bootstrap_ci,
    bootstrap_reduction_ci,
    cohens_d,
    compare_groups,
    compute_descriptive,
    holm_adjust,
    holm_adjust_comparisons,
    magnitude_of,
    pass_at_k,
    pass_hat_k,
    permutation_test,
    wilson_interval,
)
from profiler_core.stats._common import CHUNK_BYTES, chunk_rows, make_rng
from profiler_core.stats.bootstrap import _resampled_medians
from profiler_core.stats.permutation import _random_subset_masks

STATS_DIR = Path(stats.__file__).parent

# values[i] = (i * 7919 % 1000) / 10, as documented for stats-values.json.
PARITY_VALUES = np.array([(i * 7919 % 1000) / 10 for i in range(1000)])
PARITY_A = PARITY_VALUES[:500]
PARITY_B = PARITY_VALUES[500:] + 3


def _parity_file() -> Path:
    """stats-values.json of the original's parity data (tests/fixtures/anchor-parity)."""
    return (
        Path(__file__).resolve().parent
        / "fixtures"
        / "anchor-parity"
        / "stats-values.json"
    )


# --------------------------------------------------------------------- parity


def test_parity_values_match_the_file():
    path = _parity_file()
    assert json.loads(path.read_text()) == PARITY_VALUES.tolist()


def test_descriptive_parity():
    d = compute_descriptive(PARITY_VALUES)
    assert d.count == 1000
    assert d.mean == 49.95
    assert d.median == 49.95
    assert d.p95 == 94.905
    assert d.min == 0.0
    assert d.max == 99.9
    assert d.cv == 0.5782170892807795
    assert d.stddev == 28.88194360957494
    # The README prints these rounded: the original's own arithmetic (and
    # numpy's) gives 89.91000000000001 and 49.95000000000001.
    assert d.p90 == pytest.approx(89.91, rel=1e-14)
    assert d.iqr == pytest.approx(49.95, rel=1e-14)


def test_bootstrap_ci_parity():
    ci = bootstrap_ci(PARITY_VALUES)
    assert ci.point_estimate == 49.95
    assert (ci.resamples, ci.confidence_level, ci.reason) == (10_000, 0.95, None)
    # Different PRNG than the original: bounds agree within Monte-Carlo error
    # (the resampled medians move in steps of 0.05 here).
    assert ci.lower == pytest.approx(46.85, abs=0.3)
    assert ci.upper == pytest.approx(53.05, abs=0.3)


def test_reduction_ci_parity():
    ci = bootstrap_reduction_ci(PARITY_A, PARITY_B)
    assert ci.point_estimate == pytest.approx(4.739336492891, abs=1e-9)
    assert ci.lower == pytest.approx(-7.98, abs=1.0)
    assert ci.upper == pytest.approx(15.28, abs=1.0)


def test_permutation_parity():
    result = permutation_test(PARITY_A, PARITY_B)
    assert result.observed_difference == pytest.approx(-2.8, abs=1e-12)
    assert result.permutations == 10_000
    assert not result.exact
    # Monte-Carlo standard error of p near 0.12 with 10,000 draws is 0.0033.
    assert result.p_value == pytest.approx(0.1245, abs=0.015)


def test_cohens_d_parity():
    effect = cohens_d(PARITY_A, PARITY_B)
    assert effect.d == -0.09689843167450556
    assert effect.magnitude == "negligible"


def test_compare_groups_parity_combines_the_parts():
    result = compare_groups(
        PARITY_A, PARITY_B, mode_a="ghx", mode_b="direct", metric="tokens"
    )
    ci = bootstrap_reduction_ci(PARITY_A, PARITY_B)
    assert (result.mode_a, result.mode_b, result.metric) == ("ghx", "direct", "tokens")
    assert result.reduction_pct == ci.point_estimate
    assert result.ci95 == (ci.lower, ci.upper)
    assert result.effect_size == -0.09689843167450556
    assert result.effect_magnitude == "negligible"
    assert result.p_value == permutation_test(PARITY_A, PARITY_B).p_value
    assert result.p_value_adjusted == result.p_value
    assert (result.paired, result.n_a, result.n_b) == (False, 500, 500)
    assert result.reason is None


# ---------------------------------------------------------------- descriptive


def test_descriptive_matches_numpy_on_random_data():
    values = make_rng(1).lognormal(3, 1, size=257)
    d = compute_descriptive(values.tolist())
    assert d.mean == pytest.approx(values.mean())
    assert d.median == pytest.approx(np.percentile(values, 50))
    assert d.p90 == pytest.approx(np.percentile(values, 90))
    assert d.p95 == pytest.approx(np.percentile(values, 95))
    assert d.iqr == pytest.approx(np.subtract(*np.percentile(values, [75, 25])))
    assert d.stddev == pytest.approx(values.std(ddof=1))
    assert d.cv == pytest.approx(values.std(ddof=1) / values.mean())


def test_descriptive_empty_is_nan_not_zero():
    d = compute_descriptive([])
    assert d.count == 0
    for field in ("mean", "median", "p90", "p95", "min", "max", "iqr", "cv", "stddev"):
        assert math.isnan(getattr(d, field)), field


def test_descriptive_one_value():
    d = compute_descriptive([7.5])
    assert (d.count, d.mean, d.median, d.p90, d.p95, d.min, d.max, d.iqr) == (
        1, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 0.0,
    )  # fmt: skip
    # A sample standard deviation needs two values.
    assert math.isnan(d.stddev) and math.isnan(d.cv)


def test_descriptive_zero_variance_and_zero_mean():
    assert compute_descriptive([3, 3, 3]).stddev == 0.0
    assert compute_descriptive([3, 3, 3]).cv == 0.0
    assert math.isnan(compute_descriptive([-1, 1]).cv)
    assert math.isnan(compute_descriptive([0, 0]).cv)


@pytest.mark.parametrize(
    "bad", [[1.0, math.nan], [math.inf], [[1, 2], [3, 4]], ["a", "b"], [None]]
)
def test_invalid_values_raise(bad):
    with pytest.raises(StatsInputError):
        compute_descriptive(bad)


def test_stats_input_error_is_a_value_error():
    assert issubclass(StatsInputError, ValueError)


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_is_deterministic_and_seeded():
    values = make_rng(2).normal(size=40)
    assert bootstrap_ci(values) == bootstrap_ci(values, seed=42)
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)
    # The resampled median is discrete, so compare seeds on the mean.
    assert bootstrap_ci(values, statistic="mean", seed=7) != bootstrap_ci(
        values, statistic="mean", seed=8
    )
    assert bootstrap_reduction_ci(values + 5, values + 6) == bootstrap_reduction_ci(
        values + 5, values + 6
    )


def test_bootstrap_degenerate_inputs():
    empty = bootstrap_ci([])
    assert math.isnan(empty.lower) and math.isnan(empty.upper)
    assert math.isnan(empty.point_estimate) and "empty" in empty.reason
    one = bootstrap_ci([42])
    assert (one.lower, one.point_estimate, one.upper) == (42, 42, 42)
    assert "one value" in one.reason
    constant = bootstrap_ci([3, 3, 3, 3])
    assert (constant.lower, constant.point_estimate, constant.upper) == (3, 3, 3)
    assert constant.reason is None


def test_bootstrap_other_statistics():
    values = [1.0, 2.0, 3.0, 10.0]
    assert bootstrap_ci(values, statistic="mean", resamples=200).point_estimate == 4.0
    top = bootstrap_ci(values, statistic=np.max, resamples=200, confidence=0.8)
    assert (top.point_estimate, top.confidence_level, top.resamples) == (10.0, 0.8, 200)
    assert 1.0 <= top.lower <= top.upper == 10.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"resamples": 0},
        {"resamples": 2.5},
        {"resamples": True},
        {"confidence": 1.0},
        {"confidence": 0},
        {"confidence": "0.9"},
        {"statistic": "mode"},
        {"seed": None},
        {"seed": -1},
    ],
)
def test_bootstrap_rejects_bad_options(kwargs):
    with pytest.raises(StatsInputError):
        bootstrap_ci([1, 2, 3], **kwargs)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_resampled_medians_follow_the_exact_bootstrap_distribution(n):
    # The median path samples order statistics instead of whole resamples;
    # compare its frequencies with the enumerated distribution of all n**n resamples.
    values = np.array([0.0, 0.3, 1.1, 5.0, 9.0][:n])
    grids = np.stack(np.meshgrid(*[np.arange(n)] * n, indexing="ij"), axis=-1).reshape(
        -1, n
    )
    exact_support, exact_counts = np.unique(
        np.median(values[grids], axis=1), return_counts=True
    )
    draws = 40_000
    sampled = _resampled_medians(values, draws, make_rng(3))
    support, counts = np.unique(sampled, return_counts=True)
    assert set(support) <= set(exact_support)
    observed = dict(zip(support, counts, strict=True))
    for value, count in zip(exact_support, exact_counts, strict=True):
        p = count / n**n
        z = (observed.get(value, 0) / draws - p) / math.sqrt(
            p * (1 - p) / draws + 1e-12
        )
        assert abs(z) < 5, (value, z)


def test_median_path_agrees_with_resampling_whole_samples():
    values = make_rng(4).exponential(10, size=101)
    fast = bootstrap_ci(values, resamples=20_000)
    slow = bootstrap_ci(values, resamples=20_000, statistic=np.median)
    width = fast.upper - fast.lower
    assert fast.point_estimate == slow.point_estimate
    assert fast.lower == pytest.approx(slow.lower, abs=0.1 * width)
    assert fast.upper == pytest.approx(slow.upper, abs=0.1 * width)


def test_resampling_is_chunked_within_the_memory_ceiling():
    assert CHUNK_BYTES <= 64 * 2**20
    for row_bytes in (1, 1000, 10**6, 10**9):
        assert chunk_rows(row_bytes) >= 1
        assert chunk_rows(row_bytes) * row_bytes <= max(CHUNK_BYTES, row_bytes)
    # Beyond int16 indices and beyond one chunk: still runs and stays in range.
    values = np.arange(40_000, dtype=float)
    ci = bootstrap_ci(values, statistic="mean", resamples=60)
    assert 0 < ci.lower <= ci.point_estimate <= ci.upper < 40_000


def test_reduction_is_positive_when_a_is_lower():
    ci = bootstrap_reduction_ci(
        [10, 12, 11, 13, 10], [20, 22, 21, 23, 20], resamples=1000
    )
    assert 30 < ci.point_estimate < 70
    assert ci.lower <= ci.point_estimate <= ci.upper


def test_reduction_with_zero_baseline_median_is_undefined():
    # The original returns 0 here; 0 would read as "no change".
    ci = bootstrap_reduction_ci([1, 2], [0, 0], resamples=20)
    assert (
        math.isnan(ci.point_estimate) and math.isnan(ci.lower) and math.isnan(ci.upper)
    )
    assert "baseline" in ci.reason


def test_reduction_resamples_with_zero_baseline_are_infinite():
    ci = bootstrap_reduction_ci([1, 1, 1, 1, 1], [0, 0, 1, 1, 1], resamples=2000)
    assert ci.point_estimate == 0.0
    assert ci.lower == -math.inf
    assert ci.upper == 0.0
    assert "baseline median was 0 in" in ci.reason


def test_reduction_empty_and_single_value_groups():
    for a, b in (([], [1, 2]), ([1, 2], [])):
        ci = bootstrap_reduction_ci(a, b)
        assert math.isnan(ci.point_estimate) and "empty" in ci.reason
    ci = bootstrap_reduction_ci([5], [10, 11, 9], resamples=500)
    assert ci.point_estimate == 50.0
    assert "one value" in ci.reason


def test_paired_reduction_needs_aligned_cells():
    with pytest.raises(StatsInputError, match="aligned"):
        bootstrap_reduction_ci([1, 2, 3], [1, 2], paired=True)


def test_paired_reduction_is_narrower_on_correlated_cells():
    rng = make_rng(5)
    cell = rng.lognormal(5, 1, size=60)  # cells differ a lot from each other
    a = cell * 0.8 * rng.normal(1, 0.01, size=60)
    b = cell * rng.normal(1, 0.01, size=60)
    paired = bootstrap_reduction_ci(a, b, paired=True, resamples=4000)
    unpaired = bootstrap_reduction_ci(a, b, resamples=4000)
    assert paired.point_estimate == unpaired.point_estimate
    assert paired.upper - paired.lower < 0.5 * (unpaired.upper - unpaired.lower)
    assert paired.lower < 20 < paired.upper


# ------------------------------------------------------------------ cohen's d


@pytest.mark.parametrize(
    ("a", "b", "magnitude"),
    [
        ([1, 2, 3, 4, 5], [0.6, 1.6, 2.6, 3.6, 4.6], "small"),
        ([1, 2, 3, 4, 5], [0, 1, 2, 3, 4], "medium"),
        ([10, 11, 12, 13, 14], [1, 2, 3, 4, 5], "large"),
        ([5, 5, 5, 5, 5], [5, 5, 5, 5, 5], "negligible"),
    ],
)
def test_cohens_d_magnitudes_from_the_original(a, b, magnitude):
    assert cohens_d(a, b).magnitude == magnitude


def test_cohens_d_formula():
    a, b = np.array([1.0, 4, 6, 9]), np.array([2.0, 3, 3])
    pooled = math.sqrt((3 * a.var(ddof=1) + 2 * b.var(ddof=1)) / 5)
    assert cohens_d(a, b).d == pytest.approx((a.mean() - b.mean()) / pooled)


def test_cohens_d_degenerate_inputs():
    for a, b in (([], [1, 2]), ([1, 2], []), ([1], [2])):
        effect = cohens_d(a, b)
        assert (
            math.isnan(effect.d) and effect.magnitude == "undefined" and effect.reason
        )
    same = cohens_d([3, 3, 3], [3, 3, 3])
    assert (same.d, same.magnitude) == (0.0, "negligible")
    apart = cohens_d([3, 3, 3], [5, 5])
    assert (apart.d, apart.magnitude) == (-math.inf, "large")
    assert "zero variance" in apart.reason
    assert cohens_d([1], [2, 4]).d == pytest.approx(-2 / math.sqrt(2))


@pytest.mark.parametrize(
    ("d", "label"),
    [
        (0.0, "negligible"),
        (-0.1999, "negligible"),
        (0.2, "small"),
        (-0.4999, "small"),
        (0.5, "medium"),
        (0.7999, "medium"),
        (0.8, "large"),
        (-math.inf, "large"),
        (math.nan, "undefined"),
    ],
)
def test_magnitude_thresholds(d, label):
    assert magnitude_of(d) == label


# ---------------------------------------------------------- permutation test


def test_permutation_p_is_never_zero():
    a = [100.0 + i for i in range(20)]
    b = [
        1.0 + i for i in range(20)
    ]  # C(40, 20) splits: drawn at random, none as extreme
    result = permutation_test(a, b)
    assert not result.exact
    assert result.p_value == 1 / 10_001
    assert result.observed_difference == 99.0


def test_permutation_identical_groups():
    assert permutation_test([5] * 5, [5] * 5).p_value == 1.0
    assert permutation_test([1, 2, 3, 4], [1, 2, 3, 4], paired=True).p_value == 1.0


def test_permutation_is_exact_when_arrangements_are_few():
    result = permutation_test([1, 2, 3], [4, 5, 6, 7])
    assert result.exact and result.permutations == math.comb(7, 3)
    # Only A = {1, 2, 3} (observed) and A = {5, 6, 7} are as extreme: 2 of C(7, 3).
    assert result.p_value == pytest.approx(2 / 35)
    paired = permutation_test([1, 2, 3], [2, 4, 6], paired=True)
    assert paired.exact and paired.permutations == 8
    assert paired.p_value == 2 / 8


@pytest.mark.parametrize("n", [6, 3000])
def test_random_subsets_are_uniform_with_exactly_m_members(n):
    # n = 3000 takes the 32-bit key path (16-bit keys would tie too often).
    rows, m = 30_000 if n == 6 else 400, 2
    mask = _random_subset_masks(make_rng(9), rows, n, m)
    assert (mask.sum(axis=1) == m).all()
    if n == 6:
        _, counts = np.unique(mask, axis=0, return_counts=True)
        expected = rows / math.comb(n, m)
        assert counts.size == math.comb(n, m)
        assert np.all(np.abs(counts - expected) < 5 * math.sqrt(expected))


def test_permutation_degenerate_inputs():
    for a, b in (([], [1]), ([1], [])):
        result = permutation_test(a, b, permutations=5)
        assert math.isnan(result.p_value) and "empty" in result.reason
    zero = permutation_test([1], [2], permutations=0)
    assert (zero.p_value, zero.permutations) == (1.0, 0)
    assert permutation_test([1], [2]).p_value == 1.0


@pytest.mark.parametrize(
    ("alternative", "a", "b", "small"),
    [("less", [1, 2, 3], [7, 8, 9], True), ("greater", [1, 2, 3], [7, 8, 9], False)],
)
def test_permutation_alternatives(alternative, a, b, small):
    result = permutation_test(a, b, alternative=alternative)
    assert (result.p_value < 0.1) is small
    assert 0 < result.p_value <= 1


def test_permutation_rejects_bad_options():
    with pytest.raises(StatsInputError):
        permutation_test([1, 2], [3, 4], alternative="both")
    with pytest.raises(StatsInputError):
        permutation_test([1, 2], [3, 4], permutations=-1)
    with pytest.raises(StatsInputError, match="aligned"):
        permutation_test([1, 2], [3], paired=True)


def test_permutation_is_deterministic():
    rng = make_rng(6)
    a, b = rng.normal(size=30), rng.normal(0.3, size=30)
    assert permutation_test(a, b, seed=77) == permutation_test(a, b, seed=77)
    assert permutation_test(a, b, paired=True) == permutation_test(a, b, paired=True)


# -------------------------------------------------------------- compare_groups


def test_compare_groups_paired():
    rng = make_rng(7)
    cell = rng.lognormal(4, 1, size=40)
    a, b = cell * 0.9, cell * rng.normal(1, 0.02, size=40)
    paired = compare_groups(a, b, paired=True, resamples=2000, permutations=2000)
    unpaired = compare_groups(a, b, resamples=2000, permutations=2000)
    assert paired.paired and not unpaired.paired
    assert paired.p_value < 0.01 < unpaired.p_value
    with pytest.raises(StatsInputError):
        compare_groups(a, b[:-1], paired=True)


def test_compare_groups_reports_why_values_are_undefined():
    result = compare_groups([], [1, 2, 3], metric="cost_total_usd")
    assert math.isnan(result.reduction_pct) and math.isnan(result.p_value)
    assert result.effect_magnitude == "undefined"
    assert "reduction: group a is empty" in result.reason
    assert "p-value: group a is empty" in result.reason
    zero = compare_groups([1, 2, 3], [0, 0, 1], resamples=100, permutations=100)
    assert math.isnan(zero.reduction_pct) and zero.ci95[0] != zero.ci95[0]
    assert not math.isnan(zero.p_value)
    assert "baseline (b) median is 0" in zero.reason


def test_holm_adjust_comparisons():
    rng = make_rng(8)
    results = [
        compare_groups(rng.normal(shift, size=12), rng.normal(size=12), metric=name,
                       resamples=200, permutations=500)
        for name, shift in (("tokens", 2.0), ("latency", 0.5), ("cost", 0.0))
    ]  # fmt: skip
    adjusted = holm_adjust_comparisons(results)
    assert [r.metric for r in adjusted] == ["tokens", "latency", "cost"]
    assert [r.p_value for r in adjusted] == [r.p_value for r in results]
    assert [r.p_value_adjusted for r in adjusted] == list(
        holm_adjust(r.p_value for r in results)
    )


# ----------------------------------------------------------------------- holm


def test_holm_known_values():
    # sorted: 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> 0.02, 0.03, 0.06, max(0.04, 0.06)
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx(
        (0.03, 0.06, 0.06, 0.02)
    )
    assert holm_adjust([0.5, 0.9]) == (1.0, 1.0)
    assert holm_adjust([]) == ()


def test_holm_leaves_untested_out():
    result = holm_adjust([0.01, math.nan, 0.04])
    assert result[0] == pytest.approx(0.02) and result[2] == pytest.approx(0.04)
    assert math.isnan(result[1])


@pytest.mark.parametrize("bad", [[1.5], [-0.1], [[0.1, 0.2]]])
def test_holm_rejects_bad_p_values(bad):
    with pytest.raises(StatsInputError):
        holm_adjust(bad)


# ---------------------------------------------------------------------- rates


def test_wilson_known_values():
    interval = wilson_interval(3, 10)
    assert interval.rate == 0.3
    assert interval.lower == pytest.approx(0.10779126740630104)
    assert interval.upper == pytest.approx(0.6032218525388545)
    assert wilson_interval(0, 10).lower == 0.0
    assert wilson_interval(10, 10).upper == 1.0


def test_wilson_degenerate_and_invalid():
    none = wilson_interval(0, 0)
    assert math.isnan(none.rate) and (none.lower, none.upper) == (0.0, 1.0)
    assert none.reason == "no trials"
    for successes, n in ((11, 10), (-1, 10), (1.5, 10), (True, 10)):
        with pytest.raises(StatsInputError):
            wilson_interval(successes, n)
    with pytest.raises(StatsInputError):
        wilson_interval(1, 10, confidence=1.5)


def test_pass_at_k_and_pass_hat_k_values():
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)
    assert pass_hat_k(10, 3, 2) == pytest.approx(3 / 45)
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 5, 1) == 1.0
    assert pass_hat_k(5, 2, 3) == 0.0 and pass_hat_k(5, 5, 5) == 1.0
    assert pass_at_k(5, 2, 5) == 1.0  # any 5 of 5 include a pass
    assert pass_at_k(4, 1, 1) == pass_hat_k(4, 1, 1) == 0.25


@pytest.mark.parametrize(
    ("n", "c", "k"), [(5, 2, 6), (5, 2, 0), (5, 6, 1), (-1, 0, 1), (5, 1, 1.0)]
)
def test_pass_at_k_rejects_invalid(n, c, k):
    with pytest.raises(StatsInputError):
        pass_at_k(n, c, k)
    with pytest.raises(StatsInputError):
        pass_hat_k(n, c, k)


# -------------------------------------------------------------------- hygiene


def test_result_types_are_frozen_slotted_keyword_only():
    for cls in (
        stats.DescriptiveStats,
        stats.ConfidenceInterval,
        stats.EffectSize,
        stats.PermutationResult,
        stats.ComparisonResult,
        stats.RateInterval,
    ):
        assert "__slots__" in cls.__dict__, cls
        assert all(field.kw_only for field in attrs.fields(cls)), cls
    ci = bootstrap_ci([1, 2, 3], resamples=10)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ci.lower = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        stats.EffectSize(0.1, "negligible")  # type: ignore[misc]


def test_results_hold_plain_python_numbers():
    result = compare_groups([1, 2, 3, 4], [2, 3, 4, 5], resamples=50, permutations=50)
    for field in attrs.fields(stats.ComparisonResult):
        value = getattr(result, field.name)
        values = value if isinstance(value, tuple) else (value,)
        assert all(type(v) in (str, bool, int, float, type(None)) for v in values), (
            field.name
        )


def test_public_api_is_documented():
    for name in stats.__all__:
        obj = getattr(stats, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name


def test_stats_imports_only_numpy_attrs_and_the_standard_library():
    allowed = {"__future__", "numpy", "attrs"}
    stdlib = {
        "collections", "fractions", "itertools", "math", "numbers", "statistics", "typing",
    }  # fmt: skip
    for path in STATS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 2 and node.module == "util.arrays":
                    continue  # numpy itself, imported so its idle threads sleep
                if node.level:  # relative: must stay inside the stats package
                    assert node.level == 1, f"{path.name} imports outside stats"
                    continue
                modules = [node.module or ""]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                root = module.split(".")[0]
                assert root in allowed | stdlib, f"{path.name} imports {module}"


def test_large_sample_compare_groups_is_its_parts():
    from profiler_core.stats import (
        bootstrap_reduction_ci,
        cohens_d,
        compare_groups,
        permutation_test_normal,
    )

    rng = np.random.default_rng(3)
    a, b = rng.gamma(2.0, 9.0, 300), rng.gamma(2.0, 10.0, 300)
    result = compare_groups(a, b, paired=True, method="large-sample")
    ci = bootstrap_reduction_ci(a, b, paired=False)
    assert (
        result.ci95 == (ci.lower, ci.upper)
        and result.reduction_pct == ci.point_estimate
    )
    # Dropping the pairing in the interval is said (issue 41), not silent.
    assert "resampled unpaired" in (result.reason or "")
    assert compare_groups(a, b, paired=False, method="large-sample").reason is None
    assert result.p_value == permutation_test_normal(a, b, paired=True).p_value
    assert result.effect_size == cohens_d(a, b).d and result.paired is True
    with pytest.raises(ValueError, match="method"):
        compare_groups(a, b, method="fast")


@pytest.mark.parametrize("balanced", [True, False])
def test_grouped_descriptive_is_numpy_per_group(balanced):
    from profiler_core.stats import grouped_descriptive

    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(5), 40) if balanced else rng.integers(0, 5, 200)
    values = rng.gamma(2.0, 10.0, groups.size)
    if not balanced:
        values[rng.integers(0, groups.size, 25)] = np.nan
    got = grouped_descriptive(values, groups, 6)  # group 5 is empty
    for g in range(5):
        sample = values[(groups == g) & ~np.isnan(values)]
        expected = dict(
            zip(
                ("p5", "p25", "median", "p75", "p90", "p95"),
                np.percentile(sample, [5, 25, 50, 75, 90, 95]),
            )
        )
        for name, value in expected.items():
            assert got[name][g] == value, (
                g,
                name,
            )  # numpy's own interpolation: exactly equal
        assert (
            got["count"][g] == sample.size
            and got["min"][g] == sample.min()
            and got["max"][g] == sample.max()
        )
        assert got["mean"][g] == pytest.approx(sample.mean(), rel=1e-12)
        assert got["stddev"][g] == pytest.approx(sample.std(ddof=1), rel=1e-12)
    assert got["count"][5] == 0 and all(
        math.isnan(got[k][5]) for k in ("mean", "median", "min", "stddev")
    )

"""The unpaired permutation test's sampler of label shuffles: exact, uniform, and
p-values that agree with scipy's.

The sampler draws each label split as independent random bits, then evens out
each row's count one uniformly chosen cell at a time (issue 30: the partition of
random 16-bit keys it replaced was most of the test's time). scipy is the oracle.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from profiler_core.stats import permutation_test
from profiler_core.stats.permutation import _random_subset_masks

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize(
    ("n", "m"),
    [
        (6, 3),  # P(True) = 1/2: packed random bits, n not a multiple of 8
        (8, 4),  # packed bits, whole bytes
        (7, 3),  # random bytes against a threshold
        (9, 2),  # mostly False: surplus and shortfall both fixed
        (5, 1),
    ],
)
def test_every_row_is_an_exact_uniform_m_subset(n, m):
    rows = 60_000
    mask = _random_subset_masks(np.random.default_rng(n * 100 + m), rows, n, m)
    assert mask.shape == (rows, n) and mask.dtype == bool
    assert (np.count_nonzero(mask, axis=1) == m).all()
    counts = Counter(map(bytes, np.packbits(mask, axis=1)))
    cells = math.comb(n, m)
    assert len(counts) == cells  # every subset occurs
    expected = rows / cells
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    # A uniform sampler gives chi2 ~ df; 6 standard deviations above it never happens by chance
    # (a bias of a few percent on one subset already does).
    df = cells - 1
    assert chi2 < df + 6 * math.sqrt(2 * df), (chi2, df)
    # Every position is chosen m/n of the time.
    assert np.allclose(mask.mean(axis=0), m / n, atol=0.01)


def test_many_rows_use_the_one_by_one_tail_and_stay_exact():
    # 10,000 rows of 1,001 cells: the slowest rows are finished one at a time.
    mask = _random_subset_masks(np.random.default_rng(3), 10_000, 1001, 500)
    assert (np.count_nonzero(mask, axis=1) == 500).all()
    assert np.allclose(mask.mean(axis=0), 500 / 1001, atol=0.03)


def _mean_difference(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _abs_mean_difference(x, y, axis=-1):
    return np.abs(_mean_difference(x, y, axis))


def _inputs(parity_dir):
    rng = np.random.default_rng(30)
    values = np.asarray(
        json.loads((parity_dir / "stats-values.json").read_text()), dtype=float
    )
    return {
        "parity 2 x 500": (values[:500], values[500:1000] + 3),
        "lognormal 40 vs 300": (
            rng.lognormal(0.2, 1.0, 40),
            rng.lognormal(0.0, 1.0, 300),
        ),
        "tied integers 60 vs 60": (
            rng.integers(0, 4, 60).astype(float),
            rng.integers(0, 5, 60).astype(float),
        ),
        "normal 250 vs 120": (rng.normal(0.15, 1, 250), rng.normal(0, 1, 120)),
        "3 vs 400": (rng.normal(1.0, 1, 3), rng.normal(0, 1, 400)),
    }


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_p_values_agree_with_scipy_within_monte_carlo_error(parity_dir, alternative):
    for name, (a, b) in _inputs(parity_dir).items():
        ours = permutation_test(a, b, permutations=10_000, alternative=alternative)
        assert not ours.exact and ours.permutations == 10_000
        if alternative == "two-sided":
            statistic, scipy_alternative = _abs_mean_difference, "greater"
        else:
            statistic, scipy_alternative = _mean_difference, alternative
        ref = scipy_stats.permutation_test(
            (a, b), statistic, permutation_type="independent", alternative=scipy_alternative,
            n_resamples=10_000, vectorized=True, rng=np.random.default_rng(7),
        )  # fmt: skip
        # Two estimates from 10,000 draws each: 5 standard errors of their difference.
        p = max(ref.pvalue, 1e-4)
        tolerance = 5 * math.sqrt(2 * p * (1 - p) / 10_000) + 2e-4
        assert ours.p_value == pytest.approx(ref.pvalue, abs=tolerance), (
            name,
            ours.p_value,
            ref.pvalue,
        )


def test_the_originals_parity_p_value_within_monte_carlo_error(parity_dir):
    # The TypeScript original's permutationTest on these values gave p = 0.1245
    # (anchor-parity/README.md).
    a, b = _inputs(parity_dir)["parity 2 x 500"]
    for seed in (42, 1, 2):
        p = permutation_test(a, b, permutations=10_000, seed=seed).p_value
        assert p == pytest.approx(
            0.1245, abs=5 * math.sqrt(2 * 0.1245 * 0.8755 / 10_000)
        ), (seed, p)


def test_same_seed_same_p_value_and_seeds_differ(parity_dir):
    a, b = _inputs(parity_dir)["lognormal 40 vs 300"]
    first = permutation_test(a, b, permutations=5_000, seed=5)
    assert permutation_test(a, b, permutations=5_000, seed=5) == first
    assert permutation_test(a, b, permutations=5_000, seed=6).p_value != first.p_value

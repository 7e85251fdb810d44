"""Permutation tests on the difference of means: label shuffling, or sign flips when paired."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ._common import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    as_sample,
    check_count,
    chunk_rows,
    make_rng,
)
from .types import Alternative, PermutationResult, StatsInputError

#: Null statistics this close to the observed one (relative to the data's
#: scale) count as ties: the two are summed in different orders, and a tie
#: must not be lost to rounding (scipy.stats.permutation_test does the same).
_TIE_TOLERANCE = 1e-9


def _count_extreme(null: np.ndarray, observed: float, alternative: str, tol: float) -> int:
    """Count null statistics at least as extreme as ``observed``."""
    if alternative == "two-sided":
        return int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))
    if alternative == "less":
        return int(np.count_nonzero(null <= observed + tol))
    return int(np.count_nonzero(null >= observed - tol))


def _row_sums(selection: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``selection @ values`` for a 0/1 matrix, without BLAS and without a float copy."""
    # einsum runs its own loop: a BLAS matvec measured 2-3x slower when
    # OpenBLAS threads compete with other processes for the cores.
    return np.einsum("ij,j->i", selection, values)


def _random_subset_masks(rng: np.random.Generator, rows: int, n: int, m: int) -> np.ndarray:
    """Return ``rows`` x ``n`` booleans with exactly ``m`` uniformly placed True per row."""
    # The m smallest of n i.i.d. random keys form a uniform m-subset. A row whose
    # m-th and (m+1)-th keys tie would select more than m, so it is drawn again
    # (which keeps it uniform). 16-bit keys are cheap to draw and to select on;
    # they tie in about n / 65536 of the rows, so larger n gets 32-bit keys.
    key = np.dtype("<u2") if n <= 2048 else np.dtype("<u4")
    mask = np.empty((rows, n), dtype=bool)
    todo = np.arange(rows)
    while todo.size:
        raw = rng.bytes(todo.size * n * key.itemsize)
        keys = np.frombuffer(raw, dtype=key).reshape(todo.size, n)
        threshold = np.partition(keys, m - 1, axis=1)[:, m - 1 : m]
        chosen = keys <= threshold
        ok = np.count_nonzero(chosen, axis=1) == m
        mask[todo[ok]] = chosen[ok]
        todo = todo[~ok]
    return mask


def _all_subset_sums(pooled: np.ndarray, m: int) -> np.ndarray:
    """Sum of every m-subset of ``pooled`` (for the exact test), chunk by chunk."""
    combos = itertools.combinations(range(pooled.size), m)
    sums = np.empty(math.comb(pooled.size, m))
    step = chunk_rows(m * 16)  # member indices + their values
    for start in range(0, sums.size, step):
        rows = min(step, sums.size - start)
        flat = itertools.chain.from_iterable(itertools.islice(combos, rows))
        members = np.fromiter(flat, dtype=np.intp, count=rows * m).reshape(rows, m)
        sums[start : start + rows] = pooled[members].sum(axis=1)
    return sums


def _unpaired_null(
    a: np.ndarray, b: np.ndarray, permutations: int, rng: np.random.Generator
) -> tuple[np.ndarray, float, bool]:
    """Null differences of means under label shuffling, the observed one, and exactness."""
    pooled = np.concatenate([a, b])
    n_a, n_b, total = a.size, b.size, float(pooled.sum())
    # Shuffle the labels of the smaller group: the same arrangements, less work.
    m = min(n_a, n_b)

    def differences(sums_small: np.ndarray) -> np.ndarray:
        sums_a = sums_small if m == n_a else total - sums_small
        return sums_a / n_a - (total - sums_a) / n_b

    observed = float(differences(np.array([a.sum() if m == n_a else b.sum()]))[0])
    if math.comb(pooled.size, m) <= permutations:
        return differences(_all_subset_sums(pooled, m)), observed, True
    null = np.empty(permutations)
    step = chunk_rows(pooled.size * 8)  # keys and their partitioned copy, comparison, mask
    for start in range(0, permutations, step):
        rows = min(step, permutations - start)
        mask = _random_subset_masks(rng, rows, pooled.size, m)
        null[start : start + rows] = differences(_row_sums(mask, pooled))
    return null, observed, False


def _paired_null(
    d: np.ndarray, permutations: int, rng: np.random.Generator
) -> tuple[np.ndarray, float, bool]:
    """Null mean differences under random sign flips of per-cell differences."""
    n, total = d.size, float(d.sum())
    observed = total / n
    exact = 2**n <= permutations
    null = np.empty(2**n if exact else permutations)
    width = (n + 7) // 8
    bit = np.arange(n, dtype=np.uint64)
    step = chunk_rows(n * 16)  # codes (8 B) and their bits (8 B), or bytes and bits
    for start in range(0, null.size, step):
        rows = min(step, null.size - start)
        if exact:
            # Row r flips the cells whose bit is set in the number start + r.
            codes = np.arange(start, start + rows, dtype=np.uint64)[:, None]
            flips = (codes >> bit) & np.uint64(1)
        else:
            raw = np.frombuffer(rng.bytes(rows * width), dtype=np.uint8).reshape(rows, width)
            flips = np.unpackbits(raw, axis=1, count=n)
        # Flipping the sign of d_i moves the sum by -2 d_i.
        null[start : start + rows] = (total - 2.0 * _row_sums(flips, d)) / n
    return null, observed, exact


def permutation_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    paired: bool = False,
    permutations: int = DEFAULT_PERMUTATIONS,
    alternative: Alternative = "two-sided",
    seed: int = DEFAULT_SEED,
) -> PermutationResult:
    """Permutation test of mean(A) - mean(B); sign-flip test of the cell differences if paired."""
    arr_a = as_sample(a, "a")
    arr_b = as_sample(b, "b")
    permutations = check_count(permutations, "permutations", 0)
    rng = make_rng(seed)
    if alternative not in ("two-sided", "less", "greater"):
        raise StatsInputError(
            f"alternative: expected 'two-sided', 'less' or 'greater', got {alternative!r}"
        )
    if paired and arr_a.size != arr_b.size:
        raise StatsInputError(
            f"paired: a and b must be aligned by cell, got {arr_a.size} and {arr_b.size} values"
        )
    if arr_a.size == 0 or arr_b.size == 0:
        empty = "a" if arr_a.size == 0 else "b"
        return PermutationResult(
            p_value=math.nan,
            observed_difference=math.nan,
            permutations=0,
            reason=f"group {empty} is empty: nothing to test",
        )
    observed_difference = float(arr_a.mean() - arr_b.mean())
    if permutations == 0:
        # (0 + 1) / (0 + 1): no evidence either way.
        return PermutationResult(
            p_value=1.0,
            observed_difference=observed_difference,
            permutations=0,
            reason="no permutations requested",
        )
    if paired:
        null, observed, exact = _paired_null(arr_a - arr_b, permutations, rng)
    else:
        null, observed, exact = _unpaired_null(arr_a, arr_b, permutations, rng)
    scale = max(float(np.max(np.abs(arr_a))), float(np.max(np.abs(arr_b))))
    hits = _count_extreme(null, observed, alternative, _TIE_TOLERANCE * scale)
    if exact:
        # Every arrangement, the observed one included, is in ``null``.
        p_value = hits / null.size
    else:
        # The observed arrangement counts as one more draw, so p is never 0.
        p_value = (hits + 1) / (permutations + 1)
    return PermutationResult(
        p_value=p_value,
        observed_difference=observed_difference,
        permutations=int(null.size),
        exact=exact,
    )


def permutation_test_normal(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, paired: bool = False
) -> PermutationResult:
    """Two-sided permutation (or sign-flip) test on mean(A) - mean(B) by its normal approximation.

    The permutation distribution's variance is known exactly (sign flips: the
    sum of squared differences; label shuffles: the pooled population variance
    times N^2 / (m (N - m) (N - 1))), and with hundreds of values per group the
    distribution is normal to well within the Monte Carlo error of 10,000
    random permutations - at O(n) instead of O(n x permutations).
    """
    arr_a = as_sample(a, "a")
    arr_b = as_sample(b, "b")
    if arr_a.size == 0 or arr_b.size == 0:
        empty = "a" if arr_a.size == 0 else "b"
        return PermutationResult(p_value=math.nan, observed_difference=math.nan, permutations=0, reason=f"group {empty} is empty")
    observed = float(arr_a.mean() - arr_b.mean())
    if paired:
        if arr_a.size != arr_b.size:
            raise StatsInputError(f"paired: a and b must be aligned by cell, got {arr_a.size} and {arr_b.size} values")
        d = arr_a - arr_b
        ss = float(np.dot(d, d))
        z = abs(float(d.sum())) / math.sqrt(ss) if ss else 0.0
    else:
        m, total = arr_a.size, arr_a.size + arr_b.size
        var = float(np.concatenate([arr_a, arr_b]).var())
        z = abs(observed) / math.sqrt(var * total * total / (m * (total - m) * (total - 1))) if var else 0.0
    return PermutationResult(p_value=math.erfc(z / math.sqrt(2.0)), observed_difference=observed, permutations=0)

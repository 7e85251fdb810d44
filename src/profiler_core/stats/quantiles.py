"""Percentiles of sorted values, by numpy's default (``linear``) method, step for step.

``np.percentile`` partitions its input around the ranks it needs, and finds
them with ``np.unique``, whose first call imports ``numpy.ma`` (and with it
``inspect.signature`` of builtins, which compiles ``tokenize``'s regex): ~50 M
instructions, 3% of a one-cell run (bench/README.md). The samples here are
sorted already, so the partition has nothing to do; what remains is numpy's
interpolation (Hyndman & Fan's 7th: rank ``(n - 1) * p / 100``), written below
with the same operations in the same order, so each result is the same float
as ``np.percentile``'s of the sorted values (tests/test_quantiles.py compares
them bit for bit). Of unsorted values numpy may pick a 0.0 where the sort put
an equal -0.0: the same number.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..util.arrays import np


def sorted_percentiles(ordered: np.ndarray, percents: Sequence[float]) -> np.ndarray:
    """``np.percentile(ordered, percents, axis=-1)`` of samples sorted along their last axis.

    ``ordered`` holds at least one value per sample: 1-D, one result per
    percentile; 2-D (samples x values), one row per percentile and one column
    per sample. A sample holding nan (sorted last) gets nan, as numpy gives.
    """
    quantiles = np.true_divide(percents, 100)
    n = ordered.shape[-1]
    arr = np.moveaxis(ordered, -1, 0)  # values first, as numpy's _quantile works
    virtual = (n - 1) * quantiles
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1  # the last rank: both neighbours are the largest value
    previous[above] = -1
    following[above] = -1
    below = virtual < 0
    previous[below] = 0
    following[below] = 0
    previous = previous.astype(np.intp)
    following = following.astype(np.intp)
    low = arr[previous]
    high = arr[following]
    gamma = np.asanyarray(virtual - previous, dtype=virtual.dtype)
    gamma = gamma.reshape(virtual.shape + (1,) * (arr.ndim - 1))
    # numpy's _lerp: from the nearer end, so that gamma 1 gives ``high`` exactly
    diff = high - low
    result = np.add(low, diff * gamma, out=...)
    np.subtract(
        high,
        diff * (1 - gamma),
        out=result,
        where=gamma >= 0.5,
        casting="unsafe",
        dtype=type(result.dtype),
    )
    has_nan = np.isnan(arr[-1, ...])
    if np.any(has_nan):
        np.copyto(result, arr[-1, ...], where=has_nan)
    return result

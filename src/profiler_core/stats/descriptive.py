"""Descriptive statistics of one sample."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..util.arrays import np
from ._common import as_sample
from .quantiles import sorted_percentiles
from .types import DescriptiveStats


def compute_descriptive(values: Sequence[float] | np.ndarray) -> DescriptiveStats:
    """Summarise a sample: count, mean, percentiles, spread (nan where undefined)."""
    arr = as_sample(values)
    n = arr.size
    if n == 0:
        # The original reports zeros here; a zero median of nothing would be
        # indistinguishable from a real zero, so we report nan.
        nan = math.nan
        return DescriptiveStats(
            count=0, mean=nan, median=nan, p90=nan, p95=nan,
            min=nan, max=nan, iqr=nan, cv=nan, stddev=nan,
        )  # fmt: skip
    mean = float(np.mean(arr))
    # numpy's default percentile method is the same linear interpolation
    # (rank = p/100 * (n - 1)) the original uses.
    p25, median, p75, p90, p95 = (
        float(x) for x in sorted_percentiles(np.sort(arr), [25, 50, 75, 90, 95])
    )
    # Sample standard deviation (ddof=1) is undefined for one value.
    stddev = float(np.std(arr, ddof=1)) if n > 1 else math.nan
    cv = stddev / mean if mean != 0.0 else math.nan
    return DescriptiveStats(
        count=int(n),
        mean=mean,
        median=median,
        p90=p90,
        p95=p95,
        min=float(arr.min()),
        max=float(arr.max()),
        iqr=p75 - p25,
        cv=cv,
        stddev=stddev,
    )

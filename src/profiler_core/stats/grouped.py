"""Descriptive statistics of many groups at once: the report's per-mode and per-scenario tables.

Same definitions as ``compute_descriptive`` (plus p5/p25/p75), for every group
of a column: the rows are put in group order once per grouping
(``GroupIndex``, shared by every metric), then each group's values are sorted
in place; the percentiles are numpy's own (``np.percentile``'s linear
interpolation, taken from the sorted values: ``quantiles.py``), on a 2-D view
at once when the groups are of equal size (a balanced design). Missing values
(nan) are left out.
"""

from __future__ import annotations

import math

import attrs

from ..util.arrays import np
from .quantiles import sorted_percentiles

#: Percentiles computed per group, by the name they get in the result.
QUANTILES = {
    "p5": 5.0,
    "p25": 25.0,
    "median": 50.0,
    "p75": 75.0,
    "p90": 90.0,
    "p95": 95.0,
}


@attrs.frozen
class GroupIndex:
    """Rows in group order: build it once per grouping and pass it for every column."""

    #: row indices, group 0's first (a stable order within each group)
    rows: np.ndarray
    #: group code of each entry of ``rows``
    codes: np.ndarray
    #: rows per group
    count: np.ndarray

    @classmethod
    def of(cls, groups: np.ndarray, n_groups: int) -> GroupIndex:
        """The index of ``groups`` (one code per row, ``0 <= code < n_groups``)."""
        small = groups.astype(np.int16) if n_groups < 2**15 else groups
        rows = np.argsort(small, kind="stable")  # a radix sort of small integers
        count = np.bincount(groups, minlength=n_groups)[:n_groups]
        return cls(rows=rows, codes=groups[rows], count=count)


def _sorted_by_group(values: np.ndarray, index: GroupIndex) -> np.ndarray:
    """``values`` in group order, each group sorted ascending (nan last within its group)."""
    v = values[index.rows]
    count = index.count[index.count > 0]
    if count.size and np.all(count == count[0]):
        v.reshape(count.size, int(count[0])).sort(axis=1)
    else:
        start = 0
        for c in count.tolist():
            v[start : start + c].sort()
            start += c
    return v


def _percentiles(v: np.ndarray, start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Every percentile of ``QUANTILES`` for each non-empty group (rows: quantiles,
    columns: groups)."""
    qs = list(QUANTILES.values())
    if count.size and np.all(count == count[0]):
        return sorted_percentiles(v.reshape(count.size, int(count[0])), qs)
    return np.column_stack(
        [
            sorted_percentiles(v[s : s + c], qs)
            for s, c in zip(start.tolist(), count.tolist(), strict=True)
        ]
    )


def grouped_descriptive(
    values: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    index: GroupIndex | None = None,
) -> dict[str, np.ndarray]:
    """count, mean, percentiles, min, max, iqr, stddev and cv of every group (nan where undefined).

    :param values: one value per row (nan: missing).
    :param groups: the group code of each row, ``0 <= code < n_groups``.
    :param index: ``GroupIndex.of(groups, n_groups)`` when several columns share the grouping.
    """
    if index is None:
        index = GroupIndex.of(groups, n_groups)
    ordered = _sorted_by_group(values, index)
    keep = ~np.isnan(ordered)
    v = ordered[keep]
    g = index.codes[keep]
    count = np.bincount(g, minlength=n_groups)[:n_groups]
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    has = count > 0
    nan = np.full(n_groups, math.nan)
    out: dict[str, np.ndarray] = {"count": count.astype(np.int64)}
    table = (
        _percentiles(v, start[has], count[has])
        if has.any()
        else np.empty((len(QUANTILES), 0))
    )
    for row, name in enumerate(QUANTILES):
        res = nan.copy()
        res[has] = table[row]
        out[name] = res
    # Sums in ascending order within each group, as numpy would add a sorted sample.
    total = np.bincount(g, weights=v, minlength=n_groups)[:n_groups]
    mean = nan.copy()
    mean[has] = total[has] / count[has]
    out["mean"] = mean
    dev = v - mean[g] if v.size else v
    ss = np.bincount(g, weights=dev * dev, minlength=n_groups)[:n_groups]
    std = nan.copy()
    many = count > 1
    std[many] = np.sqrt(ss[many] / (count[many] - 1))
    out["stddev"] = std
    with np.errstate(divide="ignore", invalid="ignore"):
        out["cv"] = np.where(
            (mean != 0) & ~np.isnan(mean), std / np.where(mean == 0, 1, mean), math.nan
        )
    lo_v = nan.copy()
    hi_v = nan.copy()
    lo_v[has] = v[start[has]]
    hi_v[has] = v[start[has] + count[has] - 1]
    out["min"] = lo_v
    out["max"] = hi_v
    out["iqr"] = out["p75"] - out["p25"]
    return out

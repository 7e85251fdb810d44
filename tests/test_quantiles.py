"""``stats.quantiles.sorted_percentiles`` is ``np.percentile`` to the bit (issue 44), and the
report's statistics no longer import ``numpy.ma``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from profiler_core.stats import compute_descriptive, grouped_descriptive
from profiler_core.stats.quantiles import sorted_percentiles

SRC = Path(__file__).resolve().parents[1] / "src"
PERCENTS = [0, 5, 25, 50, 75, 90, 95, 100, 33.3, 99.9]

_values = st.floats(allow_nan=False, width=64, min_value=-1e300, max_value=1e300)


def _same(ours: np.ndarray, numpy_s: np.ndarray) -> None:
    assert ours.shape == numpy_s.shape
    assert ours.dtype == numpy_s.dtype
    assert ours.tobytes() == numpy_s.tobytes()  # the same floats, nan and -0.0 included


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 40), elements=_values))
def test_one_sample_is_numpys_percentile(values):
    ordered = np.sort(values)
    ours = sorted_percentiles(ordered, PERCENTS)
    _same(ours, np.percentile(ordered, PERCENTS))
    # unsorted, numpy's partition may pick 0.0 where the sort put -0.0: equal, not the same bits
    assert ours.tolist() == np.percentile(values, PERCENTS).tolist()


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(1, 12)),
        elements=_values | st.sampled_from([0.0, -0.0, 1.0, np.inf, -np.inf]),
    )
)
def test_many_samples_are_numpys_percentile_along_the_last_axis(values):
    ordered = np.sort(values, axis=1)
    with np.errstate(
        invalid="ignore"
    ):  # inf - inf, in numpy's interpolation as in ours
        _same(
            sorted_percentiles(ordered, PERCENTS),
            np.percentile(ordered, PERCENTS, axis=1),
        )


@pytest.mark.parametrize(
    "values",
    [
        [3.0],
        [1.0, np.nan],
        [np.nan],
        [-np.inf, np.inf],
        [2.0, 2.0, 2.0],
        [0.1, 0.2, 0.7],
    ],
)
def test_edge_samples_are_numpys_percentile(values):
    arr = np.array(values)
    with np.errstate(invalid="ignore"):
        _same(sorted_percentiles(np.sort(arr), PERCENTS), np.percentile(arr, PERCENTS))


def test_the_descriptive_statistics_keep_numpys_percentiles():
    rng = np.random.default_rng(3)
    values = rng.lognormal(size=37)
    stats = compute_descriptive(values)
    p25, p50, p75, p90, p95 = np.percentile(values, [25, 50, 75, 90, 95])
    assert (stats.median, stats.p90, stats.p95, stats.iqr) == (p50, p90, p95, p75 - p25)
    groups = rng.integers(0, 3, size=37)
    table = grouped_descriptive(values, groups, 3)
    for g in range(3):
        assert table["p95"][g] == np.percentile(values[groups == g], 95)
        assert table["median"][g] == np.percentile(values[groups == g], 50)


def test_grouped_statistics_do_not_import_numpy_ma():
    code = (
        "import sys, numpy as np\n"
        "from profiler_core.stats import grouped_descriptive, compute_descriptive\n"
        "v = np.array([3.0, 1.0, 2.0, 5.0, 4.0])\n"
        "grouped_descriptive(v, np.array([0, 0, 1, 1, 1]), 2)\n"
        "grouped_descriptive(v[:4], np.array([0, 0, 1, 1]), 2)\n"
        "compute_descriptive(v)\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"

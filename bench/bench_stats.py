"""Time the statistics engine on the parity workloads (not a test).

Run: ``PYTHONPATH=src python bench/bench_stats.py [--repeat N]``. Targets from
issue 4 (the original's timings): bootstrap_ci < 146 ms, bootstrap_reduction_ci
< 130 ms, compare_groups < 136 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    import profiler_core.stats as stats
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    import profiler_core.stats as stats

import numpy as np

# The anchor-parity values: values[i] = (i * 7919 % 1000) / 10.
VALUES = np.array([(i * 7919 % 1000) / 10 for i in range(1000)])
A, B = VALUES[:500], VALUES[500:] + 3


def _time(func: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best and median wall time in ms over ``repeat`` runs, after one warm-up."""
    func()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        runs.append((time.perf_counter() - start) * 1000)
    return min(runs), statistics.median(runs)


def main() -> None:
    """Print one line per workload: best and median time against its target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat

    workloads: list[tuple[str, Callable[[], object], float | None]] = [
        ("bootstrap_ci(1000 values, 10k resamples, median)",
         lambda: stats.bootstrap_ci(VALUES), 146.0),
        ("bootstrap_reduction_ci(500 vs 500, 10k resamples)",
         lambda: stats.bootstrap_reduction_ci(A, B), 130.0),
        ("compare_groups(500 vs 500, defaults)",
         lambda: stats.compare_groups(A, B), 136.0),
        ("permutation_test(500 vs 500, 10k permutations)",
         lambda: stats.permutation_test(A, B), None),
        ("bootstrap_reduction_ci(500 pairs, paired)",
         lambda: stats.bootstrap_reduction_ci(A, B, paired=True), None),
        ("compare_groups(500 pairs, paired)",
         lambda: stats.compare_groups(A, B, paired=True), None),
        ("bootstrap_ci(1000 values, 10k resamples, mean)",
         lambda: stats.bootstrap_ci(VALUES, statistic="mean"), None),
        ("compare_groups(5 vs 5, defaults: exact test)",
         lambda: stats.compare_groups(A[:5], B[:5]), None),
        ("compute_descriptive(1000 values)",
         lambda: stats.compute_descriptive(VALUES), None),
    ]  # fmt: skip
    print(f"numpy {np.__version__}, best / median of {repeat} runs")
    for name, func, target in workloads:
        best, median = _time(func, repeat)
        verdict = "" if target is None else f"  target < {target:.0f} ms"
        verdict += "" if target is None else ("  ok" if median < target else "  SLOW")
        print(f"{name:<52} {best:8.2f} ms {median:8.2f} ms{verdict}")


if __name__ == "__main__":
    main()

"""Peak memory of a run against its length: 2,000 and 20,000 iterations of the
simulator, each in a fresh process.

The runner keeps no rows in memory (they are on disk), so the peak should not
grow with the number of iterations. Prints both peaks and the growth per
iteration, and exits 1 when that growth is 1 KB per iteration or more.

    python bench/bench_memory.py            # 2,000 and 20,000 iterations
    python bench/bench_memory.py --small 200 --large 2000   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import resource, sys, json, trio
from pathlib import Path
from profiler_core import ModeConfig, Scenario
from profiler_core.plugins import get_plugin_manager
from profiler_core.providers.simulated import SimulatedProvider
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.scorers.checks import ChecksScorer

iterations, out = int(sys.argv[1]), Path(sys.argv[2])
manager = get_plugin_manager()
registry = manager.registry
scenarios = [Scenario(id=f"task-{i:03d}", name=f"Task {i}", prompt="Fix the failing test in tests/test_x.py.") for i in range(5)]
reps = iterations // (2 * len(scenarios))
options = RunOptions(
    provider=SimulatedProvider(seed=1),
    provider_factory=lambda: SimulatedProvider(seed=1),
    scorer=ChecksScorer(),
    scenarios=scenarios,
    modes={"baseline": ModeConfig(), "with_skill": ModeConfig(system_instructions="use the skill")},
    models=["sim-small"],
    collectors=[registry.create("collectors", c, {}) for c in registry.ids("collectors")],
    analyzers=[registry.create("analyzers", a, {}) for a in registry.ids("analyzers")],
    repetitions=reps, warmup=False, concurrency=8,
    results_dir=str(out / "results"), reports_dir=str(out / "reports"),
)
options.plugin_manager = manager
import time
start = time.perf_counter()
result = trio.run(run_profile_suite, options)
ms = (time.perf_counter() - start) * 1000
print(json.dumps({"iterations": result.counts.completed, "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "ms": ms}))
"""


def measure(iterations: int) -> dict:
    """Run ``iterations`` cells in a fresh process; its count and peak RSS (KB)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="profiler-mem-") as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(iterations), tmp],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--large", type=int, default=20_000)
    args = parser.parse_args()
    small, large = measure(args.small), measure(args.large)
    growth_kb = (large["peak_rss_kb"] - small["peak_rss_kb"]) / (
        large["iterations"] - small["iterations"]
    )
    print(
        f"{small['iterations']:>7,} iterations: peak RSS {small['peak_rss_kb'] / 1024:8.1f} MB"
    )
    print(
        f"{large['iterations']:>7,} iterations: peak RSS {large['peak_rss_kb'] / 1024:8.1f} MB"
    )
    print(
        f"growth: {growth_kb:.3f} KB per iteration; ratio "
        f"{large['peak_rss_kb'] / small['peak_rss_kb']:.2f}x (target < 1 KB, <= "
        "1.5x)"
    )
    return 0 if growth_kb < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Peak memory and time of reading a run's analyses: `profiler report` and `profiler
analyze`, 2,000 against 20,000 iterations.

A run of the simulator (every collector and analyzer, traces in the run's store)
is made once per size; then each reader runs in a fresh process and prints its
peak RSS and wall time. The report reads the analysis file one bundle at a time
and `analyze --json` prints one trace's results at a time, so their peaks
should hardly grow with the run (target: the 20,000-iteration peak within 1.5x
of the 2,000-iteration one). Exits 1 when a ratio is 1.5 or more.

    python bench/bench_analysis_memory.py                       # 2,000 and 20,000 iterations
    python bench/bench_analysis_memory.py --small 200 --large 2000   # quicker
    python bench/bench_analysis_memory.py --keep /tmp/runs      # keep (and reuse) the
    generated runs
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
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT / "src"),
    "PROFILER_LOAD_PLUGINS": "builtin_analyzers",
}

GENERATE = r"""
import sys, trio
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
options = RunOptions(
    provider=SimulatedProvider(seed=1, time_scale=0),
    provider_factory=lambda: SimulatedProvider(seed=1, time_scale=0),
    scorer=ChecksScorer(),
    scenarios=scenarios,
    modes={"baseline": ModeConfig(), "with_skill": ModeConfig(system_instructions="use the skill")},
    models=["sim-small"],
    collectors=[registry.create("collectors", c, {}) for c in registry.ids("collectors")],
    analyzers=[registry.create("analyzers", a, {}) for a in registry.ids("analyzers")],
    repetitions=iterations // (2 * len(scenarios)), warmup=False, concurrency=8, run_id="run",
    results_dir=str(out / "results"), reports_dir=str(out / "reports"),
)
options.plugin_manager = manager
trio.run(run_profile_suite, options)
"""

MEASURE = r"""
import contextlib, json, os, resource, sys, time
from profiler_core.cli import cli

args = sys.argv[1:]
start = time.perf_counter()
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    try:
        cli.main(args=args, prog_name="profiler", standalone_mode=False)
    except SystemExit:
        pass
seconds = time.perf_counter() - start
# The report may draw its page in a helper process: the peak is the larger of the two.
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"peak_mb": peak / 1024, "seconds": seconds}), file=sys.stderr)
"""


def generate(iterations: int, folder: Path) -> Path:
    """A finished run of ``iterations`` cells under ``folder`` (made once; reused when
    it is there)."""
    results = folder / "results" / "run.jsonl"
    if not results.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-c", GENERATE, str(iterations), str(folder)],
            env=ENV,
            check=True,
        )
    return results


def measure(*args: str) -> dict:
    """Run ``profiler ARGS`` in a fresh process (stdout discarded); its peak RSS (MB)
    and wall time (s)."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *args],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stderr.strip().splitlines()[-1])


def figures(iterations: int, folder: Path) -> dict[str, dict]:
    """Each reader's figures on a run of ``iterations`` cells."""
    results = generate(iterations, folder)
    store = folder / "reports" / "run" / "sessions" / "traces.jsonl"
    analysis_kb = (folder / "results" / "run.analysis.jsonl").stat().st_size / 1024
    print(
        f"{iterations:>7,} iterations: analysis file {analysis_kb / 1024:.1f} "
        f"MB, trace store {store.stat().st_size / 2**20:.1f} MB",
        flush=True,
    )
    return {
        "report": measure("report", str(results), "--out", str(folder / "report")),
        "analyze --json": measure("analyze", str(store), "--json"),
        "analyze": measure("analyze", str(store)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--large", type=int, default=20_000)
    parser.add_argument(
        "--keep",
        type=Path,
        help="folder to keep the generated runs in (reused when present)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="profiler-analysis-mem-") as tmp:
        base = args.keep or Path(tmp)
        small = figures(args.small, base / f"run-{args.small}")
        large = figures(args.large, base / f"run-{args.large}")
    worst = 0.0
    print(
        f"{'reader':<16}{args.small:>9,} it: peak MB / s{args.large:>10,} it: "
        "peak MB / s   ratio of peaks"
    )
    for name in small:
        s, large_ = small[name], large[name]
        ratio = large_["peak_mb"] / s["peak_mb"]
        if (
            name != "analyze"
        ):  # the text output's time grows with the traces; its memory is measured all the same
            worst = max(worst, ratio)
        print(
            f"{name:<16}{s['peak_mb']:>12.1f} / "
            f"{s['seconds']:6.1f}{large_['peak_mb']:>14.1f} / "
            f"{large_['seconds']:6.1f}{ratio:>14.2f}x"
        )
    print(
        f"worst ratio of peaks (report, analyze --json): {worst:.2f}x (target < 1.5x)"
    )
    return 0 if worst < 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())

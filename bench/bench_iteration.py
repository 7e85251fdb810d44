"""The runner's cost per iteration (issue 30): ours, an older tree of ours, and the
original, alternating.

Run: ``python bench/bench_iteration.py [--runs 3] [--sizes 2000,20000] [--before SRC]
[--original DIR] [--json]``.

The workload is ``suite_overhead`` of ``bench/workloads.py``, the one
``bench_original.py`` compares with the original: a zero-latency replay
provider, the 4 built-in collectors and the 5 built-in analyzers, session
export on, 2 modes x 10 scenarios x 100 (or 1,000) repetitions. Each round
runs every side once per size, each in a fresh process, one after another
(so a busy minute of the machine hits every side alike); after one warm-up
round the medians of ``--runs`` rounds are printed, with the lowest and the
highest. ``--before SRC`` times another source tree (``git archive`` of an
older commit) with this checkout's workload script; ``--original DIR`` times
the TypeScript original built as bench/README.md says.

Besides the wall time per iteration (the figure the targets use), ours print
the CPU time per iteration of the run alone (``time.process_time`` around
``trio.run``): on a machine shared with other jobs it moves much less.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from anchor import anchor_dir  # bench/anchor.py, beside this script

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
HARNESS = BENCH / "original_harness.mjs"
ANCHOR = anchor_dir()
#: issue 30's target, ms per iteration
TARGET_MS = 1.1


class BenchError(Exception):
    """A timed process failed or printed something unexpected."""


def _child(repetitions: int) -> int:
    """In a fresh process: run the workload once and print its figures, with the CPU
    time of the run."""
    sys.path.insert(0, str(BENCH))
    import trio

    import workloads

    spent: list[float] = []
    plain_run = trio.run

    def timed_run(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return plain_run(*args, **kwargs)
        finally:
            spent.append(time.process_time() - start)

    trio.run = timed_run  # the workload imports trio inside run_suite: it finds this
    figures = workloads.run_workload("suite_overhead", repetitions=repetitions)
    figures["cpu_ms_per_iter"] = sum(spent) * 1000 / figures["iterations"]
    print(json.dumps(figures))
    return 0


def _last_json(proc: subprocess.CompletedProcess[str], what: str) -> dict[str, Any]:
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BenchError(f"{what}: exited with {proc.returncode}: {tail}")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise BenchError(
            f"{what}: expected one JSON line, got {proc.stdout[:200]!r}"
        ) from None


def run_ours(src: Path, repetitions: int) -> dict[str, Any]:
    """One fresh process of ours on the source tree ``src``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(repetitions)]
    proc = subprocess.run(
        cmd,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    return _last_json(proc, f"ours ({src})")


def run_original(node: str, original: Path, repetitions: int) -> dict[str, Any]:
    """One fresh process of the original's harness."""
    cmd = [node, str(HARNESS), "suite_overhead", "--repetitions", str(repetitions),
           "--bundle", str(original / "agent-profiler.mjs"), "--anchor", str(ANCHOR)]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False
    )
    return _last_json(proc, "original_harness.mjs suite_overhead")


def measure(
    sides: dict[str, Any], sizes: list[int], runs: int
) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """Every side at every size, in alternating rounds (the first a warm-up); the
    figures of each measured run."""
    found: dict[str, dict[int, list[dict[str, Any]]]] = {
        name: {size: [] for size in sizes} for name in sides
    }
    for round_index in range(1 + runs):
        for size in sizes:
            for name, run_once in sides.items():
                figures = run_once(size // 20)  # 2 modes x 10 scenarios per repetition
                if round_index:
                    found[name][size].append(figures)
                print(f"  round {round_index or 'warm-up'}: {name} {size:,} iterations: "
                      f"{figures['ms_per_iter']:.3f} ms/iteration", file=sys.stderr, flush=True)  # fmt: skip
    return found


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def report(
    found: dict[str, dict[int, list[dict[str, Any]]]], sizes: list[int], runs: int
) -> None:
    """The table: median (lowest-highest) wall and CPU ms per iteration, per side and size."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"measured {now}, {os.cpu_count()} cores, load average {load}; medians "
        f"of {runs} alternating rounds (lowest-highest)"
    )
    print(
        f"{'side':<10} {'iterations':>10}  {'wall ms/iteration':<24} "
        f"{'CPU ms/iteration':<24} target <= {TARGET_MS}"
    )
    for size in sizes:
        for name, by_size in found.items():
            runs_ = by_size[size]
            wall = _spread([r["ms_per_iter"] for r in runs_])
            cpu = (
                _spread([r["cpu_ms_per_iter"] for r in runs_])
                if "cpu_ms_per_iter" in runs_[0]
                else "-"
            )
            print(f"{name:<10} {size:>10,}  {wall:<24} {cpu:<24}")


def main(argv: list[str] | None = None) -> int:
    """Measure and print (or ``--json``) the runner's ms per iteration of each side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--runs",
        type=int,
        default=3,
        help="measured rounds after the warm-up (default 3)",
    )
    parser.add_argument(
        "--sizes",
        default="2000,20000",
        help="iterations per run, comma-separated multiples of 20",
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="also time this source tree (e.g. git archive of main)",
    )
    parser.add_argument(
        "--original",
        type=Path,
        default=None,
        help="also time the original built in DIR (bench/README.md)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: side -> size -> figures of each run",
    )
    args = parser.parse_args(argv)
    if args.child is not None:
        return _child(args.child)
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(size <= 0 or size % 20 for size in sizes):
        print(
            "bench_iteration: --sizes: expected positive multiples of 20 (2 modes x 10 scenarios)",
            file=sys.stderr,
        )
        return 2
    sides: dict[str, Any] = {"ours": lambda reps: run_ours(ROOT / "src", reps)}
    if args.before is not None:
        before = args.before.resolve()
        sides["before"] = lambda reps: run_ours(before, reps)
    if args.original is not None:
        node = shutil.which("node")
        if node is None or not (args.original / "agent-profiler.mjs").is_file():
            print(
                "bench_iteration: --original: needs node on PATH and "
                f"{args.original}/agent-profiler.mjs",
                file=sys.stderr,
            )
            return 2
        original = args.original.resolve()
        sides["original"] = lambda reps: run_original(node, original, reps)
    try:
        found = measure(sides, sizes, args.runs)
    except BenchError as exc:
        print(f"bench_iteration: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(
            json.dumps(
                {
                    name: {str(size): runs for size, runs in by_size.items()}
                    for name, by_size in found.items()
                }
            )
        )
    else:
        report(found, sizes, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

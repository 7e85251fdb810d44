"""Our figures beside the TypeScript original's, measured on this machine in the same minutes.

Run: ``python bench/bench_original.py --original DIR [--runs 5] [--json] [--quick] [--only KEY]``.

``DIR`` holds the original built with esbuild (``agent-profiler.mjs``, and
``eval-cli.mjs`` for ``--help``): bench/README.md says how to get and build it
(its code is not in this repository). Each figure runs ours and the original's
in alternating fresh processes — one warm-up each, then ``--runs`` rounds — and
prints the medians, the original's over ours, and the date and load of the
machine: figures of the original are only ever shown beside ours from the same
run. The original is driven by ``bench/original_harness.mjs`` on the workloads
of ``bench/workloads.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from anchor import ANCHOR
from processes import (
    ROOT,
    WORKLOADS,
    BenchError,
    ProcessRun,
    checked,
    run_process,
)

HARNESS = BENCH / "original_harness.mjs"

#: key -> (what it is, unit). ms figures are timed inside the process (as workloads.py does);
#: s figures are whole processes, start-up included.
FIGURES: dict[str, tuple[str, str]] = {
    "suite_overhead_ms_per_iter_2k": (
        "runner, ms per iteration, 2,000 iterations (replay provider, 4 "
        "collectors, 5 analyzers, session export on)",
        "ms",
    ),
    "suite_overhead_ms_per_iter_20k": ("the same, 20,000 iterations", "ms"),
    "suite_peak_rss_mb_20k": ("peak RSS of the 20,000-iteration run", "MB"),
    "suite_latency_ms_c1": ("40 iterations of a 50 ms prompt, one at a time", "ms"),
    "permutation_test_ms": (
        "permutation test, 10,000 permutations, 2 x 500 values",
        "ms",
    ),
    "bootstrap_ci_ms": (
        "bootstrap CI of the median, 10,000 resamples, 1,000 values",
        "ms",
    ),
    "bootstrap_reduction_ci_ms": (
        "bootstrap CI of the reduction, 10,000 resamples, 2 x 500",
        "ms",
    ),
    "compare_groups_ms": (
        "compare_groups, 2 x 500 (bootstrap + Cohen's d + permutations)",
        "ms",
    ),
    "report_10k_ms": (
        "report of 10,000 rows, whole process (ours: HTML too; the original writes none)",
        "ms",
    ),
    "help_s": (
        "`--help`, whole process (ours: profiler; the original: its eval CLI)",
        "s",
    ),
    "run_one_cell_s": ("a 1-cell run and its report, whole process", "s"),
    "interpreter_s": ("floor: `python -c pass` / `node -e 0`", "s"),
}

ONE_CELL = """\
modes:
  baseline: {system_instructions: "You are a coding agent."}
scenarios: {path: scenarios, ids: [fix-parser-test]}
provider: {id: simulated, model: sim-small, options: {seed: 7, time_scale: 0}}
scorer: {id: checks}
execution: {repetitions: 1, warmup: false}
"""


def _json_line(run: ProcessRun, what: str) -> dict:
    try:
        return json.loads(checked(run, what).stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise BenchError(
            f"{what}: expected one JSON line, got {run.stdout[:200]!r}"
        ) from None


class Sides:
    """How to run each figure on our side and on the original's, as (run once -> value)."""

    def __init__(self, original: Path, work: Path, quick: bool) -> None:
        self.bundle = original / "agent-profiler.mjs"
        self.cli = original / "eval-cli.mjs"
        for path in (self.bundle, self.cli):
            if not path.is_file():
                raise BenchError(
                    f"{path}: not found (build the original first: bench/README.md)"
                )
        self.node = shutil.which("node")
        if self.node is None:
            raise BenchError("node is not on PATH")
        self.work = work
        self.quick = quick
        self.demo = work / "demo"
        checked(
            run_process(
                [sys.executable, "-m", "profiler_core", "init", str(self.demo)]
            ),
            "profiler init",
        )
        (self.demo / "one-cell.yaml").write_text(ONE_CELL, encoding="utf-8")

    def _ours(self, *args: str) -> dict:
        return _json_line(
            run_process([sys.executable, str(WORKLOADS), *args]),
            "workloads.py " + " ".join(args),
        )

    def _theirs(self, *args: str) -> dict:
        cmd = [
            self.node,
            str(HARNESS),
            *args,
            "--bundle",
            str(self.bundle),
            "--anchor",
            str(ANCHOR),
        ]
        return _json_line(run_process(cmd), "original_harness.mjs " + " ".join(args))

    def _process_s(self, cmd: list[str], what: str, cwd: Path | None = None) -> float:
        run = run_process(cmd) if cwd is None else run_process(cmd, cwd=cwd)
        return checked(run, what).wall_ms / 1000

    def pair(self, key: str) -> tuple[Callable[[], float], Callable[[], float]]:
        """(ours, original's): each runs one fresh process and returns the figure."""
        reps = {
            "suite_overhead_ms_per_iter_2k": "100",
            "suite_overhead_ms_per_iter_20k": "1000",
            "suite_peak_rss_mb_20k": "1000",
        }
        if key in reps:
            n = "3" if self.quick else reps[key]
            field = "peak_rss_mb" if key.startswith("suite_peak") else "ms_per_iter"
            if field == "peak_rss_mb":
                return (
                    lambda: (
                        run_process(
                            [
                                sys.executable,
                                str(WORKLOADS),
                                "suite_overhead",
                                "--repetitions",
                                n,
                            ]
                        ).peak_rss_mb
                    ),
                    lambda: self._theirs("suite_overhead", "--repetitions", n)[
                        "peak_rss_mb"
                    ],
                )
            return (lambda: self._ours("suite_overhead", "--repetitions", n)[field],
                    lambda: self._theirs("suite_overhead", "--repetitions", n)[field])  # fmt: skip
        if key == "suite_latency_ms_c1":
            quick = ["--quick"] if self.quick else []
            return (
                lambda: self._ours("suite_latency", "--concurrency", "1", *quick)["ms"],
                lambda: self._theirs("suite_latency")["ms"],
            )
        if key.endswith("_ms") and key[:-3] in (
            "permutation_test",
            "bootstrap_ci",
            "bootstrap_reduction_ci",
            "compare_groups",
        ):
            name = key[:-3]
            return lambda: self._ours(name)["ms"], lambda: self._theirs(name)["ms"]
        if key == "report_10k_ms":
            rows = ANCHOR / "report-rows.jsonl.gz"
            out = self.work / "report"
            ours = [
                sys.executable,
                "-m",
                "profiler_core",
                "report",
                str(rows),
                "--out",
                str(out),
            ]
            theirs = [
                self.node,
                str(HARNESS),
                "report",
                "--bundle",
                str(self.bundle),
                "--anchor",
                str(ANCHOR),
            ]
            return (
                lambda: self._process_s(ours, "profiler report") * 1000,
                lambda: self._process_s(theirs, "original report") * 1000,
            )
        if key == "help_s":
            script = Path(sys.executable).with_name("profiler")
            ours = (
                [str(script)]
                if script.exists()
                else [sys.executable, "-m", "profiler_core"]
            )
            return (lambda: self._process_s([*ours, "--help"], "profiler --help"),
                    lambda: self._process_s([self.node, str(self.cli), "--help"], "eval --help", cwd=self.cli.parent))  # fmt: skip
        if key == "run_one_cell_s":
            ours = [
                sys.executable,
                "-m",
                "profiler_core",
                "run",
                "one-cell.yaml",
                "--progress",
                "none",
            ]
            theirs = [
                self.node,
                str(HARNESS),
                "one_cell",
                "--bundle",
                str(self.bundle),
                "--anchor",
                str(ANCHOR),
            ]
            return (
                lambda: self._process_s(ours, "profiler run", cwd=self.demo),
                lambda: self._process_s(theirs, "original one_cell"),
            )
        if key == "interpreter_s":
            return (lambda: self._process_s([sys.executable, "-c", "pass"], "python"),
                    lambda: self._process_s([self.node, "-e", "0"], "node"))  # fmt: skip
        raise BenchError(f"unknown figure {key!r}")


def measure(sides: Sides, key: str, runs: int, warmups: int) -> tuple[float, float]:
    """Median of ours and of the original's over ``runs`` alternating rounds after ``warmups``."""
    ours_once, theirs_once = sides.pair(key)
    ours, theirs = [], []
    for index in range(warmups + runs):
        a, b = ours_once(), theirs_once()
        if index >= warmups:
            ours.append(a)
            theirs.append(b)
    return statistics.median(ours), statistics.median(theirs)


def measure_all(
    original: Path, keys: list[str], runs: int, quick: bool
) -> dict[str, tuple[float | None, float | None]]:
    """Every figure as (ours, original's); (None, None) with the reason on stderr where
    it failed."""
    work = Path(tempfile.mkdtemp(prefix="profiler-vs-original-"))
    results: dict[str, tuple[float | None, float | None]] = {}
    try:
        sides = Sides(original, work, quick)
        for key in keys:
            try:
                results[key] = measure(sides, key, runs, 0 if quick else 1)
            except BenchError as exc:
                print(f"bench: {key}: {exc}", file=sys.stderr)
                results[key] = (None, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.3f}"
    return (
        f"{value:,.3f}"
        if value < 10
        else f"{value:,.1f}"
        if value < 1000
        else f"{value:,.0f}"
    )


def machine_line() -> str:
    """When and where: the date (UTC), the cores and the load average."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"measured {now}, {os.cpu_count()} cores, load average {load}"


def main(argv: list[str] | None = None) -> int:
    """Measure and print the side-by-side table (or one JSON object)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--original", type=Path, default=os.environ.get("PROFILER_ORIGINAL_DIR"),
                        help="folder of the built original (agent-profiler.mjs, "
                            "eval-cli.mjs); env PROFILER_ORIGINAL_DIR")  # fmt: skip
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="rounds per figure (default 5; 1 with --quick)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: key -> {ours, original}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny workloads, one round (smoke test, not figures)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(FIGURES),
        help="this figure only (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.original is None:
        parser.error(
            "--original DIR is required (or PROFILER_ORIGINAL_DIR): see bench/README.md"
        )
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])
    )
    runs = args.runs if args.runs is not None else (1 if args.quick else 5)
    header = machine_line()
    results = measure_all(
        Path(args.original), args.only or list(FIGURES), runs, args.quick
    )
    if args.json:
        print(
            json.dumps(
                {
                    "measured": header,
                    **{k: {"ours": a, "original": b} for k, (a, b) in results.items()},
                }
            )
        )
        return 1 if any(a is None for a, _ in results.values()) else 0
    print(f"{header}; medians of {runs} alternating rounds")
    print(f"{'figure':<32} {'ours':>10} {'original':>10} {'orig/ours':>9}  unit")
    for key, (ours, theirs) in results.items():
        ratio = f"{theirs / ours:.2f}x" if ours and theirs else ""
        unit = FIGURES[key][1]
        print(
            f"{key:<32} {_fmt(ours, unit):>10} {_fmt(theirs, unit):>10} {ratio:>9}  {unit}"
        )
    return 1 if any(a is None for a, _ in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

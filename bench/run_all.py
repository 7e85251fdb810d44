"""Run every benchmark of issues 9 and 30 in fresh processes; with --original, the
original's beside ours.

Run: ``python bench/run_all.py [--json] [--quick] [--scale] [--runs N] [--original DIR]``.

Each figure is the median of ``--runs`` (5) fresh processes after one
warm-up process; peak RSS is the OS's maximum resident set of the process
(``os.wait4``). ``--json`` prints exactly one JSON object with the keys of
``KEYS`` (``null`` where a figure could not be measured: reason on stderr).
``--quick`` shrinks every workload so the whole thing takes seconds (smoke
test only; its figures mean nothing). The TypeScript original's column is
measured in the same run (``--original DIR``, ``bench/bench_original.py``) or
left empty: no figure of the original from another day is ever printed.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(
    0, str(Path(__file__).resolve().parent)
)  # bench/ modules, also when loaded by path
from anchor import ANCHOR, shifted, span
from processes import (
    WORKLOADS,
    BenchError,
    checked,
    run_process,
)

#: The keys of ``--json``, in order (issue 9).
KEYS = (
    "suite_overhead_ms_per_iter",
    "suite_latency_ms_c1",
    "suite_latency_ms_c8",
    "bootstrap_ci_ms",
    "bootstrap_reduction_ci_ms",
    "permutation_test_ms",
    "compare_groups_ms",
    "report_10k_ms",
    "report_10k_peak_rss_mb",
    "analyze_100k_events_ms",
    "report_1m_ms",
    "report_1m_peak_rss_mb",
    # issue 18: scale-out
    "suite_latency_ms_c32",
    "suite_overhead_ms_per_iter_2k",
    "suite_overhead_ms_per_iter_20k",
    "suite_peak_rss_mb_2k",
    "suite_peak_rss_mb_20k",
    "ray_latency_ms_c8",
    "ray_overhead_ms_per_cell",
    # issue 18.4: analyzers and trace serialisation off the loop (execution.analysis_workers)
    "big_traces_ms_per_iter_inline",
    "big_traces_ms_per_iter_workers",
    "big_traces_loop_stall_ms_inline",
    "big_traces_loop_stall_ms_workers",
    # issue 30: start-up, whole processes (bench_startup.py), seconds
    "startup_help_s",
    "startup_list_plugins_s",
    "startup_completion_s",
    "startup_validate_s",
    "startup_run_report_s",
    "startup_run_no_report_s",
)

#: Figures bench_original.py can measure on the original too (the rest have no counterpart there).
ORIGINAL_KEYS = {
    # the same 2,000-iteration workload
    "suite_overhead_ms_per_iter": "suite_overhead_ms_per_iter_2k",
    "suite_latency_ms_c1": "suite_latency_ms_c1",
    "bootstrap_ci_ms": "bootstrap_ci_ms",
    "bootstrap_reduction_ci_ms": "bootstrap_reduction_ci_ms",
    "permutation_test_ms": "permutation_test_ms",
    "compare_groups_ms": "compare_groups_ms",
    "report_10k_ms": "report_10k_ms",
    "suite_overhead_ms_per_iter_2k": "suite_overhead_ms_per_iter_2k",
    "suite_overhead_ms_per_iter_20k": "suite_overhead_ms_per_iter_20k",
    "suite_peak_rss_mb_20k": "suite_peak_rss_mb_20k",
    "startup_help_s": "help_s",
    "startup_run_report_s": "run_one_cell_s",
}

#: Targets of issue 9, as (comparison, bound) on our figure.
TARGETS: dict[str, tuple[str, float]] = {
    # issue 30: at least the original's speed, measured beside it on 2026-11-26 (1.18 ms)
    "suite_overhead_ms_per_iter": ("<=", 1.1),
    "bootstrap_ci_ms": ("<=", 1463 / 10),
    "bootstrap_reduction_ci_ms": ("<=", 1307 / 10),
    "compare_groups_ms": ("<=", 1360 / 10),
    "report_10k_ms": ("<=", 4049 / 2),
    "report_10k_peak_rss_mb": ("<", 250),
    "report_1m_ms": ("<", 60_000),
    "report_1m_peak_rss_mb": ("<", 2048),
    "suite_overhead_ms_per_iter_2k": ("<=", 1.1),
    "suite_overhead_ms_per_iter_20k": ("<=", 1.1),
    "permutation_test_ms": ("<=", 80),
    "suite_peak_rss_mb_20k": ("<", 500),
    "ray_overhead_ms_per_cell": ("<", 20),
    # issue 30: start-up (seconds, whole processes, bytecode caches warm)
    "startup_help_s": ("<", 0.15),
    "startup_list_plugins_s": ("<", 0.15),
    "startup_completion_s": ("<", 0.15),
    "startup_validate_s": ("<", 0.4),
    "startup_run_report_s": ("<", 0.6),
    "startup_run_no_report_s": ("<", 0.35),
}

#: c8 must be at least this many times faster than c1.
LATENCY_SPEEDUP_TARGET = 7.0


def workload_figures(args: list[str], runs: int, warmups: int) -> list[dict[str, Any]]:
    """Run ``bench/workloads.py ARGS`` warm-up + ``runs`` times; the JSON each measured
    run printed."""
    figures = []
    for index in range(warmups + runs):
        run = checked(
            run_process([sys.executable, str(WORKLOADS), *args]),
            "workloads.py " + " ".join(args),
        )
        try:
            data = json.loads(run.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            raise BenchError(
                f"workloads.py {' '.join(args)}: expected one JSON line, got {run.stdout[:200]!r}"
            ) from None
        data["peak_rss_mb"] = run.peak_rss_mb
        if index >= warmups:
            figures.append(data)
    return figures


def median_of(figures: list[dict[str, Any]], key: str) -> float:
    """The median of one figure over the measured runs."""
    return statistics.median(float(f[key]) for f in figures)


# -- the report command -------------------------------------------------------------------------

REPORT_CMD = (sys.executable, "-m", "profiler_core", "report")


def report_command() -> tuple[tuple[str, ...] | None, str | None]:
    """How to run ``profiler report`` here, and a note when it is not the CLI itself
    (None: unavailable)."""
    if run_process([*REPORT_CMD, "--help"], timeout_s=60).returncode == 0:
        return REPORT_CMD, None
    return None, None


def replicate_rows(
    source: Path, target: Path, copies: int, limit: int | None = None
) -> int:
    """Write ``copies`` copies of the rows of ``source``, each with new iteration
    numbers; returns the row count."""
    with gzip.open(source, "rt", encoding="utf-8") as f:
        lines = [line for line in f if line.strip()][:limit]
    if not lines:
        raise BenchError(f"{source}: no rows")
    step = span(lines)
    target.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if target.suffix == ".gz" else open
    tmp = target.with_name(target.name + ".tmp")
    with opener(tmp, "wt", encoding="utf-8") as out:
        for copy in range(copies):
            out.writelines(shifted(line, copy * step) for line in lines)
    tmp.replace(target)
    return copies * len(lines)


def report_input(rows: str, quick: bool, workdir: Path) -> Path:
    """The rows file for a report benchmark: the 10k parity rows, or them replicated to
    1M (cached)."""
    source = ANCHOR / "report-rows.jsonl.gz"
    if not source.exists():
        raise BenchError(f"{source}: parity rows not found (set PROFILER_BENCH_ANCHOR)")
    if rows == "10k":
        if not quick:
            return source
        path = workdir / "report-rows-200.jsonl.gz"
        replicate_rows(source, path, copies=1, limit=200)
        return path
    if quick:
        path = workdir / "report-rows-400.jsonl"
        replicate_rows(source, path, copies=2, limit=200)
        return path
    # 1M rows as `profiler run` writes them: plain JSONL (2.5 GB), built once and kept.
    cache = (
        Path(tempfile.gettempdir()) / "agent-profiler-bench" / "report-rows-1m.jsonl"
    )
    if not cache.exists():
        print(f"bench: writing {cache} (1,000,000 rows, once)...", file=sys.stderr)
        replicate_rows(source, cache, copies=100)
    return cache


def report_figures(
    cmd: Sequence[str], rows: str, runs: int, warmups: int, quick: bool
) -> tuple[float, float]:
    """Median wall time (ms) and peak RSS (MB) of ``profiler report`` in fresh processes."""
    with tempfile.TemporaryDirectory(prefix="profiler-bench-report-") as tmp:
        workdir = Path(tmp)
        path = report_input(rows, quick, workdir)
        measured = []
        for index in range(warmups + runs):
            out = workdir / f"out-{index}"
            run = checked(
                run_process([*cmd, str(path), "--out", str(out)]),
                f"profiler report {path.name}",
            )
            if not any(out.rglob("*.html")):
                print(
                    f"bench: note: profiler report wrote no HTML into {out}",
                    file=sys.stderr,
                )
            if index >= warmups:
                measured.append(run)
        return statistics.median(r.wall_ms for r in measured), statistics.median(
            r.peak_rss_mb for r in measured
        )


# -- the suite of benchmarks --------------------------------------------------------------------


def measure_all(
    quick: bool, scale: bool, runs: int, warmups: int
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Every figure (None where not measured) and notes explaining the gaps."""
    figures: dict[str, float | None] = dict.fromkeys(KEYS)
    notes: dict[str, str] = {}
    q = ["--quick"] if quick else []

    def attempt(keys: tuple[str, ...], func) -> None:
        try:
            values = func()
        except BenchError as exc:
            for key in keys:
                notes[key] = str(exc)
            return
        figures.update(zip(keys, values, strict=True))

    def suite() -> tuple[float]:
        runs_ = workload_figures(["suite_overhead", *q], runs, warmups)
        notes["suite_overhead_peak_rss_mb"] = (
            f"{median_of(runs_, 'peak_rss_mb'):.0f} MB"
        )
        return (median_of(runs_, "ms_per_iter"),)

    attempt(("suite_overhead_ms_per_iter",), suite)
    for c in (1, 8, 32):
        attempt(
            (f"suite_latency_ms_c{c}",),
            lambda c=c: (
                median_of(
                    workload_figures(
                        ["suite_latency", "--concurrency", str(c), *q], runs, warmups
                    ),
                    "ms",
                ),
            ),
        )
    attempt(
        (
            "suite_overhead_ms_per_iter_2k",
            "suite_overhead_ms_per_iter_20k",
            "suite_peak_rss_mb_2k",
            "suite_peak_rss_mb_20k",
        ),
        lambda: memory_figures(quick, runs, warmups),
    )
    attempt(
        ("ray_latency_ms_c8", "ray_overhead_ms_per_cell"), lambda: ray_figures(quick)
    )
    attempt(
        (
            "big_traces_ms_per_iter_inline",
            "big_traces_ms_per_iter_workers",
            "big_traces_loop_stall_ms_inline",
            "big_traces_loop_stall_ms_workers",
        ),
        lambda: big_trace_figures(quick, runs, warmups),
    )
    for name in (
        "bootstrap_ci",
        "bootstrap_reduction_ci",
        "permutation_test",
        "compare_groups",
    ):
        attempt(
            (f"{name}_ms",),
            lambda name=name: (
                median_of(workload_figures([name, *q], runs, warmups), "ms"),
            ),
        )
    attempt(
        ("analyze_100k_events_ms",),
        lambda: (median_of(workload_figures(["analyze", *q], runs, warmups), "ms"),),
    )

    cmd, how = report_command()
    if cmd is not None:
        report_keys = ("report_10k_ms", "report_10k_peak_rss_mb") + (
            ("report_1m_ms", "report_1m_peak_rss_mb") if scale else ()
        )
        if how:
            notes.update(dict.fromkeys(report_keys, how))
        attempt(
            ("report_10k_ms", "report_10k_peak_rss_mb"),
            lambda: report_figures(cmd, "10k", runs, warmups, quick),
        )
        if scale:
            attempt(
                ("report_1m_ms", "report_1m_peak_rss_mb"),
                lambda: report_figures(cmd, "1m", runs, warmups, quick),
            )
    else:
        for key in (
            "report_10k_ms",
            "report_10k_peak_rss_mb",
            "report_1m_ms",
            "report_1m_peak_rss_mb",
        ):
            notes[key] = "`profiler report` is not available in this checkout yet"
    if not scale:
        for key in ("report_1m_ms", "report_1m_peak_rss_mb"):
            notes.setdefault(key, "skipped: run with --scale")
    startup = tuple(k for k in KEYS if k.startswith("startup_"))
    attempt(startup, lambda: startup_figures(startup, quick, runs))
    return figures, notes


def startup_figures(keys: tuple[str, ...], quick: bool, runs: int) -> tuple[float, ...]:
    """Start-up of the ``profiler`` command, whole processes (``bench_startup.py``:
    median of 9 by default)."""
    script = Path(__file__).resolve().parent / "bench_startup.py"
    args = ["--json", *(["--quick"] if quick else ["--runs", str(max(runs, 9))])]
    run = checked(
        run_process([sys.executable, str(script), *args], timeout_s=1800),
        "bench_startup.py",
    )
    data = json.loads(run.stdout.strip().splitlines()[-1])
    return tuple(float(data[key]) for key in keys)


def original_figures(
    original: Path, quick: bool, runs: int
) -> tuple[dict[str, float | None], str]:
    """The original's figures for ORIGINAL_KEYS, measured now (bench_original.py), and
    when and where."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_original

    wanted = sorted(set(ORIGINAL_KEYS.values()))
    measured = bench_original.measure_all(original, wanted, runs, quick)
    return {
        key: measured[theirs][1] for key, theirs in ORIGINAL_KEYS.items()
    }, bench_original.machine_line()


def memory_figures(
    quick: bool, runs: int, warmups: int
) -> tuple[float, float, float, float]:
    """Overhead per iteration and peak RSS of the suite_overhead workload at 2,000 and
    20,000 iterations.

    The same workload as ``suite_overhead_ms_per_iter`` (the original's), with 100 and 1,000
    repetitions; ``bench_memory.py`` measures the same on the simulated provider at c8.
    """
    ms, rss = [], []
    for reps in (3, 30) if quick else (100, 1_000):
        figures = workload_figures(
            [
                "suite_overhead",
                "--repetitions",
                str(reps),
                *(["--quick"] if quick else []),
            ],
            runs,
            warmups,
        )
        ms.append(median_of(figures, "ms_per_iter"))
        rss.append(median_of(figures, "peak_rss_mb"))
    return ms[0], ms[1], rss[0], rss[1]


def big_trace_figures(
    quick: bool, runs: int, warmups: int
) -> tuple[float, float, float, float]:
    """The big-trace suite (~2 MB traces, concurrency 4): ms per iteration and the
    longest loop stall,
    analysers inline (``analysis_workers: 0``) and in worker processes (``auto``)."""
    per_iter, stall = [], []
    for workers in ("0", "auto"):
        args = [
            "suite_big_traces",
            "--concurrency",
            "4",
            "--analysis-workers",
            workers,
            *(["--quick"] if quick else []),
        ]
        figures = workload_figures(args, runs, warmups)
        per_iter.append(median_of(figures, "ms_per_iter"))
        stall.append(median_of(figures, "loop_stall_ms_max"))
    return per_iter[0], per_iter[1], stall[0], stall[1]


def ray_figures(quick: bool) -> tuple[float, float]:
    """The 40-cell latency suite at c8 through the Ray executor on a local cluster
    (bench_executors.py)."""
    if importlib.util.find_spec("ray") is None:
        raise BenchError("ray is not installed (pip install 'agent-profiler[ray]')")
    args = ["--only-ray", "--json"] + (["--quick"] if quick else [])
    run = checked(
        run_process(
            [
                sys.executable,
                str(Path(__file__).resolve().parent / "bench_executors.py"),
                *args,
            ]
        ),
        "bench_executors.py",
    )
    data = json.loads(run.stdout.strip().splitlines()[-1])
    return data["ray_latency_ms_c8"], data["ray_warm_cell_ms"]


# -- output --------------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return (
        f"{value:,.3f}"
        if value < 10
        else f"{value:,.0f}"
        if value >= 1000
        else f"{value:,.1f}"
    )


def _verdict(key: str, value: float | None, figures: dict[str, float | None]) -> str:
    if key == "suite_latency_ms_c8":
        c1 = figures["suite_latency_ms_c1"]
        if value is None or c1 is None or value == 0:
            return ""
        speedup = c1 / value
        ok = "ok" if speedup >= LATENCY_SPEEDUP_TARGET else "MISSED"
        return f"c1/c8 = {speedup:.2f}x (target >= {LATENCY_SPEEDUP_TARGET:.0f}x) {ok}"
    if key == "suite_latency_ms_c32" and value and figures["suite_latency_ms_c1"]:
        return f"c1/c32 = {figures['suite_latency_ms_c1'] / value:.2f}x (ceiling 20x with 40 cells)"
    if (
        key == "big_traces_loop_stall_ms_workers"
        and value
        and figures["big_traces_loop_stall_ms_inline"]
    ):
        return (
            "longest stall of the event loop: "
            f"{figures['big_traces_loop_stall_ms_inline'] / value:.1f}x shorter "
            "than inline"
        )
    if key == "suite_peak_rss_mb_20k" and value and figures["suite_peak_rss_mb_2k"]:
        ratio = value / figures["suite_peak_rss_mb_2k"]
        bound = TARGETS[key][1]
        return (
            f"20k/2k = {ratio:.2f}x (target <= 1.5x) "
            f"{'ok' if ratio <= 1.5 else 'MISSED'}; target < {bound:.0f} "
            f"{'ok' if value < bound else 'MISSED'}"
        )
    if key not in TARGETS or value is None:
        return ""
    op, bound = TARGETS[key]
    ok = value <= bound if op == "<=" else value < bound
    return f"target {op} {_fmt(bound)} {'ok' if ok else 'MISSED'}"


def render_table(
    figures: dict[str, float | None],
    notes: dict[str, str],
    quick: bool,
    original: dict[str, float | None] | None = None,
) -> str:
    """Our figure next to the original's (when measured in this run), with the target
    and any note."""
    original = original or {}
    lines = [
        f"{'figure':<28} {'ours':>10} {'original':>10} {'speed-up':>9}  target / note"
    ]
    for key in KEYS:
        ours, original_value = figures[key], original.get(key)
        ratio = (
            f"{original_value / ours:.1f}x"
            if ours and original_value and not key.endswith("_mb")
            else ""
        )
        remark = (
            notes.get(key, "")
            if ours is None
            else "; ".join(filter(None, (_verdict(key, ours, figures), notes.get(key))))
        )
        lines.append(
            f"{key:<28} {_fmt(ours):>10} {_fmt(original_value):>10} {ratio:>9}  {remark}"
        )
    if "suite_overhead_peak_rss_mb" in notes:
        lines.append(
            f"{'(suite_overhead peak RSS)':<28} {notes['suite_overhead_peak_rss_mb']}"
        )
    if not original:
        lines.append(
            "original: not measured in this run (--original DIR: see bench/README.md)"
        )
    if quick:
        lines.append(
            "--quick: shrunken workloads; these figures are a smoke test, not measurements"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure, then print the table (or one JSON object with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--json",
        action="store_true",
        help="print exactly one JSON object with every key",
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny workloads, one run each (smoke test)"
    )
    parser.add_argument(
        "--scale", action="store_true", help="also the 1,000,000-row report"
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="measured runs per figure (default 5; 1 with --quick)",
    )
    parser.add_argument(
        "--original", type=Path, default=os.environ.get("PROFILER_ORIGINAL_DIR"),
        help="also measure the TypeScript original, built in DIR (bench/README.md); "
            "env PROFILER_ORIGINAL_DIR",
    )  # fmt: skip
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (1 if args.quick else 5)
    if runs < 1:
        parser.error("--runs must be >= 1")
    warmups = 0 if args.quick else 1

    figures, notes = measure_all(args.quick, args.scale, runs, warmups)
    original, when = (
        original_figures(Path(args.original), args.quick, runs)
        if args.original
        else ({}, "")
    )
    if args.json:
        for key, note in notes.items():
            if key in figures and figures[key] is None:
                print(f"bench: {key}: {note}", file=sys.stderr)
        print(
            json.dumps(
                {k: None if v is None else round(v, 3) for k, v in figures.items()}
            )
        )
    else:
        if when:
            print(f"original {when}")
        print(render_table(figures, notes, args.quick, original))
    unexplained = [k for k, v in figures.items() if v is None and k not in notes]
    failed = [
        k
        for k, note in notes.items()
        if k in figures
        and figures[k] is None
        and "not available" not in note
        and "skipped" not in note
    ]
    return 1 if unexplained or failed else 0


if __name__ == "__main__":
    sys.exit(main())

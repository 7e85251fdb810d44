"""A one-cell ``profiler run``, as figures the machine's load moves little: CPU time and
instructions.

Run: ``python bench/bench_one_cell.py [--src DIR ...] [--runs 9] [--no-valgrind]``.

The workload is ``bench_original.py``'s ``run_one_cell_s``: ``profiler init``,
then ``profiler run one-cell.yaml --progress none`` (the simulated provider,
one scenario, one repetition, the report written). For this checkout's
``src`` and each ``--src`` tree (``git archive`` of another commit,
extracted) it prints the median user+sys CPU time of ``--runs`` fresh
processes (each run's results removed first; alternating trees, so a change
in load falls on both) and, unless ``--no-valgrind``, the median
instruction count of ``--ir-runs`` processes under ``valgrind
--tool=cachegrind --cache-sim=no`` after one uncounted run (so the bytecode
caches, the user's entry-point cache and the generated-code cache of
``util/codecache.py`` are warm, as on any start but the first; the count still
moves by ~2% from run to run). ``PYTHONHASHSEED`` is fixed. A first line gives
the floor: the CPU time of a process that only imports the libraries of the
chosen stack that a one-cell run needs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from bench_original import ONE_CELL

_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")
RUN = ["-m", "profiler_core", "run", "one-cell.yaml", "--progress", "none"]
#: The floor: a process that only imports the libraries a one-cell run needs (the stack's
#: choice, not ours to drop), numpy as util/arrays.py imports it.
FLOOR = [
    "-c",
    "from profiler_core.util.arrays import np; "
    "import trio, attrs, cattrs, yaml, click, msgspec, pluggy",
]


def _env(src: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    env.pop(
        "PYTHONDONTWRITEBYTECODE", None
    )  # bytecode caches written and used, as a user has them
    return env


def _clean(demo: Path) -> None:
    for name in ("results", "reports"):
        shutil.rmtree(demo / name, ignore_errors=True)


def cpu_seconds(src: Path, demo: Path, args: list[str] = RUN) -> float:
    """User+sys CPU seconds of one ``profiler run`` process (from wait4: it and its children)."""
    _clean(demo)
    pid = os.fork()
    if pid == 0:  # child: become the profiler process
        try:
            os.chdir(demo)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execve(sys.executable, [sys.executable, *args], _env(src))
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench: {src}: {args} exited with status {status}")
    return usage.ru_utime + usage.ru_stime


def instructions(src: Path, demo: Path, runs: int) -> int:
    """Median instructions of ``runs`` warm ``profiler run`` processes under cachegrind."""
    counts = []
    with tempfile.TemporaryDirectory(prefix="profiler-ir-") as tmp:
        cmd = [
            "valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/out",
            sys.executable, *RUN,
        ]  # fmt: skip
        # The first run may write bytecode and the entry-point cache: not counted.
        for _ in range(runs + 1):
            _clean(demo)
            done = subprocess.run(
                cmd,
                cwd=demo,
                env=_env(src),
                capture_output=True,
                text=True,
                check=False,
            )
            found = _IREFS.search(done.stderr)
            if done.returncode != 0 or found is None:
                raise SystemExit(
                    f"bench: {src}: run under valgrind failed: {done.stderr[-400:]}"
                )
            counts.append(int(found.group(1).replace(",", "")))
    return int(statistics.median(counts[1:]))


def main(argv: list[str] | None = None) -> int:
    """Print the median CPU time and the instruction count of a one-cell run for each tree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, action="append", default=[])
    parser.add_argument(
        "--runs", type=int, default=9, help="processes per tree (default 9)"
    )
    parser.add_argument("--no-valgrind", action="store_true", help="CPU time only")
    parser.add_argument(
        "--ir-runs", type=int, default=3, help="counted runs under valgrind (default 3)"
    )
    args = parser.parse_args(argv)
    trees = [ROOT / "src", *(src.resolve() for src in args.src)]
    with tempfile.TemporaryDirectory(prefix="profiler-one-cell-") as tmp:
        demo = Path(tmp) / "demo"
        init = subprocess.run(
            [sys.executable, "-m", "profiler_core", "init", str(demo)],
            env=_env(trees[0]),
            capture_output=True,
            text=True,
            check=False,
        )
        if init.returncode != 0:
            raise SystemExit(f"bench: profiler init failed: {init.stderr[-400:]}")
        (demo / "one-cell.yaml").write_text(ONE_CELL, encoding="utf-8")
        for tree in trees:
            cpu_seconds(tree, demo)  # warm the bytecode and entry-point caches
        cpu: dict[Path, list[float]] = {tree: [] for tree in trees}
        floor: list[float] = []
        for _ in range(args.runs):
            for tree in trees:
                cpu[tree].append(cpu_seconds(tree, demo))
            floor.append(cpu_seconds(trees[0], demo, FLOOR))
        print(
            f"cpu {statistics.median(floor):.3f} s (median of {args.runs})  floor: "
            "the imports of trio, numpy, attrs, cattrs, yaml, click, msgspec and pluggy alone"
        )
        for tree in trees:
            line = f"cpu {statistics.median(cpu[tree]):.3f} s (median of {args.runs})"
            if not args.no_valgrind and shutil.which("valgrind") is not None:
                line += (
                    f"  {instructions(tree, demo, args.ir_runs) / 1e9:.3f} G "
                    f"instructions (median of {args.ir_runs})"
                )
            print(f"{line}  {tree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Instructions per runner iteration, counted by valgrind: a figure the machine's load
does not move.

Run: ``python bench/bench_instructions.py [--src DIR ...] [--small 1] [--large 11]``.

Runs ``workloads.py suite_overhead`` (replay provider, 4 collectors, 5
analyzers, session export on) under ``valgrind --tool=cachegrind
--cache-sim=no`` twice, with ``--small`` and ``--large`` repetitions
(2 modes x 10 scenarios each), and prints the difference of the two
processes' instruction counts over the difference of their iterations:
start-up, imports and the first cells' one-time work cancel out. Each
``--src`` is a source tree (``git archive`` of another commit, extracted)
measured the same way, for before/after. ``PYTHONHASHSEED`` is fixed, so the
count repeats to about 0.1%. Wall time on a shared 2-core machine moves by
tens of percent; this count does not, but it weighs every instruction alike (a
cache miss counts as little as an add) and leaves out the kernel's work (the
writes' system calls). Both runs include the workload's check that reads the
rows back after its timed span, a constant share of each iteration's count.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WORKLOADS = BENCH / "workloads.py"
_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(src: Path, repetitions: int) -> int:
    """Instructions executed by one ``suite_overhead`` process of ``repetitions`` repetitions."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    # Bytecode caches written and used, as run_all.py does: a tree without them compiles
    # every module each time.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="profiler-ir-") as tmp:
        cmd = [
            "valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/out",
            sys.executable, str(WORKLOADS), "suite_overhead", "--repetitions", str(repetitions),
        ]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    found = _IREFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(
            f"bench: {src}: suite_overhead under valgrind failed: {done.stderr.strip()[-400:]}"
        )
    return int(found.group(1).replace(",", ""))


def per_iteration(src: Path, small: int, large: int) -> float:
    """Instructions per iteration: the two runs' difference over their 20 x (large -
    small) iterations."""
    return (instructions(src, large) - instructions(src, small)) / (
        20 * (large - small)
    )


def main(argv: list[str] | None = None) -> int:
    """Print instructions per iteration of this checkout and of each ``--src``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--src",
        type=Path,
        action="append",
        default=[],
        help="another source tree (repeatable)",
    )
    parser.add_argument(
        "--small",
        type=int,
        default=1,
        help="repetitions of the shorter run (default 1: 20 iterations)",
    )
    parser.add_argument(
        "--large",
        type=int,
        default=11,
        help="repetitions of the longer run (default 11: 220 iterations)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: source tree -> instructions per iteration",
    )
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench: valgrind is not on PATH", file=sys.stderr)
        return 1
    if args.large <= args.small:
        parser.error("--large must be more repetitions than --small")
    figures = {
        str(src): per_iteration(src.resolve(), args.small, args.large)
        for src in [ROOT / "src", *args.src]
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    for src, value in figures.items():
        print(f"{value / 1e6:8.3f} M instructions per iteration  {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

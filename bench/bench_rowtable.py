"""Time the report's row loader alone (``report.rowtable``: the hot loop of a big
report), in this process.

Run: PYTHONPATH=src python bench/bench_rowtable.py [--rows N] [--repeat N] [--src OTHER/src]

Builds an uncompressed file of ``--rows`` rows (default 100,000) from the parity
file's 10,000 (``bench_report.replicate``), then reads it ``--repeat`` times in
one process (no fork, no sink) and prints the best and median CPU time and the
best wall time. CPU time is what to compare on a busy machine: other jobs stretch
the wall time, much less the CPU time of this process. ``--src`` measures another
checkout's loader (e.g. the main branch's) with the same file, so two versions can
be run one after the other, alternating.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rows", type=int, default=100_000, help="rows of the replicated file"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="reads of the file (best and median are shown)",
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=HERE.parent / "src",
        help="the profiler_core to measure",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    sys.path.insert(0, str(HERE))
    from bench_report import PARITY, replicate
    from profiler_core.report import rowtable

    if not PARITY.exists():
        sys.exit(f"parity file not found: {PARITY}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-rowtable-"))
    try:
        rows = tmp / "rows.jsonl"
        replicate(PARITY, rows, args.rows)
        cpu, wall = [], []
        for _ in range(args.repeat):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            table = rowtable._read(rows, None)
            cpu.append(time.process_time() - start_cpu)
            wall.append(time.perf_counter() - start)
        cpu.sort()
        print(
            f"{table.n:,} rows read by {rowtable.__file__}: CPU best "
            f"{cpu[0]:.3f} s, median {cpu[len(cpu) // 2]:.3f} s; "
            f"wall best {min(wall):.3f} s ({args.repeat} reads, "
            f"{table.n / cpu[0]:,.0f} rows/s of CPU)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""What the cells' fingerprints (``--reuse``, runner/reuse.py) add to every run's start:
``cell_fingerprints`` timed.

Run: ``PYTHONPATH=src python bench/bench_reuse.py [--runs 5] [--task-mb 0,8,64]``.

For the demo profile (5 JSON scenarios x 2 modes) and for the example Harbor tasks
(3 task folders), and for the tasks with an extra file of N MB in one task's
environment folder (what a task bringing a fixture repository costs), it prints the
median of ``--runs`` timings of ``cell_fingerprints`` on the loaded profile, in ms.
The profile's loading is not timed (every run does it anyway).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from profiler_core.config.loader import load_profile
from profiler_core.runner.reuse import cell_fingerprints

ROOT = Path(__file__).resolve().parent.parent


def _time(profile: Path, runs: int) -> tuple[float, int]:
    config = load_profile(profile, {})
    cell_fingerprints(
        config
    )  # warm the page cache: a second run of a profile reads files the first one read
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        cells = cell_fingerprints(config)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), len(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--task-mb", default="0,8,64")
    args = parser.parse_args()
    ms, cells = _time(ROOT / "examples" / "demo" / "profile.yaml", args.runs)
    print(f"demo profile      cells {cells:3d}  cell_fingerprints {ms:8.2f} ms")
    with tempfile.TemporaryDirectory(prefix="bench-reuse-") as tmp:
        tasks = Path(tmp) / "tasks"
        shutil.copytree(
            ROOT / "examples" / "tasks",
            tasks,
            ignore=shutil.ignore_patterns("results", "reports"),
        )
        for mb in (int(x) for x in args.task_mb.split(",")):
            blob = tasks / "fix-median" / "environment" / "fixture.bin"
            if mb:
                blob.write_bytes(os.urandom(mb * 2**20))
            ms, cells = _time(tasks / "profile.yaml", args.runs)
            print(
                f"tasks + {mb:3d} MB    cells {cells:3d}  cell_fingerprints {ms:8.2f} ms"
            )


if __name__ == "__main__":
    main()

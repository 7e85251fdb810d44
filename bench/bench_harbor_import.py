"""Import speed of a Harbor job: a synthetic job of N trials (default 1,000), each with
its ATIF trajectory.

    python bench/bench_harbor_import.py [--trials N] [--runs R]

The job is written once (tests/harbor_jobs.py clones the hand-written trial of
tests/fixtures/harbor_jobs/ per task and attempt). Printed: the median time to
read the job folder into sessions (``load_job``: every result.json and
trajectory.json parsed and checked against Harbor's models), and the median
time of the whole ``profiler import harbor`` (the same, then each trial
replayed through the runner with every collector and analyzer, rows, traces,
analysis and manifest written), in process. Not part of run_all.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from harbor_jobs import write_job
from profiler_core.importers.harbor_job import load_job


def import_once(job: Path, out: Path) -> int:
    """One full import (as the CLI does it); the rows written."""
    from profiler_core.plugins.manager import default_plugin_manager
    from profiler_core.runner.replay import import_sessions

    loaded = load_job(job)
    result = import_sessions(
        list(loaded.sessions),
        files=list(loaded.files),
        out=out,
        manager=default_plugin_manager(),
        modes=list(loaded.modes),
        warnings=list(loaded.warnings),
        existing="replace",
    )
    return len(result.rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tasks = [f"task-{i:03d}" for i in range(max(1, args.trials // 5))]
    with tempfile.TemporaryDirectory() as tmp:
        job = write_job(Path(tmp) / "job", tasks=tasks, attempts=5, seed=7)
        trials = sum(1 for p in job.iterdir() if p.is_dir())
        size = sum(p.stat().st_size for p in job.rglob("*") if p.is_file())
        read = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            load_job(job)
            read.append(time.perf_counter() - t0)
        full = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            rows = import_once(job, Path(tmp) / "out" / "job.jsonl")
            full.append(time.perf_counter() - t0)
        assert rows == trials
    figures = {
        "trials": trials,
        "job_mb": round(size / 1e6, 2),
        "read_job_s": round(statistics.median(read), 3),
        "read_ms_per_trial": round(statistics.median(read) / trials * 1000, 3),
        "import_s": round(statistics.median(full), 3),
        "import_ms_per_trial": round(statistics.median(full) / trials * 1000, 3),
    }
    for key, value in figures.items():
        print(f"{key:22} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

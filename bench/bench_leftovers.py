"""What "nothing outlives the profiler" costs: the /proc scan at each OpenCode session's
end, and a run's start (not a test).

Run: ``python bench/bench_leftovers.py [--repeat 50] [--dead 5] [--json] [--quick]``.

- ``descendants_ms``: one scan of ``/proc`` for the processes below a process
  (``util.descendants``), what ``OpenCodeServer.end_session_processes`` does
  once per session; it grows with the machine's process count (printed).
- ``reap_ms``: a run's start with no dead run recorded (``runner.deadruns.reap``).
- ``reap_dead_ms``: the same with ``--dead`` dead runs' records, each with a
  temporary folder, planting them included (no containers: the runtimes are asked only
  when a dead run used one).

Figures are medians in milliseconds over ``--repeat`` calls, after one warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def _median_ms(call, repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _plant_dead_runs(count: int) -> None:
    """Records of ``count`` runs whose process is gone (PID 0 is never a process's),
    each with a temporary folder."""
    from profiler_core.runner.deadruns import runs_folder

    parent = runs_folder()
    parent.mkdir(mode=0o700, exist_ok=True)
    for index in range(count):
        spool = parent / f"dead-{index}.0"
        spool.mkdir()
        (spool / "owner").write_text(f"0 1\ndead-{index}\n")
        folder = Path(tempfile.mkdtemp(prefix="profiler-bench-"))
        (spool / f"folder-{index}").write_text(str(folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--dead", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="one call each: a smoke test, not figures"
    )
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="bench-leftovers-") as tmp:
        os.environ["TMPDIR"] = tmp  # the runs' records of this benchmark only
        tempfile.tempdir = None
        from profiler_core.runner.deadruns import reap
        from profiler_core.util.descendants import descendants

        figures = {
            "processes": sum(1 for entry in os.listdir("/proc") if entry.isdigit()),
            "descendants_ms": round(_median_ms(lambda: descendants(1), repeat), 3),
            "reap_ms": round(_median_ms(reap, repeat), 3),
        }

        def reap_dead() -> None:
            _plant_dead_runs(args.dead)
            reap()

        figures["reap_dead_ms"] = round(_median_ms(reap_dead, max(1, repeat // 5)), 3)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:16} {value}")


if __name__ == "__main__":
    main()

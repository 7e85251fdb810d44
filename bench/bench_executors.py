"""The latency suite on two modes at several concurrencies, in this process and on a
local Ray cluster.

Each figure is one ``profiler run`` in a fresh process on the simulated
provider: 40 cells (2 modes x 5 scenarios x 4 repetitions) whose sessions
each take about ``--latency`` seconds. Printed: wall time per run, the speed-up
over c1, and for the Ray executor its cost per cell in that run (its wall time
minus the local executor's at the same concurrency, less the cluster's
start-up; Ray's worker processes start during the run, so this includes them)
and on a warm worker (``ray_warm_cell_ms``: one zero-latency cell at a time,
the executor's own round trip).

    python bench/bench_executors.py                 # local c1/c8/c32, ray c8
    python bench/bench_executors.py --latency 0.5 --no-ray
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CELLS = 40


def profile(
    folder: Path,
    *,
    executor: str,
    concurrency: int,
    latency_s: float,
    quick: bool = False,
) -> Path:
    """The demo's profile: 2 modes x 5 scenarios x 4 repetitions, sessions of about ``latency_s``.

    ``quick``: a whole core per Ray cell, so Ray starts a worker per core rather than
    one per cell in
    flight (each worker's start is about a second of CPU; a smoke test's figures mean
    nothing anyway).
    """
    subprocess.run(
        [sys.executable, "-m", "profiler_core", "init", str(folder)],
        check=True,
        capture_output=True,
    )
    data = yaml.safe_load((folder / "profile.yaml").read_text())
    # The simulator's sessions last minutes of simulated time; time_scale makes them latency_s long.
    data["provider"]["options"].update(
        {"time_scale": latency_s / 60.0, "mean_turns": 6}
    )
    data["scenarios"] = {"path": "scenarios"}
    data["execution"] = {
        "repetitions": 4,
        "warmup": False,
        "concurrency": concurrency,
        "executor": executor,
        "ray": {"num_cpus_per_cell": 1.0 if quick else 0.05},
    }
    data["analyzers"] = []
    path = folder / f"{executor}-c{concurrency}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def timed_run(path: Path) -> tuple[float, int]:
    """Wall seconds of the cells (from the first row's start to the last row's end) and
    the row count."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "profiler_core",
            "run",
            str(path),
            "--run-id",
            "bench",
            "--progress",
            "none",
            "--no-report",
        ],
        capture_output=True,
        text=True,
        cwd=path.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    total = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{path.name}: profiler run failed: {done.stderr[-2000:]}")
    rows = [
        json.loads(line)
        for line in (path.parent / "results" / "bench.jsonl").read_text().splitlines()
    ]
    (path.parent / "results" / "bench.jsonl").unlink()
    (path.parent / "results" / "bench.manifest.json").unlink()
    return total, len(rows)


WARM = r"""
import json, sys, time
from profiler_core.config import load_profile
from profiler_core.model import ModeConfig, RunContext

path = sys.argv[1]
config = load_profile(path)
started = time.perf_counter()  # the cluster's start-up: importing Ray and ray.init
import ray
from profiler_core.runner.executors.ray import CellSpec, run_cell
ray.init(include_dashboard=False, log_to_driver=False)
cluster_start_s = time.perf_counter() - started
cells = int(sys.argv[2])
remote = ray.remote(run_cell).options(num_cpus=0.05, max_retries=0)
ctx = RunContext(run_id="warm", modes=list(config.modes), scenarios=list(config.scenarios), repetitions=1, models=list(config.models))
profile = [ray.put(config)]  # as the executor sends it: the loaded profile, once
def spec(i):
    return CellSpec(profile_path=path, overrides={}, run_ctx=ctx, model=config.models[0], mode=config.modes[0],
                    mode_config=ModeConfig(), scenario=config.scenarios[0], iteration=i, attempt=1,
                    profile=profile, driver={"session_export": True, "destroy_timeout_s": 5})
ray.get(remote.remote(spec(0)))  # the worker starts and builds its components
t = time.perf_counter()
for i in range(cells):
    ray.get(remote.remote(spec(i)))
print(json.dumps({"ray_warm_cell_ms": round((time.perf_counter() - t) / cells * 1000, 2),
                  "ray_cluster_start_s": round(cluster_start_s, 2)}))
ray.shutdown()
"""


def warm_figures(folder: Path, cells: int) -> dict[str, float]:
    """One cell at a time on a warm worker, zero-latency sessions: the executor's own round trip.

    Also how long that process took to import Ray and start its cluster (``ray_cluster_start_s``).
    """
    path = profile(folder, executor="ray", concurrency=1, latency_s=0.0)
    done = subprocess.run(
        [sys.executable, "-c", WARM, str(path), str(cells)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency", type=float, default=1.0, help="seconds per session (default 1.0)"
    )
    parser.add_argument("--no-ray", action="store_true", help="only the local executor")
    parser.add_argument(
        "--only-ray",
        action="store_true",
        help="only the Ray figures (c8 run and warm cell)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="sessions of 20 ms: a smoke test, not figures",
    )
    parser.add_argument(
        "--json", action="store_true", help="print only one JSON object"
    )
    args = parser.parse_args()
    latency = 0.02 if args.quick else args.latency
    say = (lambda *a, **k: None) if args.json else print
    runs = [] if args.only_ray else [("local", c) for c in (1, 8, 32)]
    if not args.no_ray:
        runs.append(("ray", 8))
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="profiler-bench-exec-") as tmp:
        for executor, c in runs:
            folder = Path(tmp) / f"{executor}-{c}"
            wall, rows = timed_run(
                profile(
                    folder,
                    executor=executor,
                    concurrency=c,
                    latency_s=latency,
                    quick=args.quick,
                )
            )
            assert rows == CELLS, rows
            figures[f"{executor}_c{c}_s"] = round(wall, 2)
            say(f"{executor:5} c{c:<3} {wall:7.2f} s for {rows} cells", flush=True)
        if "ray_c8_s" in figures:
            warm = warm_figures(Path(tmp) / "warm", cells=5 if args.quick else 50)
            figures["ray_warm_cell_ms"] = warm["ray_warm_cell_ms"]
            if args.quick:
                # A smoke test: the warm process's own cluster start stands in for a third cluster.
                figures["ray_cluster_start_s"] = warm["ray_cluster_start_s"]
            else:
                # The ray run also starts a local cluster; measure that alone, a whole
                # process, to take it out.
                t0 = time.perf_counter()
                subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        "import ray; ray.init(include_dashboard=False); ray.shutdown()",
                    ],
                    capture_output=True,
                    check=True,
                )
                figures["ray_cluster_start_s"] = round(time.perf_counter() - t0, 2)
            figures["ray_latency_ms_c8"] = round(
                (figures["ray_c8_s"] - figures["ray_cluster_start_s"]) * 1000, 1
            )
            if "local_c8_s" in figures:
                per_cell = (
                    (
                        figures["ray_c8_s"]
                        - figures["ray_cluster_start_s"]
                        - figures["local_c8_s"]
                    )
                    / CELLS
                    * 1000
                )
                figures["ray_overhead_ms_per_cell"] = round(per_cell, 1)
    if "local_c1_s" in figures:
        figures["speedup_c8"] = round(figures["local_c1_s"] / figures["local_c8_s"], 2)
        figures["speedup_c32"] = round(
            figures["local_c1_s"] / figures["local_c32_s"], 2
        )
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

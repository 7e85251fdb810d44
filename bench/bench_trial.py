"""Per-trial overhead of the oracle on the three example Harbor tasks (examples/tasks):
before and after one trial per environment.

Run: ``python bench/bench_trial.py [--rounds 3] [--repetitions 3] [--before /work/main]
[--kinds docker,bwrap] [--json]``.

Two measures, both at concurrency 1, on this machine, now:

1. **End to end** (``e2e``): ``profiler run examples/tasks/profile.yaml --provider oracle`` of this
   checkout and of ``--before`` (another checkout with its own ``.venv``, e.g. today's main), in
   alternating rounds, per environment kind (``docker``, ``bwrap``), after a warm-up run
   that builds the task images. The
   figure is seconds per trial: the wall time of a run with ``1 + repetitions`` per task
   minus that of
   a run with 1, divided by the extra cells (the process's start-up cancels out), median
   of the rounds. ``none`` cannot run Harbor tasks (their commands use ``/tests``),
   so it is measured in the phase breakdown only.
2. **Phases** (``phases``, this checkout only): one trial driven through the environment contract
   (``runner/trial.py``): environment start (with Harbor's log folders), the agent (the oracle's
   ``solve.sh`` uploaded and run), the verifier (``tests/`` uploaded, ``test.sh`` run, its logs
   copied out) and teardown, medians over tasks x repetitions. ``none`` cannot run
   Harbor tasks (their
   commands use ``/tests``): its phases run one ``sh -c true`` each on a copy of a task's files.

Harbor's own ``harbor run`` is not installed here (no registry but PyPI's, and its trial needs
its own images); the issue's figure for it on the same tasks is 13.3 s per trial at concurrency 1.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "examples" / "tasks"
HARBOR_S = 13.3
TASK_NAMES = sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())


def _e2e(checkout: Path, kind: str, repetitions: int, work: Path, run_id: str) -> float:
    """Wall seconds of one oracle run of the example tasks (``repetitions`` each) with
    ``checkout``'s profiler."""
    folder = work / f"{checkout.name}-{kind}"
    if not folder.exists():
        shutil.copytree(checkout / "examples" / "tasks", folder)
    profiler = checkout / ".venv" / "bin" / "profiler"
    command = [
        str(profiler),
        "run",
        "profile.yaml",
        "--provider",
        "oracle",
        "--repetitions",
        str(repetitions),
        "--run-id",
        run_id,
        "--no-report",
        "--progress",
        "none",
        "--set",
        f"execution.sandbox={kind}",
        "--set",
        "execution.concurrency=1",
    ]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, timeout=1200, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{checkout} {kind}: profiler run failed: {(done.stderr or done.stdout).strip()[-400:]}"
        )
    return wall


def _per_trial(
    checkout: Path, kind: str, repetitions: int, work: Path, tag: str
) -> float:
    """Seconds per trial: the difference of a run of ``1 + repetitions`` and a run of 1
    repetition, per extra cell
    (start-up, the plan and the images' look-up cancel out)."""
    one = _e2e(checkout, kind, 1, work, f"{tag}-one")
    more = _e2e(checkout, kind, 1 + repetitions, work, f"{tag}-more")
    return (more - one) / (len(TASK_NAMES) * repetitions)


def _phases(kind: str, repetitions: int) -> dict[str, float]:
    """Medians (s) of each phase of one trial, driven through the contract by runner/trial.py."""
    import trio

    sys.path.insert(0, str(ROOT / "src"))
    from profiler_core.config.loader import load_profile
    from profiler_core.model import SandboxSettings
    from profiler_core.plugins.manager import get_plugin_manager
    from profiler_core.runner import trial
    from profiler_core.runner.task_images import TaskEnvironments

    scenarios = load_profile(TASKS / "profile.yaml").scenarios
    settings = SandboxSettings(sandbox=kind, network="none" if kind != "none" else None)
    kinds = get_plugin_manager(entrypoints=False).registry
    times: dict[str, list[float]] = {
        "start": [],
        "agent": [],
        "verifier": [],
        "teardown": [],
        "total": [],
    }
    scratch = Path(tempfile.mkdtemp(prefix="bench-trial-"))

    async def one(scenario, task_settings) -> None:
        trials = trial.Trials(
            kinds.create("environments", kind), settings, scratch, "bench"
        )
        t0 = time.perf_counter()
        run = await trial.start_trial(trials, scenario, task_settings, "bench")
        t1 = time.perf_counter()
        try:
            solution = scenario.solution
            for target, source in solution.mounts.items():
                await trial.call(run.environment.put, Path(source), target)
            await run.exec(
                ["sh", "-c", 'chmod +x "$1"/*.sh', "sh", "/solution"],
                timeout_s=60,
                user="0",
            )
            agent = await run.exec(["/solution/solve.sh"], timeout_s=300)
            assert agent.ok, agent.output[-300:]
            t2 = time.perf_counter()
            verification = await trial.verify(run, scratch / f"v-{time.monotonic_ns()}")
            assert verification.reward == 1, verification
            t3 = time.perf_counter()
        finally:
            await trial.stop_trial(run)
        t4 = time.perf_counter()
        for name, value in (
            ("start", t1 - t0),
            ("agent", t2 - t1),
            ("verifier", t3 - t2),
            ("teardown", t4 - t3),
            ("total", t4 - t0),
        ):
            times[name].append(value)

    async def main() -> None:
        environments = TaskEnvironments(
            settings if kind in ("docker", "podman") else None, scratch
        )
        for scenario in scenarios:
            if kind in ("docker", "podman"):
                task_settings = (await environments.sandbox_for(scenario)).settings
            else:
                folder = Path(scenario.workspace.path)
                task_settings = settings
                scenario = _folder_scenario(scenario, folder)
            for _ in range(repetitions):
                await one(scenario, task_settings)

    trio.run(main)
    shutil.rmtree(scratch, ignore_errors=True)
    return {name: statistics.median(values) for name, values in times.items()}


def _none_phases(repetitions: int) -> dict[str, float]:
    """The host trial (``none``): Harbor tasks need ``/tests``, so its phases run the
    same shells on a copy of
    each task's files (start: the copy; agent and verifier: one ``sh -c true`` each;
    teardown: removal)."""
    import trio

    sys.path.insert(0, str(ROOT / "src"))
    from profiler_core.environments.local import HostEnvironment
    from profiler_core.model import TrialSpec

    times: dict[str, list[float]] = {
        "start": [],
        "agent": [],
        "verifier": [],
        "teardown": [],
        "total": [],
    }
    for task in TASK_NAMES * repetitions:
        t0 = time.perf_counter()
        trial = HostEnvironment().start(
            TrialSpec(root=str(TASKS / task / "environment"))
        )
        t1 = time.perf_counter()
        trio.run(functools.partial(trial.exec, ["sh", "-c", "true"], timeout_s=60))
        t2 = time.perf_counter()
        trio.run(functools.partial(trial.exec, ["sh", "-c", "true"], timeout_s=60))
        t3 = time.perf_counter()
        trial.stop()
        t4 = time.perf_counter()
        for name, value in (
            ("start", t1 - t0),
            ("agent", t2 - t1),
            ("verifier", t3 - t2),
            ("teardown", t4 - t3),
            ("total", t4 - t0),
        ):
            times[name].append(value)
    return {name: statistics.median(values) for name, values in times.items()}


def _folder_scenario(scenario, folder: Path):
    """The task as a folder trial runs it: its environment folder's files at its WORKDIR."""
    import attrs

    from profiler_core.model import TaskEnvironment

    return attrs.evolve(
        scenario,
        environment=TaskEnvironment(workdir="/app", image=None),
        workspace=attrs.evolve(scenario.workspace),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="another checkout with its own .venv (today's main)",
    )
    parser.add_argument("--kinds", default="docker,bwrap")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    work = Path(tempfile.mkdtemp(prefix="bench-trial-e2e-"))
    figures: dict[str, float] = {}
    try:
        checkouts = [("after", ROOT)] + (
            [("before", args.before)] if args.before else []
        )
        for kind in kinds:
            samples: dict[str, list[float]] = {label: [] for label, _ in checkouts}
            for (
                label,
                checkout,
            ) in checkouts:  # warm-up: builds the images, warms the caches
                _e2e(checkout, kind, 1, work, f"warm-{label}")
            for index in range(args.rounds):
                order = checkouts if index % 2 == 0 else list(reversed(checkouts))
                for label, checkout in order:
                    samples[label].append(
                        _per_trial(
                            checkout, kind, args.repetitions, work, f"r{index}-{label}"
                        )
                    )
            for label, values in samples.items():
                figures[f"e2e_{kind}_{label}_s"] = statistics.median(values)
        for name, value in _none_phases(args.repetitions).items():
            figures[f"phase_none_{name}_s"] = value
        for kind in [k for k in kinds if k != "none"]:
            for name, value in _phases(kind, args.repetitions).items():
                figures[f"phase_{kind}_{name}_s"] = value
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, load average {load}"
    )
    for name, value in figures.items():
        extra = (
            f"   Harbor/ours {HARBOR_S / value:.1f}x"
            if name.startswith("e2e_docker_after")
            else ""
        )
        print(f"{name:32s} {value:8.3f} s{extra}")


if __name__ == "__main__":
    main()

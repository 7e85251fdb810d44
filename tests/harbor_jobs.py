"""Harbor job folders for tests and bench: many trials cloned from the hand-written one
in fixtures/harbor_jobs/.

``write_job`` copies ``job-a/hello-world__Kq3vT9a`` (a TrialResult and its ATIF
trajectory, written after Harbor's models) once per (task, attempt), changing
only names, ids, times, tokens, cost and reward, so every trial keeps Harbor's
exact shape.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "harbor_jobs"
TEMPLATE = FIXTURES / "job-a" / "hello-world__Kq3vT9a"


def write_job(
    folder: Path,
    *,
    tasks: list[str],
    attempts: int,
    agent: str = "terminus-2",
    model: str = "claude-sonnet-4-5",
    cost_scale: float = 1.0,
    reward: Callable[[random.Random, str], float] = lambda rng, task: float(
        rng.random() < 0.7
    ),
    seed: int = 0,
    with_trajectory: bool = True,
) -> Path:
    """A finished job of ``len(tasks) * attempts`` trials; returns ``folder``."""
    rng = random.Random(seed)
    result = json.loads((TEMPLATE / "result.json").read_text())
    trajectory = json.loads((TEMPLATE / "agent" / "trajectory.json").read_text())
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "job-a" / "config.json", folder / "config.json")
    n = 0
    for task in tasks:
        for attempt in range(attempts):
            name = f"{task}__{seed:02d}{attempt:03d}x"
            trial = folder / name
            (trial / "agent").mkdir(parents=True)
            (trial / "verifier").mkdir()
            value = reward(rng, task)
            cost = round(0.01 * cost_scale * (1 + rng.random()), 6)
            data = dict(result)
            data.update(
                id=f"00000000-0000-4000-8000-{seed:04d}{n:08d}",
                task_name=task,
                trial_name=name,
                agent_info={
                    "name": agent,
                    "version": "2.0.0",
                    "model_info": {"name": model, "provider": "anthropic"},
                },
                agent_result={
                    **result["agent_result"],
                    "cost_usd": cost,
                    "n_output_tokens": int(200 * cost_scale) + rng.randrange(50),
                },
                verifier_result={"rewards": {"reward": value}},
            )
            (trial / "result.json").write_text(json.dumps(data))
            (trial / "verifier" / "reward.txt").write_text(f"{value:g}\n")
            if with_trajectory:
                (trial / "agent" / "trajectory.json").write_text(
                    json.dumps({**trajectory, "session_id": name})
                )
            n += 1
    (folder / "result.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "id": f"00000000-0000-4000-8000-{seed:012d}",
                "started_at": result["started_at"],
                "finished_at": result["finished_at"],
                "n_total_trials": n,
                "stats": {"n_completed_trials": n},
                "trial_results": [],
            }
        )
    )
    return folder


#: Run in the Harbor interpreter: validate each JSON file with the Harbor model it is an
#: instance of.
_VALIDATE = """
import json, sys
from harbor.models.job.result import JobResult
from harbor.models.registry import DatasetSpec
from harbor.models.trajectories import Trajectory
from harbor.models.trial.result import TrialResult
for arg in sys.argv[1:]:
    data = json.loads(open(arg).read())
    if isinstance(data, list):
        models = [(DatasetSpec, item) for item in data]
    elif str(data.get("schema_version", "")).startswith("ATIF"):
        models = [(Trajectory, data)]
    elif "trial_name" in data:
        models = [(TrialResult, data)]
    else:
        models = [(JobResult, data)]
    for model, item in models:
        try:
            model.model_validate(item)
        except Exception as exc:
            print(f"{arg}: {model.__name__}: {' '.join(str(exc).split())[:300]}")
"""


def harbor_python() -> str:
    """An interpreter where Harbor is installed (tests/binaries.py:
    ``$PROFILER_HARBOR_PYTHON`` or ``.harbor-venv``).

    Harbor needs Python >= 3.12, this package supports 3.11: Harbor's own models run in their own
    interpreter, e.g. ``python3.12 -m venv h && h/bin/pip install --no-deps harbor
    pydantic toml shortuuid``.
    The JSON-schema checks (tests/test_atif.py) run everywhere.
    """
    from binaries import harbor_interpreter

    return harbor_interpreter()


def harbor_problems(python: str, files: list[Path]) -> list[str]:
    """What Harbor's pydantic models say of ``files`` (trial/job results, ATIF
    trajectories, registries): one line each."""
    import subprocess

    done = subprocess.run(
        [python, "-c", _VALIDATE, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()

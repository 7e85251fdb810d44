"""A multi-step Harbor task in one container: each step's agent turn and verifier in
order, the row's reward by its strategy.

The ``multi-step`` conformance task writes a file in its first step and
appends to it in its second; the second step's verifier passes only when the
first step's file is still there (one environment for every step). The oracle
runs each step's solution and passes; the simulated agent does nothing, fails
the first step, and its ``min_reward = 1`` keeps the second from running.
Under ``CI=true`` a Docker daemon that cannot start fails these tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from tests.sandbox_runtimes import containers_named, docker_daemon, require
from tests.scripted.agent_runs import profiler, run_tasks

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

CONFORMANCE = Path(__file__).parent / "fixtures" / "harbor_conformance"


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon; no trial container may be left behind."""
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield
        from profiler_core.environments.containers import wait_removed

        wait_removed()
        assert not containers_named("docker", "profiler-"), (
            "a trial's container was left behind"
        )


def _task(folder: Path, strategy: str = "mean") -> Path:
    """The multi-step conformance task, its steps' tests layered over a task-level
    ``tests/`` they read."""
    tasks = folder / "tasks"
    task = tasks / "multi-step"
    shutil.copytree(CONFORMANCE / "multi-step", task)
    toml = task / "task.toml"
    toml.write_text(
        toml.read_text().replace(
            'multi_step_reward_strategy = "mean"',
            f'multi_step_reward_strategy = "{strategy}"',
        )
    )
    # Harbor uploads the task's tests/ and then the step's own over it: the step's test
    # reads the task's file
    (task / "tests").mkdir()
    (task / "tests" / "expected-first.txt").write_text("one\n")
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\necho 0 > /logs/verifier/reward.txt  # overwritten by each step's own\n"
    )
    first = task / "steps" / "write" / "tests" / "test.sh"
    first.write_text(
        "#!/bin/bash\n"
        "if cmp -s /app/notes.txt /tests/expected-first.txt; then echo 1 > "
        "/logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    # the second step passes only when its workdir/ arrived and its setup.sh ran in the
    # working folder before it
    second = task / "steps" / "extend" / "tests" / "test.sh"
    second.write_text(
        second.read_text().replace(
            'if [ "$(cat', 'if [ -s /app/step-two-ready.txt ] && [ "$(cat', 1
        )
    )
    return tasks


def _run(
    folder: Path, provider: dict, strategy: str = "mean", kind: str = "docker"
) -> tuple[str, dict]:
    _task(folder, strategy)
    run_id, found = run_tasks(folder, provider, kind=kind, prefix="steps")
    assert [r["scenarioId"] for r in found] == ["multi-step"], found
    return run_id, found[0]


def test_the_oracle_passes_every_step_in_one_container(docker, tmp_path):
    run_id, row = _run(tmp_path, {"id": "oracle", "model": "none"})
    assert row.get("error") is None and row["reward"] == 1 and row["success"] is True, (
        row
    )
    assert (
        row["extensions"]["reward_write"] == 1
        and row["extensions"]["reward_extend"] == 1
    ), row["extensions"]
    kept = tmp_path / "reports" / run_id / "verifier" / "multi-step" / "baseline-iter-0"
    assert (kept / "write" / "reward.txt").read_text().strip() == "1"
    assert (kept / "extend" / "reward.txt").read_text().strip() == "1"


def test_the_simulated_agent_fails_the_first_step_and_min_reward_stops_the_rest(
    docker, tmp_path
):
    _, row = _run(
        tmp_path, {"id": "simulated", "model": "sim-small", "options": {"seed": 3}}
    )
    assert (
        row.get("error") is None and row["reward"] == 0 and row["success"] is False
    ), row
    assert (
        row["extensions"]["reward_write"] == 0
        and "reward_extend" not in row["extensions"]
    ), row["extensions"]


def test_final_takes_the_last_step_and_is_none_when_it_did_not_run(docker, tmp_path):
    _, passed = _run(
        tmp_path / "oracle", {"id": "oracle", "model": "none"}, strategy="final"
    )
    assert passed["reward"] == 1 and passed["success"] is True, passed
    _, failed = _run(
        tmp_path / "simulated",
        {"id": "simulated", "model": "sim-small", "options": {"seed": 3}},
        strategy="final",
    )
    assert failed.get("reward") is None and failed["success"] is False, failed


def test_without_a_sandbox_a_multi_step_task_is_refused_in_one_line(tmp_path):
    """Its steps share one environment: under ``sandbox: none`` the profile is refused
    instead of running the first step alone."""
    _task(tmp_path)
    profile = {
        "modes": {"baseline": {"system_instructions": "Do the task."}},
        "scenarios": {"path": "tasks", "format": "harbor"},
        "provider": {"id": "simulated", "model": "sim-small", "options": {"seed": 3}},
        "scorer": {"id": "verify"},
        "execution": {
            "repetitions": 1,
            "warmup": False,
            "sandbox": "none",
            "fail_fast": False,
        },
        "output": {"results_dir": "results", "reports_dir": "reports"},
    }
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(profile))
    done = profiler(
        tmp_path,
        "run",
        "profile.yaml",
        "--run-id",
        "none",
        "--allow-errors",
        timeout=120,
    )
    errors = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if line.startswith("Error:")
    ]
    assert done.returncode == 1 and len(errors) == 1, (
        done.stdout[-2000:] + done.stderr[-2000:]
    )
    assert "execution.sandbox: none cannot run multi-step" in errors[0], errors


def test_the_oracle_passes_every_step_under_podman_too(tmp_path):
    podman = require("podman")
    _, row = _run(tmp_path, {"id": "oracle", "model": "none"}, kind="podman")
    assert (
        row.get("error") is None
        and row["reward"] == 1
        and row["extensions"]["reward_extend"] == 1
    ), row
    assert not containers_named(podman, "profiler-multi-step"), (
        "a trial's container was left behind"
    )

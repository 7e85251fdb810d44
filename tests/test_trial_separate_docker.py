"""A separate verifier (``environment_mode = "separate"``) in its own container, handed
the agent's artifacts.

The ``separate-verifier`` conformance task's verifier passes only in its own
image (``tests/Dockerfile`` leaves a marker), without the agent's ``/app``, and
with the answer the agent wrote handed over under ``/logs/artifacts`` (the
task's declared artifact). The oracle passes; the simulated agent writes no
answer and fails. Under ``CI=true`` a Docker daemon that cannot start fails these tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.sandbox_runtimes import containers_named, docker_daemon, require
from tests.scripted.agent_runs import run_tasks

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

CONFORMANCE = Path(__file__).parent / "fixtures" / "harbor_conformance"


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon; no trial container (the agent's or the verifier's) may be left behind."""
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield
        from profiler_core.environments.containers import wait_removed

        wait_removed()
        assert not containers_named("docker", "profiler-"), (
            "a trial's container was left behind"
        )


def _run(
    folder: Path, provider: dict, artifacts: bool = True, kind: str = "docker"
) -> tuple[str, dict]:
    task = folder / "tasks" / "separate-verifier"
    shutil.copytree(CONFORMANCE / "separate-verifier", task)
    if (
        not artifacts
    ):  # nothing declared: nothing of the agent's environment reaches the verifier's
        toml = task / "task.toml"
        toml.write_text(
            toml.read_text().replace('artifacts = ["/app/answer.txt"]\n', "")
        )
    run_id, found = run_tasks(folder, provider, kind=kind, prefix="apart")
    assert [r["scenarioId"] for r in found] == ["separate-verifier"], found
    return run_id, found[0]


def test_the_oracle_passes_with_the_verifier_in_its_own_container(docker, tmp_path):
    run_id, row = _run(tmp_path, {"id": "oracle", "model": "none"})
    assert row.get("error") is None and row["reward"] == 1 and row["success"] is True, (
        row
    )
    kept = (
        tmp_path
        / "reports"
        / run_id
        / "verifier"
        / "separate-verifier"
        / "baseline-iter-0"
    )
    assert (kept / "reward.txt").read_text().strip() == "1"


def test_without_declared_artifacts_the_verifier_gets_nothing_of_the_agents(
    docker, tmp_path
):
    _, row = _run(tmp_path, {"id": "oracle", "model": "none"}, artifacts=False)
    assert (
        row.get("error") is None and row["reward"] == 0 and row["success"] is False
    ), row


def test_the_simulated_agent_fails_it(docker, tmp_path):
    _, row = _run(
        tmp_path, {"id": "simulated", "model": "sim-small", "options": {"seed": 3}}
    )
    assert (
        row.get("error") is None and row["reward"] == 0 and row["success"] is False
    ), row


def test_the_oracle_passes_under_podman_too(tmp_path):
    podman = require("podman")
    _, row = _run(tmp_path, {"id": "oracle", "model": "none"}, kind="podman")
    assert row.get("error") is None and row["reward"] == 1 and row["success"] is True, (
        row
    )
    assert not containers_named(podman, "profiler-separate-verifier"), (
        "a trial's container was left behind"
    )


# -- a step's own separate verifier
# ----------------------------------------------------------------------


def _steps(folder: Path, artifacts: bool = True) -> tuple[str, dict]:
    """The ``multi-step-separate`` task: step ``write`` judged where the agent ran, step
    ``check`` apart."""
    task = folder / "tasks" / "multi-step-separate"
    shutil.copytree(CONFORMANCE / "multi-step-separate", task)
    if not artifacts:
        toml = task / "task.toml"
        toml.write_text(
            toml.read_text().replace('artifacts = ["/app/notes.txt"]\n', "")
        )
    run_id, found = run_tasks(folder, {"id": "oracle", "model": "none"}, prefix="apart")
    assert [r["scenarioId"] for r in found] == ["multi-step-separate"], found
    return run_id, found[0]


def test_a_steps_separate_verifier_runs_in_its_own_image_after_that_step(
    docker, tmp_path
):
    run_id, row = _steps(tmp_path)
    assert row.get("error") is None and row["reward"] == 1 and row["success"], row
    assert (
        row["extensions"]["reward_write"] == 1
        and row["extensions"]["reward_check"] == 1
    ), row["extensions"]
    kept = tmp_path / "reports" / run_id / "verifier" / "multi-step-separate"
    assert (
        kept / "baseline-iter-0" / "check" / "reward.txt"
    ).read_text().strip() == "1"


def test_a_steps_separate_verifier_without_declared_artifacts_gets_nothing(
    docker, tmp_path
):
    _, row = _steps(tmp_path, artifacts=False)
    assert row.get("error") is None and row["reward"] == 0.5 and not row["success"], row
    assert (
        row["extensions"]["reward_write"] == 1
        and row["extensions"]["reward_check"] == 0
    ), row["extensions"]

"""Nothing outlives the profiler: SIGTERM is a clean stop, and a SIGKILLed run's
containers and folders go at the next start.

Real ``profiler run`` subprocesses with a docker sandbox: the ``oracle``
provider runs a task's reference solution (``sleep``) in a container, the
profiler is killed while it runs, and what it left is looked for.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from tests.sandbox_runtimes import docker_daemon, require
from tests.scripted.agent_runs import profiler, start_profiler

#: their containers are named profiler-*: they run beside no other test that counts
#: those (tests/test_sandbox.py)
pytestmark = pytest.mark.xdist_group("containers")

LABEL = "agent-profiler.run"


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield


def _task_profile(root: Path, sandbox: str = "docker") -> Path:
    """One Harbor task whose reference solution sleeps (no Dockerfile: the host image),
    run by the oracle in docker."""
    task = root / "tasks" / "sleepy"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "task.toml").write_text("[agent]\ntimeout_sec = 300\n")
    (task / "instruction.md").write_text("Wait.\n")
    (task / "environment" / "data.txt").write_text("data\n")
    (task / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    (task / "solution" / "solve.sh").write_text("sleep 300\n")
    profile = {
        "modes": {"m": {"system_instructions": "x"}},
        "scenarios": {"path": "tasks", "format": "harbor"},
        "provider": {"id": "oracle"},
        "scorer": {"id": "verify"},
        "execution": {"repetitions": 1, "warmup": False, "sandbox": sandbox},
    }
    path = root / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def _simulated_profile(root: Path) -> Path:
    (root / "quick").mkdir()
    (root / "quick" / "s.json").write_text(
        json.dumps({"id": "s", "name": "S", "prompt": "p"})
    )
    path = root / "quick.yaml"
    path.write_text(yaml.safe_dump({
        "modes": {"m": {}}, "scenarios": {"path": "quick"}, "provider": {"id": "simulated", "model": "sim-small"},
        "execution": {"repetitions": 1, "warmup": False},
    }))  # fmt: skip
    return path


def _containers(run_id: str, runtime: str = "docker") -> list[str]:
    done = subprocess.run(
        [runtime, "ps", "--all", "--quiet", "--filter", f"label={LABEL}={run_id}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.split()


def _leftover_folders(root: Path) -> list[str]:
    return sorted(
        p.name
        for p in (root / "tmp").iterdir()
        if p.name.startswith("profiler-") and not p.name.startswith("profiler-runs-")
    )


def _start_and_wait_for_the_container(
    root: Path, run_id: str, runtime: str = "docker"
) -> subprocess.Popen[str]:
    run = start_profiler(
        root,
        "run",
        str(root / "profile.yaml"),
        "--run-id",
        run_id,
        "--no-report",
        "--progress",
        "none",
    )
    deadline = time.monotonic() + 60
    while not _containers(run_id, runtime):
        if run.poll() is not None or time.monotonic() > deadline:
            run.kill()
            pytest.fail(
                f"no container of run {run_id} appeared: {run.communicate()[1][-2000:]}"
            )
        time.sleep(0.3)
    return run


@pytest.mark.parametrize("runtime", ["docker", "podman"])
def test_a_sigkilled_runs_containers_and_folders_are_removed_by_the_next_start(
    tmp_path, runtime, request
):
    if runtime == "docker":
        request.getfixturevalue("docker")
    else:
        require("podman")
    _task_profile(tmp_path, runtime)
    run = _start_and_wait_for_the_container(tmp_path, "killed", runtime)
    try:
        os.kill(run.pid, signal.SIGKILL)  # no clean-up of any kind runs
        run.communicate(timeout=30)
        assert _containers("killed", runtime), (
            "the container outlived the profiler (what this test is about)"
        )
        assert _leftover_folders(tmp_path), (
            "the killed run's temporary folders are still there"
        )
        if (
            runtime == "docker"
        ):  # the next start is the killed run's own --resume, its solution now quick
            (tmp_path / "tasks" / "sleepy" / "solution" / "solve.sh").write_text(
                "true\n"
            )
            done = profiler(
                tmp_path,
                "run",
                str(tmp_path / "profile.yaml"),
                "--resume",
                "killed",
                "--no-report",
                "--progress",
                "none",
            )
        else:  # another run's start
            done = profiler(
                tmp_path,
                "run",
                str(_simulated_profile(tmp_path)),
                "--run-id",
                "next",
                "--no-report",
                "--progress",
                "none",
            )
        assert done.returncode == 0, done.stderr
        assert (
            "run killed (process " in done.stderr
            and "removed 1 container(s)" in done.stderr
        ), done.stderr
        assert _containers("killed", runtime) == []
        assert _leftover_folders(tmp_path) == []
        assert not (
            tmp_path / "tmp" / f"profiler-runs-{os.getuid()}"
        ).exists()  # the last record takes its folder along
    finally:
        for container in _containers("killed", runtime):
            subprocess.run(
                [runtime, "rm", "--force", container], capture_output=True, timeout=60
            )


def test_sigterm_stops_the_run_like_ctrl_c(tmp_path, docker):
    _task_profile(tmp_path)
    run = _start_and_wait_for_the_container(tmp_path, "termed")
    try:
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=120)
        assert run.returncode != 0 and "Traceback" not in err, err
        manifest = json.loads(
            (tmp_path / "results" / "termed.manifest.json").read_text()
        )
        assert manifest["status"] == "interrupted"
        assert _containers("termed") == []
        assert _leftover_folders(tmp_path) == []
    finally:
        run.kill()
        for container in _containers("termed"):
            subprocess.run(
                ["docker", "rm", "--force", container], capture_output=True, timeout=60
            )

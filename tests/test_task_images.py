"""Building a task's image never reaches for a registry: the build command, and docker's
missing base images.

A stand-in ``docker`` / ``podman`` program on ``PATH`` records what it is asked
to do; the real runtimes build the images in tests/test_harbor_docker.py.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
import trio

from profiler_core.model import Scenario, TaskEnvironment
from profiler_core.runner.task_images import (
    TaskEnvironments,
    TaskImageError,
    base_images,
    build_command,
)
from profiler_core.sandbox import SandboxSettings
from profiler_core.sandbox.containers import HOST_IMAGE

#: answers ``image inspect`` for the host image only; records every call (the build's
#: environment is a minimal one)
_RUNTIME = """#!/bin/sh
echo "$@" >> {log}
if [ "$1 $2" = "image inspect" ]; then
    [ "$3" = {local} ] && exit 0
    exit 1
fi
exit 0
"""


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    """A stand-in ``docker`` and ``podman`` first on PATH; returns its log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "runtime.log"
    for name in ("docker", "podman"):
        (bin_dir / name).write_text(
            _RUNTIME.format(log=shlex.quote(str(log)), local=shlex.quote(HOST_IMAGE))
        )
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _task(tmp_path: Path, dockerfile: str) -> Scenario:
    folder = tmp_path / "environment"
    folder.mkdir()
    (folder / "Dockerfile").write_text(dockerfile)
    return Scenario(
        id="t",
        name="T",
        prompt="p",
        environment=TaskEnvironment(dockerfile=str(folder / "Dockerfile")),
    )


def _prepare(tmp_path: Path, kind: str, scenario: Scenario):
    (tmp_path / "root").mkdir()
    environments = TaskEnvironments(SandboxSettings(sandbox=kind), tmp_path / "root")
    return trio.run(environments.sandbox_for, scenario)


def test_the_build_command_never_pulls():
    dockerfile = Path("/tasks/t/environment/Dockerfile")
    podman = build_command("podman", "podman", "tag", dockerfile)
    assert (
        podman[podman.index("build") + 1] == "--pull=never"
    )  # after podman's global options for this host
    # docker's --pull is yes/no: `--pull=never` is refused ("strconv.ParseBool"), so
    # false, and the bases checked.
    assert build_command("docker", "docker", "tag", dockerfile) == [
        "docker",
        "build",
        "--pull=false",
        "-t",
        "tag",
        "-f",
        str(dockerfile),
        "/tasks/t/environment",
    ]


def test_the_base_images_are_the_stages_starting_points(tmp_path):
    (tmp_path / "Dockerfile").write_text(
        "ARG BASE=debian\nFROM --platform=linux/amd64 python:3.12-slim AS "
        "build\nRUN true\nFROM build\n"
        "FROM scratch\nFROM ${BASE}\nFROM localhost/agent-profiler-host:1\n"
    )
    assert base_images(tmp_path / "Dockerfile") == [
        "python:3.12-slim",
        "localhost/agent-profiler-host:1",
    ]


@pytest.mark.parametrize(
    "kind, pull", [("docker", "--pull=false"), ("podman", "--pull=never")]
)
def test_a_task_on_a_local_base_image_is_built_without_pulling(
    tmp_path, runtime, kind, pull
):
    _prepare(tmp_path, kind, _task(tmp_path, f"FROM {HOST_IMAGE}\nWORKDIR /app\n"))
    [build] = [
        line.split()
        for line in runtime.read_text().splitlines()
        if line.startswith("build ")
    ]
    assert build[:2] == ["build", pull]


def test_docker_refuses_a_base_image_it_would_have_to_pull(tmp_path, runtime):
    scenario = _task(tmp_path, "FROM python:3.12-slim\nWORKDIR /app\n")
    with pytest.raises(TaskImageError) as caught:
        _prepare(tmp_path, "docker", scenario)
    dockerfile = tmp_path / "environment" / "Dockerfile"
    assert (
        str(caught.value)
        == f"{dockerfile}: the base image 'python:3.12-slim' is not in docker's "
        "local images (no registry is used)"
    )
    assert not [
        line for line in runtime.read_text().splitlines() if line.startswith("build")
    ]  # nothing was built

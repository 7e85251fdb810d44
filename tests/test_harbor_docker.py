"""One Harbor task in Docker (and Podman), its image built offline from its Dockerfile:
the oracle and the real Claude Code.

The task's Dockerfile builds on the sandbox's offline image of the host's
toolchain, sets ``TASK_MARKER`` and copies ``calc_source.py`` to
``/app/calc.py``. So a session that finds ``/app/calc.py`` works in a
workspace copied out of the built image (the environment folder only has
``calc_source.py``), and a command that sees ``$TASK_MARKER`` runs in that
image. The verifier (``tests/test.sh``, shown at ``/tests``) checks both and
writes the reward to ``/logs/verifier/reward.txt``.

Claude Code's program lies outside the host toolchain's folders: the provider
mounts it read-only; it reaches the scripted model on 127.0.0.1 through the
sandbox's relay. Under ``CI=true`` a Docker daemon that cannot start, or a
missing ``podman``, fails these tests.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from tests.binaries import agent_binary
from tests.sandbox_runtimes import containers_named, docker_daemon, require
from tests.scripted.agent_runs import profiler, rows

from profiler_core.fakemodel import FakeModelServer, Text, ToolCall, steps
from profiler_core.sandbox.containers import HOST_IMAGE

# One xdist worker runs every test that uses Docker or Podman: they share its daemon and
# check for leftover containers.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

DOCKERFILE = f"""FROM {HOST_IMAGE}
ENV TASK_MARKER=built-from-dockerfile
WORKDIR /app
COPY calc_source.py /app/calc.py
COPY token.txt /app/token.txt
"""
TEST_SH = """#!/bin/bash
cd /app || exit 1
echo "marker=${TASK_MARKER:-unset}"
if PYTHONDONTWRITEBYTECODE=1 python3 -c 'from calc import add; assert add(2, 3) == 5' && [ "$TASK_MARKER" = built-from-dockerfile ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
SOLVE_SH = """#!/bin/bash
set -e
sed -i 's/a - b/a + b/' /app/calc.py
echo "$TASK_MARKER" > /app/solved-in.txt
"""
AGENT_EDIT = (
    "sed -i 's/a - b/a + b/' /app/calc.py && echo \"$TASK_MARKER\" > /app/agent-in.txt"
)


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon (started here when none runs); the images built by the tests are
    removed afterwards."""
    logs = tmp_path_factory.mktemp("dockerd")
    with docker_daemon(logs):
        before = set(_task_images())
        yield
        made = sorted(set(_task_images()) - before)
        if made:
            subprocess.run(
                ["docker", "image", "rm", "--force", *made],
                capture_output=True,
                timeout=120,
                check=False,
            )
        assert not containers_named("docker", "profiler-"), (
            "a container was left behind"
        )


def _task_images(binary: str = "docker") -> list[str]:
    done = subprocess.run(
        [
            binary,
            "images",
            "--format",
            "{{.Repository}}:{{.Tag}}",
            "--filter",
            "reference=localhost/agent-profiler-task-*",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout.split()


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> Path:
    """A folder with one Harbor task (a fresh token each session, so its image is built,
    not found)."""
    root = tmp_path_factory.mktemp("harbor-docker") / "tasks"
    task = root / "docker-calc"
    for part in ("environment", "tests", "solution"):
        (task / part).mkdir(parents=True)
    (task / "task.toml").write_text(
        "[agent]\ntimeout_sec = 240.0\n[verifier]\ntimeout_sec = "
        '60.0\n[metadata]\ntags = ["docker"]\n'
    )
    (task / "instruction.md").write_text(
        "The tests of /app/calc.py fail: add() subtracts. Fix it.\n"
    )
    (task / "environment" / "Dockerfile").write_text(DOCKERFILE)
    (task / "environment" / "calc_source.py").write_text(
        "def add(a, b):\n    return a - b\n"
    )
    (task / "environment" / "token.txt").write_text(uuid.uuid4().hex)
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "solution" / "solve.sh").write_text(SOLVE_SH)
    return root


def _profile(
    folder: Path, tasks: Path, provider: dict, sandbox: str = "docker"
) -> Path:
    profile = {
        "modes": {"fix": {"system_instructions": "Fix the code."}},
        "scenarios": {"path": str(tasks), "format": "harbor"},
        "provider": provider,
        "scorer": {"id": "verify"},
        "execution": {"repetitions": 1, "warmup": False, "sandbox": sandbox},
        "output": {"keep_workspaces": "all"},
    }
    path = folder / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def _kept(folder: Path, run_id: str) -> Path:
    return folder / "reports" / run_id / "workspaces" / "docker-calc" / "fix-iter-0"


def test_the_oracle_solves_the_task_in_the_image_built_from_its_dockerfile(
    tmp_path, docker, tasks
):
    path = _profile(
        tmp_path,
        tasks,
        {"id": "claude-code", "options": {"base_url": "http://127.0.0.1:9"}},
    )
    done = profiler(
        tmp_path,
        "run",
        str(path),
        "--provider",
        "oracle",
        "--run-id",
        "o",
        "--no-report",
        "--progress",
        "none",
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = rows(tmp_path, "o")
    assert row["provider"] == "oracle" and row["success"] and row["reward"] == 1.0, row
    assert [(d["id"], d["passed"]) for d in row["checkpointDetails"]] == [
        ("verify:tests", True)
    ]
    workspace = _kept(tmp_path, "o")
    # The workspace is the image's /app: calc.py (copied there by the Dockerfile), not
    # the environment folder.
    assert sorted(p.name for p in workspace.iterdir()) == [
        "calc.py",
        "solved-in.txt",
        "token.txt",
    ]
    assert (workspace / "solved-in.txt").read_text().strip() == "built-from-dockerfile"
    assert "not applied" not in done.stderr  # the Dockerfile was applied
    assert not Path("/logs/verifier").exists() and not Path("/tests/test.sh").exists()


def test_claude_code_works_in_the_tasks_image_and_the_verifier_judges_it(
    tmp_path, docker, tasks
):
    binary = str(agent_binary("claude", "CLAUDE_BIN"))
    script = steps(
        [
            ToolCall("Bash", {"command": AGENT_EDIT, "description": "fix add"}),
            Text("Done: all tests pass."),
        ]
    )
    with FakeModelServer(script) as server:
        options = {"base_url": server.url, "binary": binary, "max_retries": 1}
        path = _profile(
            tmp_path,
            tasks,
            {"id": "claude-code", "model": "claude-sonnet-4-5", "options": options},
        )
        done = profiler(
            tmp_path,
            "run",
            str(path),
            "--run-id",
            "c",
            "--no-report",
            "--progress",
            "none",
            timeout=600,
        )
        requests = server.messages()
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = rows(tmp_path, "c")
    assert row["success"] and row["reward"] == 1.0 and not row.get("error"), json.dumps(
        row
    )[:2000]
    assert (
        row["tokens"]["total"] > 0 and requests
    )  # the real agent talked to the scripted model
    workspace = _kept(tmp_path, "c")
    assert (workspace / "agent-in.txt").read_text().strip() == "built-from-dockerfile"
    assert "a + b" in (workspace / "calc.py").read_text()


def test_podman_builds_and_runs_the_task_too(tmp_path, tasks):
    podman = require("podman")
    before = set(_task_images(podman))
    try:
        path = _profile(tmp_path, tasks, {"id": "oracle"}, sandbox="podman")
        done = profiler(
            tmp_path,
            "run",
            str(path),
            "--run-id",
            "p",
            "--no-report",
            "--progress",
            "none",
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        [row] = rows(tmp_path, "p")
        assert row["success"] and row["reward"] == 1.0, row
        assert (
            _kept(tmp_path, "p") / "solved-in.txt"
        ).read_text().strip() == "built-from-dockerfile"
    finally:
        made = sorted(set(_task_images(podman)) - before)
        if made:
            subprocess.run(
                [podman, "image", "rm", "--force", *made],
                capture_output=True,
                timeout=120,
                check=False,
            )
    assert not containers_named(podman, "profiler-"), "a container was left behind"

"""A task's ``[environment].env`` is for inside the container, never the container client's own.

A task that sets ``PATH`` (or ``DOCKER_HOST``) used to set it for the ``podman``
or ``docker`` program too: podman then looked for netavark in the task's
``PATH`` and the trial did not start, and a ``DOCKER_HOST`` would have sent the
client to another daemon. The unit tests hold the two helpers every container
command uses; the podman test starts a real trial with a ``PATH`` that lacks
``/usr/sbin``, where podman's network helpers live.
"""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest
import trio
from tests.sandbox_runtimes import containers_named, require

from profiler_core.environments.compose import _main_service
from profiler_core.model import SandboxSettings
from profiler_core.model.environment import TrialSpec
from profiler_core.sandbox.containers import (
    CLIENT_NAMES,
    HOST_IMAGE,
    client_environment,
    env_options,
)

TASK_PATH = "/opt/task/bin:/usr/local/bin:/usr/bin:/bin"


def test_the_client_keeps_its_own_path_and_never_takes_the_tasks_docker_host(
    monkeypatch,
):
    monkeypatch.setenv("PATH", "/usr/sbin:/usr/bin:/bin")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    env = client_environment(
        {"PATH": TASK_PATH, "DOCKER_HOST": "tcp://elsewhere:2375", "TOKEN": "t-1"}
    )
    assert env["PATH"] == "/usr/sbin:/usr/bin:/bin"
    assert "DOCKER_HOST" not in env
    assert env["TOKEN"] == "t-1"


def test_a_client_variable_goes_by_value_every_other_by_name():
    options = env_options({"PATH": TASK_PATH, "TOKEN": "t-1", "HOME": "/root"})
    assert options == ["--env", f"PATH={TASK_PATH}", "--env", "TOKEN", "--env", "HOME"]
    assert "t-1" not in " ".join(options)  # a value that is not a setting stays off it


def test_compose_writes_the_client_variables_by_value_escaped_and_the_rest_by_name():
    spec = TrialSpec(env={"PATH": "/opt/$HOME/bin:/usr/bin", "TOKEN": "t-1"})
    main = _main_service(spec, "img", "c1")
    assert main["environment"] == ["PATH=/opt/$$HOME/bin:/usr/bin", "TOKEN"]


def test_every_client_name_is_kept_from_ours(monkeypatch):
    for name in CLIENT_NAMES:
        monkeypatch.setenv(name, f"ours-{name}")
    env = client_environment({name: "the task's" for name in CLIENT_NAMES})
    assert {name: env[name] for name in CLIENT_NAMES} == {
        name: f"ours-{name}" for name in CLIENT_NAMES
    }


@pytest.mark.slow
@pytest.mark.xdist_group("containers_podman")
def test_a_podman_trial_with_the_tasks_own_path_starts_and_sees_that_path(
    monkeypatch,
):
    from profiler_core.environments.containers import PodmanEnvironment, wait_removed
    from profiler_core.runner.trial import Trials, start_trial, stop_trial

    podman = require("podman")
    monkeypatch.setenv("PATH", os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    environment = types.SimpleNamespace(
        dockerfile=None,
        image=HOST_IMAGE,
        workdir=None,
        env={"PATH": TASK_PATH},
        cpus=None,
        memory_mb=None,
        network=None,
    )
    scenario = types.SimpleNamespace(
        id="task-path", environment=environment, verify=(), setup=(), timeout_ms=60_000
    )
    # network "full": podman sets up a bridge with netavark, found on the client's PATH
    settings = SandboxSettings(
        sandbox="podman", network="full", image=HOST_IMAGE, host_toolchain=True
    )
    trials = Trials(PodmanEnvironment(), settings, Path("/nonexistent"), "task-path")
    run = trio.run(start_trial, trials, scenario, settings, "task-path")
    try:
        seen = trio.run(
            lambda: run.exec(["sh", "-c", 'printf "%s" "$PATH"'], timeout_s=60)
        )
        assert seen.ok and seen.output == TASK_PATH, seen
    finally:
        trio.run(stop_trial, run)
        wait_removed()
    assert not containers_named(podman, "profiler-"), "the trial's container was left"

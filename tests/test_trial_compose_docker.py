"""Compose tasks (``environment/docker-compose.yaml``) as Harbor runs them, with Docker Compose v2.

The ``compose`` conformance task's ``main`` service is where the agent and the
verifier run; its ``web`` service, built from the conformance base image,
serves a secret made when it starts. The verifier asks ``web`` for it too and
writes whether it reached it (the named score ``sidecar``): so a row shows
both phases' networks. Teardown removes every container and network of the
project. Claude Code on the ``model`` network reaches only its model through the
relay. The same runs under podman, Compose talking to a ``podman system service``
of the trial's own. Under ``CI=true`` a missing Docker daemon, podman, the base
image or Compose v2 fails these tests (``bash .ci/install-compose`` installs Compose).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from tests import test_trial_agents_docker as _agents
from tests.binaries import missing
from tests.sandbox_runtimes import containers_named, docker_daemon, require
from tests.scripted.agent_runs import run_tasks

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

CONFORMANCE = Path(__file__).parent / "fixtures" / "harbor_conformance"
#: a server on every address of the host (the agents' trial tests' fixture)
host_server = _agents.host_server


def _networks(prefix: str) -> list[str]:
    done = subprocess.run(
        ["docker", "network", "ls", "--format", "{{.Name}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return [name for name in done.stdout.split() if name.startswith(prefix)]


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon with Compose v2; no container or network of a compose trial is left."""
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        from profiler_core.environments.compose import MISSING, compose_program

        if compose_program() is None:
            missing("docker compose", MISSING)
        yield
        from profiler_core.environments.containers import wait_removed

        wait_removed()
        assert not containers_named("docker", "profiler-compose"), (
            "a compose trial's container was left behind"
        )
        assert not _networks("profiler-compose"), (
            "a compose trial's network was left behind"
        )


def _images(binary: str, prefix: str) -> list[str]:
    """The images named ``prefix…`` (podman puts ``docker.io/library/`` before a bare name)."""
    done = subprocess.run(
        [binary, "images", "--format", "{{.Repository}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    names = [n.removeprefix("docker.io/library/") for n in done.stdout.split()]
    return [n for n in names if n.startswith(prefix)]


def _run(folder: Path, provider: dict, **execution) -> dict:
    shutil.copytree(CONFORMANCE / "compose", folder / "tasks" / "compose")
    before = set(_images("docker", "profiler-compose"))
    _, found = run_tasks(folder, provider, prefix="compose", execution=execution)
    assert [r["scenarioId"] for r in found] == ["compose"], found
    # the run's process waits for its removals before it exits: main, web and their network are gone
    assert not containers_named("docker", "profiler-compose"), (
        "a service outlived its trial"
    )
    assert not _networks("profiler-compose"), "a compose network outlived its trial"
    # and web's image, built for this project only (named after it: one per trial)
    made = set(_images("docker", "profiler-compose")) - before
    assert not made, f"a built image outlived its trial: {made}"
    return found[0]


def _sidecar(row: dict) -> float | None:
    """The verifier's named score ``sidecar`` (``reward_sidecar``): 1 when it reached ``web``."""
    return (row.get("extensions") or {}).get("reward_sidecar")


def test_the_oracle_reaches_the_sidecar_and_the_verifier_does_too(docker, tmp_path):
    row = _run(tmp_path, {"id": "oracle", "model": "none"}, network="full")
    assert row.get("error") is None and row["reward"] == 1 and row["success"], row
    assert _sidecar(row) == 1, row


def test_an_agent_without_network_cannot_reach_the_sidecar_the_verifier_still_can(
    docker, tmp_path
):
    # execution.network model without allowed hosts: the agent's phase has no network, the verifier
    # inherits the task environment's (public): the policy is kept in a compose trial too
    row = _run(tmp_path, {"id": "oracle", "model": "none"})
    assert row.get("error") is None and row["reward"] == 0 and not row["success"], row
    assert _sidecar(row) == 1, row


def test_the_simulated_agent_fails_it(docker, tmp_path):
    row = _run(
        tmp_path,
        {"id": "simulated", "model": "sim-small", "options": {"seed": 3}},
        network="full",
    )
    assert row.get("error") is None and row["reward"] == 0 and not row["success"], row
    assert _sidecar(row) == 1, row


def test_a_broken_compose_file_is_the_cells_setup_error_in_one_line(docker, tmp_path):
    task = tmp_path / "tasks" / "compose"
    shutil.copytree(CONFORMANCE / "compose", task)
    (task / "environment" / "docker-compose.yaml").write_text(
        "services:\n  web: [oops\n"
    )
    _, [row] = run_tasks(tmp_path, {"id": "oracle", "model": "none"}, prefix="compose")
    assert row["errorCode"] == "setup_error", row
    assert (
        "environment/docker-compose.yaml: docker compose config failed: "
        in row["error"]
    )
    assert "\n" not in row["error"], row["error"]


# -- where a compose task cannot run: one line
# -----------------------------------------------------------


def test_under_another_kind_a_compose_task_is_one_line():
    from profiler_core.config.harbor import load_task
    from profiler_core.errors import SandboxError
    from profiler_core.model import SandboxSettings
    from profiler_core.runner.trial_compose import compose_starter

    scenario = load_task(CONFORMANCE / "compose", timeout_default_ms=1_000)
    with pytest.raises(SandboxError) as raised:
        compose_starter(SandboxSettings(sandbox="bwrap"), scenario)
    assert str(raised.value) == (
        "environment/docker-compose.yaml: compose tasks run under execution.sandbox: "
        "docker or podman, not bwrap"
    )


def test_without_compose_v2_the_trial_says_how_to_install_it(monkeypatch):
    from profiler_core.environments import compose
    from profiler_core.errors import SandboxError
    from profiler_core.model.environment import TrialSpec

    monkeypatch.setattr(compose, "_FOUND", {"program": None})
    with pytest.raises(SandboxError) as raised:
        compose.start_compose(
            TrialSpec(name="t"), str(CONFORMANCE / "compose"), pull="never", timeout_s=5
        )
    assert str(raised.value) == compose.MISSING
    assert "\n" not in compose.MISSING and "bash .ci/install-compose" in compose.MISSING


# -- a real agent on the `model` network
# -----------------------------------------------------------------

_PROBE = (
    "import socket\n"
    "for h, p in (('web', 8000), ('{gw}', {hp}), ('127.0.0.1', {mp})):\n"
    "    try:\n"
    "        socket.create_connection((h, p), timeout=3).close(); print(h, 'reached')\n"
    "    except OSError:\n"
    "        print(h, 'refused')\n"
)


@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_an_agent_on_the_model_network_reaches_its_model_and_nothing_else(
    kind, request, tmp_path, host_server, monkeypatch
):
    """``execution.network: model`` in a compose trial: Claude Code in ``main`` reaches its
    model through the relay (the session has tokens), but not the sidecar, the host or the
    model's own port; the verifier, on the task's public network, still reaches ``web``."""
    request.getfixturevalue(kind)
    from urllib.parse import urlsplit

    from tests.binaries import agent_binary

    from profiler_core.fakemodel import FakeModelServer, Shell, Text, steps

    task = tmp_path / "tasks" / "compose"
    shutil.copytree(CONFORMANCE / "compose", task)
    with (task / "tests" / "test.sh").open("a") as tests:
        tests.write("cp /app/net.txt /logs/verifier/net.txt\n")  # kept with the row
    monkeypatch.setenv("I37_MODEL_KEY", _agents.SECRET)
    fetch = (
        "python3 -c 'import urllib.request as u; print(u.urlopen("
        '"http://web:8000/secret.txt", timeout=3).read().decode())\' > answer.txt'
    )
    with FakeModelServer(lambda body: script(body), model="scripted") as server:
        probe = _PROBE.format(
            gw=_agents._gateway(kind), hp=host_server, mp=urlsplit(server.url).port
        )
        script = steps(
            [
                Shell(f'python3 -c "{probe}" > net.txt 2>&1; {fetch}'),
                Text("Done: the secret is in answer.txt."),
            ]
        )
        provider = {
            "id": "claude-code",
            "model": "claude-sonnet-4-5",
            "options": {
                "base_url": server.url,
                "binary": str(agent_binary("claude", "CLAUDE_BIN")),
                "max_retries": 0,
                "api_key_env": "I37_MODEL_KEY",
            },
        }
        run_id, found = run_tasks(
            tmp_path,
            provider,
            kind=kind,
            prefix="compose",
            execution={"network": "model"},
        )
    (row,) = found
    assert row.get("error") is None and row["tokens"]["total"] > 0, row  # its model
    assert row["reward"] == 0 and _sidecar(row) == 1, row  # web: the verifier's only
    net = tmp_path / "reports" / run_id / "verifier" / "compose" / "baseline-iter-0"
    lines = (net / "net.txt").read_text().split("\n")
    assert [line.split()[-1] for line in lines if line.strip()] == ["refused"] * 3, (
        lines
    )
    assert not containers_named(kind, "profiler-compose"), "a relay was left behind"


# -- under podman: Compose v2 against `podman system service`
# ---------------------------------------------------------


def _podman_leftovers(prefix: str) -> list[str]:
    """Containers and networks named ``prefix…`` in podman, and its services of ours."""
    done = subprocess.run(
        ["podman", "network", "ls", "--format", "{{.Name}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    networks = [n for n in done.stdout.split() if n.startswith(prefix)]
    networks += _images("podman", prefix)
    sockets = [str(p) for p in Path("/tmp").glob("profiler-podman-*/podman.sock")]
    services = []  # a `podman system service` on a socket of ours
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service" in argv and any(b"/profiler-podman-" in a for a in argv):
            services.append(b" ".join(argv).decode(errors="replace"))
    return containers_named("podman", prefix) + networks + sockets + services


@pytest.fixture(scope="module")
def podman():
    """Podman with the conformance base image and Compose v2; nothing of a trial left."""
    from profiler_core.environments.compose import MISSING, compose_program

    found = require("podman")
    image = subprocess.run(
        [found, "image", "exists", _agents.BASE_IMAGE], timeout=30, check=False
    )
    if image.returncode != 0:
        missing(f"{_agents.BASE_IMAGE} in podman", "run `bash .ci/build-base-image`")
    if compose_program() is None:
        missing("docker compose", MISSING)
    yield found
    assert not _podman_leftovers("profiler-compose"), "a compose trial was left behind"


def test_under_podman_the_oracle_and_the_verifier_reach_the_sidecar(podman, tmp_path):
    shutil.copytree(CONFORMANCE / "compose", tmp_path / "tasks" / "compose")
    _, [row] = run_tasks(
        tmp_path,
        {"id": "oracle", "model": "none"},
        kind="podman",
        prefix="compose",
        execution={"network": "full"},
    )
    assert row.get("error") is None and row["reward"] == 1 and row["success"], row
    assert _sidecar(row) == 1, row
    # the project's services, its network, the API service and its socket are gone
    assert not _podman_leftovers("profiler-compose"), "a trial outlived its run"


def test_a_podman_service_that_cannot_start_is_one_line(tmp_path):
    """A ``podman system service`` that ends at once: its last line, not a wait."""
    from profiler_core.environments.compose_podman import PodmanService
    from profiler_core.errors import SandboxError

    fake = tmp_path / "podman"
    fake.write_text(
        "#!/bin/sh\necho 'starting' >&2\necho 'Error: cannot listen here' >&2\nexit 125\n"
    )
    fake.chmod(0o755)
    service = PodmanService(str(fake), tmp_path)
    try:
        with pytest.raises(SandboxError) as raised:
            service.wait_ready()
    finally:
        service.stop()
    assert str(raised.value) == "podman system service ended: Error: cannot listen here"
    assert service.process.returncode == 125


def test_a_podman_service_serves_compose_and_ends_by_its_pid(podman, tmp_path):
    """The service answers Docker's ``/_ping`` on its socket; ``stop`` ends it."""
    from profiler_core.environments.compose_podman import PodmanService
    from profiler_core.util.processes import process_alive

    folder = Path(tempfile.mkdtemp(prefix="profiler-podman-", dir="/tmp"))
    try:
        service = PodmanService(podman, folder)
        service.wait_ready()
        assert service.environment["DOCKER_HOST"] == f"unix://{folder}/podman.sock"
        if shutil.which("docker"):  # the Docker client talks to podman's API
            version = subprocess.run(
                ["docker", "--host", service.environment["DOCKER_HOST"], "version"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert "Podman Engine" in version.stdout, version.stdout + version.stderr
        service.stop()
        assert not process_alive(service.process.pid)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

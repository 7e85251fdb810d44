"""A secret given to a docker job is not kept in the container's configuration (``docker
inspect``, the daemon's
files on disk): the job's shell reads it from a private file it then deletes; a task
image with no shell
gets the host's, bound in."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tarfile
import time
from contextlib import nullcontext
from pathlib import Path

import pytest
from tests.sandbox_runtimes import containers_named, docker_daemon, require

from profiler_core.sandbox import Job, SandboxSettings, confine
from profiler_core.sandbox.containers import container_pid
from profiler_core.util.descendants import descendants

#: their containers are named profiler-*: they run beside no other test that counts
#: those (tests/test_sandbox.py)
pytestmark = pytest.mark.xdist_group("containers")

SECRET = "sk-test-0123456789abcdef-not-real"


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield


def test_the_key_reaches_the_program_but_not_docker_inspect(tmp_path, docker):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = 'echo "key=$MY_API_KEY plain=$PLAIN"; sleep 5'
    job = Job(argv=("sh", "-c", script), env={"PATH": "/usr/bin:/bin", "MY_API_KEY": SECRET, "PLAIN": "visible"},
              workspace=workspace, name="secret")  # fmt: skip
    with confine(SandboxSettings(sandbox="docker", network="none"), job) as box:
        name = box.containers[0]
        process = subprocess.Popen(box.argv, env=box.env, cwd=box.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while True:
                inspected = subprocess.run(
                    ["docker", "inspect", name],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                if (
                    inspected.returncode == 0
                    or time.monotonic() > deadline
                    or process.poll() is not None
                ):
                    break
                time.sleep(0.2)
            time.sleep(1)  # the program runs: its shell has read the file
            left_on_disk = (box._layout.root / "secrets" / "env").exists()
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, err
    assert f"key={SECRET} plain=visible" in out  # the program has its key
    assert inspected.returncode == 0, inspected.stderr
    config = json.loads(inspected.stdout)[0]["Config"]
    assert "PLAIN=visible" in config["Env"]  # what is not secret still goes by --env
    assert SECRET not in inspected.stdout and " ".join(box.argv).count(SECRET) == 0
    assert SECRET not in json.dumps(box.env)  # nor in the docker client's environment,
    assert (
        not left_on_disk
    )  # nor on disk while the program runs (its shell deleted the file)
    assert name not in containers_named(
        "docker", "profiler-"
    )  # removed with the sandbox


def _shellless_image(binary: str, tmp_path) -> str:
    """An image holding only the host's ``sleep`` and its libraries: no shell, no ``rm``."""
    from profiler_core.sandbox.containers import _linked

    program = shutil.which("sleep") or "/bin/sleep"
    loader, libraries = _linked(program)
    files = [Path(program), *libraries.values(), *([loader] if loader else [])]
    archive = tmp_path / "image.tar"
    with tarfile.open(archive, "w") as tar:
        for path in files:
            tar.add(os.path.realpath(path), arcname=str(path).lstrip("/"))
        assert not any(n.endswith(("/sh", "/rm")) for n in tar.getnames())
    name = "localhost/agent-profiler-test-noshell:1"
    done = subprocess.run(
        [binary, "import", str(archive), name], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return name


def _environ_below(pid: int) -> list[bytes]:
    """The environments of the processes below ``pid`` (the program under the container's init)."""
    found = []
    for child in descendants(pid):
        try:
            found.append(Path(f"/proc/{child}/environ").read_bytes())
        except OSError:
            pass
    return found


@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_an_image_without_a_shell_gets_its_key_outside_docker_inspect(
    tmp_path, kind, tmp_path_factory
):
    binary = require(kind)
    with (
        docker_daemon(tmp_path_factory.mktemp("d"))
        if kind == "docker"
        else nullcontext()
    ):
        image = _shellless_image(binary, tmp_path)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        env = {"PATH": "/usr/bin:/bin", "MY_API_KEY": SECRET, "PLAIN": "visible"}
        job = Job(argv=(shutil.which("sleep") or "/bin/sleep", "30"), env=env,
                  workspace=workspace, image=image, name="noshell")  # fmt: skip
        with confine(SandboxSettings(sandbox=kind, network="none"), job) as box:
            name = box.containers[0]
            process = subprocess.Popen(box.argv, env=box.env, cwd=box.cwd, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
            try:
                environs: list[bytes] = []
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and process.poll() is None:
                    pid = container_pid(binary, kind, name)
                    environs = _environ_below(pid) if pid else []
                    if any(b"MY_API_KEY=" in e for e in environs):
                        break
                    time.sleep(0.2)
                inspected = subprocess.run([binary, "inspect", name], capture_output=True,
                                           text=True, timeout=60)  # fmt: skip
                left_on_disk = (box._layout.root / "secrets" / "env").exists()
            finally:
                os.killpg(process.pid, signal.SIGKILL)
                _, err = process.communicate(timeout=60)
        subprocess.run(
            [binary, "rmi", "--force", image], capture_output=True, check=False
        )
    assert inspected.returncode == 0, (inspected.stderr, err)
    # The program (no shell in its image) has its key, by the host's shell bound in for a moment.
    assert any(f"MY_API_KEY={SECRET}".encode() in e for e in environs), err
    assert not any(b"LD_LIBRARY_PATH" in e for e in environs)
    config = json.loads(inspected.stdout)[0]["Config"]
    assert "PLAIN=visible" in config["Env"]
    assert SECRET not in inspected.stdout and SECRET not in " ".join(box.argv)
    assert SECRET not in json.dumps(box.env) and not left_on_disk


@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_a_trials_secret_variables_reach_each_exec_but_not_docker_inspect(
    kind, tmp_path_factory
):
    from profiler_core.environments.containers import (
        DockerEnvironment,
        PodmanEnvironment,
        wait_removed,
    )
    from profiler_core.model.environment import TrialSpec

    binary = require(kind)
    environment = DockerEnvironment() if kind == "docker" else PodmanEnvironment()
    spec = TrialSpec(name="secrets", env={"TASK_API_KEY": SECRET, "PLAIN": "visible"})
    with (
        docker_daemon(tmp_path_factory.mktemp("d"))
        if kind == "docker"
        else nullcontext()
    ):
        trial = environment.start(spec)
        try:
            inspected = subprocess.run([binary, "inspect", trial.name], capture_output=True,
                                       text=True, timeout=60)  # fmt: skip
            seen = trial.exec(["sh", "-c", 'echo "$TASK_API_KEY $PLAIN"'], timeout_s=60)
        finally:
            trial.stop()
            wait_removed()
    assert inspected.returncode == 0, inspected.stderr
    assert "PLAIN=visible" in json.loads(inspected.stdout)[0]["Config"]["Env"]
    assert SECRET not in inspected.stdout
    assert seen.output.strip() == f"{SECRET} visible", seen

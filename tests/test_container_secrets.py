"""A secret given to a docker job is not kept in the container's configuration (``docker inspect``, the daemon's
files on disk): the job's shell reads it from a private file it then deletes."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from tests.sandbox_runtimes import containers_named, docker_daemon

from profiler_core.sandbox import Job, SandboxSettings, confine

#: their containers are named profiler-*: they run beside no other test that counts those (tests/test_sandbox.py)
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

"""What one container trial asks of the runtime: twelve calls, and ``put`` in one of them.

A trial's wall time at concurrency is mostly the runtime's own commands
(``docker exec``, ``cp``, ``network``), each a client process and a round
trip. The oracle's trial of a one-script task is counted through a shim in
front of the real ``docker`` on ``PATH``: a call added to the trial's path
fails here by name. ``put_scripts`` (the task's ``tests/`` and ``solution/``)
is checked on real containers: the folder replaced, its scripts executable,
the verifier's logs folder made, and the two-call path (a shell, then the
runtime's ``cp``) where the image's ``tar`` cannot unpack the archive. Under
``CI=true`` a missing runtime fails these tests.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.sandbox_runtimes import docker_daemon, require
from tests.scripted.agent_runs import run_tasks

from profiler_core.model import TrialMount, TrialSpec
from profiler_core.sandbox.containers import HOST_IMAGE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

#: the trial's calls, in order: start; the working folder given to the agent's user;
#: the agent's network; the solution uploaded and run; what the agent left listed; the
#: verifier's network; the tests uploaded and run; its logs copied out; the artifacts
#: measured (an empty folder is not copied); the removal (in the background)
TRIAL_CALLS = [
    "run",
    "exec",
    "network disconnect",
    "exec",
    "exec",
    "exec",
    "network connect",
    "exec",
    "exec",
    "cp",
    "exec",
    "rm",
]


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon."""
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield


def _task(root: Path) -> None:
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text(
        f"FROM {HOST_IMAGE}\nWORKDIR /app\n"
    )
    (root / "instruction.md").write_text("Write /app/hello.txt.\n")
    (root / "task.toml").write_text(
        'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n'
    )
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(
        "#!/bin/sh\necho hello > /app/hello.txt\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(
        "#!/bin/sh\ngrep -q hello /app/hello.txt && echo 1 > /logs/verifier/reward.txt"
        " || echo 0 > /logs/verifier/reward.txt\n"
    )


def _shim(folder: Path, real: str, log: Path) -> Path:
    """A ``docker`` that writes each call's arguments to ``log``, then runs the real one."""
    folder.mkdir()
    shim = folder / "docker"
    shim.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    return folder


def _trial_calls(log: Path, prefix: str) -> list[str]:
    """The calls naming the trial's container (``run --name``, ``exec``, ``cp``...), in order."""
    calls = []
    for line in log.read_text().splitlines():
        words = line.split()
        if any(w.split(":")[0].startswith(prefix) for w in words):
            sub = words[0]
            calls.append(f"{sub} {words[1]}" if sub == "network" else sub)
    return calls


def test_one_oracle_trial_is_twelve_runtime_calls(docker, tmp_path, monkeypatch):
    real = require("docker")
    log = tmp_path / "calls.log"
    shim = _shim(tmp_path / "shim", real, log)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    _task(tmp_path / "tasks" / "hello")
    _run_id, rows = run_tasks(tmp_path, {"id": "oracle", "model": "none"})
    assert [(r["reward"], r.get("error")) for r in rows] == [(1, None)]
    assert _trial_calls(log, "profiler-hello-") == TRIAL_CALLS


def _trial(kind: str, spec: TrialSpec):
    from profiler_core.plugins.manager import get_plugin_manager

    factory = get_plugin_manager(entrypoints=False).registry.get("environments", kind)
    return factory.factory().start(spec)


def _tests_folder(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "test.sh").write_text("#!/bin/sh\necho ran\n")
    (root / "sub" / "helper.sh").write_text("#!/bin/sh\necho helped\n")
    (root / "data.txt").write_text("plain\n")
    return root


_LOOK = (
    'for f in /tests/test.sh /tests/sub/helper.sh /tests/data.txt; do [ -x "$f" ] '
    '&& echo "$f x" || echo "$f -"; done; ls /tests; stat -c %a /logs/mine; /tests/test.sh'
)


@pytest.mark.parametrize("kind", ["docker", "podman"])
@pytest.mark.parametrize("tar", ["image", "broken"])
def test_put_scripts_replaces_the_folder_with_its_scripts_executable(
    kind, tar, tmp_path, request
):
    """One ``exec`` unpacks the archive; an image whose ``tar`` fails gets the shell and
    ``cp`` instead, with the same result."""
    require(kind)
    if kind == "docker":
        request.getfixturevalue("docker")
    from profiler_core.environments.containers import wait_removed

    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "tar").write_text(
        "#!/bin/sh\ntouch /tmp/stub-tar-ran\necho 'tar: cannot' >&2\nexit 2\n"
    )
    (stub / "tar").chmod(0o755)
    spec = TrialSpec(
        name="puts",
        env={
            "PATH": "/stub:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        }
        if tar == "broken"
        else {},
        mounts=(TrialMount(source=str(stub), target="/stub", read_only=True),),
    )
    trial = _trial(kind, spec)
    try:
        left = trial.exec(["sh", "-c", "mkdir -p /tests && echo old > /tests/left"])
        assert left.ok, left.output
        trial.put_scripts(_tests_folder(tmp_path / "tests"), "/tests", ("/logs/mine",))
        seen = trial.exec(["sh", "-c", _LOOK])
        assert seen.ok, seen.output
        assert seen.output.split("\n") == [
            "/tests/test.sh x",
            "/tests/sub/helper.sh x",
            "/tests/data.txt -",  # only scripts are made executable
            "data.txt",  # the agent's file is gone: replaced, not merged
            "sub",
            "test.sh",
            "777",
            "ran",
            "",
        ]
        stubbed = trial.exec(["test", "-e", "/tmp/stub-tar-ran"]).ok
        assert stubbed is (tar == "broken")  # the fallback was taken, and only then
    finally:
        trial.stop()
        wait_removed()


def test_a_plain_put_keeps_modes_as_they_are(tmp_path, request):
    """``put`` (an agent's files, a step's) never makes a script executable."""
    kind = "docker" if shutil.which("docker") else "podman"
    require(kind)
    if kind == "docker":
        request.getfixturevalue("docker")
    from profiler_core.environments.containers import wait_removed

    trial = _trial(kind, TrialSpec(name="puts"))
    try:
        trial.put(_tests_folder(tmp_path / "tests"), "/work/tests")
        seen = trial.exec(
            ["sh", "-c", "[ -x /work/tests/test.sh ] && echo x || echo -"]
        )
        assert seen.output.strip() == "-"
    finally:
        trial.stop()
        wait_removed()


def test_the_shim_counts_only_the_trials_calls(tmp_path):
    """The counting above sees a call by the container's name, whatever its place."""
    log = tmp_path / "log"
    log.write_text(
        "exec --env A --workdir /app profiler-hello-m-1 sh -c x\n"
        "cp profiler-hello-m-1:/logs/verifier -\n"
        "network connect podman profiler-hello-m-1\n"
        "create --name profiler-export-1 img true\n"
        "version --format x\n"
    )
    assert _trial_calls(log, "profiler-hello-") == ["exec", "cp", "network connect"]

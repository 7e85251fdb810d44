"""The sandbox programs the sandbox tests need: bwrap, podman, and a Docker daemon
started when none runs.

In CI (``CI=true``) a missing program or a daemon that cannot start fails the
test; on a developer's machine it skips (``tests/binaries.py``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.binaries import in_ci, missing

from profiler_core.sandbox.confinement import Confinement

HINTS = {
    "bwrap": "install the `bubblewrap` package (.ci/run does)",
    "docker": "install the `docker.io` package (.ci/run does, and starts dockerd)",
    "podman": "install the `podman` package (.ci/run does)",
}


def require(kind: str) -> str:
    """The path of ``bwrap`` / ``docker`` / ``podman``; fails in CI, skips elsewhere
    when it is missing."""
    found = shutil.which(kind)
    if not found:
        missing(kind, HINTS[kind])
        raise AssertionError("unreachable")
    return found


def docker_answers() -> bool:
    """Whether the Docker daemon answers."""
    done = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return done.returncode == 0


@contextmanager
def docker_daemon(log_dir: Path) -> Iterator[None]:
    """A running Docker daemon: the one there is, else ``dockerd`` started here and
    ended (by its PID) afterwards."""
    require("docker")
    if docker_answers():
        yield
        return
    dockerd = shutil.which("dockerd")
    if dockerd is None or os.geteuid() != 0:
        _unusable(
            "the Docker daemon is not running and cannot be started here (needs `dockerd` and root)"
        )
    log = open(log_dir / "dockerd.log", "wb")
    process = subprocess.Popen(
        [dockerd], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while not docker_answers():
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (
                    (log_dir / "dockerd.log")
                    .read_text(errors="replace")
                    .strip()
                    .splitlines()[-1:]
                )
                _unusable(f"dockerd did not start: {' '.join(tail) or 'no output'}")
            time.sleep(0.1)
        yield
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


def _unusable(message: str) -> None:
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def run_confined(box: Confinement, timeout: float) -> subprocess.CompletedProcess[str]:
    """A confined job's command (``box`` from ``confine``) run to its end in a session of
    its own, its output captured as text."""
    return subprocess.run(
        box.argv,
        env=box.env,
        cwd=box.cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


def containers_named(binary: str, prefix: str) -> list[str]:
    """Names of the runtime's containers (running or not) starting with ``prefix``."""
    done = subprocess.run(
        [binary, "ps", "-a", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return [name for name in done.stdout.split() if name.startswith(prefix)]

"""`.ci/check-containers`: one line, before the tests, for each container runtime that
cannot run a container here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "check-containers"

#: A runtime whose client answers but whose containers cannot start (as rootless Podman
#: without subuids, or a locked-down daemon).
BROKEN = """#!/bin/sh
case "$1" in
  version) echo 27.0; exit 0 ;;
  image) exit 0 ;;
  *) echo "Error: runc create failed: unable to start container process: operation not permitted" >&2; exit 125 ;;
esac
"""


def test_a_runtime_that_cannot_run_containers_is_one_line_each(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("docker", "podman"):
        (bin_dir / name).write_text(BROKEN)
        (bin_dir / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": os.pathsep.join(
            (str(bin_dir), os.path.dirname(sys.executable), "/usr/bin", "/bin")
        ),
    }
    done = subprocess.run(
        ["bash", str(SCRIPT), sys.executable],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2, done.stdout
    for kind, line in zip(("docker", "podman"), lines, strict=True):
        assert (
            line.startswith(f"note: {kind} cannot run containers on this host (")
            and "operation not permitted" in line
        )
        assert line.endswith("its tests will skip (fail under CI=true)")


def test_a_missing_runtime_is_said_too(tmp_path):
    env = {
        **os.environ,
        "PATH": os.pathsep.join((os.path.dirname(sys.executable), str(tmp_path))),
    }
    done = subprocess.run(
        ["/bin/bash", str(SCRIPT), sys.executable],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "note: docker is not installed: the tests that run docker containers "
        "will skip (fail under CI=true)",
        "note: podman is not installed: the tests that run podman containers "
        "will skip (fail under CI=true)",
    ]

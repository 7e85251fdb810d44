"""Podman works where it runs: the user's CONTAINERS_CONF reaches it, and crun gives way
to runc on cgroups v1/hybrid hosts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.sandbox_runtimes import containers_named, require, run_confined

from profiler_core.sandbox import Job, SandboxSettings, confine
from profiler_core.sandbox.containers import client_environment
from profiler_core.sandbox.podman import cgroup_layout, choose_runtime


def _layout(root: Path, kind: str) -> Path:
    """A fake /sys/fs/cgroup of each kind."""
    root.mkdir()
    if kind == "v2":
        (root / "cgroup.controllers").write_text("cpu memory pids\n")
    else:
        for controller in ("cpu", "memory", "pids"):
            (root / controller).mkdir()
        if kind == "hybrid":
            (root / "unified").mkdir()
    return root


@pytest.mark.parametrize("kind", ["v1", "hybrid", "v2"])
def test_the_cgroup_layout_is_read_from_the_hierarchy(tmp_path, kind):
    assert cgroup_layout(_layout(tmp_path / "cgroup", kind)) == kind


@pytest.mark.parametrize("kind", ["v1", "hybrid"])
def test_crun_on_a_v1_or_hybrid_host_gives_way_to_runc_in_one_line(kind):
    choice = choose_runtime(kind, "/usr/bin/crun", {}, "/usr/sbin/runc")
    assert choice.options == ("--runtime", "/usr/sbin/runc")
    assert (
        choice.line
        == f"podman: cgroups {kind} host, where crun refuses containers: using "
        "runc (/usr/sbin/runc)"
    )


def test_without_runc_the_line_says_what_to_install():
    choice = choose_runtime("hybrid", "/usr/bin/crun", {}, None)
    assert choice.options == () and "install the `runc` package" in (choice.line or "")


@pytest.mark.parametrize(
    ("layout", "configured"),
    [
        ("v2", "/usr/bin/crun"),
        ("v1", "/usr/bin/runc"),
        ("hybrid", "/opt/kata/bin/kata-runtime"),
    ],
)
def test_podmans_own_choice_stands_where_it_works(layout, configured):
    assert choose_runtime(layout, configured, {}, "/usr/sbin/runc").options == ()


def test_the_users_containers_conf_is_honoured_not_overridden():
    choice = choose_runtime(
        "v1",
        "/usr/bin/crun",
        {"CONTAINERS_CONF": "/home/u/runc.conf"},
        "/usr/sbin/runc",
    )
    assert (
        choice.options == ()
        and choice.line is not None
        and "/home/u/runc.conf" in choice.line
    )


def test_the_users_containers_conf_reaches_podman(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTAINERS_CONF", str(tmp_path / "containers.conf"))
    assert client_environment({"A": "1"})["CONTAINERS_CONF"] == str(
        tmp_path / "containers.conf"
    )


@pytest.mark.xdist_group(
    "containers"
)  # a profiler-* container: beside no test that counts them
def test_a_real_podman_container_reads_the_users_containers_conf(tmp_path, monkeypatch):
    """An ``env`` set in the user's own containers.conf is seen inside the job's
    container: podman read that file."""
    binary = require("podman")
    conf = tmp_path / "containers.conf"
    system = Path("/etc/containers/containers.conf")
    conf.write_text(
        (system.read_text() if system.is_file() else "")
        + '\n[containers]\nenv = ["FROM_USER_CONF=yes"]\n'
    )
    monkeypatch.setenv("CONTAINERS_CONF", str(conf))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    job = Job(
        argv=("sh", "-c", "echo conf=$FROM_USER_CONF"),
        env={"PATH": "/usr/bin:/bin"},
        workspace=workspace,
        name="conf",
    )
    with confine(SandboxSettings(sandbox="podman", network="none"), job) as box:
        name = box.containers[0]
        done = run_confined(box, 120)
    assert done.returncode == 0, done.stderr
    assert "conf=yes" in done.stdout
    assert name not in containers_named(binary, "profiler-")  # removed with the sandbox
    assert os.environ["CONTAINERS_CONF"] == str(conf)


# A podman that says it runs crun, logs each command line (and the CONTAINERS_CONF it
# was given) and succeeds,
# except that no trial image exists yet (so it is built).
_FAKE_PODMAN = """#!/bin/sh
if [ "$1" = info ]; then echo /usr/bin/crun; exit 0; fi
echo "conf=$CONTAINERS_CONF $*" >> {log}
case "$*" in *"image inspect localhost/agent-profiler-trial"*) exit 1;; *"image inspect --format"*) echo sha256:0;; esac
cat > /dev/null
exit 0
"""


@pytest.fixture
def hybrid_crun_host(tmp_path, monkeypatch):
    """A cgroups hybrid host whose podman is configured with crun; runc installed:
    ``(podman, runc, log)``."""
    from profiler_core.sandbox import podman

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "podman.log"
    fake = bin_dir / "podman"
    fake.write_text(_FAKE_PODMAN.format(log=log))
    (bin_dir / "runc").write_text("#!/bin/sh\nexit 0\n")
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("CONTAINERS_CONF", raising=False)
    monkeypatch.setattr(podman, "CGROUP_ROOT", _layout(tmp_path / "cgroup", "hybrid"))
    monkeypatch.setattr(podman, "_CHOSEN", {})
    return str(fake), str(bin_dir / "runc"), log


def test_a_task_images_build_uses_the_runtime_podman_run_uses(
    hybrid_crun_host, tmp_path
):
    from profiler_core.runner.task_images import build_command

    fake, runc, _ = hybrid_crun_host
    command = build_command(fake, "podman", "tag", tmp_path / "Dockerfile")
    assert command[:4] == [fake, "--runtime", runc, "build"]
    assert (
        build_command("docker", "docker", "tag", tmp_path / "Dockerfile")[1] == "build"
    )  # docker has no such choice


def test_a_trial_images_build_and_its_container_use_the_runtime_podman_run_uses(
    hybrid_crun_host,
):
    from profiler_core.environments.containers import ContainerTrial, trial_image
    from profiler_core.model.environment import TrialSpec

    fake, runc, log = hybrid_crun_host
    trial_image(fake, "podman", "localhost/some-task:1", ("/logs/agent",), False)
    ContainerTrial(fake, "podman", "profiler-i38c-test").create(
        TrialSpec(network="none"), "localhost/some-task:1", False
    )
    lines = log.read_text().splitlines()
    starts = [line for line in lines if " build " in line or " run " in line]
    assert len(starts) == 2, lines
    assert all(line.startswith(f"conf= --runtime {runc} ") for line in starts), starts


def test_with_the_users_containers_conf_a_build_is_podmans_own_and_reads_it(
    hybrid_crun_host, monkeypatch, tmp_path
):
    from profiler_core.environments.containers import trial_image

    fake, _, log = hybrid_crun_host
    monkeypatch.setenv("CONTAINERS_CONF", str(tmp_path / "mine.conf"))
    trial_image(fake, "podman", "localhost/other-task:1", ("/logs/verifier",), False)
    built = [line for line in log.read_text().splitlines() if " build " in line]
    assert built and built[0].startswith(f"conf={tmp_path / 'mine.conf'} build "), built


@pytest.mark.xdist_group(
    "containers"
)  # a profiler-* container: beside no test that counts them
def test_a_real_podman_build_runs_its_steps_with_the_chosen_runtime(
    tmp_path, monkeypatch
):
    """With crun said to be podman's runtime on a hybrid host, a real build's RUN step
    runs under ``--runtime runc``."""
    import shutil

    from profiler_core.runner.task_images import build_command
    from profiler_core.sandbox import podman
    from profiler_core.sandbox.containers import (
        HOST_DIRS,
        HOST_IMAGE,
        ensure_host_image,
    )

    binary = require("podman")
    runc = shutil.which("runc")
    if runc is None:
        pytest.fail("runc is not installed (install the `runc` package)")
    monkeypatch.setattr(podman, "CGROUP_ROOT", _layout(tmp_path / "cgroup", "hybrid"))
    monkeypatch.setattr(podman, "_CHOSEN", {})
    monkeypatch.setattr(podman, "_configured", lambda _binary: "/usr/bin/crun")
    monkeypatch.delenv("CONTAINERS_CONF", raising=False)
    ensure_host_image(binary)
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text(
        f'FROM {HOST_IMAGE}\nRUN ["/usr/bin/sh", "-c", "echo ran > /ran"]\n'
    )
    tag = f"localhost/agent-profiler-i38c-probe:{os.getpid()}"
    command = build_command(binary, "podman", tag, context / "Dockerfile")
    assert command[1:3] == ["--runtime", runc]
    at = (
        command.index("build") + 1
    )  # the host's toolchain for the RUN step (the host image is empty)
    command[at:at] = [
        arg
        for d in HOST_DIRS
        if os.path.exists(d)
        for arg in ("-v", f"{os.path.realpath(d)}:{d}:ro")
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        # the global option reaches the RUN step: a runtime that does not exist fails the same build
        bad = [binary, "--runtime", str(tmp_path / "no-runtime"), *command[3:]]
        bad[bad.index("-t") + 1] = tag + "-bad"
        assert (
            subprocess.run(
                bad, capture_output=True, timeout=300, check=False
            ).returncode
            != 0
        )
    finally:
        subprocess.run(
            [binary, "rmi", "-f", tag, tag + "-bad"],
            capture_output=True,
            timeout=120,
            check=False,
        )


@pytest.mark.parametrize(
    ("layout", "conf", "asked"),
    [("v2", None, False), ("v1", "/home/u/runc.conf", False), ("v1", None, True)],
)
def test_podman_info_is_asked_only_where_its_answer_matters(
    monkeypatch, tmp_path, layout, conf, asked
):
    """`podman info` (half a second per run) only on a cgroups v1/hybrid host without the
    user's CONTAINERS_CONF: elsewhere podman's own choice stands whatever it says."""
    from profiler_core.sandbox import podman

    questions: list[str] = []
    monkeypatch.setattr(podman, "CGROUP_ROOT", _layout(tmp_path / "cgroup", layout))
    monkeypatch.setattr(podman, "_CHOSEN", {})
    monkeypatch.setattr(
        podman,
        "_configured",
        lambda binary: questions.append(binary) or "/usr/bin/runc",
    )
    if conf:
        monkeypatch.setenv("CONTAINERS_CONF", conf)
    else:
        monkeypatch.delenv("CONTAINERS_CONF", raising=False)
    assert podman.global_options("/usr/bin/podman") == ()
    assert questions == (["/usr/bin/podman"] if asked else [])

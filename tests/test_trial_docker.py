"""One trial, one container: the conformance tasks of tests/fixtures/trial_tasks under
Docker, the oracle and the simulated agent.

Each task is a Harbor task folder whose Dockerfile builds on the sandbox's
offline host-toolchain image. The oracle passes every one only if the trial
is Harbor's: a server its solution starts still answers the verifier, a file
it writes under ``/etc`` is still there, the image's ``PATH``, ``ENV`` and
``WORKDIR`` hold for both, a Python ``test.sh`` runs by its shebang, an agent
timeout still verifies, and ``tests/`` replaces what the agent left at
``/tests``. The simulated agent edits nothing and fails them all. Under
``CI=true`` a Docker daemon that cannot start fails these tests.
"""

from __future__ import annotations

import shutil
import subprocess
import types
from pathlib import Path

import pytest
import trio
import yaml
from tests.sandbox_runtimes import containers_named, docker_daemon, require
from tests.scripted.agent_runs import profiler, rows, run_tasks

from profiler_core.model import SandboxSettings
from profiler_core.sandbox.containers import HOST_IMAGE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

TASKS = Path(__file__).parent / "fixtures" / "trial_tasks"
NAMES = sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon; no trial container or network may be left behind."""
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield
        from profiler_core.environments.containers import wait_removed

        wait_removed()  # the direct tests' trials: stop() removes in the background
        assert not containers_named("docker", "profiler-"), (
            "a trial's container was left behind"
        )
        networks = subprocess.run(
            ["docker", "network", "ls", "--format", "{{.Name}}"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        assert not [n for n in networks.split() if n.startswith("profiler-")], networks


def _run(
    folder: Path, provider: dict, kind: str = "docker", tasks: Path = TASKS
) -> tuple[str, list[dict]]:
    shutil.copytree(tasks, folder / "tasks")
    return run_tasks(folder, provider, kind=kind, prefix="trial")


def test_the_oracle_passes_every_conformance_task_in_one_container_per_trial(
    docker, tmp_path
):
    run_id, found = _run(tmp_path, {"id": "oracle", "model": "none"})
    by_task = {r["scenarioId"]: r for r in found}
    assert sorted(by_task) == NAMES
    for name, row in by_task.items():
        assert (
            row.get("error") is None and row["reward"] == 1 and row["success"] is True
        ), (name, row)
    # the agent's time ran out: recorded on the row, and the verifier still judged what it left
    assert by_task["timeout-verifies"]["completionReason"] == "timeout"
    # every file the verifier wrote under /logs/verifier is kept with the run's reports
    kept = (
        tmp_path / "reports" / run_id / "verifier" / "etc-persists" / "baseline-iter-0"
    )
    assert (
        (kept / "junit.xml").read_text().startswith('<testsuite tests="1" failures="0"')
    )
    assert (kept / "reward.txt").read_text().strip() == "1"


# The agent tries the image's /etc/shadow and writes in its working folder; the verifier
# (root, the image's user)
# says what it saw. A task naming no user gets the unprivileged one when the profiler is root.
_SHADOW_SOLUTION = """#!/bin/bash
if cat /etc/shadow > /dev/null 2>&1; then echo readable; else echo refused; fi > /logs/agent/shadow
id -u > /logs/agent/uid
echo made > /app/made-by-the-agent
"""
_SHADOW_TEST = """#!/bin/bash
want=$(cat /tests/want)
seen=$(cat /logs/agent/shadow 2>/dev/null)
[ -f /app/made-by-the-agent ] && echo "$seen uid=$(cat /logs/agent/uid)" > /logs/verifier/seen
if [ "$seen" = "$want" ] && [ -f /app/made-by-the-agent ] && cat /etc/shadow > /dev/null; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def _shadow_task(root: Path, name: str, user: str | None, want: str) -> None:
    (root / name / "environment").mkdir(parents=True)
    (root / name / "environment" / "Dockerfile").write_text(
        f"FROM {HOST_IMAGE}\nWORKDIR /app\nCOPY README /app/README\n"
    )
    (root / name / "environment" / "README").write_text("the task's files\n")
    (root / name / "instruction.md").write_text("Read /etc/shadow.\n")
    for folder, file, text in (
        ("solution", "solve.sh", _SHADOW_SOLUTION),
        ("tests", "test.sh", _SHADOW_TEST),
        ("tests", "want", want + "\n"),
    ):
        (root / name / folder).mkdir(exist_ok=True)
        (root / name / folder / file).write_text(text)
    agent = "[agent]\ntimeout_sec = 60.0\n" + (f'user = "{user}"\n' if user else "")
    (root / name / "task.toml").write_text(
        'schema_version = "1.1"\n[task]\nname = '
        f'"shadow/{name}"\n{agent}[verifier]\ntimeout_sec = 60.0\n'
    )


def test_agent_is_unprivileged_unless_named(docker, tmp_path):
    """A root profiler's agent cannot open /etc/shadow unless its task names
    ``[agent].user``; the verifier is root."""
    import os

    if os.getuid() != 0:
        pytest.skip("the unprivileged default applies when the profiler runs as root")
    tasks = tmp_path / "src"
    _shadow_task(tasks, "no-user", None, "refused")
    _shadow_task(tasks, "root-user", "root", "readable")
    run_id, found = _run(tmp_path, {"id": "oracle", "model": "none"}, tasks=tasks)
    by_task = {r["scenarioId"]: r for r in found}
    assert sorted(by_task) == ["no-user", "root-user"]
    seen = {
        name: (
            tmp_path
            / "reports"
            / run_id
            / "verifier"
            / name
            / "baseline-iter-0"
            / "seen"
        )
        .read_text()
        .strip()
        for name in by_task
    }
    assert seen == {"no-user": "refused uid=65534", "root-user": "readable uid=0"}
    for name, row in by_task.items():
        assert row.get("error") is None and row["reward"] == 1, (
            name,
            row,
        )  # the verifier ran as root in both


def _images(binary: str) -> set[str]:
    done = subprocess.run(
        [binary, "images", "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return {
        i
        for i in done.stdout.split()
        if i.startswith(
            ("localhost/agent-profiler-task-", "localhost/agent-profiler-trial:")
        )
    }


def test_the_oracle_passes_every_conformance_task_under_podman_too(tmp_path):
    podman = require("podman")
    before = _images(podman)
    try:
        _, found = _run(tmp_path, {"id": "oracle", "model": "none"}, kind="podman")
        by_task = {r["scenarioId"]: r for r in found}
        assert sorted(by_task) == NAMES
        for name, row in by_task.items():
            assert row.get("error") is None and row["reward"] == 1, (name, row)
    finally:
        made = sorted(_images(podman) - before)
        if made:
            subprocess.run(
                [podman, "image", "rm", "--force", *made],
                capture_output=True,
                timeout=300,
                check=False,
            )
    assert not containers_named(podman, "profiler-"), (
        "a trial's container was left behind"
    )


def test_the_simulated_agent_fails_every_conformance_task(docker, tmp_path):
    _, found = _run(
        tmp_path, {"id": "simulated", "model": "sim-small", "options": {"seed": 3}}
    )
    assert sorted(r["scenarioId"] for r in found) == NAMES
    for row in found:
        assert (
            row.get("error") is None and row["reward"] == 0 and row["success"] is False
        ), row


def _scenario(**environment) -> types.SimpleNamespace:
    """A scenario as the trial reads it (the task-parsing fields of [environment] and [agent])."""
    env = types.SimpleNamespace(
        dockerfile=None,
        image=HOST_IMAGE,
        workdir=None,
        env={},
        cpus=None,
        memory_mb=None,
        network=None,
    )
    vars(env).update(environment)
    return types.SimpleNamespace(
        id="direct", environment=env, verify=(), setup=(), timeout_ms=60_000
    )


def _trial(scenario, settings):
    from profiler_core.environments.containers import DockerEnvironment
    from profiler_core.runner.trial import Trials, start_trial

    trials = Trials(DockerEnvironment(), settings, Path("/nonexistent"), "direct")
    return trio.run(start_trial, trials, scenario, settings, "direct")


def _exec(run, argv, **kwargs):
    return trio.run(lambda: run.exec(argv, timeout_s=60, **kwargs))


def test_environment_env_workdir_user_and_limits_apply(docker, monkeypatch):
    from profiler_core.runner.trial import stop_trial

    monkeypatch.setenv("I37_HOST_VALUE", "from-the-host")
    scenario = _scenario(
        workdir="/work",
        env={"TOKEN": "${I37_HOST_VALUE}", "OTHER": "${I37_UNSET_VALUE:-fallback}"},
        cpus=0.5,
        memory_mb=256,
    )
    settings = SandboxSettings(
        sandbox="docker", network="full", image=HOST_IMAGE, host_toolchain=True
    )
    run = _trial(scenario, settings)
    try:
        assert run.workdir == "/work"
        seen = _exec(
            run,
            ["sh", "-c", 'pwd; printf "%s %s\\n" "$TOKEN" "$OTHER"; id -u'],
            user="65534",
        )
        assert seen.output.split() == ["/work", "from-the-host", "fallback", "65534"]
        limits = subprocess.run(
            [
                "docker",
                "inspect",
                "--format",
                "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}",
                run.environment.name,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.split()
        assert limits == [str(500_000_000), str(256 * 1024 * 1024)]
        for folder in ("/logs/verifier", "/logs/agent", "/logs/artifacts"):
            assert _exec(run, ["test", "-d", folder]).ok, folder
        # before the verifier phase nothing of the task's hidden parts is there, by any path
        for hidden in ("/tests", "/solution", str(TASKS), str(TASKS.parent)):
            assert not _exec(run, ["test", "-e", hidden]).ok, hidden
    finally:
        trio.run(stop_trial, run)


def test_the_agent_is_cut_off_and_the_verifier_inherits_the_public_network(docker):
    from profiler_core.runner.trial import phase_networks, stop_trial

    scenario = _scenario()
    settings = SandboxSettings(
        sandbox="docker", network="none", image=HOST_IMAGE, host_toolchain=True
    )
    assert phase_networks(settings, scenario) == ("none", "full")
    overridden = SandboxSettings(
        sandbox="docker", network="none", verifier_network="none"
    )
    assert phase_networks(overridden, scenario) == ("none", "none")
    run = _trial(scenario, settings)
    # a server on the host, on every address: the agent must not reach it, the verifier may
    server = subprocess.Popen(
        ["python3", "-m", "http.server", "0", "--bind", "0.0.0.0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split(" port ")[1].split()[0])
        # set-up runs with the network: the host's address on the bridge is the default
        # route's gateway
        route = _exec(
            run, ["sh", "-c", "awk '$2 == \"00000000\" {print $3}' /proc/net/route"]
        ).output.split()[0]
        gateway = ".".join(str(b) for b in reversed(bytes.fromhex(route)))
        probe = [
            "python3",
            "-c",
            f"import socket; s = socket.create_connection(('{gateway}', "
            f"{port}), timeout=3); print('reached')",
        ]
        interfaces = ["sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]
        try:
            assert run.switch
            trio.run(run.network, run.agent_network)
            assert _exec(run, interfaces).output.split() == ["lo"]
            assert "reached" not in _exec(run, probe).output
            trio.run(run.network, run.verifier_network)
            assert "reached" in _exec(run, probe).output
        finally:
            trio.run(stop_trial, run)
    finally:
        server.kill()
        server.wait()


def test_a_missing_image_with_pull_never_is_one_setup_line_and_starts_nothing(
    docker, tmp_path
):
    task = tmp_path / "tasks" / "needs-image"
    for part in ("tests", "solution"):
        (task / part).mkdir(parents=True)
    (task / "task.toml").write_text(
        '[environment]\ndocker_image = "localhost/agent-profiler-missing:1"\n'
    )
    (task / "instruction.md").write_text("Nothing to do.\n")
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"
    )
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\ntrue\n")
    profile = {
        "modes": {"baseline": {"system_instructions": "x"}},
        "scenarios": {"path": "tasks", "format": "harbor"},
        "provider": {"id": "oracle", "model": "none"},
        "scorer": {"id": "verify"},
        "execution": {
            "repetitions": 1,
            "warmup": False,
            "sandbox": "docker",
            "pull": "never",
        },
    }
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(profile))
    done = profiler(
        tmp_path,
        "run",
        "profile.yaml",
        "--run-id",
        "missing",
        "--allow-errors",
        "--no-report",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [row] = [r for r in rows(tmp_path, "missing") if r["iteration"] >= 0]
    assert row["errorCode"] == "setup_error", row
    assert row["error"].endswith(
        "the task's image 'localhost/agent-profiler-missing:1' is not in "
        "docker's local images (execution.pull: never)"
    ), row["error"]
    assert "\n" not in row["error"]


@pytest.mark.parametrize(
    ("kind", "named", "image_uid", "want"),
    [
        (
            "bwrap",
            None,
            "0",
            None,
        ),  # a folder trial runs as the profiler: nothing chowned on the host
        ("docker", "app", "0", "app"),  # the task's own user
        ("docker", None, "1000", None),  # the image's own USER stands
        ("docker", None, "0", "65534"),
        ("docker", None, "0", "chown fails"),  # never the agent as root instead
    ],
)
def test_whom_the_agent_runs_as(monkeypatch, tmp_path, kind, named, image_uid, want):
    """The runner's one command (the image's uid, then the chown) run by a real shell,
    with ``id`` and ``chown`` stand-ins that say what they were asked."""
    from profiler_core.model.environment import ExecResult
    from profiler_core.runner import trial
    from profiler_core.runner.outcome import IterationError

    monkeypatch.setattr(trial.os, "getuid", lambda: 0)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {image_uid}\n")
    fails = (
        "echo 'chown: operation not permitted'; exit 1" if want == "chown fails" else ""
    )
    (bin_dir / "chown").write_text(
        f'#!/bin/sh\necho "$@" >> {tmp_path}/chowned\n{fails}\n'
    )
    for name in ("id", "chown"):
        (bin_dir / name).chmod(0o755)
    commands: list[tuple[list[str], str | None]] = []

    class Environment:
        def exec(self, argv, *, env=None, cwd=None, user=None, timeout_s=None):
            commands.append((argv, user))
            done = subprocess.run(
                argv,
                env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            return ExecResult(
                exit_code=done.returncode, output=done.stdout + done.stderr, wall_ms=1.0
            )

    scenario = types.SimpleNamespace(id="t", agent_user=named)
    run = trial.TrialRun(None, scenario, Environment(), "/app", "none", "full", False)
    chowned = tmp_path / "chowned"
    if want == "chown fails":
        with pytest.raises(IterationError, match="operation not permitted") as caught:
            trio.run(trial.agent_user, run, SandboxSettings(sandbox=kind))
        assert caught.value.code == "setup_error"
        return
    assert trio.run(trial.agent_user, run, SandboxSettings(sandbox=kind)) == want
    # one command at most, as the image's user: it chowns only where that user is root
    assert len(commands) == (0 if kind == "bwrap" or named else 1)
    assert all(user is None for _argv, user in commands)
    assert (chowned.read_text() if chowned.exists() else "") == (
        "-R -- 65534 /app\n" if want == "65534" else ""
    )

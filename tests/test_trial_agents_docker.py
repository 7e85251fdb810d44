"""Real agents inside the trial's container, judged by the task's own tests, reaching
only their model.

A Harbor task on the conformance base image (``.ci/build-base-image``): the
scripted model makes the agent edit ``/app/calc.py`` with its shell tool, in
mode ``fix`` rightly and in mode ``wrong`` wrongly, and both claim success.
The agent runs inside the trial's container (its installed package mounted
read-only, no Node there), as the trial's agent user, in the image's WORKDIR,
with ``execution.network: model``: its only way out is the relay to the wire
recorder on the host, which holds the real key. The verifier then runs in the
same container and must pass the first and fail the second. The same shell
call tries a server on the host (through the runtime's gateway) and the
scripted model's own port, and prints the key the agent holds: both
connections must fail and the key must be the placeholder.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from tests.binaries import agent_binary, missing
from tests.sandbox_runtimes import containers_named, docker_daemon, require
from tests.scripted import agent_runs
from tests.scripted.agent_runs import profiler, rows

from profiler_core.fakemodel import FakeModelServer, Shell, Text, steps

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

BASE_IMAGE = "localhost/agent-profiler-debian:bookworm"
BROKEN = agent_runs.BROKEN_CALC
SECRET = "sk-real-key-kept-by-the-recorder-2718"
AGENTS = agent_runs.TRIAL_AGENTS


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon with the conformance base image; no trial container may be left behind."""
    from tests.test_harbor_conformance_parse import _base_image

    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        _base_image()
        yield
        from profiler_core.environments.containers import wait_removed

        wait_removed()
        # this module's trials and relays only: other tests may run containers at the same time
        assert not containers_named("docker", "profiler-calc-"), (
            "a trial was left behind"
        )


@pytest.fixture
def host_server():
    """A TCP server on every address of the host: an agent with network ``model`` must
    not reach it."""
    with agent_runs.host_server("0.0.0.0", b"host\n") as port:
        yield port


def _gateway(kind: str) -> str:
    """The host's address on the runtime's default network, as a container sees it."""
    command = (
        ["docker", "network", "inspect", "bridge"]
        + ["--format", "{{(index .IPAM.Config 0).Gateway}}"]
        if kind == "docker"
        else ["podman", "network", "inspect", "podman"]
        + ["--format", "{{range .Subnets}}{{.Gateway}}{{end}}"]
    )
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


_PROBE = (
    "import socket\n"
    "for h, p in (('{gw}', {hp}), ('127.0.0.1', {mp})):\n"
    "    try:\n"
    "        socket.create_connection((h, p), timeout=3).close(); print(h, 'reached')\n"
    "    except OSError:\n"
    "        print(h, 'refused')\n"
)


def _script(gateway: str, host_port: int, model_port: int):
    probe = _PROBE.format(gw=gateway, hp=host_port, mp=model_port)
    shell = (
        f'python3 -c "{probe}" > net.txt 2>&1; env=$(cat /proc/[0-9]*/environ '
        '2>/dev/null | tr "\\0" "\\n"); '
        'echo "$env" | grep -c kept-by-the-recorder > secret.txt; '
        'echo "$env" | grep -c profiler-wire-placeholder > placeholder.txt; '
        "id -u > uid.txt; pwd > pwd.txt; command -v node > node.txt; "
    )
    fix = steps(
        [
            Shell(shell + "sed -i 's/a - b/a + b/' calc.py"),
            Text("Done: all tests pass."),
        ]
    )
    wrong = steps(
        [
            Shell(shell + "sed -i 's/a - b/a * b/' calc.py"),
            Text("Done: all tests pass."),
        ]
    )
    return lambda body: (fix if "MODE-FIX" in json.dumps(body) else wrong)(body)


def _task(root: Path) -> None:
    task = root / "tasks" / "calc"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {BASE_IMAGE}\nWORKDIR /app\nCOPY calc.py /app/calc.py\n"
    )
    (task / "environment" / "calc.py").write_text(BROKEN)
    (task / "instruction.md").write_text("The tests of calc.py fail. Fix it.\n")
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\ncd /app\n"
        "if python3 -c 'from calc import add; assert add(2, 3) == 5'; then echo 1; else echo 0; fi"
        " > /logs/verifier/reward.txt\n"
    )
    (task / "task.toml").write_text(
        'schema_version = "1.1"\n[task]\nname = "trial-agents/calc"\n'
        "[agent]\ntimeout_sec = 180.0\n[verifier]\ntimeout_sec = 60.0\n"
    )


def _profile(
    root: Path,
    agent: str,
    binary: str,
    model: str,
    url: str,
    kind: str = "docker",
    network: str = "model",
) -> Path:
    options = {
        "base_url": url,
        "binary": binary,
        "max_retries": 0,
        "api_key_env": "I37_MODEL_KEY",
    }
    if agent == "opencode":
        # OpenCode reaches its model through its own config (the recorder holds no key for it)
        from tests.opencode_helpers import model_config

        options = {"binary": binary, "config": model_config(url), "start_timeout_s": 60}
    profile = {
        "modes": {
            "fix": {"system_instructions": "MODE-FIX"},
            "wrong": {"system_instructions": "MODE-WRONG"},
        },
        "scenarios": {"path": "tasks", "format": "harbor"},
        "provider": {"id": agent, "model": model, "options": options},
        "scorer": {"id": "verify"},
        "execution": {
            "repetitions": 1,
            "warmup": False,
            "sandbox": kind,
            "network": network,
            "pull": "never",
        },
        "output": {"keep_workspaces": "all"},
    }
    path = root / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_real_agent_runs_inside_the_trial_and_reaches_only_its_model(
    docker, tmp_path, agent, host_server, monkeypatch
):
    _agent_in_a_trial(tmp_path, agent, host_server, monkeypatch, "docker")


@pytest.fixture(scope="module")
def podman():
    """Podman with the conformance base image; no trial container may be left behind."""
    found = require("podman")
    done = subprocess.run(
        [found, "image", "exists", BASE_IMAGE], timeout=30, check=False
    )
    if done.returncode != 0:
        missing(f"{BASE_IMAGE} in podman", "run `bash .ci/build-base-image`")
    yield found
    assert not containers_named(found, "profiler-calc-"), "a trial was left behind"


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_real_agent_runs_inside_a_podman_trial_too(
    podman, tmp_path, agent, host_server, monkeypatch
):
    """The same under Podman (its own default network, its init), where the host runs it."""
    _agent_in_a_trial(tmp_path, agent, host_server, monkeypatch, "podman")
    assert not containers_named(podman, "profiler-calc-"), "a trial was left behind"


def test_with_a_full_network_the_agent_reaches_the_host_and_still_its_model(
    docker, tmp_path, host_server, monkeypatch
):
    """``execution.network: full``: the trial is on the runtime's network, and the wire
    recorder on the host's
    127.0.0.1 (not the container's) is still relayed for the agent's phase."""
    _agent_in_a_trial(
        tmp_path, "claude-code", host_server, monkeypatch, "docker", "full"
    )


def _agent_in_a_trial(
    tmp_path, agent, host_server, monkeypatch, kind, network="model"
) -> None:
    program, variable, model, suffix = AGENTS[agent]
    binary = str(agent_binary(program, variable))
    monkeypatch.setenv("I37_MODEL_KEY", SECRET)
    _task(tmp_path)
    with FakeModelServer(
        lambda body: script(body), model="scripted"
    ) as server:  # the script needs the server's port
        port = urlsplit(server.url).port or 0
        script = _script(_gateway(kind), host_server, port)
        path = _profile(
            tmp_path, agent, binary, model, server.url + suffix, kind, network
        )
        done = profiler(
            tmp_path,
            "run",
            str(path),
            "--run-id",
            "t",
            "--progress",
            "none",
            timeout=500,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    by_mode = {row["mode"]: row for row in rows(tmp_path, "t") if row["iteration"] >= 0}
    fix, wrong = by_mode["fix"], by_mode["wrong"]
    assert fix.get("error") is None and fix["reward"] == 1 and fix["success"], fix
    assert (
        fix["tokens"]["total"] > 0
    )  # measured: the session's transcript came back out of the trial
    # the agent said "all tests pass"; the task's tests, in the same container, say otherwise
    assert wrong.get("error") is None and wrong["reward"] == 0, wrong
    assert not wrong["success"]
    kept = sorted((tmp_path / "reports" / "t" / "workspaces").rglob("net.txt"))
    assert len(kept) == 2, kept
    for net in kept:
        folder = net.parent
        lines = net.read_text().split("\n")
        # the host's server only with a full network; the scripted model's own port
        # never (not relayed)
        assert [line.split()[-1] for line in lines if line.strip()] == [
            "reached" if network == "full" else "refused",
            "refused",
        ], lines
        # the agent's processes hold the placeholder, never the key the recorder keeps
        assert (folder / "secret.txt").read_text().strip() == "0"
        if agent != "opencode":
            assert int((folder / "placeholder.txt").read_text()) >= 1
        assert (folder / "pwd.txt").read_text().strip() == "/app"
        assert (folder / "uid.txt").read_text().strip() == "65534"
        assert (folder / "node.txt").read_text().strip() == ""  # no Node in the image


def test_a_program_whose_loader_the_image_lacks_is_one_line(docker, tmp_path):
    """A glibc program in an image without glibc's loader (a musl image) is refused
    before it runs."""
    import types

    import trio

    from profiler_core.environments.containers import DockerEnvironment
    from profiler_core.errors import ProfilerError
    from profiler_core.model.environment import TrialSpec
    from profiler_core.providers.in_trial import elf_interpreter, give_folders
    from profiler_core.sandbox.containers import HOST_IMAGE

    program = tmp_path / "agent"
    data = Path("/bin/true").read_bytes()
    loader = elf_interpreter("/bin/true")
    assert loader is not None
    elsewhere = loader.replace(
        "ld-", "xx-", 1
    )  # same length: the program names a loader nobody has
    program.write_bytes(data.replace(loader.encode(), elsewhere.encode()))
    assert elf_interpreter(str(program)) == elsewhere
    root = tmp_path / "session"
    (root / "home").mkdir(parents=True)
    (root / "tmp").mkdir()
    live = types.SimpleNamespace(
        dirs=types.SimpleNamespace(root=root, home=root / "home", tmp=root / "tmp")
    )
    trial = DockerEnvironment().start(
        TrialSpec(name="calc-loader", image=HOST_IMAGE, host_toolchain=True)
    )
    try:
        with pytest.raises(
            ProfilerError, match=f"agent cannot run in this image: it needs {elsewhere}"
        ):
            trio.run(give_folders, trial, live, "65534", str(program))
        trio.run(
            give_folders, trial, live, "65534", "/bin/true"
        )  # the real loader is there
    finally:
        trial.stop()


def test_an_agent_out_of_time_is_ended_inside_and_still_verified(docker, tmp_path):
    """The agent's timeout is the row's, its processes inside are killed, and the
    verifier judges what it left."""
    binary = str(agent_binary("claude", "CLAUDE_BIN"))
    _task(tmp_path)  # the timeout: agent_runs.assert_ended_and_verified
    tests = tmp_path / "tasks" / "calc" / "tests" / "test.sh"
    tests.write_text(agent_runs.late_verifier("[c]laude[.]exe"))
    with FakeModelServer(agent_runs.late_script(), model="scripted") as server:
        path = _profile(
            tmp_path, "claude-code", binary, "claude-sonnet-4-5", server.url
        )
        agent_runs.assert_ended_and_verified(tmp_path, path)


def test_an_agents_home_over_the_bound_is_not_copied_out(docker, tmp_path, monkeypatch):
    """An agent that fills its home cannot fill the host's disk: over the bound, nothing
    comes back."""
    import types

    import trio

    from profiler_core.environments.containers import DockerEnvironment
    from profiler_core.model.environment import TrialSpec
    from profiler_core.providers import in_trial
    from profiler_core.sandbox.containers import HOST_IMAGE

    monkeypatch.setattr(in_trial, "MAX_HOME_BYTES", 1 << 20)
    root = tmp_path / "session"
    (root / "home").mkdir(parents=True)
    (root / "tmp").mkdir()
    live = types.SimpleNamespace(
        dirs=types.SimpleNamespace(root=root, home=root / "home", tmp=root / "tmp"),
        params=types.SimpleNamespace(scenario_id="calc"),
    )
    trial = DockerEnvironment().start(
        TrialSpec(name="calc-home", image=HOST_IMAGE, host_toolchain=True)
    )
    try:
        trio.run(in_trial.give_folders, trial, live, "65534", None)
        small = trial.exec(
            ["sh", "-c", f"echo kept > {root}/home/transcript.jsonl"], user="65534"
        )
        assert small.ok, small.output
        trio.run(in_trial.take_home, trial, live)
        assert (root / "home" / "transcript.jsonl").read_text() == "kept\n"
        big = trial.exec(
            ["sh", "-c", f"head -c 3000000 /dev/zero > {root}/home/big"], user="65534"
        )
        assert big.ok, big.output
        trio.run(in_trial.take_home, trial, live)
        assert list((root / "home").iterdir()) == []
    finally:
        trial.stop()

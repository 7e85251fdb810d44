"""A shared OpenCode server cannot carry one session's process into the next: what a
session started ends with it.

The real opencode against the scripted model: the agent's shell call starts a
daemon that leaves its shell (``setsid``, ``nohup``, ``&``) and would outlive
the session on the server the mode shares, and a writer loop that rewrites a
file of the next session's workspace. After ``destroy_session`` they are
gone and the next session's file stays as it was, while the server itself
(shared) still runs: on the host, in bwrap, and in a docker or podman
container, where the processes are not below the ``docker run`` client.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest
import trio
from tests.binaries import agent_binary
from tests.opencode_helpers import START_TIMEOUT_S, model_config
from tests.sandbox_runtimes import docker_daemon, require

from profiler_core import CreateSessionParams, PermissionConfig, ProviderConfig
from profiler_core.fakemodel import FakeModelServer, Shell, Text, tool_then_text
from profiler_core.fakemodel.replies import tool_results
from profiler_core.providers.opencode import OpenCodeProvider
from profiler_core.providers.opencode.server import process_alive
from profiler_core.sandbox import SandboxSettings

pytestmark = pytest.mark.slow


def params(iteration: int, workspace: Path) -> CreateSessionParams:
    return CreateSessionParams(
        system_instructions="s",
        scenario_id="daemon",
        iteration=iteration,
        mode="m",
        model="local/scripted",
        workspace=str(workspace),
    )


def _sleepers(seconds: str) -> list[int]:
    """Host PIDs of live ``sleep SECONDS`` processes (a sandbox's own PIDs differ: they
    are found by command line)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", seconds.encode()] and process_alive(int(entry)):
            found.append(int(entry))
    return found


def _wait_for(seconds: str) -> list[int]:
    deadline = time.monotonic() + 10
    while not (found := _sleepers(seconds)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


CONTAINERS = pytest.mark.xdist_group("containers")


@pytest.fixture
def settings(request, tmp_path_factory) -> Iterator[SandboxSettings | None]:
    """The sandbox of the test's parameter (a Docker daemon started when none runs)."""
    sandbox = request.param
    if sandbox == "none":
        yield None
        return
    require(sandbox)
    with (
        docker_daemon(tmp_path_factory.mktemp("dockerd"))
        if sandbox == "docker"
        else nullcontext()
    ):
        yield SandboxSettings(sandbox=sandbox, network="model")


def _wait_written(path: Path) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and path.read_text() == "rewritten\n":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "settings",
    [
        "none",
        "bwrap",
        pytest.param("docker", marks=CONTAINERS),
        pytest.param("podman", marks=CONTAINERS),
    ],
    indirect=True,
)
def test_a_daemon_started_in_a_session_ends_with_it_though_the_server_is_shared(
    tmp_path, settings
):
    binary = agent_binary("opencode", "OPENCODE_BIN")
    workspaces = [tmp_path / f"ws{i}" for i in range(2)]
    victim = workspaces[1] / "hidden-tests.txt"
    # Two ways out of the tool's shell: a new session (setsid), and a plain background
    # job of a subshell; each
    # sleeps for a number of seconds no other process on the machine does, to be found
    # by its command line.
    # A third rewrites a file of the next session's workspace, as a cheating agent's daemon did.
    marks = [str(3000 + os.getpid() % 1000 * 2 + n) for n in (0, 1)]
    loop = f"while :; do echo rewritten > {victim}; sleep 0.1; done"
    command = (
        f"setsid sh -c 'exec sleep {marks[0]}' </dev/null >/dev/null 2>&1 & "
        f"( nohup sh -c 'exec sleep {marks[1]}' </dev/null >/dev/null 2>&1 & ) ; "
        f'setsid sh -c "{loop}" </dev/null >/dev/null 2>&1 & echo started'
    )
    seen: dict[str, object] = {}

    async def main(model: FakeModelServer) -> None:
        provider = OpenCodeProvider(binary=str(binary))
        await provider.init(ProviderConfig(
            model="local/scripted", mode="m", permissions=PermissionConfig(auto_approve=True), workdir=str(tmp_path), sandbox=settings,
            options={"binary": str(binary), "start_timeout_s": START_TIMEOUT_S, "config": model_config(model.base_url)},
        ))  # fmt: skip
        assert provider.server is not None
        try:
            handle = await provider.create_session(params(0, workspaces[0]))
            result = await provider.prompt(
                handle, "Start the daemons.", timeout_ms=60_000
            )
            assert result.completion_reason == "stop", result
            seen["alive_in_session"] = [
                bool(await trio.to_thread.run_sync(_wait_for, mark)) for mark in marks
            ] + [await trio.to_thread.run_sync(_wait_written, victim)]
            await provider.destroy_session(handle)
            seen["alive_after"] = [bool(_sleepers(mark)) for mark in marks]
            seen["server_alive"] = process_alive(provider.server.pid)
            victim.write_text("the verifier's own\n")
            # The next session on the same server still works, and its file stays as it was.
            model.set_script(tool_then_text())
            handle = await provider.create_session(params(1, workspaces[1]))
            seen["next"] = (
                await provider.prompt(handle, "Run echo hello.", timeout_ms=60_000)
            ).completion_reason
            await trio.sleep(0.5)  # ample time for a surviving loop (0.1 s) to strike
            seen["victim"] = victim.read_text()
            await provider.destroy_session(handle)
        finally:
            await provider.shutdown()
            for pid in [pid for mark in marks for pid in _sleepers(mark)]:
                os.kill(pid, signal.SIGKILL)  # what a failed test would leave

    for folder in workspaces:
        folder.mkdir()
    with FakeModelServer(
        tool_then_text(command=command, text="Done: started.")
    ) as model:
        trio.run(main, model)

    assert seen["alive_in_session"] == [True, True, True], (
        "the daemons must have been running (else this test proves nothing)"
    )
    assert seen["alive_after"] == [False, False], (
        "a process the session started outlived it"
    )
    assert seen["victim"] == "the verifier's own\n", (
        "a loop of the session before rewrote the next session's file"
    )
    assert seen["server_alive"] is True and seen["next"] == "stop"


@pytest.mark.parametrize(
    "settings",
    ["none", pytest.param("docker", marks=CONTAINERS)],
    indirect=True,
)
def test_while_another_session_runs_only_the_ended_sessions_processes_end(
    tmp_path, settings
):
    """Two sessions prompt at once: the first one's daemon (working in its folder) ends with it, the
    other's running tool (in its own folder) does not."""
    binary = agent_binary("opencode", "OPENCODE_BIN")
    workspaces = [tmp_path / f"ws{i}" for i in range(2)]
    base = 5000 + os.getpid() % 1000 * 2
    daemon, busy = str(base), f"{base + 1}"
    commands = {
        "ALPHA": f"setsid sh -c 'exec sleep {daemon}' </dev/null >/dev/null 2>&1 & echo ok",
        # a tool that still runs when the first session ends, until the test releases it
        # (60 s at most)
        "BETA": f"sh -c 'exec sleep {busy}' & i=0; "
        "while [ ! -e release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
        "kill $!; echo ok",
    }

    def script(body: dict):
        name = "BETA" if "BETA" in json.dumps(body.get("messages")) else "ALPHA"
        if tool_results(body) == 0:
            return Shell(commands[name])
        return Text("Done: ok.")

    seen: dict[str, object] = {}

    async def main(model: FakeModelServer) -> None:
        provider = OpenCodeProvider(binary=str(binary))
        await provider.init(ProviderConfig(
            model="local/scripted", mode="m", permissions=PermissionConfig(auto_approve=True), workdir=str(tmp_path), sandbox=settings,
            options={"binary": str(binary), "start_timeout_s": START_TIMEOUT_S, "config": model_config(model.base_url)},
        ))  # fmt: skip
        try:
            first = await provider.create_session(params(0, workspaces[0]))
            second = await provider.create_session(params(1, workspaces[1]))

            async def run_second() -> None:
                seen["second"] = await provider.prompt(
                    second, "BETA", timeout_ms=60_000
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_second)
                await provider.prompt(first, "ALPHA", timeout_ms=60_000)
                seen["daemon_in_session"] = bool(
                    await trio.to_thread.run_sync(_wait_for, daemon)
                )
                seen["busy_before"] = bool(
                    await trio.to_thread.run_sync(_wait_for, busy)
                )
                await provider.destroy_session(first)
                seen["daemon_after"] = bool(_sleepers(daemon))
                seen["busy_after"] = bool(_sleepers(busy))
                (workspaces[1] / "release").touch()
            await provider.destroy_session(second)
        finally:
            await provider.shutdown()
            for pid in _sleepers(daemon) + _sleepers(busy):
                os.kill(pid, signal.SIGKILL)  # what a failed test would leave

    for folder in workspaces:
        folder.mkdir()
    with FakeModelServer(script) as model:
        trio.run(main, model)

    assert seen["daemon_in_session"] and seen["busy_before"], "else this proves nothing"
    assert seen["daemon_after"] is False, "the ended session's daemon outlived it"
    assert seen["busy_after"] is True, "another session's running tool was ended"
    assert seen["second"].completion_reason == "stop"  # type: ignore[attr-defined]

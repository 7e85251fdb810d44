"""What every subprocess agent provider must survive, run against the real Claude Code
and Codex CLIs.

A hung model, a hung tool, Ctrl-C in the middle of a session and a missing
program: each agent is driven by the fake model server on 127.0.0.1 and
must leave a timeout row (or exit 130 and resume), with no process of its
group left alive — found by a marker variable in their environment.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from tests import test_claude_code_provider as claude_tests
from tests import test_codex_provider as codex_tests
from tests.binaries import agent_binary
from tests.scripted.agent_runs import (
    MARK,
    assert_no_survivor,
    marked_processes,
    new_mark,
    profiler,
    rows,
    start_profiler,
    wait_for,
    write_profile,
)

from profiler_core.fakemodel import FakeModelServer, Hang, Text, ToolCall, steps

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class AgentKit:
    """One agent CLI with its scripted server and the figures its hello script gives."""

    provider: str
    program: str
    variable: str
    install_hint: str
    server: Callable[[Any], Any]
    model_requests: Callable[[Any], list]
    profile: Callable[..., Any]
    hello_script: Callable[[], Any]
    hung_tool_script: Callable[[str], Any]
    modes: tuple[str, ...]
    hello_tokens: int


CLAUDE = AgentKit(
    provider="claude-code",
    program="claude",
    variable="CLAUDE_BIN",
    install_hint="profiler agents install claude-code",
    server=FakeModelServer,
    model_requests=lambda server: server.messages(),
    profile=claude_tests.profile,
    hello_script=claude_tests.hello_script,
    hung_tool_script=lambda command: steps(
        [
            ToolCall("Bash", {"command": command, "description": "wait"}),
            Text("Done: waited."),
        ]
    ),
    modes=("no_write", "plain"),
    hello_tokens=2405,
)

CODEX = AgentKit(
    provider="codex",
    program="codex",
    variable="CODEX_BIN",
    install_hint="profiler agents install codex",
    server=FakeModelServer,
    model_requests=lambda server: server.responses(),
    profile=codex_tests.profile,
    hello_script=codex_tests.hello_script,
    hung_tool_script=lambda command: steps(
        [ToolCall("exec_command", {"cmd": command}), Text("Done: waited.")]
    ),
    modes=("effort", "plain"),
    hello_tokens=3365,
)

KITS = pytest.mark.parametrize("kit", [CLAUDE, CODEX], ids=lambda kit: kit.provider)


def one_mode(mark: str) -> dict[str, Any]:
    return {"plain": {"environment": {MARK: mark}}}


@KITS
def test_a_hung_model_gives_a_timeout_row_and_no_surviving_process(tmp_path, kit):
    binary, mark = str(agent_binary(kit.program, kit.variable)), new_mark()
    with kit.server(Hang()) as server:
        path = kit.profile(
            tmp_path, server, binary, mark=mark, timeout_ms=8000, modes=one_mode(mark)
        )
        process = start_profiler(tmp_path, "run", str(path), "--run-id", "hang")
        try:
            wait_for(lambda: kit.model_requests(server), what="the model request")
            seen = marked_processes(mark)
            assert seen, "the agent process was not found"
            process.wait(timeout=60)
        finally:
            process.kill()
            process.wait()
    [row] = rows(tmp_path, "hang")
    assert row["completionReason"] == "timeout" and row["errorCode"] == "timeout"
    assert_no_survivor(seen, mark)


@KITS
def test_a_hung_tool_is_ended_with_the_agents_process_group(tmp_path, kit):
    binary, mark = str(agent_binary(kit.program, kit.variable)), new_mark()
    pid_file = tmp_path / "tool.pid"
    with kit.server(kit.hung_tool_script(f"echo $$ > {pid_file}; sleep 300")) as server:
        path = kit.profile(
            tmp_path, server, binary, mark=mark, timeout_ms=8000, modes=one_mode(mark)
        )
        process = start_profiler(tmp_path, "run", str(path), "--run-id", "tool")
        try:
            wait_for(
                lambda: pid_file.exists() and pid_file.read_text().strip(),
                what="the tool's pid",
            )
            seen = marked_processes(mark)
            assert (
                int(pid_file.read_text()) in seen
            )  # the tool runs in the agent's group
            process.wait(timeout=60)
        finally:
            process.kill()
            process.wait()
    [row] = rows(tmp_path, "tool")
    assert row["completionReason"] == "timeout"
    assert_no_survivor(seen, mark)


@KITS
def test_ctrl_c_exits_130_leaves_nothing_running_and_resume_completes(tmp_path, kit):
    binary, mark = str(agent_binary(kit.program, kit.variable)), new_mark()
    with kit.server(Hang()) as server:
        path = kit.profile(tmp_path, server, binary, mark=mark)
        process = start_profiler(tmp_path, "run", str(path), "--run-id", "intr")
        try:
            wait_for(lambda: kit.model_requests(server), what="the model request")
            seen = wait_for(lambda: marked_processes(mark), what="the agent process")
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
            process.wait()
        assert process.returncode == 130, stderr
        assert "--resume intr" in stderr
        assert_no_survivor(seen, mark)

        server.set_script(kit.hello_script())
        done = profiler(tmp_path, "run", str(path), "--resume", "intr")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path, "intr")
    assert sorted(r["mode"] for r in found if r.get("error") is None) == list(kit.modes)
    assert all(
        r["tokens"]["total"] == kit.hello_tokens
        for r in found
        if r.get("error") is None
    )
    assert_no_survivor({}, mark)


@KITS
def test_a_missing_program_is_one_line_with_an_install_hint(tmp_path, kit):
    missing = tmp_path / f"no-{kit.program}"
    path = write_profile(
        tmp_path,
        provider=kit.provider,
        model="some-model",
        options={"binary": str(missing)},
        modes={"plain": {}},
    )
    done = profiler(tmp_path, "validate", str(path))
    assert done.returncode == 1
    line = next(line for line in done.stderr.splitlines() if str(missing) in line)
    assert kit.install_hint in line and "Traceback" not in done.stderr


@KITS
def test_a_model_endpoint_that_is_down_stops_the_run_before_the_first_session_naming_the_url(
    tmp_path, kit
):
    import socket

    import yaml

    binary, mark = str(agent_binary(kit.program, kit.variable)), new_mark()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"

    class Down:
        pass

    down = Down()
    down.url = url + ("/v1" if kit.provider == "codex" else "")
    # Codex keeps trying a refused endpoint until the session's timeout (with
    # max_retries: 0 too): a short one
    # keeps the test short; the stop it checks is the same either way.
    timeout_ms = 6_000 if kit.provider == "codex" else 15_000
    path = kit.profile(
        tmp_path, down, binary, mark=mark, timeout_ms=timeout_ms, modes=one_mode(mark)
    )
    profile = yaml.safe_load(path.read_text())
    profile["execution"] = {"repetitions": 4, "warmup": True}
    path.write_text(yaml.safe_dump(profile))
    done = profiler(
        tmp_path,
        "run",
        str(path),
        "--run-id",
        "down",
        "--progress",
        "none",
        timeout=240,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    # The endpoint is opened once before any session (runner.endpoint): seconds, not an
    # agent's retries.
    assert len(errors) == 1 and f"model endpoint {url}" in errors[0], done.stderr
    assert (
        "is not reachable: connection refused" in errors[0]
        and "Traceback" not in done.stderr
    )
    assert not (tmp_path / "results" / "down.jsonl").exists()  # no cell was attempted

"""A newcomer's first real agent: `profiler init --agent X` + `profiler fake-model` +
`profiler run` (issue 31.17).

The real OpenCode, Claude Code and Codex programs, found by `profiler` itself in the
checkout's `.agents/` (from `bash .ci/install-agents`), answered by the fake model on
127.0.0.1; no API key. In CI a missing program fails the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tests.binaries import AGENT_BIN, agent_binary
from tests.test_fakemodel import start_fake_model, stop

from profiler_core.config.agents import registry
from profiler_core.demo.agent import agent_names

pytestmark = pytest.mark.slow

#: Every agent of the registry `profiler init --agent` writes a profile for -> its program.
PROGRAMS = {name: registry()[name].program for name in agent_names()}
#: The default script's usage: 120 + 15 + 40 tokens, then 150 + 20 + 160.
TOKENS = 505


@pytest.mark.parametrize("agent", list(PROGRAMS))
def test_init_fake_model_and_run_with_the_real_agent(tmp_path, agent):
    program = PROGRAMS[agent]
    agent_binary(
        program
    )  # fails in CI, skips on a developer's machine, when the program is missing
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PROFILER_AGENTS_DIR"
        and k not in {r.binary_env for r in registry().values()}
    }
    if (AGENT_BIN / program).exists():
        # Nothing on PATH: the profiler must find the program in the checkout's .agents/ itself.
        env["PATH"] = os.pathsep.join(
            (os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin")
        )
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    model, url = start_fake_model(cwd=tmp_path)
    try:
        port = url.rsplit(":", 1)[1]
        init = subprocess.run(
            [
                sys.executable,
                "-m",
                "profiler_core",
                "init",
                "--agent",
                agent,
                "first",
                "--port",
                port,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert init.returncode == 0, init.stderr
        # bwrap is installed in CI and on the developers' machines: the newcomer's agent
        # runs confined.
        assert (
            "\n  sandbox: bwrap " in (tmp_path / "first" / "profile.yaml").read_text()
        )
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "profiler_core",
                "run",
                "first/profile.yaml",
                "--repetitions",
                "1",
                "--run-id",
                "first",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=280,
        )
    finally:
        _, log = stop(model)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [
        json.loads(line)
        for line in (tmp_path / "first" / "results" / "first.jsonl")
        .read_text()
        .splitlines()
    ]
    assert sorted(r["mode"] for r in rows) == ["plain", "terse"]
    acp = registry()[agent].provider == "acp"
    for row in rows:
        assert row.get("error") is None and row["success"], row.get("error")
        if acp:
            # An ACP adapter may make calls of its own (a title): the tokens are the
            # wire's, whatever their number.
            assert (
                row["tokens"]["total"]
                == row["extensions"]["wire"]["tokens"]["total"]
                >= TOKENS
                and row["toolCalls"]["total"] == 1
            )
            assert row["extensions"]["cost_source"] == "wire"
            # The command is named by the agent's shell tool, whatever the adapter's title says.
            [record] = row["toolCalls"]["records"]
            assert (record["name"], record["category"]) == (
                registry()[agent].shell[0].tool,
                "shell",
            )
            continue
        assert row["tokens"]["total"] == TOKENS and row["toolCalls"]["total"] == 1
        assert row["extensions"]["cost_source"] in ("provider", "wire")
        # The wire recorder's tokens equal the agent's own report.
        assert (
            row["extensions"]["wire"]["tokens"]["total"] == TOKENS
            and "mismatch" not in row["extensions"]["wire"]
        )
    assert (tmp_path / "first" / "reports" / "first" / "report.html").is_file()
    assert (
        "-> tool_call" in log and "-> text" in log
    )  # the fake model's own log of what it answered


def test_without_a_working_bwrap_the_profile_says_how_to_confine_the_agent():
    from profiler_core.demo.agent import agent_files

    confined = agent_files("codex", 8765, sandbox=True)["profile.yaml"]
    plain = agent_files("codex", 8765, sandbox=False)["profile.yaml"]
    assert "\n  sandbox: bwrap " in confined
    assert (
        "\n  sandbox: bwrap " not in plain
        and "\n  # sandbox: bwrap " in plain
        and "install bubblewrap" in plain
    )


@pytest.mark.parametrize("agent", list(PROGRAMS))
def test_a_forgotten_fake_model_is_one_line_in_seconds(tmp_path, agent):
    """`profiler init --agent X`, then `profiler run` without starting the fake model:
    one line naming the
    endpoint before any session, not minutes of an agent retrying (it cost a new user 9 minutes)."""
    program = PROGRAMS[agent]
    agent_binary(program)
    import socket

    with socket.socket() as probe:  # the port the fake model would have had
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    init = subprocess.run([sys.executable, "-m", "profiler_core", "init", "--agent", agent, "first", "--port", port],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert init.returncode == 0, init.stderr
    run = subprocess.run([sys.executable, "-m", "profiler_core", "run", "first/profile.yaml", "--run-id", "first"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert run.returncode == 1 and len(errors) == 1, run.stderr[-2000:]
    assert (
        f"model endpoint http://127.0.0.1:{port}" in errors[0]
        and "is not reachable: connection refused" in errors[0]
    )
    assert (
        "Traceback" not in run.stderr
        and not (tmp_path / "first" / "results" / "first.jsonl").exists()
    )  # no session ran

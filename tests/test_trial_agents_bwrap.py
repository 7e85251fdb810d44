"""Real agents inside a bwrap trial's one sandbox, judged by the task's own tests.

A Harbor task without an image runs under ``execution.sandbox: bwrap`` as one
sandbox for the whole trial (environments/bwrap.py). The agent's program
enters it like every command of the trial (providers/in_trial.py), with
``execution.network: model``: a relay inside the sandbox reaches the wire
recorder on the host, which holds the real key; a server on the host's
loopback and the scripted model's own port are not reachable. For Claude
Code, Codex and OpenCode alike, the scripted model makes the agent edit
``calc.py`` rightly (mode ``fix``) or wrongly (mode ``wrong``), both claiming
success, and leave an HTTP server running in the background; the verifier,
later and on another network, must find the server, pass the first and fail
the second. An agent out of time is ended
inside and what it left is still verified. Under ``CI=true`` a missing
``bwrap``, its tools or an agent's program fails these tests.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from tests.binaries import agent_binary, missing
from tests.sandbox_runtimes import require
from tests.scripted import agent_runs
from tests.scripted.agent_runs import profiler, rows

from profiler_core.fakemodel import FakeModelServer, Shell, Text, steps

pytestmark = pytest.mark.slow

#: a host folder the sandbox shows as it is (its /tmp is a fresh one)
VISIBLE = "/var/tmp"

BROKEN = agent_runs.BROKEN_CALC
SECRET = "sk-real-key-kept-by-the-recorder-3141"
#: agent -> (program, its variable, model, the suffix of its base URL)
AGENTS = agent_runs.TRIAL_AGENTS
#: the verifier: the reward from calc.py, and what the agent's server answers (or "none")
TEST = """#!/bin/bash
cd /app
if python3 -c 'from calc import add; assert add(2, 3) == 5'; then echo 1; else echo 0; fi \\
  > /logs/verifier/reward.txt
# the agent's server may still be starting on a loaded machine: asked for up to 10 s
python3 -c 'import sys, time, urllib.request as u
for _ in range(50):
    try:
        sys.stdout.write(u.urlopen(
            "http://127.0.0.1:{port}/state.txt", timeout=3).read().decode().strip())
        break
    except OSError:
        time.sleep(0.2)
else:
    sys.exit(1)' > /logs/verifier/server.txt 2>/dev/null || echo none > /logs/verifier/server.txt
"""
_PROBE = (
    "import socket\n"
    "for p in ({hp}, {mp}):\n"
    "    try:\n"
    "        socket.create_connection(('127.0.0.1', p), timeout=3).close(); print(p, 'reached')\n"
    "    except OSError:\n"
    "        print(p, 'refused')\n"
)


@pytest.fixture
def tools():
    require("bwrap")
    from profiler_core.environments.bwrap import TOOLS, persistent_tools

    if persistent_tools() is None:
        missing(
            ", ".join(TOOLS), "apt-get install util-linux slirp4netns (bwrap trials)"
        )


@pytest.fixture
def host_server():
    """A TCP server on the host's loopback: the agent, on network ``model``, must not reach it."""
    with agent_runs.host_server("127.0.0.1") as port:
        yield port


def _task(root: Path, port: int, marker: str) -> None:
    task = root / "tasks" / "calc"
    (task / "environment" / "served").mkdir(parents=True)
    (task / "environment" / "calc.py").write_text(BROKEN)
    (task / "environment" / "served" / "state.txt").write_text(marker + "\n")
    (task / "instruction.md").write_text("The tests of calc.py fail. Fix it.\n")
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text(TEST.format(port=port))
    (task / "task.toml").write_text(
        'schema_version = "1.1"\n[task]\nname = "trial-agents/calc"\n'
        '[environment]\nworkdir = "/app"\n'
        "[agent]\ntimeout_sec = 180.0\n[verifier]\ntimeout_sec = 60.0\n"
    )


def _profile(
    root: Path,
    binary: str,
    url: str,
    kind: str = "bwrap",
    agent: str = "claude-code",
    network: str = "model",
    tasks: Path | None = None,
) -> Path:
    options = {
        "base_url": url,
        "binary": binary,
        "max_retries": 0,
        "api_key_env": "I37_BWRAP_KEY",
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
        "scenarios": {"path": str(tasks or "tasks"), "format": "harbor"},
        "provider": {"id": agent, "model": AGENTS[agent][2], "options": options},
        "scorer": {"id": "verify"},
        "execution": {
            "repetitions": 1,
            "warmup": False,
            "sandbox": kind,
            "network": network,
        },
        "output": {"keep_workspaces": "all"},
    }
    path = root / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def _script(
    host_port: int, model_port: int, server_port: int, tests: Path, detach: bool = False
):
    probe = _PROBE.format(hp=host_port, mp=model_port)
    # a server in the background, in the agent's own session and process group (Codex
    # ends its command's process group when the command returns: there it detaches)
    server = (
        f"{'setsid ' if detach else ''}nohup python3 -m http.server {server_port} "
        "--bind 127.0.0.1 "
        "--directory /app/served >/dev/null 2>&1 < /dev/null & "
    )
    shell = (
        f'python3 -c "{probe}" > net.txt 2>&1; env=$(cat /proc/[0-9]*/environ '
        '2>/dev/null | tr "\\0" "\\n"); '
        'echo "$env" | grep -c kept-by-the-recorder > secret.txt; '
        'echo "$env" | grep -c profiler-wire-placeholder > placeholder.txt; '
        "pwd > pwd.txt; ls -d /logs/agent /logs/verifier > logs.txt 2>&1; "
        # the task's hidden tests at their host path: hidden in the trial too
        f"cat {tests}/test.sh 2>/dev/null | wc -c > tests_seen.txt; " + server
    )
    fix = steps(
        [Shell(shell + "sed -i 's/a - b/a + b/' calc.py"), Text("Done: all pass.")]
    )
    wrong = steps(
        [Shell(shell + "sed -i 's/a - b/a * b/' calc.py"), Text("Done: all pass.")]
    )
    return lambda body: (fix if "MODE-FIX" in json.dumps(body) else wrong)(body)


def test_claude_code_runs_inside_the_bwrap_trial_and_reaches_only_its_model(
    tools, tmp_path, host_server, monkeypatch
):
    right_and_wrong(tmp_path, host_server, monkeypatch, "bwrap")


def test_with_a_full_network_the_agent_still_reaches_its_model_on_the_hosts_loopback(
    tools, tmp_path, host_server, monkeypatch
):
    """``execution.network: full``: slirp4netns has no way to the host's loopback, so the
    wire recorder there is relayed into the sandbox for the agent's phase."""
    right_and_wrong(tmp_path, host_server, monkeypatch, "bwrap", network="full")


@pytest.mark.parametrize("agent", ["codex", "opencode"])
def test_codex_and_opencode_run_inside_the_bwrap_trial_too(
    tools, tmp_path, host_server, monkeypatch, agent
):
    right_and_wrong(tmp_path, host_server, monkeypatch, "bwrap", agent)


def test_claude_code_out_of_time_is_ended_inside_and_still_verified(tools, tmp_path):
    """The session's end ends the agent's processes in the sandbox; the verifier judges
    what it left."""
    out_of_time(tmp_path, "bwrap")


def right_and_wrong(
    tmp_path: Path,
    host_server: int,
    monkeypatch,
    kind: str,
    agent: str = "claude-code",
    network: str = "model",
) -> None:
    """Modes ``fix`` and ``wrong`` of a real agent in a ``kind`` trial: judged, its
    server kept, only its model reached."""
    program, variable, _, suffix = AGENTS[agent]
    binary = str(agent_binary(program, variable))
    monkeypatch.setenv("I37_BWRAP_KEY", SECRET)
    server_port = 20000 + uuid.uuid4().int % 20000
    marker = f"served-{uuid.uuid4().hex[:8]}"
    # the tasks outside /tmp (the sandbox's is a fresh one), where the host's folders
    # are in sight: their hidden tests must be hidden in the trial by name
    outside = Path(tempfile.mkdtemp(prefix="i37-tasks-", dir=VISIBLE))
    try:
        _task(outside, server_port, marker)
        tests = outside / "tasks" / "calc" / "tests"
        with FakeModelServer(lambda body: script(body), model="scripted") as model:
            port = urlsplit(model.url).port or 0
            script = _script(host_server, port, server_port, tests, agent == "codex")
            path = _profile(
                tmp_path,
                binary,
                model.url + suffix,
                kind,
                agent,
                network,
                outside / "tasks",
            )
            done = profiler(
                tmp_path,
                "run",
                str(path),
                "--run-id",
                "t",
                "--progress",
                "none",
                timeout=400,
            )
            systems = [
                str((r.get("messages") or [{}])[0].get("content"))
                for r in model.chat_requests()
            ]
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if agent == "opencode":  # titled, as the server's sessions are: no call wrote one
        assert systems and not [s for s in systems if "title generator" in s], systems
    by_mode = {row["mode"]: row for row in rows(tmp_path, "t") if row["iteration"] >= 0}
    fix, wrong = by_mode["fix"], by_mode["wrong"]
    assert fix.get("error") is None and fix["reward"] == 1 and fix["success"], fix
    assert fix["tokens"]["total"] > 0  # its transcript came back out of the sandbox
    # it said "all pass"; the task's tests, in the same sandbox, say otherwise
    assert wrong.get("error") is None and wrong["reward"] == 0, wrong
    assert not wrong["success"]
    verifier = tmp_path / "reports" / "t" / "verifier" / "calc"
    for mode in ("fix", "wrong"):
        # the server the agent left running was there for the verifier
        served = (verifier / f"{mode}-iter-0" / "server.txt").read_text().strip()
        assert served == marker, (mode, served)
    kept = sorted((tmp_path / "reports" / "t" / "workspaces").rglob("net.txt"))
    assert len(kept) == 2, kept
    for net in kept:
        folder = net.parent
        # neither the host's loopback nor the scripted model's own port: only the relay
        got = [line.split()[-1] for line in net.read_text().splitlines() if line]
        assert got == ["refused", "refused"], got
        assert (folder / "secret.txt").read_text().strip() == "0"
        if agent != "opencode":  # OpenCode's key is in its config, not its environment
            assert int((folder / "placeholder.txt").read_text()) >= 1
        assert (folder / "pwd.txt").read_text().strip() == "/app"
        assert (folder / "tests_seen.txt").read_text().strip() == "0"
        assert (folder / "logs.txt").read_text().split() == [
            "/logs/agent",
            "/logs/verifier",
        ]


def out_of_time(tmp_path: Path, kind: str) -> None:
    """The real Claude Code past its timeout in a ``kind`` trial: ended inside, what it
    left verified."""
    binary = str(agent_binary("claude", "CLAUDE_BIN"))
    _task(tmp_path, 1, "unused")  # the timeout: agent_runs.assert_ended_and_verified
    (tmp_path / "tasks" / "calc" / "tests" / "test.sh").write_text(
        agent_runs.late_verifier("[c]laude")
    )
    with FakeModelServer(agent_runs.late_script(), model="scripted") as model:
        path = _profile(tmp_path, binary, model.url, kind)
        agent_runs.assert_ended_and_verified(tmp_path, path)

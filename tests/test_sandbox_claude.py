"""The real Claude Code inside bwrap against a scripted Anthropic server: it writes into
its workspace and nowhere else.

The scripted model makes Claude Code write a file, then run a shell command
that tries to read a file in the user's home, print an API key the
sandbox was not given and write into /etc; what the command printed comes
back to the model in the next request, so the test reads it there.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from tests.binaries import agent_binary
from tests.sandbox_runtimes import require, run_confined

from profiler_core.fakemodel import FakeModelServer, Text, ToolCall, steps
from profiler_core.sandbox import Job, Mount, SandboxSettings, confine

pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5"
SECRET = "sk-ant-never-passed-0123"


@pytest.fixture(scope="module")
def claude() -> Path:
    """Claude Code's program by its real path (the npm link resolved), and the
    node_modules folder holding it."""
    return agent_binary("claude", "CLAUDE_BIN").resolve()


def node_modules(program: Path) -> Path:
    return next(p for p in program.parents if p.name == "node_modules")


def test_claude_code_in_bwrap_writes_its_workspace_and_reaches_nothing_else(
    tmp_path, claude, monkeypatch
):
    require("bwrap")
    monkeypatch.setenv("PROFILER_SANDBOX_SECRET", SECRET)
    workspace, home, tmp = tmp_path / "ws", tmp_path / "home", tmp_path / "tmp"
    for folder in (workspace, home, tmp):
        folder.mkdir()
    marker = Path.home() / f".profiler-claude-marker-{uuid.uuid4().hex[:8]}"
    marker.write_text("HOME-SECRET-MARKER", encoding="utf-8")
    escape = Path(f"/etc/profiler-claude-escape-{uuid.uuid4().hex[:8]}")
    probe = (
        f"cat {marker}; echo key=${{PROFILER_SANDBOX_SECRET:-unset}}; touch "
        f"{escape} && echo wrote-etc; echo probe-done"
    )
    script = steps(
        [
            ToolCall(
                "Write",
                {
                    "file_path": str(workspace / "hello.txt"),
                    "content": "written inside the sandbox\n",
                },
            ),
            ToolCall("Bash", {"command": probe, "description": "Probe the sandbox"}),
            Text("Done: wrote hello.txt."),
        ]
    )
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "ANTHROPIC_BASE_URL": "",  # set below, once the server has a port
        "ANTHROPIC_API_KEY": "profiler-no-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",  # Claude Code refuses to skip permissions as root otherwise
    }
    command = (
        str(claude),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        MODEL,
    )
    command += (
        "--dangerously-skip-permissions",
        "--",
        "Write hello.txt, then probe the sandbox.",
    )
    try:
        with FakeModelServer(script) as server:
            env["ANTHROPIC_BASE_URL"] = server.url
            job = Job(
                argv=command, env=env, workspace=workspace, home=home, tmp=tmp, endpoints=(server.url,),
                mounts=(Mount(source=node_modules(claude)),), name="claude",
            )  # fmt: skip
            with confine(SandboxSettings(sandbox="bwrap"), job) as box:
                done = run_confined(box, 180)
            requests = server.messages()
    finally:
        marker.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["type"] == "result" and result["result"] == "Done: wrote hello.txt."
    assert (workspace / "hello.txt").read_text() == "written inside the sandbox\n"
    assert len(requests) == 3
    shell_output = _tool_result(requests[-1].body)
    assert "probe-done" in shell_output
    assert "key=unset" in shell_output and SECRET not in json.dumps(
        [r.body for r in requests]
    )
    assert "HOME-SECRET-MARKER" not in shell_output and "No such file" in shell_output
    assert "wrote-etc" not in shell_output and not escape.exists()
    # The agent's own state went to the private home given to it.
    assert any((home / ".claude").iterdir())


def _tool_result(body: dict) -> str:
    """The text of the last tool result in a Messages request."""
    for message in reversed(body["messages"]):
        for block in message.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    raise AssertionError("no tool result in the request")

"""A first verified comparison in one command: `profiler init --agent X --example
tasks`, then `profiler run`.

The real OpenCode, Claude Code and Codex programs, confined by bwrap, on the three example
Harbor tasks, answered by the fake model with the example's own script: the agent really edits
the tasks' files, the tasks' own tests decide, and verified success differs between the modes
(some sessions pass, some fail, a verdict is given). In CI a missing program fails the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.binaries import AGENT_BIN, agent_binary
from tests.sandbox_runtimes import require
from tests.test_fakemodel import start_fake_model, stop

from profiler_core.demo.tasks_example import EXPECTED, FAKE_MODEL

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {"opencode": "opencode", "claude-code": "claude", "codex": "codex"}
#: OpenCode runs the one task its two modes disagree on: each of its sessions in a
#: trial costs ~5 s of CPU (`opencode run`, then `opencode export`), and the other
#: two agents run all three tasks as the example ships them.
ONLY = {"opencode": ("add-cli-flag",)}


def _profiler(
    *args: str, cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "profiler_core", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_example_tasks_are_those_of_examples_tasks(tmp_path):
    """The tasks `init --example tasks` writes are examples/tasks, byte for byte (the
    package keeps a copy)."""
    from profiler_core.demo.tasks_example import tasks_example_files

    files = {
        k.removeprefix("tasks/"): v
        for k, v in tasks_example_files("codex", 8765, sandbox=True).items()
        if k.startswith("tasks/")
    }
    example = ROOT / "examples" / "tasks"
    on_disk = {
        p.relative_to(example).as_posix(): p.read_text()
        for p in example.rglob("*")
        if p.is_file() and p.name != "profile.yaml"
    }
    on_disk = {
        k: v for k, v in on_disk.items() if not k.startswith(("results/", "reports/"))
    }
    assert files == on_disk


def test_example_needs_an_agent(tmp_path):
    done = _profiler(
        "init",
        "--example",
        "tasks",
        str(tmp_path / "x"),
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=60,
    )
    assert done.returncode == 2 and "--example goes with --agent" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("agent", list(PROGRAMS))
def test_one_command_gives_a_verified_comparison_with_the_real_agent(tmp_path, agent):
    program = PROGRAMS[agent]
    agent_binary(
        program
    )  # fails in CI, skips on a developer's machine, when the program is missing
    require("bwrap")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENCODE_BIN", "CLAUDE_BIN", "CODEX_BIN", "PROFILER_AGENTS_DIR")
    }
    if (AGENT_BIN / program).exists():
        env["PATH"] = os.pathsep.join(
            (os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin")
        )
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(FAKE_MODEL)
    model, url = start_fake_model(str(script), "--quiet", cwd=tmp_path)
    try:
        init = _profiler(
            "init",
            "--agent",
            agent,
            "--example",
            "tasks",
            "ex",
            "--port",
            url.rsplit(":", 1)[1],
            cwd=tmp_path,
            env=env,
            timeout=60,
        )
        assert init.returncode == 0, init.stderr
        assert (tmp_path / "ex" / "fake-model.yaml").read_text() == FAKE_MODEL
        assert "\n  sandbox: bwrap " in (tmp_path / "ex" / "profile.yaml").read_text()
        run = _profiler(
            "run",
            "ex/profile.yaml",
            "--repetitions",
            "1",
            "--run-id",
            "ex",
            "--progress",
            "none",
            *[
                arg
                for scenario in ONLY.get(agent, ())
                for arg in ("--scenario", scenario)
            ],
            cwd=tmp_path,
            env=env,
            timeout=400,
        )
    finally:
        stop(model)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [
        json.loads(line)
        for line in (tmp_path / "ex" / "results" / "ex.jsonl").read_text().splitlines()
    ]
    assert all(r.get("error") is None for r in rows), [r.get("error") for r in rows]
    verified = {(r["mode"], r["scenarioId"]): r["success"] for r in rows}
    expected = {
        cell: success
        for cell, success in EXPECTED.items()
        if cell[1] in ONLY.get(agent, (cell[1],))
    }
    assert verified == expected  # the agent really changed the files the verifiers test
    assert all(r["reward"] == (1.0 if r["success"] else 0.0) for r in rows)
    assert all(r["toolCalls"]["total"] == 2 for r in rows)
    report = (tmp_path / "ex" / "reports" / "ex" / "report.md").read_text()
    assert "## Verdict" in report and "Success" in report
    assert "Mean reward" in report
    # a failed transcript: the verifier's output of a failed session is in the report
    assert "Verifier output of add-cli-flag · quick" in report


def test_claude_codes_profiles_say_its_own_cost_is_used_and_the_others_get_prices():
    from profiler_core.demo.agent import agent_files
    from profiler_core.demo.tasks_example import tasks_example_files

    for files in (agent_files, tasks_example_files):
        claude = files("claude-code", 8765, sandbox=True)["profile.yaml"]
        assert "prices:" not in claude and "Claude Code reports its own cost" in claude
        for agent in ("codex", "opencode"):
            profile = files(agent, 8765, sandbox=True)["profile.yaml"]
            assert "prices:" in profile and "made-up prices" in profile

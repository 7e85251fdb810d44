"""Real Claude Code and Codex, in bubblewrap, judged by the task's tests — not by what they say.

The scripted model makes the agent edit ``calc.py`` with its shell tool: in
mode ``fix`` correctly, in mode ``wrong`` wrongly, and both end with "Done:
all tests pass." The verifier (hidden tests copied in after the session) must
pass the first and fail the second. Each session also lists its workspace and
tries to read a secret it was not given and a file in the user's home: the
listing must hold only its own files, the reads must fail.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
import yaml
from tests.binaries import agent_binary, system_binary
from tests.scripted.agent_runs import profiler, rows

from profiler_core.fakemodel import FakeModelServer, Shell, Text, steps

pytestmark = pytest.mark.slow

BROKEN = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SECRET = "sk-not-for-the-agent-3141592"


def _shell(edit: str, marker: Path) -> str:
    return (
        f'ls -A > seen.txt; echo "key=${{PROFILER_TEST_SECRET:-}}" > env.txt; '
        f"cat {marker} > home.txt 2>&1; touch /etc/escaped-by-agent 2> etc.txt; {edit}"
    )


def _script(marker: Path):
    """One script for every agent: a shell call (whichever shell tool the agent offers),
    then the claim."""

    def script(edit):
        return steps([Shell(_shell(edit, marker)), Text("Done: all tests pass.")])

    return _by_mode(
        script, json.dumps
    )  # the mode's instructions travel in the request body


def _by_mode(script, system_of):
    fix, wrong = (
        script("sed -i 's/a - b/a + b/' calc.py"),
        script("sed -i 's/a - b/a * b/' calc.py"),
    )

    def reply(body):
        return (fix if "MODE-FIX" in system_of(body) else wrong)(body)

    return reply


AGENTS = {
    "claude-code": ("claude", "CLAUDE_BIN", "claude-sonnet-4-5", ""),
    "codex": ("codex", "CODEX_BIN", "gpt-5-codex", "/v1"),
    "opencode": ("opencode", "OPENCODE_BIN", "local/scripted", "/v1"),
}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_an_agent_in_bwrap_is_judged_by_the_tasks_tests(tmp_path, agent, monkeypatch):
    system_binary("bwrap", hint="apt-get install bubblewrap")
    program, variable, model, suffix = AGENTS[agent]
    binary = str(agent_binary(program, variable))
    marker = (
        Path.home() / f".profiler-test-marker-{uuid.uuid4().hex[:8]}"
    )  # tmp_path names repeat across xdist workers
    marker.write_text("a file of the user's home")
    monkeypatch.setenv("PROFILER_TEST_SECRET", SECRET)
    try:
        with FakeModelServer(_script(marker), model="scripted") as server:
            path = _profile(tmp_path, agent, binary, model, server.url + suffix)
            done = profiler(
                tmp_path,
                "run",
                str(path),
                "--run-id",
                "v",
                "--progress",
                "none",
                timeout=400,
            )
    finally:
        marker.unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    by_mode: dict[str, list[dict]] = {}
    for row in rows(tmp_path, "v"):
        by_mode.setdefault(row["mode"], []).append(row)
    for row in by_mode["fix"]:
        assert row["success"] and [
            (d["id"], d["passed"]) for d in row["checkpointDetails"]
        ] == [("verify:tests", True)]
    for row in by_mode["wrong"]:
        # The agent said "all tests pass"; the tests say otherwise.
        assert not row["success"] and not row.get("error")
        assert [(d["id"], d["passed"]) for d in row["checkpointDetails"]] == [
            ("verify:tests", False)
        ]
    kept = sorted((tmp_path / "reports" / "v" / "workspaces" / "calc").iterdir())
    assert len(kept) == 4
    for workspace in kept:
        assert (workspace / "seen.txt").read_text().split() == [
            "calc.py",
            "seen.txt",
        ]  # no other session's file, no hidden tests
        assert (workspace / "env.txt").read_text().strip() == "key="
        assert "a file of the user's home" not in (workspace / "home.txt").read_text()
        assert (
            (workspace / "etc.txt").read_text().strip()
        )  # the write outside the workspace failed
    assert not Path("/etc/escaped-by-agent").exists()


def _profile(tmp_path: Path, agent: str, binary: str, model: str, url: str) -> Path:
    scenarios = tmp_path / "scenarios"
    (scenarios / "repo").mkdir(parents=True)
    (scenarios / "repo" / "calc.py").write_text(BROKEN)
    (scenarios / "hidden").mkdir()
    (scenarios / "hidden" / "test_calc.py").write_text(TEST)
    scenario = {
        "id": "calc",
        "name": "Fix add",
        "prompt": "The tests of calc.py fail. Fix it.",
        "timeoutMs": 120_000,
        "workspace": {"path": "repo"},
        "verify": [
            {
                "name": "tests",
                "command": f"{sys.executable} -m pytest -q -p no:cacheprovider tests",
                "files": {"tests": "hidden"},
                "timeoutMs": 60_000,
            }
        ],
    }
    (scenarios / "calc.json").write_text(json.dumps(scenario))
    options = {"base_url": url, "binary": binary, "max_retries": 1}
    if (
        agent == "opencode"
    ):  # OpenCode reaches the model through its own config; base_url would name a server
        from tests.opencode_helpers import model_config

        options = {"binary": binary, "config": model_config(url), "start_timeout_s": 60}
    profile = {
        "modes": {
            "fix": {"system_instructions": "MODE-FIX"},
            "wrong": {"system_instructions": "MODE-WRONG"},
        },
        "scenarios": {"path": "scenarios"},
        "provider": {"id": agent, "model": model, "options": options},
        "scorer": {"id": "verify"},
        # The verifier runs this interpreter, which may live under the (hidden) home,
        # e.g. in pyenv, and its venv,
        # which lives in /tmp when the checkout does (bwrap's /tmp is a fresh one).
        "execution": {
            "repetitions": 2,
            "warmup": False,
            "concurrency": 2,
            "sandbox": "bwrap",
            "expose_paths": sorted(
                {str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())}
            ),
        },
        "output": {"keep_workspaces": "all"},
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path

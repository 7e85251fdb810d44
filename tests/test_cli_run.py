"""`profiler run` / `profiler validate` in real subprocesses: exit codes, Ctrl-C, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

PLUGIN = """
from datetime import UTC, datetime
import trio
from profiler_core import (PromptMetrics, PromptResult, ScorerResult, SessionHandle, TimingBreakdown,
                           TokenBreakdown, ToolCallRecord, hookimpl)
from profiler_core.testing import simple_trace

class SlowProvider:
    id = "slow"
    def __init__(self, delay_s=0.1):
        self.delay_s = delay_s
        self.n = 0
    def init(self, config): pass
    def create_session(self, params):
        self.n += 1
        return SessionHandle(session_id=f"s{self.n}", provider=self.id, created_at=datetime.now(UTC).isoformat())
    async def prompt(self, handle, text, timeout_ms=None):
        await trio.sleep(self.delay_s)
        return PromptResult(text="ok", metrics=PromptMetrics(tokens=TokenBreakdown(input=10, output=5),
                            timing=TimingBreakdown(wall_ms=self.delay_s * 1000), tool_calls=(ToolCallRecord(name="bash"),)))
    def export_session(self, handle):
        return simple_trace(handle.session_id, "ok", (ToolCallRecord(name="bash"),), TokenBreakdown(input=10, output=5), 100)
    def destroy_session(self, handle): pass
    def shutdown(self): pass

class Always:
    id = "always"
    def evaluate(self, scenario, context):
        return ScorerResult(success=True, passed=1, total=1)

@hookimpl
def profiler_register_providers():
    return [SlowProvider]

@hookimpl
def profiler_register_scorers():
    return [Always]
"""


@pytest.fixture
def project(tmp_path):
    """A profile plus a plugin discoverable through a real entry point (a dist-info on sys.path)."""
    site = tmp_path / "site"
    (site / "slowplugin-0.1.dist-info").mkdir(parents=True)
    (site / "slowplugin.py").write_text(PLUGIN)
    (site / "slowplugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: slowplugin\nVersion: 0.1\n"
    )
    (site / "slowplugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[agent_profiler]\nslow = slowplugin\n"
    )
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for i in range(1, 4):
        (scenarios / f"s{i}.json").write_text(
            json.dumps({"id": f"s{i}", "name": f"S{i}", "prompt": "go"})
        )
    (tmp_path / "profile.yaml").write_text(
        textwrap.dedent("""
        modes:
          a: {}
          b: {environment: {B_MODE: "1"}}
        scenarios: {path: scenarios}
        provider: {id: slow, model: m, options: {delay_s: 0.1}}
        scorer: {id: always}
        analyzers: []
        execution: {repetitions: 5, warmup: false}
    """)
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(site), str(SRC), env.get("PYTHONPATH", "")]
    )
    env["PROFILER_LOAD_PLUGINS"] = "slow"
    return tmp_path, env


def profiler(args, cwd, env, **kw):
    return subprocess.run(
        [sys.executable, "-m", "profiler_core", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        **kw,
    )


@pytest.mark.slow
def test_interrupt_then_resume_records_every_cell_once(project):
    tmp_path, env = project
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "profiler_core",
            "run",
            "profile.yaml",
            "--run-id",
            "r1",
            "--no-report",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    jsonl = tmp_path / "results" / "r1.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if jsonl.exists() and len(jsonl.read_text().splitlines()) >= 6:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Run r1" in out.splitlines()[0]
    assert "--resume r1" in err
    manifest = json.loads((tmp_path / "results" / "r1.manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    done_before = len(jsonl.read_text().splitlines())
    assert 6 <= done_before < 30

    resumed = profiler(
        ["run", "profile.yaml", "--resume", "r1", "--no-report"],
        tmp_path,
        env,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done_before} cells already done" in resumed.stdout
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    cells = [(r["mode"], r["scenarioId"], r["iteration"]) for r in rows]
    assert len(cells) == 30 and len(set(cells)) == 30
    manifest = json.loads((tmp_path / "results" / "r1.manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["counts"]["completed"] == 30
    assert manifest["resumedFrom"]


def test_resume_refuses_a_changed_profile(project):
    tmp_path, env = project
    first = profiler(
        ["run", "profile.yaml", "--run-id", "r2", "--no-report", "--repetitions", "1"],
        tmp_path,
        env,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    profile = tmp_path / "profile.yaml"
    profile.write_text(profile.read_text().replace("repetitions: 5", "repetitions: 6"))
    again = profiler(
        ["run", "profile.yaml", "--resume", "r2", "--no-report", "--repetitions", "2"],
        tmp_path,
        env,
        timeout=60,
    )
    assert again.returncode == 1
    assert "changed since run r2" in again.stderr and "Traceback" not in again.stderr
    forced = profiler(
        [
            "run",
            "profile.yaml",
            "--resume",
            "r2",
            "--no-report",
            "--repetitions",
            "2",
            "--force",
        ],
        tmp_path,
        env,
        timeout=60,
    )
    assert forced.returncode == 0, forced.stderr


def test_run_prints_summary_and_paths(project):
    tmp_path, env = project
    result = profiler(
        [
            "run",
            "profile.yaml",
            "--no-report",
            "--repetitions",
            "2",
            "--concurrency",
            "4",
        ],
        tmp_path,
        env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Run run_")
    assert "Summary per mode" in result.stdout and "100%" in result.stdout
    assert "Results:" in result.stdout and "Manifest:" in result.stdout
    traces = next(
        line for line in result.stdout.splitlines() if line.startswith("Traces:")
    )
    assert traces.split(maxsplit=1)[1].endswith("/sessions/traces.jsonl")
    assert Path(traces.split(maxsplit=1)[1]).is_file()


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            ("execution: {", "exeuction: {"),
            "`exeuction`: unknown key; did you mean `execution`?",
        ),
        (
            ("repetitions: 5", "repetitions: five"),
            "execution.repetitions: expected an integer >= 1, got 'five'",
        ),
        (("path: scenarios", "path: nowhere"), "scenarios.path: scenario folder"),
        (("id: slow,", "id: slwo,"), "unknown provider 'slwo'; did you mean 'slow'?"),
    ],
)
def test_bad_profiles_are_one_line_exit_1(project, edit, expected):
    tmp_path, env = project
    profile = tmp_path / "profile.yaml"
    profile.write_text(profile.read_text().replace(*edit))
    for command in (
        ["run", "profile.yaml", "--no-report"],
        ["validate", "profile.yaml"],
    ):
        result = profiler(command, tmp_path, env, timeout=60)
        assert result.returncode == 1
        assert expected in result.stderr
        assert "Traceback" not in result.stderr
        assert not (tmp_path / "results").exists()


def test_unknown_mode_on_the_command_line(project):
    tmp_path, env = project
    result = profiler(
        ["run", "profile.yaml", "--mode", "zzz"], tmp_path, env, timeout=60
    )
    assert (
        result.returncode == 1
        and "unknown mode(s) zzz" in result.stderr
        and "Traceback" not in result.stderr
    )


def test_validate_prints_the_matrix(project):
    tmp_path, env = project
    result = profiler(["validate", "profile.yaml"], tmp_path, env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "matrix:      30 iterations" in result.stdout


def test_before_run_failure_exits_1_and_nothing_starts(project):
    tmp_path, env = project
    site = Path(env["PYTHONPATH"].split(os.pathsep)[0])
    (site / "slowplugin.py").write_text(
        PLUGIN + "\n@hookimpl\ndef profiler_before_run(ctx):\n    raise "
        "RuntimeError('fixtures missing: repo-a')\n"
    )
    result = profiler(["run", "profile.yaml", "--no-report"], tmp_path, env, timeout=60)
    assert result.returncode == 1
    assert (
        "fixtures missing: repo-a" in result.stderr and "Traceback" not in result.stderr
    )
    assert not list((tmp_path / "results").glob("*.jsonl"))


def test_reusing_a_run_id_is_refused(project):
    tmp_path, env = project
    args = [
        "run",
        "profile.yaml",
        "--no-report",
        "--repetitions",
        "1",
        "--run-id",
        "dup",
    ]
    assert profiler(args, tmp_path, env, timeout=60).returncode == 0
    again = profiler(args, tmp_path, env, timeout=60)
    assert (
        again.returncode == 1
        and "already exists" in again.stderr
        and "--resume dup" in again.stderr
    )
    assert len((tmp_path / "results" / "dup.jsonl").read_text().splitlines()) == 6


def test_resume_keeps_the_first_runs_flags_when_new_ones_are_given(project):
    tmp_path, env = project
    first = profiler(
        ["run", "profile.yaml", "--no-report", "--repetitions", "2", "--run-id", "r3"],
        tmp_path,
        env,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    jsonl = tmp_path / "results" / "r3.jsonl"
    lines = jsonl.read_text().splitlines()
    jsonl.write_text("\n".join(lines[:5]) + "\n")
    resumed = profiler(
        ["run", "profile.yaml", "--no-report", "--resume", "r3", "--concurrency", "2"],
        tmp_path,
        env,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert (
        len(jsonl.read_text().splitlines()) == 12
    )  # 2 modes x 3 scenarios x 2 repetitions, not the default 5


def test_malformed_checks_fail_before_any_session(project):
    tmp_path, env = project
    scenario = tmp_path / "scenarios" / "s1.json"
    scenario.write_text(
        json.dumps(
            {
                "id": "s1",
                "name": "S1",
                "prompt": "go",
                "extensions": {"checks": [{"id": "a", "condition": {"type": "nope"}}]},
            }
        )
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        profile.read_text().replace("scorer: {id: always}", "scorer: {id: checks}")
    )
    for command in (
        ["validate", "profile.yaml"],
        ["run", "profile.yaml", "--no-report"],
    ):
        result = profiler(command, tmp_path, env, timeout=60)
        assert result.returncode == 1, result.stdout
        assert (
            "extensions.checks[0]: $.condition.type: expected a condition type"
            in result.stderr
        )
        assert "Traceback" not in result.stderr
    assert (
        not list((tmp_path / "results").glob("*.jsonl"))
        if (tmp_path / "results").exists()
        else True
    )

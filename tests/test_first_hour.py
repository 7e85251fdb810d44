"""A new user's first hour, the small things (issue 31.20): one metric name, unknown
costs, ghx metrics, hints, summaries."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, Scenario, TokenBreakdown
from profiler_core.config.loader import ProfileErrors, load_profile
from profiler_core.importers.opencode import session_from_messages
from profiler_core.report.load import load_rows
from profiler_core.report.merge import expand_sources
from profiler_core.report.summary import build_summary
from profiler_core.report.verdict import verdict_lines
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo"
PROFILER = [sys.executable, "-m", "profiler_core"]


def profiler(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROFILER, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def row(mode: str, iteration: int, extensions: dict) -> str:
    """A minimal valid result row."""
    return json.dumps({
        "runId": "r", "scenarioId": "s", "mode": mode, "model": "m", "iteration": iteration,
        "startedAt": "2026-01-01T00:00:00Z", "completedAt": "2026-01-01T00:00:01Z",
        "tokens": {"input": 10 + iteration, "output": 5}, "timing": {"wallMs": 1000 + iteration},
        "toolCalls": {"total": 1, "byCategory": {}, "failed": 0, "retried": 0, "errorRate": 0, "records": []},
        "cost": {"totalUsd": 0.01}, "success": True, "checkpointsPassed": 1, "checkpointsTotal": 1,
        "checkpointDetails": [], "outputValid": True, "provider": "p", "sessionId": f"s{mode}{iteration}",
        "agentTurns": 1, "completionReason": "stop", "extensions": extensions,
    })  # fmt: skip


# -- one name for the time tools ran -----------------------------------------------------


def test_opencode_names_its_tool_time_as_the_other_agents_do():
    tool = {
        "type": "tool",
        "callID": "c",
        "tool": "bash",
        "state": {
            "status": "completed",
            "input": {},
            "output": "",
            "time": {"start": 1000, "end": 1800},
        },
    }
    message = {
        "info": {
            "id": "m1",
            "role": "assistant",
            "time": {"created": 500, "completed": 2500},
            "tokens": {"input": 1, "output": 1},
        },
        "parts": [tool],
    }
    user = {
        "info": {"id": "u1", "role": "user", "time": {"created": 400}},
        "parts": [{"type": "text", "text": "hi"}],
    }
    session = session_from_messages([user, message], session_id="s")
    assert {s.label for s in session.result.metrics.timing.segments} == {
        "tools",
        "model",
    }


def test_reports_read_the_old_name_as_the_new_one(tmp_path):
    path = tmp_path / "rows.jsonl"
    # An OpenCode row written before (latency_tool_ms) beside newer rows (latency_tools_ms).
    path.write_text("\n".join([row("a", 0, {"latency_tool_ms": 100}), row("a", 1, {"latency_tools_ms": 300}),
                               row("b", 0, {"latency_tools_ms": 50}), row("b", 1, {"latency_tools_ms": 70})]) + "\n")  # fmt: skip
    summary = build_summary(load_rows(path, parallel=False), run_id="r")
    names = {m.name for m in summary.metrics} | set(summary.omitted_metrics)
    assert "latency_tools_ms" in names and "latency_tool_ms" not in names
    assert summary.by_mode["latency_tools_ms"]["median"][0] == 200


# -- an unpriced model's cost is unknown, in the terminal too -------------------------------------


@pytest.fixture(scope="module")
def unpriced(tmp_path_factory):
    """`profiler run` of the demo on a model no price table knows."""
    folder = tmp_path_factory.mktemp("unpriced")
    shutil.copytree(
        DEMO, folder / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    profile = folder / "demo" / "profile.yaml"
    profile.write_text(
        profile.read_text()
        .replace("model: sim-small", "model: no-price-model")
        .replace("time_scale: 0.002", "time_scale: 0")
    )
    done = profiler(
        folder,
        "run",
        str(profile),
        "--repetitions",
        "1",
        "--skip-warmup",
        "--scenario-set",
        "quick",
        "--progress",
        "plain",
    )
    assert done.returncode == 0, done.stderr
    return folder, done


def test_the_terminal_summary_says_unknown_for_an_unpriced_model(unpriced):
    _, done = unpriced
    table = [
        line
        for line in done.stdout.splitlines()
        if "baseline" in line or "with_skill" in line
    ][:2]
    assert len(table) == 2 and all(
        "unknown" in line and "0.0000" not in line for line in table
    ), done.stdout
    progress = [
        line for line in done.stderr.splitlines() if line.startswith("progress:")
    ]
    assert "cost unknown" in progress[-1] and "$0.0000" not in progress[-1]


def test_runs_without_the_eval_plugin_have_no_ghx_metrics(unpriced):
    folder, _ = unpriced
    (results,) = [
        p
        for p in (folder / "demo" / "results").glob("*.jsonl")
        if not p.name.endswith(".analysis.jsonl")
    ]
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert rows and not [
        k for r in rows for k in r["extensions"] if k.startswith("ghx.")
    ]
    report = (folder / "demo" / "reports" / results.stem / "report.md").read_text()
    assert "ghx." not in report


def test_the_ghx_collector_counts_any_scenario_when_asked():
    from profiler_core import (
        PromptMetrics,
        PromptResult,
        TimingBreakdown,
        ToolCallRecord,
    )
    from profiler_eval_ghx.collector import GhxCollector

    result = PromptResult(
        text="x",
        metrics=PromptMetrics(
            tokens=TokenBreakdown(),
            timing=TimingBreakdown(wall_ms=1),
            tool_calls=(ToolCallRecord(name="gh_x"),),
        ),
    )
    plain = Scenario(id="s", name="s", prompt="p")
    assert GhxCollector().collect(result, plain, "m", None) == []
    assert len(GhxCollector(always=True).collect(result, plain, "m", None)) == 6


def test_the_missing_ghx_warning_is_printed_once(tmp_path, caplog):
    from profiler_eval_ghx.modes import EvalModeResolver

    resolver = EvalModeResolver(
        ghx_bin_dir=str(tmp_path),
        environ={"PATH": "/usr/bin"},
        cwd=tmp_path,
        home=tmp_path,
    )
    with caplog.at_level(logging.WARNING):
        resolver.resolve("ghx")  # validation resolves every mode...
        resolver.resolve("ghx")  # ...and the run again
    assert [r.getMessage() for r in caplog.records].count(
        f"mode ghx: no ghx in {tmp_path} (set GHX_BIN_DIR, or npm install ghx there)"
    ) == 1


# -- analyze takes what traces export takes, and sums up -------------------------------------------


def test_analyze_takes_a_report_folder_and_ends_with_a_summary(unpriced):
    folder, _ = unpriced
    (report_dir,) = (folder / "demo" / "reports").iterdir()
    done = profiler(folder, "analyze", str(report_dir))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    summary = lines.index(next(line for line in lines if line.startswith("Summary: ")))
    assert lines[summary] == "Summary: 4 sessions analysed"
    assert any(
        line.split()[:2] == ["efficiency", "total_turns"] and "median" in line
        for line in lines[summary:]
    )
    only = profiler(folder, "analyze", str(report_dir), "--summary")
    assert only.stdout.splitlines()[0] == "Summary: 4 sessions analysed"
    missing = profiler(folder, "analyze", str(folder))
    assert missing.returncode == 1 and "no trace store here" in missing.stderr


# -- a tie names no best mode ---------------------------------------------------------------------


def test_a_tie_names_no_best_mode(tmp_path, profiler_plugin_manager):
    options = RunOptions(
        provider=FakeProvider(tokens=TokenBreakdown(input=100, output=10)), scorer=FixedScorer(),
        scenarios=[Scenario(id=f"s{i}", name="S", prompt="do") for i in range(3)],
        modes={"a": ModeConfig(), "b": ModeConfig()}, repetitions=2, warmup=False, run_id="tie",
        results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )  # fmt: skip
    options.plugin_manager = profiler_plugin_manager
    trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    lines = verdict_lines(
        build_summary(
            load_rows(tmp_path / "results" / "tie.jsonl", parallel=False), run_id="tie"
        )
    )
    assert "Success: tie: a and b — the same 100.0% success; no mode is best" in lines
    assert "Tokens: tie: a and b — the same median 110; no mode is best" in lines
    assert not [line for line in lines if "(baseline)" in line]


# -- typos get a hint ------------------------------------------------------------------------------


def test_mode_and_scenario_typos_get_did_you_mean(tmp_path):
    shutil.copytree(
        DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    profile = tmp_path / "demo" / "profile.yaml"
    with pytest.raises(ProfileErrors) as caught:
        load_profile(profile, {"modes": ["basline"]})
    assert "--mode: unknown mode(s) basline; did you mean 'baseline'?" in str(
        caught.value
    )
    with pytest.raises(ProfileErrors) as caught:
        load_profile(profile, {"scenario_ids": ["fix-parser-tst"]})
    assert (
        "--scenario: unknown scenario id(s) fix-parser-tst; did you mean 'fix-parser-test'?"
        in str(caught.value)
    )
    with pytest.raises(ProfileErrors) as caught:
        load_profile(profile, {"scenario_set": "qick"})
    assert "--scenario-set: unknown scenario set 'qick'; did you mean 'quick'?" in str(
        caught.value
    )


# -- small things
# -----------------------------------------------------------------------------------


def test_a_glob_of_results_leaves_out_the_analysis_files(tmp_path):
    for name in ("r1.jsonl", "r1.analysis.jsonl", "r2.jsonl"):
        (tmp_path / name).write_text("{}\n")
    assert expand_sources([f"{tmp_path}/*.jsonl"]) == [
        f"{tmp_path}/r1.jsonl",
        f"{tmp_path}/r2.jsonl",
    ]


def test_the_demo_says_the_agents_are_built_in():
    text = (DEMO / "profile.yaml").read_text() + (DEMO / "README.md").read_text()
    assert (
        "install its provider plugin" not in text
        and "Install a provider plugin" not in text
    )
    assert all(
        name in text
        for name in ("opencode", "claude-code", "codex", "profiler init --agent")
    )


def test_the_progress_tests_run_a_copy_of_the_demo(tmp_path):
    """They ran examples/demo/profile.yaml itself, so its results/ appeared in the checkout."""
    before = sorted(p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{ROOT / 'tests' / 'test_cli_progress.py'}::test_none_prints_no_progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert sorted(p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*")) == before

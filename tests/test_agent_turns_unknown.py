"""Without a trace the number of agent turns is unknown (null), not 0, and the report
leaves it out (issue 16.5)."""

from __future__ import annotations

import json

import trio
import trio.testing

from profiler_core import ModeConfig, ProfileRow, Scenario, from_json
from profiler_core.report import write_report
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer


def _run(tmp_path, manager, **kw):
    options = RunOptions(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=3,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        **kw,
    )
    options.plugin_manager = manager
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def test_no_trace_means_unknown_turns(tmp_path, profiler_plugin_manager):
    result = _run(tmp_path, profiler_plugin_manager, session_export=False, analyzers=[])
    assert {r.agent_turns for r in result.rows} == {None}
    lines = (tmp_path / "results" / f"{result.run_id}.jsonl").read_text().splitlines()
    assert all(json.loads(line)["agentTurns"] is None for line in lines)
    assert from_json(lines[0], ProfileRow).agent_turns is None
    summary = json.loads(
        write_report(
            tmp_path / "results" / f"{result.run_id}.jsonl",
            tmp_path / "out",
            parallel=False,
        ).summary.read_text()
    )
    compared = {
        c["metric"] for comp in summary["comparisons"] for c in comp.get("metrics", [])
    }
    assert "agent_turns" not in compared


def test_with_a_trace_turns_are_counted(tmp_path, profiler_plugin_manager):
    result = _run(tmp_path, profiler_plugin_manager)
    assert {r.agent_turns for r in result.rows} == {1}

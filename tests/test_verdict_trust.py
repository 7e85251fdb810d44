"""The verdict never passes off errored rows as results, and names the methods behind
its numbers."""

from __future__ import annotations

import json
from pathlib import Path

import trio
import trio.testing

from profiler_core import ModeConfig, Scenario
from profiler_core.report import write_report
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import Fail, FakeProvider, FixedScorer

SCENARIOS = [Scenario(id=f"s{i}", name=f"S{i}", prompt="do it") for i in range(2)]


def run_and_report(
    tmp_path: Path, script, plugin_manager, repetitions: int = 2
) -> Path:
    """Run two modes through the real runner with a scripted provider and write the report."""
    options = RunOptions(
        provider=FakeProvider(script=script),
        scorer=FixedScorer(),
        scenarios=SCENARIOS,
        modes={"baseline": ModeConfig(), "fast": ModeConfig()},
        repetitions=repetitions,
        warmup=False,
        fail_fast=False,  # every cell is attempted even when all of them fail alike
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        plugin_manager=plugin_manager,
    )
    suite = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    out = tmp_path / "report"
    write_report(
        Path(suite.output_jsonl_path), out, baseline="baseline", parallel=False
    )
    return out


def verdict_section(report_md: str) -> str:
    """The text between '## Verdict' and the next section."""
    return report_md.split("## Verdict", 1)[1].split("\n## ", 1)[0]


def test_all_errors_gives_no_verdict_and_counts_the_errors_first(
    tmp_path, profiler_plugin_manager
):
    out = run_and_report(
        tmp_path, lambda params, attempt: Fail("boom"), profiler_plugin_manager
    )
    verdict = verdict_section((out / "report.md").read_text())
    first = verdict.strip().splitlines()[0]
    assert "4 of 4 baseline" in first and "8 of 8 rows errored" in first
    assert "no verdict on speed: 4 of 4 baseline rows errored" in verdict
    assert "no verdict on success" in verdict
    # Errored rows measured no cost: unknown, not $0 (docs/reports.md), so there is no
    # cost to judge at all.
    assert "$0" not in verdict and (
        "no verdict on cost" in verdict or "**Cost:**" not in verdict
    )
    assert "0 ms" not in verdict and "significant" not in verdict
    html = (out / "report.html").read_text()
    assert "no verdict on speed: 4 of 4 baseline rows errored" in html
    summary = json.loads((out / "data" / "summary.json").read_text())
    assert summary["modeSummaries"]["baseline"]["errors"] == 4
    assert summary["verdict"]["errored"] == 8
    assert (
        summary["verdict"]["noVerdict"]["Speed"]
        == "no verdict on speed: 4 of 4 baseline rows errored"
    )


def test_errored_rows_leave_the_comparison(tmp_path, profiler_plugin_manager):
    def script(params, attempt):
        """Fail one of fast's four cells only."""
        return (
            Fail("boom")
            if params.mode == "fast"
            and params.scenario_id == "s0"
            and params.iteration == 0
            else None
        )

    out = run_and_report(tmp_path, script, profiler_plugin_manager)
    summary = json.loads((out / "data" / "summary.json").read_text())
    (comp,) = summary["comparisons"]
    speed = next(m for m in comp["metrics"] if m["metric"] == "latency_wall_ms")
    assert (speed["n"], speed["baselineN"]) == (3, 4)  # fast's errored row is left out
    verdict = verdict_section((out / "report.md").read_text())
    assert "1 of 8 rows errored (1 of 4 fast)" in verdict
    assert "no verdict on speed" not in verdict


def test_smallest_p_comes_from_the_tests_themselves():
    from profiler_core.report.verdict import smallest_p

    assert smallest_p(3, 3, paired=True) == (2 / 2**3, True)
    assert smallest_p(3, 4, paired=False) == (
        2 / 35,
        True,
    )  # two of the C(7, 3) label arrangements
    p, exact = smallest_p(20, 20, paired=True)
    assert not exact and p < 0.001


def test_small_samples_are_named_and_methods_stated(tmp_path, profiler_plugin_manager):
    out = run_and_report(
        tmp_path, lambda params, attempt: None, profiler_plugin_manager
    )
    verdict = verdict_section((out / "report.md").read_text())
    assert "paired bootstrap percentile interval of the reduction" in verdict
    assert "exact sign-flip test, Holm-adjusted" in verdict
    assert (
        "Too few for significance: with 4 paired cells the smallest possible p is 0.125"
        in verdict
    )

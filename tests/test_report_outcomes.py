"""report.md lists each scenario's iterations as pass / FAIL / error per mode, and the
rows that failed without an error (issue 16.10)."""

from __future__ import annotations

import trio
import trio.testing

from profiler_core import ModeConfig, Scenario, ScorerCheckResult, ScorerResult
from profiler_core.report import write_report
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import Fail, FakeProvider


class OddFails:
    """Odd iterations fail their one check (a clean failure, no error)."""

    id = "odd-fails"

    def evaluate(self, scenario, context):
        ok = context.iteration % 2 == 0
        check = ScorerCheckResult(
            id="even-only", description="passes on even iterations", passed=ok
        )
        return ScorerResult(success=ok, passed=int(ok), total=1, details=(check,))


def test_iteration_table_and_clean_failures(tmp_path, profiler_plugin_manager):
    # Mode b's iteration 2 errors (the provider raises); everything else runs.
    script = lambda params, attempt: (  # noqa: E731
        Fail("boom") if (params.mode, params.iteration) == ("b", 2) else None
    )
    options = RunOptions(
        provider=FakeProvider(script=script),
        scorer=OddFails(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=3,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    md = write_report(
        tmp_path / "results" / f"{result.run_id}.jsonl",
        tmp_path / "out",
        parallel=False,
    ).md.read_text()
    scenario = md.split("### s1", 1)[1]
    assert "| Mode | #0 | #1 | #2 |" in scenario
    assert "| a | pass | FAIL | pass |" in scenario
    assert "| b | pass | FAIL | error |" in scenario
    anomalies = md.split("## Errors and anomalies", 1)[1]
    assert "Rows that failed without an error" in anomalies
    assert (
        "| a | s1 | 1 | even-only |" in anomalies
        and "| b | s1 | 1 | even-only |" in anomalies
    )
    assert (
        "| b | s1 | 2 |"
        not in anomalies.split("Rows that failed without an error", 1)[1]
    )  # the errored one is an error

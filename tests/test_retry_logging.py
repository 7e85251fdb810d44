"""A retry is logged at WARNING with the error that caused it (issue 16.7)."""

from __future__ import annotations

import logging

import trio
import trio.testing

from profiler_core import ModeConfig, Scenario
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import Fail, FakeProvider, FixedScorer


def test_retry_is_a_warning_naming_the_error(tmp_path, profiler_plugin_manager, caplog):
    provider = FakeProvider(
        script=lambda params, attempt: (
            Fail("flaky upstream 502") if attempt == 1 else None
        )
    )
    options = RunOptions(
        provider=provider,
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig()},
        repetitions=1,
        warmup=False,
        allowed_retries=1,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    with caplog.at_level(logging.INFO, logger="agent_profiler"):
        result = trio.run(
            run_profile_suite,
            options,
            clock=trio.testing.MockClock(autojump_threshold=0),
        )
    assert [r.attempts for r in result.rows] == [2]
    retries = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retries) == 1
    assert retries[0].levelno == logging.WARNING
    assert (
        "flaky upstream 502" in retries[0].getMessage()
        and "s1#0" in retries[0].getMessage()
    )

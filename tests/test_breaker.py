"""A run whose agent cannot work stops after its first sessions instead of trying every cell."""

from __future__ import annotations

import pytest
import trio

from profiler_core import ModeConfig, Scenario
from profiler_core.errors import ProfilerError
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.store import read_jsonl
from profiler_core.testing import Fail, FakeProvider, FixedScorer


def _run(tmp_path, manager, script, *, warmup, repetitions=6):
    options = RunOptions(
        provider=FakeProvider(script=script), scorer=FixedScorer(), scenarios=[Scenario(id="s", name="S", prompt="p")],
        modes={"a": ModeConfig()}, repetitions=repetitions, warmup=warmup, run_id="b",
        results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = manager
    return trio.run(run_profile_suite, options)


def _rows(tmp_path):
    return read_jsonl(tmp_path / "results" / "b.jsonl").rows


def test_warm_up_and_first_cell_failing_alike_stop_the_run(tmp_path, profiler_plugin_manager):
    with pytest.raises(ProfilerError, match="the warm-up and the first session failed the same way.*connection refused"):
        _run(tmp_path, profiler_plugin_manager, lambda params, attempt: Fail(f"connection refused (port {params.iteration + 7000})"), warmup=True)
    assert len(_rows(tmp_path)) == 1


def test_without_a_warm_up_three_first_cells_failing_alike_stop_the_run(tmp_path, profiler_plugin_manager):
    with pytest.raises(ProfilerError, match="the first 3 sessions failed the same way"):
        _run(tmp_path, profiler_plugin_manager, lambda params, attempt: Fail("502 from the gateway"), warmup=False)
    assert len(_rows(tmp_path)) == 3


@pytest.mark.parametrize(
    "script",
    [
        lambda params, attempt: Fail(["model overloaded", "tool crashed"][params.iteration % 2]),  # failures that differ
        lambda params, attempt: None if params.iteration == 1 else Fail("down"),  # one session worked
    ],
)
def test_failures_that_differ_or_a_session_that_worked_do_not_stop_it(tmp_path, profiler_plugin_manager, script):
    result = _run(tmp_path, profiler_plugin_manager, script, warmup=False)
    assert result.status == "completed" and len(_rows(tmp_path)) == 6


def test_timeouts_without_a_failed_warm_up_are_measured_not_stopped(tmp_path, profiler_plugin_manager):
    from profiler_core.testing import Hang

    options = RunOptions(
        provider=FakeProvider(script=lambda params, attempt: Hang()), scorer=FixedScorer(),
        scenarios=[Scenario(id="s", name="S", prompt="p", timeout_ms=50)], modes={"a": ModeConfig()}, repetitions=4,
        warmup=False, run_id="b", results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    result = trio.run(run_profile_suite, options)
    assert result.status == "completed" and [r.error_code for r in _rows(tmp_path)] == ["timeout"] * 4


def test_fail_fast_false_attempts_every_cell(tmp_path, profiler_plugin_manager):
    options = RunOptions(
        provider=FakeProvider(script=lambda params, attempt: Fail("502 from the gateway")), scorer=FixedScorer(),
        scenarios=[Scenario(id="s", name="S", prompt="p")], modes={"a": ModeConfig()}, repetitions=6, warmup=True,
        fail_fast=False, run_id="b", results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    assert trio.run(run_profile_suite, options).status == "completed" and len(_rows(tmp_path)) == 6


def test_concurrent_cells_meeting_the_stop_raise_one_error(tmp_path, profiler_plugin_manager):
    """Cells running side by side all trip the breaker: the user gets the first stop, not a group of repeats."""
    options = RunOptions(
        provider=FakeProvider(script=lambda params, attempt: Fail("502 from the gateway")), scorer=FixedScorer(),
        scenarios=[Scenario(id="s", name="S", prompt="p")], modes={"a": ModeConfig()}, repetitions=12, warmup=False,
        concurrency=4, run_id="b", results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )  # fmt: skip
    options.plugin_manager = profiler_plugin_manager
    with pytest.raises(ProfilerError, match="the first 3 sessions failed the same way"):
        trio.run(run_profile_suite, options)
    assert 3 <= len(_rows(tmp_path)) < 12

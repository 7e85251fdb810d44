"""The runner's guarantees (docs/runner.md), driven with fakes and trio's MockClock."""

from __future__ import annotations

import json
import os

import pytest
import trio
import trio.testing

from profiler_core import (
    HookError,
    ModeConfig,
    ProfilerError,
    Scenario,
    ScorerResult,
    UnknownModeError,
    hookimpl,
)
from profiler_core.config.modes import ConfigModeResolver
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import Fail, FakeProvider, FixedScorer, Hang


def scenarios(n=2, **kw):
    return [
        Scenario(id=f"s{i}", name=f"S{i}", prompt=f"do {i}", **kw)
        for i in range(1, n + 1)
    ]


def run(options, manager):
    options.plugin_manager = manager
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def opts(tmp_path, **kw):
    base = dict(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=scenarios(),
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    base.update(kw)
    return RunOptions(**base)


class Recorder:
    """Records lifecycle hook calls in order."""

    def __init__(self):
        self.calls = []

    @hookimpl
    def profiler_before_run(self, ctx):
        self.calls.append(("before_run",))

    @hookimpl
    def profiler_before_mode(self, mode):
        self.calls.append(("before_mode", mode))

    @hookimpl
    def profiler_before_scenario(self, ctx):
        self.calls.append(("before_scenario", ctx.mode, ctx.scenario.id, ctx.iteration))

    @hookimpl
    def profiler_after_scenario(self, ctx):
        self.calls.append(
            (
                "after_scenario",
                ctx.mode,
                ctx.scenario.id,
                ctx.iteration,
                ctx.result.error,
            )
        )

    @hookimpl
    def profiler_after_mode(self, mode):
        self.calls.append(("after_mode", mode))

    @hookimpl
    def profiler_after_run(self, ctx, result):
        self.calls.append(("after_run", len(result.rows)))


def test_matrix_order_rows_and_files(tmp_path, profiler_plugin_manager):
    provider = FakeProvider()
    result = run(
        opts(tmp_path, provider=provider, models=["m1", "m2"]), profiler_plugin_manager
    )
    assert len(result.rows) == 2 * 2 * 2 * 2
    assert [r.cell for r in result.rows] == sorted(
        [r.cell for r in result.rows],
        key=lambda c: (["m1", "m2"].index(c[0]), c[1], c[2], c[3]),
    )
    creates = [c[1:4] for c in provider.calls if c[0] == "create"]
    assert creates[:4] == [
        ("a", "s1", 0),
        ("a", "s1", 1),
        ("a", "s2", 0),
        ("a", "s2", 1),
    ]
    lines = open(result.output_jsonl_path).read().splitlines()
    assert len(lines) == 16 and all(
        json.loads(line)["runId"] == result.run_id for line in lines
    )
    manifest = json.loads(open(result.manifest_path).read())
    assert manifest["status"] == "completed"
    assert manifest["counts"] == {
        "expected": 16,
        "completed": 16,
        "errored": 0,
        "succeeded": 16,
    }
    assert not provider.live_sessions


@pytest.mark.parametrize("concurrency", [1, 8])
def test_hook_order_with_failures(tmp_path, profiler_plugin_manager, concurrency):
    recorder = Recorder()
    script = lambda params, attempt: (  # noqa: E731
        Fail("boom") if params.scenario_id == "s2" else None
    )
    options = opts(
        tmp_path,
        provider=FakeProvider(script=script, latency_s=1.0),
        hooks=[recorder],
        concurrency=concurrency,
    )
    result = run(options, profiler_plugin_manager)
    calls = recorder.calls
    assert calls[0] == ("before_run",) and calls[-1] == ("after_run", 8)
    for mode in ("a", "b"):
        start, end = (
            calls.index(("before_mode", mode)),
            calls.index(("after_mode", mode)),
        )
        inside = calls[start + 1 : end]
        assert len([c for c in inside if c[0] == "before_scenario"]) == 4
        assert len([c for c in inside if c[0] == "after_scenario"]) == 4
        assert all(c[1] == mode for c in inside)
        for c in inside:
            if c[0] == "after_scenario":
                assert inside.index(("before_scenario", *c[1:4])) < inside.index(c)
    failed = [c for c in calls if c[0] == "after_scenario" and c[4]]
    assert len(failed) == 4 and all("boom" in c[4] for c in failed)
    assert sum(1 for r in result.rows if r.error) == 4


def test_concurrency_runs_iterations_at_once(tmp_path, profiler_plugin_manager):
    provider = FakeProvider(latency_s=10.0)

    async def main():
        options = opts(
            tmp_path,
            provider=provider,
            concurrency=4,
            plugin_manager=profiler_plugin_manager,
        )
        start = trio.current_time()
        await run_profile_suite(options)
        return trio.current_time() - start

    elapsed = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert elapsed == pytest.approx(20.0)  # 2 modes x (4 cells at once, 10 s each)


def test_before_run_failure_aborts_before_any_session(
    tmp_path, profiler_plugin_manager
):
    class Precondition:
        @hookimpl
        def profiler_before_run(self, ctx):
            raise RuntimeError("fixtures missing: repo-a")

    provider = FakeProvider()
    with pytest.raises(HookError, match="fixtures missing: repo-a"):
        run(
            opts(tmp_path, provider=provider, hooks=[Precondition()]),
            profiler_plugin_manager,
        )
    assert provider.calls == []
    manifest = json.loads(
        next((tmp_path / "results").glob("*.manifest.json")).read_text()
    )
    assert manifest["status"] == "failed"


def test_other_hook_failures_are_recorded_not_fatal(tmp_path, profiler_plugin_manager):
    class Flaky:
        @hookimpl
        def profiler_after_scenario(self, ctx):
            raise ValueError("disk full")

    recorder = Recorder()
    result = run(opts(tmp_path, hooks=[Flaky(), recorder]), profiler_plugin_manager)
    assert len(result.rows) == 8
    # the failing hook did not stop the other plugin's hook
    assert len([c for c in recorder.calls if c[0] == "after_scenario"]) == 8
    manifest = json.loads(open(result.manifest_path).read())
    assert len(manifest["hookErrors"]) == 8
    assert manifest["hookErrors"][0]["message"] == "ValueError: disk full"


def test_hanging_provider_times_out_and_suite_continues(
    tmp_path, profiler_plugin_manager
):
    script = lambda params, attempt: (  # noqa: E731
        Hang() if (params.scenario_id, params.iteration) == ("s1", 0) else None
    )
    provider = FakeProvider(script=script)
    result = run(
        opts(tmp_path, provider=provider, scenarios=scenarios(timeout_ms=5000)),
        profiler_plugin_manager,
    )
    timed_out = [r for r in result.rows if r.completion_reason == "timeout"]
    assert len(timed_out) == 2  # s1#0 in both modes
    assert timed_out[0].error == "timed out after 5000 ms" and not timed_out[0].success
    assert len(result.rows) == 8
    assert not provider.live_sessions  # every session destroyed, the hung ones too


def test_error_is_retried_in_a_fresh_session(tmp_path, profiler_plugin_manager):
    script = lambda params, attempt: Fail("flaky") if attempt == 1 else None  # noqa: E731
    provider = FakeProvider(script=script)
    result = run(
        opts(tmp_path, provider=provider, allowed_retries=1, modes={"a": ModeConfig()}),
        profiler_plugin_manager,
    )
    assert all(r.success and r.attempts == 2 and r.error is None for r in result.rows)
    first = [c for c in provider.calls if c[0] in ("create", "destroy")][:4]
    assert [c[0] for c in first] == ["create", "destroy", "create", "destroy"]
    assert first[1][1] != first[3][1]  # a different session each attempt


def test_clean_task_failure_is_not_retried(tmp_path, profiler_plugin_manager):
    provider = FakeProvider()
    result = run(
        opts(
            tmp_path,
            provider=provider,
            scorer=FixedScorer(success=False),
            allowed_retries=3,
        ),
        profiler_plugin_manager,
    )
    assert all(
        r.attempts == 1 and not r.success and r.error is None for r in result.rows
    )
    assert len([c for c in provider.calls if c[0] == "create"]) == 8


def test_scorer_error_is_retried_and_recorded(tmp_path, profiler_plugin_manager):
    result = run(
        opts(
            tmp_path,
            scorer=FixedScorer(error="judge unreachable"),
            allowed_retries=2,
            modes={"a": ModeConfig()},
        ),
        profiler_plugin_manager,
    )
    assert all(
        r.attempts == 3
        and r.error_code == "scorer_error"
        and "judge unreachable" in r.error
        for r in result.rows
    )


def test_environment_applied_and_restored_even_when_mode_fails(
    tmp_path, profiler_plugin_manager, monkeypatch
):
    monkeypatch.setenv("KEEP_ME", "original")
    monkeypatch.delenv("NEW_VAR", raising=False)
    seen = []

    class Peek:
        @hookimpl
        def profiler_before_scenario(self, ctx):
            seen.append(
                (ctx.mode, os.environ.get("KEEP_ME"), os.environ.get("NEW_VAR"))
            )

        @hookimpl
        def profiler_after_mode(self, mode):
            if mode == "b":
                raise RuntimeError("after_mode blew up")

    modes = {
        "a": ModeConfig(environment={"KEEP_ME": "a", "NEW_VAR": "1"}),
        "b": ModeConfig(environment={"KEEP_ME": "b"}),
    }
    run(opts(tmp_path, modes=modes, hooks=[Peek()]), profiler_plugin_manager)
    assert ("a", "a", "1") in seen and ("b", "b", None) in seen
    assert os.environ["KEEP_ME"] == "original" and "NEW_VAR" not in os.environ

    # a provider whose init fails mid-suite: still restored
    class Boom(FakeProvider):
        def init(self, config):
            if config.mode == "b":
                raise RuntimeError("cannot start")
            super().init(config)

    with pytest.raises(ProfilerError, match="init failed.*cannot start"):
        run(
            opts(tmp_path, provider=Boom(init_scope="mode"), modes=modes),
            profiler_plugin_manager,
        )
    assert os.environ["KEEP_ME"] == "original" and "NEW_VAR" not in os.environ


def test_unknown_mode_fails_before_anything_starts(tmp_path, profiler_plugin_manager):
    provider = FakeProvider()
    options = opts(
        tmp_path,
        provider=provider,
        modes=None,
        mode_resolver=ConfigModeResolver({"a": {}}),
        mode_names=["a", "zzz"],
    )
    with pytest.raises(UnknownModeError, match="zzz"):
        run(options, profiler_plugin_manager)
    assert provider.calls == []


def test_warmup_per_init_is_not_in_results(tmp_path, profiler_plugin_manager):
    provider = FakeProvider(init_scope="mode")
    result = run(
        opts(tmp_path, provider=provider, warmup=True), profiler_plugin_manager
    )
    assert [c for c in provider.calls if c[0] == "init"] == [
        ("init", "a", "default"),
        ("init", "b", "default"),
    ]
    warmups = [c for c in provider.calls if c[0] == "create" and c[3] == -1]
    assert len(warmups) == 2
    assert all(r.iteration >= 0 for r in result.rows) and len(result.rows) == 8
    assert provider.calls.count(("shutdown",)) == 2


def test_failed_warmup_is_a_warning(tmp_path, profiler_plugin_manager):
    script = lambda params, attempt: (  # noqa: E731
        Fail("cold start") if params.iteration == -1 else None
    )
    result = run(
        opts(tmp_path, provider=FakeProvider(script=script), warmup=True),
        profiler_plugin_manager,
    )
    manifest = json.loads(open(result.manifest_path).read())
    assert any("cold start" in w for w in manifest["warnings"])
    assert all(r.success for r in result.rows)


def test_provider_overrides_reach_init_per_mode(tmp_path, profiler_plugin_manager):
    provider = FakeProvider()
    modes = {"a": ModeConfig(), "b": ModeConfig(provider_overrides={"fast": True})}
    result = run(
        opts(tmp_path, provider=provider, modes=modes, provider_options={"seed": 1}),
        profiler_plugin_manager,
    )
    assert [c.options for c in provider.configs] == [
        {"seed": 1},
        {"seed": 1, "fast": True},
    ]
    assert (
        "once per mode" in json.loads(open(result.manifest_path).read())["warnings"][0]
    )


def test_before_scenario_may_replace_the_scenario(tmp_path, profiler_plugin_manager):
    class Replace:
        @hookimpl
        def profiler_before_scenario(self, ctx):
            return Scenario(id=ctx.scenario.id, name="x", prompt="REPLACED")

    prompts = []

    class Capture(FakeProvider):
        async def prompt(self, handle, text, timeout_ms=None):
            prompts.append(text)
            return await super().prompt(handle, text, timeout_ms)

    run(opts(tmp_path, provider=Capture(), hooks=[Replace()]), profiler_plugin_manager)
    assert set(prompts) == {"REPLACED"}


def test_collectors_get_the_trace_and_analyzers_only_with_one(
    tmp_path, profiler_plugin_manager
):
    got = []

    class C:
        id = "c"

        def collect(self, result, scenario, mode, trace):
            from profiler_core import CustomMetric

            got.append(trace is not None)
            return [CustomMetric(name="my_metric", value=3, unit="things")]

    class A:
        name = "a"

        def analyze(self, trace, scenario, mode):
            from profiler_core import AnalysisResult

            return AnalysisResult(analyzer="a", findings={}, summary="ok")

    result = run(
        opts(tmp_path, collectors=[C()], analyzers=[A()], session_export=False),
        profiler_plugin_manager,
    )
    assert all(got) and result.rows[0].extensions["my_metric"] == 3
    assert len(result.analysis_results) == 8
    manifest = json.loads(open(result.manifest_path).read())
    assert manifest["metricUnits"] == {"my_metric": "things"}

    got.clear()
    result = run(
        opts(tmp_path, collectors=[C()], analyzers=[], session_export=False),
        profiler_plugin_manager,
    )
    assert not any(got) and result.analysis_results == ()


@pytest.mark.parametrize("trace_format", ["jsonl", "files"])
def test_session_export_writes_redacted_traces(
    tmp_path, profiler_plugin_manager, monkeypatch, trace_format
):
    monkeypatch.setenv("MY_API_KEY", "supersecretvalue123")
    provider = FakeProvider(
        text="token supersecretvalue123 and sk-abcdefghijklmnopqrstuvwxyz0123"
    )
    result = run(
        opts(
            tmp_path,
            provider=provider,
            modes={"a": ModeConfig()},
            trace_format=trace_format,
        ),
        profiler_plugin_manager,
    )
    sessions = tmp_path / "reports" / result.run_id / "sessions"
    files = sorted(p for p in sessions.rglob("*") if p.is_file())
    assert [f.relative_to(sessions).as_posix() for f in files] == (
        ["s1/a-iter-0.json", "s1/a-iter-1.json", "s2/a-iter-0.json", "s2/a-iter-1.json"]
        if trace_format == "files"
        else ["traces.jsonl"]
    )
    for path in [*files, *(tmp_path / "results").iterdir()]:
        text = path.read_text()
        assert "supersecretvalue123" not in text and "sk-abcdefghij" not in text
    assert "[REDACTED]" in files[0].read_text()


def test_validation_before_anything(tmp_path, profiler_plugin_manager):
    from profiler_core import ConfigError

    for bad in (
        dict(repetitions=0),
        dict(allowed_retries=-1),
        dict(concurrency=0),
        dict(scenarios=[]),
        dict(modes={}),
    ):
        provider = FakeProvider()
        with pytest.raises(ConfigError):
            run(opts(tmp_path, provider=provider, **bad), profiler_plugin_manager)
        assert provider.calls == []


def test_programmatic_scorer_result_metrics_go_to_extensions(
    tmp_path, profiler_plugin_manager
):
    from profiler_core import CustomMetric

    class Judge:
        id = "j"

        async def evaluate(self, scenario, context):
            return ScorerResult(
                success=True,
                passed=1,
                total=1,
                metrics=(CustomMetric(name="judge_cost_usd", value=0.01, unit="USD"),),
            )

    result = run(opts(tmp_path, scorer=Judge()), profiler_plugin_manager)
    assert result.rows[0].extensions["judge_cost_usd"] == 0.01


def test_computed_cost_fills_the_row_when_the_provider_reports_none(
    tmp_path, profiler_plugin_manager
):
    from profiler_core.metrics.collectors import CostCollector

    result = run(
        opts(
            tmp_path,
            collectors=[CostCollector()],
            models=["sim-small"],
            modes={"a": ModeConfig()},
        ),
        profiler_plugin_manager,
    )
    row = result.rows[0]
    assert row.extensions["cost_source"] == "computed"
    assert row.cost.total_usd == row.extensions["cost_total_usd"] > 0
    result = run(
        opts(
            tmp_path,
            collectors=[CostCollector()],
            models=["no-such-model"],
            modes={"a": ModeConfig()},
        ),
        profiler_plugin_manager,
    )
    assert (
        result.rows[0].extensions["cost_source"] == "unknown"
        and result.rows[0].cost.total_usd == 0
    )


def test_provider_is_shut_down_when_its_init_fails(tmp_path, profiler_plugin_manager):
    class Broken(FakeProvider):
        def init(self, config):
            raise RuntimeError("no server")

    provider = Broken()
    with pytest.raises(ProfilerError, match="no server"):
        run(opts(tmp_path, provider=provider), profiler_plugin_manager)
    assert ("shutdown",) in provider.calls


def test_modes_with_different_environments_get_their_own_init(
    tmp_path, profiler_plugin_manager
):
    provider = FakeProvider()
    modes = {
        "a": ModeConfig(environment={"X": "1"}),
        "b": ModeConfig(environment={"X": "2"}),
    }
    run(opts(tmp_path, provider=provider, modes=modes), profiler_plugin_manager)
    assert [c.environment for c in provider.configs] == [{"X": "1"}, {"X": "2"}]

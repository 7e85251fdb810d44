"""The four built-in collectors: parity with the original, cost sources, edge cases."""

from __future__ import annotations

import inspect
import json

import pytest
import trio
import trio.testing

from profiler_core import (
    ConfigError,
    CostBreakdown,
    ModeConfig,
    ProfilerError,
    PromptMetrics,
    PromptResult,
    Scenario,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
    ToolCallRecord,
    from_json,
)
from profiler_core.metrics.collectors import (
    CostCollector,
    LatencyCollector,
    TokenCollector,
    ToolCallCollector,
)
from profiler_core.metrics.pricing import price_tokens
from profiler_core.plugins.manager import PluginManager
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer

SCENARIO = Scenario(id="s1", name="S1", prompt="do it")
ALL = (TokenCollector, LatencyCollector, CostCollector, ToolCallCollector)


def result(
    *, tokens=None, segments=(), wall_ms=1000, tool_calls=(), cost=None
) -> PromptResult:
    return PromptResult(
        text="ok",
        metrics=PromptMetrics(
            tokens=tokens or TokenBreakdown(input=1000, output=200),
            timing=TimingBreakdown(wall_ms=wall_ms, segments=segments),
            tool_calls=tool_calls,
            cost=cost or CostBreakdown(),
        ),
    )


def as_dicts(metrics):
    return [{"name": m.name, "value": m.value, "unit": m.unit} for m in metrics]


def by_name(metrics):
    return {m.name: m.value for m in metrics}


def test_parity_with_the_original(parity_dir):
    prompt_result = from_json(
        (parity_dir / "prompt-result.json").read_text(), PromptResult
    )
    expected = json.loads((parity_dir / "expected-collector-metrics.json").read_text())
    emitted = []
    for factory in ALL:
        emitted += factory().collect(prompt_result, SCENARIO, "baseline", None)
    ours = as_dicts(emitted)
    # cost_source is ours (not in the original); everything else matches name, value,
    # unit and order.
    assert [m for m in ours if m["name"] != "cost_source"] == expected
    # json.dumps also pins the number kinds (14000 stays an int, 0.2 a float).
    assert json.dumps([m for m in ours if m["name"] != "cost_source"]) == json.dumps(
        expected
    )
    names = [m["name"] for m in ours]
    assert names.index("cost_source") == names.index("cost_reasoning_usd") + 1
    assert by_name(emitted)["cost_source"] == "provider"


def test_ids_and_registration():
    manager = PluginManager()
    manager.load_builtins(["profiler_core.metrics.collectors"])
    assert manager.registry.ids("collectors") == [
        "cost",
        "latency",
        "token",
        "tool_calls",
    ]
    cost = manager.registry.create(
        "collectors",
        "cost",
        {"prices": {"m": {"input_per_mtok": 1, "output_per_mtok": 1}}},
    )
    assert isinstance(cost, CostCollector) and "m" in cost.prices
    with pytest.raises(
        ConfigError,
        match=r"collectors\.cost\.options\.prices\.m: missing output_per_mtok",
    ):
        manager.registry.create(
            "collectors", "cost", {"prices": {"m": {"input_per_mtok": 1}}}
        )


def test_cost_collector_accepts_the_model_keyword():
    # The runner passes model= to collectors whose collect() accepts it.
    params = inspect.signature(CostCollector().collect).parameters
    assert (
        params["model"].kind is inspect.Parameter.KEYWORD_ONLY
        and params["model"].default is None
    )


# -- cost --------------------------------------------------------------------------

TOKENS = TokenBreakdown(
    input=12_000, output=3_000, reasoning=1_000, cache_read=40_000, cache_write=2_000
)


def test_cost_computed_from_tokens_when_the_provider_reports_none():
    metrics = CostCollector().collect(
        result(tokens=TOKENS), SCENARIO, "m", None, model="sim-large"
    )
    expected = price_tokens("sim-large", TOKENS)
    assert as_dicts(metrics) == [
        {"name": "cost_total_usd", "value": expected.total_usd, "unit": "usd"},
        {"name": "cost_input_usd", "value": expected.input_usd, "unit": "usd"},
        {"name": "cost_output_usd", "value": expected.output_usd, "unit": "usd"},
        {"name": "cost_reasoning_usd", "value": expected.reasoning_usd, "unit": "usd"},
        {"name": "cost_source", "value": "computed", "unit": ""},
    ]
    # sim-large: 0.012 M x $3 + 0.04 M x $0.30 + 0.002 M x $3.75 = 0.0555 input; 0.003 M
    # x $15 output.
    assert by_name(metrics)["cost_input_usd"] == pytest.approx(0.0555)
    assert by_name(metrics)["cost_output_usd"] == pytest.approx(0.045)


def test_unknown_model_reports_unknown_and_no_fake_zero():
    for model in ("in-house-7b", None):
        metrics = CostCollector().collect(
            result(tokens=TOKENS), SCENARIO, "m", None, model=model
        )
        assert as_dicts(metrics) == [
            {"name": "cost_source", "value": "unknown", "unit": ""}
        ]
    # Without the keyword at all (an older runner) it is unknown too.
    assert by_name(
        CostCollector().collect(result(tokens=TOKENS), SCENARIO, "m", None)
    ) == {"cost_source": "unknown"}


def test_provider_cost_wins_over_prices():
    reported = CostBreakdown(
        total_usd=0.5, input_usd=0.3, output_usd=0.2, reasoning_usd=0
    )
    metrics = by_name(
        CostCollector().collect(
            result(tokens=TOKENS, cost=reported), SCENARIO, "m", None, model="sim-small"
        )
    )
    assert metrics == {
        "cost_total_usd": 0.5,
        "cost_input_usd": 0.3,
        "cost_output_usd": 0.2,
        "cost_reasoning_usd": 0,
        "cost_source": "provider",
    }


def test_profile_price_overrides():
    collector = CostCollector(
        prices={
            "in-house-7b": {
                "input_per_mtok": 1,
                "output_per_mtok": 4,
                "cache_read_per_mtok": 0.1,
            }
        }
    )
    metrics = by_name(
        collector.collect(
            result(tokens=TOKENS), SCENARIO, "m", None, model="in-house-7b"
        )
    )
    assert metrics["cost_source"] == "computed"
    assert metrics["cost_input_usd"] == pytest.approx(0.012 + 0.004 + 0.002)
    assert metrics["cost_output_usd"] == pytest.approx(0.012)
    assert metrics["cost_reasoning_usd"] == pytest.approx(0.004)


def test_bad_price_option_fails_at_construction():
    with pytest.raises(ConfigError, match=r"prices: expected a mapping"):
        CostCollector(prices=[1, 2])


# -- latency -----------------------------------------------------------------------


def test_latency_repeated_labels_are_summed_not_overwritten():
    segments = [
        TimingSegment(label="session_create", start_ms=0, end_ms=300),
        TimingSegment(label="llm", start_ms=300, end_ms=1300),
        TimingSegment(label="tool", start_ms=1300, end_ms=1400),
        TimingSegment(label="llm", start_ms=1400, end_ms=2000),
    ]
    metrics = LatencyCollector().collect(
        result(segments=segments, wall_ms=2000), SCENARIO, "m", None
    )
    assert as_dicts(metrics) == [
        {"name": "latency_wall_ms", "value": 2000, "unit": "ms"},
        {"name": "latency_session_create_ms", "value": 300, "unit": "ms"},
        {"name": "latency_llm_ms", "value": 1600, "unit": "ms"},
        {"name": "latency_tool_ms", "value": 100, "unit": "ms"},
    ]


def test_latency_float_epochs_and_odd_labels():
    start = 1767225600000.123
    segments = [
        TimingSegment(label="first token", start_ms=start, end_ms=start + 349.9)
    ]
    metrics = by_name(
        LatencyCollector().collect(
            result(segments=segments, wall_ms=350.5), SCENARIO, "m", None
        )
    )
    assert metrics == {"latency_wall_ms": 350.5, "latency_first_token_ms": 349.9}


def test_latency_without_segments_and_negative_segments():
    assert by_name(LatencyCollector().collect(result(), SCENARIO, "m", None)) == {
        "latency_wall_ms": 1000
    }
    bad = [TimingSegment(label="prompt", start_ms=500, end_ms=100)]
    with pytest.raises(
        ProfilerError,
        match=r"timing\.segments\[0\] \('prompt'\): endMs 100 is before startMs 500",
    ):
        LatencyCollector().collect(result(segments=bad), SCENARIO, "m", None)


# -- tokens and tool calls ---------------------------------------------------------


def test_tokens_all_seven_in_order():
    metrics = TokenCollector().collect(result(tokens=TOKENS), SCENARIO, "m", None)
    assert [(m.name, m.value) for m in metrics] == [
        ("tokens_input", 12_000),
        ("tokens_output", 3_000),
        ("tokens_reasoning", 1_000),
        ("tokens_cache_read", 40_000),
        ("tokens_cache_write", 2_000),
        ("tokens_total", 58_000),
        ("tokens_active", 16_000),
    ]
    assert {m.unit for m in metrics} == {"tokens"}


def test_tool_calls_without_calls():
    assert as_dicts(ToolCallCollector().collect(result(), SCENARIO, "m", None)) == [
        {"name": "tool_calls_total", "value": 0, "unit": "count"},
        {"name": "tool_calls_failed", "value": 0, "unit": "count"},
        {"name": "tool_calls_error_rate", "value": 0, "unit": "ratio"},
        {"name": "tool_calls_unique", "value": 0, "unit": "count"},
    ]


def test_tool_call_categories_sorted_case_insensitively():
    calls = [
        ToolCallRecord(name="fetch", category="Web", success=False, error="timeout"),
        ToolCallRecord(name="bash", category="shell"),
        ToolCallRecord(name="bash", category="shell"),
        ToolCallRecord(name="gh", category="api"),
    ]
    metrics = ToolCallCollector().collect(result(tool_calls=calls), SCENARIO, "m", None)
    assert [(m.name, m.value) for m in metrics] == [
        ("tool_calls_total", 4),
        ("tool_calls_failed", 1),
        ("tool_calls_error_rate", 0.25),
        ("tool_calls_unique", 3),
        ("tool_calls_category_api", 1),
        ("tool_calls_category_shell", 2),
        ("tool_calls_category_Web", 1),
    ]


# -- through the real runner -------------------------------------------------------


def test_runner_passes_the_model_to_the_cost_collector(
    tmp_path, profiler_plugin_manager
):
    options = RunOptions(
        provider=FakeProvider(tokens=TOKENS),
        scorer=FixedScorer(),
        scenarios=[SCENARIO],
        modes={"a": ModeConfig()},
        models=["sim-small", "in-house-7b"],
        collectors=[factory() for factory in ALL],
        repetitions=1,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        plugin_manager=profiler_plugin_manager,
    )
    suite = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    rows = {row.model: row for row in suite.rows}
    assert rows["sim-small"].extensions["cost_source"] == "computed"
    assert (
        rows["sim-small"].extensions["cost_total_usd"]
        == price_tokens("sim-small", TOKENS).total_usd
    )
    assert rows["in-house-7b"].extensions["cost_source"] == "unknown"
    assert "cost_total_usd" not in rows["in-house-7b"].extensions
    assert rows["sim-small"].extensions["tokens_total"] == TOKENS.total

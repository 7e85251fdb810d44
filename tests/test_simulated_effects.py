"""The simulated provider's known effects: ``cost_factor`` and ``time_factor`` change
cost and time by exactly that."""

from __future__ import annotations

import pytest

from profiler_core import CreateSessionParams, ProviderConfig, ToolCallEvent
from profiler_core.errors import ConfigError
from profiler_core.providers.simulated import SimulatedProvider

PROMPT = "Fix the failing test in tests/test_math.py and run `pytest -q`."


def session(iteration: int, **options):
    """One session of the same cell under ``options`` (a fresh provider: attempt 1 every time)."""
    provider = SimulatedProvider(seed=5)
    provider.init(ProviderConfig(model="sim-medium", mode="m", options=options))
    handle = provider.create_session(
        CreateSessionParams(
            system_instructions="",
            scenario_id="s",
            iteration=iteration,
            mode="m",
            model="sim-medium",
        )
    )
    result = provider.simulate(handle, PROMPT, 10_000_000)
    return result, provider.export_session(handle)


@pytest.mark.parametrize("iteration", range(20))
def test_cost_factor_scales_the_cost_and_nothing_else(iteration):
    plain, _ = session(iteration)
    cheap, _ = session(iteration, cost_factor=0.6)
    assert cheap.metrics.cost.total_usd == pytest.approx(
        0.6 * plain.metrics.cost.total_usd, rel=1e-12
    )
    assert cheap.metrics.cost.input_usd == pytest.approx(
        0.6 * plain.metrics.cost.input_usd, rel=1e-12
    )
    assert plain.metrics.cost.total_usd > 0
    assert cheap.metrics.tokens == plain.metrics.tokens
    assert cheap.metrics.timing == plain.metrics.timing
    assert cheap.text == plain.text


@pytest.mark.parametrize("iteration", range(20))
def test_time_factor_scales_every_duration(iteration):
    plain, plain_trace = session(iteration)
    fast, fast_trace = session(iteration, time_factor=0.5)
    # Each duration is rounded to 0.1 ms after scaling: the wall time is half, to rounding.
    turns = len(plain_trace.turns)
    assert fast.metrics.timing.wall_ms == pytest.approx(
        0.5 * plain.metrics.timing.wall_ms, abs=0.1 * (turns + 1) * 20
    )
    assert fast.metrics.timing.wall_ms < 0.51 * plain.metrics.timing.wall_ms
    # The same session, faster: turns and tokens are unchanged, but for the answer
    # quoting the shorter test time.
    assert len(fast_trace.turns) == turns
    a, b = fast.metrics.tokens, plain.metrics.tokens
    assert (a.input, a.reasoning, a.cache_read, a.cache_write) == (
        b.input,
        b.reasoning,
        b.cache_read,
        b.cache_write,
    )
    assert abs(a.output - b.output) <= 2
    model, tools = fast.metrics.timing.segments
    assert (
        model.end_ms - model.start_ms + tools.end_ms - tools.start_ms
        == pytest.approx(fast.metrics.timing.wall_ms, abs=0.2)
    )
    calls = [e for e in plain_trace.events if isinstance(e, ToolCallEvent)]
    fast_calls = [e for e in fast_trace.events if isinstance(e, ToolCallEvent)]
    for slow, quick in zip(calls, fast_calls, strict=True):
        assert quick.duration_ms == pytest.approx(0.5 * slow.duration_ms, abs=0.1)


@pytest.mark.parametrize(
    ("option", "value"),
    [("cost_factor", 0), ("time_factor", -1), ("cost_factor", "half")],
)
def test_bad_factors_name_the_option(option, value):
    with pytest.raises(
        ConfigError, match=rf"option '{option}': expected a number > 0, got"
    ):
        SimulatedProvider(**{option: value})

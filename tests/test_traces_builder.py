"""The trace builder (profiler_core.traces) prices with the function it is given, so it needs
nothing from the plugin layers above it; the importers give it metrics' price table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from profiler_core.model import CostBreakdown, TokenBreakdown
from profiler_core.traces.builder import SessionBuilder

START = datetime(2025, 1, 1, tzinfo=UTC)


def _session(price, usage=(("m-a", 100), ("m-b", 50))):
    builder = SessionBuilder(
        file=Path("s.jsonl"), source="s.jsonl", format="test", price=price
    )
    builder.user_message(START)
    turn = builder.turn("t1", START + timedelta(seconds=1))
    builder.text(turn, "done")
    for model, tokens in usage:
        builder.add_usage(TokenBreakdown(input=tokens, output=1), model)
    return builder.build(session_id="s1")


def test_each_response_is_priced_by_the_given_function_with_its_own_model():
    asked = []

    def price(model, tokens):
        asked.append((model, tokens.input))
        return CostBreakdown(
            total_usd=tokens.input / 1000, input_usd=tokens.input / 1000
        )

    session = _session(price)
    assert asked == [("m-a", 100), ("m-b", 50)]
    assert session.cost_source == "computed"
    assert session.result.metrics.cost.total_usd == 0.15


def test_an_unknown_price_makes_the_cost_unknown_not_zero_by_guess():
    session = _session(
        lambda model, tokens: None if model == "m-b" else CostBreakdown(total_usd=1.0)
    )
    assert session.cost_source == "unknown"
    assert session.result.metrics.cost == CostBreakdown()


def test_the_importers_price_with_metrics_price_table(tmp_path):
    from profiler_core.importers import load_sessions

    trace = tmp_path / "chat.json"
    trace.write_text(
        '{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"},'
        ' {"role": "assistant", "content": "hello"}],'
        ' "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}'
    )
    [session] = load_sessions("openai", trace)
    from profiler_core.metrics.pricing import price_tokens

    expected = price_tokens("gpt-4o", session.result.metrics.tokens)
    assert expected is not None and expected.total_usd > 0
    assert session.result.metrics.cost.total_usd == expected.total_usd

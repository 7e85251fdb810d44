"""Token pricing: overrides, the sim-* table, genai-prices (offline), unknown models."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

from profiler_core import ConfigError, CostBreakdown, TokenBreakdown
from profiler_core.metrics import pricing
from profiler_core.metrics.pricing import (
    SIM_PRICES,
    find_prices,
    parse_price_overrides,
    price_tokens,
    resolve_cost,
)

SRC = Path(__file__).resolve().parent.parent / "src"

# A cached, reasoning-heavy call: every kind of token present.
TOKENS = TokenBreakdown(
    input=100_000,
    output=20_000,
    reasoning=10_000,
    cache_read=400_000,
    cache_write=50_000,
)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test: prices must come from bundled data."""

    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted while pricing")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    pricing._genai_model_price.cache_clear()
    yield
    pricing._genai_model_price.cache_clear()


def test_sim_models_have_documented_prices():
    # sim-small: $0.50 in, $1.50 out, $0.05 cache read, $0.625 cache write, reasoning as output.
    cost = price_tokens("sim-small", TOKENS)
    assert cost == CostBreakdown(
        input_usd=0.10125,  # 0.1 M x 0.50 + 0.4 M x 0.05 + 0.05 M x 0.625
        output_usd=0.03,  # 0.02 M x 1.50
        reasoning_usd=0.015,  # 0.01 M x 1.50
        total_usd=0.14625,
    )
    assert set(SIM_PRICES) == {"sim-small", "sim-medium", "sim-large"}
    assert price_tokens("SIM-LARGE", TOKENS) == price_tokens("sim-large", TOKENS)


def test_unknown_models_have_no_price_never_zero(no_network):
    assert price_tokens("sim-nonexistent", TOKENS) is None
    assert price_tokens("our-in-house-model-v7", TOKENS) is None
    assert price_tokens(None, TOKENS) is None
    assert price_tokens("", TOKENS) is None


def test_genai_prices_gpt_4o_offline(no_network):
    # Bundled genai-prices data: gpt-4o $2.50 in, $10 out, $1.25 cache read, no cache-write price
    # (OpenAI caches implicitly), so cache writes bill as input and reasoning as output.
    cost = price_tokens("gpt-4o", TOKENS)
    assert cost.input_usd == pytest.approx(0.1 * 2.5 + 0.4 * 1.25 + 0.05 * 2.5)
    assert cost.output_usd == pytest.approx(0.2)
    assert cost.reasoning_usd == pytest.approx(0.1)
    assert cost.total_usd == pytest.approx(0.875 + 0.2 + 0.1)
    assert find_prices("gpt-4o").source == "genai-prices"


def test_genai_prices_claude_sonnet_4_offline(no_network):
    # $3 in, $15 out, $0.30 cache read, $3.75 cache write (5-minute TTL).
    cost = price_tokens("claude-sonnet-4", TOKENS)
    assert cost.input_usd == pytest.approx(0.1 * 3 + 0.4 * 0.3 + 0.05 * 3.75)
    assert cost.output_usd == pytest.approx(0.02 * 15)
    assert cost.reasoning_usd == pytest.approx(0.01 * 15)
    # Dated ids and provider prefixes resolve to the same model.
    assert price_tokens("claude-sonnet-4-20250514", TOKENS) == cost
    assert price_tokens("anthropic/claude-sonnet-4", TOKENS) == cost
    assert price_tokens("openai:gpt-4o", TOKENS) == price_tokens("gpt-4o", TOKENS)


@pytest.mark.parametrize(
    "model", ["gpt-4o", "claude-sonnet-4", "o3", "claude-sonnet-4-5", "gemini-2.5-pro"]
)
@pytest.mark.parametrize(
    "tokens",
    [
        TOKENS,
        TokenBreakdown(
            input=150_000,
            output=2_000,
            reasoning=3_000,
            cache_read=60_000,
            cache_write=5_000,
        ),
    ],
)
def test_totals_agree_with_genai_prices_own_calculation(model, tokens, no_network):
    """Oracle: genai-prices' calc_price on the equivalent inclusive usage gives the same
    total (tiers included)."""
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=tokens.input + tokens.cache_read + tokens.cache_write,
        cache_read_tokens=tokens.cache_read,
        cache_write_tokens=tokens.cache_write,
        output_tokens=tokens.output + tokens.reasoning,
        output_reasoning_tokens=tokens.reasoning,
    )
    expected = calc_price(usage, model).total_price
    ours = price_tokens(model, tokens)
    assert Decimal(repr(ours.total_usd)).quantize(
        Decimal("1e-12")
    ) == expected.quantize(Decimal("1e-12"))


def test_tiered_prices_switch_above_the_threshold(no_network):
    # claude-sonnet-4-5 doubles its input rate above 200k prompt tokens.
    small = find_prices("claude-sonnet-4-5", prompt_tokens=1_000)
    large = find_prices("claude-sonnet-4-5", prompt_tokens=250_000)
    assert small.input_per_mtok == Decimal(3) and large.input_per_mtok == Decimal(6)


def test_overrides_win_and_fall_back_per_rate():
    overrides = {"gpt-4o": {"input_per_mtok": 1, "output_per_mtok": 2}}
    cost = price_tokens("gpt-4o", TOKENS, overrides)
    # No cache or reasoning rates given: cache tokens bill as input, reasoning as output.
    assert cost == CostBreakdown(
        input_usd=0.55,
        output_usd=0.04,
        reasoning_usd=0.02,
        total_usd=0.61,  # 0.1 + 0.4 + 0.05, exact in Decimal
    )
    full = {
        "In-House": {
            "input_per_mtok": 2.5,
            "output_per_mtok": "10",
            "reasoning_per_mtok": 20,
            "cache_read_per_mtok": 0.25,
            "cache_write_per_mtok": 3,
        }
    }
    cost = price_tokens("in-house", TOKENS, full)  # names match case-insensitively
    assert cost.input_usd == pytest.approx(0.25 + 0.1 + 0.15)
    assert cost.reasoning_usd == pytest.approx(0.2)
    assert find_prices("in-house", full).source == "override"
    # Overrides also beat the built-in sim table.
    assert (
        price_tokens(
            "sim-small",
            TOKENS,
            {"sim-small": {"input_per_mtok": 0, "output_per_mtok": 0}},
        )
        == CostBreakdown()
    )


def test_free_models_are_priced_zero_only_when_said_so():
    assert price_tokens("llama3", TOKENS) is None
    assert (
        price_tokens(
            "llama3", TOKENS, {"llama3": {"input_per_mtok": 0, "output_per_mtok": 0}}
        )
        == CostBreakdown()
    )


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        (["gpt-4o"], r"prices: expected a mapping of model name -> prices, got list"),
        ({"m": 3}, r"prices\.m: expected a mapping with input_per_mtok"),
        ({"m": {"input_per_mtok": 1}}, r"prices\.m: missing output_per_mtok"),
        (
            {"m": {"input_per_mtok": 1, "output_per_mtok": 2, "input": 3}},
            r"prices\.m: unknown keys \['input'\]",
        ),
        (
            {"m": {"input_per_mtok": -1, "output_per_mtok": 2}},
            r"prices\.m\.input_per_mtok: expected a finite number >= 0",
        ),
        (
            {"m": {"input_per_mtok": True, "output_per_mtok": 2}},
            r"prices\.m\.input_per_mtok: expected a number",
        ),
        (
            {"m": {"input_per_mtok": "cheap", "output_per_mtok": 2}},
            r"prices\.m\.input_per_mtok: expected a number",
        ),
        (
            {"m": {"input_per_mtok": float("nan"), "output_per_mtok": 2}},
            r"prices\.m\.input_per_mtok: expected a finite",
        ),
        (
            {"": {"input_per_mtok": 1, "output_per_mtok": 2}},
            r"model names must be non-empty strings",
        ),
    ],
)
def test_bad_overrides_name_the_key(prices, message):
    with pytest.raises(ConfigError, match=message):
        parse_price_overrides(prices)


def test_resolve_cost_sources(no_network):
    provider_cost = CostBreakdown(
        total_usd=0.102, input_usd=0.042, output_usd=0.033, reasoning_usd=0.027
    )
    assert resolve_cost(provider_cost, TOKENS, "gpt-4o") == (provider_cost, "provider")
    # Only the reasoning part reported is still the provider's number.
    partial = CostBreakdown(reasoning_usd=0.01)
    assert resolve_cost(partial, TOKENS, None) == (partial, "provider")
    computed, source = resolve_cost(CostBreakdown(), TOKENS, "sim-small")
    assert source == "computed" and computed == price_tokens("sim-small", TOKENS)
    assert resolve_cost(CostBreakdown(), TOKENS, "mystery") == (None, "unknown")
    assert resolve_cost(CostBreakdown(), TOKENS, None) == (None, "unknown")


def test_lookups_are_cached_and_cheap(no_network):
    price_tokens("gpt-4o", TOKENS)
    start = time.perf_counter()
    for _ in range(2_000):
        price_tokens("gpt-4o", TOKENS)
    elapsed = time.perf_counter() - start
    info = pricing._genai_model_price.cache_info()
    assert info.misses == 1 and info.hits >= 2_000
    assert elapsed < 1.0, f"2000 cached pricings took {elapsed:.3f}s"


def test_genai_prices_is_imported_only_when_needed():
    code = (
        "import sys\n"
        "import profiler_core, profiler_core.metrics.pricing, profiler_core.metrics.collectors\n"
        "from profiler_core import TokenBreakdown\n"
        "from profiler_core.metrics.pricing import price_tokens\n"
        "price_tokens('sim-small', TokenBreakdown(input=1))\n"
        "price_tokens('sim-unknown', TokenBreakdown(input=1))\n"
        "assert 'genai_prices' not in sys.modules, 'imported too early'\n"
        "price_tokens('gpt-4o', TokenBreakdown(input=1))\n"
        "assert 'genai_prices' in sys.modules\n"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        env={"PYTHONPATH": str(SRC)},
        timeout=60,
    )

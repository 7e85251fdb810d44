"""Cost and latency: a model's speed from its name, a session's price."""

from __future__ import annotations

from typing import Any

import attrs

from ...model import CostBreakdown, TokenBreakdown
from ...model.record import Record


@attrs.frozen(repr=False, eq=False)
class ModelProfile(Record):
    tokens_per_second: float
    first_token_ms: float
    reasoning_factor: float
    turn_factor: float


def model_profile(model: str) -> ModelProfile:
    """Speed and style by model size, guessed from its name."""
    name = model.casefold()
    if any(w in name for w in ("small", "mini", "nano", "haiku", "flash", "lite")):
        return ModelProfile(160.0, 400.0, 0.6, 1.15)
    if any(w in name for w in ("large", "opus", "-pro", "xl", "max")):
        return ModelProfile(60.0, 1000.0, 1.5, 0.9)
    return ModelProfile(90.0, 700.0, 1.0, 1.0)


def session_cost(
    model: str,
    tokens: TokenBreakdown,
    overrides: dict[str, Any] | None,
    factor: float = 1.0,
) -> CostBreakdown:
    # Imported here: pricing may pull in genai-prices, which `import profiler_core` must not.
    from ...metrics.pricing import price_tokens

    cost = price_tokens(model, tokens, overrides)
    if cost is None:
        return CostBreakdown()
    if factor == 1.0:
        return cost
    return CostBreakdown(
        total_usd=cost.total_usd * factor,
        input_usd=cost.input_usd * factor,
        output_usd=cost.output_usd * factor,
        reasoning_usd=cost.reasoning_usd * factor,
    )

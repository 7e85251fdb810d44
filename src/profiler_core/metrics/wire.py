"""The ``wire`` collector: what the wire recorder saw of a session's model calls, as
``extensions.wire`` of the row.

The recorder (``profiler_core.wire``) puts one ``ModelCallEvent`` per model
call into the session's trace. From them this collector sums the tokens,
times the model (time to first token, model time, the tool time between
calls), prices each call with the profile's prices or genai-prices, and says
where the agent's own token report disagrees with the wire
(``mismatch``). See docs/wire.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..model import (
    CostBreakdown,
    CustomMetric,
    ModelCallEvent,
    ModelUsage,
    PromptResult,
    Scenario,
    SessionTrace,
    TokenBreakdown,
)
from .pricing import parse_price_overrides, price_usage

#: the token kinds compared between the wire and the agent's own report (JSON names)
_KINDS = (
    ("input", "input"),
    ("output", "output"),
    ("reasoning", "reasoning"),
    ("cache_read", "cacheRead"),
    ("cache_write", "cacheWrite"),
)


def model_calls(trace: SessionTrace | None) -> list[ModelCallEvent]:
    """The wire's model calls of a trace (empty without a recorder)."""
    return (
        [e for e in trace.events if type(e) is ModelCallEvent]
        if trace is not None
        else []
    )


def wire_usage(
    calls: Sequence[ModelCallEvent], model: str | None = None
) -> list[ModelUsage]:
    """Each answered call as a ModelUsage: the model that answered, else the one asked,
    else ``model``."""
    usage = []
    for call in calls:
        name = call.model or call.model_asked or model
        if name and call.tokens.total:
            usage.append(ModelUsage(model=name, tokens=call.tokens))
    return usage


def wire_tokens(calls: Sequence[ModelCallEvent]) -> TokenBreakdown:
    """The tokens of every call, summed."""
    return sum((c.tokens for c in calls), TokenBreakdown())


def _tokens_json(tokens: TokenBreakdown) -> dict[str, int]:
    return {name: getattr(tokens, field) for field, name in _KINDS} | {
        "total": tokens.total
    }


def mismatch(wire: TokenBreakdown, agent: TokenBreakdown) -> dict[str, Any] | None:
    """``{kind: {"wire": n, "agent": m}}`` for each token kind the two disagree on; None
    when they agree."""
    differ = {
        name: {"wire": getattr(wire, field), "agent": getattr(agent, field)}
        for field, name in _KINDS
        if getattr(wire, field) != getattr(agent, field)
    }
    return differ or None


def _epoch_ms(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp() * 1000


def timing(calls: Sequence[ModelCallEvent]) -> dict[str, Any]:
    """Model time, time to first token (first call, mean) and the time between calls
    (the agent's tools and itself)."""
    spans = sorted(
        (_epoch_ms(c.started_at), _epoch_ms(c.started_at) + c.duration_ms)
        for c in calls
    )
    between = sum(
        max(0.0, start - spans[i][1]) for i, (start, _) in enumerate(spans[1:])
    )
    ttfts = [c.ttft_ms for c in calls if c.ttft_ms is not None]
    return {
        "modelMs": round(sum(c.duration_ms for c in calls), 3),
        "betweenCallsMs": round(between, 3),
        "ttftFirstMs": ttfts[0] if ttfts else None,
        "ttftMeanMs": round(sum(ttfts) / len(ttfts), 3) if ttfts else None,
    }


def wire_summary(
    calls: Sequence[ModelCallEvent],
    agent_tokens: TokenBreakdown | None,
    *,
    model: str | None = None,
    prices: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``extensions.wire`` of a row: calls, tokens, timing, cost (None when a model has
    no price), mismatch."""
    tokens = wire_tokens(calls)
    cost = _cost(wire_usage(calls, model), prices, model)
    summary: dict[str, Any] = {
        **_counts(calls),
        "tokens": _tokens_json(tokens),
        "costUsd": None if cost is None else cost.total_usd,
        **timing(calls),
    }
    differ = mismatch(tokens, agent_tokens) if agent_tokens is not None else None
    if differ:
        summary["mismatch"] = differ
    return summary


def _counts(calls: Sequence[ModelCallEvent]) -> dict[str, Any]:
    """How many calls failed, were retries, streamed; the APIs and models asked and answered."""
    return {
        "calls": len(calls),
        "failed": sum(1 for c in calls if c.status == 0 or c.status >= 400),
        "retries": sum(1 for c in calls if c.attempt > 1),
        "streamed": sum(1 for c in calls if c.stream),
        "apis": sorted({c.api for c in calls}),
        "modelsAsked": sorted({c.model_asked for c in calls if c.model_asked}),
        "models": sorted({c.model for c in calls if c.model}),
    }


def _cost(
    usage: list[ModelUsage], prices: Mapping[str, Any] | None, model: str | None
) -> CostBreakdown | None:
    """The calls' price (None without usage); the row's model prices them only when the
    answers name one model."""
    if not usage:
        return None
    several = len({u.model for u in usage}) > 1
    return price_usage(usage, prices, model=None if several else model)


class WireCollector:
    """``wire``: the recorder's summary of the session's model calls (nothing when the
    session had no recorder)."""

    id = "wire"

    def __init__(self, *, prices: Mapping[str, Any] | None = None) -> None:
        self.prices = parse_price_overrides(
            prices, where="collectors.wire.options.prices"
        )

    def collect(
        self,
        result: PromptResult,
        scenario: Scenario,
        mode: str,
        trace: SessionTrace | None,
        *,
        model: str | None = None,
    ) -> list[CustomMetric]:
        """One metric, ``wire`` (a mapping), when the trace holds model calls."""
        calls = model_calls(trace)
        if not calls:
            return []
        summary = wire_summary(
            calls, result.metrics.tokens, model=model, prices=self.prices
        )
        return [CustomMetric(name="wire", value=summary, unit="")]


__all__ = [
    "WireCollector",
    "mismatch",
    "model_calls",
    "timing",
    "wire_summary",
    "wire_tokens",
    "wire_usage",
]

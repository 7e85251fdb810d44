"""What the providers measured from the wire share: a prompt's metrics from the
recorder's model calls."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..model import (
    ModelCallEvent,
    ModelUsage,
    PromptMetrics,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
    ToolCallRecord,
)


def call_segment(call: ModelCallEvent) -> TimingSegment:
    """A model call as an ``llm`` timing segment (epoch milliseconds)."""
    start = datetime.fromisoformat(call.started_at).timestamp() * 1000
    return TimingSegment(
        label="llm", start_ms=round(start, 3), end_ms=round(start + call.duration_ms, 3)
    )


def wire_metrics(
    calls: Sequence[ModelCallEvent],
    model: str,
    wall_ms: float,
    tool_calls: Sequence[ToolCallRecord],
) -> PromptMetrics:
    """Tokens (summed), model calls (for per-call pricing) and ``llm`` segments of the
    recorder's calls."""
    tokens = sum((c.tokens for c in calls), TokenBreakdown())
    usage = tuple(
        ModelUsage(model=c.model or c.model_asked or model, tokens=c.tokens)
        for c in calls
        if c.tokens.total
    )
    timing = TimingBreakdown(
        wall_ms=wall_ms, segments=tuple(call_segment(c) for c in calls)
    )
    return PromptMetrics(
        tokens=tokens, timing=timing, tool_calls=tuple(tool_calls), model_calls=usage
    )


__all__ = ["call_segment", "wire_metrics"]

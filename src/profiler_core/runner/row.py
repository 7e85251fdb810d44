"""``make_row``: the one place an iteration's outcome becomes a ``ProfileRow``.

Every path that produces rows (``profiler run``, ``profiler import``, the
Python API) goes through the runner and so through this function.
"""

from __future__ import annotations

from typing import Any, cast

from ..model import (
    CheckpointResult,
    CompletionReason,
    CostBreakdown,
    ProfileRow,
    PromptResult,
    ScorerResult,
    SessionTrace,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallSummary,
)


def make_row(
    *,
    run_id: str,
    provider: str,
    metric_units: dict[str, str],
    model: str,
    mode: str,
    scenario_id: str,
    iteration: int,
    started_at: str,
    completed_at: str,
    elapsed_ms: float,
    session_id: str,
    result: PromptResult | None,
    trace: SessionTrace | None,
    scored: ScorerResult | None,
    metrics: dict[str, Any],
    error: str | None,
    error_code: str | None,
    reason: str,
    attempts: int,
    reward: float | None = None,
) -> ProfileRow:
    """The row of one iteration; the units of the scorer's metrics are added to ``metric_units``."""
    tokens, timing, cost, tool_calls, completion_reason = _measures(
        result, metrics, error, reason, elapsed_ms
    )
    details: tuple[CheckpointResult, ...] = ()
    extensions = dict(metrics)
    if error is not None and "cost_source" not in extensions and not cost.total_usd:
        # An attempt that errored before anything priced it: its cost is unknown, not $0
        # (docs/reports.md).
        extensions["cost_source"] = "unknown"
    if scored is not None:
        details = tuple(
            scored.details
        )  # the scorer's check results are the row's (one class)
        for metric in scored.metrics:
            extensions[metric.name] = metric.value
            metric_units.setdefault(metric.name, metric.unit)
    return ProfileRow(
        run_id=run_id,
        scenario_id=scenario_id,
        mode=mode,
        model=model,
        iteration=iteration,
        started_at=started_at,
        completed_at=completed_at,
        tokens=tokens,
        timing=timing,
        tool_calls=tool_calls,
        cost=cost,
        success=bool(scored and scored.success and error is None),
        checkpoints_passed=scored.passed if scored else 0,
        checkpoints_total=scored.total if scored else 0,
        checkpoint_details=details,
        output_valid=bool(scored.output_valid) if scored else False,
        provider=provider,
        session_id=session_id,
        agent_turns=trace.summary.total_turns
        if trace is not None
        else None,  # unknown without a trace
        completion_reason=cast(
            CompletionReason, completion_reason
        ),  # one of the runner's reasons
        extensions=extensions,
        error=error,
        error_code=error_code,
        attempts=attempts,
        reward=reward,
    )


def _measures(
    result: PromptResult | None,
    metrics: dict[str, Any],
    error: str | None,
    reason: str,
    elapsed_ms: float,
) -> tuple[TokenBreakdown, TimingBreakdown, CostBreakdown, ToolCallSummary, str]:
    """Tokens, timing, cost, tool calls and completion reason of an attempt (zeros when
    it got no result)."""
    if result is None:
        return (
            TokenBreakdown(),
            TimingBreakdown(wall_ms=round(elapsed_ms, 3)),
            CostBreakdown(),
            ToolCallSummary(),
            reason,
        )
    tokens, timing, cost = (
        result.metrics.tokens,
        result.metrics.timing,
        result.metrics.cost,
    )
    if metrics.get("cost_source") in ("computed", "wire"):
        # The provider reported no cost; the cost collector priced the tokens (or the
        # wire recorder's calls).
        cost = CostBreakdown(
            total_usd=metrics.get("cost_total_usd", 0),
            input_usd=metrics.get("cost_input_usd", 0),
            output_usd=metrics.get("cost_output_usd", 0),
            reasoning_usd=metrics.get("cost_reasoning_usd", 0),
        )
    completion_reason = (
        reason if error and reason == "timeout" else result.completion_reason
    )
    if error and completion_reason == "stop":
        completion_reason = "error"
    return (
        tokens,
        timing,
        cost,
        ToolCallSummary.from_records(result.metrics.tool_calls),
        completion_reason,
    )


__all__ = ["make_row"]

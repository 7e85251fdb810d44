"""The four built-in collectors: token, latency, cost and tool_calls.

Metric names and units follow the TypeScript original so rows written by
either tool compare directly; see docs/metrics.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from ..model import (
    CustomMetric,
    ModelUsage,
    PromptResult,
    Scenario,
    SessionTrace,
    TokenBreakdown,
)
from .pricing import parse_price_overrides, price_usage, resolve_cost
from .wire import model_calls as wire_calls
from .wire import wire_usage

_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


class TokenCollector:
    """Token counts by kind:
    ``tokens_input|output|reasoning|cache_read|cache_write|total|active``."""

    id = "token"

    def collect(
        self,
        result: PromptResult,
        scenario: Scenario,
        mode: str,
        trace: SessionTrace | None,
    ) -> list[CustomMetric]:
        """Emit the seven token metrics of the prompt."""
        t = result.metrics.tokens
        return [
            CustomMetric(name=f"tokens_{name}", value=value, unit="tokens")
            for name, value in (
                ("input", t.input),
                ("output", t.output),
                ("reasoning", t.reasoning),
                ("cache_read", t.cache_read),
                ("cache_write", t.cache_write),
                ("total", t.total),
                ("active", t.active),
            )
        ]


class LatencyCollector:
    """Wall time (``latency_wall_ms``) and one ``latency_<label>_ms`` per timing segment label."""

    id = "latency"

    def collect(
        self,
        result: PromptResult,
        scenario: Scenario,
        mode: str,
        trace: SessionTrace | None,
    ) -> list[CustomMetric]:
        """Emit wall time, then segment durations in order of first appearance."""
        timing = result.metrics.timing
        durations: dict[str, int | float] = {}
        for i, segment in enumerate(timing.segments):
            duration = segment.end_ms - segment.start_ms
            if duration < 0:
                raise ValidationError(
                    f"timing.segments[{i}] ({segment.label!r}): endMs "
                    f"{segment.end_ms} is before startMs {segment.start_ms}"
                )
            if isinstance(duration, float):
                # Epoch-millisecond floats carry ~1e-4 ms of noise; microseconds are plenty.
                duration = round(duration, 3)
            name = f"latency_{_metric_part(segment.label)}_ms"
            # A label repeated (one "llm" span per turn) sums: one metric per name,
            # never a silent overwrite.
            durations[name] = durations.get(name, 0) + duration
        return [
            CustomMetric(name="latency_wall_ms", value=timing.wall_ms, unit="ms")
        ] + [
            CustomMetric(name=name, value=value, unit="ms")
            for name, value in durations.items()
        ]


class CostCollector:
    """Cost in USD (``cost_total|input|output|reasoning_usd``) and where it came from
    (``cost_source``).

    The provider's cost is used when it reported one; otherwise the wire
    recorder's calls (``cost_source = "wire"``), else the tokens, are
    priced (profile ``prices`` overrides, then the ``sim-*`` table, then
    genai-prices). When no price is known only ``cost_source = "unknown"`` is
    emitted: a missing cost is never reported as $0.
    """

    id = "cost"

    def __init__(self, *, prices: Mapping[str, Any] | None = None) -> None:
        # Validated once, here, so a bad price table fails the profile, not every iteration.
        self.prices = parse_price_overrides(
            prices, where="collectors.cost.options.prices"
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
        """Emit the four cost metrics (when known), ``cost_source`` and ``models``; the
        runner passes ``model``."""
        model_calls = result.metrics.model_calls
        cost, source = resolve_cost(
            result.metrics.cost, result.metrics.tokens, model, self.prices, model_calls
        )
        wire = wire_usage(wire_calls(trace), model)
        if wire and source != "provider":
            # The recorder saw every call: its tokens, priced call by call, are the cost
            # (docs/wire.md).
            several = len({call.model for call in wire}) > 1
            priced = price_usage(wire, self.prices, model=None if several else model)
            if priced is not None:
                cost, source, model_calls = priced, "wire", tuple(wire)
        metrics = []
        if cost is not None:
            metrics = [
                CustomMetric(name="cost_total_usd", value=cost.total_usd, unit="usd"),
                CustomMetric(name="cost_input_usd", value=cost.input_usd, unit="usd"),
                CustomMetric(name="cost_output_usd", value=cost.output_usd, unit="usd"),
                CustomMetric(
                    name="cost_reasoning_usd", value=cost.reasoning_usd, unit="usd"
                ),
            ]
        metrics.append(CustomMetric(name="cost_source", value=source, unit=""))
        if model_calls:
            metrics.append(
                CustomMetric(name="models", value=self._models(model_calls), unit="")
            )
        return metrics

    def _models(self, calls: tuple[ModelUsage, ...]) -> dict[str, Any]:
        """``{model: {tokens..., calls, costUsd}}``: the models the prompt used, their
        tokens and (when priced) cost."""
        models: dict[str, Any] = {}
        for model in dict.fromkeys(call.model for call in calls):
            mine = [call for call in calls if call.model == model]
            t = sum((call.tokens for call in mine), TokenBreakdown())
            priced = price_usage(mine, self.prices)
            models[model] = {
                "calls": len(mine),
                "input": t.input,
                "output": t.output,
                "reasoning": t.reasoning,
                "cacheRead": t.cache_read,
                "cacheWrite": t.cache_write,
                "total": t.total,
                "costUsd": None if priced is None else priced.total_usd,
            }
        return models


class ToolCallCollector:
    """Tool-call counts: total, failed, error rate, distinct names and one count per category."""

    id = "tool_calls"

    def collect(
        self,
        result: PromptResult,
        scenario: Scenario,
        mode: str,
        trace: SessionTrace | None,
    ) -> list[CustomMetric]:
        """Emit the four summary metrics, then categories sorted by name."""
        calls = result.metrics.tool_calls
        total = len(calls)
        failed = sum(1 for call in calls if not call.success)
        categories: dict[str, int] = {}
        for call in calls:
            categories[call.category] = categories.get(call.category, 0) + 1
        metrics = [
            CustomMetric(name="tool_calls_total", value=total, unit="count"),
            CustomMetric(name="tool_calls_failed", value=failed, unit="count"),
            CustomMetric(
                name="tool_calls_error_rate",
                value=failed / total if total else 0,
                unit="ratio",
            ),
            CustomMetric(
                name="tool_calls_unique",
                value=len({call.name for call in calls}),
                unit="count",
            ),
        ]
        by_name: dict[str, int] = {}
        # Case-insensitive first, like the original's localeCompare, with a stable tie-break.
        for category in sorted(categories, key=lambda c: (c.casefold(), c)):
            name = f"tool_calls_category_{_metric_part(category or 'other')}"
            by_name[name] = by_name.get(name, 0) + categories[category]
        metrics += [
            CustomMetric(name=name, value=count, unit="count")
            for name, count in by_name.items()
        ]
        return metrics


def _metric_part(label: str) -> str:
    """A label made safe inside a metric name (spaces, dots, slashes -> ``_``)."""
    return _UNSAFE.sub("_", label)

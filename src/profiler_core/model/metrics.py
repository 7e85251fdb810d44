"""Per-prompt measurements: tokens, timing, cost, tool calls, custom metrics."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from ._validators import amount, as_tuple, count, non_empty, non_negative
from .record import Record

CompletionReason = Literal["stop", "timeout", "error", "tool_limit"]

#: Where a cost figure came from: the provider's bill, our price table, or nowhere.
CostSource = Literal["provider", "computed", "wire", "unknown"]


def token_totals(
    input: int,
    output: int,
    reasoning: int,
    cache_read: int,
    cache_write: int,
    total: int | None = None,
    active: int | None = None,
) -> tuple[int, int]:
    """``(total, active)`` of a token breakdown: each as given, or derived when None.

    ``total`` counts every kind (cache reads and writes too); ``active`` what the model
    processed afresh: input + output + reasoning. The one place both are derived (the
    model's ``TokenBreakdown`` and the report's row loader use it).
    """
    fresh = input + output + reasoning
    return (
        fresh + cache_read + cache_write if total is None else total,
        fresh if active is None else active,
    )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TokenBreakdown(Record):
    """Token counts by kind; ``total`` and ``active`` are derived when not given."""

    input: int = attrs.field(default=0, validator=count)
    output: int = attrs.field(default=0, validator=count)
    reasoning: int = attrs.field(default=0, validator=count)
    cache_read: int = attrs.field(default=0, validator=count)
    cache_write: int = attrs.field(default=0, validator=count)
    total: int = attrs.field(default=None, validator=count)
    active: int = attrs.field(default=None, validator=count)

    def __attrs_post_init__(self) -> None:
        # Derived here, not in a property, so JSON always carries both (as the original's rows do).
        if self.total is None or self.active is None:
            total, active = token_totals(
                self.input,
                self.output,
                self.reasoning,
                self.cache_read,
                self.cache_write,
                self.total,
                self.active,
            )
            object.__setattr__(self, "total", total)
            object.__setattr__(self, "active", active)

    def __add__(self, other: TokenBreakdown) -> TokenBreakdown:
        """Sum two breakdowns field by field."""
        if not isinstance(other, TokenBreakdown):
            return NotImplemented
        return TokenBreakdown(
            input=self.input + other.input,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            total=self.total + other.total,
            active=self.active + other.active,
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TimingSegment(Record):
    """One labelled span of wall time (epoch milliseconds)."""

    label: str = attrs.field(validator=non_empty)
    start_ms: int | float
    end_ms: int | float


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TimingBreakdown(Record):
    """Wall time of a prompt and its labelled segments."""

    wall_ms: int | float = attrs.field(validator=amount)
    segments: tuple[TimingSegment, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CostBreakdown(Record):
    """Cost in US dollars, by kind of token."""

    total_usd: int | float = attrs.field(default=0, validator=amount)
    input_usd: int | float = attrs.field(default=0, validator=amount)
    output_usd: int | float = attrs.field(default=0, validator=amount)
    reasoning_usd: int | float = attrs.field(default=0, validator=amount)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolCallRecord(Record):
    """One tool call as the provider reported it."""

    name: str = attrs.field(validator=non_empty)
    category: str = "other"
    success: bool = True
    duration_ms: int | float | None = attrs.field(default=None, validator=non_negative)
    error: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModelUsage(Record):
    """The tokens of one model call within a prompt (a session may switch models, or
    hand work to a cheaper one)."""

    model: str = attrs.field(validator=non_empty)
    tokens: TokenBreakdown


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptMetrics(Record):
    """The measurements of one prompt."""

    tokens: TokenBreakdown
    timing: TimingBreakdown
    tool_calls: tuple[ToolCallRecord, ...] = attrs.field(default=(), converter=as_tuple)
    cost: CostBreakdown = attrs.field(factory=CostBreakdown)
    #: the tokens of each model call with the model that answered it, when the provider
    #: knows them (they add
    #: up to ``tokens``); the cost collector prices each call on its own, at its own
    #: model's price when several
    #: models answered
    model_calls: tuple[ModelUsage, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CustomMetric(Record):
    """A metric emitted by a collector; stored in ``ProfileRow.extensions``."""

    name: str = attrs.field(validator=non_empty)
    #: a number or string (a statistic of the report), or a JSON mapping kept on the row as it is
    value: int | float | str | dict[str, Any]
    unit: str = ""

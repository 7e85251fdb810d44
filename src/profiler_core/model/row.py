"""ProfileRow: one line of results, JSON-compatible with the TypeScript original."""

from __future__ import annotations

from typing import Any

import attrs

from ._validators import (
    amount,
    as_tuple,
    counts,
    iteration_number,
    non_empty,
    unit_interval,
)
from .metrics import (
    CompletionReason,
    CostBreakdown,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallRecord,
)
from .record import Record


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolCallSummary(Record):
    """Tool-call counts of one iteration (``ProfileRow.toolCalls``)."""

    total: int = attrs.field(default=0, validator=amount)
    by_category: dict[str, int] = attrs.field(factory=dict, validator=counts)
    failed: int = attrs.field(default=0, validator=amount)
    retried: int = attrs.field(default=0, validator=amount)
    error_rate: int | float = attrs.field(default=0, validator=amount)
    records: tuple[ToolCallRecord, ...] = attrs.field(default=(), converter=as_tuple)

    @classmethod
    def from_records(
        cls, records: tuple[ToolCallRecord, ...] | list[ToolCallRecord]
    ) -> ToolCallSummary:
        """Summarise a list of tool-call records."""
        records = tuple(records)
        by_category: dict[str, int] = {}
        for record in records:
            by_category[record.category] = by_category.get(record.category, 0) + 1
        failed = sum(1 for r in records if not r.success)
        # "retried": a failed call followed later by a call of the same tool.
        retried = 0
        for i, record in enumerate(records):
            if not record.success and any(
                r.name == record.name for r in records[i + 1 :]
            ):
                retried += 1
        return cls(
            total=len(records),
            by_category=by_category,
            failed=failed,
            retried=retried,
            error_rate=(failed / len(records)) if records else 0,
            records=records,
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CheckpointResult(Record):
    """The outcome of one check of a scorer, as the scorer returns it and the row stores
    it (``ScorerCheckResult``)."""

    id: str
    description: str
    passed: bool
    actual: Any = None
    expected: Any = None
    error: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProfileRow(Record):
    """Everything measured in one iteration of (model, mode, scenario, iteration)."""

    run_id: str = attrs.field(validator=non_empty)
    scenario_id: str = attrs.field(validator=non_empty)
    mode: str = attrs.field(validator=non_empty)
    model: str
    iteration: int = attrs.field(validator=iteration_number)
    started_at: str
    completed_at: str
    tokens: TokenBreakdown
    timing: TimingBreakdown
    tool_calls: ToolCallSummary
    cost: CostBreakdown
    success: bool
    checkpoints_passed: int = attrs.field(validator=amount)
    checkpoints_total: int = attrs.field(validator=amount)
    checkpoint_details: tuple[CheckpointResult, ...] = attrs.field(
        default=(), converter=as_tuple
    )
    output_valid: bool = True
    provider: str
    session_id: str
    #: turns in the session's trace; None when there was no trace (session export off, no analyzer)
    agent_turns: int | None = attrs.field(default=0, validator=amount)
    completion_reason: CompletionReason = "stop"
    extensions: dict[str, Any] = attrs.field(factory=dict)
    error: str | None = None
    error_code: str | None = None
    #: 1 + the retries used; absent in the original's rows (it means 1).
    attempts: int = attrs.field(default=1, validator=amount)
    #: the reward (0-1) the scenario's verifiers wrote; None when none did
    reward: float | None = attrs.field(default=None, validator=unit_interval)

    @property
    def cell(self) -> tuple[str, str, str, int]:
        """The matrix cell of this row: (model, mode, scenario id, iteration)."""
        return (self.model, self.mode, self.scenario_id, self.iteration)

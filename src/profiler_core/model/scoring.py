"""Scorer inputs and outputs."""

from __future__ import annotations

from typing import Any

import attrs

from ._validators import as_tuple, non_negative
from .metrics import CustomMetric
from .record import Record
from .row import CheckpointResult
from .trace import SessionTrace

#: A scorer's check result is stored on the row as it is: one class, two names.
ScorerCheckResult = CheckpointResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScorerResult(Record):
    """Whether the agent did the task, and by which checks."""

    success: bool
    passed: int = attrs.field(validator=non_negative)
    total: int = attrs.field(validator=non_negative)
    details: tuple[ScorerCheckResult, ...] = attrs.field(default=(), converter=as_tuple)
    output_valid: bool = True
    error: str | None = None
    #: metrics about the scoring itself (e.g. the judge's tokens), stored in the row's extensions
    metrics: tuple[CustomMetric, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScorerContext(Record):
    """What a scorer sees of an iteration."""

    agent_output: str
    trace: SessionTrace | None
    mode: str
    model: str
    iteration: int
    metadata: dict[str, Any] = attrs.field(factory=dict)
    #: the scenario's verifiers' results (``verify:<name>`` checkpoints), run after the agent
    verifications: tuple[ScorerCheckResult, ...] = attrs.field(
        default=(), converter=as_tuple
    )
    #: the reward (0-1) a verifier wrote, when one did
    reward: float | None = None

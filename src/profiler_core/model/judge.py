"""LLM-as-judge requests, responses and rubrics."""

from __future__ import annotations

import attrs

from ._validators import as_tuple, non_empty
from .metrics import TokenBreakdown
from .record import Record


@attrs.frozen(kw_only=True, repr=False, eq=False)
class JudgeRequest(Record):
    """One question to a judge model."""

    system_prompt: str
    user_prompt: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class JudgeResponse(Record):
    """A judge model's answer, with its usage when known."""

    text: str
    token_count: int | None = None
    usage: TokenBreakdown | None = None
    cost_usd: float | None = None
    model: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class JudgeCriterion(Record):
    """One criterion of a rubric."""

    id: str = attrs.field(validator=non_empty)
    description: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class JudgeRubric(Record):
    """A scenario's rubric (``scenario.extensions.rubric``)."""

    criteria: tuple[JudgeCriterion, ...] = attrs.field(converter=as_tuple)
    grading_instructions: str | None = None

"""A main session and its subagents' own transcripts, given together, become one session.

Claude Code writes the work of a ``Task`` subagent to a transcript of its own
(``agent-<agentId>.jsonl`` beside the session's file, or
``<sessionId>/subagents/agent-<agentId>.jsonl``): every line a sidechain
(``isSidechain: true``) carrying the main session's ``sessionId`` and the
subagent's ``agentId``. Imported on its own such a file is a session of its
own; imported together with its main session it is attached to it, once:
its tokens (per model), tool calls and turns join the main session's, and its
turns keep its ``agentId`` (``Turn.agent``). See docs/importing.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ..model import (
    CostBreakdown,
    ModelUsage,
    RecordedSession,
    TraceSummary,
    TurnBoundaryEvent,
)
from ..traces.builder import add_costs


def attach_subagents(sessions: Sequence[RecordedSession]) -> list[RecordedSession]:
    """``sessions`` with each subagent transcript merged into its main session when that
    was given too."""
    mains = {(s.format, s.session_id): s for s in sessions if s.agent_id is None}
    attached: dict[tuple[str, str], list[RecordedSession]] = {}
    kept: list[RecordedSession] = []
    for session in sessions:
        key = (session.format, session.session_id)
        if session.agent_id is not None and key in mains:
            attached.setdefault(key, []).append(session)
        else:
            kept.append(session)
    return [
        _merge(s, attached.get((s.format, s.session_id), ()))
        if s.agent_id is None
        else s
        for s in kept
    ]


def _merge(
    main: RecordedSession, subagents: Iterable[RecordedSession]
) -> RecordedSession:
    included: set[str | None] = {
        turn.agent for turn in main.trace.turns if turn.agent is not None
    }
    merged = main
    for sub in subagents:
        if sub.agent_id in included:
            # Already there: older Claude Code releases also wrote the sidechain into
            # the main file; count it once.
            continue
        included.add(sub.agent_id)
        merged = _join(merged, sub)
    return merged


def _join(main: RecordedSession, sub: RecordedSession) -> RecordedSession:
    """``main`` with ``sub``'s turns (renumbered after its own), tokens, tool calls and
    cost added."""
    offset = len(main.trace.turns)
    turns = [attrs.evolve(t, number=t.number + offset) for t in sub.trace.turns]
    events: list[Any] = [
        attrs.evolve(e, turn_number=e.turn_number + offset)
        if isinstance(e, TurnBoundaryEvent)
        else e
        for e in sub.trace.events
    ]
    ours, theirs = main.result.metrics, sub.result.metrics
    tokens = ours.tokens + theirs.tokens
    cost, source = _cost(main, sub)
    metrics = attrs.evolve(
        ours,
        tokens=tokens,
        tool_calls=ours.tool_calls + theirs.tool_calls,
        cost=cost,
        model_calls=_model_calls(ours.model_calls, theirs.model_calls),
    )
    summary = TraceSummary(
        total_turns=len(main.trace.turns) + len(turns),
        total_tool_calls=main.trace.summary.total_tool_calls
        + sub.trace.summary.total_tool_calls,
        total_tokens=tokens,
        total_duration=main.trace.summary.total_duration,
    )
    trace = attrs.evolve(
        main.trace,
        turns=main.trace.turns + tuple(turns),
        events=main.trace.events + tuple(events),
        summary=summary,
    )
    return attrs.evolve(
        main,
        result=attrs.evolve(main.result, metrics=metrics),
        trace=trace,
        cost_source=source,
        warnings=main.warnings + sub.warnings,
    )


def _cost(main: RecordedSession, sub: RecordedSession) -> tuple[CostBreakdown, Any]:
    if "unknown" in (main.cost_source, sub.cost_source):
        return (
            CostBreakdown(),
            "unknown",
        )  # one part without a price: the whole is unknown, never a partial sum
    source = (
        "provider" if main.cost_source == sub.cost_source == "provider" else "computed"
    )
    return add_costs(main.result.metrics.cost, sub.result.metrics.cost), source


def _model_calls(a: Sequence[ModelUsage], b: Sequence[ModelUsage]) -> list[ModelUsage]:
    return [*a, *b]

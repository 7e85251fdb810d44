"""The ``strategy`` analyzer: direct, iterative or exploratory, and the phases it went through."""

from __future__ import annotations

from typing import Any

from profiler_core import (
    AnalysisResult,
    ErrorEvent,
    ListFinding,
    ReasoningEvent,
    Scenario,
    SessionTrace,
    StringFinding,
    ToolCallEvent,
)

from ._common import backtracking_events, duplicate_calls, facts, plural, ratio
from .tool_names import Resolver, load_resolver

#: More distinct tools than this (by display name) is exploration.
EXPLORATORY_UNIQUE_TOOLS = 5
#: A reasoning density above this is exploration too.
EXPLORATORY_REASONING_DENSITY = 0.3
#: At most this many calls, none going back, is a direct strategy.
DIRECT_MAX_CALLS = 5
#: Optimality-note thresholds (the original's).
HIGH_ERROR_RATE = 0.2
MANY_REDUNDANT_CALLS = 2
STRONG_REASONING_DENSITY = 0.2


def strategy_phases(trace: SessionTrace) -> list[str]:
    """Runs of reasoning and of tool calls, e.g. ``"tool execution phase (2 calls)"``;
    other events are ignored."""
    phases: list[str] = []
    current: str | None = None
    count = 0
    for event in trace.events:
        kind = type(event)
        if kind is ReasoningEvent:
            phase = "reasoning"
        elif kind is ToolCallEvent:
            phase = "tool execution"
        else:
            continue
        if phase == current:
            count += 1
            continue
        if current is not None:
            phases.append(_phase_text(current, count))
        current, count = phase, 1
    if current is not None:
        phases.append(_phase_text(current, count))
    return phases


def _phase_text(phase: str, count: int) -> str:
    # "(1 events)" is kept as the original writes it, so step lists compare equal across tools.
    return f"{phase} phase ({count} {'events' if phase == 'reasoning' else 'calls'})"


class StrategyAnalyzer:
    """Strategy summary, strategy steps (phases) and optimality notes."""

    name = "strategy"

    def __init__(self, *, resolve_name: Resolver | str | None = None) -> None:
        self._resolve = load_resolver(resolve_name, self.name)

    def analyze(
        self, trace: SessionTrace, scenario: Scenario | None = None, mode: str = ""
    ) -> AnalysisResult:
        """Analyse one trace."""
        shared = facts(trace)
        calls = shared.calls
        unique_tools = len(set(shared.names(self._resolve)))
        ids = shared.call_ids
        backtracking = backtracking_events(ids)
        tokens = trace.summary.total_tokens
        density = ratio(tokens.reasoning, tokens.total)

        if (
            unique_tools > EXPLORATORY_UNIQUE_TOOLS
            or density > EXPLORATORY_REASONING_DENSITY
        ):
            strategy = "exploratory"
        elif len(calls) <= DIRECT_MAX_CALLS and backtracking == 0:
            strategy = "direct"
        else:
            strategy = "iterative"

        phases = strategy_phases(trace)
        notes = self._notes(trace, calls, duplicate_calls(ids), density)
        return AnalysisResult(
            analyzer=self.name,
            findings={
                "strategy_summary": StringFinding(value=strategy),
                "strategy_steps": ListFinding(values=phases),
                "optimality_notes": ListFinding(values=notes),
            },
            summary=f"Strategy: {strategy}, {plural(len(phases), 'phase')}, "
            f"{plural(len(notes), 'note')}.",
        )

    @staticmethod
    def _notes(
        trace: SessionTrace, calls: list[Any], duplicates: int, density: float
    ) -> list[str]:
        notes = []
        failed = sum(1 for c in calls if not c.success)
        error_events = sum(1 for e in trace.events if type(e) is ErrorEvent)
        # Failures over actions (calls + error events), so the rate cannot exceed 100%.
        error_rate = ratio(failed + error_events, len(calls) + error_events)
        if error_rate > HIGH_ERROR_RATE:
            notes.append(f"High error rate ({error_rate * 100:.0f}%)")
        if duplicates > MANY_REDUNDANT_CALLS:
            notes.append("Many redundant calls")
        if density > STRONG_REASONING_DENSITY:
            notes.append("Strong reasoning foundation")
        return notes

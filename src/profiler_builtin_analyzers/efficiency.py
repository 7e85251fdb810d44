"""The ``efficiency`` analyzer: productive and wasted turns, repeated calls, steps back."""

from __future__ import annotations

from collections.abc import Sequence

from profiler_core import (
    AnalysisResult,
    NumberFinding,
    RatioFinding,
    Scenario,
    SessionTrace,
    TextOutputEvent,
    ToolCallEvent,
    TraceEvent,
)

from ._common import backtracking_events, duplicate_calls, facts, plural, ratio


def is_productive(events: Sequence[TraceEvent]) -> bool:
    """A turn is productive when a tool call in it succeeded or it wrote non-empty text."""
    for event in events:
        if type(event) is ToolCallEvent and event.success:
            return True
        if type(event) is TextOutputEvent and event.content.strip():
            return True
    return False


class EfficiencyAnalyzer:
    """Total, productive and wasted turns, turn efficiency, information redundancy, backtracking."""

    name = "efficiency"

    def analyze(
        self, trace: SessionTrace, scenario: Scenario | None = None, mode: str = ""
    ) -> AnalysisResult:
        """Analyse one trace."""
        shared = facts(trace)
        groups = shared.turn_groups
        # Counted from the turns themselves so productive <= total always holds; the
        # summary's count is only used for a trace that carries no turn data at all.
        total_turns = len(groups) if groups else trace.summary.total_turns
        productive = sum(1 for events in groups if is_productive(events))
        wasted = max(total_turns - productive, 0)
        efficiency = ratio(productive, total_turns)

        calls = shared.calls
        ids = shared.call_ids
        redundancy = ratio(duplicate_calls(ids), len(calls))
        backtracking = backtracking_events(ids)

        return AnalysisResult(
            analyzer=self.name,
            findings={
                "total_turns": NumberFinding(value=total_turns, unit="turns"),
                "productive_turns": NumberFinding(value=productive, unit="turns"),
                "wasted_turns": NumberFinding(value=wasted, unit="turns"),
                "turn_efficiency": RatioFinding(
                    value=efficiency, label="productive / total turns"
                ),
                "information_redundancy": RatioFinding(
                    value=redundancy, label="duplicate / total tool calls"
                ),
                "backtracking_events": NumberFinding(value=backtracking, unit="events"),
            },
            summary=(
                f"{productive}/{total_turns} productive turns "
                f"({efficiency * 100:.1f}% efficiency), "
                f"{plural(backtracking, 'backtracking event')}."
            ),
        )

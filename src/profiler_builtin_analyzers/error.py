"""The ``error`` analyzer: what went wrong, how the agent recovered, what it cost.

Errors are ``ErrorEvent``s and tool calls with ``success = false``. The
agent's *actions* are its tool calls and error events; reasoning, text and
turn boundaries between them are thinking and talking, not acting, so they
neither end a cascade nor count as a response to an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from profiler_core import (
    AnalysisResult,
    ErrorEvent,
    NumberFinding,
    Scenario,
    SessionTrace,
    TableFinding,
    ToolCallEvent,
    TraceEvent,
)

from ._common import counted_rows, facts, failure_message, is_failure, plural
from .tool_names import Resolver, load_resolver

#: Error categories, checked in this order; the first whose pattern matches the text wins.
ERROR_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "auth",
        re.compile(
            r"\b40[13]\b|unauthori[sz]ed|forbidden|authenticat|permission "
            r"denied|\beacces\b|bad credentials"
            r"|\b(?:auth )?token (?:has )?expired\b",
            re.I,
        ),
    ),
    ("not_found", re.compile(r"\benoent\b|\b404\b|not found|no such file", re.I)),
    ("timeout", re.compile(r"timed out|timeout|\betimedout\b", re.I)),
    (
        "parse_error",
        re.compile(r"json|pars(?:e|ing)|unexpected token|syntax ?error", re.I),
    ),
)


@lru_cache(maxsize=4096)
def classify_error(message: str) -> str:
    """``auth`` / ``not_found`` / ``timeout`` / ``parse_error`` / ``unknown`` from an
    error's text."""
    for category, pattern in ERROR_PATTERNS:
        if pattern.search(message):
            return category
    return "unknown"


class ErrorAnalyzer:
    """Errors encountered, error types, recovery patterns, error cascades, turns wasted
    on errors."""

    name = "error"

    def __init__(self, *, resolve_name: Resolver | str | None = None) -> None:
        # Same tool names as ``tool-pattern`` so "retry" agrees with its failed_then_retried.
        self._resolve = load_resolver(resolve_name, self.name)

    def analyze(
        self, trace: SessionTrace, scenario: Scenario | None = None, mode: str = ""
    ) -> AnalysisResult:
        """Analyse one trace."""
        actions = [
            e for e in trace.events if type(e) is ToolCallEvent or type(e) is ErrorEvent
        ]
        # Whether each action failed, worked out once: the recovery patterns and the
        # cascades read it too.
        failed = [is_failure(e) for e in actions]
        failures = [e for e, bad in zip(actions, failed, strict=True) if bad]

        types: dict[str, int] = {}
        for event in failures:
            category = classify_error(failure_message(event))
            types[category] = types.get(category, 0) + 1

        recovery = self._recovery_patterns(actions, failed)
        cascades = _cascades(failed)
        wasted = sum(1 for events in facts(trace).turn_groups if _wasted(events))

        type_text = ", ".join(
            f"{count} {category}"
            for category, count in counted_rows(types, by_count=True)
        )
        summary = (
            f"{plural(len(failures), 'error')}{f' ({type_text})' if type_text else ''}, "
            f"{plural(cascades, 'cascade')}, {plural(wasted, 'wasted turn')}."
        )
        return AnalysisResult(
            analyzer=self.name,
            findings={
                "errors_encountered": NumberFinding(value=len(failures), unit="errors"),
                "error_types": TableFinding(
                    headers=("type", "count"), rows=counted_rows(types, by_count=True)
                ),
                "recovery_patterns": TableFinding(
                    headers=("pattern", "count"),
                    rows=counted_rows(recovery, by_count=True),
                ),
                "error_cascades": NumberFinding(value=cascades, unit="cascades"),
                "wasted_turns_from_errors": NumberFinding(value=wasted, unit="turns"),
            },
            summary=summary,
        )

    def _recovery_patterns(self, actions: list, failed: list[bool]) -> dict[str, int]:
        """What the agent did next after each error, judged by its next tool call.

        retry: the same tool again; alternative: another tool after a failed
        call; tool_followup: any tool call after an error event; give_up: no
        tool call after the error at all.
        """
        resolve = self._resolve
        # One backward pass: the next tool call after each position.
        next_call: list[ToolCallEvent | None] = [None] * len(actions)
        upcoming: ToolCallEvent | None = None
        for index in range(len(actions) - 1, -1, -1):
            next_call[index] = upcoming
            if type(actions[index]) is ToolCallEvent:
                upcoming = actions[index]

        patterns: dict[str, int] = {}
        for index, event in enumerate(actions):
            if not failed[index]:
                continue
            follower = next_call[index]
            if follower is None:
                pattern = "give_up"
            elif type(event) is ErrorEvent:
                pattern = "tool_followup"
            elif resolve(follower.name, follower.input) == resolve(
                event.name, event.input
            ):
                pattern = "retry"
            else:
                pattern = "alternative"
            patterns[pattern] = patterns.get(pattern, 0) + 1
        return patterns


def _cascades(failed: list[bool]) -> int:
    """Runs of two or more failed actions in a row (``failed``: whether each action failed)."""
    cascades = streak = 0
    for bad in failed:
        if bad:
            streak += 1
        else:
            cascades += streak >= 2
            streak = 0
    return cascades + (streak >= 2)


def _wasted(events: Sequence[TraceEvent]) -> bool:
    """A turn is wasted on errors when something in it failed and no tool call in it succeeded."""
    failed = False
    for event in events:
        if type(event) is ToolCallEvent:
            if event.success:
                return False
            failed = True
        elif type(event) is ErrorEvent:
            failed = True
    return failed

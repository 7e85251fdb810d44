"""The ``tool-pattern`` analyzer: which tools, in which order, repeated or retried."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from profiler_core import (
    AnalysisResult,
    ListFinding,
    NumberFinding,
    Scenario,
    SessionTrace,
    TableFinding,
)

from ._common import counted_rows, facts, input_text, plural
from .tool_names import Resolver, load_resolver


class ToolPatternAnalyzer:
    """Tool sequence, unique tools, bigram patterns, redundant calls, failed-then-retried calls.

    Tools are named by ``resolve_name(name, input)`` (default: shell-like tools
    shown by their command, ``git status``); pass a callable or a
    ``"package.module:function"`` string to name them your way.
    """

    name = "tool-pattern"

    def __init__(self, *, resolve_name: Resolver | str | None = None) -> None:
        self._resolve = load_resolver(resolve_name, self.name)

    def analyze(
        self, trace: SessionTrace, scenario: Scenario | None = None, mode: str = ""
    ) -> AnalysisResult:
        """Analyse one trace."""
        shared = facts(trace)
        calls = shared.calls
        names = shared.names(self._resolve)

        bigrams: dict[str, int] = {}
        # zip of slices is the faster here
        for first, second in zip(names, names[1:]):  # noqa: RUF007
            key = f"{first} -> {second}"
            bigrams[key] = bigrams.get(key, 0) + 1

        # (display name, input identity) -> [count, the input as first seen]
        seen: dict[tuple[str, Hashable], list[Any]] = {}
        for display, call, input_key in zip(names, calls, shared.input_keys):
            identity = (display, input_key)
            entry = seen.get(identity)
            if entry is None:
                seen[identity] = [1, call.input]
            else:
                entry[0] += 1
        redundant_rows = [
            (display, input_text(first_input), str(count))
            for (display, _), (count, first_input) in seen.items()
            if count > 1
        ]

        retried: dict[str, int] = {}
        for index in range(len(calls) - 1):
            if not calls[index].success and names[index + 1] == names[index]:
                retried[names[index]] = retried.get(names[index], 0) + 1

        unique = len(set(names))
        return AnalysisResult(
            analyzer=self.name,
            findings={
                "tool_sequence": ListFinding(values=names),
                "unique_tools_used": NumberFinding(value=unique, unit="tools"),
                "tool_call_patterns": TableFinding(
                    headers=("pattern", "count"), rows=counted_rows(bigrams)
                ),
                "redundant_calls": TableFinding(
                    headers=("tool", "input_hash", "count"), rows=redundant_rows
                ),
                "failed_then_retried": TableFinding(
                    headers=("tool", "occurrences"), rows=counted_rows(retried)
                ),
            },
            summary=(
                f"{plural(len(calls), 'tool call')}, {plural(unique, 'unique tool')}, "
                f"{plural(len(redundant_rows), 'redundant pattern')}, "
                f"{plural(len(retried), 'retry pattern')}."
            ),
        )


def make_tool_pattern_analyzer(
    resolve_name: Resolver | str | None = None,
) -> ToolPatternAnalyzer:
    """A ``tool-pattern`` analyzer naming tools with ``resolve_name(name, input) -> str``."""
    return ToolPatternAnalyzer(resolve_name=resolve_name)

"""Helpers shared by the analyzers; every one is a single pass over the events."""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from profiler_core import ErrorEvent, SessionTrace, ToolCallEvent, TraceEvent, TurnBoundaryEvent


def tool_calls(events: Iterable[TraceEvent]) -> list[ToolCallEvent]:
    """The tool-call events, in order."""
    return [e for e in events if type(e) is ToolCallEvent]


def is_failure(event: TraceEvent) -> bool:
    """True for an ``ErrorEvent`` or a tool call that did not succeed."""
    return type(event) is ErrorEvent or (type(event) is ToolCallEvent and not event.success)


def failure_message(event: TraceEvent) -> str:
    """The text of an error event or of a failed tool call's error."""
    if type(event) is ErrorEvent:
        return event.message
    error = getattr(event, "error", None)
    return error if isinstance(error, str) and error else "unknown error"


def turn_groups(trace: SessionTrace) -> list[Sequence[TraceEvent]]:
    """The events of each turn: ``trace.turns`` when present, else the event stream cut at turn boundaries.

    A trace without turns or boundaries but with events is one turn: the
    session happened, it just was not split.
    """
    if trace.turns:
        return [turn.events for turn in trace.turns]
    groups: list[Sequence[TraceEvent]] = []
    current: list[TraceEvent] = []
    for event in trace.events:
        if type(event) is TurnBoundaryEvent:
            groups.append(current)
            current = []
        else:
            current.append(event)
    if current:
        groups.append(current)
    return groups


def input_key(value: Any) -> Hashable:
    """A hashable identity of a tool input: equal for equal JSON whatever the key order."""
    # Fast path for the common flat input of scalars (C speed; 1 and true compare equal
    # here, a confusion no real tool input depends on); nested input via canonical JSON.
    if type(value) is dict:
        try:
            return frozenset(value.items())
        except TypeError:
            pass
    if type(value) is str:
        return ("s", value)
    return ("j", json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))


def input_text(value: Any, limit: int = 120) -> str:
    """Compact JSON of a tool input as the original shows it, shortened past ``limit`` characters."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_ids(calls: Sequence[ToolCallEvent]) -> list[int]:
    """A number per call, equal for equal calls (same tool name, same input, whatever the key order).

    Numbers rather than the keys themselves: only one key per *distinct* call
    stays alive, which keeps the garbage collector out of a 100,000-event pass.
    """
    ids: dict[tuple[str, Hashable], int] = {}
    return [ids.setdefault((c.name, input_key(c.input)), len(ids)) for c in calls]


def duplicate_calls(ids: Sequence[int]) -> int:
    """Calls repeating an earlier call exactly (same tool, same input): total minus distinct."""
    return len(ids) - len(set(ids))


def backtracking_events(ids: Sequence[int]) -> int:
    """Calls that go back to an earlier call (same tool, same input) after other calls in between.

    An immediate repeat is a retry, not a step back, and calling one tool with
    new input is progress (the original counted both, hence 13 "backtracking
    events" in a 10-turn session).
    """
    last_seen: dict[int, int] = {}
    count = 0
    for index, call_id in enumerate(ids):
        previous = last_seen.get(call_id)
        if previous is not None and previous < index - 1:
            count += 1
        last_seen[call_id] = index
    return count


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, 0 when there is nothing to divide by."""
    return numerator / denominator if denominator else 0.0


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 note"``, ``"3 notes"``."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def counted_rows(counts: dict[str, int], *, by_count: bool = False) -> list[tuple[str, str]]:
    """Rows ``(label, count)`` in first-seen order, or by descending count (ties keep first-seen order)."""
    items = list(counts.items())
    if by_count:
        items.sort(key=lambda item: -item[1])  # sort is stable: ties stay in first-seen order
    return [(label, str(count)) for label, count in items]

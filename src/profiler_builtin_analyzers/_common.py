"""Helpers shared by the analyzers; every one is a single pass over the events.

:func:`facts` gives what several analyzers derive from one trace (its tool calls,
their call ids and display names, its turns), computed once per trace: the
runner hands one trace to the five analyzers in turn.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from profiler_core import (
    ErrorEvent,
    SessionTrace,
    ToolCallEvent,
    TraceEvent,
    TurnBoundaryEvent,
)


def tool_calls(events: Iterable[TraceEvent]) -> list[ToolCallEvent]:
    """The tool-call events, in order."""
    return [e for e in events if type(e) is ToolCallEvent]


def is_failure(event: TraceEvent) -> bool:
    """True for an ``ErrorEvent`` or a tool call that did not succeed."""
    return type(event) is ErrorEvent or (
        type(event) is ToolCallEvent and not event.success
    )


def failure_message(event: TraceEvent) -> str:
    """The text of an error event or of a failed tool call's error."""
    if type(event) is ErrorEvent:
        return event.message
    error = getattr(event, "error", None)
    return error if isinstance(error, str) and error else "unknown error"


def turn_groups(trace: SessionTrace) -> list[Sequence[TraceEvent]]:
    """The events of each turn: ``trace.turns`` when present, else the event stream cut
    at turn boundaries.

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
    return ("j", _CANONICAL.encode(value))


#: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)`` (and
#: sorted keys), made once:
#: ``json.dumps`` with options builds its encoder on every call, most of a small input's cost.
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def input_text(value: Any, limit: int = 120) -> str:
    """Compact JSON of a tool input as the original shows it, shortened past ``limit``
    characters."""
    text = _COMPACT.encode(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_ids(
    calls: Sequence[ToolCallEvent], keys: Sequence[Hashable] | None = None
) -> list[int]:
    """A number per call, equal for equal calls (same tool name, same input, whatever
    the key order).

    Numbers rather than the keys themselves: only one key per *distinct* call
    stays alive, which keeps the garbage collector out of a 100,000-event pass.
    ``keys``: the calls' ``input_key`` when already known.
    """
    ids: dict[tuple[str, Hashable], int] = {}
    if keys is None:
        return [ids.setdefault((c.name, input_key(c.input)), len(ids)) for c in calls]
    return [
        ids.setdefault((c.name, key), len(ids))
        for c, key in zip(calls, keys, strict=True)
    ]


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


def counted_rows(
    counts: dict[str, int], *, by_count: bool = False
) -> list[tuple[str, str]]:
    """Rows ``(label, count)`` in first-seen order, or by descending count (ties keep
    first-seen order)."""
    items = list(counts.items())
    if by_count:
        items.sort(
            key=lambda item: -item[1]
        )  # sort is stable: ties stay in first-seen order
    return [(label, str(count)) for label, count in items]


class TraceFacts:
    """What several analyzers derive from one trace, each computed on first use and then kept."""

    __slots__ = ("_calls", "_groups", "_ids", "_keys", "_names", "_trace")

    def __init__(self, trace: SessionTrace) -> None:
        # Weak: the facts of the last trace analysed must not keep a big trace alive
        # after its iteration.
        self._trace = weakref.ref(trace)
        self._calls: list[ToolCallEvent] | None = None
        self._keys: list[Hashable] | None = None
        self._ids: list[int] | None = None
        self._groups: list[Sequence[TraceEvent]] | None = None
        self._names: dict[Callable[[str, Any], str], list[str]] = {}

    def _source(self) -> SessionTrace:
        trace = self._trace()
        assert trace is not None, (
            "facts outlived their trace"
        )  # facts() is only called with the trace in hand
        return trace

    @property
    def calls(self) -> list[ToolCallEvent]:
        """The tool-call events, in order."""
        if self._calls is None:
            self._calls = tool_calls(self._source().events)
        return self._calls

    @property
    def input_keys(self) -> list[Hashable]:
        """Each call's :func:`input_key`."""
        if self._keys is None:
            self._keys = [input_key(c.input) for c in self.calls]
        return self._keys

    @property
    def call_ids(self) -> list[int]:
        """A number per call, equal for equal calls (:func:`call_ids`)."""
        if self._ids is None:
            self._ids = call_ids(self.calls, self.input_keys)
        return self._ids

    @property
    def turn_groups(self) -> list[Sequence[TraceEvent]]:
        """The events of each turn (:func:`turn_groups`)."""
        if self._groups is None:
            self._groups = turn_groups(self._source())
        return self._groups

    def names(self, resolve: Callable[[str, Any], str]) -> list[str]:
        """The display name of each call by ``resolve``; analyzers with the same
        resolver share the list."""
        # Keyed by the resolver itself, not by each analyzer's checking wrapper around it: a
        # resolver that fails raises in the analyzer that asked first, which then keeps nothing.
        key = getattr(resolve, "__wrapped__", resolve)
        names = self._names.get(key)
        if names is None:
            names = self._names[key] = [resolve(c.name, c.input) for c in self.calls]
        return names


#: (the last trace analysed, its facts): one entry, checked by identity (a frozen trace
#: never changes).
_LAST: tuple[weakref.ref[SessionTrace], TraceFacts] | None = None


def facts(trace: SessionTrace) -> TraceFacts:
    """The shared facts of ``trace``: those of the trace analysed last when it is the
    same object, else new ones."""
    global _LAST
    last = _LAST  # one read: another thread may replace it meanwhile
    if last is not None and last[0]() is trace:
        return last[1]
    new = TraceFacts(trace)
    _LAST = (weakref.ref(trace), new)
    return new

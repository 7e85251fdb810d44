"""Trace assembly: the prompt result's and the trace's parts from the same turns."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import attrs

from ...model import (
    CompletionReason,
    ErrorEvent,
    TimingSegment,
    TokenBreakdown,
    ToolCallRecord,
    Turn,
    TurnBoundaryEvent,
)
from ...model.record import Record
from ...util.timestamps import iso


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SimTurn(Record):
    """One generated turn, before the timeout cut: its events, tool records, tokens and times."""

    events: list[Any]
    records: list[ToolCallRecord]
    #: fresh input, output, reasoning, cache read, cache write
    tokens: tuple[int, int, int, int, int]
    #: milliseconds from the session's start
    start: float
    model_ms: float
    tool_ms: float
    #: the final answer (the closing turn only)
    final: str | None
    #: the text the turn ended on: the answer, or a progress note
    last_text: str | None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Assembled(Record):
    """The parts of the prompt result and of the trace, built from the same turns."""

    text: str
    completion: CompletionReason
    tokens: TokenBreakdown
    wall_ms: float
    segments: tuple[TimingSegment, ...]
    records: tuple[ToolCallRecord, ...]
    events: tuple[Any, ...]
    turns: tuple[Turn, ...]


def assemble(
    turns: list[SimTurn], start: datetime, reason: CompletionReason, timeout_ms: int
) -> Assembled:
    """Cut at the timeout, then build the result and the trace from the same turns."""
    kept: list[SimTurn] = []
    timed_out = False
    for turn in turns:
        if turn.start + turn.model_ms + turn.tool_ms > timeout_ms:
            timed_out = True
            break
        kept.append(turn)
    wall_ms = timeout_ms if timed_out else sum(t.model_ms + t.tool_ms for t in kept)
    wall_ms = round(wall_ms, 1)

    all_events: list[Any] = []
    trace_turns: list[Turn] = []
    records: list[ToolCallRecord] = []
    sums = [0, 0, 0, 0, 0]
    model_total = 0.0
    for number, turn in enumerate(kept, start=1):
        begin = start + timedelta(milliseconds=turn.start)
        duration = round(turn.model_ms + turn.tool_ms, 1)
        end = begin + timedelta(milliseconds=duration)
        trace_turns.append(
            Turn(
                number=number,
                events=turn.events,
                start_timestamp=iso(begin),
                end_timestamp=iso(end),
                duration_ms=duration,
            )
        )
        all_events.extend(turn.events)
        all_events.append(TurnBoundaryEvent(turn_number=number, timestamp=iso(end)))
        records.extend(turn.records)
        for i, value in enumerate(turn.tokens):
            sums[i] += value
        model_total += turn.model_ms

    if timed_out:
        text = next((t.last_text for t in reversed(kept) if t.last_text), "")
        all_events.append(
            ErrorEvent(
                message=f"prompt timed out after {timeout_ms} ms",
                recoverable=False,
            )
        )
        completion: CompletionReason = "timeout"
        model_total = min(model_total, wall_ms)
    else:
        text = (kept[-1].final or "") if kept else ""
        completion = reason
    tokens = TokenBreakdown(
        input=sums[0],
        output=sums[1],
        reasoning=sums[2],
        cache_read=sums[3],
        cache_write=sums[4],
    )
    begin_ms = start.timestamp() * 1000
    split = round(begin_ms + model_total, 1)
    # Model and tool time are summed over the turns and laid end to end, so the
    # segment durations are exact even though turns interleave the two.
    segments = (
        TimingSegment(label="model", start_ms=begin_ms, end_ms=split),
        TimingSegment(
            label="tools", start_ms=split, end_ms=round(begin_ms + wall_ms, 1)
        ),
    )
    return Assembled(
        text=text,
        completion=completion,
        tokens=tokens,
        wall_ms=wall_ms,
        segments=segments,
        records=tuple(records),
        events=tuple(all_events),
        turns=tuple(trace_turns),
    )

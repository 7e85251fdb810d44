"""``trace``: a SessionTrace JSON (camelCase, as the runner exports it to ``sessions/``).

The PromptResult is derived from the trace: tokens from ``summary.totalTokens``,
wall time from ``summary.totalDuration``, tool calls from the ``tool_call``
events, the final text from the last ``text_output`` event. A trace names no
model and no prompt (pass ``--model`` to price it); a non-recoverable
``error`` event makes the completion reason ``error``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ValidationError
from ..model import (
    CompletionReason,
    CostBreakdown,
    ErrorEvent,
    PromptMetrics,
    PromptResult,
    RecordedSession,
    SessionTrace,
    TextOutputEvent,
    TimingBreakdown,
    ToolCallEvent,
    ToolCallRecord,
)
from ..storage.serde import structure
from ..traces.categories import tool_category
from ..traces.readers import (
    json_problem,
    load_json,
    parse_time,
    read_text,
    truncation_hint,
)
from ..util.timestamps import iso


def load(path: Path) -> list[RecordedSession]:
    """The session of a trace file."""
    from ..storage.tracestore import is_store

    if is_store(path):
        raise ValidationError(
            f"{path}: a run's trace store (one trace per line), not one SessionTrace; "
            f"write its files with `profiler traces export {path} --out DIR` and import those"
        )
    text = read_text(path)
    try:
        data = load_json(text, str(path))
    except json.JSONDecodeError as exc:
        hint = truncation_hint(exc, text)
        raise ValidationError(
            f"{path}: not valid JSON ({json_problem(exc, line=True)}){hint}"
        ) from None
    if not isinstance(data, dict) or not {"sessionId", "events"} <= set(data):
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValidationError(
            f"{path}: expected a SessionTrace (sessionId, events, turns, summary), got {keys}"
        )
    trace = structure(data, SessionTrace, source=str(path))
    return [from_trace(trace, path)]


def from_trace(
    trace: SessionTrace, path: Path, model: str | None = None
) -> RecordedSession:
    """A RecordedSession whose PromptResult is derived from ``trace``."""
    records = tuple(_record(e) for e in trace.events if isinstance(e, ToolCallEvent))
    texts = [e.content for e in trace.events if isinstance(e, TextOutputEvent)]
    error, reason = _ending(trace)
    wall = trace.summary.total_duration
    result = PromptResult(
        text=texts[-1] if texts else "",
        metrics=PromptMetrics(
            tokens=trace.summary.total_tokens,
            timing=TimingBreakdown(wall_ms=wall),
            tool_calls=records,
            cost=CostBreakdown(),
        ),
        completion_reason=reason,
    )
    started, completed = _span(trace)
    return RecordedSession(
        session_id=trace.session_id or path.stem,
        model=model,
        started_at=started,
        completed_at=completed,
        prompt="",
        text=result.text,
        result=result,
        trace=trace,
        file=str(path),
        source=str(path),
        format="trace",
        cost_source="unknown",
        error=error,
    )


def _record(event: ToolCallEvent) -> ToolCallRecord:
    name = event.name or "unknown"
    return ToolCallRecord(
        name=name,
        category=tool_category(name),
        success=event.success,
        duration_ms=event.duration_ms,
        error=event.error,
    )


def _ending(trace: SessionTrace) -> tuple[str | None, CompletionReason]:
    """The last unrecoverable error, and the completion reason it gives."""
    fatal = [
        e.message
        for e in trace.events
        if isinstance(e, ErrorEvent) and not e.recoverable
    ]
    if not fatal:
        return None, "stop"
    error = fatal[-1]
    if not error:
        return error, "stop"
    return error, "timeout" if "timed out" in error else "error"


def _span(trace: SessionTrace) -> tuple[str | None, str | None]:
    """The first turn's start and the last turn's end, as far as they parse."""
    started = completed = None
    if not trace.turns:
        return started, completed
    try:
        first = parse_time(trace.turns[0].start_timestamp, "turns[0].startTimestamp")
        started = iso(first)
        last = parse_time(trace.turns[-1].end_timestamp, "turns[-1].endTimestamp")
        completed = iso(last)
    except ValidationError:
        pass  # timestamps are informative only; the wall time comes from the summary
    return started, completed

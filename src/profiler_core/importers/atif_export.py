"""Our session traces as ATIF trajectories (``profiler traces export RUN --format
atif``), for Harbor's viewer and other ATIF tools.

One trajectory per session, valid under Harbor's ``Trajectory`` model
(docs/importing.md cites it; ``check_trajectory`` checks every file before it
is written):

- each turn is an ``agent`` step: its reasoning events ``reasoning_content``,
  its text ``message``, its tool calls ``tool_calls`` (ids ``call-<turn>-<k>``,
  a non-object input wrapped as ``{"input": ...}``, the duration in the call's
  ``extra``) and their results the step's ``observation`` (a failed call's
  result has ``extra.is_error``, which the ``atif`` importer reads back);
- an error event is a ``system`` step after its turn, ``extra.error`` true;
- ``final_metrics``: the trace's tokens (prompt tokens include cache reads and
  writes, completion tokens include reasoning) and its number of steps; a
  trace records no cost, so none is claimed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..model import (
    ErrorEvent,
    ReasoningEvent,
    SessionTrace,
    TextOutputEvent,
    ToolCallEvent,
)
from .atif import check_trajectory

#: The version written: ``extra`` on tool calls and observation results is ATIF-v1.7's.
ATIF_VERSION = "ATIF-v1.7"


def to_atif(
    trace: SessionTrace, *, mode: str, model: str, scenario_id: str, iteration: int
) -> dict[str, Any]:
    """The ATIF trajectory of one session trace."""
    from ..util.version import version

    steps: list[dict[str, Any]] = []
    for turn in trace.turns:
        _turn_steps(steps, turn.number, turn.events, turn.start_timestamp)
    if not trace.turns and trace.events:
        _turn_steps(steps, 1, trace.events, None)
    if not steps:
        steps.append(
            {
                "step_id": 1,
                "source": "system",
                "message": "the session recorded no turn",
            }
        )
    tokens = trace.summary.total_tokens
    return {
        "schema_version": ATIF_VERSION,
        "session_id": trace.session_id or f"{scenario_id}-{mode}-{iteration}",
        "agent": {
            "name": mode,
            "version": version(),
            **({"model_name": model} if model else {}),
            "extra": {
                "producer": "agent-profiler",
                "scenario_id": scenario_id,
                "mode": mode,
                "iteration": iteration,
            },
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": tokens.input
            + tokens.cache_read
            + tokens.cache_write,
            "total_completion_tokens": tokens.output + tokens.reasoning,
            "total_cached_tokens": tokens.cache_read,
            "total_steps": len(steps),
            "extra": {
                "reasoning_tokens": tokens.reasoning,
                "cache_write_tokens": tokens.cache_write,
                "duration_ms": trace.summary.total_duration,
            },
        },
    }


def _turn_steps(
    steps: list[dict[str, Any]],
    number: int,
    events: Iterable[Any],
    timestamp: str | None,
) -> None:
    """The agent step of one turn, then a system step per error event in it."""
    reasoning: list[str] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    errors: list[ErrorEvent] = []
    for event in events:
        if isinstance(event, ReasoningEvent):
            reasoning.append(event.content)
        elif isinstance(event, TextOutputEvent):
            texts.append(event.content)
        elif isinstance(event, ToolCallEvent):
            call_id = f"call-{number}-{len(calls) + 1}"
            arguments = (
                event.input if isinstance(event.input, dict) else {"input": event.input}
            )
            calls.append(
                {
                    "tool_call_id": call_id,
                    "function_name": event.name or "unknown",
                    "arguments": arguments,
                    "extra": {"duration_ms": event.duration_ms},
                }
            )
            results.append(_result(call_id, event))
        elif isinstance(event, ErrorEvent):
            errors.append(event)
    step: dict[str, Any] = {
        "step_id": len(steps) + 1,
        "source": "agent",
        "message": "\n".join(texts),
    }
    if _iso(timestamp):
        step["timestamp"] = timestamp
    if reasoning:
        step["reasoning_content"] = "\n".join(reasoning)
    if calls:
        step["tool_calls"] = calls
        step["observation"] = {"results": results}
    steps.append(step)
    for error in errors:
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "system",
                "message": error.message,
                "extra": {"error": True, "recoverable": error.recoverable},
            }
        )


def _result(call_id: str, event: ToolCallEvent) -> dict[str, Any]:
    output = event.output
    content = (
        output
        if isinstance(output, str)
        else (
            ""
            if output is None
            else json.dumps(output, ensure_ascii=False, default=str)
        )
    )
    result: dict[str, Any] = {"source_call_id": call_id, "content": content}
    if not event.success:
        result["extra"] = {
            "is_error": True,
            **({"error": event.error} if event.error else {}),
        }
    return result


def _iso(value: str | None) -> bool:
    if not value:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def export_atif(
    store: Path, out_dir: Path, problems: list[str] | None = None
) -> list[Path]:
    """Write each cell's latest trace of a trace store as an ATIF file (the per-session
    layout); the files written."""
    from ..storage.paths import atomic_write_text, inside
    from ..storage.tracestore import iter_latest, trace_file_path

    written = []
    for record, with_model in iter_latest(store, problems):
        target = trace_file_path(
            out_dir,
            record.scenario_id,
            record.mode,
            record.iteration,
            record.model if with_model else None,
        )
        inside(
            out_dir, target.parent
        )  # a scenario folder planted as a link must not lead out of out_dir
        trajectory = to_atif(
            record.trace,
            mode=record.mode,
            model=record.model,
            scenario_id=record.scenario_id,
            iteration=record.iteration,
        )
        invalid = check_trajectory(trajectory)
        if invalid:  # never write a file Harbor would refuse
            raise StoreError(
                f"{target}: the ATIF trajectory would not validate: {invalid[0]}"
            )
        try:
            atomic_write_text(
                target, json.dumps(trajectory, ensure_ascii=False, indent=2) + "\n"
            )
        except OSError as exc:
            raise StoreError(
                f"{target}: cannot write the ATIF trajectory ({exc.strerror or exc})"
            ) from None
        written.append(target)
    return written


__all__ = ["ATIF_VERSION", "export_atif", "to_atif"]

"""Reading a live session's messages: is it finished, did it fail, and what did it cost.

The measurement itself is core's ``session_from_messages`` (the parser
``profiler import opencode`` uses too); this module only adds what a live
session needs on top: the state of the last message, and the model retries
the provider saw in ``/session/status`` (which no message records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ...importers.opencode import error_text, session_from_messages
from ...model import CompletionReason, CostBreakdown, ErrorEvent, RecordedSession
from ...model.record import Record


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Progress(Record):
    """Where a session stands after one poll of its messages."""

    #: the last assistant message ended its turn with ``stop``
    done: bool = False
    #: the model call failed (``info.error`` of the last assistant message)
    error: str | None = None
    #: the last assistant message has ``time.completed`` (its step is over)
    completed: bool = False
    #: ``finish`` of the last assistant message (``stop``, ``tool-calls``, ``length``...)
    finish: str | None = None
    assistant_messages: int = 0


def progress(messages: Sequence[Any]) -> Progress:
    """The state of a session from ``GET /session/{id}/message``."""
    assistants = _current_answer(messages)
    if not assistants:
        return Progress()
    info, parts = _info(assistants[-1]), assistants[-1].get("parts") or []
    stopped = any(_stops(p) for p in parts)
    error = error_text(info["error"]) if info.get("error") is not None else None
    completed = (
        isinstance(info.get("time"), Mapping)
        and info["time"].get("completed") is not None
    )
    finish = info.get("finish") if isinstance(info.get("finish"), str) else None
    return Progress(
        done=stopped,
        error=error,
        completed=completed,
        finish=finish,
        assistant_messages=len(assistants),
    )


def _current_answer(messages: Sequence[Any]) -> list[Mapping[str, Any]]:
    """The assistant messages after the latest prompt (an earlier prompt's ``stop`` is not
    this one's)."""
    messages = [m for m in messages if isinstance(m, Mapping)]
    users = [i for i, m in enumerate(messages) if _info(m).get("role") == "user"]
    current = messages[users[-1] + 1 :] if users else messages
    return [m for m in current if _info(m).get("role") == "assistant"]


def _stops(part: Any) -> bool:
    """A ``step-finish`` part whose reason is ``stop``: the answer is complete."""
    if not isinstance(part, Mapping) or part.get("type") != "step-finish":
        return False
    return part.get("reason") == "stop"


def _info(message: Mapping[str, Any]) -> Mapping[str, Any]:
    info = message.get("info")
    return info if isinstance(info, Mapping) else {}


def measure(
    messages: Sequence[Any],
    *,
    session_id: str,
    completion_reason: CompletionReason | None = None,
    retries: Sequence[str] = (),
) -> RecordedSession:
    """Result and trace of a session; ``retries`` (messages of retried model calls)
    become recoverable errors in the trace."""
    session = session_from_messages(
        list(messages), session_id=session_id, where=f"opencode session {session_id}"
    )
    result, trace = session.result, session.trace
    if session.cost_source != "provider":
        # Only OpenCode's own figure is the provider's: pricing is the cost collector's
        # job, with the
        # profile's prices and the full `providerID/modelID` (and it then says
        # "computed" or "unknown").
        result = attrs.evolve(
            result, metrics=attrs.evolve(result.metrics, cost=CostBreakdown())
        )
    if completion_reason is not None:
        result = attrs.evolve(result, completion_reason=completion_reason)
    if retries:
        notes: list[Any] = [
            ErrorEvent(
                message=f"model request retried by OpenCode: {m}", recoverable=True
            )
            for m in retries
        ]
        turns: list[Any] = list(trace.turns)
        if turns:
            turns[-1] = attrs.evolve(turns[-1], events=notes + list(turns[-1].events))
        trace = attrs.evolve(trace, events=notes + list(trace.events), turns=turns)
    return attrs.evolve(session, result=result, trace=trace)

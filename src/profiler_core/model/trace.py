"""Session traces: the event stream of one agent session."""

from __future__ import annotations

from typing import Any, Union

import attrs

from ._validators import as_tuple, non_negative
from .metrics import TokenBreakdown
from .record import Record


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReasoningEvent(Record):
    """The agent thought (reasoning / thinking content)."""

    content: str
    duration_ms: int | float = attrs.field(default=0, validator=non_negative)
    token_count: int = attrs.field(default=0, validator=non_negative)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolCallEvent(Record):
    """The agent called a tool; ``input``/``output`` are any JSON values."""

    name: str
    input: Any
    output: Any
    duration_ms: int | float = attrs.field(default=0, validator=non_negative)
    success: bool = True
    error: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TextOutputEvent(Record):
    """The agent wrote text for the user."""

    content: str
    token_count: int = attrs.field(default=0, validator=non_negative)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TurnBoundaryEvent(Record):
    """A turn ended (``turn_number`` counts from 1)."""

    turn_number: int
    timestamp: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ErrorEvent(Record):
    """Something went wrong in the session itself."""

    message: str
    recoverable: bool = True


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModelCallEvent(Record):
    """One call of the model API, as the wire recorder saw it between the agent and its
    model (docs/wire.md)."""

    #: openai-chat | openai-responses | anthropic
    api: str
    #: when the request arrived (ISO 8601, UTC)
    started_at: str
    #: until the response's last byte
    duration_ms: int | float = attrs.field(validator=non_negative)
    #: until the first generated content of a streamed answer (None: not streamed, or no content)
    ttft_ms: int | float | None = None
    #: the HTTP status of the answer (0: the endpoint never answered)
    status: int = 0
    stream: bool = False
    #: the model the request asked for
    model_asked: str = ""
    #: the model that answered (as the response names it)
    model: str = ""
    #: the answer's usage (zero when it carried none)
    tokens: TokenBreakdown
    #: the tools the request offered
    tools: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    #: the tools the model asked to call
    tool_calls: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    #: 1, or n when the agent repeated the previous request after it failed (its n-th try)
    attempt: int = 1
    error: str | None = None


TraceEvent = Union[  # noqa: UP007 - a runtime union for the tagged-union hooks
    ReasoningEvent,
    ToolCallEvent,
    TextOutputEvent,
    TurnBoundaryEvent,
    ErrorEvent,
    ModelCallEvent,
]

#: JSON ``type`` tag of each event class (the original's names).
TRACE_EVENT_TAGS: dict[type, str] = {
    ReasoningEvent: "reasoning",
    ToolCallEvent: "tool_call",
    TextOutputEvent: "text_output",
    TurnBoundaryEvent: "turn_boundary",
    ErrorEvent: "error",
    ModelCallEvent: "model_call",
}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Turn(Record):
    """The events of one agent turn."""

    number: int
    events: tuple[TraceEvent, ...] = attrs.field(converter=as_tuple)
    start_timestamp: str
    end_timestamp: str
    duration_ms: int | float = attrs.field(validator=non_negative)
    #: the subagent that took this turn (e.g. Claude Code's ``agentId``); None for the
    #: session's own agent
    agent: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TraceSummary(Record):
    """Totals of a session trace."""

    total_turns: int = attrs.field(validator=non_negative)
    total_tool_calls: int = attrs.field(validator=non_negative)
    total_tokens: TokenBreakdown
    total_duration: int | float = attrs.field(validator=non_negative)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class WorkspaceReport(Record):
    """What a session left in its workspace, recorded once the agent finished."""

    #: ``git diff --stat`` of a git workspace (new files included), else None
    diff_stat: str | None = None
    #: the files of a workspace that is not a git tree (relative paths, the first 200)
    files: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SessionTrace(Record):
    """Everything that happened in one session, for analysis."""

    session_id: str
    events: tuple[TraceEvent, ...] = attrs.field(converter=as_tuple)
    turns: tuple[Turn, ...] = attrs.field(converter=as_tuple)
    summary: TraceSummary
    #: the session's workspace after the agent (set by the runner)
    workspace: WorkspaceReport | None = None

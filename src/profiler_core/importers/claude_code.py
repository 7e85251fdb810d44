"""``claude-code``: a Claude Code session log (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON event per line; ``type`` is ``user``, ``assistant``, ``system``,
``summary`` or bookkeeping (``file-history-snapshot``, ``queue-operation``,
``progress``... - skipped). Events carry ``uuid``, ``parentUuid``,
``timestamp``, ``sessionId`` and an Anthropic ``message``.

Claude Code writes one line per content block, so one API response is split
over several ``assistant`` lines with the same ``message.id``, each repeating
the response's ``usage`` (the last line holds the final ``output_tokens``).
Usage is therefore counted once per ``message.id``, from the line with the
most output tokens, and the lines of one id form one turn. Tool results come
back in ``user`` events as ``tool_result`` blocks with ``is_error``; API
failures are ``assistant`` events with ``isApiErrorMessage`` (model
``<synthetic>``), imported as error events.

Timing segments: one ``model`` segment per response, from the request
(newer logs write an ``api-request`` line as it is sent; otherwise the event
before the response) to its last line, and one ``tools`` segment per tool
call, from the call to its result. ``latency_model_ms`` is then the time spent
waiting for the model and ``latency_tools_ms`` the time tools ran.

The same parser reads the transcript the ``claude-code`` provider finds in
the session's home after a live run (one parser per format).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from ..errors import ValidationError
from ..metrics.messages import normalize_message
from ..metrics.pricing import price_tokens
from ..metrics.usage import normalize_usage
from ..model import RecordedSession, TimingSegment
from ..traces.builder import SessionBuilder, parse_arguments, text_of
from ..traces.readers import (
    expect_mapping,
    iter_jsonl,
    keys_of,
    optional_str,
    parse_time,
)
from ._chat import server_tool_results

_CONVERSATION = ("user", "assistant", "system")
_SYNTHETIC = "<synthetic>"
#: Block types a tool result may hold that we import; others (e.g. tool references) are dropped.
_RESULT_BLOCKS = ("text", "image")


def load(path: Path) -> list[RecordedSession]:
    """The one session of a Claude Code log."""
    builder = SessionBuilder(
        price=price_tokens, file=path, source=str(path), format="claude-code"
    )
    log = _Log(path, builder)
    for lineno, event in iter_jsonl(path):
        log.event(event, f"{path}:{lineno}")
    return [log.session()]


@attrs.define
class _Log:
    """One pass over a Claude Code log: what it collects beside the builder's turns."""

    path: Path
    builder: SessionBuilder
    # message.id -> (usage, model, where) of the line with the most output tokens
    usage: dict[str, tuple[Mapping[str, Any], str | None, str]] = attrs.Factory(dict)
    session_id: str | None = None
    conversation: bool = False
    last_error: str | None = None
    # message.id -> [request sent, last line of the response]
    steps: dict[str, list[datetime]] = attrs.Factory(dict)
    # the latest event before a response (its request time when unknown)
    mark: datetime | None = None
    request_at: datetime | None = None
    # agentId of each conversation event's subagent (None: the main agent); one id for all:
    # a subagent's own file
    agents: set[str | None] = attrs.Factory(set)

    def event(self, event: Any, where: str) -> None:
        """One line of the log."""
        event = expect_mapping(
            event, where, "a JSON object (one Claude Code event per line)"
        )
        kind = event.get("type")
        if not isinstance(kind, str):
            raise ValidationError(
                f"{where}: no 'type' ({keys_of(event)}); expected a Claude Code "
                "event (type user, assistant, system, summary...)"
            )
        if kind == "api-request" and event.get("timestamp") is not None:
            self.request_at = parse_time(event["timestamp"], f"{where}: $.timestamp")
        elif kind in _CONVERSATION:
            self._conversation(event, kind, where)

    def _conversation(self, event: Mapping[str, Any], kind: str, where: str) -> None:
        """A user, assistant or system event."""
        if not self.session_id:
            self.session_id = optional_str(
                event.get("sessionId"), f"{where}: $.sessionId"
            )
        agent = _agent_of(event, where)
        self.agents.add(agent)
        moment = None
        if event.get("timestamp") is not None:
            moment = parse_time(event["timestamp"], f"{where}: $.timestamp")
        if moment is not None:
            self._time(event, kind, moment, where)
        if kind == "system":
            self.builder.see(moment)
            if event.get("level") == "error":
                self.builder.error(text_of(event.get("content")) or "system error")
            return
        message = expect_mapping(
            event.get("message"), f"{where}: $.message", "a message object"
        )
        self.conversation = True
        if kind == "user":
            _user(self.builder, event, message, moment, where)
        else:
            self._assistant(event, message, moment, where, agent)

    def _time(
        self, event: Mapping[str, Any], kind: str, moment: datetime, where: str
    ) -> None:
        """A response's span: from its request (or the event before) to its last line."""
        if kind != "assistant" or event.get("isApiErrorMessage"):
            self.mark = moment
            return
        key = _message_key(event, where)
        if key not in self.steps:
            self.steps[key] = [self.request_at or self.mark or moment, moment]
            self.request_at = None
        self.steps[key][1] = max(self.steps[key][1], moment)

    def _assistant(
        self,
        event: Mapping[str, Any],
        message: Mapping[str, Any],
        moment: datetime | None,
        where: str,
        agent: str | None,
    ) -> None:
        """An assistant message, or the API error Claude Code logged in its place."""
        model = optional_str(message.get("model"), f"{where}: $.message.model")
        if event.get("isApiErrorMessage") or model == _SYNTHETIC:
            text = text_of(message.get("content")) or "API error"
            self.builder.see(moment)
            self.builder.error(text)
            self.last_error = text
            return
        self.last_error = None
        _assistant(self.builder, message, model, moment, where, self.usage, agent)

    def session(self) -> RecordedSession:
        """The session, once every line was read."""
        if not self.conversation:
            raise ValidationError(
                f"{self.path}: no user or assistant events; expected a Claude Code session log "
                "(~/.claude/projects/<project>/<session>.jsonl)"
            )
        for raw, model, where in self.usage.values():
            usage_where = f"{where}: $.message.usage"
            tokens = normalize_usage(raw, provider="anthropic", where=usage_where)
            self.builder.add_usage(tokens, model)
        session = self.builder.build(
            session_id=self.session_id or self.path.stem, error=self.last_error
        )
        if len(self.agents) == 1 and None not in self.agents:
            session = attrs.evolve(session, agent_id=next(iter(self.agents)))
        return with_segments(session, _segments(self.steps, self.builder))


def _agent_of(event: Mapping[str, Any], where: str) -> str | None:
    """The subagent an event belongs to: its ``agentId`` when it is a sidechain (a Task
    subagent's work)."""
    if event.get("isSidechain") is not True:
        return None
    return optional_str(event.get("agentId"), f"{where}: $.agentId") or "sidechain"


def _message_key(event: Mapping[str, Any], where: str) -> str:
    message = event.get("message")
    message_id = message.get("id") if isinstance(message, Mapping) else None
    return message_id if isinstance(message_id, str) and message_id else where


def _segments(
    steps: Mapping[str, list[datetime]], builder: SessionBuilder
) -> list[TimingSegment]:
    segments = [
        TimingSegment(
            label="model", start_ms=_epoch_ms(start), end_ms=_epoch_ms(max(start, end))
        )
        for start, end in steps.values()
    ]
    for tool in builder.tools.values():
        if tool.started is not None and tool.duration_ms is not None:
            start = _epoch_ms(tool.started)
            segments.append(
                TimingSegment(
                    label="tools",
                    start_ms=start,
                    end_ms=round(start + tool.duration_ms, 3),
                )
            )
    return sorted(segments, key=lambda s: (s.start_ms, s.label))


def _epoch_ms(moment: datetime) -> float:
    return round(moment.timestamp() * 1000, 3)


def with_segments(
    session: RecordedSession, segments: list[TimingSegment]
) -> RecordedSession:
    """``session`` whose timing carries ``segments``."""
    timing = attrs.evolve(session.result.metrics.timing, segments=tuple(segments))
    metrics = attrs.evolve(session.result.metrics, timing=timing)
    return attrs.evolve(session, result=attrs.evolve(session.result, metrics=metrics))


def _user(
    builder: SessionBuilder,
    event: Mapping[str, Any],
    message: Mapping[str, Any],
    moment,
    where: str,
) -> None:
    content = message.get("content")
    if isinstance(content, list):
        content = [_trim_result(block) for block in content]
    normalized = normalize_message(
        {"role": "user", "content": content},
        provider="anthropic",
        where=f"{where}: $.message",
    )
    results = [m for m in normalized if m.role == "tool"]
    if results:
        builder.see(moment)
        for result in results:
            builder.tool_result(
                result.tool_call_id,
                result.content,
                is_error=bool(result.metadata.get("is_error")),
                moment=moment,
                where=where,
            )
    typed = [m for m in normalized if m.role == "user"]
    if not typed:
        return
    if event.get("isMeta"):
        # Caveats and hook feedback Claude Code injects: part of the session's time, not a prompt.
        builder.see(moment)
        return
    builder.user_message(moment)
    if builder.prompt is None:
        builder.prompt = text_of(typed[0].content)


def _trim_result(block: Any) -> Any:
    if (
        isinstance(block, Mapping)
        and block.get("type") == "tool_result"
        and isinstance(block.get("content"), list)
    ):
        kept = [
            b
            for b in block["content"]
            if not isinstance(b, Mapping) or b.get("type") in _RESULT_BLOCKS
        ]
        return {**block, "content": kept}
    return block


def _assistant(
    builder: SessionBuilder,
    message: Mapping[str, Any],
    model: str | None,
    moment,
    where: str,
    usage,
    agent: str | None,
) -> None:
    message_id = optional_str(message.get("id"), f"{where}: $.message.id")
    key = message_id or where  # a line without an id is a response of its own
    raw = {k: message[k] for k in ("content", "id", "stop_reason") if k in message}
    normalized = normalize_message(
        {**raw, "role": "assistant"}, provider="anthropic", where=f"{where}: $.message"
    )
    answer = normalized[-1]
    if key not in usage and not builder.has_turn(key):
        builder.note_model(model)
    turn = builder.turn(key, moment, agent=agent)
    for thought in answer.metadata.get("thinking") or ():
        builder.reasoning(turn, thought)
    for _ in range(answer.metadata.get("redacted_thinking") or 0):
        builder.reasoning(turn, "[redacted thinking]", token_count=0)
    builder.text(turn, text_of(answer.content))
    for call in answer.tool_calls:
        builder.tool_call(
            turn,
            call.id,
            call.function.name,
            parse_arguments(call.function.arguments),
            moment,
        )
    server_tool_results(builder, answer.metadata, where=where, moment=moment)
    raw_usage = message.get("usage")
    if raw_usage is None:
        return
    raw_usage = expect_mapping(raw_usage, f"{where}: $.message.usage", "a usage object")
    previous = usage.get(key)
    # The repeated lines of one response share its usage; only output_tokens may grow.
    # Keep the largest, once.
    if previous is None or _output(raw_usage) >= _output(previous[0]):
        usage[key] = (raw_usage, model, where)


def _output(raw: Mapping[str, Any]) -> int:
    value = raw.get("output_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

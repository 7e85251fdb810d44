"""Walk a normalized chat (OpenAI-format ``Message`` list) into a SessionBuilder.

Shared by the ``openai`` and ``anthropic`` importers: both normalize their
messages with :func:`profiler_core.metrics.messages.normalize_messages` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..metrics.messages import Message
from ..metrics.usage import normalize_usage
from ..model import TokenBreakdown
from ..traces.builder import SessionBuilder, parse_arguments, text_of

#: Where OpenAI-compatible vendors put a message's reasoning text.
_REASONING_KEYS = ("reasoning_content", "reasoning")


def walk_messages(
    builder: SessionBuilder, messages: list[Message], *, where: str
) -> list[tuple[str | None, TokenBreakdown]]:
    """Feed the messages to ``builder``; return the usage each assistant message carries
    (model, tokens)."""
    usage: list[tuple[str | None, TokenBreakdown]] = []
    answers = 0
    for message in messages:
        meta = message.metadata
        if message.role == "user":
            if builder.prompt is None:
                builder.prompt = text_of(message.content)
        elif message.role == "tool":
            is_error = meta.get("is_error") is True or meta.get("status") == "error"
            builder.tool_result(
                message.tool_call_id, message.content, is_error=is_error, where=where
            )
        elif message.role == "assistant":
            answers += 1
            here = f"{where}: assistant message {answers}"
            model = _model(meta)
            builder.note_model(model)
            turn = builder.turn()
            for thought, count in _reasoning(meta):
                builder.reasoning(turn, thought, token_count=count)
            builder.text(turn, text_of(message.content))
            for call in message.tool_calls:
                builder.tool_call(
                    turn,
                    call.id,
                    call.function.name,
                    parse_arguments(call.function.arguments),
                )
            server_tool_results(builder, meta, where=here)
            raw = _usage(meta)
            if raw is not None:
                usage.append((model, normalize_usage(raw, where=f"{here}.usage")))
    return usage


def server_tool_results(
    builder: SessionBuilder, meta: Mapping[str, Any], *, where: str, moment=None
) -> None:
    """Results of server-side tools (Anthropic web search) arrive inside the assistant
    message itself."""
    for block in meta.get("server_tool_results") or ():
        content = block.get("content")
        failed = isinstance(content, Mapping) and str(content.get("type", "")).endswith(
            "_error"
        )
        error = f"{content.get('error_code', 'error')}" if failed else None
        builder.tool_result(
            block.get("tool_use_id"),
            content,
            is_error=failed,
            error=error,
            moment=moment,
            where=where,
        )


def _model(meta: Mapping[str, Any]) -> str | None:
    model = meta.get("model")
    if isinstance(model, str) and model:
        return model
    response = meta.get("response_metadata")
    if isinstance(response, Mapping):
        for key in ("model_name", "model"):
            if isinstance(response.get(key), str) and response[key]:
                return response[key]
    return None


def _reasoning(meta: Mapping[str, Any]) -> list[tuple[str, int | None]]:
    """(text, token count or None to estimate) of each thought of a message."""
    thoughts: list[tuple[str, int | None]] = [
        (t, None)
        for t in meta.get("thinking") or ()
        if isinstance(t, str) and t.strip()
    ]
    for key in _REASONING_KEYS:
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            thoughts.append((value, None))
    redacted = meta.get("redacted_thinking")
    if isinstance(redacted, int) and redacted > 0:
        # The content is encrypted, but the agent did think: keep the event so analyzers count it.
        thoughts.extend([("[redacted thinking]", 0)] * redacted)
    return thoughts


def _usage(meta: Mapping[str, Any]) -> Any:
    for key in ("usage", "usage_metadata"):
        if isinstance(meta.get(key), Mapping):
            return meta[key]
    response = meta.get("response_metadata")
    if isinstance(response, Mapping):
        for key in ("token_usage", "usage"):
            if isinstance(response.get(key), Mapping):
                return response[key]
    return None

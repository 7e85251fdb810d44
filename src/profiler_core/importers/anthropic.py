"""``anthropic``: a Messages API conversation with content blocks.

The file is a JSON object ``{"model", "system"?, "messages": [...], "usage"?}``
(the request with each response appended as an assistant message), a JSON
array of such objects or of plain messages, or one object per line (JSONL).
Assistant messages may carry the response's ``usage``, ``model``, ``id`` and
``stop_reason``; a top-level ``usage`` is the conversation's total and wins
over the per-response sum. Tool results are ``tool_result`` blocks (with
``is_error``) in user messages; ``thinking`` blocks become reasoning events.
Optional ``id``, ``startedAt``, ``completedAt`` and ``latencyMs`` are read as
in the ``openai`` format.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..metrics.messages import normalize_messages
from ..metrics.pricing import price_tokens
from ..metrics.usage import normalize_usage
from ..model import CompletionReason, RecordedSession
from ..traces.builder import SessionBuilder
from ..traces.readers import (
    expect_list,
    expect_mapping,
    keys_of,
    number,
    optional_str,
    parse_time,
    read_json_records,
)
from ._chat import walk_messages


def load(path: Path) -> list[RecordedSession]:
    """Every conversation of an ``anthropic`` file."""
    records = read_json_records(path)
    if records and all(isinstance(v, Mapping) and "role" in v for _, v in records):
        # A bare list of messages is one conversation.
        records = [(str(path), {"messages": [v for _, v in records]})]
    return [
        _session(path, where, value, index, len(records))
        for index, (where, value) in enumerate(records)
    ]


def _session(
    path: Path, where: str, value: Any, index: int, count: int
) -> RecordedSession:
    conversation = expect_mapping(value, where, "a Messages API conversation object")
    if "messages" not in conversation:
        raise ValidationError(
            f"{where}: no 'messages' key ({keys_of(conversation)}); expected a "
            "Messages API conversation "
            "{model, messages: [{role, content: [blocks]}], usage?}"
        )
    raw = expect_list(conversation["messages"], f"{where}: $.messages")
    messages = normalize_messages(
        raw, provider="anthropic", where=f"{where}: $.messages"
    )
    builder = SessionBuilder(
        price=price_tokens, file=path, source=where, format="anthropic"
    )
    per_message = walk_messages(builder, messages, where=where)

    total = None
    if conversation.get("usage") is not None:
        total = normalize_usage(
            conversation["usage"], provider="anthropic", where=f"{where}: $.usage"
        )
    elif per_message:
        builder.usage.extend(per_message)

    last_stop = next(
        (
            m.metadata.get("stop_reason")
            for m in reversed(messages)
            if m.role == "assistant"
        ),
        None,
    )
    reason: CompletionReason = "stop"
    error = optional_str(conversation.get("error"), f"{where}: $.error")
    if last_stop == "refusal":
        error = error or "the model refused (stop_reason: refusal)"
    session_id = optional_str(conversation.get("id"), f"{where}: $.id")
    if not session_id:
        session_id = path.stem if count == 1 else f"{path.stem}-{index}"
    return builder.build(
        session_id=session_id,
        model=optional_str(conversation.get("model"), f"{where}: $.model"),
        latency_ms=number(conversation.get("latencyMs"), f"{where}: $.latencyMs"),
        started_at=_time(conversation, "startedAt", where),
        completed_at=_time(conversation, "completedAt", where),
        total_usage=total,
        completion_reason=reason,
        error=error,
        scenario_hint=optional_str(
            conversation.get("scenarioId"), f"{where}: $.scenarioId"
        ),
    )


def _time(data: Mapping[str, Any], key: str, where: str):
    return (
        parse_time(data[key], f"{where}: $.{key}")
        if data.get(key) is not None
        else None
    )

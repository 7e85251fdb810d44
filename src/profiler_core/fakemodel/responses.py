"""OpenAI Responses (Codex CLI): replies in its wire format.

A streaming request gets ``response.created``, per output item
``response.output_item.added``, its deltas (reasoning summary, function-call
arguments, output text) and ``response.output_item.done``, then
``response.completed`` with the usage; other requests one response object.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from .replies import Fail, Reply, Shell, Text, ToolCall, Usage, shell_call

#: The usage of a reply that names none: 1,200 input tokens of which 1,000 cached, 30
#: output of which 5 reasoning.
DEFAULT_USAGE = Usage(input=200, output=25, cache_read=1000, reasoning=5)
#: The model API this module speaks (the registry of agents names its agents' shell tools).
API = "openai-responses"


def usage_json(usage: Usage) -> dict[str, Any]:
    """The ``usage`` of ``response.completed`` (cached inside input, reasoning inside
    output, as OpenAI counts)."""
    input_tokens = usage.input + usage.cache_read + usage.cache_write
    output_tokens = usage.output + usage.reasoning
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def answer(handler: Any, body: dict[str, Any], reply: Reply) -> str:
    """Send the response to one request; a short description of it for the log."""
    if isinstance(reply, Fail):
        kind = "server_error" if reply.status >= 500 else "invalid_request_error"
        handler.send_json(
            reply.status,
            {
                "error": {
                    "message": reply.message,
                    "type": kind,
                    "param": None,
                    "code": None,
                }
            },
        )
        return f"fail {reply.status}"
    if isinstance(reply, Shell):
        reply = shell_call(reply, body, API)
    assert isinstance(reply, (Text, ToolCall))  # Hang never reaches an API module
    base = {
        "id": handler.new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model") or handler.model,
    }
    items = _items(handler, reply)
    done = {
        **base,
        "status": "completed",
        "output": [item for item, _ in items],
        "usage": usage_json(reply.usage or DEFAULT_USAGE),
    }
    if not body.get("stream"):
        handler.send_json(200, done)
    else:
        handler.send_sse(list(_events(base, items, done)))
    return "text" if isinstance(reply, Text) else f"tool_call {reply.name}"


def _events(
    base: dict[str, Any],
    items: list[tuple[dict[str, Any], list[Any]]],
    done: dict[str, Any],
) -> Iterator[tuple[str | None, dict[str, Any]]]:
    sequence = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, "sequence_number": next(sequence), **data}

    yield event(
        "response.created", response={**base, "status": "in_progress", "output": []}
    )
    for index, (item, stream) in enumerate(items):
        yield event("response.output_item.added", output_index=index, item=stream[0])
        for kind, data in stream[1:]:
            yield event(kind, output_index=index, item_id=item["id"], **data)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=done)


def _items(
    handler: Any, reply: Text | ToolCall
) -> list[tuple[dict[str, Any], list[Any]]]:
    """(complete item, [the item as first announced, (event, data)...]) pairs."""
    items: list[tuple[dict[str, Any], list[Any]]] = []
    if reply.thinking:
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": handler.new_id("rs"),
            "summary": [{"type": "summary_text", "text": reply.thinking}],
        }
        items.append((item, [{**item, "summary": []}]))
    if isinstance(reply, ToolCall):
        arguments = json.dumps(reply.arguments)
        item = {
            "type": "function_call",
            "id": handler.new_id("fc"),
            "call_id": reply.call_id or handler.new_id("call"),
            "name": reply.name,
            "arguments": arguments,
            "status": "completed",
        }
        stream: list[Any] = [
            {**item, "arguments": "", "status": "in_progress"},
            ("response.function_call_arguments.delta", {"delta": arguments}),
            ("response.function_call_arguments.done", {"arguments": arguments}),
        ]
        items.append((item, stream))
        return items
    part: dict[str, Any] = {
        "type": "output_text",
        "text": reply.text,
        "annotations": [],
    }
    item = {
        "type": "message",
        "id": handler.new_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }
    stream = [
        {**item, "status": "in_progress", "content": []},
        (
            "response.content_part.added",
            {"content_index": 0, "part": {**part, "text": ""}},
        ),
        ("response.output_text.delta", {"content_index": 0, "delta": reply.text}),
        ("response.output_text.done", {"content_index": 0, "text": reply.text}),
        ("response.content_part.done", {"content_index": 0, "part": part}),
    ]
    items.append((item, stream))
    return items

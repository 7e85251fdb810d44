"""Anthropic Messages (Claude Code): replies in its wire format.

A streaming request gets ``message_start`` (with the usage),
``content_block_start/delta/stop`` per block (``thinking_delta`` with a
signature, ``text_delta``, ``input_json_delta``), ``message_delta`` (the stop
reason and output tokens) and ``message_stop``; other requests one message.
"""

from __future__ import annotations

import json
from typing import Any

from .replies import Fail, Reply, Shell, Text, ToolCall, Usage, shell_call

#: The usage of a reply that names none (Claude Code's sessions read much from the prompt cache).
DEFAULT_USAGE = Usage(input=100, output=20, cache_read=1000, cache_write=50)
#: The model API this module speaks (the registry of agents names its agents' shell tools).
API = "anthropic"
_SIGNATURE = "ZmFrZS1tb2RlbA=="


def answer(handler: Any, body: dict[str, Any], reply: Reply) -> str:
    """Send the response to one request; a short description of it for the log."""
    if isinstance(reply, Fail):
        kind = "api_error" if reply.status >= 500 else "invalid_request_error"
        handler.send_json(
            reply.status,
            {"type": "error", "error": {"type": kind, "message": reply.message}},
        )
        return f"fail {reply.status}"
    if isinstance(reply, Shell):
        reply = shell_call(reply, body, API)
    assert isinstance(reply, (Text, ToolCall))  # Hang never reaches an API module
    usage = reply.usage or DEFAULT_USAGE
    start_usage = {
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": 1,
    }
    # Anthropic counts thinking inside the output tokens.
    output_tokens = usage.output + usage.reasoning
    stop = "tool_use" if isinstance(reply, ToolCall) else "end_turn"
    blocks = _blocks(handler, reply)
    message: dict[str, Any] = {
        "id": handler.new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or handler.model,
        "stop_sequence": None,
    }
    if not body.get("stream"):
        done = {
            **message,
            "content": [b for b, _ in blocks],
            "stop_reason": stop,
            "usage": {**start_usage, "output_tokens": output_tokens},
        }
        handler.send_json(200, done)
    else:
        events: list[tuple[str | None, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        **message,
                        "content": [],
                        "stop_reason": None,
                        "usage": start_usage,
                    },
                },
            )
        ]
        events += _block_events(blocks)
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
        events += [("message_delta", delta), ("message_stop", {"type": "message_stop"})]
        handler.send_sse(events)
    return "text" if isinstance(reply, Text) else f"tool_call {reply.name}"


def _blocks(
    handler: Any, reply: Text | ToolCall
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(complete block, the one delta that streams it) pairs."""
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if reply.thinking:
        thinking = {
            "type": "thinking",
            "thinking": reply.thinking,
            "signature": _SIGNATURE,
        }
        blocks.append(
            (thinking, {"type": "thinking_delta", "thinking": reply.thinking})
        )
    if isinstance(reply, Text):
        blocks.append(
            (
                {"type": "text", "text": reply.text},
                {"type": "text_delta", "text": reply.text},
            )
        )
    else:
        call = {
            "type": "tool_use",
            "id": reply.call_id or handler.new_id("toolu"),
            "name": reply.name,
            "input": reply.arguments,
        }
        blocks.append(
            (
                call,
                {
                    "type": "input_json_delta",
                    "partial_json": json.dumps(reply.arguments),
                },
            )
        )
    return blocks


def _block_events(
    blocks: list[tuple[dict[str, Any], dict[str, Any]]],
) -> list[tuple[str | None, dict[str, Any]]]:
    events: list[tuple[str | None, dict[str, Any]]] = []
    for index, (block, delta) in enumerate(blocks):
        empty: dict[str, Any]
        if block["type"] == "thinking":
            empty = {"type": "thinking", "thinking": "", "signature": ""}
        elif block["type"] == "tool_use":
            empty = {**block, "input": {}}
        else:
            empty = {**block, "text": ""}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
        )
        events.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        if block["type"] == "thinking":
            signature = {"type": "signature_delta", "signature": _SIGNATURE}
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": signature},
                )
            )
        events.append(
            ("content_block_stop", {"type": "content_block_stop", "index": index})
        )
    return events

"""OpenAI-compatible chat completions (OpenCode and any OpenAI-compatible agent):
replies in its wire format.

A streaming request gets SSE chunks (the role, the content in two pieces or
the tool call, the finish reason), then a usage chunk, then ``[DONE]``; other
requests one ``chat.completion`` object. ``thinking`` is not sent: the chat
API has no standard field for it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .replies import Fail, Reply, Shell, Text, ToolCall, Usage, shell_call

#: The usage of a reply that names none: 120 prompt tokens of which 40 cached, 15 completion tokens.
DEFAULT_USAGE = Usage(input=80, output=15, cache_read=40)
#: The model API this module speaks (the registry of agents names its agents' shell tools).
API = "openai-chat"


def usage_json(usage: Usage) -> dict[str, Any]:
    """The ``usage`` object of a chat completion (OpenAI counts cached tokens inside the
    prompt's)."""
    prompt = usage.input + usage.cache_read + usage.cache_write
    completion = usage.output + usage.reasoning
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
    }
    if usage.reasoning:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    return out


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
    message, finish = _message(handler, reply)
    usage = usage_json(reply.usage or DEFAULT_USAGE)
    base = {
        "id": f"chatcmpl-{time.time_ns()}",
        "created": int(time.time()),
        "model": handler.model,
    }
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        handler.send_json(
            200,
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage},
        )
    else:
        handler.send_sse(
            [
                (None, chunk)
                for chunk in _chunks(
                    {**base, "object": "chat.completion.chunk"}, message, finish, usage
                )
            ],
            done="[DONE]",
        )
    return describe(reply)


def describe(reply: Text | ToolCall) -> str:
    """``text`` or ``tool_call NAME``: what the log says of an answer."""
    return "text" if isinstance(reply, Text) else f"tool_call {reply.name}"


def _message(handler: Any, reply: Text | ToolCall) -> tuple[dict[str, Any], str]:
    if isinstance(reply, Text):
        return {"role": "assistant", "content": reply.text}, "stop"
    call = {
        "id": reply.call_id or handler.new_id("call"),
        "type": "function",
        "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


def _chunks(
    base: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, Any]
) -> list[dict[str, Any]]:
    def chunk(
        delta: dict[str, Any], finish_reason: str | None = None
    ) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    if "tool_calls" in message:
        chunks.append(chunk({"tool_calls": [{"index": 0, **message["tool_calls"][0]}]}))
    else:
        # Two content chunks, as a real model streams words.
        text = message["content"]
        half = len(text) // 2
        chunks += [chunk({"content": piece}) for piece in (text[:half], text[half:])]
    chunks.append(chunk({}, finish))
    chunks.append({**base, "choices": [], "usage": usage})
    return chunks

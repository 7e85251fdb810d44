"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code in tests.

``HEAD /`` answers 200 (Claude Code's connectivity probe); every ``POST
/v1/messages`` is answered by the script, as an SSE stream (``message_start``
with the usage, ``content_block_*`` with ``thinking_delta`` / ``text_delta`` /
``input_json_delta``, ``message_delta`` with the stop reason and output
tokens, ``message_stop``) or as one JSON message when the request does not
stream. Every request is logged.

Usage::

    with AnthropicServer(tool_then_text()) as model:   # a Bash call, then a final answer
        env = {"ANTHROPIC_BASE_URL": model.url}
        ...
        assert len(model.messages()) == 2

Replies: ``Text(text)``, ``ToolUse(name, input)`` (either may carry
``thinking``), ``Fail(status)`` and ``Hang()``; each but ``Hang`` takes
``usage=Usage(...)`` and ``delay_s``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._http import Fail, Hang, RecordedRequest, ScriptedHandler, ScriptedServer

__all__ = [
    "AnthropicServer",
    "Fail",
    "Hang",
    "Text",
    "ToolUse",
    "Usage",
    "steps",
    "tool_results",
    "tool_then_text",
]


@dataclass(frozen=True)
class Usage:
    """Usage of one response, as Anthropic counts it (``input`` excludes cache reads and writes)."""

    input: int = 100
    output: int = 20
    cache_read: int = 1000
    cache_write: int = 50


@dataclass(frozen=True)
class Text:
    """A final answer (stop reason ``end_turn``)."""

    text: str
    thinking: str = ""
    usage: Usage = field(default_factory=Usage)
    delay_s: float = 0.0


@dataclass(frozen=True)
class ToolUse:
    """One tool call (stop reason ``tool_use``)."""

    name: str
    input: dict[str, Any]
    thinking: str = ""
    usage: Usage = field(default_factory=Usage)
    delay_s: float = 0.0


Reply = Text | ToolUse | Fail | Hang


def tool_results(body: dict[str, Any]) -> int:
    """How many tool results the conversation in a request already holds."""
    count = 0
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return count


def steps(replies: Sequence[Reply]) -> Callable[[dict[str, Any]], Reply]:
    """A script for concurrent sessions: reply ``n`` answers a conversation holding ``n`` tool results."""

    def reply(body: dict[str, Any]) -> Reply:
        return replies[min(tool_results(body), len(replies) - 1)]

    return reply


def tool_then_text(
    command: str = "echo hello",
    text: str = "Done: the command printed hello.",
    usage: Usage = Usage(),
    delay_s: float = 0.0,
) -> Callable[[dict[str, Any]], Reply]:
    """A ``Bash`` call of ``command``, then ``text``."""
    return steps(
        [
            ToolUse("Bash", {"command": command, "description": "Run the command"}, thinking="I should run it.", usage=usage, delay_s=delay_s),
            Text(text, usage=usage, delay_s=delay_s),
        ]
    )


class AnthropicServer(ScriptedServer):
    """The server; a context manager that starts it on a free port and stops it."""

    name = "scripted-anthropic"

    def __init__(self, script: Any = (), *, model: str = "claude-sonnet-4-5") -> None:
        super().__init__(script)
        self.model = model

    def handler_class(self) -> type[ScriptedHandler]:
        """The Messages API handler."""
        return _Handler

    def messages(self) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests so far."""
        return self.posts("/v1/messages")


class _Handler(ScriptedHandler):
    owner: AnthropicServer

    def do_HEAD(self) -> None:
        index = self.owner.log(RecordedRequest(method="HEAD", path=self.path, body=None, started=time.monotonic()))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.owner.done(index, "head")

    def do_POST(self) -> None:
        self.serve_post("/v1/messages", self._answer)

    def _answer(self, body: dict[str, Any], reply: Reply) -> str:
        if isinstance(reply, Fail):
            kind = "api_error" if reply.status >= 500 else "invalid_request_error"
            self.send_json(reply.status, {"type": "error", "error": {"type": kind, "message": reply.message}})
            return f"fail {reply.status}"
        message_id = self.owner.new_id("msg")
        blocks = self._blocks(reply)
        usage = reply.usage
        start_usage = {
            "input_tokens": usage.input,
            "cache_creation_input_tokens": usage.cache_write,
            "cache_read_input_tokens": usage.cache_read,
            "output_tokens": 1,
        }
        stop = "tool_use" if isinstance(reply, ToolUse) else "end_turn"
        model = body.get("model") or self.owner.model
        if not body.get("stream"):
            self.send_json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [b for b, _ in blocks],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {**start_usage, "output_tokens": usage.output},
                },
            )
            return type(reply).__name__
        events: list[tuple[str | None, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": start_usage,
                    },
                },
            )
        ]
        for index, (block, delta) in enumerate(blocks):
            empty = {**block, "input": {}} if block["type"] == "tool_use" else {**block, block["type"]: ""}
            if block["type"] == "thinking":
                empty = {"type": "thinking", "thinking": "", "signature": ""}
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            if block["type"] == "thinking":
                signature = {"type": "signature_delta", "signature": "c2NyaXB0ZWQ="}
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": signature}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage.output}},
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        self.send_sse(events)
        return type(reply).__name__

    def _blocks(self, reply: Text | ToolUse) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(complete block, the one delta that streams it) pairs."""
        blocks = []
        if reply.thinking:
            blocks.append(
                (
                    {"type": "thinking", "thinking": reply.thinking, "signature": "c2NyaXB0ZWQ="},
                    {"type": "thinking_delta", "thinking": reply.thinking},
                )
            )
        if isinstance(reply, Text):
            blocks.append(({"type": "text", "text": reply.text}, {"type": "text_delta", "text": reply.text}))
        else:
            call = {"type": "tool_use", "id": self.owner.new_id("toolu"), "name": reply.name, "input": reply.input}
            blocks.append((call, {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}))
        return blocks

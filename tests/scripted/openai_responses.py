"""A scripted OpenAI Responses API on 127.0.0.1, for driving the real Codex CLI in tests.

Every ``POST /v1/responses`` is answered by the script as a stream of
Responses events (``response.created``, ``response.output_item.added``,
``response.function_call_arguments.delta/.done``, ``response.output_text.delta``,
``response.output_item.done``, ``response.completed`` with the usage) or as
one JSON response when the request does not stream. Every request is logged.

Usage::

    with ResponsesServer(shell_then_text()) as model:   # exec_command `echo hello`, then a final answer
        base_url = model.url + "/v1"
        ...
        assert len(model.responses()) == 2

Replies: ``Text(text)``, ``Call(name, arguments)`` (either may carry a
``reasoning`` summary), ``Fail(status)`` and ``Hang()``; each but ``Hang``
takes ``usage=Usage(...)`` and ``delay_s``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._http import Fail, Hang, RecordedRequest, ScriptedHandler, ScriptedServer

__all__ = ["Call", "Fail", "Hang", "ResponsesServer", "Text", "Usage", "calls_answered", "shell_then_text", "steps"]


@dataclass(frozen=True)
class Usage:
    """Usage of one response as the Responses API counts it (``cached`` within ``input``, ``reasoning`` within ``output``)."""

    input: int = 1200
    cached: int = 1000
    output: int = 30
    reasoning: int = 5

    def as_openai(self) -> dict[str, Any]:
        """The ``usage`` object of ``response.completed``."""
        return {
            "input_tokens": self.input,
            "input_tokens_details": {"cached_tokens": self.cached},
            "output_tokens": self.output,
            "output_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.input + self.output,
        }


@dataclass(frozen=True)
class Text:
    """A final answer (an assistant message)."""

    text: str
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)
    delay_s: float = 0.0


@dataclass(frozen=True)
class Call:
    """One function call (``exec_command`` with ``{"cmd": ...}`` is Codex's shell)."""

    name: str
    arguments: dict[str, Any]
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)
    delay_s: float = 0.0


Reply = Text | Call | Fail | Hang


def calls_answered(body: dict[str, Any]) -> int:
    """How many function-call outputs the request's input already holds."""
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return sum(1 for item in items if isinstance(item, dict) and item.get("type") == "function_call_output")


def steps(replies: Sequence[Reply]) -> Callable[[dict[str, Any]], Reply]:
    """A script for concurrent sessions: reply ``n`` answers an input holding ``n`` function-call outputs."""

    def reply(body: dict[str, Any]) -> Reply:
        return replies[min(calls_answered(body), len(replies) - 1)]

    return reply


def shell_then_text(
    command: str = "echo hello", text: str = "Done: the shell printed hello.", usage: Usage = Usage(), delay_s: float = 0.0
) -> Callable[[dict[str, Any]], Reply]:
    """An ``exec_command`` of ``command``, then ``text``."""
    return steps([Call("exec_command", {"cmd": command}, usage=usage, delay_s=delay_s), Text(text, usage=usage, delay_s=delay_s)])


class ResponsesServer(ScriptedServer):
    """The server; a context manager that starts it on a free port and stops it."""

    name = "scripted-responses"

    def __init__(self, script: Any = (), *, model: str = "gpt-5-codex") -> None:
        super().__init__(script)
        self.model = model

    def handler_class(self) -> type[ScriptedHandler]:
        """The Responses API handler."""
        return _Handler

    def responses(self) -> list[RecordedRequest]:
        """The ``POST /v1/responses`` requests so far."""
        return self.posts("/v1/responses")


class _Handler(ScriptedHandler):
    owner: ResponsesServer

    def do_GET(self) -> None:
        index = self.owner.log(RecordedRequest(method="GET", path=self.path, body=None, started=time.monotonic()))
        self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        self.owner.done(index, "404")

    def do_POST(self) -> None:
        self.serve_post("/v1/responses", self._answer)

    def _answer(self, body: dict[str, Any], reply: Reply) -> str:
        if isinstance(reply, Fail):
            kind = "server_error" if reply.status >= 500 else "invalid_request_error"
            self.send_json(reply.status, {"error": {"message": reply.message, "type": kind, "param": None, "code": None}})
            return f"fail {reply.status}"
        response_id = self.owner.new_id("resp")
        model = body.get("model") or self.owner.model
        items = self._items(reply)
        base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model}
        done = {**base, "status": "completed", "output": [item for item, _ in items], "usage": reply.usage.as_openai()}
        if not body.get("stream"):
            self.send_json(200, done)
            return type(reply).__name__
        events: list[tuple[str | None, dict[str, Any]]] = []
        sequence = iter(range(1_000_000))

        def event(kind: str, **data: Any) -> None:
            events.append((kind, {"type": kind, "sequence_number": next(sequence), **data}))

        event("response.created", response={**base, "status": "in_progress", "output": []})
        for index, (item, stream) in enumerate(items):
            event("response.output_item.added", output_index=index, item=stream[0])
            for kind, data in stream[1:]:
                event(kind, output_index=index, item_id=item["id"], **data)
            event("response.output_item.done", output_index=index, item=item)
        event("response.completed", response=done)
        self.send_sse(events)
        return type(reply).__name__

    def _items(self, reply: Text | Call) -> list[tuple[dict[str, Any], list[Any]]]:
        """(complete item, [the item as first announced, (event, data)...]) pairs."""
        items: list[tuple[dict[str, Any], list[Any]]] = []
        if reply.reasoning:
            summary = [{"type": "summary_text", "text": reply.reasoning}]
            item = {"type": "reasoning", "id": self.owner.new_id("rs"), "summary": summary}
            items.append((item, [{**item, "summary": []}]))
        if isinstance(reply, Call):
            arguments = json.dumps(reply.arguments)
            item = {
                "type": "function_call",
                "id": self.owner.new_id("fc"),
                "call_id": self.owner.new_id("call"),
                "name": reply.name,
                "arguments": arguments,
                "status": "completed",
            }
            items.append(
                (
                    item,
                    [
                        {**item, "arguments": "", "status": "in_progress"},
                        ("response.function_call_arguments.delta", {"delta": arguments}),
                        ("response.function_call_arguments.done", {"arguments": arguments}),
                    ],
                )
            )
        else:
            part = {"type": "output_text", "text": reply.text, "annotations": []}
            item = {"type": "message", "id": self.owner.new_id("msg"), "role": "assistant", "status": "completed", "content": [part]}
            items.append(
                (
                    item,
                    [
                        {**item, "status": "in_progress", "content": []},
                        ("response.content_part.added", {"content_index": 0, "part": {**part, "text": ""}}),
                        ("response.output_text.delta", {"content_index": 0, "delta": reply.text}),
                        ("response.output_text.done", {"content_index": 0, "text": reply.text}),
                        ("response.content_part.done", {"content_index": 0, "part": part}),
                    ],
                )
            )
        return items

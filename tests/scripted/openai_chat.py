"""A scripted OpenAI-compatible model server on 127.0.0.1, for driving real agents in tests.

No model and no network: every ``POST /v1/chat/completions`` is answered by a
*script*, streaming (SSE chunks, then a usage chunk, then ``[DONE]``) when the
request asks for ``stream: true``, else one JSON completion. ``GET /v1/models``
lists the served model. Every request is logged so a test can assert what the
agent sent (its system prompt, the tools it offered, the tool results).

Usage::

    from tests.scripted.openai_chat import ScriptedChatServer, ToolCall, Text, Fail, Hang, Usage, tool_then_text

    with ScriptedChatServer(tool_then_text()) as model:            # bash `echo hello`, then a final text
        base_url = model.base_url                                    # "http://127.0.0.1:PORT/v1"
        ...                                                          # run the agent against it
        assert model.chat_requests()[0]["messages"][0]["role"] == "system"

    ScriptedChatServer([ToolCall("bash", {"command": "ls"}), Text("done")])   # replies in order, the last repeats
    ScriptedChatServer(lambda body: Fail(500, "overloaded"))                # any callable body -> reply
    model.script = Hang()                                                    # change the script between runs
    model.release()                                                          # let hung requests end (close() does too)

Replies: ``Text(text)``, ``ToolCall(name, arguments, call_id=None)``,
``Fail(status, message)`` and ``Hang()`` (holds the request open until
``release()``/``close()``); each but ``Hang`` takes ``usage=Usage(prompt,
completion, cached)`` and ``delay_s`` (seconds to wait before answering).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._http import Fail, Hang, RecordedRequest, ScriptedHandler, ScriptedServer

__all__ = [
    "Fail",
    "Hang",
    "RecordedRequest",
    "Reply",
    "ScriptedChatServer",
    "Text",
    "ToolCall",
    "Usage",
    "has_tool_result",
    "tool_then_text",
]

MODEL_ID = "scripted"


@dataclass(frozen=True)
class Usage:
    """Token usage reported for one completion (``cached`` is part of ``prompt``, as OpenAI counts it)."""

    prompt: int = 120
    completion: int = 15
    cached: int = 40
    #: reasoning tokens, part of ``completion`` as OpenAI counts them (0: no ``completion_tokens_details``)
    reasoning: int = 0

    def as_openai(self) -> dict[str, Any]:
        """The ``usage`` object of an OpenAI chat completion."""
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
            "prompt_tokens_details": {"cached_tokens": self.cached},
        }
        if self.reasoning:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning}
        return usage


@dataclass(frozen=True)
class Text:
    """Answer with final text (finish reason ``stop``)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    delay_s: float = 0.0


@dataclass(frozen=True)
class ToolCall:
    """Answer with one tool call (finish reason ``tool_calls``)."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None
    usage: Usage = field(default_factory=Usage)
    delay_s: float = 0.0


Reply = Text | ToolCall | Fail | Hang
Script = Reply | Sequence[Reply] | Callable[[dict[str, Any]], Reply]


def has_tool_result(body: dict[str, Any]) -> bool:
    """Whether the conversation in a request already holds a tool result."""
    return any(m.get("role") == "tool" for m in body.get("messages", []) if isinstance(m, dict))


def tool_then_text(
    command: str = "echo hello",
    text: str = "Done: the command printed hello.",
    usage: Usage = Usage(),
    delay_s: float = 0.0,
) -> Callable[[dict[str, Any]], Reply]:
    """A script for any number of concurrent sessions: a ``bash`` call of ``command``, then ``text``."""

    def reply(body: dict[str, Any]) -> Reply:
        if has_tool_result(body):
            return Text(text, usage=usage, delay_s=delay_s)
        return ToolCall("bash", {"command": command, "description": "Run the command"}, usage=usage, delay_s=delay_s)

    return reply


class ScriptedChatServer(ScriptedServer):
    """The server; a context manager that starts it on a free port and stops it (releasing hung requests)."""

    name = "scripted-chat"

    def __init__(self, script: Script = (), *, model: str = MODEL_ID) -> None:
        super().__init__(script)
        self.model = model

    def handler_class(self) -> type[ScriptedHandler]:
        """OpenAI's chat completions and model list."""
        return _Handler

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI-compatible client takes as its base URL."""
        return f"{self.url}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests so far, in arrival order."""
        return [r.body for r in self.posts("/chat/completions") if isinstance(r.body, dict)]

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """The reply the script gives to ``body`` (a polite text when the script is empty)."""
        if isinstance(self.script, (list, tuple)) and not self.script:
            return Text("scripted: no reply configured")
        return super().next_reply(body)  # type: ignore[no-any-return]

    def new_call_id(self) -> str:
        """A fresh tool-call id."""
        return self.new_id("call")


class _Handler(ScriptedHandler):
    owner: ScriptedChatServer

    def do_GET(self) -> None:
        index = self.owner.log(RecordedRequest(method="GET", path=self.path, body=None, started=time.monotonic()))
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": self.owner.model, "object": "model", "owned_by": "scripted"}]})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        self.owner.done(index, "get")

    def do_POST(self) -> None:
        self.serve_post("/v1/chat/completions", self._answer)

    def _answer(self, body: dict[str, Any], reply: Reply) -> str:
        if isinstance(reply, Fail):
            # Shaped as OpenAI's own errors: agents decide from them whether to retry.
            kind = "server_error" if reply.status >= 500 else "invalid_request_error"
            self.send_json(reply.status, {"error": {"message": reply.message, "type": kind, "param": None, "code": None}})
        elif body.get("stream"):
            self._stream(reply)  # type: ignore[arg-type]
        else:
            self.send_json(200, self._completion(reply))  # type: ignore[arg-type]
        return type(reply).__name__

    # -- answers ---------------------------------------------------------------

    def _message(self, reply: Text | ToolCall) -> tuple[dict[str, Any], str]:
        if isinstance(reply, Text):
            return {"role": "assistant", "content": reply.text}, "stop"
        call = {
            "id": reply.call_id or self.owner.new_call_id(),
            "type": "function",
            "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"

    def _completion(self, reply: Text | ToolCall) -> dict[str, Any]:
        message, finish = self._message(reply)
        return {
            "id": f"chatcmpl-{time.time_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.owner.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": reply.usage.as_openai(),
        }

    def _stream(self, reply: Text | ToolCall) -> None:
        message, finish = self._message(reply)
        base = {"id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion.chunk", "created": int(time.time()), "model": self.owner.model}
        chunks: list[dict[str, Any]] = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
        if "tool_calls" in message:
            call = message["tool_calls"][0]
            chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}, "finish_reason": None}]})
        else:
            # Two content chunks, as a real model streams words.
            text = message["content"]
            half = len(text) // 2
            for piece in (text[:half], text[half:]):
                chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append({**base, "choices": [], "usage": reply.usage.as_openai()})
        self.send_sse([(None, chunk) for chunk in chunks], done="[DONE]")

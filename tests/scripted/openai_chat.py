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

import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

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

    def as_openai(self) -> dict[str, Any]:
        """The ``usage`` object of an OpenAI chat completion."""
        return {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
            "prompt_tokens_details": {"cached_tokens": self.cached},
        }


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


@dataclass(frozen=True)
class Fail:
    """Answer with an HTTP error and an OpenAI-shaped error body."""

    status: int = 500
    message: str = "scripted failure"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Hang:
    """Never answer: hold the request until ``release()`` or ``close()``."""


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


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received (``body`` is the parsed JSON, or None)."""

    method: str
    path: str
    body: Any
    started: float
    ended: float | None = None
    reply: str = ""

    @property
    def duration_s(self) -> float:
        """Seconds the server spent on it (0 while unanswered)."""
        return 0.0 if self.ended is None else self.ended - self.started


class ScriptedChatServer:
    """The server; a context manager that starts it on a free port and stops it (releasing hung requests)."""

    def __init__(self, script: Script = (), *, model: str = MODEL_ID) -> None:
        self.script: Script = script
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._position = 0
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> Self:
        """Listen on 127.0.0.1 at a free port, serving from a background thread."""
        handler = type("Handler", (_Handler,), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-chat", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Release hung requests and stop serving."""
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The port it listens on."""
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI-compatible client takes as its base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script ----------------------------------------------------------------

    def set_script(self, script: Script) -> None:
        """Replace the script (a list starts again from its first reply) and un-release hangs."""
        with self._lock:
            self.script = script
            self._position = 0
            self._released.clear()

    def release(self) -> None:
        """Let every hung request end (with a connection close)."""
        self._released.set()

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests so far, in arrival order."""
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith("/chat/completions") and isinstance(r.body, dict)]

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """The reply the script gives to ``body``."""
        with self._lock:
            script = self.script
            if callable(script):
                pass
            elif isinstance(script, (Text, ToolCall, Fail, Hang)):
                return script
            else:
                replies = list(script)
                if not replies:
                    return Text("scripted: no reply configured")
                reply = replies[min(self._position, len(replies) - 1)]
                self._position += 1
                return reply
        return script(body)

    def new_call_id(self) -> str:
        """A fresh tool-call id."""
        return f"call_scripted_{next(self._ids)}"

    def _log(self, request: RecordedRequest) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests) - 1

    def _done(self, index: int, reply: str) -> None:
        with self._lock:
            old = self.requests[index]
            self.requests[index] = RecordedRequest(
                method=old.method, path=old.path, body=old.body, started=old.started, ended=time.monotonic(), reply=reply
            )


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedChatServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the test log, not stderr
        pass

    def do_GET(self) -> None:
        index = self.owner._log(RecordedRequest(method="GET", path=self.path, body=None, started=time.monotonic()))
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": self.owner.model, "object": "model", "owned_by": "scripted"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        self.owner._done(index, "get")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        index = self.owner._log(RecordedRequest(method="POST", path=self.path, body=body, started=time.monotonic()))
        if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            self.owner._done(index, "404")
            return
        reply = self.owner.next_reply(body)
        if isinstance(reply, Hang):
            self.owner._released.wait()
            self.close_connection = True
            self.owner._done(index, "hang")
            return
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if isinstance(reply, Fail):
            # Shaped as OpenAI's own errors: agents decide from them whether to retry.
            kind = "server_error" if reply.status >= 500 else "invalid_request_error"
            self._json(reply.status, {"error": {"message": reply.message, "type": kind, "param": None, "code": None}})
        elif body.get("stream"):
            self._stream(reply)
        else:
            self._json(200, self._completion(reply))
        self.owner._done(index, type(reply).__name__)

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
        payload = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        data = payload.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

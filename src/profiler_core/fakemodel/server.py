"""The fake model's HTTP server: one port on 127.0.0.1 answering three APIs from one script.

``POST /v1/chat/completions`` (OpenAI-compatible chat, OpenCode),
``POST /v1/messages`` (Anthropic Messages, Claude Code) and ``POST
/v1/responses`` (OpenAI Responses, Codex CLI) are answered by the script,
streaming when the request asks for it; ``GET /v1/models`` lists the model and
``HEAD`` answers 200 (Claude Code's connectivity probe). Every request is
logged, so a test can assert what the agent sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from ..config.agents import API_PATHS
from ..errors import ConfigError
from . import anthropic, openai_chat, responses
from .replies import Hang, Reply, Script, Text

#: route -> the module that renders replies in that API's wire format (each API's path: the
#: registry's, config.agents.API_PATHS, which the wire recorder reads too)
ROUTES: dict[str, Any] = {
    "/v1" + API_PATHS[module.API]: module
    for module in (openai_chat, anthropic, responses)
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received (``body`` is the parsed JSON, or None)."""

    method: str
    path: str
    body: Any
    started: float
    ended: float | None = None
    reply: str = ""
    #: the key the request carried (its ``Authorization`` or ``x-api-key`` header), so a
    #: test sees which key arrived
    auth: str = ""

    @property
    def duration_s(self) -> float:
        """Seconds the server spent on it (0 while unanswered)."""
        return 0.0 if self.ended is None else self.ended - self.started


class FakeModelServer:
    """A scripted model server on a free port of 127.0.0.1; a context manager that
    starts and stops it.

    Usage::

        with FakeModelServer(tool_then_text()) as model:     # a shell call of `echo
        hello`, then a final text
            options = {"base_url": model.base_url}           # http://127.0.0.1:PORT/v1
            (Claude Code: model.url)
            ...                                              # run the agent against it
            assert model.chat_requests()[0]["messages"][0]["role"] == "system"
    """

    def __init__(
        self,
        script: Script = (),
        *,
        model: str = "fake",
        port: int = 0,
        on_answer: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self.script = script
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._wanted_port = port
        self._on_answer = on_answer
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._position = 0
        self._ids = 0
        self._server: ThreadingHTTPServer | None = None

    # -- life ------------------------------------------------------------------

    def start(self) -> Self:
        """Listen on 127.0.0.1 (at ``port``, 0: a free one), serving from a background thread."""
        handler = type("Handler", (_Handler,), {"owner": self})
        # Loopback only: the fake model is for this machine's agents.
        self._server = ThreadingHTTPServer(("127.0.0.1", self._wanted_port), handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, name="fake-model", daemon=True
        ).start()
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
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: Anthropic's base URL (Claude Code's
        ``ANTHROPIC_BASE_URL``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client (OpenCode, Codex) takes
        as its base URL."""
        return f"{self.url}/v1"

    # -- the script --------------------------------------------------------------

    def set_script(self, script: Script) -> None:
        """Replace the script (a list starts again from its first reply) and un-release hangs."""
        with self._lock:
            self.script = script
            self._position = 0
            self._released.clear()

    def release(self) -> None:
        """Let every hung request end (with a connection close)."""
        self._released.set()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """The reply the script gives to ``body`` (a polite text when the script is empty)."""
        with self._lock:
            script = self.script
            if not callable(script):
                if not isinstance(script, (list, tuple)):
                    return script  # type: ignore[return-value]  # one reply, given every time
                if not script:
                    return Text("fake model: no reply configured")
                reply = script[min(self._position, len(script) - 1)]
                self._position += 1
                return reply
        return script(body)

    def new_id(self, prefix: str) -> str:
        """A fresh id such as ``toolu_fake_3``."""
        with self._lock:
            self._ids += 1
            return f"{prefix}_fake_{self._ids}"

    # -- the log -----------------------------------------------------------------

    def posts(self, path_suffix: str) -> list[RecordedRequest]:
        """The POST requests to a path ending in ``path_suffix`` (query ignored), in
        arrival order."""
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == "POST" and r.path.split("?")[0].endswith(path_suffix)
            ]

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the OpenAI chat-completion requests so far."""
        return [
            r.body for r in self.posts("/chat/completions") if isinstance(r.body, dict)
        ]

    def messages(self) -> list[RecordedRequest]:
        """The Anthropic ``POST /v1/messages`` requests so far."""
        return self.posts("/v1/messages")

    def responses(self) -> list[RecordedRequest]:
        """The OpenAI ``POST /v1/responses`` requests so far."""
        return self.posts("/v1/responses")

    def model_time_s(self) -> float:
        """Seconds the server spent answering model requests (sum over requests)."""
        with self._lock:
            return sum(r.duration_s for r in self.requests if r.method == "POST")

    def log(self, request: RecordedRequest) -> int:
        """Record a request; returns its index for :meth:`done`."""
        with self._lock:
            self.requests.append(request)
            return len(self.requests) - 1

    def done(self, index: int, reply: str) -> None:
        """Mark a request answered (and tell ``on_answer``)."""
        with self._lock:
            self.requests[index] = answered = replace(
                self.requests[index], ended=time.monotonic(), reply=reply
            )
        if self._on_answer is not None:
            self._on_answer(answered)

    def wait_released(self) -> None:
        """Block (a hung request) until released."""
        self._released.wait()


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the API modules; JSON bodies and SSE streams for them."""

    owner: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(
        self, format: str, *args: Any
    ) -> None:  # the server's own log replaces this
        pass

    def do_HEAD(self) -> None:
        index = self.owner.log(
            RecordedRequest(
                method="HEAD", path=self.path, body=None, started=time.monotonic()
            )
        )
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.owner.done(index, "head")

    def do_GET(self) -> None:
        index = self.owner.log(
            RecordedRequest(
                method="GET", path=self.path, body=None, started=time.monotonic()
            )
        )
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            models = [
                {"id": self.owner.model, "object": "model", "owned_by": "fake-model"}
            ]
            self.send_json(200, {"object": "list", "data": models})
        else:
            self.send_json(
                404,
                {"error": {"message": f"no route {self.path}", "type": "not_found"}},
            )
        self.owner.done(index, "get")

    def do_POST(self) -> None:
        body = self.read_body()
        auth = self.headers.get("Authorization") or self.headers.get("x-api-key") or ""
        index = self.owner.log(
            RecordedRequest(
                method="POST",
                path=self.path,
                body=body,
                started=time.monotonic(),
                auth=auth,
            )
        )
        api = ROUTES.get(self.path.split("?")[0].rstrip("/"))
        if api is None or not isinstance(body, dict):
            self.send_json(
                404,
                {"error": {"message": f"no route {self.path}", "type": "not_found"}},
            )
            self.owner.done(index, "404")
            return
        reply = self.owner.next_reply(body)
        if isinstance(reply, Hang):
            self.owner.wait_released()
            self.close_connection = True
            self.owner.done(index, "hang")
            return
        if reply.delay_s:
            time.sleep(reply.delay_s)
        # A registry with no shell tool for this API, or a copy that cannot be read:
        # said, not raised.
        try:
            answered = api.answer(self, body, reply)
        except ConfigError as exc:
            self.send_json(
                500, {"error": {"message": str(exc), "type": "server_error"}}
            )
            answered = "error"
        self.owner.done(index, answered)

    # -- helpers for the API modules ---------------------------------------------------

    def read_body(self) -> Any:
        """The request body as JSON (None when empty or not JSON)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return None

    def send_json(self, status: int, value: Any) -> None:
        """One JSON response."""
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_sse(
        self,
        events: Sequence[tuple[str | None, dict[str, Any]]],
        *,
        done: str | None = None,
    ) -> None:
        """A complete ``text/event-stream`` response: ``event:`` (when named) and
        ``data:`` per event.

        ``done`` is a last raw ``data:`` line (OpenAI's chat stream ends with ``[DONE]``).
        """
        parts = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            parts.append(f"{head}data: {json.dumps(data)}\n\n")
        if done is not None:
            parts.append(f"data: {done}\n\n")
        payload = "".join(parts).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def new_id(self, prefix: str) -> str:
        """A fresh id from the server."""
        return self.owner.new_id(prefix)

    @property
    def model(self) -> str:
        """The model the server reports."""
        return self.owner.model

"""What the scripted model servers share: a threaded HTTP server on 127.0.0.1, a request log, scripts, hangs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Fail:
    """Answer with an HTTP error (the body is shaped by each server as its vendor's errors)."""

    status: int = 500
    message: str = "scripted failure"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Hang:
    """Never answer: hold the request until ``release()`` or ``close()``."""


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


class ScriptedServer:
    """Base of the scripted servers: start on a free port, log requests, hand out scripted replies.

    A script is one reply (always given), a list (given in order, the last one
    repeats) or a callable ``body -> reply`` (for concurrent sessions).
    """

    name = "scripted"

    def __init__(self, script: Any = ()) -> None:
        self.script = script
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._position = 0
        self._ids = 0
        self._server: ThreadingHTTPServer | None = None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The request handler (subclasses return their own)."""
        raise NotImplementedError

    def start(self) -> Self:
        """Listen on 127.0.0.1 at a free port, serving from a background thread."""
        handler = type("Handler", (self.handler_class(),), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name=self.name, daemon=True).start()
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
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def set_script(self, script: Any) -> None:
        """Replace the script (a list starts again from its first reply) and un-release hangs."""
        with self._lock:
            self.script = script
            self._position = 0
            self._released.clear()

    def release(self) -> None:
        """Let every hung request end (with a connection close)."""
        self._released.set()

    def next_reply(self, body: dict[str, Any]) -> Any:
        """The reply the script gives to ``body``."""
        with self._lock:
            script = self.script
            if not callable(script):
                if not isinstance(script, (list, tuple)):
                    return script
                if not script:
                    raise LookupError("scripted server: no reply configured")
                reply = script[min(self._position, len(script) - 1)]
                self._position += 1
                return reply
        return script(body)

    def new_id(self, prefix: str) -> str:
        """A fresh id such as ``toolu_scripted_3``."""
        with self._lock:
            self._ids += 1
            return f"{prefix}_scripted_{self._ids}"

    def posts(self, path_suffix: str) -> list[RecordedRequest]:
        """The POST requests to a path ending in ``path_suffix`` (query ignored), in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0].endswith(path_suffix)]

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
        """Mark a request answered."""
        with self._lock:
            self.requests[index] = replace(self.requests[index], ended=time.monotonic(), reply=reply)

    def wait_released(self) -> None:
        """Block (a hung request) until released."""
        self._released.wait()


class ScriptedHandler(BaseHTTPRequestHandler):
    """Helpers for the handlers: JSON bodies, SSE streams, logging into the owner."""

    owner: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
        pass

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

    def send_sse(self, events: Sequence[tuple[str | None, dict[str, Any]]], *, done: str | None = None) -> None:
        """A complete ``text/event-stream`` response: ``event:`` (when named) and ``data:`` per event.

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

    def serve_post(self, route: str, answer: Callable[[dict[str, Any], Any], str]) -> None:
        """Log a POST, 404 other routes, run the script (hangs and delays included), log the answer."""
        body = self.read_body()
        index = self.owner.log(RecordedRequest(method="POST", path=self.path, body=body, started=time.monotonic()))
        if self.path.split("?")[0].rstrip("/") != route or not isinstance(body, dict):
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            self.owner.done(index, "404")
            return
        reply = self.owner.next_reply(body)
        if isinstance(reply, Hang):
            self.owner.wait_released()
            self.close_connection = True
            self.owner.done(index, "hang")
            return
        delay = getattr(reply, "delay_s", 0.0)
        if delay:
            time.sleep(delay)
        self.owner.done(index, answer(body, reply))

"""The wire recorder: an HTTP proxy on 127.0.0.1 between agents and their model that
records every model call.

Each session gets a path of its own on the recorder (``/s/<token>``): the
agent's base URL is the recorder's address, that path, then the real
endpoint's path, so ``POST /s/<token>/v1/chat/completions`` goes on to
``<endpoint origin>/v1/chat/completions``. The request and the answer pass
through unchanged (a stream is passed on event by event, as it arrives);
beside them the recorder reads what the call asked (model, tools, the tool
results the agent sends back) and answered (model, usage, tool calls), with
its start, time to first token, end and status, and keeps one
:class:`~profiler_core.model.ModelCallEvent` per call for the session.
Headers are forwarded, never kept: no key reaches a record or a file. One
exception: an agent that serves several sessions through one path (OpenCode's
``X-Session-Id``) names the session in a header, which a session of the
recorder may be told to read (``key_header``); its calls are then kept by it
too, so each of the agent's sessions gets its own.

Served by threads (``http.server``), one per connection, so an agent's
concurrent calls stream side by side; the upstream client is one
``httpx.Client`` with its connection pool. See docs/wire.md.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx

from ..config.agents import APIS
from ..errors import ConfigError
from ..model import ModelCallEvent
from .apis import (
    RequestFacts,
    ResponseFacts,
    StreamReader,
    WireApi,
    WireToolCall,
    api_of,
    parse_request,
    parse_response,
)

__all__ = ["WireRecorder", "WireSession"]

#: Headers of one hop only (RFC 9110 §7.6.1), never forwarded; the lengths are set again
#: by each side.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)


#: How long a reader of a session waits for a call still being recorded (seconds).
SETTLE_S = 2.0


@attrs.define(eq=False)
class WireSession:
    """The model calls of one agent session, recorded as they end."""

    token: str
    #: the agent's base URL (the recorder's address, this session's path, the endpoint's path)
    base_url: str
    calls: list[ModelCallEvent] = attrs.field(factory=list)
    #: the tool calls the model asked for, in order, and the results the agent sent back
    #: (by call id)
    tool_calls: list[WireToolCall] = attrs.field(factory=list)
    tool_results: dict[str, str] = attrs.field(factory=dict)
    #: the text of the last answer
    last_text: str = ""
    #: the real API key, put into each forwarded request's auth header (the agent holds
    #: a placeholder); None: as sent
    api_key: str | None = attrs.field(default=None, repr=False)
    #: the request header naming the agent's own session (lower case), when one path serves several
    key_header: str | None = None
    #: the header naming the session that started a sub-session (a sub-agent's calls are
    #: its parent's)
    parent_header: str | None = None
    #: the agent's session id of each call (None: the call named none)
    keys: list[str | None] = attrs.field(factory=list)
    #: the agent's sub-session -> the session that started it
    parents: dict[str, str] = attrs.field(factory=dict)
    #: guards the lists above; notified when a call in flight is recorded
    _lock: threading.Condition = attrs.field(factory=threading.Condition)
    #: calls forwarded whose record is not kept yet (the agent may have its answer
    #: already), by the (session, parent session) their headers named
    _in_flight: dict[tuple[str | None, str | None], int] = attrs.field(factory=dict)
    #: per agent session: the digest of its last request and the index of its last call
    _last: dict[str | None, tuple[str, int]] = attrs.field(factory=dict)

    def add(
        self,
        event: ModelCallEvent,
        digest: str,
        request: RequestFacts,
        response: ResponseFacts,
        key: str | None = None,
        parent: str | None = None,
    ) -> None:
        """Keep one finished call; a repeat of a failed request (of the same agent
        session, ``key``) is
        counted as its next attempt."""
        with self._lock:
            last = self._last.get(key)
            previous = self.calls[last[1]] if last is not None else None
            if (
                previous is not None
                and last is not None
                and digest == last[0]
                and (previous.status == 0 or previous.status >= 400)
            ):
                event = attrs.evolve(event, attempt=previous.attempt + 1)
            self._last[key] = (digest, len(self.calls))
            self.calls.append(event)
            self.keys.append(key)
            if key is not None and parent is not None and parent != key:
                self.parents[key] = parent
            self.tool_results.update(request.tool_results)
            if 200 <= event.status < 300:
                self.tool_calls.extend(response.tool_calls)
                self.last_text = response.text or self.last_text

    def begin(self, key: str | None = None, parent: str | None = None) -> None:
        """A call is being forwarded: readers wait for its record (:meth:`settled`)."""
        with self._lock:
            self._in_flight[key, parent] = self._in_flight.get((key, parent), 0) + 1

    def end(self, key: str | None = None, parent: str | None = None) -> None:
        """That call is recorded (or failed before it could be)."""
        with self._lock:
            self._in_flight[key, parent] -= 1
            self._lock.notify_all()

    def settled(self, key: str | None = None, timeout_s: float = SETTLE_S) -> None:
        """Wait (bounded) until no call is in flight (of the agent session ``key`` and the
        sub-sessions it started, when given): the agent has its answer a moment before
        the call is recorded, so a session read right after its last answer would miss it."""

        def idle() -> bool:
            return not any(
                count > 0 and (key is None or key in (own, parent))
                for (own, parent), count in self._in_flight.items()
            )

        with self._lock:
            self._lock.wait_for(idle, timeout=timeout_s)

    def snapshot(self) -> tuple[ModelCallEvent, ...]:
        """The calls recorded so far (those in flight waited for)."""
        self.settled()
        with self._lock:
            return tuple(self.calls)

    def keyed(self) -> bool:
        """Whether any call named the agent's session (``key_header``)."""
        with self._lock:
            return any(key is not None for key in self.keys)

    def calls_of(self, key: str) -> tuple[ModelCallEvent, ...]:
        """The calls of the agent's session ``key`` and of the sub-sessions it started, in order."""
        self.settled(key)
        with self._lock:
            return tuple(
                call
                for call, own in zip(self.calls, self.keys, strict=True)
                if own is not None and self._root(own, key)
            )

    def _root(self, own: str, key: str) -> bool:
        seen: set[str] = set()
        while own != key and own not in seen:
            seen.add(own)
            parent = self.parents.get(own)
            if parent is None:
                return False
            own = parent
        return own == key


class WireRecorder:
    """A recording proxy to one model endpoint; a session asks :meth:`open` for its base URL."""

    def __init__(
        self, endpoint: str, *, api: str | None = None, timeout_s: float = 600.0
    ) -> None:
        """``endpoint``: the real model's base URL; ``api``: the API of its calls when
        its paths do not tell."""
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(
                f"wire: the model endpoint {endpoint!r} is not an http(s) URL"
            )
        if api is not None and api not in APIS:
            raise ConfigError(
                f"wire: api: expected one of {', '.join(APIS)}, got {api!r}"
            )
        self.endpoint = endpoint
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path.rstrip("/")
        self.api = api
        self.client = httpx.Client(
            timeout=httpx.Timeout(timeout_s, connect=10.0), follow_redirects=False
        )
        self.sessions: dict[str, WireSession] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.recorder = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The recorder's port on 127.0.0.1."""
        return int(self._server.server_address[1])

    def start(self) -> WireRecorder:
        """Serve from a daemon thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, name="wire-recorder", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, close the upstream connections."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
        self.client.close()

    def __enter__(self) -> WireRecorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> WireSession:
        """A new session: its own path on the recorder, and the base URL its agent is given."""
        token = secrets.token_hex(8)
        session = WireSession(
            token=token, base_url=f"http://127.0.0.1:{self.port}/s/{token}{self.path}"
        )
        self.sessions[token] = session
        return session

    def release(self, session: WireSession) -> None:
        """Forget a session (its calls stay in the object)."""
        self.sessions.pop(session.token, None)


#: The headers an agent's key travels in: OpenAI's bearer token, Anthropic's and
#: Google's key headers.
_KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


def _with_key(headers: list[tuple[str, str]], key: str | None) -> list[tuple[str, str]]:
    """``headers`` with the agent's placeholder key replaced by the real one (a bearer
    token, when it sent none)."""
    if key is None:
        return headers
    out: list[tuple[str, str]] = []
    for name, value in headers:
        lower = name.lower()
        if lower == "authorization":
            scheme = value.split(" ", 1)[0] if " " in value else "Bearer"
            value = f"{scheme} {key}"
        elif lower in _KEY_HEADERS:
            value = key
        out.append((name, value))
    if not any(name.lower() in _KEY_HEADERS for name, _ in out):
        out.append(("Authorization", f"Bearer {key}"))
    return out


def _sse_events(chunks: Iterator[bytes]) -> Iterator[tuple[bytes, list[str]]]:
    """Each raw chunk of a stream, with the ``data`` of the events it completed."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        datas: list[str] = []
        while True:
            cut = min(
                (
                    i
                    for i in (pending.find(b"\n\n"), pending.find(b"\r\n\r\n"))
                    if i >= 0
                ),
                default=-1,
            )
            if cut < 0:
                break
            block, pending = pending[:cut], pending[cut:].lstrip(b"\r\n")
            lines = [
                line[5:].lstrip()
                for line in block.decode("utf-8", "replace").splitlines()
                if line.startswith("data:")
            ]
            if lines:
                datas.append("\n".join(lines))
        yield chunk, datas


def _request_facts(api: WireApi, body: bytes) -> RequestFacts:
    """The request's facts; a body that is not JSON gives none (the call is still forwarded)."""
    try:
        return parse_request(api, json.loads(body or b"null"))
    except ValueError:
        return RequestFacts()


def _call_error(response: ResponseFacts, status: int) -> str | None:
    """The call's error: the model's message, else the HTTP status of a refused call."""
    if status < 400:
        return response.error or None
    if response.error is None:
        return f"HTTP {status}"
    return response.error


class _Handler(BaseHTTPRequestHandler):
    """One connection from an agent: each request is forwarded, answered, and recorded."""

    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(
        self, format: str, *args: Any
    ) -> None:  # the recorder's records replace the access log
        pass

    def do_POST(self) -> None:
        self.forward()

    def do_GET(self) -> None:
        self.forward()

    def do_PUT(self) -> None:
        self.forward()

    def do_DELETE(self) -> None:
        self.forward()

    def forward(self) -> None:
        recorder: WireRecorder = self.server.recorder
        _, _, token, rest = (self.path.split("/", 3) + ["", "", "", ""])[:4]
        session = recorder.sessions.get(token) if self.path.startswith("/s/") else None
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if session is None:
            self.answer(
                404,
                {
                    "error": {
                        "message": "wire: no such session on the recorder",
                        "type": "not_found",
                    }
                },
            )
            return
        headers = _with_key(
            [(k, v) for k, v in self.headers.items() if k.lower() not in _HOP],
            session.api_key,
        )
        url = f"{recorder.origin}/{rest}"
        api = api_of(rest, recorder.api)
        if api is None or self.command != "POST":
            self.relay(
                recorder, url, headers, body
            )  # a model list, a health check: passed on, not recorded
            return
        key = self._header(session.key_header)
        parent = self._header(session.parent_header)
        session.begin(key, parent)
        try:
            self.call(recorder, session, api, url, headers, body)
        finally:
            session.end(key, parent)

    def relay(
        self,
        recorder: WireRecorder,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> None:
        try:
            response = recorder.client.request(
                self.command, url, headers=headers, content=body
            )
        except httpx.HTTPError as exc:
            self.answer(
                502,
                {
                    "error": {
                        "message": "wire: cannot reach the model endpoint "
                        f"{recorder.origin}: {exc}",
                        "type": "wire",
                    }
                },
            )
            return
        self.send(response.status_code, response.headers, response.content)

    def call(
        self,
        recorder: WireRecorder,
        session: WireSession,
        api: WireApi,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> None:
        started_wall, started = datetime.now(UTC), time.monotonic()
        request = _request_facts(api, body)
        response = ResponseFacts()
        status, ttft = 0, None
        try:
            with recorder.client.stream(
                "POST", url, headers=headers, content=body
            ) as upstream:
                status = upstream.status_code
                if "text/event-stream" in upstream.headers.get("content-type", ""):
                    ttft = self.stream(api, upstream, response, started)
                else:
                    response = self.whole(api, upstream)
        except httpx.HTTPError as exc:
            response.error = (
                f"cannot reach the model endpoint {recorder.origin}: "
                f"{exc.__class__.__name__}: {exc}"
            )
            if status == 0:
                self.answer(
                    502,
                    {"error": {"message": f"wire: {response.error}", "type": "wire"}},
                )
        except OSError as exc:  # the agent went away mid-answer
            response.error = response.error or f"the agent closed the connection: {exc}"
        event = ModelCallEvent(
            api=api,
            started_at=started_wall.isoformat(),
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            ttft_ms=ttft,
            status=status,
            stream=request.stream,
            model_asked=request.model,
            model=response.model,
            tokens=response.tokens(),
            tools=tuple(request.tools),
            tool_calls=tuple(c.name for c in response.tool_calls),
            error=_call_error(response, status),
        )
        key = self._header(session.key_header)
        parent = self._header(session.parent_header)
        digest = hashlib.sha256(body).hexdigest()
        session.add(event, digest, request, response, key=key, parent=parent)

    def _header(self, name: str | None) -> str | None:
        return self.headers.get(name) if name else None

    def whole(self, api: WireApi, upstream: httpx.Response) -> ResponseFacts:
        """Pass a whole (not streamed) answer on, then read it."""
        status = upstream.status_code
        content = upstream.read()
        self.send(status, upstream.headers, content)
        try:
            return parse_response(api, json.loads(content or b"null"))
        except ValueError:
            response = ResponseFacts()
            if status >= 400:
                response.error = content[:200].decode("utf-8", "replace")
            return response

    def stream(
        self,
        api: WireApi,
        upstream: httpx.Response,
        response: ResponseFacts,
        started: float,
    ) -> float | None:
        """Pass a server-sent-event stream on as it arrives (chunked), reading its
        events; the time to first token."""
        self.send_response(upstream.status_code)
        for key, value in upstream.headers.items():
            if key.lower() not in _HOP:
                self.send_header(key, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        reader = StreamReader(api, response)
        ttft = None
        for chunk, datas in _sse_events(upstream.iter_raw()):
            for data in datas:
                if reader.feed(data) and ttft is None:
                    ttft = round((time.monotonic() - started) * 1000, 3)
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        return ttft

    def send(self, status: int, headers: httpx.Headers, content: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            if key.lower() not in _HOP:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)
        self.wfile.flush()

    def answer(self, status: int, value: Any) -> None:
        self.send(
            status,
            httpx.Headers({"content-type": "application/json"}),
            json.dumps(value).encode(),
        )

"""The wire recorder (profiler_core.wire): a real HTTP proxy on 127.0.0.1 in front of
the scripted model (issue 39)."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from profiler_core.errors import ConfigError
from profiler_core.fakemodel import Fail, FakeModelServer, Text, ToolCall, Usage
from profiler_core.metrics.wire import WireCollector, mismatch, wire_summary
from profiler_core.model import (
    ModelCallEvent,
    PromptMetrics,
    PromptResult,
    SessionTrace,
    TimingBreakdown,
    TokenBreakdown,
    TraceSummary,
)
from profiler_core.storage.serde import from_json, to_json
from profiler_core.wire import WireRecorder

SECRET = "sk-secret-never-written-0123456789"
TOOLS = {
    "openai-chat": [
        {
            "type": "function",
            "function": {"name": "bash", "parameters": {"type": "object"}},
        }
    ],
    "openai-responses": [
        {"type": "function", "name": "shell", "parameters": {"type": "object"}}
    ],
    "anthropic": [{"name": "Bash", "input_schema": {"type": "object"}}],
}
PATHS = {
    "openai-chat": "/chat/completions",
    "openai-responses": "/responses",
    "anthropic": "/v1/messages",
}
#: each API's usage as the profiler counts it, sent by the scripted model in that API's own fields
USAGE = Usage(input=70, output=12, cache_read=30, cache_write=0, reasoning=0)


def request_body(api: str, stream: bool) -> dict:
    body = {"model": "asked-model", "stream": stream, "tools": TOOLS[api]}
    if api == "openai-responses":
        return {
            **body,
            "input": [
                {"type": "function_call_output", "call_id": "c0", "output": "hello"}
            ],
        }
    if api == "anthropic":
        result = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c0", "content": "hello"}
            ],
        }
        return {**body, "max_tokens": 100, "messages": [result]}
    return {
        **body,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "c0", "content": "hello"},
        ],
    }


def base(model: FakeModelServer, api: str) -> str:
    return model.url if api == "anthropic" else model.base_url


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", list(PATHS))
def test_a_call_passes_through_and_is_recorded_with_the_providers_usage(api, stream):
    # The same answer twice: once through the recorder, once straight from the model, to compare.
    script = [
        ToolCall(
            name=TOOLS[api][0].get("name") or "bash",
            arguments={"command": "ls"},
            usage=USAGE,
        )
    ] * 2
    with (
        FakeModelServer(script, model="answered-model") as model,
        WireRecorder(base(model, api)) as recorder,
    ):
        session = recorder.open()
        assert session.base_url.startswith(f"http://127.0.0.1:{recorder.port}/s/")
        headers = {"authorization": f"Bearer {SECRET}", "x-api-key": SECRET}
        through = httpx.post(
            session.base_url + PATHS[api],
            json=request_body(api, stream),
            headers=headers,
            timeout=10,
        )
        direct = httpx.post(
            base(model, api) + PATHS[api], json=request_body(api, stream), timeout=10
        )
    assert through.status_code == 200
    assert through.headers["content-type"] == direct.headers["content-type"]
    if not stream:
        assert through.json().keys() == direct.json().keys()
    else:
        assert through.text.count("data:") == direct.text.count("data:") > 2
    [call] = session.calls
    assert (call.api, call.status, call.stream) == (api, 200, stream)
    # The fake model names itself in chat completions and echoes the model asked in the
    # other two APIs.
    assert (call.model_asked, call.model) == (
        "asked-model",
        "answered-model" if api == "openai-chat" else "asked-model",
    )
    if not stream:
        assert call.model == direct.json()["model"]
    assert call.tokens == TokenBreakdown(input=70, output=12, cache_read=30)
    assert call.tools == (TOOLS[api][0].get("function", TOOLS[api][0])["name"],)
    assert (
        call.tool_calls == (script[0].name,)
        and call.attempt == 1
        and call.error is None
    )
    assert call.duration_ms > 0 and (call.ttft_ms is not None) == stream
    assert session.tool_results == {"c0": "hello"}
    assert json.loads(session.tool_calls[0].arguments) == {"command": "ls"}
    # No header reaches the record.
    assert SECRET not in to_json(call)
    assert from_json(to_json(call), ModelCallEvent) == call


def test_a_repeated_failed_request_is_the_next_attempt():
    with (
        FakeModelServer([Fail(status=500), Text("Done.")]) as model,
        WireRecorder(model.base_url) as recorder,
    ):
        session = recorder.open()
        body = request_body("openai-chat", False)
        statuses = [
            httpx.post(
                session.base_url + "/chat/completions", json=body, timeout=10
            ).status_code
            for _ in range(2)
        ]
    assert statuses == [500, 200]
    assert [(c.status, c.attempt, c.error is not None) for c in session.calls] == [
        (500, 1, True),
        (200, 2, False),
    ]


def test_a_dead_endpoint_is_a_502_naming_it_and_a_call_with_no_status():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with WireRecorder(f"http://127.0.0.1:{port}/v1") as recorder:
        session = recorder.open()
        answer = httpx.post(
            session.base_url + "/chat/completions",
            json=request_body("openai-chat", False),
            timeout=10,
        )
        unknown = httpx.post(
            f"http://127.0.0.1:{recorder.port}/s/nope/v1/chat/completions",
            json={},
            timeout=10,
        )
    assert (
        answer.status_code == 502
        and f"127.0.0.1:{port}" in answer.json()["error"]["message"]
    )
    [call] = session.calls
    assert call.status == 0 and f"127.0.0.1:{port}" in call.error
    assert unknown.status_code == 404


def test_a_bad_endpoint_or_api_is_one_line():
    with pytest.raises(
        ConfigError,
        match=r"^wire: the model endpoint 'ftp://x' is not an http\(s\) URL$",
    ):
        WireRecorder("ftp://x")
    with pytest.raises(
        ConfigError,
        match=r"^wire: api: expected one of openai-chat, openai-responses, anthropic, got 'grpc'$",
    ):
        WireRecorder("http://127.0.0.1:1", api="grpc")


def event(
    tokens: TokenBreakdown,
    started: str,
    duration: float,
    *,
    model: str = "gpt-4o",
    ttft: float | None = None,
    attempt: int = 1,
    status: int = 200,
) -> ModelCallEvent:
    return ModelCallEvent(
        api="openai-chat",
        started_at=started,
        duration_ms=duration,
        ttft_ms=ttft,
        status=status,
        model=model,
        tokens=tokens,
        attempt=attempt,
    )


def test_the_collector_sums_times_prices_and_flags_a_mismatch():
    calls = [
        event(
            TokenBreakdown(input=1000, output=100),
            "2026-01-01T00:00:00+00:00",
            400,
            ttft=100,
        ),
        event(TokenBreakdown(), "2026-01-01T00:00:01+00:00", 50, status=500),
        event(
            TokenBreakdown(input=2000, output=200, cache_read=500),
            "2026-01-01T00:00:02+00:00",
            600,
            ttft=300,
            attempt=2,
        ),
    ]
    trace = SessionTrace(
        session_id="s",
        events=calls,
        turns=(),
        summary=TraceSummary(
            total_turns=0,
            total_tool_calls=0,
            total_tokens=TokenBreakdown(),
            total_duration=0,
        ),
    )
    agent = TokenBreakdown(input=3000, output=300, cache_read=400)
    result = PromptResult(
        text="", metrics=PromptMetrics(tokens=agent, timing=TimingBreakdown(wall_ms=1))
    )
    prices = {
        "gpt-4o": {
            "input_per_mtok": 1,
            "output_per_mtok": 10,
            "cache_read_per_mtok": 0.5,
        }
    }
    [metric] = WireCollector(prices=prices).collect(
        result, None, "m", trace, model="gpt-4o"
    )
    summary = metric.value
    assert (summary["calls"], summary["failed"], summary["retries"]) == (3, 1, 1)
    assert summary["tokens"] == {
        "input": 3000,
        "output": 300,
        "reasoning": 0,
        "cacheRead": 500,
        "cacheWrite": 0,
        "total": 3800,
    }
    assert summary["costUsd"] == pytest.approx((3000 * 1 + 300 * 10 + 500 * 0.5) / 1e6)
    assert summary["modelMs"] == 1050 and summary["betweenCallsMs"] == pytest.approx(
        600 + 950
    )
    assert (summary["ttftFirstMs"], summary["ttftMeanMs"]) == (100, 200)
    assert summary["mismatch"] == {"cacheRead": {"wire": 500, "agent": 400}}
    assert "mismatch" not in wire_summary(
        calls, TokenBreakdown(input=3000, output=300, cache_read=500)
    )
    assert mismatch(TokenBreakdown(input=1), TokenBreakdown(input=1)) is None
    # The cost collector prices the wire's calls and says so.
    from profiler_core.metrics.collectors import CostCollector

    cost = {
        m.name: m.value
        for m in CostCollector(prices=prices).collect(
            result, None, "m", trace, model="gpt-4o"
        )
    }
    assert cost["cost_source"] == "wire" and cost["cost_total_usd"] == pytest.approx(
        summary["costUsd"]
    )


@pytest.mark.parametrize(
    ("api", "sent", "arrives"),
    [
        ("openai-chat", {"authorization": "Bearer placeholder"}, f"Bearer {SECRET}"),
        ("anthropic", {"x-api-key": "placeholder"}, SECRET),
        (
            "openai-chat",
            {},
            f"Bearer {SECRET}",
        ),  # an agent that sent no key: the recorder's goes as a bearer token
    ],
    ids=["bearer", "x-api-key", "none"],
)
def test_the_session_key_replaces_the_agents_placeholder(api, sent, arrives):
    with (
        FakeModelServer([Text("Done.")]) as model,
        WireRecorder(base(model, api)) as recorder,
    ):
        session = recorder.open()
        session.api_key = SECRET
        answer = httpx.post(
            session.base_url + PATHS[api],
            json=request_body(api, False),
            headers=sent,
            timeout=10,
        )
        [seen] = model.posts(PATHS[api])
    assert answer.status_code == 200 and seen.auth == arrives
    assert SECRET not in repr(session) and SECRET not in to_json(session.calls[0])


@pytest.mark.parametrize(
    ("body", "expected"),
    [(b"overloaded, try later", "overloaded, try later"), (b"", "HTTP 503")],
    ids=["text", "empty"],
)
def test_a_refused_call_keeps_the_endpoints_text_else_its_status(body, expected):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Refusing(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(503)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with WireRecorder(f"http://127.0.0.1:{server.server_port}/v1") as recorder:
            session = recorder.open()
            answer = httpx.post(
                session.base_url + "/chat/completions",
                json=request_body("openai-chat", False),
                timeout=10,
            )
    finally:
        server.shutdown()
        server.server_close()
    assert answer.status_code == 503 and answer.content == body
    [call] = session.calls
    assert (call.status, call.error) == (503, expected)


@pytest.mark.parametrize("stream", [False, True])
def test_a_session_read_right_after_its_answer_waits_for_that_call(monkeypatch, stream):
    """The agent has the whole answer a moment before the recorder keeps the call: a
    session read in that moment (the agent exits, the row is assembled) still has it."""
    import time

    from profiler_core.wire.recorder import WireSession

    real_add = WireSession.add

    def late_add(self, *args, **kwargs):
        time.sleep(0.5)  # the record lands well after the agent read its answer
        real_add(self, *args, **kwargs)

    monkeypatch.setattr(WireSession, "add", late_add)
    with (
        FakeModelServer(Text("Done.", usage=Usage(input=7, output=3))) as model,
        WireRecorder(model.base_url) as recorder,
    ):
        session = recorder.open()
        answer = httpx.post(
            session.base_url + "/chat/completions",
            json=request_body("openai-chat", stream),
            timeout=10,
        )
        assert answer.status_code == 200
        calls = session.snapshot()
    assert [(c.status, c.tokens.input, c.tokens.output) for c in calls] == [(200, 7, 3)]

"""The claude-code provider driving the real Claude Code against the fake model's
Messages API on 127.0.0.1."""

from __future__ import annotations

import json
import time
from decimal import Decimal

import pytest
from tests.binaries import agent_binary
from tests.scripted.agent_runs import (
    MARK,
    assert_no_survivor,
    marked_processes,
    new_mark,
    profiler,
    rows,
    write_profile,
)
from tests.stored_traces import stored_trace

from profiler_core.errors import ConfigError
from profiler_core.fakemodel import Fail, FakeModelServer, Text, ToolCall, Usage, steps
from profiler_core.metrics.pricing import price_tokens
from profiler_core.model import TokenBreakdown
from profiler_core.providers.claude_code import ClaudeCodeProvider, summarize_stream

pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5"
STEP1 = Usage(input=120, output=30, cache_read=900, cache_write=60)
STEP2 = Usage(input=150, output=45, cache_read=1100, cache_write=0)
# Claude Sonnet 4.5 list prices, USD per million tokens: input, output, cache read,
# cache write (5 min).
RATES = {
    "input": Decimal(3),
    "output": Decimal(15),
    "cache_read": Decimal("0.30"),
    "cache_write": Decimal("3.75"),
}


@pytest.fixture
def claude() -> str:
    return str(agent_binary("claude", "CLAUDE_BIN"))


def hello_script():
    return steps(
        [
            ToolCall(
                "Bash",
                {"command": "echo hello", "description": "Say hello"},
                thinking="Run echo first.",
                usage=STEP1,
            ),
            Text("Done: the command printed hello.", usage=STEP2),
        ]
    )


def profile(
    tmp_path, server, claude, *, mark, timeout_ms=60_000, modes=None, **options
):
    modes = modes or {
        "plain": {
            "system_instructions": "MODE-PLAIN: be brief.",
            "environment": {MARK: mark},
        },
        "no_write": {
            "system_instructions": "MODE-NO-WRITE: never write files.",
            "environment": {MARK: mark},
            "provider_overrides": {
                "disallowed_tools": ["Write"],
                "append_system_prompt": "EXTRA-APPENDED",
            },
        },
    }
    return write_profile(
        tmp_path,
        provider="claude-code",
        model=MODEL,
        options={"base_url": server.url, "binary": claude, "max_retries": 1, **options},
        modes=modes,
        timeout_ms=timeout_ms,
    )


def system_text(request) -> str:
    system = request.body.get("system")
    return json.dumps(system) if not isinstance(system, str) else system


def test_two_modes_rows_have_the_scripts_tokens_cost_tool_call_text_and_analysis(
    tmp_path, claude
):
    mark = new_mark()
    with FakeModelServer(hello_script()) as server:
        path = profile(tmp_path, server, claude, mark=mark)
        done = profiler(tmp_path, "run", str(path), "--run-id", "cc")
        requests = server.messages()
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path, "cc")
    assert [r["mode"] for r in found] == ["plain", "no_write"]

    expected = TokenBreakdown(
        input=STEP1.input + STEP2.input,
        output=STEP1.output + STEP2.output,
        cache_read=STEP1.cache_read + STEP2.cache_read,
        cache_write=STEP1.cache_write + STEP2.cache_write,
    )
    cost = sum(
        getattr(expected, kind) * rate for kind, rate in RATES.items()
    ) / Decimal(1_000_000)
    for row in found:
        assert row.get("error") is None and row["completionReason"] == "stop"
        assert row["tokens"] == {
            "input": 270, "output": 75, "reasoning": 0, "cacheRead": 2000, "cacheWrite": 60, "total": 2405, "active": 345,
        }  # fmt: skip
        # Claude Code's own cost, the same as the price table's for this model.
        assert row["cost"]["totalUsd"] == pytest.approx(float(cost), abs=1e-12)
        assert row["cost"]["totalUsd"] == pytest.approx(
            price_tokens(MODEL, expected).total_usd, abs=1e-12
        )
        assert row["extensions"]["cost_source"] == "provider"
        [call] = row["toolCalls"]["records"]
        assert (
            call["name"] == "Bash"
            and call["category"] == "shell"
            and call["success"]
            and call["durationMs"] > 0
        )
        assert (
            row["success"]
            and row["checkpointDetails"][0]["actual"]
            == "Done: the command printed hello."
        )
        assert row["agentTurns"] == 2
        assert (
            row["extensions"]["latency_model_ms"] >= 0
            and row["extensions"]["latency_tools_ms"] > 0
        )
        assert 0 < row["extensions"]["latency_startup_ms"] < row["timing"]["wallMs"]
        trace = stored_trace(tmp_path / "reports", "hello", row["mode"])
        tool = next(e for e in trace["events"] if e["type"] == "tool_call")
        assert (
            tool["input"]["command"] == "echo hello"
            and tool["output"].strip() == "hello"
        )
        assert any(
            e["type"] == "reasoning" and e["content"] == "Run echo first."
            for e in trace["events"]
        )
        assert trace["summary"]["totalTokens"]["total"] == 2405

    analysis = [
        json.loads(line)
        for line in (tmp_path / "results" / "cc.analysis.jsonl")
        .read_text()
        .splitlines()
    ]
    assert len(analysis) == 2
    for bundle in analysis:
        assert set(bundle["results"]) == {
            "efficiency",
            "error",
            "reasoning",
            "strategy",
            "tool-pattern",
        }
        assert bundle["results"]["efficiency"]["findings"]["total_turns"]["value"] == 2
    assert (tmp_path / "reports" / "cc" / "report.md").is_file()

    # Each mode reached its own agent: its instructions, its tools; nothing else was
    # asked of the model.
    assert len(requests) == 4
    plain = [r for r in requests if "MODE-PLAIN" in system_text(r)]
    no_write = [r for r in requests if "MODE-NO-WRITE" in system_text(r)]
    assert len(plain) == 2 and len(no_write) == 2
    assert all("EXTRA-APPENDED" in system_text(r) for r in no_write)
    assert "Write" in {t["name"] for t in plain[0].body["tools"]}
    assert "Write" not in {t["name"] for t in no_write[0].body["tools"]}
    # The sessions' temporary homes are gone.
    assert list((tmp_path / "tmp").iterdir()) == []
    assert marked_processes(mark) == {}


def test_a_500_from_the_model_is_an_error_row_quickly_with_the_retries_recorded(
    tmp_path, claude
):
    mark = new_mark()
    with FakeModelServer(Fail(500, "scripted overload")) as server:
        path = profile(
            tmp_path,
            server,
            claude,
            mark=mark,
            modes={"plain": {"environment": {MARK: mark}}},
        )
        started = time.monotonic()
        done = profiler(tmp_path, "run", str(path), "--run-id", "fail")
        elapsed = time.monotonic() - started
        attempts = len(server.messages())
    # 1 where errored cells fail the run (docs/runner.md), 0 before that landed; never a crash.
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr
    [row] = rows(tmp_path, "fail")
    assert row["completionReason"] == "error" and row["errorCode"] == "provider_error"
    assert "500" in row["error"] and "after 1 model retry" in row["error"]
    assert attempts == 2  # max_retries: 1 -> the first try and one retry
    assert elapsed < 30
    assert_no_survivor({}, mark)


def test_a_long_session_with_several_tools_and_an_unpriced_model(tmp_path, claude):
    """Many steps and tools; a model Claude Code cannot price is priced from the
    profile's prices."""
    mark = new_mark()
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "notes.txt").write_text("alpha\nbeta\n")
    script = steps(
        [
            ToolCall("Bash", {"command": "ls", "description": "list"}),
            ToolCall("Read", {"file_path": "notes.txt"}),
            ToolCall("Write", {"file_path": "out.txt", "content": "gamma\n"}),
            ToolCall("Bash", {"command": "cat missing-file", "description": "fails"}),
            ToolCall(
                "Grep", {"pattern": "beta", "path": "."}
            ),  # not offered to headless sessions: a failed call
            ToolCall(
                "Edit",
                {"file_path": "out.txt", "old_string": "gamma", "new_string": "delta"},
            ),
            Text("Done: six tools."),
        ]
    )
    with FakeModelServer(script) as server:
        path = write_profile(
            tmp_path,
            provider="claude-code",
            model="scripted-model",
            options={
                "base_url": server.url,
                "binary": claude,
                "max_retries": 0,
                "workdir_template": str(tmp_path / "template"),
            },
            modes={"plain": {"environment": {MARK: mark}}},
            extensions={
                "prices": {
                    "scripted-model": {
                        "input_per_mtok": 1,
                        "output_per_mtok": 2,
                        "cache_read_per_mtok": 0.1,
                        "cache_write_per_mtok": 1.25,
                    }
                }
            },
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "long")
    assert done.returncode == 0, done.stderr
    [row] = rows(tmp_path, "long")
    names = [r["name"] for r in row["toolCalls"]["records"]]
    assert names == ["Bash", "Read", "Write", "Bash", "Grep", "Edit"]
    records = row["toolCalls"]["records"]
    assert [r["success"] for r in records] == [True, True, True, False, False, True], [
        r.get("error") for r in records
    ]
    assert "No such file or directory" in records[3]["error"]
    assert row["toolCalls"]["byCategory"] == {"shell": 2, "file": 3, "search": 1}
    assert row["agentTurns"] == 7
    # Seven steps of the default usage: 100 input, 20 output, 1000 cache reads, 50 cache
    # writes each.
    assert row["tokens"]["input"] == 700 and row["tokens"]["output"] == 140
    assert row["tokens"]["cacheRead"] == 7000 and row["tokens"]["cacheWrite"] == 350
    # The wire recorder saw the seven calls: its tokens equal Claude Code's own, and it priced them.
    wire = row["extensions"]["wire"]
    assert wire["calls"] == 7 and "mismatch" not in wire
    assert {
        k: wire["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")
    } == {k: row["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")}
    assert row["extensions"]["cost_source"] == "wire"
    assert row["cost"]["totalUsd"] == pytest.approx(
        (700 * 1 + 140 * 2 + 7000 * 0.1 + 350 * 1.25) / 1e6
    )
    trace = stored_trace(tmp_path / "reports", "hello", "plain")
    read = next(
        e for e in trace["events"] if e["type"] == "tool_call" and e["name"] == "Read"
    )
    assert "beta" in json.dumps(
        read["output"]
    )  # the session worked in a copy of the template


def test_unknown_or_wrong_options_are_config_errors(claude):
    with pytest.raises(ConfigError, match=r"unknown option\(s\) max_turn "):
        ClaudeCodeProvider(binary=claude, max_turn=3)
    with pytest.raises(
        ConfigError, match=r"option 'max_turns': expected an integer >= 1, got 0"
    ):
        ClaudeCodeProvider(binary=claude, max_turns=0)
    with pytest.raises(ConfigError, match=r"option 'permission_mode': expected one of"):
        ClaudeCodeProvider(binary=claude, permission_mode="yolo")


def test_only_the_result_line_totals_count():
    """The assistant lines repeat the first usage of each response (output 1); the
    result line is what counts."""
    lines = [
        {"type": "system", "subtype": "init", "session_id": "s1", "model": "m"},
        {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "max_retries": 10,
            "error_status": 529,
        },
        {
            "type": "assistant",
            "message": {"usage": {"input_tokens": 100, "output_tokens": 1}},
            "session_id": "s1",
        },
        {
            "type": "result",
            "subtype": "success",
            "usage": {"input_tokens": 200, "output_tokens": 40},
            "session_id": "s1",
        },
    ]
    summary = summarize_stream(lines)
    assert summary.session_id == "s1" and summary.model == "m"
    assert summary.result["usage"]["output_tokens"] == 40
    assert summary.retries == ("attempt 1/10: HTTP 529",)


def test_a_mode_with_an_mcp_server_calls_its_tool_and_one_without_cannot(
    tmp_path, claude
):
    import sys
    from pathlib import Path

    mark = new_mark()
    calls = tmp_path / "mcp-calls.jsonl"
    server_settings = {
        "command": sys.executable,
        "args": [str(Path(__file__).parent / "scripted" / "mcp_echo.py")],
        "env": {"MCP_ECHO_LOG": str(calls)},
    }
    modes = {
        "without_mcp": {"environment": {MARK: mark}},
        "with_mcp": {
            "environment": {MARK: mark},
            "provider_overrides": {"mcp_servers": {"echo": server_settings}},
        },
    }
    script = steps([ToolCall("mcp__echo__shout", {"text": "hi"}), Text("Done: HI")])
    with FakeModelServer(script) as server:
        path = profile(tmp_path, server, claude, mark=mark, modes=modes)
        done = profiler(tmp_path, "run", str(path), "--run-id", "mcp")
    assert done.returncode == 0, done.stderr
    without, with_mcp = rows(tmp_path, "mcp")
    [failed] = without["toolCalls"]["records"]
    assert failed["name"] == "mcp__echo__shout" and not failed["success"]
    [called] = with_mcp["toolCalls"]["records"]
    assert called["category"] == "mcp" and called["success"]
    trace = stored_trace(tmp_path / "reports", "hello", "with_mcp")
    assert "HI" in json.dumps(
        next(e for e in trace["events"] if e["type"] == "tool_call")["output"]
    )
    assert [
        json.loads(line)["arguments"] for line in calls.read_text().splitlines()
    ] == [{"text": "hi"}]
    assert_no_survivor({}, mark)

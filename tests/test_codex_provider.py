"""The codex provider driving the real Codex CLI against the fake model's Responses API
on 127.0.0.1."""

from __future__ import annotations

import json
import time
import tomllib

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
from profiler_core.providers.codex import CodexProvider, config_toml, summarize_exec

pytestmark = pytest.mark.slow

MODEL = "gpt-5-codex"
STEP1 = Usage(
    input=300, cache_read=1200, output=32, reasoning=8
)  # the API's 1,500 input and 40 output
STEP2 = Usage(
    input=300, cache_read=1500, output=25, reasoning=0
)  # the API's 1,800 input and 25 output
# Prices of the profile (USD per million tokens), so the expected cost does not depend
# on a price table's version.
PRICES = {
    MODEL: {"input_per_mtok": 1.25, "output_per_mtok": 10, "cache_read_per_mtok": 0.125}
}


@pytest.fixture
def codex() -> str:
    return str(agent_binary("codex", "CODEX_BIN"))


def hello_script():
    return steps(
        [
            ToolCall(
                "exec_command",
                {"cmd": "echo hello"},
                thinking="Run echo first.",
                usage=STEP1,
            ),
            Text("Done: the shell printed hello.", usage=STEP2),
        ]
    )


def profile(
    tmp_path,
    server,
    codex,
    *,
    mark,
    timeout_ms=60_000,
    modes=None,
    model=MODEL,
    **options,
):
    modes = modes or {
        "plain": {
            "system_instructions": "MODE-PLAIN: be brief.",
            "environment": {MARK: mark},
        },
        "effort": {
            "system_instructions": "MODE-EFFORT: think hard.",
            "environment": {MARK: mark},
            "provider_overrides": {
                "append_system_prompt": "EXTRA-APPENDED",
                "config": {"model_reasoning_effort": "high"},
            },
        },
    }
    return write_profile(
        tmp_path,
        provider="codex",
        model=model,
        options={
            "base_url": server.url + "/v1",
            "binary": codex,
            "max_retries": 1,
            **options,
        },
        modes=modes,
        timeout_ms=timeout_ms,
        extensions={"prices": PRICES},
    )


def developer_text(request) -> str:
    return json.dumps(
        [i for i in request.body["input"] if i.get("role") == "developer"]
    )


def test_two_modes_rows_have_the_scripts_tokens_cost_tool_call_text_and_analysis(
    tmp_path, codex
):
    mark = new_mark()
    with FakeModelServer(hello_script()) as server:
        path = profile(tmp_path, server, codex, mark=mark)
        done = profiler(tmp_path, "run", str(path), "--run-id", "cx")
        requests = server.responses()
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path, "cx")
    assert [r["mode"] for r in found] == ["plain", "effort"]
    for row in found:
        assert row.get("error") is None and row["completionReason"] == "stop"
        # input excludes the cached part, output the reasoning part (the Responses API
        # includes them).
        assert row["tokens"] == {
            "input": 600, "output": 57, "reasoning": 8, "cacheRead": 2700, "cacheWrite": 0, "total": 3365, "active": 665,
        }  # fmt: skip
        assert (
            row["extensions"]["cost_source"] == "wire"
        )  # Codex reports no cost: the wire recorder's calls are priced
        assert "mismatch" not in row["extensions"]["wire"]
        assert row["cost"]["totalUsd"] == pytest.approx(
            (600 * 1.25 + 57 * 10 + 8 * 10 + 2700 * 0.125) / 1e6, abs=1e-12
        )
        assert row["cost"]["reasoningUsd"] == pytest.approx(8 * 10 / 1e6)
        # Each model response is priced on its own (a long-context tier applies per
        # request), as the importer does.
        used = row["extensions"]["models"]
        assert {m: u["calls"] for m, u in used.items()} == {MODEL: 2} and used[MODEL][
            "total"
        ] == row["tokens"]["total"]
        [call] = row["toolCalls"]["records"]
        assert (
            call["name"] == "exec_command"
            and call["category"] == "shell"
            and call["success"]
            and call["durationMs"] > 0
        )
        assert (
            row["success"]
            and row["checkpointDetails"][0]["actual"]
            == "Done: the shell printed hello."
        )
        assert row["agentTurns"] == 2
        assert (
            row["extensions"]["latency_tools_ms"] > 0
            and row["extensions"]["latency_model_ms"] >= 0
        )
        assert 0 < row["extensions"]["latency_startup_ms"] < row["timing"]["wallMs"]
        trace = stored_trace(tmp_path / "reports", "hello", row["mode"])
        tool = next(e for e in trace["events"] if e["type"] == "tool_call")
        assert tool["input"] == {"cmd": "echo hello"} and "hello" in tool["output"]
        assert any(
            e["type"] == "reasoning" and e["content"] == "Run echo first."
            for e in trace["events"]
        )

    analysis = [
        json.loads(line)
        for line in (tmp_path / "results" / "cx.analysis.jsonl")
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
    assert (tmp_path / "reports" / "cx" / "report.md").is_file()

    # Each mode reached its own agent: its instructions, its settings; nothing else was
    # asked of the model.
    assert len(requests) == 4
    plain = [r for r in requests if "MODE-PLAIN" in developer_text(r)]
    effort = [r for r in requests if "MODE-EFFORT" in developer_text(r)]
    assert len(plain) == 2 and len(effort) == 2
    assert all("EXTRA-APPENDED" in developer_text(r) for r in effort)
    assert effort[0].body["reasoning"]["effort"] == "high"
    assert (plain[0].body.get("reasoning") or {}).get("effort") != "high"
    assert all(r.body["model"] == MODEL for r in requests)
    assert list((tmp_path / "tmp").iterdir()) == []  # the sessions' homes are gone
    assert marked_processes(mark) == {}


def test_a_500_from_the_model_is_an_error_row_quickly_with_the_retries_recorded(
    tmp_path, codex
):
    mark = new_mark()
    with FakeModelServer(Fail(500, "scripted overload")) as server:
        path = profile(
            tmp_path,
            server,
            codex,
            mark=mark,
            modes={"plain": {"environment": {MARK: mark}}},
        )
        started = time.monotonic()
        done = profiler(tmp_path, "run", str(path), "--run-id", "fail")
        elapsed = time.monotonic() - started
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr
    [row] = rows(tmp_path, "fail")
    assert row["completionReason"] == "error" and row["errorCode"] == "provider_error"
    assert (
        "codex: " in row["error"]
        and "(after 1 model retry) (model endpoint: http://127.0.0.1:" in row["error"]
    )
    assert elapsed < 30
    assert_no_survivor({}, mark)


def test_a_long_session_with_several_commands_in_a_copy_of_the_template(
    tmp_path, codex
):
    mark = new_mark()
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "notes.txt").write_text("alpha\nbeta\n")
    script = steps(
        [
            ToolCall("exec_command", {"cmd": "ls"}),
            ToolCall("exec_command", {"cmd": "cat notes.txt"}),
            ToolCall("exec_command", {"cmd": "cat missing-file"}),
            ToolCall("exec_command", {"cmd": "printf gamma > out.txt && cat out.txt"}),
            ToolCall("exec_command", {"cmd": "grep -c beta notes.txt"}),
            Text("Done: five commands."),
        ]
    )
    with FakeModelServer(script) as server:
        path = profile(
            tmp_path,
            server,
            codex,
            mark=mark,
            modes={"plain": {"environment": {MARK: mark}}},
            workdir_template=str(tmp_path / "template"),
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "long")
    assert done.returncode == 0, done.stderr
    [row] = rows(tmp_path, "long")
    records = row["toolCalls"]["records"]
    assert [r["success"] for r in records] == [True, True, False, True, True], [
        r.get("error") for r in records
    ]
    assert "No such file or directory" in records[2]["error"]
    assert row["agentTurns"] == 6
    # Six steps of the default usage: 1200 input of which 1000 cached, 30 output of
    # which 5 reasoning.
    assert row["tokens"]["input"] == 1200 and row["tokens"]["cacheRead"] == 6000
    assert row["tokens"]["output"] == 150 and row["tokens"]["reasoning"] == 30
    trace = stored_trace(tmp_path / "reports", "hello", "plain")
    outputs = [e["output"] for e in trace["events"] if e["type"] == "tool_call"]
    assert "beta" in outputs[1] and "gamma" in outputs[3]


def test_max_turns_ends_the_session_with_tool_limit(tmp_path, codex):
    mark = new_mark()
    script = steps(
        [ToolCall("exec_command", {"cmd": f"echo step{i}"}) for i in range(6)]
        + [Text("Done: never reached.")]
    )
    with FakeModelServer(script) as server:
        path = profile(
            tmp_path,
            server,
            codex,
            mark=mark,
            modes={"plain": {"environment": {MARK: mark}}},
            max_turns=2,
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "limit")
        requests = len(server.responses())
    assert done.returncode == 0, done.stderr
    [row] = rows(tmp_path, "limit")
    assert row["completionReason"] == "tool_limit" and row.get("error") is None
    assert requests <= 4  # stopped at the third command, not after six
    assert_no_survivor({}, mark)


def test_options_codex_cannot_honour_are_refused(codex):
    from profiler_core.model import ProviderConfig

    provider = CodexProvider(binary=codex)
    with pytest.raises(
        ConfigError, match=r"option 'allowed_tools' is not supported by Codex"
    ):
        provider.init(
            ProviderConfig(
                model=MODEL, mode="m", options={"allowed_tools": ["exec_command"]}
            )
        )
    with pytest.raises(ConfigError, match=r"unknown option\(s\) mcp "):
        CodexProvider(binary=codex, mcp={})


def test_the_generated_config_is_toml_with_mcp_servers_and_no_key():
    settings = {
        "model": "m",
        "model_providers": {
            "profiler": {
                "base_url": "http://127.0.0.1:1/v1",
                "env_key": "PROFILER_CODEX_API_KEY",
            }
        },
        "mcp_servers": {
            "issues": {
                "command": "uvx",
                "args": ["issues-mcp"],
                "env": {"TOKEN_FILE": "/run/t"},
            }
        },
        "developer_instructions": 'Say "hi"\nthen stop.',
    }
    assert tomllib.loads(config_toml(settings)) == settings


def test_exec_lines_give_thread_retries_failure_and_answer():
    lines = [
        {"type": "thread.started", "thread_id": "t1"},
        {
            "type": "item.completed",
            "item": {
                "type": "error",
                "message": "Model metadata for `m` not found. Defaulting...",
            },
        },
        {"type": "error", "message": "Reconnecting... 1/1 (overloaded)"},
        {
            "type": "item.started",
            "item": {"type": "command_execution", "command": "ls"},
        },
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}},
        {"type": "turn.failed", "error": {"message": "overloaded"}},
    ]
    summary = summarize_exec(lines)
    assert summary.thread_id == "t1" and summary.failure == "overloaded"
    assert (
        summary.retries == ("Reconnecting... 1/1 (overloaded)",)
        and summary.errors == ()
    )
    assert summary.text == "Done." and summary.actions == 1


def test_a_mode_with_an_mcp_server_offers_its_tools_to_the_model(tmp_path, codex):
    import sys
    from pathlib import Path

    mark = new_mark()
    server_settings = {
        "command": sys.executable,
        "args": [str(Path(__file__).parent / "scripted" / "mcp_echo.py")],
    }
    modes = {
        "without_mcp": {
            "system_instructions": "MODE-NO-MCP",
            "environment": {MARK: mark},
        },
        "with_mcp": {
            "system_instructions": "MODE-MCP",
            "environment": {MARK: mark},
            "provider_overrides": {"mcp_servers": {"echo": server_settings}},
        },
    }
    with FakeModelServer(Text("Done: nothing to do.")) as server:
        path = profile(tmp_path, server, codex, mark=mark, modes=modes)
        done = profiler(tmp_path, "run", str(path), "--run-id", "mcp")
        requests = server.responses()
    assert done.returncode == 0, done.stderr
    assert all(r.get("error") is None for r in rows(tmp_path, "mcp"))

    def mcp_tools(request):
        namespaces = [
            t
            for t in request.body["tools"]
            if t.get("type") == "namespace" and t.get("name", "").startswith("mcp__")
        ]
        return {(n["name"], t["name"]) for n in namespaces for t in n.get("tools", [])}

    [without] = [r for r in requests if "MODE-NO-MCP" in developer_text(r)]
    [with_mcp] = [r for r in requests if "MODE-MCP" in developer_text(r)]
    assert mcp_tools(without) == set()
    assert mcp_tools(with_mcp) == {
        ("mcp__echo", "shout")
    }  # the server started and listed its tool
    assert_no_survivor({}, mark)

"""The `command` provider: any CLI agent, measured from the wire (issue 39).

The agent is tests/scripted/mini_agent.py, a real subprocess: it calls the scripted model
(OpenAI chat completions, over httpx) and runs a real shell tool; the runs are real
`profiler run` processes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.scripted.agent_runs import profiler, rows, write_profile

from profiler_core.errors import ConfigError
from profiler_core.fakemodel import FakeModelServer, Usage, tool_then_text
from profiler_core.providers.command import CommandProvider

AGENT = Path(__file__).parent / "scripted" / "mini_agent.py"
USAGE = Usage(input=90, output=11, cache_read=30)
PRICES = {
    "mini": {"input_per_mtok": 1, "output_per_mtok": 10, "cache_read_per_mtok": 0.5}
}


@pytest.mark.parametrize(
    ("how", "stream"),
    [
        (f"{sys.executable} {AGENT} --prompt {{prompt}}", False),
        (f"{sys.executable} {AGENT} --prompt-file {{prompt_file}} --stream", True),
        (f"{sys.executable} {AGENT}", False),
    ],
    ids=["argument", "file-streamed", "stdin"],
)
def test_a_cli_agent_is_measured_from_the_wire(tmp_path, how, stream):
    with FakeModelServer(tool_then_text(usage=USAGE), model="mini") as model:
        path = write_profile(
            tmp_path,
            provider="command",
            model="mini",
            modes={"plain": {}},
            extensions={"prices": PRICES},
            options={"command": how, "base_url": model.base_url},
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "cmd", "--no-report")
        asked = model.chat_requests()
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = rows(tmp_path, "cmd")
    assert row.get("error") is None and row["success"], row.get("error")
    # The agent's output is the answer; its two model calls, as the model reported them,
    # are the tokens.
    assert (
        len(asked) == 2
        and asked[0]["messages"][0]["content"] == "Say hello using the shell."
    )
    assert (
        row["tokens"]["input"] == 180
        and row["tokens"]["output"] == 22
        and row["tokens"]["cacheRead"] == 60
    )
    wire = row["extensions"]["wire"]
    assert (
        wire["calls"] == 2
        and wire["streamed"] == (2 if stream else 0)
        and "mismatch" not in wire
    )
    assert row["extensions"]["cost_source"] == "wire"
    assert row["cost"]["totalUsd"] == pytest.approx(
        (180 * 1 + 22 * 10 + 60 * 0.5) / 1e6
    )
    # The tool call the model asked for, with the result the agent sent back.
    assert (
        row["toolCalls"]["total"] == 1
        and row["toolCalls"]["records"][0]["name"] == "bash"
    )
    assert row["toolCalls"]["records"][0][
        "success"
    ]  # the agent sent its result back in the next request
    assert row["extensions"]["latency_llm_ms"] > 0


def test_a_failing_agent_is_an_error_row_with_its_cause_and_wire_off_goes_straight(
    tmp_path,
):
    with FakeModelServer(tool_then_text(usage=USAGE), model="mini") as model:
        failing = tmp_path / "failing"
        failing.mkdir()
        path = write_profile(
            failing,
            provider="command",
            model="mini",
            modes={"plain": {}},
            options={
                "command": [
                    sys.executable,
                    "-c",
                    "import sys; print('boom', file=sys.stderr); sys.exit(3)",
                ],
                "base_url": model.base_url,
            },
        )
        profiler(failing, "run", str(path), "--run-id", "bad", "--no-report")
        straight = tmp_path / "straight"
        straight.mkdir()
        path = write_profile(
            straight,
            provider="command",
            model="mini",
            modes={"plain": {}},
            options={
                "command": f"{sys.executable} {AGENT} --prompt {{prompt}}",
                "base_url": model.base_url,
            },
        )
        text = path.read_text().replace("execution:\n", "execution:\n  wire: false\n")
        path.write_text(text)
        off = profiler(straight, "run", str(path), "--run-id", "off", "--no-report")
        endpoint = model.base_url
    [row] = rows(failing, "bad")
    assert (
        row["error"] is not None
        and "command exited with status 3: boom" in row["error"]
        and endpoint in row["error"]
    )
    assert off.returncode == 0, off.stderr[-2000:]
    [row] = rows(straight, "off")
    assert (
        row["success"]
        and "wire" not in row["extensions"]
        and row["tokens"]["total"] == 0
    )


def test_bad_options_are_one_line():
    with pytest.raises(
        ConfigError, match=r"^provider 'command': option 'command' is required"
    ):
        CommandProvider()
    with pytest.raises(
        ConfigError,
        match=r"^provider 'command': option 'command': program 'no-such-agent-xyz' not found",
    ):
        CommandProvider(command="no-such-agent-xyz --go")
    with pytest.raises(
        ConfigError,
        match=r"^provider 'command': option 'api': expected one of openai-chat, "
        r"openai-responses, anthropic, got 'grpc'$",
    ):
        CommandProvider(command=f"{sys.executable} -V", api="grpc")
    with pytest.raises(
        ConfigError,
        match=r"^provider 'command': option 'command': No closing quotation$",
    ):
        CommandProvider(command="agent 'unclosed")


@pytest.mark.parametrize("trace_format", ["atif", None], ids=["named", "detected"])
def test_an_atif_trace_file_gives_the_tool_calls_and_the_wire_the_tokens(
    tmp_path, trace_format
):
    with FakeModelServer(tool_then_text(usage=USAGE), model="mini") as model:
        options = {
            "command": f"{sys.executable} {AGENT} --prompt {{prompt}} --atif run.atif.json",
            "base_url": model.base_url,
            "trace_file": "run.atif.json",
        }
        if trace_format:
            options["trace_format"] = trace_format
        path = write_profile(
            tmp_path,
            provider="command",
            model="mini",
            modes={"plain": {}},
            options=options,
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "atif", "--no-report")
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = rows(tmp_path, "atif")
    assert row.get("error") is None and row["success"], row.get("error")
    # The agent's own trajectory names its tool 'shell' (the model asked for 'bash'):
    # the records are the file's.
    assert [r["name"] for r in row["toolCalls"]["records"]] == ["shell"] and row[
        "toolCalls"
    ]["records"][0]["success"]
    # The file holds no usage: the tokens are the wire's two calls.
    assert (
        row["tokens"]["input"] == 180
        and row["tokens"]["output"] == 22
        and row["extensions"]["wire"]["calls"] == 2
    )


def test_detect_format_and_a_bad_trace_format(tmp_path):
    from profiler_core.providers.command import detect_format

    atif = tmp_path / "a.json"
    atif.write_text('{"schema_version": "ATIF-v1.6", "steps": []}')
    other = tmp_path / "b.json"
    other.write_text('{"session_id": "x", "events": []}')
    assert detect_format(atif) == "atif" and detect_format(other) == "trace"
    with pytest.raises(
        ConfigError,
        match=r"^provider 'command': option 'trace_format': expected one of auto, "
        r".*atif.*, got 'yaml'$",
    ):
        CommandProvider(command=f"{sys.executable} -V", trace_format="yaml")


def test_the_real_key_stays_with_the_recorder_and_the_agent_holds_a_placeholder(
    tmp_path, monkeypatch
):
    from profiler_core.providers._agent_process import WIRE_PLACEHOLDER_KEY

    real = "sk-real-" + "x" * 24
    monkeypatch.setenv("MY_MODEL_KEY", real)
    monkeypatch.setenv(
        "OPENAI_API_KEY", real
    )  # the profiler's own: never passed on either
    seen = tmp_path / "agent-env.json"
    with FakeModelServer(tool_then_text(usage=USAGE), model="mini") as model:
        path = write_profile(
            tmp_path,
            provider="command",
            model="mini",
            modes={"plain": {}},
            options={
                "command": f"{sys.executable} {AGENT} --prompt {{prompt}} --env-file {seen}",
                "base_url": model.base_url,
                "api_key_env": "MY_MODEL_KEY",
            },
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "key", "--no-report")
        keys = [r.auth for r in model.posts("/chat/completions")]
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = rows(tmp_path, "key")
    assert row["success"], row.get("error")
    env = json.loads(seen.read_text())
    # The agent's whole environment: the placeholder in the key variables, the real key nowhere.
    assert (
        env["OPENAI_API_KEY"] == WIRE_PLACEHOLDER_KEY
        and env["ANTHROPIC_API_KEY"] == WIRE_PLACEHOLDER_KEY
    )
    assert not [name for name, value in env.items() if real in value]
    # The model saw the real key on every call: the recorder put it in.
    assert keys == [f"Bearer {real}"] * 2
    # Nor does any file the run wrote hold it.
    assert not [
        p
        for p in (tmp_path / "results").rglob("*")
        if p.is_file() and real in p.read_text(errors="replace")
    ]

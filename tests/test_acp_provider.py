"""The `acp` provider: a real ACP agent (OpenCode's `opencode acp`) against the scripted
model, and a scripted
ACP agent (tests/scripted/acp_agent.py, a real subprocess) for the protocol's corners
and bad input (issue 39)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from tests.binaries import agent_binary, system_binary
from tests.scripted.agent_runs import profiler, rows, write_profile

from profiler_core.config.agents import agent
from profiler_core.errors import ConfigError
from profiler_core.fakemodel import FakeModelServer, tool_then_text
from profiler_core.importers import load_sessions
from profiler_core.model import TokenBreakdown
from profiler_core.providers.acp import AcpProvider
from profiler_core.providers.acp.protocol import (
    PROTOCOL_VERSION,
    AcpError,
    Update,
    check_version,
    choose_option,
)
from profiler_core.providers.acp.trace import build_trace, tool_kinds, tool_name

AGENT = Path(__file__).parent / "scripted" / "acp_agent.py"
PRICES = {
    "fake": {"input_per_mtok": 1, "output_per_mtok": 2, "cache_read_per_mtok": 0.1}
}
#: the fake model's default OpenAI chat usage per call: 80 input, 15 output, 40 cache reads
PER_CALL = {"input": 80, "output": 15, "cacheRead": 40}


@pytest.mark.slow
def test_opencode_acp_against_the_scripted_model(tmp_path, monkeypatch):
    opencode = agent_binary("opencode", "OPENCODE_BIN")
    real = "sk-test-real-key-acp-0123456789"
    monkeypatch.setenv(
        "OPENAI_API_KEY", real
    )  # the recorder's; OpenCode holds the placeholder
    with FakeModelServer(tool_then_text(), model="fake") as model:
        path = write_profile(
            tmp_path,
            provider="acp",
            model="fake",
            modes={"plain": {}},
            extensions={"prices": PRICES},
            options={
                "agent": "opencode",
                "command": [str(opencode), "acp"],
                "base_url": model.base_url,
            },
        )
        done = profiler(tmp_path, "run", str(path), "--run-id", "acp")
        calls = len(model.chat_requests())
        keys = {r.auth for r in model.posts("/chat/completions")}
    assert done.returncode == 0, done.stderr[-2000:]
    assert keys == {f"Bearer {real}"}  # the recorder put the real key into every call
    [row] = rows(tmp_path, "acp")
    assert row.get("error") is None and row["success"], row.get("error")
    # The scripted tool call, seen through ACP's tool_call updates, with its output.
    records = row["toolCalls"]["records"]
    assert [(r["name"], r["category"], r["success"]) for r in records] == [
        ("bash", "shell", True)
    ]
    # The tokens are the wire's: every call the model answered, at the scripted usage.
    wire = row["extensions"]["wire"]
    assert wire["calls"] == calls >= 2
    assert (
        {k: row["tokens"][k] for k in PER_CALL}
        == {k: v * calls for k, v in PER_CALL.items()}
        == {k: wire["tokens"][k] for k in PER_CALL}
    )
    assert row["extensions"]["cost_source"] == "wire"


#: the fake model's default OpenAI Responses usage per call (docs/fake-model.md)
RESPONSES_PER_CALL = {"input": 200, "output": 25, "cacheRead": 1000, "reasoning": 5}


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_codex_acp_against_the_scripted_model(tmp_path, monkeypatch, sandbox):
    # Codex's ACP adapter: its exec_command call arrives as a `tool_call` of kind `execute`, and
    # the tokens of the wire equal those Codex itself wrote in its rollout file. Under bwrap,
    # Codex's own sandbox (its default preset) cannot start, and the call was never announced.
    codex_acp = agent_binary("codex-acp", "CODEX_ACP_BIN")
    name = agent("codex-acp").model  # the registry's, as `init --agent` writes it
    monkeypatch.setenv("CODEX_ACP_BIN", str(codex_acp))
    if sandbox == "bwrap":
        system_binary("bwrap", hint="apt-get install bubblewrap")
    with FakeModelServer(tool_then_text(), model=name) as model:
        path = write_profile(
            tmp_path,
            provider="acp",
            model=name,
            modes={"plain": {}},
            options={
                "agent": "codex-acp",
                "base_url": model.base_url,
                "keep_sessions": True,  # so the test reads Codex's own rollout below
            },
        )
        profile = yaml.safe_load(path.read_text())
        profile["execution"]["sandbox"] = sandbox
        path.write_text(yaml.safe_dump(profile, sort_keys=False))
        done = profiler(tmp_path, "run", str(path), "--run-id", "codex-acp")
        calls = len(model.responses())
        offered = [t.get("name") for t in model.responses()[0].body.get("tools", [])]
    assert done.returncode == 0, done.stderr[-2000:]
    assert "exec_command" in offered  # Codex's own shell tool: the script called it
    [row] = rows(tmp_path, "codex-acp")
    assert row.get("error") is None and row["success"], row.get("error")
    [record] = row["toolCalls"]["records"]
    assert (record["category"], record["success"]) == ("shell", True)
    # codex-acp titles a command by its command line: the registry's shell tool names it.
    assert record["name"] == "exec_command"
    report = tmp_path / "reports" / "codex-acp"
    [call] = trace_events(report, "tool_call")
    assert call["input"]["command"] == ["/bin/bash", "-lc", "echo hello"]
    assert call["output"]["stdout"] == "hello\n" and call["output"]["exit_code"] == 0
    # The registry's model is one Codex knows: no "Model metadata ... not found" message.
    texts = [e["content"] for e in trace_events(report, "text_output")]
    assert texts == ["Done: the command printed hello."]
    wire = row["extensions"]["wire"]
    assert wire["calls"] == calls == 2 and wire["apis"] == ["openai-responses"]
    assert (
        {k: row["tokens"][k] for k in RESPONSES_PER_CALL}
        == {k: v * calls for k, v in RESPONSES_PER_CALL.items()}
        == {k: wire["tokens"][k] for k in RESPONSES_PER_CALL}
    )
    # Codex's own report of the same session: its rollout file, read by the codex importer.
    [rollout] = (tmp_path / "tmp").glob(
        "profiler-acp-*/home/.codex/sessions/**/*.jsonl"
    )
    [own] = load_sessions("codex", rollout)
    tokens = own.result.metrics.tokens
    assert (tokens.input, tokens.output, tokens.cache_read, tokens.reasoning) == tuple(
        wire["tokens"][k] for k in RESPONSES_PER_CALL
    )


def trace_events(report: Path, kind: str) -> list[dict]:
    """The events of one type of every trace of a run's trace store."""
    lines = (report / "sessions" / "traces.jsonl").read_text().splitlines()
    events = [e for line in lines for e in json.loads(line)["trace"]["events"]]
    return [e for e in events if e.get("type") == kind]


def acp_profile(folder: Path, mode: str, checks: list | None = None, **options) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_profile(
        folder,
        provider="acp",
        model="fake",
        modes={"plain": {}},
        timeout_ms=20_000,
        checks=checks,
        options={
            "command": [sys.executable, str(AGENT), mode],
            "handshake_timeout_s": 3,
            **options,
        },
    )


@pytest.mark.parametrize("policy", ["allow", "reject"])
def test_permission_requests_are_answered_by_the_policy_and_updates_build_the_trace(
    tmp_path, policy
):
    chosen = "yes" if policy == "allow" else "no"
    # The agent tells, in its answer, the option it was given, the client's answer to a
    # request the client never
    # offered (a file read: JSON-RPC's "method not found", -32601) and the prompt it received.
    pattern = (
        f"^Done: permission {chosen}, fs -32601, prompt 'Say hello using the shell.'$"
    )
    checks = [
        {
            "id": "told",
            "target": "output",
            "condition": {"type": "matches", "pattern": pattern},
        }
    ]
    done = profiler(
        tmp_path,
        "run",
        str(acp_profile(tmp_path, "ok", checks, permission=policy)),
        "--run-id",
        "p",
        "--no-report",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = rows(tmp_path, "p")
    assert (
        row.get("error") is None
        and row["success"]
        and row["completionReason"] == "stop"
    )
    [record] = row["toolCalls"]["records"]
    assert (record["name"], record["category"], record["success"]) == (
        "ls",
        "shell",
        policy == "allow",
    )
    assert row["toolCalls"]["failed"] == (0 if policy == "allow" else 1)
    assert "wire" not in row["extensions"]  # no base_url: nothing to record


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("exit", "acp: the agent exited with status 7"),
        ("silent", "acp: the agent never answered the handshake within 3 s"),
        (
            "malformed",
            "acp: malformed session/update (expected params.update.sessionUpdate)",
        ),
        (
            "garbage",
            "acp: the agent sent a line that is not JSON-RPC: 'Starting agent...'",
        ),
        ("v2", "acp: the agent speaks protocol version 2; this client speaks 1"),
    ],
)
def test_a_broken_agent_is_an_error_row_with_one_line(tmp_path, mode, expected):
    done = profiler(
        tmp_path,
        "run",
        str(acp_profile(tmp_path, mode)),
        "--run-id",
        "b",
        "--no-report",
    )
    [row] = rows(tmp_path, "b")
    assert row["error"] is not None and expected in row["error"], row["error"]
    assert "\n" not in row["error"]
    if mode == "exit":
        assert "acp agent: no credentials" in row["error"]
    del done


def test_bad_options_are_one_line():
    with pytest.raises(
        ConfigError,
        match=r"^provider 'acp': option 'command' \(the agent's ACP command\) or "
        r"'agent' \(a registry name\) is required$",
    ):
        AcpProvider()
    with pytest.raises(
        ConfigError,
        match=r"^provider 'acp': option 'agent': 'codex' is not an ACP agent of the "
        r"registry \(known: opencode",
    ):
        AcpProvider(agent="codex")
    with pytest.raises(
        ConfigError,
        match=r"^provider 'acp': the ACP agent's program 'no-such-acp-agent' was not found",
    ):
        AcpProvider(command="no-such-acp-agent --acp")
    with pytest.raises(
        ConfigError, match=r"option 'permission': expected allow or reject, got 'ask'"
    ):
        AcpProvider(command=[sys.executable], permission="ask")
    # Codex's adapter runs with no approvals: a reject policy would be ignored, so it is refused.
    with pytest.raises(
        ConfigError,
        match=r"^provider 'acp': option 'permission': codex-acp asks for no permission "
        r"\(it runs with approval_policy never; Codex's only refusal aborts the turn\); use allow$",
    ):
        AcpProvider(agent="codex-acp", permission="reject")


def test_choose_option_and_the_trace_of_updates():
    options = [
        {"optionId": "a", "kind": "allow_always"},
        {"optionId": "o", "kind": "allow_once"},
        {"optionId": "r", "kind": "reject_always"},
    ]
    assert (
        choose_option(options, "allow") == "o"
        and choose_option(options, "reject") == "r"
    )
    assert choose_option([{"optionId": "o", "kind": "allow_once"}], "reject") is None
    updates = [
        Update(
            {
                "sessionUpdate": "agent_thought_chunk",
                "content": {"type": "text", "text": "th"},
            },
            0.0,
        ),
        Update(
            {
                "sessionUpdate": "agent_thought_chunk",
                "content": {"type": "text", "text": "ink"},
            },
            0.1,
        ),
        Update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "x",
                "title": "read",
                "kind": "read",
                "rawInput": {"path": "a"},
            },
            1.0,
        ),
        Update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "mid"},
            },
            1.2,
        ),
        Update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "x",
                "status": "completed",
                "rawOutput": {"text": "A"},
            },
            1.5,
        ),
        Update({"sessionUpdate": "usage_update", "used": 5}, 1.6),
        Update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "Done"},
            },
            2.0,
        ),
        Update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "."},
            },
            2.1,
        ),
    ]
    trace, answer = build_trace("s", updates, 2100, TokenBreakdown(input=3))
    kinds = [type(e).__name__ for e in trace.events]
    assert kinds == [
        "ReasoningEvent",
        "ToolCallEvent",
        "TextOutputEvent",
        "TextOutputEvent",
    ]
    assert trace.events[0].content == "think" and answer == "Done."
    tool = trace.events[1]
    assert (tool.name, tool.input, tool.output, tool.duration_ms) == (
        "read",
        {"path": "a"},
        {"text": "A"},
        500.0,
    )
    assert trace.summary.total_tool_calls == 1 and trace.summary.total_tokens.input == 3
    assert tool_kinds(updates) == {"read": "file"}


def test_a_tool_call_is_named_by_the_agents_tool_name_else_its_shell_tool_else_its_title():
    command = {"kind": "execute", "title": "echo hello"}
    claude = {**command, "_meta": {"claudeCode": {"toolName": "Bash"}}}
    assert tool_name(claude, "exec_command") == "Bash"  # the agent's own name first
    assert tool_name(command, "exec_command") == "exec_command"  # codex-acp's command
    assert tool_name(command) == "echo hello"  # an agent the registry does not know
    assert tool_name({"kind": "read", "title": "read"}, "exec_command") == "read"
    updates = [
        Update({"sessionUpdate": "tool_call", "toolCallId": "c", **command}, 0.0),
        Update({"sessionUpdate": "tool_call_update", "toolCallId": "c"}, 0.5),
    ]
    trace, _ = build_trace("s", updates, 500, TokenBreakdown(), "exec_command")
    assert [e.name for e in trace.events] == ["exec_command"]
    assert tool_kinds(updates, "exec_command") == {"exec_command": "shell"}


def test_the_version_is_negotiated_among_those_this_client_speaks():
    # The client offers its newest; the agent's answer is the session's version when the
    # client speaks it.
    assert PROTOCOL_VERSION == 1 and check_version({"protocolVersion": 1}) == 1
    assert (
        check_version({"protocolVersion": 1}, supported=(1, 2)) == 1
    )  # an agent that only speaks the older one
    assert check_version({"protocolVersion": 2}, supported=(1, 2)) == 2
    for answer, shown in ((2, "2"), (True, "True"), ("1", "'1'"), (None, "None")):
        with pytest.raises(
            AcpError,
            match=rf"^acp: the agent speaks protocol version {shown}; this client speaks 1$",
        ):
            check_version({"protocolVersion": answer})
    with pytest.raises(AcpError, match=r"this client speaks 1, 2$"):
        check_version({"protocolVersion": 3}, supported=(2, 1))

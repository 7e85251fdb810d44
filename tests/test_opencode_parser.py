"""The OpenCode messages parser (shared by `profiler import opencode` and the live provider), the
provider's options, and the fake model server the OpenCode tests drive it with. No
opencode binary needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from profiler_core import PermissionConfig
from profiler_core.errors import ConfigError, ValidationError
from profiler_core.fakemodel import (
    Fail,
    FakeModelServer,
    Shell,
    Text,
    ToolCall,
    Usage,
    tool_then_text,
)
from profiler_core.importers import load_sessions
from profiler_core.importers.opencode import session_from_messages
from profiler_core.providers.opencode import OpenCodeOptions, OpenCodeProvider
from profiler_core.providers.opencode.config import opencode_config
from profiler_core.providers.opencode.metrics import measure, progress

ROOT = Path(__file__).resolve().parent.parent

T0 = 1_795_344_119_000  # epoch ms


def tokens(input=80, output=15, read=40, write=0, reasoning=0):
    return {
        "total": input + output + read + write + reasoning,
        "input": input,
        "output": output,
        "reasoning": reasoning,
        "cache": {"read": read, "write": write},
    }


def assistant(
    mid,
    created,
    completed,
    parts,
    *,
    finish="stop",
    cost=0.00013,
    error=None,
    step_tokens=True,
):
    info = {
        "id": mid,
        "role": "assistant",
        "time": {"created": created, "completed": completed},
        "modelID": "scripted",
        "providerID": "local",
        "cost": cost,
        "tokens": tokens(),
        "finish": finish,
    }
    if error is not None:
        info["error"] = error
    finish_part = {"type": "step-finish", "reason": finish, "cost": cost}
    if step_tokens:
        finish_part["tokens"] = tokens()
    return {"info": info, "parts": [{"type": "step-start"}, *parts, finish_part]}


def session_messages():
    """The shape of a real session (see agent-wire/opencode/messages.json): a bash call,
    then the answer."""
    user = {
        "info": {"id": "msg_u", "role": "user", "time": {"created": T0}},
        "parts": [{"type": "text", "text": "Run echo hello."}],
    }
    tool = {
        "type": "tool",
        "callID": "call_1",
        "tool": "bash",
        "state": {
            "status": "completed",
            "input": {"command": "echo hello"},
            "output": "hello\n",
            "time": {"start": T0 + 3000, "end": T0 + 3800},
        },
    }
    first = assistant("msg_a1", T0 + 1000, T0 + 4000, [tool], finish="tool-calls")
    second = assistant(
        "msg_a2",
        T0 + 4010,
        T0 + 4500,
        [
            {
                "type": "text",
                "text": "Done: hello.",
                "time": {"start": T0 + 4200, "end": T0 + 4300},
            }
        ],
    )
    return [user, first, second]


def test_tokens_net_of_cache_cost_tools_and_segments():
    s = session_from_messages(session_messages(), session_id="ses_1")
    m = s.result.metrics
    # OpenCode's input already excludes cache reads: summed per step, never re-subtracted.
    assert (
        m.tokens.input,
        m.tokens.output,
        m.tokens.cache_read,
        m.tokens.total,
        m.tokens.active,
    ) == (160, 30, 80, 270, 190)
    assert s.cost_source == "provider" and m.cost.total_usd == pytest.approx(0.00026)
    (call,) = m.tool_calls
    assert (call.name, call.category, call.success, call.duration_ms) == (
        "bash",
        "shell",
        True,
        800.0,
    )
    assert [(g.label, g.end_ms - g.start_ms) for g in m.timing.segments] == [
        ("model", 2000),
        ("tools", 800),
        ("model", 200),
        ("model", 490),
    ]
    assert m.timing.wall_ms == 4500.0
    assert s.text == "Done: hello." and s.result.completion_reason == "stop"
    assert s.trace.summary.total_turns == 2
    tool_event = s.trace.turns[0].events[0]
    assert (tool_event.input, tool_event.output) == (
        {"command": "echo hello"},
        "hello\n",
    )


def test_step_finish_without_tokens_is_skipped_not_an_error():
    messages = session_messages()
    messages[2] = assistant(
        "msg_a2",
        T0 + 4010,
        T0 + 4500,
        [{"type": "text", "text": "Done."}],
        step_tokens=False,
    )
    s = session_from_messages(messages, session_id="ses_1")
    # The first message's step counts; the second falls back to the message's own tokens.
    assert s.result.metrics.tokens.input == 160
    messages[1]["parts"][-1].pop("tokens")
    messages[1]["info"]["tokens"] = tokens(input=7, output=1, read=0)
    assert (
        session_from_messages(messages, session_id="ses_1").result.metrics.tokens.input
        == 87
    )


def test_bad_messages_name_the_field():
    messages = session_messages()
    messages[1]["parts"][-1]["tokens"]["input"] = -3
    with pytest.raises(
        ValidationError,
        match=r"messages\[1\]\.parts\[2\]\.tokens\.input: expected a token count",
    ):
        session_from_messages(messages, session_id="ses_1")


def test_import_uses_the_same_parser(tmp_path):
    export = {"info": {"id": "ses_1", "title": "t"}, "messages": session_messages()}
    path = tmp_path / "ses_1.json"
    path.write_text(json.dumps(export))
    (imported,) = load_sessions("opencode", path)
    live = session_from_messages(
        session_messages(), session_id="ses_1", file=path, where=f"{path}: $.messages"
    )
    assert imported.result == live.result and imported.trace == live.trace


def test_progress_and_model_error():
    messages = session_messages()
    assert progress(messages).done
    assert (
        not progress(messages[:2]).done
        and progress(messages[:2]).finish == "tool-calls"
    )
    assert not progress(
        messages
        + [{"info": {"role": "user", "time": {"created": T0 + 9000}}, "parts": []}]
    ).done
    failed = assistant(
        "msg_a2",
        T0 + 4010,
        None,
        [],
        finish=None,
        error={
            "name": "APIError",
            "data": {"message": "Unauthorized", "statusCode": 401},
        },
    )
    failed["parts"] = [{"type": "step-start"}]
    state = progress(messages[:2] + [failed])
    assert state.error == "APIError: Unauthorized" and not state.done


def test_retries_become_recoverable_errors_in_the_trace():
    s = measure(
        session_messages(), session_id="ses_1", retries=["attempt 1: overloaded"]
    )
    errors = [e for e in s.trace.events if e.__class__.__name__ == "ErrorEvent"]
    assert [(e.message, e.recoverable) for e in errors] == [
        ("model request retried by OpenCode: attempt 1: overloaded", True)
    ]


def test_the_provider_reports_only_opencodes_own_cost():
    messages = session_messages()
    for message in messages[1:]:
        message["info"]["cost"] = 0
        message["info"]["modelID"] = "gpt-4o"
        message["parts"][-1]["cost"] = 0
    imported = session_from_messages(messages, session_id="ses_1")
    assert (
        imported.cost_source == "computed"
        and imported.result.metrics.cost.total_usd > 0
    )  # import prices it itself
    live = measure(messages, session_id="ses_1")
    # Live, the cost collector prices it (profile prices, full model name) and records cost_source.
    assert (
        live.result.metrics.cost.total_usd == 0
        and live.result.metrics.tokens == imported.result.metrics.tokens
    )


# -- options -----------------------------------------------------------------------


def test_options_are_checked_with_one_line_each():
    with pytest.raises(ConfigError, match="unknown option.*polling"):
        OpenCodeOptions.parse({"polling": 1})
    with pytest.raises(
        ConfigError, match="option 'start_timeout_s': expected a number > 0"
    ):
        OpenCodeOptions.parse({"start_timeout_s": "soon"})
    with pytest.raises(
        ConfigError, match="option 'max_model_retries': expected an integer >= 0"
    ):
        OpenCodeOptions.parse({"max_model_retries": -1})
    with pytest.raises(ConfigError, match="option 'config': expected a mapping"):
        OpenCodeOptions.parse({"config": ["x"]})
    assert (
        OpenCodeOptions.parse(
            {"max_model_retries": 0, "workdir_per_session": True}
        ).max_model_retries
        == 0
    )


def test_generated_config_merges_permissions_mcp_and_config():
    options = OpenCodeOptions.parse(
        {
            "permission": {"bash": "deny"},
            "mcp": {"ghx": {"type": "local", "command": ["ghx", "mcp"]}},
            "config": {
                "provider": {
                    "local": {"options": {"baseURL": "http://127.0.0.1:1/v1"}}
                },
                "share": "manual",
            },
        }
    )
    config = opencode_config(
        options, "local/scripted", PermissionConfig(auto_approve=True)
    )
    assert config["model"] == "local/scripted" and config["autoupdate"] is False
    assert config["permission"] == {
        "edit": "allow",
        "bash": "deny",
        "webfetch": "allow",
        "external_directory": "allow",
    }
    assert config["mcp"]["ghx"]["command"] == ["ghx", "mcp"]
    assert config["share"] == "manual"  # options.config wins
    with pytest.raises(ConfigError, match="expected OpenCode's 'providerID/modelID'"):
        opencode_config(options, "gpt-4o", PermissionConfig())


def test_missing_binary_is_one_line_with_an_install_hint(tmp_path, monkeypatch):
    with pytest.raises(
        ConfigError,
        match=r"option 'binary': '/nope/opencode' is not an executable file; install "
        r"it with `npm install -g opencode-ai`",
    ):
        OpenCodeProvider(binary="/nope/opencode")
    monkeypatch.delenv("OPENCODE_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(
        "PROFILER_AGENTS_DIR", str(tmp_path)
    )  # nor in .agents/ or the agent cache
    with pytest.raises(ConfigError, match="not found on PATH; install it"):
        OpenCodeProvider()


# -- the scripted model server ------------------------------------------------------------


def test_scripted_server_streams_usage_and_logs_requests():
    with FakeModelServer(
        [
            ToolCall(
                "bash",
                {"command": "ls"},
                usage=Usage(input=70, output=7, cache_read=30),
            ),
            Text("bye"),
            Fail(503, "busy"),
        ]
    ) as model:
        with httpx.Client(base_url=model.base_url, timeout=5) as client:
            assert client.get("/models").json()["data"][0]["id"] == "fake"
            with client.stream(
                "POST",
                "/chat/completions",
                json={"stream": True, "messages": [{"role": "user", "content": "hi"}]},
            ) as r:
                events = [
                    json.loads(line[6:])
                    for line in r.iter_lines()
                    if line.startswith("data: {")
                ]
            call = events[1]["choices"][0]["delta"]["tool_calls"][0]
            assert call["function"] == {
                "name": "bash",
                "arguments": '{"command": "ls"}',
            }
            assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"
            assert events[-1]["usage"]["prompt_tokens_details"] == {"cached_tokens": 30}
            answer = client.post("/chat/completions", json={"messages": []}).json()
            assert (
                answer["choices"][0]["message"]["content"] == "bye"
                and answer["usage"]["total_tokens"] == 135
            )
            failed = client.post("/chat/completions", json={"messages": []})
            assert (
                failed.status_code == 503
                and failed.json()["error"]["message"] == "busy"
            )
        assert (
            len(model.chat_requests()) == 3
            and model.chat_requests()[0]["messages"][0]["content"] == "hi"
        )


def test_tool_then_text_follows_each_conversation():
    script = tool_then_text(command="pwd")
    assert isinstance(script({"messages": [{"role": "user", "content": "go"}]}), Shell)
    assert isinstance(
        script(
            {
                "messages": [
                    {"role": "user"},
                    {"role": "assistant"},
                    {"role": "tool", "content": "/"},
                ]
            }
        ),
        Text,
    )


def test_core_registers_the_provider_as_a_builtin():
    out = subprocess.run(
        [sys.executable, "-m", "profiler_core", "list-plugins", "--json"],
        capture_output=True,
        text=True,
        env=os.environ,
        check=True,
    ).stdout
    plugins = {p["name"]: p for p in json.loads(out)}
    opencode = plugins["core.providers.opencode"]
    assert opencode["builtin"] and opencode["components"] == {"providers": ["opencode"]}
    assert (
        "providers" not in plugins["eval_ghx"]["components"]
    )  # the eval plugin uses it, it does not own it


def test_importing_the_provider_leaves_logging_and_httpx_alone():
    # A library module must not configure the program's logging,
    # nor load httpx before a session needs it.
    code = (
        "import logging, sys\n"
        "before = {n: logging.getLogger(n).level for n in ('', 'httpx', 'agent_profiler')}\n"
        "import profiler_core.providers.opencode\n"
        "from profiler_core.plugins import get_plugin_manager\n"
        "get_plugin_manager(entrypoints=False).registry\n"
        "after = {n: logging.getLogger(n).level for n in ('', 'httpx', 'agent_profiler')}\n"
        "print(before == after, 'httpx' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True", "False"]

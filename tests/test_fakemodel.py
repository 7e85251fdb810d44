"""The fake model (profiler_core.fakemodel, `profiler fake-model`): three APIs on one
port, scripts, agents' folders (issue 31.17)."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.config.agents import npm_packages
from profiler_core.errors import ConfigError
from profiler_core.fakemodel import (
    DEFAULT_SCRIPT,
    Fail,
    FakeModelServer,
    Shell,
    Text,
    ToolCall,
    Usage,
    load_script,
    parse_script,
    steps,
    tool_results,
    tool_then_text,
)
from profiler_core.providers import agents

ROOT = Path(__file__).resolve().parent.parent
PROFILER = [sys.executable, "-m", "profiler_core"]


def sse(response: httpx.Response) -> list[dict]:
    """The JSON ``data:`` payloads of an event stream."""
    return [
        json.loads(line[6:])
        for line in response.text.splitlines()
        if line.startswith("data: {")
    ]


# -- one server, three APIs ------------------------------------------------------------


def test_one_port_answers_chat_messages_and_responses_with_the_same_script():
    usage = Usage(input=70, output=7, cache_read=30, cache_write=5, reasoning=3)
    with FakeModelServer(
        steps(
            [Shell("ls", usage=usage), Text("Done.", thinking="all good", usage=usage)]
        )
    ) as model:
        with httpx.Client(base_url=model.base_url, timeout=5) as client:
            chat = client.post(
                "/chat/completions",
                json={
                    "stream": True,
                    "tools": [{"type": "function", "function": {"name": "bash"}}],
                    "messages": [],
                },
            )
            chunks = sse(chat)
            call = chunks[1]["choices"][0]["delta"]["tool_calls"][0]["function"]
            assert (
                call["name"] == "bash"
                and json.loads(call["arguments"])["command"] == "ls"
            )
            # OpenAI counts cache inside the prompt and reasoning inside the completion.
            assert (
                chunks[-1]["usage"]["prompt_tokens"] == 105
                and chunks[-1]["usage"]["completion_tokens"] == 10
            )
            assert chat.text.rstrip().endswith("data: [DONE]")

            claude = client.post(
                "/messages",
                json={
                    "stream": True,
                    "tools": [{"name": "Bash"}],
                    "messages": [{"role": "user", "content": "go"}],
                },
            )
            events = sse(claude)
            assert events[0]["message"]["usage"] == {
                "input_tokens": 70,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 30,
                "output_tokens": 1,
            }
            start = next(e for e in events if e["type"] == "content_block_start")
            assert start["content_block"]["name"] == "Bash"
            assert (
                events[-2]["delta"]["stop_reason"] == "tool_use"
                and events[-2]["usage"]["output_tokens"] == 10
            )

            answered = [
                {"type": "function_call", "call_id": "c1"},
                {"type": "function_call_output", "call_id": "c1", "output": "x"},
            ]
            codex = client.post(
                "/responses",
                json={
                    "stream": True,
                    "tools": [{"type": "function", "name": "exec_command"}],
                    "input": answered,
                },
            )
            events = sse(codex)
            assert [e["type"] for e in events][:2] == [
                "response.created",
                "response.output_item.added",
            ]
            assert (
                events[1]["item"]["type"] == "reasoning"
            )  # the thinking, as a reasoning summary
            done = events[-1]["response"]
            assert done["output"][-1]["content"][0]["text"] == "Done."
            assert done["usage"]["input_tokens"] == 105 and done["usage"][
                "output_tokens_details"
            ] == {"reasoning_tokens": 3}
        assert (
            len(model.chat_requests()) == 1
            and len(model.messages()) == 1
            and len(model.responses()) == 1
        )
        assert [r.reply for r in model.requests] == [
            "tool_call bash",
            "tool_call Bash",
            "text",
        ]


def test_a_shell_reply_calls_whichever_shell_tool_the_agent_offers():
    with (
        FakeModelServer(Shell("pwd")) as model,
        httpx.Client(base_url=model.base_url, timeout=5) as client,
    ):
        offered = client.post(
            "/responses",
            json={"tools": [{"type": "function", "name": "shell"}], "input": []},
        ).json()
        assert json.loads(offered["output"][0]["arguments"]) == {
            "command": ["bash", "-lc", "pwd"]
        }
        fallback = client.post("/responses", json={"input": []}).json()
        assert fallback["output"][0]["name"] == "exec_command"
        message = client.post("/messages", json={"messages": []}).json()
        assert message["content"][0] == {"type": "tool_use", "id": message["content"][0]["id"], "name": "Bash",
                                         "input": {"command": "pwd", "description": "Run the command"}}  # fmt: skip


def test_failures_are_shaped_as_each_vendors_errors_and_models_are_listed():
    with (
        FakeModelServer(Fail(529, "overloaded"), model="my-model") as model,
        httpx.Client(base_url=model.base_url, timeout=5) as client,
    ):
        assert client.get("/models").json()["data"][0]["id"] == "my-model"
        assert (
            httpx.head(model.url, timeout=5).status_code == 200
        )  # Claude Code's probe
        chat = client.post("/chat/completions", json={"messages": []})
        assert chat.status_code == 529 and chat.json()["error"] == {
            "message": "overloaded",
            "type": "server_error",
            "param": None,
            "code": None,
        }
        claude = client.post("/messages", json={"messages": []})
        assert claude.json() == {
            "type": "error",
            "error": {"type": "api_error", "message": "overloaded"},
        }
        assert client.post("/nowhere", json={}).status_code == 404


def test_steps_follow_each_conversation_in_any_apis_shape():
    assert (
        tool_results(
            {
                "messages": [
                    {"role": "tool"},
                    {
                        "role": "user",
                        "content": [{"type": "tool_result"}, {"type": "text"}],
                    },
                ]
            }
        )
        == 2
    )
    assert (
        tool_results({"input": [{"type": "function_call_output"}, {"type": "message"}]})
        == 1
    )
    script = tool_then_text(command="pwd")
    assert isinstance(script({"messages": []}), Shell)
    assert script({"input": [{"type": "function_call_output"}] * 5}) == Text(
        "Done: the command printed hello."
    )


# -- the YAML script -----------------------------------------------------------------------


def test_the_default_script_and_a_full_script_file(tmp_path):
    script, model = parse_script(
        __import__("yaml").safe_load(DEFAULT_SCRIPT), "default"
    )
    assert model == "fake" and isinstance(script({"messages": []}), Shell)
    path = tmp_path / "script.yaml"
    path.write_text(
        textwrap.dedent("""\
        replies:
          - tool: read
            arguments: {filePath: notes.txt}
            usage: {input: 1, output: 2, cache_read: 3, cache_write: 4, reasoning: 5}
          - fail: 503
            message: busy
            delay_s: 0.5
          - text: bye
            thinking: hmm
    """)
    )
    script, model = load_script(path)
    assert model is None
    assert script({"messages": []}) == ToolCall(
        "read", {"filePath": "notes.txt"}, usage=Usage(1, 2, 3, 4, 5)
    )
    assert script({"messages": [{"role": "tool"}]}) == Fail(503, "busy", delay_s=0.5)
    assert script({"messages": [{"role": "tool"}] * 9}) == Text("bye", thinking="hmm")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("replies: []", "replies: expected a non-empty list of replies"),
        (
            "replies: [{text: a, shell: b}]",
            "replies[0]: expected exactly one of text, shell, tool, fail (got text, shell)",
        ),
        (
            "replies: [{text: a, arguments: {}}]",
            "replies[0]: unknown key(s) arguments for a `text` reply",
        ),
        (
            "replies: [{shell: ls, usage: {input: -1}}]",
            "replies[0].usage.input: expected a whole number >= 0, got -1",
        ),
        (
            "replies: [{shell: ls, usage: {tokens: 1}}]",
            "replies[0].usage: unknown key(s) tokens",
        ),
        (
            "replies: [{fail: 200}]",
            "replies[0].fail: expected an HTTP error status (400-599), got 200",
        ),
        (
            "replies: [{tool: x, arguments: [1]}]",
            "replies[0].arguments: expected a mapping",
        ),
        ("reply: []", "unknown key(s) reply; expected `model` and `replies`"),
        (
            "replies: [{text: a, delay_s: .inf}]",
            "replies[0].delay_s: expected seconds between 0 and 3600",
        ),
        ("replies: [", "not valid YAML"),
    ],
)
def test_a_bad_script_is_one_line_naming_the_file_and_field(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_script(path)
    assert (
        str(caught.value).startswith(f"{path}: ")
        and message in str(caught.value)
        and "\n" not in str(caught.value)
    )


# -- the command ---------------------------------------------------------------------------


def _ctrl_c_reaches_it() -> None:
    # A suite started in the background (`pytest ... &`) ignores Ctrl-C, and a child
    # inherits that: Python would then install no handler, and `stop` could not end it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_fake_model(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    """``profiler fake-model --port 0 ARGS`` and the URL it printed."""
    process = subprocess.Popen(
        [*PROFILER, "fake-model", "--port", "0", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_reaches_it,
    )
    line = process.stdout.readline()
    found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
    if not found:
        process.kill()
        raise AssertionError(f"no URL in {line!r}: {process.stderr.read()}")
    return process, found.group(1)


def stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C the command by its PID; its remaining output (killed, and the test failed,
    when Ctrl-C does not end it)."""
    process.send_signal(signal.SIGINT)
    try:
        return process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(
            f"Ctrl-C did not end fake-model in 20 s: {err[-400:]!r}"
        ) from None


def test_the_command_serves_a_script_file_logs_each_answer_and_stops_on_ctrl_c(
    tmp_path,
):
    script = tmp_path / "fake-model.yaml"
    script.write_text("model: tiny\nreplies:\n  - text: 'Done: yes.'\n")
    process, url = start_fake_model(str(script), cwd=tmp_path)
    try:
        answer = httpx.post(
            f"{url}/v1/chat/completions", json={"messages": []}, timeout=5
        ).json()
        assert (
            answer["model"] == "tiny"
            and answer["choices"][0]["message"]["content"] == "Done: yes."
        )
    finally:
        _, err = stop(process)
    assert (
        process.returncode in (0, 130)
        and "/v1/chat/completions -> text" in err
        and "Traceback" not in err
    )


def test_the_command_refuses_a_bad_script_and_a_busy_port_in_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("replies: [{text: 1}]")
    out = subprocess.run(
        [*PROFILER, "fake-model", str(bad)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        out.returncode == 1
        and out.stderr.strip()
        == f"Error: {bad}: replies[0].text: expected a string, got 1"
    )
    with FakeModelServer() as busy:
        out = subprocess.run(
            [*PROFILER, "fake-model", "--port", str(busy.port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (
        out.returncode == 1
        and len(out.stderr.splitlines()) == 1
        and "cannot listen" in out.stderr
    )


# -- profiler init --agent ------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["opencode", "claude-code", "codex"])
def test_init_agent_writes_a_valid_profile_pointing_at_the_fake_model(tmp_path, agent):
    runner = CliRunner()
    done = runner.invoke(
        cli, ["init", "--agent", agent, str(tmp_path / "a"), "--port", "9123"]
    )
    assert done.exit_code == 0, done.output
    assert (
        f"profiler fake-model {tmp_path / 'a' / 'fake-model.yaml'} --port 9123"
        in done.output
    )
    profile = (tmp_path / "a" / "profile.yaml").read_text()
    assert "127.0.0.1:9123" in profile and f"id: {agent}" in profile
    load_script(tmp_path / "a" / "fake-model.yaml")
    valid = runner.invoke(cli, ["validate", str(tmp_path / "a" / "profile.yaml")])
    assert valid.exit_code == 0, valid.output
    again = runner.invoke(cli, ["init", "--agent", agent, str(tmp_path / "a")])
    assert again.exit_code == 1 and "already has" in again.output


def test_init_port_without_agent_is_a_usage_error(tmp_path):
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--port", "1"])
    assert done.exit_code == 2 and "--port goes with --agent" in done.output


# -- finding and installing the agent programs ---------------------------------------------------


def fake_program(folder: Path, name: str) -> Path:
    """An executable file ``folder/node_modules/.bin/name``."""
    path = folder / "node_modules" / ".bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho fake\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_programs_are_found_in_a_parents_agents_folder_then_the_cache(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("PROFILER_AGENTS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "project"
    nested = project / "a" / "b"
    nested.mkdir(parents=True)
    local = fake_program(project / ".agents", "opencode")
    # (a name the checkout's own .agents/ cannot have)
    cached = fake_program(
        tmp_path / "cache" / "agent-profiler" / "agents", "cached-agent"
    )
    assert agents.find_installed("opencode", cwd=nested) == str(local)
    assert agents.find_installed("cached-agent", cwd=nested) == str(cached)
    assert agents.search_dirs(nested)[0] == nested / ".agents" / "node_modules" / ".bin"
    # $PROFILER_AGENTS_DIR is the one folder searched.
    monkeypatch.setenv("PROFILER_AGENTS_DIR", str(tmp_path / "only"))
    assert agents.find_installed("opencode", cwd=nested) is None
    assert agents.search_dirs(nested) == [tmp_path / "only" / "node_modules" / ".bin"]


def test_a_provider_runs_the_program_found_in_the_agent_folder(tmp_path, monkeypatch):
    from profiler_core.providers._agent_process import find_binary

    monkeypatch.setenv("PROFILER_AGENTS_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CODEX_BIN", raising=False)
    program = fake_program(tmp_path, "codex")
    assert find_binary(None, "CODEX_BIN", "codex", "hint") == str(program)
    program.unlink()
    with pytest.raises(
        ConfigError, match="codex not found .*`profiler agents install`"
    ):
        find_binary(None, "CODEX_BIN", "codex", "hint")


def test_agents_install_runs_npm_with_the_pinned_packages_into_the_cache(tmp_path):
    log = tmp_path / "npm-args"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    # A stand-in npm: records its arguments and creates the programs where npm would.
    npm.write_text(
        textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" > {log}
        mkdir -p "$3/node_modules/.bin"
        for p in opencode claude codex; do printf '#!/bin/sh\\n' > "$3/node_modules/.bin/$p"; chmod +x "$3/node_modules/.bin/$p"; done
    """)
    )
    npm.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PROFILER_AGENTS_DIR": str(tmp_path / "agents"),
    }
    done = subprocess.run(
        [*PROFILER, "agents", "install"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    args = log.read_text().split()
    assert (
        args[:3] == ["install", "--prefix", str(tmp_path / "agents")]
        and args[-len(npm_packages()) :] == npm_packages()
    )
    listed = subprocess.run(
        [*PROFILER, "agents", "list"],
        cwd=tmp_path,
        env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    for program in ("opencode", "claude", "codex"):
        assert (
            str(tmp_path / "agents" / "node_modules" / ".bin" / program)
            in listed.stdout
        )
    env["PATH"] = "/nonexistent"
    missing = subprocess.run(
        [*PROFILER, "agents", "install", "codex"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1 and missing.stderr.startswith("Error: npm not found")


def test_ci_installs_the_registrys_pinned_versions_and_pins_none_of_its_own():
    script = (ROOT / ".ci" / "install-agents").read_text()
    assert "config/agents.toml" in script and not re.findall(r"@\d+\.\d+", script)
    # The script's own reading of the table (stdlib only: it runs before the venv
    # exists) gives the registry's packages.
    snippet = script.split("<<'PY'\n", 1)[1].split("\nPY\n", 1)[0]
    done = subprocess.run(
        [sys.executable, "-", "packages"],
        input=snippet,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.split() == npm_packages()

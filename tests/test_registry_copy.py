"""One row added to a copy of the registry of agents ($PROFILER_AGENTS_FILE) reaches every part
that names agents: the fake model, the importers, the acp provider, `agents list` (issue 39)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from tests.test_fakemodel import start_fake_model, stop

from profiler_core.config.agents import APIS, REGISTRY_ENV, parse_registry, registry
from profiler_core.errors import ConfigError
from profiler_core.fakemodel import Shell
from profiler_core.importers import check_format
from profiler_core.providers.acp import AcpProvider
from profiler_core.wire import WireRecorder

PROFILER = [sys.executable, "-m", "profiler_core"]
BUILT_IN = (
    Path(__file__).resolve().parent.parent
    / "src"
    / "profiler_core"
    / "config"
    / "agents.toml"
)
ROLLOUT = next(
    (Path(__file__).parent / "fixtures" / "realworld" / "codex").glob("rollout-*.jsonl")
)

#: an agent the built-in table does not know: first in the copy, so its shell tool is the one
#: the fake model calls for an OpenAI chat request offering none it knows
TOY = """\
[agents.toy-agent]
program = "toy-agent-program"
package = ""
version = ""
binary_env = "TOY_AGENT_BIN"
provider = "acp"
importer = "codex"
acp = ["toy-agent-program", "--acp"]
api = "openai-chat"
endpoint = "OPENAI_BASE_URL"
confine = "execution.sandbox confines the program"
model = "toy-model"
shell = [{tool = "run_shell", arguments = {script = "{command}", timeout = 30}}]

"""


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """The built-in table with the toy row first, named by $PROFILER_AGENTS_FILE."""
    path = tmp_path / "agents.toml"
    path.write_text(TOY + BUILT_IN.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv(REGISTRY_ENV, str(path))
    return path


def test_a_row_of_the_copy_reaches_the_fake_model(copy, tmp_path):
    assert next(iter(registry())) == "toy-agent"
    process, url = start_fake_model(
        cwd=tmp_path
    )  # `profiler fake-model`, reading the copy
    try:
        with httpx.Client(base_url=f"{url}/v1", timeout=10) as client:
            offered = client.post(
                "/chat/completions",
                json={
                    "messages": [],
                    "tools": [{"type": "function", "function": {"name": "run_shell"}}],
                },
            ).json()
            fallback = client.post("/chat/completions", json={"messages": []}).json()
    finally:
        stop(process)
    call = offered["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "run_shell"
    # The default script's shell command, in the arguments the row gives.
    assert json.loads(call["arguments"]) == {"script": "echo hello", "timeout": 30}
    # A request offering no known shell tool: the first openai-chat agent of the copy's.
    assert (
        fallback["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
        == "run_shell"
    )


def test_the_built_in_table_still_gives_each_api_its_agents_shell_tool(
    tmp_path, monkeypatch
):
    from profiler_core.fakemodel import FakeModelServer

    monkeypatch.delenv(REGISTRY_ENV, raising=False)
    with (
        FakeModelServer(Shell("pwd")) as model,
        httpx.Client(base_url=model.base_url, timeout=5) as client,
    ):
        chat = client.post("/chat/completions", json={"messages": []}).json()
        responses = client.post("/responses", json={"input": []}).json()
    assert chat["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"
    assert (responses["output"][0]["name"], responses["output"][0]["arguments"]) == (
        "exec_command",
        '{"cmd": "pwd"}',
    )


def test_a_row_of_the_copy_reaches_the_importers(copy, tmp_path):
    assert check_format("toy-agent") == "codex"
    done = subprocess.run(
        [*PROFILER, "import", "toy-agent", str(ROLLOUT), "--out", "rows.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = [
        json.loads(line)
        for line in (tmp_path / "rows.jsonl").read_text().splitlines()
        if line.strip()
    ]
    assert row.get("error") is None and row["tokens"]["total"] > 0
    unknown = subprocess.run(
        [*PROFILER, "import", "toy", str(ROLLOUT), "--out", "x.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert unknown.returncode != 0
    assert "(or an agent: toy-agent, opencode-acp" in unknown.stderr


def test_a_row_of_the_copy_reaches_the_acp_provider_and_agents_list(copy, tmp_path):
    # Its ACP command comes from the row: the program is looked for, and named when missing.
    with pytest.raises(
        ConfigError,
        match=r"^provider 'acp': the ACP agent's program 'toy-agent-program' was not found",
    ):
        AcpProvider(agent="toy-agent")
    listed = subprocess.run(
        [*PROFILER, "agents", "list", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    toy = json.loads(listed.stdout.splitlines()[0])
    assert (toy["name"], toy["importer"], toy["api"]) == (
        "toy-agent",
        "codex",
        "openai-chat",
    )


def test_the_wire_recorder_takes_the_registry_apis():
    for api in APIS:
        WireRecorder("http://127.0.0.1:9", api=api).close()
    with pytest.raises(
        ConfigError,
        match=r"^wire: api: expected one of openai-chat, openai-responses, anthropic, got 'grpc'$",
    ):
        WireRecorder("http://127.0.0.1:9", api="grpc")


def test_a_bad_copy_or_a_bad_shell_column_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(REGISTRY_ENV, str(tmp_path / "missing.toml"))
    done = subprocess.run(
        [*PROFILER, "agents", "list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"Error: ${REGISTRY_ENV}: cannot read ") and (
        "missing.toml" in line
    )
    bad = TOY.replace("{tool = ", "{name = ")
    with pytest.raises(
        ConfigError,
        match=r"^x.toml: agents.toy-agent.shell\[0\]: expected a list of tables "
        r"\{tool = \"...\", arguments = \{...\}\}$",
    ):
        parse_registry(bad, where="x.toml")
    dated = TOY.replace("timeout = 30", "at = 1979-05-27")
    with pytest.raises(
        ConfigError,
        match=r"^x.toml: agents.toy-agent.shell\[0\].arguments: expected strings",
    ):
        parse_registry(dated, where="x.toml")


def test_a_copy_with_no_shell_tool_for_an_api_is_an_answer_naming_it(
    tmp_path, monkeypatch
):
    from profiler_core.fakemodel import FakeModelServer

    path = tmp_path / "agents.toml"
    path.write_text(TOY.replace("shell = [", "# shell = ["), encoding="utf-8")
    monkeypatch.setenv(REGISTRY_ENV, str(path))
    with (
        FakeModelServer(Shell("pwd")) as model,
        httpx.Client(base_url=model.base_url, timeout=5) as client,
    ):
        answer = client.post("/chat/completions", json={"messages": []})
    assert answer.status_code == 500
    assert answer.json()["error"]["message"] == (
        "fake model: no agent of the registry that calls openai-chat has a shell tool"
    )


def test_a_row_of_the_copy_names_a_shell_tool_the_trace_builder_counts_as_shell(copy):
    from profiler_core.traces.categories import tool_category

    assert tool_category("run_shell") == "shell"  # the toy row's own shell tool
    assert tool_category("Bash") == "shell"  # the built-in table's names still hold
    assert tool_category("no_such_tool") == "other"


def test_without_the_copy_a_toy_shell_tool_is_other():
    from profiler_core.traces.categories import tool_category

    assert tool_category("run_shell") == "other"

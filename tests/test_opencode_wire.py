"""OpenCode behind the wire recorder: each concurrent session's calls are its own, and
the server holds no key.

The real opencode against the scripted model, through ``profiler run``: two
scenarios prompt the mode's one server at the same time, each scripted with
token usage of its own; each row's wire tokens equal that session's own
report. The server is given a placeholder key while the model receives the
real one, from the recorder.
"""

from __future__ import annotations

import json
import os

import pytest
from tests.binaries import agent_binary
from tests.opencode_helpers import ProfilerRun, model_config, read_rows, write_profile

from profiler_core.fakemodel import FakeModelServer, Shell, Text, Usage
from profiler_core.fakemodel.replies import tool_results
from profiler_core.providers._agent_process import WIRE_PLACEHOLDER_KEY

pytestmark = pytest.mark.slow

#: each scenario's usage per model call: told apart only if each session's calls are its own
USAGE = {"ALPHA": Usage(input=100, output=10), "BETA": Usage(input=300, output=30)}
REAL_KEY = "sk-real-opencode-key-0123456789abcdef"


def _scenario(body: dict) -> str:
    text = json.dumps(body.get("messages") or [])
    return "BETA" if "BETA-TASK" in text else "ALPHA"


def script(body: dict):
    """A shell call after three seconds, then a text after one, at the scenario's usage.

    The first answer is slow so that the two sessions overlap even when one starts
    seconds after the other (a loaded CI machine started them 1 s apart once, and the
    test's own check that they overlapped failed)."""
    usage = USAGE[_scenario(body)]
    if tool_results(body) == 0:
        return Shell("echo hello", usage=usage, delay_s=3.0)
    return Text("Done: hello.", usage=usage, delay_s=1.0)


def _second_scenario(folder) -> None:
    first = json.loads((folder / "scenarios" / "echo-hello.json").read_text())
    second = {
        **first,
        "id": "echo-beta",
        "name": "Echo beta",
        "prompt": "BETA-TASK: " + first["prompt"],
    }
    (folder / "scenarios" / "echo-beta.json").write_text(json.dumps(second))


def test_two_concurrent_sessions_on_one_server_each_get_their_own_wire_calls(
    tmp_path,
):
    binary = agent_binary("opencode", "OPENCODE_BIN")
    with FakeModelServer(script) as model:
        config = model_config(model.base_url)
        # The key is named, not written: the recorder resolves it, the server gets the placeholder.
        config["provider"]["local"]["options"]["apiKey"] = "{env:LOCAL_MODEL_KEY}"
        profile = write_profile(
            tmp_path,
            model.base_url,
            binary,
            options={"config": config, "workdir_per_session": True},
            execution={"repetitions": 1, "concurrency": 2},
        )
        _second_scenario(tmp_path)
        run = ProfilerRun(
            ["run", str(profile), "--no-report"],
            cwd=tmp_path,
            env={"LOCAL_MODEL_KEY": REAL_KEY},
        )
        code, _, err = run.wait()
        requests = [r for r in model.requests if r.path.endswith("/chat/completions")]
    assert code == 0, err
    rows = {row["scenarioId"]: row for row in read_rows(tmp_path)}
    assert sorted(rows) == ["echo-beta", "echo-hello"]
    # The sessions did prompt at the same time (else this proves nothing).
    alpha = [r for r in requests if _scenario(r.body) == "ALPHA"]
    beta = [r for r in requests if _scenario(r.body) == "BETA"]
    assert alpha and beta
    assert min(r.ended or 0 for r in alpha) > min(r.started for r in beta)
    assert min(r.ended or 0 for r in beta) > min(r.started for r in alpha)
    for scenario, name in (("echo-hello", "ALPHA"), ("echo-beta", "BETA")):
        row = rows[scenario]
        assert row["success"], row.get("error")
        wire = row["extensions"].get("wire")
        assert wire is not None, f"{scenario}: no wire calls attributed"
        usage = USAGE[name]
        assert wire["calls"] == 2
        assert wire["tokens"]["input"] == 2 * usage.input
        assert wire["tokens"]["output"] == 2 * usage.output
        assert wire["tokens"]["total"] == row["tokens"]["total"]
        assert "mismatch" not in wire
    # The model got the real key from the recorder; the server only ever held the placeholder.
    assert {r.auth for r in requests} == {f"Bearer {REAL_KEY}"}
    assert run.leftovers() == []


def test_the_server_environment_and_config_hold_the_placeholder_not_the_key(
    tmp_path, monkeypatch
):
    from profiler_core.providers.opencode.server import server_environment
    from profiler_core.providers.opencode.wire import point_at, wire_setup

    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_KEY)
    monkeypatch.setenv("COPY_OF_IT", f"prefix-{REAL_KEY}")
    setup = wire_setup({}, "anthropic/claude-x", {})
    assert setup is not None
    assert setup.endpoint == "https://api.anthropic.com/v1" and setup.key == REAL_KEY
    config = point_at(setup.config, "anthropic/claude-x", "http://127.0.0.1:9/s/t/v1")
    options = config["provider"]["anthropic"]["options"]
    assert options == {
        "baseURL": "http://127.0.0.1:9/s/t/v1",
        "apiKey": WIRE_PLACEHOLDER_KEY,
    }
    env = server_environment(tmp_path, config, {"MODE_KEY": REAL_KEY}, key=setup.key)
    assert env["ANTHROPIC_API_KEY"] == WIRE_PLACEHOLDER_KEY
    assert env["COPY_OF_IT"] == env["MODE_KEY"] == WIRE_PLACEHOLDER_KEY
    assert REAL_KEY not in json.dumps(env)
    # A literal key in the config goes to the recorder too; Google's API (not read): not redirected.
    literal = {
        "provider": {"local": {"options": {"baseURL": "http://x/v1", "apiKey": "k"}}}
    }
    assert wire_setup(literal, "local/m", {}).key == "k"  # type: ignore[union-attr]
    assert wire_setup({}, "google/gemini", {}) is None
    # the profiler's own is untouched
    assert os.environ["ANTHROPIC_API_KEY"] == REAL_KEY


def test_the_recorder_splits_one_path_by_the_session_header_and_folds_sub_agents_in():
    import httpx

    from profiler_core.wire import WireRecorder

    reply = Text("ok", usage=Usage(input=10, output=1))
    with FakeModelServer(reply) as model, WireRecorder(model.base_url) as recorder:
        wire = recorder.open()
        wire.key_header, wire.parent_header = "x-session-id", "x-parent-session-id"
        body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}
        sent = [
            {"X-Session-Id": "a"},
            {"X-Session-Id": "b"},
            {"X-Session-Id": "a-child", "x-parent-session-id": "a"},
            {"X-Session-Id": "grandchild", "x-parent-session-id": "a-child"},
            {},
        ]
        for headers in sent:
            answer = httpx.post(
                f"{wire.base_url}/chat/completions", json=body, headers=headers
            )
            assert answer.status_code == 200
        assert wire.keyed() and len(wire.snapshot()) == 5
        # its own, its sub-agent's, and that one's
        assert len(wire.calls_of("a")) == 3
        assert len(wire.calls_of("b")) == 1
        assert wire.calls_of("nobody") == ()


@pytest.mark.xdist_group("containers")
@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_opencode_in_a_container_holds_no_key_docker_inspect_could_show(
    tmp_path, tmp_path_factory, kind
):
    import subprocess
    from contextlib import nullcontext

    import trio
    from tests.opencode_helpers import START_TIMEOUT_S
    from tests.sandbox_runtimes import docker_daemon, require

    from profiler_core import CreateSessionParams, PermissionConfig, ProviderConfig
    from profiler_core.fakemodel import tool_then_text
    from profiler_core.providers.opencode import OpenCodeProvider
    from profiler_core.sandbox import SandboxSettings

    binary = agent_binary("opencode", "OPENCODE_BIN")
    runtime = require(kind)
    settings = SandboxSettings(sandbox=kind, network="model")
    seen: dict[str, object] = {}

    async def main(model: FakeModelServer) -> None:
        config = model_config(model.base_url)
        config["provider"]["local"]["options"]["apiKey"] = REAL_KEY  # written literally
        provider = OpenCodeProvider(binary=str(binary))
        await provider.init(ProviderConfig(
            model="local/scripted", mode="m", permissions=PermissionConfig(auto_approve=True),
            workdir=str(tmp_path), sandbox=settings, environment={"MODE_TOKEN_COPY": REAL_KEY},
            options={"binary": str(binary), "start_timeout_s": START_TIMEOUT_S, "config": config},
        ))  # fmt: skip
        try:
            handle = await provider.create_session(CreateSessionParams(
                system_instructions="s", scenario_id="k", iteration=0, mode="m",
                model="local/scripted", workspace=str(tmp_path),
            ))  # fmt: skip
            assert provider.server is not None
            name = provider.server.confinement.containers[0]
            seen["inspect"] = await trio.to_thread.run_sync(
                lambda: subprocess.run(
                    [runtime, "inspect", name], capture_output=True, text=True
                )
            )
            seen["result"] = await provider.prompt(handle, "Go.", timeout_ms=60_000)
            await provider.destroy_session(handle)
        finally:
            await provider.shutdown()

    with (
        docker_daemon(tmp_path_factory.mktemp("d"))
        if kind == "docker"
        else nullcontext(),
        FakeModelServer(tool_then_text()) as model,
    ):
        trio.run(main, model)
        auths = {r.auth for r in model.requests if r.path.endswith("/chat/completions")}
    inspected = seen["inspect"]
    assert inspected.returncode == 0, inspected.stderr  # type: ignore[attr-defined]
    assert REAL_KEY not in inspected.stdout  # type: ignore[attr-defined]
    assert WIRE_PLACEHOLDER_KEY in inspected.stdout  # type: ignore[attr-defined]
    assert seen["result"].completion_reason == "stop"  # type: ignore[attr-defined]
    assert auths == {
        f"Bearer {REAL_KEY}"
    }  # the model got the real one, from the recorder

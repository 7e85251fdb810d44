"""The pieces of running an agent program inside a trial that need no container: which
runs are trials,
which program starts inside, what is mounted, which network the agent gets, and the
model relay's plan."""

from __future__ import annotations

import os
import platform
import types
from pathlib import Path

import pytest

from profiler_core.errors import ConfigError, SandboxError
from profiler_core.model import SandboxSettings
from profiler_core.providers.in_trial import native_program, program_mounts
from profiler_core.runner.outcome import IterationError
from profiler_core.runner.trial import Trials, phase_networks


class _Agent:
    """A subprocess agent as the runner sees it: it runs in trials and asks for its
    program and model."""

    id = "claude-code"
    runs_in_trial = True

    def trial_needs(self, mode):
        return (), ("http://127.0.0.1:9/",)


def _task() -> types.SimpleNamespace:
    return types.SimpleNamespace(id="task", environment=types.SimpleNamespace())


def _trials(sandbox: str, persistent: bool = True) -> Trials:
    from profiler_core.model import EnvironmentCapabilities

    kind = types.SimpleNamespace(
        capabilities=EnvironmentCapabilities(persistent_processes=persistent)
    )
    return Trials(kind, SandboxSettings(sandbox=sandbox), Path("/nonexistent"), "r")


@pytest.mark.parametrize(
    ("sandbox", "persistent", "trial"),
    [
        ("docker", True, True),
        ("podman", True, True),
        ("bwrap", True, True),
        # a bwrap trial without nsenter, setpriv, setsid or slirp4netns: a sandbox per
        # command, so the agent's program stays beside it
        ("bwrap", False, False),
        # a plugin's kind: the program runs through the contract's exec
        ("cloudbox", True, True),
        ("cloudbox", False, True),
    ],
)
def test_which_trials_an_agent_program_runs_inside(sandbox, persistent, trial):
    assert _trials(sandbox, persistent).applies(_task(), _Agent()) is trial


def test_a_plugins_kind_still_refuses_a_scenario_without_an_environment():
    trials = _trials("cloudbox")
    plain = types.SimpleNamespace(id="plain", environment=None)
    with pytest.raises(
        IterationError, match="runs tasks with an environment of their own"
    ):
        trials.applies(plain, _Agent())


def test_the_agents_model_keeps_the_model_network_and_no_model_means_none():
    scenario = types.SimpleNamespace(
        environment=types.SimpleNamespace(network=None), verify=()
    )
    settings = SandboxSettings(sandbox="docker", network="model")
    assert phase_networks(settings, scenario, ("http://127.0.0.1:9",)) == (
        "model",
        "full",
    )
    assert phase_networks(settings, scenario) == ("none", "full")


def test_codex_starts_its_native_program_not_the_node_launcher(tmp_path):
    modules = tmp_path / "node_modules"
    launcher = modules / "@openai" / "codex" / "bin" / "codex.js"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("#!/usr/bin/env node\n")
    platforms = {platform.machine(): ("@openai/codex-linux-x", "x-linux-musl")}
    with pytest.raises(ConfigError, match="native program .* was not found beside it"):
        native_program(str(launcher), "codex", platforms)
    native = (
        modules
        / "@openai"
        / "codex-linux-x"
        / "vendor"
        / "x-linux-musl"
        / "bin"
        / "codex"
    )
    native.parent.mkdir(parents=True)
    native.write_text("")
    native.chmod(0o755)
    link = tmp_path / "codex"
    os.symlink(launcher, link)
    assert native_program(str(link), "codex", platforms) == str(native)
    # a program that is not a Node launcher is itself, by its real path
    assert native_program(str(native), "codex", platforms) == str(native)


def test_the_whole_node_modules_of_an_npm_install_is_mounted_read_only(tmp_path):
    program = tmp_path / "x" / "node_modules" / "@a" / "b" / "bin" / "b.exe"
    (mount,) = program_mounts(str(program))
    assert (mount.source, mount.target, mount.read_only) == (
        str(tmp_path / "x" / "node_modules"),
        str(tmp_path / "x" / "node_modules"),
        True,
    )
    (plain,) = program_mounts("/opt/tool/bin/tool")
    assert plain.source == "/opt/tool/bin"


def test_the_model_relay_forwards_loopback_endpoints_and_refuses_plain_remote_http():
    from profiler_core.environments.model_relay import ModelRelay

    relay = ModelRelay(("http://127.0.0.1:4321/s/token/v1",), ())
    assert [(f.port, f.host) for f in relay.plan.forwards] == [(4321, "127.0.0.1")]
    assert relay.environment() == {}  # no proxy without a remote host
    remote = ModelRelay(("https://api.example.com/v1",), ())
    assert remote.environment()["HTTPS_PROXY"].startswith("http://127.0.0.1:")
    with pytest.raises(SandboxError, match="must be https"):
        ModelRelay(("http://models.example.com/v1",), ())
    with pytest.raises(SandboxError, match="needs a model endpoint"):
        ModelRelay((), ())

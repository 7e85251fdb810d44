"""Execution environments as a plugin contract: the built-ins pass the contract kit on
real trials; bad kinds are one line.

Each built-in (``none``, ``bwrap``, ``docker``, ``podman``) is registered
through ``profiler_register_environments`` and driven by
``profiler_core.testing.check_environment``: a command's exit status and
streamed output, a timeout that ends it, ``put`` replacing a folder, ``get``
keeping a link a link, a process outliving its command where declared.
"""

from __future__ import annotations

import subprocess

import pytest
from tests.sandbox_runtimes import containers_named, require

from profiler_core.errors import SandboxError
from profiler_core.model import (
    EnvironmentCapabilities,
    ExecResult,
    SandboxSettings,
    TrialSpec,
)
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.testing import ContractError, check_environment


def _factory(kind: str):
    return (
        get_plugin_manager(entrypoints=False).registry.get("environments", kind).factory
    )


def test_the_built_ins_are_registered_through_the_hook():
    registry = get_plugin_manager(entrypoints=False).registry
    assert sorted(registry.ids("environments")) == ["bwrap", "docker", "none", "podman"]
    assert (
        registry.get("environments", "docker").plugin == "core.environments.containers"
    )


def test_none_passes_the_contract_kit():
    assert check_environment(_factory("none")) is None


def test_bwrap_passes_the_contract_kit():
    require("bwrap")
    assert check_environment(_factory("bwrap")) is None


@pytest.mark.slow
@pytest.mark.xdist_group("containers")
@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_container_kinds_pass_the_contract_kit(kind):
    require(kind)
    from profiler_core.environments.containers import wait_removed

    assert check_environment(_factory(kind)) is None
    wait_removed()  # stop() removes in the background, off the trial's path
    assert not containers_named(kind, "profiler-contract"), (
        "the trial's container was left behind"
    )
    networks = subprocess.run(
        [kind, "network", "ls", "--format", "{{.Name}}"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "profiler-contract" not in networks


class _Merges:
    """An environment whose ``put`` merges into a folder (the rule the kit must catch)."""

    id = "merges"
    capabilities = EnvironmentCapabilities()

    def check(self):
        return None

    def start(self, spec):
        from profiler_core.environments.local import HostEnvironment

        trial = HostEnvironment().start(spec)
        real_put = trial.put

        def put(local, remote):
            import shutil

            target = trial._host_path(remote)
            if target.is_dir():
                shutil.copytree(
                    local, target, dirs_exist_ok=True
                )  # merged: the old file stays
            else:
                real_put(local, remote)

        trial.put = put
        return trial


class _Unusable:
    id = "unusable"

    def check(self):
        return "execution.sandbox: unusable: its daemon is down"

    def start(self, spec):
        raise AssertionError("never started when check() says it cannot run")


def test_the_kit_catches_a_put_that_merges():
    with pytest.raises(
        ContractError, match="environment 'merges': put must replace a folder"
    ):
        check_environment(_Merges)


def test_the_kit_returns_the_line_of_an_unusable_kind_and_starts_nothing():
    assert (
        check_environment(_Unusable)
        == "execution.sandbox: unusable: its daemon is down"
    )


def test_settings_accept_a_plugin_kind_and_refuse_a_bad_name_in_one_line():
    assert SandboxSettings(sandbox="my-sandbox").sandbox == "my-sandbox"
    with pytest.raises(
        SandboxError,
        match=r"^execution.sandbox: expected one of none, bwrap, docker, podman or a "
        r"plugin's environment id, got 'No Way'$",
    ):
        SandboxSettings(sandbox="No Way")
    with pytest.raises(
        SandboxError,
        match=r"^execution.pull: expected one of never, missing, always, got 'sometimes'$",
    ):
        SandboxSettings(pull="sometimes")


def test_an_unknown_kind_is_one_line_listing_the_known_ones():
    from profiler_core.runner.run import check_run_sandbox

    with pytest.raises(SandboxError) as caught:
        check_run_sandbox(
            SandboxSettings(sandbox="lxc"), get_plugin_manager(entrypoints=False)
        )
    assert (
        str(caught.value)
        == "execution.sandbox: expected one of bwrap, docker, none, podman, got 'lxc'"
    )


def test_providers_get_the_settings_typed():
    import typing

    from profiler_core.model import CreateSessionParams, ProviderConfig

    for record in (ProviderConfig, CreateSessionParams):
        hints = typing.get_type_hints(record, localns={"Environment": object})
        assert hints["sandbox"] == (SandboxSettings | None)


def test_a_host_trial_keeps_its_files_inside_its_folder(tmp_path):
    from profiler_core.environments.local import HostEnvironment

    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "a.txt").write_text("a")
    trial = HostEnvironment().start(TrialSpec(root=str(tmp_path / "task")))
    try:
        assert (trial.work / "a.txt").read_text() == "a"
        with pytest.raises(SandboxError, match="outside the trial's folder"):
            trial.put(tmp_path / "task", "/tests")
        import trio

        done = trio.run(
            lambda: trial.exec(["sh", "-c", "cat a.txt; exit 4"], timeout_s=10)
        )
        assert (
            isinstance(done, ExecResult) and done.exit_code == 4 and done.output == "a"
        )
    finally:
        trial.stop()
    assert not trial.folder.exists()


def _policy(mode, hosts=()):
    import types

    return types.SimpleNamespace(mode=mode, allowed_hosts=hosts)


@pytest.mark.parametrize(
    ("profile", "task", "agent_policy", "verifier_policy", "override", "expected"),
    [
        # Harbor's default: a public environment; the verifier inherits it whatever the agent gets
        ("model", None, None, None, None, ("none", "full")),
        ("full", None, None, None, None, ("full", "full")),
        # allow_internet = false: both phases closed
        ("full", "no-network", None, None, None, ("none", "none")),
        # [agent] narrows the agent only; [verifier] its own policy
        ("full", None, "no-network", None, None, ("none", "full")),
        ("full", None, None, "no-network", None, ("full", "none")),
        # the profile closes the verifier for a run
        ("full", None, None, None, "none", ("full", "none")),
    ],
)
def test_networks_per_phase_follow_harbors_rules(
    profile, task, agent_policy, verifier_policy, override, expected
):
    import types

    from profiler_core.runner.trial import phase_networks

    environment = types.SimpleNamespace(network=_policy(task) if task else None)
    verifier = types.SimpleNamespace(
        policy=_policy(verifier_policy) if verifier_policy else None
    )
    scenario = types.SimpleNamespace(
        environment=environment,
        agent_policy=_policy(agent_policy) if agent_policy else None,
        verify=(verifier,),
    )
    settings = SandboxSettings(
        sandbox="docker", network=profile, verifier_network=override
    )
    assert phase_networks(settings, scenario) == expected


def test_a_template_without_its_host_variable_is_one_setup_line(monkeypatch):
    import types

    from profiler_core.runner.outcome import IterationError
    from profiler_core.runner.trial import trial_spec

    monkeypatch.delenv("I37_SURELY_UNSET", raising=False)
    env = types.SimpleNamespace(
        workdir="/app", env={"TOKEN": "${I37_SURELY_UNSET}"}, cpus=None, memory_mb=None
    )
    scenario = types.SimpleNamespace(id="needs-token", environment=env, workspace=None)
    with pytest.raises(IterationError) as caught:
        trial_spec(SandboxSettings(sandbox="docker"), scenario, "t", "full", False)
    message = str(caught.value)
    assert caught.value.code == "setup_error" and "\n" not in message
    assert "needs-token" in message and "I37_SURELY_UNSET" in message
    monkeypatch.setenv("I37_SURELY_UNSET", "given")
    assert trial_spec(
        SandboxSettings(sandbox="docker"), scenario, "t", "full", False
    ).env == {"TOKEN": "given"}


def test_validate_names_an_unknown_kind_in_one_line_and_asks_a_plugins_own_check(
    tmp_path,
):
    import types

    from profiler_core.sandbox import sandbox_problems

    execution = types.SimpleNamespace(sandbox="lxc")
    assert sandbox_problems(execution, "profile.yaml") == [
        "profile.yaml: execution.sandbox: expected one of bwrap, docker, none, podman, got 'lxc'"
    ]


def test_a_command_that_could_not_start_is_said_so_and_one_that_failed_is_not():
    missing = ExecResult.finished("solve.sh", 127, "", 1.0)
    assert missing.error == "cannot run 'solve.sh' in the trial (exit 127)"
    assert ExecResult.finished("solve.sh", 126, " \n", 1.0).error is not None
    # the program ran and said why it ended: its own failure, not a missing program
    said = ExecResult.finished("solve.sh", 127, "make: not found", 1.0)
    assert said.error is None and said.exit_code == 127 and not said.ok
    assert ExecResult.finished("solve.sh", 0, "", 2.0).ok

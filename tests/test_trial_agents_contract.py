"""The real Claude Code inside a plugin's kind that keeps only the environment contract.

A third-party kind, installed as a distribution (its module and a
``.dist-info`` with the ``agent_profiler`` entry point, on the profiler's
``PYTHONPATH``), whose trial has ``exec`` (streamed output and the optional
``cancel`` event), ``put``, ``get``, ``set_network`` and ``stop`` and nothing
else: no ``command_line``, no relay of its own. Its trials are the built-in
bwrap kind's, reached only through those methods, so the runner must run the
agent's program by ``exec`` and move its home by ``put`` / ``get``
(providers/in_trial_contract.py). The same checks as in the bwrap trial
(tests/test_trial_agents_bwrap.py): a right edit passes the task's tests, a
wrong one fails them, the agent's server is there for the verifier, only its
model is reached, and an agent out of time is ended through ``cancel``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.test_trial_agents_bwrap import (
    host_server,
    out_of_time,
    right_and_wrong,
    tools,
)

pytestmark = pytest.mark.slow

__all__ = ["host_server", "tools"]  # fixtures shared with the bwrap test

MODULE = '''
"""A kind that keeps only the contract: every call goes to a bwrap trial by its methods."""
from profiler_core import hookimpl
from profiler_core.environments.bwrap import BwrapEnvironment


class ContractOnlyEnvironment:
    id = "contract-only"

    def __init__(self):
        self._kind = BwrapEnvironment()

    @property
    def capabilities(self):
        return self._kind.capabilities

    def check(self):
        return self._kind.check()

    def start(self, spec):
        return ContractOnlyTrial(self._kind.start(spec))


class ContractOnlyTrial:
    __slots__ = ("_trial",)

    def __init__(self, trial):
        self._trial = trial

    async def exec(self, argv, *, env=None, cwd=None, user=None, timeout_s=None,
                   on_output=None, cancel=None):
        return await self._trial.exec(argv, env=env, cwd=cwd, user=user,
                                      timeout_s=timeout_s, on_output=on_output,
                                      cancel=cancel)

    def put(self, local, remote):
        self._trial.put(local, remote)

    def get(self, remote, local):
        self._trial.get(remote, local)

    def set_network(self, network):
        self._trial.set_network(network)

    def stop(self):
        self._trial.stop()


@hookimpl
def profiler_register_environments(register):
    register(ContractOnlyEnvironment)
'''


@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """The kind's module and its distribution's metadata, found by the profiler's entry points."""
    site = tmp_path / "site"
    info = site / "contract_only_env-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "contract_only_env.py").write_text(MODULE)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: contract-only-env\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[agent_profiler]\ncontract_only = contract_only_env\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    work = tmp_path / "work"
    work.mkdir()
    return work


def test_the_trial_of_the_plugin_has_nothing_but_the_contract(tools, installed):
    import importlib
    import sys

    from profiler_core.model.environment import TrialSpec
    from profiler_core.providers.in_trial_contract import accepts_cancel

    sys.path.insert(0, str(installed.parent / "site"))
    try:
        module = importlib.import_module("contract_only_env")
        trial = module.ContractOnlyEnvironment().start(TrialSpec(name="c"))
    finally:
        sys.path.remove(str(installed.parent / "site"))
        sys.modules.pop("contract_only_env", None)
    try:
        for name in ("command_line", "end", "relay_environment", "workdir"):
            assert not hasattr(trial, name), name
        assert accepts_cancel(trial.exec)
    finally:
        trial.stop()


def test_claude_code_runs_inside_a_contract_only_trial(
    tools, installed, host_server, monkeypatch
):
    right_and_wrong(installed, host_server, monkeypatch, "contract-only")


def test_claude_code_out_of_time_is_ended_through_cancel(tools, installed):
    out_of_time(installed, "contract-only")

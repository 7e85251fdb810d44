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


# -- the contract path itself, on the host: fast -----------------------------------------


class _HostTrial:
    """A contract-only trial on the host: ``exec`` streams and honours ``cancel`` unless
    told to ignore it."""

    def __init__(self, honour_cancel: bool = True) -> None:
        self.honour_cancel = honour_cancel
        self.pids: list[int] = []

    def exec(
        self,
        argv,
        *,
        env=None,
        cwd=None,
        user=None,
        timeout_s=None,
        on_output=None,
        cancel=None,
    ):
        import os
        import signal
        import subprocess
        import threading
        import time

        from profiler_core.model.environment import ExecResult

        started = time.monotonic()
        process = subprocess.Popen(
            argv,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pids.append(process.pid)
        seen = bytearray()

        def read() -> None:
            while chunk := process.stdout.read1(65536):
                seen.extend(chunk)
                if on_output is not None:
                    on_output(chunk)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + (timeout_s or 3600)
        while process.poll() is None:
            stop = self.honour_cancel and cancel is not None and cancel.is_set()
            if stop or time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                reader.join(5)
                return ExecResult(
                    exit_code=None,
                    output=seen.decode(),
                    timed_out=not stop,
                    error="cancelled" if stop else None,
                    wall_ms=(time.monotonic() - started) * 1000,
                )
            time.sleep(0.05)
        reader.join(5)
        return ExecResult(
            exit_code=process.returncode,
            output=seen.decode(),
            wall_ms=(time.monotonic() - started) * 1000,
        )

    def put(self, local, remote):
        raise AssertionError("not used here")

    def get(self, remote, local):
        raise AssertionError("not used here")

    def stop(self):
        pass


def _by_contract(trial, argv, end_after_s=None, **kwargs):
    """``run_by_contract`` of ``argv`` in ``trial``; with ``end_after_s``, the session is
    ended then (its result None when it was)."""
    import trio

    from profiler_core.providers.in_trial_contract import run_by_contract

    options = {"cwd": None, "user": None, "stdin_file": None, "on_line": None}
    options.update(kwargs)
    keep = options.pop("keep", False)

    async def session():
        with trio.move_on_after(
            end_after_s if end_after_s is not None else float("inf")
        ):
            return await run_by_contract(trial, argv, {}, keep=keep, **options)
        return None

    return trio.run(session)


def test_the_programs_lines_are_taken_as_they_stream(tmp_path):
    script = "echo '{\"a\": 1}'; sleep 1; echo not json; echo '{\"b\": 2}'; exit 3"
    run = _by_contract(_HostTrial(), ["sh", "-c", script])
    assert run.lines == [{"a": 1}, {"b": 2}] and run.noise == ["not json"]
    assert run.exit_code == 3
    # each line when it came, not all at the end: the second a second after the first
    assert run.arrivals[1] - run.arrivals[0] > 0.7, run.arrivals


def test_standard_input_goes_in_as_a_file(tmp_path):
    given = tmp_path / "stdin"
    given.write_bytes(b"line one\nline two\n")
    run = _by_contract(_HostTrial(), ["cat"], stdin_file=str(given), keep=True)
    assert run.output == ["line one", "line two"] and run.exit_code == 0


def test_an_agent_asked_to_stop_is_ended_through_cancel():
    script = "echo '{\"stop\": true}'; sleep 60"
    trial = _HostTrial()
    run = _by_contract(
        trial, ["sh", "-c", script], on_line=lambda line: bool(line.get("stop"))
    )
    assert run.exit_code is None and run.wall_ms < 20_000, run
    assert not _alive(trial.pids[0])


def test_a_session_that_ends_ends_the_command_through_cancel():
    import time

    trial = _HostTrial()
    started = time.monotonic()
    _by_contract(trial, ["sleep", "60"], end_after_s=1)
    assert time.monotonic() - started < 20
    assert not _alive(trial.pids[0])


def test_the_kit_refuses_an_exec_that_takes_cancel_and_ignores_it():
    import trio

    from profiler_core.testing.contract import ContractError
    from profiler_core.testing.contract_environment import _cancel

    with pytest.raises(ContractError, match="setting it did not end the command"):
        trio.run(_cancel, "environment 'x'", _Deaf(), 2.0)
    trio.run(
        _cancel, "environment 'x'", _HostTrial(), 2.0
    )  # one that honours it passes


class _Deaf(_HostTrial):
    def __init__(self) -> None:
        super().__init__(honour_cancel=False)

    def exec(self, argv, **kwargs):
        # it ends by itself, after the bound the kit is given
        return super().exec(["sleep", "4"], **{**kwargs, "timeout_s": 10})


def _alive(pid: int) -> bool:
    from profiler_core.util.processes import process_alive

    return process_alive(pid)


class _NoCancel(_HostTrial):
    """An older kind: its ``exec`` takes no ``cancel``."""

    def exec(
        self, argv, *, env=None, cwd=None, user=None, timeout_s=None, on_output=None
    ):
        return super().exec(
            argv, env=env, cwd=cwd, user=user, timeout_s=10, on_output=on_output
        )


def test_a_kind_without_cancel_is_left_to_the_trials_stop_and_said(caplog):
    """The session still ends on time; the warning says its command goes on."""
    import time

    from profiler_core.providers.in_trial_contract import accepts_cancel

    trial = _NoCancel()
    assert not accepts_cancel(trial.exec)
    started = time.monotonic()
    _by_contract(trial, ["sleep", "3"], end_after_s=0.5)
    assert time.monotonic() - started < 2.5
    assert "takes no `cancel`" in caplog.text

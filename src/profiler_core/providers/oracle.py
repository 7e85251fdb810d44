"""The ``oracle`` provider: "solves" each task with its reference solution, to check
tasks and verifiers.

::

    profiler run examples/tasks/profile.yaml --provider oracle --repetitions 1

For every session it runs the scenario's ``solution`` command (a Harbor
task's ``bash /solution/solve.sh``, with ``solution/`` at ``/solution``) in
the session's workspace, in the run's sandbox (the task's image under docker
or podman), as an agent would run. The verifiers then judge the result: a
task whose reference solution does not pass its own verifier is broken, and
that is found before money is spent on agents.

Inside a trial (``CreateSessionParams.environment``: a Harbor task under
docker, podman, bwrap or a plugin's environment, docs/environments.md) the
solution's folders are uploaded into the trial's environment, its scripts made
executable, and ``solve.sh`` started by its shebang there, in the working
folder, as ``[agent].user``; its timeout is the agent's (recorded, and the
verifier still runs).

The answer costs nothing: zero tokens, the command's output as its text, and
one ``bash`` tool call in its trace. A solution that exits non-zero is an
error row (``session_error``); a scenario without a solution is an error row
naming it.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from ..config.harbor_fields import task_env
from ..errors import ProfilerError
from ..model import (
    CreateSessionParams,
    PromptMetrics,
    PromptResult,
    ProviderConfig,
    SandboxSettings,
    Scenario,
    SessionHandle,
    SessionTrace,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
)
from ..model.live import Environment
from ..util.leftovers import remove_folder, temporary_folder

__all__ = ["OracleProvider"]

#: characters of the solution's output kept as the answer's text
TEXT_TAIL = 4000


@attrs.define
class _Session:
    scenario: Scenario
    workspace: Path | None
    sandbox: SandboxSettings | None
    trace: SessionTrace | None = None
    #: the trial's environment when the session runs inside one (the solution then runs there)
    environment: Environment | None = None
    workdir: str | None = None
    user: str | None = None


class OracleProvider:
    """Runs each scenario's reference solution in the session's workspace (no model, no tokens)."""

    id = "oracle"
    #: the runner may start it inside a trial's environment (``CreateSessionParams.environment``)
    runs_in_trial = True

    def __init__(self) -> None:
        """No options: the solution is the task's."""
        self._sandbox: SandboxSettings | None = None
        self._sessions: dict[str, _Session] = {}

    def init(self, config: ProviderConfig) -> None:
        """Keep the run's sandbox (solutions run where agents would)."""
        self._sandbox = config.sandbox

    def check_scenarios(self, scenarios: Sequence[Scenario]) -> None:
        """Refuse, before the run (and at ``validate``), a profile none of whose
        scenarios has a reference solution.

        Such a profile has no Harbor tasks at all; a task among others that lacks its solution
        is that row's error (checking tasks is what the oracle is for).
        """
        missing = [
            s.id
            for s in scenarios
            if s.solution is None and not any(step.solution for step in s.steps)
        ]
        if missing and len(missing) == len(scenarios):
            named = ", ".join(repr(m) for m in missing[:3]) + (
                f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            )
            raise ProfilerError(
                f"none of the {len(scenarios)} scenarios has a reference "
                f"solution ({named}): the oracle runs "
                "a Harbor task's solution/solve.sh (scenarios: {path: TASKS, "
                "format: harbor}; docs/harbor.md)"
            )

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """A session of ``params.scenario``; one without a reference solution is refused
        in one line."""
        scenario = params.scenario
        if scenario is None or (
            params.workspace is None and params.environment is None
        ):
            raise ProfilerError(
                "provider 'oracle' needs the runner's scenario and workspace "
                "(CreateSessionParams.scenario, .workspace)"
            )
        if scenario.solution is None:
            raise ProfilerError(
                f"scenario {scenario.id!r} has no reference solution (a Harbor "
                "task's solution/solve.sh)"
            )
        session_id = f"oracle-{uuid.uuid4().hex[:12]}"
        self._sessions[session_id] = _Session(
            scenario=scenario,
            workspace=Path(params.workspace) if params.workspace else None,
            sandbox=params.sandbox or self._sandbox,
            environment=params.environment,
            workdir=params.environment_workdir,
            user=params.environment_user,
        )
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run the solution to its end (or ``timeout_ms``); its output is the answer."""
        from ..sandbox import Mount
        from ..sandbox.commands import Confinement, base_environment, run_command

        session = self._live(handle)
        solution = session.scenario.solution
        assert solution is not None
        timeout_s = (timeout_ms or session.scenario.timeout_ms) / 1000
        if session.environment is not None:
            return await self._in_trial(handle, session, timeout_s)
        assert session.workspace is not None
        scratch = temporary_folder(
            "profiler-oracle-"
        )  # recorded: a killed run's is removed by the next
        try:
            mounts = _copies(solution.mounts, scratch)
            confined = session.sandbox is not None and session.sandbox.confined
            if mounts and not confined:
                raise ProfilerError(
                    f"scenario {session.scenario.id!r}: its solution uses "
                    f"{', '.join(solution.mounts)}, which needs a sandbox"
                )
            where = Confinement(
                settings=session.sandbox,
                mounts=tuple(
                    Mount(source=s, target=t, writable=True) for t, s in mounts
                ),
            )
            started = datetime.now(UTC)
            result = await run_command(
                ["bash", "-c", solution.command],
                cwd=session.workspace,
                env=base_environment(
                    scratch,
                    task_env(solution.env, solution.env_templates, "[solution].env"),
                ),
                timeout_s=timeout_s,
                where=where,
            )
        finally:
            remove_folder(scratch)
        output = result.output.strip()[-TEXT_TAIL:]
        error = None
        if not result.ok:
            how = result.error or (
                "timed out" if result.timed_out else f"exited {result.exit_code}"
            )
            error = f"the reference solution {how}: {output[-300:]}".rstrip(": ")
        return _answer(
            handle, session, solution.command, output, started, result, error
        )

    async def _in_trial(
        self, handle: SessionHandle, session: _Session, timeout_s: float
    ) -> PromptResult:
        """Upload the solution's folders into the trial, make its scripts executable,
        run it there by its shebang."""
        from ..util.asyncs import call_off_loop

        solution = session.scenario.solution
        assert solution is not None
        environment = session.environment
        # _in_trial runs only for a session inside a trial
        assert environment is not None
        put_scripts = getattr(environment, "put_scripts", None)
        for target, source in solution.mounts.items():
            if callable(put_scripts):  # docker, podman: scripts arrive executable
                await call_off_loop(put_scripts, Path(source), target)
                continue
            await call_off_loop(environment.put, Path(source), target)
            await call_off_loop(
                environment.exec,
                [
                    "sh",
                    "-c",
                    'find "$1" -type f -name "*.sh" -exec chmod +x {} +',
                    "sh",
                    target,
                ],
                user="0",
                timeout_s=60,
            )
        started = datetime.now(UTC)
        result = await call_off_loop(
            environment.exec,
            script_argv(solution.command, tuple(solution.mounts)),
            env=task_env(solution.env, solution.env_templates, "[solution].env"),
            cwd=session.workdir,
            user=session.user,
            timeout_s=timeout_s,
        )
        output = result.output.strip()[-TEXT_TAIL:]
        error = None
        if result.timed_out:
            # the agent's time ran out: recorded as the reason, and the verifier judges
            # what it left (Harbor's rule)
            pass
        elif not result.ok:
            how = result.error or f"exited {result.exit_code}"
            error = f"the reference solution {how}: {output[-300:]}".rstrip(": ")
        return _answer(
            handle, session, solution.command, output, started, result, error
        )

    def export_session(self, handle: SessionHandle) -> SessionTrace | None:
        """One turn with the solution's one ``bash`` call (None before the prompt)."""
        return self._live(handle).trace

    def destroy_session(self, handle: SessionHandle) -> None:
        """Forget the session (the runner owns its workspace)."""
        self._sessions.pop(handle.session_id, None)

    def shutdown(self) -> None:
        """Nothing is left running: each solution ended with its prompt."""
        self._sessions.clear()

    def _live(self, handle: SessionHandle) -> _Session:
        try:
            return self._sessions[handle.session_id]
        except KeyError:
            raise ProfilerError(
                f"provider 'oracle': unknown session {handle.session_id!r}"
            ) from None


def script_argv(command: str, folders: tuple[str, ...]) -> list[str]:
    """``bash /solution/solve.sh`` of an uploaded script becomes the script itself,
    started by its shebang (as Harbor runs it)."""
    import shlex

    words = shlex.split(command) if "\n" not in command else []
    if (
        len(words) == 2
        and words[0] in ("bash", "sh")
        and any(words[1].startswith(f.rstrip("/") + "/") for f in folders)
    ):
        return [words[1]]
    return ["bash", "-c", command]


def _copies(mounts: dict[str, str], scratch: Path) -> list[tuple[str, Path]]:
    """A fresh copy of each mounted folder (``target -> copy``): the solution may write
    there, the task stays as it is."""
    copies = []
    for index, (target, source) in enumerate(mounts.items()):
        copy = scratch / f"mount-{index}"
        try:
            if Path(source).is_dir():
                shutil.copytree(source, copy, symlinks=True)
            else:
                shutil.copy2(source, copy)
        except OSError as exc:
            raise ProfilerError(
                f"provider 'oracle': cannot copy {source!r} for {target}: {exc.strerror or exc}"
            ) from None
        copies.append((target, copy))
    return copies


def _answer(
    handle: SessionHandle,
    session: _Session,
    command: str,
    output: str,
    started: datetime,
    result: Any,
    error: str | None,
) -> PromptResult:
    """The solution's run as an agent's answer: its output, one ``bash`` call in the
    trace, no tokens."""
    session.trace = _trace(
        handle.session_id, command, output, started, result.wall_ms, error
    )
    return PromptResult(
        text=output,
        metrics=PromptMetrics(
            tokens=TokenBreakdown(),
            timing=TimingBreakdown(wall_ms=result.wall_ms),
            tool_calls=(
                ToolCallRecord(
                    name="bash",
                    category="shell",
                    success=error is None,
                    duration_ms=result.wall_ms,
                    error=error,
                ),
            ),
        ),
        completion_reason="timeout" if result.timed_out else "stop",
        error=error,
    )


def _trace(
    session_id: str,
    command: str,
    output: str,
    started: datetime,
    wall_ms: float,
    error: str | None,
) -> SessionTrace:
    ended = started + timedelta(milliseconds=wall_ms)
    call = ToolCallEvent(
        name="bash",
        input={"command": command},
        output=output,
        duration_ms=wall_ms,
        success=error is None,
        error=error,
    )
    boundary = TurnBoundaryEvent(turn_number=1, timestamp=ended.isoformat())
    turn = Turn(
        number=1,
        events=(call,),
        start_timestamp=started.isoformat(),
        end_timestamp=ended.isoformat(),
        duration_ms=wall_ms,
    )
    return SessionTrace(
        session_id=session_id,
        events=(call, boundary),
        turns=(turn,),
        summary=TraceSummary(
            total_turns=1,
            total_tool_calls=1,
            total_tokens=TokenBreakdown(),
            total_duration=wall_ms,
        ),
    )

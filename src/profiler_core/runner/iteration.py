"""One iteration: session -> prompt -> export -> collectors -> analyzers -> scorer -> row."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ..errors import RateLimitedError, SandboxError
from ..model import (
    AfterScenarioContext,
    AnalysisResult,
    BeforeScenarioContext,
    CostBreakdown,
    CreateSessionParams,
    CustomMetric,
    ModeConfig,
    ProfileRow,
    PromptMetrics,
    PromptResult,
    Scenario,
    ScorerContext,
    ScorerResult,
    SessionAnalysisBundle,
    SessionTrace,
    StepSpec,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallRecord,
)
from ..storage.tracestore import TraceRecord, trace_file_path
from ..util.asyncs import is_awaitable
from ..util.signature import accepts_keyword
from ..util.timestamps import now_iso
from .adapter import ProviderAdapter
from .analysis_pool import CellJob
from .outcome import PLUGIN_ERRORS, IterationError, IterationOutcome, analyzer_failure
from .row import make_row
from .state import RunState
from .workspace import EMPTY_WORKSPACE, SetupError, Workspaces

if TYPE_CHECKING:  # pragma: no cover
    from .verify import Verification

log = logging.getLogger("agent_profiler")


#: One attempt of a cell, wherever it runs (here, or on a Ray worker): ``(outcome, error)``.
AttemptFn = Callable[..., Awaitable[tuple[IterationOutcome, str | None]]]

#: rate-limited tries of one cell before its rate limit counts as an error
MAX_RATE_LIMITED = 20


async def _destroy(state: RunState, handle: Any, provider: ProviderAdapter) -> None:
    # Shielded so a timeout or Ctrl-C cannot skip it; bounded so a hung provider cannot hang us
    # (and, blocking a thread during Ctrl-C, only briefly: see ProviderAdapter.cleanup_limit).
    limit = provider.cleanup_limit("destroy_session", state.destroy_timeout_s)
    with trio.CancelScope(
        relative_deadline=limit, shield=True
    ) as scope:  # trio.move_on_after(limit, shield=True)
        try:
            await provider.destroy_session(handle)
        except PLUGIN_ERRORS as exc:  # a failed destroy must not lose the row
            log.warning(
                "destroy_session(%s) failed: %s",
                getattr(handle, "session_id", handle),
                exc,
            )
    if scope.cancelled_caught:
        log.warning(
            "destroy_session(%s) did not finish in %ss; abandoned",
            getattr(handle, "session_id", handle),
            limit,
        )


def _wrong(
    provider: Any, method: str, what: str, value: Any, expected: str
) -> IterationError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return IterationError(
        f"provider {getattr(provider, 'id', type(provider).__name__)!r} "
        f"returned {what} {shown} from {method}, expected {expected}",
        code="provider_error",
    )


def _checked_result(provider: Any, result: Any) -> PromptResult:
    """``result`` when it is a well-formed PromptResult; otherwise an error naming the
    plugin and what it returned."""
    if not isinstance(result, PromptResult):
        raise _wrong(provider, "prompt", type(result).__name__, result, "PromptResult")
    metrics = result.metrics
    checks = (
        (metrics, PromptMetrics, "metrics", "PromptMetrics"),
        (
            getattr(metrics, "tokens", None),
            TokenBreakdown,
            "metrics.tokens",
            "TokenBreakdown",
        ),
        (
            getattr(metrics, "timing", None),
            TimingBreakdown,
            "metrics.timing",
            "TimingBreakdown",
        ),
        (
            getattr(metrics, "cost", None),
            CostBreakdown,
            "metrics.cost",
            "CostBreakdown",
        ),
        (result.text, str, "text", "a string"),
    )
    for value, cls, field, expected in checks:
        if not isinstance(value, cls):
            raise _wrong(
                provider, "prompt", f"a PromptResult whose {field} is", value, expected
            )
    if not all(isinstance(call, ToolCallRecord) for call in metrics.tool_calls):
        raise _wrong(
            provider, "prompt", "tool calls", metrics.tool_calls, "ToolCallRecord items"
        )
    return result


def _checked_trace(provider: Any, trace: Any) -> SessionTrace | None:
    """``trace`` when it is a SessionTrace or None; otherwise an error naming the plugin."""
    if trace is not None and not isinstance(trace, SessionTrace):
        raise _wrong(
            provider,
            "export_session",
            type(trace).__name__,
            trace,
            "SessionTrace or None",
        )
    return trace


async def _collect(
    state: RunState,
    result: PromptResult,
    scenario: Scenario,
    mode: str,
    model: str,
    trace,
) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for collector in state.collectors:
        kwargs = {"model": model} if accepts_keyword(collector.collect, "model") else {}
        try:
            emitted = collector.collect(result, scenario, mode, trace, **kwargs)
            if is_awaitable(
                emitted
            ):  # a sync plugin's result is used as it is: no coroutine made per call
                emitted = await emitted
        except PLUGIN_ERRORS as exc:
            raise IterationError(
                f"collector {collector.id!r} failed: {type(exc).__name__}: {exc}",
                code="collector_error",
            ) from exc
        for metric in emitted or ():
            if not isinstance(metric, CustomMetric):
                raise IterationError(
                    f"collector {collector.id!r} returned "
                    f"{type(metric).__name__}, expected CustomMetric",
                    code="collector_error",
                )
            metrics[metric.name] = metric.value
            state.metric_units.setdefault(metric.name, metric.unit)
    return metrics


async def _analyze(
    state: RunState, trace: SessionTrace, scenario: Scenario, mode: str
) -> dict[str, AnalysisResult]:
    results: dict[str, AnalysisResult] = {}
    for analyzer in state.analyzers:
        try:
            result = analyzer.analyze(trace, scenario, mode)
            if is_awaitable(result):
                result = await result
        except PLUGIN_ERRORS as exc:
            raise IterationError(
                analyzer_failure(analyzer, exc), code="analyzer_error"
            ) from exc
        results[analyzer.name] = result
    return results


async def _analyze_in_worker(
    state: RunState,
    trace: SessionTrace,
    scenario: Scenario,
    mode: str,
    model: str,
    iteration: int,
) -> tuple[dict[str, AnalysisResult], str | None]:
    """The analyzers' results and the trace's written text, from an analysis worker; the
    loop runs on meanwhile."""
    # Warm-up cells (iteration -1) and runs without session export write no trace: none
    # is serialised.
    written = state.session_export and state.writer is not None and iteration >= 0
    if not state.analyzers and not written:
        return {}, None  # nothing for a worker to do
    done = await state.analysis_pool.run(
        CellJob(
            trace=trace,
            scenario=scenario,
            mode=mode,
            model=model,
            iteration=iteration,
            analyze=bool(state.analyzers),
            trace_format=state.trace_format if written else None,
            multi_model=state.multi_model,
        )
    )
    if done.error is not None:
        raise IterationError(done.error, code="analyzer_error")
    return done.results, done.trace_text


async def _score(
    state: RunState,
    scenario: Scenario,
    done: _Attempt,
    mode: str,
    model: str,
    iteration: int,
    metadata: dict,
) -> ScorerResult:
    verification = done.verification
    context = ScorerContext(
        agent_output=done.result.text,
        trace=done.trace,
        mode=mode,
        model=model,
        iteration=iteration,
        metadata=metadata,
        verifications=verification.checks if verification is not None else (),
        reward=verification.reward if verification is not None else None,
    )
    try:
        scored = state.scorer.evaluate(scenario, context)
        if is_awaitable(scored):
            scored = await scored
    except PLUGIN_ERRORS as exc:
        raise IterationError(
            f"scorer {state.scorer.id!r} failed: {type(exc).__name__}: {exc}",
            code="scorer_error",
        ) from exc
    if not isinstance(scored, ScorerResult):
        raise IterationError(
            f"scorer {state.scorer.id!r} returned {type(scored).__name__}, expected ScorerResult",
            code="scorer_error",
        )
    if scored.error:
        raise IterationError(
            f"scorer {state.scorer.id!r}: {scored.error}", code="scorer_error"
        )
    return scored


async def run_iteration(
    state: RunState,
    *,
    model: str,
    mode: str,
    mode_config: ModeConfig,
    scenario: Scenario,
    iteration: int,
    attempt_fn: AttemptFn,
    warmup: bool = False,
) -> IterationOutcome:
    """Run one cell of the matrix, with retries, and record it (``attempt_fn``: one
    attempt, here or elsewhere)."""
    if not warmup and state.hooks.implemented("profiler_before_scenario"):
        replacement = await state.hooks.first_result(
            "profiler_before_scenario",
            ctx=BeforeScenarioContext(
                scenario=scenario,
                mode=mode,
                model=model,
                iteration=iteration,
                run=state.run_ctx,
            ),
        )
        if isinstance(replacement, Scenario):
            scenario = replacement
    if state.time_limit_ms is not None and state.time_limit_ms < scenario.timeout_ms:
        scenario = attrs.evolve(scenario, timeout_ms=state.time_limit_ms)
    cell = {
        "model": model,
        "mode": mode,
        "mode_config": mode_config,
        "scenario": scenario,
        "iteration": iteration,
    }
    outcome = await _attempts(state, cell, attempt_fn)
    if not warmup:
        _record(
            state,
            outcome,
            model=model,
            mode=mode,
            scenario=scenario,
            iteration=iteration,
        )
        if state.hooks.implemented("profiler_after_scenario"):
            await state.hooks.call(
                "profiler_after_scenario",
                ctx=AfterScenarioContext(
                    scenario=scenario,
                    mode=mode,
                    model=model,
                    iteration=iteration,
                    result=outcome.row,
                    trace=outcome.trace,
                    run=state.run_ctx,
                ),
            )
    return outcome


async def _attempts(
    state: RunState, cell: dict[str, Any], attempt_fn: AttemptFn
) -> IterationOutcome:
    """Attempts of one cell until one is clean, the retries are used up; rate limits
    wait and do not count."""
    scenario: Scenario = cell["scenario"]
    where = f"{cell['model']}/{cell['mode']}/{scenario.id}#{cell['iteration']}"
    max_attempts = 1 + (scenario.allowed_retries or state.default_retries)
    attempt = rate_limits = 0
    while True:
        attempt += 1
        outcome, error = await attempt_fn(state, attempt=attempt, **cell)
        if outcome.rate_limited and rate_limits < MAX_RATE_LIMITED:
            # Not the agent's failure: wait as told and try again, without using up a retry.
            rate_limits += 1
            attempt -= 1
            wait = outcome.retry_after or 1.0
            if state.pacer is not None:
                wait = state.pacer.rate_limited(outcome.retry_after, rate_limits)
            log.warning("rate limited: %s waits %.1f s and tries again", where, wait)
            await trio.sleep(wait)
            continue
        if error is None or attempt >= max_attempts:
            if error is None and state.pacer is not None:
                state.pacer.succeeded()
            return outcome
        log.warning(
            "retrying %s (attempt %d of %d) after: %s",
            where,
            attempt + 1,
            max_attempts,
            error,
        )


def _record(
    state: RunState,
    outcome: IterationOutcome,
    *,
    model: str,
    mode: str,
    scenario: Scenario,
    iteration: int,
) -> None:
    """Write the cell's trace, then its row, then its analysis (the order resume relies on)."""
    writer = state.writer
    if writer is None:
        return
    if state.session_export and outcome.trace is not None:
        # The trace is on disk before its row: a cell that resume counts as done has its trace.
        # Written inline: a worker thread would let trio's MockClock jump past deadlines while
        # it waits, and buys little under the GIL. The store appends one line to an open file;
        # creating a file per trace costs the kernel 0.05-1 ms each on our VMs.
        # With analysis workers, a worker has already redacted and serialised it (``trace_text``).
        if state.trace_format == "files":
            path = trace_file_path(
                state.sessions_dir,
                scenario.id,
                mode,
                iteration,
                model if state.multi_model else None,
            )
            if outcome.trace_text is not None:
                writer.write_trace_text(path, outcome.trace_text)
            else:
                writer.write_trace(path, outcome.trace)
        elif outcome.trace_text is not None:
            writer.append_trace_line(outcome.trace_text)
        else:
            writer.append_trace(
                TraceRecord(
                    scenario_id=scenario.id,
                    mode=mode,
                    model=model,
                    iteration=iteration,
                    trace=outcome.trace,
                    multi_model=state.multi_model,
                )
            )
    writer.write_row(outcome.row)
    if outcome.bundle is not None and outcome.bundle.results:
        writer.write_analysis(outcome.bundle)


async def attempt_cell(
    state: RunState,
    *,
    model: str,
    mode: str,
    mode_config: ModeConfig,
    scenario: Scenario,
    iteration: int,
    attempt: int,
    provider: ProviderAdapter,
) -> tuple[IterationOutcome, str | None]:
    """One attempt of a cell: workspace, session, verifiers, collectors, analyzers,
    scorer, row (nothing written)."""
    started_at = now_iso()
    t0 = time.perf_counter()
    done = _Attempt()
    cell = _Cell(model=model, mode=mode, scenario=scenario, iteration=iteration)
    try:
        params = CreateSessionParams(
            system_instructions=mode_config.system_instructions,
            scenario_id=scenario.id,
            iteration=iteration,
            mode=mode,
            model=model,
            scenario=scenario,
        )
        await _run_and_verify(state, provider, params, cell, done)
        await _measure(state, cell, done, attempt)
        if done.result.error:
            # The session itself ended in an error (an API error, a recorded failure):
            # measured, scored, but an error.
            raise IterationError(done.result.error, code="session_error")
    except IterationError as exc:
        done.failed(exc)
    completed_at = now_iso()
    if done.times is not None:
        # a replayed recording: when the session really happened
        started_at, completed_at = done.times
    row = _row(state, cell, done, attempt, started_at, completed_at, t0)
    if done.folder is not None and state.workspaces is not None:
        _release_workspace(
            state.workspaces,
            done.folder,
            done.left_empty,
            failed=bool(row.error) or not row.success,
            name=lambda: cell.workspace_name(state),
        )
    outcome = IterationOutcome(
        row=row,
        trace=done.trace,
        bundle=_bundle(row, cell, done),
        retry_after=done.retry_after,
        rate_limited=done.error_code == "rate_limited",
        trace_text=done.trace_text,
    )
    return outcome, done.error


class _Cell:
    """What names one cell: its model, mode, scenario and iteration."""

    __slots__ = ("iteration", "mode", "model", "scenario")

    def __init__(
        self, *, model: str, mode: str, scenario: Scenario, iteration: int
    ) -> None:
        self.model = model
        self.mode = mode
        self.scenario = scenario
        self.iteration = iteration

    def workspace_name(self, state: RunState) -> str:
        """The cell's workspace (and trial) name; the model is in it when the run has several."""
        return workspace_name(
            self.scenario.id,
            self.mode,
            self.iteration,
            self.model if state.multi_model else None,
        )


async def _run_and_verify(
    state: RunState,
    provider: ProviderAdapter,
    params: CreateSessionParams,
    cell: _Cell,
    done: _Attempt,
) -> None:
    """The session and its verification: in one trial environment, or in a workspace."""
    scenario = cell.scenario
    trials = getattr(state, "trials", None)
    if trials is not None and trials.applies(scenario, provider):
        # set-up, agent and verifier in one environment
        await _trial(
            state, provider, params, scenario, done, cell.workspace_name(state)
        )
        return
    _steps_need_a_trial(state, scenario, provider)
    await _prepare_workspace(state, scenario, done)
    params = attrs.evolve(
        params,
        workspace=str(done.folder) if done.folder is not None else None,
        sandbox=done.sandbox,
    )
    try:
        await _session(state, provider, params, scenario, done)
    finally:
        if done.handle is not None:
            await _destroy(state, done.handle, provider)
    if done.recorded is not None:
        # The provider's own verifier decided (a replayed recording's, a Harbor
        # trial's): none of ours runs.
        done.verification = _as_verification(done.recorded)
    else:
        await _verify(state, scenario, done)


async def _measure(state: RunState, cell: _Cell, done: _Attempt, attempt: int) -> None:
    """The collectors' metrics, the analyzers' findings and the scorer's verdict."""
    scenario, mode, model = cell.scenario, cell.mode, cell.model
    done.metrics = {
        **await _collect(state, done.result, scenario, mode, model, done.trace),
        **done.verification_metrics(),
        **({"artifacts": done.artifacts} if done.artifacts else {}),
    }
    if done.trace is not None and state.analysis_pool is not None:
        done.analysis, done.trace_text = await _analyze_in_worker(
            state, done.trace, scenario, mode, model, cell.iteration
        )
    elif done.trace is not None and state.analyzers:
        done.analysis = await _analyze(state, done.trace, scenario, mode)
    done.scored = await _score(
        state, scenario, done, mode, model, cell.iteration, {"attempt": attempt}
    )


def _row(
    state: RunState,
    cell: _Cell,
    done: _Attempt,
    attempt: int,
    started_at: str,
    completed_at: str,
    t0: float,
) -> ProfileRow:
    """The attempt's row."""
    handle = done.handle
    verification = done.verification
    return make_row(
        run_id=state.run_id,
        provider=state.provider_id,
        metric_units=state.metric_units,
        model=cell.model,
        mode=cell.mode,
        scenario_id=cell.scenario.id,
        iteration=cell.iteration,
        started_at=started_at,
        completed_at=completed_at,
        elapsed_ms=(time.perf_counter() - t0) * 1000,
        session_id=getattr(handle, "session_id", "") if handle is not None else "",
        result=done.result,
        trace=done.trace,
        scored=done.scored,
        metrics=done.metrics,
        error=done.error,
        error_code=done.error_code,
        reason=done.reason,
        attempts=attempt,
        reward=verification.reward if verification is not None else None,
    )


def _bundle(
    row: ProfileRow, cell: _Cell, done: _Attempt
) -> SessionAnalysisBundle | None:
    """The analyzers' findings of the attempt, as one bundle (None without findings)."""
    if not done.analysis:
        return None
    return SessionAnalysisBundle(
        session_id=row.session_id,
        scenario_id=cell.scenario.id,
        mode=cell.mode,
        model=cell.model,
        iteration=cell.iteration,
        results=done.analysis,
    )


def _release_workspace(
    workspaces: Workspaces,
    folder: Path,
    left_empty: bool,
    *,
    failed: bool,
    name: Callable[[], str],
) -> None:
    """An empty workspace serves the next session (one scandir at most, none when the
    report saw it empty);
    any other is kept for inspection or removed, under a name made only then."""
    if left_empty:
        workspaces.reuse(folder)
    elif not workspaces.reuse_if_empty(folder):
        workspaces.keep_or_remove(folder, failed=failed, name=name())


async def _prepare_workspace(
    state: RunState, scenario: Scenario, done: _Attempt
) -> None:
    """The attempt's fresh workspace (none when the run manages none); a failure is the
    cell's set-up error."""
    if state.workspaces is None:
        return
    try:
        done.folder = await state.workspaces.prepare(scenario)
        if scenario.environment is not None:
            # The task's image (built by prepare), with what agents must not read hidden.
            done.sandbox = state.workspaces.for_agents(
                (await state.workspaces.task_sandbox(scenario)).settings
            )
    except SetupError as exc:
        raise IterationError(f"setup failed: {exc}", code="setup_error") from None


async def _trial(
    state: RunState,
    provider: ProviderAdapter,
    params: CreateSessionParams,
    scenario: Scenario,
    done: _Attempt,
    name: str,
) -> None:
    """The attempt as one trial in one environment: set-up, the agent, then the verifier
    (runner/trial.py)."""
    from . import (
        trial,
    )  # the trial machinery: only for a run whose tasks run in an environment of their own

    try:
        task = await state.workspaces.task_sandbox(scenario)
    except SetupError as exc:
        raise IterationError(f"setup failed: {exc}", code="setup_error") from None
    assert task.settings is not None
    needs = trial.agent_needs(provider, params.mode)
    # what agents must not read (the tasks' tests and solutions) hidden in the trial too
    hidden = state.workspaces.for_agents(task.settings) or task.settings
    run = await trial.start_trial(state.trials, scenario, hidden, name, needs)
    try:
        await trial.setup(run)
        params = attrs.evolve(
            params,
            sandbox=task.settings,
            environment=run.environment,
            environment_workdir=run.workdir,
            environment_user=await trial.agent_user(run, task.settings),
        )

        if scenario.steps:
            await _steps(state, provider, params, scenario, done, run, name)
        else:
            await _turn(
                state,
                provider,
                params,
                scenario,
                done,
                run,
                state.trials.verifier_dir / name,
                name,
            )
    finally:
        try:
            done.artifacts = await _artifacts(state.trials, run, name)
            if _may_keep(state.workspaces.keep, done):
                # copied out as plain files (links stay links): kept or removed with the
                # row, like any workspace
                done.folder = await trial.copy_workdir(run, state.workspaces.sessions)
        finally:
            await trial.stop_trial(run)


async def _artifacts(trials: Any, run: Any, name: str) -> list[str]:
    """The trial's artifacts copied into the run's reports (runner/trial_artifacts.py);
    none when they cannot be."""
    from .trial_artifacts import collect_artifacts

    try:
        return await collect_artifacts(
            run, trials.artifacts_dir / name, trials.artifacts_dir.parent
        )
    except (SandboxError, OSError) as exc:
        log.warning("the artifacts of %s were not collected: %s", run.scenario.id, exc)
        return []


async def _turn(
    state: RunState,
    provider: ProviderAdapter,
    params: CreateSessionParams,
    scenario: Scenario,
    done: _Attempt,
    run: Any,
    keep: Path,
    name: str,
) -> None:
    """One agent turn in the trial (``scenario``: the task, or one step's view of it),
    then its verifiers."""
    from . import trial

    async def session() -> None:
        try:
            await _session(state, provider, params, scenario, done)
        finally:
            if done.handle is not None:
                await _destroy(state, done.handle, provider)

    if await trial.agent_phase(run, session):
        # recorded on the row; the verifier still judges what the agent left
        done.reason = "timeout"
        done.result = (
            done.result if done.result is not None else trial.timed_out_result()
        )
    if done.trace is not None:
        done.trace = attrs.evolve(done.trace, workspace=await trial.report(run))
    if scenario.verify:
        from .verify import VerifierError

        try:
            if any(v.separate is not None for v in scenario.verify):
                from .trial_separate import (
                    verify_apart,
                )  # a verifier with an environment of its own

                done.verification = await verify_apart(state, run, scenario, keep, name)
            else:
                done.verification = await trial.verify(run, keep, scenario)
        except VerifierError as exc:
            raise IterationError(str(exc), code="verifier_error") from None


async def _steps(
    state: RunState,
    provider: ProviderAdapter,
    params: CreateSessionParams,
    scenario: Scenario,
    done: _Attempt,
    run: Any,
    name: str,
) -> None:
    """A multi-step task's steps in order in the one trial; the row keeps the last
    step's session and every step's reward."""
    from . import trial_steps

    results: list[tuple[StepSpec, Verification]] = []
    try:
        for step in scenario.steps:
            view = trial_steps.step_scenario(scenario, step)
            await trial_steps.step_files(run, step)
            done.verification = None
            await _turn(
                state,
                provider,
                attrs.evolve(params, scenario=view),
                view,
                done,
                run,
                state.trials.verifier_dir / name / step.name,
                name,
            )
            if done.verification is not None:
                results.append((step, done.verification))
            if not trial_steps.reached(step, done.verification):
                break  # Harbor's min_reward: the later steps do not run
    finally:
        done.verification = trial_steps.combine(scenario, results) if results else None


def _steps_need_a_trial(
    state: RunState, scenario: Scenario, provider: ProviderAdapter
) -> None:
    """A multi-step task's steps share one environment: outside a trial only a provider
    that verifies itself (Harbor's) runs it."""
    if scenario.steps and not hasattr(
        getattr(provider, "provider", provider), "session_verification"
    ):
        sandbox = getattr(
            getattr(getattr(state, "workspaces", None), "sandbox", None),
            "sandbox",
            "none",
        )
        raise IterationError(
            f"setup failed: scenario {scenario.id!r} is a multi-step task: it "
            "runs as a trial (execution.sandbox docker, podman, "
            "bwrap or a plugin's, with the oracle or the simulated agent), not "
            f"under {sandbox!r} with {getattr(provider, 'id', '?')!r}",
            code="setup_error",
        )


def _may_keep(keep: str, done: _Attempt) -> bool:
    """Whether the trial's working folder is copied out: ``all``, or ``failed`` and the
    verifiers did not all pass
    (the scorer has not decided yet: with ``verify`` it decides on the same checks)."""
    if keep == "all":
        return True
    passed = done.verification is not None and all(
        check.passed for check in done.verification.checks
    )
    return keep == "failed" and not passed


async def _verify(state: RunState, scenario: Scenario, done: _Attempt) -> None:
    """Record what the agent left in its workspace, then run the scenario's verifiers there."""
    if done.folder is None or state.workspaces is None:
        return
    if done.trace is not None:
        report = await state.workspaces.report(done.folder)
        done.trace = attrs.evolve(done.trace, workspace=report)
        # Empty, and nothing runs in it after this (the scorer and analyzers see the
        # trace, not the folder).
        done.left_empty = not scenario.verify and report == EMPTY_WORKSPACE
    if not scenario.verify:
        return
    from .verify import (
        VerifierError,
        run_verifiers,
    )  # with its sandbox commands: only for a scenario with verifiers

    try:
        done.verification = await run_verifiers(state.workspaces, scenario, done.folder)
    except VerifierError as exc:
        raise IterationError(str(exc), code="verifier_error") from None


def _as_verification(recorded: Any) -> Verification:
    """A replayed recording's verifier outcome (a Harbor trial's reward), as the
    runner's own verification."""
    from .verify import Verification

    return Verification(
        checks=tuple(recorded.checks),
        reward=recorded.reward,
        scores=dict(recorded.scores),
    )


def workspace_name(
    scenario_id: str, mode: str, iteration: int, model: str | None
) -> str:
    """Where a kept workspace goes under ``workspaces/``: ``<scenario>/<mode>-iter-<n>``
    (ids made safe)."""
    return (
        trace_file_path(Path(), scenario_id, mode, iteration, model)
        .with_suffix("")
        .as_posix()
    )


@attrs.define
class _Attempt:
    """What an attempt has got so far (a failure part-way keeps what came before it)."""

    handle: Any = None
    result: Any = None
    trace: SessionTrace | None = None
    times: tuple[str, str] | None = None
    scored: ScorerResult | None = None
    metrics: dict[str, Any] = attrs.Factory(dict)
    analysis: dict[str, AnalysisResult] = attrs.Factory(dict)
    trace_text: str | None = None
    error: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    reason: str = "stop"
    #: the attempt's workspace, while it exists
    folder: Path | None = None
    #: the session's sandbox when the task brings its own (its image); None: the run's
    sandbox: Any = None
    #: the workspace was empty when the agent finished and no verifier ran in it: kept
    #: for the next session as it is
    left_empty: bool = False
    verification: Verification | None = None
    #: the trial's artifacts kept in the run's reports, relative to its report folder
    #: (the row's ``artifacts``)
    artifacts: list[str] = attrs.Factory(list)
    #: what a replayed recording's verifiers said (``RecordedVerification``), read
    #: before its session is destroyed
    recorded: Any = None

    def verification_metrics(self) -> dict[str, Any]:
        """The verifiers' named sub-scores, as ``reward_<name>`` metrics of the row."""
        if self.verification is None:
            return {}
        return {
            f"reward_{name}": value for name, value in self.verification.scores.items()
        }

    def failed(self, exc: IterationError) -> None:
        """Record why the attempt failed."""
        self.error, self.error_code, self.reason, self.retry_after = (
            str(exc),
            exc.code,
            exc.reason,
            exc.retry_after,
        )


async def _session(
    state: RunState,
    provider: ProviderAdapter,
    params: CreateSessionParams,
    scenario: Scenario,
    done: _Attempt,
) -> None:
    """Create the session, prompt it and export its trace, under the scenario's timeout."""
    # trio.fail_after's scope, without its generator-based context manager (once per cell)
    scope = trio.CancelScope(relative_deadline=scenario.timeout_ms / 1000)
    try:
        with scope:
            done.handle = await provider.create_session(params)
            done.result = _checked_result(
                provider,
                await provider.prompt(
                    done.handle, scenario.prompt, scenario.timeout_ms
                ),
            )
            if state.export_needed:
                done.trace = _checked_trace(
                    provider, await provider.export_session(done.handle)
                )
            done.times = provider.session_times(done.handle)
            done.recorded = provider.session_verification(done.handle)
    except (
        trio.TooSlowError
    ):  # a provider's own deadline, counted as the session's (as before this scope)
        raise _timed_out(scenario) from None
    except IterationError:
        raise
    except RateLimitedError as exc:
        raise IterationError(
            f"rate limited: {exc}", code="rate_limited", retry_after=exc.retry_after
        ) from exc
    # SystemExit too: a provider calling sys.exit() gets an error row, not the run's end
    except PLUGIN_ERRORS as exc:
        raise IterationError(
            f"{type(exc).__name__}: {exc}", code="provider_error"
        ) from exc
    if scope.cancelled_caught:
        raise _timed_out(scenario)


def _timed_out(scenario: Scenario) -> IterationError:
    return IterationError(
        f"timed out after {scenario.timeout_ms} ms", reason="timeout", code="timeout"
    )

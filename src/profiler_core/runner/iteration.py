"""One iteration: session -> prompt -> export -> collectors -> analyzers -> scorer -> row."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import attrs
import trio

from .._async import await_me_maybe
from .._signature import accepts_keyword
from ..errors import RateLimitedError
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
    RunContext,
    Scenario,
    ScorerContext,
    ScorerResult,
    SessionAnalysisBundle,
    SessionTrace,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallRecord,
)
from ..redact import Redactor
from ..store import RowWriter
from ..timestamps import now_iso
from ..tracestore import TraceRecord, trace_file_path
from .calls import PLUGIN_ERRORS, call_provider, cleanup_limit
from .hooks import HookCaller
from .row import make_row

log = logging.getLogger("agent_profiler")


@attrs.define
class IterationOutcome:
    """What one iteration produced."""

    row: ProfileRow
    trace: SessionTrace | None
    bundle: SessionAnalysisBundle | None
    #: the session was rate limited; wait this long (seconds, None: unknown) before trying again
    retry_after: float | None = None
    rate_limited: bool = False
    #: the trace as it is written (redacted), when an analysis worker serialised it; None: serialise it here
    trace_text: str | None = None


@attrs.define(kw_only=True)
class RunState:
    """Everything iterations share within one run."""

    run_id: str
    run_ctx: RunContext
    provider: Any
    scorer: Any
    collectors: list[Any]
    analyzers: list[Any]
    hooks: HookCaller
    writer: RowWriter | None
    redactor: Redactor
    default_retries: int
    session_export: bool
    sessions_dir: Path
    multi_model: bool
    destroy_timeout_s: float
    #: a cap on every session's timeout (``--time-limit``), in ms
    time_limit_ms: int | None = None
    #: the run's concurrency and rate-limit pause (shared by all cells)
    pacer: Any = None
    #: runs attempts elsewhere (``RayExecutor``); None runs them here
    executor: Any = None
    metric_units: dict[str, str] = attrs.Factory(dict)
    #: ``jsonl``: one trace store per run; ``files``: one file per session
    trace_format: str = "jsonl"
    #: runs analyzers and serialises traces in worker processes (``AnalysisPool``); None: here, inline
    analysis_pool: Any = None

    @property
    def export_needed(self) -> bool:
        """Export the trace when session export is on or an analyzer is active (as the original)."""
        return self.session_export or bool(self.analyzers)


#: rate-limited tries of one cell before its rate limit counts as an error
MAX_RATE_LIMITED = 20


class IterationError(Exception):
    """A failure inside an iteration that is worth a retry."""

    def __init__(self, message: str, reason: str = "error", code: str = "error", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.code = code
        self.retry_after = retry_after


async def _call_prompt(provider: Any, handle: Any, text: str, timeout_ms: int) -> PromptResult:
    # A blocking provider runs in a worker thread so timeouts and concurrency still work.
    return await call_provider(provider, "prompt", handle, text, timeout_ms)


async def _destroy(state: RunState, handle: Any, provider: Any = None) -> None:
    # Shielded so a timeout or Ctrl-C cannot skip it; bounded so a hung provider cannot hang us
    # (and, blocking a thread during Ctrl-C, only briefly: see calls.cleanup_limit).
    provider = provider or state.provider
    limit = cleanup_limit(provider, "destroy_session", state.destroy_timeout_s)
    with trio.move_on_after(limit) as scope:
        scope.shield = True
        try:
            await call_provider(provider, "destroy_session", handle)
        except PLUGIN_ERRORS as exc:  # a failed destroy must not lose the row
            log.warning("destroy_session(%s) failed: %s", getattr(handle, "session_id", handle), exc)
    if scope.cancelled_caught:
        log.warning("destroy_session(%s) did not finish in %ss; abandoned", getattr(handle, "session_id", handle), limit)


def _wrong(provider: Any, method: str, what: str, value: Any, expected: str) -> IterationError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return IterationError(
        f"provider {getattr(provider, 'id', type(provider).__name__)!r} returned {what} {shown} from {method}, expected {expected}",
        code="provider_error",
    )


def _checked_result(provider: Any, result: Any) -> PromptResult:
    """``result`` when it is a well-formed PromptResult; otherwise an error naming the plugin and what it returned."""
    if not isinstance(result, PromptResult):
        raise _wrong(provider, "prompt", type(result).__name__, result, "PromptResult")
    metrics = result.metrics
    checks = (
        (metrics, PromptMetrics, "metrics", "PromptMetrics"),
        (getattr(metrics, "tokens", None), TokenBreakdown, "metrics.tokens", "TokenBreakdown"),
        (getattr(metrics, "timing", None), TimingBreakdown, "metrics.timing", "TimingBreakdown"),
        (getattr(metrics, "cost", None), CostBreakdown, "metrics.cost", "CostBreakdown"),
        (result.text, str, "text", "a string"),
    )
    for value, cls, field, expected in checks:
        if not isinstance(value, cls):
            raise _wrong(provider, "prompt", f"a PromptResult whose {field} is", value, expected)
    if not all(isinstance(call, ToolCallRecord) for call in metrics.tool_calls):
        raise _wrong(provider, "prompt", "tool calls", metrics.tool_calls, "ToolCallRecord items")
    return result


def _checked_trace(provider: Any, trace: Any) -> SessionTrace | None:
    """``trace`` when it is a SessionTrace or None; otherwise an error naming the plugin."""
    if trace is not None and not isinstance(trace, SessionTrace):
        raise _wrong(provider, "export_session", type(trace).__name__, trace, "SessionTrace or None")
    return trace


async def _collect(state: RunState, result: PromptResult, scenario: Scenario, mode: str, model: str, trace) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for collector in state.collectors:
        kwargs = {"model": model} if accepts_keyword(collector.collect, "model") else {}
        try:
            emitted = await await_me_maybe(collector.collect(result, scenario, mode, trace, **kwargs))
        except PLUGIN_ERRORS as exc:
            raise IterationError(f"collector {collector.id!r} failed: {type(exc).__name__}: {exc}", code="collector_error") from exc
        for metric in emitted or ():
            if not isinstance(metric, CustomMetric):
                raise IterationError(f"collector {collector.id!r} returned {type(metric).__name__}, expected CustomMetric", code="collector_error")
            metrics[metric.name] = metric.value
            state.metric_units.setdefault(metric.name, metric.unit)
    return metrics


async def _analyze(state: RunState, trace: SessionTrace, scenario: Scenario, mode: str) -> dict[str, AnalysisResult]:
    results: dict[str, AnalysisResult] = {}
    for analyzer in state.analyzers:
        try:
            result = await await_me_maybe(analyzer.analyze(trace, scenario, mode))
        except PLUGIN_ERRORS as exc:
            raise IterationError(analyzer_failure(analyzer, exc), code="analyzer_error") from exc
        results[analyzer.name] = result
    return results


def analyzer_failure(analyzer: Any, exc: BaseException) -> str:
    """How a raising analyzer is reported, inline and in an analysis worker alike."""
    return f"analyzer {analyzer.name!r} failed: {type(exc).__name__}: {exc}"


async def _analyze_in_worker(
    state: RunState, trace: SessionTrace, scenario: Scenario, mode: str, model: str, iteration: int
) -> tuple[dict[str, AnalysisResult], str | None]:
    """The analyzers' results and the trace's written text, from an analysis worker; the loop runs on meanwhile."""
    from .analysis_pool import CellJob

    # Warm-up cells (iteration -1) and runs without session export write no trace: none is serialised.
    written = state.session_export and state.writer is not None and iteration >= 0
    if not state.analyzers and not written:
        return {}, None  # nothing for a worker to do
    done = await state.analysis_pool.run(
        CellJob(
            trace=trace, scenario=scenario, mode=mode, model=model, iteration=iteration, analyze=bool(state.analyzers),
            trace_format=state.trace_format if written else None, multi_model=state.multi_model,
        )
    )
    if done.error is not None:
        raise IterationError(done.error, code="analyzer_error")
    return done.results, done.trace_text


async def _score(state: RunState, scenario: Scenario, result: PromptResult, trace, mode: str, model: str, iteration: int, metadata: dict) -> ScorerResult:
    context = ScorerContext(agent_output=result.text, trace=trace, mode=mode, model=model, iteration=iteration, metadata=metadata)
    try:
        scored = await await_me_maybe(state.scorer.evaluate(scenario, context))
    except PLUGIN_ERRORS as exc:
        raise IterationError(f"scorer {state.scorer.id!r} failed: {type(exc).__name__}: {exc}", code="scorer_error") from exc
    if not isinstance(scored, ScorerResult):
        raise IterationError(f"scorer {state.scorer.id!r} returned {type(scored).__name__}, expected ScorerResult", code="scorer_error")
    if scored.error:
        raise IterationError(f"scorer {state.scorer.id!r}: {scored.error}", code="scorer_error")
    return scored


async def run_iteration(
    state: RunState,
    *,
    model: str,
    mode: str,
    mode_config: ModeConfig,
    scenario: Scenario,
    iteration: int,
    warmup: bool = False,
    provider: Any = None,
) -> IterationOutcome:
    """Run one cell of the matrix, with retries, and record it (``provider``: this cell's instance)."""
    if not warmup:
        replacement = await state.hooks.first_result(
            "profiler_before_scenario",
            ctx=BeforeScenarioContext(scenario=scenario, mode=mode, model=model, iteration=iteration, run=state.run_ctx),
        )
        if isinstance(replacement, Scenario):
            scenario = replacement

    if state.time_limit_ms is not None and state.time_limit_ms < scenario.timeout_ms:
        scenario = attrs.evolve(scenario, timeout_ms=state.time_limit_ms)
    max_attempts = 1 + (scenario.allowed_retries or state.default_retries)
    attempt = rate_limits = 0
    while True:
        attempt += 1
        attempt_fn = state.executor.attempt if state.executor is not None else attempt_cell
        outcome, error = await attempt_fn(
            state, model=model, mode=mode, mode_config=mode_config, scenario=scenario, iteration=iteration, attempt=attempt,
            provider=provider or state.provider,
        )
        if outcome.rate_limited and rate_limits < MAX_RATE_LIMITED:
            # Not the agent's failure: wait as told and try again, without using up a retry.
            rate_limits += 1
            attempt -= 1
            wait = outcome.retry_after or 1.0
            if state.pacer is not None:
                wait = state.pacer.rate_limited(outcome.retry_after, rate_limits)
            log.warning("rate limited: %s/%s/%s#%d waits %.1f s and tries again", model, mode, scenario.id, iteration, wait)
            await trio.sleep(wait)
            continue
        if error is None or attempt >= max_attempts:
            if error is None and state.pacer is not None:
                state.pacer.succeeded()
            break
        log.warning("retrying %s/%s/%s#%d (attempt %d of %d) after: %s", model, mode, scenario.id, iteration, attempt + 1, max_attempts, error)

    if not warmup:
        if state.session_export and outcome.trace is not None and state.writer is not None:
            # The trace is on disk before its row: a cell that resume counts as done has its trace.
            # Written inline: a worker thread would let trio's MockClock jump past deadlines while
            # it waits, and buys little under the GIL. The store appends one line to an open file;
            # creating a file per trace costs the kernel 0.05-1 ms each on our VMs.
            # With analysis workers, a worker has already redacted and serialised it (``trace_text``).
            if state.trace_format == "files":
                path = trace_file_path(state.sessions_dir, scenario.id, mode, iteration, model if state.multi_model else None)
                if outcome.trace_text is not None:
                    state.writer.write_trace_text(path, outcome.trace_text)
                else:
                    state.writer.write_trace(path, outcome.trace)
            elif outcome.trace_text is not None:
                state.writer.append_trace_line(outcome.trace_text)
            else:
                state.writer.append_trace(
                    TraceRecord(
                        scenario_id=scenario.id, mode=mode, model=model, iteration=iteration, trace=outcome.trace,
                        multi_model=state.multi_model,
                    )
                )
        if state.writer is not None:
            state.writer.write_row(outcome.row)
            if outcome.bundle is not None and outcome.bundle.results:
                state.writer.write_analysis(outcome.bundle)
        await state.hooks.call(
            "profiler_after_scenario",
            ctx=AfterScenarioContext(
                scenario=scenario, mode=mode, model=model, iteration=iteration, result=outcome.row, trace=outcome.trace, run=state.run_ctx
            ),
        )
    return outcome


async def attempt_cell(
    state: RunState, *, model: str, mode: str, mode_config: ModeConfig, scenario: Scenario, iteration: int, attempt: int,
    provider: Any,
) -> tuple[IterationOutcome, str | None]:
    """One attempt of a cell: session, prompt, export, collectors, analyzers, scorer, row (nothing written)."""
    started_at = now_iso()
    t0 = time.perf_counter()
    handle = None
    result: PromptResult | None = None
    trace: SessionTrace | None = None
    scored: ScorerResult | None = None
    metrics: dict[str, Any] = {}
    analysis: dict[str, AnalysisResult] = {}
    trace_text: str | None = None
    error: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    reason = "stop"
    params = CreateSessionParams(
        system_instructions=mode_config.system_instructions,
        scenario_id=scenario.id,
        iteration=iteration,
        mode=mode,
        model=model,
    )
    try:
        try:
            with trio.fail_after(scenario.timeout_ms / 1000):
                handle = await call_provider(provider, "create_session", params)
                result = _checked_result(provider, await _call_prompt(provider, handle, scenario.prompt, scenario.timeout_ms))
                if state.export_needed:
                    trace = _checked_trace(provider, await call_provider(provider, "export_session", handle))
        except trio.TooSlowError:
            raise IterationError(f"timed out after {scenario.timeout_ms} ms", reason="timeout", code="timeout") from None
        except IterationError:
            raise
        except RateLimitedError as exc:
            raise IterationError(f"rate limited: {exc}", code="rate_limited", retry_after=exc.retry_after) from exc
        except PLUGIN_ERRORS as exc:  # SystemExit too: a provider calling sys.exit() gets an error row, not the run's end
            raise IterationError(f"{type(exc).__name__}: {exc}", code="provider_error") from exc
        metrics = await _collect(state, result, scenario, mode, model, trace)
        if trace is not None and state.analysis_pool is not None:
            analysis, trace_text = await _analyze_in_worker(state, trace, scenario, mode, model, iteration)
        elif trace is not None and state.analyzers:
            analysis = await _analyze(state, trace, scenario, mode)
        scored = await _score(state, scenario, result, trace, mode, model, iteration, {"attempt": attempt})
        if result.error:
            # The session itself ended in an error (an API error, a recorded failure): measured, scored, but an error.
            raise IterationError(result.error, code="session_error")
    except IterationError as exc:
        error, error_code, reason, retry_after = str(exc), exc.code, exc.reason, exc.retry_after
    finally:
        if handle is not None:
            await _destroy(state, handle, provider)

    completed_at = now_iso()
    elapsed_ms = (time.perf_counter() - t0) * 1000
    row = make_row(
        run_id=state.run_id,
        provider=state.provider.id,
        metric_units=state.metric_units,
        model=model,
        mode=mode,
        scenario_id=scenario.id,
        iteration=iteration,
        started_at=started_at,
        completed_at=completed_at,
        elapsed_ms=elapsed_ms,
        session_id=getattr(handle, "session_id", "") if handle is not None else "",
        result=result,
        trace=trace,
        scored=scored,
        metrics=metrics,
        error=error,
        error_code=error_code,
        reason=reason,
        attempts=attempt,
    )
    bundle = None
    if analysis:
        bundle = SessionAnalysisBundle(
            session_id=row.session_id, scenario_id=scenario.id, mode=mode, model=model, iteration=iteration, results=analysis
        )
    outcome = IterationOutcome(
        row=row, trace=trace, bundle=bundle, retry_after=retry_after, rate_limited=error_code == "rate_limited", trace_text=trace_text
    )
    return outcome, error

"""One iteration: session -> prompt -> export -> collectors -> analyzers -> scorer -> row."""

from __future__ import annotations

import functools
import inspect
import logging
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import trio

from .._async import await_me_maybe
from .._signature import accepts_keyword
from ..model import (
    AfterScenarioContext,
    AnalysisResult,
    BeforeScenarioContext,
    CreateSessionParams,
    CustomMetric,
    ModeConfig,
    ProfileRow,
    PromptResult,
    RunContext,
    Scenario,
    ScorerContext,
    ScorerResult,
    SessionAnalysisBundle,
    SessionTrace,
)
from ..redact import Redactor
from ..serde import to_json
from ..store import RowWriter
from .hooks import HookCaller
from .row import make_row

log = logging.getLogger("agent_profiler")


def now_iso() -> str:
    """UTC now as the original writes it: ``2026-01-01T00:00:23.638Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.define
class IterationOutcome:
    """What one iteration produced."""

    row: ProfileRow
    trace: SessionTrace | None
    bundle: SessionAnalysisBundle | None


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
    metric_units: dict[str, str] = attrs.Factory(dict)

    @property
    def export_needed(self) -> bool:
        """Export the trace when session export is on or an analyzer is active (as the original)."""
        return self.session_export or bool(self.analyzers)


class IterationError(Exception):
    """A failure inside an iteration that is worth a retry."""

    def __init__(self, message: str, reason: str = "error", code: str = "error") -> None:
        super().__init__(message)
        self.reason = reason
        self.code = code


async def _call_prompt(provider: Any, handle: Any, text: str, timeout_ms: int) -> PromptResult:
    prompt = provider.prompt
    if inspect.iscoroutinefunction(prompt):
        return await prompt(handle, text, timeout_ms)
    # A blocking provider runs in a worker thread so timeouts and concurrency still work.
    result = await trio.to_thread.run_sync(functools.partial(prompt, handle, text, timeout_ms), abandon_on_cancel=True)
    return await await_me_maybe(result)


async def _destroy(state: RunState, handle: Any) -> None:
    # Shielded so a timeout or Ctrl-C cannot skip it; bounded so a hung provider cannot hang us.
    with trio.move_on_after(state.destroy_timeout_s) as scope:
        scope.shield = True
        try:
            await await_me_maybe(state.provider.destroy_session(handle))
        except Exception as exc:  # noqa: BLE001 - a failed destroy must not lose the row
            log.warning("destroy_session(%s) failed: %s", getattr(handle, "session_id", handle), exc)
    if scope.cancelled_caught:
        log.warning("destroy_session(%s) did not finish in %ss", getattr(handle, "session_id", handle), state.destroy_timeout_s)


async def _collect(state: RunState, result: PromptResult, scenario: Scenario, mode: str, model: str, trace) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for collector in state.collectors:
        kwargs = {"model": model} if accepts_keyword(collector.collect, "model") else {}
        try:
            emitted = await await_me_maybe(collector.collect(result, scenario, mode, trace, **kwargs))
        except Exception as exc:
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
        except Exception as exc:
            raise IterationError(f"analyzer {analyzer.name!r} failed: {type(exc).__name__}: {exc}", code="analyzer_error") from exc
        results[analyzer.name] = result
    return results


async def _score(state: RunState, scenario: Scenario, result: PromptResult, trace, mode: str, model: str, iteration: int, metadata: dict) -> ScorerResult:
    context = ScorerContext(agent_output=result.text, trace=trace, mode=mode, model=model, iteration=iteration, metadata=metadata)
    try:
        scored = await await_me_maybe(state.scorer.evaluate(scenario, context))
    except Exception as exc:
        raise IterationError(f"scorer {state.scorer.id!r} failed: {type(exc).__name__}: {exc}", code="scorer_error") from exc
    if not isinstance(scored, ScorerResult):
        raise IterationError(f"scorer {state.scorer.id!r} returned {type(scored).__name__}, expected ScorerResult", code="scorer_error")
    if scored.error:
        raise IterationError(f"scorer {state.scorer.id!r}: {scored.error}", code="scorer_error")
    return scored


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def session_export_path(sessions_dir: Path, scenario_id: str, mode: str, iteration: int, model: str | None) -> Path:
    """``reports/sessions/<scenarioId>/<mode>-iter-<n>.json`` (model added when several run)."""
    stem = f"{_slug(mode)}-{_slug(model)}" if model else _slug(mode)
    return sessions_dir / _slug(scenario_id) / f"{stem}-iter-{iteration}.json"


async def run_iteration(
    state: RunState,
    *,
    model: str,
    mode: str,
    mode_config: ModeConfig,
    scenario: Scenario,
    iteration: int,
    warmup: bool = False,
) -> IterationOutcome:
    """Run one cell of the matrix, with retries, and record it."""
    if not warmup:
        replacement = await state.hooks.first_result(
            "profiler_before_scenario",
            ctx=BeforeScenarioContext(scenario=scenario, mode=mode, model=model, iteration=iteration, run=state.run_ctx),
        )
        if isinstance(replacement, Scenario):
            scenario = replacement

    max_attempts = 1 + (scenario.allowed_retries or state.default_retries)
    attempt = 0
    while True:
        attempt += 1
        outcome, error = await _attempt(state, model=model, mode=mode, mode_config=mode_config, scenario=scenario, iteration=iteration, attempt=attempt)
        if error is None or attempt >= max_attempts:
            break
        log.info("retrying %s/%s/%s#%d after: %s", model, mode, scenario.id, iteration, error)

    if not warmup:
        if state.writer is not None:
            state.writer.write_row(outcome.row)
            if outcome.bundle is not None and outcome.bundle.results:
                state.writer.write_analysis(outcome.bundle)
        if state.session_export and outcome.trace is not None and state.writer is not None:
            path = session_export_path(state.sessions_dir, scenario.id, mode, iteration, model if state.multi_model else None)
            state.writer.write_file(path, to_json(outcome.trace, indent=2) + "\n")
        await state.hooks.call(
            "profiler_after_scenario",
            ctx=AfterScenarioContext(
                scenario=scenario, mode=mode, model=model, iteration=iteration, result=outcome.row, trace=outcome.trace, run=state.run_ctx
            ),
        )
    return outcome


async def _attempt(
    state: RunState, *, model: str, mode: str, mode_config: ModeConfig, scenario: Scenario, iteration: int, attempt: int
) -> tuple[IterationOutcome, str | None]:
    provider = state.provider
    started_at = now_iso()
    t0 = time.perf_counter()
    handle = None
    result: PromptResult | None = None
    trace: SessionTrace | None = None
    scored: ScorerResult | None = None
    metrics: dict[str, Any] = {}
    analysis: dict[str, AnalysisResult] = {}
    error: str | None = None
    error_code: str | None = None
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
                handle = await await_me_maybe(provider.create_session(params))
                result = await _call_prompt(provider, handle, scenario.prompt, scenario.timeout_ms)
                if not isinstance(result, PromptResult):
                    raise IterationError(f"provider {provider.id!r} returned {type(result).__name__} from prompt, expected PromptResult", code="provider_error")
                if state.export_needed:
                    trace = await await_me_maybe(provider.export_session(handle))
        except trio.TooSlowError:
            raise IterationError(f"timed out after {scenario.timeout_ms} ms", reason="timeout", code="timeout") from None
        except IterationError:
            raise
        except Exception as exc:
            raise IterationError(f"{type(exc).__name__}: {exc}", code="provider_error") from exc
        metrics = await _collect(state, result, scenario, mode, model, trace)
        if trace is not None and state.analyzers:
            analysis = await _analyze(state, trace, scenario, mode)
        scored = await _score(state, scenario, result, trace, mode, model, iteration, {"attempt": attempt})
        if result.error:
            # The session itself ended in an error (an API error, a recorded failure): measured, scored, but an error.
            raise IterationError(result.error, code="session_error")
    except IterationError as exc:
        error, error_code, reason = str(exc), exc.code, exc.reason
    finally:
        if handle is not None:
            await _destroy(state, handle)

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
    return IterationOutcome(row=row, trace=trace, bundle=bundle), error

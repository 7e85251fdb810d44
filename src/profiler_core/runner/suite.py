"""``run_profile_suite``: the matrix, providers, hooks, concurrency and the run's files."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import trio

from .._async import await_me_maybe
from ..errors import ConfigError, HookError, ProfilerError, UnknownModeError
from ..interrupt import arm as arm_interrupt
from ..model import (
    ModeConfig,
    PermissionConfig,
    PluginRecord,
    ProfileRow,
    ProfileSuiteResult,
    ProgressEvent,
    ProviderConfig,
    RunContext,
    RunCounts,
    RunManifest,
    SessionAnalysisBundle,
)
from ..model.run import ProgressKind, RunStatus
from ..paths import check_run_id, inside
from ..plugins import PluginManager, get_plugin_manager
from ..redact import run_redactor
from ..store import RowWriter, RunLock, RunPaths, StoredRows, repair_truncated_tail, write_manifest
from ..timestamps import now_iso
from ..tracestore import TRACE_FORMATS, TRACES_FILE, TraceRecord
from .analysis_pool import analysis_pool, worker_count
from .calls import PLUGIN_ERRORS, call_provider, cleanup_limit
from .hooks import HookCaller
from .iteration import RunState, run_iteration
from .options import RunOptions
from .pacing import Pacer
from .schedule import order_cells

log = logging.getLogger("agent_profiler")


def new_run_id() -> str:
    """A sortable, unique run id: ``run_20261122T051500Z_3f9a``."""
    return "run_" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "_" + secrets.token_hex(2)


def _trace_layout(sessions_dir: Path, wanted: str, *, resuming: bool, run_id: str) -> tuple[str, str | None]:
    """The trace format to write, and a warning when it is not ``wanted``.

    A resumed run keeps the layout it started with, so its traces stay in one
    place; a new run refuses a folder that already holds another run's store.
    """
    store = sessions_dir / TRACES_FILE
    if store.exists():
        if not resuming and store.stat().st_size:
            raise ConfigError(
                f"run {run_id!r} already has session traces in {store}; "
                f"use --resume {run_id} to finish it, or another --run-id"
            )
        if resuming and wanted != "jsonl":
            return "jsonl", f"traces appended to {TRACES_FILE}, as the run being resumed did (not trace_format {wanted!r})"
        return ("jsonl" if resuming else wanted), None
    if resuming and wanted == "jsonl" and next(sessions_dir.glob("*/*-iter-*.json"), None) is not None:
        return "files", "traces written one file per session, as the run being resumed did"
    return wanted, None


def _validate(options: RunOptions) -> None:
    problems = []
    if options.repetitions < 1:
        problems.append(f"repetitions must be >= 1, got {options.repetitions}")
    if options.allowed_retries < 0:
        problems.append(f"allowed_retries must be >= 0, got {options.allowed_retries}")
    if options.concurrency is not None and options.concurrency < 1:
        problems.append(f"concurrency must be >= 1 (or None for auto), got {options.concurrency}")
    if options.max_concurrency < 1:
        problems.append(f"max_concurrency must be >= 1, got {options.max_concurrency}")
    if options.analysis_workers is not None and options.analysis_workers < 0:
        problems.append(f"analysis_workers must be >= 0 (or None for auto), got {options.analysis_workers}")
    if not options.mode_list():
        problems.append("at least one mode is required")
    if not options.scenarios:
        problems.append("at least one scenario is required")
    if not options.models:
        problems.append("at least one model is required")
    if options.trace_format not in TRACE_FORMATS:
        problems.append(f"trace_format {options.trace_format!r}: expected one of {', '.join(TRACE_FORMATS)}")
    if options.modes is None and options.mode_resolver is None:
        problems.append("give `modes` (name -> ModeConfig) or a `mode_resolver` with `mode_names`")
    if problems:
        raise ConfigError("; ".join(problems))


async def _resolve_modes(options: RunOptions) -> dict[str, ModeConfig]:
    # Every mode up front, so an unknown one fails before any session starts.
    resolved: dict[str, ModeConfig] = {}
    for mode in options.mode_list():
        if options.modes is not None:
            config = options.modes[mode]
        else:
            resolver = options.mode_resolver
            if resolver is None:
                raise ConfigError(f"mode {mode!r}: no mode resolver and no `modes` given")
            try:
                config = await await_me_maybe(resolver.resolve(mode))
            except UnknownModeError:
                raise
            except Exception as exc:
                raise UnknownModeError(f"mode {mode!r}: resolver {getattr(options.mode_resolver, 'id', '?')!r} failed: {exc}") from exc
        if not isinstance(config, ModeConfig):
            raise ConfigError(f"mode {mode!r}: resolver returned {type(config).__name__}, expected ModeConfig")
        resolved[mode] = config
    return resolved


@contextmanager
def mode_environment(environment: Mapping[str, str]) -> Iterator[None]:
    """Apply a mode's environment variables and restore the previous values exactly."""
    saved = {key: os.environ.get(key) for key in environment}
    try:
        os.environ.update({k: str(v) for k, v in environment.items()})
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _plugin_records(manager: PluginManager) -> tuple[PluginRecord, ...]:
    return tuple(
        PluginRecord(name=p.name, distribution=p.distribution, version=p.version)
        for p in sorted(manager.plugins.values(), key=lambda p: p.name)
        if p.error is None and not p.name.startswith("run-hooks-")
    )


class _Progress:
    """Counts cells and tells the ``profiler_progress`` hook."""

    def __init__(self, hooks: HookCaller, run_id: str, total: int) -> None:
        self.hooks, self.run_id, self.total = hooks, run_id, total
        self.completed = 0
        self.failed = 0

    def emit(self, kind: ProgressKind, **fields: Any) -> None:
        self.hooks.call_sync(
            "profiler_progress",
            event=ProgressEvent(kind=kind, run_id=self.run_id, completed=self.completed, total=self.total, failed=self.failed, **fields),
        )


async def run_profile_suite(options: RunOptions) -> ProfileSuiteResult:
    """Run the whole matrix under trio and return every row (DESIGN §5)."""
    _validate(options)
    manager = options.plugin_manager or get_plugin_manager()
    run_id = check_run_id(options.run_id) if options.run_id else new_run_id()
    hook_names = []
    for index, hooks_obj in enumerate(options.hooks):
        name = f"run-hooks-{run_id}-{index}"
        manager.register(hooks_obj, name)
        hook_names.append(name)
    # One writer per run: a second `--resume` of a run still being written is refused before
    # it touches the manifest or the rows.
    lock = RunLock(RunPaths(Path(options.results_dir), run_id))
    lock.acquire()
    try:
        return await _run(options, manager, run_id)
    finally:
        lock.release()
        for name in hook_names:
            manager.unregister(name)


async def _run(options: RunOptions, manager: PluginManager, run_id: str) -> ProfileSuiteResult:
    executor = None
    if options.executor == "ray":  # before anything is written: a missing extra is one line, not a failed run
        from .ray_executor import RayExecutor, RaySettings

        executor = RayExecutor(options.ray or RaySettings(), profile_path=options.profile_path, overrides=dict(options.overrides))
    mode_configs = await _resolve_modes(options)
    modes = list(mode_configs)
    models = list(options.models)
    scenarios = list(options.scenarios)
    provider = options.provider
    hooks = HookCaller(manager)
    paths = RunPaths(Path(options.results_dir), run_id)
    scope = getattr(provider, "init_scope", "suite")
    # Every secret the profile marks or passes (options, modes, judge) is masked wherever it goes.
    redactor, warnings = run_redactor(options.provider_options, mode_configs, options.judge)
    first = mode_configs[modes[0]]
    if scope != "mode" and len(modes) > 1 and any(
        c.provider_overrides or c.environment != first.environment for c in mode_configs.values()
    ):
        # Overrides and the environment reach a provider only through init(); re-init per mode
        # so each mode's agent really gets its own.
        scope = "mode"
        warnings.append("provider initialised once per mode because modes set provider_overrides or environments")

    # Modes overlap when each (model, mode) can get its own instance and the provider does not read
    # the runner's process environment; otherwise they run one after another as before.
    overlap = options.provider_factory is not None and not getattr(provider, "needs_process_env", False)
    if not overlap and options.order != "blocked":
        warnings.append(
            f"execution.order {options.order!r} needs a provider instance per mode "
            "(a provider factory and no needs_process_env); cells ran mode after mode"
        )

    cells = [
        (model, mode, scenario, i)
        for model in models
        for mode in modes
        for scenario in scenarios
        for i in range(options.repetitions)
        if options.only_cells is None or (model, mode, scenario.id, i) in options.only_cells
    ]
    done = {r.cell for r in options.previous_rows}
    todo = [c for c in cells if (c[0], c[1], c[2].id, c[3]) not in done]
    run_ctx = RunContext(
        run_id=run_id,
        modes=modes,
        scenarios=scenarios,
        repetitions=options.repetitions,
        models=models,
        provider=provider.id,
        results_dir=str(options.results_dir),
        reports_dir=str(options.reports_dir),
        session_export=options.session_export,
        extensions=options.extensions,
        profile_path=options.profile_path,
    )
    # Each run's traces under its own report folder: a second run never replaces the first's.
    sessions_dir = inside(Path(options.reports_dir), Path(options.reports_dir) / run_id / "sessions")  # no planted link out
    trace_format, layout_warning = _trace_layout(
        sessions_dir, options.trace_format, resuming=bool(options.previous_rows or options.resumed_from), run_id=run_id
    )
    if layout_warning:
        warnings.append(layout_warning)
    store_traces = options.session_export and trace_format == "jsonl"
    store_path = sessions_dir / TRACES_FILE if store_traces else None
    manifest = RunManifest(
        run_id=run_id,
        profile_hash=options.profile_hash,
        profile_path=options.profile_path,
        plugins=_plugin_records(manager),
        started_at=now_iso(),
        counts=RunCounts(expected=len(cells)),
        provider=provider.id,
        models=models,
        modes=modes,
        scenarios=[s.id for s in scenarios],
        repetitions=options.repetitions,
        resumed_from=options.resumed_from,
        overrides=options.overrides,
        sessions_dir=str(sessions_dir) if options.session_export else None,
        trace_store=str(store_path) if store_path else None,
    )
    paths.results_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(paths.manifest, manifest, redactor)

    try:
        await hooks.call_fatal("profiler_before_run", ctx=run_ctx)
    except HookError as exc:
        write_manifest(paths.manifest, attrs.evolve(manifest, status="failed", completed_at=now_iso(), warnings=[str(exc)]), redactor)
        raise

    writer = RowWriter(paths, redactor, store_path)
    pacer = Pacer(options.concurrency, options.max_concurrency)

    # A killed run may leave half-written temporary files; nobody else writes here (the run lock).
    writer.remove_stale_temporaries(sessions_dir)
    writer.remove_stale_temporaries(paths.results_dir, f".{run_id}.*.tmp")
    if store_path and (repaired := repair_truncated_tail(store_path, TraceRecord)):
        log.warning("%s", repaired)
    state = RunState(
        run_id=run_id,
        run_ctx=run_ctx,
        provider=provider,
        scorer=options.scorer,
        collectors=list(options.collectors),
        analyzers=list(options.analyzers),
        hooks=hooks,
        writer=writer,
        redactor=redactor,
        default_retries=options.allowed_retries,
        session_export=options.session_export,
        trace_format=trace_format,
        sessions_dir=sessions_dir,
        multi_model=len(models) > 1,
        destroy_timeout_s=options.destroy_timeout_s,
        time_limit_ms=options.time_limit_ms,
        pacer=pacer,
        executor=executor,
    )
    progress = _Progress(hooks, run_id, len(todo))
    # Rows and bundles are on disk; the run keeps only counts, so its memory does not grow with its length.
    tally = _Tally()
    for row in options.previous_rows:
        if row.iteration >= 0:
            tally.add(row, new=False)
    status: RunStatus = "completed"
    budget = _Budget(max_cost_usd=options.max_cost_usd, max_tokens=options.max_tokens)
    for row in options.previous_rows:
        budget.add(row)  # a resumed run's budget counts what it already spent
    t0 = time.perf_counter()
    progress.emit("run_started")

    async def one_cell(model, mode, scenario, i, limiter, token, instance=None):
        try:
            progress.emit("iteration_started", model=model, mode=mode, scenario_id=scenario.id, iteration=i)
            outcome = await run_iteration(
                state, model=model, mode=mode, mode_config=mode_configs[mode], scenario=scenario, iteration=i, provider=instance
            )
            tally.add(outcome.row)
            budget.add(outcome.row)
            progress.completed += 1
            if outcome.row.error or not outcome.row.success:
                progress.failed += 1
            progress.emit(
                "iteration_completed", model=model, mode=mode, scenario_id=scenario.id, iteration=i, row=outcome.row,
                concurrency=pacer.current,
            )
        finally:
            limiter.release_on_behalf_of(token)

    async def init_provider(model: str, mode: str, with_overrides: bool, instance: Any = None) -> None:
        if executor is not None:
            return  # the workers start their own providers (and no warm-up runs on the driver)
        instance = instance or provider
        mode_config = mode_configs[mode]
        options_ = dict(options.provider_options)
        if with_overrides:
            options_.update(mode_config.provider_overrides)
        try:
            config = ProviderConfig(
                port=options.provider_port,
                model=model,
                mode=mode,
                permissions=PermissionConfig(auto_approve=True),
                environment=dict(mode_config.environment),
                options=options_,
            )
            await call_provider(instance, "init", config)
        except ProfilerError:
            raise
        except Exception as exc:
            raise ProfilerError(f"provider {provider.id!r}: init failed (model {model!r}, mode {mode!r}): {type(exc).__name__}: {exc}") from exc
        if options.warmup:
            progress.emit("warmup_started", model=model, mode=mode)
            outcome = await run_iteration(
                state, model=model, mode=mode, mode_config=mode_config, scenario=scenarios[0], iteration=-1, warmup=True,
                provider=instance,
            )
            if outcome.row.error:
                warnings.append(f"warmup ({model}, {mode}) failed: {outcome.row.error}")
                log.warning("warmup failed: %s", outcome.row.error)
            progress.emit("warmup_completed", model=model, mode=mode)

    async def shutdown_provider(instance: Any = None) -> None:
        if executor is not None:
            return
        with trio.move_on_after(cleanup_limit(instance or provider, "shutdown", options.destroy_timeout_s)) as cs:
            cs.shield = True
            try:
                await call_provider(instance or provider, "shutdown")
            except PLUGIN_ERRORS as exc:  # shutdown failure must not lose the run
                warnings.append(f"provider shutdown failed: {exc}")

    async def overlapped_matrix() -> None:
        """Every (model, mode) has its own provider instance; cells of several modes may run at once."""
        groups: dict[tuple[str, str], _ModeGroup] = {}
        for model, mode, _, _ in todo:
            group = groups.setdefault((model, mode), _ModeGroup(model=model, mode=mode))
            group.remaining += 1
        spare = [provider]  # the instance built to validate the profile serves the first group

        async def open_group(group: _ModeGroup) -> None:
            async with group.lock:
                if group.ready:
                    return
                if group.instance is not None:  # a first init failed; that error is already on its way out
                    raise ProfilerError(f"provider {provider.id!r} could not start for mode {group.mode!r}")
                # Set before init, so the instance is shut down even when its init fails.
                factory = options.provider_factory
                assert factory is not None  # groups per mode exist only with a factory (``overlap``)
                group.instance = spare.pop() if spare else factory()
                await init_provider(group.model, group.mode, with_overrides=True, instance=group.instance)
                await hooks.call("profiler_before_mode", mode=group.mode, run=run_ctx)
                group.ready = True

        async def close_group(group: _ModeGroup) -> None:
            if group.closed or group.instance is None:
                return
            group.closed = True
            with trio.CancelScope(shield=True):
                await hooks.call("profiler_after_mode", mode=group.mode, run=run_ctx)
            await shutdown_provider(group.instance)

        async def grouped_cell(model, mode, scenario, i, limiter, token):
            group = groups[(model, mode)]
            try:
                await open_group(group)
            except BaseException:
                limiter.release_on_behalf_of(token)
                raise
            await one_cell(model, mode, scenario, i, limiter, token, instance=group.instance)
            group.remaining -= 1
            if group.remaining == 0:
                await close_group(group)

        schedule = order_cells(todo, modes, options.order, options.order_seed)
        limiter = pacer.limiter
        try:
            async with trio.open_nursery() as nursery:
                # Acquire before starting each task so cells start in schedule order
                # (trio does not promise FIFO scheduling of freshly started tasks).
                for model, mode, scenario, i in schedule:
                    token = object()
                    await pacer.acquire(token)  # a rate limit's Retry-After holds back new cells
                    if budget.exhausted:  # checked after the wait: cells that finished meanwhile count
                        limiter.release_on_behalf_of(token)
                        break
                    nursery.start_soon(grouped_cell, model, mode, scenario, i, limiter, token)
        finally:
            # Interrupted or failed: end every instance that was started (no after_mode: the mode did not end).
            for group in groups.values():
                if group.instance is not None and not group.closed:
                    group.closed = True
                    await shutdown_provider(group.instance)

    async def matrix() -> None:
        if executor is None:
            workers = worker_count(options.analysis_workers, options.concurrency, options.max_concurrency)
            async with analysis_pool(
                workers, profile_path=options.profile_path, overrides=dict(options.overrides), analyzers=state.analyzers,
                redactor=redactor,
            ) as pool:
                state.analysis_pool = pool
                try:
                    await cells_here_or_there()
                finally:
                    state.analysis_pool = None
            return
        if options.analysis_workers != 0:
            log.warning("execution.analysis_workers has no effect with executor: ray (the Ray workers run the analyzers)")
        executor.start()  # a few seconds for a local cluster, before any cell starts
        try:
            await cells_here_or_there()
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(executor.close)

    async def cells_here_or_there() -> None:
        if overlap:
            await overlapped_matrix()
            return
        for model in models:
            model_cells = [c for c in todo if c[0] == model]
            if not model_cells:
                continue
            try:
                if scope != "mode":
                    with mode_environment(mode_configs[modes[0]].environment):
                        await init_provider(model, modes[0], with_overrides=len(modes) == 1)
                for mode in modes:
                    mode_cells = [c for c in model_cells if c[1] == mode]
                    if not mode_cells:
                        continue
                    if budget.exhausted:
                        break
                    with mode_environment(mode_configs[mode].environment):
                        try:
                            if scope == "mode":
                                await init_provider(model, mode, with_overrides=True)
                            await hooks.call("profiler_before_mode", mode=mode, run=run_ctx)
                            limiter = pacer.limiter
                            async with trio.open_nursery() as nursery:
                                # Acquire before starting each task so cells start in matrix order
                                # (trio does not promise FIFO scheduling of freshly started tasks).
                                for _, _, scenario, i in mode_cells:
                                    token = object()
                                    await pacer.acquire(token)
                                    if budget.exhausted:
                                        limiter.release_on_behalf_of(token)
                                        break
                                    nursery.start_soon(one_cell, model, mode, scenario, i, limiter, token)
                            await hooks.call("profiler_after_mode", mode=mode, run=run_ctx)
                        finally:
                            if scope == "mode":
                                await shutdown_provider()
            finally:
                if scope != "mode":
                    await shutdown_provider()

    interrupted = False
    try:
        async with trio.open_nursery() as outer:
            main_scope = trio.CancelScope()

            async def watch_sigint(task_status=trio.TASK_STATUS_IGNORED):
                nonlocal interrupted
                try:
                    with trio.open_signal_receiver(signal.SIGINT) as signals:
                        task_status.started()
                        async for _ in signals:
                            if interrupted:
                                os._exit(130)  # second Ctrl-C: leave at once
                            interrupted = True
                            log.warning("interrupted: finishing cleanup (Ctrl-C again to quit at once)")
                            main_scope.cancel()
                finally:
                    if interrupted:
                        arm_interrupt()  # the cleanup after this watcher, too, ends at a second Ctrl-C

            if options.handle_sigint:
                await outer.start(watch_sigint)
            with main_scope:
                await matrix()
            outer.cancel_scope.cancel()
        if interrupted:
            status = "interrupted"
        elif budget.exhausted and tally.new < len(todo):
            status = "budget_exhausted"
            warnings.append(f"budget spent ({budget.describe()}): cells not started; resume with a raised budget")
    except BaseExceptionGroup as group:
        # trio wraps errors in groups; a user wants the one error that happened.
        leaf = _single_leaf(group)
        status = "interrupted" if isinstance(leaf, KeyboardInterrupt) else "failed"
        warnings.extend(writer.close())
        _finish(paths, manifest, tally, hooks, warnings, state, status, redactor)
        if leaf is not None:
            raise leaf from None
        raise
    except KeyboardInterrupt:
        status = "interrupted"
        warnings.extend(writer.close())
        _finish(paths, manifest, tally, hooks, warnings, state, status, redactor)
        raise
    except BaseException:
        warnings.extend(writer.close())
        _finish(paths, manifest, tally, hooks, warnings, state, "failed", redactor)
        raise
    warnings.extend(writer.close())

    scenario_index = {s.id: i for i, s in enumerate(scenarios)}
    result = ProfileSuiteResult(
        run_id=run_id,
        rows=StoredRows(paths.jsonl, ProfileRow, order=_row_order(models, modes, scenarios)),
        duration_ms=(time.perf_counter() - t0) * 1000,
        output_jsonl_path=str(paths.jsonl.resolve()),
        analysis_results=StoredRows(
            paths.analysis,
            SessionAnalysisBundle,
            order=lambda b: (models.index(b.model), modes.index(b.mode), scenario_index.get(b.scenario_id, 0), b.iteration),
        ),
        manifest_path=str(paths.manifest.resolve()),
        status=status,
        counts=tally.counts(manifest.counts.expected),
    )
    progress.emit("run_completed")
    with trio.CancelScope(shield=True):
        await hooks.call("profiler_after_run", ctx=run_ctx, result=result)
    _finish(paths, manifest, tally, hooks, warnings, state, status, redactor)
    return result


@attrs.define
class _Tally:
    """Counts of the rows a run has (what the manifest and the result report), without the rows."""

    completed: int = 0
    errored: int = 0
    succeeded: int = 0
    #: rows written by this invocation (not resumed ones)
    new: int = 0

    def add(self, row: ProfileRow, *, new: bool = True) -> None:
        """Count one row."""
        self.completed += 1
        self.errored += bool(row.error)
        self.succeeded += bool(row.success)
        self.new += new

    def counts(self, expected: int) -> RunCounts:
        """The manifest's counts."""
        return RunCounts(expected=expected, completed=self.completed, errored=self.errored, succeeded=self.succeeded)


@attrs.define
class _Budget:
    """What a run may spend, and what it has spent."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    cost_usd: float = 0.0
    tokens: int = 0

    def add(self, row: ProfileRow) -> None:
        """Count a finished cell's cost and tokens."""
        self.cost_usd += row.cost.total_usd or 0.0
        self.tokens += row.tokens.total

    @property
    def exhausted(self) -> bool:
        """True once the cost or token limit is reached."""
        return (self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd) or (
            self.max_tokens is not None and self.tokens >= self.max_tokens
        )

    def describe(self) -> str:
        """``$0.52 of $0.50; 120000 of 100000 tokens`` (the limits that are set)."""
        parts = []
        if self.max_cost_usd is not None:
            parts.append(f"${self.cost_usd:.4f} of ${self.max_cost_usd:g}")
        if self.max_tokens is not None:
            parts.append(f"{self.tokens} of {self.max_tokens} tokens")
        return "; ".join(parts)


@attrs.define(eq=False)
class _ModeGroup:
    """The cells of one (model, mode) and the provider instance that serves them."""

    model: str
    mode: str
    remaining: int = 0
    instance: Any = None
    ready: bool = False
    closed: bool = False
    lock: trio.Lock = attrs.Factory(trio.Lock)


def _single_leaf(group: BaseExceptionGroup) -> BaseException | None:
    leaf: BaseException = group
    while isinstance(leaf, BaseExceptionGroup):
        if len(leaf.exceptions) != 1:
            return None
        leaf = leaf.exceptions[0]
    return leaf


def _row_order(models, modes, scenarios):
    model_index = {m: i for i, m in enumerate(models)}
    mode_index = {m: i for i, m in enumerate(modes)}
    scenario_index = {s.id: i for i, s in enumerate(scenarios)}
    return lambda r: (model_index.get(r.model, 0), mode_index.get(r.mode, 0), scenario_index.get(r.scenario_id, 0), r.iteration)


def _finish(paths, manifest, tally, hooks, warnings, state, status, redactor) -> None:
    counts = tally.counts(manifest.counts.expected)
    write_manifest(
        paths.manifest,
        attrs.evolve(
            manifest,
            status=status,
            completed_at=now_iso(),
            counts=counts,
            metric_units=dict(sorted(state.metric_units.items())),
            hook_errors=list(hooks.errors),
            warnings=list(warnings),
        ),
        redactor,
    )


def run_profile_suite_sync(options: RunOptions) -> ProfileSuiteResult:
    """Run the suite from synchronous code (wraps ``trio.run``)."""
    return trio.run(run_profile_suite, options)


__all__ = ["ProfilerError", "mode_environment", "new_run_id", "run_profile_suite", "run_profile_suite_sync"]

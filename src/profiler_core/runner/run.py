"""``Run``: one run of a profile's matrix, phase by phase.

**prepare** (lock, resume state, modes, provider, executor) → **manifest**
(the run's manifest and ``before_run``) → **schedule** (the cells still to do,
in ``execution.order``, cut into the executor's stages) → **execute** (one loop
that acquires a slot, checks the budget and starts the next cell) → **finish**
(writer closed, manifest completed, ``after_run``). The run's lock is taken
before anything is read and held until the manifest is final.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ..errors import (
    ConfigError,
    HookError,
    ProfilerError,
    SandboxError,
    UnknownModeError,
)
from ..model import (
    ModeConfig,
    ProfileRow,
    ProfileSuiteResult,
    RunCounts,
    RunManifest,
    SessionAnalysisBundle,
    StopRecord,
)
from ..model.environment import BUILTIN_ENVIRONMENTS
from ..model.run import RunStatus
from ..plugins.manager import get_plugin_manager
from ..sandbox import SandboxSettings
from ..storage.paths import check_run_id, inside
from ..storage.store import (
    RowWriter,
    RunLock,
    RunPaths,
    StoredRows,
    repair_truncated_tail,
    write_manifest,
)
from ..storage.tracestore import TRACES_FILE, TraceRecord
from ..util.asyncs import await_me_maybe, leaves
from ..util.interrupt import arm as arm_interrupt
from ..util.redact import Redactor, run_redactor
from ..util.timestamps import now_iso
from .adapter import ProviderAdapter
from .analysis_pool import analysis_pool, worker_count
from .breaker import Breaker
from .deadruns import reap as reap_dead_runs
from .deadruns import tracked as track_run
from .executors.base import Cell, Executor, ModeGroup, Stage
from .hooks import HookCaller
from .ids import new_run_id
from .iteration import attempt_cell, run_iteration
from .options import RunOptions, validate_options
from .pacing import Pacer
from .plan import RunPlan, plan_run, plugin_records
from .progress import Progress
from .repair import repair_analyses
from .resume import load_resume, refuse_existing, trace_layout
from .schedule import order_cells
from .state import RunState
from .tally import Budget, Tally
from .wiring import environment_kind, run_state, run_trials, run_workspaces

if TYPE_CHECKING:
    from ..plugins.manager import PluginManager
    from .rounds import Rounds

log = logging.getLogger("agent_profiler")


#: provider options replaced by the runner's per-session workspaces (docs/verification.md)
DEPRECATED_WORKDIR_OPTIONS = ("workdir", "workdir_template", "workdir_per_session")


def deprecated_workdirs(
    provider_options: Mapping[str, Any], modes: Mapping[str, ModeConfig]
) -> list[str]:
    """A warning for the deprecated workdir options in the provider's options, and one
    per mode overriding them."""
    warnings = []
    given = [
        repr(name) for name in DEPRECATED_WORKDIR_OPTIONS if name in provider_options
    ]
    if given:
        warnings.append(
            f"provider option(s) {', '.join(given)} are deprecated: every "
            "session gets a fresh workspace from the runner; "
            "give the scenarios a `workspace` instead (the folder is copied as "
            "the workspace of scenarios that have none)"
        )
    for mode, config in modes.items():
        overridden = [
            repr(name)
            for name in DEPRECATED_WORKDIR_OPTIONS
            if name in config.provider_overrides
        ]
        if overridden:
            warnings.append(
                f"mode {mode!r}: provider_overrides {', '.join(overridden)} are "
                "deprecated and do not choose its sessions' "
                "folder: every session gets a fresh workspace from the runner; "
                "give the scenarios a `workspace` instead"
            )
    return warnings


def check_run_sandbox(
    sandbox: SandboxSettings | None, manager: PluginManager | None = None
) -> None:
    """One line before anything is written or started when the sandbox cannot start
    (bwrap missing, the docker daemon down,
    an environment kind no plugin registers)."""
    if sandbox is not None and sandbox.sandbox not in BUILTIN_ENVIRONMENTS:
        kind = environment_kind(sandbox, manager)
        problem = kind.check()
        if problem:
            raise SandboxError(f"execution.sandbox: {sandbox.sandbox}: {problem}")
        return
    if sandbox is not None and sandbox.confined:
        from ..sandbox import (
            check,
        )  # the sandbox machinery loads only for a run that uses one

        check(sandbox)


class Run:
    """One run: ``await Run(options).execute_all()`` runs every phase and returns the
    suite result."""

    def __init__(
        self,
        options: RunOptions,
        *,
        lock: RunLock | None = None,
        on_prepared: Callable[[Run], None] | None = None,
    ) -> None:
        validate_options(options)
        #: called once the run knows what it will do (the CLI prints the run id and the
        #: resumed cells)
        self.on_prepared = on_prepared
        self.options = options
        self.manager = options.plugin_manager or get_plugin_manager()
        self.run_id = check_run_id(options.run_id) if options.run_id else new_run_id()
        self.paths = RunPaths(Path(options.results_dir), self.run_id)
        # No planted link may lead the run's report folder out of reports_dir.
        self.sessions_dir = inside(
            Path(options.reports_dir),
            Path(options.reports_dir) / self.run_id / "sessions",
        )
        self.hooks = HookCaller(self.manager)
        self.redactor = Redactor()
        self.warnings: list[str] = []
        self.tally = Tally()
        self.breaker = Breaker()
        self.budget = Budget(
            max_cost_usd=options.max_cost_usd,
            max_tokens=options.max_tokens,
            max_duration_s=options.max_duration_s,
        )
        self.status: RunStatus = "completed"
        #: cells recorded before this invocation (resume)
        self.resumed_cells = 0
        self._previous: tuple[ProfileRow, ...] = ()
        #: the stop rule's rounds (``execution.stop``); None: a fixed design
        self.rounds: Rounds | None = None
        #: how a resumed run had stopped (its stop rule decided): it runs no more
        self._resumed_stop: StopRecord | None = None
        #: (model, mode) already warmed up (a group re-opened for its next round is not
        #: warmed again)
        self._warmed: set[tuple[str, str]] = set()
        self._lock = lock
        self._started = time.perf_counter()
        self._interrupted = False
        # Set by the phases, in order.
        self.provider: ProviderAdapter
        self.plan: RunPlan
        self.state: RunState
        self.executor: Executor
        self.manifest: RunManifest
        self.progress: Progress
        self.groups: dict[tuple[str, str], ModeGroup] = {}

    async def execute_all(self) -> ProfileSuiteResult:
        """Every phase in order; the lock and the run's own hooks live exactly as long
        as this call."""
        self.budget.start(
            trio.current_time
        )  # max_duration_s counts from here, on the run's clock
        for line in (
            reap_dead_runs()
        ):  # a killed run's containers and folders go before this one starts its own
            log.warning("%s", line)
        names = self._register_hooks()
        locks: list[RunLock] = []
        # What this run starts is recorded until it ends, for the next run to remove
        # should this one be killed.
        with track_run(self.run_id):
            try:
                if self._lock is None:
                    check_run_sandbox(
                        self.options.sandbox
                    )  # before the lock makes the results folder
                    self._lock = RunLock(self.paths)
                    self._lock.acquire()  # before anything is read: a second writer is refused here
                locks.append(self._lock)
                reports = RunLock(RunPaths(Path(self.options.reports_dir), self.run_id))
                if reports.path.resolve() != self._lock.path.resolve():
                    # The trace store is the run's too: a run of the same id writing
                    # another results folder
                    # into the same reports folder is refused, not interleaved.
                    reports.acquire()
                    locks.append(reports)
                await self.prepare()
                if self.on_prepared is not None:
                    self.on_prepared(self)
                await self.write_manifest()
                stages = self.schedule()
                return await self.execute(stages)
            finally:
                for lock in reversed(locks):
                    lock.release()
                if self._lock is not None and self._lock not in locks:
                    self._lock.release()  # taken by the caller, refused before it was ours
                for name in names:
                    self.manager.unregister(name)

    # -- prepare ---------------------------------------------------------------------

    async def prepare(self) -> None:
        """Resume state, modes, provider, executor: everything decided before a file is written."""
        options = self.options
        previous, resumed_from = self._previous_rows()
        resuming = bool(previous or resumed_from or options.resume)
        if not resuming:
            refuse_existing(self.paths, self.sessions_dir)
        mode_configs = await _resolve_modes(options)
        # Every secret the profile marks or passes (options, modes, judge) is masked
        # wherever it goes.
        self.redactor, secret_warnings = run_redactor(
            options.provider_options, mode_configs, options.judge, options.scenarios
        )
        self.warnings += secret_warnings
        trace_format, layout_warning = trace_layout(
            self.sessions_dir, options.trace_format, resuming=resuming
        )
        if layout_warning:
            self.warnings.append(layout_warning)
        self.provider = ProviderAdapter.of(options.provider)
        self.plan = plan_run(
            options,
            self.provider,
            self.run_id,
            mode_configs,
            previous,
            resumed_from,
            trace_format,
            self.warnings,
        )
        self.resumed_cells = len(previous)
        self._previous = previous
        for row in previous:
            if row.iteration >= 0:
                self.tally.add(row, new=False)
            self.budget.add(row)  # a resumed run's budget counts what it already spent
        self.state = self._state()
        self.executor = self._executor()
        if options.stop is not None:
            from .rounds import (
                Rounds,
            )  # the stop rule's statistics (numpy): only for runs that have one

            self.rounds = Rounds(
                options.stop, plan_todo(self.plan, self._resumed_stop), previous
            )
        await self._check_endpoints()

    async def _check_endpoints(self) -> None:
        """Each model endpoint the profile names, opened once before any session
        (``runner.endpoint``)."""
        # Only providers that say their base_url is a model endpoint (the agents):
        # another's option may mean anything.
        if not getattr(self.options.provider, "endpoint_check", False) or not plan_todo(
            self.plan, self._resumed_stop
        ):
            return
        from .endpoint import model_endpoints, shown, unreachable

        option_sets = [self.options.provider_options]
        option_sets += [
            {**self.options.provider_options, **config.provider_overrides}
            for config in self.plan.mode_configs.values()
        ]
        for url in model_endpoints(option_sets):
            if (reason := await unreachable(url)) is None:
                continue
            message = (
                f"model endpoint {shown(url)} is not reachable: {reason} (start it, "
                "or fix base_url in the profile)"
            )
            if self.options.fail_fast:
                raise ProfilerError(message)
            self.warnings.append(message)
            log.warning("%s", message)

    def _previous_rows(self) -> tuple[tuple[ProfileRow, ...], tuple[str, ...]]:
        """The rows already recorded (resume), and the start times of the run's earlier
        invocations."""
        options = self.options
        if options.previous_rows or not options.resume:
            return tuple(options.previous_rows), tuple(options.resumed_from)
        installed = {
            p.name: p.version for p in self.manager.plugins.values() if p.error is None
        }
        resumed = load_resume(
            self.paths,
            profile_hash=options.profile_hash,
            plugins=installed,
            force=options.force,
        )
        for warning in resumed.warnings:
            log.warning("%s", warning)
        stop = resumed.manifest.stop
        # A verdict (decided, max_repetitions) ends the run for good; a spent budget
        # does not: resumed with a
        # raised one, the rounds go on.
        self._resumed_stop = (
            stop if stop is not None and stop.reason != "budget" else None
        )
        return resumed.rows, resumed.resumed_from

    def _state(self) -> RunState:
        """The state every cell shares, its workspaces and trials built as a Ray worker
        builds them."""
        options, plan = self.options, self.plan
        for message in deprecated_workdirs(options.provider_options, plan.mode_configs):
            log.warning("%s", message)
            self.warnings.append(message)
        workspaces = run_workspaces(
            options, self.run_id, redactor=self.redactor, warnings=self.warnings
        )
        try:
            trials = run_trials(options, self.run_id, workspaces, self.manager)
        except BaseException:
            workspaces.close()  # no state holds them yet: nothing else would remove them
            raise
        return run_state(
            options,
            run_id=self.run_id,
            run_ctx=plan.run_ctx,
            provider_id=self.provider.id,
            hooks=self.hooks,
            redactor=self.redactor,
            sessions_dir=self.sessions_dir,
            workspaces=workspaces,
            trials=trials,
            trace_format=plan.trace_format,
            pacer=Pacer(options.concurrency, options.max_concurrency),
            warnings=self.warnings,
        )

    def _executor(self) -> Executor:
        """The executor the profile asks for (built before anything is written: a
        missing extra is one line)."""
        options, plan = self.options, self.plan
        if options.executor == "ray":
            from .executors.ray import DRIVER_FIELDS, RayExecutor, RaySettings

            return RayExecutor(
                options.ray or RaySettings(),
                profile_path=options.profile_path,
                overrides=dict(options.overrides),
                profile=options.profile,
                driver={name: getattr(options, name) for name in DRIVER_FIELDS},
                redactor=self.redactor,
            )
        from .executors.local import OverlappedExecutor, SequentialExecutor

        common: dict[str, Any] = dict(
            modes=plan.mode_configs,
            provider_options=options.provider_options,
            provider_port=options.provider_port,
            state=self.state,
            warmup=self._warmup,
            sandbox=self.state.workspaces.for_agents(options.sandbox),
        )
        provider = self.provider
        if plan.overlap:
            assert options.provider_factory is not None
            return OverlappedExecutor(
                provider, factory=options.provider_factory, **common
            )
        return SequentialExecutor(
            provider, scope=plan.scope, mode_order=plan.modes, **common
        )

    async def _warmup(self, model: str, mode: str, instance: ProviderAdapter) -> None:
        """One canary iteration after an ``init``; its failure is a warning, not fatal
        (as the original)."""
        if not self.options.warmup or (model, mode) in self._warmed:
            return
        self._warmed.add((model, mode))
        self.progress.emit("warmup_started", model=model, mode=mode)
        outcome = await run_iteration(
            self.state,
            model=model,
            mode=mode,
            mode_config=self.plan.mode_configs[mode],
            scenario=self.plan.scenarios[0],
            iteration=-1,
            warmup=True,
            attempt_fn=_local_attempt(instance),
        )
        self.breaker.warmup((model, mode), outcome.row)
        if outcome.row.error:
            self.warnings.append(
                f"warmup ({model}, {mode}) failed: {outcome.row.error}"
            )
            log.warning("warmup failed: %s", outcome.row.error)
        self.progress.emit("warmup_completed", model=model, mode=mode)

    def _register_hooks(self) -> list[str]:
        names = []
        for index, hooks_obj in enumerate(self.options.hooks):
            name = f"run-hooks-{self.run_id}-{index}"
            self.manager.register(hooks_obj, name)
            names.append(name)
        return names

    # -- manifest --------------------------------------------------------------------

    async def write_manifest(self) -> None:
        """The run's manifest, ``before_run`` (a failure ends the run), then the files
        the run appends to."""
        options, plan = self.options, self.plan
        store = (
            self.sessions_dir / TRACES_FILE
            if options.session_export and plan.trace_format == "jsonl"
            else None
        )
        self.manifest = RunManifest(
            run_id=self.run_id,
            profile_hash=options.profile_hash,
            profile_path=options.profile_path,
            plugins=plugin_records(self.manager),
            started_at=now_iso(),
            counts=RunCounts(expected=len(plan.cells)),
            provider=options.provider.id,
            models=plan.models,
            modes=plan.modes,
            scenarios=[s.id for s in plan.scenarios],
            repetitions=options.repetitions,
            resumed_from=plan.resumed_from,
            overrides=options.overrides,
            sessions_dir=str(self.sessions_dir) if options.session_export else None,
            trace_store=str(store) if store else None,
            cell_fingerprints=options.cell_fingerprints,
            reused=options.reused,
        )
        self.paths.results_dir.mkdir(parents=True, exist_ok=True)
        write_manifest(self.paths.manifest, self.manifest, self.redactor)
        try:
            await self.hooks.call_fatal("profiler_before_run", ctx=plan.run_ctx)
        except HookError as exc:
            failed = attrs.evolve(
                self.manifest,
                status="failed",
                completed_at=now_iso(),
                warnings=[str(exc)],
            )
            write_manifest(self.paths.manifest, failed, self.redactor)
            raise
        writer = self.state.writer = RowWriter(self.paths, self.redactor, store)
        # A killed run may leave half-written temporary files; nobody else writes here
        # (the run lock).
        writer.remove_stale_temporaries(self.sessions_dir)
        writer.remove_stale_temporaries(self.paths.results_dir, f".{self.run_id}.*.tmp")
        if store and (repaired := repair_truncated_tail(store, TraceRecord)):
            log.warning("%s", repaired)
        for warning in await repair_analyses(
            self.paths,
            store,
            self._previous,
            self.state.analyzers,
            self.plan.scenarios,
            writer,
        ):
            log.warning("%s", warning)
            self.warnings.append(warning)

    # -- schedule --------------------------------------------------------------------

    def schedule(self) -> list[Stage]:
        """The cells still to do, in ``execution.order``, cut into the executor's stages."""
        plan = self.plan
        todo = list(plan_todo(plan, self._resumed_stop))
        # Modes one after another (the sequential executor) start cells in matrix order.
        order = (
            self.options.order
            if plan.overlap or self.options.executor == "ray"
            else "blocked"
        )

        def ordered_cells(cells: list[Cell]) -> list[Cell]:
            return order_cells(cells, plan.modes, order, self.options.order_seed)

        if self.rounds is not None:
            from .rounds import round_major

            ordered = round_major(todo, ordered_cells)
        else:
            ordered = ordered_cells(todo)
        for model, mode, _, _ in todo:
            key = (model, mode)
            if key not in self.groups:
                self.groups[key] = ModeGroup(
                    model=model, mode=mode, config=plan.mode_configs[mode]
                )
            self.groups[key].remaining += 1
        return self.executor.stages(ordered, self.groups)

    # -- execute ---------------------------------------------------------------------

    async def execute(self, stages: list[Stage]) -> ProfileSuiteResult:
        """Run the stages (Ctrl-C stops cleanly), then finish; a failure still finishes
        the manifest."""
        self.progress = Progress(self.hooks, self.run_id, len(self.plan.todo))
        self.progress.emit("run_started")
        try:
            await self._guarded(functools.partial(self._run_stages, stages))
        except BaseExceptionGroup as group:
            # trio wraps errors in groups; a user wants the one error that happened.
            leaf = _single_leaf(group)
            self._finish(
                "interrupted" if isinstance(leaf, KeyboardInterrupt) else "failed"
            )
            if leaf is not None:
                raise leaf from None
            raise
        except KeyboardInterrupt:
            self._finish("interrupted")
            raise
        except BaseException:
            self._finish("failed")
            raise
        return await self.finish()

    async def _guarded(self, body: Any) -> None:
        """``body`` under a Ctrl-C watcher: the first Ctrl-C cancels it cleanly, a
        second exits at once."""
        async with trio.open_nursery() as outer:
            main_scope = trio.CancelScope()
            if self.options.handle_sigint:
                await outer.start(self._watch_sigint, main_scope)
            with main_scope:
                await body()
            outer.cancel_scope.cancel()

    async def _watch_sigint(
        self, main_scope: trio.CancelScope, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            # SIGTERM (a `kill`, a CI job cancelled, a container stopped) is a Ctrl-C
            # too: the same clean stop.
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                task_status.started()
                async for signum in signals:
                    if self._interrupted:
                        os._exit(128 + signum)  # a second one: leave at once
                    self._interrupted = True
                    what = (
                        "terminated (SIGTERM)"
                        if signum == signal.SIGTERM
                        else "interrupted"
                    )
                    log.warning(
                        "%s: finishing cleanup (Ctrl-C again to quit at once)", what
                    )
                    main_scope.cancel()
        finally:
            if self._interrupted:
                arm_interrupt()  # the cleanup after this watcher, too, ends at a second Ctrl-C

    async def _run_stages(self, stages: list[Stage]) -> None:
        """The executor's lifetime (and the analysis workers'), around the stages."""
        pool_size = 0
        if self.options.executor == "ray":
            if self.options.analysis_workers != 0:
                log.warning(
                    "execution.analysis_workers has no effect with executor: "
                    "ray (the Ray workers run the analyzers)"
                )
        else:
            pool_size = worker_count(
                self.options.analysis_workers,
                self.options.concurrency,
                self.options.max_concurrency,
            )
        async with analysis_pool(
            pool_size,
            profile_path=self.options.profile_path,
            overrides=dict(self.options.overrides),
            analyzers=self.state.analyzers,
            redactor=self.redactor,
            profile=self.options.profile,
        ) as pool:
            self.state.analysis_pool = pool
            try:
                await self.executor.start()
                await self._stages(stages)
            finally:
                self.state.analysis_pool = None
                with trio.CancelScope(shield=True):
                    await self.executor.close()
                    await self._stop_judge()

    async def _stages(self, stages: list[Stage]) -> None:
        """Each stage's cells through the one start loop; groups still open at the end
        close as ended."""
        failed = True
        try:
            for stage in stages:
                with self.executor.environment(stage):
                    async with trio.open_nursery() as nursery:
                        more = await self._start_cells(nursery, stage.cells)
                    group = stage.group
                    if group is not None and group.remaining > 0:
                        await self._close_group(
                            group, ended=True
                        )  # its next round comes in a later stage
                        group.status = "new"
                if not more:
                    break
            failed = False
        finally:
            for group in (
                self.groups.values()
            ):  # interrupted or failed: no after_mode, the mode did not end
                await self._close_group(group, ended=not failed)

    async def _start_cells(
        self, nursery: trio.Nursery, cells: tuple[Cell, ...]
    ) -> bool:
        """Start cells in order, each once a slot is free and the budget allows; False
        when the budget stopped it."""
        pacer = self.state.pacer
        for cell in cells:
            # Acquire before starting each task so cells start in schedule order
            # (trio does not promise FIFO scheduling of freshly started tasks).
            token = object()
            await pacer.acquire(
                token
            )  # a rate limit's Retry-After holds back new cells
            # Checked after the wait: cells that finished meanwhile count.
            if self.budget.exhausted or (
                self.rounds is not None and self.rounds.stopped
            ):
                pacer.limiter.release_on_behalf_of(token)
                return False
            nursery.start_soon(self._cell, cell, token)
        return True

    async def _cell(self, cell: Cell, token: object) -> None:
        """One cell: open its group, run it with retries, count it, close the group
        after its last cell."""
        model, mode, scenario, iteration = cell
        group = self.groups[(model, mode)]
        try:
            # A cell started just as another one stopped the run (the breaker, a full
            # disk) must not run:
            # cheap when nothing is cancelled, and the group's open may take no
            # checkpoint of its own.
            await trio.lowlevel.checkpoint_if_cancelled()
            await self._open_group(group)
            self.progress.emit(
                "iteration_started",
                model=model,
                mode=mode,
                scenario_id=scenario.id,
                iteration=iteration,
            )
            outcome = await run_iteration(
                self.state,
                model=model,
                mode=mode,
                mode_config=group.config,
                scenario=scenario,
                iteration=iteration,
                attempt_fn=functools.partial(self.executor.attempt, group=group),
            )
            self._count(outcome.row)
            if (
                self.rounds is not None
                and (decided := self.rounds.add(outcome.row)) is not None
            ):
                log.info(
                    "stop rule: %s after %d round(s); no new cell starts",
                    decided.reason,
                    decided.rounds,
                )
            if self.options.fail_fast and (
                stop := self.breaker.check((model, mode), outcome.row)
            ):
                endpoint = {
                    **self.options.provider_options,
                    **group.config.provider_overrides,
                }.get("base_url")
                raise ProfilerError(
                    stop
                    + (
                        f" (model endpoint: {endpoint})"
                        if endpoint and str(endpoint) not in stop
                        else ""
                    )
                )
            self.progress.emit(
                "iteration_completed",
                model=model,
                mode=mode,
                scenario_id=scenario.id,
                iteration=iteration,
                row=outcome.row,
                concurrency=self.state.pacer.current,
            )
        finally:
            self.state.pacer.limiter.release_on_behalf_of(token)
        group.remaining -= 1
        if group.remaining == 0:
            await self._close_group(group, ended=True)

    def _count(self, row: ProfileRow) -> None:
        self.tally.add(row)
        self.budget.add(row)
        self.progress.completed += 1
        if row.error or not row.success:
            self.progress.failed += 1

    async def _open_group(self, group: ModeGroup) -> None:
        """The group's provider ready and ``before_mode`` called, once, by whichever of
        its cells comes first."""
        if group.status == "open":
            # every cell after the first: no lock to take (a checkpoint and ~40k
            # instructions per cell)
            return
        async with group.lock:
            if group.status == "open":
                return
            if (
                group.status != "new"
            ):  # a first open failed; that error is already on its way out
                raise ConfigError(
                    f"provider {self.options.provider.id!r} could not start for mode {group.mode!r}"
                )
            # until ready; the executor's close() releases what a failed open started
            group.status = "failed"
            await self.executor.open_group(group)
            await self.hooks.call(
                "profiler_before_mode", mode=group.mode, run=self.plan.run_ctx
            )
            group.status = "open"

    async def _close_group(self, group: ModeGroup, *, ended: bool) -> None:
        """``after_mode`` (when the mode ended) and the executor's release, once per
        opened group."""
        if group.status != "open":
            return
        group.status = "closed"
        if ended:
            with trio.CancelScope(shield=True):
                await self.hooks.call(
                    "profiler_after_mode", mode=group.mode, run=self.plan.run_ctx
                )
        await self.executor.close_group(group)

    async def _stop_judge(self) -> None:
        """The run's judge provider may have started something (the ``opencode`` judge's
        server): stop it, once."""
        judge = self.options.judge
        shutdown = getattr(judge, "shutdown", None) if judge is not None else None
        if not callable(shutdown):
            return
        with trio.move_on_after(self.options.destroy_timeout_s):
            try:
                await await_me_maybe(shutdown())
            # a judge that will not stop must not lose the run
            except Exception as exc:  # noqa: BLE001
                self.warnings.append(
                    f"judge {getattr(judge, 'id', judge)!r}: shutdown failed: {exc}"
                )

    # -- finish ----------------------------------------------------------------------

    async def finish(self) -> ProfileSuiteResult:
        """The suite result, ``after_run``, and the completed manifest."""
        stopped = self._stop_record()
        if self._interrupted:
            self.status = "interrupted"
        elif stopped is not None and stopped.reason == "decided":
            pass  # the answer was clear: the cells not started were not needed
        elif self.budget.exhausted and self.tally.new < len(self.plan.todo):
            self.status = "budget_exhausted"
            self.warnings.append(
                f"budget spent ({self.budget.describe()}): cells not started; "
                "resume with a raised budget"
            )
        if stopped is not None:
            self.manifest = attrs.evolve(self.manifest, stop=stopped)
        result = self._result()
        self.progress.emit("run_completed")
        with trio.CancelScope(shield=True):
            await self.hooks.call(
                "profiler_after_run", ctx=self.plan.run_ctx, result=result
            )
        self._finish(self.status)
        return result

    def _stop_record(self) -> StopRecord | None:
        """How the stop rule ended the run (None: no rule, or it ended otherwise, e.g.
        interrupted)."""
        if self._resumed_stop is not None:
            return self._resumed_stop
        if self.rounds is None or self._interrupted:
            return None
        decision = self.rounds.final(budget_exhausted=self.budget.exhausted)
        return decision.record() if decision is not None else None

    def _result(self) -> ProfileSuiteResult:
        plan = self.plan
        model_index = {m: i for i, m in enumerate(plan.models)}
        mode_index = {m: i for i, m in enumerate(plan.modes)}
        scenario_index = {s.id: i for i, s in enumerate(plan.scenarios)}

        def order(item: Any) -> tuple[int, int, int, int]:
            scenario = getattr(item, "scenario_id", None)
            return (
                model_index.get(item.model, 0),
                mode_index.get(item.mode, 0),
                scenario_index.get(scenario or "", 0),
                item.iteration,
            )

        return ProfileSuiteResult(
            run_id=self.run_id,
            rows=StoredRows(self.paths.jsonl, ProfileRow, order=order),
            duration_ms=(time.perf_counter() - self._started) * 1000,
            output_jsonl_path=str(self.paths.jsonl.resolve()),
            analysis_results=StoredRows(
                self.paths.analysis, SessionAnalysisBundle, order=order
            ),
            manifest_path=str(self.paths.manifest.resolve()),
            status=self.status,
            counts=self.tally.counts(self.manifest.counts.expected),
        )

    def _finish(self, status: RunStatus) -> None:
        """Close the writer and write the manifest's final state (also after a failure)."""
        self.status = status
        if self.state.workspaces is not None:
            self.state.workspaces.close()
        writer = self.state.writer
        if writer is not None:
            self.warnings.extend(writer.close())
            self.state.writer = None
        final = attrs.evolve(
            self.manifest,
            status=status,
            completed_at=now_iso(),
            counts=self.tally.counts(self.manifest.counts.expected),
            metric_units=dict(sorted(self.state.metric_units.items())),
            hook_errors=list(self.hooks.errors),
            warnings=list(self.warnings),
        )
        write_manifest(self.paths.manifest, final, self.redactor)


def plan_todo(plan: RunPlan, resumed_stop: StopRecord | None) -> tuple[Cell, ...]:
    """The cells to run: none when the run being resumed had already been stopped by its
    stop rule."""
    return () if resumed_stop is not None else plan.todo


def _local_attempt(instance: ProviderAdapter) -> Any:
    """An attempt function that runs here, on ``instance`` (the warm-up's)."""
    return functools.partial(attempt_cell, provider=instance)


async def _resolve_modes(options: RunOptions) -> dict[str, ModeConfig]:
    """Every mode up front, so an unknown one fails before any session starts."""
    resolved: dict[str, ModeConfig] = {}
    for mode in options.mode_list():
        if options.modes is not None:
            config = options.modes[mode]
        else:
            resolver = options.mode_resolver
            if resolver is None:
                raise ConfigError(
                    f"mode {mode!r}: no mode resolver and no `modes` given"
                )
            try:
                config = await await_me_maybe(resolver.resolve(mode))
            except UnknownModeError:
                raise
            except Exception as exc:
                raise UnknownModeError(
                    f"mode {mode!r}: resolver {resolver.id!r} failed: {exc}"
                ) from exc
        if not isinstance(config, ModeConfig):
            raise ConfigError(
                f"mode {mode!r}: resolver returned {type(config).__name__}, expected ModeConfig"
            )
        resolved[mode] = config
    return resolved


def _single_leaf(group: BaseExceptionGroup) -> BaseException | None:
    """The one error a user should see: the only leaf, or the first when every leaf is a
    ProfilerError.

    Concurrent cells meet the same stop (a full disk, the fail-fast breaker) before the nursery's
    cancellation reaches them; the first is the one that stopped the run, the rest repeat it.
    """
    found = leaves(group)
    if len(found) == 1 or (
        found and all(isinstance(leaf, ProfilerError) for leaf in found)
    ):
        for other in dict.fromkeys(str(leaf) for leaf in found[1:]):
            if other != str(found[0]):
                log.error(
                    "also: %s", other
                )  # a different failure at the same moment is still told
        return found[0]
    return None


__all__ = ["Run", "check_run_sandbox", "new_run_id"]

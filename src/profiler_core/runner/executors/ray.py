"""Cells on a Ray cluster (``execution.executor: ray``).

The driver (``profiler run``) keeps everything that orders and records a run:
it resolves modes, calls the lifecycle hooks in order, applies the retry
policy, and is the only writer of the results JSONL, the manifest and the
traces. What runs on a Ray worker is one *attempt* of one cell: create the
session, prompt, export the trace, collectors, analyzers, scorer, and the row
(:func:`profiler_core.runner.iteration.attempt_cell`, the same code the local
executors run).

A worker builds its components from the driver's loaded profile (put once in
the object store: the file is not read again) and the installed plugins, once
per worker process, with the driver's own builders (``runner.wiring``: the
workspaces, the trials, the run state, each provider's config), so a cell runs
as it runs locally, a Harbor task as one trial per attempt. It keeps one
initialised provider per (model, mode) in a trio loop of its own, so an
agent's start-up is paid once per worker, not per cell.
A worker that dies fails its attempt with ``errorCode: executor_error``; the
cell's ``allowedRetries`` then apply as for any error. Ray is an optional
extra (``pip install 'agent-profiler[ray]'``): nothing imports it unless a
profile asks for this executor.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import threading
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import attrs
import trio

from ...errors import ConfigError
from ...model import ModeConfig, RunContext, Scenario
from ...model.record import Record
from ...util.leftovers import SPOOL_ENV, clean_up, remove_folder, temporary_folder
from ...util.redact import Redactor
from ...util.timestamps import now_iso
from ..adapter import ProviderAdapter
from ..hooks import HookCaller
from ..iteration import attempt_cell
from ..options import RaySettings, RunOptions
from ..outcome import IterationOutcome
from ..row import make_row
from ..state import RunState
from ..wiring import provider_config, run_state, run_trials, run_workspaces
from ..workspace import Workspaces
from .base import Cell, ModeGroup, Stage

log = logging.getLogger("agent_profiler")

__all__ = ["CellSpec", "RayExecutor", "RaySettings", "ray_problems", "run_cell"]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CellSpec(Record):
    """One attempt of one cell, as sent to a worker (everything is picklable)."""

    profile_path: str
    overrides: dict[str, Any]
    run_ctx: RunContext
    model: str
    mode: str
    mode_config: ModeConfig
    scenario: Scenario
    iteration: int
    attempt: int
    #: a one-item list holding the Ray reference of the driver's loaded profile (nested, so Ray
    #: does not resolve it per call); empty: the worker loads ``profile_path`` itself
    profile: list[Any] = attrs.Factory(list)
    #: what the driver decided beyond the profile, applied to the worker's ``RunOptions``
    driver: dict[str, Any] = attrs.Factory(dict)
    #: the run's secrets (profile, modes, judge, tasks): masked on the worker as on the driver
    redactor: Redactor | None = None
    #: where the worker records the process groups and temporary folders it starts (``leftovers``)
    leftovers: str = ""


#: The ``RunOptions`` fields a worker takes from the driver rather than from the profile.
DRIVER_FIELDS = (
    "session_export",
    "destroy_timeout_s",
    "time_limit_ms",
    "keep_workspaces",
    "results_dir",
    "reports_dir",
)


def ray_problems(executor: str) -> list[str]:
    """What stops ``executor`` from running here (``profiler validate``): Ray missing
    for ``ray``."""
    if executor != "ray":
        return []
    try:
        import ray  # noqa: F401 - only whether it imports
    except ImportError:
        return [
            "execution.executor: ray needs Ray installed: pip install 'agent-profiler[ray]'"
        ]
    return []


class RayExecutor:
    """Runs cell attempts as Ray tasks; the driver awaits them from trio without blocking its loop.

    The driver starts no provider: every worker starts its own, once per (model, mode).
    """

    name = "ray"

    def __init__(
        self,
        settings: RaySettings,
        *,
        profile_path: str | None,
        overrides: dict[str, Any],
        profile: Any = None,
        driver: dict[str, Any] | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        if not profile_path:
            raise ConfigError(
                "execution.executor: ray needs a profile file (the workers "
                "build their components from it)"
            )
        try:
            import ray
            import ray.exceptions  # RayError: a worker that died
        except ImportError:
            raise ConfigError(
                "execution.executor: ray needs Ray installed: pip install 'agent-profiler[ray]'"
            ) from None
        self._ray = ray
        self.settings = settings
        self.profile_path = os.path.abspath(profile_path)
        self.overrides = dict(overrides)
        #: the driver's loaded profile, put in the cluster's object store once (``connect``)
        self.profile = profile
        self._profile_ref: list[Any] = []
        self.driver = dict(driver or {})
        self.redactor = redactor
        self._started_here = False
        self._remote: Any = None
        #: the workers' records of what they started: what a killed worker leaves is
        #: cleaned up from it
        self.leftovers = temporary_folder("profiler-ray-leftovers-")

    async def start(self) -> None:
        """Connect to (or start) the cluster and register the cell task (a few seconds
        for a local one)."""
        self.connect()

    def stages(
        self, schedule: list[Cell], groups: dict[tuple[str, str], ModeGroup]
    ) -> list[Stage]:
        """One stage: the workers serve every mode at once."""
        return [Stage(cells=tuple(schedule))]

    def environment(self, stage: Stage) -> AbstractContextManager[Any]:
        """Nothing: a worker gives each provider its mode's environment through ``init``."""
        return contextlib.nullcontext()

    async def open_group(self, group: ModeGroup) -> None:
        """Nothing on the driver: workers initialise providers on first use."""

    async def close_group(self, group: ModeGroup) -> None:
        """Nothing on the driver."""

    async def close(self) -> None:
        """Disconnect (in a thread: stopping a local cluster blocks for a while)."""
        await trio.to_thread.run_sync(self.disconnect)

    def connect(self) -> None:
        """Connect to (or start) the cluster and register the cell task."""
        ray = self._ray
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "ignore_reinit_error": True,
                "include_dashboard": False,
                "log_to_driver": False,
            }
            if self.settings.address:
                kwargs["address"] = self.settings.address
            if self.settings.runtime_env:
                kwargs["runtime_env"] = self.settings.runtime_env
            ray.init(**kwargs)
            self._started_here = True
        options: dict[str, Any] = {
            "num_cpus": self.settings.num_cpus_per_cell,
            "max_retries": 0,
        }
        if self.settings.resources:
            options["resources"] = dict(self.settings.resources)
        self._remote = ray.remote(run_cell).options(**options)
        if self.profile is not None and not self._profile_ref:
            self._profile_ref = [ray.put(self.profile)]

    def disconnect(self) -> None:
        """Disconnect (a cluster started here stops with it); then end what the workers
        left running."""
        try:
            if self._started_here and self._ray.is_initialized():
                self._ray.shutdown()
        finally:
            self._started_here = False
            self._profile_ref = []  # the object store it was in may be gone with the cluster
            # Workers killed before their clean-up (Ctrl-C, a stopped cluster) leave
            # agent servers and
            # folders: end them by their recorded PIDs (and start times) and remove the folders.
            killed, removed = clean_up(self.leftovers)
            if killed or removed:
                log.info(
                    "ray: ended %d process group(s) and removed %d folder(s) the workers left",
                    killed,
                    removed,
                )
            remove_folder(self.leftovers)

    async def attempt(
        self,
        state: RunState,
        *,
        group: ModeGroup,
        model: str,
        mode: str,
        mode_config: ModeConfig,
        scenario: Scenario,
        iteration: int,
        attempt: int,
    ) -> tuple[IterationOutcome, str | None]:
        """One attempt of a cell on a worker; a worker that dies is an
        ``executor_error`` attempt."""
        ray = self._ray
        spec = CellSpec(
            profile_path=self.profile_path,
            overrides=self.overrides,
            run_ctx=state.run_ctx,
            model=model,
            mode=mode,
            mode_config=mode_config,
            scenario=scenario,
            iteration=iteration,
            attempt=attempt,
            profile=self._profile_ref,
            driver=self.driver,
            redactor=self.redactor,
            leftovers=str(self.leftovers),
        )
        started_at, t0 = now_iso(), time.perf_counter()
        ref = self._remote.remote(spec)
        try:
            # ray.get blocks: in a worker thread, abandoned (and the task cancelled) on
            # Ctrl-C or a timeout.
            outcome, error, units = await trio.to_thread.run_sync(
                ray.get, ref, abandon_on_cancel=True, limiter=_LIMITER
            )
        except trio.Cancelled:
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayError as exc:
            message = (
                f"ray worker failed: {type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[0][:300]}"
            )
            row = make_row(
                run_id=state.run_id,
                provider=state.provider_id,
                metric_units=state.metric_units,
                model=model,
                mode=mode,
                scenario_id=scenario.id,
                iteration=iteration,
                started_at=started_at,
                completed_at=now_iso(),
                elapsed_ms=(time.perf_counter() - t0) * 1000,
                session_id="",
                result=None,
                trace=None,
                scored=None,
                metrics={},
                error=message,
                error_code="executor_error",
                reason="error",
                attempts=attempt,
            )
            return IterationOutcome(row=row, trace=None, bundle=None), message
        for name, unit in units.items():
            state.metric_units.setdefault(name, unit)
        return outcome, error


#: Threads blocked in ``ray.get`` at once: the run's own concurrency limit is what bounds them.
_LIMITER = trio.CapacityLimiter(1024)


# -- the worker side --------------------------------------------------------------


def run_cell(spec: CellSpec) -> tuple[IterationOutcome, str | None, dict[str, str]]:
    """The Ray task: one attempt of one cell, in this worker's trio loop."""
    return trio.from_thread.run(_cell, spec, trio_token=_worker_loop())


@attrs.define
class _Components:
    """What a worker builds once per run: the options, workspaces and trials (``runner.wiring``)."""

    options: RunOptions
    manager: Any
    redactor: Redactor
    workspaces: Workspaces
    trials: Any
    providers: dict[tuple[str, str, str], Any] = attrs.Factory(dict)


_COMPONENTS: dict[str, _Components] = {}
_LOOP: dict[str, Any] = {}
_LOOP_LOCK = threading.Lock()


def _worker_loop() -> Any:
    """The trio token of a loop that lives as long as this worker process (providers
    stay initialised in it)."""
    with _LOOP_LOCK:
        if "token" not in _LOOP:
            ready = threading.Event()

            async def serve() -> None:
                _LOOP["token"] = trio.lowlevel.current_trio_token()
                _LOOP["stop"] = trio.Event()
                ready.set()
                await _LOOP["stop"].wait()

            threading.Thread(
                target=trio.run, args=(serve,), name="profiler-worker-loop", daemon=True
            ).start()
            ready.wait()
            atexit.register(_shutdown_worker)
        return _LOOP["token"]


async def _cell(spec: CellSpec) -> tuple[IterationOutcome, str | None, dict[str, str]]:
    if spec.leftovers and os.environ.get(SPOOL_ENV) != spec.leftovers:
        # A new run: what this worker still holds from an earlier one (providers,
        # workspaces) goes first.
        await _shut_down_components()
        os.environ[SPOOL_ENV] = (
            spec.leftovers
        )  # from now on, groups and folders are recorded for the driver
    components = _components(spec)
    provider = await _provider(components, spec)
    state = run_state(
        components.options,
        run_id=spec.run_ctx.run_id,
        run_ctx=spec.run_ctx,
        provider_id=provider.id,
        hooks=HookCaller(components.manager),
        redactor=components.redactor,
        sessions_dir=Path("."),  # the driver writes the traces
        workspaces=components.workspaces,
        trials=components.trials,
    )
    outcome, error = await attempt_cell(
        state,
        model=spec.model,
        mode=spec.mode,
        mode_config=spec.mode_config,
        scenario=spec.scenario,
        iteration=spec.iteration,
        attempt=spec.attempt,
        provider=provider,
    )
    return outcome, error, dict(state.metric_units)


def _redactor(spec: CellSpec) -> Redactor:
    """The driver's redactor (its environment, the profile's, modes' and tasks' secrets) that
    also knows this worker's environment (a remote machine may hold keys the driver does not)."""
    redactor = spec.redactor or Redactor()  # unpickled for this worker: its own copy
    redactor.learn_environment(os.environ)
    return redactor


def _profile(spec: CellSpec, manager: Any) -> Any:
    """The driver's loaded profile (from the object store), or the profile file loaded here."""
    if spec.profile:
        import ray

        return ray.get(spec.profile[0])
    from ...config.loader import load_profile

    return load_profile(spec.profile_path, spec.overrides, registry=manager.registry)


def _components(spec: CellSpec) -> _Components:
    """The run's options, workspaces and trials, built once per worker process as the
    driver builds them."""
    key = (
        spec.profile[0].hex()
        if spec.profile
        else json.dumps(
            [spec.profile_path, spec.overrides], sort_keys=True, default=str
        )
    )
    found = _COMPONENTS.get(key)
    if found is None:
        from ...plugins.manager import get_plugin_manager
        from ..build import options_from_config

        manager = get_plugin_manager()
        run_id = spec.run_ctx.run_id
        options = attrs.evolve(
            options_from_config(_profile(spec, manager), manager, run_id=run_id),
            **spec.driver,
        )
        redactor = _redactor(spec)
        workspaces = run_workspaces(options, run_id, redactor=redactor)
        atexit.register(workspaces.close)
        found = _COMPONENTS[key] = _Components(
            options=options,
            manager=manager,
            redactor=redactor,
            workspaces=workspaces,
            trials=run_trials(options, run_id, workspaces, manager),
        )
    return found


async def _provider(components: _Components, spec: CellSpec) -> ProviderAdapter:
    """This worker's provider for (model, mode), initialised on first use and kept for
    later cells."""
    overrides = json.dumps(
        spec.mode_config.provider_overrides, sort_keys=True, default=str
    )
    key = (spec.model, spec.mode, overrides)
    provider = components.providers.get(key)
    if provider is None:
        options, workspaces = components.options, components.workspaces
        assert options.provider_factory is not None  # options_from_config gives one
        provider = ProviderAdapter(options.provider_factory())
        await provider.init(
            provider_config(
                model=spec.model,
                mode=spec.mode,
                mode_config=spec.mode_config,
                provider_options=options.provider_options,
                port=options.provider_port,
                workspaces=workspaces,
                sandbox=workspaces.for_agents(options.sandbox),
            )
        )
        components.providers[key] = provider
    return provider


async def _shut_down_components() -> None:
    """Shut down every provider this worker holds and remove its workspaces (an earlier run's)."""
    for components in list(_COMPONENTS.values()):
        for provider in components.providers.values():
            with trio.move_on_after(10):
                try:
                    await provider.shutdown()
                # best effort: the driver's clean-up is the last guard
                except Exception:  # noqa: BLE001
                    pass
        components.workspaces.close()
    _COMPONENTS.clear()


def _shutdown_worker() -> None:
    """At worker exit: shut the providers down in their loop, then end the loop."""
    token = _LOOP.get("token")
    if token is None:
        return

    async def stop() -> None:
        await _shut_down_components()
        _LOOP["stop"].set()

    try:
        trio.from_thread.run(stop, trio_token=token)
    except Exception:  # noqa: BLE001 - the loop may be gone already
        pass

"""``RunPlan``: what a run will do, decided before anything is written."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..model import ModeConfig, PluginRecord, ProfileRow, RunContext, Scenario
from ..model.record import Record
from ..plugins.manager import PluginManager
from .adapter import ProviderAdapter
from .executors.base import Cell
from .options import RunOptions


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RunPlan(Record):
    """The matrix of one run, the cells still to do, and how providers are started."""

    models: tuple[str, ...]
    modes: tuple[str, ...]
    scenarios: tuple[Scenario, ...]
    mode_configs: dict[str, ModeConfig]
    #: every cell of the matrix (what the manifest expects)
    cells: tuple[Cell, ...]
    #: the cells this invocation runs (those not recorded yet), in matrix order
    todo: tuple[Cell, ...]
    run_ctx: RunContext
    #: ``suite``: one ``init`` per model; ``mode``: one per mode
    scope: str
    #: True: a provider instance per (model, mode), cells of several modes at once
    overlap: bool
    trace_format: str
    resumed_from: tuple[str, ...] = ()


def plan_run(
    options: RunOptions,
    provider: ProviderAdapter,
    run_id: str,
    mode_configs: dict[str, ModeConfig],
    previous: Sequence[ProfileRow],
    resumed_from: Sequence[str],
    trace_format: str,
    warnings: list[str],
) -> RunPlan:
    """The run's plan; decisions a user should know about are appended to ``warnings``."""
    modes, models, scenarios = (
        tuple(mode_configs),
        tuple(options.models),
        tuple(options.scenarios),
    )
    cells = _cells(options, models, modes, scenarios)
    done = {r.cell for r in previous}
    todo = tuple(c for c in cells if (c[0], c[1], c[2].id, c[3]) not in done)
    scope = provider.init_scope
    first = mode_configs[modes[0]]
    if (
        scope != "mode"
        and len(modes) > 1
        and any(
            c.provider_overrides or c.environment != first.environment
            for c in mode_configs.values()
        )
    ):
        # Overrides and the environment reach a provider only through init(); re-init per mode
        # so each mode's agent really gets its own.
        scope = "mode"
        warnings.append(
            "provider initialised once per mode because modes set "
            "provider_overrides or environments"
        )
    # Modes overlap when each (model, mode) can get its own instance and the provider does not read
    # the runner's process environment; otherwise they run one after another.
    overlap = options.provider_factory is not None and not provider.needs_process_env
    if not overlap and options.order != "blocked" and options.executor != "ray":
        warnings.append(
            f"execution.order {options.order!r} needs a provider instance per mode "
            "(a provider factory and no needs_process_env); cells ran mode after mode"
        )
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
    return RunPlan(
        models=models,
        modes=modes,
        scenarios=scenarios,
        mode_configs=mode_configs,
        cells=cells,
        todo=todo,
        run_ctx=run_ctx,
        scope=scope,
        overlap=overlap,
        trace_format=trace_format,
        resumed_from=tuple(resumed_from),
    )


def _cells(
    options: RunOptions,
    models: tuple[str, ...],
    modes: tuple[str, ...],
    scenarios: tuple[Scenario, ...],
) -> tuple[Cell, ...]:
    """The matrix in (model, mode, scenario, iteration) order, or exactly
    ``options.cells`` in their order."""
    if options.cells is not None:
        by_id = {s.id: s for s in scenarios}
        return tuple(
            (model, mode, by_id[scenario_id], i)
            for model, mode, scenario_id, i in options.cells
        )
    return tuple(
        (model, mode, scenario, i)
        for model in models
        for mode in modes
        for scenario in scenarios
        for i in range(options.repetitions)
    )


def plugin_records(manager: PluginManager) -> tuple[PluginRecord, ...]:
    """The loaded plugins, as the manifest records them (a run's own hook objects left out)."""
    return tuple(
        PluginRecord(name=p.name, distribution=p.distribution, version=p.version)
        for p in sorted(manager.plugins.values(), key=lambda p: p.name)
        if p.error is None and not p.name.startswith("run-hooks-")
    )


__all__ = ["RunPlan", "plan_run", "plugin_records"]

"""Run-level objects: hook contexts, progress, suite result, manifest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

from ._validators import as_tuple
from .analysis import SessionAnalysisBundle
from .record import Record
from .row import ProfileRow
from .scenario import Scenario
from .trace import SessionTrace

RunStatus = Literal["running", "completed", "interrupted", "failed", "budget_exhausted"]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RunContext(Record):
    """What lifecycle hooks know about the run."""

    run_id: str
    modes: tuple[str, ...] = attrs.field(converter=as_tuple)
    scenarios: tuple[Scenario, ...] = attrs.field(converter=as_tuple)
    repetitions: int
    models: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    provider: str = ""
    results_dir: str = "results"
    reports_dir: str = "reports"
    session_export: bool = True
    extensions: dict[str, Any] = attrs.field(factory=dict)
    #: the profile file, so plugins resolve relative paths of `extensions` against its folder
    profile_path: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class BeforeScenarioContext(Record):
    """Passed to ``profiler_before_scenario`` before each iteration."""

    scenario: Scenario
    mode: str
    model: str
    iteration: int
    run: RunContext | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AfterScenarioContext(Record):
    """Passed to ``profiler_after_scenario`` after each iteration, also on failure."""

    scenario: Scenario
    mode: str
    model: str
    iteration: int
    result: ProfileRow
    trace: SessionTrace | None = None
    run: RunContext | None = None


ProgressKind = Literal[
    "run_started",
    "warmup_started",
    "warmup_completed",
    "iteration_started",
    "iteration_completed",
    "run_completed",
]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProgressEvent(Record):
    """A step of the run, for progress bars and logs."""

    kind: ProgressKind
    run_id: str
    completed: int = 0
    total: int = 0
    failed: int = 0
    model: str | None = None
    mode: str | None = None
    scenario_id: str | None = None
    iteration: int | None = None
    row: ProfileRow | None = None
    #: sessions allowed at once right now (changes with ``concurrency: auto``)
    concurrency: int | None = None


def _sequence(items: Any) -> Sequence[Any]:
    """Lists and iterables become tuples; a lazily loaded sequence stays as it is."""
    return (
        items
        if isinstance(items, Sequence) and not isinstance(items, list)
        else tuple(items)
    )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProfileSuiteResult(Record):
    """What ``run_profile_suite`` returns."""

    run_id: str
    #: every row of the run in (model, mode, scenario, iteration) order; the runner passes a
    #: sequence that reads them from the JSONL on first use, so a long run holds none in memory
    rows: Sequence[ProfileRow] = attrs.field(converter=_sequence)
    duration_ms: float
    output_jsonl_path: str
    analysis_results: Sequence[SessionAnalysisBundle] = attrs.field(
        default=(), converter=_sequence
    )
    manifest_path: str | None = None
    status: RunStatus = "completed"
    #: how many cells the run has, errored, succeeded (kept as the run goes)
    counts: RunCounts = attrs.field(factory=lambda: RunCounts())


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PluginRecord(Record):
    """A plugin as recorded in a run manifest."""

    name: str
    distribution: str | None = None
    version: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class HookErrorRecord(Record):
    """A lifecycle hook that raised (recorded, never fatal except before_run)."""

    hook: str
    plugin: str
    message: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RunCounts(Record):
    """How many cells a run expected, has, and how many of them errored."""

    expected: int = 0
    completed: int = 0
    errored: int = 0
    succeeded: int = 0


#: why a run under ``execution.stop`` stopped
StopReason = Literal["decided", "max_repetitions", "budget"]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StopRecord(Record):
    """How a sequentially stopped run ended: why, and after how many rounds (repetitions)."""

    reason: StopReason
    repetitions: int
    #: the ``execution.stop`` settings it decided with (plain JSON), so a report can
    #: recompute its intervals
    settings: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReusedCell(Record):
    """A cell whose row was copied from an earlier run (``--reuse``) instead of being run."""

    model: str
    mode: str
    scenario_id: str
    iteration: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReuseRecord(Record):
    """``--reuse RUN``: the run the unchanged cells' rows came from, and those cells."""

    from_run: str
    cells: tuple[ReusedCell, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RunManifest(Record):
    """``results/<runId>.manifest.json``: what ran, with what, and how it ended."""

    run_id: str
    profile_hash: str
    profile_path: str | None = None
    plugins: tuple[PluginRecord, ...] = attrs.field(default=(), converter=as_tuple)
    started_at: str
    completed_at: str | None = None
    status: RunStatus = "running"
    counts: RunCounts = attrs.field(factory=RunCounts)
    metric_units: dict[str, str] = attrs.field(factory=dict)
    hook_errors: tuple[HookErrorRecord, ...] = attrs.field(
        default=(), converter=as_tuple
    )
    warnings: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    provider: str = ""
    models: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    modes: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    scenarios: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    repetitions: int = 0
    resumed_from: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    #: where this run's session traces are (``reports/<runId>/sessions``); None when export is off
    sessions_dir: str | None = None
    #: the run's trace store (``sessions/traces.jsonl``); None when traces are files or
    #: export is off
    trace_store: str | None = None
    #: the CLI overrides of the first run, re-applied by ``--resume``
    overrides: dict[str, Any] = attrs.field(factory=dict)
    #: set when ``execution.stop`` ended the run (absent for a fixed number of repetitions)
    stop: StopRecord | None = None
    #: per (model, mode, scenario) — keyed by ``json.dumps([model, mode, scenario])`` —
    #: a hash of what decides its
    #: rows (profile, mode, scenario and its files, agent configuration): what a later
    #: ``--reuse`` compares
    cell_fingerprints: dict[str, str] | None = None
    #: the cells whose rows were copied from an earlier run (``--reuse``)
    reused: ReuseRecord | None = None

"""``RunOptions``: everything ``run_profile_suite`` needs, as objects."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError
from ..model import ModeConfig, ProfileRow, Scenario
from ..model.record import Record
from ..plugins.contracts import (
    Analyzer,
    Collector,
    JudgeProvider,
    ModeResolver,
    Scorer,
    SessionProvider,
)
from ..plugins.manager import PluginManager
from ..sandbox import SandboxSettings
from ..storage.tracestore import TRACE_FORMATS

if TYPE_CHECKING:
    from ..config.loader import ProfilerConfig
    from .stopping import (
        StopRule,
    )  # numpy: imported by runs with a stop rule only (build.py)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RaySettings(Record):
    """``execution.ray``: where the cluster is and what one cell asks of it."""

    #: ``ray.init`` address: None starts a local cluster in this process, "auto" joins a running one
    address: str | None = None
    num_cpus_per_cell: float = 1.0
    resources: dict[str, float] = attrs.field(factory=dict)
    runtime_env: dict[str, Any] = attrs.field(factory=dict)


@attrs.define(kw_only=True)
class RunOptions:
    """The matrix and the components of one run.

    Build one from a profile with :func:`profiler_core.runner.options_from_config`,
    or by hand in Python (components are plain objects satisfying the
    Protocols of :mod:`profiler_core.plugins.contracts`).
    """

    provider: SessionProvider
    #: makes a fresh provider instance; with it each (model, mode) gets its own instance and
    #: cells of different modes may run at once (without it, modes run one after another)
    provider_factory: Callable[[], Any] | None = None
    scorer: Scorer
    scenarios: Sequence[Scenario]
    #: mode name -> its config; or give ``mode_resolver`` and ``mode_names``
    modes: Mapping[str, ModeConfig] | None = None
    mode_resolver: ModeResolver | None = None
    mode_names: Sequence[str] = ()
    models: Sequence[str] = ("default",)
    collectors: Sequence[Collector] = ()
    analyzers: Sequence[Analyzer] = ()
    repetitions: int = 5
    warmup: bool = True
    timeout_default_ms: int = 120_000
    allowed_retries: int = 0
    #: sessions at once; None = "auto" (start low, raise while sessions succeed, halve
    #: on rate limits)
    concurrency: int | None = 1
    #: the ceiling of "auto"
    max_concurrency: int = 16
    #: "blocked" (mode after mode), "interleaved" (modes alternate), "shuffled" (seeded
    #: by ``order_seed``)
    order: str = "blocked"
    order_seed: int = 42
    #: the run's budget: once spent, no new cell starts (in-flight ones finish); None = no limit
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_duration_s: float | None = None
    #: a cap on every session's timeout, in ms (``--time-limit``)
    time_limit_ms: int | None = None
    session_export: bool = True
    #: ``jsonl``: the run's traces in one store (``sessions/traces.jsonl``); ``files``:
    #: a file per session
    trace_format: str = "jsonl"
    #: which session workspaces stay under ``reports/<runId>/workspaces/``: "failed",
    #: "all" or "none"
    keep_workspaces: str = "failed"
    #: where agents, set-up commands and verifiers run (``execution.sandbox``); None: on the host
    sandbox: SandboxSettings | None = None
    #: stop the run when a (model, mode)'s warm-up and first session, or its first three
    #: sessions, fail
    #: the same way (``runner.breaker``); False attempts every cell whatever happens
    fail_fast: bool = True
    #: ``execution.stop``: run round by round and stop once every comparison is decided (then
    #: ``repetitions`` is its ``max_repetitions``); None: the fixed design of ``repetitions``
    stop: StopRule | None = None
    results_dir: str = "results"
    reports_dir: str = "reports"
    provider_options: dict[str, Any] = attrs.Factory(dict)
    provider_port: int = 0
    run_id: str | None = None
    #: extra RunHooks objects (``@hookimpl`` methods), registered for this run only
    hooks: Sequence[Any] = ()
    plugin_manager: PluginManager | None = None
    profile_hash: str = ""
    profile_path: str | None = None
    extensions: dict[str, Any] = attrs.Factory(dict)
    #: continue the run ``run_id``: its recorded rows are read (under its lock) and
    #: their cells skipped
    resume: bool = False
    #: with ``resume``: accept a changed profile or plugin versions
    force: bool = False
    #: rows already recorded for this run id, given by the caller (instead of ``resume``
    #: reading them)
    previous_rows: Sequence[ProfileRow] = ()
    resumed_from: Sequence[str] = ()
    #: per (model, mode, scenario) the hash a later ``--reuse`` compares
    #: (runner/reuse.py); recorded in the manifest
    cell_fingerprints: dict[str, str] | None = None
    #: ``--reuse``: where ``previous_rows`` came from (recorded in the manifest)
    reused: Any = None
    overrides: dict[str, Any] = attrs.Factory(dict)
    #: stop gracefully on the first Ctrl-C and hard on the second (the CLI sets this)
    handle_sigint: bool = False
    #: seconds a shielded ``destroy_session`` may take before it is abandoned
    destroy_timeout_s: float = 30.0
    judge: JudgeProvider | None = None
    #: where cells run: "local" (this process) or "ray" (tasks on a Ray cluster; needs
    #: ``profile_path``)
    executor: str = "local"
    #: ``execution.ray`` settings for the ray executor
    ray: RaySettings | None = None
    #: processes that run the analyzers and serialise each trace off the event loop
    #: (0: inline, as before; None: ``auto``, one per core up to 8); see docs/runner.md
    analysis_workers: int | None = 0
    #: run exactly these (model, mode, scenario id, iteration) cells, in this order
    #: (``profiler import``:
    #: one cell per recorded session, in input order); None runs the whole matrix
    cells: Sequence[tuple[str, str, str, int]] | None = None
    #: the loaded profile (``ProfilerConfig``) these options were built from: Ray workers and
    #: analysis workers build their components from it, never reading the file a second time
    profile: ProfilerConfig | None = None

    def mode_list(self) -> list[str]:
        """The modes in run order."""
        if self.modes is not None:
            return list(self.modes)
        return list(self.mode_names)


def validate_options(options: RunOptions) -> None:
    """Refuse options no run can start with: every problem in one ``ConfigError``."""
    problems = []
    if options.repetitions < 1:
        problems.append(f"repetitions must be >= 1, got {options.repetitions}")
    if options.allowed_retries < 0:
        problems.append(f"allowed_retries must be >= 0, got {options.allowed_retries}")
    if options.concurrency is not None and options.concurrency < 1:
        problems.append(
            f"concurrency must be >= 1 (or None for auto), got {options.concurrency}"
        )
    if options.max_concurrency < 1:
        problems.append(f"max_concurrency must be >= 1, got {options.max_concurrency}")
    if options.analysis_workers is not None and options.analysis_workers < 0:
        problems.append(
            f"analysis_workers must be >= 0 (or None for auto), got {options.analysis_workers}"
        )
    if not options.mode_list():
        problems.append("at least one mode is required")
    if not options.scenarios:
        problems.append("at least one scenario is required")
    if not options.models:
        problems.append("at least one model is required")
    if options.trace_format not in TRACE_FORMATS:
        problems.append(
            f"trace_format {options.trace_format!r}: expected one of {', '.join(TRACE_FORMATS)}"
        )
    if options.modes is None and options.mode_resolver is None:
        problems.append(
            "give `modes` (name -> ModeConfig) or a `mode_resolver` with `mode_names`"
        )
    if options.keep_workspaces not in ("failed", "all", "none"):
        problems.append(
            f"keep_workspaces: expected failed, all or none, got {options.keep_workspaces!r}"
        )
    if options.resume and not options.run_id:
        problems.append("resume needs the run_id of the run to continue")
    if problems:
        raise ConfigError("; ".join(problems))


__all__ = ["RaySettings", "RunOptions", "validate_options"]

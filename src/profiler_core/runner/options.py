"""``RunOptions``: everything ``run_profile_suite`` needs, as objects."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs

from ..contracts import Analyzer, Collector, JudgeProvider, ModeResolver, Scorer, SessionProvider
from ..model import ModeConfig, ProfileRow, Scenario
from ..plugins import PluginManager


@attrs.define(kw_only=True)
class RunOptions:
    """The matrix and the components of one run.

    Build one from a profile with :func:`profiler_core.runner.options_from_config`,
    or by hand in Python (components are plain objects satisfying the
    Protocols of :mod:`profiler_core.contracts`).
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
    #: sessions at once; None = "auto" (start low, raise while sessions succeed, halve on rate limits)
    concurrency: int | None = 1
    #: the ceiling of "auto"
    max_concurrency: int = 16
    #: "blocked" (mode after mode), "interleaved" (modes alternate), "shuffled" (seeded by ``order_seed``)
    order: str = "blocked"
    order_seed: int = 42
    #: the run's budget: once spent, no new cell starts (in-flight ones finish); None = no limit
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    #: a cap on every session's timeout, in ms (``--time-limit``)
    time_limit_ms: int | None = None
    session_export: bool = True
    #: ``jsonl``: the run's traces in one store (``sessions/traces.jsonl``); ``files``: a file per session
    trace_format: str = "jsonl"
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
    #: rows already recorded for this run id (resume): their cells are skipped
    previous_rows: Sequence[ProfileRow] = ()
    resumed_from: Sequence[str] = ()
    overrides: dict[str, Any] = attrs.Factory(dict)
    #: stop gracefully on the first Ctrl-C and hard on the second (the CLI sets this)
    handle_sigint: bool = False
    #: seconds a shielded ``destroy_session`` may take before it is abandoned
    destroy_timeout_s: float = 30.0
    judge: JudgeProvider | None = None
    #: where cells run: "local" (this process) or "ray" (tasks on a Ray cluster; needs ``profile_path``)
    executor: str = "local"
    #: ``execution.ray`` settings (``RaySettings``) for the ray executor
    ray: Any = None
    #: processes that run the analyzers and serialise each trace off the event loop
    #: (0: inline, as before; None: ``auto``, one per core up to 8); see docs/runner.md
    analysis_workers: int | None = 0
    #: run only these (model, mode, scenario id, iteration) cells of the matrix (``profiler import``:
    #: one cell per recorded session); None runs every cell
    only_cells: Collection[tuple[str, str, str, int]] | None = None

    def mode_list(self) -> list[str]:
        """The modes in run order."""
        if self.modes is not None:
            return list(self.modes)
        return list(self.mode_names)

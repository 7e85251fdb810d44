"""``RunState``: what every cell of one run shares (components, writer, hooks, pacing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from ..model import RunContext
from ..storage.store import RowWriter
from ..util.redact import Redactor
from .hooks import HookCaller


@attrs.define(kw_only=True)
class RunState:
    """Everything iterations share within one run."""

    run_id: str
    run_ctx: RunContext
    #: the provider's id, as rows record it
    provider_id: str
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
    metric_units: dict[str, str] = attrs.Factory(dict)
    #: ``jsonl``: one trace store per run; ``files``: one file per session
    trace_format: str = "jsonl"
    #: runs analyzers and serialises traces in worker processes (``AnalysisPool``);
    #: None: here, inline
    analysis_pool: Any = None
    #: warnings for the run's manifest, gathered as the run goes
    warnings: list[str] = attrs.Factory(list)
    #: prepares each attempt's workspace and runs its verifiers (``runner.workspace``);
    #: None: sessions get none
    workspaces: Any = None
    #: the run's trials (runner/trial.py): set when its environment kind starts one
    #: environment per attempt
    trials: Any = None

    @property
    def export_needed(self) -> bool:
        """Export the trace when session export is on or an analyzer is active (as the original)."""
        return self.session_export or bool(self.analyzers)


__all__ = ["RunState"]

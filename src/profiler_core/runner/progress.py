"""Counting a run's cells for the ``profiler_progress`` hook."""

from __future__ import annotations

from typing import Any

from ..model import ProgressEvent
from ..model.run import ProgressKind
from .hooks import HookCaller


class Progress:
    """Counts cells and tells the ``profiler_progress`` hook."""

    def __init__(self, hooks: HookCaller, run_id: str, total: int) -> None:
        self.hooks, self.run_id, self.total = hooks, run_id, total
        self.completed = 0
        self.failed = 0

    def emit(self, kind: ProgressKind, **fields: Any) -> None:
        """Tell the hook about one step of the run."""
        if not self.hooks.implemented("profiler_progress"):
            return  # twice per cell: no event is built when nobody listens
        self.hooks.call_sync(
            "profiler_progress",
            event=ProgressEvent(
                kind=kind,
                run_id=self.run_id,
                completed=self.completed,
                total=self.total,
                failed=self.failed,
                **fields,
            ),
        )


__all__ = ["Progress"]

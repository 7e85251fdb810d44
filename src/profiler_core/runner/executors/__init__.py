"""Where a run's cells execute: one protocol, three executors chosen by the profile.

* :class:`~.local.SequentialExecutor` — one provider instance at a time, modes one
  after another, each mode's environment applied to this process (a provider that
  needs the process environment, or a caller that gave no provider factory);
* :class:`~.local.OverlappedExecutor` — a provider instance per (model, mode), so
  cells of several modes run at once in ``execution.order``;
* :class:`~.ray.RayExecutor` — attempts run as Ray tasks on a cluster, whose workers
  start their own providers (``execution.executor: ray``).

The :class:`~profiler_core.runner.run.Run` owns everything else: the order cells
start in, the concurrency limit and budget (one "acquire, check, start" loop),
retries, hooks and writing.
"""

from __future__ import annotations

from .base import Executor, ModeGroup, Stage

__all__ = ["Executor", "ModeGroup", "Stage"]

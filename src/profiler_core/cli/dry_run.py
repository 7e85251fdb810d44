"""``profiler run --dry-run``: the matrix, the number of sessions, and an estimate of
cost and time; nothing starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if (
    TYPE_CHECKING
):  # pragma: no cover - the CLI imports the profile loader only when a command runs
    from ..config.loader import ProfilerConfig


def money(x: float) -> str:
    """``$0.0123`` below a dollar, ``$12.34`` above."""
    return f"${x:.4f}" if x < 1 else f"${x:,.2f}"


def duration(seconds: float) -> str:
    """``42 s``, ``3.5 min``, ``2.1 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def concurrency_of(config: ProfilerConfig) -> tuple[int, str]:
    """Sessions at once, and how to say it (``auto`` counts as its ceiling)."""
    ex = config.execution
    if ex.concurrency is None:
        return ex.max_concurrency, f"auto (up to {ex.max_concurrency})"
    return ex.concurrency, str(ex.concurrency)


def estimate_line(config: ProfilerConfig, repetitions: int, runs) -> str | None:
    """``cost $x ($lo-$hi), time y (lo-hi) at concurrency c`` for ``repetitions``
    rounds, from earlier runs."""
    from ..runner.planning import estimate, session_costs, sessions_per_mode

    sessions = sessions_per_mode(
        config.models, config.modes, len(config.scenarios), repetitions
    )
    at, said = concurrency_of(config)
    est = estimate(sessions, session_costs(runs.rows), at)
    if est is None:
        return None
    cost, lo, hi = est.cost_usd
    t, t_lo, t_hi = est.seconds
    return (
        f"cost {money(cost)} (90% range {money(lo)} to {money(hi)}), "
        f"time {duration(t)} ({duration(t_lo)} to {duration(t_hi)}) at concurrency {said}"
    )


def print_dry_run(config: ProfilerConfig, echo: Callable[[str], None]) -> None:
    """Print what ``profiler run`` would do with ``config``; start nothing."""
    from ..runner.planning import earlier_runs

    ex = config.execution
    models, modes, scenarios = (
        len(config.models),
        len(config.modes),
        len(config.scenarios),
    )
    per_round = models * modes * scenarios
    echo(f"Dry run of {config.path}: nothing is started.")
    echo(
        f"  models:      {', '.join(m or '(the agent default)' for m in config.models)}"
    )
    echo(f"  modes:       {', '.join(config.modes)}")
    echo(f"  scenarios:   {scenarios} ({', '.join(s.id for s in config.scenarios)})")
    warmups = f" (+ up to {models * modes} warm-up sessions)" if ex.warmup else ""
    if ex.stop is not None:
        low, high = ex.stop.min_repetitions, ex.stop.max_repetitions
        echo(
            f"  repetitions: {low} to {high} (execution.stop: decided; a round "
            f"= {per_round} sessions)"
        )
        echo(f"  sessions:    {per_round * low} to {per_round * high}{warmups}")
        rounds = {"at min_repetitions": low, "at max_repetitions": high}
    else:
        echo(f"  repetitions: {ex.repetitions}")
        echo(
            f"  sessions:    {models} x {modes} x {scenarios} x "
            f"{ex.repetitions} = {per_round * ex.repetitions}{warmups}"
        )
        rounds = {"": ex.repetitions}
    runs = earlier_runs(
        Path(config.output.results_dir), config.profile_hash(), config.path
    )
    if runs is None:
        echo(
            "  estimate:    none (no earlier run of this profile in the "
            "results folder; `profiler plan` runs a pilot)"
        )
        return
    echo(
        f"  estimate:    from {len(runs.rows)} sessions of "
        f"{len(runs.manifests)} earlier run(s) of the {runs.match} "
        f"({', '.join(m.run_id for m in runs.manifests[-3:])})"
    )
    for label, n in rounds.items():
        line = estimate_line(config, n, runs)
        if line is None:
            echo(
                "               none: the earlier runs did not run every mode of this profile"
            )
            return
        echo(f"               {label + ': ' if label else ''}{line}")

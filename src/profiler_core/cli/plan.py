"""``profiler plan``: how many repetitions a question needs, from a pilot run (docs/planning.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError
from ..util.textcut import printable
from .context import pass_manager
from .dry_run import concurrency_of, duration, money


@click.command("plan")
@click.argument("profile", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--pilot",
    metavar="RUN",
    help="A pilot run: its run id in the profile's results folder, or a results .jsonl file.",
)
@click.option(
    "--detect", multiple=True, metavar="METRIC:EFFECT",
    help="An effect worth finding, e.g. cost:10% or success:10pp (repeatable; "
        "default: success 10pp, others 10%).",
)  # fmt: skip
@click.option(
    "--power",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.8,
    show_default=True,
    help="Chance to find the effect.",
)
@click.option(
    "--gate",
    "gates",
    multiple=True,
    metavar="METRIC:±N%|success_rate:-Npp",
    help="A `compare --fail-on` gate: print the rows per mode it needs to catch a "
    "change --margin points past it (repeatable).",
)
@click.option(
    "--margin",
    type=click.FloatRange(min=0, min_open=True),
    metavar="POINTS",
    help="With --gate: how far past the tolerance a change must be caught (default: "
    "the tolerance again).",
)
@click.option(
    "--pilot-repetitions",
    type=click.IntRange(min=2),
    help="Without --pilot: the pilot's repetitions (default: min_repetitions, 3).",
)
@click.option(
    "--yes", "-y", is_flag=True, help="Without --pilot: run the pilot without asking."
)
@pass_manager
def plan_command(
    manager, profile, pilot, detect, power, gates, margin, pilot_repetitions, yes
):
    """Estimate the repetitions, sessions, cost and time a profile's question needs.

    Per metric of the stop rule (execution.stop, or its defaults): the repetitions
    a fixed design needs to find the --detect effect with --power, and the
    repetitions `stop: decided` is expected to need, simulated from the pilot's pairs.
    Without --pilot, a small pilot run is made first (after a confirmation).

    \b
    Examples:
      profiler plan profile.yaml --pilot run_20261122T051500Z_3f9a
      profiler plan profile.yaml --pilot run_X --detect cost:10% --detect success:10pp --power 0.9
      profiler plan profile.yaml --yes          # runs a 3-repetition pilot first
      profiler plan profile.yaml --pilot run_X --gate cost:+10% --margin 20
    """
    import attrs

    from ..config.loader import load_profile
    from ..config.schema import StopSettings
    from ..runner.planning import parse_detect

    config = load_profile(profile, registry=manager.registry)
    settings = config.execution.stop or StopSettings()
    if len(config.modes) < 2:
        has = f"one ({config.modes[0]})" if config.modes else "none"
        raise ConfigError(f"{profile}: plan compares modes; the profile has {has}")
    baseline = settings.baseline or config.modes[0]
    effects = parse_detect(detect, settings.metrics)
    from ..compare.gates import Gate

    parsed_gates = [Gate.parse(text) for text in gates]
    if pilot:
        rows, source = _read_pilot(pilot, config)
    else:
        pilot_config = attrs.evolve(
            config,
            execution=attrs.evolve(
                config.execution,
                stop=None,
                repetitions=pilot_repetitions or settings.min_repetitions,
            ),
        )
        rows, source = _run_pilot(pilot_config, manager, yes)
    _print_plan(config, settings, baseline, effects, power, rows, source)
    if parsed_gates:
        _print_gates(config, parsed_gates, margin, power, rows)


def _print_gates(config, gates, margin, power, rows) -> None:
    """Per gate and mode: the rows per mode two runs need for the gate to catch a change
    ``margin`` past its tolerance."""
    from ..runner.stopping import REPORT_METRICS

    by_report = {v: k for k, v in REPORT_METRICS.items()}
    scenarios = len(config.scenarios) or 1
    click.echo(
        f"Gates (profiler compare --fail-on), {power:.0%} power, one-sided at "
        "5%, BASE and NEW independent runs like the pilot:"
    )
    for gate in gates:
        metric = (
            "success" if gate.metric == "success_rate" else by_report.get(gate.metric)
        )
        if metric is None:
            raise ConfigError(
                f"--gate {gate.text!r}: plan knows {', '.join(sorted(by_report))} and success_rate"
            )
        for mode in config.modes:
            click.echo(_gate_line(gate, mode, metric, margin, power, rows, scenarios))


def _gate_line(
    gate, mode: str, metric: str, margin, power: float, rows, scenarios: int
):
    """What one gate needs for one mode: rows per mode and repetitions."""
    from ..compare.gates import rows_from_pilot
    from ..runner.stopping import row_value

    kept = [r for r in rows if r.mode == mode and r.error is None and r.iteration >= 0]
    values = [row_value(r, metric) for r in kept]
    cells = [f"{r.model}\x00{r.scenario_id}" for r in kept]
    needed, low, high = rows_from_pilot(gate, values, cells, margin, power=power)
    shown = f"  {gate.text} {printable(mode, one_line=True)}"
    if not math.isfinite(needed):
        return f"{shown}: the pilot shows no spread to plan with"
    points = gate.threshold if margin is None else margin
    unit = "pp" if gate.unit == "pp" else "points"
    return (
        f"{shown}: ~{math.ceil(needed)} rows per mode ({math.ceil(needed / scenarios)} "
        f"repetitions; range {math.ceil(low)}-{math.ceil(high)}) catch a change "
        f"{points:g} {unit} past the tolerance"
    )


def _read_pilot(pilot: str, config) -> tuple[list, str]:
    """The pilot's rows: a run id in the results folder, or a results file."""
    from ..storage.store import RunPaths, read_jsonl

    path = Path(pilot)
    if not path.is_file():
        try:
            path = RunPaths(Path(config.output.results_dir), pilot).jsonl
        except ConfigError:
            path = Path(pilot)
    if not path.is_file():
        raise ConfigError(
            f"--pilot {pilot}: no such run in {config.output.results_dir} (and "
            "no such results file)"
        )
    read = read_jsonl(path)
    for problem in read.problems:
        click.echo(f"warning: {printable(problem)}", err=True)
    return [r for r in read.rows if r.iteration >= 0], f"pilot {pilot}"


def _run_pilot(pilot_config, manager, yes: bool) -> tuple[list, str]:
    """Run a small pilot of the profile (after a confirmation showing what it costs) and
    return its rows."""
    from ..runner import options_from_config, run_profile_suite_sync
    from ..runner.planning import earlier_runs
    from .dry_run import estimate_line

    reps = pilot_config.execution.repetitions
    sessions = (
        len(pilot_config.models)
        * len(pilot_config.modes)
        * len(pilot_config.scenarios)
        * reps
    )
    runs = earlier_runs(
        Path(pilot_config.output.results_dir),
        pilot_config.profile_hash(),
        pilot_config.path,
    )
    cost = estimate_line(pilot_config, reps, runs) if runs is not None else None
    what = f"a pilot of {sessions} sessions ({reps} repetitions of every cell)"
    click.echo(
        f"No --pilot given: plan needs {what}; "
        + (
            f"estimated {cost}."
            if cost
            else "its cost is unknown (no earlier run of this profile)."
        )
    )
    if not yes:
        click.confirm("Run the pilot now?", abort=True)
    result = run_profile_suite_sync(options_from_config(pilot_config, manager))
    click.echo(f"Pilot run {result.run_id}: {result.output_jsonl_path}")
    return [r for r in result.rows if r.iteration >= 0], f"pilot {result.run_id}"


def _print_plan(config, settings, baseline, effects, power, rows, source) -> None:
    """The plan's table (one line per mode and metric), then sessions, cost and time of
    each design."""
    from ..runner.planning import pilot_pairs, plan_metric, session_costs

    models = len({r.model for r in rows}) or 1
    k = len(settings.metrics) * (len(config.modes) - 1) * models
    click.echo(
        f"Plan for {config.path} from {source} ({len(rows)} sessions); power "
        f"{power:.0%}, confidence {settings.confidence} "
        f"shared by {k} tests (every metric of every comparison); stop rule: "
        f"{settings.min_repetitions} to {settings.max_repetitions} repetitions"
    )
    click.echo(
        f"{'comparison':28} {'metric':8} {'pairs':>5} {'baseline':>10} "
        f"{'SD of pairs':>11} {'detect':>10} {'fixed':>6} {'(range)':>9} "
        f"{'stop: mean (p90)':>17} {'decided':>8}"
    )
    plans = []
    for mode in config.modes:
        if mode == baseline:
            continue
        for metric in settings.metrics:
            pairs = pilot_pairs(rows, mode, baseline, metric)
            if not pairs:
                raise ConfigError(
                    f"{source}: no pairs of {mode} and {baseline} for {metric} "
                    "(did the pilot run both modes without errors?)"
                )
            p = plan_metric(
                pairs,
                mode=mode,
                metric=metric,
                effect=effects[metric],
                settings=settings,
                power=power,
                metrics=k,
            )
            plans.append(p)
            click.echo(_plan_line(mode, baseline, metric, p))
    click.echo(
        "fixed: repetitions for the power at one planned look, averaged over "
        "the SDs the pilot allows (range: if the SD "
        "were its 10th / 90th percentile); stop: repetitions until the rule "
        "decides (simulated, max_repetitions when it "
        "never does); decided: share of simulated runs decided in the effect's direction"
    )
    _pilot_note(plans, len(config.scenarios) or 1)
    totals = _Totals(config, session_costs(rows))
    click.echo(
        f"Sessions, cost and time at concurrency {totals.said} (from the pilot's sessions):"
    )
    _design_lines(totals, plans, settings)


def _plan_line(mode: str, baseline: str, metric: str, p: Any) -> str:
    """One comparison and metric of the plan's table."""
    from ..util.arrays import np

    fixed = p.fixed_rounds if p.fixed_rounds is not None else "–"
    return (
        f"{printable(mode + ' vs ' + baseline, one_line=True):28} {metric:8} "
        f"{p.pairs:>5} {_unit(metric, p.baseline_mean, rate=True):>10} "
        f"{_unit(metric, p.sd):>11} {_unit(metric, p.effect):>10} {fixed:>6} "
        f"{_range(p.rounds_range):>9} {p.stop_rounds.mean():>9.1f} "
        f"({np.percentile(p.stop_rounds, 90):>3.0f})  {p.decided:>8.0%}"
    )


def _pilot_note(plans: list[Any], scenarios: int) -> None:
    """Say when the pilot is smaller than one that keeps the plan close to the truth."""
    from ..runner.planning import pilot_size

    wanted = pilot_size()
    smallest = min((p.pairs for p in plans if p.metric != "success"), default=wanted)
    if smallest < wanted:
        click.echo(
            f"The pilot has {smallest} pairs: a pilot of {wanted} pairs "
            f"(~{math.ceil(wanted / scenarios)} repetitions) would "
            "keep the plan within 25% of what the true SD needs (90% confidence)"
        )


def _design_lines(totals: _Totals, plans: list[Any], settings: Any) -> None:
    """Sessions, cost and time of the fixed design and of the stop rule."""
    from ..util.arrays import np

    fixed = [p.fixed_rounds for p in plans]
    if all(r is not None for r in fixed):
        most = max(r for r in fixed if r is not None)
        totals.line(f"fixed design, {most} repetitions", most)
    else:
        click.echo(
            "  fixed design: cannot be planned (the pilot shows no spread in some metric)"
        )
    # The run goes on until its last comparison is decided.
    run_rounds = np.max(np.stack([p.stop_rounds for p in plans]), axis=0)
    expected = (
        f"stop: decided, {run_rounds.mean():.1f} repetitions expected (p90 "
        f"{np.percentile(run_rounds, 90):.0f})"
    )
    totals.line(expected, math.ceil(float(run_rounds.mean())))
    totals.line(
        f"stop: decided, at most ({settings.max_repetitions})", settings.max_repetitions
    )


class _Totals:
    """Sessions, cost and time of a number of repetitions of a profile, from a pilot's sessions."""

    def __init__(self, config, costs) -> None:
        self.config, self.costs = config, costs
        self.at, self.said = concurrency_of(config)

    def line(self, label: str, rounds: int) -> None:
        """Print ``label: N sessions, $cost (range), time (range)``."""
        from ..runner.planning import estimate, sessions_per_mode

        sessions = sessions_per_mode(
            self.config.models, self.config.modes, len(self.config.scenarios), rounds
        )
        est = estimate(sessions, self.costs, self.at)
        total = sum(sessions.values())
        if est is None:
            click.echo(f"  {label}: {total} sessions")
            return
        cost, lo, hi = est.cost_usd
        t, t_lo, t_hi = est.seconds
        click.echo(
            f"  {label}: {total} sessions, {money(cost)} ({money(lo)} to {money(hi)}), "
            f"{duration(t)} ({duration(t_lo)} to {duration(t_hi)})"
        )


def _range(span) -> str:
    return f"({span[0]}-{span[1]})" if span else "–"


def _unit(metric: str, value: float, *, rate: bool = False) -> str:
    """A value in the metric's unit for the plan's table (success: a rate, or points of it)."""
    if value is None or not math.isfinite(value):
        return "–"
    if metric == "success":
        return f"{value:.0%}" if rate else f"{value * 100:.1f}pp"
    if metric == "cost":
        return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
    if metric == "wall_ms":
        return f"{value / 1000:.1f}s"
    return f"{value:,.0f}"

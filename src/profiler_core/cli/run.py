"""``profiler run`` and ``profiler validate``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from ..errors import ProfilerError
from ..util import collector
from ..util.textcut import printable
from .context import pass_manager
from .progress import make_progress, progress_option
from .terminal import cell, plain_table, terminal_console

#: ``output.log_level`` -> the logging level name (names, so that the CLI imports
#: logging only to run)
LOG_LEVELS = {
    "debug": "DEBUG",
    "info": "INFO",
    "warn": "WARNING",
    "warning": "WARNING",
    "error": "ERROR",
}


def _overrides(
    mode,
    model,
    scenario,
    scenario_set,
    repetitions,
    retries,
    skip_warmup,
    concurrency,
    provider=None,
) -> dict:
    return {
        k: v
        for k, v in {
            "provider": provider,
            "modes": list(mode),
            "models": list(model),
            "scenario_ids": list(scenario),
            "scenario_set": scenario_set,
            "repetitions": repetitions,
            "retries": retries,
            "skip_warmup": skip_warmup or None,
            "concurrency": concurrency,
        }.items()
        if v not in (None, [], ())
    }


def _settings(values: tuple[str, ...]) -> dict[str, str]:
    """``--set KEY=VALUE`` options as ``{key: value}`` (a key given twice: the last
    wins); one line for a bad one."""
    from ..config.settings import parse_setting

    return dict(parse_setting(value) for value in values)


def _configure_logging(level_name: str) -> None:
    """The CLI owns logging: the profile's level, and httpx's per-request lines only at
    debug (a poll makes several)."""
    import logging

    level = logging.getLevelName(LOG_LEVELS.get(level_name, "INFO"))
    logging.basicConfig(
        level=level, format="%(levelname)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("agent_profiler").setLevel(level)
    logging.getLogger("httpx").setLevel(
        max(level, logging.WARNING) if level > logging.DEBUG else level
    )
    from .terminal import protect_log_handlers

    # log lines (a retry's error, a hook's failure) mask secrets and escape control
    # characters
    protect_log_handlers()


def _median(values):
    import statistics

    return statistics.median(values) if values else float("nan")


class _Brief:
    """What the summary table needs of a row."""

    __slots__ = ("cost_usd", "error", "iteration", "success", "tokens", "wall_ms")

    def __init__(self, row) -> None:
        self.success, self.error, self.iteration = (
            row.success,
            bool(row.error),
            row.iteration,
        )
        self.tokens, self.wall_ms = row.tokens.total, row.timing.wall_ms
        # No price known for the model: the cost is unknown, never $0 (as in the report).
        self.cost_usd = None if cost_unknown(row) else row.cost.total_usd


SUMMARY_TITLE = "Summary per mode (medians)"


def cost_unknown(row) -> bool:
    """Whether the cost collector found no price for a row's model (its cost is unknown, not 0)."""
    return (row.extensions or {}).get("cost_source") == "unknown"


def _cost_cell(costs) -> str:
    known = [c for c in costs if c is not None]
    return f"{_median(known):.4f}" if known else "unknown"


def _runs_cell(group, decided_rounds: int | None) -> str:
    """The rows of a mode: those the stop rule decided on, then ``+N`` rows of later
    rounds in flight at the stop."""
    if decided_rounds is None:
        return str(len(group))
    later = sum(1 for r in group if r.iteration >= decided_rounds)
    return f"{len(group) - later} +{later}" if later else str(len(group))


def stop_rounds(manifest_path) -> int | None:
    """The rounds a stop rule decided on, from a run's manifest (None: no stop rule
    stopped it, or no manifest)."""
    from ..storage.store import read_manifest

    if not manifest_path:
        return None
    try:
        stop = read_manifest(Path(manifest_path)).stop
    except ProfilerError:  # no manifest, or one that cannot be read: the plain table
        return None
    return stop.repetitions if stop is not None else None


def print_summary(rows, labels=None, decided_rounds: int | None = None) -> None:
    """Per-mode table: success rate, median tokens, wall time and cost (models by their
    ``labels`` when given).

    A rich table on a terminal; piped or captured, plain columns (rich is not imported).
    After a run the
    stop rule ended after ``decided_rounds`` rounds, ``runs`` counts the rows it decided on and, as
    ``+N``, rows of later rounds that were in flight when it stopped (in the medians, not in the
    decision), as the report's stop headline counts them.
    """
    # Only the few numbers the table needs are kept per row, read one row at a time from the file.
    groups: dict[tuple[str, str], list] = {}
    for row in getattr(rows, "stream", lambda: iter(rows))():
        groups.setdefault((row.model, row.mode), []).append(_Brief(row))
    several_models = len({model for model, _ in groups}) > 1
    headers = ("model",) * several_models + (
        "mode",
        "runs",
        "success",
        "errors",
        "tokens",
        "wall s",
        "cost $",
    )
    lines: list[tuple[str, ...]] = []
    for (model, mode), group in groups.items():
        ok = sum(1 for r in group if r.success)
        lines.append(
            (
                *(
                    (printable((labels or {}).get(model, model), one_line=True),)
                    if several_models
                    else ()
                ),
                printable(mode, one_line=True),
                _runs_cell(group, decided_rounds),
                f"{ok / len(group):.0%}",
                str(sum(1 for r in group if r.error)),
                f"{_median([r.tokens for r in group]):,.0f}",
                f"{_median([r.wall_ms for r in group]) / 1000:.2f}",
                _cost_cell([r.cost_usd for r in group]),
            )
        )
    _print_table(headers, lines)
    if decided_rounds is not None and any(
        r.iteration >= decided_rounds for group in groups.values() for r in group
    ):
        click.echo(
            f"runs: the rows of the {decided_rounds} rounds the stop rule "
            "decided on; +N: rows of later rounds in flight "
            "when it stopped (in the medians, not in the decision)"
        )


def _print_table(headers: tuple[str, ...], lines: list[tuple[str, ...]]) -> None:
    console = terminal_console()
    if console is None:
        click.echo(SUMMARY_TITLE)
        for text in plain_table([headers, *lines]):
            click.echo(text)
        return
    from rich.table import Table

    table = Table(title=SUMMARY_TITLE, title_justify="left")
    for header in headers:
        table.add_column(
            header,
            justify="left" if header in ("model", "mode") else "right",
            no_wrap=True,
        )
    for line in lines:
        table.add_row(
            *(cell(text) for text in line)
        )  # rich Text: a mode named "[bold]" is shown, not parsed
    console.print(table)


@click.command("run")
@click.argument("profile", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--provider",
    "provider_id",
    metavar="ID",
    help="Use this provider instead of the profile's (its options are dropped), e.g. `oracle`.",
)
@click.option("--mode", multiple=True, help="Run only this mode (repeatable).")
@click.option(
    "--model", multiple=True, help="Run this model (repeatable; replaces `models`)."
)
@click.option(
    "--scenario",
    multiple=True,
    help="Run only this scenario id (repeatable; wins over sets).",
)
@click.option("--scenario-set", help="Run the scenarios of this named set.")
@click.option(
    "--dataset",
    metavar="NAME@VERSION",
    help="Run a Harbor dataset's tasks, fetched from its registry (replaces `scenarios`).",
)
@click.option(
    "--registry",
    metavar="FILE|URL",
    help="The Harbor registry --dataset is looked up in (default: Harbor's).",
)
@click.option("--repetitions", type=int, help="Repetitions per scenario (default 5).")
@click.option(
    "--retries", type=int, help="Retries of an iteration that errors (default 0)."
)
@click.option(
    "--skip-warmup",
    is_flag=True,
    help="Skip the canary iteration after each provider init.",
)
@click.option(
    "--concurrency", type=int, help="Iterations run at once within a mode (default 1)."
)
@click.option("--run-id", help="Use this run id instead of a generated one.")
@click.option(
    "--resume",
    "resume_id",
    metavar="RUN_ID",
    help="Finish an interrupted run: only missing cells run.",
)
@click.option(
    "--reuse",
    "reuse_run",
    metavar="RUN",
    help="Copy the rows of cells unchanged since run RUN (profile, mode, scenario, "
    "agent configuration); run only the others.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --resume: accept a changed profile or plugin versions.",
)
@click.option("--no-report", is_flag=True, help="Do not write the report at the end.")
@click.option(
    "--allow-errors",
    is_flag=True,
    help="Exit 0 even when cells still errored after their retries.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Cap every session's timeout at this many seconds.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the matrix, the sessions and an estimate of cost and time; start nothing.",
)
@click.option(
    "--junit",
    "junit_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write JUnit XML: a test case per (mode, scenario).",
)
@click.option(
    "--set",
    "set_values",
    multiple=True,
    metavar="KEY=VALUE",
    help="Set any profile key (YAML value), e.g. execution.repetitions=3 (repeatable).",
)
@progress_option
@pass_manager
def run_command(
    manager,
    profile,
    provider_id,
    mode,
    model,
    scenario,
    scenario_set,
    dataset,
    registry,
    repetitions,
    retries,
    skip_warmup,
    concurrency,
    run_id,
    resume_id,
    reuse_run,
    force,
    no_report,
    allow_errors,
    time_limit,
    dry_run,
    set_values,
    progress,
    junit_file,
):
    """Run a profile: every model x mode x scenario x repetition.

    Any profile key can be set for this run with --set (validated like the
    file); PROFILER_REPETITIONS, PROFILER_WARMUP, PROFILER_LOG_LEVEL,
    PROFILER_MODES, EVAL_MODEL, EVAL_PROVIDER_ID and EVAL_PROVIDER_PORT set
    theirs from the environment. --set wins over the environment, which wins
    over the file.

    \b
    Examples:
      profiler run examples/demo/profile.yaml
      profiler run profile.yaml --mode baseline --mode with_skill --repetitions 10
      profiler run profile.yaml --set execution.repetitions=3 --set provider.model=openai/gpt-4.1
      PROFILER_REPETITIONS=10 profiler run profile.yaml
      profiler run profile.yaml --resume run_20261122T051500Z_3f9a
      profiler run profile.yaml --dry-run
      profiler run profile.yaml --junit profile-junit.xml
      profiler run examples/tasks/profile.yaml --provider oracle --repetitions 1
      profiler run profile.yaml --dataset terminal-bench@2.0 --provider oracle
    """
    import trio

    from ..runner.launch import run_from_profile

    overrides = _overrides(
        mode,
        model,
        scenario,
        scenario_set,
        repetitions,
        retries,
        skip_warmup,
        concurrency,
        provider_id,
    )
    if set_values:
        overrides["settings"] = _settings(set_values)
    overrides.update(
        {k: v for k, v in (("dataset", dataset), ("registry", registry)) if v}
    )
    if dry_run:
        collector.resume()  # the plan reads earlier runs' rows: real work, with the collector on
        from ..config.loader import load_profile
        from .dry_run import print_dry_run

        config = load_profile(profile, overrides, registry=manager.registry)
        print_skipped(config)
        print_dry_run(config, click.echo)
        return
    bar = make_progress(progress)
    run, config = run_from_profile(
        profile,
        manager,
        overrides=overrides,
        run_id=run_id,
        resume=resume_id,
        force=force,
        hooks=[bar] if bar is not None else [],
        reuse=reuse_run,
        on_prepared=lambda run: click.echo(
            f"Run {run.run_id}"
            + (
                f" (resuming: {run.resumed_cells} cells already done)"
                if resume_id
                else ""
            )
            + (
                f" (reused {run.resumed_cells} unchanged cells of {reuse_run})"
                if reuse_run
                else ""
            )
        ),
        handle_sigint=True,
        time_limit_ms=None if time_limit is None else max(1, round(time_limit * 1000)),
    )
    print_skipped(config)
    _configure_logging(config.output.log_level)
    # start-up is done: what it made is frozen, the sessions' garbage is collected
    collector.resume()
    try:
        result = trio.run(run.execute_all)
    finally:
        if bar is not None:
            bar.stop()
    print_summary(
        result.rows,
        config.overrides.get("model_labels"),
        stop_rounds(result.manifest_path),
    )
    click.echo(f"Results:  {result.output_jsonl_path}")
    click.echo(f"Manifest: {result.manifest_path}")
    traces = _traces_location(result.manifest_path)
    if traces:
        click.echo(f"Traces:   {traces}")
    if result.status == "budget_exhausted":
        click.echo(
            "Budget spent: no new cell was started. Raise "
            "execution.max_cost_usd / max_tokens / max_duration_s and resume "
            "with: "
            f"profiler run {profile} --resume {result.run_id}",
            err=True,
        )
    if result.status == "interrupted":
        click.echo(
            f"Interrupted. Resume with: profiler run {profile} --resume {result.run_id}",
            err=True,
        )
        sys.exit(130)
    if not no_report:
        _write_report(result, config, manager)
    if junit_file is not None:
        from ..report.junit import write_run_junit

        write_run_junit(Path(result.output_jsonl_path), junit_file)
        click.echo(f"JUnit:    {junit_file}")
    errored = result.counts.errored
    if errored:
        # A run whose cells errored measured the failure, not the agent: say so in the exit status.
        if allow_errors:
            click.echo(
                f"{errored} of {result.counts.completed} cells errored after "
                "their retries (accepted: --allow-errors)"
            )
        else:
            click.echo(
                f"Error: {errored} of {result.counts.completed} cells errored "
                "after their retries; their rows are in the "
                "results, but the run is not a clean measurement (see the "
                "report's errors; --allow-errors to accept)",
                err=True,
            )
            sys.exit(1)


def _write_report(result, config, manager) -> None:
    from ..report import write_report

    out = Path(config.output.reports_dir) / result.run_id
    written = write_report(Path(result.output_jsonl_path), out, plugins=manager)
    for warning in written.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    if written.verdict:
        click.echo("Verdict:")
        for line in written.verdict:
            click.echo(f"  {printable(line)}")
    click.echo(f"Report:   {written.html}")
    click.echo(f"          {written.md}")


def _scorer_problems(config, scorer, manager) -> list[str]:
    """A scorer that ignores what the scenarios carry to be scored by (eval checkpoints
    under ``checks``)."""
    from ..scorers.coverage import unscored_problems

    return (
        unscored_problems(config, scorer, manager.registry)
        if scorer is not None
        else []
    )


@click.command("validate")
@click.argument("profile", type=click.Path(dir_okay=False, path_type=Path))
@pass_manager
def validate_command(manager, profile):
    """Check a profile: every component, mode and scenario resolves; nothing runs.

    \b
    Example:
      profiler validate examples/demo/profile.yaml
    """
    from ..config.loader import ProfileErrors, load_profile

    try:
        config = load_profile(profile, registry=manager.registry)
    except ProfileErrors as exc:
        _refuse(exc.problems)
    built, problems = _validation_problems(config, profile, manager)
    if problems:
        _refuse(problems)
    print_skipped(config)
    click.echo(f"{profile}: OK")
    _print_validated(config, built)


def _refuse(problems: list[str]) -> NoReturn:
    """Print each problem on its line, their count, and exit 1."""
    from ..util.textcut import cut_lines

    for line in problems:
        click.echo(f"Error: {cut_lines(line)}", err=True)
    click.echo(f"{len(problems)} problem(s) found", err=True)
    sys.exit(1)


def _validation_problems(config, profile, manager) -> tuple[dict, list[str]]:
    """The profile's components built, and every problem found building or checking them."""
    from ..runner.build import build_components, mode_problems

    built, problems = build_components(config, manager)
    problems += _scorer_problems(config, built.get("scorer"), manager)
    if built.get("mode_resolver") is not None:
        problems += mode_problems(config, manager, built["mode_resolver"])
    if config.execution.executor == "ray":
        # the Ray executor's module imports the whole runner: only then
        from ..runner.executors.ray import ray_problems

        problems += [
            f"{profile}: {line}" for line in ray_problems(config.execution.executor)
        ]
    problems += sandbox_problems(config, profile)
    return built, problems


def _model_names(config) -> str:
    """The profile's models, each with its label, for the summary."""
    labels = config.overrides.get("model_labels") or {}
    names = []
    for model in config.models:
        text = f"{model} ({labels[model]})" if model in labels else model
        names.append(text or "(not given: the agent's own default)")
    return ", ".join(names)


def _print_validated(config, built: dict) -> None:
    """What the validated profile will run: models, modes, scenarios, repetitions, parts."""
    cells = (
        len(config.models)
        * len(config.modes)
        * len(config.scenarios)
        * config.execution.repetitions
    )
    click.echo(f"  models:      {_model_names(config)}")
    click.echo(
        f"  modes:       {', '.join(config.modes)} (resolver: {config.mode_resolver.id})"
    )
    scenario_ids = ", ".join(s.id for s in config.scenarios)
    click.echo(f"  scenarios:   {len(config.scenarios)} ({scenario_ids})")
    if config.skipped:
        click.echo(
            f"  left out:    {len(config.skipped)} scenario folder(s), "
            "one warning line each above"
        )
    stop = config.execution.stop
    if stop is not None:
        click.echo(
            f"  repetitions: {stop.min_repetitions} to {stop.max_repetitions} "
            f"(execution.stop: decided on {', '.join(stop.metrics)})"
        )
        click.echo(f"  matrix:      at most {cells} iterations")
    else:
        click.echo(f"  repetitions: {config.execution.repetitions}")
        click.echo(f"  matrix:      {cells} iterations")
    click.echo(f"  provider:    {config.provider.id}   scorer: {config.scorer.id}")
    collectors = ", ".join(c.id for c in built["collectors"] if c) or "none"
    analyzers = ", ".join(a.name for a in built["analyzers"] if a) or "none"
    click.echo(f"  collectors:  {collectors}")
    click.echo(f"  analyzers:   {analyzers}")


def print_skipped(config) -> None:
    """One warning line per scenario folder left out of the dataset (a Harbor task that
    is not valid or not run)."""
    from ..util.textcut import cut_lines

    for line in config.skipped:
        click.echo(f"warning: left out: {cut_lines(line)}", err=True)


def sandbox_problems(config, profile) -> list[str]:
    """The sandbox of ``execution.sandbox`` cannot start here: one line (a trial run;
    nothing when ``none``)."""
    if config.execution.sandbox == "none" and config.execution.network is None:
        return []  # no sandbox: do not even import the package
    from ..sandbox import sandbox_problems as check_sandbox

    return check_sandbox(config.execution, str(profile))


__all__ = [
    "ProfilerError",
    "print_skipped",
    "run_command",
    "sandbox_problems",
    "validate_command",
]


def _traces_location(manifest_path: str | None) -> str | None:
    """Where the run's session traces are (its trace store, or its sessions folder);
    None when none were kept."""
    from ..errors import ProfilerError
    from ..storage.store import read_manifest

    if not manifest_path:
        return None
    try:
        manifest = read_manifest(Path(manifest_path))
    except ProfilerError:
        return None
    return manifest.trace_store or manifest.sessions_dir

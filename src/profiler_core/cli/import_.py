"""``profiler import``: recorded sessions -> ProfileRows (+ traces, analysis, manifest).

Every file is parsed before anything is written: one bad file prints one line
naming it (and the line or key at fault), the command exits 1 and writes
nothing. Otherwise the sessions are replayed through the runner by the
``transcripts`` provider (:func:`profiler_core.runner.replay.import_sessions`),
so each row is made exactly as ``profiler run`` makes its rows.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..errors import ProfilerError
from ..util.textcut import cut_lines, printable
from .context import pass_manager, plugin_manager

if TYPE_CHECKING:
    from ..plugins.manager import PluginManager


#: ``profiler import harbor JOB_DIR...``: Harbor job folders, not files of one format
#: (importers/harbor_job.py)
HARBOR = "harbor"


def _known_format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # Checked against the registry at run time: plugins add formats (profiler_register_importers).
    from ..importers import check_format

    if value == HARBOR:
        return value
    try:
        return check_format(value, plugin_manager(ctx).registry)
    except ProfilerError as exc:
        raise click.BadParameter(f"{exc}, or {HARBOR} (Harbor job folders)") from None


@click.command("import")
@click.argument("format", metavar="FORMAT", callback=_known_format)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Results JSONL to write.",
)
@click.option(
    "--mode", default="imported", show_default=True, help="Mode recorded on every row."
)
@click.option(
    "--scenario",
    help="Scenario id of every row (default: the run's scenarioId, else the file name).",
)
@click.option(
    "--scorer",
    "scorer_id",
    metavar="ID",
    help="Score each session with this scorer (default: it succeeds when it ended without error).",
)
@click.option(
    "--run-id", help="Run id of the rows (default: the --out file name without .jsonl)."
)
@click.option(
    "--model",
    help="Model to record (and price) when a file names none, e.g. for traces.",
)
@click.option(
    "--append",
    "existing",
    flag_value="append",
    help="--out exists: add these sessions to it.",
)
@click.option(
    "--replace",
    "existing",
    flag_value="replace",
    help="--out exists: replace it (rows, analysis, manifest).",
)
@click.option(
    "--as-mode",
    "as_modes",
    multiple=True,
    metavar="NAME",
    help="harbor: the mode of each JOB_DIR's rows, in order (default: its agent's name).",
)
@pass_manager
def import_command(
    manager: PluginManager,
    format,
    files,
    out,
    mode,
    scenario,
    scorer_id,
    run_id,
    model,
    existing,
    as_modes,
):
    """Turn recorded agent sessions into profile rows that `profiler report` can read.

    FORMAT is one of openai, anthropic, claude-code, codex, opencode, trace,
    atif (or a format a plugin registers), or harbor: then each FILE is a
    Harbor job folder and each trial a row (its task the scenario, its agent
    the mode unless --as-mode names one per job, its verifier the success). Each
    session becomes one row, replayed through the runner as `profiler run`
    would; traces go to <out dir>/sessions/, analysis to <out>.analysis.jsonl,
    the manifest to <out>.manifest.json. A bad file is reported (file and line
    or key) and nothing is written. An --out that exists is refused unless
    --append or --replace says what to do; a run still being written there is
    always refused.

    \b
    Examples:
      profiler import claude-code ~/.claude/projects/-home-me-repo/*.jsonl --out results/cc.jsonl
      profiler import codex ~/.codex/sessions/2026/11/22/ --out results/codex.jsonl
      profiler import opencode exports/*.json --out results/opencode.jsonl --mode with_skill
      profiler import openai runs.jsonl --out results/runs.jsonl --scenario refund-001
      profiler import harbor jobs/base jobs/skill --as-mode base --as-mode skill --out tb.jsonl
    """
    from ..runner.replay import expand_inputs, import_sessions, load_all

    if format == HARBOR:
        result, inputs = _import_harbor(
            manager,
            files,
            as_modes,
            out=out,
            scenario=scenario,
            scorer_id=scorer_id,
            run_id=run_id,
            model=model,
            existing=existing,
        )
        _report(result, f"{len(result.rows)} trial(s) from {len(inputs)} job folder(s)")
        return
    if as_modes:
        raise click.UsageError(
            "--as-mode is for `profiler import harbor` (one mode per job folder); use --mode"
        )

    inputs = expand_inputs(format, files)
    if not inputs:
        raise click.UsageError(
            "no input files (the directories given hold none of this format)"
        )
    sessions, problems = load_all(format, inputs)
    if problems:
        for line in problems:
            click.echo(f"Error: {cut_lines(line)}", err=True)
        click.echo(
            f"{len(problems)} of {len(inputs)} file(s) could not be imported; nothing written",
            err=True,
        )
        sys.exit(1)
    if not sessions:
        click.echo("Error: the files hold no session; nothing written", err=True)
        sys.exit(1)
    result = import_sessions(
        sessions,
        files=inputs,
        out=out,
        manager=manager,
        mode=mode,
        scenario=scenario,
        scorer_id=scorer_id,
        run_id=run_id,
        model=model,
        existing=existing or "refuse",
    )
    _report(result, f"{len(result.rows)} session(s) from {len(inputs)} file(s)")


def _import_harbor(manager: PluginManager, folders, as_modes, **options):
    """Read every job folder (one line per bad one, nothing written), then import their
    finished trials as one run."""
    from ..importers.harbor_job import load_jobs
    from ..runner.replay import import_sessions

    if as_modes and len(as_modes) != len(folders):
        raise click.UsageError(
            f"--as-mode given {len(as_modes)} time(s) for {len(folders)} job "
            "folder(s); give one per JOB_DIR, in order"
        )
    jobs, problems = load_jobs(list(folders), list(as_modes))
    if problems:
        _refuse_jobs(problems, len(folders))
    sessions = [s for job in jobs for s in job.sessions]
    if not sessions:
        _refuse_empty(jobs)
    result = import_sessions(
        sessions,
        files=[f for job in jobs for f in job.files],
        manager=manager,
        mode=DEFAULT_HARBOR_MODE,
        modes=[m for job in jobs for m in job.modes],
        warnings=[w for job in jobs for w in job.warnings],
        existing=options.pop("existing") or "refuse",
        **options,
    )
    return result, folders


def _refuse_jobs(problems: list[str], folders: int) -> NoReturn:
    """One line per job folder that cannot be imported; nothing is written."""
    for line in problems:
        click.echo(f"Error: {cut_lines(line)}", err=True)
    click.echo(
        f"{len(problems)} of {folders} job folder(s) could not be imported; nothing written",
        err=True,
    )
    sys.exit(1)


def _refuse_empty(jobs: list[Any]) -> NoReturn:
    """The jobs' warnings (why no trial finished), then the refusal."""
    for job in jobs:
        for warning in job.warnings:
            click.echo(f"warning: {printable(warning)}", err=True)
    click.echo(
        "Error: the job folders hold no finished trial; nothing written", err=True
    )
    sys.exit(1)


#: the mode of a trial whose job has no --as-mode and whose agent has no name (Harbor
#: always names it)
DEFAULT_HARBOR_MODE = "harbor"


def _report(result, what: str) -> None:
    from .run import print_summary

    for warning in result.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    print_summary(result.rows)
    click.echo(f"Imported {what}")
    click.echo(f"Results:  {result.jsonl}")
    if result.analysis is not None:
        click.echo(f"Analysis: {result.analysis}")
    click.echo(f"Traces:   {result.sessions_dir}")
    click.echo(f"Manifest: {result.manifest}")


__all__ = ["import_command"]

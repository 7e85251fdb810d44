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
from typing import TYPE_CHECKING

import click

from ..errors import ProfilerError
from ..util.textcut import cut_lines, printable
from .context import pass_manager, plugin_manager

if TYPE_CHECKING:
    from ..plugins.manager import PluginManager


def _known_format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # Checked against the registry at run time: plugins add formats (profiler_register_importers).
    from ..importers import check_format

    try:
        return check_format(value, plugin_manager(ctx).registry)
    except ProfilerError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("import")
@click.argument("format", metavar="FORMAT", callback=_known_format)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Results JSONL to write.")
@click.option("--mode", default="imported", show_default=True, help="Mode recorded on every row.")
@click.option("--scenario", help="Scenario id of every row (default: the run's scenarioId, else the file name).")
@click.option("--scorer", "scorer_id", metavar="ID", help="Score each session with this scorer (default: it succeeds when it ended without error).")
@click.option("--run-id", help="Run id of the rows (default: the --out file name without .jsonl).")
@click.option("--model", help="Model to record (and price) when a file names none, e.g. for traces.")
@click.option("--append", "existing", flag_value="append", help="--out exists: add these sessions to it.")
@click.option("--replace", "existing", flag_value="replace", help="--out exists: replace it (rows, analysis, manifest).")
@pass_manager
def import_command(manager: PluginManager, format, files, out, mode, scenario, scorer_id, run_id, model, existing):
    """Turn recorded agent sessions into profile rows that `profiler report` can read.

    FORMAT is one of openai, anthropic, claude-code, codex, opencode, trace
    (or a format a plugin registers). Each
    session becomes one row, replayed through the runner as `profiler run`
    would; traces go to <out dir>/sessions/, analysis to <out>.analysis.jsonl,
    the manifest to <out>.manifest.json. A bad file is reported (file and line
    or key) and nothing is written. An --out that exists is refused unless
    --append or --replace says what to do; a run still being written there is
    always refused.

    \b
    Examples:
      profiler import claude-code ~/.claude/projects/-home-me-myrepo/*.jsonl --out results/claude.jsonl
      profiler import codex ~/.codex/sessions/2026/11/22/ --out results/codex.jsonl
      profiler import opencode exports/*.json --out results/opencode.jsonl --mode with_skill
      profiler import openai runs.jsonl --out results/runs.jsonl --scenario refund-001
    """
    from ..runner.replay import expand_inputs, import_sessions, load_all
    from .run import print_summary

    inputs = expand_inputs(format, files)
    if not inputs:
        raise click.UsageError("no input files (the directories given hold none of this format)")
    sessions, problems = load_all(format, inputs)
    if problems:
        for line in problems:
            click.echo(f"Error: {cut_lines(line)}", err=True)
        click.echo(f"{len(problems)} of {len(inputs)} file(s) could not be imported; nothing written", err=True)
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
    for warning in result.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    print_summary(result.rows)
    click.echo(f"Imported {len(result.rows)} session(s) from {len(inputs)} file(s)")
    click.echo(f"Results:  {result.jsonl}")
    if result.analysis is not None:
        click.echo(f"Analysis: {result.analysis}")
    click.echo(f"Traces:   {result.sessions_dir}")
    click.echo(f"Manifest: {result.manifest}")


__all__ = ["import_command"]

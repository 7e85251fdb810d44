"""``profiler export RUN --to results.duckdb`` or ``--to DIR --format parquet``: a run's
tables for SQL and notebooks."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ProfilerError


@click.command("export")
@click.argument("run", metavar="RUN_ID|RESULTS.jsonl")
@click.option(
    "--to",
    "target",
    required=True,
    type=click.Path(path_type=Path),
    help="A DuckDB file, or a folder for Parquet.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["duckdb", "parquet"]),
    help="[default: parquet for a folder, else duckdb]",
)
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Where a RUN_ID is looked up.",
)
@click.option(
    "--reports-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the run's report folder (traces) is, when not beside the results.",
)
def export_command(
    run: str, target: Path, fmt: str | None, results_dir: Path, reports_dir: Path | None
) -> None:
    """Export a run as tables: rows, tool_calls, checkpoints, turns, findings.

    Every table carries the run id, so several runs go into one database and
    SQL compares them; exporting a run again replaces it. DuckDB needs the
    [duckdb] extra, Parquet the [parquet] extra.

    \b
    Examples:
      profiler export run_2024-06-01_abc123 --to results.duckdb
      profiler export results/run_x.jsonl --to tables/ --format parquet
      duckdb results.duckdb "SELECT mode, avg(cost_total_usd) FROM rows GROUP BY mode"
    """
    from ..dataset.writers import to_duckdb, to_parquet
    from ..storage.runfiles import resolve_results, run_files

    fmt = fmt or ("parquet" if target.is_dir() or not target.suffix else "duckdb")
    files = run_files(resolve_results(run, results_dir), reports_dir)
    problems: list[str] = []
    try:
        if fmt == "duckdb":
            target.parent.mkdir(parents=True, exist_ok=True)
            written = to_duckdb(files, target, problems)
        else:
            written = to_parquet(files, target, problems)
    # a folder that cannot be made, a file that cannot be written: one line, no
    # traceback
    except OSError as exc:
        raise ProfilerError(
            f"{exc.filename or target}: cannot export there: {exc.strerror or exc}"
        ) from None
    for problem in problems[:20]:
        click.echo(f"warning: {problem}", err=True)
    if len(problems) > 20:
        click.echo(f"warning: {len(problems) - 20} more lines skipped", err=True)
    counts = ", ".join(f"{n} {name}" for name, n in written.items())
    click.echo(f"Exported run {files.run_id} to {target} ({fmt}): {counts}")
    if files.traces is None:
        click.echo(
            "note: no trace store found for this run: the turns table is empty "
            "and tool calls have no turn",
            err=True,
        )

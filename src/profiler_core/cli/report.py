"""``profiler report``: write the report of a results file or a run id."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ProfilerError, StoreError

#: Warnings printed one by one; the rest are counted (all are in report.md).
_MAX_PRINTED = 20


def resolve_results(source: str, results_dir: Path) -> Path:
    """A results file path, or a run id looked up as ``<results-dir>/<RUN_ID>.jsonl`` (or ``.jsonl.gz``)."""
    path = Path(source)
    if path.is_file():
        return path
    looks_like_path = path.suffix in (".jsonl", ".gz", ".json") or "/" in source or "\\" in source
    if looks_like_path:
        raise StoreError(f"{source}: results file not found")
    for candidate in (results_dir / f"{source}.jsonl", results_dir / f"{source}.jsonl.gz"):
        if candidate.is_file():
            return candidate
    raise StoreError(
        f"{source}: no such results file, and no run {source!r} in {results_dir}/ (looked for {results_dir / (source + '.jsonl')})"
    )


@click.command("report")
@click.argument("source", metavar="RESULTS.jsonl|RUN_ID")
@click.option(
    "--out", "out", type=click.Path(file_okay=False, path_type=Path), help="Report folder [default: reports/<runId>/]."
)
@click.option("--baseline", metavar="MODE", help="Mode the others are compared with [default: the first mode].")
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Where a RUN_ID is looked up.",
)
def report_command(source: str, out: Path | None, baseline: str | None, results_dir: Path) -> None:
    """Write report.md, analysis.md, report.html and data exports for a run.

    \b
    Examples:
      profiler report run_2024-06-01_abc123            # results/run_2024-06-01_abc123.jsonl
      profiler report results/run_x.jsonl --baseline baseline --out /tmp/report
      profiler report ../shared/anchor-parity/report-rows.jsonl.gz   # the TypeScript tool's rows
    """
    from ..report import write_report
    from ..report.load import peek_run_id

    try:
        path = resolve_results(source, results_dir)
        if out is None:
            out = Path("reports") / peek_run_id(path)
        written = write_report(path, out, baseline=baseline)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    for line in written.warnings[:_MAX_PRINTED]:
        click.echo(f"warning: {line}", err=True)
    if len(written.warnings) > _MAX_PRINTED:
        click.echo(f"warning: {len(written.warnings) - _MAX_PRINTED} more; see {written.md}", err=True)
    click.echo(f"{written.rows} rows from {path}")
    click.echo(f"Report:   {written.html}")
    click.echo(f"Markdown: {written.md}")
    click.echo(f"Data:     {written.csv.parent}/")

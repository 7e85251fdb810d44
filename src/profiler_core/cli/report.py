"""``profiler report``: write the report of a results file or a run id."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ProfilerError
from ..util.redact import redact_text
from ..util.textcut import cut_lines, printable
from .context import plugin_manager

#: Warnings printed one by one; the rest are counted (all are in report.md).
_MAX_PRINTED = 20


@click.command("report")
@click.argument("sources", metavar="RESULTS.jsonl|RUN_ID...", nargs=-1, required=True)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Report folder [default: reports/<runId>/].",
)
@click.option(
    "--baseline",
    metavar="MODE",
    help="Mode the others are compared with [default: the first mode].",
)
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Where a RUN_ID is looked up.",
)
@click.option(
    "--as-mode",
    "as_mode",
    multiple=True,
    metavar="FILE=MODE",
    help="Call the rows of this input MODE (repeatable).",
)
def report_command(
    sources: tuple[str, ...],
    out: Path | None,
    baseline: str | None,
    results_dir: Path,
    as_mode: tuple[str, ...],
) -> None:
    """Write report.md, analysis.md, report.html and data exports for a run, or for
    several runs together.

    \b
    Examples:
      profiler report run_2024-06-01_abc123            # results/run_2024-06-01_abc123.jsonl
      profiler report results/run_x.jsonl --baseline baseline --out /tmp/report
      profiler report examples/original/rows.jsonl.gz  # rows written by the TypeScript original
      profiler report results/a.jsonl results/b.jsonl --as-mode a=old --as-mode b=new  # two runs
      profiler report 'results/import-*.jsonl'          # a glob (quoted or expanded by the shell)
    """
    import tempfile

    from ..report import write_report
    from ..report.load import peek_run_id
    from ..report.merge import expand_sources, merge_results, merged_name, parse_as_mode
    from ..storage.paths import safe_name

    merged = None
    try:
        names = expand_sources(sources)
        mapping = parse_as_mode(as_mode)
        from ..storage.runfiles import locate_results

        located = [locate_results(name, results_dir) for name in names]
        paths = [path for path, _ in located]
        with tempfile.TemporaryDirectory(prefix="profiler-report-") as tmp:
            if len(paths) == 1 and not mapping:
                path = paths[0]
                shown = str(path)
                default_name = safe_name(peek_run_id(path))
            else:
                # One report of several inputs: its title and folder name them all.
                default_name = safe_name(merged_name([peek_run_id(p) for p in paths]))
                path = Path(tmp) / f"{default_name}.jsonl"
                merged = merge_results(paths, path, mapping)
                shown = ", ".join(str(p) for p in paths)
            if (
                out is None
                and len(paths) == 1
                and not mapping
                and located[0][1] is not None
            ):
                out = located[0][
                    1
                ]  # a run found below: its report goes where `profiler run` put it
            if out is None:
                # The run id comes from the file's rows: it names a folder only once made safe.
                out = Path("reports") / default_name
                if len(paths) > 1 or mapping:
                    out = _unused(out)  # a merged report never replaces another report
            # Problems in a merged file name the user's inputs and lines, never the temporary file.
            written = write_report(
                path,
                out,
                baseline=baseline,
                merged_from=merged,
                plugins=plugin_manager(),
            )
    except ProfilerError as exc:
        raise click.ClickException(
            cut_lines(redact_text(merged.locate(str(exc)) if merged else str(exc)))
        ) from None
    for line in written.warnings[:_MAX_PRINTED]:
        click.echo(f"warning: {printable(line)}", err=True)
    if len(written.warnings) > _MAX_PRINTED:
        click.echo(
            f"warning: {len(written.warnings) - _MAX_PRINTED} more; see {written.md}",
            err=True,
        )
    click.echo(printable(f"{written.rows} rows from {shown}"))
    click.echo(f"Report:   {written.html}")
    click.echo(f"Markdown: {written.md}")
    click.echo(f"Data:     {written.csv.parent}/")


def _unused(folder: Path) -> Path:
    """``folder``, or ``folder-2``, ``folder-3``... whichever does not exist yet."""
    candidate, n = folder, 1
    while candidate.exists():
        n += 1
        candidate = folder.with_name(f"{folder.name}-{n}")
    return candidate

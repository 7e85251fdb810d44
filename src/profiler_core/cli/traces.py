"""``profiler traces``: work with a run's trace store
(``reports/<runId>/sessions/traces.jsonl``)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ProfilerError
from ..util.textcut import printable


@click.group("traces")
def traces_group() -> None:
    """Work with a run's session traces (its trace store)."""


@traces_group.command("export")
@click.argument("target", metavar="RUN")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write into (default: the store's own sessions folder; with "
    "--format atif its atif/ folder).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["trace", "atif"]),
    default="trace",
    show_default=True,
    help="trace: our SessionTrace JSON; atif: an ATIF trajectory (Harbor's format) per session.",
)
def export_command(target: str, out: Path | None, format_: str) -> None:
    """Write one SessionTrace JSON file (or ATIF trajectory) per session from a run's trace store.

    RUN is the store, the run's sessions folder, its report folder or its run id. The files
    are laid out as ``output.trace_format: files`` writes them during a run:
    ``<scenarioId>/<mode>-iter-<n>.json`` (``<mode>+<model>`` when the run had
    several models); for a cell recorded more than once, its last trace.

    \b
    Examples:
      profiler traces export reports/run_20261122T051500Z_3f9a
      profiler traces export run_20261122T051500Z_3f9a          # found where its profile put it
      profiler traces export reports/RUN/sessions/traces.jsonl --out /tmp/traces
      profiler traces export run_20261122T051500Z_3f9a --format atif --out atif/  # Harbor's viewer
    """
    from ..storage.runs import run_folder
    from ..storage.tracestore import TRACES_FILE, export_files, find_store, is_store

    try:
        where = run_folder(target)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    if not where.exists():
        raise click.ClickException(f"{where}: no such file or folder")
    try:
        store = find_store(where)
        if not is_store(store):
            raise click.ClickException(
                f"{store}: not a trace store (expected {TRACES_FILE}: one "
                f"{{scenarioId, mode, model, iteration, trace}} object per line)"
            )
        problems: list[str] = []
        if format_ == "atif":
            from ..importers.atif_export import export_atif

            out = out or store.parent / "atif"
            written = export_atif(store, out, problems)
        else:
            written = export_files(store, out or store.parent, problems)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    for problem in problems:
        click.echo(f"warning: {printable(problem)}", err=True)
    if problems and not written:
        raise click.ClickException(f"{store}: no trace could be read")
    kind = (
        "ATIF trajector" + ("ies" if len(written) != 1 else "y")
        if format_ == "atif"
        else "trace file" + ("s" if len(written) != 1 else "")
    )
    click.echo(f"Wrote {len(written)} {kind} to {out or store.parent}")

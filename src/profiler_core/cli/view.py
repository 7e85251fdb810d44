"""``profiler view``: a local web viewer of runs, their rows and each session's transcript."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ProfilerError, StoreError


@click.command("view")
@click.argument("target", metavar="[RUN_ID|RESULTS_DIR|RESULTS.jsonl]", required=False)
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Where runs are found (and a RUN_ID is looked up).",
)
@click.option(
    "--reports-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where run reports live [default: the manifest's, else reports/ beside the "
    "results folder].",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (anything but loopback exposes your runs).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port (0: a free one).",
)
@click.option(
    "--no-open",
    "--no-browser",
    "no_open",
    is_flag=True,
    help="Print the URL; open no browser.",
)
def view_command(
    target: str | None,
    results_dir: Path,
    reports_dir: Path | None,
    host: str,
    port: int,
    no_open: bool,
) -> None:
    """Browse runs in a local web viewer: reports, rows, and each session's transcript.

    Opens the newest run (or RUN_ID) of the results folder; the viewer lists every
    run there. Ctrl-C stops it. Needs the [view] extra:
    pip install 'agent-profiler[view]'.

    \b
    Examples:
      profiler view                              # the newest run in results/
      profiler view run_2024-06-01_abc123        # that run
      profiler view ci-artifacts/results         # the runs of another folder
      profiler view --no-open --port 8080        # print the URL only
    """
    from ..viewer import missing_dependency

    problem = missing_dependency()
    if problem:
        raise click.ClickException(problem)
    from ..viewer.app import make_app
    from ..viewer.pages import run_url
    from ..viewer.server import allowed_hosts, open_browser, serve

    try:
        catalog, where, start = _catalog(target, results_dir, reports_dir)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    hosts = allowed_hosts(host)
    app = make_app(catalog, where, hosts)

    def ready(base: str) -> None:
        url = base.rstrip("/") + (run_url(start) if start else "/")
        click.echo(f"Viewing {where} at {url} (Ctrl-C to stop)")
        if not no_open and not open_browser(url):
            click.echo(f"No browser could be started; open {url} yourself.", err=True)

    try:
        serve(app, host, port, ready)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {host}:{port} ({exc.strerror or exc})"
        ) from None
    click.echo("Stopped.", err=True)


def _catalog(target: str | None, results_dir: Path, reports_dir: Path | None):
    """The catalog to serve, a description of where its runs are, and the key of the run
    to open first."""
    from ..storage.runfiles import is_results_file
    from ..storage.runs import find_run

    if target is not None and Path(target).is_dir():
        results_dir, target = Path(target), None
    if (
        target is not None
        and Path(target).is_file()
        and not is_results_file(Path(target))
    ):
        raise StoreError(
            f"{target}: not a results file (expected a run's <runId>.jsonl)"
        )
    if target is None and not results_dir.is_dir():
        # No ./results: the newest run below, where its profile put it
        # (examples/demo/results after the demo).
        newest = find_run(None, results_dir=results_dir)
        if newest.results is not None:
            target = str(newest.results)
            reports_dir = reports_dir or newest.report_dir.parent
    if target is not None:
        return _one_run(target, results_dir, reports_dir)
    return _every_run(results_dir, reports_dir)


def _one_run(target: str, results_dir: Path, reports_dir: Path | None):
    """The catalog of the run's folder, opening at that run."""
    from ..storage.runfiles import locate_results
    from ..viewer.catalog import Catalog

    path, report_dir = locate_results(target, results_dir)
    if reports_dir is None and report_dir is not None:
        reports_dir = report_dir.parent
    catalog = Catalog(path.parent, reports_dir)
    start = next((run.key for run in catalog.runs() if run.files.results == path), None)
    return catalog, str(path.parent), start


def _every_run(results_dir: Path, reports_dir: Path | None):
    """The catalog of a results folder, opening at its first run."""
    from ..viewer.catalog import Catalog

    if not results_dir.is_dir():
        raise StoreError(
            f"{results_dir}: no results folder here; name the folder `profiler "
            "run` printed under Results: "
            "(e.g. profiler view examples/demo/results)"
        )
    catalog = Catalog(results_dir, reports_dir)
    runs = catalog.runs()
    if not runs:
        raise StoreError(
            f"{results_dir}: no runs found (looked for <runId>.jsonl files)"
        )
    return catalog, str(results_dir), runs[0].key

"""``profiler view``: open the latest (or a named) report in the browser, or serve the reports folder."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..errors import ProfilerError


@click.command("view")
@click.argument("target", metavar="[RUN_ID|report.html]", required=False)
@click.option(
    "--reports-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports"),
    show_default=True,
    help="Where run reports live.",
)
@click.option("--serve", is_flag=True, help="Serve the reports folder on 127.0.0.1 instead of opening a file.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port for --serve (0: a free one).")
@click.option("--no-browser", is_flag=True, help="With --serve: print the URL, open no browser.")
def view_command(target: str | None, reports_dir: Path, serve: bool, port: int, no_browser: bool) -> None:
    """Open a run's report.html in the browser (the latest one by default).

    \b
    Examples:
      profiler view                          # the newest reports/<runId>/report.html
      profiler view run_2024-06-01_abc123    # that run's report
      profiler view --serve --no-browser     # http://127.0.0.1:PORT/ until Ctrl-C
    """
    from .. import view
    from ..runs import find_report_html

    try:
        # The newest run, or a run id, also where a profile put it (examples/demo/reports/...).
        report = find_report_html(target, reports_dir) if (target or not serve) else None
        if report is not None and not serve:
            url = view.open_in_browser(report)
            click.echo(f"Opened {url}")
            return
        root = reports_dir if report is None or _inside(report, reports_dir) else report.parent
        server, _thread = view.serve(root, port)
    except (ProfilerError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    url = view.served_url(server, root, report)
    click.echo(f"Serving {root} at {url} (Ctrl-C to stop)")
    try:
        if not no_browser:
            view.open_url(url)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        server.shutdown()
        server.server_close()


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True

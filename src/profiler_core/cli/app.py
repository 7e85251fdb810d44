"""The ``profiler`` click group with core's commands (plugins add theirs through
``ProfilerGroup``)."""

from __future__ import annotations

import click

from .agents import agents_group
from .analyze import analyze
from .compare import compare_command
from .datasets import datasets_group
from .export import export_command
from .fake_model import fake_model_command
from .group import ProfilerGroup
from .import_ import import_command
from .init import init_command
from .plan import plan_command
from .plugins import list_plugins
from .report import report_command
from .run import run_command, validate_command
from .traces import traces_group
from .view import view_command


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # click.version_option would read the installed version (importlib.metadata) on every start.
    if not value or ctx.resilient_parsing:
        return
    from ..util.version import version

    click.echo(f"agent-profiler, version {version()}")
    ctx.exit()


@click.group(
    cls=ProfilerGroup, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """Profile AI agent sessions and tell which set-up is better.

    \b
    Quick start:
      profiler init my-demo && profiler run my-demo/profile.yaml
      profiler list-plugins
    """


for _command in (
    run_command,
    validate_command,
    analyze,
    init_command,
    import_command,
    report_command,
    view_command,
    traces_group,
    list_plugins,
):
    cli.add_command(_command)
for _command in (
    plan_command,
    compare_command,
    export_command,
    fake_model_command,
    agents_group,
    datasets_group,
):
    cli.add_command(_command)


__all__ = ["cli"]

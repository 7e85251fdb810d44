"""The ``profiler`` command line (click)."""

from __future__ import annotations

import json
import sys

import click

from . import __version__
from .errors import ProfilerError


class ProfilerGroup(click.Group):
    """A click group that turns ``ProfilerError`` into one line and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ProfilerError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except (OSError, UnicodeError) as exc:
            # Files that cannot be read or written: one line, not a traceback.
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            click.echo(f"Error: {where}{exc.strerror if getattr(exc, 'strerror', None) else exc}", err=True)
            ctx.exit(1)
        except BaseExceptionGroup as group:
            # Several concurrent failures (trio): one line each.
            for exc in _leaves(group):
                click.echo(f"Error: {type(exc).__name__}: {exc}", err=True)
            ctx.exit(1)


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


@click.group(cls=ProfilerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="agent-profiler")
def cli() -> None:
    """Profile AI agent sessions and tell which set-up is better.

    \b
    Quick start:
      profiler init my-demo && profiler run my-demo/profile.yaml
      profiler list-plugins
    """


@cli.command("list-plugins")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list with every key present.")
def list_plugins(as_json: bool) -> None:
    """List installed plugins and the components they provide.

    \b
    Example:
      profiler list-plugins
      PROFILER_LOAD_PLUGINS= profiler list-plugins --json   # built-ins only
    """
    infos = _manager().plugin_infos()
    if as_json:
        click.echo(json.dumps([info.to_dict() for info in infos], indent=2))
        return
    rows = []
    for info in infos:
        provides = info.provides()
        name = f"{info.name} (builtin)" if info.builtin else info.name
        rows.append((name, info.version or "-", info.distribution or "-", provides))
    headers = ("NAME", "VERSION", "DISTRIBUTION", "PROVIDES")
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(3)]
    for row in [headers, *rows]:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])


def _add_builtin_commands() -> None:
    from .cli_analyze import analyze
    from .cli_import import import_command
    from .cli_init import init_command
    from .cli_report import report_command
    from .cli_run import run_command, validate_command
    from .cli_view import view_command

    cli.add_command(run_command)
    cli.add_command(validate_command)
    cli.add_command(analyze)
    cli.add_command(init_command)
    cli.add_command(import_command)
    cli.add_command(report_command)
    cli.add_command(view_command)


_add_builtin_commands()

_MANAGER = None


def _manager():
    """The CLI's plugin manager (loaded once per process)."""
    global _MANAGER
    if _MANAGER is None:
        from .plugins import get_plugin_manager

        _MANAGER = get_plugin_manager()
    return _MANAGER


def _register_plugin_commands() -> None:
    try:
        manager = _manager()
    except ProfilerError as exc:
        click.echo(f"agent-profiler: warning: {exc}", err=True)
        return
    for plugin_name, call in manager.hookimpls("profiler_register_commands"):
        try:
            call(cli=cli)
        except Exception as exc:  # noqa: BLE001 - one bad plugin must not break the CLI
            click.echo(f"agent-profiler: warning: plugin {plugin_name!r} failed to add commands: {exc}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``profiler`` console script."""
    _register_plugin_commands()
    try:
        cli.main(args=argv, prog_name="profiler", standalone_mode=True)
    except ProfilerError as exc:  # raised outside a command's invoke (e.g. in a callback)
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()

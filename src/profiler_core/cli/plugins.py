"""``profiler list-plugins``: the installed plugins and the components they provide."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from ..util.textcut import printable
from .context import pass_manager
from .terminal import cell, plain_table, terminal_console

if TYPE_CHECKING:
    from ..plugins.manager import PluginInfo, PluginManager

HEADERS = ("NAME", "VERSION", "DISTRIBUTION", "PROVIDES")


def describe(info: PluginInfo) -> tuple[str, str, str, str]:
    """One plugin as the four cells of the human table."""
    provides = info.provides()
    name = f"{info.name} (builtin)" if info.builtin else info.name
    return name, info.version or "-", info.distribution or "-", provides


@click.command("list-plugins")
@click.option(
    "--json", "as_json", is_flag=True, help="Print a JSON list with every key present."
)
@pass_manager
def list_plugins(manager: PluginManager, as_json: bool) -> None:
    """List installed plugins and the components they provide.

    \b
    Example:
      profiler list-plugins
      PROFILER_LOAD_PLUGINS= profiler list-plugins --json   # built-ins only
    """
    infos = manager.plugin_infos()
    if as_json:
        click.echo(json.dumps([info.to_dict() for info in infos], indent=2))
        return
    console = terminal_console(highlight=False)
    if console is None:
        _print_plain(infos)
        return
    from rich import box
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold"
    )
    for header in HEADERS:
        # PROVIDES folds on a narrow terminal; the other columns never wrap.
        table.add_column(header, no_wrap=header != "PROVIDES", overflow="fold")
    for info in infos:
        table.add_row(
            *(cell(text) for text in describe(info)),
            style="red" if info.error else None,
        )
    console.print(table)


def _print_plain(infos: list[PluginInfo]) -> None:
    # Piped or captured: one plain line per plugin, however long, and no padding after
    # the last column.
    for line in plain_table(
        [
            HEADERS,
            *(
                tuple(printable(t, one_line=True) for t in describe(info))
                for info in infos
            ),
        ]
    ):
        click.echo(line)


__all__ = ["describe", "list_plugins"]

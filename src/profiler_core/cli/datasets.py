"""``profiler datasets list``: what a Harbor registry offers (``scenarios: {dataset:
NAME@VERSION}`` runs one)."""

from __future__ import annotations

import click

from ..errors import ProfilerError
from ..util.textcut import printable


@click.group("datasets")
def datasets_group() -> None:
    """Harbor datasets: tasks named in a registry, fetched with git when a profile runs them."""


@datasets_group.command("list")
@click.option(
    "--registry",
    metavar="FILE|URL",
    help="A Harbor registry.json (default: Harbor's own, fetched).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON list of {name, version, description, tasks}.",
)
def list_command(registry: str | None, as_json: bool) -> None:
    """List the datasets of a Harbor registry: name@version, task count, description.

    \b
    Examples:
      profiler datasets list
      profiler datasets list --registry my-registry.json
      profiler run profile.yaml --dataset terminal-bench@2.0 --registry my-registry.json
    """
    import json

    from ..config.datasets import DEFAULT_REGISTRY, read_registry

    try:
        datasets, _ = read_registry(registry or DEFAULT_REGISTRY)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    ordered = sorted(datasets, key=lambda d: (d.name, d.version))
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "name": d.name,
                        "version": d.version,
                        "description": d.description,
                        "tasks": len(d.tasks),
                    }
                    for d in ordered
                ],
                indent=2,
            )
        )
        return
    width = max((len(f"{d.name}@{d.version}") for d in ordered), default=7)
    click.echo(f"{'DATASET':<{width}}  TASKS  DESCRIPTION")
    for d in ordered:
        click.echo(
            f"{printable(d.name + '@' + d.version, one_line=True):<{width}}  {len(d.tasks):>5}  {printable(d.description, one_line=True)[:80]}"
        )

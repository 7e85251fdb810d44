"""``profiler init``: write the runnable demo profile into a folder."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigError

#: Files of the demo, relative to the package ``profiler_core.demo``.
DEMO_FILES = (
    "README.md",
    "profile.yaml",
    "scenarios/scenario-sets.json",
    "scenarios/add-retry-flag.json",
    "scenarios/bump-dependency.json",
    "scenarios/fix-parser-test.json",
    "scenarios/rename-config-key.json",
    "scenarios/todo-report.json",
)


def write_demo(target: Path, *, force: bool = False) -> list[Path]:
    """Copy the demo into ``target``; refuse to overwrite files unless ``force``."""
    from importlib import resources

    root = resources.files("profiler_core.demo")
    existing = [target / name for name in DEMO_FILES if (target / name).exists()]
    if existing and not force:
        raise ConfigError(f"{target}: already has {existing[0].relative_to(target)} (use --force to overwrite)")
    written = []
    for name in DEMO_FILES:
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(root.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
        written.append(path)
    return written


@click.command("init")
@click.argument("directory", default="profiler-demo", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite demo files that already exist.")
def init_command(directory: Path, force: bool) -> None:
    """Write a runnable demo profile (two modes, five scenarios) into DIRECTORY.

    \b
    Example:
      profiler init my-demo
      profiler run my-demo/profile.yaml
    """
    write_demo(directory, force=force)
    click.echo(f"Wrote the demo to {directory}/ ({len(DEMO_FILES)} files).")
    click.echo(f"Run it:   profiler run {directory / 'profile.yaml'}")
    click.echo(f"Read:     {directory / 'README.md'} (how to profile a real agent)")

"""``profiler agents``: where the real agent programs are found, and installing them into the user's cache."""

from __future__ import annotations

import os
from pathlib import Path

import click

#: program -> (provider id, the variable that names the program)
PROVIDERS = {"opencode": ("opencode", "OPENCODE_BIN"), "claude": ("claude-code", "CLAUDE_BIN"), "codex": ("codex", "CODEX_BIN")}


@click.group("agents")
def agents_group() -> None:
    """The agent programs the opencode, claude-code and codex providers run."""


@agents_group.command("list")
def list_command() -> None:
    """Show where each agent program is found (or that it is missing).

    \b
    Example:
      profiler agents list
    """
    import shutil

    from ..providers.agents import PACKAGES, find_installed, search_dirs

    for program, (provider, variable) in PROVIDERS.items():
        found = os.environ.get(variable) or shutil.which(program) or find_installed(program)
        where = found or f"missing (npm package {PACKAGES[program]}: `profiler agents install`)"
        click.echo(f"{program:<9} provider {provider:<12} {where}")
    click.echo("Searched after $..._BIN and PATH: " + ", ".join(str(d) for d in search_dirs()))


@agents_group.command("install")
@click.argument("programs", nargs=-1, metavar="[opencode|claude|codex]...")
@click.option(
    "--dir", "folder", type=click.Path(file_okay=False, path_type=Path), help="Install here [default: the user's agent cache]."
)
def install_command(programs: tuple[str, ...], folder: Path | None) -> None:
    """Install the agent programs from npm (pinned versions) where the providers find them.

    Needs Node.js and npm. Without PROGRAMS all three are installed.

    \b
    Examples:
      profiler agents install                 # opencode, claude and codex into ~/.cache/agent-profiler/agents
      profiler agents install codex
    """
    from ..providers.agents import PACKAGES, cache_dir, install, search_dirs

    chosen = programs or tuple(PACKAGES)
    target = folder or cache_dir()
    click.echo(f"Installing {', '.join(PACKAGES[p] for p in chosen if p in PACKAGES)} into {target} ...")
    bin_dir = install(chosen, target)
    for program in chosen:
        click.echo(f"  {program}: {bin_dir / program}")
    if bin_dir.resolve() not in {d.resolve() for d in search_dirs()}:
        click.echo(f"Not a folder the providers search: set PROFILER_AGENTS_DIR={folder} (or each provider's option `binary`).")

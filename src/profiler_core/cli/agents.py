"""``profiler agents``: the registry of agents, where their programs are found, and
installing them into the user's cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click


def _found(program: str, variable: str) -> str | None:
    """Where the providers would find ``program``: its variable, PATH, then the agent folders."""
    import shutil

    from ..providers.agents import find_installed

    return os.environ.get(variable) or shutil.which(program) or find_installed(program)


@click.group("agents")
def agents_group() -> None:
    """The agents the profiler knows (one registry) and their programs."""


def _harbor_agents(program: str) -> tuple[list[str], str]:
    """Harbor's agent names (asked of Harbor's own interpreter) and one line saying
    where they came from, or why there are none."""
    from ..providers.harbor_probe import find_harbor, probe

    install = find_harbor(program)
    if install is None:
        return [], (
            f"Harbor: not found ({program!r}; --harbor or $PROFILER_HARBOR "
            "names its program): its agents run through "
            "provider 'harbor' once it is installed in a Python >= 3.12 (bash .ci/install-harbor)"
        )
    answer = probe(install, "agents")
    names = answer.get("agents")
    if not isinstance(names, list) or "error" in answer:
        return (
            [],
            f"Harbor: {install.program}: {answer.get('error', 'no agents in its answer')}",
        )
    return [str(n) for n in names], (
        f"Harbor {answer.get('version')} ({install.program}): {len(names)} "
        "agents, run through provider 'harbor' (option agent)"
    )


def _record(row: object, found: str | None) -> dict[str, object]:
    """One JSON object of ``agents list --json``."""
    from ..config.agents import AgentSpec

    assert isinstance(row, AgentSpec)
    return {
        "name": row.name,
        "program": row.program,
        "package": row.npm_spec,
        "install": row.install_command,
        "provider": row.provider,
        "importer": row.importer or None,
        "acp": list(row.acp),
        "api": row.api,
        "endpoint": row.endpoint,
        "confine": row.confine,
        "binaryEnv": row.binary_env,
        "found": found,
        "harborAgent": None,  # set on Harbor's agents (below): the name its option agent takes
    }


@agents_group.command("list")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per agent, every key present.",
)
@click.option(
    "--harbor",
    "harbor",
    default="harbor",
    show_default=True,
    envvar="PROFILER_HARBOR",
    help="The harbor program whose agents to list too (a path, or a name on PATH) "
    "[env: PROFILER_HARBOR].",
)
def list_command(as_json: bool, harbor: str) -> None:
    """Show each agent of the registry: its program, provider, model API, and where the
    program is found; then Harbor's agents.

    Harbor's agents are what its own interpreter answers (Harbor's agent
    factory, as `harbor run -a` accepts them); they run through the `harbor`
    provider (`provider: {id: harbor, options: {agent: NAME}}`).

    \b
    Examples:
      profiler agents list
      profiler agents list --json
      profiler agents list --harbor .harbor-venv/bin/harbor
    """
    from ..config.agents import registry
    from ..providers.agents import search_dirs

    rows = registry().values()
    if as_json:
        for row in rows:
            click.echo(json.dumps(_record(row, _found(row.program, row.binary_env))))
        names, _ = _harbor_agents(harbor)
        for name in names:
            empty = dict.fromkeys(_record(next(iter(rows)), None))
            click.echo(
                json.dumps(
                    empty
                    | {
                        "name": f"harbor:{name}",
                        "program": "harbor",
                        "provider": "harbor",
                        "acp": [],
                        "harborAgent": name,
                    }
                )
            )
        return
    click.echo(f"{'agent':<16} {'program':<16} {'provider':<12} {'api':<17} where")
    for row in rows:
        found = _found(row.program, row.binary_env)
        where = (
            found
            or f"missing (npm package {row.npm_spec}: `profiler agents install {row.name}`)"
        )
        click.echo(
            f"{row.name:<16} {row.program:<16} {row.provider:<12} {row.api:<17} {where}"
        )
    click.echo(
        "Searched after $..._BIN and PATH: " + ", ".join(str(d) for d in search_dirs())
    )
    names, line = _harbor_agents(harbor)
    click.echo(line + (":" if names else ""))
    for start in range(0, len(names), 6):
        click.echo("  " + ", ".join(names[start : start + 6]))


@agents_group.command("install")
@click.argument("names", nargs=-1, metavar="[AGENT]...")
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Install here [default: the user's agent cache].",
)
def install_command(names: tuple[str, ...], folder: Path | None) -> None:
    """Install agents of the registry from npm (pinned versions) where the providers find them.

    Needs Node.js and npm. AGENT is a name of `profiler agents list` (or its
    program); without one, every agent is installed.

    \b
    Examples:
      profiler agents install                 # every agent into ~/.cache/agent-profiler/agents
      profiler agents install claude-code codex
    """
    from ..config.agents import registry
    from ..providers.agents import cache_dir, install, resolve, search_dirs

    rows = (
        resolve(names) if names else [row for row in registry().values() if row.package]
    )
    target = folder or cache_dir()
    click.echo(
        f"Installing {', '.join(row.npm_spec for row in rows)} into {target} ..."
    )
    bin_dir = install([row.name for row in rows], target)
    for row in rows:
        click.echo(f"  {row.name}: {bin_dir / row.program}")
    if bin_dir.resolve() not in {d.resolve() for d in search_dirs()}:
        click.echo(
            "Not a folder the providers search: set "
            f"PROFILER_AGENTS_DIR={folder} (or each provider's option `binary`)."
        )

"""``profiler init``: write the runnable demo profile, or a real agent's profile against
the fake model, into a folder."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigError

#: Files of the demo, relative to the package ``profiler_core.demo``.
DEMO_FILES = (
    "README.md",
    "profile.yaml",
    "stop.yaml",
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
        raise ConfigError(
            f"{target}: already has {existing[0].relative_to(target)} (use --force to overwrite)"
        )
    written = []
    for name in DEMO_FILES:
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            root.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8"
        )
        written.append(path)
    return written


def write_agent_profile(
    target: Path,
    agent: str,
    port: int,
    *,
    force: bool = False,
    example: str | None = None,
) -> list[Path]:
    """Write a profile of a real ``agent`` against ``profiler fake-model`` on ``port``
    into ``target``.

    ``example="tasks"``: the profile over the example Harbor tasks (demo/tasks_example.py).
    """
    from ..demo.agent import agent_files
    from ..demo.tasks_example import tasks_example_files

    files = (
        tasks_example_files(agent, port)
        if example == "tasks"
        else agent_files(agent, port)
    )
    existing = [name for name in files if (target / name).exists()]
    if existing and not force:
        raise ConfigError(
            f"{target}: already has {existing[0]} (use --force to overwrite)"
        )
    written = []
    for name, text in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if path.suffix == ".sh":
            path.chmod(
                0o755
            )  # as in examples/tasks (the verifier is run with bash either way)
        written.append(path)
    return written


@click.command("init")
@click.argument(
    "directory", required=False, type=click.Path(file_okay=False, path_type=Path)
)
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--agent",
    metavar="NAME",
    help="Write a profile of this real agent (a name of `profiler agents list`) "
    "against `profiler fake-model` instead of the simulated demo.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="With --agent: the fake model's port [default: 8765].",
)
@click.option(
    "--example",
    type=click.Choice(["tasks"]),
    help="With --agent: the example Harbor tasks, two modes and a script under "
    "which the agent passes some and fails others.",
)
def init_command(
    directory: Path | None,
    force: bool,
    agent: str | None,
    port: int | None,
    example: str | None,
) -> None:
    """Write a runnable profile into DIRECTORY: the simulated demo, or a real agent
    against a fake model.

    \b
    Examples:
      profiler init my-demo                # two modes, five scenarios, the built-in simulator
      profiler run my-demo/profile.yaml
      profiler init --agent codex my-agent # the real Codex CLI, no API key needed:
      profiler fake-model my-agent/fake-model.yaml &
      profiler run my-agent/profile.yaml
      profiler init --agent claude-code --example tasks first  # verified, on Harbor tasks
    """
    if agent is None:
        if port is not None:
            raise click.UsageError("--port goes with --agent (the fake model's port)")
        if example is not None:
            raise click.UsageError(
                "--example goes with --agent (e.g. profiler init --agent "
                "claude-code --example tasks)"
            )
        directory = directory or Path("profiler-demo")
        write_demo(directory, force=force)
        click.echo(f"Wrote the demo to {directory}/ ({len(DEMO_FILES)} files).")
        click.echo(f"Run it:   profiler run {directory / 'profile.yaml'}")
        click.echo(f"Read:     {directory / 'README.md'} (how to profile a real agent)")
        return
    from .fake_model import DEFAULT_PORT

    port = port or DEFAULT_PORT
    directory = directory or Path(f"profiler-{agent}")
    written = write_agent_profile(directory, agent, port, force=force, example=example)
    what = "profile over the example Harbor tasks" if example == "tasks" else "profile"
    click.echo(f"Wrote a {agent} {what} to {directory}/ ({len(written)} files).")
    click.echo(
        f"Start the model:  profiler fake-model {directory / 'fake-model.yaml'} "
        f"--port {port}   (another terminal)"
    )
    click.echo(f"Run it:           profiler run {directory / 'profile.yaml'}")
    click.echo(
        "The agent program: `profiler agents list` shows where it is found "
        "(`profiler agents install` if missing)."
    )

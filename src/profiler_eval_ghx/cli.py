"""``profiler eval``: run an eval config, check it, and manage its GitHub fixtures."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from profiler_core.cli import plugin_manager

from .settings import DEFAULT_MANIFEST

if TYPE_CHECKING:
    from profiler_core import Scenario

    from .settings import FixtureSettings


@click.group("eval")
def eval_group() -> None:
    """GitHub task evaluation: run eval configs and manage fixtures.

    \b
    Examples:
      profiler eval check examples/eval-ghx/eval.yaml
      profiler eval fixture seed --config examples/eval-ghx/eval.yaml
      profiler eval run examples/eval-ghx/eval.yaml --repetitions 3
      profiler eval fixture cleanup --all --repo my-org/eval-sandbox
    """


# -- run ------------------------------------------------------------------------------


def _run_command() -> click.Command:
    from profiler_core.cli.run import run_command

    return run_command


def _eval_run(profile: Path, **options) -> None:
    """Check the fixtures section, then hand over to ``profiler run``."""
    from profiler_core.config import load_profile

    from .settings import fixture_settings

    config = load_profile(profile, registry=plugin_manager().registry)
    fixture_settings(config.extensions, profile_path=str(profile))
    click.get_current_context().invoke(_run_command(), profile=profile, **options)


def _make_run() -> click.Command:
    base = _run_command()
    params: list[click.Parameter] = [
        click.Argument(
            ["profile"],
            metavar="CONFIG",
            type=click.Path(dir_okay=False, path_type=Path),
        )
    ]
    params += [p for p in base.params if p.name != "profile"]
    return click.Command(
        "run",
        params=params,
        callback=_eval_run,
        short_help="Run an eval config (a profile with extensions.fixtures).",
        help="""Run an eval config: a profile whose `extensions.fixtures` names the fixture
        repository and manifest. Every option of `profiler run` applies, --resume included.
        Fixtures are checked first (and seeded when `seed_if_missing` is on).

        \b
        Examples:
          profiler eval run examples/eval-ghx/eval.yaml
          profiler eval run eval.yaml --mode ghx --mode baseline --repetitions 5
          profiler eval run eval.yaml --resume run_20261122T051500Z_3f9a
        """,
    )


eval_group.add_command(_make_run())


# -- check ----------------------------------------------------------------------------


@eval_group.command("check")
@click.argument(
    "profile", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path)
)
def check_command(profile: Path) -> None:
    """Validate an eval config and its scenarios; exit status 1 on any problem.

    Everything `profiler validate` checks, plus: the fixtures section, a seeder
    for every required fixture, bindings naming required fixtures, and the
    manifest holding them.

    \b
    Example:
      profiler eval check examples/eval-ghx/eval.yaml
    """
    from profiler_core import ProfilerError
    from profiler_core.cli.run import validate_command
    from profiler_core.config import load_profile

    from .settings import fixture_settings

    click.get_current_context().invoke(
        validate_command, profile=profile
    )  # exits 1 itself on problems
    config = load_profile(profile, registry=plugin_manager().registry)
    problems: list[str] = []
    try:
        settings = fixture_settings(config.extensions, profile_path=str(profile))
    except ProfilerError as exc:
        problems += str(exc).splitlines()
        settings = None
    required = _required_fixtures(config.scenarios, problems)
    if required and settings is None and not problems:
        problems.append(
            f"{profile}: extensions.fixtures: required, scenarios need fixtures "
            f"({', '.join(sorted(required))})"
        )
    if settings is not None and required:
        if not settings.repo:
            problems.append(
                f"{profile}: extensions.fixtures.repo: required, the sandbox "
                "repository (owner/name) the fixtures live in"
            )
        problems += _manifest_problems(settings, required, profile)
    if problems:
        for line in problems:
            click.echo(f"Error: {line}", err=True)
        click.echo(f"{len(problems)} problem(s) found", err=True)
        sys.exit(1)
    click.echo(
        f"  fixtures:    {', '.join(sorted(required)) or 'none'}"
        + (f" (manifest {settings.manifest})" if settings else "")
    )


def _required_fixtures(scenarios: Iterable[Scenario], problems: list[str]) -> set[str]:
    """The fixtures the scenarios require; a fixture without a seeder, or a binding to
    one not required, is a problem."""
    from profiler_core import ProfilerError

    from .fixtures import seeder_for
    from .hooks import scenario_fixture

    required: set[str] = set()
    for scenario in scenarios:
        need = scenario_fixture(scenario)
        if need is None:
            continue
        required.update(need.requires)
        for name in need.requires:
            try:
                seeder_for(name)
            except ProfilerError as exc:
                problems.append(f"scenario {scenario.id}: {exc}")
        for var, target in need.bindings.items():
            head = str(target).split(".", 1)[0]
            if head not in need.requires:
                problems.append(
                    f"scenario {scenario.id}: fixture.bindings.{var}: "
                    f"{target!r} names fixture {head!r}, which is not in "
                    "fixture.requires"
                )
    return required


def _manifest_problems(
    settings: FixtureSettings, required: set[str], profile: Path
) -> list[str]:
    """What is wrong with the fixture manifest: missing, unreadable, or without a
    required fixture."""
    from profiler_core import ProfilerError

    from .fixtures import read_manifest

    if not settings.manifest.is_file():
        if settings.seed_if_missing:
            return []
        return [
            f"{settings.manifest}: fixture manifest not found (profiler eval "
            f"fixture seed --config {profile}, or set seed_if_missing)"
        ]
    try:
        manifest = read_manifest(settings.manifest)
    except ProfilerError as exc:
        return [str(exc)]
    missing = sorted(required - set(manifest.fixtures))
    if missing:
        return [
            f"{settings.manifest}: missing fixtures {', '.join(missing)} "
            f"(profiler eval fixture seed --config {profile})"
        ]
    return []


# -- fixture ---------------------------------------------------------------------------


@eval_group.group("fixture")
def fixture_group() -> None:
    """Seed, inspect, reset and clean up the GitHub fixtures of an eval.

    The token comes from GH_TOKEN (or GITHUB_TOKEN), the API from GITHUB_API_URL
    (default https://api.github.com). A reviewer identity for review threads:
    GHX_EVAL_APP_ID + GHX_EVAL_APP_PRIVATE_KEY[_PATH] (a GitHub App), or
    GHX_EVAL_REVIEWER_TOKEN. The sandbox repository every write goes to:
    --repo, else GHX_EVAL_REPO, else the config's extensions.fixtures.repo.
    """


def _targets(
    config: Path | None, repo: str | None, manifest: Path | None
) -> tuple[str | None, Path, list[str]]:
    """Repository, manifest path and required fixture names: flags win over the config."""
    names: list[str] = []
    settings = None
    if config is not None:
        from profiler_core.config import load_profile

        from .hooks import scenario_fixture
        from .settings import fixture_settings

        loaded = load_profile(config, registry=plugin_manager().registry)
        settings = fixture_settings(loaded.extensions, profile_path=str(config))
        for scenario in loaded.scenarios:
            if (need := scenario_fixture(scenario)) is not None:
                names += [n for n in need.requires if n not in names]
    return (
        repo or (settings.repo if settings else None),
        manifest or (settings.manifest if settings else Path(DEFAULT_MANIFEST)),
        names,
    )


def _client():
    from .github import GitHubClient

    return GitHubClient.from_env()


_config_option = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Eval config: repo, manifest and fixture names from it.",
)
_repo_option = click.option(
    "--repo",
    envvar="GHX_EVAL_REPO",
    help="Sandbox repository owner/name (default: $GHX_EVAL_REPO, else the config's "
    "extensions.fixtures.repo).",
)
_manifest_option = click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Manifest file (default: the config's, else {DEFAULT_MANIFEST}).",
)
_dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Print what would be done; change nothing."
)


@fixture_group.command("seed")
@_config_option
@_repo_option
@_manifest_option
@click.option(
    "--name",
    "names",
    multiple=True,
    help="Fixture to seed (repeatable; default: what the config's scenarios "
    "require, else all kinds).",
)
@_dry_run_option
def seed_command(config, repo, manifest, names, dry_run) -> None:
    """Create fixtures on GitHub and write the manifest.

    \b
    Examples:
      profiler eval fixture seed --config examples/eval-ghx/eval.yaml
      profiler eval fixture seed --repo my-org/sandbox --manifest fixtures/latest.json --name pr
    """
    import trio

    from profiler_core import ConfigError

    from .fixtures import SEEDERS, seed_fixtures, seeder_for, write_manifest
    from .github import second_identity

    repo, manifest, required = _targets(config, repo, manifest)
    wanted = list(names) or required or list(SEEDERS)
    if not repo:
        raise ConfigError(
            "no repository: pass --repo OWNER/NAME (or --config with extensions.fixtures.repo)"
        )
    for name in wanted:
        seeder_for(name)
    if dry_run:
        click.echo(f"would seed in {repo}: {', '.join(wanted)} -> {manifest}")
        return
    client = _client()

    async def seed():
        return await seed_fixtures(
            client, repo, wanted, reviewer=await second_identity(client, repo)
        )

    seeded = trio.run(seed)
    write_manifest(seeded, manifest)
    for name, resource in seeded.fixtures.items():
        click.echo(
            f"{name:<24} {resource.type} #{resource.number}"
            + (f"  branch {resource.branch}" if resource.branch else "")
        )
    click.echo(f"Manifest: {manifest} (seed {seeded.seed_id})")


@fixture_group.command("status")
@_config_option
@_manifest_option
def status_command(config, manifest) -> None:
    """Show whether every fixture of the manifest is still there as seeded (exit 1 if not).

    \b
    Example:
      profiler eval fixture status --manifest fixtures/latest.json
    """
    import trio

    from .fixtures import read_manifest, status

    _, manifest, _ = _targets(config, None, manifest)
    loaded = read_manifest(manifest)
    rows = trio.run(status, _client(), loaded)
    for row in rows:
        mark = "ok" if row.ok else "PROBLEM"
        click.echo(
            f"{row.name:<24} {row.type} #{row.number:<6} {mark}"
            + (f"  {row.problem}" if row.problem else "")
        )
    if not all(row.ok for row in rows):
        click.echo(
            "some fixtures changed: `profiler eval fixture reset` restores branches and states",
            err=True,
        )
        sys.exit(1)


@fixture_group.command("reset")
@_config_option
@_repo_option
@_manifest_option
@click.option(
    "--name",
    "names",
    multiple=True,
    help="Fixture to reset (repeatable; default: all).",
)
def reset_command(config, repo, manifest, names) -> None:
    """Put fixtures back as seeded: branches to their original commit, reopened, labels restored.

    Only in the sandbox repository you configure (--repo, $GHX_EVAL_REPO or the
    config's extensions.fixtures.repo; never the manifest's), only on ghx-eval/
    branches and only items carrying the ghx-eval-fixture label on GitHub:
    anything else is refused in one line before any write.

    \b
    Example:
      profiler eval fixture reset --repo my-org/sandbox --manifest fixtures/latest.json --name pr
    """
    import trio

    from .fixtures import read_manifest, reset_manifest

    repo, manifest, _ = _targets(config, repo, manifest)
    loaded = read_manifest(manifest)
    done = trio.run(
        lambda: reset_manifest(_client(), loaded, list(names) or None, repo=repo)
    )
    for line in done or ["nothing to change"]:
        click.echo(line)


@fixture_group.command("cleanup")
@_config_option
@_repo_option
@_manifest_option
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Close everything carrying the eval label in --repo (not only the manifest's).",
)
@_dry_run_option
def cleanup_command(config, repo, manifest, everything, dry_run) -> None:
    """Close the manifest's issues and pull requests and delete their branches.

    Only in the sandbox repository you configure (--repo, $GHX_EVAL_REPO or the
    config's extensions.fixtures.repo; never the manifest's), only items
    carrying the ghx-eval-fixture label on GitHub and only ghx-eval/ branches;
    anything else is refused in one line before any write.

    \b
    Examples:
      profiler eval fixture cleanup --config examples/eval-ghx/eval.yaml
      profiler eval fixture cleanup --all --repo my-org/eval-sandbox --dry-run
    """
    import trio

    from profiler_core import ConfigError

    from .fixtures import cleanup, cleanup_all, read_manifest

    repo, manifest, _ = _targets(config, repo, manifest)
    if everything:
        if not repo:
            raise ConfigError(
                "--all needs --repo OWNER/NAME (or --config with extensions.fixtures.repo)"
            )
        actions = trio.run(lambda: cleanup_all(_client(), repo, dry_run=dry_run))
    else:
        loaded = read_manifest(manifest)
        actions = trio.run(
            lambda: cleanup(_client(), loaded, dry_run=dry_run, repo=repo)
        )
    prefix = "would " if dry_run else ""
    for action in actions or ["nothing to clean up"]:
        click.echo(prefix + action)

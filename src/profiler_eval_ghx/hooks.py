"""Lifecycle hooks of the eval: fixtures checked before the run, reset or seeded per
mode and iteration.

They act only on profiles with ``extensions.fixtures`` and on scenarios with a
``fixture`` section (``requires``, ``bindings``, ``reseedPerIteration``,
``seedPerIteration``); every other profile runs as if the plugin were absent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .fixtures import (
    FixtureError,
    Sandbox,
    cleanup,
    read_manifest,
    reset_manifest,
    seed_fixtures,
    write_manifest,
)
from .github import GitHubClient, second_identity
from .manifest import FixtureManifest
from .settings import FixtureSettings, fixture_settings

log = logging.getLogger("agent_profiler.eval_ghx")

Binder = Callable[[Any, FixtureManifest, Mapping[str, Any]], Any]


@attrs.frozen(kw_only=True)
class ScenarioFixture:
    """What a scenario asks of fixtures (its ``fixture`` section)."""

    requires: tuple[str, ...] = ()
    bindings: dict[str, str] = attrs.field(factory=dict)
    reseed_per_iteration: bool = False
    seed_per_iteration: bool = False


def _field(source: Any, snake: str, camel: str, default: Any) -> Any:
    if isinstance(source, Mapping):
        return source.get(camel, source.get(snake, default))
    return getattr(source, snake, default)


def scenario_fixture(scenario: Any) -> ScenarioFixture | None:
    """The scenario's fixture needs, from an eval scenario's ``fixture`` or
    ``extensions["fixture"]``."""
    raw = getattr(scenario, "fixture", None)
    if raw is None:
        raw = (getattr(scenario, "extensions", None) or {}).get("fixture")
    if raw is None:
        return None
    return ScenarioFixture(
        requires=tuple(_field(raw, "requires", "requires", ()) or ()),
        bindings=dict(_field(raw, "bindings", "bindings", {}) or {}),
        reseed_per_iteration=bool(
            _field(raw, "reseed_per_iteration", "reseedPerIteration", False)
        ),
        seed_per_iteration=bool(
            _field(raw, "seed_per_iteration", "seedPerIteration", False)
        ),
    )


def _default_binder(
    scenario: Any, manifest: FixtureManifest, variables: Mapping[str, Any]
) -> Any:
    # The scenario module's binding rules (`{{var}}`, raw values, `{{owner}}`/`{{repo_name}}`).
    try:
        from .bindings import bind_scenario  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:
        raise FixtureError(
            f"scenario {scenario.id}: cannot fill its bindings: {exc}"
        ) from None
    return bind_scenario(scenario, manifest, variables)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _no_fixtures_section(needs: dict[str, ScenarioFixture]) -> None:
    """Scenarios that require fixtures need the profile's ``extensions.fixtures``."""
    users = sorted(sid for sid, n in needs.items() if n.requires)
    if users:
        users_text = ", ".join(users)
        raise FixtureError(
            f"scenario(s) {users_text} require fixtures but the profile has no "
            "extensions.fixtures section (repo, manifest)"
        )


def _no_repo(ctx: Any) -> None:
    """The fixtures' repository is required once anything is reset, seeded or bound."""
    # The fixtures are reset, seeded, cleaned up and bound into prompts there: the user
    # names it, never the manifest.
    profile_path = getattr(ctx, "profile_path", None)
    where = f"{profile_path}: " if profile_path else ""
    raise FixtureError(
        f"{where}extensions.fixtures.repo: required, the sandbox repository "
        "(owner/name) the eval's fixtures live in; "
        "a manifest never chooses where the eval writes"
    )


def _missing(manifest: FixtureManifest | None, required: list[str]) -> list[str]:
    """The required fixtures the manifest lacks (all of them without a manifest)."""
    if manifest is None:
        return list(required)
    return [name for name in required if name not in manifest.fixtures]


class EvalHooks:
    """State of the eval hooks across one process: settings, manifest and per-iteration
    seeds of each run."""

    def __init__(
        self,
        *,
        binder: Binder | None = None,
        client_factory: Callable[[], GitHubClient] | None = None,
    ) -> None:
        self.binder = binder or _default_binder
        self.client_factory = client_factory or GitHubClient.from_env
        self._runs: dict[str, dict[str, Any]] = {}

    # -- helpers -----------------------------------------------------------------
    def _state(self, run: Any) -> dict[str, Any] | None:
        return self._runs.get(run.run_id) if run is not None else None

    @staticmethod
    def _needs(scenarios: Any) -> dict[str, ScenarioFixture]:
        return {s.id: f for s in scenarios if (f := scenario_fixture(s)) is not None}

    # -- hooks ---------------------------------------------------------------------
    async def before_run(self, ctx: Any) -> None:
        """Check that every fixture a scenario requires is in the manifest (seeding it
        first if asked)."""
        settings = fixture_settings(
            ctx.extensions or {}, profile_path=getattr(ctx, "profile_path", None)
        )
        needs = self._needs(ctx.scenarios)
        if settings is None:
            _no_fixtures_section(needs)
            return
        required = sorted({name for n in needs.values() for name in n.requires})
        if not settings.repo and (needs or settings.reseed_between_modes):
            _no_repo(ctx)
        manifest = None
        if settings.manifest.is_file():
            manifest = read_manifest(settings.manifest)
        missing = _missing(manifest, required)
        if missing and settings.seed_if_missing:
            manifest = await self._seed(settings, manifest, missing)
            missing = []
        if missing:
            raise FixtureError(
                f"missing fixtures: {', '.join(missing)} (not in {settings.manifest}); "
                f"seed them: profiler eval fixture seed --repo {settings.repo} "
                f"--manifest {settings.manifest}"
                + "".join(f" --name {name}" for name in missing)
            )
        sandbox = None
        if manifest is not None and settings.repo:
            sandbox = Sandbox.configured(settings.repo)
            # Before any session: a manifest never chooses where the eval writes.
            sandbox.check(manifest)
        self._runs[ctx.run_id] = {
            "settings": settings,
            "manifest": manifest,
            "seeded": {},
            "sandbox": sandbox,
        }

    async def _seed(
        self,
        settings: FixtureSettings,
        manifest: FixtureManifest | None,
        missing: list[str],
    ) -> FixtureManifest:
        """Seed the missing fixtures and add them to the manifest file (``seed_if_missing``)."""
        if not settings.repo:  # unreachable (checked before); narrows the type
            raise FixtureError(
                "extensions.fixtures.seed_if_missing needs extensions.fixtures.repo"
            )
        client = self.client_factory()
        reviewer = await second_identity(client, settings.repo)
        seeded = await seed_fixtures(client, settings.repo, missing, reviewer=reviewer)
        if manifest is not None:
            fixtures = {**manifest.fixtures, **seeded.fixtures}
            seeded = attrs.evolve(manifest, fixtures=fixtures)
        write_manifest(seeded, settings.manifest)
        log.info("seeded fixtures %s into %s", ", ".join(missing), settings.manifest)
        return seeded

    async def before_mode(self, mode: str, run: Any) -> None:
        """Reset every fixture of the manifest when ``reseed_between_modes`` is on."""
        state = self._state(run)
        if (
            not state
            or not state["settings"].reseed_between_modes
            or state["manifest"] is None
        ):
            return
        done = await reset_manifest(
            self.client_factory(), state["manifest"], repo=state["sandbox"].repo
        )
        log.info(
            "mode %s: fixtures reset (%s)", mode, "; ".join(done) or "nothing to change"
        )

    async def before_scenario(self, ctx: Any) -> Any:
        """Reset (``reseedPerIteration``) or seed fresh fixtures (``seedPerIteration``);
        return the bound scenario."""
        state = self._state(ctx.run)
        need = scenario_fixture(ctx.scenario)
        if not state or need is None or state["manifest"] is None:
            return None
        manifest: FixtureManifest = state["manifest"]
        if need.seed_per_iteration:
            client = self.client_factory()
            seed_id = _safe(
                f"{ctx.run.run_id}-{ctx.model}-{ctx.mode}-{ctx.scenario.id}-{ctx.iteration}"
            )
            repo = state["sandbox"].repo
            fresh = await seed_fixtures(
                client,
                repo,
                need.requires,
                seed_id=seed_id,
                reviewer=await second_identity(client, repo),
            )
            state["seeded"][(ctx.model, ctx.mode, ctx.scenario.id, ctx.iteration)] = (
                fresh
            )
            manifest = attrs.evolve(
                manifest, fixtures={**manifest.fixtures, **fresh.fixtures}
            )
        elif need.reseed_per_iteration:
            await reset_manifest(
                self.client_factory(),
                manifest,
                need.requires,
                repo=state["sandbox"].repo,
            )
        if not need.bindings and not need.seed_per_iteration:
            return None
        return self.binder(
            ctx.scenario,
            manifest,
            {"run_id": ctx.run.run_id, "iteration": ctx.iteration, "mode": ctx.mode},
        )

    async def after_scenario(self, ctx: Any) -> None:
        """Close the iteration's own seeded fixtures and delete their branches (best
        effort; failures are raised once, recorded)."""
        state = self._state(ctx.run)
        if not state:
            return
        fresh = state["seeded"].pop(
            (ctx.model, ctx.mode, ctx.scenario.id, ctx.iteration), None
        )
        if fresh is None:
            return
        client = self.client_factory()
        problems = []
        for name in fresh.fixtures:
            try:
                await cleanup(client, fresh, names=[name], repo=state["sandbox"].repo)
            except FixtureError as exc:
                problems.append(str(exc))
        if problems:
            raise FixtureError("; ".join(problems))

    def after_run(self, ctx: Any) -> None:
        """Forget the run's state."""
        self._runs.pop(ctx.run_id, None)


#: the instance the plugin module's hookimpls delegate to
HOOKS = EvalHooks()

__all__ = [
    "HOOKS",
    "EvalHooks",
    "FixtureSettings",
    "ScenarioFixture",
    "scenario_fixture",
]

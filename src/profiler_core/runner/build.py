"""From a loaded profile to ``RunOptions``: build every component through the registry."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ..config.loader import ComponentSpec, ProfileErrors, ProfilerConfig
from ..errors import ProfilerError
from ..plugins.contracts import optional_method
from ..plugins.manager import ComponentInfo, PluginManager
from ..sandbox import SandboxSettings
from ..util.signature import accepts_keyword
from .options import RaySettings, RunOptions


def build_components(
    config: ProfilerConfig, manager: PluginManager
) -> tuple[dict[str, Any], list[str]]:
    """Instantiate provider, resolver, scorer, collectors, analyzers and judge; collect
    every problem.

    Each is built through ``Registry.create``, which checks it against its contract,
    so a component missing a method is a problem here (``profiler validate``), not mid-run.
    """
    registry = manager.registry
    problems: list[str] = []
    built: dict[str, Any] = {}
    source = config.path or "<profile>"

    def create(
        contract: str,
        spec: ComponentSpec,
        key: str,
        extra: dict[str, Any] | None = None,
    ) -> Any:
        try:
            return registry.create(contract, spec.id, {**spec.options, **(extra or {})})
        except ProfilerError as exc:
            problems.append(f"{source}: {key}: {exc}")
            return None

    def wiring(contract: str, component_id: str) -> dict[str, Any]:
        # A factory that accepts `registry` gets this one: the composite scorer builds its
        # sub-scorers from it, the transcripts provider finds plugins' import formats in it.
        # Only a factory naming the parameter: one taking **options must not receive it
        # as an option.
        info = registry.find(contract, component_id)
        if _takes(info, "registry"):
            return {"registry": registry}
        return {}

    built["provider"] = create(
        "providers",
        config.provider,
        "provider.id",
        wiring("providers", config.provider.id),
    )
    built["mode_resolver"] = create(
        "mode_resolvers", config.mode_resolver, "mode_resolver.id"
    )
    judge = None
    if config.judge is not None:
        judge = create("judge_providers", config.judge, "judge.id")
    built["judge"] = judge
    scorer_extra = wiring("scorers", config.scorer.id)
    info = registry.find("scorers", config.scorer.id)
    if (
        info is not None
        and judge is not None
        and accepts_keyword(info.factory, "judge")
    ):
        scorer_extra["judge"] = judge
    built["scorer"] = create("scorers", config.scorer, "scorer.id", scorer_extra)
    collector_specs: Sequence[ComponentSpec] | None = config.collectors
    if collector_specs is None:  # none named: every installed collector
        collector_specs = [ComponentSpec(id=cid) for cid in registry.ids("collectors")]
    # `extensions.prices` is the profile-wide price override: a collector whose factory takes
    # `prices` (core's `cost` collector, or a plugin's) gets it unless its own options set one.
    prices = config.extensions.get("prices")

    def collector_extra(spec: ComponentSpec) -> dict[str, Any] | None:
        if not prices or "prices" in spec.options:
            return None
        info = registry.find("collectors", spec.id)
        return {"prices": prices} if _takes(info, "prices") else None

    built["collectors"] = [
        create("collectors", spec, f"collectors[{i}]", collector_extra(spec))
        for i, spec in enumerate(collector_specs)
    ]
    built["analyzers"], analyzer_problems = build_analyzers(config, registry)
    problems.extend(analyzer_problems)
    problems.extend(check_scenarios(built["scorer"], config.scenarios))
    # The provider too (the oracle needs each scenario's reference solution): refused
    # here, not at the first session.
    check_all = optional_method(built["provider"], "check_scenarios")
    if check_all is not None:
        try:
            check_all(config.scenarios)
        except ProfilerError as exc:
            problems.append(f"{source}: provider {config.provider.id}: {exc}")
    return built, problems


def build_analyzers(
    config: ProfilerConfig, registry: Any
) -> tuple[list[Any], list[str]]:
    """The profile's analyzers, in its order (every installed one when it names none);
    one problem line per failure.

    On its own so an analysis worker (``analysis_pool``) builds exactly these and nothing else.
    """
    source = config.path or "<profile>"
    problems: list[str] = []

    def create(spec: ComponentSpec, key: str) -> Any:
        try:
            return registry.create("analyzers", spec.id, dict(spec.options))
        except ProfilerError as exc:
            problems.append(f"{source}: {key}: {exc}")
            return None

    if config.analyzers is None:
        analyzers = [
            create(ComponentSpec(id=aid), "analyzers")
            for aid in registry.ids("analyzers")
        ]
    else:
        analyzers = [
            create(spec, f"analyzers[{i}]") for i, spec in enumerate(config.analyzers)
        ]
    return analyzers, problems


def _takes(info: ComponentInfo | None, name: str) -> bool:
    """Whether the component's factory names the parameter (one taking ``**options``
    must not get it as an option)."""
    if info is None:
        return False
    try:
        return name in inspect.signature(info.factory).parameters
    except (
        TypeError,
        ValueError,
        ProfilerError,
    ):  # a factory that cannot load is reported when it is built
        return False


def check_scenarios(scorer: Any, scenarios: Any) -> list[str]:
    """Let the scorer reject malformed scenario settings (e.g. checks) before any session runs."""
    check = optional_method(scorer, "check_scenario")
    if check is None:
        return []
    problems = []
    for scenario in scenarios:
        try:
            check(scenario)
        except ProfilerError as exc:
            problems.append(str(exc))
    return problems


def mode_problems(
    config: ProfilerConfig, manager: PluginManager, resolver: Any
) -> list[str]:
    """Resolve every mode and build the provider with each mode's
    ``provider_overrides``, as the run will.

    One problem line per failure. A resolver whose ``resolve`` is synchronous
    (core's ``config``) is asked without an event loop: ``profiler validate``
    then never imports trio (start-up, issue 30).
    """
    resolved = _resolve_now(config, resolver)
    if resolved is None:
        import trio

        resolved = trio.run(_resolve_async, config, resolver)
    return _unresolved(config, resolved) + _override_problems(config, manager, resolved)


async def resolve_all_modes(config: ProfilerConfig, resolver: Any) -> list[str]:
    """Resolve every mode of the profile; return one problem line per failure."""
    return _unresolved(config, await _resolve_async(config, resolver))


def _unresolved(config: ProfilerConfig, resolved: dict[str, Any]) -> list[str]:
    """One problem line per mode that failed to resolve."""
    return [
        f"{config.path}: modes: {outcome}"
        for outcome in resolved.values()
        if isinstance(outcome, Exception)
    ]


def _resolve_now(config: ProfilerConfig, resolver: Any) -> dict[str, Any] | None:
    """mode -> its ModeConfig or the exception resolving it; None when the resolver
    needs an event loop."""
    if inspect.iscoroutinefunction(getattr(resolver, "resolve", None)):
        return None
    resolved: dict[str, Any] = {}
    for mode in config.modes:
        try:
            outcome = resolver.resolve(mode)
        except Exception as exc:  # noqa: BLE001 - a problem line, as when run
            outcome = exc
        if inspect.isawaitable(outcome):
            # A sync resolve that returns awaitables: every mode is asked again under trio, the ones
            # before this too (a resolver is expected to answer the same for the same mode).
            getattr(
                outcome, "close", lambda: None
            )()  # a coroutine never awaited: no warning
            return None
        resolved[mode] = outcome
    return resolved


async def _resolve_async(config: ProfilerConfig, resolver: Any) -> dict[str, Any]:
    from ..util.asyncs import await_me_maybe

    resolved: dict[str, Any] = {}
    for mode in config.modes:
        try:
            resolved[mode] = await await_me_maybe(resolver.resolve(mode))
        except Exception as exc:  # noqa: BLE001 - a problem line, as when run
            resolved[mode] = exc
    return resolved


def _override_problems(
    config: ProfilerConfig, manager: PluginManager, resolved: dict[str, Any]
) -> list[str]:
    registry, spec = manager.registry, config.provider
    info = registry.find("providers", spec.id)
    if info is None:
        return []  # reported by build_components
    wiring = {"registry": registry} if _takes(info, "registry") else {}
    problems = []
    for mode, outcome in resolved.items():
        overrides = (
            None
            if isinstance(outcome, Exception)
            else getattr(outcome, "provider_overrides", None)
        )
        if not overrides:
            continue
        try:
            registry.create(
                "providers", spec.id, {**spec.options, **overrides, **wiring}
            )
        except ProfilerError as exc:
            problems.append(f"{config.path}: modes.{mode}.provider_overrides: {exc}")
    return problems


def options_from_config(
    config: ProfilerConfig, manager: PluginManager, **extra: Any
) -> RunOptions:
    """Build ``RunOptions`` from a profile; raises ``ProfileErrors`` listing every problem."""
    built, problems = build_components(config, manager)
    if problems:
        raise ProfileErrors(problems)
    fields: dict[str, Any] = dict(
        provider=built["provider"],
        scorer=built["scorer"],
        scenarios=config.scenarios,
        mode_resolver=built["mode_resolver"],
        mode_names=config.modes,
        models=config.models,
        collectors=built["collectors"],
        analyzers=built["analyzers"],
        repetitions=config.execution.repetitions,
        warmup=config.execution.warmup,
        timeout_default_ms=config.execution.timeout_default_ms,
        # The loader wrote the profile's default into every scenario without its own
        # allowedRetries, so an explicit `allowedRetries: 0` keeps meaning "never retry".
        allowed_retries=0,
        concurrency=config.execution.concurrency,
        max_concurrency=config.execution.max_concurrency,
        order=config.execution.order,
        max_cost_usd=config.execution.max_cost_usd,
        max_tokens=config.execution.max_tokens,
        max_duration_s=config.execution.max_duration_s,
        order_seed=config.execution.seed,
        provider_factory=_provider_factory(config, manager),
        session_export=config.output.session_export,
        trace_format=config.output.trace_format,
        keep_workspaces=config.output.keep_workspaces,
        sandbox=SandboxSettings.from_execution(config.execution),
        stop=_stop_rule(config),
        fail_fast=config.execution.fail_fast,
        results_dir=config.output.results_dir,
        reports_dir=config.output.reports_dir,
        provider_options=dict(config.provider.options),
        provider_port=config.provider_port,
        plugin_manager=manager,
        profile_hash=config.profile_hash(),
        profile_path=config.path,
        extensions=dict(config.extensions),
        overrides=dict(config.overrides),
        judge=built["judge"],
        executor=config.execution.executor,
        ray=_ray_settings(config.execution.ray),
        analysis_workers=config.execution.analysis_workers,
        profile=config,
    )
    fields.update(extra)  # the caller's values win (run id, hooks, resume...)
    return RunOptions(**fields)


def _ray_settings(section: Any) -> RaySettings:
    return RaySettings(
        address=section.address,
        num_cpus_per_cell=section.num_cpus_per_cell,
        resources=dict(section.resources),
        runtime_env=dict(section.runtime_env),
    )


def _provider_factory(config: ProfilerConfig, manager: PluginManager) -> Any:
    """A maker of fresh provider instances for the profile's provider (one per model and mode)."""
    registry, spec = manager.registry, config.provider
    return lambda: registry.create("providers", spec.id, dict(spec.options))


def _stop_rule(config: ProfilerConfig) -> Any:
    """``execution.stop`` as a rule, or None; the rule's module (numpy) is imported only
    when there is one."""
    if config.execution.stop is None:
        return None
    from .stopping import StopRule

    return StopRule.for_config(config)

"""Profile YAML -> a frozen ``ProfilerConfig`` (the keys are in docs/profiles.md).

Every problem is reported as ``<file>: <key path>: <what was expected>``; the
loader collects all of them so ``profiler validate`` can print every one.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError
from ..model import Scenario
from ..model.record import Record
from ..storage.datafile import read_data_file
from ..storage.serde import json_kind, unstructure
from .problems import FAILED, Problems, ProfileErrors, did_you_mean, structure_section
from .scenarios import resolve_path, sandbox_needed, scenarios_section
from .schema import (
    DEFAULT_MODEL,
    REQUIRED_HINTS,
    ComponentSpec,
    Count,
    ExecutionConfig,
    ModeMapping,
    ModeNames,
    OutputConfig,
    PositiveCount,
    Profile,
    ProviderSection,
)
from .settings import ENVIRONMENT_SETTINGS, gather_settings

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.manager import Registry

#: ``execution`` keys of the sandbox and their defaults (left out of ``profile_hash``
#: while unchanged)
_SANDBOX_DEFAULTS: dict[str, Any] = {
    "sandbox": "none",
    "network": None,
    "sandbox_image": None,
    "allow_hosts": (),
    "hide_paths": (),
    "expose_paths": (),
    "wire": True,
}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProfilerConfig(Record):
    """A loaded, validated profile with CLI overrides applied."""

    path: str | None
    modes: tuple[str, ...]
    #: the ``modes:`` mapping when the profile spells modes out (config resolver)
    mode_specs: dict[str, Any] | None
    models: tuple[str, ...]
    scenarios: tuple[Scenario, ...]
    scenarios_path: str | None
    scenario_set: str | None
    provider: ComponentSpec
    provider_model: str
    provider_port: int = 0
    mode_resolver: ComponentSpec
    scorer: ComponentSpec
    collectors: tuple[ComponentSpec, ...] | None  # None = all installed
    analyzers: tuple[ComponentSpec, ...] | None  # None = all installed
    judge: ComponentSpec | None = None
    execution: ExecutionConfig = attrs.field(factory=ExecutionConfig)
    output: OutputConfig = attrs.field(factory=OutputConfig)
    extensions: dict[str, Any] = attrs.field(factory=dict)
    overrides: dict[str, Any] = attrs.field(factory=dict)
    #: scenario folders left out of the dataset, one line each (a Harbor task that is
    #: not valid or not supported)
    skipped: tuple[str, ...] = ()

    def profile_hash(self) -> str:
        """A hash of everything that changes what a cell means (not concurrency or paths)."""
        data = {
            "modes": list(self.modes),
            "modeSpecs": self.mode_specs,
            "models": list(self.models),
            "scenarios": [unstructure(s) for s in self.scenarios],
            "provider": attrs.asdict(self.provider),
            "providerModel": self.provider_model,
            "modeResolver": attrs.asdict(self.mode_resolver),
            "scorer": attrs.asdict(self.scorer),
            "collectors": None
            if self.collectors is None
            else [attrs.asdict(c) for c in self.collectors],
            "analyzers": None
            if self.analyzers is None
            else [attrs.asdict(a) for a in self.analyzers],
            "judge": None if self.judge is None else attrs.asdict(self.judge),
            "execution": {
                # How cells are scheduled does not change what they mean: a resume may change it.
                k: v
                for k, v in attrs.asdict(self.execution).items()
                if k
                not in (
                    "concurrency",
                    "max_concurrency",
                    "order",
                    "seed",
                    "max_cost_usd",
                    "max_tokens",
                    "max_duration_s",
                    "executor",
                    "ray",
                    "analysis_workers",
                    "fail_fast",
                )
                # The sandbox keys count once set: a profile without them keeps the hash
                # it had before they existed.
                and not (k in _SANDBOX_DEFAULTS and v == _SANDBOX_DEFAULTS[k])
            },
            "extensions": self.extensions,
        }
        canonical = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def results_dir(self) -> Path:
        """Absolute results directory."""
        return Path(self.output.results_dir)

    @property
    def reports_dir(self) -> Path:
        """Absolute reports directory."""
        return Path(self.output.reports_dir)


def _sections(data: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    """Each top-level key of ``Profile`` structured on its own (so one bad section hides
    no other)."""
    fields = attrs.fields_dict(Profile)
    types = typing.get_type_hints(Profile, include_extras=True)
    for key in data:
        if key not in fields:
            problems.unknown_key((), key, tuple(fields))
    sections: dict[str, Any] = {}
    for name, field in fields.items():
        if name not in data:
            if field.default is attrs.NOTHING:
                hint = REQUIRED_HINTS.get((name,))
                problems.add(name, f"required ({hint})" if hint else "required")
                sections[name] = FAILED
            else:
                default: Any = field.default
                # attrs types Factory as a function; at run time it is the class of the default
                factory_type: Any = attrs.Factory
                sections[name] = (
                    default.factory() if isinstance(default, factory_type) else default
                )
        elif name == "modes":
            sections[name] = _modes(data[name], problems)
        else:
            sections[name] = structure_section(
                data[name], types[name], (name,), problems
            )
    return sections


def _check_stop(
    execution: ExecutionConfig,
    raw: Any,
    overrides: Mapping[str, Any],
    problems: Problems,
) -> ExecutionConfig:
    """``execution.stop`` against the rest of ``execution``; the matrix then has
    ``max_repetitions`` rounds."""
    stop = execution.stop
    assert stop is not None
    if isinstance(raw, dict) and "repetitions" in raw:
        problems.add(
            "execution.stop",
            "cannot be used with execution.repetitions (the stop rule decides the "
            "repetitions; remove one of them)",
        )
    if "repetitions" in overrides:
        problems.add(
            "--repetitions",
            "cannot be used with execution.stop (set execution.stop.max_repetitions instead)",
        )
    if stop.min_repetitions > stop.max_repetitions:
        problems.add(
            "execution.stop.min_repetitions",
            f"expected at most max_repetitions ({stop.max_repetitions}), got "
            f"{stop.min_repetitions}",
        )
    for metric in stop.margins:
        kind = stop.margin(metric)[1]
        if metric == "success" and kind == "relative":
            problems.add(
                "execution.stop.margins.success",
                "a success margin is in percentage points: write it as 5pp (or 0.05)",
            )
        elif metric != "success" and kind == "points":
            problems.add(
                f"execution.stop.margins.{metric}",
                "percentage points (pp) are for success; write a percentage (5%) or a number",
            )
    return attrs.evolve(execution, repetitions=stop.max_repetitions)


def _check_stop_modes(stop: Any, modes: tuple[str, ...], problems: Problems) -> None:
    """A stop rule compares modes: it needs two, and its baseline must be one of them."""
    if len(modes) < 2:
        problems.add(
            "execution.stop",
            f"needs at least two modes to compare (the run has {len(modes)})",
        )
    elif stop.baseline is not None and stop.baseline not in modes:
        problems.add(
            "execution.stop.baseline",
            f"unknown mode {stop.baseline!r} (modes: {', '.join(modes)})",
        )


def _models(
    specs: Any, provider_model: str, problems: Problems
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The model ids to run (default: the provider's model) and the labels reports show for them."""
    if not specs:
        return (provider_model,), {}
    ids = tuple(dict.fromkeys(spec.id for spec in specs))
    labels = {spec.id: spec.label for spec in specs if spec.label is not None}
    shown: dict[str, str] = {}
    for index, spec in enumerate(specs):
        name = labels.get(spec.id, spec.id)
        if shown.get(name, spec.id) != spec.id:
            problems.add(
                f"models[{index}]",
                f"{name!r} already names model {shown[name]!r}; a label must name one model",
            )
        shown[name] = spec.id
    return ids, labels


def _modes(value: Any, problems: Problems) -> Any:
    """``modes:`` is a list of names or a mapping of name -> settings; which one decides
    the type."""
    if isinstance(value, dict):
        if not value:
            problems.add("modes", "expected at least one mode")
            return FAILED
        if structure_section(value, ModeMapping, ("modes",), problems) is FAILED:
            return FAILED
        # The raw settings (YAML keys) are what the `config` resolver reads and the
        # profile hash covers.
        return {str(name): spec or {} for name, spec in value.items()}
    if isinstance(value, list):
        names = structure_section(value, ModeNames, ("modes",), problems)
        return FAILED if names is FAILED else tuple(dict.fromkeys(names))
    problems.add(
        "modes",
        f"expected a list of mode names or a mapping, got {json_kind(value)} {value!r}"[
            :200
        ],
    )
    return FAILED


def load_profile(
    path: str | os.PathLike[str],
    overrides: Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
) -> ProfilerConfig:
    """Load and validate a profile; CLI ``overrides`` win over the environment, which
    wins over YAML and defaults.

    Overrides: ``modes``, ``models``, ``scenario_ids``, ``scenario_set``,
    ``repetitions``, ``retries``, ``skip_warmup``, ``concurrency``, ``provider`` (an id
    replacing ``provider``), ``settings`` (``--set`` keys and values) and
    ``environment`` (the environment names to apply instead of the process's: a resumed
    run's recorded ones). ``registry`` is where a ``scenarios.format`` is looked up
    (default: the process's installed plugins).
    """
    return profile_from_data(path, read_profile(path), overrides, registry=registry)


def read_profile(path: str | os.PathLike[str]) -> Any:
    """The profile file's data as read (one line for a missing file, bad YAML, deep nesting,
    huge integers, NUL); :func:`profile_from_data` validates it."""
    profile_path = Path(path)
    if not profile_path.is_file():
        raise ConfigError(f"{profile_path}: profile not found")
    return read_data_file(profile_path)


def profile_from_data(
    path: str | os.PathLike[str],
    data: Any,
    overrides: Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
) -> ProfilerConfig:
    """The profile read from ``path`` as ``data``, validated with ``overrides`` applied
    (:func:`load_profile` without reading the file again: a resume applies its recorded flags)."""
    profile_path = Path(path)
    data = copy.deepcopy(data)  # the caller may apply other overrides to the same data
    if data is None or data == {}:
        raise ConfigError(
            f"{profile_path}: the profile is empty (it needs at least `modes` and "
            f"`scenarios`; `profiler init` writes an example)"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"{profile_path}: expected a mapping at the top level, got {json_kind(data)}"
        )
    overrides = dict(overrides or {})
    environ = overrides.get("environment")
    if environ is None:
        environ = {
            name: os.environ[name]
            for name in ENVIRONMENT_SETTINGS
            if os.environ.get(name, "").strip()
        }
    laid = gather_settings(
        data, settings=overrides.get("settings") or {}, environ=environ
    )
    if laid.modes and not overrides.get("modes"):
        overrides["modes"] = list(laid.modes)
    if environ:
        overrides["environment"] = dict(
            environ
        )  # recorded (manifest), so a resume or a worker applies the same
    try:
        return parse_profile(
            laid.data,
            base_dir=profile_path.parent.resolve(),
            source=str(profile_path),
            overrides=overrides,
            registry=registry,
        )
    except ProfileErrors as exc:
        raise ProfileErrors(
            [
                _with_origin(line, str(profile_path), laid.origins)
                for line in exc.problems
            ]
        ) from None


def _with_origin(problem: str, source: str, origins: Mapping[str, str]) -> str:
    """A problem line about a key the environment or ``--set`` gave, saying so."""
    head, _, _ = problem.removeprefix(f"{source}: ").partition(": ")
    key = head.strip("`")
    related = [
        k
        for k in origins
        if key == k
        or key.startswith((f"{k}.", f"{k}["))
        or k.startswith((f"{key}.", f"{key}["))
    ]
    if not related:
        return problem
    return f"{problem} (from {origins[max(related, key=len)]})"


def parse_profile(
    data: Mapping[str, Any],
    *,
    base_dir: Path,
    source: str = "<profile>",
    overrides: Mapping[str, Any] | None = None,
    registry: Registry | None = None,
) -> ProfilerConfig:
    """Validate profile data (already parsed YAML) into a ``ProfilerConfig``."""
    overrides = {k: v for k, v in (overrides or {}).items() if v not in (None, (), [])}
    problems = Problems(source)
    sections = _sections(data, problems)

    def section(name: str, fallback: Any) -> Any:
        value = sections[name]
        return fallback if value is FAILED else value

    execution = _execution(
        section("execution", ExecutionConfig()),
        data.get("execution"),
        overrides,
        problems,
    )
    output: OutputConfig = section("output", OutputConfig())
    output = attrs.evolve(
        output,
        results_dir=resolve_path(base_dir, output.results_dir),
        reports_dir=resolve_path(base_dir, output.reports_dir),
    )
    provider, provider_model, port = _provider(sections["provider"], overrides)
    models, model_labels = _models(section("models", None), provider_model, problems)
    if overrides.get("models"):
        models = tuple(dict.fromkeys(overrides["models"]))
    if model_labels:
        # Recorded with the run (its manifest), so reports show the labels.
        overrides["model_labels"] = {
            m: model_labels[m] for m in models if m in model_labels
        }
    modes, mode_specs = _chosen_modes(section("modes", ()), overrides, problems)
    mode_resolver = _mode_resolver(sections, mode_specs, problems)
    scenarios, scenarios_path, scenario_set, skipped = scenarios_section(
        sections["scenarios"], base_dir, execution, overrides, problems, registry
    )
    if execution.stop is not None:
        _check_stop_modes(execution.stop, modes, problems)
    if execution.sandbox == "none" and (why := sandbox_needed(scenarios)):
        problems.add("execution.sandbox", why)
    problems.raise_if_any()
    assert (
        provider is not None and mode_resolver is not None
    )  # else a problem was recorded
    return ProfilerConfig(
        path=source,
        modes=modes,
        mode_specs=mode_specs,
        models=models,
        scenarios=tuple(scenarios),
        scenarios_path=scenarios_path,
        scenario_set=scenario_set,
        provider=provider,
        provider_model=provider_model,
        provider_port=port,
        mode_resolver=mode_resolver,
        scorer=section("scorer", None) or ComponentSpec(id="checks"),
        collectors=section("collectors", ()),
        analyzers=section("analyzers", ()),
        judge=_judge(section("judge", None), data.get("judge")),
        execution=execution,
        output=output,
        extensions=section("extensions", {}),
        overrides=dict(overrides),
        skipped=tuple(skipped),
    )


def _execution(
    execution: ExecutionConfig,
    raw: Any,
    overrides: Mapping[str, Any],
    problems: Problems,
) -> ExecutionConfig:
    """The ``execution`` section with ``--repetitions``, ``--retries``,
    ``--concurrency`` and ``--skip-warmup`` applied."""
    for option, field, type_ in (
        ("repetitions", "repetitions", PositiveCount),
        ("retries", "allowed_retries", Count),
        ("concurrency", "concurrency", PositiveCount),
    ):
        if option in overrides:
            value = structure_section(
                overrides[option], type_, (f"--{option}",), problems
            )
            if value is not FAILED:
                execution = attrs.evolve(execution, **{field: value})
    if overrides.get("skip_warmup"):
        execution = attrs.evolve(execution, warmup=False)
    if execution.stop is not None:
        execution = _check_stop(execution, raw, overrides, problems)
    return execution


def _provider(
    value: Any, overrides: Mapping[str, Any]
) -> tuple[ComponentSpec | None, str, int]:
    """The provider component, its model (what ``models`` defaults to) and its port;
    ``--provider`` replaces the section."""
    found: ProviderSection | None = None if value is FAILED else value
    if overrides.get("provider") and value is not FAILED:
        wanted = overrides["provider"]
        if found is None or found.id != wanted:
            # Another provider: the profile's options and model were the other one's.
            found = ProviderSection(id=wanted)
    if found is None:
        return None, DEFAULT_MODEL, 0
    provider = ComponentSpec(id=found.id, options=found.options)
    # Only the simulator has a model of its own to fall back on; for any other provider a model
    # that was not given is unknown ("": the agent's own default), never a borrowed price table.
    default_model = DEFAULT_MODEL if provider.id == "simulated" else ""
    return (
        provider,
        found.model if found.model is not None else default_model,
        found.port,
    )


def _chosen_modes(
    value: Any, overrides: Mapping[str, Any], problems: Problems
) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """The modes to run (``--mode`` wins over the profile) and the ``modes:`` mapping
    when the profile spells them out."""
    mode_specs: dict[str, Any] | None = value if isinstance(value, dict) else None
    modes: tuple[str, ...] = tuple(value)
    if not overrides.get("modes"):
        return modes, mode_specs
    wanted = tuple(dict.fromkeys(overrides["modes"]))
    # A list of names is only what the resolver is asked for by default: it may know more modes.
    unknown = [m for m in wanted if mode_specs is not None and m not in modes]
    if unknown:
        problems.add(
            "--mode",
            f"unknown mode(s) {', '.join(unknown)}{did_you_mean(unknown, modes)} "
            f"(profile has: {', '.join(modes)})",
        )
    return wanted, mode_specs


def _mode_resolver(
    sections: Mapping[str, Any], mode_specs: dict[str, Any] | None, problems: Problems
) -> ComponentSpec | None:
    """The ``mode_resolver`` section; the ``config`` resolver (given the mapping) when
    ``modes`` is a mapping."""
    value = sections["mode_resolver"]
    resolver: ComponentSpec | None = None if value is FAILED else value
    if resolver is None and mode_specs is not None:
        resolver = ComponentSpec(id="config")
    if resolver is None and sections["modes"] is not FAILED and value is not FAILED:
        problems.add(
            "mode_resolver",
            "required when `modes` is a list (or write `modes` as a mapping)",
        )
    if resolver is not None and resolver.id == "config" and mode_specs is not None:
        resolver = ComponentSpec(
            id="config", options={**resolver.options, "modes": mode_specs}
        )
    return resolver


def _judge(section: Any, raw: Any) -> ComponentSpec | None:
    """The ``judge`` section as a component; its ``model``, when the profile gives one,
    is one of its options."""
    if section is None:
        return None
    options = section.options
    if "model" in (raw or {}):
        options = {"model": section.model, **options}
    return ComponentSpec(id=section.id, options=options)

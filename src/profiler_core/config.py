"""Profile YAML -> a frozen ``ProfilerConfig`` (DESIGN §9).

Every problem is reported as ``<file>: <key path>: <what was expected>``; the
loader collects all of them so ``profiler validate`` can print every one.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import yaml

from .errors import ConfigError, ProfilerError
from .model import Scenario, ScenarioSets
from .serde import structure, unstructure

if TYPE_CHECKING:  # pragma: no cover
    from .contracts import ScenarioFormat
    from .plugins import Registry

DEFAULT_REPETITIONS = 5
DEFAULT_TIMEOUT_MS = 120_000

LOG_LEVELS = ("debug", "info", "warn", "warning", "error")


@attrs.frozen(kw_only=True)
class ComponentSpec:
    """A component chosen by the profile: its id and options."""

    id: str
    options: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ExecutionConfig:
    """``execution:`` — how the matrix runs."""

    repetitions: int = DEFAULT_REPETITIONS
    warmup: bool = True
    timeout_default_ms: int = DEFAULT_TIMEOUT_MS
    allowed_retries: int = 0
    #: sessions at once; None means "auto" (adapts to rate limits, up to ``max_concurrency``)
    concurrency: int | None = 1
    max_concurrency: int = 16
    #: the order cells start in: "blocked" (mode after mode), "interleaved" (modes alternate), "shuffled"
    order: str = "blocked"
    #: seed of the "shuffled" order
    seed: int = 42
    #: the run's budget: once spent, no new cell starts (None: no limit)
    max_cost_usd: float | None = None
    max_tokens: int | None = None


#: values of ``execution.order``
ORDERS = ("blocked", "interleaved", "shuffled")


@attrs.frozen(kw_only=True)
class OutputConfig:
    """``output:`` — where results and reports go."""

    results_dir: str = "results"
    reports_dir: str = "reports"
    session_export: bool = True
    log_level: str = "info"


@attrs.frozen(kw_only=True)
class ProfilerConfig:
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
            "collectors": None if self.collectors is None else [attrs.asdict(c) for c in self.collectors],
            "analyzers": None if self.analyzers is None else [attrs.asdict(a) for a in self.analyzers],
            "judge": None if self.judge is None else attrs.asdict(self.judge),
            "execution": {
                # How cells are scheduled does not change what they mean: a resume may change it.
                k: v
                for k, v in attrs.asdict(self.execution).items()
                if k not in ("concurrency", "max_concurrency", "order", "seed", "max_cost_usd", "max_tokens")
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


class _Problems:
    """Collects every problem of a profile before failing."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.items.append(f"{self.source}: {key}: {message}" if key else f"{self.source}: {message}")

    def raise_if_any(self) -> None:
        if self.items:
            raise ProfileErrors(self.items)


class ProfileErrors(ConfigError):
    """One or more problems in a profile; ``problems`` has one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems) if len(self.problems) > 1 else self.problems[0])


# -- schema -------------------------------------------------------------------

_TOP_KEYS = (
    "modes",
    "models",
    "scenarios",
    "provider",
    "mode_resolver",
    "scorer",
    "collectors",
    "analyzers",
    "judge",
    "execution",
    "output",
    "extensions",
)
_SECTION_KEYS = {
    "scenarios": ("path", "set", "ids", "format"),
    "provider": ("id", "model", "port", "options"),
    "mode_resolver": ("id", "options"),
    "scorer": ("id", "options"),
    "judge": ("id", "model", "options"),
    "execution": ("repetitions", "warmup", "timeout_default_ms", "allowed_retries", "concurrency", "max_concurrency", "order", "seed", "max_cost_usd", "max_tokens"),
    "output": ("results_dir", "reports_dir", "session_export", "log_level"),
}


def _check_keys(data: Mapping[str, Any], allowed: tuple[str, ...], prefix: str, problems: _Problems) -> None:
    for key in data:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            where = f"{prefix}{key}"
            if hint:
                problems.add(f"`{where}`", f"unknown key; did you mean `{prefix}{hint[0]}`?")
            else:
                problems.add(f"`{where}`", f"unknown key (expected one of: {', '.join(allowed)})")


def _int(value: Any, key: str, problems: _Problems, *, minimum: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        problems.add(key, f"expected an integer >= {minimum}, got {value!r}")
        return None
    if value < minimum:
        problems.add(key, f"expected an integer >= {minimum}, got {value}")
        return None
    return value


def _bool(value: Any, key: str, problems: _Problems) -> bool | None:
    if not isinstance(value, bool):
        problems.add(key, f"expected true or false, got {value!r}")
        return None
    return value


def _str(value: Any, key: str, problems: _Problems) -> str | None:
    if not isinstance(value, str) or not value:
        problems.add(key, f"expected a non-empty string, got {value!r}")
        return None
    return value


def _limit(value: Any, key: str, problems: _Problems) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        problems.add(key, f"expected a number > 0, got {value!r}")
        return None
    return float(value)


def _choice(value: Any, key: str, choices: tuple[str, ...], problems: _Problems) -> str | None:
    if value not in choices:
        problems.add(key, f"expected one of {', '.join(choices)}, got {value!r}")
        return None
    return str(value)


def _mapping(value: Any, key: str, problems: _Problems) -> dict[str, Any] | None:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(key, f"expected a mapping, got {type(value).__name__}")
        return None
    return value


def _component(value: Any, key: str, problems: _Problems, default_id: str | None) -> ComponentSpec | None:
    if value is None:
        return ComponentSpec(id=default_id) if default_id else None
    if isinstance(value, str):
        return ComponentSpec(id=value)
    section = _mapping(value, key, problems)
    if section is None:
        return None
    _check_keys(section, _SECTION_KEYS.get(key, ("id", "options")), f"{key}.", problems)
    component_id = section.get("id", default_id)
    if component_id is None:
        problems.add(f"{key}.id", "required")
        return None
    if _str(component_id, f"{key}.id", problems) is None:
        return None
    options = _mapping(section.get("options"), f"{key}.options", problems)
    return ComponentSpec(id=component_id, options=options or {})


def _component_list(value: Any, key: str, problems: _Problems) -> tuple[ComponentSpec, ...] | None:
    if value is None or value == "all":
        return None
    if not isinstance(value, list):
        problems.add(key, f"expected `all` or a list of ids, got {value!r}")
        return ()
    specs = []
    for i, item in enumerate(value):
        if isinstance(item, str) and item:
            specs.append(ComponentSpec(id=item))
        elif isinstance(item, dict):
            spec = _component(item, f"{key}[{i}]", problems, None)
            if spec:
                specs.append(spec)
        else:
            problems.add(f"{key}[{i}]", f"expected an id or {{id, options}}, got {item!r}")
    return tuple(specs)


# -- scenarios ----------------------------------------------------------------

SCENARIO_SUFFIXES = (".json", ".yaml", ".yml")
SCENARIO_SETS_FILE = "scenario-sets.json"
#: ``scenarios.format`` of the core layout (the default)
CORE_SCENARIO_FORMAT = "profiler"


def _read_data_file(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({_yaml_problem(exc)})") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} at line {mark.line + 1}" if mark else problem


def load_scenarios(
    folder: Path,
    *,
    timeout_default_ms: int = DEFAULT_TIMEOUT_MS,
    allowed_retries: int = 0,
    scenario_format: ScenarioFormat | None = None,
) -> tuple[list[Scenario], ScenarioSets, list[str], set[str]]:
    """Load every scenario file of ``folder`` (one scenario, or a list, per file) and its sets.

    ``scenario_format`` (a plugin's, from ``scenarios.format``) turns each file's
    data into a scenario; without it the core layout applies.
    Returns the scenarios, the sets, the problems, and the ids of scenarios whose file failed to load.
    """
    problems: list[str] = []
    scenarios: list[Scenario] = []
    seen: dict[str, Path] = {}
    broken: set[str] = set()
    for path in sorted(folder.iterdir()):
        if path.name == SCENARIO_SETS_FILE or path.suffix not in SCENARIO_SUFFIXES or not path.is_file():
            continue
        try:
            data = _read_data_file(path)
        except ProfilerError as exc:
            problems.append(str(exc))
            continue
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items):
            where = f"{path}[{index}]" if isinstance(data, list) else str(path)
            if not isinstance(item, dict):
                problems.append(f"{where}: expected a scenario object, got {type(item).__name__}")
                continue
            try:
                if scenario_format is not None:
                    scenario = _parse_with(scenario_format, item, where)
                else:
                    # Scenario files may leave out the timeout and retries: the profile's defaults apply.
                    item = {"timeoutMs": timeout_default_ms, "allowedRetries": allowed_retries, **item}
                    scenario = structure(item, Scenario, source=where)
            except ProfilerError as exc:
                problems.append(str(exc))
                if isinstance(item.get("id"), str):
                    broken.add(item["id"])  # already reported: not "unknown" too
                continue
            if scenario.id in seen:
                problems.append(f"{where}: $.id: duplicate scenario id {scenario.id!r} (also in {seen[scenario.id]})")
                continue
            seen[scenario.id] = path
            scenarios.append(scenario)
    sets = ScenarioSets()
    sets_path = folder / SCENARIO_SETS_FILE
    if sets_path.exists():
        try:
            sets = structure(_read_data_file(sets_path), ScenarioSets, source=str(sets_path))
        except ProfilerError as exc:
            problems.append(str(exc))
    return scenarios, sets, problems, broken


def _parse_with(scenario_format: ScenarioFormat, item: dict[str, Any], where: str) -> Scenario:
    """A plugin format's scenario; anything but a ``ProfilerError`` or a ``Scenario`` names the format."""
    try:
        scenario = scenario_format.parse(item, where)
    except ProfilerError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's bug must not become a traceback
        raise ConfigError(f"{where}: scenario format {scenario_format.id!r} failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(scenario, Scenario):
        raise ConfigError(f"{where}: scenario format {scenario_format.id!r} returned {type(scenario).__name__}, not a Scenario")
    return scenario


def _scenario_format(name: Any, problems: _Problems, registry: Registry | None) -> ScenarioFormat | None:
    """The registered format ``scenarios.format`` names (None for the core layout or a problem)."""
    if name is None or name == CORE_SCENARIO_FORMAT:
        return None
    if not isinstance(name, str):
        problems.add("scenarios.format", f"expected a scenario format name, got {name!r}")
        return None
    if registry is None:
        from .plugins import default_plugin_manager  # plugins import this module: late import

        registry = default_plugin_manager().registry
    try:
        return registry.create("scenario_formats", name)  # type: ignore[no-any-return]
    except ProfilerError as exc:
        problems.add("scenarios.format", str(exc))
        return None


def select_scenarios(
    scenarios: list[Scenario], sets: ScenarioSets, *, ids: tuple[str, ...] | None, set_name: str | None,
    broken: set[str] | frozenset[str] = frozenset(),
) -> tuple[list[Scenario], list[str]]:
    """Pick the scenarios to run: ``ids`` (in their order) wins over ``set``; else all, sorted by id."""
    by_id = {s.id: s for s in scenarios}
    if ids:
        wanted, source = list(ids), "scenarios.ids"
    elif set_name:
        if set_name not in sets.sets:
            known = ", ".join(sorted(sets.sets)) or "none defined"
            return [], [f"scenarios.set: unknown scenario set {set_name!r} (sets: {known})"]
        wanted, source = list(sets.sets[set_name]), f"scenario set {set_name!r}"
    else:
        return sorted(scenarios, key=lambda s: s.id), []
    # An id whose file failed to load was reported with the file's problem; don't call it unknown too.
    missing = [i for i in wanted if i not in by_id and i not in broken]
    if missing:
        return [], [f"{source}: unknown scenario id(s) {', '.join(missing)} (found: {', '.join(sorted(by_id)) or 'none'})"]
    return [by_id[i] for i in dict.fromkeys(wanted) if i in by_id], []


# -- the profile ----------------------------------------------------------------


def load_profile(
    path: str | os.PathLike[str], overrides: Mapping[str, Any] | None = None, *, registry: Registry | None = None
) -> ProfilerConfig:
    """Load and validate a profile; CLI ``overrides`` win over YAML, which wins over defaults.

    Overrides: ``modes``, ``models``, ``scenario_ids``, ``scenario_set``, ``repetitions``,
    ``retries``, ``skip_warmup``, ``concurrency``. ``registry`` is where a
    ``scenarios.format`` is looked up (default: the process's installed plugins).
    """
    profile_path = Path(path)
    if not profile_path.is_file():
        raise ConfigError(f"{profile_path}: profile not found")
    try:
        data = yaml.safe_load(profile_path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{profile_path}: not a text file (expected a YAML profile)") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{profile_path}: not valid YAML ({_yaml_problem(exc)})") from None
    if data is None or data == {}:
        raise ConfigError(f"{profile_path}: the profile is empty (it needs at least `modes` and `scenarios`; `profiler init` writes an example)")
    if not isinstance(data, dict):
        raise ConfigError(f"{profile_path}: expected a mapping at the top level, got {type(data).__name__}")
    return parse_profile(
        data, base_dir=profile_path.parent.resolve(), source=str(profile_path), overrides=overrides, registry=registry
    )


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
    problems = _Problems(source)
    _check_keys(data, _TOP_KEYS, "", problems)

    def resolve(p: str) -> str:
        return str((base_dir / os.path.expanduser(p)).resolve())

    # execution
    ex = _mapping(data.get("execution"), "execution", problems) or {}
    _check_keys(ex, _SECTION_KEYS["execution"], "execution.", problems)
    execution = ExecutionConfig(
        repetitions=_int(ex.get("repetitions", DEFAULT_REPETITIONS), "execution.repetitions", problems, minimum=1)
        or DEFAULT_REPETITIONS,
        warmup=_bool(ex.get("warmup", True), "execution.warmup", problems) is not False,
        timeout_default_ms=_int(ex.get("timeout_default_ms", DEFAULT_TIMEOUT_MS), "execution.timeout_default_ms", problems, minimum=1)
        or DEFAULT_TIMEOUT_MS,
        allowed_retries=_int(ex.get("allowed_retries", 0), "execution.allowed_retries", problems, minimum=0) or 0,
        concurrency=None if ex.get("concurrency") == "auto" else (_int(ex.get("concurrency", 1), "execution.concurrency", problems, minimum=1) or 1),
        max_concurrency=_int(ex.get("max_concurrency", 16), "execution.max_concurrency", problems, minimum=1) or 16,
        order=_choice(ex.get("order", "blocked"), "execution.order", ORDERS, problems) or "blocked",
        seed=_int(ex.get("seed", 42), "execution.seed", problems, minimum=0) or 0,
        max_cost_usd=_limit(ex.get("max_cost_usd"), "execution.max_cost_usd", problems),
        max_tokens=None if ex.get("max_tokens") is None else _int(ex["max_tokens"], "execution.max_tokens", problems, minimum=1),
    )
    if "repetitions" in overrides:
        execution = attrs.evolve(execution, repetitions=_int(overrides["repetitions"], "--repetitions", problems, minimum=1) or 1)
    if "retries" in overrides:
        execution = attrs.evolve(execution, allowed_retries=_int(overrides["retries"], "--retries", problems, minimum=0) or 0)
    if "concurrency" in overrides:
        execution = attrs.evolve(execution, concurrency=_int(overrides["concurrency"], "--concurrency", problems, minimum=1) or 1)
    if overrides.get("skip_warmup"):
        execution = attrs.evolve(execution, warmup=False)

    # output
    out = _mapping(data.get("output"), "output", problems) or {}
    _check_keys(out, _SECTION_KEYS["output"], "output.", problems)
    log_level = out.get("log_level", "info")
    if log_level not in LOG_LEVELS:
        problems.add("output.log_level", f"expected one of {', '.join(LOG_LEVELS)}, got {log_level!r}")
        log_level = "info"
    output = OutputConfig(
        results_dir=resolve(_str(out.get("results_dir", "results"), "output.results_dir", problems) or "results"),
        reports_dir=resolve(_str(out.get("reports_dir", "reports"), "output.reports_dir", problems) or "reports"),
        session_export=_bool(out.get("session_export", True), "output.session_export", problems) is not False,
        log_level=log_level,
    )

    # provider and models
    # No `provider:` at all means the simulator; a `provider:` section must say which.
    provider = _component(data.get("provider"), "provider", problems, None if "provider" in data else "simulated")
    if provider is None and data.get("provider") is None and "provider" in data:
        problems.add("provider", "expected a mapping with an `id` (or leave `provider` out for the simulator)")
    pdata = data.get("provider") if isinstance(data.get("provider"), dict) else {}
    # Only the simulator has a model of its own to fall back on; for any other provider a model
    # that was not given is unknown ("": the agent's own default), never a borrowed price table.
    default_model = "sim-small" if provider is not None and provider.id == "simulated" else ""
    provider_model = pdata.get("model", default_model)
    if "model" in pdata and _str(provider_model, "provider.model", problems) is None:
        provider_model = default_model
    port = _int(pdata.get("port", 0), "provider.port", problems, minimum=0) or 0
    models_raw = data.get("models")
    models: tuple[str, ...] = (provider_model,)
    if models_raw is not None:
        if not isinstance(models_raw, list) or not models_raw or not all(isinstance(m, str) and m for m in models_raw):
            problems.add("models", f"expected a non-empty list of model names, got {models_raw!r}")
        else:
            models = tuple(dict.fromkeys(models_raw))
    if overrides.get("models"):
        models = tuple(dict.fromkeys(overrides["models"]))

    # modes
    modes_raw = data.get("modes")
    mode_specs: dict[str, Any] | None = None
    modes: tuple[str, ...] = ()
    if modes_raw is None:
        problems.add("modes", "required (a list of mode names, or a mapping of mode name -> settings)")
    elif isinstance(modes_raw, dict):
        if not modes_raw:
            problems.add("modes", "expected at least one mode")
        mode_specs = {}
        for name, spec in modes_raw.items():
            if spec is None:
                spec = {}
            if not isinstance(spec, dict):
                problems.add(f"modes.{name}", f"expected a mapping, got {type(spec).__name__}")
                continue
            _check_keys(spec, ("environment", "system_instructions", "provider_overrides"), f"modes.{name}.", problems)
            env = spec.get("environment")
            if env is not None and (
                not isinstance(env, dict) or not all(isinstance(v, (str, int, float, bool)) for v in env.values())
            ):
                problems.add(f"modes.{name}.environment", f"expected a mapping of names to strings, got {env!r}")
                continue
            if spec.get("provider_overrides") is not None and not isinstance(spec["provider_overrides"], dict):
                problems.add(f"modes.{name}.provider_overrides", f"expected a mapping, got {spec['provider_overrides']!r}")
                continue
            if spec.get("system_instructions") is not None and not isinstance(spec["system_instructions"], str):
                problems.add(f"modes.{name}.system_instructions", f"expected a string, got {spec['system_instructions']!r}")
                continue
            mode_specs[str(name)] = spec
        modes = tuple(str(m) for m in modes_raw)
    elif isinstance(modes_raw, list) and modes_raw and all(isinstance(m, str) and m for m in modes_raw):
        modes = tuple(dict.fromkeys(modes_raw))
    else:
        problems.add("modes", f"expected a list of mode names or a mapping, got {modes_raw!r}")
    if overrides.get("modes"):
        wanted = tuple(dict.fromkeys(overrides["modes"]))
        # A list of names is only what the resolver is asked for by default: it may know more modes.
        unknown = [m for m in wanted if mode_specs is not None and m not in modes]
        if unknown:
            problems.add("--mode", f"unknown mode(s) {', '.join(unknown)} (profile has: {', '.join(modes)})")
        modes = wanted

    default_resolver = "config" if mode_specs is not None else None
    mode_resolver = _component(data.get("mode_resolver"), "mode_resolver", problems, default_resolver)
    if mode_resolver is None and modes_raw is not None and mode_specs is None:
        problems.add("mode_resolver", "required when `modes` is a list (or write `modes` as a mapping)")
    if mode_resolver is not None and mode_resolver.id == "config" and mode_specs is not None:
        mode_resolver = ComponentSpec(id="config", options={**mode_resolver.options, "modes": mode_specs})

    scorer = _component(data.get("scorer"), "scorer", problems, "checks")
    collectors = _component_list(data.get("collectors"), "collectors", problems)
    analyzers = _component_list(data.get("analyzers"), "analyzers", problems)
    judge = _component(data.get("judge"), "judge", problems, None)
    if judge is not None and isinstance(data.get("judge"), dict) and "model" in data["judge"]:
        judge = ComponentSpec(id=judge.id, options={"model": data["judge"]["model"], **judge.options})
    extensions = _mapping(data.get("extensions"), "extensions", problems) or {}

    # scenarios
    scenarios: list[Scenario] = []
    sc = data.get("scenarios")
    scenarios_path = None
    scenario_set = None
    if sc is None:
        problems.add("scenarios", "required (a mapping with `path` and optionally `set` or `ids`)")
    elif (sc := _mapping(sc, "scenarios", problems)) is not None:
        _check_keys(sc, _SECTION_KEYS["scenarios"], "scenarios.", problems)
        raw_path = sc.get("path", "scenarios")
        if _str(raw_path, "scenarios.path", problems):
            scenarios_path = resolve(raw_path)
        ids = sc.get("ids")
        if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
            problems.add("scenarios.ids", f"expected a list of scenario ids, got {ids!r}")
            ids = None
        scenario_set = sc.get("set")
        if scenario_set is not None and _str(scenario_set, "scenarios.set", problems) is None:
            scenario_set = None
        scenario_format = _scenario_format(sc.get("format"), problems, registry)
        if overrides.get("scenario_ids"):
            ids = list(overrides["scenario_ids"])
        if overrides.get("scenario_set"):
            scenario_set, ids = overrides["scenario_set"], None
        format_unusable = sc.get("format") not in (None, CORE_SCENARIO_FORMAT) and scenario_format is None
        if scenarios_path is not None and not format_unusable:  # files of an unknown format: nothing to say
            folder = Path(scenarios_path)
            if not folder.is_dir():
                problems.add("scenarios.path", f"scenario folder {folder} does not exist")
            else:
                found, sets, scenario_problems, broken = load_scenarios(
                    folder,
                    timeout_default_ms=execution.timeout_default_ms,
                    allowed_retries=execution.allowed_retries,
                    scenario_format=scenario_format,
                )
                problems.items.extend(scenario_problems)
                scenarios, select_problems = select_scenarios(
                    found, sets, ids=tuple(ids) if ids else None, set_name=scenario_set, broken=broken
                )
                for p in select_problems:
                    problems.add("", p)
                if not scenarios and not select_problems and not scenario_problems:
                    problems.add("scenarios.path", f"no scenario files (*.json, *.yaml) in {folder}")

    problems.raise_if_any()
    assert provider is not None and scorer is not None and mode_resolver is not None
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
        scorer=scorer,
        collectors=collectors,
        analyzers=analyzers,
        judge=judge,
        execution=execution,
        output=output,
        extensions=extensions,
        overrides=dict(overrides),
    )


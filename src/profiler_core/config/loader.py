"""Profile YAML -> a frozen ``ProfilerConfig`` (the keys are in docs/profiles.md).

Every problem is reported as ``<file>: <key path>: <what was expected>``; the
loader collects all of them so ``profiler validate`` can print every one.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs

from ..errors import ConfigError, ProfilerError
from ..model import Scenario, ScenarioSets
from ..model.record import Record
from ..storage.datafile import read_data_file
from ..storage.paths import scenario_id_problem
from ..storage.serde import (
    iter_errors,
    json_kind,
    structure,
    structure_detailed,
    unstructure,
)
from ..util.textcut import LIMIT, cut
from .schema import (
    DEFAULT_MODEL,
    DEFAULT_REPETITIONS,
    DEFAULT_TIMEOUT_MS,
    LOG_LEVELS,
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
    from ..plugins.contracts import ScenarioFormat
    from ..plugins.manager import Registry

__all__ = [
    "DEFAULT_REPETITIONS",
    "DEFAULT_TIMEOUT_MS",
    "LOG_LEVELS",
    "ComponentSpec",
    "ExecutionConfig",
    "OutputConfig",
    "ProfileErrors",
    "ProfilerConfig",
    "load_profile",
    "load_scenarios",
    "parse_profile",
    "select_scenarios",
]


#: ``execution`` keys of the sandbox and their defaults (left out of ``profile_hash`` while unchanged)
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
    #: scenario folders left out of the dataset, one line each (a Harbor task that is not valid or not supported)
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
                # The sandbox keys count once set: a profile without them keeps the hash it had before they existed.
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


class _Problems:
    """Collects every problem of a profile before failing."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        # cut: an offending value may be a megabyte long
        self.items.append(
            cut(
                f"{self.source}: {key}: {message}"
                if key
                else f"{self.source}: {message}",
                2 * LIMIT,
            )
        )

    def add_structuring(
        self, exc: BaseException, prefix: tuple[str | int, ...]
    ) -> None:
        """One line per problem of a detailed cattrs failure, its key path under ``prefix``."""
        for path, problem in iter_errors(exc, prefix):
            if isinstance(problem, cattrs.ForbiddenExtraKeysError):
                for key in sorted(problem.extra_fields):
                    self.unknown_key(
                        path, key, tuple(a.name for a in attrs.fields(problem.cl))
                    )
            elif isinstance(problem, KeyError):
                hint = REQUIRED_HINTS.get(path)
                self.add(_dotted(path), f"required ({hint})" if hint else "required")
            else:
                self.add(_dotted(path), str(problem))

    def unknown_key(
        self, path: tuple[str | int, ...], key: Any, allowed: tuple[str, ...]
    ) -> None:
        """An unknown key, with the nearest known one when there is one."""
        prefix = _dotted(path) + "." if path else ""
        hint = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        if hint:
            self.add(
                f"`{prefix}{key}`", f"unknown key; did you mean `{prefix}{hint[0]}`?"
            )
        else:
            self.add(
                f"`{prefix}{key}`",
                f"unknown key (expected one of: {', '.join(allowed)})",
            )

    def raise_if_any(self) -> None:
        if self.items:
            raise ProfileErrors(self.items)


class ProfileErrors(ConfigError):
    """One or more problems in a profile; ``problems`` has one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            "\n".join(self.problems) if len(self.problems) > 1 else self.problems[0]
        )


def _dotted(path: tuple[str | int, ...]) -> str:
    """``("collectors", 0, "id")`` -> ``collectors[0].id``."""
    text = ""
    for part in path:
        text += (
            f"[{part}]"
            if isinstance(part, int)
            else (f".{part}" if text else str(part))
        )
    return text


_FAILED = object()


def _structure(
    value: Any, type_: Any, path: tuple[str | int, ...], problems: _Problems
) -> Any:
    """``value`` structured as ``type_`` by the converter, or ``_FAILED`` with its problems recorded."""
    try:
        return structure_detailed(value, type_)
    except Exception as exc:  # noqa: BLE001 - cattrs and validators raise many kinds
        problems.add_structuring(exc, path)
        return _FAILED


def _sections(data: Mapping[str, Any], problems: _Problems) -> dict[str, Any]:
    """Each top-level key of ``Profile`` structured on its own (so one bad section hides no other)."""
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
                sections[name] = _FAILED
            else:
                default: Any = field.default
                if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                    default = default.factory()
                sections[name] = default
        elif name == "modes":
            sections[name] = _modes(data[name], problems)
        else:
            sections[name] = _structure(data[name], types[name], (name,), problems)
    return sections


def _check_stop(
    execution: ExecutionConfig,
    raw: Any,
    overrides: Mapping[str, Any],
    problems: _Problems,
) -> ExecutionConfig:
    """``execution.stop`` against the rest of ``execution``; the matrix then has ``max_repetitions`` rounds."""
    stop = execution.stop
    assert stop is not None
    if isinstance(raw, dict) and "repetitions" in raw:
        problems.add(
            "execution.stop",
            "cannot be used with execution.repetitions (the stop rule decides the repetitions; remove one of them)",
        )
    if "repetitions" in overrides:
        problems.add(
            "--repetitions",
            "cannot be used with execution.stop (set execution.stop.max_repetitions instead)",
        )
    if stop.min_repetitions > stop.max_repetitions:
        problems.add(
            "execution.stop.min_repetitions",
            f"expected at most max_repetitions ({stop.max_repetitions}), got {stop.min_repetitions}",
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


def _check_stop_modes(stop: Any, modes: tuple[str, ...], problems: _Problems) -> None:
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
    specs: Any, provider_model: str, problems: _Problems
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


def _modes(value: Any, problems: _Problems) -> Any:
    """``modes:`` is a list of names or a mapping of name -> settings; which one decides the type."""
    if isinstance(value, dict):
        if not value:
            problems.add("modes", "expected at least one mode")
            return _FAILED
        if _structure(value, ModeMapping, ("modes",), problems) is _FAILED:
            return _FAILED
        # The raw settings (YAML keys) are what the `config` resolver reads and the profile hash covers.
        return {str(name): spec or {} for name, spec in value.items()}
    if isinstance(value, list):
        names = _structure(value, ModeNames, ("modes",), problems)
        return _FAILED if names is _FAILED else tuple(dict.fromkeys(names))
    problems.add(
        "modes",
        f"expected a list of mode names or a mapping, got {json_kind(value)} {value!r}"[
            :200
        ],
    )
    return _FAILED


# -- scenarios ----------------------------------------------------------------

SCENARIO_SUFFIXES = (".json", ".yaml", ".yml")
SCENARIO_SETS_FILE = "scenario-sets.json"
#: ``scenarios.format`` of the core layout (the default)
CORE_SCENARIO_FORMAT = "profiler"
#: ``scenarios.format`` of Harbor task directories (docs/harbor.md)
HARBOR_SCENARIO_FORMAT = "harbor"


def _read_data_file(path: Path) -> Any:
    return read_data_file(path)


def load_scenarios(
    folder: Path,
    *,
    timeout_default_ms: int = DEFAULT_TIMEOUT_MS,
    allowed_retries: int = 0,
    scenario_format: ScenarioFormat | None = None,
    harbor: bool = False,
) -> tuple[list[Scenario], ScenarioSets, list[str], set[str]]:
    """Load every scenario file of ``folder`` (one scenario, or a list, per file) and its sets.

    ``scenario_format`` (a plugin's, from ``scenarios.format``) turns each file's
    data into a scenario; without it the core layout applies. ``harbor``: the
    folder holds Harbor task directories (``profiler_core.config.harbor``).

    Returns the scenarios, the sets, one line per problem, and the ids of the
    scenarios that failed to load (the ``id`` they state, else the file's stem),
    so that selecting them is not reported a second time as an unknown id.
    """
    if harbor:
        from .harbor import load_tasks, task_folders

        tasks, task_problems, failed = load_tasks(
            folder,
            timeout_default_ms=timeout_default_ms,
            allowed_retries=allowed_retries,
        )
        if not task_folders(folder):
            task_problems.append(_no_harbor_tasks(folder))
        return tasks, _load_sets(folder, task_problems), task_problems, failed
    problems: list[str] = []
    scenarios: list[Scenario] = []
    unloadable: set[str] = set()
    seen: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if (
            path.name == SCENARIO_SETS_FILE
            or path.suffix not in SCENARIO_SUFFIXES
            or not path.is_file()
        ):
            continue
        try:
            data = _read_data_file(path)
        except ProfilerError as exc:
            problems.append(str(exc))
            unloadable.add(path.stem)
            continue
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items):
            where = f"{path}[{index}]" if isinstance(data, list) else str(path)
            if not isinstance(item, dict):
                problems.append(
                    f"{where}: expected a scenario object, got {type(item).__name__}"
                )
                unloadable.add(path.stem)
                continue
            try:
                if scenario_format is not None:
                    scenario = _parse_with(scenario_format, item, where)
                else:
                    # Scenario files may leave out the timeout and retries: the profile's defaults apply.
                    item = {
                        "timeoutMs": timeout_default_ms,
                        "allowedRetries": allowed_retries,
                        **item,
                    }
                    scenario = structure(item, Scenario, source=where)
            except ProfilerError as exc:
                problems.append(str(exc))
                stated = item.get("id")
                unloadable.add(
                    stated if isinstance(stated, str) and stated else path.stem
                )
                continue
            try:
                scenario = resolve_task_paths(scenario, path.parent, folder, where)
            except ProfilerError as exc:
                problems.append(str(exc))
                unloadable.add(scenario.id)
                continue
            if (bad_id := scenario_id_problem(scenario.id)) is not None:
                problems.append(f"{where}: $.id: {bad_id}")
                unloadable.add(scenario.id)
                continue
            if scenario.id in seen:
                problems.append(
                    f"{where}: $.id: duplicate scenario id {scenario.id!r} (also in {seen[scenario.id]})"
                )
                continue
            seen[scenario.id] = path
            scenarios.append(scenario)
    return scenarios, _load_sets(folder, problems), problems, unloadable


def _no_harbor_tasks(folder: Path) -> str:
    return f"{folder}: no Harbor tasks (folders with task.toml and instruction.md)"


def _harbor_scenarios(
    folder: Path,
    execution: ExecutionConfig,
    ids: list[str] | None,
    scenario_set: str | None,
    problems: list[str],
) -> tuple[list[Scenario], ScenarioSets, set[str], list[str], set[str]]:
    """A folder of Harbor tasks: the scenarios, the sets, the ids left out, one line per folder left out, every task's id.

    Only the selected folders (``ids``, else the set's) are read. A folder that is not a valid task, or
    not one this runner runs yet (``harbor.not_run_yet``), is left out with its line instead of refusing
    the dataset; ``problems`` gets the lines that do refuse it (no tasks, a bad sets file).
    """
    from .harbor import load_tasks, not_run_yet, task_folders

    names = {task.name for task in task_folders(folder)}
    if not names:
        problems.append(_no_harbor_tasks(folder))
        return [], ScenarioSets(), set(), [], names
    sets = _load_sets(folder, problems)
    wanted = ids if ids else (sets.sets.get(scenario_set) if scenario_set else None)
    tasks, left_out, failed = load_tasks(
        folder,
        timeout_default_ms=execution.timeout_default_ms,
        allowed_retries=execution.allowed_retries,
        only=set(wanted) if wanted is not None else None,
    )
    runnable = []
    for task in tasks:
        # Parsed, but not run by this runner yet: drop this check once the trial runtime runs them.
        if (why := not_run_yet(task)) is not None:
            task_dir = folder if (folder / "task.toml").is_file() else folder / task.id
            left_out.append(f"{task_dir}/{why}")
            failed.add(task.id)
        else:
            runnable.append(task)
    return runnable, sets, failed, left_out, names


def _load_sets(folder: Path, problems: list[str]) -> ScenarioSets:
    """The folder's ``scenario-sets.json`` (none: no sets); a problem is added to ``problems``."""
    sets_path = folder / SCENARIO_SETS_FILE
    if sets_path.exists():
        try:
            return structure(
                _read_data_file(sets_path), ScenarioSets, source=str(sets_path)
            )
        except ProfilerError as exc:
            problems.append(str(exc))
    return ScenarioSets()


def sandbox_needed(scenarios: list[Scenario] | tuple[Scenario, ...]) -> str | None:
    """Why ``execution.sandbox: none`` cannot run these scenarios (paths inside a sandbox), else None."""
    needing = [s for s in scenarios if s.sandbox_paths]
    if not needing:
        return None
    paths = ", ".join(dict.fromkeys(p for s in needing for p in s.sandbox_paths))
    names = ", ".join(s.id for s in needing[:3]) + (
        f" and {len(needing) - 3} more" if len(needing) > 3 else ""
    )
    return (
        f"none cannot run {names}: their commands use {paths}, which exist only inside a sandbox "
        "(set execution.sandbox to bwrap, docker or podman)"
    )


def resolve_task_paths(
    scenario: Scenario, source_dir: Path, root: Path, where: str
) -> Scenario:
    """``scenario`` with its workspace folder and verifier files made absolute; each must lie inside ``root``.

    A git workspace may name any local repository (or a URL): it is only read.
    """
    workspace = scenario.workspace
    if workspace is not None and workspace.path is not None:
        folder = _inside_root(
            source_dir, workspace.path, root, f"{where}: $.workspace.path"
        )
        if not folder.is_dir():
            raise ConfigError(
                f"{where}: $.workspace.path: {workspace.path!r} is not a folder"
            )
        workspace = attrs.evolve(workspace, path=str(folder))
    elif (
        workspace is not None
        and workspace.git is not None
        and "://" not in workspace.git
        and not workspace.git.startswith("git@")
    ):
        repository = (source_dir / workspace.git).resolve()
        if not repository.exists():
            raise ConfigError(
                f"{where}: $.workspace.git: {workspace.git!r}: no such repository"
            )
        workspace = attrs.evolve(workspace, git=str(repository))
    verifiers = []
    for index, verifier in enumerate(scenario.verify):
        files = {}
        for destination, source in verifier.files.items():
            key = f"{where}: $.verify[{index}].files.{destination}"
            if Path(destination).is_absolute() or ".." in Path(destination).parts:
                raise ConfigError(
                    f"{key}: expected a path inside the workspace, got {destination!r}"
                )
            found = _inside_root(source_dir, source, root, key)
            if not found.exists():
                raise ConfigError(f"{key}: {source!r}: no such file or folder")
            files[destination] = str(found)
        mounts = _resolve_sources(
            verifier.mounts, source_dir, root, f"{where}: $.verify[{index}].mounts"
        )
        verifiers.append(attrs.evolve(verifier, files=files, mounts=mounts))
    solution = scenario.solution
    if solution is not None:
        solution = attrs.evolve(
            solution,
            mounts=_resolve_sources(
                solution.mounts, source_dir, root, f"{where}: $.solution.mounts"
            ),
        )
    environment = scenario.environment
    if environment is not None and environment.dockerfile is not None:
        dockerfile = _inside_root(
            source_dir,
            environment.dockerfile,
            root,
            f"{where}: $.environment.dockerfile",
        )
        if not dockerfile.is_file():
            raise ConfigError(
                f"{where}: $.environment.dockerfile: {environment.dockerfile!r}: no such file"
            )
        environment = attrs.evolve(environment, dockerfile=str(dockerfile))
    return attrs.evolve(
        scenario,
        workspace=workspace,
        verify=tuple(verifiers),
        solution=solution,
        environment=environment,
    )


def _resolve_sources(
    mounts: Mapping[str, str], source_dir: Path, root: Path, key: str
) -> dict[str, str]:
    """``mounts`` (inside path -> source) with each source made absolute; each must exist inside ``root``."""
    resolved = {}
    for target, source in mounts.items():
        found = _inside_root(source_dir, source, root, f"{key}.{target}")
        if not found.exists():
            raise ConfigError(f"{key}.{target}: {source!r}: no such file or folder")
        resolved[target] = str(found)
    return resolved


def _inside_root(source_dir: Path, relative: str, root: Path, key: str) -> Path:
    """``source_dir/relative``, resolved; a path leaving ``root`` (``..``, an absolute path, a symlink) is refused."""
    target = (source_dir / relative).resolve()
    top = root.resolve()
    if target != top and top not in target.parents:
        raise ConfigError(f"{key}: {relative!r} is outside the scenario folder {root}")
    return target


def _parse_with(
    scenario_format: ScenarioFormat, item: dict[str, Any], where: str
) -> Scenario:
    """A plugin format's scenario; anything but a ``ProfilerError`` or a ``Scenario`` names the format."""
    try:
        scenario = scenario_format.parse(item, where)
    except ProfilerError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's bug must not become a traceback
        raise ConfigError(
            f"{where}: scenario format {scenario_format.id!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(scenario, Scenario):
        raise ConfigError(
            f"{where}: scenario format {scenario_format.id!r} returned {type(scenario).__name__}, not a Scenario"
        )
    return scenario


def _scenario_format(
    name: str | None, problems: _Problems, registry: Registry | None
) -> ScenarioFormat | None:
    """The registered format ``scenarios.format`` names (None for the core layout or a problem)."""
    if name is None or name in (CORE_SCENARIO_FORMAT, HARBOR_SCENARIO_FORMAT):
        return None
    if registry is None:
        from ..plugins.manager import (
            default_plugin_manager,
        )  # plugins import this module: late import

        registry = default_plugin_manager().registry
    try:
        return registry.create("scenario_formats", name)
    except ProfilerError as exc:
        problems.add("scenarios.format", str(exc))
        return None


def select_scenarios(
    scenarios: list[Scenario],
    sets: ScenarioSets,
    *,
    ids: tuple[str, ...] | None,
    set_name: str | None,
    unloadable: set[str] | frozenset[str] = frozenset(),
    ids_from: str = "scenarios.ids",
    set_from: str = "scenarios.set",
    known: typing.Iterable[str] | None = None,
) -> tuple[list[Scenario], list[str]]:
    """Pick the scenarios to run: ``ids`` (in their order) wins over ``set``; else all, sorted by id.

    Ids in ``unloadable`` (their file's problem is already reported) are not called unknown.
    ``ids_from``/``set_from`` name where the ids or the set came from (``--scenario`` on the command line).
    ``known``: every id there is, when only the wanted ones were loaded (what an unknown id is compared with).
    """
    by_id = {s.id: s for s in scenarios}
    if ids:
        wanted, source = list(ids), ids_from
    elif set_name:
        if set_name not in sets.sets:
            known = ", ".join(sorted(sets.sets)) or "none defined"
            return [], [
                f"{set_from}: unknown scenario set {set_name!r}{did_you_mean([set_name], sets.sets)} (sets: {known})"
            ]
        wanted, source = list(sets.sets[set_name]), f"scenario set {set_name!r}"
    else:
        return sorted(scenarios, key=lambda s: s.id), []
    missing = [
        i
        for i in wanted
        if i not in by_id and i not in unloadable and (known is None or i not in known)
    ]
    if missing:
        names = sorted(known) if known is not None else sorted(by_id)
        hint = did_you_mean(missing, names)
        return [], [
            f"{source}: unknown scenario id(s) {', '.join(missing)}{hint} (found: {', '.join(names) or 'none'})"
        ]
    return [by_id[i] for i in dict.fromkeys(wanted) if i in by_id], []


def did_you_mean(unknown: typing.Sequence[str], known: typing.Iterable[str]) -> str:
    """``; did you mean 'x'?`` for names typed wrong (each with its closest known name), or ``""``."""
    choices = sorted(known)
    pairs = [
        (name, hint[0])
        for name in unknown
        if (hint := difflib.get_close_matches(name, choices, n=1))
    ]
    if not pairs:
        return ""
    if len(unknown) == 1:
        return f"; did you mean {pairs[0][1]!r}?"
    return (
        "; did you mean "
        + ", ".join(f"{right!r} for {wrong!r}" for wrong, right in pairs)
        + "?"
    )


# -- the profile ----------------------------------------------------------------


def load_profile(
    path: str | os.PathLike[str],
    overrides: Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
) -> ProfilerConfig:
    """Load and validate a profile; CLI ``overrides`` win over the environment, which wins over YAML and defaults.

    Overrides: ``modes``, ``models``, ``scenario_ids``, ``scenario_set``, ``repetitions``,
    ``retries``, ``skip_warmup``, ``concurrency``, ``provider`` (an id replacing ``provider``), ``settings``
    (``--set`` keys and values) and ``environment`` (the environment names to apply instead of the
    process's: a resumed run's recorded ones). ``registry`` is where a ``scenarios.format`` is looked
    up (default: the process's installed plugins).
    """
    profile_path = Path(path)
    if not profile_path.is_file():
        raise ConfigError(f"{profile_path}: profile not found")
    data = read_data_file(
        profile_path
    )  # one line for bad YAML, deep nesting, huge integers, NUL
    if data is None or data == {}:
        raise ConfigError(
            f"{profile_path}: the profile is empty (it needs at least `modes` and `scenarios`; `profiler init` writes an example)"
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
    problems = _Problems(source)
    sections = _sections(data, problems)

    def section(name: str, fallback: Any) -> Any:
        value = sections[name]
        return fallback if value is _FAILED else value

    execution = _execution(
        section("execution", ExecutionConfig()),
        data.get("execution"),
        overrides,
        problems,
    )
    output: OutputConfig = section("output", OutputConfig())
    output = attrs.evolve(
        output,
        results_dir=_resolve(base_dir, output.results_dir),
        reports_dir=_resolve(base_dir, output.reports_dir),
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
    scenarios, scenarios_path, scenario_set, skipped = _scenarios(
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


def _resolve(base_dir: Path, path: str) -> str:
    """A path of the profile (``~`` expanded, relative to the profile's folder), absolute."""
    return str((base_dir / os.path.expanduser(path)).resolve())


def _execution(
    execution: ExecutionConfig,
    raw: Any,
    overrides: Mapping[str, Any],
    problems: _Problems,
) -> ExecutionConfig:
    """The ``execution`` section with ``--repetitions``, ``--retries``, ``--concurrency`` and ``--skip-warmup`` applied."""
    for option, field, type_ in (
        ("repetitions", "repetitions", PositiveCount),
        ("retries", "allowed_retries", Count),
        ("concurrency", "concurrency", PositiveCount),
    ):
        if option in overrides:
            value = _structure(overrides[option], type_, (f"--{option}",), problems)
            if value is not _FAILED:
                execution = attrs.evolve(execution, **{field: value})
    if overrides.get("skip_warmup"):
        execution = attrs.evolve(execution, warmup=False)
    if execution.stop is not None:
        execution = _check_stop(execution, raw, overrides, problems)
    return execution


def _provider(
    value: Any, overrides: Mapping[str, Any]
) -> tuple[ComponentSpec | None, str, int]:
    """The provider component, its model (what ``models`` defaults to) and its port; ``--provider`` replaces the section."""
    found: ProviderSection | None = None if value is _FAILED else value
    if overrides.get("provider") and value is not _FAILED:
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
    value: Any, overrides: Mapping[str, Any], problems: _Problems
) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """The modes to run (``--mode`` wins over the profile) and the ``modes:`` mapping when the profile spells them out."""
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
            f"unknown mode(s) {', '.join(unknown)}{did_you_mean(unknown, modes)} (profile has: {', '.join(modes)})",
        )
    return wanted, mode_specs


def _mode_resolver(
    sections: Mapping[str, Any], mode_specs: dict[str, Any] | None, problems: _Problems
) -> ComponentSpec | None:
    """The ``mode_resolver`` section; the ``config`` resolver (given the mapping) when ``modes`` is a mapping."""
    value = sections["mode_resolver"]
    resolver: ComponentSpec | None = None if value is _FAILED else value
    if resolver is None and mode_specs is not None:
        resolver = ComponentSpec(id="config")
    if resolver is None and sections["modes"] is not _FAILED and value is not _FAILED:
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
    """The ``judge`` section as a component; its ``model``, when the profile gives one, is one of its options."""
    if section is None:
        return None
    options = section.options
    if "model" in (raw or {}):
        options = {"model": section.model, **options}
    return ComponentSpec(id=section.id, options=options)


def _scenarios(
    value: Any,
    base_dir: Path,
    execution: ExecutionConfig,
    overrides: Mapping[str, Any],
    problems: _Problems,
    registry: Registry | None,
) -> tuple[list[Scenario], str | None, str | None, list[str]]:
    """The scenarios to run, their folder, the set they were chosen by (``--scenario``, ``--scenario-set`` win),
    and one line per scenario folder left out."""
    if value is _FAILED:
        return [], None, None, []
    scenarios_path = _resolve(base_dir, value.path)
    ids = list(value.ids) if value.ids is not None else None
    scenario_set = value.set
    if overrides.get("scenario_ids"):
        ids = list(overrides["scenario_ids"])
    if overrides.get("scenario_set"):
        scenario_set, ids = overrides["scenario_set"], None
    if overrides.get("dataset") or value.dataset:
        return _dataset_scenarios(
            value, base_dir, execution, overrides, problems, ids, scenario_set
        )
    scenario_format = _scenario_format(value.format, problems, registry)
    folder = Path(scenarios_path)
    if (
        value.format not in (None, CORE_SCENARIO_FORMAT, HARBOR_SCENARIO_FORMAT)
        and scenario_format is None
    ):
        return (
            [],
            scenarios_path,
            scenario_set,
            [],
        )  # files of an unknown format: nothing more to say about them
    if not folder.is_dir():
        problems.add("scenarios.path", f"scenario folder {folder} does not exist")
        return [], scenarios_path, scenario_set, []
    left_out: list[str] = []
    known: set[str] | None = None
    if value.format == HARBOR_SCENARIO_FORMAT:
        scenario_problems: list[str] = []
        found, sets, unloadable, left_out, known = _harbor_scenarios(
            folder, execution, ids, scenario_set, scenario_problems
        )
    else:
        found, sets, scenario_problems, unloadable = load_scenarios(
            folder,
            timeout_default_ms=execution.timeout_default_ms,
            allowed_retries=execution.allowed_retries,
            scenario_format=scenario_format,
        )
    problems.items.extend(scenario_problems)
    scenarios, select_problems = select_scenarios(
        found,
        sets,
        ids=tuple(ids) if ids else None,
        set_name=scenario_set,
        unloadable=unloadable,
        ids_from="--scenario" if overrides.get("scenario_ids") else "scenarios.ids",
        set_from="--scenario-set" if overrides.get("scenario_set") else "scenarios.set",
        known=known,
    )
    for p in select_problems:
        problems.add("", p)
    if not scenarios and left_out and not select_problems:
        # Every selected folder was left out: nothing would run, so their lines refuse the profile.
        problems.items.extend(left_out)
        left_out = []
    elif not scenarios and not select_problems and not scenario_problems:
        hint = ""
        if value.format != HARBOR_SCENARIO_FORMAT and (folder / "task.toml").is_file():
            hint = f"; it is a Harbor task (task.toml): add `format: {HARBOR_SCENARIO_FORMAT}` under scenarios (docs/harbor.md)"
        elif value.format != HARBOR_SCENARIO_FORMAT and any(folder.glob("*/task.toml")):
            hint = f"; its folders hold Harbor tasks (task.toml): add `format: {HARBOR_SCENARIO_FORMAT}` under scenarios (docs/harbor.md)"
        problems.add(
            "scenarios.path", f"no scenario files (*.json, *.yaml) in {folder}{hint}"
        )
    return scenarios, scenarios_path, scenario_set, left_out


def _dataset_scenarios(
    value: Any,
    base_dir: Path,
    execution: ExecutionConfig,
    overrides: Mapping[str, Any],
    problems: _Problems,
    ids: list[str] | None,
    scenario_set: str | None,
) -> tuple[list[Scenario], str | None, str | None, list[str]]:
    """``scenarios: {dataset: NAME@VERSION}`` (or ``--dataset``): a Harbor dataset's tasks, fetched by git (config/datasets.py).

    A task that does not load is left out with its line, as a folder of tasks is, unless none loads."""
    from .datasets import load_dataset

    registry = overrides.get("registry") or (
        value.registry and _registry_source(base_dir, value.registry)
    )
    try:
        found, task_problems, unloadable, where = load_dataset(
            overrides.get("dataset") or value.dataset,
            registry,
            timeout_default_ms=execution.timeout_default_ms,
            allowed_retries=execution.allowed_retries,
        )
    except ProfilerError as exc:
        problems.add("scenarios.dataset", str(exc))
        return [], None, scenario_set, []
    left_out = list(task_problems) if found else []
    if not found:
        problems.items.extend(task_problems)
    scenarios, select_problems = select_scenarios(
        found,
        ScenarioSets(),
        ids=tuple(ids) if ids else None,
        set_name=scenario_set,
        unloadable=unloadable,
        ids_from="--scenario" if overrides.get("scenario_ids") else "scenarios.ids",
        set_from="--scenario-set" if overrides.get("scenario_set") else "scenarios.set",
    )
    for p in select_problems:
        problems.add("", p)
    return scenarios, where, scenario_set, left_out


def _registry_source(base_dir: Path, registry: str) -> str:
    """A registry URL as it is; a file path relative to the profile's folder."""
    return registry if "://" in registry else _resolve(base_dir, registry)

"""Scenario files: loading a folder (or a Harbor dataset), its sets, selecting what runs."""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError, ProfilerError
from ..model import Scenario, ScenarioSets, VerifierSpec, WorkspaceSpec
from ..storage.datafile import read_data_file
from ..storage.paths import scenario_id_problem
from ..storage.serde import structure
from .problems import FAILED, Problems, did_you_mean
from .schema import DEFAULT_TIMEOUT_MS, ExecutionConfig

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import ScenarioFormat
    from ..plugins.manager import Registry

SCENARIO_SUFFIXES = (".json", ".yaml", ".yml")
SCENARIO_SETS_FILE = "scenario-sets.json"
#: ``scenarios.format`` of the core layout (the default)
CORE_SCENARIO_FORMAT = "profiler"
#: ``scenarios.format`` of Harbor task directories (docs/harbor.md)
HARBOR_SCENARIO_FORMAT = "harbor"


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
    reader = _ScenarioFiles(
        folder,
        scenario_format,
        {"timeoutMs": timeout_default_ms, "allowedRetries": allowed_retries},
    )
    for path in sorted(folder.iterdir()):
        if (
            path.name == SCENARIO_SETS_FILE
            or path.suffix not in SCENARIO_SUFFIXES
            or not path.is_file()
        ):
            continue
        reader.file(path)
    problems = reader.problems
    return reader.scenarios, _load_sets(folder, problems), problems, reader.unloadable


@attrs.define
class _ScenarioFiles:
    """The scenarios of a folder's files as they are read, and what could not be used."""

    folder: Path
    scenario_format: ScenarioFormat | None
    #: what a core scenario file may leave out: the profile's timeout and retries
    defaults: dict[str, Any]
    problems: list[str] = attrs.Factory(list)
    scenarios: list[Scenario] = attrs.Factory(list)
    #: the ids (or file stems) of the scenarios that failed to load
    unloadable: set[str] = attrs.Factory(set)
    seen: dict[str, Path] = attrs.Factory(dict)

    def file(self, path: Path) -> None:
        """One scenario file: one scenario, or a list of them."""
        try:
            data = read_data_file(path)
        except ProfilerError as exc:
            self.problems.append(str(exc))
            self.unloadable.add(path.stem)
            return
        if not isinstance(data, list):
            self._item(data, str(path), path)
            return
        for index, item in enumerate(data):
            self._item(item, f"{path}[{index}]", path)

    def _item(self, item: Any, where: str, path: Path) -> None:
        if not isinstance(item, dict):
            self.problems.append(
                f"{where}: expected a scenario object, got {type(item).__name__}"
            )
            self.unloadable.add(path.stem)
            return
        try:
            scenario = self._parse(item, where)
        except ProfilerError as exc:
            self.problems.append(str(exc))
            stated = item.get("id")
            if isinstance(stated, str) and stated:
                self.unloadable.add(stated)
            else:
                self.unloadable.add(path.stem)
            return
        try:
            scenario = resolve_task_paths(scenario, path.parent, self.folder, where)
        except ProfilerError as exc:
            self.problems.append(str(exc))
            self.unloadable.add(scenario.id)
            return
        self._add(scenario, where, path)

    def _parse(self, item: dict[str, Any], where: str) -> Scenario:
        if self.scenario_format is not None:
            return _parse_with(self.scenario_format, item, where)
        return structure({**self.defaults, **item}, Scenario, source=where)

    def _add(self, scenario: Scenario, where: str, path: Path) -> None:
        """Keep the scenario unless its id is malformed or taken."""
        if (bad_id := scenario_id_problem(scenario.id)) is not None:
            self.problems.append(f"{where}: $.id: {bad_id}")
            self.unloadable.add(scenario.id)
            return
        if scenario.id in self.seen:
            self.problems.append(
                f"{where}: $.id: duplicate scenario id {scenario.id!r} (also in "
                f"{self.seen[scenario.id]})"
            )
            return
        self.seen[scenario.id] = path
        self.scenarios.append(scenario)


def _no_harbor_tasks(folder: Path) -> str:
    return f"{folder}: no Harbor tasks (folders with task.toml and instruction.md)"


def _harbor_scenarios(
    folder: Path,
    execution: ExecutionConfig,
    ids: list[str] | None,
    scenario_set: str | None,
    problems: list[str],
) -> tuple[list[Scenario], ScenarioSets, set[str], list[str], set[str]]:
    """A folder of Harbor tasks: the scenarios, the sets, the ids left out, one line per
    folder left out, every task's id.

    Only the selected folders (``ids``, else the set's) are read. A folder that is not a
    valid task, or not one this runner runs yet (``harbor.not_run_yet``), is left out
    with its line instead of refusing the dataset; ``problems`` gets the lines that do
    refuse it (no tasks, a bad sets file).
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
                read_data_file(sets_path), ScenarioSets, source=str(sets_path)
            )
        except ProfilerError as exc:
            problems.append(str(exc))
    return ScenarioSets()


def sandbox_needed(scenarios: list[Scenario] | tuple[Scenario, ...]) -> str | None:
    """Why ``execution.sandbox: none`` cannot run these scenarios (paths inside a
    sandbox), else None."""
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


def _resolve_workspace(
    workspace: WorkspaceSpec | None, source_dir: Path, root: Path, where: str
) -> WorkspaceSpec | None:
    """A workspace folder made absolute (inside ``root``); a local git repository too."""
    if workspace is None:
        return None
    if workspace.path is not None:
        folder = _inside_root(
            source_dir, workspace.path, root, f"{where}: $.workspace.path"
        )
        if not folder.is_dir():
            raise ConfigError(
                f"{where}: $.workspace.path: {workspace.path!r} is not a folder"
            )
        return attrs.evolve(workspace, path=str(folder))
    git = workspace.git
    if git is None or "://" in git or git.startswith("git@"):
        return workspace
    repository = (source_dir / git).resolve()
    if not repository.exists():
        raise ConfigError(f"{where}: $.workspace.git: {git!r}: no such repository")
    return attrs.evolve(workspace, git=str(repository))


def _resolve_verifier(
    verifier: VerifierSpec, where: str, source_dir: Path, root: Path
) -> VerifierSpec:
    """A verifier's files and mounts made absolute; each must lie inside ``root``."""
    files = {}
    for destination, source in verifier.files.items():
        key = f"{where}.files.{destination}"
        if Path(destination).is_absolute() or ".." in Path(destination).parts:
            raise ConfigError(
                f"{key}: expected a path inside the workspace, got {destination!r}"
            )
        found = _inside_root(source_dir, source, root, key)
        if not found.exists():
            raise ConfigError(f"{key}: {source!r}: no such file or folder")
        files[destination] = str(found)
    mounts = _resolve_sources(verifier.mounts, source_dir, root, f"{where}.mounts")
    return attrs.evolve(verifier, files=files, mounts=mounts)


def resolve_task_paths(
    scenario: Scenario, source_dir: Path, root: Path, where: str
) -> Scenario:
    """``scenario`` with its workspace folder and verifier files made absolute; each
    must lie inside ``root``.

    A git workspace may name any local repository (or a URL): it is only read.
    """
    workspace = _resolve_workspace(scenario.workspace, source_dir, root, where)
    verifiers = [
        _resolve_verifier(verifier, f"{where}: $.verify[{index}]", source_dir, root)
        for index, verifier in enumerate(scenario.verify)
    ]
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
    """``mounts`` (inside path -> source) with each source made absolute; each must
    exist inside ``root``."""
    resolved = {}
    for target, source in mounts.items():
        found = _inside_root(source_dir, source, root, f"{key}.{target}")
        if not found.exists():
            raise ConfigError(f"{key}.{target}: {source!r}: no such file or folder")
        resolved[target] = str(found)
    return resolved


def _inside_root(source_dir: Path, relative: str, root: Path, key: str) -> Path:
    """``source_dir/relative``, resolved; a path leaving ``root`` (``..``, an absolute
    path, a symlink) is refused."""
    target = (source_dir / relative).resolve()
    top = root.resolve()
    if target != top and top not in target.parents:
        raise ConfigError(f"{key}: {relative!r} is outside the scenario folder {root}")
    return target


def _parse_with(
    scenario_format: ScenarioFormat, item: dict[str, Any], where: str
) -> Scenario:
    """A plugin format's scenario; anything but a ``ProfilerError`` or a ``Scenario``
    names the format."""
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
            f"{where}: scenario format {scenario_format.id!r} returned "
            f"{type(scenario).__name__}, not a Scenario"
        )
    return scenario


def _scenario_format(
    name: str | None, problems: Problems, registry: Registry | None
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
    """Pick the scenarios to run: ``ids`` (in their order) wins over ``set``; else all,
    sorted by id.

    Ids in ``unloadable`` (their file's problem is already reported) are not called
    unknown. ``ids_from``/``set_from`` name where the ids or the set came from
    (``--scenario`` on the command line). ``known``: every id there is, when only the
    wanted ones were loaded (what an unknown id is compared with).
    """
    by_id = {s.id: s for s in scenarios}
    if ids:
        wanted, source = list(ids), ids_from
    elif set_name:
        if set_name not in sets.sets:
            defined = ", ".join(sorted(sets.sets)) or "none defined"
            return [], [
                f"{set_from}: unknown scenario set "
                f"{set_name!r}{did_you_mean([set_name], sets.sets)} (sets: {defined})"
            ]
        wanted, source = list(sets.sets[set_name]), f"scenario set {set_name!r}"
    else:
        return sorted(scenarios, key=lambda s: s.id), []
    # An id that failed to load is reported with its file's problem, not as unknown.
    every = set(known) if known is not None else set(by_id)
    seen = every | set(by_id) | set(unloadable)
    missing = [i for i in wanted if i not in seen]
    if missing:
        names = sorted(every)
        hint = did_you_mean(missing, names)
        return [], [
            f"{source}: unknown scenario id(s) {', '.join(missing)}{hint} (found: "
            f"{', '.join(names) or 'none'})"
        ]
    return [by_id[i] for i in dict.fromkeys(wanted) if i in by_id], []


def resolve_path(base_dir: Path, path: str) -> str:
    """A path of the profile (``~`` expanded, relative to the profile's folder), absolute."""
    return str((base_dir / os.path.expanduser(path)).resolve())


@attrs.define
class _Loaded:
    """A scenario folder as read: its scenarios and sets, and what could not be used."""

    found: list[Scenario]
    sets: ScenarioSets
    problems: list[str]
    unloadable: set[str]
    #: one line per (Harbor) folder left out
    left_out: list[str] = attrs.Factory(list)
    #: every Harbor task's id (None: the ids of ``found``)
    known: set[str] | None = None


def scenarios_section(
    value: Any,
    base_dir: Path,
    execution: ExecutionConfig,
    overrides: Mapping[str, Any],
    problems: Problems,
    registry: Registry | None,
) -> tuple[list[Scenario], str | None, str | None, list[str]]:
    """The scenarios to run, their folder, the set they were chosen by (``--scenario``,
    ``--scenario-set`` win), and one line per scenario folder left out."""
    if value is FAILED:
        return [], None, None, []
    scenarios_path = resolve_path(base_dir, value.path)
    ids, scenario_set = _selection(value, overrides)
    if overrides.get("dataset") or value.dataset:
        return _dataset_scenarios(
            value, base_dir, execution, overrides, problems, ids, scenario_set
        )
    scenario_format = _scenario_format(value.format, problems, registry)
    folder = Path(scenarios_path)
    known_format = value.format in (None, CORE_SCENARIO_FORMAT, HARBOR_SCENARIO_FORMAT)
    if not known_format and scenario_format is None:
        # Files of an unknown format: nothing more to say about them.
        return [], scenarios_path, scenario_set, []
    if not folder.is_dir():
        problems.add("scenarios.path", f"scenario folder {folder} does not exist")
        return [], scenarios_path, scenario_set, []
    loaded = _load_folder(
        folder, value.format, scenario_format, execution, ids, scenario_set
    )
    problems.items.extend(loaded.problems)
    scenarios, select_problems = _select(loaded, ids, scenario_set, overrides)
    for p in select_problems:
        problems.add("", p)
    left_out = loaded.left_out
    if scenarios or select_problems:
        return scenarios, scenarios_path, scenario_set, left_out
    if left_out:
        # Every selected folder was left out: nothing would run, so their lines refuse the profile.
        problems.items.extend(left_out)
        left_out = []
    elif not loaded.problems:
        hint = _harbor_hint(folder) if value.format != HARBOR_SCENARIO_FORMAT else ""
        problems.add(
            "scenarios.path", f"no scenario files (*.json, *.yaml) in {folder}{hint}"
        )
    return scenarios, scenarios_path, scenario_set, left_out


def _load_folder(
    folder: Path,
    value_format: str | None,
    scenario_format: ScenarioFormat | None,
    execution: ExecutionConfig,
    ids: list[str] | None,
    scenario_set: str | None,
) -> _Loaded:
    """Read the folder: its Harbor tasks (only the selected ones), else its scenario files."""
    if value_format == HARBOR_SCENARIO_FORMAT:
        problems: list[str] = []
        found, sets, unloadable, left_out, known = _harbor_scenarios(
            folder, execution, ids, scenario_set, problems
        )
        return _Loaded(found, sets, problems, unloadable, left_out, known)
    found, sets, problems, unloadable = load_scenarios(
        folder,
        timeout_default_ms=execution.timeout_default_ms,
        allowed_retries=execution.allowed_retries,
        scenario_format=scenario_format,
    )
    return _Loaded(found, sets, problems, unloadable)


def _select(
    loaded: _Loaded,
    ids: list[str] | None,
    scenario_set: str | None,
    overrides: Mapping[str, Any],
) -> tuple[list[Scenario], list[str]]:
    """The scenarios chosen by ids or set; the problems name the option that chose them."""
    return select_scenarios(
        loaded.found,
        loaded.sets,
        ids=tuple(ids) if ids else None,
        set_name=scenario_set,
        unloadable=loaded.unloadable,
        ids_from="--scenario" if overrides.get("scenario_ids") else "scenarios.ids",
        set_from="--scenario-set" if overrides.get("scenario_set") else "scenarios.set",
        known=loaded.known,
    )


def _selection(
    value: Any, overrides: Mapping[str, Any]
) -> tuple[list[str] | None, str | None]:
    """The scenario ids and set asked for: ``--scenario`` and ``--scenario-set`` win."""
    ids = list(value.ids) if value.ids is not None else None
    scenario_set = value.set
    if overrides.get("scenario_ids"):
        ids = list(overrides["scenario_ids"])
    if overrides.get("scenario_set"):
        scenario_set, ids = overrides["scenario_set"], None
    return ids, scenario_set


def _harbor_hint(folder: Path) -> str:
    """Why a folder without scenario files may be Harbor tasks, and what to write."""
    if (folder / "task.toml").is_file():
        what = "it is a Harbor task (task.toml)"
    elif any(folder.glob("*/task.toml")):
        what = "its folders hold Harbor tasks (task.toml)"
    else:
        return ""
    return f"; {what}: add `format: {HARBOR_SCENARIO_FORMAT}` under scenarios (docs/harbor.md)"


def _dataset_scenarios(
    value: Any,
    base_dir: Path,
    execution: ExecutionConfig,
    overrides: Mapping[str, Any],
    problems: Problems,
    ids: list[str] | None,
    scenario_set: str | None,
) -> tuple[list[Scenario], str | None, str | None, list[str]]:
    """``scenarios: {dataset: NAME@VERSION}`` (or ``--dataset``): a Harbor dataset's
    tasks, fetched by git (config/datasets.py).

    A task that does not load is left out with its line, as a folder of tasks is, unless
    none loads."""
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
    return registry if "://" in registry else resolve_path(base_dir, registry)

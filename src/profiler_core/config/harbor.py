"""Harbor task directories as scenarios: ``scenarios: {path: tasks, format: harbor}``
(docs/harbor.md).

Each folder of ``path`` holding a ``task.toml`` is one task (``path`` may
also be one task's own folder). It becomes a :class:`Scenario`:

- the folder's name is its id; ``instruction.md`` (its canary lines left
  out) is the prompt;
- ``[agent].timeout_sec`` its timeout (else the profile's default);
  ``[agent].user`` and its network policy; ``[task].keywords`` and
  ``[metadata].tags`` its tags; ``[metadata]`` (and ``[task]``) under
  ``extensions["harbor"]``;
- ``environment/`` (without its ``Dockerfile`` and compose file) the
  workspace; the Dockerfile (or ``docker_image``) is the task's image, with
  ``[environment]`` ``env``, ``workdir``, ``cpus``, ``memory_mb``,
  ``storage_mb``, ``os`` and its network policy; ``environment/docker-compose.yaml``
  makes it a compose task;
- ``tests/test.sh`` the verifier, with ``tests/`` at ``/tests`` and its
  folder at ``/logs/verifier``, judged by the reward it writes there
  (``[verifier]`` ``timeout_sec``, ``env``, ``user``, network policy, and
  ``environment_mode = "separate"``);
- ``solution/solve.sh`` the reference solution the ``oracle`` provider runs,
  with ``solution/`` at ``/solution`` (``[solution].env``);
- ``[[steps]]`` with ``steps/<name>/`` the steps of a multi-step task.

Every problem is one line naming the file and the field; a folder with one is
left out of the dataset (``load_tasks``), never the whole dataset refused.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..model import (
    Scenario,
    SolutionSpec,
    StepSpec,
    TaskEnvironment,
    VerifierSpec,
    WorkspaceSpec,
)
from ..storage.paths import scenario_id_problem
from .harbor_fields import (
    expand_env,
    has_templates,
    milliseconds,
    network_policy,
    positive,
    read_env,
    size_mb,
    strings,
    strip_canary,
    table,
    text,
)

__all__ = [
    "HARBOR_FORMAT",
    "dockerfile_workdir",
    "expand_env",
    "load_task",
    "load_tasks",
    "not_run_yet",
    "strip_canary",
    "task_folders",
]

#: ``scenarios.format`` of Harbor task directories
HARBOR_FORMAT = "harbor"
#: Harbor's default agent, verifier and build timeouts (seconds) when ``task.toml`` gives none
HARBOR_DEFAULT_TIMEOUT_S = 600.0
#: where Harbor shows a task's tests, its verifier's folder and its solution inside the environment
TESTS_INSIDE, LOGS_INSIDE, SOLUTION_INSIDE = "/tests", "/logs/verifier", "/solution"
#: the one compose file name that makes a compose task (Harbor's; a
#: ``docker-compose.yml`` is just a file)
COMPOSE_FILE = "docker-compose.yaml"
#: ``[verifier].environment_mode`` values
VERIFIER_MODES = ("shared", "separate")
#: ``multi_step_reward_strategy`` values (Harbor's; ``mean`` when a multi-step task gives none)
REWARD_STRATEGIES = ("mean", "final")
#: the sections of ``task.toml`` read here
SECTIONS = ("task", "metadata", "agent", "verifier", "environment", "solution")


def load_tasks(
    folder: Path,
    *,
    timeout_default_ms: int,
    allowed_retries: int = 0,
    only: Collection[str] | None = None,
) -> tuple[list[Scenario], list[str], set[str]]:
    """The tasks of ``folder`` (or ``folder`` itself, when it is one): scenarios, one
    line per folder left out, their ids.

    ``only``: the ids wanted; other folders are not even read (a broken folder nobody
    selected says nothing).
    """
    scenarios: list[Scenario] = []
    left_out: list[str] = []
    failed: set[str] = set()
    for task in task_folders(folder):
        if only is not None and task.name not in only:
            continue
        try:
            scenarios.append(
                load_task(
                    task,
                    timeout_default_ms=timeout_default_ms,
                    allowed_retries=allowed_retries,
                )
            )
        except ConfigError as exc:
            left_out.append(str(exc))
            failed.add(task.name)
    return scenarios, left_out, failed


def task_folders(folder: Path) -> list[Path]:
    """``folder`` when it is a task, else its sub-folders that look like tasks
    (Terminal-Bench's too, to say so)."""
    markers = ("task.toml", "instruction.md", "task.yaml")
    if any((folder / name).is_file() for name in markers):
        return [folder]
    return [
        d
        for d in sorted(folder.iterdir())
        if d.is_dir() and any((d / name).is_file() for name in markers)
    ]


def load_task(
    task: Path, *, timeout_default_ms: int, allowed_retries: int = 0
) -> Scenario:
    """One Harbor task folder as a scenario; ``ConfigError`` (one line: file and field)
    when it is not one."""
    config_file = task / "task.toml"
    if not config_file.is_file():
        if (task / "task.yaml").is_file():
            raise ConfigError(
                f"{task / 'task.yaml'}: a Terminal-Bench task; convert it with "
                "`harbor tasks migrate` (Harbor's task.toml is expected)"
            )
        raise ConfigError(f"{config_file}: missing (a Harbor task needs its task.toml)")
    data = _read_toml(config_file)
    if (problem := scenario_id_problem(task.name)) is not None:
        raise ConfigError(f"{task}: the folder's name is the scenario id: {problem}")
    sections = {name: table(data, name, config_file) for name in SECTIONS}
    meta, info, agent = sections["metadata"], sections["task"], sections["agent"]
    tags = [
        *strings(info, "keywords", config_file, "[task]"),
        *strings(meta, "tags", config_file, "[metadata]"),
    ]
    environment, workspace = _environment(task, config_file, sections["environment"])
    strategy = _reward_strategy(data, config_file)
    steps = _steps(task, config_file, data, sections)
    verify = (
        ()
        if steps
        else (
            _verifier(task, config_file, sections["verifier"], sections["environment"]),
        )
    )
    solution = (
        None
        if steps
        else _solution(task, "solution", config_file, sections["solution"])
    )
    return Scenario(
        id=task.name,
        name=text(info, "name", config_file, "[task]") or task.name,
        description=text(info, "description", config_file, "[task]")
        or text(meta, "description", config_file, "[metadata]")
        or "",
        prompt=_prompt(task, steps),
        timeout_ms=milliseconds(agent, config_file, "[agent]", timeout_default_ms),
        allowed_retries=allowed_retries,
        tags=tuple(dict.fromkeys(tags)),
        extensions={
            "harbor": _json_safe(
                {
                    "version": data.get("schema_version", data.get("version")),
                    "task": info,
                    "metadata": meta,
                }
            )
        },
        workspace=workspace,
        environment=environment,
        verify=verify,
        solution=solution,
        agent_user=_user(agent, config_file, "[agent]"),
        agent_policy=network_policy(agent, config_file, "[agent]"),
        steps=steps,
        reward_strategy=strategy if steps else None,
        artifacts=_artifacts(data, config_file),
    )


def not_run_yet(scenario: Scenario) -> str | None:
    """What the runner cannot run of a task that parses: ``<file in the task folder>:
    <why>``, else None.

    Tasks for another OS are read into the model; the loader leaves them out with this line.
    (A compose task that cannot run here, under another kind or without Compose v2, is its
    cells' set-up error: runner/trial_compose.py.)
    """
    env = scenario.environment
    if env is not None and env.os != "linux":
        return f"task.toml: [environment].os: only Linux tasks run here, got {env.os!r}"
    return None


def dockerfile_workdir(dockerfile: Path) -> str | None:
    """The Dockerfile's last absolute ``WORKDIR`` without variables (where the workspace
    appears), else None."""
    found = None
    for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.split()
        if (
            len(words) == 2
            and words[0].upper() == "WORKDIR"
            and words[1].startswith("/")
            and "$" not in words[1]
        ):
            found = words[1].rstrip("/") or None
    return found


# -- the parts ------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}"
        ) from None


def _prompt(task: Path, steps: tuple[StepSpec, ...]) -> str:
    """``instruction.md``; a multi-step task's is optional (Harbor ignores it): then its
    first step's."""
    if steps and not (task / "instruction.md").exists():
        return steps[0].prompt
    return _instruction(task / "instruction.md")


def _instruction(path: Path) -> str:
    """An instruction file's text without its canary lines; one line when missing or empty."""
    if not path.is_file():
        raise ConfigError(
            f"{path}: missing (the task's instruction, given to the agent as its prompt)"
        )
    try:
        found = strip_canary(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if not found.strip():
        raise ConfigError(
            f"{path}: empty (the task's instruction, given to the agent as its prompt)"
        )
    return found


def _part(task: Path, name: str) -> Path | None:
    """``task/name`` resolved, when it exists; one that leads out of the task folder (a
    symlink) is refused."""
    path = task / name
    if not path.exists() and not path.is_symlink():
        return None
    resolved = path.resolve()
    top = task.resolve()
    if top not in resolved.parents:
        raise ConfigError(
            f"{path}: leads outside the task folder {task} (to {resolved})"
        )
    return resolved


def _user(values: dict[str, Any], path: Path, section: str) -> str | None:
    """``user``: a name or a numeric id (as a string)."""
    value = values.get("user")
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (str, int))
        or value == ""
        or (isinstance(value, int) and value < 0)
    ):
        raise ConfigError(
            f"{path}: {section}.user: expected a user name or id, got {value!r}"[:300]
        )
    return str(value)


def _os(values: dict[str, Any], path: Path, section: str) -> str:
    value = values.get("os", "linux")
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{path}: {section}.os: expected linux or windows, got {value!r}"[:300]
        )
    return value.strip().lower()


def _environment(
    task: Path, config_file: Path, values: dict[str, Any]
) -> tuple[TaskEnvironment | None, WorkspaceSpec | None]:
    folder = _part(task, "environment")
    if folder is not None and not folder.is_dir():
        raise ConfigError(f"{task / 'environment'}: expected a folder")
    environment = _task_environment(folder, config_file, values, "[environment]")
    if folder is None:
        return environment, None
    exclude: tuple[str, ...] = ()
    if environment is not None and (environment.dockerfile or environment.image):
        exclude += ("Dockerfile",)
    if environment is not None and environment.compose:
        exclude += (COMPOSE_FILE,)
    # Without an image nothing of the folder is built: all of it is the workspace.
    return environment, WorkspaceSpec(path=str(folder), exclude=exclude)


def _task_environment(
    folder: Path | None, config_file: Path, values: dict[str, Any], section: str
) -> TaskEnvironment | None:
    """An environment table (and its folder): None when it says nothing a runtime needs."""
    image = text(values, "docker_image", config_file, section)
    dockerfile = (
        folder / "Dockerfile"
        if folder is not None and (folder / "Dockerfile").is_file()
        else None
    )
    compose = (
        folder / COMPOSE_FILE
        if folder is not None and (folder / COMPOSE_FILE).is_file()
        else None
    )
    workdir = text(values, "workdir", config_file, section)
    if workdir is not None and (
        not workdir.startswith("/")
        or ".." in workdir.split("/")
        or workdir.rstrip("/") == ""
    ):
        raise ConfigError(
            f"{config_file}: {section}.workdir: expected an absolute path (not "
            f"/ and without ..), got {workdir!r}"[:300]
        )
    found = TaskEnvironment(
        dockerfile=str(dockerfile) if dockerfile else None,
        image=image,
        workdir=(workdir.rstrip("/") if workdir else None)
        or (dockerfile_workdir(dockerfile) if dockerfile else None),
        build_timeout_ms=milliseconds(
            values,
            config_file,
            section,
            round(HARBOR_DEFAULT_TIMEOUT_S * 1000),
            "build_timeout_sec",
        ),
        env=read_env(values, config_file, section),
        cpus=positive(values, "cpus", config_file, section),
        memory_mb=size_mb(values, "memory", config_file, section),
        storage_mb=size_mb(values, "storage", config_file, section),
        network=network_policy(values, config_file, section, baseline=True),
        compose=str(compose) if compose else None,
        os=_os(values, config_file, section),
    )
    return None if found == TaskEnvironment() else found


def _verifier(
    task: Path,
    config_file: Path,
    values: dict[str, Any],
    environment: dict[str, Any],
    step: Path | None = None,
) -> VerifierSpec:
    """``tests/test.sh`` (a step's own ``steps/<name>/tests/``, else the task's) judged
    by its reward."""
    section = (
        f"[[steps]] {step.name!r} [steps.verifier]"
        if step is not None
        else "[verifier]"
    )
    separate = _separate(task, config_file, values, environment, section, step)
    own_tests = _part(task, f"steps/{step.name}/tests") if step is not None else None
    task_tests = _part(task, "tests")
    tests = own_tests or task_tests
    if separate is None and (tests is None or not (tests / "test.sh").is_file()):
        where = (
            f"{task / 'steps' / step.name / 'tests' / 'test.sh'} (or {task / 'tests' / 'test.sh'})"
            if step
            else task / "tests" / "test.sh"
        )
        raise ConfigError(f"{where}: missing (the task's verifier)")
    env = read_env(values, config_file, section)
    return VerifierSpec(
        name="tests",
        command=f"bash {TESTS_INSIDE}/test.sh",
        timeout_ms=milliseconds(
            values, config_file, section, round(HARBOR_DEFAULT_TIMEOUT_S * 1000)
        ),
        env=env,
        mounts={TESTS_INSIDE: str(tests)} if tests is not None else {},
        logs_dir=LOGS_INSIDE,
        passed_by="reward",
        # a step's own tests/ goes over the task's, as Harbor uploads them
        # (src/harbor/verifier/verifier.py)
        base_mounts={TESTS_INSIDE: str(task_tests)}
        if own_tests is not None and task_tests is not None and task_tests.is_dir()
        else {},
        user=_user(values, config_file, section),
        policy=network_policy(values, config_file, section),
        separate=separate,
        env_templates=has_templates(env),
    )


def _separate(
    task: Path,
    config_file: Path,
    values: dict[str, Any],
    environment: dict[str, Any],
    section: str,
    step: Path | None,
) -> TaskEnvironment | None:
    """The verifier's own environment when it has one (``environment_mode = "separate"``
    or a ``[verifier.environment]``).

    As Harbor: its definition is ``[verifier.environment]``, else a copy of
    ``[environment]``; its build
    context is ``tests/`` (a step's own ``tests/`` first), so ``tests/Dockerfile`` is its image.
    """
    mode = values.get("environment_mode")
    if mode is not None and mode not in VERIFIER_MODES:
        raise ConfigError(
            f"{config_file}: {section}.environment_mode: expected shared or separate, got {mode!r}"[
                :300
            ]
        )
    own = values.get("environment")
    if own is not None and not isinstance(own, dict):
        raise ConfigError(
            f"{config_file}: {section}.environment: expected a table, got {type(own).__name__}"
        )
    if mode == "shared" and own is not None:
        raise ConfigError(
            f"{config_file}: {section}.environment_mode: a shared verifier "
            "cannot have a [verifier.environment]"
        )
    if mode != "separate" and own is None:
        return None
    context = (
        _part(task, f"steps/{step.name}/tests") if step is not None else None
    ) or _part(task, "tests")
    found = _task_environment(
        context,
        config_file,
        own if own is not None else environment,
        f"{section[:-1]}.environment]",
    )
    return found if found is not None else TaskEnvironment()


def _solution(
    task: Path, relative: str, config_file: Path, values: dict[str, Any]
) -> SolutionSpec | None:
    """``<relative>/solve.sh`` of the task (``solution``, or a step's
    ``steps/<name>/solution``), with ``[solution].env``."""
    found = _part(task, relative)
    if found is None or not (found / "solve.sh").is_file():
        return None
    env = read_env(values, config_file, "[solution]")
    return SolutionSpec(
        command=f"bash {SOLUTION_INSIDE}/solve.sh",
        env=env,
        mounts={SOLUTION_INSIDE: str(found)},
        env_templates=has_templates(env),
    )


def _steps(
    task: Path,
    config_file: Path,
    data: dict[str, Any],
    sections: dict[str, dict[str, Any]],
) -> tuple[StepSpec, ...]:
    """``[[steps]]`` (``steps = []`` is a single-step task), each from ``steps/<name>/``
    as Harbor lays them out."""
    listed = data.get("steps")
    if listed is None or listed == []:
        return ()
    if not isinstance(listed, list) or not all(isinstance(s, dict) for s in listed):
        raise ConfigError(
            f"{config_file}: [[steps]]: expected an array of tables, got {listed!r}"[
                :300
            ]
        )
    steps: list[StepSpec] = []
    for index, step in enumerate(listed):
        name = _step_name(step, index, steps, config_file)
        steps.append(_step(task, config_file, name, step, sections))
    return tuple(steps)


def _step_name(
    step: dict[str, Any], index: int, steps: list[StepSpec], config_file: Path
) -> str:
    """A step's ``name``: a folder name under ``steps/``, given once."""
    name = step.get("name")
    if not isinstance(name, str) or scenario_id_problem(name) is not None:
        raise ConfigError(
            f"{config_file}: [[steps]] #{index + 1}.name: expected a folder "
            f"name under steps/ (letters, digits, ., _, -), got {name!r}"[:300]
        )
    if any(s.name == name for s in steps):
        raise ConfigError(
            f"{config_file}: [[steps]] #{index + 1}.name: {name!r} is given twice"
        )
    return name


def _step(
    task: Path,
    config_file: Path,
    name: str,
    step: dict[str, Any],
    sections: dict[str, dict[str, Any]],
) -> StepSpec:
    """One step, from its table and its folder ``steps/<name>/``."""
    min_reward = _min_reward(
        step.get("min_reward"), config_file, f"[[steps]] {name!r} min_reward"
    )
    folder = task / "steps" / name
    if _part(task, f"steps/{name}") is None or not folder.is_dir():
        raise ConfigError(
            f"{folder}: missing (the folder of the step {name!r} named in [[steps]])"
        )
    agent = table(step, "agent", config_file, f"[[steps]] {name!r} [steps.agent]")
    verifier = {
        **sections["verifier"],
        **table(step, "verifier", config_file, f"[[steps]] {name!r} [steps.verifier]"),
    }
    prompt = _instruction(folder / "instruction.md")
    timeout_ms = milliseconds(
        agent, config_file, f"[[steps]] {name!r} [steps.agent]", 0
    )
    verify = _verifier(
        task, config_file, verifier, sections["environment"], step=folder
    )
    # The step's own solution, else the task's.
    solution = _solution(
        task, f"steps/{name}/solution", config_file, sections["solution"]
    ) or _solution(task, "solution", config_file, sections["solution"])
    files = _part(task, f"steps/{name}/workdir")
    return StepSpec(
        name=name,
        prompt=prompt,
        timeout_ms=timeout_ms or None,
        verify=(verify,),
        solution=solution,
        workdir_files=str(files) if files is not None and files.is_dir() else None,
        min_reward=min_reward,
    )


def _min_reward(value: Any, config_file: Path, field: str) -> dict[str, float] | None:
    """A step's ``min_reward``: a number (the ``reward`` key's) or a table of reward
    names to numbers."""
    if value is None:
        return None
    table_ = {"reward": value} if not isinstance(value, dict) else value
    if not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in table_.values()
    ):
        raise ConfigError(
            f"{config_file}: {field}: expected a number or a table of reward "
            f"names to numbers, got {value!r}"[:300]
        )
    return {str(k): float(v) for k, v in table_.items()}


def _reward_strategy(data: dict[str, Any], config_file: Path) -> str:
    value = data.get("multi_step_reward_strategy", "mean")
    if value not in REWARD_STRATEGIES:
        raise ConfigError(
            f"{config_file}: multi_step_reward_strategy: expected mean or final, got {value!r}"[
                :300
            ]
        )
    return value


def _artifacts(data: dict[str, Any], config_file: Path) -> tuple[str, ...]:
    """Top-level ``artifacts``: paths, or tables with a ``source`` path (Harbor's two forms)."""
    listed = data.get("artifacts", [])
    if not isinstance(listed, list):
        raise ConfigError(
            f"{config_file}: artifacts: expected a list of paths, got {listed!r}"[:300]
        )
    found: list[str] = []
    for item in listed:
        source = item.get("source") if isinstance(item, dict) else item
        if not isinstance(source, str) or not source or ".." in source.split("/"):
            raise ConfigError(
                f"{config_file}: artifacts: expected paths (or tables with a "
                f"source path, without ..), got {item!r}"[:300]
            )
        found.append(source)
    return tuple(dict.fromkeys(found))


def _json_safe(value: Any) -> Any:
    """TOML data as JSON data (dates and times become ISO strings), for ``extensions``."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value

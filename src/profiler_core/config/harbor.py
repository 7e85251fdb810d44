"""Harbor task directories as scenarios: ``scenarios: {path: tasks, format: harbor}`` (docs/harbor.md).

Each folder of ``path`` holding a ``task.toml`` is one task (``path`` may
also be one task's own folder). It becomes a :class:`Scenario`:

- the folder's name is its id; ``instruction.md`` is the prompt;
- ``[agent].timeout_sec`` its timeout (else the profile's default);
  ``[task].keywords`` and ``[metadata].tags`` its tags; ``[metadata]`` (and
  ``[task]``) under ``extensions["harbor"]``;
- ``environment/`` (without its ``Dockerfile``) the workspace; the Dockerfile
  is built under docker / podman and its ``WORKDIR`` is where the workspace
  also appears inside the sandbox;
- ``bash /tests/test.sh`` the verifier, with ``tests/`` at ``/tests`` and its
  folder at ``/logs/verifier``, judged by the reward it writes there
  (``[verifier].timeout_sec`` and ``env``);
- ``bash /solution/solve.sh`` the reference solution the ``oracle`` provider
  runs, with ``solution/`` at ``/solution`` (``[solution].env``).

Every problem is one line naming the file and the field.
"""

from __future__ import annotations

import datetime
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..model import Scenario, SolutionSpec, TaskEnvironment, VerifierSpec, WorkspaceSpec
from ..storage.paths import scenario_id_problem

__all__ = ["HARBOR_FORMAT", "dockerfile_workdir", "load_task", "load_tasks"]

#: ``scenarios.format`` of Harbor task directories
HARBOR_FORMAT = "harbor"
#: Harbor's default agent, verifier and build timeouts (seconds) when ``task.toml`` gives none
HARBOR_DEFAULT_TIMEOUT_S = 600.0
#: where Harbor shows a task's tests, its verifier's folder and its solution inside the environment
TESTS_INSIDE, LOGS_INSIDE, SOLUTION_INSIDE = "/tests", "/logs/verifier", "/solution"
#: files of ``environment/`` that are not the workspace's
NOT_IN_WORKSPACE = ("Dockerfile",)


def load_tasks(folder: Path, *, timeout_default_ms: int, allowed_retries: int = 0) -> tuple[list[Scenario], list[str], set[str]]:
    """Every task of ``folder`` (or ``folder`` itself, when it is a task): scenarios, one line per problem, failed ids."""
    scenarios: list[Scenario] = []
    problems: list[str] = []
    unloadable: set[str] = set()
    for task in _task_folders(folder):
        try:
            scenarios.append(load_task(task, timeout_default_ms=timeout_default_ms, allowed_retries=allowed_retries))
        except ConfigError as exc:
            problems.append(str(exc))
            unloadable.add(task.name)
    if not scenarios and not problems:
        problems.append(f"{folder}: no Harbor tasks (folders with task.toml and instruction.md)")
    return scenarios, problems, unloadable


def _task_folders(folder: Path) -> list[Path]:
    """``folder`` when it is a task, else its sub-folders that look like tasks (Terminal-Bench's too, to say so)."""
    markers = ("task.toml", "instruction.md", "task.yaml")
    if any((folder / name).is_file() for name in markers):
        return [folder]
    return [d for d in sorted(folder.iterdir()) if d.is_dir() and any((d / name).is_file() for name in markers)]


def load_task(task: Path, *, timeout_default_ms: int, allowed_retries: int = 0) -> Scenario:
    """One Harbor task folder as a scenario; ``ConfigError`` (one line: file and field) when it is not one."""
    config_file = task / "task.toml"
    if not config_file.is_file():
        if (task / "task.yaml").is_file():
            raise ConfigError(f"{task / 'task.yaml'}: a Terminal-Bench task; convert it with `harbor tasks migrate` (Harbor's task.toml is expected)")
        raise ConfigError(f"{config_file}: missing (a Harbor task needs its task.toml)")
    data = _read_toml(config_file)
    if (problem := scenario_id_problem(task.name)) is not None:
        raise ConfigError(f"{task}: the folder's name is the scenario id: {problem}")
    _refuse_unsupported(task, config_file, data)
    sections = {name: _table(data, name, config_file) for name in ("task", "metadata", "agent", "verifier", "environment", "solution")}
    prompt = _instruction(task)
    meta, info = sections["metadata"], sections["task"]
    tags = [*_strings(info, "keywords", config_file, "[task]"), *_strings(meta, "tags", config_file, "[metadata]")]
    environment, workspace = _environment(task, config_file, sections["environment"])
    return Scenario(
        id=task.name,
        name=_text(info, "name", config_file, "[task]") or task.name,
        description=_text(info, "description", config_file, "[task]") or _text(meta, "description", config_file, "[metadata]") or "",
        prompt=prompt,
        timeout_ms=_milliseconds(sections["agent"], config_file, "[agent]", timeout_default_ms),
        allowed_retries=allowed_retries,
        tags=tuple(dict.fromkeys(tags)),
        extensions={"harbor": _json_safe({"version": data.get("schema_version", data.get("version")), "task": info, "metadata": meta})},
        workspace=workspace,
        environment=environment,
        verify=(_verifier(task, config_file, sections["verifier"]),),
        solution=_solution(task, config_file, sections["solution"]),
    )


def dockerfile_workdir(dockerfile: Path) -> str | None:
    """The Dockerfile's last absolute ``WORKDIR`` without variables (where the workspace appears), else None."""
    found = None
    for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.split()
        if len(words) == 2 and words[0].upper() == "WORKDIR" and words[1].startswith("/") and "$" not in words[1]:
            found = words[1].rstrip("/") or None
    return found


# -- the parts ------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None


def _refuse_unsupported(task: Path, config_file: Path, data: dict[str, Any]) -> None:
    """What this reader does not run, said instead of run wrongly."""
    if "steps" in data or (task / "steps").is_dir():
        raise ConfigError(f"{config_file}: [[steps]]: multi-step tasks are not supported")
    environment = data.get("environment")
    if isinstance(environment, dict) and environment.get("os", "linux") != "linux":
        raise ConfigError(f"{config_file}: [environment].os: only Linux tasks run here, got {environment.get('os')!r}")
    verifier = data.get("verifier")
    if isinstance(verifier, dict) and (verifier.get("environment_mode", "shared") != "shared" or "environment" in verifier):
        raise ConfigError(f"{config_file}: [verifier].environment_mode: separate verifier environments are not supported")
    for name in ("docker-compose.yaml", "docker-compose.yml"):
        if (task / "environment" / name).exists():
            raise ConfigError(f"{task / 'environment' / name}: multi-container tasks (docker compose) are not supported")


def _table(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{name}]: expected a table, got {type(value).__name__}")
    return value


def _text(table: dict[str, Any], key: str, path: Path, section: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{path}: {section}.{key}: expected a string, got {value!r}"[:300])
    return value


def _strings(table: dict[str, Any], key: str, path: Path, section: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{path}: {section}.{key}: expected a list of strings, got {value!r}"[:300])
    return value


def _milliseconds(table: dict[str, Any], path: Path, section: str, default_ms: int, key: str = "timeout_sec") -> int:
    value = table.get(key)
    if value is None:
        return default_ms
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"{path}: {section}.{key}: expected a number of seconds > 0, got {value!r}"[:300])
    return max(1, round(value * 1000))


def _env(table: dict[str, Any], path: Path, section: str) -> dict[str, str]:
    value = table.get("env", {})
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value.values()):
        raise ConfigError(f"{path}: {section}.env: expected a table of variable names to strings, got {value!r}"[:300])
    return {str(k): str(v) for k, v in value.items()}


def _instruction(task: Path) -> str:
    path = task / "instruction.md"
    if not path.is_file():
        raise ConfigError(f"{path}: missing (the task's instruction, given to the agent as its prompt)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.strip():
        raise ConfigError(f"{path}: empty (the task's instruction, given to the agent as its prompt)")
    return text


def _part(task: Path, name: str) -> Path | None:
    """``task/name`` resolved, when it exists; one that leads out of the task folder (a symlink) is refused."""
    path = task / name
    if not path.exists() and not path.is_symlink():
        return None
    resolved = path.resolve()
    top = task.resolve()
    if top not in resolved.parents:
        raise ConfigError(f"{path}: leads outside the task folder {task} (to {resolved})")
    return resolved


def _environment(task: Path, config_file: Path, table: dict[str, Any]) -> tuple[TaskEnvironment | None, WorkspaceSpec | None]:
    folder = _part(task, "environment")
    image = _text(table, "docker_image", config_file, "[environment]")
    if folder is not None and not folder.is_dir():
        raise ConfigError(f"{task / 'environment'}: expected a folder")
    dockerfile = folder / "Dockerfile" if folder is not None and (folder / "Dockerfile").is_file() else None
    if dockerfile is None and image is None:
        workspace = WorkspaceSpec(path=str(folder)) if folder is not None else None
        return None, workspace
    build_ms = _milliseconds(table, config_file, "[environment]", round(HARBOR_DEFAULT_TIMEOUT_S * 1000), "build_timeout_sec")
    environment = TaskEnvironment(
        dockerfile=str(dockerfile) if dockerfile else None, image=image,
        workdir=dockerfile_workdir(dockerfile) if dockerfile else None, build_timeout_ms=build_ms,
    )
    workspace = WorkspaceSpec(path=str(folder), exclude=NOT_IN_WORKSPACE) if folder is not None else None
    return environment, workspace


def _verifier(task: Path, config_file: Path, table: dict[str, Any]) -> VerifierSpec:
    tests = _part(task, "tests")
    if tests is None or not (tests / "test.sh").is_file():
        raise ConfigError(f"{task / 'tests' / 'test.sh'}: missing (the task's verifier)")
    return VerifierSpec(
        name="tests", command=f"bash {TESTS_INSIDE}/test.sh",
        timeout_ms=_milliseconds(table, config_file, "[verifier]", round(HARBOR_DEFAULT_TIMEOUT_S * 1000)),
        env=_env(table, config_file, "[verifier]"), mounts={TESTS_INSIDE: str(tests)}, logs_dir=LOGS_INSIDE, passed_by="reward",
    )


def _solution(task: Path, config_file: Path, table: dict[str, Any]) -> SolutionSpec | None:
    folder = _part(task, "solution")
    if folder is None or not (folder / "solve.sh").is_file():
        return None
    return SolutionSpec(
        command=f"bash {SOLUTION_INSIDE}/solve.sh", env=_env(table, config_file, "[solution]"), mounts={SOLUTION_INSIDE: str(folder)}
    )


def _json_safe(value: Any) -> Any:
    """TOML data as JSON data (dates and times become ISO strings), for ``extensions``."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value

"""Harbor datasets by name: ``scenarios: {dataset: terminal-bench@2.0}`` and ``profiler
run --dataset NAME@VERSION``.

A registry is Harbor's ``registry.json`` (its ``Registry`` model): a list of
datasets ``{name, version, description, tasks: [{name, git_url,
git_commit_id, path}], metrics}``. A dataset's tasks are fetched with git into
a cache keyed by repository and commit (``$PROFILER_DATASETS_DIR``, else
``$XDG_CACHE_HOME/agent-profiler/datasets``), once: a commit never changes, so
a cached checkout is reused as it is. The task folders are then read as Harbor
tasks (``config/harbor.py``). A task without ``git_url`` is a local path
(relative to the registry file). Every problem is one line naming the
registry, the dataset or the task.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from ..errors import ConfigError
from ..model import Scenario
from ..model.record import Record

#: Harbor's own registry (``RemoteRegistryInfo.url`` in harbor/models/registry.py)
DEFAULT_REGISTRY = (
    "https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json"
)
#: seconds one git command may take (a whole repository may be fetched)
GIT_TIMEOUT_S = 900
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RegistryTask(Record):
    """One task of a dataset: where its folder is (a git repository at a commit, or a
    local path)."""

    name: str
    path: str
    git_url: str | None = None
    git_commit_id: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Dataset(Record):
    """One dataset of a registry."""

    name: str
    version: str
    description: str
    tasks: tuple[RegistryTask, ...]


def cache_dir() -> Path:
    """Where fetched tasks live: ``$PROFILER_DATASETS_DIR``, else
    ``$XDG_CACHE_HOME/agent-profiler/datasets``."""
    configured = os.environ.get("PROFILER_DATASETS_DIR")
    if configured:
        return Path(configured).expanduser()
    return (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        / "agent-profiler"
        / "datasets"
    )


def parse_ref(ref: str) -> tuple[str, str | None]:
    """``name@version`` -> (name, version); ``name`` alone -> (name, None: the highest version)."""
    name, _, version = ref.partition("@")
    if not name or (ref.count("@") and not version):
        raise ConfigError(
            f"dataset {ref!r}: expected NAME@VERSION, e.g. terminal-bench@2.0"
        )
    return name, version or None


def read_registry(source: str | Path) -> tuple[list[Dataset], str]:
    """The datasets of a registry file or URL (``file://``, ``http(s)://``), and the
    folder local task paths are relative to."""
    text, base = _registry_text(str(source))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno})"
        ) from None
    if isinstance(data, Mapping) and isinstance(data.get("datasets"), list):
        data = data["datasets"]
    if not isinstance(data, list):
        raise ConfigError(
            f"{source}: expected Harbor's registry.json (a list of datasets "
            "with name, version and tasks)"
        )
    return [
        _dataset(item, f"{source}: [{index}]") for index, item in enumerate(data)
    ], base


def _registry_text(source: str) -> tuple[str, str]:
    parsed = urllib.parse.urlparse(source)
    if parsed.scheme in ("http", "https"):
        try:
            with urllib.request.urlopen(source, timeout=60) as response:
                return response.read().decode("utf-8"), ""
        except OSError as exc:
            raise ConfigError(f"{source}: cannot fetch the registry ({exc})") from None
    path = (
        Path(urllib.parse.unquote(parsed.path))
        if parsed.scheme == "file"
        else Path(source).expanduser()
    )
    try:
        return path.read_text(encoding="utf-8"), str(path.parent)
    except FileNotFoundError:
        raise ConfigError(f"{source}: registry file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot read the registry ({exc})") from None


def _dataset(item: Any, where: str) -> Dataset:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: expected a dataset object")
    for key in ("name", "version"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise ConfigError(f"{where}.{key}: expected a string")
    tasks = item.get("tasks")
    if not isinstance(tasks, list):
        raise ConfigError(f"{where}.tasks: expected a list of tasks")
    return Dataset(
        name=item["name"],
        version=item["version"],
        description=str(item.get("description") or ""),
        tasks=tuple(_task(task, f"{where}.tasks[{i}]") for i, task in enumerate(tasks)),
    )


def _task(item: Any, where: str) -> RegistryTask:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: expected a task object")
    for key in ("name", "path"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise ConfigError(f"{where}.{key}: expected a string")
    path = PurePosixPath(item["path"])
    if (path.is_absolute() and item.get("git_url")) or ".." in path.parts:
        raise ConfigError(
            f"{where}.path: {item['path']!r} must stay inside its repository"
        )
    commit = item.get("git_commit_id")
    if commit is not None and (
        not isinstance(commit, str) or not _COMMIT.match(commit)
    ):
        raise ConfigError(
            f"{where}.git_commit_id: expected a commit id (hex), got {commit!r}"
        )
    url = item.get("git_url")
    if url is not None and not isinstance(url, str):
        raise ConfigError(f"{where}.git_url: expected a string")
    return RegistryTask(
        name=item["name"], path=item["path"], git_url=url, git_commit_id=commit
    )


def find_dataset(datasets: list[Dataset], ref: str, registry: str) -> Dataset:
    """The dataset ``ref`` names (``name@version``; without a version, its highest)."""
    name, version = parse_ref(ref)
    named = [d for d in datasets if d.name == name]
    if not named:
        known = ", ".join(sorted({d.name for d in datasets})[:12]) or "none"
        raise ConfigError(
            f"dataset {name!r} is not in the registry {registry} (it has: {known})"
        )
    if version is None:
        return max(named, key=lambda d: _version_key(d.version))
    for dataset in named:
        if dataset.version == version:
            return dataset
    raise ConfigError(
        f"dataset {name!r} has no version {version!r} in {registry} (it has: "
        f"{', '.join(d.version for d in named)})"
    )


def _version_key(version: str) -> tuple[Any, ...]:
    return tuple(
        (0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.\-]", version)
    )


def task_folders(
    dataset: Dataset, *, base: str, cache: Path | None = None
) -> list[Path]:
    """The folder of every task of ``dataset``: fetched (once per repository and commit)
    into the cache, or local."""
    cache = cache or cache_dir()
    folders = []
    for task in dataset.tasks:
        if task.git_url is None:
            folder = Path(base, task.path) if base else Path(task.path)
        else:
            folder = (
                _checkout(task.git_url, task.git_commit_id, cache, task.name)
                / task.path
            )
        if not folder.is_dir():
            raise ConfigError(
                f"dataset {dataset.name}@{dataset.version}: task {task.name!r}: "
                f"{task.path!r} is not a folder of {task.git_url or base or '.'}"
            )
        folders.append(folder)
    return folders


def _checkout(url: str, commit: str | None, cache: Path, task: str) -> Path:
    """A checkout of ``url`` at ``commit`` under the cache (``<repo hash>/<commit>``),
    fetched now if absent."""
    commit = commit or _head(url, task)
    folder = cache / hashlib.sha256(url.encode()).hexdigest()[:16] / commit
    if folder.is_dir():
        # a commit never changes: a finished checkout (renamed into place) is reused as
        # it is
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{commit}.", dir=folder.parent))
    try:
        _git(["init", "-q"], staging, task)
        _git(["fetch", "-q", "--depth", "1", url, commit], staging, task)
        _git(
            ["-c", "advice.detachedHead=false", "checkout", "-q", "FETCH_HEAD"],
            staging,
            task,
        )
        try:
            staging.rename(folder)
        except (
            OSError
        ):  # another process put the same commit in place meanwhile: theirs is as good
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def _head(url: str, task: str) -> str:
    out = _git(["ls-remote", url, "HEAD"], None, task)
    commit = out.split()[0] if out.split() else ""
    if not _COMMIT.match(commit):
        raise ConfigError(f"task {task!r}: {url} has no HEAD commit")
    return commit


def _git(args: list[str], cwd: Path | None, task: str) -> str:
    """Run git in its own process group (ended as a group if it overruns: git starts
    helpers of its own)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ConfigError(
            "datasets are fetched with git, which is not installed"
        ) from None
    try:
        out, err = proc.communicate(timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _end(proc)
        raise ConfigError(
            f"task {task!r}: git {args[0]} did not finish in {GIT_TIMEOUT_S} s"
        ) from None
    except (
        BaseException
    ):  # Ctrl-C: git and its helpers go too, then the interrupt goes on
        _end(proc)
        raise
    if proc.returncode != 0:
        message = (err.strip().splitlines() or ["no message"])[-1]
        raise ConfigError(f"task {task!r}: git {args[0]} failed: {message}")
    return out


def _end(proc: subprocess.Popen[str]) -> None:
    """End git and the helpers it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def load_dataset(
    ref: str, registry: str | None, *, timeout_default_ms: int, allowed_retries: int = 0
) -> tuple[list[Scenario], list[str], set[str], str]:
    """The tasks of a dataset as scenarios, one line per problem, the ids that failed,
    and where they were read from."""
    from .harbor import load_task

    dataset, folders = dataset_folders(ref, registry)
    scenarios: list[Scenario] = []
    problems: list[str] = []
    failed: set[str] = set()
    for folder in folders:
        try:
            scenarios.append(
                load_task(
                    folder,
                    timeout_default_ms=timeout_default_ms,
                    allowed_retries=allowed_retries,
                )
            )
        except ConfigError as exc:
            problems.append(str(exc))
            failed.add(folder.name)
    return scenarios, problems, failed, f"{dataset.name}@{dataset.version}"


def dataset_folders(
    ref: str, registry: str | None = None, *, cache: Path | None = None
) -> tuple[Dataset, list[Path]]:
    """``ref`` resolved in ``registry`` (Harbor's own when None) and its task folders,
    fetched when needed."""
    source = registry or DEFAULT_REGISTRY
    datasets, base = read_registry(source)
    dataset = find_dataset(datasets, ref, source)
    return dataset, task_folders(dataset, base=base, cache=cache)


__all__ = [
    "DEFAULT_REGISTRY",
    "Dataset",
    "RegistryTask",
    "cache_dir",
    "dataset_folders",
    "find_dataset",
    "load_dataset",
    "parse_ref",
    "read_registry",
    "task_folders",
]

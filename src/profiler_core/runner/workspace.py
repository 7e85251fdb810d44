"""Session workspaces: a fresh folder for every attempt, prepared by the runner and handed to the provider.

A scenario's ``workspace`` is a folder copied fresh for each session, or a git
repository (a local path or URL, cloned once per run into a bare cache, then
cloned from it per session — objects are hard-linked, not copied) checked out
at ``ref``. Without one a session gets a fresh empty folder — never the
user's current directory. ``setup`` commands then run in it; their failure is
a set-up error of the cell (retried like any error), not the agent's failure.

A scenario with its own ``environment`` (a Harbor task) runs in its image
under docker / podman, and its workspace is the image's working folder
(``task_images``).

After the session, ``output.keep_workspaces`` (``failed``, the default;
``all``; ``none``) decides whether the folder is kept under
``reports/<runId>/workspaces/`` for inspection or removed.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Literal

import attrs
import trio

from ..model import Scenario, WorkspaceReport
from ..sandbox import Mount, SandboxSettings
from ..sandbox.commands import CommandResult, Confinement, base_environment, run_command
from ..storage.paths import inside, safe_name
from ..util.leftovers import remove_folder, temporary_folder
from .task_images import TaskEnvironments, TaskImageError, TaskSandbox

#: ``output.keep_workspaces``
KeepWorkspaces = Literal["failed", "all", "none"]
#: Files listed for a workspace that is not a git tree.
MAX_FILES = 200


#: What ``Workspaces.report`` says of an empty workspace.
EMPTY_WORKSPACE = WorkspaceReport(files=())


class SetupError(Exception):
    """Preparing a workspace failed (copy, clone or a set-up command): the cell's error, not the agent's."""


class Workspaces:
    """The workspaces of one run: prepared per attempt, summarised after the agent, then kept or removed."""

    def __init__(
        self, *, keep: KeepWorkspaces = "failed", keep_dir: Path, template: str | None = None,
        sandbox: SandboxSettings | None = None, endpoints: tuple[str, ...] = (), warnings: list[str] | None = None,
        hide: tuple[Path, ...] = (),
    ) -> None:
        self.keep = keep
        #: where set-up commands and verifiers run (None or ``none``: on the host)
        self.sandbox = sandbox
        #: the model endpoints a verifier with ``network: model`` may reach
        self.endpoints = endpoints
        self.keep_dir = keep_dir
        #: a provider's deprecated ``workdir_template``: the workspace of scenarios that have none
        self.template = template
        #: the run's private folder: the clone cache, task images' files, verifiers' scratch copies, homes
        self.root = temporary_folder("profiler-ws-")
        #: the session workspaces (the only part of ``root`` an ``opencode serve`` may write in a sandbox)
        self.sessions = self.root / "sessions"
        self.sessions.mkdir()
        #: host paths no agent may read (``hidden.hidden_from_agents``), and this run's private folder
        self.hide = (*hide, self.root)
        #: empty workspaces a session left as it got them: the next session without files takes one,
        #: as creating and removing a folder costs the file system ~0.1-10 ms per session
        self._empty: list[Path] = []
        self._clones: dict[str, Path] = {}
        self._clone_locks: dict[str, trio.Lock] = {}
        #: the tasks' own sandboxes (a Harbor task's image, built once per run)
        self.environments = TaskEnvironments(sandbox, self.root, warnings)

    async def task_sandbox(self, scenario: Scenario) -> TaskSandbox:
        """Where ``scenario``'s sessions and commands run (its image built on first use); ``SetupError`` when it cannot be."""
        try:
            return await self.environments.sandbox_for(scenario)
        except TaskImageError as exc:
            raise SetupError(f"environment of {scenario.id!r}: {exc}") from None

    async def prepare(self, scenario: Scenario) -> Path:
        """A fresh workspace for one attempt of ``scenario``, its ``setup`` commands run; ``SetupError`` on failure."""
        task = await self.task_sandbox(scenario)
        spec = scenario.workspace
        if spec is None and task.source is None and self.template is None and not scenario.setup and self._empty:
            return self._empty.pop()  # still empty: as good as a fresh one
        folder = self.sessions / f"{safe_name(scenario.id)}-{uuid.uuid4().hex[:8]}"
        try:
            if task.source is not None:
                await trio.to_thread.run_sync(_copy, task.source, folder)  # the task image's working folder
            elif spec is not None and spec.git is not None:
                await self._clone(spec.git, spec.ref, folder)
            elif spec is not None and spec.path is not None:
                await trio.to_thread.run_sync(_copy, Path(spec.path), folder, spec.exclude)
            elif self.template is not None:
                await trio.to_thread.run_sync(_copy, Path(self.template), folder)
            else:
                folder.mkdir()
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise SetupError(f"workspace of {scenario.id!r}: {exc.strerror or exc}") from None
        # Set-up prepares the workspace (installs what the task needs): in the sandbox, with the network.
        setup = self.where("full", settings=task.settings)
        for command in scenario.setup:
            result = await self.run(command, folder, timeout_s=scenario.timeout_ms / 1000, where=setup)
            if not result.ok:
                raise SetupError(f"setup command {command!r} {_how(result)}")
        return folder

    def for_agents(self, settings: SandboxSettings | None) -> SandboxSettings | None:
        """``settings`` for an agent job: the answers, the run's records and the private folder hidden too."""
        if settings is None or not settings.confined:
            return settings
        return attrs.evolve(settings, hide_paths=(*settings.hide_paths, *(str(p) for p in self.hide)))

    def where(self, network: str | None, mounts: tuple[Mount, ...] = (), *, settings: SandboxSettings | None = None) -> Confinement:
        """Where a task command runs: the run's sandbox (or the task's, ``settings``) with this network (a verifier's ``none`` by default)."""
        base = settings or self.sandbox
        if base is None or not base.confined:
            return Confinement()
        return Confinement(settings=base.for_verifier(network), mounts=mounts, endpoints=self.endpoints)

    async def run(
        self, command: str, folder: Path, *, timeout_s: float, env: dict[str, str] | None = None, where: Confinement | None = None
    ) -> CommandResult:
        """A shell command in a workspace, with a private home beside it."""
        home = Path(tempfile.mkdtemp(prefix="home-", dir=self.root))
        try:
            return await run_command(
                ["bash", "-c", command], cwd=folder, env=base_environment(home, env), timeout_s=timeout_s, where=where
            )
        finally:
            shutil.rmtree(home, ignore_errors=True)

    async def report(self, folder: Path) -> WorkspaceReport:
        """What the agent left: ``git diff --stat`` (new files included) of a git tree, else its file list."""
        if _is_empty(folder):
            return EMPTY_WORKSPACE  # most sessions without a workspace leave it empty: one scandir
        if (folder / ".git").exists():
            await _git("add", "--all", "--intent-to-add", cwd=folder)
            stat = await _git("diff", "--stat", cwd=folder)
            return WorkspaceReport(diff_stat=stat.output.strip() if stat.ok else None)
        return WorkspaceReport(files=_list_files(folder))  # bounded: stops at MAX_FILES

    def reuse(self, folder: Path) -> None:
        """Keep ``folder``, known to be empty, for the next session that needs an empty one."""
        self._empty.append(folder)

    def reuse_if_empty(self, folder: Path) -> bool:
        """Keep ``folder`` for the next session when it is empty (nothing to inspect in it); whether it was."""
        if _is_empty(folder):
            self.reuse(folder)
            return True
        return False

    def keep_or_remove(self, folder: Path, *, failed: bool, name: str) -> Path | None:
        """Keep a workspace the session left something in under ``keep_dir/name`` (per ``keep``), or remove it;
        where it was kept. (An empty one is never kept: it goes to ``reuse``, for the next session.)"""
        if self.keep == "all" or (self.keep == "failed" and failed):
            target = inside(self.keep_dir, self.keep_dir / name)
            if target.exists():  # a retried attempt: the last one is kept
                shutil.rmtree(target, ignore_errors=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(folder), str(target))
            return target
        shutil.rmtree(folder, ignore_errors=True)
        return None

    def close(self) -> None:
        """Remove what is left (the clone cache, workspaces of interrupted attempts)."""
        remove_folder(self.root)

    async def _clone(self, source: str, ref: str | None, folder: Path) -> None:
        """Clone ``source`` at ``ref`` into ``folder``, through a bare clone made once per run."""
        lock = self._clone_locks.setdefault(source, trio.Lock())
        async with lock:
            cache = self._clones.get(source)
            if cache is None:
                cache = self.root / ".git-cache" / (hashlib.sha256(source.encode()).hexdigest()[:16] + ".git")
                cache.parent.mkdir(exist_ok=True)
                made = await _git("clone", "--quiet", "--bare", source, str(cache), cwd=self.root)
                if not made.ok:
                    raise SetupError(f"cannot clone {source!r}: {made.output.strip()[-300:] or made.error}")
                self._clones[source] = cache
        cloned = await _git("clone", "--quiet", str(cache), str(folder), cwd=self.root)
        if not cloned.ok:
            raise SetupError(f"cannot clone {source!r}: {cloned.output.strip()[-300:] or cloned.error}")
        if ref:
            checkout = await _git("checkout", "--quiet", ref, cwd=folder)
            if not checkout.ok:
                raise SetupError(f"{source!r}: cannot check out {ref!r}: {checkout.output.strip()[-300:]}")


async def _git(*args: str, cwd: Path) -> CommandResult:
    home = cwd if cwd.is_dir() else Path(tempfile.gettempdir())
    env = base_environment(home, {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"})
    return await run_command(["git", "-c", "advice.detachedHead=false", *args], cwd=cwd, env=env, timeout_s=600)


def _is_empty(folder: Path) -> bool:
    """True for an existing folder with nothing in it."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _copy(source: Path, target: Path, exclude: tuple[str, ...] = ()) -> None:
    def left_out(folder: str, names: list[str]) -> list[str]:
        # Only at the top: a Harbor task's Dockerfile, not every file of that name below it.
        if not exclude or Path(folder) != source:
            return []
        return [n for n in names if any(fnmatch.fnmatchcase(n, pattern) for pattern in exclude)]

    shutil.copytree(source, target, symlinks=True, ignore=left_out)


def _list_files(folder: Path) -> tuple[str, ...]:
    """The first ``MAX_FILES`` files under ``folder`` (folders in name order, symlinks not followed)."""
    found: list[str] = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            found.append((Path(top) / name).relative_to(folder).as_posix())
            if len(found) >= MAX_FILES:
                return tuple(found)
    return tuple(found)


def _how(result: CommandResult) -> str:
    """``exited 2: <output tail>`` / ``timed out`` / ``could not start: ...``."""
    if result.error:
        return f"could not start: {result.error}"
    if result.timed_out:
        return "timed out"
    tail = result.output.strip()[-300:]
    return f"exited {result.exit_code}" + (f": {tail}" if tail else "")


__all__ = ["EMPTY_WORKSPACE", "KeepWorkspaces", "SetupError", "Workspaces"]

"""Session workspaces: a fresh folder for every attempt, prepared by the runner and
handed to the provider.

A scenario's ``workspace`` is a folder copied fresh for each session, or a git
repository (a local path or URL, cloned once per run into a bare cache, then
cloned from it per session — objects are copied, never hard-linked: a
workspace shares no inode with its source) checked out at ``ref``. A copied
source's ``.git`` that is not a plain folder (a ``gitdir:`` file, a link: it
leads into another repository) is left out of the copy. Without one a session
gets a fresh empty folder — never the user's current directory. ``setup`` commands then
run in it; their failure is
a set-up error of the cell (retried like any error), not the agent's failure.

A scenario with its own ``environment`` (a Harbor task) runs in its image
under docker / podman, and its workspace is the image's working folder
(``task_images``).

After the session, ``output.keep_workspaces`` (``failed``, the default;
``all``; ``none``) decides whether the folder is kept under
``reports/<runId>/workspaces/`` for inspection or removed. A kept one is made
safe to keep first (``util.safefiles.make_safe_to_keep``): folders 0700, no
setuid/setgid bit, FIFOs, sockets and devices removed, the run's secrets
masked in its files. What the agent left is summarised with host git that
runs nothing of the agent's (``hostgit``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import attrs
import trio

from ..model import Scenario, WorkspaceReport
from ..sandbox import Mount, SandboxSettings
from ..sandbox.commands import CommandResult, Confinement, base_environment, run_command
from ..storage.paths import inside, safe_name
from ..util.leftovers import remove_folder, temporary_folder
from ..util.safefiles import make_safe_to_keep, scrub_secrets
from .hostgit import (
    agent_head,
    diff_stat,
    host_git,
    init_private,
    plain_git_dir,
    resolve_commit,
)
from .task_images import TaskEnvironments, TaskImageError, TaskSandbox

#: ``output.keep_workspaces``
KeepWorkspaces = Literal["failed", "all", "none"]
#: Files listed for a workspace that is not a git tree.
MAX_FILES = 200


#: What ``Workspaces.report`` says of an empty workspace.
EMPTY_WORKSPACE = WorkspaceReport(files=())


class SetupError(Exception):
    """Preparing a workspace failed (copy, clone or a set-up command): the cell's error,
    not the agent's."""


class Workspaces:
    """The workspaces of one run: prepared per attempt, summarised after the agent, then
    kept or removed."""

    def __init__(
        self,
        *,
        keep: KeepWorkspaces = "failed",
        keep_dir: Path,
        template: str | None = None,
        sandbox: SandboxSettings | None = None,
        endpoints: tuple[str, ...] = (),
        warnings: list[str] | None = None,
        hide: tuple[Path, ...] = (),
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.keep = keep
        #: where set-up commands and verifiers run (None or ``none``: on the host)
        self.sandbox = sandbox
        #: the model endpoints a verifier with ``network: model`` may reach
        self.endpoints = endpoints
        self.keep_dir = keep_dir
        #: a provider's deprecated ``workdir_template``: the workspace of scenarios that have none
        self.template = template
        #: the run's private folder: the clone cache, task images' files, verifiers'
        #: scratch copies, homes
        self.root = temporary_folder("profiler-ws-")
        #: the session workspaces (the only part of ``root`` an ``opencode serve`` may
        #: write in a sandbox)
        self.sessions = self.root / "sessions"
        self.sessions.mkdir()
        #: host paths no agent may read (``hidden.hidden_from_agents``), and this run's
        #: private folder
        self.hide = (*hide, self.root)
        #: empty workspaces a session left as it got them: the next session without files takes one,
        #: as creating and removing a folder costs the file system ~0.1-10 ms per session
        self._empty: list[Path] = []
        self._clones: dict[str, Path] = {}
        #: per prepared workspace: the objects folder and commit its ``diffStat`` compares with
        self._bases: dict[Path, tuple[Path, str]] = {}
        self._report_lock = trio.Lock()
        #: the run's redactor: masks its secrets in a kept workspace's files
        self.redact = redact
        self.warnings = warnings if warnings is not None else []
        self._clone_locks: dict[str, trio.Lock] = {}
        #: the tasks' own sandboxes (a Harbor task's image, built once per run)
        self.environments = TaskEnvironments(sandbox, self.root, warnings)

    async def task_sandbox(self, scenario: Scenario) -> TaskSandbox:
        """Where ``scenario``'s sessions and commands run (its image built on first
        use); ``SetupError`` when it cannot be."""
        try:
            return await self.environments.sandbox_for(scenario)
        except TaskImageError as exc:
            raise SetupError(f"environment of {scenario.id!r}: {exc}") from None

    async def prepare(self, scenario: Scenario) -> Path:
        """A fresh workspace for one attempt of ``scenario``, its ``setup`` commands
        run; ``SetupError`` on failure."""
        task = await self.task_sandbox(scenario)
        try:
            source = await self.environments.source_for(scenario)
        except TaskImageError as exc:
            raise SetupError(f"environment of {scenario.id!r}: {exc}") from None
        spec = scenario.workspace
        if (
            spec is None
            and source is None
            and self.template is None
            and not scenario.setup
            and self._empty
        ):
            return self._empty.pop()  # still empty: as good as a fresh one
        folder = self.sessions / f"{safe_name(scenario.id)}-{uuid.uuid4().hex[:8]}"
        try:
            if source is not None:
                await trio.to_thread.run_sync(
                    _copy, source, folder
                )  # the task image's working folder
            elif spec is not None and spec.git is not None:
                if Path(spec.git).is_dir():
                    self._warn_hidden_inside(scenario, Path(spec.git))
                await self._clone(spec.git, spec.ref, folder)
            elif spec is not None and spec.path is not None:
                await self._copy_source(scenario, Path(spec.path), folder, spec.exclude)
            elif self.template is not None:
                await self._copy_source(scenario, Path(self.template), folder)
            else:
                folder.mkdir()
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise SetupError(
                f"workspace of {scenario.id!r}: {exc.strerror or exc}"
            ) from None
        # Set-up prepares the workspace (installs what the task needs): in the sandbox,
        # with the network.
        setup = self.where("full", settings=task.settings)
        for command in scenario.setup:
            result = await self.run(
                command, folder, timeout_s=scenario.timeout_ms / 1000, where=setup
            )
            if not result.ok:
                raise SetupError(f"setup command {command!r} {_how(result)}")
        return folder

    def for_agents(self, settings: SandboxSettings | None) -> SandboxSettings | None:
        """``settings`` for an agent job: the answers, the run's records and the private
        folder hidden too."""
        if settings is None or not settings.confined:
            return settings
        return attrs.evolve(
            settings, hide_paths=(*settings.hide_paths, *(str(p) for p in self.hide))
        )

    def where(
        self,
        network: str | None,
        mounts: tuple[Mount, ...] = (),
        *,
        settings: SandboxSettings | None = None,
    ) -> Confinement:
        """Where a task command runs: the run's sandbox (or the task's, ``settings``)
        with this network (a verifier's ``none`` by default)."""
        base = settings or self.sandbox
        if base is None or not base.confined:
            return Confinement()
        return Confinement(
            settings=base.for_verifier(network), mounts=mounts, endpoints=self.endpoints
        )

    async def run(
        self,
        command: str,
        folder: Path,
        *,
        timeout_s: float,
        env: dict[str, str] | None = None,
        where: Confinement | None = None,
    ) -> CommandResult:
        """A shell command in a workspace, with a private home beside it."""
        home = Path(tempfile.mkdtemp(prefix="home-", dir=self.root))
        try:
            return await run_command(
                ["bash", "-c", command],
                cwd=folder,
                env=base_environment(home, env),
                timeout_s=timeout_s,
                where=where,
            )
        finally:
            shutil.rmtree(home, ignore_errors=True)

    async def report(self, folder: Path) -> WorkspaceReport:
        """What the agent left: ``git diff --stat`` (new files included) of a git tree,
        else its file list."""
        if _is_empty(folder):
            return EMPTY_WORKSPACE  # most sessions without a workspace leave it empty: one scandir
        base = self._bases.pop(folder, None)
        git_dir = plain_git_dir(folder)
        if base is None and git_dir is not None:
            # A repository the agent made (or one copied without a known commit):
            # compared with its HEAD.
            base = (git_dir / "objects", agent_head(git_dir) or "")
        if base is not None:
            async with (
                self._report_lock
            ):  # one `git init` of the private repository, whatever the concurrency
                await init_private(self.root / ".git-report")
            stat = await diff_stat(
                self.root / ".git-report", base[0], base[1] or None, folder
            )
            return WorkspaceReport(diff_stat=stat.output.strip() if stat.ok else None)
        if os.path.lexists(folder / ".git"):
            return WorkspaceReport(
                diff_stat=None
            )  # a .git file or link: it leads elsewhere, and is not followed
        return WorkspaceReport(files=_list_files(folder))  # bounded: stops at MAX_FILES

    def reuse(self, folder: Path) -> None:
        """Keep ``folder``, known to be empty, for the next session that needs an empty one."""
        self._empty.append(folder)

    def reuse_if_empty(self, folder: Path) -> bool:
        """Keep ``folder`` for the next session when it is empty (nothing to inspect in
        it); whether it was."""
        if _is_empty(folder):
            self.reuse(folder)
            return True
        return False

    def keep_or_remove(self, folder: Path, *, failed: bool, name: str) -> Path | None:
        """Keep a workspace the session left something in under ``keep_dir/name`` (per
        ``keep``), or remove it;
        where it was kept. (An empty one is never kept: it goes to ``reuse``, for the
        next session.)"""
        self._bases.pop(folder, None)
        if self.keep == "all" or (self.keep == "failed" and failed):
            try:
                return self._keep(folder, name)
            except OSError as exc:
                # The session's business, never the run's end: the workspace is removed instead.
                self.warnings.append(
                    f"workspace {name!r} not kept: {exc.strerror or exc}"
                )
        shutil.rmtree(folder, ignore_errors=True)
        return None

    def _keep(self, folder: Path, name: str) -> Path:
        """Move ``folder``, made safe to keep, to ``keep_dir/name``."""
        redact = self.redact
        removed = make_safe_to_keep(
            folder,
            (lambda path: scrub_secrets(path, redact)) if redact is not None else None,
        )
        if removed:
            self.warnings.append(
                f"workspace {name!r}: {len(removed)} special file(s) not kept "
                f"(FIFO, socket, device): {', '.join(removed[:3])}"
            )
        target = inside(self.keep_dir, self.keep_dir / name)
        if os.path.lexists(target):  # a retried attempt: the last one is kept
            shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(self.keep_dir, 0o700)
        shutil.move(str(folder), str(target))
        return target

    def close(self) -> None:
        """Remove what is left (the clone cache, workspaces of interrupted attempts)."""
        remove_folder(self.root)

    async def _clone(self, source: str, ref: str | None, folder: Path) -> None:
        """Clone ``source`` at ``ref`` into ``folder``, through a bare clone made once per run."""
        lock = self._clone_locks.setdefault(source, trio.Lock())
        async with lock:
            cache = self._clones.get(source)
            if cache is None:
                cache = (
                    self.root
                    / ".git-cache"
                    / (hashlib.sha256(source.encode()).hexdigest()[:16] + ".git")
                )
                cache.parent.mkdir(exist_ok=True)
                # --no-local: the objects are copied, never hard-linked from the user's repository.
                made = await host_git(
                    "clone",
                    "--quiet",
                    "--bare",
                    "--no-local",
                    "--",
                    source,
                    str(cache),
                    cwd=self.root,
                )
                if not made.ok:
                    raise SetupError(
                        f"cannot clone {source!r}: {made.output.strip()[-300:] or made.error}"
                    )
                self._clones[source] = cache
        if ref and ref.startswith("-"):
            raise SetupError(
                f"{source!r}: workspace.ref {ref!r}: a ref cannot start with '-'"
            )
        cloned = await host_git(
            "clone",
            "--quiet",
            "--no-hardlinks",
            "--",
            str(cache),
            str(folder),
            cwd=self.root,
        )
        if not cloned.ok:
            raise SetupError(
                f"cannot clone {source!r}: {cloned.output.strip()[-300:] or cloned.error}"
            )
        if ref:
            checkout = await host_git(
                "checkout", "--quiet", ref, cwd=folder, env=_in(folder)
            )
            if not checkout.ok:
                raise SetupError(
                    f"{source!r}: cannot check out {ref!r}: {checkout.output.strip()[-300:]}"
                )
        commit = await resolve_commit(folder / ".git")
        if commit is not None:
            self._bases[folder] = (cache / "objects", commit)

    async def _copy_source(
        self,
        scenario: Scenario,
        source: Path,
        folder: Path,
        exclude: tuple[str, ...] = (),
    ) -> None:
        """Copy a workspace source folder; its plain ``.git`` (if any) gives the commit
        ``diffStat`` compares with."""
        self._warn_hidden_inside(scenario, source)
        await trio.to_thread.run_sync(_copy, source, folder, exclude)
        git_dir = plain_git_dir(source)
        if git_dir is not None and plain_git_dir(folder) is not None:
            commit = await resolve_commit(git_dir)
            if commit is not None:
                self._bases[folder] = (
                    git_dir / "objects",
                    commit,
                )  # the source's objects: the agent cannot change them

    def _warn_hidden_inside(self, scenario: Scenario, source: Path) -> None:
        """Say once when a verifier's hidden files lie inside the folder (or local
        repository) every workspace comes from."""
        real = source.resolve()
        hidden = [
            Path(p).resolve()
            for v in scenario.verify
            for p in (*v.files.values(), *v.mounts.values())
        ]
        inside_source = [p for p in hidden if p == real or real in p.parents]
        message = (
            f"scenario {scenario.id!r}: verifier files "
            f"{', '.join(map(str, inside_source[:3]))} are inside its workspace "
            f"source {str(source)!r}: the agent gets a copy of them"
        )
        if inside_source and message not in self.warnings:
            self.warnings.append(message)


def _in(folder: Path) -> dict[str, str]:
    """``GIT_DIR`` and ``GIT_WORK_TREE`` of the clone in ``folder``, explicit: no
    ``.git`` is looked for."""
    return {"GIT_DIR": str(folder / ".git"), "GIT_WORK_TREE": str(folder)}


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
        # A .git that is not a plain folder (a gitdir: file, a link) leads into another repository.
        left = [n for n in names if n == ".git" and plain_git_dir(Path(folder)) is None]
        if not exclude or Path(folder) != source:
            return left
        return left + [
            n
            for n in names
            if any(fnmatch.fnmatchcase(n, pattern) for pattern in exclude)
        ]

    shutil.copytree(source, target, symlinks=True, ignore=left_out)


def _list_files(folder: Path) -> tuple[str, ...]:
    """The first ``MAX_FILES`` files under ``folder`` (folders in name order, symlinks
    not followed)."""
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

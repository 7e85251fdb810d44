"""The ``none`` and ``bwrap`` environments: a trial is a private folder on this machine.

``start`` copies the spec's ``root`` into a fresh folder (the trial's
working folder: the trial may change it, the task stays as it is). Under
``none`` commands run on the host in that folder, with a minimal
environment; under ``bwrap`` each command runs in a new bubblewrap sandbox
(``profiler_core.sandbox``) with the folder writable at its host path and at
``spec.workdir``, and every folder ``put`` to an absolute path (``/tests``,
``/logs/verifier``) bound at that path. Where nsenter, setpriv and
slirp4netns are installed, a ``bwrap`` trial is instead one sandbox for the
whole trial (bwrap.py, where the ``bwrap`` kind lives: a process the agent starts in the
background is
still there for the verifier, as in a container, and ends with the trial);
without them each command is a new sandbox, a process does not outlive its
command (``persistent_processes`` is false) and switching networks is free.
"""

from __future__ import annotations

import fnmatch
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from ..errors import SandboxError
from ..model.environment import (
    EnvironmentCapabilities,
    ExecResult,
    SandboxSettings,
    TrialSpec,
)
from ..storage.paths import inside
from ..util.leftovers import remove_folder

__all__ = ["FolderTrial", "HostEnvironment"]


def _top_level(
    root: Path, patterns: tuple[str, ...]
) -> Callable[[str, list[str]], list[str]]:
    """``copytree``'s ``ignore``: the names matching ``patterns`` at the top of ``root`` only."""

    def left_out(folder: str, names: list[str]) -> list[str]:
        if not patterns or Path(folder) != root:
            return []
        return [
            n
            for n in names
            if any(fnmatch.fnmatchcase(n, pattern) for pattern in patterns)
        ]

    return left_out


class HostEnvironment:
    """Trials on the host itself, each in a fresh folder (no confinement at all)."""

    id = "none"
    capabilities = EnvironmentCapabilities(networks=("full",), network_switch=True)

    def check(self) -> str | None:
        """Always usable."""
        return None

    def start(self, spec: TrialSpec) -> FolderTrial:
        """A fresh folder holding a copy of ``spec.root``."""
        return FolderTrial(spec, None)


class FolderTrial:
    """One trial in a host folder: ``work/`` is the working folder, ``mounts/`` holds
    what was put at other paths."""

    def __init__(self, spec: TrialSpec, settings: SandboxSettings | None) -> None:
        self.spec, self.settings = spec, settings
        self.folder = Path(tempfile.mkdtemp(prefix="profiler-trial-"))
        self.work = self.folder / "work"
        self.home = self.folder / "home"
        self.home.mkdir()
        #: path inside -> the host folder shown there (bwrap only)
        self.mounts: dict[str, Path] = {}
        try:
            if spec.root:
                shutil.copytree(
                    spec.root,
                    self.work,
                    symlinks=True,
                    ignore=_top_level(Path(spec.root), spec.root_exclude),
                )
            else:
                self.work.mkdir()
        except OSError as exc:
            self.stop()
            raise SandboxError(
                f"cannot copy {spec.root} for the trial: {exc.strerror or exc}"
            ) from None
        for folder in spec.folders:
            if (
                settings is not None
            ):  # bwrap shows them at their paths; the host trial cannot make /logs
                self._host_path(folder).mkdir(parents=True, exist_ok=True)

    @property
    def workdir(self) -> str:
        """The working folder as commands see it."""
        return (
            self.spec.workdir
            if self.settings is not None and self.spec.workdir
            else str(self.work)
        )

    def set_network(self, network: str) -> None:
        """The next commands' network (each command is a new sandbox)."""
        if self.settings is None:
            if network != "full":
                raise SandboxError(
                    f"execution.sandbox: none cannot cut the network to {network!r}"
                )
            return
        self.settings = attrs.evolve(self.settings, network=network)

    def _host_path(self, remote: str) -> Path:
        """The host path of ``remote``: under the working folder, or a folder of its own
        bound at ``remote`` (bwrap)."""
        for base, host in ((self.workdir, self.work), (str(self.work), self.work)):
            if remote == base or remote.startswith(base.rstrip("/") + "/"):
                return inside(host, host / Path(remote).relative_to(base))
        if self.settings is None:
            raise SandboxError(
                f"execution.sandbox: none: {remote} is outside the trial's "
                "folder (a sandbox shows it)"
            )
        for target, host in self.mounts.items():
            if remote == target or remote.startswith(target.rstrip("/") + "/"):
                return inside(host, host / Path(remote).relative_to(target))
        host = self.folder / "mounts" / f"m{len(self.mounts)}"
        self.mounts[remote] = host
        return host

    async def exec(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
        on_output: Callable[[bytes], None] | None = None,
    ) -> ExecResult:
        """Run ``argv`` (on the host or in a new bwrap sandbox) until it ends or
        ``timeout_s``; the output comes at its end."""
        # the sandbox machinery (and trio) load when a trial runs a command, not when
        # the kind is listed
        from ..sandbox import Mount
        from ..sandbox.commands import Confinement, base_environment, run_command

        folder = self._host_path(cwd) if cwd else self.work
        where = None
        if self.settings is not None:
            mounts = tuple(
                Mount(source=host, target=target, writable=True)
                for target, host in self.mounts.items()
                if host.exists()
            )
            where = Confinement(
                settings=self.settings, mounts=mounts, endpoints=self.spec.endpoints
            )
        done = await run_command(
            argv,
            cwd=folder,
            env=base_environment(self.home, {**self.spec.env, **(env or {})}),
            timeout_s=timeout_s or 86_400.0,
            where=where,
        )
        if on_output is not None and done.output:
            on_output(done.output.encode())
        return ExecResult(
            exit_code=done.exit_code,
            output=done.output,
            timed_out=done.timed_out,
            error=done.error,
            wall_ms=done.wall_ms,
        )

    def put(self, local: Path, remote: str) -> None:
        """Copy ``local`` to ``remote``, replacing what is there."""
        target = self._host_path(remote)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        if local.is_dir():
            shutil.copytree(local, target, symlinks=True)
        else:
            shutil.copy2(local, target, follow_symlinks=False)

    def get(self, remote: str, local: Path) -> None:
        """Copy ``remote`` to ``local``; links are copied as links."""
        source = self._host_path(remote)
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, local, symlinks=True, dirs_exist_ok=True)
        else:
            local.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, local, follow_symlinks=False)

    def stop(self) -> None:
        """Remove the trial's folder."""
        remove_folder(self.folder)

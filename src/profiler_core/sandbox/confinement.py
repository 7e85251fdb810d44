"""Confine one job: what to start (``argv``, ``env``, ``cwd``), and the cleanup after it ended.

Usage (a subprocess provider under trio)::

    async with confine(settings, Job(argv=command, env=env, workspace=work, home=home, tmp=tmp,
                                     endpoints=[base_url])) as box:
        run = await run_agent(box.argv, env=box.env, cwd=box.cwd, ...)

The caller starts ``box.argv`` with exactly ``box.env`` in a session of its
own and ends it by its process group as it always does; leaving the block
then removes the containers, stops the relays and deletes the private
folders (shielded from cancellation). The same works synchronously with
``with confine(...) as box: subprocess.run(box.argv, env=box.env, cwd=box.cwd, ...)``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import TracebackType
from typing import Self

from ..errors import SandboxError
from .bwrap import bwrap_command, kill_sandbox
from .containers import (
    client_environment,
    container_command,
    container_pid,
    ensure_host_image,
    new_name,
    relay_container,
    remove_containers,
    runtime_binary,
    secret_loader,
)
from .job import Job
from .layout import Layout, make_layout, remove_layout
from .network import NetworkPlan, plan_network
from .relays import Relays
from .settings import SandboxSettings

__all__ = ["Confinement", "confine"]


class Confinement:
    """One job made ready to run confined; use it as a (sync or async) context manager."""

    def __init__(self, settings: SandboxSettings, job: Job) -> None:
        self.settings = settings
        self.job = job
        #: the command to start (the sandbox's wrapper around ``job.argv``)
        self.argv: list[str] = []
        #: its whole environment (start the command with exactly this)
        self.env: dict[str, str] = {}
        #: where to start it
        self.cwd: Path = job.workspace
        #: port served inside -> port on the host's 127.0.0.1 that reaches it
        self.published: dict[int, int] = {}
        #: the containers to remove afterwards (docker / podman)
        self.containers: list[str] = []
        self._layout: Layout | None = None
        self._relays: Relays | None = None
        self._binary = ""
        #: bwrap: the sandbox's unique host name, by which ``close`` finds what is left of it
        self._token = ""

    # -- setting up -------------------------------------------------------------

    def open(self) -> Self:
        """Prepare folders, relays and (for containers) the network helper; blocking (up
        to a second)."""
        settings, job = self.settings, self.job
        plan = plan_network(settings, job)
        layout = self._layout = make_layout(settings, job, plan)
        try:
            self.env = self._environment(layout, plan)
            self.published = {port: port for port in job.publish}
            if not settings.confined:
                self.argv = list(job.argv)
                return self
            self._start_relays(layout, plan)
            if settings.container:
                self._open_container(layout, plan)
            else:
                bwrap = shutil.which("bwrap")
                if bwrap is None:
                    raise SandboxError(
                        "execution.sandbox: bwrap: `bwrap` not found on PATH "
                        "(install the `bubblewrap` package)"
                    )
                self._token = new_name(job.name)
                self.argv = bwrap_command(
                    bwrap, layout, plan, settings.network_mode, job.argv, self._token
                )
        except BaseException:
            self.close()
            raise
        return self

    def _environment(self, layout: Layout, plan: NetworkPlan) -> dict[str, str]:
        env = dict(self.job.env)
        env.setdefault("HOME", str(layout.home))
        env.setdefault("TMPDIR", str(layout.tmp))
        env.update(plan.environment())
        return env

    def _start_relays(self, layout: Layout, plan: NetworkPlan) -> None:
        if not plan.relayed:
            return
        relays = self._relays = Relays()
        relays.serve_plan(plan, layout.out_dir)
        for port in plan.publish:
            self.published[port] = relays.publish(layout.in_dir / f"p{port}.sock")
        relays.start()

    def _open_container(self, layout: Layout, plan: NetworkPlan) -> None:
        kind = self.settings.sandbox
        binary = self._binary = runtime_binary(kind)
        ensure_host_image(binary)
        name = new_name(self.job.name)
        mode = self.settings.network_mode
        network = "host" if mode == "full" else "none"
        if plan.relayed:
            self.containers.append(f"{name}-net")
            relay_container(binary, kind, f"{name}-net", layout, plan)
            network = f"container:{name}-net"
        self.containers.insert(0, name)
        image = self.job.image or self.settings.image
        toolchain = image is None or self.settings.host_toolchain
        # Secrets are read from a file by a shell, not kept in the container's config:
        # the host's /bin/sh
        # with its toolchain, else the host's shell bound in (an image may have none).
        layout, env, argv = secret_loader(
            layout, self.env, self.job.argv, has_shell=toolchain
        )
        self.argv = container_command(
            binary,
            kind,
            name,
            layout,
            network,
            image,
            env,
            argv,
            host_toolchain=toolchain,
        )
        self.env = client_environment(env)

    # -- while it runs ----------------------------------------------------------

    def process_roots(self) -> tuple[int, ...]:
        """Host PIDs above every process of a running container job (its init), for a
        caller that ends what
        the job's program left below it: a container's processes are not the ``docker
        run`` client's children.

        Empty outside a container (the program's own process is that root)."""
        if not self.containers:
            return ()
        pid = container_pid(self._binary, self.settings.sandbox, self.containers[0])
        return () if pid is None else (pid,)

    # -- cleaning up ------------------------------------------------------------

    def close(self) -> None:
        """Kill what is left of the sandbox, stop the relays, delete the private
        folders; safe to call twice."""
        if self._token:
            token, self._token = self._token, ""
            kill_sandbox(token)
        if self.containers:
            names, self.containers = self.containers, []
            remove_containers(self._binary, self.settings.sandbox, names)
        if self._relays is not None:
            self._relays.close()
            self._relays = None
        if self._layout is not None:
            remove_layout(self._layout)
            self._layout = None

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        import trio

        try:
            return await trio.to_thread.run_sync(self.open)
        except BaseException:
            # Cancelled while preparing: ``__aexit__`` will not run, so undo what
            # ``open`` made here.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self.close)
            raise

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        import trio

        # However the block ends (a timeout, Ctrl-C), the containers must go.
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self.close)


def confine(settings: SandboxSettings, job: Job) -> Confinement:
    """A :class:`Confinement` of ``job`` under ``settings`` (enter it to prepare, leave
    it to clean up)."""
    return Confinement(settings, job)

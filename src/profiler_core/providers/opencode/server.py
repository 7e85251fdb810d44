"""One ``opencode serve`` process: isolated home, generated config, started on a free
port, ended by its PID.

The server's output goes to ``server.log`` in its temporary home rather than a
pipe, so nothing has to keep reading it for OpenCode not to block, and the
log is there to quote when start-up fails.

One server serves every session of its mode, and each session's tools run
as its children: a tool that leaves its shell (``&``, ``nohup``, ``setsid``)
would outlive its session and act in the next ones. So the server adopts
such orphans (a child subreaper; in bwrap its PID namespace does the same),
the processes below it once it is ready are its own, and whatever appears
below it later belongs to a session: :meth:`OpenCodeServer.end_session_processes`
ends it when its session ends. In a docker or podman container the server's
processes are not below the ``docker run`` client that started it: they are
below the container's init, whose host PID is looked at as well.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ...util.descendants import SUBREAPER, descendants, end_processes, working_folder
from ...util.leftovers import remove_folder, temporary_folder
from ...util.processes import end_process_group, process_alive, track_group
from ...util.safefiles import read_tail
from .config import OpenCodeError
from .wire import hide_key

if TYPE_CHECKING:  # trio is imported where used: listing the plugins does not load it
    import trio

    from ...model.environment import SandboxSettings

#: What OpenCode prints once it accepts requests; probing earlier can hang a request for minutes.
READY = re.compile(r"opencode server listening on (http://\S+)")

#: Variables of the runner's environment that would point OpenCode at the user's own configuration.
_USER_CONFIG_VARS = (
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    "OPENCODE_CONFIG_CONTENT",
)


@attrs.define(eq=False)
class OpenCodeServer:
    """A running ``opencode serve`` and the temporary directory it owns."""

    process: trio.Process
    url: str
    home: Path
    log_path: Path
    #: the sandbox it runs in (closed after it ended), when the run has one
    confinement: Any = None
    #: the processes below the server once it was ready (its own helpers): PID -> start time
    baseline: dict[int, str] = attrs.Factory(dict)
    #: more host PIDs whose descendants are the server's (a container's init); the
    #: server's own is always one
    roots: tuple[int, ...] = ()

    @property
    def pid(self) -> int:
        """The server's process id (also its process group id)."""
        return self.process.pid

    def end_session_processes(self, folder: str | None) -> int:
        """End the processes below the server that appeared after it was ready: those
        working in ``folder``
        (a session's, while others run), or all of them (``None``: no other session
        runs); how many."""
        found = {
            pid: started
            for pid, started in self.processes().items()
            if self.baseline.get(pid) != started
        }
        if folder is not None:
            inside = Path(folder).resolve()
            found = {
                pid: started for pid, started in found.items()
                if (cwd := working_folder(pid)) is not None and (cwd == inside or inside in cwd.parents)
            }  # fmt: skip
        return end_processes(found)

    def processes(self) -> dict[int, str]:
        """Every live process below the server (inside its container too): PID -> start time."""
        found: dict[int, str] = {}
        for root in (self.pid, *self.roots):
            found.update(descendants(root))
        return found

    def log_tail(self, lines: int = 5) -> str:
        """The last lines OpenCode printed, on one line (for error messages)."""
        return _tail(self.log_path, lines)

    async def stop(self, grace_s: float = 5.0) -> None:
        """SIGTERM the server's process group, SIGKILL it after ``grace_s``, remove the
        temporary directory."""
        try:
            # Also after a clean exit: tools OpenCode started may linger in its group.
            await end_process_group(self.process, grace_s)
            if self.confinement is not None:
                await self.confinement.__aexit__(None, None, None)
        finally:
            remove_folder(self.home)

    def clean_up_at_exit(self) -> None:
        """What an exit that skipped :meth:`stop` (an uncaught error) still does once
        the group is killed."""
        if self.confinement is not None:
            self.confinement.close()
        remove_folder(self.home)


#: What a sandboxed server keeps of the runner's environment (nothing else: it may hold other keys).
_SANDBOX_KEPT = ("PATH", "LANG", "LC_ALL", "TZ", "TERM")


def server_environment(
    home: Path,
    config: Mapping[str, object],
    mode_env: Mapping[str, str],
    *,
    confined: bool = False,
    key: str | None = None,
) -> dict[str, str]:
    """The child's environment: the runner's (in a sandbox only ``_SANDBOX_KEPT``), the
    mode's (with the
    placeholder where either holds ``key``, the real key the wire recorder keeps), then
    an isolated home and
    the generated config."""
    if confined:
        env = {k: os.environ[k] for k in _SANDBOX_KEPT if k in os.environ}
    else:
        env = {k: v for k, v in os.environ.items() if k not in _USER_CONFIG_VARS}
    env.update({k: str(v) for k, v in mode_env.items()})
    env = hide_key(env, key)
    for name in ("config", "data", "cache", "state"):
        (home / name).mkdir(parents=True, exist_ok=True)
    settle_plugin_sdk(home / "config" / "opencode")
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_STATE_HOME=str(home / "state"),
        OPENCODE_CONFIG_CONTENT=json.dumps(config),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
    )
    return env


#: What OpenCode installs into each of its config folders, in the background, when it is
#: missing there.
PLUGIN_SDK = "@opencode-ai/plugin"


def settle_plugin_sdk(config_dir: Path) -> None:
    """Tell OpenCode its plugin SDK is already installed in ``config_dir``, so it does
    not fetch it from npm.

    OpenCode runs ``npm install @opencode-ai/plugin`` in every config folder
    that has no ``node_modules`` (once it is there, only a missing name in
    ``package-lock.json`` starts it again). In a fresh home that is about 64 MB
    from the npm registry and ~5 s of CPU beside the first session: network the
    run must not need, and a load that would be measured as the agent's. The
    SDK only serves plugins written in that folder, and the generated home has
    none (docs/providers/opencode.md).
    """
    (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {
        "name": "opencode-config",
        "lockfileVersion": 3,
        "packages": {"": {"dependencies": {PLUGIN_SDK: "*"}}},
    }
    (config_dir / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")


async def start_server(
    binary: str,
    *,
    config: Mapping[str, object],
    mode_env: Mapping[str, str],
    port: int = 0,
    start_timeout_s: float = 30.0,
    kill_grace_s: float = 5.0,
    sandbox: SandboxSettings | None = None,
    workdir: Path | None = None,
    endpoints: tuple[str, ...] = (),
    key: str | None = None,
) -> OpenCodeServer:
    """Start ``opencode serve`` in a fresh temporary home (in the run's sandbox, when it
    has one) and wait for
    its "listening" line; ``workdir`` is the folder its sessions' workspaces are under
    (writable in a sandbox);
    ``key``: the real API key the wire recorder keeps, replaced in the server's environment."""
    import trio

    home = temporary_folder("profiler-opencode-")
    log_path = home / "server.log"
    confined = sandbox is not None and sandbox.confined
    env = server_environment(home, config, mode_env, confined=confined, key=key)
    if confined and not port:
        port = (
            _free_port()
        )  # published from the sandbox: the port must be known before it starts
    command = [binary, "serve", "--port", str(port), "--hostname", "127.0.0.1"]
    # orphans of the sessions' tools are adopted by the server, not by init (module
    # docstring)
    if not confined:
        command = [sys.executable, "-I", "-S", "-c", SUBREAPER, *command]
    cwd, box = home, None
    if confined:
        from ...sandbox import Job, confine
        from .._agent_process import program_folders

        assert (
            sandbox is not None
        )  # confined implies a sandbox (narrowing for the type checker)
        # An opencode installed under the home, /tmp or a hidden folder is shown
        # read-only, as the other agents are.
        shown = tuple(
            program_folders(
                binary, container=sandbox.container, hidden=sandbox.hide_paths
            )
        )
        box = await confine(
            sandbox,
            Job(
                argv=tuple(command),
                env=env,
                workspace=workdir or home,
                home=home,
                publish=(port,),
                endpoints=endpoints,
                mounts=shown,
                name="opencode",
            ),
        ).__aenter__()
        command, env, cwd = box.argv, box.env, box.cwd
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        # A session of its own: Ctrl-C in the terminal reaches the profiler, which then ends the
        # server in order; the group id lets us end the tools OpenCode started along with it.
        process = await trio.lowlevel.open_process(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        remove_folder(home)
        if box is not None:
            await box.__aexit__(None, None, None)
        raise OpenCodeError(
            f"opencode: cannot start {binary!r}: {exc.strerror or exc}"
        ) from None
    finally:
        os.close(log_fd)
    server = OpenCodeServer(
        process=process, url="", home=home, log_path=log_path, confinement=box
    )
    track_group(server.pid, server.clean_up_at_exit)
    try:
        server.url = await _wait_ready(server, start_timeout_s)
    except BaseException:
        await server.stop(kill_grace_s)
        raise
    if box is not None:
        # the host's end of the published port
        server.url = f"http://127.0.0.1:{box.published[port]}"
        server.roots = await trio.to_thread.run_sync(box.process_roots)
    server.baseline = server.processes()
    return server


async def close_server(
    client: Any, server: OpenCodeServer | None, kill_grace_s: float
) -> None:
    """Close ``client`` (an ``httpx.AsyncClient``), then stop ``server`` by its PID,
    even when the close fails; either may be None."""
    try:
        if client is not None:
            await client.aclose()
    finally:
        if server is not None:
            await server.stop(kill_grace_s)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _wait_ready(server: OpenCodeServer, timeout_s: float) -> str:
    import trio

    deadline = trio.current_time() + timeout_s
    while True:
        match = READY.search(_read(server.log_path))
        if match:
            return match.group(1).rstrip("/")
        if server.process.poll() is not None:
            raise OpenCodeError(
                f"opencode exited with status {server.process.returncode} "
                f"before it was ready: {server.log_tail()}"
            )
        if trio.current_time() > deadline:
            raise OpenCodeError(
                f"opencode did not print 'opencode server listening' within {timeout_s:g} s "
                "(raise options.start_timeout_s on a slow machine); its "
                f"output: {server.log_tail() or '(none)'}"
            )
        await trio.sleep(0.05)


def _read(path: Path) -> str:
    # The server's home is writable by what the server runs: its log is read bounded,
    # never through a link.
    return read_tail(path, 1 << 20).decode("utf-8", errors="replace")


def _tail(path: Path, lines: int) -> str:
    text = [line.strip() for line in _read(path).splitlines() if line.strip()]
    return " | ".join(text[-lines:])


__all__ = [
    "PLUGIN_SDK",
    "OpenCodeServer",
    "close_server",
    "process_alive",
    "server_environment",
    "settle_plugin_sdk",
    "start_server",
]

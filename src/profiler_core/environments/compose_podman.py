"""Compose under podman: Compose v2 against podman's Docker-compatible API.

Compose talks to a Docker API socket. Podman serves one with ``podman system
service``: one is started per compose trial on a socket in a private folder
(no system socket, nothing of another run's), and ended by its PID after the
project is down. Compose is pointed at it with ``DOCKER_HOST``, and builds
with the API's classic builder (``DOCKER_BUILDKIT=0``): Compose's BuildKit
needs a builder container image that an offline host does not have.

Podman differs from Docker in two ways a compose file cannot say, so our file
over the task's says them (docs/harbor.md, "Compose tasks"):

- the init: podman's ``--init`` needs catatonit at the path podman was built
  with, and Compose cannot pass ``--init-path``; so the init program the
  one-container trial uses is bound read-only into ``main`` and is its
  entrypoint (``<init> -- sleep infinity``), as podman's own ``--init`` does;
- open files and processes: podman raises them to its defaults, which a host
  with lower hard limits refuses (``error setting rlimit``); every service
  without ``ulimits`` of its own gets the one-container trial's.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

from ..errors import SandboxError
from ..sandbox.containers import client_environment, last_line, podman_init_program
from ..sandbox.podman import global_options
from ..util.processes import forget_group, signal_group, track_group

__all__ = ["INIT_TARGET", "PodmanService", "podman_init", "podman_ulimits"]

#: where ``main``'s init is bound (where podman's own ``--init`` puts it)
INIT_TARGET = "/run/podman-init"
#: the one-container trial's limits (``containers.ContainerTrial.create``)
ULIMITS = {"nofile": {"soft": 20000, "hard": 20000}, "nproc": 4096}
#: how long the service may take to answer
_READY_S = 30.0


def podman_init() -> str | None:
    """The init program to bind into ``main`` (catatonit, tini, docker-init), or None."""
    found = podman_init_program()
    return str(Path(found).resolve()) if found else None


def podman_ulimits(
    services: dict[str, dict[str, object]],
) -> dict[str, dict[str, object]]:
    """Our file's entries for the services without ``ulimits`` of their own."""
    return {
        name: {"ulimits": ULIMITS}
        for name, service in services.items()
        if not service.get("ulimits")
    }


class PodmanService:
    """``podman system service`` on a socket in ``folder``, for one compose trial."""

    def __init__(self, binary: str, folder: Path) -> None:
        self.socket = folder / "podman.sock"
        self._log = folder / "podman-service.log"
        with self._log.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    binary,
                    *global_options(binary),
                    "system",
                    "service",
                    "--time",
                    "0",  # no idle timeout: it lives until stop()
                    f"unix://{self.socket}",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=client_environment({}),
                start_new_session=True,
            )
        # its own group (conmon, which watches the containers, starts a session of its own):
        # killed at exit if stop() never ran, and by the next run if this one is killed
        track_group(self.process.pid)

    @property
    def environment(self) -> dict[str, str]:
        """What Compose needs to use it: the socket, and the API's classic builder."""
        return {"DOCKER_HOST": f"unix://{self.socket}", "DOCKER_BUILDKIT": "0"}

    def wait_ready(self) -> None:
        """Return once the API answers ``/_ping``; ``SandboxError`` (one line) if it does not."""
        deadline = time.monotonic() + _READY_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = last_line(self._log.read_bytes()) or "no output"
                raise SandboxError(f"podman system service ended: {tail}")
            if self._pings():
                return
            time.sleep(0.05)
        raise SandboxError(
            f"podman system service did not answer within {_READY_S:.0f} s"
        )

    def _pings(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(2)
                conn.connect(str(self.socket))
                conn.sendall(b"GET /_ping HTTP/1.0\r\nHost: podman\r\n\r\n")
                status = conn.recv(64).split(b"\r\n", 1)[0]
        except OSError:
            return False
        return status.startswith(b"HTTP/1.") and b" 200 " in status + b" "

    def stop(self) -> None:
        """End the service's process group by its PID (SIGTERM, then SIGKILL after 10 s)."""
        if self.process.poll() is None:
            signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                signal_group(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        forget_group(self.process.pid)

"""The ``model`` network of a persistent bwrap trial: its model reached from inside the one sandbox.

The sandbox's own network is loopback only. For a ``model`` phase the
sandbox relay (``sandbox/relay_main.py``, the standard library only) is
started *inside* the trial's sandbox, entered like every command, and
listens on 127.0.0.1:<port> of each loopback endpoint (the wire recorder's:
its URL holds unchanged) and on a proxy port for HTTPS endpoints and
``allow_hosts``; each connection goes through a Unix socket in a folder bound
into the sandbox to :class:`~profiler_core.sandbox.relays.Relays` here on the
host, which connects only to those endpoints (the CONNECT proxy admits only
the allow-list). So every command of the phase, the agent's included, runs
in the trial's sandbox with its processes, and the relay ends with the phase.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SandboxError

if TYPE_CHECKING:
    from ..sandbox.relays import Relays

__all__ = ["SandboxRelay"]

#: seconds the relay inside may take to listen
READY_S = 10.0


class SandboxRelay:
    """The relay of one ``model`` phase: listeners inside the sandbox, the way out on the host."""

    def __init__(self, folder: Path) -> None:
        #: a folder bound into the sandbox at its host path (the sockets, the relay program)
        self.folder = folder
        #: ``PROFILER_EXEC`` of the relay inside, by which it is ended
        self.marker = uuid.uuid4().hex
        self._relays: Relays | None = None
        self._inside: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}

    def environment(self) -> dict[str, str]:
        """Variables that point a command at the proxy (none without one)."""
        return dict(self._env)

    def start(
        self,
        endpoints: tuple[str, ...],
        allow_hosts: tuple[str, ...],
        enter: Callable[[list[str], str], list[str]],
    ) -> None:
        """Serve ``endpoints`` and ``allow_hosts`` inside (``enter``: argv -> the host
        command running it in the sandbox); ``SandboxError`` with one line when it cannot."""
        from ..sandbox import relay_main
        from ..sandbox.layout import relay_python
        from ..sandbox.network import plan_model
        from ..sandbox.relays import Relays, relay_arguments

        plan = plan_model(endpoints, allow_hosts)
        if not plan.relayed:
            return
        _empty(self.folder)  # what an earlier phase's commands may have left there
        program = self.folder / "relay.py"
        ready = self.folder / "ready"
        relays = self._relays = Relays()
        # one folder both ways: the sockets out, the ready mark in (a model plan publishes none)
        args = relay_arguments(plan, self.folder, self.folder)
        try:
            shutil.copyfile(Path(relay_main.__file__), program)
            relays.serve_plan(plan, self.folder)
        except OSError as exc:
            raise SandboxError(
                f"bwrap: the model relay: {self.folder}: {exc.strerror or exc}"
            ) from None
        relays.start()
        self._env = plan.environment()
        argv = [str(relay_python()), "-I", "-S", str(program), *args]
        self._inside = subprocess.Popen(
            enter(argv, "/"),
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "PROFILER_EXEC": self.marker,
            },
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + READY_S
        while not ready.exists():
            if self._inside.poll() is not None or time.monotonic() > deadline:
                stderr = self._inside.stderr
                why = (
                    stderr.read().decode(errors="replace")
                    if stderr and self._inside.poll() is not None
                    else ""
                )
                raise SandboxError(
                    "bwrap: the model relay inside the trial did not start: "
                    f"{why.strip()[-200:] or f'no answer within {READY_S:g} s'}"
                )
            time.sleep(0.02)

    def stop(self, kill: Callable[[str], None]) -> None:
        """End the relay inside (``kill``: ends the processes carrying a marker) and here."""
        inside, self._inside = self._inside, None
        if inside is not None:
            kill(self.marker)
            inside.kill()
            inside.wait()
            if inside.stderr is not None:
                inside.stderr.close()
        relays, self._relays = self._relays, None
        if relays is not None:
            relays.close()
        self._env = {}
        _empty(self.folder)


def _empty(folder: Path) -> None:
    """Remove what ``folder`` holds (written inside too: links removed, never followed);
    the folder itself stays, bound in the sandbox."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)

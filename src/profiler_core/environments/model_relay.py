"""A trial's ``model`` network: the agent inside reaches its model endpoints and nothing else.

The trial's container has no route out (started with ``--network none``, or
disconnected from the runtime's network for the agent's phase); only its
loopback is left. A helper container of the host-toolchain image joins the
trial's network namespace (``--network container:<trial>``) and runs the
sandbox's inside relay there: 127.0.0.1:PORT in the trial leads, through a
Unix socket in a host folder mounted into the helper only, to the relays
here (``sandbox.relays``), which connect to the endpoint's host and port (the
wire recorder, which holds the real key) or, for a remote HTTPS endpoint and
``allow_hosts``, to a CONNECT proxy with that allow-list. The task's image
needs no Python and no relay program of its own: the helper brings both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import SandboxError
from ..sandbox.containers import (
    ensure_host_image,
    relay_container,
    remove_containers,
)
from ..sandbox.layout import Layout
from ..sandbox.network import NetworkPlan, plan_model
from ..sandbox.relays import Relays
from ..util.leftovers import remove_folder, temporary_folder

__all__ = ["ModelRelay"]

#: where the relay's sockets live: short enough for a Unix socket's path (under 108 bytes)
_PARENT = Path("/tmp")


class ModelRelay:
    """The relay of one trial's ``model`` network; :meth:`start` it for the agent's
    phase, :meth:`stop` after."""

    def __init__(
        self, endpoints: tuple[str, ...], allow_hosts: tuple[str, ...]
    ) -> None:
        """Plan the relays (an endpoint that cannot be relayed is a ``SandboxError`` line now)."""
        if not endpoints and not allow_hosts:
            raise SandboxError(
                "a trial's network 'model' needs a model endpoint to relay (the agent's base URL)"
            )
        self.plan: NetworkPlan = plan_model(endpoints, allow_hosts)
        self._relays: Relays | None = None
        self._root: Path | None = None
        self._helper: tuple[str, str, str] | None = None

    @property
    def running(self) -> bool:
        """Whether the helper is serving the trial."""
        return self._helper is not None

    def environment(self) -> dict[str, str]:
        """Variables the agent needs (the CONNECT proxy's, when remote hosts are relayed)."""
        return self.plan.environment()

    def start(self, binary: str, kind: str, trial: str) -> None:
        """Serve the trial ``trial`` (a container name): host relays first, then the
        helper in its namespace."""
        if self._helper is not None:
            return
        root = self._root = temporary_folder("profiler-relay-", _PARENT)
        try:
            (root / "out").mkdir()
            (root / "in").mkdir()
            shutil.copyfile(
                Path(__file__).parent.parent / "sandbox" / "relay_main.py",
                root / "out" / "relay.py",
            )
            layout = Layout(
                root=root,
                workspace=root,
                home=root,
                tmp=root,
                mounts=(),
                hidden=(),
                runtime=root,
            )
            relays = self._relays = Relays()
            relays.serve_plan(self.plan, layout.out_dir)
            relays.start()
            name = f"{trial}-relay"
            ensure_host_image(
                binary
            )  # the helper's image: the host's toolchain (its Python)
            relay_container(
                binary, kind, name, layout, self.plan, network=f"container:{trial}"
            )
            self._helper = (binary, kind, name)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """End the helper, the host relays and their folder (safe to call twice)."""
        helper, self._helper = self._helper, None
        if helper is not None:
            binary, kind, name = helper
            remove_containers(binary, kind, [name])
        relays, self._relays = self._relays, None
        if relays is not None:
            relays.close()
        root, self._root = self._root, None
        if root is not None:
            remove_folder(root)

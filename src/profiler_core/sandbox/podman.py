"""Which OCI runtime podman runs containers with: crun refuses every container on a
cgroups v1 or hybrid host.

Podman's default runtime, crun, cannot start a container where the cgroup
hierarchy is v1 or hybrid (v1 controllers, cgroup2 only at
``/sys/fs/cgroup/unified``): every ``podman run`` fails. runc works there. So
when podman would use crun on such a host, its containers are started with
``podman --runtime runc`` and one line says so; the same options go before
every podman command that starts one (``build``'s RUN steps, a trial's
``run --detach``: :func:`runtime_options`). A user's own configuration is
left alone: with ``$CONTAINERS_CONF`` set (it reaches podman, see
``containers.client_environment``), or a runtime other than crun configured,
podman decides.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import attrs

from ..model.record import Record

log = logging.getLogger(__name__)

__all__ = [
    "RuntimeChoice",
    "cgroup_layout",
    "choose_runtime",
    "global_options",
    "runtime_options",
]

#: where the host's cgroup file systems are mounted
CGROUP_ROOT = Path("/sys/fs/cgroup")


@attrs.frozen(repr=False, eq=False)
class RuntimeChoice(Record):
    """Podman's global options for ``run`` (``--runtime PATH`` or none) and the line
    that says what was chosen."""

    options: tuple[str, ...]
    line: str | None


def cgroup_layout(root: Path | None = None) -> str:
    """``v2`` (unified), ``hybrid`` (v1 controllers and cgroup2 at ``unified/``) or ``v1``."""
    root = CGROUP_ROOT if root is None else root
    if (root / "cgroup.controllers").exists():
        return "v2"
    return "hybrid" if (root / "unified").is_dir() else "v1"


def choose_runtime(
    layout: str, configured: str, env: Mapping[str, str], runc: str | None
) -> RuntimeChoice:
    """The runtime podman should use given the host's cgroup ``layout`` and the one it
    is ``configured`` with."""
    if env.get("CONTAINERS_CONF"):
        return RuntimeChoice(
            (),
            f"podman: using your CONTAINERS_CONF ({env['CONTAINERS_CONF']}), "
            f"runtime {configured or 'as configured'}",
        )
    if layout == "v2" or Path(configured).name != "crun":
        return RuntimeChoice((), None)  # podman's own choice works here
    if runc is None:
        return RuntimeChoice(
            (), f"podman: crun cannot start containers on this cgroups {layout} "
                "host and runc is not installed "
            "(install the `runc` package, or set CONTAINERS_CONF to a "
                "configuration naming a runtime that works)",
        )  # fmt: skip
    return RuntimeChoice(
        ("--runtime", runc),
        f"podman: cgroups {layout} host, where crun refuses containers: using runc ({runc})",
    )


_CHOSEN: dict[str, RuntimeChoice] = {}


def global_options(binary: str) -> tuple[str, ...]:
    """``podman``'s global options for this host (asked once per program; its line logged once)."""
    choice = _CHOSEN.get(binary)
    if choice is None:
        layout = cgroup_layout()
        # `podman info` costs half a second: asked only where its answer can matter
        asked = layout != "v2" and not os.environ.get("CONTAINERS_CONF")
        choice = _CHOSEN[binary] = choose_runtime(
            layout,
            _configured(binary) if asked else "",
            os.environ,
            shutil.which("runc"),
        )
        if choice.line:
            log.warning("%s", choice.line)
    return choice.options


def runtime_options(binary: str, kind: str) -> tuple[str, ...]:
    """The global options every ``podman`` command that starts a container needs
    (``run``, and ``build``'s RUN steps); none for docker."""
    return global_options(binary) if kind == "podman" else ()


def _configured(binary: str) -> str:
    """The runtime podman would use (``podman info``); empty when it does not say."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("PATH", "CONTAINERS_CONF", "CONTAINER_HOST", "XDG_RUNTIME_DIR", "HOME")
    }
    try:
        done = subprocess.run(
            [binary, "info", "--format", "{{.Host.OCIRuntime.Path}}"],
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (
        done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""
    )

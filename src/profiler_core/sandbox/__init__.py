"""Sandboxes for agents and verifiers: bubblewrap, Docker or Podman, with the network
cut to the model.

A caller describes one program as a :class:`Job` (command, environment,
workspace, private home and tmp, model endpoints), enters
``confine(settings, job)`` and starts the ``argv`` it gets with exactly its
``env``; leaving the block cleans up. :func:`check` tells in one line,
before any session, whether the sandbox can start here. See docs/sandbox.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from .job import Job, Mount
from .settings import NETWORKS, SANDBOXES, SandboxSettings

#: the public names this module defines or imports itself
_EAGER = (
    "NETWORKS",
    "SANDBOXES",
    "Job",
    "Mount",
    "SandboxSettings",
)

#: module of this package -> the public names it defines, imported on first use: a run without
#: a sandbox needs only the settings. (No submodule is named like one of these, so importing a
#: submodule never hides a name.)
_LAZY = {
    "confinement": ("Confinement", "confine"),
    "preflight": ("check", "sandbox_problems"),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
    from .confinement import (
        Confinement,
        confine,
    )
    from .preflight import (
        check,
        sandbox_problems,
    )

__all__ = [
    "NETWORKS",
    "SANDBOXES",
    "Confinement",
    "Job",
    "Mount",
    "SandboxSettings",
    "check",
    "confine",
    "sandbox_problems",
]
# End of the written names.

"""Sandboxes for agents and verifiers: bubblewrap, Docker or Podman, with the network cut to the model.

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

if TYPE_CHECKING:  # pragma: no cover
    from .confinement import Confinement, confine
    from .preflight import check, sandbox_problems

#: name -> the module defining it, imported on first use: a run without a sandbox needs only the settings.
#: (No submodule is named like one of these, so importing a submodule never hides a name.)
_LAZY = {
    "Confinement": "confinement",
    "confine": "confinement",
    "check": "preflight",
    "sandbox_problems": "preflight",
}


__getattr__ = lazy_exports(__name__, _LAZY)

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

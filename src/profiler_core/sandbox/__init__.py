"""Sandboxes for agents and verifiers: bubblewrap, Docker or Podman, with the network cut to the model.

A caller describes one program as a :class:`Job` (command, environment,
workspace, private home and tmp, model endpoints), enters
``confine(settings, job)`` and starts the ``argv`` it gets with exactly its
``env``; leaving the block cleans up. :func:`check` tells in one line,
before any session, whether the sandbox can start here. See docs/sandbox.md.
"""

from __future__ import annotations

from .confine import Confinement, confine
from .job import Job, Mount
from .preflight import check, sandbox_problems
from .settings import NETWORKS, SANDBOXES, SandboxSettings

__all__ = ["NETWORKS", "SANDBOXES", "Confinement", "Job", "Mount", "SandboxSettings", "check", "confine", "sandbox_problems"]

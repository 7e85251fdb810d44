"""Before any session: can the chosen sandbox start here? One line when it cannot.

``check`` runs a real, tiny confined command (``true`` in an empty
workspace, with the settings' network), so it catches what a look at PATH
would miss: unprivileged user namespaces forbidden (Ubuntu 24.04's AppArmor
default), a Docker daemon that is down, Podman's rlimit trouble, an image
that is not there.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import attrs

from ..errors import SandboxError
from ..model.environment import BUILTIN_ENVIRONMENTS
from ..util.leftovers import remove_folder, temporary_folder
from .confinement import confine
from .containers import last_line, runtime_binary
from .job import Job
from .settings import SandboxSettings

__all__ = ["check", "sandbox_problems"]

#: seconds the trial command may take (a first container start can take several)
TRIAL_TIMEOUT_S = 60.0
#: what a failing bwrap most likely means, said after its own message
_USERNS_HINT = "unprivileged user namespaces may be disabled here; see docs/sandbox.md"


def check(settings: SandboxSettings, *, image: str | None = None) -> None:
    """Raise SandboxError (one line) unless a program can be started in the sandbox of ``settings``
    (a plugin's environment kind is checked by its own ``check()``, through the
    registry: ``sandbox_problems``)."""
    if not settings.confined or settings.sandbox not in BUILTIN_ENVIRONMENTS:
        return
    if settings.container:
        _check_runtime(settings.sandbox)
        if image or settings.image:
            _check_image(settings.sandbox, image or settings.image or "")
    elif shutil.which("bwrap") is None:
        raise SandboxError(
            "execution.sandbox: bwrap: `bwrap` not found on PATH (install the `bubblewrap` package)"
        )
    _trial(settings)


def _check_runtime(kind: str) -> None:
    binary = runtime_binary(kind)
    what = "{{.Server.Version}}" if kind == "docker" else "{{.Client.Version}}"
    try:
        done = subprocess.run(
            [binary, "version", "--format", what],
            capture_output=True,
            timeout=TRIAL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(
            f"execution.sandbox: {kind}: `{kind} version` did not answer within "
            f"{TRIAL_TIMEOUT_S:.0f} s"
        ) from None
    if done.returncode != 0:
        hint = " (start the Docker daemon: `dockerd`)" if kind == "docker" else ""
        raise SandboxError(
            f"execution.sandbox: {kind} is not usable: {last_line(done.stderr)}{hint}"
        )


def _check_image(kind: str, image: str) -> None:
    done = subprocess.run(
        [runtime_binary(kind), "image", "inspect", image],
        capture_output=True,
        timeout=TRIAL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise SandboxError(
            f"execution.sandbox_image: {image!r} is not in {kind}'s local "
            "images (build or load it first; no registry is used)"
        )


def _trial(settings: SandboxSettings) -> None:
    """Start ``true`` in the sandbox (in the host's toolchain); its failure is the sandbox's."""
    workspace = temporary_folder(
        "profiler-sbx-check-"
    )  # recorded: a run killed during the check leaves nothing
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        # With network: model, a (never used) endpoint makes the trial start the relays too.
        endpoints = (
            ("http://127.0.0.1:65000",) if settings.network_mode == "model" else ()
        )
        job = Job(
            argv=("true",),
            env=env,
            workspace=workspace,
            endpoints=endpoints,
            name="check",
        )
        try:
            with confine(attrs.evolve(settings, image=None), job) as box:
                done = subprocess.run(
                    box.argv,
                    env=box.env,
                    cwd=box.cwd,
                    capture_output=True,
                    timeout=TRIAL_TIMEOUT_S,
                    check=False,
                )
        except subprocess.TimeoutExpired:
            raise SandboxError(
                f"execution.sandbox: {settings.sandbox}: a trial command did "
                f"not end within {TRIAL_TIMEOUT_S:.0f} s"
            ) from None
    finally:
        remove_folder(workspace)
    if done.returncode != 0:
        hint = f" ({_USERNS_HINT})" if settings.sandbox == "bwrap" else ""
        raise SandboxError(
            f"execution.sandbox: {settings.sandbox} cannot start a sandbox "
            f"here: {last_line(done.stderr)}{hint}"
        )


def sandbox_problems(execution: object, where: str) -> list[str]:
    """``check`` for a profile's ``execution`` section, as lines for ``profiler
    validate`` (empty: fine);
    a plugin's environment kind is looked up in the registry and asked its own ``check()``."""
    try:
        settings = SandboxSettings.from_execution(execution)
        if settings.sandbox not in BUILTIN_ENVIRONMENTS:
            return _plugin_problems(settings, where)
        check(settings)
    except SandboxError as exc:
        return [f"{where}: {exc}"]
    return []


def _plugin_problems(settings: SandboxSettings, where: str) -> list[str]:
    from ..plugins.manager import (
        get_plugin_manager,
    )  # only for a kind no built-in provides

    registry = get_plugin_manager().registry
    if registry.find("environments", settings.sandbox) is None:
        known = ", ".join(sorted(registry.ids("environments")))
        return [
            f"{where}: execution.sandbox: expected one of {known}, got {settings.sandbox!r}"
        ]
    problem = registry.create("environments", settings.sandbox).check()
    return (
        [f"{where}: execution.sandbox: {settings.sandbox}: {problem}"]
        if problem
        else []
    )

"""A compose trial: a Harbor task's ``environment/docker-compose.yaml`` run with Docker Compose v2.

As Harbor runs it (docs/harbor.md, "Compose tasks"): the project's ``main``
service is the trial's environment, where set-up, the agent and the verifier
run; the task's other services start beside it on the project's private
network, where ``main`` reaches them by their service names. The task's
compose file is read as written, with a second file of ours over it that
gives ``main`` the trial's image (the task's own, built from its
``Dockerfile``, plus Harbor's log folders), an init as PID 1, a name, labels,
limits, the task's environment variables (names only: the values come from
compose's own environment) and the trial's mounts. Services with a ``build``
are built first, then ``up --wait`` starts them all.

Commands, files and the working folder are a container trial's
(``containers.ContainerTrial``, by ``main``'s container name). A phase
without the network disconnects ``main`` from every network it is on (then
only loopback is left, the sidecars too are out of reach, as under Harbor's
``network_mode: none``); a phase with it connects them again. Under ``model``
``main`` is off every network too and the agent's model is relayed onto its
loopback (``model_relay``, as in a one-container trial). ``stop`` ends that
relay, then is one
``down --volumes --remove-orphans --timeout 0`` of the project (SIGKILL for
every service: no stop timeout waited out), finished in the background.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from ..errors import SandboxError
from ..model.environment import TrialSpec
from ..sandbox.containers import (
    HOST_DIRS,
    HOST_IMAGE,
    client_environment,
    ensure_host_image,
    last_line,
    runtime_binary,
)
from .containers import LABEL, ContainerTrial, _remove_later, trial_image

__all__ = ["ComposeTrial", "compose_program", "start_compose"]

#: the service Harbor runs the agent and the verifier in
MAIN = "main"
#: where Docker looks for CLI plugins, after ``$DOCKER_CONFIG/cli-plugins`` and ``~/.docker/...``
_PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)
#: said when no Compose v2 is found
MISSING = (
    "compose tasks need Docker Compose v2 (`docker compose` or a v2 `docker-compose`), not found: "
    "`bash .ci/install-compose` installs it"
)
_FOUND: dict[str, str | None] = {}


def compose_program() -> str | None:
    """The Compose v2 program (a v2 ``docker-compose`` on PATH, else Docker's CLI plugin), or None.

    The plugin is run directly (it works stand-alone): the runtime's client runs with a small
    environment, without the ``HOME`` where ``docker compose`` would look for it.
    """
    if "program" not in _FOUND:
        config = os.environ.get("DOCKER_CONFIG") or os.path.expanduser("~/.docker")
        candidates = [
            shutil.which("docker-compose"),
            *(
                os.path.join(folder, "docker-compose")
                for folder in (os.path.join(config, "cli-plugins"), *_PLUGIN_DIRS)
            ),
        ]
        _FOUND["program"] = next((c for c in candidates if c and _is_v2(c)), None)
    return _FOUND["program"]


def _is_v2(program: str) -> bool:
    if not os.access(program, os.X_OK):
        return False
    try:
        done = subprocess.run(
            [program, "version", "--short"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip().lstrip("v").startswith("2.")


def project_name(label: str) -> str:
    """A fresh compose project name from a trial's label (lower case, digits, ``-``, ``_``)."""
    safe = re.sub(r"[^a-z0-9_-]", "-", label.lower())[:40].strip("-_") or "trial"
    return f"profiler-{safe}-{uuid.uuid4().hex[:10]}"


def start_compose(
    spec: TrialSpec, compose_file: str, *, pull: str, timeout_s: float
) -> ComposeTrial:
    """Start the trial's compose project (``main`` and its services); ``SandboxError`` if not."""
    program = compose_program()
    if program is None:
        raise SandboxError(MISSING)
    binary = runtime_binary("docker")
    trial = ComposeTrial(binary, program, Path(compose_file), project_name(spec.name))
    try:
        trial.up(spec, pull=pull, timeout_s=timeout_s)
    except BaseException:
        trial.stop()
        raise
    return trial


def _main_service(spec: TrialSpec, image: str | None, name: str) -> dict[str, object]:
    """What our file sets of ``main`` over the task's: image, name, init, limits, env, mounts."""
    main: dict[str, object] = {
        "container_name": name,
        "entrypoint": ["sleep"],
        "command": ["infinity"],
        "init": True,
        "security_opt": ["no-new-privileges"],
        "labels": {LABEL: spec.name, **spec.labels},
        "environment": list(spec.env),  # names only: never a value in a file
    }
    if image is not None:
        main |= {"image": image, "pull_policy": "never"}
    if spec.workdir:
        main["working_dir"] = spec.workdir
    if spec.user:
        main["user"] = spec.user
    if spec.cpus:
        main["cpus"] = spec.cpus
    if spec.memory_mb:
        main["mem_limit"] = f"{spec.memory_mb}m"
    if spec.network == "none" and not spec.network_switch:
        main["network_mode"] = "none"  # Harbor's no-network file does the same
    volumes = [
        {
            "type": "bind",
            "source": mount.source,
            "target": mount.target,
            "read_only": mount.read_only,
        }
        for mount in spec.mounts
    ]
    if image is not None and spec.host_toolchain:
        volumes += [
            {
                "type": "bind",
                "source": os.path.realpath(folder),
                "target": folder,
                "read_only": True,
            }
            for folder in HOST_DIRS
            if folder != "/etc" and os.path.exists(folder)
        ]
    if volumes:
        main["volumes"] = volumes
    return main


class ComposeTrial(ContainerTrial):
    """One compose project per trial: commands and files go to its ``main`` service's container."""

    def __init__(
        self, binary: str, program: str, compose_file: Path, project: str
    ) -> None:
        super().__init__(binary, "docker", project)
        self.program, self.compose_file, self.project = program, compose_file, project
        #: the networks ``main`` is on (left while a phase must not reach out)
        self.networks: tuple[str, ...] = ()
        self._scratch = Path(tempfile.mkdtemp(prefix="profiler-compose-"))
        self._env: dict[str, str] = {}

    def _compose(self, *args: str) -> list[str]:
        files = ["-f", str(self.compose_file), "-f", str(self._scratch / "trial.json")]
        folder = str(self.compose_file.parent)
        return [
            self.program,
            "--project-name",
            self.project,
            "--project-directory",
            folder,
            *files,
            *args,
        ]

    def up(self, spec: TrialSpec, *, pull: str, timeout_s: float) -> None:
        """Write our file over the task's, build the services with a ``build``, ``up --wait``."""
        image = spec.image or HOST_IMAGE
        if image == HOST_IMAGE:
            ensure_host_image(self.binary)
        image = trial_image(
            self.binary,
            "docker",
            image,
            spec.folders,
            spec.host_toolchain or spec.image is None,
        )
        main = _main_service(spec, image, self.name)
        (self._scratch / "trial.json").write_text(
            json.dumps({"services": {MAIN: main}}), encoding="utf-8"
        )
        # Harbor's variables a task's compose file may use, then the task's environment
        self._env = client_environment(
            {
                "CONTEXT_DIR": str(self.compose_file.parent),
                "MAIN_IMAGE_NAME": image,
                "ENV_VERIFIER_LOGS_PATH": "/logs/verifier",
                "ENV_AGENT_LOGS_PATH": "/logs/agent",
                "ENV_ARTIFACTS_PATH": "/logs/artifacts",
                "CPUS": f"{spec.cpus or 1:g}",
                "MEMORY": f"{spec.memory_mb or 1024}M",
                **spec.env,
            }
        )
        services = self._services(timeout_s)
        built = sorted(n for n, s in services.items() if n != MAIN and "build" in s)
        if built:
            self._step(self._compose("build", *built), "build", timeout_s)
        self._step(
            self._compose("up", "--detach", "--wait", "--no-build", "--pull", pull),
            "up",
            timeout_s,
        )
        self.networks = self._main_networks()
        # what the agent's relay serves under ``model`` (``ContainerTrial.open_relay``)
        self._endpoints, self._allow_hosts = spec.endpoints, spec.allow_hosts
        self.switchable = spec.network_switch
        self._public = bool(self.networks)

    def _services(self, timeout_s: float) -> dict[str, dict[str, object]]:
        done = self._step(
            self._compose("config", "--format", "json"), "config", timeout_s
        )
        try:
            services = json.loads(done.stdout).get("services") or {}
        except (ValueError, AttributeError):
            raise SandboxError(
                f"{self.compose_file.name}: docker compose config gave no services"
            ) from None
        return services if isinstance(services, dict) else {}

    def _step(
        self, command: list[str], what: str, timeout_s: float
    ) -> subprocess.CompletedProcess[bytes]:
        done = self._run(command, env=self._env, timeout=timeout_s)
        if done.returncode != 0:
            raise SandboxError(
                f"environment/{self.compose_file.name}: docker compose {what} failed: "
                f"{last_line(done.stderr or done.stdout)}"
            )
        return done

    def _main_networks(self) -> tuple[str, ...]:
        done = self._run(
            [
                self.binary,
                "inspect",
                "--format",
                "{{json .NetworkSettings.Networks}}",
                self.name,
            ]
        )
        try:
            found = json.loads(done.stdout) if done.returncode == 0 else {}
        except ValueError:
            found = {}
        return tuple(sorted(n for n in (found or {}) if n not in ("none", "host")))

    def set_network(self, network: str) -> None:
        """``full``: ``main`` back on its networks (sidecars, the way out); ``none`` and
        ``model``: off all (loopback is left, where ``open_relay`` serves the model)."""
        if not self.switchable:
            raise SandboxError(
                f"docker: compose trial {self.project} was started without a switchable network"
            )
        public = network == "full"
        if public == self._public:
            return
        for net in self.networks:
            verb = ["connect", "--alias", MAIN] if public else ["disconnect"]
            done = self._run([self.binary, "network", *verb, net, self.name])
            if done.returncode != 0:
                raise SandboxError(
                    f"docker: cannot {verb[0]} the compose trial's network {net}: "
                    f"{last_line(done.stderr)}"
                )
        self._public = public

    def stop(self) -> None:
        """``down`` the whole project (every service killed, its networks and anonymous volumes
        removed), finished in the background (``containers.wait_removed``, and at exit)."""
        if self._stopped:
            return
        self._stopped = True
        self.close_relay()  # the helper first: it joined main's network namespace
        # the project is found by its name (no compose file read): the scratch folder can go
        _remove_later(
            [
                self.program,
                "--project-name",
                self.project,
                "down",
                "--volumes",
                "--remove-orphans",
                "--timeout",
                "0",
            ]
        )
        shutil.rmtree(self._scratch, ignore_errors=True)

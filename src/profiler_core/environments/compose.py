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

Under podman Compose talks to a ``podman system service`` of the trial's own
(``compose_podman``); commands, files and networks go through the ``podman``
program, and ``down`` runs before the service is ended.
"""

from __future__ import annotations

import json
import logging
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
    CLIENT_NAMES,
    HOST_DIRS,
    HOST_IMAGE,
    client_environment,
    ensure_host_image,
    last_line,
    runtime_binary,
)
from ..util.leftovers import remove_folder, temporary_folder
from .compose_podman import INIT_TARGET, PodmanService, podman_init, podman_ulimits
from .containers import LABEL, ContainerTrial, _remove_later, trial_image

__all__ = ["ComposeTrial", "compose_program", "start_compose"]

log = logging.getLogger(__name__)

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
    spec: TrialSpec,
    compose_file: str,
    *,
    pull: str,
    timeout_s: float,
    kind: str = "docker",
) -> ComposeTrial:
    """Start the trial's compose project (``main`` and its services) under ``kind``
    (docker, podman); ``SandboxError`` if not."""
    program = compose_program()
    if program is None:
        raise SandboxError(MISSING)
    binary = runtime_binary(kind)
    trial = ComposeTrial(
        binary, program, Path(compose_file), project_name(spec.name), kind
    )
    try:
        trial.up(spec, pull=pull, timeout_s=timeout_s)
    except BaseException:
        trial.stop()
        raise
    return trial


def _main_service(
    spec: TrialSpec, image: str | None, name: str, kind: str = "docker"
) -> dict[str, object]:
    """What our file sets of ``main`` over the task's: image, name, init, limits, env, mounts."""
    main: dict[str, object] = {
        "container_name": name,
        "entrypoint": ["sleep"],
        "command": ["infinity"],
        "init": True,
        "security_opt": ["no-new-privileges"],
        "labels": {LABEL: spec.name, **spec.labels},
        # names only, never a value in a file, but for the client's own (PATH...): compose's
        # environment holds the client's values of those ($$: no interpolation in a value)
        "environment": [
            f"{k}={v.replace('$', '$$')}" if k in CLIENT_NAMES else k
            for k, v in spec.env.items()
        ],
    }
    init = podman_init() if kind == "podman" else None
    if kind == "podman":
        # Compose cannot pass podman's --init-path: the init is bound and started by hand
        main["init"] = False
        if init is not None:
            main["entrypoint"] = [INIT_TARGET, "--", "sleep"]
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
    if init is not None:
        volumes.append(
            {"type": "bind", "source": init, "target": INIT_TARGET, "read_only": True}
        )
    if volumes:
        main["volumes"] = volumes
    return main


class ComposeTrial(ContainerTrial):
    """One compose project per trial: commands and files go to its ``main`` service's container."""

    def __init__(
        self,
        binary: str,
        program: str,
        compose_file: Path,
        project: str,
        kind: str = "docker",
    ) -> None:
        super().__init__(binary, kind, project)
        self.program, self.compose_file, self.project = program, compose_file, project
        #: the networks ``main`` is on (left while a phase must not reach out)
        self.networks: tuple[str, ...] = ()
        self._scratch = Path(tempfile.mkdtemp(prefix="profiler-compose-"))
        self._env: dict[str, str] = {}
        #: podman's Docker-compatible API, which Compose talks to (None under docker)
        self._service: PodmanService | None = None
        self._service_dir: Path | None = None

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
            self.kind,
            image,
            spec.folders,
            spec.host_toolchain or spec.image is None,
        )
        main = _main_service(spec, image, self.name, self.kind)
        self._write({MAIN: main})
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
        if self.kind == "podman":
            self._env |= self._start_service()
        services = self._services(timeout_s)
        if self.kind == "podman":
            extra = podman_ulimits(services)
            main |= extra.pop(MAIN, {})
            self._write({**extra, MAIN: main})
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

    def _write(self, services: dict[str, object]) -> None:
        (self._scratch / "trial.json").write_text(
            json.dumps({"services": services}), encoding="utf-8"
        )

    def _start_service(self) -> dict[str, str]:
        """Start the trial's ``podman system service``; the variables that point Compose at it."""
        # its own short folder: a Unix socket's path must stay under 108 bytes
        self._service_dir = temporary_folder("profiler-podman-", Path("/tmp"))
        self._service = PodmanService(self.binary, self._service_dir)
        self._service.wait_ready()
        return self._service.environment

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
                f"{self.kind}: compose trial {self.project} was started without a "
                "switchable network"
            )
        public = network == "full"
        if public == self._public:
            return
        for net in self.networks:
            verb = ["connect", "--alias", MAIN] if public else ["disconnect"]
            done = self._run([self.binary, "network", *verb, net, self.name])
            if done.returncode != 0:
                raise SandboxError(
                    f"{self.kind}: cannot {verb[0]} the compose trial's network {net}: "
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
        # --rmi local: the images built for this project only (named after it, so one per trial)
        options = ["--volumes", "--remove-orphans", "--rmi", "local", "--timeout", "0"]
        if self._service is None:
            # found by its name (no compose file read): the scratch folder can go
            _remove_later(
                [self.program, "--project-name", self.project, "down", *options]
            )
        else:  # podman: down while its API serves, then the service by its PID
            try:  # with the files: podman's names for the built images need them
                self._run(self._compose("down", *options), env=self._env)
            except SandboxError as exc:  # the service is ended all the same
                log.warning(
                    "%s: project %s may be left: %s", self.kind, self.project, exc
                )
            self._service.stop()
        if self._service_dir is not None:
            remove_folder(self._service_dir)
        shutil.rmtree(self._scratch, ignore_errors=True)

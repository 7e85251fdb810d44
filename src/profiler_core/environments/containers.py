"""The ``docker`` and ``podman`` environments: one writable container per trial, an init as PID 1.

``start`` creates the trial's container from its image (``sleep infinity``
under the runtime's init, so ``stop`` is one ``rm --force``: SIGKILL, no
stop timeout waited out), keeping the image's ``ENV``, ``PATH``, ``USER``
and ``WORKDIR`` unless the spec overrides them. Commands run with ``exec``
in that one container, so a server one command starts, a package another
installs and a file written under ``/etc`` are still there for the next.

A trial runs from its image plus one layer, built once per image and reused
(``localhost/agent-profiler-trial:<hash>``): the spec's ``folders`` (Harbor's
``/logs/...``), and for an image built ``FROM`` the host-toolchain image the
host's ``/etc`` (its readable files), an empty ``/tmp`` and ``/root``; that
image also gets the host's ``/usr``, ``/bin`` and ``/lib*`` bound read-only.
So a task may change ``/etc``, and no trial waits for a copy or a ``mkdir``.

Networks: ``full`` is the runtime's default network (docker's ``bridge``,
podman's ``podman``); ``none`` no network. A trial whose network changes
between phases (the agent cut off, the verifier public, as Harbor's verifier
inherits the environment's network) starts on the default network and is
disconnected from it while a phase must not reach out: then only loopback is
left, as under ``--network none``. (An ``--internal`` network would not do:
it still reaches the host's own services through its gateway.) ``cpus`` and ``memory_mb``
become ``--cpus`` / ``--memory``.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import subprocess
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import cast

from ..errors import SandboxError
from ..model.environment import EnvironmentCapabilities, ExecResult, TrialSpec
from ..sandbox.containers import (
    HOST_DIRS,
    HOST_IMAGE,
    _init,
    client_environment,
    ensure_host_image,
    env_options,
    last_line,
    new_name,
    runtime_binary,
)
from ..sandbox.podman import runtime_options
from ..util.redact import SECRET_NAME
from .files import extract_tar, tar_of
from .model_relay import ModelRelay

__all__ = [
    "ContainerTrial",
    "DockerEnvironment",
    "PodmanEnvironment",
    "trial_image",
    "trial_secrets",
    "wait_removed",
]

#: bytes of a command's output kept for its result
OUTPUT_TAIL = 64_000
#: seconds the runtime's own commands (create, cp, rm) may take
QUICK_S = 120.0
#: the label every trial container and network carries (``docker ps --filter label=...``
#: finds leftovers)
LABEL = "agent-profiler.trial"
#: ``put``'s room: the folders after ``$1`` and ``$2`` made where missing (writable by all),
#: ``$1`` removed, ``$2`` made
_ROOM = (
    'r=$1; p=$2; shift 2; for d in "$@"; do [ -d "$d" ] || '
    '{ mkdir -p -- "$d" && chmod 777 -- "$d"; } 2>/dev/null; done; '
    'rm -rf -- "$r" && mkdir -p -- "$p"'
)
#: ``put`` in one ``exec``: room made, the archive on stdin unpacked in ``$2`` (without a
#: ``tar`` in the image the shell exits 127, and ``cp`` copies instead)
_UNPACK = _ROOM + ' && exec tar -xf - -C "$p"'
_ETC: dict[str, bytes] = {}
_ETC_LOCK = threading.Lock()


def _quick(
    command: list[str], *, input: bytes | None = None, timeout: float = QUICK_S
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            command,
            input=input,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=client_environment({}),
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(
            f"{Path(command[0]).name} {command[1]}: no answer within {timeout:.0f} s"
        ) from None


def host_etc_tar() -> bytes:
    """A tar of the host's ``/etc`` (readable files, links as links) with an empty
    ``/tmp`` and ``/root``, made once per process."""
    with _ETC_LOCK:
        if "etc" not in _ETC:
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                for top, dirs, files in os.walk("/etc"):
                    dirs[:] = [
                        d
                        for d in dirs
                        if os.access(os.path.join(top, d), os.R_OK | os.X_OK)
                        or os.path.islink(os.path.join(top, d))
                    ]
                    for name in [*dirs, *files]:
                        path = os.path.join(top, name)
                        if (
                            not os.path.islink(path)
                            and not os.path.isdir(path)
                            and not os.access(path, os.R_OK)
                        ):
                            continue
                        with contextlib.suppress(OSError):
                            info = tar.gettarinfo(path, arcname=path.lstrip("/"))
                            info.uid = info.gid = 0
                            info.uname = info.gname = "root"
                            if info.isfile():
                                with open(path, "rb") as handle:
                                    tar.addfile(info, handle)
                            elif info.isdir() or info.issym():
                                tar.addfile(info)
                # an empty image has no /tmp and no root home: programs expect both
                for folder, mode in (("tmp", 0o1777), ("root", 0o700)):
                    info = tarfile.TarInfo(folder)
                    info.type, info.mode = tarfile.DIRTYPE, mode
                    tar.addfile(info)
            _ETC["etc"] = buffer.getvalue()
        return _ETC["etc"]


def _spec_args(spec: TrialSpec) -> list[str]:
    """Limits, user, working folder and the environment variables (:func:`env_options`)."""
    args: list[str] = []
    if spec.cpus:
        args += ["--cpus", f"{spec.cpus:g}"]
    if spec.memory_mb:
        args += ["--memory", f"{spec.memory_mb}m"]
    if spec.user:
        args += ["--user", spec.user]
    if spec.workdir:
        args += ["--workdir", spec.workdir]
    # a secret is given to each exec instead (trial_secrets)
    args += env_options(
        {k: v for k, v in spec.env.items() if not SECRET_NAME.search(k)}
    )
    return args


def trial_secrets(spec: TrialSpec) -> dict[str, str]:
    """The spec's secret-named variables: given to each ``exec``, never to ``run``
    (which keeps them in
    the container's configuration: ``docker inspect``, the runtime's files on disk)."""
    return {k: v for k, v in spec.env.items() if SECRET_NAME.search(k)}


_DERIVED: dict[tuple[str, str, tuple[str, ...], bool], str] = {}
_DERIVED_LOCK = threading.Lock()


def _folders_tar(folders: tuple[str, ...], host_etc: bool) -> bytes:
    """The layer a trial image adds: empty folders writable by all, and the host's
    ``/etc`` (host-toolchain images)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        made: set[str] = set()
        for folder in folders:
            parts = folder.strip("/").split("/")
            for depth in range(1, len(parts) + 1):
                name = "/".join(parts[:depth])
                if name not in made:
                    made.add(name)
                    info = tarfile.TarInfo(name)
                    info.type, info.mode = (
                        tarfile.DIRTYPE,
                        0o777 if depth == len(parts) else 0o755,
                    )
                    tar.addfile(info)
    return buffer.getvalue()


def trial_image(
    binary: str, kind: str, image: str, folders: tuple[str, ...], host_etc: bool
) -> str:
    """``image`` with the trial's ``folders`` (and, for a host-toolchain image, the
    host's ``/etc``, an empty ``/tmp``
    and ``/root``) added as one layer, built once and reused
    (``localhost/agent-profiler-trial:<hash>``): no trial
    waits for a copy or a ``mkdir``, and a trial may write under ``/etc``."""
    key = (binary, image, folders, host_etc)
    with _DERIVED_LOCK:
        if key in _DERIVED:
            return _DERIVED[key]
        layers = [("folders.tar", _folders_tar(folders, False))] + (
            [("etc.tar", host_etc_tar())] if host_etc else []
        )
        inspected = _quick([binary, "image", "inspect", "--format", "{{.Id}}", image])
        if inspected.returncode != 0:
            raise SandboxError(
                f"{kind}: the image {image!r} is not there: {last_line(inspected.stderr)}"
            )
        digest = hashlib.sha256(inspected.stdout.strip())
        for name, data in layers:
            digest.update(name.encode() + hashlib.sha256(data).digest())
        tag = f"localhost/agent-profiler-trial:{digest.hexdigest()[:16]}"
        if _quick([binary, "image", "inspect", tag]).returncode != 0:
            dockerfile = f"FROM {image}\n" + "".join(
                f"ADD {name} /\n" for name, _ in layers
            )
            context = io.BytesIO()
            with tarfile.open(fileobj=context, mode="w") as tar:
                for name, data in (("Dockerfile", dockerfile.encode()), *layers):
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
            pull = "--pull=never" if kind == "podman" else "--pull=false"
            built = _quick(
                [
                    binary,
                    *runtime_options(binary, kind),
                    "build",
                    pull,
                    "--label",
                    f"{LABEL}=image",
                    "-t",
                    tag,
                    "-",
                ],
                input=context.getvalue(),
                timeout=600,
            )
            if built.returncode != 0:
                raise SandboxError(
                    f"{kind}: cannot prepare the trial image of {image!r}: "
                    f"{last_line(built.stderr or built.stdout)}"
                )
        _DERIVED[key] = tag
        return tag


_REMOVING: list[subprocess.Popen[bytes]] = []
_REMOVING_LOCK = threading.Lock()


def _remove_later(command: list[str]) -> None:
    with _REMOVING_LOCK:
        _REMOVING[:] = [p for p in _REMOVING if p.poll() is None]
        if not _REMOVING:
            atexit.register(
                wait_removed
            )  # once per batch: registering twice only waits twice for nothing
        _REMOVING.append(
            subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=client_environment({}),
                start_new_session=True,
            )
        )


def wait_removed(timeout_s: float = QUICK_S) -> None:
    """Wait until every container removal started by ``stop`` has finished (the
    process's exit waits too)."""
    deadline = time.monotonic() + timeout_s
    with _REMOVING_LOCK:
        pending, _REMOVING[:] = list(_REMOVING), []
    for process in pending:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()


class _ContainerKind:
    """What docker and podman share; ``id`` names the runtime's program."""

    id = "docker"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """Every network (``model`` relayed) and switching them, limits, processes that
        outlive their command,
        images."""
        return EnvironmentCapabilities(
            networks=("none", "model", "full"),
            network_switch=True,
            resource_limits=True,
            persistent_processes=True,
            images=True,
        )

    def check(self) -> str | None:
        """None when the runtime answers; else one line (program missing, daemon down)."""
        try:
            binary = runtime_binary(self.id)
        except SandboxError as exc:
            return str(exc)
        what = "{{.Server.Version}}" if self.id == "docker" else "{{.Client.Version}}"
        try:
            done = _quick([binary, "version", "--format", what], timeout=30)
        except SandboxError as exc:
            return str(exc)
        if done.returncode != 0:
            return (
                f"execution.sandbox: {self.id} is not usable: {last_line(done.stderr)}"
            )
        return None

    def start(self, spec: TrialSpec) -> ContainerTrial:
        """Create and start the trial's container; ``SandboxError`` (one line) when it cannot."""
        binary = runtime_binary(self.id)
        image = spec.image or HOST_IMAGE
        toolchain = spec.host_toolchain or spec.image is None
        if image == HOST_IMAGE:
            ensure_host_image(binary)
        trial = ContainerTrial(binary, self.id, new_name(spec.name))
        try:
            trial.create(spec, image, toolchain)
        except BaseException:
            trial.stop()
            raise
        return trial


class DockerEnvironment(_ContainerKind):
    """Trials in Docker containers."""

    id = "docker"


class PodmanEnvironment(_ContainerKind):
    """Trials in Podman containers."""

    id = "podman"


class ContainerTrial:
    """One trial's container: commands run in it with ``exec``; files go in and out as
    tar streams."""

    #: the spec's secret-named variables, given to each ``exec`` (set by ``create``:
    #: :func:`trial_secrets`)
    secrets: Mapping[str, str] = MappingProxyType({})

    def __init__(self, binary: str, kind: str, name: str) -> None:
        self.binary, self.kind, self.name = binary, kind, name
        #: whether ``set_network`` may change the network (the spec asked for it)
        self.switchable = False
        self._public = self._want_public = False
        self._stopped = False
        #: the model relay of the agent's phase while it runs (:meth:`open_relay`)
        self.relay: ModelRelay | None = None
        self._endpoints: tuple[str, ...] = ()
        self._allow_hosts: tuple[str, ...] = ()

    @property
    def public_network(self) -> str:
        """The runtime's default network, with a route out: docker's ``bridge``,
        podman's ``podman``."""
        return "podman" if self.kind == "podman" else "bridge"

    def create(self, spec: TrialSpec, image: str, toolchain: bool) -> None:
        """Start the container (``run --detach``) from its trial image (:func:`trial_image`)."""
        if toolchain or spec.folders:
            image = trial_image(self.binary, self.kind, image, spec.folders, toolchain)
        self.secrets = trial_secrets(spec)
        command = [
            self.binary,
            *runtime_options(self.binary, self.kind),
            "run",
            "--detach",
            "--name",
            self.name,
            "--pull",
            "never",
            "--log-driver",
            "none",
        ]
        command += [
            "--security-opt",
            "no-new-privileges",
            *_init(self.kind),
            "--label",
            f"{LABEL}={spec.name}",
        ]
        command += [
            arg
            for key, value in spec.labels.items()
            for arg in ("--label", f"{key}={value}")
        ]
        if self.kind == "podman":
            command += ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096"]
        command += self._network_args(spec) + _spec_args(spec)
        if toolchain:
            for folder in HOST_DIRS:
                if folder != "/etc" and os.path.exists(folder):
                    command += [
                        "--mount",
                        f"type=bind,source={os.path.realpath(folder)},target={folder},readonly",
                    ]
        for mount in spec.mounts:
            command += [
                "--mount",
                f"type=bind,source={mount.source},target={mount.target}"
                + (",readonly" if mount.read_only else ""),
            ]
        command += ["--entrypoint", "sleep", image, "infinity"]
        done = self._run(command, env=client_environment(dict(spec.env)))
        if done.returncode != 0:
            raise SandboxError(
                f"{self.kind}: cannot start the trial's container from "
                f"{image!r}: {last_line(done.stderr)}"
            )
        if self.switchable and not self._want_public:
            self.set_network(spec.network)

    def _network_args(self, spec: TrialSpec) -> list[str]:
        self._endpoints, self._allow_hosts = spec.endpoints, spec.allow_hosts
        self.switchable = spec.network_switch
        if not spec.network_switch:
            return [
                "--network",
                self.public_network if spec.network == "full" else "none",
            ]
        # Switchable: on the public network, disconnected while a phase must not reach
        # out (then only
        # loopback is left, as with --network none; an --internal network would still
        # reach the host).
        self._public = True
        self._want_public = spec.network == "full"
        return ["--network", self.public_network]

    def set_network(self, network: str) -> None:
        """``full``: connect the trial to the runtime's default network; ``none`` and
        ``model``: disconnect it (only
        loopback is left, where :meth:`open_relay` serves the model)."""
        public = network == "full"
        if not self.switchable:
            raise SandboxError(
                f"{self.kind}: trial {self.name} was started without a switchable network"
            )
        if public != self._public:
            verb = "connect" if public else "disconnect"
            done = self._run(
                [self.binary, "network", verb, self.public_network, self.name]
            )
            if done.returncode != 0:
                raise SandboxError(
                    f"{self.kind}: cannot {verb} the trial's network: {last_line(done.stderr)}"
                )
            self._public = public

    def open_relay(self, network: str) -> None:
        """Serve the agent's model endpoints on the trial's loopback for its phase
        (:mod:`.model_relay`): under
        ``model`` every endpoint and ``allow_hosts``; under ``full`` the loopback ones
        only (the host's 127.0.0.1
        is not the container's); under ``none`` nothing. ``SandboxError`` (one line)
        when one cannot be relayed."""
        if network == "none" or self.relay is not None:
            return
        endpoints = self._endpoints
        if network == "full":
            from ..sandbox.hosts import parse_endpoint

            endpoints = tuple(e for e in endpoints if parse_endpoint(e).loopback)
        hosts = self._allow_hosts if network == "model" else ()
        if not endpoints and not hosts:
            return
        relay = ModelRelay(endpoints, hosts)
        relay.start(self.binary, self.kind, self.name)
        self.relay = relay

    def close_relay(self) -> None:
        """End the agent's relay (the verifier never sees it)."""
        relay, self.relay = self.relay, None
        if relay is not None:
            relay.stop()

    @property
    def relay_environment(self) -> dict[str, str]:
        """Variables an agent needs to reach remote hosts through the relay (its CONNECT
        proxy), else none."""
        return self.relay.environment() if self.relay is not None else {}

    def command_line(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        user: str | None,
        stdin: bool = False,
    ) -> tuple[list[str], dict[str, str], str]:
        """A host command that runs ``argv`` inside and streams its output (an agent's
        program), its client's
        environment (the values: never on a command line) and the mark :meth:`end` kills it by."""
        marker = uuid.uuid4().hex
        command = [self.binary, "exec", "--env", f"PROFILER_EXEC={marker}"]
        if stdin:
            command.append("--interactive")
        # the task's secret-named variables reach the agent too, by exec as for every command
        env = {**self.secrets, **env}
        command += env_options(env)
        if cwd:
            command += ["--workdir", cwd]
        if user:
            command += ["--user", user]
        return [*command, self.name, *argv], client_environment(dict(env)), marker

    def end(self, marker: str) -> None:
        """Kill, inside, every process carrying ``marker`` (a program run by
        :meth:`command_line` and its children)."""
        self._kill_marked(marker, None)

    def exec(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
        on_output: Callable[[bytes], None] | None = None,
    ) -> ExecResult:
        """Run ``argv`` in the container; at its timeout every process it started
        (marked by a variable) is killed."""
        command, client_env, marker = self.command_line(
            argv, env=env or {}, cwd=cwd, user=user
        )
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=client_env,
                start_new_session=True,
            )
        except OSError as exc:
            return ExecResult(
                exit_code=None,
                error=f"cannot start {self.binary!r}: {exc.strerror or exc}",
            )
        timer = None
        if timeout_s:
            timer = threading.Timer(timeout_s, self._kill_marked, (marker, process))
            timer.start()
        try:
            code, tail = _drain(process, on_output)
        finally:
            if timer is not None:
                timer.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
        elapsed = time.monotonic() - started
        text = tail.decode("utf-8", errors="replace")
        wall = round(elapsed * 1000, 3)
        killed = getattr(self, "_killed", None) == marker
        if timeout_s and elapsed >= timeout_s and killed:
            return ExecResult(exit_code=None, output=text, timed_out=True, wall_ms=wall)
        return ExecResult.finished(argv[0], code, text, wall)

    def _kill_marked(
        self, marker: str, process: subprocess.Popen[bytes] | None
    ) -> None:
        """Kill, inside, every process that carries ``marker`` (the command and what it
        started), then the client."""
        self._killed = marker
        script = (
            'for p in /proc/[0-9]*; do grep -qs "PROFILER_EXEC=$1" "$p/environ" '
            '2>/dev/null && kill -9 "${p#/proc/}" 2>/dev/null; done; true'
        )
        with contextlib.suppress(SandboxError):
            self._run(
                [
                    self.binary,
                    "exec",
                    "--user",
                    "0",
                    self.name,
                    "sh",
                    "-c",
                    script,
                    "sh",
                    marker,
                ],
                timeout=30,
            )
        if process is not None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, 9)

    def put(self, local: Path, remote: str) -> None:
        """Copy ``local`` to ``remote`` (replacing what is there), owned by root and
        readable by all."""
        self._put(local, remote, scripts=False, folders=())

    def put_scripts(
        self, local: Path, remote: str, folders: tuple[str, ...] = ()
    ) -> None:
        """:meth:`put` with every ``*.sh`` file executable (a task's ``solution/`` or
        ``tests/``, started by their shebang), and ``folders`` made where missing,
        writable by all (a verifier's logs folder): no command after it."""
        self._put(local, remote, scripts=True, folders=folders)

    def _put(
        self, local: Path, remote: str, *, scripts: bool, folders: tuple[str, ...]
    ) -> None:
        remote = remote.rstrip("/") or "/"
        parent = os.path.dirname(remote) or "/"
        archive = tar_of(local, os.path.basename(remote), scripts=scripts)
        # One runtime call: the old copy removed and the archive unpacked by the image's
        # tar, as root (it keeps the archive's owner and modes). An image without a tar
        # that can do it gets the two calls below: a shell makes room, the runtime's cp
        # copies.
        unpacked = self._run(
            [
                self.binary,
                "exec",
                "--interactive",
                "--user",
                "0",
                self.name,
                "sh",
                "-c",
                _UNPACK,
                "sh",
                remote,
                parent,
                *folders,
            ],
            input=archive,
        )
        if unpacked.returncode == 0:
            return
        prepared = self._run(
            [
                self.binary,
                "exec",
                "--user",
                "0",
                self.name,
                "sh",
                "-c",
                _ROOM,
                "sh",
                remote,
                parent,
                *folders,
            ]
        )
        if prepared.returncode != 0:
            raise SandboxError(
                f"{self.kind}: cannot make room for {remote} in the trial: "
                f"{last_line(prepared.stderr or prepared.stdout)}"
            )
        copied = self._run(
            [self.binary, "cp", "-", f"{self.name}:{parent}"], input=archive
        )
        if copied.returncode != 0:
            raise SandboxError(
                f"{self.kind}: cannot copy {local} to {remote} in the trial: "
                f"{last_line(copied.stderr)}"
            )

    def get(self, remote: str, local: Path) -> None:
        """Copy ``remote`` out to ``local`` (a tar stream: links stay links, nothing
        lands outside ``local``)."""
        with tempfile.TemporaryFile() as archive:
            try:
                done = subprocess.run(
                    [self.binary, "cp", f"{self.name}:{remote}", "-"],
                    stdout=archive,
                    stderr=subprocess.PIPE,
                    timeout=QUICK_S,
                    check=False,
                    env=client_environment({}),
                )
            except subprocess.TimeoutExpired:
                raise SandboxError(
                    f"{self.kind} cp: no answer within {QUICK_S:.0f} s"
                ) from None
            if done.returncode != 0:
                raise SandboxError(
                    f"{self.kind}: cannot copy {remote} out of the trial: {last_line(done.stderr)}"
                )
            archive.seek(0)
            extract_tar(archive, local)

    def stop(self) -> None:
        """Kill and remove the container (SIGKILL: nothing waits out a stop timeout);
        the removal finishes in the
        background, off the trial's path (:func:`wait_removed`, and at exit)."""
        if self._stopped:
            return
        self._stopped = True
        self.close_relay()  # the helper first: it joined the trial's network namespace
        command = [self.binary, "rm", "--force", self.name]
        if self.kind == "podman":
            command[3:3] = ["--time", "0", "--ignore"]
        _remove_later(command)

    def _run(
        self,
        command: list[str],
        *,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        timeout: float = QUICK_S,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                command,
                input=input,
                capture_output=True,
                timeout=timeout,
                check=False,
                env=env or client_environment({}),
            )
        except subprocess.TimeoutExpired:
            raise SandboxError(
                f"{self.kind} {command[1]}: no answer within {timeout:.0f} s"
            ) from None


def _drain(
    process: subprocess.Popen[bytes], on_output: Callable[[bytes], None] | None
) -> tuple[int, bytearray]:
    """Read the command's output to its end, keeping its tail; then its exit code."""
    tail = bytearray()
    stdout = cast("io.BufferedReader", process.stdout)
    while chunk := stdout.read1(65536):
        if on_output is not None:
            on_output(chunk)
        tail += chunk
        if len(tail) > OUTPUT_TAIL:
            del tail[: len(tail) - OUTPUT_TAIL]
    return process.wait(), tail

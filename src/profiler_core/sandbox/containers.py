"""The docker / podman command lines of one job, the offline host image, and removing containers.

A job's container runs ``--rm --read-only --cap-drop ALL --security-opt
no-new-privileges`` as the caller's user, with the workspace, home and tmp
bound writable at their host paths (an agent told its workspace path writes
there, not into a throw-away layer) and ``/tmp`` a fresh tmpfs. Without an
image it runs the host's own toolchain: an empty image imported offline
(``HOST_IMAGE``) with the host's ``/usr``, ``/etc``, ``/bin``, ``/lib*``...
bound read-only. ``--log-driver none`` keeps the program's output (and any
secret in it) out of the runtime's log files; ``--pull never`` never reaches
for a registry.

Networks: ``none`` is ``--network none``; ``full`` is the host's network;
when something must be relayed, a small helper container of the host image
(named ``<name>-net``, no network) runs the inside relay first and the job's
container joins its network namespace (``--network container:<name>-net``),
so the job's image needs neither Python nor socat.

Ending the ``docker run`` client does not stop its container: the caller
ends the client by its process group, then :func:`remove_containers` (the
confinement's ``close``) removes both containers by name. Every container
is labelled with the run that started it (``agent-profiler.run``,
``agent-profiler.pid``), so the containers of a run killed before its
``close`` are found and removed by the next run (:func:`remove_labelled`).
"""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import subprocess
import tarfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

import attrs

from ..errors import SandboxError
from ..model.record import Record
from ..util.leftovers import current_run, remember_runtime
from ..util.redact import SECRET_NAME
from .job import Mount
from .layout import Layout, relay_python
from .network import NetworkPlan
from .podman import global_options

__all__ = [
    "HOST_IMAGE",
    "HOST_SHELL",
    "PID_LABEL",
    "RUN_LABEL",
    "HostShell",
    "container_command",
    "container_pid",
    "ensure_host_image",
    "host_shell",
    "new_name",
    "podman_init_program",
    "relay_container",
    "remove_containers",
    "remove_labelled",
    "secret_loader",
]

#: the image of the host's toolchain (empty; the host's folders are bound into it)
HOST_IMAGE = "localhost/agent-profiler-host:1"
#: host folders bound read-only into the host image
#: (not /sbin: Docker mounts its init program there; /usr/sbin is reachable through /usr)
HOST_DIRS = ("/usr", "/etc", "/bin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
#: seconds a helper container has to start its relay
_RELAY_READY_S = 20.0
#: runtime commands (inspect, import, rm) that should not take long
_QUICK_S = 60.0
# Podman as root without CAP_SYS_RESOURCE cannot raise rlimits to its defaults ("error
# setting rlimit type 7").
_PODMAN_LIMITS = ("--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096")

_ENSURED: set[tuple[str, str]] = set()
#: the variables naming podman's own configuration files, passed on to it
PODMAN_CONFIG = (
    "CONTAINERS_CONF",
    "CONTAINERS_STORAGE_CONF",
    "CONTAINERS_REGISTRIES_CONF",
)
#: the label naming the run that started a container (its PID is ``PID_LABEL``)
RUN_LABEL = "agent-profiler.run"
PID_LABEL = "agent-profiler.pid"


def new_name(label: str) -> str:
    """A fresh container name from a job's label (safe characters only)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "-", label)[:40].strip("-.") or "job"
    return f"profiler-{safe}-{uuid.uuid4().hex[:10]}"


def runtime_binary(kind: str) -> str:
    """The ``docker`` / ``podman`` program, or one line saying it is missing."""
    found = shutil.which(kind)
    if not found:
        package = "docker.io" if kind == "docker" else "podman"
        raise SandboxError(
            f"execution.sandbox: {kind}: `{kind}` not found on PATH (install "
            f"the `{package}` package)"
        )
    return found


#: The client's own variables: how it reaches and configures the runtime (the user's podman
#: configuration too: a runc configuration on a cgroups v1 host is what makes podman work
#: there), and the ``PATH`` where podman finds netavark, iptables and conmon.
CLIENT_NAMES = frozenset(
    {
        "PATH",
        "DOCKER_HOST",
        "DOCKER_CONFIG",
        "DOCKER_CONTEXT",
        "CONTAINER_HOST",
        "XDG_RUNTIME_DIR",
        *PODMAN_CONFIG,
    }
)


def client_environment(job_env: Mapping[str, str]) -> dict[str, str]:
    """The ``docker run`` client's environment: the job's variables (each passed on by
    ``--env NAME``, :func:`env_options`), then the client's own from ours.

    A job's ``PATH`` or ``DOCKER_HOST`` is for inside the container: the client keeps
    its own, or podman would not find netavark and a task could point the client at
    another daemon."""
    own = {k: os.environ[k] for k in CLIENT_NAMES if k in os.environ}
    return {**{k: v for k, v in job_env.items() if k not in CLIENT_NAMES}, **own}


def env_options(job_env: Mapping[str, str]) -> list[str]:
    """The ``--env`` options that give a container ``job_env``: each value through the
    client's environment (:func:`client_environment`), never on the command line, but
    for ``CLIENT_NAMES`` (``PATH``...), whose values are settings, not secrets, given as
    ``NAME=VALUE`` because the client's environment holds its own."""
    return [
        arg
        for key, value in job_env.items()
        for arg in ("--env", f"{key}={value}" if key in CLIENT_NAMES else key)
    ]


def _run(
    command: list[str], *, input: bytes | None = None, timeout: float = _QUICK_S
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            command, input=input, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(
            f"{Path(command[0]).name} {command[1]}: no answer within {timeout:.0f} s"
        ) from None


def last_line(data: bytes) -> str:
    """The last non-empty line of a program's output (for one-line errors)."""
    lines = [
        line.strip()
        for line in data.decode("utf-8", "replace").splitlines()
        if line.strip()
    ]
    return lines[-1][:300] if lines else "no output"


def ensure_host_image(binary: str) -> None:
    """Import the empty host image once (offline: an empty tar), unless the runtime has
    it already."""
    if (binary, HOST_IMAGE) in _ENSURED:
        return
    if _run([binary, "image", "inspect", HOST_IMAGE]).returncode != 0:
        empty = io.BytesIO()
        tarfile.open(fileobj=empty, mode="w").close()
        done = _run([binary, "import", "-", HOST_IMAGE], input=empty.getvalue())
        if done.returncode != 0:
            raise SandboxError(
                f"execution.sandbox: cannot import the host image {HOST_IMAGE}: "
                f"{last_line(done.stderr)}"
            )
    _ENSURED.add((binary, HOST_IMAGE))


def _check_path(path: Path) -> str:
    text = str(path)
    if "," in text:
        raise SandboxError(
            f"sandbox: cannot mount {text!r} into a container (a ',' in the path)"
        )
    return text


def _bind(source: Path, target: Path, writable: bool) -> list[str]:
    spec = f"type=bind,source={_check_path(source)},target={_check_path(target)}"
    return ["--mount", spec if writable else spec + ",readonly"]


def _host_mounts() -> list[str]:
    """The host's toolchain folders, read-only (a linked ``/bin`` bound from its target)."""
    args: list[str] = []
    for folder in HOST_DIRS:
        if os.path.exists(folder):
            args += _bind(Path(os.path.realpath(folder)), Path(folder), writable=False)
    return args


def _python_mount() -> list[str]:
    """The relays' Python installation, when it is not among the host folders (pyenv, a
    custom prefix)."""
    python = relay_python()
    if any(str(python).startswith(folder + "/") for folder in HOST_DIRS):
        return []
    return _bind(python.parent.parent, python.parent.parent, writable=False)


def _labels(binary: str) -> list[str]:
    """The run's labels, and a note that this runtime holds its containers (nothing
    outside a run)."""
    run = current_run()
    if run is None:
        return []
    remember_runtime(binary)
    return ["--label", f"{RUN_LABEL}={run[0]}", "--label", f"{PID_LABEL}={run[1]}"]


def _common(binary: str, kind: str, name: str) -> list[str]:
    # podman's global options (a runtime that works on this host) come before its subcommand
    args = [
        *(global_options(binary) if kind == "podman" else ()),
        "run",
        "--rm",
        "--name",
        name,
        *_labels(binary),
    ]
    args += ["--pull", "never", "--log-driver", "none", "--read-only"]
    args += [
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--user",
        f"{os.getuid()}:{os.getgid()}",
    ]
    return args + list(_PODMAN_LIMITS if kind == "podman" else ())


#: init programs podman can use when its own (catatonit) is not installed
_PODMAN_INITS = ("/usr/libexec/podman/catatonit", "catatonit", "tini", "docker-init")


def podman_init_program() -> str | None:
    """The first init program of :data:`_PODMAN_INITS` on this host, or None."""
    return next(
        (found for name in _PODMAN_INITS if (found := shutil.which(name))), None
    )


def _init(kind: str) -> list[str]:
    """A PID 1 that passes the client's SIGTERM on and reaps the program's children (``--init``)."""
    if kind == "docker":
        return ["--init"]
    found = podman_init_program()
    # Without one the program is PID 1 and may ignore SIGTERM; SIGKILL and ``close`` still end it.
    return ["--init", "--init-path", found] if found else []


def _hidden_mounts(layout: Layout, visible: list[Path]) -> list[str]:
    args: list[str] = []
    for hidden in layout.hidden:
        if not any(hidden == v or v in hidden.parents for v in visible):
            continue
        if hidden.is_dir():
            args += ["--tmpfs", f"{_check_path(hidden)}:ro"]
        elif hidden.exists():
            args += _bind(Path("/dev/null"), hidden, writable=False)
    return args


def container_command(
    binary: str,
    kind: str,
    name: str,
    layout: Layout,
    network: str,
    image: str | None,
    env: dict[str, str],
    argv: tuple[str, ...],
    *,
    host_toolchain: bool | None = None,
) -> list[str]:
    """``docker|podman run ... IMAGE ARGV`` for one job; ``network`` is ``none``,
    ``host`` or ``container:NAME``.

    ``host_toolchain``: bind the host's toolchain folders (default: only into the host image).
    """
    command = [binary, *_common(binary, kind, name), *_init(kind)]
    command += ["--network", network, "--tmpfs", "/tmp:rw,exec,nosuid,nodev,mode=1777"]
    visible: list[Path] = []
    if host_toolchain or (host_toolchain is None and image is None):
        command += _host_mounts()
        visible += [Path(f) for f in HOST_DIRS]
    for folder in dict.fromkeys((layout.workspace, layout.home, layout.tmp)):
        command += _bind(folder, folder, writable=True)
    for mount in layout.mounts:
        command += _bind(mount.source, mount.inside, writable=mount.writable)
        visible.append(mount.inside)
    command += _hidden_mounts(layout, visible)
    command += ["--workdir", str(layout.workspace)]
    command += env_options(env)
    return command + [image or HOST_IMAGE, *argv]


#: the folder of a job's private folder where its secrets wait for its shell inside the container
SECRETS_FOLDER = "secrets"
#: ``sh -c LOADER FILE ARGV...``: export the file's variables, delete the file, then
#: become the program
_LOADER = 'set -a; . "$0"; set +a; {rm} -f "$0"; exec "$@"'
#: a name the shell can export
_SHELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: where a container of an image (which may have no shell) finds the host's ``sh`` and ``rm``
HOST_SHELL = Path("/.agent-profiler-shell")


@attrs.frozen(repr=False, eq=False)
class HostShell(Record):
    """The host's ``sh`` and ``rm`` bound into an image with their libraries, run
    through the host's loader."""

    mounts: tuple[Mount, ...]
    #: the command words that run the shell, and ``rm``
    sh: tuple[str, ...]
    rm: tuple[str, ...]


def _linked(program: str) -> tuple[Path | None, dict[str, Path]]:
    """A program's dynamic loader (None: linked statically) and libraries by name, as
    ``ldd`` lists them."""
    try:
        done = subprocess.run(
            ["ldd", program], capture_output=True, text=True, timeout=_QUICK_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(
            f"sandbox: cannot list the libraries of {program}: {exc}"
        ) from None
    if done.returncode != 0:
        if "not a dynamic executable" in done.stdout + done.stderr:
            return None, {}
        raise SandboxError(
            f"sandbox: `ldd {program}` failed: {last_line(done.stderr.encode())}"
        )
    loader, libraries = None, {}
    for line in done.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1:
            target = words[words.index("=>") + 1]
            if target.startswith("/"):
                libraries[Path(target).name] = Path(target)
        elif words and words[0].startswith("/"):
            loader = Path(words[0])
    return loader, libraries


@functools.cache
def host_shell() -> HostShell:
    """The host's ``/bin/sh`` and ``rm``, for a container whose image may have neither
    (looked up once)."""
    programs = {"sh": "/bin/sh", "rm": shutil.which("rm") or "/bin/rm"}
    mounts: dict[Path, Path] = {}
    loader: Path | None = None
    for name, program in programs.items():
        mounts[HOST_SHELL / name] = Path(os.path.realpath(program))
        found, libraries = _linked(program)
        loader = loader or found
        for library, path in libraries.items():
            mounts[HOST_SHELL / "lib" / library] = Path(os.path.realpath(path))
    if loader is None:  # linked statically: they run as they are
        return HostShell(
            mounts=tuple(Mount(source=s, target=t) for t, s in mounts.items()),
            sh=(str(HOST_SHELL / "sh"),),
            rm=(str(HOST_SHELL / "rm"),),
        )
    mounts[HOST_SHELL / "ld.so"] = Path(os.path.realpath(loader))
    # The loader takes the library folder as an option: no LD_LIBRARY_PATH reaches the program.
    run = (str(HOST_SHELL / "ld.so"), "--library-path", str(HOST_SHELL / "lib"))
    return HostShell(
        mounts=tuple(Mount(source=s, target=t) for t, s in mounts.items()),
        sh=(*run, str(HOST_SHELL / "sh")),
        rm=(*run, str(HOST_SHELL / "rm")),
    )


def secret_loader(
    layout: Layout,
    env: dict[str, str],
    argv: tuple[str, ...],
    *,
    has_shell: bool = True,
) -> tuple[Layout, dict[str, str], tuple[str, ...]]:
    """Keep secret-named variables out of the container's configuration (``docker
    inspect``, the runtime's files
    on disk): they go into a private file the container's shell reads, then deletes,
    before running ``argv``.

    ``has_shell``: the container has ``/bin/sh`` (the host's toolchain); else the host's
    shell is bound in
    (:func:`host_shell`). Returns the layout with the file's folder bound in, the
    environment left for
    ``--env``, and the command that loads the rest.
    """
    secrets = {
        name: value
        for name, value in env.items()
        if SECRET_NAME.search(name) and _SHELL_NAME.match(name)
    }
    if not secrets:
        return layout, env, argv
    folder = layout.root / SECRETS_FOLDER
    folder.mkdir(mode=0o700)
    path = folder / "env"
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
    )
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for (
            name,
            value,
        ) in secrets.items():  # single-quoted: nothing in a value is expanded
            f.write(
                f"{name}='{value.replace(chr(39), chr(39) + chr(92) + chr(39) + chr(39))}'\n"
            )
    # The folder, writable: the shell deletes the file once read, so the program never
    # finds its secrets on disk.
    mounts: tuple[Mount, ...] = (Mount(source=folder, writable=True),)
    sh: tuple[str, ...] = ("/bin/sh",)
    rm = "rm"
    if not has_shell:
        shell = host_shell()
        mounts += shell.mounts
        sh, rm = shell.sh, " ".join(shell.rm)
    layout = attrs.evolve(layout, mounts=(*layout.mounts, *mounts))
    rest = {name: value for name, value in env.items() if name not in secrets}
    return layout, rest, (*sh, "-c", _LOADER.format(rm=rm), str(path), *argv)


def relay_container(
    binary: str,
    kind: str,
    name: str,
    layout: Layout,
    plan: NetworkPlan,
    network: str = "none",
) -> None:
    """Start the helper container that runs the inside relay and wait until it listens:
    with no network
    (a job's container joins it), or in a trial's own (``network``: ``container:<trial>``)."""
    command = [
        binary,
        *_common(binary, kind, name),
        "--detach",
        "--network",
        network,
        *_host_mounts(),
        *_python_mount(),
    ]
    command += _bind(layout.out_dir, layout.out_dir, writable=False) + _bind(
        layout.in_dir, layout.in_dir, writable=True
    )
    command += [
        HOST_IMAGE,
        str(relay_python()),
        "-I",
        "-S",
        str(layout.out_dir / "relay.py"),
        *layout.relay_arguments(plan),
    ]
    done = _run(command)
    if done.returncode != 0:
        raise SandboxError(
            f"sandbox: {kind} cannot start the network relay: {last_line(done.stderr)}"
        )
    ready = layout.in_dir / "ready"
    deadline = time.monotonic() + _RELAY_READY_S
    while not ready.exists():
        if time.monotonic() > deadline:
            remove_containers(binary, kind, [name])
            raise SandboxError(
                f"sandbox: {kind}: the network relay (container {name}) did not "
                f"start within {_RELAY_READY_S:.0f} s"
            )
        time.sleep(0.005)


def container_pid(binary: str, kind: str, name: str) -> int | None:
    """The host PID of a running container's first process (its init); None when it does not run."""
    options = global_options(binary) if kind == "podman" else ()
    done = _run([binary, *options, "inspect", "--format", "{{.State.Pid}}", name])
    text = done.stdout.decode("ascii", "replace").strip()
    # 0: created or stopped, not running
    return (
        int(text) if done.returncode == 0 and text.isdigit() and text != "0" else None
    )


def remove_containers(binary: str, kind: str, names: list[str]) -> None:
    """Kill and remove containers by name (missing ones are fine)."""
    if not names:
        return
    if kind == "podman":
        # One at a time, the job's container first: podman removes in parallel and refuses to remove
        # the network helper while the job's container, which joined its network, still exists.
        for name in names:
            _remove([binary, "rm", "--force", "--time", "0", "--ignore", name])
    else:
        _remove([binary, "rm", "--force", *names])


def remove_labelled(binary: str, run_id: str, pid: int) -> int:
    """Remove every container labelled with run ``run_id`` of process ``pid``; how many
    there were."""
    filters = [
        "--filter",
        f"label={RUN_LABEL}={run_id}",
        "--filter",
        f"label={PID_LABEL}={pid}",
    ]
    found: set[str] = set()
    for _ in range(
        2
    ):  # podman refuses to remove a relay while the job that joined its network exists: twice
        listed = _run([binary, "ps", "--all", "--quiet", *filters])
        ids = (
            listed.stdout.decode("ascii", "replace").split()
            if listed.returncode == 0
            else []
        )
        if not ids:
            break
        found.update(ids)
        for container in ids:  # newest first: the job before its relay
            _remove([binary, "rm", "--force", container])
    return len(found)


def _remove(command: list[str]) -> None:
    try:
        subprocess.run(command, capture_output=True, timeout=_QUICK_S, check=False)
    except subprocess.TimeoutExpired:
        pass

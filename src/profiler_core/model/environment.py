"""Execution environments: the run's settings, what one trial asks for, and what a
command in it returned.

``SandboxSettings`` is the profile's ``execution.sandbox`` and its companions,
built once per run and passed typed to whoever starts programs
(``ProviderConfig.sandbox``, ``CreateSessionParams.sandbox``). ``sandbox`` names
an environment kind: a built-in (``none``, ``bwrap``, ``docker``, ``podman``)
or one a plugin registers (``profiler_register_environments``, docs/environments.md).

``TrialSpec`` is what one trial (one cell's attempt) asks of its environment;
``ExecResult`` is how one command in it ended; ``EnvironmentCapabilities``
what a kind can enforce.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs

from ..errors import SandboxError
from .hosts import parse_host_rule
from .record import Record

__all__ = [
    "BUILTIN_ENVIRONMENTS",
    "CONTAINERS",
    "NETWORKS",
    "PULLS",
    "EnvironmentCapabilities",
    "ExecResult",
    "SandboxSettings",
    "TrialMount",
    "TrialSpec",
]

#: the environment kinds core ships (a plugin may register more)
BUILTIN_ENVIRONMENTS = ("none", "bwrap", "docker", "podman")
#: the sandboxes that run a container
CONTAINERS = ("docker", "podman")
#: what a sandboxed program may reach: nothing, its model endpoints and allowed hosts, everything
NETWORKS = ("none", "model", "full")
#: when a task's image is pulled: never (local images only), when missing, always
PULLS = ("never", "missing", "always")
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,39}")

Pull = Literal["never", "missing", "always"]


def _one_of(choices: tuple[str, ...], key: str) -> Any:
    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value is not None and value not in choices:
            raise SandboxError(
                f"execution.{key}: expected one of {', '.join(choices)}, got {value!r}"
            )

    return check


def _kind(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    # The kinds are open (plugins add some): the name's shape here, its existence when
    # the run starts.
    if not isinstance(value, str) or not _KIND.fullmatch(value):
        raise SandboxError(
            "execution.sandbox: expected one of "
            f"{', '.join(BUILTIN_ENVIRONMENTS)} or a plugin's environment id, "
            f"got {value!r}"
        )


def _strings(values: Any) -> tuple[str, ...]:
    return tuple(values or ())


def _hosts(instance: Any, attribute: attrs.Attribute, value: tuple[str, ...]) -> None:
    for entry in value:
        parse_host_rule(entry)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SandboxSettings(Record):
    """How agents and verifiers are confined (the profile's ``execution.sandbox`` and
    its companions)."""

    #: the environment kind: ``none`` (run on the host), ``bwrap``, ``docker``,
    #: ``podman`` or a plugin's
    sandbox: str = attrs.field(default="none", validator=_kind)
    #: ``none``, ``model`` or ``full``; None: ``model`` inside a sandbox, ``full`` without one
    network: str | None = attrs.field(
        default=None, validator=_one_of(NETWORKS, "network")
    )
    #: the container image (docker / podman); None: an image of the host's own
    #: toolchain, made offline
    image: str | None = None
    #: hosts reachable besides the model endpoints with ``network: model`` (``host``,
    #: ``host:port``, ``*.domain``)
    allow_hosts: tuple[str, ...] = attrs.field(
        default=(), converter=_strings, validator=_hosts
    )
    #: more host paths hidden inside the sandbox (the user's home always is)
    hide_paths: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: host paths shown read-only although hidden (a toolchain under the home, e.g. ``~/.pyenv``)
    expose_paths: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: with ``image``: bind the host's toolchain into it too, as into the host image (an image built
    #: ``FROM`` the host image, e.g. a task's, offline)
    host_toolchain: bool = False
    #: where every job's workspace also appears inside (a task's working folder, e.g.
    #: Harbor's ``/app``)
    workdir: str | None = None
    #: when a task's image (``docker_image``, a Dockerfile's ``FROM``) is pulled:
    #: ``never``, ``missing``, ``always``
    pull: str = attrs.field(default="missing", validator=_one_of(PULLS, "pull"))
    #: the verifier's network when the profile overrides the task's (None: it inherits
    #: the task environment's)
    verifier_network: str | None = attrs.field(
        default=None, validator=_one_of(NETWORKS, "verifier_network")
    )
    #: an agent reaches its model through the wire recorder (``execution.wire``; docs/wire.md)
    wire: bool = True
    #: a trial's agent's user when the task names none and the profiler and the image's
    #: user are root (``root``: keep it)
    agent_user: str = "65534"

    def __attrs_post_init__(self) -> None:
        if self.sandbox == "none" and self.network in ("none", "model"):
            raise SandboxError(
                f"execution.network: {self.network!r} needs a sandbox (set "
                "execution.sandbox to bwrap, docker or podman)"
            )

    @property
    def network_mode(self) -> str:
        """The network in effect: the setting, else ``model`` inside a sandbox and
        ``full`` without one."""
        if self.network is not None:
            return self.network
        return "full" if self.sandbox == "none" else "model"

    @property
    def confined(self) -> bool:
        """Whether programs run in a sandbox at all."""
        return self.sandbox != "none"

    @property
    def container(self) -> bool:
        """Whether the sandbox is a container (docker or podman)."""
        return self.sandbox in CONTAINERS

    def for_verifier(self, network: str | None = None) -> SandboxSettings:
        """The same sandbox for a verifier: no network unless ``network`` says otherwise."""
        if not self.confined:
            return self
        return attrs.evolve(self, network=network or "none")

    @classmethod
    def from_execution(cls, execution: object) -> SandboxSettings:
        """The settings of a profile's ``execution`` section (any object with these attributes)."""
        return cls(
            sandbox=getattr(execution, "sandbox", "none"),
            network=getattr(execution, "network", None),
            image=getattr(execution, "sandbox_image", None),
            allow_hosts=tuple(getattr(execution, "allow_hosts", ()) or ()),
            hide_paths=tuple(getattr(execution, "hide_paths", ()) or ()),
            expose_paths=tuple(getattr(execution, "expose_paths", ()) or ()),
            pull=getattr(execution, "pull", None) or "missing",
            verifier_network=getattr(execution, "verifier_network", None),
            wire=bool(getattr(execution, "wire", True)),
            agent_user=str(getattr(execution, "agent_user", None) or "65534"),
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TrialMount(Record):
    """A host path shown inside a trial's environment."""

    source: str
    target: str
    read_only: bool = True


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TrialSpec(Record):
    """What one trial asks of its environment: where it starts from, as whom, with what reach."""

    #: a label for names and messages (safe characters are made of it)
    name: str = "trial"
    #: the image (container environments); None: the kind's default (the host's toolchain)
    image: str | None = None
    #: a host folder whose files a folder trial (``none``, ``bwrap``) starts with at
    #: ``workdir`` (a copy: the trial may
    #: change it); a container starts from its image's files instead
    root: str | None = None
    #: glob patterns of top-level names of ``root`` left out of the copy (a Harbor
    #: task's ``Dockerfile``)
    root_exclude: tuple[str, ...] = ()
    #: the working folder inside (None: the image's ``WORKDIR``, else a folder of the
    #: kind's choosing)
    workdir: str | None = None
    #: the default user of commands (None: the image's ``USER``)
    user: str | None = None
    #: environment variables of every command, on top of the image's
    env: dict[str, str] = attrs.field(factory=dict)
    #: the network at start: ``none``, ``model`` (``endpoints`` and ``allow_hosts``
    #: only) or ``full``
    network: str = attrs.field(default="full", validator=_one_of(NETWORKS, "network"))
    #: whether the runner will change the network between phases (``Environment.set_network``)
    network_switch: bool = False
    #: the model endpoints reachable with ``network: model``
    endpoints: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    #: CPUs and memory the trial may use (None: no limit asked)
    cpus: float | None = None
    memory_mb: int | None = None
    #: folders that exist, empty and writable by every user, when the trial starts
    #: (Harbor's ``/logs/verifier``,
    #: ``/logs/agent``, ``/logs/artifacts``)
    folders: tuple[str, ...] = ()
    #: host paths shown inside (the agent's program, read-only)
    mounts: tuple[TrialMount, ...] = ()
    #: host paths the trial must not show (the tasks' tests and solutions, the run's
    #: records): a kind that shows the host's folders (``bwrap``) hides them
    hide: tuple[str, ...] = ()
    #: bind the host's toolchain into the image (an image built ``FROM`` the host-toolchain image)
    host_toolchain: bool = False
    #: labels on what the environment creates (containers), so what a crash left can be found
    labels: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ExecResult(Record):
    """How one command in a trial ended."""

    #: the exit status; None when it was ended at its timeout or could not start
    exit_code: int | None
    #: the end of its output (standard output and error, merged)
    output: str = ""
    timed_out: bool = False
    #: why it could not start, else None
    error: str | None = None
    wall_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when it ran to its end with status 0."""
        return self.exit_code == 0

    @classmethod
    def finished(
        cls, program: str, exit_code: int, output: str, wall_ms: float
    ) -> ExecResult:
        """A command that ended with ``exit_code``; 126 or 127 with no output is the
        shell saying ``program`` could not start there."""
        if exit_code in (126, 127) and not output.strip():
            return cls(
                exit_code=exit_code,
                output=output,
                error=f"cannot run {program!r} in the trial (exit {exit_code})",
                wall_ms=wall_ms,
            )
        return cls(exit_code=exit_code, output=output, wall_ms=wall_ms)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class EnvironmentCapabilities(Record):
    """What an environment kind can do, declared so the runner can say in one line what
    it cannot."""

    #: the networks it can enforce (``none``, ``model``, ``full``)
    networks: tuple[str, ...] = ("full",)
    #: whether it can change a running trial's network between phases (agent, then verifier)
    network_switch: bool = False
    #: whether ``cpus`` / ``memory_mb`` are enforced
    resource_limits: bool = False
    #: whether a process started by one ``exec`` (a server) outlives it, until ``stop``
    persistent_processes: bool = False
    #: whether ``TrialSpec.image`` is used (a container image)
    images: bool = False

"""Scenarios: the tasks an agent is profiled on."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from ._validators import as_tuple, non_empty, non_negative, positive
from .record import Record

#: What a sandboxed command may reach: nothing, only the model endpoint(s), or everything.
Network = Literal["none", "model", "full"]
#: What passes a verifier's checkpoint: its exit status 0, or a reward of 1 it wrote
#: (Harbor's rule).
PassedBy = Literal["exit", "reward"]


#: Harbor's network policy of a phase: everything, nothing, or only the listed hosts.
NetworkMode = Literal["public", "no-network", "allowlist"]

#: a new field that keeps the JSON of records without it (and so their hashes) unchanged
#: while it holds its default
_NEW = {"omit_if_default": True}


def _sandbox_paths(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """Paths inside a sandbox: absolute, not ``/``, without ``..``."""
    for path in (
        value if isinstance(value, dict) else ([value] if value is not None else [])
    ):
        if (
            not isinstance(path, str)
            or not path.startswith("/")
            or path.rstrip("/") == ""
            or ".." in path.split("/")
        ):
            raise ValueError(
                f"{attribute.name}: expected an absolute path inside the "
                f"sandbox (not / and without ..), got {path!r}"
            )


def _one_source(
    instance: WorkspaceSpec, attribute: attrs.Attribute, value: Any
) -> None:
    if (instance.path is None) == (instance.git is None):
        raise ValueError(
            "workspace: expected exactly one of `path` (a folder) or `git` (a repository)"
        )
    if instance.ref is not None and instance.git is None:
        raise ValueError("workspace.ref: only a `git` workspace has a ref")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class WorkspaceSpec(Record):
    """A scenario's workspace: a folder copied fresh for each session, or a git
    repository at a ref."""

    #: a folder (relative to the scenario file when loaded from one)
    path: str | None = None
    #: a repository: a local path (relative to the scenario file) or a URL; cloned once per run
    git: str | None = attrs.field(default=None, validator=_one_source)
    #: the branch, tag or commit checked out (default: the repository's HEAD)
    ref: str | None = None
    #: file names at the top of a copied ``path`` left out of the workspace (glob
    #: patterns; a Harbor task's ``Dockerfile``)
    exclude: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NetworkPolicy(Record):
    """Harbor's network policy of a phase: public, no-network, or allowlist of hosts."""

    mode: NetworkMode = "public"
    #: the hosts reachable under ``allowlist`` (lower-cased, without a trailing dot)
    allowed_hosts: tuple[str, ...] = attrs.field(
        default=(), converter=as_tuple, metadata=_NEW
    )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class VerifierSpec(Record):
    """A command run in the session's workspace after the agent finished; its exit
    status is a checkpoint."""

    name: str = attrs.field(validator=non_empty)
    #: a shell command (``bash -c``), run in the workspace
    command: str = attrs.field(validator=non_empty)
    timeout_ms: int = attrs.field(default=120_000, validator=positive)
    #: environment variables of the command (on top of a minimal one)
    env: dict[str, str] = attrs.field(factory=dict)
    #: files the agent never saw, copied in after its session: destination (in the
    #: workspace) -> source
    #: (relative to the scenario file), as Harbor copies ``tests/`` in only then
    files: dict[str, str] = attrs.field(factory=dict)
    #: what the verifier may reach: ``none`` (default), ``model`` or ``full``
    network: Network = "none"
    #: folders shown inside the verifier's sandbox (a fresh, writable copy each run):
    #: path inside -> source
    #: (relative to the scenario file), as Harbor shows ``tests/`` at ``/tests``; needs a sandbox
    mounts: dict[str, str] = attrs.field(factory=dict, validator=_sandbox_paths)
    #: folders laid under ``mounts`` at the same path (Harbor uploads a step's
    #: ``tests/`` over the task's)
    base_mounts: dict[str, str] = attrs.field(
        factory=dict, validator=_sandbox_paths, metadata=_NEW
    )
    #: where the verifier's own folder (``$PROFILER_VERIFIER_DIR``) also appears inside the sandbox
    #: (Harbor's ``/logs/verifier``); needs a sandbox
    logs_dir: str | None = attrs.field(default=None, validator=_sandbox_paths)
    #: what passes the checkpoint: ``exit`` (status 0) or ``reward`` (it must write a
    #: reward; 1 passes)
    passed_by: PassedBy = "exit"
    #: the user it runs as (Harbor's ``[verifier].user``; None: the image's ``USER``)
    user: str | None = None
    #: its network policy (``[verifier].network_mode`` / ``allowed_hosts``); None: the environment's
    policy: NetworkPolicy | None = None
    #: its own environment (``environment_mode = "separate"``); None: it runs where the agent ran
    separate: TaskEnvironment | None = None
    #: ``env`` values hold ``${VAR}`` / ``${VAR:-default}`` templates, expanded from the
    #: host at run time
    env_templates: bool = attrs.field(default=False, metadata=_NEW)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskEnvironment(Record):
    """A task's own environment: a Dockerfile (or a local image) its sessions run in
    under docker or podman."""

    #: the Dockerfile, built once per run under docker / podman (its folder is the build context)
    dockerfile: str | None = None
    #: a local image used instead of building one (no registry is contacted)
    image: str | None = None
    #: where the workspace also appears inside the sandbox: the image's working folder
    #: (``WORKDIR``, e.g. ``/app``)
    workdir: str | None = attrs.field(default=None, validator=_sandbox_paths)
    #: how long building the image may take
    build_timeout_ms: int = attrs.field(default=600_000, validator=positive)
    #: ``[environment].env`` as written: ``${VAR}`` / ``${VAR:-default}`` are expanded
    #: from the host at run time
    env: dict[str, str] = attrs.field(factory=dict, metadata=_NEW)
    #: ``[environment].cpus``, ``memory_mb``, ``storage_mb`` (None: not limited by the task)
    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    #: the environment's baseline network policy (``network_mode`` / ``allowed_hosts`` /
    #: ``allow_internet``); None: public
    network: NetworkPolicy | None = None
    #: ``environment/docker-compose.yaml`` when the task is a compose task (its main
    #: service is the environment)
    compose: str | None = None
    #: the task's operating system (``[environment].os``, lower-cased)
    os: str = attrs.field(default="linux", metadata=_NEW)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SolutionSpec(Record):
    """A task's reference solution: a command the ``oracle`` provider runs in the
    session's workspace."""

    #: a shell command (``bash -c``), run in the workspace, in the run's sandbox
    command: str = attrs.field(validator=non_empty)
    #: environment variables of the command (on top of a minimal one)
    env: dict[str, str] = attrs.field(factory=dict)
    #: folders shown inside the sandbox (a fresh, writable copy): path inside -> source,
    #: as Harbor shows
    #: ``solution/`` at ``/solution``; needs a sandbox
    mounts: dict[str, str] = attrs.field(factory=dict, validator=_sandbox_paths)
    #: ``env`` values hold ``${VAR}`` / ``${VAR:-default}`` templates, expanded from the
    #: host at run time
    env_templates: bool = attrs.field(default=False, metadata=_NEW)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StepSpec(Record):
    """One step of a multi-step Harbor task."""

    name: str = attrs.field(validator=non_empty)
    #: the step's instruction (``steps/<name>/instruction.md``)
    prompt: str
    #: the agent's timeout for this step (None: the scenario's)
    timeout_ms: int | None = None
    #: what decides the step, after the agent's turn
    verify: tuple[VerifierSpec, ...] = attrs.field(default=(), converter=as_tuple)
    #: the step's reference solution (``steps/<name>/solution/``, else the task's)
    solution: SolutionSpec | None = None
    #: ``steps/<name>/workdir/``: copied into the working folder before the step (its
    #: ``setup.sh`` then run there)
    workdir_files: str | None = None
    #: the rewards the step must reach for later steps to run (Harbor's ``min_reward``;
    #: a number is ``{"reward": n}``)
    min_reward: dict[str, float] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Scenario(Record):
    """One task given to the agent (the original's BaseScenario)."""

    id: str = attrs.field(validator=non_empty)
    name: str = attrs.field(validator=non_empty)
    description: str = ""
    prompt: str
    timeout_ms: int = attrs.field(default=120_000, validator=positive)
    allowed_retries: int = attrs.field(default=0, validator=non_negative)
    tags: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    extensions: dict[str, Any] = attrs.field(factory=dict)
    #: the session's working folder, prepared fresh for every session (None: an empty folder)
    workspace: WorkspaceSpec | None = None
    #: shell commands run in the workspace before the agent starts (their failure is a setup error)
    setup: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    #: commands that decide, after the agent, whether the task is done
    #: (``verify:<name>`` checkpoints)
    verify: tuple[VerifierSpec, ...] = attrs.field(default=(), converter=as_tuple)
    #: the task's own environment (a Dockerfile built for container sandboxes, its working folder)
    environment: TaskEnvironment | None = None
    #: the task's reference solution (run by the ``oracle`` provider)
    solution: SolutionSpec | None = None
    #: the user the agent runs as (Harbor's ``[agent].user``; None: the image's ``USER``)
    agent_user: str | None = None
    #: the agent's network policy (``[agent].network_mode`` / ``allowed_hosts``); None:
    #: the environment's
    agent_policy: NetworkPolicy | None = None
    #: a multi-step task's steps (``[[steps]]``), in order; empty: one step (``prompt``,
    #: ``verify``, ``solution``)
    steps: tuple[StepSpec, ...] = attrs.field(
        default=(), converter=as_tuple, metadata=_NEW
    )
    #: how a multi-step task's reward is made of its steps' (Harbor's
    #: ``multi_step_reward_strategy``: mean, final)
    reward_strategy: str | None = None
    #: paths inside the environment collected after the trial (Harbor's top-level ``artifacts``)
    artifacts: tuple[str, ...] = attrs.field(
        default=(), converter=as_tuple, metadata=_NEW
    )

    @property
    def sandbox_paths(self) -> tuple[str, ...]:
        """Paths this scenario's commands use inside a sandbox (they cannot exist on the host)."""
        verifiers = [*self.verify, *(v for step in self.steps for v in step.verify)]
        paths = [
            p
            for v in verifiers
            for p in (*v.mounts, *([v.logs_dir] if v.logs_dir else []))
        ]
        for solution in (self.solution, *(step.solution for step in self.steps)):
            if solution is not None:
                paths += list(solution.mounts)
        if self.environment is not None and self.environment.workdir:
            paths.append(self.environment.workdir)
        return tuple(dict.fromkeys(paths))


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScenarioSets(Record):
    """Named lists of scenario ids (``scenario-sets.json``)."""

    sets: dict[str, tuple[str, ...]] = attrs.field(factory=dict)

    def ids(self, name: str) -> tuple[str, ...]:
        """Return the scenario ids of the set ``name`` (KeyError if unknown)."""
        return self.sets[name]

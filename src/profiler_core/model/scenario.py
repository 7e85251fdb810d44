"""Scenarios: the tasks an agent is profiled on."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from ._validators import as_tuple, non_empty, non_negative, positive

#: What a sandboxed command may reach: nothing, only the model endpoint(s), or everything.
Network = Literal["none", "model", "full"]


def _one_source(instance: WorkspaceSpec, attribute: attrs.Attribute, value: Any) -> None:
    if (instance.path is None) == (instance.git is None):
        raise ValueError("workspace: expected exactly one of `path` (a folder) or `git` (a repository)")
    if instance.ref is not None and instance.git is None:
        raise ValueError("workspace.ref: only a `git` workspace has a ref")


@attrs.frozen(kw_only=True)
class WorkspaceSpec:
    """A scenario's workspace: a folder copied fresh for each session, or a git repository at a ref."""

    #: a folder (relative to the scenario file when loaded from one)
    path: str | None = None
    #: a repository: a local path (relative to the scenario file) or a URL; cloned once per run
    git: str | None = attrs.field(default=None, validator=_one_source)
    #: the branch, tag or commit checked out (default: the repository's HEAD)
    ref: str | None = None


@attrs.frozen(kw_only=True)
class VerifierSpec:
    """A command run in the session's workspace after the agent finished; its exit status is a checkpoint."""

    name: str = attrs.field(validator=non_empty)
    #: a shell command (``bash -c``), run in the workspace
    command: str = attrs.field(validator=non_empty)
    timeout_ms: int = attrs.field(default=120_000, validator=positive)
    #: environment variables of the command (on top of a minimal one)
    env: dict[str, str] = attrs.field(factory=dict)
    #: files the agent never saw, copied in after its session: destination (in the workspace) -> source
    #: (relative to the scenario file), as Harbor copies ``tests/`` in only then
    files: dict[str, str] = attrs.field(factory=dict)
    #: what the verifier may reach: ``none`` (default), ``model`` or ``full``
    network: Network = "none"


@attrs.frozen(kw_only=True)
class Scenario:
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
    #: commands that decide, after the agent, whether the task is done (``verify:<name>`` checkpoints)
    verify: tuple[VerifierSpec, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True)
class ScenarioSets:
    """Named lists of scenario ids (``scenario-sets.json``)."""

    sets: dict[str, tuple[str, ...]] = attrs.field(factory=dict)

    def ids(self, name: str) -> tuple[str, ...]:
        """Return the scenario ids of the set ``name`` (KeyError if unknown)."""
        return self.sets[name]

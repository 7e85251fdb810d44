"""What a session provider is given and returns."""

from __future__ import annotations

from typing import Any

import attrs

from ._validators import as_tuple, non_empty, non_negative
from .environment import SandboxSettings
from .live import Environment
from .metrics import CompletionReason, PromptMetrics
from .record import Record
from .scenario import Scenario


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PermissionConfig(Record):
    """Which tool calls the agent may make without asking."""

    auto_approve: bool = False
    allowed_tools: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProviderConfig(Record):
    """Passed to ``SessionProvider.init``: model, mode and the provider's options."""

    port: int = attrs.field(default=0, validator=non_negative)
    model: str
    mode: str
    permissions: PermissionConfig = attrs.field(factory=PermissionConfig)
    environment: dict[str, str] = attrs.field(factory=dict)
    workdir: str = "."
    options: dict[str, Any] = attrs.field(factory=dict)
    #: the run's sandbox: a provider starts its agent inside it with
    #: ``profiler_core.sandbox.confine``;
    #: None: the agent runs on the host
    sandbox: SandboxSettings | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CreateSessionParams(Record):
    """Passed to ``SessionProvider.create_session`` for one iteration (or retry)."""

    system_instructions: str
    scenario_id: str
    iteration: int
    mode: str
    model: str
    #: the folder the session works in, prepared by the runner (a fresh copy of the scenario's
    #: workspace, or a fresh empty folder); None only when a caller outside the runner
    #: creates sessions
    workspace: str | None = None
    #: the scenario itself, for a provider that needs more than its prompt (the
    #: ``oracle``'s reference solution)
    scenario: Scenario | None = None
    #: this session's sandbox when it is not the run's (``ProviderConfig.sandbox``): a task's own
    #: container image and working folder; None: the run's
    sandbox: SandboxSettings | None = None
    #: the trial's running environment when the session runs inside one (docs/environments.md): the
    #: agent's commands go through its ``exec``, never the host; None: the session runs as before
    environment: Environment | None = None  # live, never serialised (model/live.py)
    #: the working folder inside ``environment`` (the image's ``WORKDIR``, or the task's
    #: ``[environment].workdir``)
    environment_workdir: str | None = None
    #: the user the agent runs as inside ``environment`` (``[agent].user``; None: the image's)
    environment_user: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SessionHandle(Record):
    """Identifies a live session of a provider."""

    session_id: str = attrs.field(validator=non_empty)
    provider: str
    created_at: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptResult(Record):
    """The agent's answer to one prompt, with its measurements."""

    text: str
    metrics: PromptMetrics
    completion_reason: CompletionReason = "stop"
    #: why the session ended in an error (an API error the agent reported, a recorded
    #: failure); the row is then an error
    error: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModeConfig(Record):
    """What a mode means concretely: environment, instructions, provider overrides."""

    environment: dict[str, str] = attrs.field(factory=dict)
    system_instructions: str = ""
    provider_overrides: dict[str, Any] = attrs.field(factory=dict)

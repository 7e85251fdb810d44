"""The contracts plugins implement, as ``typing.Protocol``.

Any method may be ``def`` or ``async def``: the runner awaits whatever is
awaitable ("await me maybe"). The protocols are for type checkers and readers;
the runner only relies on the attributes and methods named here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

from .model import (
    AnalysisResult,
    CreateSessionParams,
    CustomMetric,
    JudgeRequest,
    JudgeResponse,
    ModeConfig,
    PromptResult,
    ProviderConfig,
    Scenario,
    ScorerContext,
    ScorerResult,
    SessionHandle,
    SessionTrace,
)

T = TypeVar("T")
MaybeAwaitable = T | Awaitable[T]


@runtime_checkable
class SessionProvider(Protocol):
    """Drives sessions of one kind of agent."""

    id: str
    #: ``"suite"``: ``init`` once per run; ``"mode"``: once per mode (fresh state per mode).
    init_scope: Literal["suite", "mode"]

    def init(self, config: ProviderConfig) -> MaybeAwaitable[None]:
        """Start the agent (server, connection) for the given model and mode."""

    def create_session(self, params: CreateSessionParams) -> MaybeAwaitable[SessionHandle]:
        """Create a fresh, isolated session for one iteration (or retry)."""

    def prompt(self, handle: SessionHandle, text: str, timeout_ms: int | None = None) -> MaybeAwaitable[PromptResult]:
        """Send the scenario prompt and wait until the agent finishes its turn."""

    def export_session(self, handle: SessionHandle) -> MaybeAwaitable[SessionTrace]:
        """Return the full event trace of the session."""

    def destroy_session(self, handle: SessionHandle) -> MaybeAwaitable[None]:
        """Tear the session down; called always, whatever state it is in."""

    def shutdown(self) -> MaybeAwaitable[None]:
        """Stop the agent; called once per ``init``, in a ``finally``."""


@runtime_checkable
class Scorer(Protocol):
    """Decides whether the agent did its task."""

    id: str

    def evaluate(self, scenario: Scenario, context: ScorerContext) -> MaybeAwaitable[ScorerResult]:
        """Check the agent's output and trace against the scenario."""


@runtime_checkable
class Collector(Protocol):
    """Turns a prompt result (and trace) into custom metrics."""

    id: str

    def collect(
        self, result: PromptResult, scenario: Scenario, mode: str, trace: SessionTrace | None
    ) -> MaybeAwaitable[Sequence[CustomMetric]]:
        """Return metrics; their names must be unique across collectors."""


@runtime_checkable
class Analyzer(Protocol):
    """Reads a session trace and reports behavioural findings."""

    name: str

    def analyze(self, trace: SessionTrace, scenario: Scenario, mode: str) -> MaybeAwaitable[AnalysisResult]:
        """Analyse one trace; finding keys should be namespaced by the analyzer."""


@runtime_checkable
class ModeResolver(Protocol):
    """Maps a mode name to its concrete configuration."""

    id: str

    def resolve(self, mode: str) -> MaybeAwaitable[ModeConfig]:
        """Return the mode's config; raise ``UnknownModeError`` for an unknown mode."""


@runtime_checkable
class JudgeProvider(Protocol):
    """An LLM that answers judge requests (for the ``llm-judge`` scorer)."""

    id: str

    def judge(self, request: JudgeRequest) -> MaybeAwaitable[JudgeResponse]:
        """Ask the judge model and return its raw answer with usage."""


@runtime_checkable
class RunHooks(Protocol):
    """Marker for programmatic lifecycle hooks passed to ``run_profile_suite``.

    Any object with ``@hookimpl`` methods named like the lifecycle hooks
    (``profiler_before_run``...) works; it is registered for one run only.
    """

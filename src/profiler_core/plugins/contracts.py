"""The contracts plugins implement, as runtime-checkable ``typing.Protocol``s.

Any method may be ``def`` or ``async def``: the runner awaits whatever is
awaitable ("await me maybe"). The plugin manager checks every registered
component against its protocol (:func:`missing_methods`), so a provider without
``prompt`` is refused when the plugins are listed or a profile is validated,
never in the middle of a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Protocol,
    runtime_checkable,
)

import attrs

# A trial's running environment and the sync-or-async return type live with the records, which
# name them too (model/live.py); a plugin imports them from here.
from ..model.live import Environment, MaybeAwaitable
from ..model.record import Record

if (
    TYPE_CHECKING
):  # pragma: no cover - annotations only: checking a component never builds the model
    from ..model import (
        AnalysisResult,
        CreateSessionParams,
        CustomMetric,
        EnvironmentCapabilities,
        JudgeRequest,
        JudgeResponse,
        ModeConfig,
        PromptResult,
        ProviderConfig,
        RecordedSession,
        RecordedVerification,
        Scenario,
        ScorerContext,
        ScorerResult,
        SessionHandle,
        SessionTrace,
        TrialSpec,
    )


@runtime_checkable
class SessionProvider(Protocol):
    """Drives sessions of one kind of agent.

    Besides ``id`` and these six methods a provider may have the optional
    members of :class:`SessionProviderDefaults` (inherit from it to get them).
    """

    id: str

    def init(self, config: ProviderConfig) -> MaybeAwaitable[None]:
        """Start the agent (server, connection) for the given model and mode."""
        ...

    def create_session(
        self, params: CreateSessionParams
    ) -> MaybeAwaitable[SessionHandle]:
        """Create a fresh, isolated session for one iteration (or retry)."""
        ...

    def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> MaybeAwaitable[PromptResult]:
        """Send the scenario prompt and wait until the agent finishes its turn."""
        ...

    def export_session(self, handle: SessionHandle) -> MaybeAwaitable[SessionTrace]:
        """Return the full event trace of the session."""
        ...

    def destroy_session(self, handle: SessionHandle) -> MaybeAwaitable[None]:
        """Tear the session down; called always, whatever state it is in."""
        ...

    def shutdown(self) -> MaybeAwaitable[None]:
        """Stop the agent; called once per ``init``, in a ``finally``."""
        ...


class SessionProviderDefaults:
    """The optional members of a :class:`SessionProvider`, with the defaults that apply
    when a provider lacks them.

    A provider may set any of them (or inherit this class); the runner reads
    them once per instance (``runner.adapter.ProviderAdapter``).
    """

    #: ``"suite"``: ``init`` once per model (one instance serves its modes); ``"mode"``:
    #: once per mode
    init_scope: str = "suite"
    #: True when the agent reads the runner's process environment, so modes run one at a time
    needs_process_env: bool = False
    #: True when the synchronous methods return at once (called inline, not in a worker thread)
    nonblocking_sync: bool = False

    def session_times(self, handle: SessionHandle) -> tuple[str, str] | None:
        """When the session really started and ended (ISO 8601), for a replayed recording.

        The row's ``startedAt``/``completedAt`` then say when the session happened;
        None (the default) means the times the runner saw.
        """
        return None

    def session_verification(
        self, handle: SessionHandle
    ) -> RecordedVerification | None:
        """What a replayed recording's verifiers said (a ``RecordedVerification``): the
        row's reward and checks.

        None (the default): the scenario's own verifiers, if any, decide.
        """
        return None


@runtime_checkable
class Scorer(Protocol):
    """Decides whether the agent did its task.

    Optional: ``check_scenario(scenario)`` (refuse a scenario it cannot score,
    before any session) and ``scenario_keys`` (the keys of a scenario's
    ``extensions`` it scores by, e.g. ``("checks",)``: ``profiler validate``
    refuses scenarios carrying another scorer's keys that this one ignores).
    """

    id: str

    def evaluate(
        self, scenario: Scenario, context: ScorerContext
    ) -> MaybeAwaitable[ScorerResult]:
        """Check the agent's output and trace against the scenario."""
        ...


class ScorerDefaults:
    """The optional members of a :class:`Scorer`, with their defaults."""

    def check_scenario(self, scenario: Scenario) -> None:
        """Raise ``ProfilerError`` for scenario settings this scorer cannot use
        (``profiler validate``); default: accept."""


@runtime_checkable
class Collector(Protocol):
    """Turns a prompt result (and trace) into custom metrics."""

    id: str

    def collect(
        self,
        result: PromptResult,
        scenario: Scenario,
        mode: str,
        trace: SessionTrace | None,
    ) -> MaybeAwaitable[Sequence[CustomMetric]]:
        """Return metrics; their names must be unique across collectors."""
        ...


@runtime_checkable
class Analyzer(Protocol):
    """Reads a session trace and reports behavioural findings."""

    name: str

    def analyze(
        self, trace: SessionTrace, scenario: Scenario, mode: str
    ) -> MaybeAwaitable[AnalysisResult]:
        """Analyse one trace; finding keys should be namespaced by the analyzer."""
        ...


@runtime_checkable
class ModeResolver(Protocol):
    """Maps a mode name to its concrete configuration."""

    id: str

    def resolve(self, mode: str) -> MaybeAwaitable[ModeConfig]:
        """Return the mode's config; raise ``UnknownModeError`` for an unknown mode."""
        ...


@runtime_checkable
class JudgeProvider(Protocol):
    """An LLM that answers judge requests (for the ``llm-judge`` scorer).

    Optional: ``init()`` and ``shutdown()`` (``def`` or ``async def``), for a
    judge that needs something running (the ``opencode`` judge starts a
    server). ``init()`` is called once per run before the judge's first
    question, ``shutdown()`` once when the run ends; a judge without them is
    used as it is.
    """

    id: str

    def judge(self, request: JudgeRequest) -> MaybeAwaitable[JudgeResponse]:
        """Ask the judge model and return its raw answer with usage."""
        ...


@runtime_checkable
class Importer(Protocol):
    """Reads one recorded-session file format (``profiler import FORMAT``, the
    ``transcripts`` provider).

    Optional: ``suffixes`` (:class:`ImporterDefaults`), the file name endings
    ``profiler import FORMAT DIR`` picks up from a directory.
    """

    #: the format name, e.g. ``"claude-code"``
    id: str

    def load(self, path: Path) -> list[RecordedSession]:
        """The recorded sessions of one file; a foreign or truncated file raises a
        ``ProfilerError``."""
        ...


class ImporterDefaults:
    """The optional members of an :class:`Importer`, with their defaults."""

    #: file name endings read when a directory is given (``profiler import FORMAT DIR``)
    suffixes: tuple[str, ...] = (".json", ".jsonl")


@runtime_checkable
class ScenarioFormat(Protocol):
    """Turns one scenario file's data into a :class:`Scenario` (a profile's
    ``scenarios.format``)."""

    #: the format name, e.g. ``"ghx"``
    id: str

    def parse(self, data: dict[str, Any], source: str) -> Scenario:
        """The scenario of one file (or list item); bad data raises a ``ProfilerError``
        naming ``source`` and the field."""
        ...


@runtime_checkable
class ExecutionEnvironment(Protocol):
    """A kind of place where trials run (``execution.sandbox``): the host, bwrap, a
    container runtime, a remote sandbox.

    Its methods may be ``def`` (the runner calls them in a worker thread) or
    ``async def``. Besides ``id`` it declares ``capabilities``
    (:class:`profiler_core.model.EnvironmentCapabilities`); a kind without the
    attribute is taken to enforce nothing (public network, no limits).
    """

    id: str

    def check(self) -> MaybeAwaitable[str | None]:
        """Whether trials can start here: None, or one line saying why not (``docker``
        missing, its daemon down)."""
        ...

    def start(self, spec: TrialSpec) -> MaybeAwaitable[Environment]:
        """Start one trial's environment (its container, its folder) as ``spec`` asks;
        ``SandboxError`` in one line when it cannot."""
        ...


class ExecutionEnvironmentDefaults:
    """The optional members of an :class:`ExecutionEnvironment`, with their defaults."""

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """Nothing enforced: the public network, no limits, no persistent processes, no images."""
        from ..model.environment import EnvironmentCapabilities

        return EnvironmentCapabilities()


class EnvironmentDefaults:
    """The optional members of an :class:`Environment`, with their defaults."""

    def set_network(self, network: str) -> None:
        """Change the running trial's network (``none``, ``model``, ``full``) between
        phases; default: refuse."""
        from ..errors import SandboxError

        raise SandboxError(
            f"environment {type(self).__name__}: cannot change the network of a running trial"
        )


@runtime_checkable
class RunHooks(Protocol):
    """Marker for programmatic lifecycle hooks passed to ``run_profile_suite``.

    Any object with ``@hookimpl`` methods named like the lifecycle hooks
    (``profiler_before_run``...) works; it is registered for one run only.
    """


@attrs.frozen(repr=False, eq=False)
class Contract(Record):
    """One kind of component: how the registry, messages, the manager and the test kit know it."""

    #: the registry's and ``list-plugins``' name, e.g. ``"providers"``
    name: str
    #: how a message names one, e.g. ``"provider"``
    singular: str
    protocol: type
    #: the registration hook that returns (or ``register``s) its factories
    hook: str
    #: the contract kit's check in :mod:`profiler_core.testing`, e.g. ``"check_provider"``
    check: str
    #: the attribute that holds a component's id
    id_attr: str = "id"

    def missing_methods(self, component: Any) -> list[str]:
        """The protocol's methods that ``component`` (an object or a class) lacks; empty
        if it conforms."""
        return [
            name
            for name in required_methods(self.protocol)
            if not callable(getattr(component, name, None))
        ]


#: Every contract by name, in the order ``list-plugins`` shows them.
CONTRACTS: dict[str, Contract] = {
    c.name: c
    for c in (
        Contract(
            "providers",
            "provider",
            SessionProvider,
            "profiler_register_providers",
            "check_provider",
        ),
        Contract(
            "scorers", "scorer", Scorer, "profiler_register_scorers", "check_scorer"
        ),
        Contract(
            "collectors",
            "collector",
            Collector,
            "profiler_register_collectors",
            "check_collector",
        ),
        Contract(
            "analyzers",
            "analyzer",
            Analyzer,
            "profiler_register_analyzers",
            "check_analyzer",
            id_attr="name",
        ),
        Contract(
            "mode_resolvers",
            "mode resolver",
            ModeResolver,
            "profiler_register_mode_resolvers",
            "check_mode_resolver",
        ),
        Contract(
            "judge_providers",
            "judge provider",
            JudgeProvider,
            "profiler_register_judge_providers",
            "check_judge_provider",
        ),
        Contract(
            "importers",
            "importer",
            Importer,
            "profiler_register_importers",
            "check_importer",
        ),
        Contract(
            "scenario_formats",
            "scenario format",
            ScenarioFormat,
            "profiler_register_scenario_formats",
            "check_scenario_format",
        ),
        Contract(
            "environments",
            "environment",
            ExecutionEnvironment,
            "profiler_register_environments",
            "check_environment",
        ),
    )
}

#: contract name -> its protocol (for plugins written against earlier versions)
PROTOCOLS: dict[str, type] = {name: c.protocol for name, c in CONTRACTS.items()}


#: The optional attributes of a session provider and their defaults.
PROVIDER_DEFAULTS: dict[str, Any] = {
    name: getattr(SessionProviderDefaults, name)
    for name in ("init_scope", "needs_process_env", "nonblocking_sync")
}


def optional_method(component: Any, name: str) -> Any:
    """A component's optional method (``SessionProviderDefaults``, ``ScorerDefaults``),
    or None when it has none."""
    method = getattr(component, name, None)
    return method if callable(method) else None


def required_methods(protocol: type) -> list[str]:
    """The methods a protocol requires, in declaration order."""
    return [
        name
        for name, value in vars(protocol).items()
        if callable(value) and not name.startswith("_")
    ]


def missing_methods(component: Any, contract: str) -> list[str]:
    """The methods of ``contract`` that ``component`` (an object or a class) lacks;
    empty if it conforms."""
    return CONTRACTS[contract].missing_methods(component)


__all__ = [
    "CONTRACTS",
    "PROTOCOLS",
    "PROVIDER_DEFAULTS",
    "Analyzer",
    "Collector",
    "Contract",
    "Environment",
    "EnvironmentDefaults",
    "ExecutionEnvironment",
    "ExecutionEnvironmentDefaults",
    "Importer",
    "ImporterDefaults",
    "JudgeProvider",
    "MaybeAwaitable",
    "ModeResolver",
    "RunHooks",
    "ScenarioFormat",
    "Scorer",
    "ScorerDefaults",
    "SessionProvider",
    "SessionProviderDefaults",
    "missing_methods",
    "optional_method",
    "required_methods",
]
